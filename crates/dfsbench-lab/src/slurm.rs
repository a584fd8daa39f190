//! A Slurm cluster on the client nodes (`lab up NAME --clients N --slurm`): Debian's slurm-wlm
//! 22.05 with a munged of the lab's own, slurmctld on client1 and a slurmd on every client
//! node, no cgroups, everything under `<lab dir>/NAME/slurm` and found through `SLURM_CONF`.
//! `srun --mpi=pmix` starts Open MPI programs across the nodes (Debian's Open MPI has PMIx,
//! not PMI-2).

use std::path::PathBuf;
use std::time::Duration;

use crate::state::State;
use crate::sys::{self, PidRecord};
use crate::{Error, Result};

/// What it installs: the daemons, srun, munge, and the unversioned libpmix.so that Slurm's
/// mpi/pmix plugin opens (only the -dev package has it).
pub(crate) const PACKAGES: &[&str] = &["slurmctld", "slurmd", "slurm-client", "munge", "libpmix-dev"];

const START_LIMIT: Duration = Duration::from_secs(60);

pub(crate) fn dir(state: &State) -> PathBuf {
    state.dir().join("slurm")
}

pub(crate) fn conf(state: &State) -> PathBuf {
    dir(state).join("slurm.conf")
}

/// Install, write the configuration, start munged, slurmctld and every slurmd, and wait until
/// every node is idle. The daemons of an earlier `up` (another set of client nodes) are
/// stopped first.
pub(crate) fn up(state: &mut State) -> Result<()> {
    sys::apt_install(PACKAGES)?;
    let old: Vec<PidRecord> = state.pids.iter().filter(|p| is_daemon(p)).cloned().collect();
    sys::stop_all(&old, Duration::from_secs(10))?;
    state.pids.retain(|p| !is_daemon(p));
    let dir = dir(state);
    for d in [dir.clone(), dir.join("ctld")] {
        std::fs::create_dir_all(&d).map_err(|e| Error::runtime(format!("cannot create {}: {e}", d.display())))?;
    }
    state.slurm = true;
    state.save()?;
    write_config(state)?;
    start_munged(state)?;
    let names: Vec<String> = state.clients.iter().map(|c| c.node.name.clone()).collect();
    for name in &names {
        let tmp = dir.join(name).join("tmp");
        std::fs::create_dir_all(&tmp).map_err(|e| Error::runtime(format!("cannot create {}: {e}", tmp.display())))?;
        start_node(state, name)?;
    }
    wait_idle(state, &names)
}

fn is_daemon(p: &PidRecord) -> bool {
    ["munged", "slurmctld ", "slurmd "]
        .iter()
        .any(|d| p.what.starts_with(d))
}

fn write_config(state: &State) -> Result<()> {
    let dir = dir(state);
    let cpus = std::thread::available_parallelism().map_or(1, usize::from);
    let nodes: String = state
        .clients
        .iter()
        .map(|c| {
            format!(
                "NodeName={n} NodeHostname={n} NodeAddr={a} CPUs={cpus} State=UNKNOWN\n",
                n = c.node.name,
                a = c.node.addr
            )
        })
        .collect();
    let names: Vec<&str> = state.clients.iter().map(|c| c.node.name.as_str()).collect();
    let ctl = state
        .clients
        .first()
        .ok_or_else(|| Error::usage("--slurm needs client nodes (--clients N)".into()))?;
    let text = sys::render(
        include_str!("slurm/slurm.conf"),
        &[
            ("lab", &state.name),
            ("id", &state.id),
            ("ctl_addr", &ctl.node.addr),
            ("dir", &dir.display().to_string()),
            ("nodes", &nodes),
            ("names", &names.join(",")),
        ],
    );
    sys::write(&conf(state), &text)?;
    sys::write(&dir.join("plugstack.conf"), "")
}

/// munged in the root namespace, with the lab's key; its socket serves every node.
fn start_munged(state: &mut State) -> Result<()> {
    let dir = dir(state);
    let key = dir.join("munge.key");
    if !key.exists() {
        let k = key.display().to_string();
        sys::run("mungekey", &["-c", "-k", &k], Duration::from_secs(20))?;
    }
    let path = |f: &str| dir.join(f).display().to_string();
    let args = [
        "-F".to_string(),
        format!("--key-file={}", path("munge.key")),
        format!("--socket={}", path("munge.socket")),
        format!("--pid-file={}", path("munged.pid")),
        format!("--log-file={}", path("munged.log")),
        format!("--seed-file={}", path("munged.seed")),
    ];
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let pid = sys::spawn_in(None, "munged", &args, &dir.join("munged.out"))?;
    let pid = PidRecord {
        what: "munged".into(),
        ..pid
    };
    state.pids.push(pid);
    state.save()?;
    let socket = dir.join("munge.socket");
    sys::wait_for("munged", START_LIMIT, || socket.exists().then_some(()))
}

/// The Slurm daemons of a client node that (re)started: its slurmd, and on client1 slurmctld.
pub(crate) fn start_node(state: &mut State, name: &str) -> Result<()> {
    let c = state
        .client(name)
        .ok_or_else(|| Error::runtime(format!("no client node {name}")))?;
    let holder = c
        .holder
        .clone()
        .ok_or_else(|| Error::runtime(format!("client node {name} is down")))?;
    let is_ctl = state.clients.first().is_some_and(|f| f.node.name == name);
    let conf = conf(state).display().to_string();
    let dir = dir(state);
    let mut daemons = vec![("slurmd", vec!["-D", "-f", &conf, "-N", name])];
    if is_ctl {
        daemons.insert(0, ("slurmctld", vec!["-D", "-f", &conf]));
    }
    for (program, args) in daemons {
        let mut cmd = std::process::Command::new("nsenter");
        cmd.args(sys::enter_node(holder.pid)).arg(program).args(&args);
        cmd.env("SLURM_CONF", &conf);
        let log = dir.join(format!("{program}-{name}.out"));
        let pid: PidRecord = sys::spawn(cmd, &format!("{program} on {name}"), &log)?;
        state.pids.push(pid);
        state.save()?;
    }
    Ok(())
}

/// Every named node idle in `sinfo`.
fn wait_idle(state: &State, names: &[String]) -> Result<()> {
    let conf = conf(state).display().to_string();
    let mut last = String::new();
    let mut sinfo = || {
        let out = std::process::Command::new("sinfo")
            .args(["-h", "-N", "-o", "%N %t"])
            .env("SLURM_CONF", &conf)
            .output()
            .ok()?;
        last = String::from_utf8_lossy(&out.stdout).trim().replace('\n', ", ");
        let idle = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| l.ends_with(" idle"))
            .count();
        (idle == names.len()).then_some(())
    };
    sys::wait_for("every Slurm node idle", START_LIMIT, &mut sinfo)
        .map_err(|e| Error::runtime(format!("{e} (sinfo: {last}; logs in {})", dir(state).display())))
}

/// `srun` across the first `nodes` client nodes with `per_node` tasks each, as a command line
/// (the environment variable first).
pub fn srun(state: &State, nodes: usize, per_node: usize) -> Vec<String> {
    vec![
        "env".into(),
        format!("SLURM_CONF={}", conf(state).display()),
        "srun".into(),
        "--mpi=pmix".into(),
        "-N".into(),
        nodes.to_string(),
        "--ntasks-per-node".into(),
        per_node.to_string(),
    ]
}
