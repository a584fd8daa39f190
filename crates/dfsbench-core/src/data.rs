//! What written data holds: `--compress-percentage` and `--dedupe-percentage` (fio's
//! `buffer_compress_percentage` and `dedupe_percentage`), and the verify pattern.
//!
//! Without either option a worker writes one buffer of random bytes again and again (cheap;
//! fio's `scramble_buffers=0`), which a store that compresses or deduplicates across blocks can
//! squeeze. With them, the content of every byte is a function of the file and its offset,
//! generated as it is written: each 512-byte segment (fio's `buffer_compress_chunk`) is random
//! for (100 - C) % of its bytes and zeros after, and D % of the blocks of `bs` bytes are copies
//! of one block of the job, the rest unique; with a working set (fio's dedupe_mode=working_set),
//! each copy is of one of the file's first W % of unique blocks, which are the first written
//! (fio's initial unique write buffers), or with dedupe_global of any such block of the jobs
//! that share their working sets.

use serde::Serialize;

use crate::pattern::{splitmix, FileKey, Pattern, SECTOR};

/// The data options of a job, as given (None: not given).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct DataShape {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compress_percentage: Option<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dedupe_percentage: Option<u8>,
    /// Blocks that copies are drawn from (fio's dedupe_working_set_percentage of the file);
    /// None: every copy is of the job's one block.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dedupe_working_set_blocks: Option<u64>,
    /// The working set is shared by every job's copies (fio's dedupe_global).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub dedupe_global: bool,
    /// With dedupe_global, the jobs whose working sets are shared: bit j for job j (the
    /// first 64 jobs of the run).
    #[serde(skip)]
    pub dedupe_peers: u64,
}

/// The seed of job `job`'s generated data in a run seeded with `run_seed`: the same on every
/// rank, so that copies match across processes.
pub(crate) fn job_seed(run_seed: u64, job: usize) -> u64 {
    run_seed ^ ((job as u64) << 40)
}

impl DataShape {
    /// Whether the data is generated block by block (either option given).
    pub fn generated(&self) -> bool {
        self.compress_percentage.is_some() || self.dedupe_percentage.is_some()
    }

    /// Bytes of each 512-byte segment that are random, the rest being zeros.
    pub fn random_bytes(&self) -> usize {
        let c = usize::from(self.compress_percentage.unwrap_or(0));
        SECTOR as usize * (100 - c) / 100
    }
}

/// What a job writes, which its workers' content and the shared data follow.
#[derive(Debug, Clone, Copy, Default)]
pub struct Written {
    pub shape: DataShape,
    /// Bytes of a dedupe block: the job's bs.
    pub block: usize,
    /// Bytes per chunk of the job's shared random data (0: it writes no data).
    pub chunk: usize,
}

/// Content generated from (file, offset): see the module's description.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Generator {
    seed: u64,
    random_bytes: usize,
    dedupe: u8,
    /// Bytes of a dedupe block (the job's bs).
    block: u64,
    /// Blocks of the working set copies are drawn from (0: the job's one block).
    working_set: u64,
    run_seed: u64,
    /// The jobs whose working sets are shared (dedupe_global), bit j for job j; 0: the file's
    /// own.
    peers: u64,
}

const WORDS: usize = (SECTOR / 8) as usize;

impl Generator {
    /// The generator of a job whose data is seeded with `seed`, in a run seeded with `run_seed`.
    pub(crate) fn new(shape: DataShape, block: usize, seed: u64, run_seed: u64) -> Self {
        Generator {
            seed,
            random_bytes: shape.random_bytes(),
            dedupe: shape.dedupe_percentage.unwrap_or(0),
            block: (block as u64).max(1),
            working_set: shape.dedupe_working_set_blocks.unwrap_or(0),
            run_seed,
            peers: if shape.dedupe_global { shape.dedupe_peers } else { 0 },
        }
    }

    /// Whether block `block` of `file`, made with `seed`, is a copy.
    fn is_copy(&self, seed: u64, file: u64, block: u64) -> bool {
        splitmix(seed ^ file.rotate_left(17) ^ block.wrapping_mul(0x9e37_79b9)) % 100 < u64::from(self.dedupe)
    }

    /// The base of the unique segment at `seg_off` of `file`, made with `seed`.
    fn unique(seed: u64, file: u64, seg_off: u64) -> u64 {
        splitmix(seed ^ file ^ seg_off.rotate_left(29))
    }

    /// The base of a copy at `within` a block of the working set, picked for block `block` of
    /// `file`: one of the first `working_set` unique blocks of the file (or of a peer's file of
    /// the same worker, with dedupe_global), which are the first written (fio: the initial
    /// unique write buffers). A few tries find one; the blocks that are not copies among the
    /// first working_set / (1 - D) are about working_set.
    fn copy(&self, file: u64, block: u64, within: u64) -> u64 {
        let mut pick = splitmix(self.seed ^ 0x5e7 ^ file.rotate_left(7) ^ block.wrapping_mul(0x2545_f491));
        let (seed, file) = match self.peers {
            0 => (self.seed, file),
            peers => {
                let mut nth = pick % u64::from(peers.count_ones());
                pick = splitmix(pick);
                let mut rest = peers;
                while nth > 0 {
                    rest &= rest - 1;
                    nth -= 1;
                }
                let job = u64::from(rest.trailing_zeros());
                (
                    job_seed(self.run_seed, job as usize),
                    (file & !(0xff << 56)) | (job << 56),
                )
            }
        };
        let span = match u64::from(self.dedupe) {
            100 => self.working_set,
            d => self.working_set * 100 / (100 - d),
        }
        .max(1);
        let mut at = pick % span;
        for _ in 0..64 {
            if self.dedupe == 100 || !self.is_copy(seed, file, at) {
                break;
            }
            pick = splitmix(pick);
            at = pick % span;
        }
        Self::unique(seed, file, at * self.block + within)
    }

    /// The segment at `seg_off` of file `file`, whole.
    fn segment(&self, file: u64, seg_off: u64, out: &mut [u8; SECTOR as usize]) {
        let block = seg_off / self.block;
        // A copy has the content of the job's one shared block at the same place, or of a
        // block of the working set.
        let base = if !self.is_copy(self.seed, file, block) {
            Self::unique(self.seed, file, seg_off)
        } else if self.working_set > 0 {
            self.copy(file, block, seg_off % self.block)
        } else {
            splitmix(self.seed ^ 0xd00d ^ (seg_off % self.block))
        };
        let words = self.random_bytes.div_ceil(8).min(WORDS);
        for (i, chunk) in out.chunks_exact_mut(8).take(words).enumerate() {
            chunk.copy_from_slice(&splitmix(base.wrapping_add(i as u64)).to_le_bytes());
        }
        out[self.random_bytes..].fill(0);
    }

    /// Fill `buf` with the content of `key` at file offset `offset`.
    pub(crate) fn fill(&self, key: FileKey, offset: u64, buf: &mut [u8]) {
        let file = key.pack();
        let mut seg = [0u8; SECTOR as usize];
        let mut done = 0usize;
        while done < buf.len() {
            let pos = offset + done as u64;
            let seg_off = pos - pos % SECTOR;
            self.segment(file, seg_off, &mut seg);
            let from = (pos - seg_off) as usize;
            let n = (SECTOR as usize - from).min(buf.len() - done);
            buf[done..done + n].copy_from_slice(&seg[from..from + n]);
            done += n;
        }
    }
}

/// How a worker makes the data it writes, when not one random buffer.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Content {
    /// The verify pattern (checked on every read).
    Verify(Pattern),
    /// Generated by the data options.
    Generated(Generator),
}

impl Content {
    pub(crate) fn fill(&self, key: FileKey, offset: u64, buf: &mut [u8]) {
        match self {
            Content::Verify(p) => p.fill(key, offset, buf),
            Content::Generated(g) => g.fill(key, offset, buf),
        }
    }

    /// The pattern reads are checked against.
    pub(crate) fn pattern(&self) -> Option<Pattern> {
        match self {
            Content::Verify(p) => Some(*p),
            Content::Generated(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn key(index: u64) -> FileKey {
        FileKey {
            job: 0,
            set: 0,
            worker: 1,
            index,
        }
    }

    fn shape(c: Option<u8>, d: Option<u8>) -> DataShape {
        DataShape {
            compress_percentage: c,
            dedupe_percentage: d,
            ..DataShape::default()
        }
    }

    #[test]
    fn content_depends_on_file_and_offset_only() {
        let g = Generator::new(shape(Some(30), None), 4096, 5, 0);
        let mut whole = vec![0u8; 10_000];
        g.fill(key(3), 0, &mut whole);
        let mut pieces = vec![0u8; 10_000];
        for (i, c) in pieces.chunks_mut(777).enumerate() {
            g.fill(key(3), i as u64 * 777, c);
        }
        assert_eq!(whole, pieces);
        let mut other = vec![0u8; 10_000];
        g.fill(key(4), 0, &mut other);
        assert_ne!(whole, other);
        // 30 % of every segment is zeros.
        let zeros = whole[..512].iter().filter(|&&b| b == 0).count();
        assert!((153..170).contains(&zeros), "{zeros}");
    }

    #[test]
    fn dedupe_share_of_blocks_are_one_block() {
        let block = 4096usize;
        let distinct = |d: u8| {
            let g = Generator::new(shape(None, Some(d)), block, 9, 0);
            let mut buf = vec![0u8; block];
            let mut seen = HashSet::new();
            for file in 0..10 {
                for b in 0..100u64 {
                    g.fill(key(file), b * block as u64, &mut buf);
                    seen.insert(buf.clone());
                }
            }
            seen.len()
        };
        assert_eq!(distinct(0), 1000);
        let half = distinct(50);
        assert!((450..560).contains(&half), "{half}");
        assert_eq!(distinct(100), 1);
    }

    /// With a working set, copies are of the file's first blocks as first written; with
    /// dedupe_global, two jobs' copies come from one set.
    #[test]
    fn copies_come_from_the_working_set() {
        let block = 4096usize;
        let blocks = |g: &Generator, file: u64| -> Vec<Vec<u8>> {
            (0..200u64)
                .map(|b| {
                    let mut buf = vec![0u8; block];
                    g.fill(key(file), b * block as u64, &mut buf);
                    buf
                })
                .collect()
        };
        let ws = DataShape {
            dedupe_percentage: Some(50),
            dedupe_working_set_blocks: Some(20),
            ..DataShape::default()
        };
        let g = Generator::new(ws, block, 9, 1);
        let file = blocks(&g, 1);
        // Every copy among the later blocks is of one of the first unique blocks, written in
        // the file's first 40 blocks.
        let first: HashSet<&Vec<u8>> = file[..40].iter().collect();
        let copies = file[40..].iter().filter(|b| first.contains(b)).count();
        assert!((60..100).contains(&copies), "{copies} of 160 blocks are copies");
        let distinct: HashSet<&Vec<u8>> = file.iter().collect();
        assert!(distinct.len() <= 200 - copies, "copies are of blocks written");
        // With dedupe_global, jobs 0 and 1 (their seeds) draw their copies from both files'
        // first unique blocks; without it, each from its own.
        let global = DataShape {
            dedupe_global: true,
            dedupe_peers: 0b11,
            ..ws
        };
        let job = |shape, j: u16| {
            let g = Generator::new(shape, block, job_seed(1, j as usize), 1);
            (0..200u64)
                .map(|b| {
                    let mut buf = vec![0u8; block];
                    let k = FileKey {
                        job: j,
                        set: 0,
                        worker: 0,
                        index: 0,
                    };
                    g.fill(k, b * block as u64, &mut buf);
                    buf
                })
                .collect::<Vec<_>>()
        };
        let shared = |shape| {
            let a: HashSet<Vec<u8>> = job(shape, 0).into_iter().collect();
            job(shape, 1).iter().filter(|b| a.contains(*b)).count()
        };
        // Half of each job's copies are of the other's first unique blocks: job 1's copies of
        // job 0's blocks, its first blocks that job 0 copied, and its copies of those.
        let n = shared(global);
        assert!((60..160).contains(&n), "{n} of job 1's blocks are in job 0's file");
        assert_eq!(shared(ws), 0);
    }
}
