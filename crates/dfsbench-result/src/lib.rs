//! The result document: one versioned JSON file per run, from which every report is derived.
//! The schema is documented in docs/result-schema.json.

#![warn(unreachable_pub)]

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

mod breakdown;
pub mod faults;
pub mod files;
mod groups;
pub mod histogram;
mod marks;
mod measures;
mod null_tests;
mod origin;
mod train;
pub mod units;

pub use breakdown::{Gather, NodeSummary, ProcessSummary, WorkerSummary};
pub use groups::{group_total, GroupTotal};

pub use marks::{cache_suspects, validity_reasons, LINK_MARGIN};
pub use measures::{
    median, Cpu, EndpointResult, ErrorSample, Errors, Latency, OpKind, PhaseCache, RateResult, Series, ServerCpu,
    Steady, Stonewall, Verify, MAX_ERROR_SAMPLES,
};
pub use null_tests::{Bandwidth, LinkCapacity, NodeBandwidth, NodeNullTests, NullTests, RoundTrips};
pub use origin::{Cluster, Host, LostRank, Member, Target, Tool};
pub use train::{au, Accelerator, TrainResult};
pub use units::format_ns;

/// Schema identifier written into every result file.
pub const SCHEMA: &str = "dfsbench.result/1";

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RunResult {
    pub schema: String,
    pub tool: Tool,
    pub run_id: String,
    /// RFC 3339 UTC.
    pub started_at: String,
    pub finished_at: String,
    /// `complete`, `interrupted` (Ctrl-C), `aborted` (too many errors) or `failed`.
    pub status: String,
    /// Why the run did not complete, when it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// `dfsbench run --tag`: a name for this run in the history (`compare --baseline TAG`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    pub command_line: Vec<String>,
    pub host: Host,
    pub target: Target,
    pub config: serde_json::Value,
    /// SHA-256 of the config's JSON text: equal hashes mean equal workloads.
    pub config_hash: String,
    /// What the hardware under the run can do at most (with --null-tests).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub null_tests: Option<NullTests>,
    /// The processes of a run with more than one (`--procs`, mpirun, srun).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<Cluster>,
    pub phases: Vec<PhaseResult>,
    /// Jobs that ran at the same time, each group's total (its jobs' phases are in `phases`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<GroupTotal>,
    /// What happened on the run's timeline besides the workload: fault commands and recovery
    /// probes, in time order (seconds after the run started, the clock of `start_s`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<faults::Event>,
    /// Every `--fault` and what the measurements around it show.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<faults::FaultImpact>,
    /// The `--recovery-probe` and when it first succeeded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery: Option<faults::Recovery>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PhaseResult {
    /// Operation of the phase: `create`, `write`, `randread`, ...
    pub name: String,
    /// Name and parameters for people, e.g. `write 10 KiB`.
    pub label: String,
    /// Index of the job in the config, and its name and workload.
    pub job: usize,
    pub job_name: String,
    pub workload: String,
    /// Parameters that distinguish this phase (file size, block size, queue depth, ...).
    pub params: BTreeMap<String, serde_json::Value>,
    /// An unmeasured preparation step (fio's file layout), not a benchmark result.
    #[serde(default)]
    pub prepare: bool,
    pub workers: usize,
    pub threads: usize,
    /// Start of the phase, seconds after the run started.
    pub start_s: f64,
    /// Measured time: from the end of ramp-up until the last worker finished.
    pub duration_s: f64,
    pub ramp_s: f64,
    pub ops: u64,
    pub bytes: u64,
    /// Entries seen by list operations.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub items: u64,
    pub ops_per_sec: f64,
    pub bytes_per_sec: f64,
    pub errors: Errors,
    /// Throughput while every worker was running (IOR's stonewalling).
    pub stonewall: Stonewall,
    pub latency: Latency,
    /// Time to first byte of whole-file reads (from the start of the operation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttfb: Option<Latency>,
    /// Requests retried after a temporary failure (only with --retries; failures are never
    /// retried silently).
    #[serde(default)]
    pub retries: u64,
    /// Per-operation breakdown for mixed phases (e.g. read and write of randrw).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ops_by_kind: Vec<OpKind>,
    /// Per gateway, when the target has several (empty otherwise).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub endpoints: Vec<EndpointResult>,
    pub series: Series,
    /// The same counts in 100 ms intervals, with errors by kind: runs with faults or a
    /// recovery probe.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fine_series: Option<Series>,
    /// Intervals in which no operation completed, from every completion's own time
    /// (in open-loop phases a stall is also at least two arrival intervals long).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stalls: Option<faults::Stalls>,
    pub cpu: Cpu,
    /// CPU of the server processes the run watched (`--server-pid`), on rank 0's host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cpu: Option<ServerCpu>,
    pub workers_detail: Vec<WorkerSummary>,
    /// Per process and per host, in multi-process runs: stragglers show here.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub processes: Vec<ProcessSummary>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<NodeSummary>,
    /// What gathering the processes' measurements at rank 0 cost, in multi-process runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gather: Option<Gather>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<Verify>,
    /// Open-loop load: what was asked and what the target sustained. The phase's `latency` is
    /// then the response time from each operation's intended start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<RateResult>,
    /// Whether a phase run until steady became steady, and when.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady: Option<Steady>,
    /// What was done about the client's page cache before this read phase (read phases only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<PhaseCache>,
    /// Why this read phase may have been served from the client's cache rather than the
    /// storage ("served from client cache?"); empty when nothing points at it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cache_suspect: Vec<String>,
    /// Why this phase's figures are weak: shorter than 1 s, fewer than 1000 operations, or a
    /// stonewall window under half of the phase; empty for a sound phase.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub validity: Vec<String>,
    /// How the blocks were issued (io phases; absent in results written before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<Queue>,
    /// An epoch of the train workload: how busy its emulated accelerators were kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub train: Option<TrainResult>,
}

/// The engine an io phase ran on and the requests in flight per worker it really had
/// (`depth`: psync issues one block at a time whatever the job asked for, as in fio).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Queue {
    /// `io_uring`, `libaio`, `psync` or `requests` (a network backend's own requests).
    pub engine: String,
    pub depth: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

fn is_zero_f64(v: &f64) -> bool {
    *v == 0.0
}

#[cfg(test)]
mod tests;
