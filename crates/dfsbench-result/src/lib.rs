//! The result document: one versioned JSON file per run, from which every report is derived.
//! The schema is documented in docs/result-schema.json.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub mod faults;
pub mod files;
pub mod histogram;
mod marks;
pub mod units;

pub use marks::{
    cache_suspects, validity_reasons, LINK_MARGIN, MIN_SOUND_OPS, MIN_SOUND_SECONDS, MIN_STONEWALL_SHARE,
    SUSPECT_FACTOR,
};
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

/// Null tests, measured before the jobs.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct NullTests {
    /// A temporary file in the local temp directory: write + fsync, read with its pages
    /// dropped from the page cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_disk: Option<Bandwidth>,
    /// TCP connect time to a network target's endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect: Option<RoundTrips>,
    /// Stat round trips to a file in the run directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round_trip: Option<RoundTrips>,
    /// One blob written to and read from the run directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bandwidth: Option<Bandwidth>,
    /// Each node of a target whose nodes are known (a lab target's): TCP connect, ping and
    /// the bandwidth from the node to the client. Empty for other targets and older results.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<NodeNullTests>,
    /// Tests that could not run, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Bandwidth {
    pub bytes: u64,
    pub write_bytes_per_sec: f64,
    /// Read of the file with its cached pages dropped first, where the backend has a page
    /// cache (older results without `cached_read_bytes_per_sec` read the target's blob
    /// without dropping them).
    pub read_bytes_per_sec: f64,
    /// The same read again, from whatever the client cached (target bandwidth only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_read_bytes_per_sec: Option<f64>,
}

/// The null tests of one node of the target; what could not be measured is in the null
/// tests' `errors`, named by the node.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct NodeNullTests {
    /// The node's name in the lab (`node1`).
    pub name: String,
    pub addr: String,
    /// The client's reads come from this node (a gateway the target names, or else a node
    /// holding data: brick, chunkserver, OSD ...): its bandwidth counts in what the client's
    /// link can carry.
    pub serves_data: bool,
    /// The TCP port connected to: the lowest one the node listens on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect: Option<RoundTrips>,
    /// ICMP echo round trips (`op` is `icmp echo`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ping: Option<RoundTrips>,
    /// Bytes the node sent the client over one TCP stream, from a sender started in the
    /// node's network namespace, over the time the client took to receive them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bandwidth: Option<NodeBandwidth>,
    /// The same the other way, from the client to a receiver in the node's namespace: the way
    /// a write's data goes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bandwidth_to_node: Option<NodeBandwidth>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct NodeBandwidth {
    pub bytes: u64,
    pub bytes_per_sec: f64,
}

/// What the client's link to the storage can carry at most, as far as the run knows it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct LinkCapacity {
    pub bytes_per_sec: f64,
    /// `configured` (a rate limit the lab set on each node link: `dfsbench lab limit`) or
    /// `measured` (the null tests' node bandwidths, summed over the nodes reads come from).
    pub source: String,
    /// The figure in words, with the nodes it sums over.
    pub basis: String,
}

impl LinkCapacity {
    pub const CONFIGURED: &'static str = "configured";
    pub const MEASURED: &'static str = "measured";

    /// The sum of the bandwidths measured to the nodes that serve data; None when one of
    /// them was not measured (a sum without it would understate the link).
    pub fn measured(nodes: &[NodeNullTests]) -> Option<LinkCapacity> {
        let data: Vec<&NodeNullTests> = nodes.iter().filter(|n| n.serves_data).collect();
        if data.is_empty() {
            return None;
        }
        let mut sum = 0.0;
        for n in &data {
            sum += n.bandwidth.as_ref()?.bytes_per_sec;
        }
        let names: Vec<&str> = data.iter().map(|n| n.name.as_str()).collect();
        Some(LinkCapacity {
            bytes_per_sec: sum,
            source: Self::MEASURED.into(),
            basis: format!(
                "{:.0} MiB/s measured from {} to the client in the null tests",
                sum / MIB,
                names.join(" + ")
            ),
        })
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RoundTrips {
    pub op: String,
    pub count: usize,
    pub min_ns: u64,
    pub median_ns: u64,
    pub max_ns: u64,
}

/// Who ran a multi-process run.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Cluster {
    /// `procs` (local processes) or `mpi`.
    pub mode: String,
    pub ranks: usize,
    /// Distinct hosts, in rank order of first appearance.
    pub nodes: Vec<String>,
    /// Workers of each rank (worker `w` of rank `r` is worker `r * workers_per_rank + w`),
    /// per job.
    pub workers_per_rank: Vec<usize>,
    /// Reads read another rank's data (`--shuffle`).
    pub shuffle: bool,
    pub members: Vec<Member>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Member {
    pub rank: usize,
    pub host: String,
    pub pid: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Tool {
    pub name: String,
    pub version: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Host {
    pub hostname: String,
    pub os: String,
    pub kernel: String,
    pub cpus: usize,
    pub memory_bytes: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Target {
    pub uri: String,
    pub backend: String,
    pub run_path: String,
    pub capabilities: BTreeMap<String, bool>,
    pub details: BTreeMap<String, String>,
    /// What the client's link to the storage can carry, when the run knows it (lab targets):
    /// read phases above it are marked `[cache?]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<LinkCapacity>,
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
}

/// The engine an io phase ran on and the requests in flight per worker it really had
/// (`depth`: psync issues one block at a time whatever the job asked for, as in fio).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Queue {
    /// `io_uring`, `libaio`, `psync` or `requests` (a network backend's own requests).
    pub engine: String,
    pub depth: u64,
}

/// What was done before a read phase so that its reads reach the storage.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PhaseCache {
    /// `invalidated` (every file's cached pages written back and dropped), `failed` (some
    /// could not be), `disabled` (`--invalidate 0`) or `not_applicable` (the backend keeps no
    /// client page cache: mem://, object stores, remote file services).
    pub policy: String,
    /// Files invalidated, over every process.
    #[serde(default)]
    pub files: u64,
    /// Files that could not be invalidated.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failed: u64,
    /// The kernel's page, dentry and inode caches were dropped as well (`--drop-caches`).
    #[serde(default)]
    pub dropped_kernel_caches: bool,
    /// The first failure, when there was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Reads in the phase of a file that the same worker had already read or written in it
    /// (time-based reads go round their files, a mix reads its pool again), over every process.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rereads: u64,
    /// Of those, the ones whose file was written back and dropped again just before it, as
    /// before the phase: inside the phase's wall time, outside every operation's latency.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reread_invalidations: u64,
    /// Seconds those drops took, summed over workers: time of the phase in which its workers
    /// read nothing.
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub reread_invalidation_s: f64,
}

impl PhaseCache {
    pub const INVALIDATED: &'static str = "invalidated";
    pub const FAILED: &'static str = "failed";
    pub const DISABLED: &'static str = "disabled";
    pub const NOT_APPLICABLE: &'static str = "not_applicable";

    /// Whether the phase's reads can have come from a client cache that was left warm: before
    /// the phase, or before a read of a file already read or written in it (dropping the
    /// kernel's caches before the phase does not cool those).
    pub fn left_warm(&self) -> bool {
        let before = !self.dropped_kernel_caches && matches!(self.policy.as_str(), Self::FAILED | Self::DISABLED);
        before || self.rereads > self.reread_invalidations
    }

    /// The policy for people: `invalidated 4 files, kernel caches dropped`.
    pub fn describe(&self) -> String {
        let mut s = match self.policy.as_str() {
            Self::INVALIDATED => format!("invalidated {} file{}", self.files, plural(self.files)),
            // Only re-reads failed: every file was invalidated before the phase.
            Self::FAILED if self.failed == 0 => format!("invalidated {} file{}", self.files, plural(self.files)),
            Self::FAILED => format!(
                "invalidation failed for {} of {} files",
                self.failed,
                self.files + self.failed
            ),
            Self::DISABLED => "not invalidated (--invalidate 0)".to_string(),
            Self::NOT_APPLICABLE => "no client page cache".to_string(),
            other => other.to_string(),
        };
        if self.dropped_kernel_caches {
            s += ", kernel caches dropped";
        }
        let (n, dropped) = (self.rereads, self.reread_invalidations);
        if n > 0 && dropped >= n {
            s += &format!(
                ", and again before each of {n} re-read{} ({:.3} s of the workers' time)",
                plural(n),
                self.reread_invalidation_s
            );
        } else if n > 0 {
            s += &format!(", {} of {n} re-read{} not invalidated first", n - dropped, plural(n));
        }
        s
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

const MIB: f64 = 1024.0 * 1024.0;

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RateResult {
    /// Operations per second requested over all workers.
    pub requested_ops_per_sec: f64,
    /// Successful operations per second over the measured time.
    pub achieved_ops_per_sec: f64,
    /// `uniform` or `poisson`.
    pub arrival: String,
    /// Time from the actual start to the end of each operation, without the wait behind a
    /// late schedule.
    pub service_latency: Latency,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Steady {
    /// Every per-second sample of the window within this fraction of the window's mean.
    pub band: f64,
    pub window_s: f64,
    pub stable: bool,
    /// Seconds after the phase started when it became steady (and ended).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stable_at_s: Option<f64>,
}

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

fn is_zero(v: &u64) -> bool {
    *v == 0
}

fn is_zero_f64(v: &f64) -> bool {
    *v == 0.0
}

/// Error details kept per phase; counts stay exact beyond it.
pub const MAX_ERROR_SAMPLES: usize = 100;

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct Errors {
    pub total: u64,
    pub by_kind: BTreeMap<String, u64>,
    /// The first errors of the phase with their details (at most 100).
    pub samples: Vec<ErrorSample>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ErrorSample {
    /// Seconds after the phase started.
    pub time_s: f64,
    pub worker: usize,
    pub op: String,
    pub kind: String,
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    pub message: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct Stonewall {
    pub duration_s: f64,
    pub ops: u64,
    pub bytes: u64,
    pub ops_per_sec: f64,
    pub bytes_per_sec: f64,
}

/// The median of `v`: the mean of the middle two when their count is even, 0 when empty.
pub fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let mid = s.len() / 2;
    match s.len() {
        0 => 0.0,
        n if n.is_multiple_of(2) => (s[mid - 1] + s[mid]) / 2.0,
        _ => s[mid],
    }
}

/// Latency of successful operations in nanoseconds, from the exactly merged histogram.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct Latency {
    pub count: u64,
    pub min_ns: u64,
    pub mean_ns: f64,
    pub stdev_ns: f64,
    pub p50_ns: u64,
    pub p90_ns: u64,
    pub p99_ns: u64,
    pub p99_9_ns: u64,
    pub p99_99_ns: u64,
    pub max_ns: u64,
    /// The whole histogram: HdrHistogram V2 with DEFLATE, base64 (any HdrHistogram library
    /// reads it).
    pub histogram: String,
}

/// What the workers of one gateway did, in a run spread over several (`s3://h1,h2/bucket`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct EndpointResult {
    pub endpoint: String,
    pub workers: usize,
    pub ops: u64,
    pub bytes: u64,
    pub errors: u64,
    /// Over the phase's measured duration, as the phase's own rates.
    pub ops_per_sec: f64,
    pub bytes_per_sec: f64,
    pub latency: Latency,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct OpKind {
    pub op: String,
    pub ops: u64,
    pub bytes: u64,
    pub ops_per_sec: f64,
    pub bytes_per_sec: f64,
    pub latency: Latency,
}

/// Per-interval counts, interval `i` covering [i * interval_s, (i + 1) * interval_s) after the
/// phase started; the last interval may be shorter.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct Series {
    pub interval_s: f64,
    pub ops: Vec<u64>,
    pub bytes: Vec<u64>,
    pub errors: Vec<u64>,
    /// Errors per interval by kind (`fine_series` only).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub errors_by_kind: BTreeMap<String, Vec<u64>>,
}

/// CPU used by the dfsbench process during the phase.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct Cpu {
    pub user_s: f64,
    pub sys_s: f64,
    /// (user + sys) / duration: 1.0 is one core busy.
    pub cores: f64,
}

/// CPU used by the watched server processes during the phase, all their threads.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct ServerCpu {
    pub pids: Vec<u32>,
    pub user_s: f64,
    pub sys_s: f64,
    /// (user + sys) / the interval between the samples around the phase: 1.0 is one core busy.
    pub cores: f64,
    /// Processes that were gone at the phase's start or end: not counted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing_pids: Vec<u32>,
    /// Processes that started during the phase (a lab's restarted daemon): all their CPU
    /// counted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub started_pids: Vec<u32>,
}

impl ServerCpu {
    /// What happened to the watched server processes during a phase, when anything did:
    /// `pid 6977 gone, pid 7012 started` (a restarted daemon: the new one is counted).
    pub fn pids_note(&self) -> Option<String> {
        let list = |pids: &[u32]| pids.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
        let mut parts = Vec::new();
        if !self.missing_pids.is_empty() {
            parts.push(format!("pid {} gone", list(&self.missing_pids)));
        }
        if !self.started_pids.is_empty() {
            parts.push(format!("pid {} started", list(&self.started_pids)));
        }
        (!parts.is_empty()).then(|| parts.join(", "))
    }
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
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct Verify {
    pub checked_bytes: u64,
    pub mismatches: u64,
}

#[cfg(test)]
mod tests;
