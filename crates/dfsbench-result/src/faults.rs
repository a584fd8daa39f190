//! Faults on a run's timeline: the commands run, the probe, and what the measurements show
//! around them (stalls, throughput before/during/after, recovery). Every figure here comes
//! from the operations' own completion times, never from the fault commands.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Something that happened on the run's clock (seconds after the run started).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Event {
    pub time_s: f64,
    /// `fault-start`, `fault-end`, `fault-skipped`, `probe-start`, `probe`, `recovered`,
    /// `recovery-timeout`.
    pub kind: String,
    /// The fault's index in `faults`, for fault events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<usize>,
    /// For people: the command, its exit status, why it was skipped.
    pub detail: String,
}

/// One interval without a completed operation, on the run's clock.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Interval {
    pub from_s: f64,
    pub to_s: f64,
}

impl Interval {
    pub fn length(&self) -> f64 {
        self.to_s - self.from_s
    }
}

/// At most this many stall intervals are listed per phase; the count and total stay exact.
pub const MAX_STALLS_LISTED: usize = 1000;

/// The intervals of a phase in which no operation completed anywhere.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Stalls {
    /// Gaps shorter than this were not recorded (per worker, to keep memory bounded): a
    /// `longest_s` of 0 means no gap reached it.
    pub resolution_s: f64,
    /// Gaps at least this long count as stalls (`--stall-threshold`).
    pub threshold_s: f64,
    /// The longest gap of the phase (from its start to its last operation's end).
    pub longest_s: f64,
    /// Where it started, on the run's clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub longest_from_s: Option<f64>,
    /// Stalls: gaps of at least `threshold_s`.
    pub count: u64,
    pub total_s: f64,
    /// The stalls, the first 1000, on the run's clock.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub intervals: Vec<Interval>,
    /// Every gap of at least `resolution_s` (the stalls and the shorter ones), on the run's
    /// clock, the first 1000: what the per-fault analysis reads.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gaps: Vec<Interval>,
}

/// A fault command as it ran.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FaultRun {
    /// Started, and ended, on the run's clock; None when it never started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_s: Option<f64>,
    /// Exit code; None when it was killed (timeout, end of the run) or never ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// `ok`, `failed`, `timeout`, `killed` (the run ended first), `not-started`, `skipped`
    /// (the run ended before its time).
    pub status: String,
    /// The first lines of what it printed (stdout and stderr).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub output: String,
}

/// Throughput and errors in one window around a fault.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Window {
    pub from_s: f64,
    pub to_s: f64,
    pub ops_per_sec: f64,
    pub bytes_per_sec: f64,
    pub errors: u64,
}

/// One `--fault` and what the phase it fell in measured around it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FaultImpact {
    /// As given: `30s`, `read+10s`.
    pub at: String,
    pub command: String,
    /// When it was due, on the run's clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub due_s: Option<f64>,
    pub run: FaultRun,
    /// The phase it fell in (label), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// Up to 10 s before the fault (within its phase).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<Window>,
    /// From the fault to the probe's first success or the next fault (or the phase's end).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub during: Option<Window>,
    /// Up to 10 s after `during`, within the phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<Window>,
    /// `during` and `after` throughput (operations) over `before`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub during_ratio: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_ratio: Option<f64>,
    /// Errors by kind inside `during`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub errors_by_kind: BTreeMap<String, u64>,
    /// The longest gap without a completed operation that overlaps `during`, and where.
    pub stall_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stall_from_s: Option<f64>,
    /// From the fault to the end of its stall, when operations completed again (0 when the
    /// longest gap overlapping `during` is shorter than the stall threshold: they never stopped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_success_after_s: Option<f64>,
    /// From the fault to the end of the first 1 s window (in 100 ms steps) whose throughput was
    /// back within 10% of `before`, after it had fallen below that (performance recovery; 0:
    /// it never fell); None if it did not come back within the phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throughput_recovered_after_s: Option<f64>,
}

/// Probing for recovery after the faults.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Recovery {
    pub command: String,
    /// `last-fault` or `end` (of the workload).
    pub from: String,
    /// First probe, on the run's clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_s: Option<f64>,
    /// The first probe that exited 0, on the run's clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovered_s: Option<f64>,
    /// The recovery time: first success minus the start of the last fault before probing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery_time_s: Option<f64>,
    /// First success minus the start of the first fault.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since_first_fault_s: Option<f64>,
    /// No probe succeeded within `--recovery-timeout`.
    pub timed_out: bool,
    /// The user stopped the run while it probed.
    #[serde(default)]
    pub interrupted: bool,
    pub probes: u64,
    /// The probes, the first 3600: time, duration and exit code (None: killed at its timeout).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attempts: Vec<Probe>,
    /// The first lines of the last failing probe's output.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub last_output: String,
}

/// At most this many probes are listed; `probes` stays exact.
pub const MAX_PROBES_LISTED: usize = 3600;

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Probe {
    pub time_s: f64,
    pub duration_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
}
