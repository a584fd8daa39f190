//! Where a run came from: the tool, the host, the target and, for a run of several
//! processes, who they were.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::LinkCapacity;

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
    /// Ranks lost during the run that the others went on without (`--rank-loss continue`);
    /// a lost rank's figures after its loss, and in the phase it was lost in, are missing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lost: Vec<LostRank>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct LostRank {
    pub rank: usize,
    pub host: String,
    pub pid: u32,
    /// When its connection to rank 0 closed, or rank 0 gave up waiting for it, on the run's
    /// clock.
    pub at_s: f64,
    /// The step rank 0 was at when it found the rank gone, e.g. `phase 'write'`.
    pub during: String,
    /// How it was lost: its exit, or the wait that ran out.
    pub why: String,
    /// The phase it was measuring when lost, if any, and its totals in that phase as of its
    /// last progress report (every 0.1 s): work it did that is not in that phase's figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    pub ops: u64,
    pub bytes: u64,
    pub errors: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Member {
    pub rank: usize,
    pub host: String,
    pub pid: u32,
    /// The shortest round trip of the clock exchange with rank 0 at the start, as rank 0
    /// timed it: this rank's times are on rank 0's clock to within half of it (absent for
    /// rank 0, and in results of older versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_rtt_s: Option<f64>,
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
