//! `dfsbench lab status`: nodes, links, processes, targets and health of the labs that are up.

use serde::Serialize;

use crate::cluster::cluster_of;
use crate::state::{NodeState, State};
use crate::{clients, net, system, Result};

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
    /// Client nodes (`lab up --clients N`): each mounts the file system itself.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub clients: Vec<NodeStatus>,
    /// One line per client node, for `mpirun --hostfile`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hostfile: Option<String>,
    /// The mpirun command that starts one rank per client node: put the program after it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mpirun: Option<String>,
    /// dfsbench's own processes (no MPI) across every client node, one each: put the run's
    /// options after it. A lost node's process leaves the others running with
    /// `--rank-loss continue`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub procs: Option<String>,
    /// With `--slurm`: srun across every client node, one task each.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub srun: Option<String>,
    /// "ok" when every node runs and the probe finds every copy; else what is missing.
    pub health: String,
}

fn node_status(n: &NodeState) -> NodeStatus {
    let pids = n.pids();
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
}

fn health(state: &State) -> LabStatus {
    let nodes = state.nodes.iter().map(node_status).collect();
    let clients = state.clients.iter().map(|c| node_status(&c.node)).collect();
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
        clients,
        hostfile: clients::hostfile(state).map(|p| p.display().to_string()),
        mpirun: clients::mpirun(state, None, 1).ok().map(shell_words::join),
        procs: clients::procs(state, None, 1).ok().map(|p| {
            let exe = std::env::current_exe().map_or("dfsbench".into(), |e| e.display().to_string());
            let mut words = p.enter;
            words.extend([exe, "run".into()]);
            words.extend(p.options);
            shell_words::join(words)
        }),
        srun: state
            .slurm
            .then(|| shell_words::join(crate::slurm::srun(state, state.clients.len(), 1))),
        health: String::new(),
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
        let cl = cluster_of(sys.as_ref())?;
        st.targets = cl.targets(&state);
        st.notes = cl.notes(&state);
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
            match cl.probe(&state) {
                Ok(None) => "ok".into(),
                Ok(Some(why)) => format!("recovering: {why}"),
                Err(e) => format!("unknown: {e}"),
            }
        };
        out.push(st);
    }
    Ok(out)
}
