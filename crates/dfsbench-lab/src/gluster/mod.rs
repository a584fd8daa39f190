//! GlusterFS: one glusterd per node namespace (each with its own working directory, run
//! directory and CLI socket), one brick per node, a replica 3 or disperse 4+2 volume, mounted
//! with the FUSE client in the root namespace.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::state::{NodeState, State};
use crate::sys::{self, render, run_in, spawn_in, wait_for};
use crate::{Cluster, Error, Result, System};

const GLUSTERD_VOL: &str = include_str!("glusterd.vol");
const VOLUME: &str = "dfsb";
const CLI_LIMIT: Duration = Duration::from_secs(60);

pub(crate) struct Gluster;

fn workdir(node: &NodeState) -> PathBuf {
    node.data_dir.join("glusterd")
}

fn rundir(node: &NodeState) -> PathBuf {
    node.data_dir.join("run")
}

fn sockfile(node: &NodeState) -> PathBuf {
    rundir(node).join("glusterd.socket")
}

fn brick(node: &NodeState) -> PathBuf {
    node.data_dir.join("brick")
}

fn brick_spec(node: &NodeState) -> String {
    format!("{}:{}", node.addr, brick(node).display())
}

/// Where this node's glusterfs processes find /var/log/glusterfs and /var/run/gluster: brick,
/// self-heal and CLI logs and brick sockets go there whatever the options say (compiled-in
/// paths), so each node gets its own under the lab directory and `down` removes them with it.
fn private_log(node: &NodeState) -> PathBuf {
    node.data_dir.join("var-log-glusterfs")
}

fn private_run(node: &NodeState) -> PathBuf {
    node.data_dir.join("var-run-gluster")
}

/// Binds the node's own directories over the compiled-in ones in a mount namespace of its own,
/// then runs the command. Slave propagation: unmounts in the root namespace (another lab's
/// `down`) reach it, its binds never leave it.
const CONFINE: &str =
    "mount --bind \"$1\" /var/log/glusterfs && mount --bind \"$2\" /var/run/gluster && shift 2 && exec \"$@\"";

/// `program args` wrapped so that it runs with the node's private glusterfs directories.
fn confined(node: &NodeState, program: &str, args: &[&str]) -> Vec<String> {
    let dirs = [private_log(node), private_run(node)].map(|d| d.display().to_string());
    let head = ["--mount", "--propagation", "slave", "sh", "-c", CONFINE, "sh"];
    head.iter()
        .map(|a| a.to_string())
        .chain(dirs)
        .chain([program.to_string()])
        .chain(args.iter().map(|a| a.to_string()))
        .collect()
}

fn run_confined(node: &NodeState, program: &str, args: &[&str]) -> Result<String> {
    let all = confined(node, program, args);
    let wrapper = all[..all.len() - args.len() - 1].join(" ");
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    // An error names the command, not the wrapper.
    run_in(&node.netns, "unshare", &all, CLI_LIMIT)
        .map_err(|e| Error::runtime(e.to_string().replacen(&format!("unshare {wrapper} "), "", 1)))
}

/// The gluster CLI against one node's glusterd, run in that node's namespace (heal info starts
/// a helper that fetches the volume from the node's own glusterd).
fn cli(node: &NodeState, args: &[&str]) -> Result<String> {
    let sock = format!("--glusterd-sock={}", sockfile(node).display());
    let mut all = vec!["--mode=script", sock.as_str()];
    all.extend_from_slice(args);
    run_confined(node, "gluster", &all)
}

/// The helper behind `volume heal VOL info` (its directory depends on the architecture).
fn glfsheal() -> Result<String> {
    let mut dirs = vec![PathBuf::from("/usr/libexec/glusterfs")];
    if let Ok(lib) = fs::read_dir("/usr/lib") {
        dirs.extend(lib.filter_map(|e| e.ok()).map(|e| e.path().join("glusterfs")));
    }
    dirs.into_iter()
        .map(|d| d.join("glfsheal"))
        .find(|p| p.is_file())
        .map(|p| p.display().to_string())
        .ok_or_else(|| Error::runtime("glfsheal (glusterfs-server) is not installed".into()))
}

/// A node whose glusterd answers, other than `not`.
fn any_live_node<'a>(state: &'a State, not: Option<&str>) -> Result<&'a NodeState> {
    state
        .nodes
        .iter()
        .filter(|n| Some(n.name.as_str()) != not)
        .find(|n| cli(n, &["peer", "status"]).is_ok())
        .ok_or_else(|| Error::runtime("no glusterd of the lab answers".into()))
}

fn start_glusterd(node: &NodeState) -> Result<()> {
    for d in [
        workdir(node),
        rundir(node),
        brick(node),
        private_log(node).join("bricks"),
        private_run(node),
    ] {
        fs::create_dir_all(&d).map_err(|e| Error::runtime(format!("cannot create {}: {e}", d.display())))?;
    }
    let vol = node.data_dir.join("glusterd.vol");
    let text = render(
        GLUSTERD_VOL,
        &[
            ("workdir", &workdir(node).display().to_string()),
            ("rundir", &rundir(node).display().to_string()),
            ("sockfile", &sockfile(node).display().to_string()),
        ],
    );
    sys::write(&vol, &text)?;
    let log = node.data_dir.join("glusterd.log");
    let vol_arg = vol.display().to_string();
    let log_arg = format!("--log-file={}", log.display());
    let args = confined(node, "glusterd", &["-N", "-f", &vol_arg, &log_arg]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    spawn_in(Some(&node.netns), "unshare", &args, &log)?;
    wait_for(&format!("glusterd on {}", node.name), Duration::from_secs(30), || {
        cli(node, &["peer", "status"]).ok()
    })?;
    Ok(())
}

fn wait_peers(state: &State) -> Result<()> {
    let first = &state.nodes[0];
    let want = state.nodes.len() - 1;
    wait_for("every gluster peer connected", Duration::from_secs(60), || {
        let out = cli(first, &["peer", "status"]).ok()?;
        (out.matches("Peer in Cluster (Connected)").count() == want).then_some(())
    })
}

/// The volume's bricks that glusterd reports online (`volume status`, column Online = Y).
fn bricks_online(node: &NodeState) -> usize {
    cli(node, &["volume", "status", VOLUME])
        .map(|out| count_online_bricks(&out))
        .unwrap_or(0)
}

/// A brick's row may wrap (long paths): its Online column is on the row's last line, next to
/// the pid. Self-heal daemons have rows of their own.
fn count_online_bricks(status: &str) -> usize {
    status
        .lines()
        .filter(|l| !l.starts_with("Self-heal") && !l.starts_with("Gluster process"))
        .filter(|l| {
            let mut words = l.split_whitespace().rev();
            let pid = words.next().is_some_and(|w| w.parse::<u32>().is_ok());
            pid && words.next() == Some("Y")
        })
        .count()
}

fn wait_bricks(state: &State) -> Result<()> {
    let want = state.nodes.len();
    let nodes = &state.nodes;
    wait_for("every gluster brick online", Duration::from_secs(60), || {
        nodes.iter().any(|n| bricks_online(n) == want).then_some(())
    })
}

/// The FUSE client, with every node as volfile server.
fn fuse_argv(state: &State, mnt: &str, logs: &Path) -> Vec<String> {
    let mut argv = vec!["glusterfs".to_string()];
    argv.extend(state.nodes.iter().map(|n| format!("--volfile-server={}", n.addr)));
    argv.push(format!("--volfile-id={VOLUME}"));
    argv.push(format!("--log-file={}", logs.join("client.log").display()));
    argv.extend(["-N".into(), mnt.into()]);
    argv
}

impl System for Gluster {
    fn name(&self) -> &'static str {
        "gluster"
    }
    fn code(&self) -> &'static str {
        "gl"
    }
    fn summary(&self) -> &'static str {
        "GlusterFS: one brick per node, replica 3 or disperse 4+2; a FUSE mount"
    }
    fn packages(&self) -> &'static [&'static str] {
        &["glusterfs-server", "glusterfs-client"]
    }
    fn cluster(&self) -> Option<&dyn Cluster> {
        Some(self)
    }
}

impl Cluster for Gluster {
    fn layouts(&self) -> &'static [&'static str] {
        &["replica3", "disperse4+2"]
    }
    fn nodes(&self, layout: &str) -> Vec<&'static str> {
        let n = if layout == "disperse4+2" { 6 } else { 3 };
        vec!["brick"; n]
    }

    fn up(&self, state: &mut State) -> Result<()> {
        for node in &state.nodes {
            start_glusterd(node)?;
        }
        let first = &state.nodes[0];
        for node in &state.nodes[1..] {
            cli(first, &["peer", "probe", &node.addr])?;
        }
        wait_peers(state)?;
        let mut create = vec!["volume".to_string(), "create".into(), VOLUME.into()];
        if state.layout == "disperse4+2" {
            create.extend(["disperse", "6", "redundancy", "2"].map(String::from));
        } else {
            create.extend(["replica", "3"].map(String::from));
        }
        create.extend(state.nodes.iter().map(brick_spec));
        // Bricks on the root file system: glusterd wants `force` for that.
        create.push("force".into());
        let create: Vec<&str> = create.iter().map(String::as_str).collect();
        cli(first, &create)?;
        // A killed brick is noticed at once (its TCP connections reset); a stopped or cut-off
        // one after the ping timeout, 10 s here instead of 42 s.
        cli(first, &["volume", "set", VOLUME, "network.ping-timeout", "10"])?;
        if state.layout == "replica3" {
            // Disperse volumes accept no heal timeout under 60 s; theirs stays at the default.
            cli(first, &["volume", "set", VOLUME, "cluster.heal-timeout", "10"])?;
        }
        cli(first, &["volume", "start", VOLUME])?;
        wait_bricks(state)?;
        crate::mount::fuse(self, state, None, Duration::from_secs(30))
    }

    fn start_node(&self, state: &mut State, node: &str) -> Result<()> {
        let n = state.node(node)?.clone();
        // glusterd restarts the node's brick and self-heal daemon for the started volume.
        start_glusterd(&n)?;
        // A wiped brick has no volume id and cannot start until reset-brick re-adds it
        // (rejoin_wiped, which needs the peers connected). Waiting for it to come online
        // spent the whole minute a fault command may take, so the reset never ran.
        if fs::read_dir(brick(&n)).is_ok_and(|mut d| d.next().is_none()) {
            return wait_peers(state);
        }
        let want = state.nodes.len();
        wait_for(&format!("the brick of {node} online"), Duration::from_secs(60), || {
            (bricks_online(&n) == want).then_some(())
        })
    }

    fn wipe_node(&self, state: &State, node: &str) -> Result<()> {
        let b = brick(state.node(node)?);
        fs::remove_dir_all(&b)
            .and_then(|_| fs::create_dir_all(&b))
            .map_err(|e| Error::runtime(format!("cannot wipe {}: {e}", b.display())))
    }

    fn rejoin_wiped(&self, state: &mut State, node: &str) -> Result<()> {
        let n = state.node(node)?.clone();
        let other = any_live_node(state, Some(node))?;
        let spec = brick_spec(&n);
        cli(other, &["volume", "reset-brick", VOLUME, &spec, "start"])?;
        cli(
            other,
            &["volume", "reset-brick", VOLUME, &spec, &spec, "commit", "force"],
        )?;
        let want = state.nodes.len();
        wait_for("the wiped brick online", Duration::from_secs(60), || {
            (bricks_online(other) == want).then_some(())
        })?;
        cli(other, &["volume", "heal", VOLUME, "full"]).map(|_| ())
    }

    fn targets(&self, state: &State) -> Vec<String> {
        vec![format!("file://{}", state.mount_point().display())]
    }

    fn fuse_client(&self, state: &State, mnt: &str, logs: &Path) -> Option<Vec<String>> {
        Some(fuse_argv(state, mnt, logs))
    }

    fn probe(&self, state: &State) -> Result<Option<String>> {
        let node = any_live_node(state, None)?;
        // `gluster volume heal VOL info` runs glfsheal, which would ask the default glusterd
        // socket; run it with the node's own socket instead (same output).
        let sock = sockfile(node).display().to_string();
        let out = run_confined(node, &glfsheal()?, &[VOLUME, "glusterd-sock", &sock])?;
        Ok(heal_pending(&out, state.nodes.len()))
    }
}

/// What `volume heal VOL info` says is still missing: None when every brick is connected and
/// has no entries to heal.
fn heal_pending(out: &str, bricks: usize) -> Option<String> {
    let connected = out.lines().filter(|l| l.trim() == "Status: Connected").count();
    let entries: usize = out
        .lines()
        .filter_map(|l| l.trim().strip_prefix("Number of entries:"))
        .map(|n| n.trim().parse::<usize>().unwrap_or(1))
        .sum();
    if connected < bricks {
        return Some(format!("{connected} of {bricks} bricks connected"));
    }
    (entries > 0).then(|| format!("{entries} entries to heal"))
}

#[cfg(test)]
mod tests {
    use super::{confined, count_online_bricks, heal_pending};
    use crate::state::NodeState;

    #[test]
    fn glusterfs_directories_are_the_nodes_own() {
        let node = NodeState {
            name: "node1".into(),
            netns: "dfsb-0000-gluster-node1".into(),
            addr: "198.18.1.1".into(),
            veth: "dfsb0000gl1".into(),
            role: "brick".into(),
            data_dir: "/labs/gluster/node1".into(),
        };
        let args = confined(&node, "gluster", &["peer", "status"]);
        let at = args.iter().position(|a| a == "sh").unwrap();
        assert_eq!(args[..at], ["--mount", "--propagation", "slave"]);
        assert_eq!(
            args[at + 3..],
            [
                "sh",
                "/labs/gluster/node1/var-log-glusterfs",
                "/labs/gluster/node1/var-run-gluster",
                "gluster",
                "peer",
                "status"
            ]
        );
    }

    const HEALED: &str = "Brick 198.18.1.1:/b\nStatus: Connected\nNumber of entries: 0\n\n\
                          Brick 198.18.1.2:/b\nStatus: Connected\nNumber of entries: 0\n";

    #[test]
    fn wrapped_brick_rows_count_once_and_heal_daemons_not_at_all() {
        let status = "Gluster process                             TCP Port  RDMA Port  Online  Pid\n\
            Brick 198.18.1.1:/work/x/.cache/labs/g\nluster/node1/brick   60529     0   Y   1063\n\
            Brick 198.18.1.2:/b                       55320     0          N       N/A\n\
            Self-heal Daemon on localhost               N/A       N/A        Y       1080\n";
        assert_eq!(count_online_bricks(status), 1);
    }

    #[test]
    fn heal_info_with_no_entries_and_all_bricks_is_healed() {
        assert_eq!(heal_pending(HEALED, 2), None);
    }

    #[test]
    fn heal_info_counts_entries_and_missing_bricks() {
        let pending = HEALED.replacen("entries: 0", "entries: 7", 1);
        assert_eq!(heal_pending(&pending, 2).as_deref(), Some("7 entries to heal"));
        let gone = "Brick 198.18.1.1:/b\nStatus: Transport endpoint is not connected\n\
                    Number of entries: -\n";
        assert_eq!(heal_pending(gone, 1).as_deref(), Some("0 of 1 bricks connected"));
    }
}
