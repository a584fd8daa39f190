//! The worker threads of a job: started once, each carries some workers through every
//! phase the main thread releases, and leaves when told or when the gate breaks.

use std::cell::RefCell;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc;
use std::sync::Mutex;

use futures_util::future::join_all;

use dfsbench_backends::Storage;

use crate::bounded::Bounded;
use crate::executor::Executor;
use crate::gate::Gate;
use crate::plan::Phase;
use crate::stats::{series_of, Buckets, Latencies, Live, PhaseControl, WorkerPhase};
use crate::worker::{JobContext, Worker};

use super::{turn, JobRun};

/// What the main thread of a job shares with the job's worker threads.
pub(super) struct Crew {
    /// Live counters per local worker, for the progress line and the steady-state rule.
    pub(super) lives: Vec<Live>,
    /// The threads and the main thread meet here four times a phase: to prepare it, when
    /// every worker is ready, to start it, and after it (then the main thread merges).
    pub(super) barrier: Gate,
    /// The phase to prepare and run; None tells the threads to leave.
    pub(super) current: Mutex<Option<Current>>,
    /// What the workers measured in the phase that ended, and each thread's series.
    pub(super) collected: Mutex<(Vec<WorkerPhase>, Vec<Buckets>)>,
    /// The exact latencies of every worker of the phase: set before it starts, taken after.
    pub(super) latencies: Mutex<Latencies>,
    /// A worker thread that could not open its client or start says why here.
    pub(super) client_error: Mutex<Option<String>>,
    /// Set when a phase ended with threads still inside the storage: they cannot be joined.
    pub(super) stuck: AtomicBool,
}

impl<S: Storage> JobRun<'_, S> {
    /// Start the job's worker threads; each carries every `threads`-th worker.
    pub(super) fn spawn_crew<'scope>(
        &'scope self,
        scope: &'scope std::thread::Scope<'scope, '_>,
        ctx: &'scope JobContext,
        crew: &'scope Crew,
        done_tx: mpsc::Sender<usize>,
    ) -> Vec<std::thread::ScopedJoinHandle<'scope, ()>> {
        let mut handles = Vec::with_capacity(self.threads);
        for t in 0..self.threads {
            let done_tx = done_tx.clone();
            let ids: Vec<usize> = (t..self.job.workers).step_by(self.threads).collect();
            let spawned = std::thread::Builder::new()
                .name(format!("dfsbench-w{t}"))
                .spawn_scoped(scope, move || self.carry(ctx, crew, t, &ids, done_tx));
            match spawned {
                Ok(h) => handles.push(h),
                Err(e) => {
                    // The threads started so far leave at the broken gate; the phase-start round
                    // tells every rank, and the run directory goes as after any failure.
                    *crew.client_error.lock().expect("lock") = Some(format!(
                        "cannot start worker thread {} of {} for job '{}': {e}: give fewer workers",
                        t + 1,
                        self.threads,
                        self.job.name
                    ));
                    crew.barrier.break_open();
                    break;
                }
            }
        }
        handles
    }

    /// A worker thread: opens a client per worker it carries, then prepares and runs each
    /// phase the main thread releases until told to leave.
    pub(super) fn carry(&self, ctx: &JobContext, crew: &Crew, t: usize, ids: &[usize], done_tx: mpsc::Sender<usize>) {
        // A panic here ends the phase for everyone and counts as this thread's end.
        let _release = ReleaseOnPanic {
            gate: &crew.barrier,
            current: &crew.current,
            done: Some((done_tx.clone(), t)),
        };
        let rt = Executor::for_backend(self.caps);
        let mut workers = Vec::with_capacity(ids.len());
        for &id in ids {
            match self.storage.client(self.base + id, self.job.workload.queue_depth()) {
                Ok(c) => {
                    let c = Bounded::new(c, self.config.op_timeout);
                    let mut w = Worker::new(self.base + id, c, ctx, self.run_tag);
                    w.alone = ids.len() == 1;
                    workers.push(w);
                }
                Err(e) => *crew.client_error.lock().expect("lock") = Some(format!("cannot open a client: {e}")),
            }
        }
        while crew.barrier.wait() {
            let Some(cur) = crew.current.lock().expect("lock").clone() else {
                break;
            };
            let workload = &self.job.workload;
            rt.block_on(join_all(workers.iter_mut().map(|w| {
                let local = w.id - self.base;
                let (source, agreed) = (cur.source_of(local), cur.agreed.clone());
                turn::prepare(w, workload, ctx, &cur.phase, source, agreed)
            })));
            // Ready; then the start, once every rank is: the phase's clock is set by then.
            if !crew.barrier.wait() || !crew.barrier.wait() {
                break;
            }
            let Some(ctl) = crew.current.lock().expect("lock").as_ref().and_then(|c| c.ctl.clone()) else {
                break;
            };
            let series = RefCell::new(series_of(&ctl));
            let out = rt.block_on(join_all(workers.iter_mut().map(|w| {
                let local = w.id - self.base;
                let live = &crew.lives[local];
                turn::run(w, workload, ctx, &cur.phase, &ctl, live, &series, &crew.latencies)
            })));
            {
                // Released before the barrier: every thread adds its own.
                let mut collected = crew.collected.lock().expect("lock");
                collected.0.extend(out);
                collected.1.push(series.into_inner());
            }
            let _ = done_tx.send(t);
            if !crew.barrier.wait() {
                break;
            }
        }
    }
}

/// Dropped while its thread unwinds from a panic: breaks the gate so no thread waits for this
/// one, stops the running phase, and (on a worker thread) counts as the thread's end of phase.
pub(super) struct ReleaseOnPanic<'a> {
    pub(super) gate: &'a Gate,
    pub(super) current: &'a Mutex<Option<Current>>,
    pub(super) done: Option<(mpsc::Sender<usize>, usize)>,
}

impl Drop for ReleaseOnPanic<'_> {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            return;
        }
        self.gate.break_open();
        let current = self.current.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(ctl) = current.as_ref().and_then(|c| c.ctl.as_ref()) {
            ctl.halt();
        }
        drop(current);
        if let Some((done, thread)) = &self.done {
            let _ = done.send(*thread);
        }
    }
}

/// Whose data the workers of a rank read with --shuffle: local worker `w` reads global worker
/// `base + (w + shift) % workers`.
#[derive(Clone, Copy)]
pub(super) struct Shuffle {
    pub(super) base: usize,
    pub(super) shift: usize,
    pub(super) workers: usize,
}

/// The phase every worker thread runs now.
#[derive(Clone)]
pub(super) struct Current {
    pub(super) phase: Phase,
    /// The phase's clock and stop rules: set when it starts, after the workers prepared it.
    pub(super) ctl: Option<std::sync::Arc<PhaseControl>>,
    /// With --shuffle in a read phase: whose data is read.
    pub(super) shuffle: Option<Shuffle>,
    /// Files per set of every global worker after the previous phase.
    pub(super) existing: std::sync::Arc<Vec<Vec<u64>>>,
    /// What the ranks agreed on at the end of the previous phase (see `Kind::agreed`).
    pub(super) agreed: Option<serde_json::Value>,
}

impl Shuffle {
    /// The global worker whose data local worker `w` reads.
    pub(super) fn source(&self, w: usize) -> usize {
        self.base + (w + self.shift) % self.workers
    }
}

impl Current {
    /// Whose data local worker `w` reads, and how many files that worker has.
    pub(super) fn source_of(&self, w: usize) -> Option<(usize, Vec<u64>)> {
        let src = self.shuffle?.source(w);
        Some((src, self.existing.get(src).cloned().unwrap_or_default()))
    }
}
