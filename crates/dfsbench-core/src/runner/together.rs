//! The jobs of a group at the same time, in one process (fio's jobs between two stonewalls).
//!
//! Each job gets a thread that runs it as a job on its own would run: its own crew, phases,
//! merge, and collective steps (a group of this process alone, on the run's clock). Every job
//! lays out its files, then all meet at one gate and start their measured phases together;
//! the next stage starts when the last of them ends. This thread shows their progress as one
//! line and keeps their results in job order.

use std::convert::Infallible;
use std::ops::Range;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use dfsbench_backends::Storage;
use dfsbench_result::PhaseResult;

use crate::cluster::Group;
use crate::config::RunConfig;
use crate::gate::Gate;
use crate::plan::Phase;

use super::{run_job, Abandon, JobStart, Observer, Status};

/// Why the jobs of `stage` cannot run in a run of several processes.
pub(super) fn one_process_only(config: &RunConfig, stage: Range<usize>) -> String {
    let jobs = &config.jobs[stage];
    let names: Vec<String> = jobs.iter().map(|j| format!("'{}'", j.name)).collect();
    format!(
        "jobs {} run at the same time (group '{}'), which dfsbench does in one process only: run them without --procs, mpirun or srun, or one after another (fio: stonewall)",
        names.join(", "),
        jobs[0].group.as_deref().unwrap_or_default()
    )
}

/// What a job's thread tells this one.
enum Report {
    Started(usize, Box<Phase>, usize),
    Tick(usize, (u64, u64, u64)),
    Finished(usize, Box<PhaseResult>),
    Waiting(String),
    /// The job ended: its results and status, and whether threads of it are stuck inside
    /// the storage (the thread then waits for the process to end).
    Done(usize, Vec<PhaseResult>, Status, bool),
}

/// A job's observer: passes everything on to the group's thread.
struct Relay {
    slot: usize,
    tx: mpsc::Sender<Report>,
}

impl Observer for Relay {
    fn phase_started(&mut self, phase: &Phase, workers: usize) {
        let _ = self
            .tx
            .send(Report::Started(self.slot, Box::new(phase.clone()), workers));
    }
    fn tick(&mut self, _elapsed: Duration, ops: u64, bytes: u64, errors: u64) {
        let _ = self.tx.send(Report::Tick(self.slot, (ops, bytes, errors)));
    }
    fn phase_finished(&mut self, result: &PhaseResult) {
        let _ = self.tx.send(Report::Finished(self.slot, Box::new(result.clone())));
    }
    fn waiting(&mut self, what: &str) {
        let _ = self.tx.send(Report::Waiting(what.to_string()));
    }
}

/// Run the jobs of `stage` at the same time; their results go to `results` in job order.
#[allow(clippy::too_many_arguments)]
pub(super) fn run<S: Storage>(
    storage: &S,
    config: &RunConfig,
    stage: Range<usize>,
    start: &JobStart<'_>,
    abandon: Option<Abandon<'_>>,
    observer: &mut dyn Observer,
    group: &mut Group,
    results: &mut Vec<PhaseResult>,
) -> Status {
    let gate = Gate::new(stage.len());
    // Set when a job with exitall ends (or with exitall_on_error fails): the others stop.
    let ended = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel();
    // Each job's results, in job order.
    let mut outcomes: Vec<Vec<PhaseResult>> = vec![Vec::new(); stage.len()];
    let mut first_stop = None;
    std::thread::scope(|scope| {
        let mut running = 0;
        for (slot, index) in stage.clone().enumerate() {
            let (tx, gate, alone, ended) = (tx.clone(), &gate, group.alone(), &ended);
            let hang_on = abandon.is_some();
            let spawned = std::thread::Builder::new()
                .name(format!("dfsbench-job{index}"))
                .spawn_scoped(scope, move || {
                    let mut alone = alone();
                    let arrived = AtomicBool::new(false);
                    let start = JobStart {
                        together: Some((gate, &arrived)),
                        group_end: Some(ended),
                        ..*start
                    };
                    // Threads stuck in the storage cannot be joined: the job hands its results
                    // over and waits here for the process to end (see `RunClock::abandon`).
                    let hand_over = |results: Vec<PhaseResult>, status: Status| -> Infallible {
                        let _ = tx.send(Report::Done(slot, results, status, true));
                        // Stuck before the group started, it must not hold the others.
                        gate.break_open();
                        loop {
                            std::thread::park();
                        }
                    };
                    let abandon: Option<Abandon<'_>> = if hang_on { Some(&hand_over) } else { None };
                    let mut relay = Relay { slot, tx: tx.clone() };
                    let mut mine = Vec::new();
                    let status = catch_unwind(AssertUnwindSafe(|| {
                        run_job(
                            storage, config, index, &start, abandon, &mut relay, &mut alone, &mut mine,
                        )
                    }))
                    .unwrap_or_else(|p| Status::Failed(crate::panics::internal_error(Some(p.as_ref()))));
                    let complete = status == Status::Complete;
                    let job = &config.jobs[index];
                    if (complete && job.exitall) || (!complete && job.exitall_on_error) {
                        ended.store(true, Relaxed);
                    }
                    // Told before the gate breaks, so that the first stop reported is the cause.
                    let _ = tx.send(Report::Done(slot, mine, status, false));
                    if !complete {
                        gate.break_open();
                    } else if !arrived.load(Relaxed) {
                        // A job with nothing to measure still lets the others start.
                        gate.wait();
                    }
                });
            match spawned {
                Ok(_) => running += 1,
                Err(e) => {
                    gate.break_open();
                    let why = format!("cannot start a thread for job '{}': {e}", config.jobs[index].name);
                    first_stop.get_or_insert(Status::Failed(why));
                }
            }
        }
        drop(tx);
        let mut shown = Shown::new(config, stage.clone());
        let mut stuck = false;
        while running > 0 {
            let Ok(report) = rx.recv() else { break };
            match report {
                Report::Done(slot, mine, status, hung) => {
                    running -= 1;
                    stuck |= hung;
                    if status != Status::Complete {
                        first_stop.get_or_insert(status.clone());
                    }
                    shown.ended(slot, observer);
                    outcomes[slot] = mine;
                }
                report => shown.show(report, observer),
            }
        }
        for mine in &mut outcomes {
            results.append(mine);
        }
        let status = first_stop.take().unwrap_or(Status::Complete);
        if let (true, Some(abandon)) = (stuck, abandon) {
            match abandon(std::mem::take(results), status) {}
        }
        status
    })
}

/// The progress of the jobs running now, shown as one phase: their labels joined, their
/// workers and running totals added up since the set of phases last changed.
struct Shown {
    names: Vec<String>,
    running: Vec<Option<Running>>,
    since: Instant,
}

struct Running {
    phase: Phase,
    workers: usize,
    /// Totals when the shown phase began, and the latest.
    base: (u64, u64, u64),
    last: (u64, u64, u64),
}

impl Shown {
    fn new(config: &RunConfig, stage: Range<usize>) -> Shown {
        Shown {
            names: config.jobs[stage.clone()].iter().map(|j| j.name.clone()).collect(),
            running: stage.map(|_| None).collect(),
            since: Instant::now(),
        }
    }

    fn show(&mut self, report: Report, observer: &mut dyn Observer) {
        match report {
            Report::Started(slot, phase, workers) => {
                self.running[slot] = Some(Running {
                    phase: *phase,
                    workers,
                    base: (0, 0, 0),
                    last: (0, 0, 0),
                });
                self.announce(observer);
            }
            Report::Tick(slot, totals) => {
                if let Some(r) = self.running[slot].as_mut() {
                    r.last = totals;
                }
                let sum = self.running.iter().flatten().fold((0, 0, 0), |s, r| {
                    (
                        s.0 + r.last.0.saturating_sub(r.base.0),
                        s.1 + r.last.1.saturating_sub(r.base.1),
                        s.2 + r.last.2.saturating_sub(r.base.2),
                    )
                });
                observer.tick(self.since.elapsed(), sum.0, sum.1, sum.2);
            }
            Report::Finished(slot, result) => {
                observer.phase_finished(&result);
                self.ended(slot, observer);
            }
            Report::Waiting(what) => observer.waiting(&what),
            Report::Done(..) => {}
        }
    }

    fn ended(&mut self, slot: usize, observer: &mut dyn Observer) {
        if self.running[slot].take().is_some() {
            self.announce(observer);
        }
    }

    /// Tell the observer that the phases running now are one phase that starts now.
    fn announce(&mut self, observer: &mut dyn Observer) {
        self.since = Instant::now();
        let mut workers = 0;
        let mut labels = Vec::new();
        let mut shown: Option<Phase> = None;
        for (name, r) in self.names.iter().zip(self.running.iter_mut()) {
            let Some(r) = r else { continue };
            r.base = r.last;
            workers += r.workers;
            labels.push(format!("{name}: {}", r.phase.label));
            let p = shown.get_or_insert_with(|| r.phase.clone());
            // The longest of the phases, when all are timed; an unmeasured step only when all are.
            p.duration = p.duration.zip(r.phase.duration).map(|(a, b)| a.max(b));
            p.ramp = p.ramp.max(r.phase.ramp);
            p.prepare &= r.phase.prepare;
            if p.ops_per_worker != r.phase.ops_per_worker {
                p.ops_per_worker = None;
            }
        }
        if let Some(mut p) = shown {
            p.label = labels.join(" + ");
            observer.phase_started(&p, workers);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{break_block_size, run_on_mem};
    use super::*;
    use crate::config::{validate, JobSpec, RunSpec};

    #[test]
    fn a_job_that_fails_ends_its_group_without_a_hang() {
        let job = |name: &str| {
            let mut j = JobSpec::new(name, "io");
            j.settings.group = Some("g".into());
            j.settings.duration = Some("1s".into());
            j.workloads.io.rw = Some("write".into());
            j.workloads.io.size = Some("64k".into());
            j
        };
        let mut config = validate(&RunSpec::default(), &[job("fine"), job("broken")]).unwrap();
        assert_eq!(config.stages().len(), 1, "one stage of two jobs");
        break_block_size(&mut config, 1);
        let (results, status) = run_on_mem(config);
        let Status::Failed(message) = status else {
            panic!("expected a failed run, got {status:?}")
        };
        assert!(message.starts_with("internal error: "), "{message}");
        // The job that ran beside it kept its figures.
        assert!(results.iter().any(|p| p.job_name == "fine" && !p.prepare));
        assert!(!results.iter().any(|p| p.job_name == "broken" && !p.prepare));
    }
}
