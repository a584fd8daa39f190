//! Runs the phases of every job on worker threads and merges what they measured.
//!
//! Each job gets its own OS threads (as many as the backend needs), each thread a
//! current-thread executor carrying some of the workers. The main thread releases every phase
//! with a barrier, samples the workers' live counters for the per-second series and the
//! progress line, and merges the workers' histograms and counters exactly when the phase ends.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use dfsbench_backends::clock::Instant;
use dfsbench_backends::{Capabilities, Client, Drive, Storage};

use crate::cluster::Group;
use crate::config::RunConfig;
use crate::executor::Executor;
use crate::faults::Timeline;
use crate::gate::Gate;
use crate::host::thread_limit;
use crate::job::Job;
use crate::plan::Phase;
use crate::stats::Live;
use crate::worker::JobContext;
use crate::workloads::TargetAt;
use dfsbench_result::PhaseResult;

mod crew;
mod invalidate;
mod measure;
mod merge;
mod phase;
mod together;
mod turn;

use crew::{Crew, ReleaseOnPanic, Shuffle};

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
    /// A job that cannot bind to what the target holds (train's kept dataset).
    #[error("job '{job}': {why}")]
    Target { job: String, why: String },
    /// A job that cannot run on the block device the target is.
    #[error("job '{job}' cannot run on the device: {why}")]
    Device { job: String, why: String },
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
    config.jobs.retain(|job| {
        let missing = caps.missing(&job.workload.needs()).filter(|_| job.optional);
        if let Some(missing) = missing {
            notes.push(format!(
                "job '{}' left out: it needs {}, which the {backend} backend has not",
                job.name,
                missing.name()
            ));
        }
        missing.is_none()
    });
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

/// Bind every job to what the opened target holds ([`Kind::on_target`](crate::workloads::Kind)).
/// Returns notes for the user.
pub fn bind_to_target(config: &mut RunConfig, at: &TargetAt) -> Result<Vec<String>, FitError> {
    let mut notes = Vec::new();
    for (index, job) in config.jobs.iter_mut().enumerate() {
        match job.workload.on_target(index, at) {
            Ok(note) => notes.extend(note.map(|n| format!("job '{}': {n}", job.name))),
            Err(why) => {
                return Err(FitError::Target {
                    job: job.name.clone(),
                    why,
                })
            }
        }
    }
    Ok(notes)
}

/// Fit every job to a block device of `bytes` as the target (`--overwrite-device`).
pub fn fit_to_device(config: &mut RunConfig, bytes: u64) -> Result<(), FitError> {
    for job in &mut config.jobs {
        job.workload
            .on_device(bytes, job.workers)
            .map_err(|why| FitError::Device {
                job: job.name.clone(),
                why,
            })?;
    }
    Ok(())
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
pub(crate) struct RunClock<'a> {
    /// Written into verified data.
    pub run_tag: u32,
    pub interrupt: &'static AtomicBool,
    /// The run's start: phases' `start_s` and events count from it.
    pub origin: Instant,
    pub timeline: Option<&'a Timeline>,
    /// Takes the results when a phase ended with threads stuck inside the storage, which
    /// cannot be joined; it must end the process. Without it the run waits for them.
    pub abandon: Option<Abandon<'a>>,
}

/// Ends the process with the results so far (see [`RunClock::abandon`]).
pub(crate) type Abandon<'a> = &'a dyn Fn(Vec<PhaseResult>, Status) -> std::convert::Infallible;

/// Run every job of `config` on `storage`, as one rank of `group`: one after another, and
/// the jobs of a group at the same time. Phases finished before an interruption, an abort or
/// a failure are returned with the status; only rank 0 has results.
pub(crate) fn run<S: Storage>(
    storage: &S,
    config: &RunConfig,
    run: &RunClock<'_>,
    observer: &mut dyn Observer,
    group: &mut Group,
) -> (Vec<PhaseResult>, Status) {
    let start = JobStart {
        run_tag: run.run_tag,
        interrupt: run.interrupt,
        run_start: group.clock(run.origin),
        timeline: run.timeline,
        together: None,
        group_end: None,
    };
    group.watch_interrupt(run.interrupt);
    let mut results = Vec::new();
    // Jobs that take their size from a file an earlier job made, when they start.
    let mut sized: Option<RunConfig> = None;
    for stage in config.stages() {
        if stage
            .clone()
            .any(|i| config.jobs[i].workload.sized_by_file(i).is_some())
        {
            let owned = sized.get_or_insert_with(|| config.clone());
            if let Err(e) = sizes_from_files(storage, owned, stage.clone()) {
                return (results, Status::Failed(e));
            }
        }
        let config = sized.as_ref().unwrap_or(config);
        let status = if stage.len() == 1 {
            run_job(
                storage,
                config,
                stage.start,
                &start,
                run.abandon,
                observer,
                group,
                &mut results,
            )
        } else if group.size() > 1 {
            Status::Failed(together::one_process_only(config, stage))
        } else {
            together::run(
                storage,
                config,
                stage,
                &start,
                run.abandon,
                observer,
                group,
                &mut results,
            )
        };
        if status != Status::Complete {
            return (results, status);
        }
    }
    (results, Status::Complete)
}

/// The jobs of `stage` without a size take their file's, as it is when they start (fio sets
/// a job's files up when it starts, taking an existing file's size). Every rank reads it.
fn sizes_from_files<S: Storage>(
    storage: &S,
    config: &mut RunConfig,
    stage: std::ops::Range<usize>,
) -> Result<(), String> {
    let mut client = storage.client(0, 1).map_err(|e| format!("cannot open a client: {e}"))?;
    for i in stage {
        let job = &mut config.jobs[i];
        let Some(path) = job.workload.sized_by_file(i) else {
            continue;
        };
        let stat = Executor::for_backend(storage.capabilities()).block_on(client.stat(&path));
        let bytes = stat.map_err(|e| {
            format!(
                "job '{}' has no size, and its file {path} is not there when it starts ({e}): fio takes an existing file's size; give size",
                job.name
            )
        })?;
        job.workload
            .take_file_size(bytes, job.workers)
            .map_err(|why| format!("job '{}': {why}", job.name))?;
    }
    Ok(())
}

/// Why `config` cannot run as several processes: the jobs of a group run at the same time
/// within one process only.
pub fn needs_one_process(config: &RunConfig) -> Option<String> {
    let stage = config.stages().into_iter().find(|s| s.len() > 1)?;
    Some(together::one_process_only(config, stage))
}

/// What a job starts with besides its config: the run's tag, Ctrl-C flag, clock and fault
/// schedule, and the gate its group starts at when it runs beside other jobs.
#[derive(Clone, Copy)]
pub(super) struct JobStart<'a> {
    run_tag: u32,
    interrupt: &'static AtomicBool,
    run_start: f64,
    timeline: Option<&'a Timeline>,
    together: Option<(&'a Gate, &'a AtomicBool)>,
    /// Set once a job of its group ended with exitall: its phases stop.
    group_end: Option<&'a Arc<AtomicBool>>,
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
            match client.mkdir(&d).await {
                // The run's directory of named files, made by an earlier job.
                Err(e) if e.kind == "EEXIST" && d == crate::workloads::RUN_FILES => {}
                other => other.map_err(|e| format!("cannot create directory {d} in the run directory: {e}"))?,
            }
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
    /// The gate the jobs of its group meet at before their first measured phase, and whether
    /// this job came to it.
    together: Option<(&'a Gate, &'a AtomicBool)>,
    /// Set once a job of its group ended with exitall.
    group_end: Option<&'a Arc<AtomicBool>>,
}

#[allow(clippy::too_many_arguments)]
fn run_job<S: Storage>(
    storage: &S,
    config: &RunConfig,
    index: usize,
    start: &JobStart<'_>,
    abandon: Option<Abandon<'_>>,
    observer: &mut dyn Observer,
    group: &mut Group,
    results: &mut Vec<PhaseResult>,
) -> Status {
    let job = &config.jobs[index];
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
        run_tag: start.run_tag,
        interrupt: start.interrupt,
        run_start: start.run_start,
        caps,
        threads: job_threads(job, caps),
        base: group.rank() * job.workers,
        total_workers: job.workers * group.size(),
        shuffle: shuffle_of(config, job, group),
        run_path: storage.info().run_path,
        timeline: start.timeline,
        together: start.together,
        group_end: start.group_end,
    };
    let crew = Crew {
        lives: (0..job.workers).map(|_| Live::default()).collect(),
        barrier: Gate::new(run.threads + 1),
        current: Mutex::new(None),
        collected: Mutex::new((Vec::new(), Vec::new())),
        latencies: Mutex::default(),
        client_error: Mutex::new(None),
        stuck: AtomicBool::new(false),
    };
    let ctx = job_context(config, (index, job), run.total_workers, caps.page_cache);
    let (done_tx, done_rx) = mpsc::channel::<usize>();
    std::thread::scope(|scope| {
        // A panic on this thread must release the workers, or the scope would wait for them.
        let _release = ReleaseOnPanic {
            gate: &crew.barrier,
            current: &crew.current,
            done: None,
        };
        let handles = run.spawn_crew(scope, &ctx, &crew, done_tx);
        let status = run.phases(&crew, &done_rx, observer, group, results);
        if crew.stuck.load(Relaxed) {
            // A thread inside a hung storage call cannot be joined, and the scope would wait
            // for it: the result leaves through the caller's hook, which ends the process.
            if let Some(abandon) = abandon {
                match abandon(std::mem::take(results), status) {}
            }
        }
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

/// What every worker of job `index` reads of the run and the job.
fn job_context(config: &RunConfig, (index, job): (usize, &Job), total_workers: usize, page_cache: bool) -> JobContext {
    let written = job.workload.written();
    let verify = config.verify && job.workload.verifies();
    JobContext {
        job_index: index,
        total_workers,
        page_cache,
        invalidate: config.invalidate,
        verify,
        seed: config.seed,
        duration: job.duration,
        time_based: job.time_based,
        written,
        file_bs: job.workload.file_bs(),
        data: JobContext::shared_data(verify, config.seed, index, &written),
    }
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

#[cfg(test)]
mod tests {
    use super::measure::ProgressLink;
    use super::merge::{add_children, stall_threshold};
    use super::phase::PhaseEnd;
    use super::*;
    use crate::cluster::tree::Tree;
    use crate::cluster::Member;
    use crate::config::{validate, JobSpec, RunSpec};
    use crate::part::{Merger, RankPart};
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
                version: crate::cluster::build().into(),
                clock_rtt_s: None,
            })
            .collect()
    }

    #[test]
    fn an_optional_job_the_backend_cannot_run_is_left_out_with_a_note_and_others_fail() {
        let s3 = dfsbench_backends::BACKENDS
            .iter()
            .find(|b| b.name == "s3")
            .unwrap()
            .capabilities;
        let mut write = JobSpec::new("block", "io");
        write.workloads.io.rw = Some("write".into());
        let jobs = [JobSpec::new("metadata", "meta"), write];
        let mut config = validate(&RunSpec::default(), &jobs).unwrap();
        assert!(matches!(
            fit_to_backend(&mut config.clone(), s3, "s3"),
            Err(FitError::Unsupported { ref job, .. }) if job == "block"
        ));
        config.jobs[1].optional = true;
        let notes = fit_to_backend(&mut config, s3, "s3").unwrap();
        assert_eq!(
            config.jobs.iter().map(|j| j.name.as_str()).collect::<Vec<_>>(),
            ["metadata"]
        );
        assert!(
            notes
                .contains(&"job 'block' left out: it needs positional write, which the s3 backend has not".to_string()),
            "{notes:?}"
        );
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

    /// A job that panics in a worker thread: see [`break_block_size`].
    fn panicking_config(workers: usize) -> RunConfig {
        let mut job = JobSpec::new("io", "io");
        job.settings.workers = Some(workers);
        job.workloads.io.size = Some("64k".into());
        let mut config = validate(&RunSpec::default(), &[job]).unwrap();
        break_block_size(&mut config, 0);
        config
    }

    /// Make io job `index`'s block size 0, which validation never lets through: its workers
    /// divide by zero when they lay out their files.
    pub(super) fn break_block_size(config: &mut RunConfig, index: usize) {
        let Workload::Io(io) = &mut config.jobs[index].workload else {
            unreachable!("an io job")
        };
        io.bs = 0;
    }

    /// Run `config` on mem:// in a thread of its own; its results and status, or a panic when it
    /// did not end within two minutes (generous for a loaded machine: a hang never ends).
    pub(super) fn run_on_mem(config: RunConfig) -> (Vec<PhaseResult>, Status) {
        static INTERRUPT: AtomicBool = AtomicBool::new(false);
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let storage = dfsbench_backends::MemStorage::new("mem://", "dfsbench-test");
            let clock = RunClock {
                run_tag: 1,
                interrupt: &INTERRUPT,
                origin: Instant::now(),
                timeline: None,
                abandon: None,
            };
            let _ = tx.send(run(&storage, &config, &clock, &mut Quiet, &mut Group::solo()));
        });
        rx.recv_timeout(Duration::from_secs(120)).expect("the run ended")
    }

    #[test]
    fn a_panicking_worker_fails_the_run_instead_of_hanging() {
        for workers in [1, 3] {
            let (_, status) = run_on_mem(panicking_config(workers));
            let Status::Failed(message) = status else {
                panic!("{workers} workers: expected a failed run, got {status:?}")
            };
            assert!(message.starts_with("internal error: "), "{message}");
            assert!(message.contains("please report"), "{message}");
            assert!(!message.contains('\n'), "{message}");
        }
    }
}
