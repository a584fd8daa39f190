//! A validated job: its workers, timing and load, and its workload; and how durations are
//! written into the result's copy of the config (seconds).

use std::time::Duration;

use serde::Serialize;

use crate::load::{Arrival, Stable};
use crate::workloads::{Timing, Workload};

/// A validated job.
#[derive(Debug, Clone, Serialize)]
pub struct Job {
    pub name: String,
    pub workers: usize,
    /// OS threads that carry the workers (None: the backend decides).
    pub threads: Option<usize>,
    #[serde(with = "opt_secs")]
    pub duration: Option<Duration>,
    /// Phases with a duration loop until it is over; false (io and files jobs, fio's runtime
    /// without time_based): they make one pass, cut short at the duration.
    #[serde(skip_serializing_if = "is_true")]
    pub time_based: bool,
    #[serde(with = "secs")]
    pub ramp: Duration,
    /// Open-loop rate: total operations per second over all workers (None: closed loop).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    /// Rates to run each time-based phase at, one after the other (SPECsfs-style curve).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rate_steps: Vec<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arrival: Option<Arrival>,
    /// End time-based phases early once throughput is steady.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub until_stable: Option<Stable>,
    /// Jobs with the same group run at the same time (see `JobSettings::group`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// When the job ends (or, with exitall_on_error, fails), the other jobs of its group stop.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub exitall: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub exitall_on_error: bool,
    /// How long after its group's start the job starts.
    #[serde(with = "secs", skip_serializing_if = "Duration::is_zero")]
    pub start_delay: Duration,
    /// Left out, with a note, where the backend lacks what it needs (the first run's block
    /// phases on an object store), instead of failing the run.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub optional: bool,
    #[serde(flatten)]
    pub workload: Workload,
}

impl Job {
    /// What the job's phases take from it.
    pub(crate) fn timing(&self) -> Timing {
        Timing {
            duration: self.duration,
            ramp: self.ramp,
            arrival: self.arrival,
        }
    }
}

fn is_true(b: &bool) -> bool {
    *b
}

pub(crate) mod secs {
    use serde::Serializer;
    use std::time::Duration;
    pub(crate) fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }
}

pub(crate) mod opt_secs {
    use serde::Serializer;
    use std::time::Duration;
    pub(crate) fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.serialize_f64(d.as_secs_f64()),
            None => s.serialize_none(),
        }
    }
}
