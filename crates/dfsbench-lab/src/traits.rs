//! What a lab system is: a name, a code, its packages, and the layouts it runs in (a cluster
//! in network namespaces, one host on 127.0.0.1, or both).

use std::path::Path;

use crate::local::Local;
use crate::state::State;
use crate::Result;

/// One storage system. Adding a system is one module implementing this and one line in
/// `systems()`.
pub trait System {
    /// The lab name (`dfsbench lab up NAME`).
    fn name(&self) -> &'static str;
    /// Short code for interface names (a few letters).
    fn code(&self) -> &'static str;
    /// What it runs, one line (the help and the table of docs/lab.md).
    fn summary(&self) -> &'static str;
    /// Debian packages it needs: `NAME` or `NAME=VERSION` (the version it was tested with).
    fn packages(&self) -> &'static [&'static str];
    /// Debian packages a layout installs on first use, or that come with `packages` (for a
    /// fresh-machine check to purge them too).
    fn later_packages(&self) -> &'static [&'static str] {
        &[]
    }
    /// Install what does not come from Debian (into the project's cache); what was installed now.
    fn install_other(&self) -> Result<Vec<String>> {
        Ok(Vec::new())
    }
    /// Its multi-node layouts, if it has any.
    fn cluster(&self) -> Option<&dyn Cluster> {
        None
    }
    /// Its single-host layouts, if it has any.
    fn local(&self) -> Option<&dyn Local> {
        None
    }
    /// Every layout, its cluster layouts first.
    fn all_layouts(&self) -> Vec<&'static str> {
        let cluster = self.cluster().map(|c| c.layouts()).unwrap_or_default();
        let local = self.local().map(|l| l.layouts()).unwrap_or_default();
        cluster.iter().chain(local).copied().collect()
    }
}

/// A system's multi-node layouts: each node a network namespace on the lab's bridge.
pub trait Cluster {
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
    /// The FUSE client of the layout's file-system target: the command that mounts it at `mnt`
    /// in the foreground, with its logs in `logs`. None when the layout has none (object
    /// stores and HDFS are reached by address). The root namespace and every client node each
    /// run one of their own.
    fn fuse_client(&self, _state: &State, _mnt: &str, _logs: &Path) -> Option<Vec<String>> {
        None
    }
    /// Ok(None) when every copy exists again; Ok(Some(why)) while not.
    fn probe(&self, state: &State) -> Result<Option<String>>;
}
