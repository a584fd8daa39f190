//! The fault schedule of a run on rank 0: each fault command runs on a thread of its own at
//! its time, the recovery probe after the last one, and every start and end is an event on
//! the run's clock. The workers never wait for any of it.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use dfsbench_backends::clock::Instant;
use dfsbench_result::faults::{Event, FaultRun, Probe, Recovery, MAX_PROBES_LISTED};

use super::command::{self, Ending, Outcome};
use super::spec::{Fault, FaultPlan, ProbeFrom, ProbeSpec};
use crate::plan::Phase;

/// Longest wait between checks of the clock, the run's end and Ctrl-C.
const TICK: Duration = Duration::from_millis(50);
/// A single probe is killed after this many probe intervals (at least 10 s): a probe that
/// hangs (a cluster tool waiting for a dead monitor) must not hold up the next one forever.
const PROBE_LIMIT_INTERVALS: u32 = 10;
const MIN_PROBE_LIMIT: Duration = Duration::from_secs(10);

/// A phase that started, as the schedule knows it.
struct Started {
    job: usize,
    name: &'static str,
    label: String,
    prepare: bool,
    at_s: f64,
}

#[derive(Default)]
struct State {
    phases: Vec<Started>,
    /// The workload has ended: faults not yet due are skipped.
    workload_over: bool,
    runs: Vec<FaultRun>,
    due: Vec<Option<f64>>,
    /// Faults not yet ended or skipped.
    pending: usize,
    events: Vec<Event>,
    recovery: Option<Recovery>,
    /// A fault command failed and `--fault-must-succeed` was given.
    failure: Option<String>,
}

struct Shared {
    plan: FaultPlan,
    origin: Instant,
    /// Ctrl-C: commands are killed and probing stops. A failed fault that must succeed sets
    /// it too, to end the workload.
    stop: &'static AtomicBool,
    state: Mutex<State>,
    changed: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn secs(&self, t: Instant) -> f64 {
        t.saturating_duration_since(self.origin).as_secs_f64()
    }

    fn now_s(&self) -> f64 {
        self.secs(Instant::now())
    }

    fn event(&self, s: &mut State, time_s: f64, kind: &str, fault: Option<usize>, detail: String) {
        s.events.push(Event {
            time_s,
            kind: kind.into(),
            fault,
            detail,
        });
        self.changed.notify_all();
    }

    /// Wait for a change or a tick.
    fn wait<'a>(&self, guard: MutexGuard<'a, State>, most: Duration) -> MutexGuard<'a, State> {
        self.changed
            .wait_timeout(guard, most.min(TICK))
            .unwrap_or_else(|e| e.into_inner())
            .0
    }
}

/// What the schedule did, for the result.
pub(crate) struct Record {
    pub events: Vec<Event>,
    pub runs: Vec<FaultRun>,
    pub due: Vec<Option<f64>>,
    pub recovery: Option<Recovery>,
    pub failure: Option<String>,
}

/// The running schedule.
pub(crate) struct Timeline {
    shared: Arc<Shared>,
    /// Taken by [`Timeline::finish`], which a run whose threads hang calls through a shared
    /// reference.
    threads: Mutex<Vec<JoinHandle<()>>>,
}

impl Timeline {
    /// Start the schedule of `plan`; times count from `origin`, the run's start.
    pub(crate) fn start(plan: &FaultPlan, origin: Instant, stop: &'static AtomicBool) -> Timeline {
        let n = plan.faults.len();
        let shared = Arc::new(Shared {
            plan: plan.clone(),
            origin,
            stop,
            state: Mutex::new(State {
                runs: vec![FaultRun::default(); n],
                due: vec![None; n],
                pending: n,
                ..State::default()
            }),
            changed: Condvar::new(),
        });
        let mut threads = Vec::new();
        for i in 0..n {
            let s = shared.clone();
            threads.push(std::thread::spawn(move || run_fault(&s, i)));
        }
        if let Some(probe) = plan.probe.clone() {
            let s = shared.clone();
            threads.push(std::thread::spawn(move || run_probe(&s, &probe)));
        }
        Timeline {
            shared,
            threads: Mutex::new(threads),
        }
    }

    /// Phase `phase` of job `job` started at `at`.
    pub(crate) fn phase_started(&self, job: usize, phase: &Phase, at: Instant) {
        let mut s = self.shared.lock();
        s.phases.push(Started {
            job,
            name: phase.name,
            label: phase.label.clone(),
            prepare: phase.prepare,
            at_s: self.shared.secs(at),
        });
        self.shared.changed.notify_all();
    }

    /// The workload has ended: faults not yet due are skipped; running commands and the probe
    /// go on until they end (Ctrl-C kills them). `waiting` is told what is awaited, if anything.
    pub(crate) fn finish(&self, waiting: &mut dyn FnMut(&str)) -> Record {
        {
            let mut s = self.shared.lock();
            s.workload_over = true;
            self.shared.changed.notify_all();
            if let Some(p) = &self.shared.plan.probe {
                if s.recovery
                    .as_ref()
                    .is_none_or(|r| r.recovered_s.is_none() && !r.timed_out)
                {
                    waiting(&format!(
                        "waiting for the recovery probe to succeed (up to {} s; Ctrl-C stops it): {}",
                        p.timeout.as_secs(),
                        p.command
                    ));
                }
            }
        }
        let threads = std::mem::take(&mut *self.threads.lock().unwrap_or_else(|e| e.into_inner()));
        for t in threads {
            let _ = t.join();
        }
        let mut s = self.shared.lock();
        let mut s = std::mem::take(&mut *s);
        s.events.sort_by(|a, b| a.time_s.total_cmp(&b.time_s));
        Record {
            events: s.events,
            runs: s.runs,
            due: s.due,
            recovery: s.recovery,
            failure: s.failure,
        }
    }
}

/// When fault `f` is due, once its anchor phase has started.
fn due_s(s: &State, f: &Fault) -> Option<f64> {
    let anchor = s.phases.iter().find(|p| {
        !p.prepare
            && f.job.is_none_or(|j| p.job == j)
            && f.at.phase.as_ref().is_none_or(|n| p.name == n || p.label == *n)
    })?;
    Some(anchor.at_s + f.at.offset.as_secs_f64())
}

/// One fault: wait for its time, run its command, record both ends.
fn run_fault(sh: &Shared, i: usize) {
    let f = &sh.plan.faults[i];
    let mut s = sh.lock();
    let skipped = loop {
        let due = due_s(&s, f);
        s.due[i] = due;
        let now = sh.now_s();
        match due {
            Some(d) if now >= d => break None,
            _ if sh.stop.load(Relaxed) => break Some("the run was stopped first"),
            _ if s.workload_over => break Some("the workload ended before its time"),
            Some(d) => s = sh.wait(s, Duration::from_secs_f64(d - now)),
            None => s = sh.wait(s, TICK),
        }
    };
    if let Some(why) = skipped {
        s.runs[i].status = "skipped".into();
        s.pending -= 1;
        let now = sh.now_s();
        sh.event(&mut s, now, "fault-skipped", Some(i), format!("{}: {why}", f.entry));
        return;
    }
    let now = sh.now_s();
    sh.event(&mut s, now, "fault-start", Some(i), f.entry.command.clone());
    drop(s);
    let limit = sh.plan.command_timeout;
    let outcome = command::run(&f.entry.command, limit, sh.stop);
    let mut s = sh.lock();
    s.runs[i] = fault_run(sh, &outcome);
    s.pending -= 1;
    let detail = outcome.describe(limit);
    let end = s.runs[i].ended_s.unwrap_or(now);
    sh.event(&mut s, end, "fault-end", Some(i), detail.clone());
    if sh.plan.must_succeed && !outcome.succeeded() && s.failure.is_none() {
        s.failure = Some(format!(
            "fault '{}' did not succeed ({detail}) and --fault-must-succeed is set",
            f.entry
        ));
        sh.stop.store(true, Relaxed);
    }
}

fn fault_run(sh: &Shared, o: &Outcome) -> FaultRun {
    let started = !matches!(o.ending, Ending::NotStarted(_));
    FaultRun {
        started_s: started.then(|| sh.secs(o.started)),
        ended_s: started.then(|| sh.secs(o.ended)),
        exit_code: o.exit_code(),
        status: match &o.ending {
            Ending::Exited(0) => "ok",
            Ending::Exited(_) | Ending::Signalled(_) => "failed",
            Ending::TimedOut => "timeout",
            Ending::Stopped => "killed",
            Ending::NotStarted(_) => "not-started",
        }
        .into(),
        output: match &o.ending {
            Ending::NotStarted(why) => why.clone(),
            _ => o.output.clone(),
        },
    }
}

/// The recovery probe: from the last fault's end (or the workload's), every interval until it
/// exits 0, the recovery timeout passes, or the user stops the run.
fn run_probe(sh: &Shared, p: &ProbeSpec) {
    let mut s = sh.lock();
    loop {
        let ready = match p.from {
            ProbeFrom::LastFault => s.pending == 0,
            ProbeFrom::End => s.workload_over,
        };
        if ready || sh.stop.load(Relaxed) {
            break;
        }
        s = sh.wait(s, TICK);
    }
    let start = Instant::now();
    let started_s = sh.secs(start);
    let fault_starts: Vec<f64> = s.runs.iter().filter_map(|r| r.started_s).collect();
    let mut rec = Recovery {
        command: p.command.clone(),
        from: p.from.name().into(),
        started_s: Some(started_s),
        ..Recovery::default()
    };
    if sh.stop.load(Relaxed) {
        rec.started_s = None;
        rec.interrupted = true;
        s.recovery = Some(rec);
        sh.event(
            &mut s,
            started_s,
            "probe-stopped",
            None,
            "the run was stopped before probing".into(),
        );
        return;
    }
    sh.event(&mut s, started_s, "probe-start", None, p.command.clone());
    s.recovery = Some(rec.clone());
    drop(s);
    let per_probe = (p.interval * PROBE_LIMIT_INTERVALS).max(MIN_PROBE_LIMIT);
    loop {
        let elapsed = start.elapsed();
        if elapsed >= p.timeout {
            rec.timed_out = true;
            break;
        }
        let o = command::run(&p.command, per_probe.min(p.timeout - elapsed), sh.stop);
        if matches!(o.ending, Ending::Stopped) || sh.stop.load(Relaxed) {
            rec.interrupted = true;
            break;
        }
        rec.probes += 1;
        if rec.attempts.len() < MAX_PROBES_LISTED {
            rec.attempts.push(Probe {
                time_s: sh.secs(o.started),
                duration_s: o.ended.saturating_duration_since(o.started).as_secs_f64(),
                exit_code: o.exit_code(),
            });
        }
        if o.succeeded() {
            let at = sh.secs(o.ended);
            rec.recovered_s = Some(at);
            let last = fault_starts
                .iter()
                .copied()
                .filter(|&f| f <= started_s)
                .fold(None, |m: Option<f64>, f| Some(m.map_or(f, |m| m.max(f))));
            rec.recovery_time_s = last.map(|f| at - f);
            rec.since_first_fault_s = fault_starts.iter().copied().reduce(f64::min).map(|f| at - f);
            break;
        }
        rec.last_output = o.output.clone();
        // The next probe starts one interval after this one started.
        let next = o.started + p.interval;
        while Instant::now() < next && !sh.stop.load(Relaxed) {
            std::thread::sleep(TICK.min(next.saturating_duration_since(Instant::now())));
        }
    }
    let mut s = sh.lock();
    let now = sh.now_s();
    let (kind, detail) = match (&rec.recovered_s, rec.timed_out) {
        (Some(_), _) => ("recovered", format!("after {} probes", rec.probes)),
        (None, true) => (
            "recovery-timeout",
            format!("no success in {} s ({} probes)", p.timeout.as_secs_f64(), rec.probes),
        ),
        (None, false) => ("probe-stopped", "the run was stopped".to_string()),
    };
    let time = rec.recovered_s.unwrap_or(now);
    sh.event(&mut s, time, kind, None, detail);
    s.recovery = Some(rec);
}
