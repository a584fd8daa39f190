//! The lab: real multi-node storage clusters on one machine. Each node is a network namespace
//! on a bridge (addresses from 198.18.0.0/15), the client is the root namespace. One module per
//! system behind the [`System`] trait; the shared pieces (namespaces, state files, processes,
//! faults, delay) live here and in `net`, `state`, `sys` and `delay`.

mod alluxio;
mod ceph;
pub mod delay;
mod gluster;
mod hdfs;
mod minio;
mod moosefs;
pub mod net;
pub mod state;
mod swift;
pub mod sys;

use std::fs;
use std::time::Duration;

use serde::Serialize;

pub use state::{labs_dir, NodeState, State, LAB_DIR_ENV};
pub use sys::PidRecord;

/// A lab failure, one line each: what the user asked for is wrong (an unknown system, layout,
/// node or delay: the CLI exits with 2), or the lab could not do it (a command failed, a
/// daemon did not come up: exit 1).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Runtime(String),
}

impl Error {
    pub fn usage(message: String) -> Error {
        Error::Usage(message)
    }
    pub fn runtime(message: String) -> Error {
        Error::Runtime(message)
    }
    /// True when the user's input was wrong, not the lab.
    pub fn is_usage(&self) -> bool {
        matches!(self, Error::Usage(_))
    }
}

pub type Result<T> = std::result::Result<T, Error>;

/// One storage system. Adding a system is one module implementing this.
pub trait System {
    /// The lab name (`dfsbench lab up NAME`).
    fn name(&self) -> &'static str;
    /// Short code for interface names (a few letters).
    fn code(&self) -> &'static str;
    /// Debian packages it needs.
    fn packages(&self) -> &'static [&'static str];
    /// Install what does not come from Debian (into the project's cache); what was installed now.
    fn install_other(&self) -> Result<Vec<String>> {
        Ok(Vec::new())
    }
    /// The layouts it accepts, the first being the default.
    fn layouts(&self) -> &'static [&'static str];
    /// The role of each node for a layout (node1 first).
    fn nodes(&self, layout: &str) -> Vec<&'static str>;
    /// Start the daemons on the prepared nodes, create the file system and mount it.
    fn up(&self, state: &mut State) -> Result<()>;
    /// Switch a running lab to another layout in place (true), or say it cannot (false: `up`
    /// starts it again from nothing).
    fn relayout(&self, _state: &mut State, _layout: &str) -> Result<bool> {
        Ok(false)
    }
    /// Start one node's daemons again (after kill or wipe) and let it rejoin.
    fn start_node(&self, state: &mut State, node: &str) -> Result<()>;
    /// Delete one node's data (its daemons are already down), so `start_node` starts it empty.
    fn wipe_node(&self, state: &State, node: &str) -> Result<()>;
    /// Called after `start_node` that followed a wipe: make the cluster use the empty node again.
    fn rejoin_wiped(&self, state: &mut State, node: &str) -> Result<()>;
    /// URIs dfsbench runs against.
    fn targets(&self, state: &State) -> Vec<String>;
    /// What else a user of the targets needs to know (endpoints, credentials), one line each.
    fn notes(&self, _state: &State) -> Vec<String> {
        Vec::new()
    }
    /// The environment a client of `target` (one of `targets`) needs: the lab's credentials,
    /// which a `lab:` target hands to the run so that nobody has to copy them.
    fn target_env(&self, _state: &State, _target: &str) -> Vec<(&'static str, String)> {
        Vec::new()
    }
    /// Ok(None) when every copy exists again; Ok(Some(why)) while not.
    fn probe(&self, state: &State) -> Result<Option<String>>;
}

pub fn systems() -> Vec<Box<dyn System>> {
    vec![
        Box::new(gluster::Gluster),
        Box::new(moosefs::MooseFs),
        Box::new(minio::Minio),
        Box::new(swift::Swift),
        Box::new(hdfs::Hdfs),
        Box::new(ceph::Ceph),
        Box::new(alluxio::Alluxio),
    ]
}

/// Systems named in issue 16 that this version does not run yet.
const LATER: &[&str] = &["seaweedfs"];

/// Names that are a layout of another system: `lab up s3fs` is `lab up minio --layout s3fs`
/// (the s3fs mount over the lab's distributed MinIO).
fn layout_alias(name: &str) -> Option<(&'static str, &'static str)> {
    (name == "s3fs").then_some(("minio", "s3fs"))
}

pub fn system(name: &str) -> Result<Box<dyn System>> {
    let name = if name == "glusterfs" {
        "gluster"
    } else if name == "mfs" {
        "moosefs"
    } else if let Some((system, _)) = layout_alias(name) {
        system
    } else {
        name
    };
    if let Some(s) = systems().into_iter().find(|s| s.name() == name) {
        return Ok(s);
    }
    let known: Vec<&str> = systems().iter().map(|s| s.name()).collect();
    let later = if LATER.contains(&name) {
        " (not in the lab yet)"
    } else {
        ""
    };
    Err(Error::usage(format!(
        "unknown lab system {name:?}{later}; the lab runs: {}",
        known.join(", ")
    )))
}

/// Check root, network namespaces and /dev/fuse before touching anything.
pub fn preflight() -> Result<()> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err(Error::runtime(
            "the lab needs root (network namespaces, FUSE mounts, apt-get): run as root".into(),
        ));
    }
    if !std::path::Path::new("/dev/fuse").exists() {
        return Err(Error::runtime("the lab needs /dev/fuse for its client mounts".into()));
    }
    if !std::path::Path::new("/proc/self/ns/net").exists() {
        return Err(Error::runtime("this kernel has no network namespaces".into()));
    }
    Ok(())
}

/// Install what a system needs (idempotent); returns the packages installed now.
pub fn install(name: &str) -> Result<Vec<String>> {
    preflight()?;
    let sys = system(name)?;
    let mut packages = vec!["iproute2", "iptables", "util-linux", "iputils-ping", "fuse3"];
    packages.extend_from_slice(sys.packages());
    let mut installed = sys::apt_install(&packages)?;
    installed.extend(sys.install_other()?);
    Ok(installed)
}

/// Bring a lab up (idempotent: a lab that is up is left as it is).
pub fn up(name: &str, layout: Option<&str>) -> Result<State> {
    preflight()?;
    let layout = match (layout_alias(name), layout) {
        (Some((_, alias)), Some(l)) if l != alias => {
            return Err(Error::usage(format!(
                "{name} is the layout {alias} of {}; drop --layout {l}",
                system(name)?.name()
            )))
        }
        (Some((_, alias)), _) => Some(alias),
        (None, l) => l,
    };
    let sys = system(name)?;
    let layout = match layout {
        None => sys.layouts()[0],
        Some(l) => sys.layouts().iter().copied().find(|k| *k == l).ok_or_else(|| {
            Error::usage(format!(
                "{} has no layout {l:?}; use one of: {}",
                sys.name(),
                sys.layouts().join(", ")
            ))
        })?,
    };
    if let Some(mut old) = State::load(sys.name())? {
        if old.up && health(&old).nodes_running == old.nodes.len() {
            if old.layout == layout {
                return Ok(old);
            }
            if sys.nodes(layout).len() == old.nodes.len() && sys.relayout(&mut old, layout)? {
                old.layout = layout.to_string();
                old.save()?;
                return Ok(old);
            }
        }
        // A different layout, or what a crash left: start again from nothing.
        down(sys.name())?;
    }
    install(sys.name())?;
    // Held until the bridge has its address, which claims the subnet for every later `lab up`.
    let lock = net::subnet_lock()?;
    let mut state = plan(sys.as_ref(), layout, free_subnet()?);
    state.save()?;
    let result = net::make_bridge(&state).and_then(|()| {
        drop(lock);
        build(sys.as_ref(), &mut state)
    });
    if let Err(e) = result {
        let _ = state.save();
        return Err(Error::runtime(format!(
            "{e} (what was started stays for inspection; `dfsbench lab down {}` removes it)",
            sys.name()
        )));
    }
    Ok(state)
}

/// A /24 that no lab of this directory has in its state and nothing on the machine uses.
fn free_subnet() -> Result<u8> {
    let mut used = net::used_subnets()?;
    for name in State::all_names() {
        used.extend(State::load(&name).ok().flatten().map(|s| s.subnet));
    }
    net::pick_subnet(&used).ok_or_else(|| {
        Error::runtime(
            "every /24 of 198.18.0.0/16 is in use on this machine (addresses or routes): take a lab down first".into(),
        )
    })
}

/// The id every name of a lab of this lab directory carries.
pub fn lab_id() -> String {
    net::lab_id(&sys::real_path(&labs_dir()))
}

fn plan(sys: &dyn System, layout: &str, subnet: u8) -> State {
    let name = sys.name();
    let id = lab_id();
    let mut state = State {
        name: name.to_string(),
        system: name.to_string(),
        layout: layout.to_string(),
        subnet,
        bridge: net::bridge_name(&id, sys.code()),
        id: id.clone(),
        ..State::default()
    };
    let dir = state.dir();
    state.nodes = sys
        .nodes(layout)
        .into_iter()
        .enumerate()
        .map(|(i, role)| {
            let node = format!("node{}", i + 1);
            NodeState {
                netns: net::netns_name(&id, name, &node),
                addr: net::node_addr(state.subnet, i + 1),
                veth: net::veth_name(&id, sys.code(), i + 1),
                role: role.to_string(),
                data_dir: dir.join(&node),
                name: node,
            }
        })
        .collect();
    state.data_dirs = state.nodes.iter().map(|n| n.data_dir.clone()).collect();
    state.data_dirs.push(state.mount_point());
    state
}

fn build(sys: &dyn System, state: &mut State) -> Result<()> {
    for d in &state.data_dirs {
        fs::create_dir_all(d).map_err(|e| Error::runtime(format!("cannot create {}: {e}", d.display())))?;
    }
    net::make_bridge(state)?;
    for node in &state.nodes {
        net::make_node(state, node)?;
    }
    sys.up(state)?;
    state.up = true;
    record_node_pids(state);
    state.save()
}

/// Add the daemons now running in the nodes' namespaces to the state (for `down` after a crash).
fn record_node_pids(state: &mut State) {
    for node in &state.nodes {
        for pid in sys::pids_in_netns(&node.netns) {
            if let Some(rec) = PidRecord::of(pid, &format!("{} daemon", node.name)) {
                if !state.pids.contains(&rec) {
                    state.pids.push(rec);
                }
            }
        }
    }
    state.pids.retain(|p| p.alive());
}

/// Tear a lab down: delay line, mounts, processes, iptables rules, veths, bridge, namespaces,
/// data. Works from the state file alone, whatever a crashed run left.
pub fn down(name: &str) -> Result<()> {
    preflight()?;
    let Some(state) = State::load(name)? else {
        return Ok(());
    };
    delay::remove(&state)?;
    for m in &state.mounts {
        sys::unmount(m)?;
    }
    for m in sys::mounts_under(&state.dir()) {
        sys::unmount(&m)?;
    }
    let mut pids: Vec<PidRecord> = state.pids.clone();
    for node in &state.nodes {
        pids.extend(node_pids(node));
    }
    // Stopped processes cannot act on SIGTERM until they continue.
    sys::signal_all(&pids, libc::SIGCONT, Duration::ZERO)?;
    sys::stop_all(&pids, Duration::from_secs(10))?;
    for node in &state.nodes {
        net::remove_node(node)?;
    }
    net::remove_link(&state.bridge)?;
    for d in &state.data_dirs {
        remove_data(&state, d)?;
    }
    // Logs and configs go too: `down` leaves nothing (a failed `up` keeps them until then).
    let dir = state.dir();
    if dir.starts_with(labs_dir()) && dir != labs_dir() {
        fs::remove_dir_all(&dir)
            .or_else(|e| {
                if e.kind() == std::io::ErrorKind::NotFound {
                    Ok(())
                } else {
                    Err(e)
                }
            })
            .map_err(|e| Error::runtime(format!("cannot delete {}: {e}", dir.display())))?;
    }
    Ok(())
}

/// Delete a data directory, only inside the lab's own directory.
fn remove_data(state: &State, dir: &std::path::Path) -> Result<()> {
    let dir = &sys::real_path(dir);
    if !dir.starts_with(state.dir()) || dir == &state.dir() {
        return Err(Error::runtime(format!(
            "refusing to delete {}: not inside the lab directory {}",
            dir.display(),
            state.dir().display()
        )));
    }
    match fs::remove_dir_all(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(Error::runtime(format!("cannot delete {}: {e}", dir.display())))
        }
        _ => Ok(()),
    }
}

/// What `down --all` did: the labs of this lab directory it took down, and the lab-prefixed
/// namespaces and interfaces on the machine it left alone.
#[derive(Debug, Default)]
pub struct Swept {
    pub removed: Vec<String>,
    pub left_alone: Vec<String>,
}

/// Every lab with a state file in this lab directory, and nothing else: namespaces and
/// interfaces that no state file here names belong to other lab directories (another checkout,
/// CI, another user) or to a crash, and are only reported.
pub fn down_all() -> Result<Swept> {
    preflight()?;
    let mut removed = Vec::new();
    for name in State::all_names() {
        down(&name)?;
        removed.push(name);
    }
    Ok(Swept {
        removed,
        left_alone: left_alone(),
    })
}

/// One line for each lab-prefixed namespace or interface on the machine that no state file of
/// this lab directory names.
pub fn left_alone() -> Vec<String> {
    let states: Vec<State> = State::all_names()
        .iter()
        .filter_map(|n| State::load(n).ok().flatten())
        .collect();
    let named = |what: &str| {
        states
            .iter()
            .any(|s| s.bridge == what || s.nodes.iter().any(|n| n.netns == what || n.veth == what))
    };
    let dir = labs_dir();
    let netns = net::prefixed_netns().into_iter().map(|n| ("namespace", n));
    let links = net::prefixed_links().into_iter().map(|n| ("interface", n));
    netns
        .chain(links)
        .filter(|(_, n)| !named(n))
        .map(|(kind, n)| format!("left alone: {kind} {n} (no state file in {} names it)", dir.display()))
        .collect()
}

/// The daemons of a node right now (everything in its namespace).
pub fn node_pids(node: &NodeState) -> Vec<PidRecord> {
    sys::pids_in_netns(&node.netns)
        .into_iter()
        .filter_map(|p| PidRecord::of(p, &node.name))
        .collect()
}

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
    let mut state = loaded(sys.name())?;
    let n = state.node(node)?.clone();
    let pids = node_pids(&n);
    match fault {
        "kill" => sys::signal_all(&pids, libc::SIGKILL, Duration::from_secs(20))?,
        "stop" => sys::signal_all(&pids, libc::SIGSTOP, Duration::ZERO)?,
        "cont" => sys::signal_all(&pids, libc::SIGCONT, Duration::ZERO)?,
        "restart" => {
            sys::signal_all(&pids, libc::SIGCONT, Duration::ZERO)?;
            sys::stop_all(&pids, Duration::from_secs(10))?;
            sys.start_node(&mut state, node)?;
        }
        "wipe" => {
            sys::signal_all(&pids, libc::SIGKILL, Duration::from_secs(20))?;
            sys.wipe_node(&state, node)?;
            sys.start_node(&mut state, node)?;
            sys.rejoin_wiped(&mut state, node)?;
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
}

impl Role {
    /// The node roles (as `nodes()` names them) that do this.
    fn roles(self) -> &'static [&'static str] {
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
        }
    }
}

/// The node of lab `name` to take out as `role`: the last one that has it, so that the node
/// the client was pointed at (node1: the volfile server, the S3 endpoint) stays up. None when
/// the system has no such node (GlusterFS and MinIO have no metadata server).
pub fn node_for(name: &str, role: Role) -> Result<Option<String>> {
    let state = loaded(system(name)?.name())?;
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
    let mut state = loaded(system(name)?.name())?;
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
    let state = loaded(sys.name())?;
    sys.probe(&state)
}

pub fn loaded(name: &str) -> Result<State> {
    State::load(name)?
        .filter(|s| s.up)
        .ok_or_else(|| Error::usage(format!("lab {name} is not up; start it with `dfsbench lab up {name}`")))
}

/// What an S3 client of a lab's `s3://` target needs: its keys and region (nothing for its
/// other targets).
pub(crate) fn s3_env(target: &str, key: &str, secret: &str, region: &str) -> Vec<(&'static str, String)> {
    if !target.starts_with("s3://") {
        return Vec::new();
    }
    vec![
        ("AWS_ACCESS_KEY_ID", key.into()),
        ("AWS_SECRET_ACCESS_KEY", secret.into()),
        ("AWS_REGION", region.into()),
    ]
}

/// The target kinds a `lab:NAME-KIND` target can ask for.
const TARGET_KINDS: &[&str] = &["fs", "s3", "swift", "hdfs", "webhdfs", "alluxio"];

/// A lab's target as a run uses it.
#[derive(Debug, Clone, Default)]
pub struct LabTarget {
    /// The lab's name, as `lab fault NAME` takes it.
    pub lab: String,
    pub uri: String,
    /// Variables the target's client needs (credentials, the HDFS user).
    pub env: Vec<(&'static str, String)>,
    /// The lab's nodes, for the null tests.
    pub nodes: Vec<TargetNode>,
    /// `lab limit`'s rate on every node link, each way (`100mbit`).
    pub rate: Option<String>,
}

/// A lab node as a run's null tests measure it.
#[derive(Debug, Clone, Default)]
pub struct TargetNode {
    pub name: String,
    pub addr: String,
    pub netns: String,
    /// The lowest TCP port the node's daemons listen on; None when none runs.
    pub port: Option<u16>,
    /// The client's reads of the target come from this node: a gateway the target's URI
    /// names (S3, Swift, Alluxio's proxy), else a node that holds data (Role::Storage).
    pub serves_data: bool,
}

/// The nodes of lab `name` as a client of its target `uri` sees them now (a restart may
/// change a daemon's ports).
pub fn target_nodes(name: &str, uri: &str) -> Result<(Vec<TargetNode>, Option<String>)> {
    let state = loaded(system(name)?.name())?;
    Ok((nodes_of(&state, uri), state.rate.clone()))
}

fn nodes_of(state: &State, uri: &str) -> Vec<TargetNode> {
    state
        .nodes
        .iter()
        .map(|n| TargetNode {
            name: n.name.clone(),
            addr: n.addr.clone(),
            netns: n.netns.clone(),
            port: node_pids(n)
                .first()
                .and_then(|p| sys::listening_ports(p.pid).first().copied()),
            serves_data: serves_reads(uri, &n.addr, &n.role),
        })
        .collect()
}

/// Whether a client of `uri` reads through the node at `addr`: through a gateway target
/// (S3, Swift, Alluxio's REST proxy) only from the gateways the URI names; from a file
/// system or HDFS, from every node that holds data.
fn serves_reads(uri: &str, addr: &str, role: &str) -> bool {
    let gateway = ["s3://", "swift://", "alluxio://"].iter().any(|k| uri.starts_with(k));
    if gateway {
        ["/", ","]
            .iter()
            .any(|before| uri.contains(&format!("{before}{addr}:")))
    } else {
        Role::Storage.roles().contains(&role)
    }
}

/// The PIDs of the node daemons of lab `name` as they are now (a restart gives new ones).
pub fn running_pids(name: &str) -> Result<Vec<u32>> {
    Ok(daemon_pids(&loaded(system(name)?.name())?))
}

fn daemon_pids(state: &State) -> Vec<u32> {
    state.nodes.iter().flat_map(node_pids).map(|p| p.pid as u32).collect()
}

/// A `lab:NAME[-KIND]` target (the part after `lab:`): the lab's target of that kind (`fs`: its
/// FUSE mount; `s3`, `swift`, `hdfs`, `webhdfs`, `alluxio`: that endpoint; no kind: its first
/// target).
pub fn resolve_target(spec: &str) -> Result<LabTarget> {
    let (name, kind) = match spec.rsplit_once('-') {
        Some((name, kind)) if TARGET_KINDS.contains(&kind) => (name, Some(kind)),
        _ => (spec, None),
    };
    let sys = system(name)?;
    let state = loaded(sys.name())?;
    let targets = sys.targets(&state);
    let found = match kind {
        None => targets.first(),
        Some("fs") => targets.iter().find(|t| t.starts_with("file://")),
        Some(kind) => targets.iter().find(|t| t.starts_with(&format!("{kind}://"))),
    };
    let uri = found.ok_or_else(|| {
        Error::usage(format!(
            "lab:{spec}: the {name} lab has no {} target; its targets: {}",
            kind.unwrap_or("such"),
            targets.join(", ")
        ))
    })?;
    Ok(LabTarget {
        lab: sys.name().to_string(),
        uri: uri.clone(),
        env: sys.target_env(&state, uri),
        nodes: nodes_of(&state, uri),
        rate: state.rate.clone(),
    })
}

#[derive(Serialize, Debug)]
pub struct NodeStatus {
    pub name: String,
    pub role: String,
    pub netns: String,
    pub addr: String,
    pub link: &'static str,
    /// running, stopped (SIGSTOP) or down
    pub state: &'static str,
    pub pids: Vec<i32>,
}

#[derive(Serialize, Debug)]
pub struct LabStatus {
    pub name: String,
    pub system: String,
    pub layout: String,
    /// The id of the lab directory in the lab's names, and its bridge.
    pub id: String,
    pub bridge: String,
    pub client_addr: String,
    pub targets: Vec<String>,
    /// Endpoints, credentials and the like that go with the targets.
    pub notes: Vec<String>,
    pub mounts: Vec<String>,
    pub delay_ms: f64,
    /// The bandwidth limit of every node link, each way (`lab limit`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate: Option<String>,
    pub nodes: Vec<NodeStatus>,
    /// "ok" when every node runs and the probe finds every copy; else what is missing.
    pub health: String,
    #[serde(skip)]
    pub nodes_running: usize,
}

fn health(state: &State) -> LabStatus {
    let nodes: Vec<NodeStatus> = state
        .nodes
        .iter()
        .map(|n| {
            let pids = node_pids(n);
            let run_state = if pids.is_empty() {
                "down"
            } else if pids.iter().all(|p| p.stopped()) {
                "stopped"
            } else {
                "running"
            };
            NodeStatus {
                name: n.name.clone(),
                role: n.role.clone(),
                netns: n.netns.clone(),
                addr: n.addr.clone(),
                link: if net::link_up(&n.veth) { "up" } else { "down" },
                state: run_state,
                pids: pids.iter().map(|p| p.pid).collect(),
            }
        })
        .collect();
    let nodes_running = nodes.iter().filter(|n| n.state == "running").count();
    LabStatus {
        name: state.name.clone(),
        system: state.system.clone(),
        layout: state.layout.clone(),
        id: state.id.clone(),
        bridge: state.bridge.clone(),
        client_addr: net::client_addr(state.subnet),
        targets: Vec::new(),
        notes: Vec::new(),
        mounts: state.mounts.clone(),
        delay_ms: state.delay_us as f64 / 1000.0,
        rate: state.rate.clone(),
        nodes,
        health: String::new(),
        nodes_running,
    }
}

/// Status of every lab that is up (or of one).
pub fn status(only: Option<&str>) -> Result<Vec<LabStatus>> {
    let names = match only {
        Some(n) => vec![system(n)?.name().to_string()],
        None => State::all_names(),
    };
    let mut out = Vec::new();
    for name in names {
        let Some(state) = State::load(&name)? else { continue };
        let mut st = health(&state);
        let sys = system(&state.system)?;
        st.targets = sys.targets(&state);
        st.notes = sys.notes(&state);
        let down: Vec<&str> = st
            .nodes
            .iter()
            .filter(|n| n.state != "running" || n.link != "up")
            .map(|n| n.name.as_str())
            .collect();
        st.health = if !state.up {
            "not up (a failed or interrupted `lab up`; `lab down` cleans it)".into()
        } else if !down.is_empty() {
            format!("degraded: {} not serving", down.join(", "))
        } else {
            match sys.probe(&state) {
                Ok(None) => "ok".into(),
                Ok(Some(why)) => format!("recovering: {why}"),
                Err(e) => format!("unknown: {e}"),
            }
        };
        out.push(st);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::serves_reads;

    #[test]
    fn reads_come_from_the_gateways_a_target_names_else_from_the_data_nodes() {
        let s3 = "s3://dfsbench/lab?endpoint=http://198.18.3.2:9000";
        assert!(serves_reads(s3, "198.18.3.2", "minio"));
        assert!(
            !serves_reads(s3, "198.18.3.3", "minio"),
            "a drive set behind the gateway"
        );
        assert!(
            !serves_reads(s3, "198.18.3.20", "minio"),
            "an address the gateway's begins"
        );
        let swift = "swift://198.18.5.2:8080,198.18.5.3:8080/c?auth=http://198.18.5.2:8080/auth/v1.0";
        assert!(serves_reads(swift, "198.18.5.3", "storage+proxy"));
        assert!(!serves_reads(swift, "198.18.5.4", "storage+proxy"));
        let mount = "file:///var/lib/dfsbench/labs/moosefs/mnt";
        assert!(serves_reads(mount, "198.18.2.3", "chunkserver"));
        assert!(!serves_reads(mount, "198.18.2.2", "master"));
        assert!(serves_reads("hdfs://198.18.6.2:8020/d", "198.18.6.3", "datanode"));
        assert!(!serves_reads("hdfs://198.18.6.2:8020/d", "198.18.6.2", "namenode"));
    }
}
