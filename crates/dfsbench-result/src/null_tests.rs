//! The null tests: what the hardware under a run can do at most (local disk, the link to each
//! node of the target, round trips), measured before the jobs.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::units::MIB;

/// Null tests, measured before the jobs.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct NullTests {
    /// A temporary file in the local temp directory: write + fsync, read with its pages
    /// dropped from the page cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_disk: Option<Bandwidth>,
    /// A copy from one buffer in memory to another, larger than the CPU's caches: what no
    /// read or write of this client can beat, since each moves its data through memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_copy: Option<NodeBandwidth>,
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
    const MEASURED: &'static str = "measured";

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
