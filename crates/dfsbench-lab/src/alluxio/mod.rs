//! Alluxio: the master (RPC 19998, REST 19999, embedded journal 19200) and the REST proxy
//! (39999) on node1, a worker (29999) on node2 and node3, from the Alluxio 2.9.4 jars
//! `dfsbench lab install alluxio` puts in `.cache/alluxio` (Maven Central), run with the machine's
//! Java 17. The under store is one local directory every node sees; writes go through
//! (CACHE_THROUGH), so it holds the durable copy of every file and the workers a cache.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value};

use crate::install::{finish_maven, maven_jars, MavenJars};
use crate::state::{NodeState, State};
use crate::sys::PidRecord;
use crate::sys::{self, render, spawn_in, wait_for};
use crate::{Cluster, Error, Result, System};

const SITE: &str = include_str!("alluxio-site.properties");
const LOG4J2: &str = include_str!("log4j2.properties");

const ALLUXIO_VERSION: &str = "2.9.4";
const WEB_PORT: u16 = 19999;
const PROXY_PORT: u16 = 39999;
const WORKER_RPC_PORT: u16 = 29999;
const WORKER_WEB_PORT: u16 = 30000;
/// The directory every lab target points into (created at `up`).
const DIR: &str = "dfsbench";
const START_LIMIT: Duration = Duration::from_secs(180);
/// A worker silent for longer is not counted as live (it heartbeats every second).
const HEARTBEAT_LIMIT_SEC: u64 = 3;
const MASTER_CLASS: &str = "alluxio.master.AlluxioMaster";
const WORKER_CLASS: &str = "alluxio.worker.AlluxioWorker";
const PROXY_CLASS: &str = "alluxio.proxy.AlluxioProxy";

pub(crate) struct Alluxio;

fn master(state: &State) -> &NodeState {
    &state.nodes[0]
}

fn workers(state: &State) -> &[NodeState] {
    &state.nodes[1..]
}

fn alluxio_home() -> PathBuf {
    sys::cache_dir().join("alluxio")
}

fn jars_installed(home: &Path) -> bool {
    ["master", "worker", "proxy"].iter().all(|j| {
        home.join(format!("lib/alluxio-core-server-{j}-{ALLUXIO_VERSION}.jar"))
            .is_file()
    })
}

/// The Alluxio master, worker and REST proxy jars from Maven Central into `.cache/alluxio/lib`
/// (Alluxio publishes no server tarball there; its server modules are plain jars whose main
/// classes the lab runs with `java -cp`); cached. slf4j-reload4j is left out: log4j-slf4j-impl
/// is the binding Alluxio logs with.
fn install_jars() -> Result<Vec<String>> {
    let jars = MavenJars {
        part: "alluxio",
        release: "alluxio-2.9.4",
        pom: include_str!("pom.xml"),
        scope: "runtime",
        exclude: Some("slf4j-reload4j"),
        needed: &[
            "lib/alluxio-core-server-master-2.9.4.jar",
            "lib/alluxio-core-server-worker-2.9.4.jar",
            "lib/alluxio-core-server-proxy-2.9.4.jar",
        ],
    };
    match maven_jars(&jars)? {
        Some(staging) => finish_maven(&jars, &staging),
        None => Ok(Vec::new()),
    }
}

/// The under store, outside every node's directory: wiping a worker leaves it alone.
fn ufs_dir(state: &State) -> PathBuf {
    state.dir().join("ufs")
}

fn conf_dir(node: &NodeState) -> PathBuf {
    node.data_dir.join("conf")
}

fn cache_dir(node: &NodeState) -> PathBuf {
    node.data_dir.join("cache")
}

fn write_config(state: &State, node: &NodeState) -> Result<()> {
    let conf = conf_dir(node);
    fs::create_dir_all(&conf).map_err(|e| Error::runtime(format!("cannot create {}: {e}", conf.display())))?;
    let dir = node.data_dir.display().to_string();
    let ufs = ufs_dir(state).display().to_string();
    let values = [
        ("master", master(state).addr.as_str()),
        ("addr", &node.addr),
        ("dir", &dir),
        ("ufs", &ufs),
    ];
    sys::write(&conf.join("alluxio-site.properties"), &render(SITE, &values))?;
    sys::write(&conf.join("log4j2.properties"), LOG4J2)
}

/// Start an Alluxio daemon in the node's namespace, logging into `<node>/<name>.log`.
fn spawn_java(node: &NodeState, heap_mb: u32, class: &str, name: &str) -> Result<Daemon> {
    let home = alluxio_home();
    let conf = conf_dir(node);
    let args = [
        format!("-Xmx{heap_mb}m"),
        "-XX:+UseParallelGC".into(),
        "-Djava.net.preferIPv4Stack=true".into(),
        format!("-Dalluxio.home={}", node.data_dir.display()),
        format!("-Dalluxio.conf.dir={}", conf.display()),
        // Only taken as a JVM property (where crash reports go; logging is to stdout).
        format!("-Dalluxio.logs.dir={}", node.data_dir.display()),
        format!("-Dlog4j.configurationFile={}", conf.join("log4j2.properties").display()),
        "-cp".into(),
        format!("{}:{}/*", conf.display(), home.join("lib").display()),
        class.into(),
    ];
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let log = node.data_dir.join(format!("{name}.log"));
    let pid = spawn_in(Some(&node.netns), "java", &args, &log)?;
    Ok(Daemon {
        pid,
        log,
        name: format!("the Alluxio {name} of {}", node.name),
    })
}

/// A daemon just started: its process and its log.
struct Daemon {
    pid: PidRecord,
    log: PathBuf,
    name: String,
}

impl Daemon {
    /// Poll `check` until it returns Some; fail at once, with the log's last error, when the
    /// daemon exits (a bad setting stops the JVM in its first second).
    fn wait<T>(&self, what: &str, mut check: impl FnMut() -> Option<T>) -> Result<T> {
        wait_for(what, START_LIMIT, || {
            if !self.pid.alive() {
                return Some(Err(self.died()));
            }
            check().map(Ok)
        })?
    }

    /// Whether the daemon's log holds `text`.
    fn log_says(&self, text: &str) -> bool {
        fs::read_to_string(&self.log).is_ok_and(|l| l.contains(text))
    }

    fn died(&self) -> Error {
        let text = fs::read_to_string(&self.log).unwrap_or_default();
        let last = text
            .lines()
            .rfind(|l| l.contains("Exception") || l.contains("ERROR"))
            .or_else(|| text.lines().next_back())
            .unwrap_or("no output");
        Error::runtime(format!(
            "{} exited: {} (log: {})",
            self.name,
            last.trim(),
            self.log.display()
        ))
    }
}

fn master_info(state: &State) -> Option<Value> {
    let url = format!("http://{}:{WEB_PORT}/api/v1/master/info", master(state).addr);
    let text = sys::curl(&["-f", &url], Duration::from_secs(10)).ok()?;
    serde_json::from_str(&text).ok()
}

/// The master's live workers: (host, start time in ms), heard from in the last few seconds
/// (the master lists a killed worker for 10 s before it declares it lost).
fn live_workers(info: &Value) -> Vec<(String, u64)> {
    info["workers"]
        .as_array()
        .map(|ws| {
            ws.iter()
                .filter(|w| w["state"] == "ACTIVE")
                .filter(|w| w["lastContactSec"].as_u64().is_some_and(|s| s <= HEARTBEAT_LIMIT_SEC))
                .filter_map(|w| {
                    Some((
                        w["address"]["host"].as_str()?.to_string(),
                        w["startTimeMs"].as_u64().unwrap_or(0),
                    ))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The worker nodes the master does not count as live.
fn missing_workers(state: &State, info: &Value) -> Vec<String> {
    let live = live_workers(info);
    workers(state)
        .iter()
        .filter(|n| !live.iter().any(|(host, _)| *host == n.addr))
        .map(|n| n.name.clone())
        .collect()
}

fn proxy_url(state: &State, path: &str) -> String {
    format!("http://{}:{PROXY_PORT}/api/v1/{path}", master(state).addr)
}

/// A POST to the proxy's REST API with a JSON body; the answer's body.
fn proxy_post(state: &State, path: &str, body: &Value, limit: Duration) -> Result<String> {
    let url = proxy_url(state, path);
    let body = body.to_string();
    sys::curl(
        &[
            "-f",
            "-X",
            "POST",
            "-H",
            "Content-Type: application/json",
            "--data-binary",
            &body,
            &url,
        ],
        limit,
    )
}

/// Through the proxy: make /dfsbench, write a file, read it back, delete it.
fn round_trip(state: &State) -> Option<()> {
    round_trip_via(state, None)
}

/// `round_trip`, the file's block written on `worker` (CreateFilePOptions.workerLocation) and
/// checked to be there; the file is named after the worker's node.
fn round_trip_via(state: &State, worker: Option<&NodeState>) -> Option<()> {
    let limit = Duration::from_secs(20);
    let dir = format!("paths//{DIR}");
    proxy_post(
        state,
        &format!("{dir}/create-directory"),
        &json!({"recursive": true, "allowExists": true}),
        limit,
    )
    .ok()?;
    let (file, options) = match worker {
        None => (format!("{dir}/.lab-ready"), json!({})),
        Some(w) => (
            format!("{dir}/.lab-probe-{}", w.name),
            json!({"workerLocation": {"host": w.addr, "rpcPort": WORKER_RPC_PORT,
                "dataPort": WORKER_RPC_PORT, "webPort": WORKER_WEB_PORT}}),
        ),
    };
    let _ = proxy_post(state, &format!("{file}/delete"), &json!({}), limit);
    let id = proxy_post(state, &format!("{file}/create-file"), &options, limit).ok()?;
    let id = id.trim();
    let body = format!("dfsbench lab {}", std::process::id());
    let write = proxy_url(state, &format!("streams/{id}/write"));
    sys::curl(
        &[
            "-f",
            "-X",
            "POST",
            "-H",
            "Content-Type: application/octet-stream",
            "--data-binary",
            &body,
            &write,
        ],
        limit,
    )
    .ok()?;
    let close = |id: &str| {
        sys::curl(
            &["-f", "-X", "POST", &proxy_url(state, &format!("streams/{id}/close"))],
            limit,
        )
    };
    close(id).ok()?;
    let rid = proxy_post(state, &format!("{file}/open-file"), &json!({}), limit).ok()?;
    let rid = rid.trim();
    let read = proxy_url(state, &format!("streams/{rid}/read"));
    let got = sys::curl(&["-f", "-X", "POST", &read], limit);
    let _ = close(rid);
    let placed = match worker {
        None => true,
        Some(w) => {
            let st = proxy_post(state, &format!("{file}/get-status"), &json!({}), limit).ok()?;
            let st: Value = serde_json::from_str(&st).ok()?;
            block_hosts(&st).iter().all(|h| *h == w.addr)
        }
    };
    proxy_post(state, &format!("{file}/delete"), &json!({}), limit).ok()?;
    (got.ok()? == body && placed).then_some(())
}

/// The workers holding the blocks of a file, from its get-status.
fn block_hosts(status: &Value) -> Vec<String> {
    status["fileBlockInfos"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|b| b["blockInfo"]["locations"].as_array().into_iter().flatten())
        .filter_map(|l| l["workerAddress"]["host"].as_str().map(String::from))
        .collect()
}

/// Files the master knows that are not (yet) in the under store, from a recursive listing.
fn unpersisted_files(state: &State) -> Result<Vec<String>> {
    let text = proxy_post(
        state,
        "paths///list-status",
        &json!({"recursive": true}),
        Duration::from_secs(60),
    )?;
    let list: Value =
        serde_json::from_str(&text).map_err(|e| Error::runtime(format!("the proxy's list-status is not JSON: {e}")))?;
    Ok(not_persisted(&list))
}

fn not_persisted(list: &Value) -> Vec<String> {
    list.as_array()
        .map(|all| {
            all.iter()
                .filter(|f| f["folder"] == false && f["persisted"] == false)
                .filter_map(|f| f["path"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// Start the master (its REST API answers some seconds later).
fn start_master(state: &State) -> Result<Daemon> {
    let m = master(state);
    write_config(state, m)?;
    // What `alluxio format` does for the embedded journal: an empty directory (the master
    // refuses a missing one as "not formatted").
    let journal = m.data_dir.join("journal");
    fs::create_dir_all(&journal).map_err(|e| Error::runtime(format!("cannot create {}: {e}", journal.display())))?;
    spawn_java(m, 512, MASTER_CLASS, "master")
}

fn start_proxy(state: &State) -> Result<Daemon> {
    spawn_java(master(state), 384, PROXY_CLASS, "proxy")
}

/// The worker process's own REST API answers: it serves only after it has registered with the
/// master (the master keeps a re-registered worker's first start time, so its list cannot tell
/// a new process from the one it replaced).
fn worker_serving(node: &NodeState) -> Option<()> {
    let url = format!("http://{}:{WORKER_WEB_PORT}/api/v1/worker/info", node.addr);
    let text = sys::curl(&["-f", &url], Duration::from_secs(10)).ok()?;
    let v: Value = serde_json::from_str(&text).ok()?;
    v["startTimeMs"].as_u64().map(|_| ())
}

/// Wait until a just-started worker serves and the master counts it live.
fn wait_worker(state: &State, node: &NodeState, daemon: &Daemon) -> Result<()> {
    daemon.wait(&format!("the Alluxio worker of {} registered", node.name), || {
        worker_serving(node)?;
        let info = master_info(state)?;
        live_workers(&info)
            .iter()
            .any(|(host, _)| *host == node.addr)
            .then_some(())
    })
}

fn start_worker(state: &State, node: &NodeState) -> Result<Daemon> {
    write_config(state, node)?;
    spawn_java(node, 384, WORKER_CLASS, "worker")
}

impl System for Alluxio {
    fn name(&self) -> &'static str {
        "alluxio"
    }
    fn code(&self) -> &'static str {
        "alx"
    }
    fn summary(&self) -> &'static str {
        "Alluxio 2.9.4: a master with its REST proxy and 2 workers over one under store"
    }
    fn packages(&self) -> &'static [&'static str] {
        &["openjdk-17-jre-headless", "maven", "curl"]
    }
    fn install_other(&self) -> Result<Vec<String>> {
        install_jars()
    }
    fn cluster(&self) -> Option<&dyn Cluster> {
        Some(self)
    }
}

impl Cluster for Alluxio {
    fn layouts(&self) -> &'static [&'static str] {
        &["cache-through"]
    }
    fn nodes(&self, _layout: &str) -> Vec<&'static str> {
        vec!["master+proxy", "worker", "worker"]
    }

    fn up(&self, state: &mut State) -> Result<()> {
        if !jars_installed(&alluxio_home()) {
            install_jars()?;
        }
        let ufs = ufs_dir(state);
        fs::create_dir_all(&ufs).map_err(|e| Error::runtime(format!("cannot create {}: {e}", ufs.display())))?;
        if !state.data_dirs.contains(&ufs) {
            state.data_dirs.push(ufs);
            state.save()?;
        }
        // All at once: the workers and the proxy retry until the master serves.
        let master_daemon = start_master(state)?;
        let mut daemons = Vec::new();
        for node in workers(state) {
            daemons.push(start_worker(state, node)?);
        }
        let proxy = start_proxy(state)?;
        if let Err(e) = master_daemon.wait("the Alluxio master's REST API", || master_info(state)) {
            // A fresh master's embedded journal can fail to reach its own Raft port as it
            // starts (Connection refused, on a loaded machine; fresh-checks hit it twice): start
            // it once more on an empty journal, keeping the first log for inspection.
            if master_daemon.pid.alive() || !master_daemon.log_says("java.net.ConnectException") {
                return Err(e);
            }
            let first = master_daemon.log.with_extension("first.log");
            fs::rename(&master_daemon.log, &first)
                .map_err(|e| Error::runtime(format!("cannot keep {}: {e}", master_daemon.log.display())))?;
            let journal = master(state).data_dir.join("journal");
            let _ = fs::remove_dir_all(&journal);
            start_master(state)?.wait("the Alluxio master's REST API (second start)", || master_info(state))?;
        }
        for (node, daemon) in workers(state).iter().zip(&daemons) {
            wait_worker(state, node, daemon)?;
        }
        proxy.wait("a write + read of /dfsbench through the proxy", || round_trip(state))
    }

    fn start_node(&self, state: &mut State, node: &str) -> Result<()> {
        let n = state.node(node)?.clone();
        if n.role == "master+proxy" {
            let master_daemon = start_master(state)?;
            let proxy = start_proxy(state)?;
            master_daemon.wait("the Alluxio master's REST API", || master_info(state))?;
            // The workers re-register with the new master on their next heartbeat.
            wait_for("the Alluxio master with every worker live", START_LIMIT, || {
                master_info(state).filter(|i| missing_workers(state, i).is_empty())
            })?;
            return proxy.wait("a write + read through the proxy", || round_trip(state));
        }
        let daemon = start_worker(state, &n)?;
        wait_worker(state, &n, &daemon)
    }

    fn wipe_node(&self, state: &State, node: &str) -> Result<()> {
        let n = state.node(node)?;
        if n.role == "master+proxy" {
            return Err(Error::usage(format!(
                "wiping {node}, the master, would delete its journal and so the namespace; wipe a worker (node2..)"
            )));
        }
        let d = cache_dir(n);
        match fs::remove_dir_all(&d) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(Error::runtime(format!("cannot wipe {}: {e}", d.display())))
            }
            _ => Ok(()),
        }
    }

    fn rejoin_wiped(&self, _state: &mut State, _node: &str) -> Result<()> {
        // The empty worker registers with no blocks; reads fill its cache from the under store.
        Ok(())
    }

    fn targets(&self, state: &State) -> Vec<String> {
        vec![format!("alluxio://{}:{PROXY_PORT}/{DIR}", master(state).addr)]
    }

    fn notes(&self, state: &State) -> Vec<String> {
        vec![
            format!(
                "master REST: http://{}:{WEB_PORT}/api/v1/master/info",
                master(state).addr
            ),
            format!("under store (durable copy of every file): {}", ufs_dir(state).display()),
        ]
    }

    fn probe(&self, state: &State) -> Result<Option<String>> {
        let info =
            master_info(state).ok_or_else(|| Error::runtime("the Alluxio master's REST API does not answer".into()))?;
        let mut problems = Vec::new();
        let missing = missing_workers(state, &info);
        if !missing.is_empty() {
            problems.push(format!("worker(s) not live: {}", missing.join(", ")));
        }
        // The master may count a worker live that the proxy still cannot reach: its gRPC
        // channel to a restarted worker waits out a reconnect backoff (a minute and more here).
        let unreachable: Vec<&str> = workers(state)
            .iter()
            .filter(|w| !missing.contains(&w.name))
            .filter(|w| round_trip_via(state, Some(w)).is_none())
            .map(|w| w.name.as_str())
            .collect();
        if !unreachable.is_empty() {
            problems.push(format!("the proxy cannot write through {}", unreachable.join(", ")));
        }
        let unpersisted = unpersisted_files(state)?;
        if !unpersisted.is_empty() {
            problems.push(format!(
                "{} file(s) not in the under store (first: {})",
                unpersisted.len(),
                unpersisted[0]
            ));
        }
        Ok((!problems.is_empty()).then(|| problems.join(", ")))
    }
}

#[cfg(test)]
mod tests {
    use super::{block_hosts, live_workers, not_persisted};
    use serde_json::json;

    #[test]
    fn only_active_workers_heard_from_lately_are_live() {
        let info = json!({"workers": [
            {"state": "ACTIVE", "lastContactSec": 0, "startTimeMs": 5, "address": {"host": "198.18.9.2"}},
            {"state": "ACTIVE", "lastContactSec": 8, "startTimeMs": 6, "address": {"host": "198.18.9.3"}},
            {"state": "LOST", "lastContactSec": 0, "startTimeMs": 7, "address": {"host": "198.18.9.4"}}
        ]});
        assert_eq!(live_workers(&info), vec![("198.18.9.2".to_string(), 5)]);
        assert!(live_workers(&json!({})).is_empty());
    }

    #[test]
    fn files_not_in_the_under_store_are_named_and_folders_are_not() {
        let list = json!([
            {"path": "/dfsbench", "folder": true, "persisted": false},
            {"path": "/dfsbench/a", "folder": false, "persisted": true},
            {"path": "/dfsbench/b", "folder": false, "persisted": false}
        ]);
        assert_eq!(not_persisted(&list), vec!["/dfsbench/b".to_string()]);
    }

    #[test]
    fn block_hosts_come_from_every_block_location() {
        let status = json!({"fileBlockInfos": [
            {"blockInfo": {"locations": [{"workerAddress": {"host": "198.18.9.2"}}]}},
            {"blockInfo": {"locations": [{"workerAddress": {"host": "198.18.9.3"}}]}}
        ]});
        assert_eq!(block_hosts(&status), vec!["198.18.9.2", "198.18.9.3"]);
        assert!(block_hosts(&json!({})).is_empty());
    }
}
