//! A `lab:NAME[-KIND]` target: the lab's URI, the credentials its client needs, and its nodes
//! as the run's null tests see them.

use crate::cluster::cluster_of;
use crate::fault::Role;
use crate::state::{NodeState, State};
use crate::{sys, system, Error, Result};

/// What an S3 client of a lab's `s3://` target needs: its keys and region (nothing for its
/// other targets).
pub(crate) fn s3_env(target: &str, key: &str, secret: &str, region: &str) -> Vec<(&'static str, String)> {
    if !target.starts_with("s3://") {
        return Vec::new();
    }
    vec![
        ("AWS_ACCESS_KEY_ID", key.into()),
        ("AWS_SECRET_ACCESS_KEY", secret.into()),
        ("AWS_REGION", region.into()),
    ]
}

/// The target kinds a `lab:NAME-KIND` target can ask for.
const TARGET_KINDS: &[&str] = &["fs", "s3", "swift", "hdfs", "webhdfs", "alluxio"];

/// A lab's target as a run uses it.
#[derive(Debug, Clone, Default)]
pub struct LabTarget {
    /// The lab's name, as `lab fault NAME` takes it.
    pub lab: String,
    pub uri: String,
    /// Variables the target's client needs (credentials, the HDFS user).
    pub env: Vec<(&'static str, String)>,
    /// The lab's nodes, for the null tests.
    pub nodes: Vec<TargetNode>,
    /// `lab limit`'s rate on every node link, each way (`100mbit`).
    pub rate: Option<String>,
}

/// A lab node as a run's null tests measure it.
#[derive(Debug, Clone, Default)]
pub struct TargetNode {
    pub name: String,
    pub addr: String,
    pub netns: String,
    /// The lowest TCP port the node's daemons listen on; None when none runs.
    pub port: Option<u16>,
    /// The client's reads of the target come from this node: a gateway the target's URI
    /// names (S3, Swift, Alluxio's proxy), else a node that holds data (Role::Storage).
    pub serves_data: bool,
}

/// The nodes of lab `name` as a client of its target `uri` sees them now (a restart may
/// change a daemon's ports).
pub fn target_nodes(name: &str, uri: &str) -> Result<(Vec<TargetNode>, Option<String>)> {
    let state = State::loaded(system(name)?.name())?;
    Ok((nodes_of(&state, uri), state.rate.clone()))
}

fn nodes_of(state: &State, uri: &str) -> Vec<TargetNode> {
    state
        .nodes
        .iter()
        .map(|n| TargetNode {
            name: n.name.clone(),
            addr: n.addr.clone(),
            netns: n.netns.clone(),
            port: n
                .pids()
                .first()
                .and_then(|p| sys::listening_ports(p.pid).first().copied()),
            serves_data: serves_reads(uri, &n.addr, &n.role),
        })
        .collect()
}

/// Whether a client of `uri` reads through the node at `addr`: through a gateway target
/// (S3, Swift, Alluxio's REST proxy) only from the gateways the URI names; from a file
/// system or HDFS, from every node that holds data.
fn serves_reads(uri: &str, addr: &str, role: &str) -> bool {
    let gateway = ["s3://", "swift://", "alluxio://"].iter().any(|k| uri.starts_with(k));
    if gateway {
        ["/", ","]
            .iter()
            .any(|before| uri.contains(&format!("{before}{addr}:")))
    } else {
        Role::Storage.roles().contains(&role)
    }
}

/// The PIDs of the node daemons of lab `name` as they are now (a restart gives new ones).
pub fn running_pids(name: &str) -> Result<Vec<u32>> {
    Ok(daemon_pids(&State::loaded(system(name)?.name())?))
}

fn daemon_pids(state: &State) -> Vec<u32> {
    state
        .nodes
        .iter()
        .flat_map(NodeState::pids)
        .map(|p| p.pid as u32)
        .collect()
}

/// A `lab:NAME[-KIND]` target (the part after `lab:`): the lab's target of that kind (`fs`: its
/// FUSE mount; `s3`, `swift`, `hdfs`, `webhdfs`, `alluxio`: that endpoint; no kind: its first
/// target).
pub fn resolve_target(spec: &str) -> Result<LabTarget> {
    let (name, kind) = match spec.rsplit_once('-') {
        Some((name, kind)) if TARGET_KINDS.contains(&kind) => (name, Some(kind)),
        _ => (spec, None),
    };
    let sys = system(name)?;
    let state = State::loaded(sys.name())?;
    let cl = cluster_of(sys.as_ref())?;
    let targets = cl.targets(&state);
    let found = match kind {
        None => targets.first(),
        Some("fs") => targets.iter().find(|t| t.starts_with("file://")),
        Some(kind) => targets.iter().find(|t| t.starts_with(&format!("{kind}://"))),
    };
    let uri = found.ok_or_else(|| {
        Error::usage(format!(
            "lab:{spec}: the {name} lab has no {} target; its targets: {}",
            kind.unwrap_or("such"),
            targets.join(", ")
        ))
    })?;
    // Where the FUSE client of the lab's mount is gone, the mount point is a plain directory
    // on this machine's disk: a run there would measure that disk under the lab's name.
    if let Some(mnt) = uri
        .strip_prefix("file://")
        .filter(|m| state.mounts.iter().any(|r| r == m))
    {
        if !crate::mount::serving(std::path::Path::new(mnt)) {
            return Err(Error::runtime(format!(
                "lab:{spec}: {mnt} is not served here (its FUSE client is gone): `dfsbench lab up {name}` mounts it again, `dfsbench lab fault {name} restart clientK` on a client node",
                name = sys.name()
            )));
        }
    }
    Ok(LabTarget {
        lab: sys.name().to_string(),
        uri: uri.clone(),
        env: cl.target_env(&state, uri),
        nodes: nodes_of(&state, uri),
        rate: state.rate.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::serves_reads;

    #[test]
    fn reads_come_from_the_gateways_a_target_names_else_from_the_data_nodes() {
        let s3 = "s3://dfsbench/lab?endpoint=http://198.18.3.2:9000";
        assert!(serves_reads(s3, "198.18.3.2", "minio"));
        assert!(
            !serves_reads(s3, "198.18.3.3", "minio"),
            "a drive set behind the gateway"
        );
        assert!(
            !serves_reads(s3, "198.18.3.20", "minio"),
            "an address the gateway's begins"
        );
        let swift = "swift://198.18.5.2:8080,198.18.5.3:8080/c?auth=http://198.18.5.2:8080/auth/v1.0";
        assert!(serves_reads(swift, "198.18.5.3", "storage+proxy"));
        assert!(!serves_reads(swift, "198.18.5.4", "storage+proxy"));
        let mount = "file:///var/lib/dfsbench/labs/moosefs/mnt";
        assert!(serves_reads(mount, "198.18.2.3", "chunkserver"));
        assert!(!serves_reads(mount, "198.18.2.2", "master"));
        assert!(serves_reads("hdfs://198.18.6.2:8020/d", "198.18.6.3", "datanode"));
        assert!(!serves_reads("hdfs://198.18.6.2:8020/d", "198.18.6.2", "namenode"));
    }
}
