//! The lab: real storage systems on this machine, to benchmark against. A cluster layout runs
//! each node in a network namespace on a bridge (addresses from 198.18.0.0/15), the client
//! being the root namespace; the single-host layout runs a system's servers on 127.0.0.1 in one
//! state directory. One module per system behind the [`System`] trait, registered in
//! [`systems`]; the shared pieces: `cluster` (up, down), `fault`, `status`, `target`, `local`
//! (single host), `install`, `net`, `state`, `sys` and `delay`.

mod alluxio;
mod ceph;
mod clients;
mod cluster;
pub mod delay;
mod error;
mod fault;
mod gluster;
mod hdfs;
mod install;
mod local;
mod minio;
mod moosefs;
mod mount;
pub mod net;
mod registry;
mod seaweedfs;
mod slurm;
mod state;
mod status;
mod swift;
mod sys;
mod target;
#[cfg(test)]
mod toy;
mod traits;
mod webdav;

pub use clients::{mpirun, procs, ProcsLaunch, MAX_CLIENTS};
pub use cluster::{down, down_all, install, left_alone, up};
pub use error::{Error, Result};
pub use fault::{fault, limit, node_for, probe, Role, FAULTS};
pub use local::{host, selftest, Outcome};
pub use registry::{system, systems_help, systems_table};
pub use slurm::srun;
pub use state::{ClientNode, State};
pub use status::status;
pub use target::{resolve_target, running_pids, target_nodes, TargetNode};
pub use traits::{Cluster, System};

/// Every system of the lab; a new one is a module and a line here.
pub fn systems() -> Vec<Box<dyn System>> {
    vec![
        Box::new(gluster::Gluster),
        Box::new(moosefs::MooseFs),
        Box::new(minio::Minio),
        Box::new(swift::Swift),
        Box::new(hdfs::Hdfs),
        Box::new(ceph::Ceph),
        Box::new(alluxio::Alluxio),
        Box::new(seaweedfs::SeaweedFs),
        Box::new(webdav::WebDav),
        #[cfg(test)]
        Box::new(toy::Toy),
    ]
}
