//! Runs the phases of every job on worker threads and merges what they measured.
//!
//! Each job gets its own OS threads (as many as the backend needs), each thread a
//! current-thread executor carrying some of the workers. The main thread releases every phase
//! with a barrier, samples the workers' live counters for the per-second series and the
//! progress line, and merges the workers' histograms and counters exactly when the phase ends.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::mpsc;
use std::sync::{Barrier, Mutex};
use std::time::Duration;

use futures_util::future::join_all;

use dfsbench_backends::clock::Instant;
use dfsbench_backends::{Capabilities, Capability, Client, Drive, Storage};

use crate::config::{Job, MetaPhase, RunConfig, Workload};
use crate::host::cpu_times;
use crate::load::Stable;
use crate::plan::{phases, Phase};
use crate::result::{Cpu, OpKind, PhaseResult, RateResult, Series, Steady, Stonewall, Verify, WorkerSummary};
use crate::stats::{latency, merge_errors, merge_histograms, Live, PhaseControl, WorkerPhase};
use crate::worker::{JobContext, Worker};
use crate::workloads::{files_dir, io_dir, iterate_setup_dirs, meta_setup_dirs, mix_dir};

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
}

/// An observer that shows nothing.
pub struct Quiet;
impl Observer for Quiet {}

const TICK: Duration = Duration::from_millis(100);
const SERIES_INTERVAL: Duration = Duration::from_secs(1);

/// What a job needs from a backend.
fn needs(job: &Job) -> Vec<Capability> {
    let mut needs = Vec::new();
    match &job.workload {
        Workload::Meta(m) => {
            if m.phases
                .iter()
                .any(|p| matches!(p, MetaPhase::Mkdir | MetaPhase::Rmdir))
            {
                needs.push(Capability::Directories);
            }
            if m.phases.contains(&MetaPhase::Rename) {
                needs.push(Capability::Rename);
            }
        }
        Workload::Files(crate::config::FilesJob { direct, fsync, .. })
        | Workload::Mix(crate::config::MixJob { direct, fsync, .. })
        | Workload::Iterate(crate::config::IterateJob { direct, fsync, .. }) => {
            if *direct {
                needs.push(Capability::DirectIo);
            }
            if *fsync {
                needs.push(Capability::Fsync);
            }
        }
        Workload::Io(io) => {
            needs.push(Capability::RangedRead);
            if io.rw.writes() {
                needs.push(Capability::PositionalWrite);
            }
            if io.direct {
                needs.push(Capability::DirectIo);
            }
            if io.fsync {
                needs.push(Capability::Fsync);
            }
        }
    }
    needs
}

/// Fit defaulted choices to the backend (a meta job that did not name its phases skips rename
/// where there is none) and check that it can do what the jobs ask, before anything runs.
/// Returns notes on what was skipped.
pub fn fit_to_backend(config: &mut RunConfig, caps: Capabilities, backend: &str) -> Result<Vec<String>, String> {
    let mut notes = Vec::new();
    for job in &mut config.jobs {
        if let Workload::Meta(m) = &mut job.workload {
            if !m.explicit_phases && !caps.rename && m.phases.contains(&MetaPhase::Rename) {
                m.phases.retain(|p| *p != MetaPhase::Rename);
                notes.push(format!(
                    "job '{}': the {backend} backend has no rename: skipping the rename phase",
                    job.name
                ));
            }
        }
        if let Some(missing) = caps.missing(&needs(job)) {
            return Err(format!(
                "job '{}' needs {} but the {backend} backend does not support it: change the job or the target",
                job.name,
                missing.name()
            ));
        }
        if caps.drive == Drive::Blocking {
            if let Some(t) = job.threads.filter(|&t| t != job.workers) {
                return Err(format!(
                    "job '{}': the {backend} backend blocks a thread per operation, so threads ({t}) must equal workers ({}): leave --threads out",
                    job.name, job.workers
                ));
            }
        }
    }
    Ok(notes)
}

/// Run every job of `config` on `storage`. Phases finished before an interruption, an abort or
/// a failure are returned with the status.
pub fn run<S: Storage>(
    storage: &S,
    config: &RunConfig,
    run_tag: u32,
    interrupt: &'static AtomicBool,
    observer: &mut dyn Observer,
) -> (Vec<PhaseResult>, Status) {
    let run_start = Instant::now();
    let mut results = Vec::new();
    for (index, job) in config.jobs.iter().enumerate() {
        let status = run_job(
            storage,
            config,
            index,
            job,
            run_tag,
            interrupt,
            run_start,
            observer,
            &mut results,
        );
        if status != Status::Complete {
            return (results, status);
        }
    }
    (results, Status::Complete)
}

/// Where a thread runs its workers' futures: a runtime of its own for blocking backends (which
/// finish every call on the calling thread) and for HTTP clients (whose connections then live on
/// the thread that uses them); the backends' shared runtime for clients whose background tasks
/// must keep running between phases.
pub(crate) enum Executor {
    Local(tokio::runtime::Runtime),
    Shared,
}

impl Executor {
    pub(crate) fn for_backend(caps: Capabilities) -> Executor {
        match caps.drive {
            Drive::Blocking | Drive::PerThread => Executor::Local(
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("a current-thread runtime"),
            ),
            Drive::Shared => Executor::Shared,
        }
    }

    pub(crate) fn block_on<F: std::future::Future>(&self, f: F) -> F::Output {
        match self {
            Executor::Local(rt) => rt.block_on(f),
            Executor::Shared => dfsbench_backends::runtime::shared().block_on(f),
        }
    }
}

/// Directories a job needs before its first phase, made on the main thread, unmeasured.
fn setup_dirs(index: usize, job: &Job) -> Vec<String> {
    match &job.workload {
        Workload::Meta(m) => meta_setup_dirs(index, m, job.workers),
        Workload::Files(_) => {
            let base = files_dir(index);
            std::iter::once(base.clone())
                .chain((0..job.workers).map(|w| format!("{base}/w{w}")))
                .collect()
        }
        Workload::Io(_) => vec![io_dir(index)],
        Workload::Mix(_) => {
            let base = mix_dir(index);
            std::iter::once(base.clone())
                .chain((0..job.workers).map(|w| format!("{base}/w{w}")))
                .collect()
        }
        Workload::Iterate(it) => iterate_setup_dirs(index, it, job.workers),
    }
}

/// One job's directories hold many files; the mem and posix backends need them made, object
/// stores (later) ignore them.
fn setup<S: Storage>(storage: &S, index: usize, job: &Job) -> Result<(), String> {
    let dirs = setup_dirs(index, job);
    if !storage.capabilities().directories {
        // Object stores have no directories: prefixes exist as soon as objects do.
        return Ok(());
    }
    let mut client = storage.client(1).map_err(|e| format!("cannot open a client: {e}"))?;
    Executor::for_backend(storage.capabilities()).block_on(async {
        for d in &dirs {
            client
                .mkdir(d)
                .await
                .map_err(|e| format!("cannot create directory {d} in the run directory: {e}"))?;
        }
        Ok(())
    })
}

#[allow(clippy::too_many_arguments)]
fn run_job<S: Storage>(
    storage: &S,
    config: &RunConfig,
    index: usize,
    job: &Job,
    run_tag: u32,
    interrupt: &'static AtomicBool,
    run_start: Instant,
    observer: &mut dyn Observer,
    results: &mut Vec<PhaseResult>,
) -> Status {
    if let Err(e) = setup(storage, index, job) {
        return Status::Failed(e);
    }
    let caps = storage.capabilities();
    let threads = if caps.drive == Drive::Blocking {
        job.workers
    } else {
        job.threads.unwrap_or_else(|| {
            job.workers
                .min(std::thread::available_parallelism().map_or(1, |n| n.get()))
        })
    };
    let ctx = JobContext {
        config,
        job,
        job_index: index,
    };
    let queue_depth = match &job.workload {
        Workload::Io(io) => io.iodepth,
        _ => 1,
    };
    let lives: Vec<Live> = (0..job.workers).map(|_| Live::default()).collect();
    let barrier = Barrier::new(threads + 1);
    let current: Mutex<Option<(Phase, std::sync::Arc<PhaseControl>)>> = Mutex::new(None);
    let collected: Mutex<Vec<WorkerPhase>> = Mutex::new(Vec::new());
    let client_error: Mutex<Option<String>> = Mutex::new(None);
    let (done_tx, done_rx) = mpsc::channel::<()>();

    std::thread::scope(|scope| {
        for t in 0..threads {
            let (ctx, lives, barrier, current, collected, client_error) =
                (&ctx, &lives, &barrier, &current, &collected, &client_error);
            let done_tx = done_tx.clone();
            let ids: Vec<usize> = (t..job.workers).step_by(threads).collect();
            std::thread::Builder::new()
                .name(format!("dfsbench-w{t}"))
                .spawn_scoped(scope, move || {
                    let rt = Executor::for_backend(storage.capabilities());
                    let mut workers = Vec::with_capacity(ids.len());
                    for &id in &ids {
                        match storage.client(queue_depth) {
                            Ok(c) => {
                                let mut w = Worker::new(id, c, ctx, run_tag);
                                w.alone = ids.len() == 1;
                                workers.push(w);
                            }
                            Err(e) => *client_error.lock().expect("lock") = Some(format!("cannot open a client: {e}")),
                        }
                    }
                    loop {
                        barrier.wait();
                        let Some((phase, ctl)) = current.lock().expect("lock").clone() else {
                            break;
                        };
                        let out = rt.block_on(join_all(
                            workers.iter_mut().map(|w| w.run_phase(ctx, &phase, &ctl, &lives[w.id])),
                        ));
                        collected.lock().expect("lock").extend(out);
                        let _ = done_tx.send(());
                        barrier.wait();
                    }
                })
                .expect("spawning a worker thread");
        }
        drop(done_tx);

        let mut status = Status::Complete;
        for phase in phases(index, job) {
            if let Some(e) = client_error.lock().expect("lock").take() {
                status = Status::Failed(e);
                break;
            }
            let start = Instant::now();
            let ctl = std::sync::Arc::new(PhaseControl::new(
                start,
                phase.duration,
                phase.ramp,
                config.max_errors,
                interrupt,
            ));
            *current.lock().expect("lock") = Some((phase.clone(), ctl.clone()));
            observer.phase_started(&phase, job.workers);
            // Zero the live counters before the phase starts: a worker thread scheduled late
            // would otherwise show the sampler its previous phase's totals, and the series (and
            // the progress rate) would go backwards when it resets them.
            for l in &lives {
                l.ops.store(0, Relaxed);
                l.bytes.store(0, Relaxed);
                l.errors.store(0, Relaxed);
            }
            let cpu0 = cpu_times();
            barrier.wait();
            let (series, stable_at) = sample(&ctl, &lives, threads, &done_rx, phase.stable, observer);
            barrier.wait();
            let cpu1 = cpu_times();
            let workers = std::mem::take(&mut *collected.lock().expect("lock"));
            let mut result = merge(&phase, job, threads, &ctl, run_start, workers, series, cpu0, cpu1);
            result.steady = phase.stable.map(|s| Steady {
                band: s.band,
                window_s: s.window.as_secs_f64(),
                stable: stable_at.is_some(),
                stable_at_s: stable_at,
            });
            observer.phase_finished(&result);
            let errors = result.errors.clone();
            results.push(result);
            if ctl.interrupted() {
                status = Status::Interrupted;
                break;
            }
            if ctl.aborted() {
                let why = match crate::stats::top_error(&errors) {
                    Some((kind, n, msg)) => format!("{n} x {kind}: {msg}"),
                    None => "errors".into(),
                };
                status = Status::Aborted(format!(
                    "stopped after {} errors (max_errors) in phase '{}', most often {why}",
                    config.max_errors, phase.label
                ));
                break;
            }
        }
        *current.lock().expect("lock") = None;
        barrier.wait();
        status
    })
}

/// Watch a running phase until every thread reports done; returns the per-second series and,
/// with a steady-state rule, when throughput became steady (seconds after the phase started),
/// which also ends the phase.
fn sample(
    ctl: &PhaseControl,
    lives: &[Live],
    threads: usize,
    done_rx: &mpsc::Receiver<()>,
    stable: Option<Stable>,
    observer: &mut dyn Observer,
) -> (Series, Option<f64>) {
    let totals = || {
        lives.iter().fold((0, 0, 0), |(o, b, e), l| {
            (
                o + l.ops.load(Relaxed),
                b + l.bytes.load(Relaxed),
                e + l.errors.load(Relaxed),
            )
        })
    };
    let mut series = Series {
        interval_s: SERIES_INTERVAL.as_secs_f64(),
        ..Series::default()
    };
    let mut last = (0u64, 0u64, 0u64);
    let push = |series: &mut Series, last: &mut (u64, u64, u64), now: (u64, u64, u64)| {
        series.ops.push(now.0 - last.0);
        series.bytes.push(now.1 - last.1);
        series.errors.push(now.2 - last.2);
        *last = now;
    };
    let mut done = 0;
    let mut stable_at = None;
    let mut next_tick = ctl.start + TICK;
    let mut next_sample = ctl.start + SERIES_INTERVAL;
    while done < threads {
        let wait = next_tick.saturating_duration_since(Instant::now());
        match done_rx.recv_timeout(wait) {
            Ok(()) => done += 1,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        let now = Instant::now();
        if now >= next_tick {
            let (o, b, e) = totals();
            observer.tick(now - ctl.start, o, b, e);
            next_tick += TICK;
        }
        if now >= next_sample {
            push(&mut series, &mut last, totals());
            next_sample += SERIES_INTERVAL;
            if let (Some(s), None) = (stable, stable_at) {
                // Samples of the ramp-up do not count towards a steady state.
                let ramp = ctl.ramp_end.map_or(0, |r| {
                    r.saturating_duration_since(ctl.start)
                        .as_secs_f64()
                        .div_euclid(SERIES_INTERVAL.as_secs_f64()) as usize
                        + 1
                });
                if series.ops.len() > ramp && s.holds(&series.ops[ramp..], SERIES_INTERVAL) {
                    stable_at = Some(secs(now - ctl.start));
                    ctl.stop_steady();
                }
            }
        }
    }
    let end = totals();
    if end != last || series.ops.is_empty() {
        push(&mut series, &mut last, end);
    }
    (series, stable_at)
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

fn rate(n: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        n as f64 / seconds
    } else {
        0.0
    }
}

/// Merge the workers' measurements of one phase exactly.
#[allow(clippy::too_many_arguments)]
fn merge(
    phase: &Phase,
    job: &Job,
    threads: usize,
    ctl: &PhaseControl,
    run_start: Instant,
    mut workers: Vec<WorkerPhase>,
    series: Series,
    cpu0: (f64, f64),
    cpu1: (f64, f64),
) -> PhaseResult {
    workers.sort_by_key(|w| w.worker);
    let measured_from = ctl.ramp_end.unwrap_or(ctl.start);
    let last_end = workers.iter().filter_map(|w| w.last_end).max().unwrap_or(measured_from);
    let duration = secs(last_end.saturating_duration_since(measured_from));

    let class_count = phase.classes.len();
    let mut kinds = Vec::new();
    for c in 0..class_count {
        let hist = merge_histograms(workers.iter().map(|w| &w.classes[c].hist));
        let ops: u64 = workers.iter().map(|w| w.classes[c].ops).sum();
        let bytes: u64 = workers.iter().map(|w| w.classes[c].bytes).sum();
        kinds.push((phase.classes[c], hist, ops, bytes));
    }
    let all = merge_histograms(kinds.iter().map(|k| &k.1));
    let ops: u64 = kinds.iter().map(|k| k.2).sum();
    let bytes: u64 = kinds.iter().map(|k| k.3).sum();
    let active: Vec<_> = kinds.iter().filter(|k| k.2 > 0).collect();
    let ops_by_kind = if active.len() > 1 {
        active
            .iter()
            .map(|(name, hist, ops, bytes)| OpKind {
                op: name.to_string(),
                ops: *ops,
                bytes: *bytes,
                ops_per_sec: rate(*ops, duration),
                bytes_per_sec: rate(*bytes, duration),
                latency: latency(hist),
            })
            .collect()
    } else {
        Vec::new()
    };

    // Stonewall, as IOR: from the common start (every worker leaves the same barrier) to the
    // moment the first worker finished, counting what each worker had finished by then.
    let first_done = ctl.first_done_at().unwrap_or(last_end);
    let sw_duration = secs(first_done.saturating_duration_since(measured_from));
    let sw_ops: u64 = workers.iter().map(|w| w.stonewall_ops).sum();
    let sw_bytes: u64 = workers.iter().map(|w| w.stonewall_bytes).sum();

    let ttfb: Vec<&hdrhistogram::Histogram<u64>> = workers.iter().filter_map(|w| w.ttfb.as_ref()).collect();
    let ttfb = (!ttfb.is_empty()).then(|| latency(&merge_histograms(ttfb)));
    let retries = workers.iter().map(|w| w.retries).sum();
    let service: Vec<&hdrhistogram::Histogram<u64>> = workers.iter().filter_map(|w| w.service.as_ref()).collect();
    let rate_result = phase.rate.map(|r| RateResult {
        requested_ops_per_sec: r,
        achieved_ops_per_sec: rate(ops, duration),
        arrival: phase.arrival.name().to_string(),
        service_latency: latency(&merge_histograms(service)),
    });
    let mut params = phase.params.clone();
    if let Some(engine) = workers.iter().find_map(|w| w.engine) {
        params.insert("ioengine".into(), serde_json::json!(engine.name()));
    }
    let mut errors = crate::result::Errors::default();
    let mut items = 0;
    let mut verify = Verify::default();
    let mut detail = Vec::with_capacity(workers.len());
    for w in workers {
        let hist = merge_histograms(w.classes.iter().map(|c| &c.hist));
        let w_ops: u64 = w.classes.iter().map(|c| c.ops).sum();
        let w_bytes: u64 = w.classes.iter().map(|c| c.bytes).sum();
        let w_dur = match (w.first_start, w.last_end) {
            (Some(_), Some(e)) => secs(e.saturating_duration_since(measured_from)),
            _ => 0.0,
        };
        detail.push(WorkerSummary {
            worker: w.worker,
            ops: w_ops,
            bytes: w_bytes,
            errors: w.errors.total,
            duration_s: w_dur,
            ops_per_sec: rate(w_ops, w_dur),
            bytes_per_sec: rate(w_bytes, w_dur),
            p50_ns: if hist.is_empty() {
                0
            } else {
                hist.value_at_quantile(0.5)
            },
            p99_ns: if hist.is_empty() {
                0
            } else {
                hist.value_at_quantile(0.99)
            },
            max_ns: hist.max(),
        });
        items += w.items;
        verify.checked_bytes += w.verified_bytes;
        verify.mismatches += w.mismatches;
        merge_errors(&mut errors, w.errors);
    }
    let cpu_user = cpu1.0 - cpu0.0;
    let cpu_sys = cpu1.1 - cpu0.1;
    let wall = secs(last_end.saturating_duration_since(ctl.start));
    PhaseResult {
        name: phase.name.to_string(),
        label: phase.label.clone(),
        job: phase.job,
        job_name: job.name.clone(),
        workload: job.workload.name().to_string(),
        params,
        prepare: phase.prepare,
        workers: job.workers,
        threads,
        start_s: secs(ctl.start.saturating_duration_since(run_start)),
        duration_s: duration,
        ramp_s: secs(phase.ramp),
        ops,
        bytes,
        items,
        ops_per_sec: rate(ops, duration),
        bytes_per_sec: rate(bytes, duration),
        errors,
        stonewall: Stonewall {
            duration_s: sw_duration,
            ops: sw_ops,
            bytes: sw_bytes,
            ops_per_sec: rate(sw_ops, sw_duration),
            bytes_per_sec: rate(sw_bytes, sw_duration),
        },
        latency: latency(&all),
        ttfb,
        retries,
        ops_by_kind,
        series,
        cpu: Cpu {
            user_s: cpu_user,
            sys_s: cpu_sys,
            cores: if wall > 0.0 { (cpu_user + cpu_sys) / wall } else { 0.0 },
        },
        workers_detail: detail,
        rate: rate_result,
        steady: None,
        verify: (verify.checked_bytes > 0 || verify.mismatches > 0).then_some(verify),
    }
}
