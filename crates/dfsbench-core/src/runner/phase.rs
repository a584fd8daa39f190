//! One phase from the main thread: drop cached pages, let the workers prepare, start it
//! on every rank at once, measure, merge, and rank 0's verdict on whether the job goes on.

use std::collections::VecDeque;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use dfsbench_backends::{Capabilities, Drive, Storage};

use serde::{Deserialize, Serialize};

use crate::cluster::Group;
use crate::config::RunConfig;
use crate::part::RankPart;
use crate::plan::{phases, Phase};
use crate::workloads::Workload;
use dfsbench_result::{validity_reasons, PhaseCache, PhaseResult};

use super::crew::{Crew, Current};
use super::measure::STUCK_GRACE;
use super::{agree, JobRun, Observer, Status};

/// What rank 0 tells every rank at the end of a phase.
#[derive(Serialize, Deserialize, Default)]
pub(super) struct PhaseEnd {
    /// Why the run stops here, if it does: (`interrupted` | `aborted` | `failed`, message).
    pub(super) stop: Option<(String, String)>,
    /// Files per set of every worker of every rank, by global worker index.
    pub(super) existing: Vec<Vec<u64>>,
    /// What every worker of every rank runs alike in the next phase, which the job's workload
    /// read from the merged result (io after an engine probe: the engine); opaque here.
    #[serde(default)]
    pub(super) agreed: Option<serde_json::Value>,
}

impl PhaseEnd {
    pub(super) fn failed(why: String) -> PhaseEnd {
        PhaseEnd {
            stop: Some(("failed".into(), why)),
            existing: Vec::new(),
            agreed: None,
        }
    }
}

impl<S: Storage> JobRun<'_, S> {
    /// Run the job's phases in order (and the wear-out steps they call for) until one stops.
    pub(super) fn phases(
        &self,
        crew: &Crew,
        done_rx: &mpsc::Receiver<usize>,
        observer: &mut dyn Observer,
        group: &mut Group,
        results: &mut Vec<PhaseResult>,
    ) -> Status {
        let mut existing: Arc<Vec<Vec<u64>>> = Default::default();
        let mut agreed = None;
        let mut queue: VecDeque<Phase> = phases(self.index, self.job).into();
        let mut seq = 0u64;
        let mut started = false;
        while let Some(phase) = queue.pop_front() {
            // A job of the group ended with exitall: this one ends too, with what it did.
            if self.group_end.is_some_and(|e| e.load(Relaxed)) {
                return Status::Complete;
            }
            // A job of a group drops the cached pages of its first measured phase before the
            // group starts: another job of the group may be writing the same file then (fio's
            // jobs of one filename), whose write-back would hold this job back.
            let mut dropped = None;
            if !phase.prepare && !started {
                started = true;
                if self.together.is_some() {
                    match self.drop_cached(&phase, &existing, group) {
                        Ok(cache) => dropped = Some(cache),
                        Err(stop) => return stop,
                    }
                }
                if let Err(stop) = self.start_measuring() {
                    return stop;
                }
            }
            seq += 1;
            let end = self.phase(
                &phase,
                seq,
                (&existing, dropped),
                agreed.take(),
                crew,
                done_rx,
                observer,
                group,
                results,
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
            agreed = end.agreed;
            match end.stop {
                Some((kind, _)) if kind == "interrupted" => return Status::Interrupted,
                Some((kind, why)) if kind == "failed" => return Status::Failed(why),
                Some((_, why)) => return Status::Aborted(why),
                None => {}
            }
        }
        Status::Complete
    }

    /// Before its first measured phase a job meets the other jobs of its group (each laid out
    /// its files by then), then waits out its start delay.
    fn start_measuring(&self) -> Result<(), Status> {
        if let Some((gate, arrived)) = self.together {
            arrived.store(true, Relaxed);
            if !gate.wait() {
                return Err(Status::Failed(format!(
                    "job '{}' did not start: another job of its group stopped before the group started",
                    self.job.name
                )));
            }
        }
        let until = Instant::now() + self.job.start_delay;
        while let Some(left) = until.checked_duration_since(Instant::now()).filter(|d| !d.is_zero()) {
            if self.interrupt.load(Relaxed) {
                return Err(Status::Interrupted);
            }
            std::thread::sleep(left.min(Duration::from_millis(50)));
        }
        Ok(())
    }

    /// One phase: prepare (drop cached pages, let the workers set up, agree to start), run and
    /// sample it, merge.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn phase(
        &self,
        phase: &Phase,
        seq: u64,
        (existing, dropped): (&Arc<Vec<Vec<u64>>>, Option<Option<PhaseCache>>),
        agreed: Option<serde_json::Value>,
        crew: &Crew,
        done_rx: &mpsc::Receiver<usize>,
        observer: &mut dyn Observer,
        group: &mut Group,
        results: &mut Vec<PhaseResult>,
    ) -> Result<PhaseEnd, Status> {
        let cache = match dropped {
            Some(cache) => cache,
            None => self.drop_cached(phase, existing, group)?,
        };
        *crew.current.lock().expect("lock") = Some(Current {
            phase: phase.clone(),
            ctl: None,
            shuffle: self.shuffle.filter(|_| phase.reads_shuffled()),
            existing: existing.clone(),
            agreed,
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
    pub(super) fn drop_cached(
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
        let mine = super::invalidate::prepare_read(self.storage, config, self.index, job, phase, &owners, existing);
        let parts = group.round(
            serde_json::to_vec(&mine).expect("a cache record serializes"),
            &format!("the invalidation before phase '{}'", phase.label),
            |all| {
                let parts: Vec<PhaseCache> = all.iter().filter_map(|(_, p)| serde_json::from_slice(p).ok()).collect();
                serde_json::to_vec(&crate::cache::merge(&parts)).expect("a cache record serializes")
            },
        );
        match parts {
            Ok(merged) => Ok(serde_json::from_slice(&merged).ok()),
            Err(lost) => Err(Status::Failed(lost.message)),
        }
    }
}

/// Rank 0's verdict after a phase: stop or go on, who has which files, and what the workers
/// of `workload` run alike next.
pub(super) fn phase_end(
    parts: &[&RankPart],
    (result, workload): (&PhaseResult, &Workload),
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
    let stuck: u64 = parts.iter().map(|p| p.stuck).sum();
    let stop = if parts.iter().any(|p| p.interrupted) {
        Some(("interrupted".to_string(), String::new()))
    } else if stuck > 0 {
        Some(("failed".to_string(), stuck_failure(stuck, phase, config)))
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
    PhaseEnd {
        stop,
        existing,
        agreed: workload.agreed(result),
    }
}

/// Why a phase's figures are weak: the general rules, and on network backends latencies at
/// the delayed-ACK timeout.
pub(super) fn marks(result: &PhaseResult, caps: Capabilities) -> Vec<String> {
    let mut reasons = validity_reasons(result);
    if caps.drive != Drive::Blocking {
        let hist = dfsbench_result::histogram::deserialize(&result.latency.histogram).ok();
        reasons.extend(hist.as_ref().and_then(crate::stats::delayed_ack_signature));
    }
    reasons
}

/// Why a phase with operations still inside the storage ends the run.
pub(super) fn stuck_failure(stuck: u64, phase: &Phase, config: &RunConfig) -> String {
    let waited = config.op_timeout.unwrap_or_default() + STUCK_GRACE;
    format!(
        "{stuck} operation{s} of phase '{}' did not return {:.1} s after the phase ended (--op-timeout {:.1} s): \
         a stopped or hung server holds {them} in a system call; counted as timeouts, the run ends here",
        phase.label,
        waited.as_secs_f64(),
        config.op_timeout.unwrap_or_default().as_secs_f64(),
        s = if stuck == 1 { "" } else { "s" },
        them = if stuck == 1 { "it" } else { "them" },
    )
}

/// Why a preparation step stops the job: its most frequent error, with the file it hit.
pub(super) fn prepare_failure(result: &PhaseResult, phase: &Phase, run_path: &str) -> String {
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
