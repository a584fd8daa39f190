//! A worker: one closed-loop client that runs every phase of a job on its own [`Client`].

use std::cell::RefCell;
use std::sync::Mutex;

use dfsbench_backends::clock::Instant;

use rand::rngs::SmallRng;
use rand::{RngCore, SeedableRng};

use dfsbench_backends::{AlignedBuf, Client, Completion, IoEngine, SharedData};

use crate::config::{Job, RunConfig};
use crate::data::{Content, Generator};
use crate::load::Pacer;
use crate::pattern::Pattern;
use crate::plan::Phase;
use crate::stats::{Buckets, Latencies, Live, PhaseControl, Recorder, WorkerPhase};
use crate::workloads::io::OpenedIo;

/// State of one worker that lives across the phases of a job.
pub struct Worker<C: Client> {
    /// Index of the worker in the job, over all ranks (rank * workers per rank + local index).
    pub id: usize,
    /// Whose data read phases read: `id`, or another rank's worker with `--shuffle`; and how
    /// many files that worker has per set.
    pub(crate) src: usize,
    pub(crate) src_existing: Vec<u64>,
    pub(crate) client: C,
    /// Buffer of whole-file reads and of filled writes: the workload's chunk size, no larger
    /// than its largest file (its pages are touched only when used).
    pub(crate) buf: AlignedBuf,
    pub(crate) path: String,
    pub(crate) path2: String,
    pub(crate) rng: SmallRng,
    /// How written data is made: the verify pattern or the data options; None: the job's
    /// shared random data.
    pub(crate) content: Option<Content>,
    /// The pattern reads are checked against (`--verify`).
    pub(crate) pattern: Option<Pattern>,
    /// Files that exist after the create/write phase, per file set (meta uses set 0).
    pub(crate) existing: Vec<u64>,
    /// Indices below `existing` whose write failed, per file set, ascending: reads of this
    /// worker's files pass them by, as a timed-out write may have left nothing.
    pub(crate) lost: Vec<Vec<u64>>,
    pub(crate) completions: Vec<Completion>,
    /// The worker has its OS thread to itself (it may sleep the thread while paced).
    pub(crate) alone: bool,
    /// Intended start times of the current phase, when it runs at a rate.
    pub(crate) pacer: Option<Pacer>,
    /// Sizes of the mix pool's files by slot; None where a delete removed the file.
    pub(crate) pool: Vec<Option<u64>>,
    /// The io engine `auto` runs the next pattern on: the one the probe found fastest over
    /// every worker of every rank, the same for all of them.
    pub(crate) engine_pick: Option<IoEngine>,
    /// Blocks per second of each engine in this worker's own probe, recorded again by the
    /// measured phase after it.
    pub(crate) probe_figures: Vec<(IoEngine, f64)>,
    /// The io file the next phase runs on, opened before the phase starts.
    pub(crate) opened: Option<OpenedIo<C::Block>>,
}

/// Read-only facts every worker of a job needs.
pub struct JobContext<'a> {
    pub config: &'a RunConfig,
    pub job: &'a Job,
    pub job_index: usize,
    /// Workers of the job over all ranks.
    pub total_workers: usize,
    /// The backend keeps file data in the client's page cache (reads of a file again must drop
    /// it first: see cache.rs).
    pub page_cache: bool,
    /// Random bytes every worker of this process writes from when no [`Content`] is made:
    /// one allocation for the job, not one per worker.
    pub data: Option<SharedData>,
}

impl<'a> JobContext<'a> {
    pub fn new(config: &'a RunConfig, job: &'a Job, job_index: usize, total_workers: usize, page_cache: bool) -> Self {
        let w = job.workload.written();
        let shared = w.chunk > 0 && !config.verify && !w.shape.generated();
        let seed = config.seed ^ ((job_index as u64) << 40);
        JobContext {
            config,
            job,
            job_index,
            total_workers,
            page_cache,
            data: shared.then(|| SharedData::new(w.chunk, |b| SmallRng::seed_from_u64(seed).fill_bytes(b))),
        }
    }
}

impl<C: Client> Worker<C> {
    pub fn new(id: usize, client: C, ctx: &JobContext<'_>, run_tag: u32) -> Self {
        let rng = SmallRng::seed_from_u64(ctx.config.seed ^ ((ctx.job_index as u64) << 32) ^ id as u64);
        let w = ctx.job.workload.written();
        let content = if ctx.config.verify {
            Some(Content::Verify(
                Pattern::new(run_tag).with_random_bytes(w.shape.random_bytes()),
            ))
        } else if w.shape.generated() {
            // The same seed on every rank: duplicate blocks match across processes.
            let seed = ctx.config.seed ^ ((ctx.job_index as u64) << 40);
            Some(Content::Generated(Generator::new(w.shape, w.block, seed)))
        } else {
            None
        };
        Worker {
            id,
            src: id,
            src_existing: Vec::new(),
            client,
            buf: AlignedBuf::new(ctx.job.workload.file_bs()),
            path: String::with_capacity(256),
            path2: String::with_capacity(256),
            rng,
            pattern: content.and_then(|c| c.pattern()),
            content,
            existing: Vec::new(),
            lost: Vec::new(),
            completions: Vec::new(),
            alone: false,
            pacer: None,
            pool: Vec::new(),
            engine_pick: None,
            probe_figures: Vec::new(),
            opened: None,
        }
    }

    /// Start an operation: with a rate, wait for its intended start. Returns the intended and
    /// the actual start (equal in a closed loop), or None once the phase must stop; a paced
    /// phase issues nothing scheduled at or after its deadline.
    #[inline]
    pub(crate) async fn begin(&mut self, ctl: &PhaseControl) -> Option<(Instant, Instant)> {
        let intended = match &mut self.pacer {
            Some(p) => {
                if ctl.deadline.is_some_and(|d| p.peek() >= d) {
                    return None;
                }
                Some(p.wait(ctl).await?)
            }
            None => None,
        };
        let start = Instant::now();
        if ctl.should_stop(start) {
            return None;
        }
        Some((intended.unwrap_or(start), start))
    }

    /// Get ready for a phase before its clock starts: whose data it reads (its own, or with
    /// --shuffle another rank's: `source`), and what the workload sets up beforehand.
    pub async fn prepare_phase(&mut self, ctx: &JobContext<'_>, phase: &Phase, source: Option<(usize, Vec<u64>)>) {
        (self.src, self.src_existing) = source.unwrap_or_else(|| (self.id, self.existing.clone()));
        crate::workloads::prepare_step(self, ctx, phase.op).await;
    }

    /// Run one phase, prepared by [`Worker::prepare_phase`], to its end and return what was
    /// measured: latencies into `latencies`, completions into `series`, the carrying thread's.
    pub async fn run_phase(
        &mut self,
        ctx: &JobContext<'_>,
        phase: &Phase,
        ctl: &PhaseControl,
        live: &Live,
        series: &RefCell<Buckets>,
        latencies: &Mutex<Latencies>,
    ) -> WorkerPhase {
        let mut rec = Recorder::new(self.id, phase.classes, ctl, live, series, latencies);
        self.pacer = phase.rate.map(|r| {
            // The rate is the total over every worker of every process.
            let workers = ctx.total_workers;
            rec.measure_service();
            Pacer::new(
                ctl.start,
                r / workers as f64,
                phase.arrival,
                self.id,
                workers,
                ctx.config.seed,
                self.alone,
            )
        });
        crate::workloads::run_step(self, ctx, phase.op, phase.until, &mut rec).await;
        let mut out = rec.finish();
        out.existing = self.existing.clone();
        out.read_from = (self.src != self.id).then_some(self.src);
        out
    }
}

/// Append the decimal digits of `n` without the formatting machinery.
pub(crate) fn push_num(s: &mut String, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    // Digits are ASCII: push them as chars, no UTF-8 validation on the hot path.
    s.extend(digits[i..].iter().map(|&d| d as char));
}

#[cfg(test)]
mod tests {
    #[test]
    fn push_num_writes_decimal() {
        let mut s = String::from("f");
        super::push_num(&mut s, 0);
        super::push_num(&mut s, 1234567890123);
        assert_eq!(s, "f01234567890123");
    }
}
