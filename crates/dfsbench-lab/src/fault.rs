//! What a study does to a running cluster: faults on one node, a bandwidth limit on every
//! link, the recovery probe, and which node plays which role.

use std::time::Duration;

use crate::cluster::{cluster_of, record_node_pids};
use crate::state::State;
use crate::sys::preflight;
use crate::{net, sys, system, Error, Result};

/// The faults `dfsbench lab fault NAME FAULT NODE` knows.
pub const FAULTS: &[&str] = &[
    "kill",
    "stop",
    "cont",
    "restart",
    "wipe",
    "cut-link",
    "partition",
    "heal-link",
];

pub fn fault(name: &str, fault: &str, node: &str) -> Result<()> {
    preflight()?;
    let sys = system(name)?;
    let cl = cluster_of(sys.as_ref())?;
    let mut state = State::loaded(sys.name())?;
    let n = state.node(node)?.clone();
    let pids = n.pids();
    let client = state.client(node).is_some();
    match fault {
        // A client node holds no data: it starts again with a new mount, and kill takes
        // everything on it (its FUSE client, its ranks) as a power cut would.
        "restart" if client => crate::clients::start(cl, &mut state, node)?,
        "wipe" if client => {
            return Err(Error::usage(format!(
                "{node} is a client node and holds no data: use kill, restart, stop, cont or the link faults"
            )))
        }
        "kill" => sys::signal_all(&pids, libc::SIGKILL, Duration::from_secs(20))?,
        "stop" => sys::signal_all(&pids, libc::SIGSTOP, Duration::ZERO)?,
        "cont" => sys::signal_all(&pids, libc::SIGCONT, Duration::ZERO)?,
        "restart" => {
            sys::signal_all(&pids, libc::SIGCONT, Duration::ZERO)?;
            sys::stop_all(&pids, Duration::from_secs(10))?;
            cl.start_node(&mut state, node)?;
        }
        "wipe" => {
            sys::signal_all(&pids, libc::SIGKILL, Duration::from_secs(20))?;
            cl.wipe_node(&state, node)?;
            cl.start_node(&mut state, node)?;
            cl.rejoin_wiped(&mut state, node)?;
        }
        "cut-link" => net::set_link(&n, false)?,
        "partition" => net::blackhole(&state, &n, true)?,
        "heal-link" => {
            net::set_link(&n, true)?;
            net::blackhole(&state, &n, false)?;
        }
        other => {
            return Err(Error::usage(format!(
                "unknown fault {other:?}; use one of: {}",
                FAULTS.join(", ")
            )))
        }
    }
    record_node_pids(&mut state);
    state.save()
}

/// What a node is to a study that takes out "a storage server" or "the metadata server".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Holds data: a brick, chunkserver, DataNode, OSD, MinIO drive set, Swift object node,
    /// Alluxio worker (a cache over the under store).
    Storage,
    /// Holds the namespace: MooseFS's master, HDFS's NameNode, Ceph's mon and MDS, Alluxio's
    /// master.
    Metadata,
    /// A client node (`lab up --clients N`) that runs one of the run's processes: the second
    /// one, as rank 0 runs on the first.
    Client,
}

impl Role {
    /// The node roles (as `nodes()` names them) that do this.
    pub(crate) fn roles(self) -> &'static [&'static str] {
        match self {
            Role::Storage => &[
                "brick",
                "chunkserver",
                "datanode",
                "osd",
                "minio",
                "storage",
                "storage+proxy",
                "worker",
            ],
            Role::Metadata => &["master", "namenode", "mon+mgr+mds+rgw", "master+proxy"],
            Role::Client => &["client"],
        }
    }
}

/// The node of lab `name` to take out as `role`: the last one that has it, so that the node
/// the client was pointed at (node1: the volfile server, the S3 endpoint) stays up; client2
/// for a client. None when the lab has no such node (GlusterFS and MinIO have no metadata
/// server; a lab without `--clients 2` has no client to lose).
pub fn node_for(name: &str, role: Role) -> Result<Option<String>> {
    let state = State::loaded(system(name)?.name())?;
    if role == Role::Client {
        return Ok(state.clients.get(1).map(|c| c.node.name.clone()));
    }
    Ok(state
        .nodes
        .iter()
        .rev()
        .find(|n| role.roles().contains(&n.role.as_str()))
        .map(|n| n.name.clone()))
}

/// Limit every node link of lab `name` to `rate` each way (tc units: 100mbit, 1gbit); "0"
/// removes the limit.
pub fn limit(name: &str, rate: &str) -> Result<()> {
    preflight()?;
    let mut state = State::loaded(system(name)?.name())?;
    let valid = rate
        .strip_suffix("gbit")
        .or_else(|| rate.strip_suffix("mbit"))
        .or_else(|| rate.strip_suffix("kbit"))
        .is_some_and(|n| n.parse::<f64>().is_ok_and(|v| v > 0.0));
    if rate != "0" && !valid {
        return Err(Error::usage(format!(
            "bad rate {rate:?}: give a bandwidth per link such as 100mbit, 1gbit or 500kbit, or 0 to remove the limit"
        )));
    }
    let rate = (rate != "0").then_some(rate);
    net::limit(&state, rate)?;
    state.rate = rate.map(str::to_string);
    state.save()
}

pub fn probe(name: &str) -> Result<Option<String>> {
    preflight()?;
    let sys = system(name)?;
    let state = State::loaded(sys.name())?;
    cluster_of(sys.as_ref())?.probe(&state)
}
