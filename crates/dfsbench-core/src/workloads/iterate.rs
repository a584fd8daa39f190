//! DFS-Perf's iterative workload: iteration 0 writes each worker's files; every later
//! iteration reads the previous iteration's files (its own, or with shuffle the next worker's)
//! and writes new ones, as chained jobs of a data-analytics pipeline do.

use dfsbench_backends::clock::Instant;

use dfsbench_backends::{Client, FileOpts};

use crate::config::{IterateJob, Workload};
use crate::pattern::FileKey;
use crate::plan::{READ, WRITE};
use crate::stats::Recorder;
use crate::worker::{push_num, JobContext, Worker};
use crate::workloads::whole::{read_whole, write_whole};

/// The job's directory: iteration `n` of worker `w` writes in `<dir>/i<n>/w<w>`.
pub(crate) fn iterate_dir(job: usize) -> String {
    format!("j{job}-iter")
}

/// Directories of every iteration and worker.
pub(crate) fn iterate_setup_dirs(job: usize, it: &IterateJob, workers: usize) -> Vec<String> {
    let base = iterate_dir(job);
    let mut dirs = vec![base.clone()];
    for n in 0..it.iterations {
        dirs.push(format!("{base}/i{n}"));
        dirs.extend((0..workers).map(|w| format!("{base}/i{n}/w{w}")));
    }
    dirs
}

fn file_path(s: &mut String, job: usize, iteration: u64, worker: usize, i: u64) {
    s.clear();
    s.push('j');
    push_num(s, job as u64);
    s.push_str("-iter/i");
    push_num(s, iteration);
    s.push_str("/w");
    push_num(s, worker as u64);
    s.push_str("/f");
    push_num(s, i);
}

/// The worker whose files worker `w` reads: itself, or with shuffle the next one, so every
/// read crosses to another client (and, with workers spread over hosts, to another host).
pub(crate) fn source(w: usize, workers: usize, shuffle: bool) -> usize {
    if shuffle {
        (w + 1) % workers
    } else {
        w
    }
}

fn key(job: usize, iteration: u64, worker: usize, i: u64) -> FileKey {
    FileKey {
        job: job as u16,
        set: iteration as u16,
        worker: worker as u32,
        index: i,
    }
}

impl<C: Client> Worker<C> {
    pub(crate) async fn run_iterate(&mut self, ctx: &JobContext<'_>, n: u64, rec: &mut Recorder<'_>) {
        let Workload::Iterate(it) = &ctx.job.workload else {
            unreachable!("iterate phase of an iterate job")
        };
        let job = ctx.job_index;
        let opts = FileOpts {
            direct: it.direct,
            fsync: it.fsync,
        };
        let src = source(self.id, ctx.job.workers, it.shuffle);
        let pattern = self.pattern;
        for i in 0..it.files {
            if n > 0 {
                let Some((intended, start)) = self.begin(rec.ctl()).await else {
                    return;
                };
                file_path(&mut self.path, job, n - 1, src, i);
                let k = key(job, n - 1, src, i);
                let r = read_whole(
                    &mut self.client,
                    &self.path,
                    it.file_size,
                    opts,
                    &mut self.buf,
                    pattern,
                    k,
                )
                .await;
                let end = Instant::now();
                rec.add_retries(self.client.take_retries());
                match r {
                    Ok((bytes, first_byte)) => {
                        if let Some(t) = first_byte {
                            rec.record_ttfb(start, t);
                        }
                        if pattern.is_some() {
                            rec.add_verified(bytes);
                        }
                        rec.record_op(READ, intended, start, end, bytes);
                    }
                    Err((e, offset)) => rec.error(READ, end, &e, &self.path, offset),
                }
            }
            let Some((intended, start)) = self.begin(rec.ctl()).await else {
                return;
            };
            file_path(&mut self.path, job, n, self.id, i);
            let k = key(job, n, self.id, i);
            let r = write_whole(
                &mut self.client,
                &self.path,
                it.file_size,
                opts,
                &mut self.buf,
                pattern,
                k,
            )
            .await;
            let end = Instant::now();
            rec.add_retries(self.client.take_retries());
            match r {
                Ok(bytes) => rec.record_op(WRITE, intended, start, end, bytes),
                Err(e) => rec.error(WRITE, end, &e, &self.path, None),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shuffle_reads_another_workers_files() {
        assert_eq!(source(2, 4, false), 2);
        assert_eq!(source(2, 4, true), 3);
        assert_eq!(source(3, 4, true), 0);
        assert_eq!(source(0, 1, true), 0, "a single worker can only read its own files");
        let mut s = String::new();
        file_path(&mut s, 0, 2, 1, 7);
        assert_eq!(s, "j0-iter/i2/w1/f7");
    }
}
