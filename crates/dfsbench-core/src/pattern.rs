//! Self-describing data for `--verify`.
//!
//! Every 512-byte sector of a file written with verification starts with a header naming the
//! run, the file and the sector's offset, followed by words derived from those three. The
//! content of any byte range depends only on (run, file, offset), so any block size can write
//! it and any block size can check it, and a mismatch says whose data was found instead.
//! With `--compress-percentage C`, the last C % of every sector (after its 24-byte header) are
//! zeros, checked like the rest.

use std::fmt;

/// Sector size of the pattern.
pub(crate) const SECTOR: u64 = 512;
const WORDS: usize = (SECTOR / 8) as usize;
const MAGIC: u32 = 0x4446_5342; // "DFSB"

/// Identifies one file of a run: which job, file set, worker and index wrote it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileKey {
    pub job: u16,
    pub set: u16,
    pub worker: u32,
    pub index: u64,
}

impl FileKey {
    pub(crate) fn pack(self) -> u64 {
        (u64::from(self.job & 0xff) << 56)
            | (u64::from(self.set & 0xff) << 48)
            | (u64::from(self.worker & 0xf_ffff) << 28)
            | (self.index & 0xfff_ffff)
    }

    fn unpack(v: u64) -> FileKey {
        FileKey {
            job: (v >> 56) as u16,
            set: ((v >> 48) & 0xff) as u16,
            worker: ((v >> 28) & 0xf_ffff) as u32,
            index: v & 0xfff_ffff,
        }
    }
}

impl fmt::Display for FileKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "job {} set {} worker {} file {}",
            self.job, self.set, self.worker, self.index
        )
    }
}

/// The pattern of one run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pattern {
    run_tag: u32,
    /// Bytes of each sector that are not zeros: the header and the words after it.
    random_bytes: usize,
}

/// Bytes of a sector's header (magic and run tag, file, offset).
const HEADER: usize = 24;

/// The first byte that differs from the expected pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mismatch {
    /// File offset of the first wrong byte.
    pub offset: u64,
    /// What the sector's header says was found there.
    pub found: String,
}

pub(crate) fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Pattern {
    pub(crate) fn new(run_tag: u32) -> Self {
        Pattern {
            run_tag,
            random_bytes: SECTOR as usize,
        }
    }

    /// The pattern with only the first `n` bytes of each sector set (at least its header), the
    /// rest zeros: compressible data that is still checked.
    pub(crate) fn with_random_bytes(self, n: usize) -> Self {
        Pattern {
            random_bytes: n.clamp(HEADER, SECTOR as usize),
            ..self
        }
    }

    fn sector(&self, file: u64, sector_off: u64, out: &mut [u64; WORDS]) {
        out[0] = u64::from(MAGIC) | (u64::from(self.run_tag) << 32);
        out[1] = file;
        out[2] = sector_off;
        let base = splitmix(file ^ sector_off.rotate_left(29) ^ u64::from(self.run_tag));
        for (i, w) in out.iter_mut().enumerate().skip(3) {
            *w = splitmix(base.wrapping_add(i as u64));
        }
    }

    /// Visit the expected bytes of `[offset, offset + len)` sector by sector.
    fn for_each(&self, key: FileKey, offset: u64, len: usize, mut f: impl FnMut(usize, &[u8]) -> bool) {
        let file = key.pack();
        let mut words = [0u64; WORDS];
        let mut done = 0usize;
        while done < len {
            let pos = offset + done as u64;
            let sector_off = pos - pos % SECTOR;
            self.sector(file, sector_off, &mut words);
            let mut bytes = [0u8; SECTOR as usize];
            for (chunk, w) in bytes.chunks_exact_mut(8).zip(words) {
                chunk.copy_from_slice(&w.to_le_bytes());
            }
            bytes[self.random_bytes..].fill(0);
            let from = (pos - sector_off) as usize;
            let n = (SECTOR as usize - from).min(len - done);
            if !f(done, &bytes[from..from + n]) {
                return;
            }
            done += n;
        }
    }

    /// Fill `buf` with the pattern of `key` at file offset `offset`.
    pub(crate) fn fill(&self, key: FileKey, offset: u64, buf: &mut [u8]) {
        let len = buf.len();
        self.for_each(key, offset, len, |at, expected| {
            buf[at..at + expected.len()].copy_from_slice(expected);
            true
        });
    }

    /// Check that `buf` holds the pattern of `key` at `offset`.
    pub(crate) fn check(&self, key: FileKey, offset: u64, buf: &[u8]) -> Result<(), Mismatch> {
        let mut bad = None;
        self.for_each(key, offset, buf.len(), |at, expected| {
            let got = &buf[at..at + expected.len()];
            if got == expected {
                return true;
            }
            let i = got.iter().zip(expected).position(|(a, b)| a != b).unwrap_or(0);
            bad = Some(at + i);
            false
        });
        let Some(at) = bad else { return Ok(()) };
        let abs = offset + at as u64;
        let sector_start = (abs - abs % SECTOR).max(offset);
        Err(Mismatch {
            offset: abs,
            found: self.describe(
                &buf[(sector_start - offset) as usize..],
                sector_start.is_multiple_of(SECTOR),
            ),
        })
    }

    /// What a sector's header says, when the read started at the sector's beginning.
    fn describe(&self, sector: &[u8], whole: bool) -> String {
        if sector.iter().take(SECTOR as usize).all(|&b| b == 0) {
            return "zeros".into();
        }
        if !whole || sector.len() < 24 {
            return "other data".into();
        }
        let word = |i: usize| u64::from_le_bytes(sector[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
        let (w0, file, off) = (word(0), word(1), word(2));
        if w0 as u32 != MAGIC {
            return "data without a dfsbench header".into();
        }
        let run = (w0 >> 32) as u32;
        let whose = if run == self.run_tag {
            "this run".to_string()
        } else {
            format!("run tag {run:08x}")
        };
        format!("data of {whose}, {} at offset {off}", FileKey::unpack(file))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: FileKey = FileKey {
        job: 1,
        set: 2,
        worker: 3,
        index: 42,
    };

    #[test]
    fn any_block_size_reads_what_any_block_size_wrote() {
        let p = Pattern::new(7);
        let mut file = vec![0u8; 10_000];
        for (i, chunk) in file.chunks_mut(1000).enumerate() {
            p.fill(KEY, i as u64 * 1000, chunk);
        }
        for (i, chunk) in file.chunks(4096).enumerate() {
            p.check(KEY, i as u64 * 4096, chunk).unwrap();
        }
        p.check(KEY, 333, &file[333..777]).unwrap();
    }

    #[test]
    fn mismatches_name_offset_and_found_data() {
        let p = Pattern::new(7);
        let mut buf = vec![0u8; 4096];
        p.fill(KEY, 0, &mut buf);
        buf[1500] ^= 1;
        let m = p.check(KEY, 0, &buf).unwrap_err();
        assert_eq!(m.offset, 1500);
        assert!(m.found.contains("this run"), "{}", m.found);

        let other = FileKey { index: 9, ..KEY };
        let mut foreign = vec![0u8; 1024];
        p.fill(other, 512, &mut foreign);
        let m = p.check(KEY, 512, &foreign).unwrap_err();
        assert_eq!(m.offset, 520, "the file id word differs first");
        assert!(m.found.contains("file 9 at offset 512"), "{}", m.found);

        let m = p.check(KEY, 0, &[0u8; 600]).unwrap_err();
        assert_eq!((m.offset, m.found.as_str()), (0, "zeros"));
    }

    #[test]
    fn compressible_pattern_is_checked_whole() {
        let p = Pattern::new(7).with_random_bytes(100);
        let mut buf = vec![0u8; 2048];
        p.fill(KEY, 0, &mut buf);
        assert!(buf[100..512].iter().all(|&b| b == 0));
        assert!(buf[..100].iter().any(|&b| b != 0));
        p.check(KEY, 0, &buf).unwrap();
        buf[300] = 1;
        assert_eq!(p.check(KEY, 0, &buf).unwrap_err().offset, 300);
        // The whole random pattern is not the compressible one.
        assert!(Pattern::new(7).check(KEY, 0, &buf).is_err());
    }
}
