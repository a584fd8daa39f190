//! Which processes this run has: one, `--procs N` local ones, or the ranks of an MPI job.

use std::time::Duration;

use dfsbench_core::cluster::procs::Procs;
use dfsbench_core::cluster::{launcher_size, Group};
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
    let joined = |t: Result<Box<dyn dfsbench_core::cluster::Transport>, String>| {
        t.and_then(|t| Group::join(t, timeout)).map_err(Failure::runtime)
    };
    if let Some(child) = Procs::child_from_env(timeout) {
        return joined(child.map(|c| Box::new(c) as _));
    }
    let launched = launcher_size().filter(|&n| n > 1);
    let mut group = match (procs, launched) {
        (Some(_), Some(n)) => {
            return Err(Failure::usage(format!(
                "--procs starts local processes, but an MPI launcher already started {n}: leave --procs out under mpirun/srun"
            )))
        }
        (Some(0), _) => return Err(Failure::usage("--procs 0: give 1 or more processes".into())),
        (Some(n), None) if n > 1 => joined(Procs::spawn(n, timeout).map(|p| Box::new(p) as _))?,
        (_, None) => Group::solo(),
        (None, Some(n)) => mpi_group(n, timeout)?,
    };
    group.timeout = timeout;
    Ok(group)
}

#[cfg(feature = "mpi")]
fn mpi_group(n: usize, timeout: Duration) -> Result<Group, Failure> {
    let mpi = dfsbench_core::cluster::mpi::Mpi::init(n).map_err(Failure::runtime)?;
    Group::join(Box::new(mpi), timeout).map_err(Failure::runtime)
}

#[cfg(not(feature = "mpi"))]
fn mpi_group(n: usize, _timeout: Duration) -> Result<Group, Failure> {
    Err(Failure::usage(format!(
        "this dfsbench was built without MPI, but mpirun/srun started it as one of {n} ranks: \
         install it with ./scripts/install.sh (cargo install --features mpi), or use --procs N on one machine"
    )))
}
