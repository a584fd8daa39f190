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

/// Directories of every iteration and worker, made one at a time (never all in memory).
pub(crate) fn iterate_setup_dirs(job: usize, it: &IterateJob, workers: usize) -> impl Iterator<Item = String> {
    let base = iterate_dir(job);
    let iterations = (0..it.iterations).flat_map(move |n| {
        let dir = format!("{}/i{n}", iterate_dir(job));
        std::iter::once(dir.clone()).chain((0..workers).map(move |w| format!("{dir}/w{w}")))
    });
    std::iter::once(base).chain(iterations)
}

pub(super) fn file_path(s: &mut String, job: usize, iteration: u64, worker: usize, i: u64) {
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
        // With shuffle the runner hands every worker another one's files (`src`): the next
        // worker, or in a run of several processes the same worker of another process.
        let src = self.src;
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
                        rec.note_read(start, bytes, first_byte, pattern.is_some());
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
    fn iteration_paths() {
        let mut s = String::new();
        file_path(&mut s, 0, 2, 1, 7);
        assert_eq!(s, "j0-iter/i2/w1/f7");
    }
}
