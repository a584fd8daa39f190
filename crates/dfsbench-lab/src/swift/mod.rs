//! OpenStack Swift: the proxy (tempauth + s3api, with memcached) on node1; account, container
//! and object servers on node2..4, each node one zone with one device, rings of 3 replicas.
//! Every storage node also runs its replicators, the object updater and an rsync daemon, so a
//! restarted or wiped node gets its copies back by itself. The layout `proxy-per-node` runs a
//! proxy on every storage node too, as clusters served by several proxies do; they share
//! node1's memcached, so a token any of them issued is valid on all. The single-host layout
//! `local` is in `local.rs`.

mod local;

use std::fs;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use crate::local::Local;
use crate::state::{NodeState, State};
use crate::sys::{self, render, run, spawn_in, wait_for};
use crate::{Cluster, Error, Result, System};

const SWIFT_CONF: &str = include_str!("swift.conf");
const RINGS_PY: &str = include_str!("rings.py");
const STORAGE_CONF: &str = include_str!("storage-server.conf");
const PROXY_CONF: &str = include_str!("proxy-server.conf");
const RSYNCD_CONF: &str = include_str!("rsyncd.conf");
const DISPERSION_CONF: &str = include_str!("dispersion.conf");

const PROXY_PORT: u16 = 8080;
/// 16 partitions. With 3 replicas on 3 devices every device holds every partition anyway; few
/// partitions keep the replicators' passes cheap (they run every 2 s) and the dispersion report
/// at 100 % coverage checks them all in about a second.
const PART_POWER: &str = "4";
const REPLICAS: &str = "3";
const CONTAINER: &str = "dfsbench";
const USER: &str = "test:tester";
const KEY: &str = "testing";
const START_LIMIT: Duration = Duration::from_secs(90);
const CMD_LIMIT: Duration = Duration::from_secs(60);

/// The servers of a storage node, with their ports (the rings name the same ones).
const SERVERS: &[(&str, u16)] = &[("account", 6202), ("container", 6201), ("object", 6200)];
/// Daemons that run next to the servers: (program, the server config it reads).
const DAEMONS: &[(&str, &str)] = &[
    ("swift-account-replicator", "account"),
    ("swift-container-replicator", "container"),
    ("swift-object-replicator", "object"),
    ("swift-object-updater", "object"),
];

pub(crate) struct Swift;

/// The layout with a proxy on every node, beside node1's.
const PROXY_PER_NODE: &str = "proxy-per-node";

/// node1: the proxy that authenticates, and memcached.
fn proxy(state: &State) -> &NodeState {
    &state.nodes[0]
}

fn runs_proxy(node: &NodeState) -> bool {
    node.role == "proxy" || node.role == "storage+proxy"
}

/// Every node that runs a proxy, node1 first.
fn proxies(state: &State) -> impl Iterator<Item = &NodeState> {
    state.nodes.iter().filter(|n| runs_proxy(n))
}

/// tempauth keeps its tokens in memcached: one, on node1, for every proxy.
fn memcache_server(state: &State) -> String {
    format!("{}:11211", proxy(state).addr)
}

/// Rings, swift.conf and dispersion.conf: one folder shared by every node (never /etc/swift).
fn swift_dir(state: &State) -> PathBuf {
    state.dir().join("etc")
}

fn devices(node: &NodeState) -> PathBuf {
    node.data_dir.join("srv")
}

/// The node's one device (`d2` on node2): a directory, hence `mount_check = false`.
fn device_name(node: &NodeState) -> String {
    format!("d{}", node.name.trim_start_matches("node"))
}

fn device(node: &NodeState) -> PathBuf {
    devices(node).join(device_name(node))
}

fn proxy_url(state: &State) -> String {
    node_proxy_url(proxy(state))
}

fn node_proxy_url(node: &NodeState) -> String {
    format!("http://{}:{PROXY_PORT}", node.addr)
}

fn mkdirs(dirs: &[PathBuf]) -> Result<()> {
    for d in dirs {
        fs::create_dir_all(d).map_err(|e| Error::runtime(format!("cannot create {}: {e}", d.display())))?;
    }
    Ok(())
}

fn write_common_config(state: &State) -> Result<()> {
    let dir = swift_dir(state);
    mkdirs(std::slice::from_ref(&dir))?;
    sys::write(&dir.join("swift.conf"), SWIFT_CONF)?;
    let dir_arg = dir.display().to_string();
    sys::write(
        &dir.join("dispersion.conf"),
        &render(
            DISPERSION_CONF,
            &[
                ("addr", &proxy(state).addr),
                ("port", &PROXY_PORT.to_string()),
                ("swift_dir", &dir_arg),
            ],
        ),
    )?;
    let script = dir.join("rings.py");
    sys::write(&script, RINGS_PY)?;
    let mut args = vec![
        script.display().to_string(),
        dir_arg,
        PART_POWER.into(),
        REPLICAS.into(),
    ];
    args.extend(
        state.nodes[1..]
            .iter()
            .map(|n| format!("{}:{}", n.addr, device_name(n))),
    );
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    // The Debian python that has the swift modules, not whichever python3 is first on PATH.
    run("/usr/bin/python3", &args, CMD_LIMIT).map(|_| ())
}

/// The HTTP status a URL answers with (any status means the server listens), via curl.
fn http_status(url: &str) -> Option<u16> {
    sys::curl(&["-o", "/dev/null", "-w", "%{http_code}", url], Duration::from_secs(5))
        .ok()?
        .trim()
        .parse()
        .ok()
        .filter(|&c| c > 0)
}

/// A storage node's servers and daemons, and its proxy if it runs one.
fn start_storage_node(state: &State, node: &NodeState) -> Result<()> {
    start_storage_servers(state, node)?;
    if runs_proxy(node) {
        start_proxy(state, node)?;
    }
    Ok(())
}

fn start_storage_servers(state: &State, node: &NodeState) -> Result<()> {
    mkdirs(&[device(node), node.data_dir.join("recon")])?;
    let dir = node.data_dir.display().to_string();
    let devices_arg = devices(node).display().to_string();
    let rsyncd = node.data_dir.join("rsyncd.conf");
    sys::write(
        &rsyncd,
        &render(
            RSYNCD_CONF,
            &[("addr", &node.addr), ("dir", &dir), ("devices", &devices_arg)],
        ),
    )?;
    let _ = fs::remove_file(node.data_dir.join("rsyncd.pid"));
    let rsync_conf = format!("--config={}", rsyncd.display());
    spawn_in(
        Some(&node.netns),
        "rsync",
        &["--daemon", "--no-detach", &rsync_conf],
        &node.data_dir.join("rsyncd.out"),
    )?;
    let swift_dir_arg = swift_dir(state).display().to_string();
    let recon = node.data_dir.join("recon").display().to_string();
    for (kind, port) in SERVERS {
        let conf = node.data_dir.join(format!("{kind}-server.conf"));
        let text = render(
            STORAGE_CONF,
            &[
                ("kind", kind),
                ("swift_dir", &swift_dir_arg),
                ("devices", &devices_arg),
                ("addr", &node.addr),
                ("port", &port.to_string()),
                ("recon", &recon),
            ],
        );
        sys::write(&conf, &text)?;
        let conf_arg = conf.display().to_string();
        let log = node.data_dir.join(format!("{kind}-server.log"));
        spawn_in(
            Some(&node.netns),
            &format!("swift-{kind}-server"),
            &[&conf_arg, "-v"],
            &log,
        )?;
    }
    for (program, kind) in DAEMONS {
        let conf = node.data_dir.join(format!("{kind}-server.conf")).display().to_string();
        let log = node
            .data_dir
            .join(format!("{}.log", program.trim_start_matches("swift-")));
        spawn_in(Some(&node.netns), program, &[&conf, "-v"], &log)?;
    }
    for (kind, port) in SERVERS {
        let url = format!("http://{}:{port}/", node.addr);
        wait_for(&format!("the {kind} server of {}", node.name), START_LIMIT, || {
            http_status(&url)
        })?;
    }
    Ok(())
}

/// The proxy of node `p` (with memcached on node1); its log, access lines included, is
/// `proxy-server.log` in the node's directory.
fn start_proxy(state: &State, p: &NodeState) -> Result<()> {
    mkdirs(std::slice::from_ref(&p.data_dir))?;
    if p.name == proxy(state).name {
        spawn_in(
            Some(&p.netns),
            "memcached",
            &["-l", &p.addr, "-p", "11211", "-U", "0", "-m", "64", "-u", "root"],
            &p.data_dir.join("memcached.log"),
        )?;
    }
    let conf = p.data_dir.join("proxy-server.conf");
    let text = render(
        PROXY_CONF,
        &[
            ("swift_dir", &swift_dir(state).display().to_string()),
            ("addr", &p.addr),
            ("port", &PROXY_PORT.to_string()),
            ("memcache", &memcache_server(state)),
        ],
    );
    sys::write(&conf, &text)?;
    let conf_arg = conf.display().to_string();
    spawn_in(
        Some(&p.netns),
        "swift-proxy-server",
        &[&conf_arg, "-v"],
        &p.data_dir.join("proxy-server.log"),
    )?;
    let health = format!("{}/healthcheck", node_proxy_url(p));
    wait_for(
        &format!("the Swift proxy's healthcheck on {}", p.name),
        START_LIMIT,
        || (http_status(&health) == Some(200)).then_some(()),
    )
}

/// tempauth: the storage URL and token for test:tester.
fn authenticate(state: &State) -> Option<(String, String)> {
    let user = format!("X-Auth-User: {USER}");
    let key = format!("X-Auth-Key: {KEY}");
    let url = format!("{}/auth/v1.0", proxy_url(state));
    let head = sys::curl(
        &["-f", "-D", "-", "-o", "/dev/null", "-H", &user, "-H", &key, &url],
        Duration::from_secs(10),
    )
    .ok()?;
    let header = |name: &str| {
        head.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim().eq_ignore_ascii_case(name).then(|| v.trim().to_string())
        })
    };
    Some((header("X-Storage-Url")?, header("X-Auth-Token")?))
}

/// Create the container (also the S3 bucket) and write, read back and delete one object.
fn round_trip(state: &State) -> Option<()> {
    let (storage, token) = authenticate(state)?;
    let auth = format!("X-Auth-Token: {token}");
    let container = format!("{storage}/{CONTAINER}");
    let curl = |args: &[&str]| {
        let mut all = vec!["-f", "-H", &auth];
        all.extend_from_slice(args);
        sys::curl(&all, Duration::from_secs(10)).ok()
    };
    curl(&["-X", "PUT", "-o", "/dev/null", &container])?;
    let object = format!("{container}/.lab-ready");
    let body = format!("dfsbench lab {}", std::process::id());
    curl(&["-X", "PUT", "-o", "/dev/null", "--data-binary", &body, &object])?;
    let got = curl(&[&object])?;
    curl(&["-X", "DELETE", "-o", "/dev/null", &object])?;
    (got == body).then_some(())
}

fn dispersion_conf(state: &State) -> String {
    swift_dir(state).join("dispersion.conf").display().to_string()
}

impl System for Swift {
    fn name(&self) -> &'static str {
        "swift"
    }
    fn code(&self) -> &'static str {
        "sw"
    }
    fn summary(&self) -> &'static str {
        "OpenStack Swift: a proxy (tempauth, s3api) and 3 storage nodes, 3 replicas; one host: 3 devices"
    }
    fn packages(&self) -> &'static [&'static str] {
        // The versions the lab was tested with (Debian 12).
        &[
            "swift=2.30.1-0+deb12u3",
            "swift-proxy=2.30.1-0+deb12u3",
            "swift-object=2.30.1-0+deb12u3",
            "swift-container=2.30.1-0+deb12u3",
            "swift-account=2.30.1-0+deb12u3",
            "python3-swiftclient=1:4.1.0-2",
            "memcached=1.6.18-1+deb12u1",
            "rsync",
            "curl",
        ]
    }
    fn cluster(&self) -> Option<&dyn Cluster> {
        Some(self)
    }
    fn local(&self) -> Option<&dyn Local> {
        Some(&local::LocalSwift)
    }
}

impl Cluster for Swift {
    fn layouts(&self) -> &'static [&'static str] {
        &["replica3", PROXY_PER_NODE]
    }
    fn nodes(&self, layout: &str) -> Vec<&'static str> {
        let storage = if layout == PROXY_PER_NODE {
            "storage+proxy"
        } else {
            "storage"
        };
        vec!["proxy", storage, storage, storage]
    }

    fn up(&self, state: &mut State) -> Result<()> {
        write_common_config(state)?;
        for node in &state.nodes[1..] {
            start_storage_node(state, node)?;
        }
        start_proxy(state, proxy(state))?;
        wait_for(
            "a Swift write + read through the proxy (tempauth, container dfsbench)",
            START_LIMIT,
            || round_trip(state),
        )?;
        // One container and one object in every partition, for the probe's dispersion report.
        run(
            "swift-dispersion-populate",
            &[&dispersion_conf(state)],
            Duration::from_secs(300),
        )
        .map(|_| ())
    }

    fn start_node(&self, state: &mut State, node: &str) -> Result<()> {
        let n = state.node(node)?.clone();
        if n.role == "proxy" {
            return start_proxy(state, &n);
        }
        start_storage_node(state, &n)
    }

    fn wipe_node(&self, state: &State, node: &str) -> Result<()> {
        let n = state.node(node)?;
        if n.role == "proxy" {
            return Err(Error::usage(format!(
                "{node} runs the Swift proxy and holds no data; wipe a storage node (node2..) or restart {node}"
            )));
        }
        let d = device(n);
        fs::remove_dir_all(&d)
            .and_then(|_| fs::create_dir_all(&d))
            .map_err(|e| Error::runtime(format!("cannot wipe {}: {e}", d.display())))
    }

    fn rejoin_wiped(&self, _state: &mut State, _node: &str) -> Result<()> {
        // The ring still lists the empty device: the other nodes' replicators refill it.
        Ok(())
    }

    fn target_env(&self, _state: &State, target: &str) -> Vec<(&'static str, String)> {
        // tempauth's user is also s3api's access key, its key the secret.
        if target.starts_with("swift://") {
            vec![("ST_USER", USER.into()), ("ST_KEY", KEY.into())]
        } else {
            vec![
                ("AWS_ACCESS_KEY_ID", USER.into()),
                ("AWS_SECRET_ACCESS_KEY", KEY.into()),
            ]
        }
    }

    fn targets(&self, state: &State) -> Vec<String> {
        let url = proxy_url(state);
        let all: Vec<String> = proxies(state).map(|p| format!("{}:{PROXY_PORT}", p.addr)).collect();
        if all.len() > 1 {
            // Every proxy, workers spread over them; node1's authenticates.
            let all = all.join(",");
            return vec![
                format!("swift://{all}/{CONTAINER}?auth={url}/auth/v1.0"),
                format!("s3://{all}/{CONTAINER}?region=us-east-1"),
            ];
        }
        vec![
            format!("swift://{CONTAINER}?auth={url}/auth/v1.0"),
            format!("s3://{CONTAINER}?endpoint={url}&region=us-east-1"),
        ]
    }

    fn probe(&self, state: &State) -> Result<Option<String>> {
        let out = run(
            "swift-dispersion-report",
            &["-j", &dispersion_conf(state)],
            Duration::from_secs(120),
        )?;
        dispersion_missing(&out)
    }
}

/// From `swift-dispersion-report -j`: None when 100 % of the container and object copies were
/// found, else how many are missing.
fn dispersion_missing(out: &str) -> Result<Option<String>> {
    let line = out
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with('{'))
        .unwrap_or("");
    let report: Value = serde_json::from_str(line).map_err(|_| {
        Error::runtime(format!(
            "swift-dispersion-report printed no JSON report (was swift-dispersion-populate run?): {}",
            out.trim().lines().last().unwrap_or("no output")
        ))
    })?;
    let mut missing = Vec::new();
    for kind in ["container", "object"] {
        let r = &report[kind];
        let (Some(found), Some(expected)) = (r["copies_found"].as_u64(), r["copies_expected"].as_u64()) else {
            return Err(Error::runtime(format!(
                "swift-dispersion-report has no {kind} report (no dispersion {kind}s listed)"
            )));
        };
        if found < expected {
            missing.push(format!("{} of {expected} {kind} copies missing", expected - found));
        }
    }
    Ok((!missing.is_empty()).then(|| missing.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::dispersion_missing;

    #[test]
    fn a_full_dispersion_report_is_healthy() {
        let out = r#"{"object": {"retries": 0, "missing_0": 64, "copies_found": 192, "pct_found": 100.0, "copies_expected": 192, "overlapping": 0}, "container": {"retries": 0, "missing_0": 64, "copies_found": 192, "pct_found": 100.0, "copies_expected": 192, "overlapping": 0}}"#;
        assert_eq!(dispersion_missing(out).unwrap(), None);
    }

    #[test]
    fn missing_copies_are_counted_per_kind() {
        let out = r#"{"object": {"copies_found": 150, "copies_expected": 192}, "container": {"copies_found": 192, "copies_expected": 192}}"#;
        assert_eq!(
            dispersion_missing(out).unwrap().as_deref(),
            Some("42 of 192 object copies missing")
        );
    }

    #[test]
    fn a_report_without_json_is_an_error() {
        assert!(dispersion_missing("No containers to query. Has swift-dispersion-populate been run?").is_err());
    }
}
