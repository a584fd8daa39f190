//! Which processes this run has: one, `--procs N` local ones, or the ranks of an MPI job.

use std::time::Duration;

use dfsbench_core::cluster::procs::Procs;
use dfsbench_core::cluster::{launcher_size, Group, Transport};
use dfsbench_core::units::parse_duration;

use crate::failure::Failure;

const DEFAULT_RANK_TIMEOUT: Duration = Duration::from_secs(300);

/// Start or join this run's group of processes: `procs` local ones (`--procs`), or the ranks
/// an MPI launcher started; `rank_timeout` is `--rank-timeout`.
pub fn start(procs: Option<usize>, rank_timeout: Option<&str>) -> Result<Group, Failure> {
    let timeout = match rank_timeout {
        Some(t) => parse_duration(t).map_err(|e| Failure::usage(format!("--rank-timeout: {e}")))?,
        None => DEFAULT_RANK_TIMEOUT,
    };
    if timeout.is_zero() {
        return Err(Failure::usage(
            "--rank-timeout 0: give a time such as 30s or 10m".into(),
        ));
    }
    let join_local = |t: Result<Box<dyn Transport>, String>| joined(t.map_err(Failure::runtime)?, timeout);
    if let Some(child) = Procs::child_from_env(timeout) {
        return join_local(child.map(|c| Box::new(c) as _));
    }
    let launched = launcher_size().filter(|&n| n > 1);
    let mut group = match (procs, launched) {
        (Some(_), Some(n)) => {
            return Err(Failure::usage(format!(
                "--procs starts local processes, but an MPI launcher already started {n}: leave --procs out under mpirun/srun"
            )))
        }
        (Some(0), _) => return Err(Failure::usage("--procs 0: give 1 or more processes".into())),
        (Some(n), None) if n > 1 => join_local(Procs::spawn(n, timeout).map(|p| Box::new(p) as _))?,
        (_, None) => Group::solo(),
        (None, Some(n)) => mpi_group(n, timeout)?,
    };
    group.timeout = timeout;
    Ok(group)
}

#[cfg(feature = "mpi")]
fn mpi_group(n: usize, timeout: Duration) -> Result<Group, Failure> {
    let mpi = dfsbench_core::cluster::mpi::Mpi::init(n).map_err(Failure::runtime)?;
    joined(Box::new(mpi), timeout)
}

/// Join the group; a rank that cannot says why. An MPI job is then aborted, as MPI_Finalize
/// could wait forever on a peer that is not dfsbench (one that sent what was never received).
fn joined(transport: Box<dyn Transport>, timeout: Duration) -> Result<Group, Failure> {
    Group::join(transport, timeout).map_err(|mut e| {
        if e.transport.kind() == "mpi" {
            crate::eprint_line(&format!("dfsbench: {}", e.message));
            e.transport.abort(1);
        }
        Failure::runtime(e.message)
    })
}

#[cfg(not(feature = "mpi"))]
fn mpi_group(n: usize, _timeout: Duration) -> Result<Group, Failure> {
    Err(Failure::usage(format!(
        "this dfsbench was built without MPI, but mpirun/srun started it as one of {n} ranks: \
         install it with ./scripts/install.sh (cargo install --features mpi), or use --procs N on one machine"
    )))
}
