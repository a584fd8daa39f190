//! DFS-Perf's iterative workload: iteration 0 writes each worker's files; every later
//! iteration reads the previous iteration's files (its own, or with shuffle the next worker's)
//! and writes new ones, as chained jobs of a data-analytics pipeline do.

use dfsbench_backends::clock::Instant;

use dfsbench_backends::{Capability, Client, FileOpts};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::data::{DataShape, Written};
use crate::error::ConfigError;
use crate::pattern::FileKey;
use crate::stats::Recorder;
use crate::units::format_size;
use crate::worker::{push_num, JobContext, Worker};
use crate::workloads::shared::{size_or, READ, RW_CLASSES, WRITE};
use crate::workloads::whole::{chunk_for, read_whole, whole_file_needs, write_whole};
use crate::workloads::Phase;
use crate::workloads::{Kind, SharedOptions, Step};
use crate::workloads::{RunSettings, Timing};

/// Most iterations of an iterate job: each is a phase of its own with its own result.
pub(crate) const MAX_ITERATIONS: u64 = 10_000;

/// The iterate workload's own flags and workload-file keys.
#[derive(clap::Args, Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[group(id = "iterate-options")]
pub struct Options {
    /// Iterations, each reading the previous one's files and writing new ones (iterate) [default: 3].
    #[arg(long, value_name = "N", help_heading = "mix and iterate")]
    pub iterations: Option<u64>,

    /// Read the previous iteration of another worker (DFS-Perf's Shuffle mode); on the
    /// command line `--shuffle` sets it for the whole run.
    #[arg(skip)]
    pub shuffle: Option<bool>,
}

/// DFS-Perf's iterative workload: each iteration reads the files of the previous one and
/// writes new ones; with shuffle a worker reads another worker's files.
#[derive(Debug, Clone, Serialize)]
pub struct IterateJob {
    pub iterations: u64,
    pub shuffle: bool,
    /// Files per worker and iteration.
    pub files: u64,
    pub file_size: u64,
    pub bs: usize,
    pub direct: bool,
    pub fsync: bool,
    #[serde(flatten)]
    pub data: DataShape,
}

/// Iteration `n`: the first writes, later ones read the previous iteration's files and write
/// their own.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Iteration(pub u64);

impl Step for Iteration {
    // An iteration reads the previous one's output: another worker's with shuffle.
    fn reads_shuffled(self) -> bool {
        self.0 > 0
    }
    fn reads_data(self) -> bool {
        self.0 > 0
    }
}

impl Kind for IterateJob {
    const NAME: &'static str = "iterate";
    const SHARED: &'static [&'static str] = &[
        "files",
        "file_size",
        "bs",
        "direct",
        "fsync",
        "compress_percentage",
        "dedupe_percentage",
    ];
    const TIMED: bool = false;
    type Options = Options;
    type Step = Iteration;

    fn validate(own: &Options, s: &SharedOptions, run: &RunSettings) -> Result<IterateJob, ConfigError> {
        let iterations = own.iterations.unwrap_or(3);
        if !(2..=MAX_ITERATIONS).contains(&iterations) {
            return Err(ConfigError::value(
                "iterations",
                iterations,
                format!("give at least 2 and at most {MAX_ITERATIONS} (the first writes, each later one reads the previous)"),
            ));
        }
        let files = s.files.unwrap_or(10);
        if files == 0 {
            return Err(ConfigError::value(
                "files",
                0,
                "give the files per worker and iteration (e.g. files = 10)",
            ));
        }
        let bs = s.block_size(1 << 20)?;
        Ok(IterateJob {
            iterations,
            shuffle: own.shuffle.or(run.shuffle).unwrap_or(false),
            files,
            file_size: size_or("file_size", s.file_size.as_deref(), 1 << 20)?,
            bs,
            direct: s.direct.unwrap_or(false),
            fsync: s.fsync.unwrap_or(false),
            data: s.data_shape(run)?,
        })
    }

    fn phases(&self, index: usize, job: &Timing) -> Vec<Phase> {
        (0..self.iterations)
            .map(|n| {
                let params = vec![
                    ("iteration", json!(n)),
                    ("shuffle", json!(self.shuffle)),
                    ("files_per_worker", json!(self.files)),
                    ("file_size", json!(self.file_size)),
                    ("bs", json!(self.bs)),
                ];
                let label = match n {
                    0 => format!("iterate 0 write {}", format_size(self.file_size)),
                    _ if self.shuffle => format!("iterate {n} shuffle"),
                    _ => format!("iterate {n}"),
                };
                Phase::new(index, job, Iteration(n), "iterate", label, RW_CLASSES, params)
            })
            .collect()
    }

    fn needs(&self) -> Vec<Capability> {
        whole_file_needs(self.direct, self.fsync)
    }

    /// Directories of every iteration and worker, made one at a time (never all in memory).
    fn setup_dirs(&self, index: usize, workers: usize) -> Box<dyn Iterator<Item = String> + '_> {
        let base = iterate_dir(index);
        let iterations = (0..self.iterations).flat_map(move |n| {
            let dir = format!("{}/i{n}", iterate_dir(index));
            std::iter::once(dir.clone()).chain((0..workers).map(move |w| format!("{dir}/w{w}")))
        });
        Box::new(std::iter::once(base).chain(iterations))
    }

    fn files_read(&self, index: usize, Iteration(n): Iteration, owner: usize, _: &[u64]) -> Vec<String> {
        if n == 0 {
            return Vec::new();
        }
        let mut path = String::new();
        (0..self.files)
            .map(|i| {
                file_path(&mut path, index, n - 1, owner, i);
                path.clone()
            })
            .collect()
    }

    async fn run<C: Client>(
        &self,
        worker: &mut Worker<C>,
        ctx: &JobContext,
        Iteration(n): Iteration,
        _: Option<u64>,
        rec: &mut Recorder<'_>,
    ) {
        worker.run_iterate(ctx, self, n, rec).await
    }

    fn file_bs(&self) -> usize {
        chunk_for(self.bs, self.file_size)
    }

    fn written(&self) -> Written {
        Written {
            shape: self.data,
            block: self.bs,
            chunk: self.file_bs(),
        }
    }

    fn shuffles(&self) -> bool {
        self.shuffle
    }
}

/// The job's directory: iteration `n` of worker `w` writes in `<dir>/i<n>/w<w>`.
fn iterate_dir(job: usize) -> String {
    format!("j{job}-iter")
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

fn key(job: usize, iteration: u64, worker: usize, i: u64) -> FileKey {
    FileKey {
        job: job as u16,
        set: iteration as u16,
        worker: worker as u32,
        index: i,
    }
}

impl<C: Client> Worker<C> {
    async fn run_iterate(&mut self, ctx: &JobContext, it: &IterateJob, n: u64, rec: &mut Recorder<'_>) {
        let job = ctx.job_index;
        let opts = FileOpts {
            direct: it.direct,
            fsync: it.fsync,
        };
        // With shuffle the runner hands every worker another one's files (`src`): the next
        // worker, or in a run of several processes the same worker of another process.
        let src = self.src;
        let (pattern, content) = (self.pattern, self.content);
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
                content,
                ctx.data.as_ref(),
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
