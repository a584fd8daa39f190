//! A worker's part of each IO500 phase: transfers of its own file (ior-easy) or records of one
//! shared file at interleaved offsets (ior-hard), whole files written and read (mdtest-hard,
//! and where the backend has no positional writes ior-easy's files and ior-hard's records),
//! empty files created, stat'ed and deleted (mdtest), and the find's listings.

use dfsbench_backends::clock::Instant;

use dfsbench_backends::{BlockIo, BlockOp, BlockOpts, Client, Completion, FileOpts, IoEngine, OpError};
use rand::{Rng, RngCore};

use crate::pattern::FileKey;
use crate::stats::Recorder;
use crate::worker::{JobContext, Worker};
use crate::workloads::whole::{read_whole, write_whole};

use super::{
    easy_file, file_path, find_dirs, hard_file, hard_object, Io500Job, Io500Step, IOR_EASY, IOR_HARD, MD_HARD, RND_XFER,
};

/// Where record `i` of worker `w` of `workers` lies in ior-hard's shared file: the records of
/// all workers interleaved, record by record (IOR's segments with -b = -t).
pub(crate) fn hard_offset(i: u64, w: usize, workers: usize, record: usize) -> u64 {
    (i * workers as u64 + w as u64) * record as u64
}

impl<C: Client> Worker<C> {
    /// `until`: a wear-out step, which writes up to that many files (records) in all.
    pub(super) async fn run_io500(
        &mut self,
        ctx: &JobContext,
        job: &Io500Job,
        step: Io500Step,
        until: Option<u64>,
        rec: &mut Recorder<'_>,
    ) {
        if self.existing.len() < 4 {
            self.existing.resize(4, 0);
        }
        let Some(set) = step.set() else {
            return self.find(ctx, rec).await;
        };
        // Reads and stats look at `src`'s files: another rank's with --shuffle.
        let reads = !step.writes() && !matches!(step, Io500Step::MdtestEasyDelete | Io500Step::MdtestHardDelete);
        let (owner, have) = if reads {
            (self.src, self.src_existing.get(set).copied().unwrap_or(0))
        } else {
            (self.id, self.existing[set])
        };
        // A write phase goes on until its time is up (IO500's stonewall), or, without a
        // duration, makes the job's count; its wear-out step continues up to `until`.
        let (first, end) = match (step.writes(), until) {
            (true, Some(n)) => (have, n),
            (true, None) if ctx.duration.is_some() => (have, u64::MAX),
            (true, None) => (have, have + job.items),
            (false, _) => (0, have),
        };
        if step == Io500Step::IorRnd4kEasyRead {
            // Random transfers over what ior-easy wrote, until the time is up (IO500's
            // stonewall), or the job's count without a duration.
            let limit = if ctx.duration.is_some() { u64::MAX } else { job.items };
            if have > 0 && job.easy_one_file {
                self.blocks(ctx, job, step, owner, 0..limit, rec).await;
            } else if have > 0 {
                self.random_reads(ctx, job, owner, have, limit, rec).await;
            }
        } else if (set == IOR_HARD && job.hard_one_file) || (set == IOR_EASY && job.easy_one_file) {
            self.blocks(ctx, job, step, owner, first..end, rec).await;
        } else {
            self.whole_files(ctx, job, step, set, owner, first..end, rec).await;
        }
    }

    /// The phases over whole files: one operation per file.
    #[allow(clippy::too_many_arguments)]
    async fn whole_files(
        &mut self,
        ctx: &JobContext,
        job: &Io500Job,
        step: Io500Step,
        set: usize,
        owner: usize,
        range: std::ops::Range<u64>,
        rec: &mut Recorder<'_>,
    ) {
        // IOR's files end with an fsync, as with -e; mdtest-hard's do not.
        let opts = FileOpts {
            direct: false,
            fsync: set != MD_HARD && step.writes() && job.fsync,
        };
        let size = match set {
            IOR_EASY => job.easy_file_size,
            IOR_HARD => job.hard_record as u64,
            _ => job.md_hard_size,
        };
        let mut done = range.start;
        for i in range.clone() {
            // ior-hard's records are the shared file's: its data is worker 0's, record by
            // record, as in the one shared file.
            let key = if set == IOR_HARD {
                let offset = hard_offset(i, owner, ctx.total_workers, job.hard_record);
                hard_object(&mut self.path, ctx.job_index, offset, job.hard_record);
                FileKey {
                    job: ctx.job_index as u16,
                    set: set as u16,
                    worker: 0,
                    index: offset / job.hard_record as u64,
                }
            } else {
                file_path(&mut self.path, ctx.job_index, set, owner, i);
                FileKey {
                    job: ctx.job_index as u16,
                    set: set as u16,
                    worker: owner as u32,
                    index: i,
                }
            };
            let Some((intended, start)) = self.begin(rec.ctl()).await else {
                break;
            };
            let result: Result<u64, OpError> = match step {
                Io500Step::MdtestEasyWrite => self.client.create(&self.path).await.map(|_| 0),
                Io500Step::IorEasyWrite | Io500Step::IorHardWrite | Io500Step::MdtestHardWrite => {
                    let (content, data) = (self.content, ctx.data.as_ref());
                    write_whole(
                        &mut self.client,
                        &self.path,
                        size,
                        opts,
                        &mut self.buf,
                        content,
                        data,
                        key,
                    )
                    .await
                }
                Io500Step::IorEasyRead | Io500Step::IorHardRead | Io500Step::MdtestHardRead => {
                    let pattern = self.pattern;
                    match read_whole(&mut self.client, &self.path, size, opts, &mut self.buf, pattern, key).await {
                        Ok((bytes, first_byte)) => {
                            rec.note_read(start, bytes, first_byte, pattern.is_some());
                            Ok(bytes)
                        }
                        Err((e, _)) => Err(e),
                    }
                }
                Io500Step::MdtestEasyStat | Io500Step::MdtestHardStat => self.client.stat(&self.path).await.map(|_| 0),
                _ => self.client.delete(&self.path).await.map(|_| 0),
            };
            let end = Instant::now();
            rec.add_retries(self.client.take_retries());
            match result {
                Ok(bytes) => rec.record_op(0, intended, start, end, bytes),
                Err(e) => rec.error(0, end, &e, &self.path, None),
            }
            done = i + 1;
        }
        match step {
            s if s.writes() => self.existing[set] = done,
            Io500Step::MdtestEasyDelete | Io500Step::MdtestHardDelete => self.existing[set] = 0,
            _ => {}
        }
    }

    /// IOR's phases: ior-easy's transfers one after another in the worker's own file,
    /// ior-hard's records at the worker's interleaved offsets of the shared file, or
    /// ior-rnd4K's transfers at random offsets of what ior-easy wrote; one at a time, as
    /// IOR's POSIX backend moves them.
    async fn blocks(
        &mut self,
        ctx: &JobContext,
        job: &Io500Job,
        step: Io500Step,
        owner: usize,
        range: std::ops::Range<u64>,
        rec: &mut Recorder<'_>,
    ) {
        let hard = step.set() == Some(IOR_HARD);
        let rnd = step == Io500Step::IorRnd4kEasyRead;
        let (path, size) = match (hard, rnd) {
            (true, _) => (hard_file(ctx.job_index), job.hard_record),
            (false, true) => (easy_file(ctx.job_index, owner), RND_XFER),
            (false, false) => (easy_file(ctx.job_index, owner), job.easy_xfer),
        };
        // ior-easy's file, in whole random transfers.
        let rnd_blocks = self.src_existing.get(IOR_EASY).copied().unwrap_or(0) * job.easy_xfer as u64 / RND_XFER as u64;
        let opts = BlockOpts {
            block_size: size,
            queue_depth: 1,
            direct: false,
            create: !rnd,
            random: rnd,
            file_len: 0,
            engine: IoEngine::Psync,
        };
        let write = step.writes();
        let mut file = match self.client.open_block(&path, opts).await {
            Ok(f) => f,
            Err(e) => return rec.error(0, Instant::now(), &e, &path, None),
        };
        if write && self.content.is_none() {
            self.rng.fill_bytes(file.buffer(0));
        }
        // The shared file is one file: its data is written as worker 0's (as io's shared file).
        let key = FileKey {
            job: ctx.job_index as u16,
            set: if hard { IOR_HARD } else { IOR_EASY } as u16,
            worker: if hard { 0 } else { owner as u32 },
            index: 0,
        };
        let set = if hard { IOR_HARD } else { IOR_EASY };
        let op = if write { BlockOp::Write } else { BlockOp::Read };
        let mut done = range.start;
        for i in range {
            let offset = if hard {
                hard_offset(i, owner, ctx.total_workers, size)
            } else if rnd {
                self.rng.gen_range(0..rnd_blocks.max(1)) * size as u64
            } else {
                i * size as u64
            };
            let Some((intended, start)) = self.begin(rec.ctl()).await else {
                break;
            };
            if let (true, Some(c)) = (write, &self.content) {
                c.fill(key, offset, file.buffer(0));
            }
            let moved = whole_op(&mut file, op, offset, size, &mut self.completions).await;
            let end = Instant::now();
            let checked = match (&moved, self.pattern.filter(|_| !write)) {
                (Ok(n), Some(p)) => p.check(key, offset, &file.buffer(0)[..*n]).map_err(verify_error),
                _ => Ok(()),
            };
            match moved.and_then(|n| checked.map(|()| n)) {
                Ok(n) => {
                    if !write && self.pattern.is_some() {
                        rec.add_verified(n as u64);
                    }
                    rec.record_op(0, intended, start, end, n as u64);
                }
                Err(e) => rec.error(0, end, &e, &path, Some(offset)),
            }
            done = i + 1;
        }
        if write {
            self.existing[set] = done;
            // IOR's -e: the file's fsync at its close is part of the phase.
            if job.fsync {
                if let Err(e) = file.sync(false).await {
                    rec.error(0, Instant::now(), &e, &path, None);
                }
            }
        }
    }

    /// ior-rnd4K-easy-read where ior-easy wrote whole files: 4 KiB at a random offset of a
    /// random one of `owner`'s `files`, opened once before the first read, until the time is
    /// up or `limit` reads are done.
    async fn random_reads(
        &mut self,
        ctx: &JobContext,
        job: &Io500Job,
        owner: usize,
        files: u64,
        limit: u64,
        rec: &mut Recorder<'_>,
    ) {
        let opts = BlockOpts {
            block_size: RND_XFER,
            queue_depth: 1,
            direct: false,
            create: false,
            random: true,
            file_len: 0,
            engine: IoEngine::Psync,
        };
        let mut opened = Vec::with_capacity(files as usize);
        for i in 0..files {
            file_path(&mut self.path, ctx.job_index, IOR_EASY, owner, i);
            match self.client.open_block(&self.path, opts).await {
                Ok(f) => opened.push(f),
                Err(e) => return rec.error(0, Instant::now(), &e, &self.path, None),
            }
        }
        let blocks = (job.easy_file_size / RND_XFER as u64).max(1);
        for _ in 0..limit {
            let index = self.rng.gen_range(0..files);
            let offset = self.rng.gen_range(0..blocks) * RND_XFER as u64;
            let Some((intended, start)) = self.begin(rec.ctl()).await else {
                break;
            };
            let file = &mut opened[index as usize];
            let moved = whole_op(file, BlockOp::Read, offset, RND_XFER, &mut self.completions).await;
            let end = Instant::now();
            let key = FileKey {
                job: ctx.job_index as u16,
                set: IOR_EASY as u16,
                worker: owner as u32,
                index,
            };
            let checked = moved.and_then(|_| match self.pattern {
                Some(p) => p.check(key, offset, file.buffer(0)).map_err(verify_error),
                None => Ok(()),
            });
            match checked {
                Ok(()) => {
                    if self.pattern.is_some() {
                        rec.add_verified(RND_XFER as u64);
                    }
                    rec.record_op(0, intended, start, end, RND_XFER as u64);
                }
                Err(e) => {
                    file_path(&mut self.path, ctx.job_index, IOR_EASY, owner, index);
                    rec.error(0, end, &e, &self.path, Some(offset));
                }
            }
        }
    }

    /// The find: list the worker's share of the tree and count what is in it (pfind's
    /// total files: IO500's find rate is files looked at per second).
    async fn find(&mut self, ctx: &JobContext, rec: &mut Recorder<'_>) {
        for dir in find_dirs(ctx.job_index, self.id) {
            let Some((intended, start)) = self.begin(rec.ctl()).await else {
                break;
            };
            let result = self.client.list(&dir).await;
            let end = Instant::now();
            rec.add_retries(self.client.take_retries());
            match result {
                Ok(items) => {
                    rec.record_op(0, intended, start, end, 0);
                    rec.add_items(items);
                }
                Err(e) => rec.error(0, end, &e, &dir, None),
            }
        }
    }
}

/// One operation of `size` bytes at `offset` on slot 0 of `file`, waited for: the bytes moved,
/// or an error for a failed or short one.
async fn whole_op<B: BlockIo>(
    file: &mut B,
    op: BlockOp,
    offset: u64,
    size: usize,
    completions: &mut Vec<Completion>,
) -> Result<usize, OpError> {
    completions.clear();
    file.submit(0, op, offset, size)?;
    file.complete(1, completions).await?;
    match completions.pop().map(|c| c.result) {
        Some(Ok(n)) if n == size => Ok(n),
        Some(Ok(n)) => Err(OpError::new("short_io", format!("moved {n} of {size} bytes"))),
        Some(Err(e)) => Err(e),
        None => Err(OpError::new("short_io", "no completion")),
    }
}

fn verify_error(m: crate::pattern::Mismatch) -> OpError {
    OpError::new(
        "verify",
        format!("wrong data at offset {}: found {}", m.offset, m.found),
    )
}

#[cfg(test)]
mod tests {
    use super::hard_offset;

    /// Record i of worker w of W at (i*W + w) * record: the workers' records side by side.
    #[test]
    fn hard_records_interleave() {
        let offsets: Vec<u64> = (0..2)
            .flat_map(|i| (0..3).map(move |w| hard_offset(i, w, 3, 47008)))
            .collect();
        assert_eq!(offsets, (0..6).map(|k| k * 47008).collect::<Vec<_>>());
        assert_eq!(hard_offset(10, 2, 4, 47008), 42 * 47008);
    }
}
