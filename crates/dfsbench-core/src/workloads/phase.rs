//! One phase of a job as its workload plans it, and what the workload takes from the job for
//! that: its time limit, ramp and arrivals ([`Timing`]).

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;

use crate::load::{Arrival, Stable};

use super::PhaseOp;

/// What a job's phases take from the job.
#[derive(Debug, Clone, Copy, Default)]
pub struct Timing {
    /// The job's time limit: its measured phases are time-based.
    pub duration: Option<Duration>,
    pub ramp: Duration,
    /// How operations arrive when a phase runs at a rate.
    pub arrival: Option<Arrival>,
}

/// One phase of a job.
#[derive(Debug, Clone)]
pub struct Phase {
    pub job: usize,
    pub op: PhaseOp,
    pub name: &'static str,
    pub label: String,
    /// Names of the operation kinds measured separately (index = recorder class).
    pub classes: &'static [&'static str],
    pub duration: Option<Duration>,
    pub ramp: Duration,
    pub prepare: bool,
    pub params: BTreeMap<String, Value>,
    /// Open-loop rate of the phase: total operations per second (None: closed loop).
    pub rate: Option<f64>,
    pub arrival: Arrival,
    /// End the phase once throughput is steady (time-based phases only).
    pub stable: Option<Stable>,
    /// A wear-out step (IOR's stoneWallingWearOut): every worker creates or writes files up
    /// to this count, so that later phases find the same number everywhere.
    pub until: Option<u64>,
    /// Operations each worker makes, when that is known before the phase starts (a count-based
    /// phase): the progress line's done / total. None for time-based phases and counts that
    /// depend on an earlier phase.
    pub ops_per_worker: Option<u64>,
}

impl Phase {
    /// A measured phase of job `index`, time-based when the job is.
    pub(crate) fn new(
        index: usize,
        job: &Timing,
        op: impl Into<PhaseOp>,
        name: &'static str,
        label: String,
        classes: &'static [&'static str],
        params: Vec<(&str, Value)>,
    ) -> Phase {
        Phase {
            job: index,
            op: op.into(),
            name,
            label,
            classes,
            duration: job.duration,
            ramp: job.ramp,
            prepare: false,
            params: params.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
            rate: None,
            arrival: job.arrival.unwrap_or(Arrival::Uniform),
            stable: None,
            until: None,
            ops_per_worker: None,
        }
    }

    /// Each worker makes `n` operations, unless the phase is time-based (call it before
    /// `untimed`: a phase after a time-limited one works on what that one made).
    pub(crate) fn counted(self, n: u64) -> Phase {
        Phase {
            ops_per_worker: self.duration.is_none().then_some(n),
            ..self
        }
    }

    /// The phase does its whole count whatever the job's duration.
    pub(crate) fn untimed(self) -> Phase {
        Phase {
            duration: None,
            ramp: Duration::ZERO,
            ..self
        }
    }

    /// An unmeasured step that prepares the measured ones (a layout, a fill).
    pub(crate) fn preparation(self) -> Phase {
        Phase {
            prepare: true,
            ..self.untimed()
        }
    }

    /// Phases that read what earlier phases made: with `--shuffle` they read another worker's
    /// data (the same worker of another rank, or the next worker in a single process).
    pub(crate) fn reads_shuffled(&self) -> bool {
        self.op.reads_shuffled()
    }

    /// Measured phases that read file data, whose files must leave the client's page cache
    /// first so the reads reach the storage.
    pub fn reads_data(&self) -> bool {
        !self.prepare && self.op.reads_data()
    }

    /// After this time-limited create or write phase, the unmeasured step that brings every
    /// worker to `most` files, the count the busiest one reached; None when nothing is left.
    pub(crate) fn wear_out(&self, existing: &[Vec<u64>]) -> Option<Phase> {
        let set = self.op.fills_set()?;
        self.duration?;
        let counts = existing.iter().map(|e| e.get(set).copied().unwrap_or(0));
        let most = counts.clone().max()?;
        if counts.clone().all(|c| c == most) {
            return None;
        }
        Some(Phase {
            label: format!("wear-out {}", self.label),
            duration: None,
            ramp: Duration::ZERO,
            prepare: true,
            until: Some(most),
            ops_per_worker: None,
            ..self.clone()
        })
    }
}
