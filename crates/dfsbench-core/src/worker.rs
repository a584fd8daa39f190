//! A worker: one closed-loop client that runs every phase of a job on its own [`Client`].

use std::any::Any;
use std::time::Duration;

use dfsbench_backends::clock::Instant;

use rand::rngs::SmallRng;
use rand::{RngCore, SeedableRng};

use dfsbench_backends::{AlignedBuf, Client, Completion, SharedData};

use crate::data::{Content, Generator, Written};
use crate::load::Pacer;
use crate::pattern::Pattern;
use crate::stats::PhaseControl;

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
    /// The pacer's next arrival fell after the phase's end: the worker stopped for that.
    pub(crate) paced_out: bool,
    /// What the ranks agreed on at the end of the previous phase, for every worker alike
    /// (io's `auto`: the engine the probe picked); the workload reads it.
    pub(crate) agreed: Option<serde_json::Value>,
    /// The workload's own state between phases (io: the file opened for the next phase; mix:
    /// its pool), of a type only the workload module names: see [`Worker::take_state`].
    state: Option<Box<dyn Any>>,
}

/// Read-only facts every worker of a job needs: the run's and the job's settings the
/// workloads read, without the job itself (the runner fills it in).
pub struct JobContext {
    pub job_index: usize,
    /// Workers of the job over all ranks.
    pub total_workers: usize,
    /// The backend keeps file data in the client's page cache (reads of a file again must drop
    /// it first: see cache.rs).
    pub page_cache: bool,
    /// Drop cached pages before reads (`--invalidate`).
    pub invalidate: bool,
    /// Written data is checked when read (`--verify`).
    pub verify: bool,
    pub seed: u64,
    /// The job's time limit, and whether its phases go round until it (fio's time_based).
    pub duration: Option<Duration>,
    pub time_based: bool,
    /// What the job's workload writes.
    pub written: Written,
    /// Bytes of a worker's whole-file buffer.
    pub file_bs: usize,
    /// Random bytes every worker of this process writes from when no [`Content`] is made:
    /// one allocation for the job, not one per worker.
    pub data: Option<SharedData>,
}

impl JobContext {
    /// The job's shared random data, when its workers write from it: `chunk` bytes of the
    /// job's seed.
    pub(crate) fn shared_data(verify: bool, seed: u64, job_index: usize, w: &Written) -> Option<SharedData> {
        let shared = w.chunk > 0 && !verify && !w.shape.generated();
        let seed = seed ^ ((job_index as u64) << 40);
        shared.then(|| SharedData::new(w.chunk, |b| SmallRng::seed_from_u64(seed).fill_bytes(b)))
    }
}

impl<C: Client> Worker<C> {
    pub fn new(id: usize, client: C, ctx: &JobContext, run_tag: u32) -> Self {
        let rng = SmallRng::seed_from_u64(ctx.seed ^ ((ctx.job_index as u64) << 32) ^ id as u64);
        let w = ctx.written;
        let content = if ctx.verify {
            Some(Content::Verify(
                Pattern::new(run_tag).with_random_bytes(w.shape.random_bytes()),
            ))
        } else if w.shape.generated() {
            // The same seed on every rank: duplicate blocks match across processes.
            let seed = crate::data::job_seed(ctx.seed, ctx.job_index);
            Some(Content::Generated(Generator::new(w.shape, w.block, seed, ctx.seed)))
        } else {
            None
        };
        Worker {
            id,
            src: id,
            src_existing: Vec::new(),
            client,
            buf: AlignedBuf::new(ctx.file_bs),
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
            paced_out: false,
            agreed: None,
            state: None,
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
                    self.paced_out = true;
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

    /// Take the workload's state out of the worker for a phase (a new one the first time, or
    /// when the last was another type's); [`Worker::keep_state`] puts it back.
    pub(crate) fn take_state<S: Default + 'static>(&mut self) -> S {
        match self.state.take().map(|b| b.downcast::<S>()) {
            Some(Ok(s)) => *s,
            _ => S::default(),
        }
    }

    /// Keep the workload's state for the next phase.
    pub(crate) fn keep_state<S: 'static>(&mut self, state: S) {
        self.state = Some(Box::new(state));
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
