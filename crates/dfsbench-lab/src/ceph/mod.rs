//! Ceph 16 (Debian's packages, no cephadm or systemd): node1 runs the mon, mgr, MDS and radosgw;
//! node2..4 one bluestore OSD each on a sparse block file. Every pool keeps 3 copies and serves
//! I/O with 2 (min_size 2), so one OSD node can go. CephFS is mounted with ceph-fuse in the root
//! namespace; radosgw serves S3 on node1. Every path (config, keys, logs, sockets) is inside the
//! lab's directory.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::state::{NodeState, State};
use crate::sys::{self, render, run, run_in, spawn_in, wait_for};
use crate::{Cluster, Error, Result, System};

const CEPH_CONF: &str = include_str!("ceph.conf");
/// Each OSD's sparse block file; bluestore never shrinks it (`down` deletes it).
const BLOCK_SIZE: u64 = 10 << 30;
const RGW_PORT: u16 = 7480;
const FS_NAME: &str = "dfsbench";
const FS_POOLS: [&str; 2] = ["cephfs_metadata", "cephfs_data"];
const BUCKET: &str = "dfsbench";
/// The RGW user of the s3:// target, with the lab's own keys (as the MinIO lab's).
const RGW_USER: &str = "dfsbench";
const KEY: &str = "dfsbench-lab";
const SECRET: &str = "dfsbench-lab-secret";
const REGION: &str = "us-east-1";
const MON_ROLE: &str = "mon+mgr+mds+rgw";
const START_LIMIT: Duration = Duration::from_secs(120);
const CMD_LIMIT: Duration = Duration::from_secs(60);

pub(crate) struct Ceph;

fn mon(state: &State) -> &NodeState {
    &state.nodes[0]
}

fn conf(state: &State) -> String {
    state.dir().join("ceph.conf").display().to_string()
}

fn keys_dir(state: &State) -> PathBuf {
    state.dir().join("keys")
}

fn osd_dir(node: &NodeState) -> PathBuf {
    node.data_dir.join("osd")
}

/// node2 holds osd.0, node3 osd.1, ...: OSDs are created in node order.
fn osd_id(state: &State, node: &NodeState) -> u32 {
    let index = state.nodes.iter().position(|n| n.name == node.name).unwrap_or(0);
    index.saturating_sub(1) as u32
}

fn rgw_url(state: &State) -> String {
    format!("http://{}:{RGW_PORT}", mon(state).addr)
}

fn mkdirs(dirs: &[PathBuf]) -> Result<()> {
    for d in dirs {
        fs::create_dir_all(d).map_err(|e| Error::runtime(format!("cannot create {}: {e}", d.display())))?;
    }
    Ok(())
}

/// A Ceph admin tool as client.admin, from node1's namespace; bounded even when the mon is gone.
fn admin_tool(state: &State, program: &str, args: &[&str]) -> Result<String> {
    let conf = conf(state);
    let mut all = vec!["-c", conf.as_str()];
    if program == "ceph" {
        all.extend_from_slice(&["--connect-timeout", "15"]);
    }
    all.extend_from_slice(args);
    run_in(&mon(state).netns, program, &all, CMD_LIMIT)
}

fn ceph(state: &State, args: &[&str]) -> Result<String> {
    admin_tool(state, "ceph", args)
}

fn ceph_json(state: &State, args: &[&str]) -> Result<Value> {
    let mut all = args.to_vec();
    all.extend_from_slice(&["--format", "json"]);
    let out = ceph(state, &all)?;
    serde_json::from_str(&out).map_err(|e| Error::runtime(format!("ceph {}: not JSON ({e})", args.join(" "))))
}

fn uuid() -> Result<String> {
    fs::read_to_string("/proc/sys/kernel/random/uuid")
        .map(|s| s.trim().to_string())
        .map_err(|e| Error::runtime(format!("cannot read a random uuid from the kernel: {e}")))
}

fn write_config(state: &State, fsid: &str) -> Result<()> {
    let dir = state.dir();
    mkdirs(&[keys_dir(state), dir.join("run"), dir.join("log")])?;
    let m = mon(state);
    let text = render(
        CEPH_CONF,
        &[
            ("fsid", fsid),
            ("mon_addr", &m.addr),
            ("net", &format!("198.18.{}.0/24", state.subnet)),
            ("dir", &dir.display().to_string()),
            ("block_size", &BLOCK_SIZE.to_string()),
            ("rgw_addr", &m.addr),
            ("rgw_port", &RGW_PORT.to_string()),
        ],
    );
    sys::write(Path::new(&conf(state)), &text)
}

/// The mon's store from nothing: its key and client.admin's (imported into the mon's keyring,
/// so the admin can talk to the new mon), a monmap with node1 on msgr v2 and v1.
fn make_mon(state: &State, fsid: &str) -> Result<()> {
    let keys = keys_dir(state);
    let mon_key = keys.join("mon.keyring").display().to_string();
    let admin_key = keys.join("admin.keyring").display().to_string();
    let limit = Duration::from_secs(30);
    let new_key = |path: &str, name: &str, caps: &[&str]| {
        let mut args = vec!["--create-keyring", path, "--gen-key", "-n", name];
        args.extend_from_slice(caps);
        run("ceph-authtool", &args, limit)
    };
    new_key(&mon_key, "mon.", &["--cap", "mon", "allow *"])?;
    let admin_caps = [
        "--cap", "mon", "allow *", "--cap", "osd", "allow *", "--cap", "mds", "allow *", "--cap", "mgr", "allow *",
    ];
    new_key(&admin_key, "client.admin", &admin_caps)?;
    run("ceph-authtool", &[&mon_key, "--import-keyring", &admin_key], limit)?;
    let monmap = keys.join("monmap").display().to_string();
    let addrs = format!("[v2:{0}:3300,v1:{0}:6789]", mon(state).addr);
    run(
        "monmaptool",
        &["--create", "--fsid", fsid, "--addv", "node1", &addrs, &monmap],
        limit,
    )?;
    // mkfs does nothing (and says nothing) when the mon's data directory is not empty.
    mkdirs(&[mon(state).data_dir.join("mon")])?;
    let conf = conf(state);
    run(
        "ceph-mon",
        &[
            "-c",
            &conf,
            "--mkfs",
            "-i",
            "node1",
            "--monmap",
            &monmap,
            "--keyring",
            &mon_key,
        ],
        limit,
    )
    .map(|_| ())
}

/// Start one of node1's daemons (`program -i node1` or `-n NAME`) in the foreground.
fn spawn_daemon(state: &State, node: &NodeState, program: &str, id_args: &[&str]) -> Result<()> {
    let conf = conf(state);
    let mut args = vec!["-c", conf.as_str(), "-f"];
    args.extend_from_slice(id_args);
    let out = node.data_dir.join(format!("{program}.out"));
    spawn_in(Some(&node.netns), program, &args, &out).map(|_| ())
}

/// A daemon's cephx key in its keyring file, made once (its caps as `ceph auth` takes them).
fn daemon_key(state: &State, name: &str, keyring: &Path, caps: &[&str]) -> Result<()> {
    if keyring.exists() {
        return Ok(());
    }
    if let Some(dir) = keyring.parent() {
        mkdirs(&[dir.to_path_buf()])?;
    }
    let out = keyring.display().to_string();
    let mut args = vec!["auth", "get-or-create", name];
    args.extend_from_slice(caps);
    args.extend_from_slice(&["-o", &out]);
    ceph(state, &args).map(|_| ())
}

fn start_mon(state: &State) -> Result<()> {
    spawn_daemon(state, mon(state), "ceph-mon", &["-i", "node1"])?;
    wait_for("the Ceph mon", START_LIMIT, || ceph(state, &["mon", "stat"]).ok())?;
    Ok(())
}

fn start_mgr(state: &State) -> Result<()> {
    let keyring = mon(state).data_dir.join("mgr/keyring");
    let caps = ["mon", "allow profile mgr", "osd", "allow *", "mds", "allow *"];
    daemon_key(state, "mgr.node1", &keyring, &caps)?;
    spawn_daemon(state, mon(state), "ceph-mgr", &["-i", "node1"])
}

fn start_mds(state: &State) -> Result<()> {
    let keyring = mon(state).data_dir.join("mds/keyring");
    let caps = [
        "mon",
        "allow profile mds",
        "osd",
        "allow rwx",
        "mds",
        "allow",
        "mgr",
        "allow profile mds",
    ];
    daemon_key(state, "mds.node1", &keyring, &caps)?;
    spawn_daemon(state, mon(state), "ceph-mds", &["-i", "node1"])
}

fn start_rgw(state: &State) -> Result<()> {
    let keyring = mon(state).data_dir.join("rgw/keyring");
    let caps = ["mon", "allow rw", "osd", "allow rwx", "mgr", "allow rw"];
    daemon_key(state, "client.rgw.node1", &keyring, &caps)?;
    spawn_daemon(state, mon(state), "radosgw", &["-n", "client.rgw.node1"])?;
    let url = format!("{}/", rgw_url(state));
    wait_for("radosgw to answer", START_LIMIT, || {
        let code = sys::curl(&["-o", "/dev/null", "-w", "%{http_code}", &url], Duration::from_secs(5)).ok()?;
        (code.trim() == "200").then_some(())
    })
}

/// Everything node1 runs, in the order they depend on each other.
fn start_mon_node(state: &State) -> Result<()> {
    start_mon(state)?;
    start_mgr(state)?;
    start_mds(state)?;
    start_rgw(state)
}

/// The OSD ids the osdmap lists, with whether each is up.
fn osds(state: &State) -> Result<Vec<(u32, bool)>> {
    let dump = ceph_json(state, &["osd", "dump"])?;
    let list = dump["osds"].as_array().cloned().unwrap_or_default();
    Ok(list
        .iter()
        .filter_map(|o| Some((o["osd"].as_u64()? as u32, o["up"].as_u64()? == 1)))
        .collect())
}

/// Give a node's OSD an id and a key: a new id, or its own id again after a wipe destroyed it.
/// Returns the uuid its mkfs must use.
fn register_osd(state: &State, node: &NodeState) -> Result<String> {
    let id = osd_id(state, node);
    let uuid = uuid()?;
    let id_arg = id.to_string();
    let known = osds(state)?.iter().any(|(i, _)| *i == id);
    let mut args = vec!["osd", "new", uuid.as_str()];
    if known {
        args.push(&id_arg);
    }
    let got = ceph(state, &args)?;
    if got.trim() != id_arg {
        return Err(Error::runtime(format!(
            "ceph osd new gave {} id {} instead of {id}; `dfsbench lab down ceph` and up again",
            node.name,
            got.trim()
        )));
    }
    mkdirs(&[osd_dir(node)])?;
    let caps = ["mon", "allow profile osd", "mgr", "allow profile osd", "osd", "allow *"];
    daemon_key(state, &format!("osd.{id}"), &osd_dir(node).join("keyring"), &caps)?;
    Ok(uuid)
}

/// bluestore's mkfs: creates the sparse block file (`bluestore block create`).
fn mkfs_osd(state: &State, node: &NodeState, uuid: &str) -> Result<()> {
    let conf = conf(state);
    let id = osd_id(state, node).to_string();
    let data = osd_dir(node).display().to_string();
    let args = [
        "-c",
        &conf,
        "-i",
        &id,
        "--mkfs",
        "--osd-uuid",
        uuid,
        "--osd-data",
        &data,
    ];
    run("ceph-osd", &args, Duration::from_secs(120)).map(|_| ())
}

/// Register and mkfs the OSDs of nodes that have none (all at `up`, a wiped one later); the
/// mkfs runs in parallel, each is a few seconds of disk writes.
fn create_osds(state: &State, nodes: &[NodeState]) -> Result<()> {
    let fresh: Vec<&NodeState> = nodes.iter().filter(|n| !osd_dir(n).join("ready").exists()).collect();
    let mut uuids = Vec::new();
    for n in &fresh {
        uuids.push(register_osd(state, n)?);
    }
    std::thread::scope(|s| {
        let runs: Vec<_> = fresh
            .iter()
            .zip(&uuids)
            .map(|(n, u)| s.spawn(move || mkfs_osd(state, n, u)))
            .collect();
        runs.into_iter().try_for_each(|r| {
            r.join()
                .unwrap_or_else(|_| Err(Error::runtime("an OSD mkfs panicked".into())))
        })
    })
}

fn spawn_osd(state: &State, node: &NodeState) -> Result<()> {
    let id = osd_id(state, node).to_string();
    let data = osd_dir(node).display().to_string();
    spawn_daemon(state, node, "ceph-osd", &["-i", &id, "--osd-data", &data])
}

fn wait_osds_up(state: &State, nodes: &[NodeState]) -> Result<()> {
    let want: Vec<u32> = nodes.iter().map(|n| osd_id(state, n)).collect();
    wait_for("the OSDs up in the osdmap", START_LIMIT, || {
        let up = osds(state).ok()?;
        want.iter().all(|id| up.contains(&(*id, true))).then_some(())
    })
}

/// The CephFS pools (with the defaults of ceph.conf: 8 PGs, 3 copies) and file system.
fn make_fs(state: &State) -> Result<()> {
    for pool in FS_POOLS {
        ceph(state, &["osd", "pool", "create", pool])?;
    }
    ceph(state, &["fs", "new", FS_NAME, FS_POOLS[0], FS_POOLS[1]]).map(|_| ())
}

/// The RGW user with the lab's keys, and the bucket of the s3:// target.
fn make_user_and_bucket(state: &State) -> Result<()> {
    let uid = format!("--uid={RGW_USER}");
    let access = format!("--access-key={KEY}");
    let secret = format!("--secret={SECRET}");
    admin_tool(
        state,
        "radosgw-admin",
        &["user", "create", &uid, "--display-name=dfsbench lab", &access, &secret],
    )?;
    sys::write(
        &netrc(state),
        &format!("machine {} login {KEY} password {SECRET}\n", mon(state).addr),
    )?;
    let mut last = String::new();
    wait_for(&format!("bucket {BUCKET} created"), START_LIMIT, || {
        make_bucket(state).map_err(|e| last = e.to_string()).ok()
    })
    .map_err(|e| Error::runtime(format!("{e} (last: {last})")))
}

/// curl reads the S3 key from this file, never from its command line.
fn netrc(state: &State) -> PathBuf {
    state.dir().join("netrc")
}

fn make_bucket(state: &State) -> Result<()> {
    let netrc = netrc(state).display().to_string();
    let sigv4 = format!("aws:amz:{REGION}:s3");
    let url = format!("{}/{BUCKET}", rgw_url(state));
    let args = [
        "--netrc-file",
        &netrc,
        "--aws-sigv4",
        &sigv4,
        "-H",
        "x-amz-content-sha256: UNSIGNED-PAYLOAD",
        "-X",
        "PUT",
        "-w",
        "\n%{http_code}",
        &url,
    ];
    let out = sys::curl(&args, Duration::from_secs(10))?;
    // 200 also when the bucket is already ours.
    match out.rsplit_once('\n') {
        Some((_, "200")) => Ok(()),
        _ => Err(Error::runtime(format!("PUT bucket {BUCKET}: {}", out.trim()))),
    }
}

/// ceph-fuse with its own log and admin socket in `logs` (several run at once on client
/// nodes); it reaches the mon at node1's address (the conf's `mon host`) over the bridge.
fn fuse_argv(state: &State, mnt: &str, logs: &Path) -> Vec<String> {
    let conf = conf(state);
    let log = format!("--log-file={}", logs.join("ceph-fuse.log").display());
    let asok = format!("--admin-socket={}", logs.join("ceph-fuse.asok").display());
    ["ceph-fuse", "-c", &conf, "--id", "admin", &log, &asok, "-f", mnt]
        .map(String::from)
        .to_vec()
}

impl System for Ceph {
    fn name(&self) -> &'static str {
        "ceph"
    }
    fn code(&self) -> &'static str {
        "ceph"
    }
    fn summary(&self) -> &'static str {
        "Ceph: mon, mgr, MDS and RGW, and 3 OSDs; a ceph-fuse mount and RGW's S3"
    }
    fn later_packages(&self) -> &'static [&'static str] {
        // They come with the daemons' packages.
        &["ceph", "ceph-base"]
    }
    fn packages(&self) -> &'static [&'static str] {
        &[
            "ceph-mon",
            "ceph-osd",
            "ceph-mds",
            "ceph-mgr",
            "radosgw",
            "ceph-fuse",
            "ceph-common",
            "curl",
        ]
    }
    fn cluster(&self) -> Option<&dyn Cluster> {
        Some(self)
    }
}

impl Cluster for Ceph {
    fn layouts(&self) -> &'static [&'static str] {
        &["replica3"]
    }
    fn nodes(&self, _layout: &str) -> Vec<&'static str> {
        vec![MON_ROLE, "osd", "osd", "osd"]
    }

    fn up(&self, state: &mut State) -> Result<()> {
        let fsid = uuid()?;
        write_config(state, &fsid)?;
        make_mon(state, &fsid)?;
        start_mon(state)?;
        start_mgr(state)?;
        let osd_nodes = state.nodes[1..].to_vec();
        create_osds(state, &osd_nodes)?;
        for n in &osd_nodes {
            spawn_osd(state, n)?;
        }
        wait_osds_up(state, &osd_nodes)?;
        make_fs(state)?;
        start_mds(state)?;
        start_rgw(state)?;
        make_user_and_bucket(state)?;
        crate::mount::fuse(self, state, None, START_LIMIT)?;
        let mut last = String::new();
        wait_for("every PG active+clean", START_LIMIT, || match self.probe(state) {
            Ok(None) => Some(()),
            Ok(Some(why)) => {
                last = why;
                None
            }
            Err(e) => {
                last = e.to_string();
                None
            }
        })
        .map_err(|e| Error::runtime(format!("{e} (last: {last})")))
    }

    fn start_node(&self, state: &mut State, node: &str) -> Result<()> {
        let n = state.node(node)?.clone();
        if n.role == MON_ROLE {
            return start_mon_node(state);
        }
        let one = std::slice::from_ref(&n);
        create_osds(state, one)?;
        spawn_osd(state, &n)?;
        wait_osds_up(state, one)
    }

    fn wipe_node(&self, state: &State, node: &str) -> Result<()> {
        let n = state.node(node)?;
        if n.role == MON_ROLE {
            return Err(Error::usage(format!(
                "{node} runs the only Ceph mon, whose store is the cluster; wipe an OSD node (node2..)"
            )));
        }
        let name = format!("osd.{}", osd_id(state, n));
        // destroy wants the OSD down in the osdmap; it was killed a moment ago.
        ceph(state, &["osd", "down", &name])?;
        ceph(state, &["osd", "destroy", &name, "--yes-i-really-mean-it"])?;
        let d = osd_dir(n);
        fs::remove_dir_all(&d).map_err(|e| Error::runtime(format!("cannot wipe {}: {e}", d.display())))
    }

    fn rejoin_wiped(&self, _state: &mut State, _node: &str) -> Result<()> {
        // start_node made a new OSD under the destroyed one's id: it keeps its place in the
        // CRUSH map, comes up `in`, and the PGs backfill onto it.
        Ok(())
    }

    fn targets(&self, state: &State) -> Vec<String> {
        vec![
            format!("file://{}", state.mount_point().display()),
            format!("s3://{BUCKET}/lab?endpoint={}", rgw_url(state)),
        ]
    }

    fn target_env(&self, _state: &State, target: &str) -> Vec<(&'static str, String)> {
        crate::target::s3_env(target, KEY, SECRET, REGION)
    }

    fn notes(&self, state: &State) -> Vec<String> {
        vec![
            format!("S3 (radosgw, user {RGW_USER}): access key {KEY}, secret {SECRET}, region {REGION}"),
            format!(
                "ceph CLI: nsenter --net=/run/netns/{} ceph -c {} -s",
                mon(state).netns,
                conf(state)
            ),
        ]
    }

    fn fuse_client(&self, state: &State, mnt: &str, logs: &Path) -> Option<Vec<String>> {
        Some(fuse_argv(state, mnt, logs))
    }

    fn probe(&self, state: &State) -> Result<Option<String>> {
        Ok(unclean(&ceph_json(state, &["status"])?))
    }
}

/// From `ceph status --format json`: None when every OSD is up and in, every PG active+clean
/// and no object degraded, misplaced or unfound; else what is not.
fn unclean(status: &Value) -> Option<String> {
    let osdmap = &status["osdmap"];
    let count = |v: &Value| v.as_u64().unwrap_or(0);
    let (total, up, inn) = (
        count(&osdmap["num_osds"]),
        count(&osdmap["num_up_osds"]),
        count(&osdmap["num_in_osds"]),
    );
    let mut why = Vec::new();
    if up < total || inn < total {
        why.push(format!("{up} of {total} OSDs up, {inn} in"));
    }
    let pgmap = &status["pgmap"];
    if count(&pgmap["num_pgs"]) == 0 {
        why.push("no PGs reported yet".into());
    }
    for s in pgmap["pgs_by_state"].as_array().into_iter().flatten() {
        let state = s["state_name"].as_str().unwrap_or("?");
        if state != "active+clean" {
            why.push(format!("{} PGs {state}", count(&s["count"])));
        }
    }
    for kind in ["degraded", "misplaced", "unfound"] {
        let n = count(&pgmap[format!("{kind}_objects")]);
        if n > 0 {
            why.push(format!("{n} objects {kind}"));
        }
    }
    (!why.is_empty()).then(|| why.join(", "))
}

#[cfg(test)]
mod tests {
    use super::unclean;
    use serde_json::json;

    #[test]
    fn all_pgs_active_clean_with_every_osd_up_is_healthy() {
        let st = json!({
            "osdmap": {"num_osds": 3, "num_up_osds": 3, "num_in_osds": 3},
            "pgmap": {"num_pgs": 57, "pgs_by_state": [{"state_name": "active+clean", "count": 57}]}
        });
        assert_eq!(unclean(&st), None);
    }

    #[test]
    fn a_down_osd_and_degraded_pgs_are_reported() {
        let st = json!({
            "osdmap": {"num_osds": 3, "num_up_osds": 2, "num_in_osds": 3},
            "pgmap": {"num_pgs": 57, "degraded_objects": 378, "pgs_by_state": [
                {"state_name": "active+undersized+degraded", "count": 41},
                {"state_name": "active+undersized", "count": 16}]}
        });
        assert_eq!(
            unclean(&st).as_deref(),
            Some("2 of 3 OSDs up, 3 in, 41 PGs active+undersized+degraded, 16 PGs active+undersized, 378 objects degraded")
        );
    }

    #[test]
    fn no_pg_stats_yet_is_not_healthy() {
        let st = json!({"osdmap": {"num_osds": 0}, "pgmap": {"num_pgs": 0}});
        assert_eq!(unclean(&st).as_deref(), Some("no PGs reported yet"));
    }
}
