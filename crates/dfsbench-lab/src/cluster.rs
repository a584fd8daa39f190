//! A cluster's life: install, up (plan the nodes, make the bridge and namespaces, start the
//! system), and down (from the state file alone, whatever a crash left).

use std::fs;
use std::time::Duration;

use crate::registry::layout_alias;
use crate::state::{labs_dir, NodeState, State};
use crate::sys::preflight;
use crate::sys::{self, PidRecord};
use crate::traits::{Cluster, System};
use crate::{clients, delay, mount, net, system, Error, Result};

/// The cluster layouts of a system, or a usage error for one that runs on one host only.
pub(crate) fn cluster_of(sys: &dyn System) -> Result<&dyn Cluster> {
    sys.cluster().ok_or_else(|| {
        Error::usage(format!(
            "{} runs on one host only: `dfsbench lab up {} --dir STATE` (layouts: {})",
            sys.name(),
            sys.name(),
            sys.all_layouts().join(", ")
        ))
    })
}

/// What every cluster needs: namespaces, firewall rules, ping, FUSE.
const BASE_PACKAGES: &[&str] = &["iproute2", "iptables", "util-linux", "iputils-ping", "fuse3"];

/// Install what a system needs (idempotent); returns the packages installed now.
pub fn install(name: &str) -> Result<Vec<String>> {
    preflight()?;
    let sys = system(name)?;
    let mut packages = BASE_PACKAGES.to_vec();
    packages.extend_from_slice(sys.packages());
    let mut installed = sys::apt_install(&packages)?;
    installed.extend(sys.install_other()?);
    Ok(installed)
}

/// Bring a lab up with `clients` client nodes (idempotent: a lab that is up is left as it
/// is, but for client nodes that are down or missing).
/// With `slurm`, a Slurm cluster runs on the client nodes.
pub fn up(name: &str, layout: Option<&str>, clients: usize, slurm: bool) -> Result<State> {
    let sys = system(name)?;
    if clients > clients::MAX_CLIENTS {
        return Err(Error::usage(format!(
            "--clients {clients}: a lab has {} client nodes at most",
            clients::MAX_CLIENTS
        )));
    }
    let has_clients = State::load(sys.name())?.is_some_and(|s| s.up && !s.clients.is_empty());
    if slurm && clients == 0 && !has_clients {
        return Err(Error::usage(format!(
            "--slurm runs Slurm on the client nodes: add them with --clients N (`dfsbench lab up {} --clients 2 --slurm`)",
            sys.name()
        )));
    }
    let mut state = up_storage(name, layout)?;
    if clients > 0 || !state.clients.is_empty() {
        let cl = cluster_of(sys.as_ref())?;
        let before = state.clients.len();
        let count = clients.max(before);
        let kept = |e: Error| {
            Error::runtime(format!(
                "{e} (what was started stays for inspection; `dfsbench lab down {}` removes it)",
                sys.name()
            ))
        };
        clients::ensure(cl, sys.code(), &mut state, count).map_err(kept)?;
        // Slurm's node list is its configuration: new client nodes start it again.
        if slurm && (!state.slurm || state.clients.len() != before) {
            crate::slurm::up(&mut state).map_err(kept)?;
        }
        record_node_pids(&mut state);
        state.save()?;
    }
    Ok(state)
}

/// The storage nodes of `up`.
fn up_storage(name: &str, layout: Option<&str>) -> Result<State> {
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
    let cl = cluster_of(sys.as_ref())?;
    let layout = match layout {
        None => cl.layouts()[0],
        Some(l) => cl.layouts().iter().copied().find(|k| *k == l).ok_or_else(|| {
            Error::usage(format!(
                "{} has no layout {l:?}; use one of: {}",
                sys.name(),
                sys.all_layouts().join(", ")
            ))
        })?,
    };
    if let Some(mut old) = State::load(sys.name())? {
        if old.up && all_running(&old) {
            if old.layout == layout {
                // A FUSE client that died is started again, as a daemon would be.
                let mnt = old.mount_point();
                if old.mounts.iter().any(|m| *m == mnt.display().to_string()) && !mount::serving(&mnt) {
                    sys::unmount(&mnt.display().to_string())?;
                    mount::fuse(cl, &mut old, None, Duration::from_secs(60))?;
                }
                return Ok(old);
            }
            if cl.nodes(layout).len() == old.nodes.len() && cl.relayout(&mut old, layout)? {
                old.layout = layout.to_string();
                old.save()?;
                // Their mounts follow the layout: started again, as after a restart.
                for c in old.clients.iter().map(|c| c.node.name.clone()).collect::<Vec<_>>() {
                    clients::start(cl, &mut old, &c)?;
                }
                return Ok(old);
            }
        }
        // A different layout, or what a crash left: start again from nothing.
        down(sys.name())?;
    }
    install(sys.name())?;
    // Held until the bridge has its address, which claims the subnet for every later `lab up`.
    let lock = net::subnet_lock()?;
    let mut state = plan(sys.as_ref(), cl, layout, free_subnet()?);
    state.save()?;
    let result = net::make_bridge(&state).and_then(|()| {
        drop(lock);
        build(cl, &mut state)
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

/// Every node has a daemon that runs (none of them all stopped).
fn all_running(state: &State) -> bool {
    state.nodes.iter().all(|n| {
        let pids = n.pids();
        !pids.is_empty() && !pids.iter().all(PidRecord::stopped)
    })
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
pub(crate) fn lab_id() -> String {
    net::lab_id(&sys::real_path(&labs_dir()))
}

fn plan(sys: &dyn System, cl: &dyn Cluster, layout: &str, subnet: u8) -> State {
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
    state.nodes = cl
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

fn build(cl: &dyn Cluster, state: &mut State) -> Result<()> {
    for d in &state.data_dirs {
        fs::create_dir_all(d).map_err(|e| Error::runtime(format!("cannot create {}: {e}", d.display())))?;
    }
    net::make_bridge(state)?;
    for node in &state.nodes {
        net::make_node(state, node)?;
    }
    cl.up(state)?;
    state.up = true;
    record_node_pids(state);
    state.save()
}

/// Add the daemons now running in the nodes' namespaces to the state (for `down` after a crash).
pub(crate) fn record_node_pids(state: &mut State) {
    let nodes: Vec<NodeState> = state.all_nodes().cloned().collect();
    for node in &nodes {
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
    clients::unmount_all(&state);
    for m in &state.mounts {
        sys::unmount(m)?;
    }
    for m in sys::mounts_under(&state.dir()) {
        sys::unmount(&m)?;
    }
    let mut pids: Vec<PidRecord> = state.pids.clone();
    for node in state.all_nodes() {
        pids.extend(node.pids());
    }
    // Stopped processes cannot act on SIGTERM until they continue.
    sys::signal_all(&pids, libc::SIGCONT, Duration::ZERO)?;
    sys::stop_all(&pids, Duration::from_secs(10))?;
    for node in state.all_nodes() {
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
            .any(|s| s.bridge == what || s.all_nodes().any(|n| n.netns == what || n.veth == what))
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
