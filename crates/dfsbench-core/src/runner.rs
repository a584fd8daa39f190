//! Runs the phases of every job on worker threads and merges what they measured.
//!
//! Each job gets its own OS threads (as many as the backend needs), each thread a
//! current-thread executor carrying some of the workers. The main thread releases every phase
//! with a barrier, samples the workers' live counters for the per-second series and the
//! progress line, and merges the workers' histograms and counters exactly when the phase ends.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::join_all;

use dfsbench_backends::clock::Instant;
use dfsbench_backends::{Capabilities, Client, Drive, IoEngine, Storage};

use serde::{Deserialize, Serialize};

use crate::bounded::Bounded;
use crate::cluster::tree::Tree;
use crate::cluster::{decode, Group, Member, TAG_PROGRESS, TAG_STONEWALL};
use crate::config::{Job, RunConfig};
use crate::executor::Executor;
use crate::faults::Timeline;
use crate::gate::Gate;
use crate::gather::GatherClock;
use crate::host::{cpu_sample, thread_limit};
use crate::load::Stable;
use crate::part::{combine, rank_part, Merger, RankPart, Subtotal};
use crate::plan::{phases, Phase};
use crate::stats::{series_of, Buckets, Latencies, Live, PhaseControl, Rereads, WorkerPhase, SERIES_INTERVAL};
use crate::worker::{JobContext, Worker};
use dfsbench_result::{validity_reasons, PhaseCache, PhaseResult};

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    Complete,
    /// Ctrl-C.
    Interrupted,
    /// Stopped after `max_errors` errors.
    Aborted(String),
    /// Could not go on (e.g. a setup step failed).
    Failed(String),
}

/// What the runner tells the user interface while it runs.
pub trait Observer {
    fn phase_started(&mut self, _phase: &Phase, _workers: usize) {}
    /// About ten times a second: elapsed time and running totals of the phase.
    fn tick(&mut self, _elapsed: Duration, _ops: u64, _bytes: u64, _errors: u64) {}
    fn phase_finished(&mut self, _result: &PhaseResult) {}
    /// The run waits for something after its phases (the recovery probe): what, for people.
    fn waiting(&mut self, _what: &str) {}
}

/// An observer that shows nothing.
pub struct Quiet;
impl Observer for Quiet {}

const TICK: Duration = Duration::from_millis(100);
/// How often a rank of a multi-process run checks for stonewall notices.
const STONEWALL_POLL: Duration = Duration::from_millis(10);

/// Why the jobs cannot run on the target's backend, found before anything runs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FitError {
    /// The backend lacks a capability the job's workload needs.
    #[error(
        "job '{job}' needs {capability} but the {backend} backend does not support it: change the job or the target"
    )]
    Unsupported {
        job: String,
        capability: &'static str,
        backend: String,
    },
    /// More threads than the process may start (`why`: the limit's source, e.g. ulimit -u).
    #[error("job '{job}' needs {threads} threads, more than {why} allows ({limit}): {fix}, or raise the limit")]
    TooManyThreads {
        job: String,
        threads: u64,
        why: String,
        limit: u64,
        fix: String,
    },
    /// `--threads` on a backend that blocks a thread per operation.
    #[error("job '{job}': the {backend} backend blocks a thread per operation, so threads ({threads}) must equal workers ({workers}): leave --threads out")]
    ThreadsNotWorkers {
        job: String,
        backend: String,
        threads: usize,
        workers: usize,
    },
}

/// Fit defaulted choices to the backend (a meta job that did not name its phases skips rename
/// where there is none) and check that it can do what the jobs ask, before anything runs.
/// Returns notes on what was skipped.
pub fn fit_to_backend(config: &mut RunConfig, caps: Capabilities, backend: &str) -> Result<Vec<String>, FitError> {
    let mut notes = Vec::new();
    for job in &mut config.jobs {
        if let Some(note) = job.workload.fit(caps, backend) {
            notes.push(format!("job '{}': {note}", job.name));
        }
        if let Some(missing) = caps.missing(&job.workload.needs()) {
            return Err(FitError::Unsupported {
                job: job.name.clone(),
                capability: missing.name(),
                backend: backend.to_string(),
            });
        }
        let threads = job_threads(job, caps) as u64;
        if let Some((limit, why)) = thread_limit().filter(|(limit, _)| threads > *limit) {
            let fix = if caps.drive == Drive::Blocking {
                format!("the {backend} backend needs a thread per worker: give fewer workers")
            } else {
                "give fewer --threads".to_string()
            };
            return Err(FitError::TooManyThreads {
                job: job.name.clone(),
                threads,
                why,
                limit,
                fix,
            });
        }
        if caps.drive == Drive::Blocking {
            if let Some(t) = job.threads.filter(|&t| t != job.workers) {
                return Err(FitError::ThreadsNotWorkers {
                    job: job.name.clone(),
                    backend: backend.to_string(),
                    threads: t,
                    workers: job.workers,
                });
            }
        }
    }
    Ok(notes)
}

/// OS threads that carry a job's workers: one per worker for blocking backends, else
/// `--threads` or one per CPU.
fn job_threads(job: &Job, caps: Capabilities) -> usize {
    if caps.drive == Drive::Blocking {
        job.workers
    } else {
        job.threads.unwrap_or_else(|| {
            job.workers
                .min(std::thread::available_parallelism().map_or(1, |n| n.get()))
        })
    }
}

/// What a run's jobs share: its tag, the Ctrl-C flag, when it started, and its fault schedule.
pub struct RunClock<'a> {
    /// Written into verified data.
    pub run_tag: u32,
    pub interrupt: &'static AtomicBool,
    /// The run's start: phases' `start_s` and events count from it.
    pub origin: Instant,
    pub timeline: Option<&'a Timeline>,
}

/// Run every job of `config` on `storage`, as one rank of `group`. Phases finished before an
/// interruption, an abort or a failure are returned with the status; only rank 0 has results.
pub fn run<S: Storage>(
    storage: &S,
    config: &RunConfig,
    run: &RunClock<'_>,
    observer: &mut dyn Observer,
    group: &mut Group,
) -> (Vec<PhaseResult>, Status) {
    let (run_tag, interrupt) = (run.run_tag, run.interrupt);
    let run_start = group.clock(run.origin);
    group.watch_interrupt(interrupt);
    let mut results = Vec::new();
    for (index, job) in config.jobs.iter().enumerate() {
        let status = run_job(
            storage,
            config,
            (index, job),
            (run_tag, interrupt, run_start, run.timeline),
            observer,
            group,
            &mut results,
        );
        if status != Status::Complete {
            return (results, status);
        }
    }
    (results, Status::Complete)
}

/// One job's directories hold many files; the mem and posix backends need them made, object
/// stores (later) ignore them.
fn setup<S: Storage>(storage: &S, index: usize, job: &Job, workers: usize) -> Result<(), String> {
    if !storage.capabilities().directories {
        // Object stores have no directories: prefixes exist as soon as objects do.
        return Ok(());
    }
    let mut client = storage.client(0, 1).map_err(|e| format!("cannot open a client: {e}"))?;
    Executor::for_backend(storage.capabilities()).block_on(async {
        // Directories for the workers of every rank, made one at a time.
        for d in job.workload.setup_dirs(index, workers) {
            client
                .mkdir(&d)
                .await
                .map_err(|e| format!("cannot create directory {d} in the run directory: {e}"))?;
        }
        Ok(())
    })
}

/// Every rank says whether it can go on; all learn the first problem of any. A lost rank is
/// a problem too.
pub(crate) fn agree(group: &mut Group, mine: Option<String>, what: &str) -> Option<String> {
    let mine = mine.map(String::into_bytes).unwrap_or_default();
    let answer = group.round(mine, what, |all| {
        all.into_iter()
            .enumerate()
            .find(|(_, p)| !p.is_empty())
            .map(|(r, p)| {
                let m = String::from_utf8_lossy(&p).into_owned();
                if r == 0 {
                    m
                } else {
                    format!("rank {r}: {m}")
                }
            })
            .unwrap_or_default()
            .into_bytes()
    });
    match answer {
        Ok(a) if a.is_empty() => None,
        Ok(a) => Some(String::from_utf8_lossy(&a).into_owned()),
        Err(lost) => Some(lost.message),
    }
}

/// What rank 0 tells every rank at the end of a phase.
#[derive(Serialize, Deserialize, Default)]
struct PhaseEnd {
    /// Why the run stops here, if it does: (`interrupted` | `aborted` | `failed`, message).
    stop: Option<(String, String)>,
    /// Files per set of every worker of every rank, by global worker index.
    existing: Vec<Vec<u64>>,
    /// After an engine probe: the engine every worker of every rank runs next.
    #[serde(default)]
    ioengine: Option<IoEngine>,
}

impl PhaseEnd {
    fn failed(why: String) -> PhaseEnd {
        PhaseEnd {
            stop: Some(("failed".into(), why)),
            existing: Vec::new(),
            ioengine: None,
        }
    }
}

/// Stonewall notices while a phase runs: a rank tells rank 0 when its first worker finished,
/// rank 0 tells everyone the earliest such moment, and every rank's workers stop counting
/// toward the stonewall (within a poll interval, 10 ms).
struct StonewallLink {
    seq: u64,
    told: bool,
    heard: bool,
}

impl StonewallLink {
    fn encode(&self, t: f64) -> Vec<u8> {
        let mut m = self.seq.to_le_bytes().to_vec();
        m.extend_from_slice(&t.to_le_bytes());
        m
    }

    /// A notice of this phase; anything else (an old phase's, garbage) is ignored.
    fn decode(&self, m: &[u8]) -> Option<f64> {
        let (seq, t) = m.split_at_checked(8)?;
        let t = f64::from_le_bytes(t.try_into().ok()?);
        (u64::from_le_bytes(seq.try_into().ok()?) == self.seq && t.is_finite()).then_some(t)
    }

    fn poll(&mut self, group: &mut Group, ctl: &PhaseControl) {
        if group.size() == 1 || (self.told && self.heard) {
            return;
        }
        if group.is_root() {
            let mut first = ctl.first_done_at().map(|t| group.clock(t));
            for r in 1..group.size() {
                for m in group.drain(r, TAG_STONEWALL) {
                    if let Some(t) = self.decode(&m) {
                        first = Some(first.map_or(t, |f| f.min(t)));
                    }
                }
            }
            if let Some(t) = first {
                for r in 1..group.size() {
                    group.notify(r, TAG_STONEWALL, &self.encode(t));
                }
                ctl.mark_done(group.instant(t));
                (self.told, self.heard) = (true, true);
            }
            return;
        }
        if !self.told {
            if let Some(t) = ctl.first_done_at() {
                let m = self.encode(group.clock(t));
                group.notify(0, TAG_STONEWALL, &m);
                self.told = true;
            }
        }
        for m in group.drain(0, TAG_STONEWALL) {
            if let Some(t) = self.decode(&m) {
                ctl.mark_done(group.instant(t));
                self.heard = true;
            }
        }
    }
}

/// Rank 0's progress line shows the whole group: every other rank sends its running totals
/// of the phase about ten times a second, and rank 0 adds the latest of each to its own.
struct ProgressLink {
    seq: u64,
    /// The latest (ops, bytes, errors) of each rank; rank 0 keeps them, the others send theirs.
    ranks: Vec<Totals>,
    sent: Option<Instant>,
}

type Totals = (u64, u64, u64);

impl ProgressLink {
    fn new(seq: u64, ranks: usize) -> Self {
        ProgressLink {
            seq,
            ranks: vec![(0, 0, 0); ranks],
            sent: None,
        }
    }

    fn encode(&self, t: Totals) -> Vec<u8> {
        [self.seq, t.0, t.1, t.2].iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    /// Totals of this phase; anything else (an old phase's, garbage) is ignored.
    fn decode(&self, m: &[u8]) -> Option<Totals> {
        let v: Vec<u64> = m
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect();
        match v[..] {
            [seq, o, b, e] if seq == self.seq && m.len() == 32 => Some((o, b, e)),
            _ => None,
        }
    }

    /// The other ranks' latest totals (rank 0), after sending this rank's own (others).
    fn exchange(&mut self, group: &mut Group, local: Totals) -> Totals {
        if group.size() == 1 {
            return (0, 0, 0);
        }
        if !group.is_root() {
            if self.sent.is_none_or(|t| t.elapsed() >= TICK) {
                let m = self.encode(local);
                group.notify(0, TAG_PROGRESS, &m);
                self.sent = Some(Instant::now());
            }
            return (0, 0, 0);
        }
        for r in 1..group.size() {
            for m in group.drain(r, TAG_PROGRESS) {
                if let Some(t) = self.decode(&m) {
                    self.ranks[r] = t;
                }
            }
        }
        self.ranks[1..]
            .iter()
            .fold((0, 0, 0), |a, t| (a.0 + t.0, a.1 + t.1, a.2 + t.2))
    }
}

/// What the main thread of a job shares with the job's worker threads.
struct Crew {
    /// Live counters per local worker, for the progress line and the steady-state rule.
    lives: Vec<Live>,
    /// The threads and the main thread meet here four times a phase: to prepare it, when
    /// every worker is ready, to start it, and after it (then the main thread merges).
    barrier: Gate,
    /// The phase to prepare and run; None tells the threads to leave.
    current: Mutex<Option<Current>>,
    /// What the workers measured in the phase that ended, and each thread's series.
    collected: Mutex<(Vec<WorkerPhase>, Vec<Buckets>)>,
    /// The exact latencies of every worker of the phase: set before it starts, taken after.
    latencies: Mutex<Latencies>,
    /// A worker thread that could not open its client or start says why here.
    client_error: Mutex<Option<String>>,
}

/// One job of one rank: what stays the same over its phases.
struct JobRun<'a, S: Storage> {
    storage: &'a S,
    config: &'a RunConfig,
    index: usize,
    job: &'a Job,
    run_tag: u32,
    interrupt: &'static AtomicBool,
    run_start: f64,
    caps: Capabilities,
    threads: usize,
    /// Worker w of rank r is worker r * workers + w of the job: names never collide.
    base: usize,
    total_workers: usize,
    shuffle: Option<Shuffle>,
    run_path: String,
    /// The fault schedule (rank 0 of runs with faults), told when each phase starts.
    timeline: Option<&'a Timeline>,
}

fn run_job<S: Storage>(
    storage: &S,
    config: &RunConfig,
    (index, job): (usize, &Job),
    (run_tag, interrupt, run_start, timeline): (u32, &'static AtomicBool, f64, Option<&Timeline>),
    observer: &mut dyn Observer,
    group: &mut Group,
    results: &mut Vec<PhaseResult>,
) -> Status {
    let made = if group.is_root() {
        setup(storage, index, job, job.workers * group.size()).err()
    } else {
        None
    };
    if let Some(e) = agree(group, made, &format!("the setup of job '{}'", job.name)) {
        return Status::Failed(e);
    }
    let caps = storage.capabilities();
    let run = JobRun {
        storage,
        config,
        index,
        job,
        run_tag,
        interrupt,
        run_start,
        caps,
        threads: job_threads(job, caps),
        base: group.rank() * job.workers,
        total_workers: job.workers * group.size(),
        shuffle: shuffle_of(config, job, group),
        run_path: storage.info().run_path,
        timeline,
    };
    let crew = Crew {
        lives: (0..job.workers).map(|_| Live::default()).collect(),
        barrier: Gate::new(run.threads + 1),
        current: Mutex::new(None),
        collected: Mutex::new((Vec::new(), Vec::new())),
        latencies: Mutex::default(),
        client_error: Mutex::new(None),
    };
    let ctx = JobContext::new(config, job, index, run.total_workers, caps.page_cache);
    let (done_tx, done_rx) = mpsc::channel::<()>();
    std::thread::scope(|scope| {
        // A panic on this thread must release the workers, or the scope would wait for them.
        let _release = ReleaseOnPanic {
            gate: &crew.barrier,
            current: &crew.current,
            done: None,
        };
        let handles = run.spawn_crew(scope, &ctx, &crew, done_tx);
        let status = run.phases(&crew, &done_rx, observer, group, results);
        *crew.current.lock().expect("lock") = None;
        crew.barrier.wait();
        // Joined here, a panicked thread fails the run instead of re-panicking on this one.
        let mut failure = None;
        for h in handles {
            if let Err(payload) = h.join() {
                failure.get_or_insert(crate::panics::internal_error(Some(payload.as_ref())));
            }
        }
        failure.map_or(status, Status::Failed)
    })
}

/// With --shuffle, read phases (and iterations) read the data of the same worker of another
/// rank, or in a single process the next worker's.
fn shuffle_of(config: &RunConfig, job: &Job, group: &Group) -> Option<Shuffle> {
    let (rank, ranks) = (group.rank(), group.size());
    (config.shuffle || job.workload.shuffles()).then(|| Shuffle {
        base: if ranks > 1 {
            group.shuffle_source(rank) * job.workers
        } else {
            0
        },
        shift: usize::from(ranks == 1),
        workers: job.workers,
    })
}

impl<'a, S: Storage> JobRun<'a, S> {
    /// Start the job's worker threads; each carries every `threads`-th worker.
    fn spawn_crew<'scope>(
        &'scope self,
        scope: &'scope std::thread::Scope<'scope, '_>,
        ctx: &'scope JobContext<'scope>,
        crew: &'scope Crew,
        done_tx: mpsc::Sender<()>,
    ) -> Vec<std::thread::ScopedJoinHandle<'scope, ()>> {
        let mut handles = Vec::with_capacity(self.threads);
        for t in 0..self.threads {
            let done_tx = done_tx.clone();
            let ids: Vec<usize> = (t..self.job.workers).step_by(self.threads).collect();
            let spawned = std::thread::Builder::new()
                .name(format!("dfsbench-w{t}"))
                .spawn_scoped(scope, move || self.carry(ctx, crew, &ids, done_tx));
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
    fn carry(&self, ctx: &JobContext<'_>, crew: &Crew, ids: &[usize], done_tx: mpsc::Sender<()>) {
        // A panic here ends the phase for everyone and counts as this thread's end.
        let _release = ReleaseOnPanic {
            gate: &crew.barrier,
            current: &crew.current,
            done: Some(done_tx.clone()),
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
            rt.block_on(join_all(workers.iter_mut().map(|w| {
                let local = w.id - self.base;
                w.engine_pick = cur.ioengine;
                w.prepare_phase(ctx, &cur.phase, cur.source_of(local))
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
                w.run_phase(ctx, &cur.phase, &ctl, &crew.lives[local], &series, &crew.latencies)
            })));
            {
                // Released before the barrier: every thread adds its own.
                let mut collected = crew.collected.lock().expect("lock");
                collected.0.extend(out);
                collected.1.push(series.into_inner());
            }
            let _ = done_tx.send(());
            if !crew.barrier.wait() {
                break;
            }
        }
    }

    /// Run the job's phases in order (and the wear-out steps they call for) until one stops.
    fn phases(
        &self,
        crew: &Crew,
        done_rx: &mpsc::Receiver<()>,
        observer: &mut dyn Observer,
        group: &mut Group,
        results: &mut Vec<PhaseResult>,
    ) -> Status {
        let mut existing: Arc<Vec<Vec<u64>>> = Default::default();
        let mut ioengine = None;
        let mut queue: VecDeque<Phase> = phases(self.index, self.job).into();
        let mut seq = 0u64;
        while let Some(phase) = queue.pop_front() {
            seq += 1;
            let end = self.phase(
                &phase, seq, &existing, ioengine, crew, done_rx, observer, group, results,
            );
            let end = match end {
                Ok(end) => end,
                Err(stop) => return stop,
            };
            if self.config.stonewall_wear_out && end.stop.is_none() {
                if let Some(w) = phase.wear_out(&end.existing) {
                    queue.push_front(w);
                }
            }
            existing = Arc::new(end.existing);
            ioengine = end.ioengine;
            match end.stop {
                Some((kind, _)) if kind == "interrupted" => return Status::Interrupted,
                Some((kind, why)) if kind == "failed" => return Status::Failed(why),
                Some((_, why)) => return Status::Aborted(why),
                None => {}
            }
        }
        Status::Complete
    }

    /// One phase: prepare (drop cached pages, let the workers set up, agree to start), run and
    /// sample it, merge.
    #[allow(clippy::too_many_arguments)]
    fn phase(
        &self,
        phase: &Phase,
        seq: u64,
        existing: &Arc<Vec<Vec<u64>>>,
        ioengine: Option<IoEngine>,
        crew: &Crew,
        done_rx: &mpsc::Receiver<()>,
        observer: &mut dyn Observer,
        group: &mut Group,
        results: &mut Vec<PhaseResult>,
    ) -> Result<PhaseEnd, Status> {
        let cache = self.drop_cached(phase, existing, group)?;
        *crew.current.lock().expect("lock") = Some(Current {
            phase: phase.clone(),
            ctl: None,
            shuffle: self.shuffle.filter(|_| phase.reads_shuffled()),
            existing: existing.clone(),
            ioengine,
        });
        // The workers set the phase up (open files, fill buffers) before its clock starts; the
        // second wait returns when all are ready (or at once if a thread panicked: below).
        crew.barrier.wait();
        crew.barrier.wait();
        // A worker thread that panicked broke the gate: the phase stops and the run fails.
        let panicked = || crew.barrier.is_broken().then(|| crate::panics::internal_error(None));
        let problem = crew.client_error.lock().expect("lock").take().or_else(panicked);
        // Every rank starts the phase together: this round is the start barrier.
        if let Some(e) = agree(group, problem, &format!("the start of phase '{}'", phase.label)) {
            return Err(Status::Failed(e));
        }
        let part = self.measure(phase, seq, crew, done_rx, observer, group);
        self.merge(phase, part, cache, observer, group, results)
    }

    /// Before a measured read phase, every rank drops the cached pages of the files it reads;
    /// rank 0 learns what each could do.
    fn drop_cached(
        &self,
        phase: &Phase,
        existing: &[Vec<u64>],
        group: &mut Group,
    ) -> Result<Option<PhaseCache>, Status> {
        if !phase.reads_data() {
            return Ok(None);
        }
        let owners = (0..self.job.workers)
            .flat_map(|w| [self.base + w, self.shuffle.map_or(self.base + w, |s| s.source(w))])
            .collect();
        let (config, job) = (self.config, self.job);
        let mine = crate::cache::prepare_read(self.storage, config, self.index, job, phase, &owners, existing);
        let parts = group.round(
            serde_json::to_vec(&mine).expect("a cache record serializes"),
            &format!("the invalidation before phase '{}'", phase.label),
            |all| {
                let parts: Vec<PhaseCache> = all.iter().filter_map(|p| serde_json::from_slice(p).ok()).collect();
                serde_json::to_vec(&crate::cache::merge(&parts)).expect("a cache record serializes")
            },
        );
        match parts {
            Ok(merged) => Ok(serde_json::from_slice(&merged).ok()),
            Err(lost) => Err(Status::Failed(lost.message)),
        }
    }

    /// Start the prepared phase, sample it until every thread is done, and pack what this
    /// rank's workers measured.
    fn measure(
        &self,
        phase: &Phase,
        seq: u64,
        crew: &Crew,
        done_rx: &mpsc::Receiver<()>,
        observer: &mut dyn Observer,
        group: &mut Group,
    ) -> RankPart {
        let mut ctl = PhaseControl::new(
            Instant::now(),
            phase.duration,
            phase.ramp,
            self.config.max_errors,
            self.interrupt,
        );
        ctl.fine_series = self.config.fine_series();
        ctl.log_gaps = !phase.prepare;
        let ctl = Arc::new(ctl);
        if let Some(t) = self.timeline {
            t.phase_started(self.index, phase, ctl.start);
        }
        *crew.latencies.lock().expect("lock") = Latencies::new(self.storage.endpoints().len(), phase.classes.len());
        if let Some(cur) = crew.current.lock().expect("lock").as_mut() {
            cur.ctl = Some(ctl.clone());
        }
        observer.phase_started(phase, self.total_workers);
        // Zero the live counters before the phase starts: a worker thread scheduled late
        // would otherwise show the sampler its previous phase's totals, and the series (and
        // the progress rate) would go backwards when it resets them.
        for l in &crew.lives {
            l.ops.store(0, Relaxed);
            l.bytes.store(0, Relaxed);
            l.errors.store(0, Relaxed);
        }
        // Rank 0 watches the server processes: they run on its host. They are looked up again
        // at the start and end, so a daemon restarted during the run is followed.
        let root = group.is_root();
        let watched = || {
            if root {
                self.config.watched_servers()
            } else {
                Vec::new()
            }
        };
        let cpu0 = cpu_sample(&watched());
        crew.barrier.wait();
        let mut link = StonewallLink {
            seq: ((self.index as u64) << 32) | seq,
            told: false,
            heard: false,
        };
        let mut progress = ProgressLink::new(link.seq, group.size());
        let others = std::cell::Cell::new((0, 0, 0));
        let poll_every = if group.size() > 1 { STONEWALL_POLL } else { TICK };
        let sampling = Sampling {
            lives: &crew.lives,
            threads: self.threads,
            done_rx,
            stable: phase.stable,
            poll_every,
            others: &others,
        };
        let stable_at = sample(&ctl, &sampling, observer, &mut |ctl| {
            if crew.barrier.is_broken() {
                ctl.halt();
            }
            link.poll(group, ctl);
            others.set(progress.exchange(group, live_totals(&crew.lives)));
            group.relay_interrupt();
        });
        crew.barrier.wait();
        let cpu1 = cpu_sample(&watched());
        let (workers, series) = std::mem::take(&mut *crew.collected.lock().expect("lock"));
        let latencies = std::mem::take(&mut *crew.latencies.lock().expect("lock"));
        rank_part(
            group.rank(),
            self.threads,
            &ctl,
            workers,
            &latencies,
            &series,
            &self.storage.endpoints(),
            stable_at,
            &cpu0,
            &cpu1,
            &|t| group.clock(t),
        )
    }

    /// The ranks merge their parts up the tree (cluster/tree.rs): each adds its children's
    /// subtotals to its own part and sends the sum to its parent; rank 0 turns the sum into the
    /// phase's result and tells every rank whether the job goes on. A rank that is lost or
    /// garbled ends the run with what arrived.
    fn merge(
        &self,
        phase: &Phase,
        part: RankPart,
        cache: Option<PhaseCache>,
        observer: &mut dyn Observer,
        group: &mut Group,
        results: &mut Vec<PhaseResult>,
    ) -> Result<PhaseEnd, Status> {
        let (job, ranks, me) = (self.job, group.size(), group.rank());
        let members = group.members().to_vec();
        let tree = Tree::new(ranks);
        let what = format!("phase '{}'", phase.label);
        let mut merged = None;
        let mut clock = GatherClock::start();
        let round = group.reduce(&what, |children| {
            clock.arrived(&children);
            let mut merger = Merger::default();
            merger.add_part(part, &members);
            add_children(&mut merger, children, &members, me, tree, &what);
            if me != 0 {
                return serde_json::to_vec(&merger.subtotal()).expect("a subtotal serializes");
            }
            // A part that cannot be read ends the run for every rank, with what the others
            // measured.
            let bad = merger.unreadable.first().cloned();
            let threshold = stall_threshold(self.config.stall_threshold, phase.rate);
            let mut result = combine(phase, job, &mut merger, ranks, &members, self.run_start, threshold);
            let parts: Vec<&RankPart> = merger.ranks.iter().map(|l| &l.part).collect();
            let rereads = Rereads::sum(parts.iter().map(|p| &p.rereads));
            result.cache = cache.clone().map(|c| crate::cache::with_rereads(c, rereads));
            result.validity = marks(&result, self.caps);
            let end = match bad {
                None => phase_end(&parts, &result, phase, self.config, self.total_workers, &self.run_path),
                Some(e) => PhaseEnd::failed(e),
            };
            let reply = serde_json::to_vec(&end).expect("a phase end serializes");
            clock.merged(parts.iter().map(|p| p.start_s), reply.len(), tree);
            merged = (!parts.is_empty()).then_some(result);
            reply
        });
        // Stonewall notices that crossed the end of the phase.
        for r in 0..ranks {
            if r != group.rank() && (group.is_root() || r == 0) {
                group.drain(r, TAG_STONEWALL);
            }
        }
        let end = match round.map(|reply| group.decode::<PhaseEnd>(0, &format!("the end of {what}"), &reply)) {
            Ok(Ok(end)) => end,
            Ok(Err(e)) => {
                // Rank 0 cannot be understood: this rank leaves the group.
                group.break_off();
                return Err(Status::Failed(e.to_string()));
            }
            Err(lost) => {
                // Rank 0 keeps what the ranks that arrived measured.
                if let Some(result) = merged {
                    observer.phase_finished(&result);
                    results.push(result);
                }
                return Err(Status::Failed(lost.message));
            }
        };
        if let Some(mut result) = merged {
            if ranks > 1 {
                result.gather = clock.finish();
            }
            observer.phase_finished(&result);
            results.push(result);
        }
        Ok(end)
    }
}

/// Add the subtotals rank `me`'s tree children sent; one that cannot be read, or that holds
/// a rank not below its sender, is named in `merger.unreadable` and left out.
fn add_children(
    merger: &mut Merger,
    children: Vec<(usize, Vec<u8>)>,
    members: &[Member],
    me: usize,
    tree: Tree,
    what: &str,
) {
    for (c, bytes) in children {
        match decode::<Subtotal>(members, me, c, &format!("its merged part of {what}"), &bytes) {
            Ok(sub) if sub.ranks.iter().all(|l| tree.is_below(l.part.rank, c)) => merger.add_subtotal(sub),
            Ok(_) => merger.unreadable.push(format!(
                "rank {c} sent a merged part of {what} with ranks that are not below it"
            )),
            Err(e) => merger.unreadable.push(e.to_string()),
        }
    }
}

/// The gap that counts as a stall in a phase. A paced phase completes an operation every
/// 1/rate seconds by design, so there it is also at least two of those intervals: a gap that
/// long means operations were due and none completed.
fn stall_threshold(given: Duration, rate: Option<f64>) -> f64 {
    let paced = rate.filter(|r| *r > 0.0).map_or(0.0, |r| 2.0 / r);
    given.as_secs_f64().max(paced)
}

/// Dropped while its thread unwinds from a panic: breaks the gate so no thread waits for this
/// one, stops the running phase, and (on a worker thread) counts as the thread's end of phase.
struct ReleaseOnPanic<'a> {
    gate: &'a Gate,
    current: &'a Mutex<Option<Current>>,
    done: Option<mpsc::Sender<()>>,
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
        if let Some(done) = &self.done {
            let _ = done.send(());
        }
    }
}

/// Whose data the workers of a rank read with --shuffle: local worker `w` reads global worker
/// `base + (w + shift) % workers`.
#[derive(Clone, Copy)]
struct Shuffle {
    base: usize,
    shift: usize,
    workers: usize,
}

/// The phase every worker thread runs now.
#[derive(Clone)]
struct Current {
    phase: Phase,
    /// The phase's clock and stop rules: set when it starts, after the workers prepared it.
    ctl: Option<std::sync::Arc<PhaseControl>>,
    /// With --shuffle in a read phase: whose data is read.
    shuffle: Option<Shuffle>,
    /// Files per set of every global worker after the previous phase.
    existing: std::sync::Arc<Vec<Vec<u64>>>,
    /// The engine the previous phase's probe picked for every worker (`ioengine auto`).
    ioengine: Option<IoEngine>,
}

impl Shuffle {
    /// The global worker whose data local worker `w` reads.
    fn source(&self, w: usize) -> usize {
        self.base + (w + self.shift) % self.workers
    }
}

impl Current {
    /// Whose data local worker `w` reads, and how many files that worker has.
    fn source_of(&self, w: usize) -> Option<(usize, Vec<u64>)> {
        let src = self.shuffle?.source(w);
        Some((src, self.existing.get(src).cloned().unwrap_or_default()))
    }
}

/// Rank 0's verdict after a phase: stop or go on, and who has which files.
fn phase_end(
    parts: &[&RankPart],
    result: &PhaseResult,
    phase: &Phase,
    config: &RunConfig,
    workers: usize,
    run_path: &str,
) -> PhaseEnd {
    let mut existing = vec![Vec::new(); workers];
    for p in parts {
        for (w, e) in &p.existing {
            if let Some(slot) = existing.get_mut(*w) {
                *slot = e.clone();
            }
        }
    }
    let stop = if parts.iter().any(|p| p.interrupted) {
        Some(("interrupted".to_string(), String::new()))
    } else if parts.iter().any(|p| p.aborted) {
        let why = match crate::stats::top_error(&result.errors) {
            Some((kind, n, msg)) => format!("{n} x {kind}: {msg}"),
            None => "errors".into(),
        };
        Some((
            "aborted".to_string(),
            format!(
                "stopped after {} errors (max_errors) in phase '{}', most often {why}",
                config.max_errors, phase.label
            ),
        ))
    } else if phase.prepare && result.errors.total > 0 {
        // Reads of a half-made layout would only measure the errors it left behind.
        Some(("failed".to_string(), prepare_failure(result, phase, run_path)))
    } else {
        None
    };
    // Every rank's workers run the engine rank 0 named in the merged probe phase.
    let ioengine = result
        .params
        .get("ioengine_probe")
        .and_then(|_| result.params.get("ioengine"))
        .and_then(|e| serde_json::from_value(e.clone()).ok());
    PhaseEnd {
        stop,
        existing,
        ioengine,
    }
}

/// Why a phase's figures are weak: the general rules, and on network backends latencies at
/// the delayed-ACK timeout.
fn marks(result: &PhaseResult, caps: Capabilities) -> Vec<String> {
    let mut reasons = validity_reasons(result);
    if caps.drive != Drive::Blocking {
        let hist = dfsbench_result::histogram::deserialize(&result.latency.histogram).ok();
        reasons.extend(hist.as_ref().and_then(crate::stats::delayed_ack_signature));
    }
    reasons
}

/// Why a preparation step stops the job: its most frequent error, with the file it hit.
fn prepare_failure(result: &PhaseResult, phase: &Phase, run_path: &str) -> String {
    let (kind, n, message) = crate::stats::top_error(&result.errors).unwrap_or(("error", result.errors.total, ""));
    let path = result
        .errors
        .samples
        .iter()
        .find(|s| s.kind == kind)
        .map_or(String::new(), |s| format!(" on {run_path}/{}", s.path));
    format!(
        "the unmeasured step '{}' of job '{}' failed ({n} x {kind}{path}: {message}), so the job's measured phases did not run",
        phase.label, result.job_name
    )
}

/// What the sampler of a phase watches.
struct Sampling<'a> {
    lives: &'a [Live],
    threads: usize,
    done_rx: &'a mpsc::Receiver<()>,
    stable: Option<Stable>,
    poll_every: Duration,
    /// The other ranks' latest totals, which rank 0's progress line adds to its own.
    others: &'a std::cell::Cell<Totals>,
}

/// The running (ops, bytes, errors) of this rank's workers.
fn live_totals(lives: &[Live]) -> Totals {
    lives.iter().fold((0, 0, 0), |(o, b, e), l| {
        (
            o + l.ops.load(Relaxed),
            b + l.bytes.load(Relaxed),
            e + l.errors.load(Relaxed),
        )
    })
}

/// Watch a running phase until every thread reports done: the progress line, stonewall
/// notices and, with a steady-state rule, when throughput became steady (seconds after the phase
/// started), which also ends the phase. The per-interval series is not sampled here: workers
/// count each operation in the interval it completed in.
fn sample(
    ctl: &PhaseControl,
    s: &Sampling<'_>,
    observer: &mut dyn Observer,
    poll: &mut dyn FnMut(&PhaseControl),
) -> Option<f64> {
    let Sampling {
        lives,
        threads,
        done_rx,
        stable,
        poll_every,
        others,
    } = *s;
    let totals = || live_totals(lives);
    // Operations per interval for the steady-state rule, scaled to the time that really passed
    // between two looks, so a late wake-up does not read as a burst.
    let mut rates: Vec<u64> = Vec::new();
    let mut last = (ctl.start, 0u64);
    let mut done = 0;
    let mut stable_at = None;
    let mut next_tick = ctl.start + TICK;
    let mut next_sample = ctl.start + SERIES_INTERVAL;
    while done < threads {
        let wait = next_tick.saturating_duration_since(Instant::now()).min(poll_every);
        match done_rx.recv_timeout(wait) {
            Ok(()) => done += 1,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        poll(ctl);
        let now = Instant::now();
        if now >= next_tick {
            let ((o, b, e), (ro, rb, re)) = (totals(), others.get());
            observer.tick(now - ctl.start, o + ro, b + rb, e + re);
            next_tick = now + TICK;
        }
        let Some(rule) = stable.filter(|_| stable_at.is_none() && now >= next_sample) else {
            continue;
        };
        let ops = totals().0;
        let elapsed = now.saturating_duration_since(last.0).as_secs_f64();
        rates.push((ops.saturating_sub(last.1) as f64 * SERIES_INTERVAL.as_secs_f64() / elapsed).round() as u64);
        last = (now, ops);
        next_sample = now + SERIES_INTERVAL;
        // Samples of the ramp-up do not count towards a steady state.
        let ramp = ctl.ramp_end.map_or(0, |r| {
            r.saturating_duration_since(ctl.start)
                .as_secs_f64()
                .div_euclid(SERIES_INTERVAL.as_secs_f64()) as usize
                + 1
        });
        if rates.len() > ramp && rule.holds(&rates[ramp..], SERIES_INTERVAL) {
            stable_at = Some(secs(now - ctl.start));
            ctl.stop_steady();
        }
    }
    // A rank tells the others its stonewall before it reports the phase.
    poll(ctl);
    stable_at
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{validate, JobSpec, RunSpec};
    use crate::workloads::Workload;
    use proptest::prelude::*;

    #[test]
    fn progress_totals_of_this_phase_only() {
        let link = ProgressLink::new(7, 3);
        let m = link.encode((10, 4096, 1));
        assert_eq!(link.decode(&m), Some((10, 4096, 1)));
        assert_eq!(ProgressLink::new(8, 3).decode(&m), None, "another phase's totals");
        assert_eq!(link.decode(&m[..24]), None, "too short");
        assert_eq!(link.decode(&[m.clone(), vec![0]].concat()), None, "too long");
        let mut solo = ProgressLink::new(7, 1);
        assert_eq!(solo.exchange(&mut Group::solo(), (5, 5, 5)), (0, 0, 0), "no others");
    }

    fn members(n: usize) -> Vec<Member> {
        (0..n)
            .map(|rank| Member {
                rank,
                host: "h".into(),
                pid: 1,
                version: crate::cluster::VERSION.into(),
            })
            .collect()
    }

    #[test]
    fn paced_phases_count_only_gaps_of_two_intervals_as_stalls() {
        let one = Duration::from_secs(1);
        assert_eq!(stall_threshold(one, None), 1.0);
        assert_eq!(stall_threshold(one, Some(100.0)), 1.0);
        assert_eq!(stall_threshold(one, Some(0.5)), 4.0);
    }

    #[test]
    fn a_garbled_subtotal_is_named_and_the_others_are_kept() {
        let tree = Tree { size: 4, fanout: 3 };
        let good = |rank: usize| {
            let mut m = Merger::default();
            m.add_part(
                RankPart {
                    rank,
                    ..RankPart::default()
                },
                &members(4),
            );
            serde_json::to_vec(&m.subtotal()).unwrap()
        };
        let children = vec![(1, b"\x00\x01garbage".to_vec()), (2, good(2)), (3, good(1))];
        let mut merger = Merger::default();
        add_children(&mut merger, children, &members(4), 0, tree, "phase 'write'");
        assert_eq!(merger.ranks.iter().map(|l| l.part.rank).collect::<Vec<_>>(), [2]);
        let bad = &merger.unreadable;
        assert_eq!(bad.len(), 2, "{bad:?}");
        assert!(
            bad[0].starts_with("rank 1 (dfsbench ")
                && bad[0].contains("sent its merged part of phase 'write' that rank 0"),
            "{bad:?}"
        );
        assert_eq!(
            bad[1],
            "rank 3 sent a merged part of phase 'write' with ranks that are not below it"
        );
    }

    #[test]
    fn a_phase_end_that_is_not_one_is_an_error_not_a_panic() {
        let g = Group::solo();
        for garbage in [&b""[..], b"null", b"{\"stop\":7}", b"\xff"] {
            assert!(g.decode::<PhaseEnd>(0, "the end of phase 'x'", garbage).is_err());
        }
        assert!(g
            .decode::<PhaseEnd>(0, "x", br#"{"stop":null,"existing":[[1,2]]}"#)
            .is_ok());
    }

    proptest! {
        /// Random bytes as subtotals from three children: errors, never a panic.
        #[test]
        fn random_subtotals_never_panic(all in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..64), 3)) {
            let mut merger = Merger::default();
            add_children(&mut merger, all.into_iter().enumerate().map(|(i, b)| (i + 1, b)).collect(), &members(4), 0, Tree { size: 4, fanout: 3 }, "phase 'p'");
            prop_assert!(merger.ranks.len() + merger.unreadable.len() <= 3);
        }
    }

    /// A job that panics in a worker thread: block size 0, which validation never lets through,
    /// divides by zero when the workers lay out their files.
    fn panicking_config(workers: usize) -> RunConfig {
        let mut job = JobSpec::new("io", "io");
        job.settings.workers = Some(workers);
        job.workloads.io.size = Some("64k".into());
        let mut config = validate(&RunSpec::default(), &[job]).unwrap();
        let Workload::Io(io) = &mut config.jobs[0].workload else {
            unreachable!("an io job")
        };
        io.bs = 0;
        config
    }

    #[test]
    fn a_panicking_worker_fails_the_run_instead_of_hanging() {
        static INTERRUPT: AtomicBool = AtomicBool::new(false);
        for workers in [1, 3] {
            let (tx, rx) = mpsc::channel();
            std::thread::spawn(move || {
                let storage = dfsbench_backends::mem::MemStorage::new("mem://", "dfsbench-test");
                let config = panicking_config(workers);
                let clock = RunClock {
                    run_tag: 1,
                    interrupt: &INTERRUPT,
                    origin: Instant::now(),
                    timeline: None,
                };
                let (_, status) = run(&storage, &config, &clock, &mut Quiet, &mut Group::solo());
                let _ = tx.send(status);
            });
            // Generous for a loaded machine: the run itself takes milliseconds; a hang never ends.
            let status = rx
                .recv_timeout(Duration::from_secs(120))
                .expect("the run ended after its worker panicked");
            let Status::Failed(message) = status else {
                panic!("{workers} workers: expected a failed run, got {status:?}")
            };
            assert!(message.starts_with("internal error: "), "{message}");
            assert!(message.contains("please report"), "{message}");
            assert!(!message.contains('\n'), "{message}");
        }
    }
}
