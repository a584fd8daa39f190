//! MooseFS: the master on node1, a chunkserver on each further node, mfsmount in the root
//! namespace. Chunkservers refuse a master on 127.0.0.0/8, which the namespaces avoid.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::state::{NodeState, State};
use crate::sys::{self, render, run, run_in, spawn_in, wait_for};
use crate::{Cluster, Error, Result, System};

const MASTER_CFG: &str = include_str!("mfsmaster.cfg");
const EXPORTS_CFG: &str = include_str!("mfsexports.cfg");
const CHUNKSERVER_CFG: &str = include_str!("mfschunkserver.cfg");
const EMPTY_METADATA: &str = "/var/lib/mfs/metadata.mfs.empty";
/// Copies of each chunk: one chunkserver can go and every chunk still has a copy.
const GOAL: &str = "2";

pub(crate) struct MooseFs;

fn master(state: &State) -> &NodeState {
    &state.nodes[0]
}

fn chunks_dir(node: &NodeState) -> PathBuf {
    node.data_dir.join("chunks")
}

fn meta_dir(node: &NodeState) -> PathBuf {
    node.data_dir.join("meta")
}

fn mkdirs(dirs: &[PathBuf]) -> Result<()> {
    for d in dirs {
        fs::create_dir_all(d).map_err(|e| Error::runtime(format!("cannot create {}: {e}", d.display())))?;
    }
    Ok(())
}

/// mfscli against the master, from the master's namespace (as the MooseFS notes require).
fn mfscli(state: &State, args: &[&str]) -> Result<String> {
    let m = master(state);
    let mut all = vec!["-H", m.addr.as_str()];
    all.extend_from_slice(args);
    run_in(&m.netns, "mfscli", &all, Duration::from_secs(30))
}

fn start_master(state: &State) -> Result<()> {
    let m = master(state);
    mkdirs(&[meta_dir(m)])?;
    let exports = m.data_dir.join("mfsexports.cfg");
    let net = format!("198.18.{}.0/24", state.subnet);
    sys::write(&exports, &render(EXPORTS_CFG, &[("net", &net)]))?;
    let cfg = m.data_dir.join("mfsmaster.cfg");
    let text = render(
        MASTER_CFG,
        &[
            ("data", &meta_dir(m).display().to_string()),
            ("exports", &exports.display().to_string()),
            ("addr", &m.addr),
        ],
    );
    sys::write(&cfg, &text)?;
    let metadata = meta_dir(m).join("metadata.mfs");
    if !metadata.exists() && !meta_dir(m).join("metadata.mfs.back").exists() {
        fs::copy(EMPTY_METADATA, &metadata)
            .map_err(|e| Error::runtime(format!("cannot copy {EMPTY_METADATA}: {e}")))?;
    }
    let cfg_arg = cfg.display().to_string();
    let log = m.data_dir.join("mfsmaster.log");
    // -a: after a kill, rebuild the metadata from the changelogs instead of refusing to start.
    spawn_in(
        Some(&m.netns),
        "mfsmaster",
        &["-c", &cfg_arg, "-a", "-f", "start"],
        &log,
    )?;
    wait_for("the MooseFS master", Duration::from_secs(30), || {
        mfscli(state, &["-SIN"]).ok()
    })?;
    Ok(())
}

fn start_chunkserver(state: &State, node: &NodeState) -> Result<()> {
    mkdirs(&[chunks_dir(node), meta_dir(node)])?;
    let hdd = node.data_dir.join("mfshdd.cfg");
    sys::write(&hdd, &format!("{}\n", chunks_dir(node).display()))?;
    let cfg = node.data_dir.join("mfschunkserver.cfg");
    let text = render(
        CHUNKSERVER_CFG,
        &[
            ("data", &meta_dir(node).display().to_string()),
            ("hdd", &hdd.display().to_string()),
            ("master", &master(state).addr),
            ("addr", &node.addr),
        ],
    );
    sys::write(&cfg, &text)?;
    let cfg_arg = cfg.display().to_string();
    let log = node.data_dir.join("mfschunkserver.log");
    spawn_in(
        Some(&node.netns),
        "mfschunkserver",
        &["-c", &cfg_arg, "-f", "start"],
        &log,
    )?;
    Ok(())
}

/// The chunkservers the master lists with some total space (they can take chunks).
fn chunkservers_ready(state: &State) -> usize {
    mfscli(state, &["-p", "-SCS"])
        .map(|out| count_ready_chunkservers(&out, state.subnet))
        .unwrap_or(0)
}

/// Rows of `mfscli -p -SCS`: `chunk servers <ip> <port> ... <used> <total> ...`; a server is
/// ready when its total space (the last number on its row) is above zero.
fn count_ready_chunkservers(out: &str, subnet: u8) -> usize {
    let prefix = format!("198.18.{subnet}.");
    out.lines()
        .filter(|l| l.split_whitespace().any(|w| w.starts_with(&prefix)))
        .filter(|l| {
            l.split_whitespace()
                .filter_map(|w| w.parse::<u64>().ok())
                .any(|n| n > 1 << 30)
        })
        .count()
}

fn wait_chunkservers(state: &State, want: usize) -> Result<()> {
    wait_for(
        "every chunkserver registered with space",
        Duration::from_secs(60),
        || (chunkservers_ready(state) >= want).then_some(()),
    )
}

/// The goal and trash time of everything under the mount (settings of the file system,
/// set once through the root namespace's mount).
fn set_goal(state: &State) -> Result<()> {
    let mnt_arg = state.mount_point().display().to_string();
    let limit = Duration::from_secs(30);
    run("mfssetgoal", &["-r", GOAL, &mnt_arg], limit)?;
    // Deleted files would otherwise keep their chunks for a day.
    run("mfssettrashtime", &["-r", "0", &mnt_arg], limit)?;
    Ok(())
}

impl System for MooseFs {
    fn name(&self) -> &'static str {
        "moosefs"
    }
    fn code(&self) -> &'static str {
        "mfs"
    }
    fn summary(&self) -> &'static str {
        "MooseFS: a master and 3 chunkservers, goal 2; a FUSE mount"
    }
    fn packages(&self) -> &'static [&'static str] {
        &["moosefs-master", "moosefs-chunkserver", "moosefs-client", "moosefs-cli"]
    }
    fn cluster(&self) -> Option<&dyn Cluster> {
        Some(self)
    }
}

impl Cluster for MooseFs {
    fn layouts(&self) -> &'static [&'static str] {
        &["goal2"]
    }
    fn nodes(&self, _layout: &str) -> Vec<&'static str> {
        vec!["master", "chunkserver", "chunkserver", "chunkserver"]
    }

    fn up(&self, state: &mut State) -> Result<()> {
        start_master(state)?;
        for node in &state.nodes[1..] {
            start_chunkserver(state, node)?;
        }
        wait_chunkservers(state, state.nodes.len() - 1)?;
        crate::mount::fuse(self, state, None, Duration::from_secs(30))?;
        set_goal(state)
    }

    fn start_node(&self, state: &mut State, node: &str) -> Result<()> {
        let n = state.node(node)?.clone();
        if n.role == "master" {
            return start_master(state);
        }
        let before = chunkservers_ready(state);
        start_chunkserver(state, &n)?;
        wait_chunkservers(state, (before + 1).min(state.nodes.len() - 1))
    }

    fn wipe_node(&self, state: &State, node: &str) -> Result<()> {
        let n = state.node(node)?;
        if n.role == "master" {
            return Err(Error::usage(format!(
                "wiping {node}, the MooseFS master, would destroy the file system; wipe a chunkserver (node2..)"
            )));
        }
        for d in [chunks_dir(n), meta_dir(n)] {
            fs::remove_dir_all(&d).map_err(|e| Error::runtime(format!("cannot wipe {}: {e}", d.display())))?;
        }
        Ok(())
    }

    fn rejoin_wiped(&self, _state: &mut State, _node: &str) -> Result<()> {
        // An empty chunkserver registers like a new one; the master re-replicates onto it.
        Ok(())
    }

    fn targets(&self, state: &State) -> Vec<String> {
        vec![format!("file://{}", state.mount_point().display())]
    }

    fn fuse_client(&self, state: &State, mnt: &str, _logs: &Path) -> Option<Vec<String>> {
        let master = master(state).addr.clone();
        Some(["mfsmount", mnt, "-f", "-H", &master].map(String::from).to_vec())
    }

    fn probe(&self, state: &State) -> Result<Option<String>> {
        let out = mfscli(state, &["-p", "-SIC"])?;
        Ok(undergoal(&out))
    }
}

/// From `mfscli -p -SIC`: None when no chunk is missing, endangered (one copy left) or under
/// its goal, counted over all chunks.
fn undergoal(out: &str) -> Option<String> {
    let classes: Vec<(String, u64)> = out
        .lines()
        .filter_map(|l| l.strip_prefix("all chunks matrix:"))
        .filter_map(|l| l.trim().strip_prefix("chunkclass "))
        .filter_map(|l| {
            let (class, n) = l.split_once(':')?;
            Some((class.trim().to_string(), n.trim().parse().ok()?))
        })
        .filter(|(class, n)| ["missing", "endangered", "undergoal"].contains(&class.as_str()) && *n > 0)
        .collect();
    let parts: Vec<String> = classes.iter().map(|(c, n)| format!("{n} {c}")).collect();
    (!parts.is_empty()).then(|| format!("chunks {}", parts.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::{count_ready_chunkservers, undergoal};

    #[test]
    fn chunk_classes_under_goal_are_reported() {
        let healthy = "all chunks matrix:\tchunkclass missing:\t0\nall chunks matrix:\tchunkclass \
                       undergoal:\t0\nall chunks matrix:\tchunkclass stable:\t12\n";
        assert_eq!(undergoal(healthy), None);
        let degraded = healthy.replace("undergoal:\t0", "undergoal:\t7");
        assert_eq!(undergoal(&degraded).as_deref(), Some("chunks 7 undergoal"));
    }

    #[test]
    fn chunkservers_with_space_are_ready() {
        let out = "chunk servers:\t198.18.2.2\t9422\t3\t-\t3.0.117\t0\tmaintenance_off\t0\t77798318080\t97793294336\n\
                   chunk servers:\t198.18.2.3\t9422\t1\t-\t3.0.117\t0\tmaintenance_off\t0\t0\t0\n";
        assert_eq!(count_ready_chunkservers(out, 2), 1);
        assert_eq!(count_ready_chunkservers(out, 1), 0);
    }
}
