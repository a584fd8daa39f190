//! What a lab has created, on disk as `<lab dir>/NAME/state.json`, written before each resource
//! is made so a crashed run can still be cleaned up from it.

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::sys::PidRecord;
use crate::{Error, Result};

/// Overrides the directory holding every lab's state and data.
pub(crate) const LAB_DIR_ENV: &str = "DFSBENCH_LAB_DIR";
const DEFAULT_LAB_DIR: &str = "/var/lib/dfsbench/labs";

#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct NodeState {
    /// node1..N
    pub name: String,
    pub netns: String,
    pub addr: String,
    /// The root-namespace end of the node's veth pair (on the lab's bridge).
    pub(crate) veth: String,
    /// What the node runs, e.g. "brick", "master", "chunkserver".
    pub(crate) role: String,
    pub(crate) data_dir: PathBuf,
}

impl NodeState {
    /// The node's daemons right now (everything in its namespace).
    pub(crate) fn pids(&self) -> Vec<PidRecord> {
        crate::sys::pids_in_netns(&self.netns)
            .into_iter()
            .filter_map(|p| PidRecord::of(p, &self.name))
            .collect()
    }
}

#[derive(Serialize, Deserialize, Debug, Clone, Default)]
pub struct State {
    pub name: String,
    pub(crate) system: String,
    pub(crate) layout: String,
    /// The id of the lab directory in every name the lab gives (`net::lab_id`); empty in state
    /// files of older versions, whose names are recorded as they were.
    #[serde(default)]
    pub(crate) id: String,
    /// The third octet of the lab's /24 in 198.18.0.0/16, picked by `net::pick_subnet`.
    pub(crate) subnet: u8,
    pub(crate) bridge: String,
    pub nodes: Vec<NodeState>,
    /// Processes in the root namespace (FUSE clients, delayers); node daemons are found by
    /// their namespace, and recorded here too.
    pub(crate) pids: Vec<PidRecord>,
    pub(crate) mounts: Vec<String>,
    pub(crate) data_dirs: Vec<PathBuf>,
    /// iptables rules added in the root namespace, as `-A` argument lists (to delete with -D).
    pub(crate) root_rules: Vec<Vec<String>>,
    pub(crate) delay_us: u64,
    /// `lab limit`'s bandwidth per link, each way.
    #[serde(default)]
    pub(crate) rate: Option<String>,
    pub(crate) delayers: Vec<PidRecord>,
    pub(crate) up: bool,
    /// Client nodes (`lab up --clients N`), each with its own FUSE client of the file system.
    #[serde(default)]
    pub clients: Vec<ClientNode>,
    /// A Slurm cluster runs on the client nodes (`lab up --slurm`).
    #[serde(default)]
    pub(crate) slurm: bool,
}

/// A client node: a network namespace on the bridge like a storage node, with its own host
/// name and mount namespace, which `holder` keeps (entering the node is entering it).
#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct ClientNode {
    #[serde(flatten)]
    pub node: NodeState,
    /// `sleep infinity` in the node's UTS and mount namespaces; None until it started.
    pub(crate) holder: Option<PidRecord>,
}

/// The directory holding all labs: $DFSBENCH_LAB_DIR, else /var/lib/dfsbench/labs. A lab's
/// namespaces and addresses belong to the whole machine, so its state must not depend on the
/// directory a command runs in.
pub(crate) fn labs_dir() -> PathBuf {
    match std::env::var_os(LAB_DIR_ENV).filter(|d| !d.is_empty()) {
        Some(dir) => crate::sys::real_path(Path::new(&dir)),
        None => PathBuf::from(DEFAULT_LAB_DIR),
    }
}

impl State {
    pub(crate) fn dir(&self) -> PathBuf {
        labs_dir().join(&self.name)
    }

    pub(crate) fn mount_point(&self) -> PathBuf {
        self.dir().join("mnt")
    }

    /// The storage nodes and the client nodes.
    pub(crate) fn all_nodes(&self) -> impl Iterator<Item = &NodeState> {
        self.nodes.iter().chain(self.clients.iter().map(|c| &c.node))
    }

    pub(crate) fn client(&self, name: &str) -> Option<&ClientNode> {
        self.clients.iter().find(|c| c.node.name == name)
    }

    /// A storage or client node by name.
    pub(crate) fn node(&self, name: &str) -> Result<&NodeState> {
        self.all_nodes().find(|n| n.name == name).ok_or_else(|| {
            let names: Vec<&str> = self.all_nodes().map(|n| n.name.as_str()).collect();
            Error::usage(format!(
                "lab {} has no node {name}; its nodes are {}",
                self.name,
                names.join(", ")
            ))
        })
    }

    /// The state of lab `name`, which must be up.
    pub fn loaded(name: &str) -> Result<State> {
        State::load(name)?
            .filter(|s| s.up)
            .ok_or_else(|| Error::usage(format!("lab {name} is not up; start it with `dfsbench lab up {name}`")))
    }

    pub(crate) fn path(name: &str) -> PathBuf {
        labs_dir().join(name).join("state.json")
    }

    pub(crate) fn load(name: &str) -> Result<Option<State>> {
        let path = State::path(name);
        match fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text)
                .map(Some)
                .map_err(|e| Error::runtime(format!("{} is not a lab state file ({e}); delete it", path.display()))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::runtime(format!("cannot read {}: {e}", path.display()))),
        }
    }

    /// Write atomically (a unique temp file renamed over it): a crash never leaves half a
    /// state file, and no file of another name is touched.
    pub(crate) fn save(&self) -> Result<()> {
        let text = serde_json::to_string_pretty(self).expect("state serializes");
        crate::sys::write(&State::path(&self.name), &text)
    }

    /// Names of the labs with a state file.
    pub(crate) fn all_names() -> Vec<String> {
        let Ok(dir) = fs::read_dir(labs_dir()) else {
            return Vec::new();
        };
        let mut names: Vec<String> = dir
            .filter_map(|e| e.ok())
            .filter(|e| e.path().join("state.json").is_file())
            .filter_map(|e| e.file_name().to_str().map(String::from))
            .collect();
        names.sort();
        names
    }
}
