//! Who did what in a phase: each worker's, process's (rank's) and host's totals, and what
//! gathering the processes' parts at rank 0 cost.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What one process (rank) did in a phase. Times are seconds after the run started, on rank
/// 0's clock.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ProcessSummary {
    pub rank: usize,
    pub host: String,
    pub pid: u32,
    pub workers: usize,
    pub ops: u64,
    pub bytes: u64,
    pub errors: u64,
    /// When the rank left the phase's start barrier.
    pub start_s: f64,
    /// When its last operation ended.
    pub end_s: f64,
    pub duration_s: f64,
    pub ops_per_sec: f64,
    pub bytes_per_sec: f64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub max_ns: u64,
}

/// dfsbench's own cost of a multi-process phase at rank 0, which grows with the ranks: how far
/// apart the ranks left the start barrier, and what receiving and merging their parts took
/// (docs/scaling.md models it for thousands of ranks).
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct Gather {
    /// Latest minus earliest departure of a rank from the phase's start barrier.
    pub start_skew_s: f64,
    /// Bytes rank 0 received from its tree children (their subtotals: JSON), and the largest.
    pub bytes_received: u64,
    pub largest_part_bytes: u64,
    /// Bytes of the end-of-phase answer rank 0 sent to each other rank.
    pub reply_bytes: u64,
    /// From rank 0's own part being ready to its last tree child's subtotal arriving: the
    /// other ranks' lateness, the merges below and the transfers.
    pub wait_s: f64,
    /// Decoding and merging rank 0's own part and its children's subtotals into the phase's
    /// result, at rank 0.
    pub merge_s: f64,
    /// The CPU time of that merge (rank 0's thread's): what it costs where rank 0 has a core
    /// of its own; at most `merge_s`.
    pub merge_cpu_s: f64,
    /// Sending the answer to every other rank, at rank 0.
    pub reply_s: f64,
    /// Rank 0's peak resident memory so far (getrusage), after the merge.
    pub peak_rss_bytes: u64,
    /// The merge tree: children per rank (rank 0 merges at most this many subtotals) and
    /// its depth (merges one after another below rank 0); 0 in results of versions before it.
    #[serde(default)]
    pub fanout: u64,
    #[serde(default)]
    pub depth: u64,
}

/// The processes of one host in a phase, with their exactly merged latency.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct NodeSummary {
    pub host: String,
    pub ranks: Vec<usize>,
    pub ops: u64,
    pub bytes: u64,
    pub errors: u64,
    pub duration_s: f64,
    pub ops_per_sec: f64,
    pub bytes_per_sec: f64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub max_ns: u64,
}

/// One worker's totals in a phase. Its latencies come from its own histogram at 2 significant
/// digits (1%); the exact histograms are the process's, which every worker adds to.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct WorkerSummary {
    pub worker: usize,
    pub ops: u64,
    pub bytes: u64,
    pub errors: u64,
    pub duration_s: f64,
    pub ops_per_sec: f64,
    pub bytes_per_sec: f64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub max_ns: u64,
    /// The worker whose files this one read (`--shuffle`), when not its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_from: Option<usize>,
    /// The I/O engine this worker's file ran on (io phases).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ioengine: Option<String>,
    /// The emulated accelerator this worker is (train epochs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accelerator: Option<crate::Accelerator>,
}
