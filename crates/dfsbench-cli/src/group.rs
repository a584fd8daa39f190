//! Which processes this run has: one, `--procs N` local ones, or the ranks of an MPI job.

use std::time::Duration;

use dfsbench_core::cluster::procs::{Layout, Procs};
use dfsbench_core::cluster::{launcher_size, Group, Transport};
use dfsbench_core::units::parse_duration;

use crate::cli::RankLoss;
use crate::failure::Failure;

const DEFAULT_RANK_TIMEOUT: Duration = Duration::from_secs(300);

/// The options that say which processes a run has.
pub struct Placement<'a> {
    /// `--procs`
    pub procs: Option<usize>,
    /// `--hosts`
    pub hosts: &'a [String],
    /// `--rsh`
    pub rsh: Option<&'a str>,
    /// `--rank-timeout`
    pub rank_timeout: Option<&'a str>,
    /// `--rank-loss`
    pub rank_loss: RankLoss,
}

/// Start or join this run's group of processes: `--procs` ones (here or on `--hosts`), or the
/// ranks an MPI launcher started.
pub fn start(p: &Placement) -> Result<Group, Failure> {
    let timeout = match p.rank_timeout {
        Some(t) => parse_duration(t).map_err(|e| Failure::usage(format!("--rank-timeout: {e}")))?,
        None => DEFAULT_RANK_TIMEOUT,
    };
    if timeout.is_zero() {
        return Err(Failure::usage(
            "--rank-timeout 0: give a time such as 30s or 10m".into(),
        ));
    }
    let go_on = p.rank_loss == RankLoss::Continue;
    let join_local = |t: Result<Box<dyn Transport>, String>| joined(t.map_err(Failure::runtime)?, timeout, go_on);
    if let Some(child) = Procs::child_from_env(timeout) {
        return join_local(child.map(|c| Box::new(c) as _));
    }
    let launched = launcher_size().filter(|&n| n > 1);
    if !p.hosts.is_empty() && p.procs.is_none() {
        return Err(Failure::usage(
            "--hosts places the processes of --procs: give --procs N (under mpirun or srun, the launcher's hostfile places them)".into(),
        ));
    }
    let mut group = match (p.procs, launched) {
        (Some(_), Some(n)) => {
            return Err(Failure::usage(format!(
                "--procs starts local processes, but an MPI launcher already started {n}: leave --procs out under mpirun/srun"
            )))
        }
        (_, Some(n)) if go_on => {
            return Err(Failure::usage(format!(
                "--rank-loss continue: mpirun and srun end the whole job when one of its {n} ranks is lost; use --procs N --hosts H1,H2,... instead"
            )))
        }
        (Some(0), _) => return Err(Failure::usage("--procs 0: give 1 or more processes".into())),
        (Some(n), None) if n > 1 => {
            let layout = layout(p, go_on)?;
            join_local(Procs::spawn(n, timeout, &layout).map(|p| Box::new(p) as _))?
        }
        (_, None) => Group::solo(),
        (None, Some(n)) => mpi_group(n, timeout)?,
    };
    group.timeout = timeout;
    Ok(group)
}

/// Where `--procs` starts its processes.
fn layout(p: &Placement, flat: bool) -> Result<Layout, Failure> {
    let here = dfsbench_core::cluster::this_host();
    if let Some(first) = p.hosts.first().filter(|h| **h != here) {
        return Err(Failure::usage(format!(
            "--hosts starts with {first}, but rank 0 runs here, on {here}: start dfsbench on {first}, or put {here} first"
        )));
    }
    if let Some(h) = p.hosts.iter().find(|h| h.is_empty() || h.starts_with('-')) {
        return Err(Failure::usage(format!(
            "--hosts: '{h}' is not a host name: give names such as node1,node2"
        )));
    }
    let rsh = shell_words::split(p.rsh.unwrap_or("ssh")).map_err(|e| Failure::usage(format!("--rsh: {e}")))?;
    if rsh.is_empty() {
        return Err(Failure::usage("--rsh is empty: give a command such as ssh".into()));
    }
    Ok(Layout {
        hosts: p.hosts.to_vec(),
        rsh,
        flat,
    })
}

#[cfg(feature = "mpi")]
fn mpi_group(n: usize, timeout: Duration) -> Result<Group, Failure> {
    let mpi = dfsbench_core::cluster::mpi::Mpi::init(n).map_err(Failure::runtime)?;
    joined(Box::new(mpi), timeout, false)
}

/// Join the group; a rank that cannot says why. An MPI job is then aborted, as MPI_Finalize
/// could wait forever on a peer that is not dfsbench (one that sent what was never received).
fn joined(transport: Box<dyn Transport>, timeout: Duration, go_on: bool) -> Result<Group, Failure> {
    let mut group = Group::join(transport, timeout).map_err(|mut e| {
        if e.transport.kind() == "mpi" {
            crate::eprint_line(&format!("dfsbench: {}", e.message));
            e.transport.abort(1);
        }
        Failure::runtime(e.message)
    })?;
    if go_on {
        group.go_on_without_lost_ranks().map_err(Failure::usage)?;
    }
    Ok(group)
}

#[cfg(not(feature = "mpi"))]
fn mpi_group(n: usize, _timeout: Duration) -> Result<Group, Failure> {
    Err(Failure::usage(format!(
        "this dfsbench was built without MPI, but mpirun/srun started it as one of {n} ranks: \
         install it with ./scripts/install.sh (cargo install --features mpi), or use --procs N on one machine"
    )))
}
