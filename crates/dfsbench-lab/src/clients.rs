//! Client nodes (`lab up NAME --clients N`): each a network namespace on the lab's bridge, as a
//! storage node is (so delay, limits, cut links and partitions reach it), with its own host
//! name and mount namespace, held by a `sleep infinity` through which the node is entered. Each
//! mounts the lab's file system with its own FUSE client at the lab's mount point. mpirun
//! starts ranks there through an rsh agent that enters the node (`<lab dir>/NAME/clients/rsh`,
//! with a hostfile beside it).

use std::path::PathBuf;
use std::time::Duration;

use crate::state::{labs_dir, ClientNode, NodeState, State};
use crate::sys::{self, PidRecord};
use crate::traits::Cluster;
use crate::{mount, net, Error, Result};

/// Client node k has address .(100 + k) and its veth a base-36 digit: 35 fit in the names.
pub const MAX_CLIENTS: usize = 35;
const ADDR_BASE: usize = 100;

const START_LIMIT: Duration = Duration::from_secs(20);
const MOUNT_LIMIT: Duration = Duration::from_secs(60);

fn plan(state: &State, code: &str, k: usize) -> ClientNode {
    let name = format!("client{k}");
    ClientNode {
        node: NodeState {
            netns: net::netns_name(&state.id, &state.name, &name),
            addr: net::node_addr(state.subnet, ADDR_BASE + k),
            veth: net::client_veth_name(&state.id, code, k),
            role: "client".into(),
            data_dir: state.dir().join(&name),
            name,
        },
        holder: None,
    }
}

/// Bring the client nodes to `count` (at most MAX_CLIENTS: `up` checks it before it starts
/// anything): start those that are down, add the missing ones. None is removed; `down`
/// removes them with the lab.
pub(crate) fn ensure(cl: &dyn Cluster, code: &str, state: &mut State, count: usize) -> Result<()> {
    let down: Vec<String> = state
        .clients
        .iter()
        .filter(|c| !c.holder.as_ref().is_some_and(PidRecord::running))
        .map(|c| c.node.name.clone())
        .collect();
    for name in down {
        start(cl, state, &name)?;
    }
    for k in state.clients.len() + 1..=count {
        let c = plan(state, code, k);
        state.data_dirs.push(c.node.data_dir.clone());
        state.clients.push(c.clone());
        state.save()?;
        std::fs::create_dir_all(&c.node.data_dir)
            .map_err(|e| Error::runtime(format!("cannot create {}: {e}", c.node.data_dir.display())))?;
        net::make_node(state, &c.node)?;
        start(cl, state, &c.node.name)?;
    }
    write_launch_files(state)
}

/// Start a client node (new, killed or restarted): what still runs in it is stopped, then a
/// new holder gives it its host name and mount namespace, and it mounts the file system.
pub(crate) fn start(cl: &dyn Cluster, state: &mut State, name: &str) -> Result<()> {
    let node = state.node(name)?.clone();
    sys::stop_all(&node.pids(), Duration::from_secs(10))?;
    let holder = start_holder(&node)?;
    if let Some(c) = state.clients.iter_mut().find(|c| c.node.name == name) {
        c.holder = Some(holder.clone());
    }
    state.pids.push(holder.clone());
    state.save()?;
    sys::write(
        &pid_file(state, name),
        &format!("{} {}\n", holder.pid, holder.start_time),
    )?;
    mount::fuse(cl, state, Some(name), MOUNT_LIMIT)?;
    if state.slurm {
        crate::slurm::start_node(state, name)?;
    }
    Ok(())
}

/// `sleep infinity` in the node's network namespace and new UTS and mount namespaces, named
/// after the node, without the mounts that are not the node's. Its mounts are slaves of ours:
/// namespaces that `ip netns` adds or deletes later (on /run/netns, a shared mount) show in
/// it too, so `lab` commands work from the node, and nothing it mounts comes back to us.
fn start_holder(node: &NodeState) -> Result<PidRecord> {
    let script = format!("hostname {} && exec sleep infinity", node.name);
    let log = node.data_dir.join("holder.log");
    let args = ["--uts", "--mount", "--propagation", "slave", "--", "sh", "-c", &script];
    let holder = sys::spawn_in(Some(&node.netns), "unshare", &args, &log)?;
    let what = format!("client node {} (its holder process)", node.name);
    sys::wait_for(&what, START_LIMIT, || {
        let comm = std::fs::read_to_string(format!("/proc/{}/comm", holder.pid)).ok()?;
        (comm.trim() == "sleep").then_some(())
    })?;
    let ns = |pid: &str| std::fs::read_link(format!("/proc/{pid}/ns/mnt")).ok();
    if ns(&holder.pid.to_string()).is_none() || ns(&holder.pid.to_string()) == ns("self") {
        return Err(Error::runtime(format!("{what} has no mount namespace of its own")));
    }
    drop_foreign_mounts(holder.pid)?;
    Ok(PidRecord { what, ..holder })
}

/// Remove, in the node's own mount namespace only, the copies of the labs' FUSE mounts: the
/// node mounts its own.
fn drop_foreign_mounts(holder: i32) -> Result<()> {
    let labs = sys::real_path(&labs_dir());
    let pid = holder.to_string();
    for (point, fstype) in sys::mounts_of(Some(holder)) {
        if fstype.starts_with("fuse") && std::path::Path::new(&point).starts_with(&labs) {
            sys::run(
                "nsenter",
                &["-t", &pid, "--mount", "--root", "umount", "-l", &point],
                Duration::from_secs(20),
            )?;
        }
    }
    Ok(())
}

/// Unmount the file system on every client node whose holder lives (before `down` stops them:
/// a FUSE client killed under a busy mount can leave it hanging).
pub(crate) fn unmount_all(state: &State) {
    let mnt = state.mount_point().display().to_string();
    for c in &state.clients {
        let Some(h) = c.holder.as_ref().filter(|h| h.running()) else {
            continue;
        };
        if mount::mounted_in(Some(h.pid), &state.mount_point()) {
            let pid = h.pid.to_string();
            let _ = sys::run(
                "nsenter",
                &["-t", &pid, "--mount", "--root", "umount", "-l", &mnt],
                Duration::from_secs(20),
            );
        }
    }
}

fn launch_dir(state: &State) -> PathBuf {
    state.dir().join("clients")
}

fn pid_file(state: &State, name: &str) -> PathBuf {
    launch_dir(state).join(format!("{name}.pid"))
}

/// The rsh agent, the hostfile (one line per client node, as many slots as this machine has
/// cores) and the holders' pid files, which the agent reads.
fn write_launch_files(state: &State) -> Result<()> {
    let dir = launch_dir(state);
    std::fs::create_dir_all(&dir).map_err(|e| Error::runtime(format!("cannot create {}: {e}", dir.display())))?;
    let slots = std::thread::available_parallelism().map_or(1, usize::from);
    let hosts: String = state
        .clients
        .iter()
        .map(|c| format!("{} slots={slots}\n", c.node.name))
        .collect();
    sys::write(&dir.join("hostfile"), &hosts)?;
    let agent = sys::render(
        include_str!("clients/rsh.sh"),
        &[("lab", &state.name), ("dir", &dir.display().to_string())],
    );
    let path = dir.join("rsh");
    sys::write(&path, &agent)?;
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .map_err(|e| Error::runtime(format!("cannot make {} executable: {e}", path.display())))
}

/// The first `nodes` client nodes (all of them when None), or why the lab has too few.
fn first_clients(state: &State, nodes: Option<usize>) -> Result<&[ClientNode]> {
    let have = state.clients.len();
    let nodes = nodes.unwrap_or(have);
    if have == 0 || nodes > have {
        return Err(Error::usage(format!(
            "lab {} has {have} client node(s), {nodes} are needed: `dfsbench lab up {} --clients {nodes}`",
            state.name, state.name
        )));
    }
    Ok(&state.clients[..nodes])
}

/// The mpirun command (without the program) that starts ranks on the lab's client nodes over
/// their links: `per_node` ranks on each of the first `nodes` client nodes (all of them when
/// None), placed round-robin, TCP on the lab's subnet only (never shared memory between
/// nodes), the agent entering each node.
pub fn mpirun(state: &State, nodes: Option<usize>, per_node: usize) -> Result<Vec<String>> {
    let clients = first_clients(state, nodes)?;
    let nodes = clients.len();
    let subnet = format!("198.18.{}.0/24", state.subnet);
    let hosts: Vec<String> = clients.iter().map(|c| format!("{}:{per_node}", c.node.name)).collect();
    let agent = launch_dir(state).join("rsh").display().to_string();
    let mut argv: Vec<String> = ["mpirun", "--allow-run-as-root", "--host"].map(String::from).to_vec();
    argv.push(hosts.join(","));
    argv.extend([
        "--map-by".into(),
        "node".into(),
        "-np".into(),
        (nodes * per_node).to_string(),
    ]);
    for (k, v) in [
        ("plm_rsh_agent", agent.as_str()),
        ("pml", "ob1"),
        ("btl", "tcp,self"),
        ("btl_tcp_if_include", &subnet),
        ("oob_tcp_if_include", &subnet),
    ] {
        argv.extend(["--mca".into(), k.into(), v.into()]);
    }
    Ok(argv)
}

/// How dfsbench's own processes (`--procs --hosts`, no MPI) run on the lab's client nodes:
/// rank 0 is started in client1 through the agent (`enter`), and the run's options
/// (`options`) place `per_node` processes on each of the first `nodes` client nodes, round-robin,
/// started through the same agent; they talk to rank 0 over the lab's links (TCP).
pub struct ProcsLaunch {
    pub enter: Vec<String>,
    pub options: Vec<String>,
}

pub fn procs(state: &State, nodes: Option<usize>, per_node: usize) -> Result<ProcsLaunch> {
    let clients = first_clients(state, nodes)?;
    let nodes = clients.len();
    let agent = launch_dir(state).join("rsh").display().to_string();
    let hosts: Vec<&str> = clients.iter().map(|c| c.node.name.as_str()).collect();
    Ok(ProcsLaunch {
        enter: vec![agent.clone(), hosts[0].to_string()],
        options: vec![
            "--procs".into(),
            (nodes * per_node).to_string(),
            "--hosts".into(),
            hosts.join(","),
            "--rsh".into(),
            agent,
        ],
    })
}

/// The hostfile `lab up` wrote, when the lab has client nodes.
pub(crate) fn hostfile(state: &State) -> Option<PathBuf> {
    (!state.clients.is_empty()).then(|| launch_dir(state).join("hostfile"))
}
