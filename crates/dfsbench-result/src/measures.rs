//! A phase's measurements besides its totals: latency, errors, the stonewall window, the
//! per-second series, CPU, the per-operation and per-gateway figures, the open-loop rate, and
//! what was done about the page cache before a read phase.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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
    #[serde(default, skip_serializing_if = "crate::is_zero")]
    pub failed: u64,
    /// The kernel's page, dentry and inode caches were dropped as well (`--drop-caches`).
    #[serde(default)]
    pub dropped_kernel_caches: bool,
    /// The first failure, when there was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Reads in the phase of a file that the same worker had already read or written in it
    /// (time-based reads go round their files, a mix reads its pool again), over every process.
    #[serde(default, skip_serializing_if = "crate::is_zero")]
    pub rereads: u64,
    /// Of those, the ones whose file was written back and dropped again just before it, as
    /// before the phase: inside the phase's wall time, outside every operation's latency.
    #[serde(default, skip_serializing_if = "crate::is_zero")]
    pub reread_invalidations: u64,
    /// Seconds those drops took, summed over workers: time of the phase in which its workers
    /// read nothing.
    #[serde(default, skip_serializing_if = "crate::is_zero_f64")]
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
    /// Train epochs: nanoseconds the emulated accelerators computed, and waited for data, in
    /// each interval, summed over them; AU over time is compute / (compute + wait).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub compute_ns: Vec<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wait_ns: Vec<u64>,
}

impl Series {
    /// Interval by interval, the emulated accelerators' utilization (train epochs): None for an
    /// interval in which they neither computed nor waited.
    pub fn au(&self) -> Vec<Option<f64>> {
        let len = self.compute_ns.len().max(self.wait_ns.len());
        let at = |v: &[u64], i: usize| v.get(i).copied().unwrap_or(0);
        (0..len)
            .map(|i| {
                let (c, w) = (at(&self.compute_ns, i), at(&self.wait_ns, i));
                (c + w > 0).then(|| crate::au(c, w))
            })
            .collect()
    }
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

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct Verify {
    pub checked_bytes: u64,
    pub mismatches: u64,
}
