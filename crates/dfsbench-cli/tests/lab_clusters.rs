//! Multi-node lab clusters (`dfsbench lab`): each comes up in network namespaces, serves a
//! verified files workload through its FUSE or network targets, keeps serving with a storage node killed,
//! recovers to its probe's success after the node returns, and `down` leaves nothing behind.
//!
//! They need root, /dev/fuse and network namespaces (and install Debian packages with apt-get):
//! without them they print a note and pass, unless DFSBENCH_REQUIRE_LAB=1 makes that a failure.
//! Every command is bounded (`timeout -s KILL`); a guard takes the lab down on any exit.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;

use serde_json::Value;

/// Clusters share two cores: one at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn lab_missing() -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("not root".into());
    }
    if !Path::new("/dev/fuse").exists() {
        return Some("no /dev/fuse".into());
    }
    let probe = Command::new("unshare").args(["--net", "true"]).output();
    if !probe.is_ok_and(|o| o.status.success()) {
        return Some("cannot create network namespaces".into());
    }
    None
}

/// Skip (or fail under DFSBENCH_REQUIRE_LAB=1) when this machine cannot run the lab.
fn lab_available(test: &str) -> bool {
    let Some(why) = lab_missing() else { return true };
    assert!(
        std::env::var("DFSBENCH_REQUIRE_LAB").as_deref() != Ok("1"),
        "DFSBENCH_REQUIRE_LAB=1 but the lab cannot run here: {why}"
    );
    eprintln!("note: skipping {test}: the lab needs root, /dev/fuse and network namespaces ({why})");
    false
}

/// A lab in a private state directory, taken down when dropped.
struct Lab {
    system: &'static str,
    dir: tempfile::TempDir,
    /// None for a second lab beside one that holds it (`Lab::beside`).
    _one: Option<std::sync::MutexGuard<'static, ()>>,
}

fn lab_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("dfsbench-labs-")
        .tempdir_in("/var/tmp")
        .expect("a lab directory")
}

impl Lab {
    fn new(system: &'static str) -> Lab {
        let one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        Lab {
            system,
            dir: lab_dir(),
            _one: Some(one),
        }
    }

    /// A lab in another lab directory, run while `self` runs (declare it after `self`, so it
    /// is taken down first).
    fn beside(&self, system: &'static str) -> Lab {
        Lab {
            system,
            dir: lab_dir(),
            _one: None,
        }
    }

    /// The id the lab's names carry: derived from its canonical lab directory.
    fn id(&self) -> String {
        dfsbench_lab::net::lab_id(&std::fs::canonicalize(self.dir.path()).unwrap())
    }

    /// `dfsbench ARGS` with this lab's directory, killed after `secs`.
    fn dfsbench(&self, secs: u32, args: &[&str]) -> Output {
        self.command(secs, args).output().expect("run dfsbench")
    }

    fn command(&self, secs: u32, args: &[&str]) -> Command {
        let mut cmd = Command::new("timeout");
        cmd.args(["-s", "KILL", &secs.to_string(), env!("CARGO_BIN_EXE_dfsbench")])
            .args(args)
            .env("DFSBENCH_LAB_DIR", self.dir.path())
            .current_dir(self.dir.path());
        cmd
    }

    fn ok(&self, secs: u32, args: &[&str]) -> String {
        let out = self.dfsbench(secs, args);
        assert!(out.status.success(), "dfsbench {args:?}: {}", describe(&out));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn status(&self) -> Value {
        let text = self.ok(120, &["lab", "status", self.system, "--format", "json"]);
        let all: Value = serde_json::from_str(&text).expect("status is JSON");
        all[0].clone()
    }

    fn node_state(&self, node: &str) -> String {
        let st = self.status();
        let n = st["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["name"] == node)
            .cloned();
        n.expect("the node is listed")["state"].as_str().unwrap().to_string()
    }

    /// A verified files workload through the target; returns its result.
    fn files_workload(&self, target: &str) -> Value {
        self.files_workload_with(target, 50, &[])
    }

    /// `files` files per worker, with extra environment (S3 credentials).
    fn files_workload_with(&self, target: &str, files: usize, env: &[(String, String)]) -> Value {
        let result = self.dir.path().join("result.json");
        let out = self
            .files_command(target, files, &result)
            .envs(env.iter().cloned())
            .output();
        let out = out.expect("run dfsbench");
        assert!(out.status.success(), "files workload on {target}: {}", describe(&out));
        check_files_result(&result, files)
    }

    fn files_command(&self, target: &str, files: usize, result: &Path) -> Command {
        let r = result.display().to_string();
        let n = files.to_string();
        let args = [
            "run",
            "-t",
            target,
            "-w",
            "files",
            "--files",
            &n,
            "--file-size",
            "64k",
            "-j",
            "2",
            "--verify",
            "-q",
            "-o",
            &r,
        ];
        self.command(300, &args)
    }
}

/// A files run's result: complete, no errors, every file once per phase, a plausible rate.
fn check_files_result(result: &Path, files: usize) -> Value {
    let v: Value = serde_json::from_str(&std::fs::read_to_string(result).unwrap()).unwrap();
    assert_eq!(v["status"], "complete");
    for p in v["phases"].as_array().unwrap() {
        assert_eq!(p["errors"]["total"], 0, "errors in {}", p["label"]);
        assert_eq!(p["ops"], 2 * files, "{}: every file once", p["label"]);
        // One-box clusters do tens to thousands of 64 KiB files a second: not 0, not RAM.
        let rate = p["ops_per_sec"].as_f64().unwrap();
        assert!(rate > 1.0 && rate < 1e6, "{}: {rate} ops/s", p["label"]);
    }
    v
}

impl Drop for Lab {
    fn drop(&mut self) {
        let out = self.dfsbench(180, &["lab", "down", self.system]);
        if !out.status.success() {
            eprintln!("lab down {} failed: {}", self.system, describe(&out));
        }
    }
}

fn describe(out: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Files written straight through the mount, so there is data to heal or re-replicate.
fn write_files(mount: &Path, n: usize) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = mount.join("lab-test-data");
    std::fs::create_dir_all(&dir).unwrap();
    (0..n)
        .map(|i| {
            let data: Vec<u8> = (0..256 * 1024).map(|b| ((b * 31 + i * 7) % 251) as u8).collect();
            let path = dir.join(format!("f{i}"));
            std::fs::write(&path, &data).unwrap();
            (path, data)
        })
        .collect()
}

/// What `down` must have removed: namespaces, veths, mounts and processes.
fn assert_nothing_left(system: &str, dir: &Path, pids: &[i64]) {
    let id = dfsbench_lab::net::lab_id(&std::fs::canonicalize(dir).unwrap());
    let netns = lab_netns();
    let ours: Vec<&String> = netns.iter().filter(|n| n.starts_with(&format!("dfsb-{id}-"))).collect();
    assert!(ours.is_empty(), "namespaces left: {ours:?}");
    let links: Vec<String> = std::fs::read_dir("/sys/class/net")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with(&format!("dfsb{id}")) || n.starts_with(&format!("dfsb-{id}")))
        .collect();
    assert!(links.is_empty(), "links left: {links:?}");
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap();
    let dir = std::fs::canonicalize(dir).unwrap();
    assert!(
        !mounts.contains(&dir.display().to_string()),
        "mounts left under {}",
        dir.display()
    );
    for pid in pids {
        let gone = !Path::new(&format!("/proc/{pid}")).exists()
            || std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| s.contains(") Z "));
        assert!(gone, "process {pid} of the lab still runs");
    }
    assert!(!dir.join(system).exists(), "the lab's data directory is left");
}

/// The network namespaces on the machine.
fn lab_netns() -> Vec<String> {
    let out = Command::new("ip").args(["netns", "list"]).output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(String::from))
        .collect()
}

/// Every process of the lab: the nodes' daemons (status) and the recorded ones (state file).
fn lab_pids(lab: &Lab) -> Vec<i64> {
    let st = lab.status();
    let mut pids: Vec<i64> = st["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|n| n["pids"].as_array().unwrap().iter().filter_map(Value::as_i64))
        .collect();
    let state_file = lab.dir.path().join(lab.system).join("state.json");
    let state: Value = serde_json::from_str(&std::fs::read_to_string(state_file).unwrap()).unwrap();
    pids.extend(
        state["pids"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|p| p["pid"].as_i64()),
    );
    pids
}

/// Up, workload, kill node2 with I/O continuing, restart, probe, down: for one system/layout.
fn cluster_survives_a_node_kill(lab: &Lab, layout: Option<&str>, nodes: usize) {
    let mut up = vec!["lab", "up", lab.system];
    if let Some(l) = layout {
        up.extend(["--layout", l]);
    }
    lab.ok(900, &up);
    let st = lab.status();
    assert_eq!(st["nodes"].as_array().unwrap().len(), nodes);
    assert_eq!(st["health"], "ok", "{st}");
    for (i, n) in st["nodes"].as_array().unwrap().iter().enumerate() {
        assert!(n["addr"].as_str().unwrap().starts_with("198.18."), "{n}");
        assert!(!n["pids"].as_array().unwrap().is_empty(), "node{} runs nothing", i + 1);
    }
    let target = st["targets"][0].as_str().unwrap().to_string();
    let mount = PathBuf::from(target.strip_prefix("file://").expect("a file:// target"));
    lab.files_workload(&target);
    // `lab:NAME-fs` is the same mount, and the run records the CPU of the lab's daemons.
    let via_lab = lab.files_workload(&format!("lab:{}-fs", lab.system));
    let run_path = via_lab["target"]["run_path"].as_str().unwrap();
    assert!(
        run_path.starts_with(mount.to_str().unwrap()),
        "{run_path} is not under {}",
        mount.display()
    );
    let write = &via_lab["phases"][0];
    assert!(
        write["server_cpu"]["pids"].as_array().is_some_and(|p| !p.is_empty()),
        "{write}"
    );
    let files = write_files(&mount, 8);

    lab.ok(60, &["lab", "fault", lab.system, "kill", "node2"]);
    assert_eq!(lab.node_state("node2"), "down");
    let probe = lab.dfsbench(120, &["lab", "probe", lab.system]);
    // A Gluster brick is missing until it returns; MooseFS may already have re-replicated
    // (or node2 held none of the chunks): there the probe may say either.
    let expect: &[i32] = if lab.system == "gluster" { &[1] } else { &[0, 1] };
    assert!(
        probe.status.code().is_some_and(|c| expect.contains(&c)),
        "probe with node2 dead: {}",
        describe(&probe)
    );
    // Replica 3, disperse 4+2 and MooseFS goal 2 all keep serving with one node gone.
    lab.files_workload(&target);
    let more = write_files(&mount.join("during-outage"), 4);

    lab.ok(180, &["lab", "fault", lab.system, "restart", "node2"]);
    assert_eq!(lab.node_state("node2"), "running");
    lab.ok(400, &["lab", "probe", lab.system, "--wait", "5m"]);
    if lab.system == "gluster" {
        // A wiped brick comes back within the minute a run gives its fault command (a study's
        // recovery point): restarted empty, reset into the volume, healed from the others.
        lab.ok(60, &["lab", "fault", "gluster", "wipe", "node3"]);
        lab.ok(400, &["lab", "probe", "gluster", "--wait", "5m"]);
    }
    for (path, data) in files.iter().chain(&more) {
        assert_eq!(&std::fs::read(path).unwrap(), data, "{} changed", path.display());
    }
    let pids = lab_pids(lab);
    lab.ok(180, &["lab", "down", lab.system]);
    assert_nothing_left(lab.system, lab.dir.path(), &pids);
}

#[test]
fn gluster_replica3_survives_a_node_kill_and_heals() {
    if !lab_available("gluster replica3") {
        return;
    }
    let lab = Lab::new("gluster");
    cluster_survives_a_node_kill(&lab, Some("replica3"), 3);
}

#[test]
fn gluster_disperse_survives_a_node_kill_and_heals() {
    if !lab_available("gluster disperse4+2") {
        return;
    }
    let lab = Lab::new("gluster");
    cluster_survives_a_node_kill(&lab, Some("disperse4+2"), 6);
}

#[test]
fn moosefs_survives_a_chunkserver_kill_and_replicates() {
    if !lab_available("moosefs") {
        return;
    }
    let lab = Lab::new("moosefs");
    cluster_survives_a_node_kill(&lab, None, 4);
}

/// A study's table as CSV rows, header first.
fn table(dir: &Path, n: usize) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(dir.join(format!("table-{n}.csv"))).unwrap();
    text.lines().map(common::csv_fields).collect()
}

/// Faults from a run and from studies on a lab target: `--fault 'lab stop node1'` expands to
/// the lab's own command, and a 3 s stop of the MooseFS master stalls the writes about that
/// long; then surfnet's failure matrix and clients-sweep's recovery test take lab nodes out
/// themselves and fill their tables from what the runs measured, watching the lab's daemons
/// (a restarted one too) in every point.
#[test]
fn moosefs_faults_from_a_run_and_from_studies() {
    if !lab_available("moosefs faults") {
        return;
    }
    let lab = Lab::new("moosefs");
    lab.ok(900, &["lab", "up", "moosefs"]);
    let result = lab.dir.path().join("faults.json");
    let r = result.to_str().unwrap();
    #[rustfmt::skip]
    let args = [
        "run", "-t", "lab:moosefs-fs", "-w", "files", "--file-size", "64k", "-j", "2",
        "--duration", "10s", "--phases", "write", "--op-timeout", "30s", "-q", "-o", r,
        "--fault", "write+3s: lab stop node1", "--fault", "write+6s: lab cont node1",
        "--recovery-probe", "lab probe",
    ];
    lab.ok(300, &args);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&result).unwrap()).unwrap();
    let stop = &doc["faults"][0];
    assert!(
        stop["command"]
            .as_str()
            .unwrap()
            .ends_with("'lab' 'fault' 'moosefs' 'stop' 'node1'"),
        "{stop}"
    );
    assert_eq!(stop["run"]["status"], "ok", "{stop}");
    let stall = stop["stall_s"].as_f64().unwrap();
    assert!((2.3..4.5).contains(&stall), "a 3 s stop of the master: {stop}");
    assert!(
        doc["recovery"]["recovery_time_s"].as_f64().is_some(),
        "{}",
        doc["recovery"]
    );

    // The failure matrix: the master and a chunkserver killed, a chunkserver's link cut, each
    // for 8 s of a 24 s copy; and one read with 20 ms more round trip, the delay gone after.
    let dir = lab.dir.path().join("surfnet");
    #[rustfmt::skip]
    let args = [
        "study", "surfnet", "-t", "lab:moosefs-fs", "--scale", "0.0001", "--points",
        "fail-*,read-256k-20ms", "-q", "--out", dir.to_str().unwrap(),
    ];
    lab.ok(600, &args);
    let delayed = table(&dir, 3);
    let seq_read = delayed[0]
        .iter()
        .position(|h| h == "seq read")
        .expect("a seq read column");
    assert!(
        delayed[2][seq_read].parse::<f64>().is_ok(),
        "a delayed read: {delayed:?}"
    );
    let rules = Command::new("iptables").args(["-S", "INPUT"]).output().unwrap();
    assert!(
        !String::from_utf8_lossy(&rules.stdout).contains("NFQUEUE"),
        "the study left its delay"
    );
    let matrix = table(&dir, 5);
    assert_eq!(matrix.len(), 5, "{matrix:?}");
    // The client row needs client nodes, which this lab has not: it says how to add them
    // (in the note the cell refers to).
    assert!(matrix[4][1].starts_with("n/a: needs two client nodes"), "{matrix:?}");
    let md = std::fs::read_to_string(dir.join("tables.md")).unwrap();
    assert!(md.contains("`dfsbench lab up moosefs --clients 2`"), "{md}");
    let outcome = |row: usize| matrix[row][1].clone();
    // Each cell: the outage as scheduled (6-14 s into the copy), then when the writes came
    // back, or that they continued, and the errors. Without its master nothing is created: the
    // copy waits for it (or gives up, counted).
    let master = outcome(1);
    assert!(
        master.starts_with("out 6-14 s, ") && master.contains("back ") || master.starts_with("failed: "),
        "{matrix:?}"
    );
    for row in 2..4 {
        let o = outcome(row);
        assert!(o.starts_with("out 6-14 s, ") || o.starts_with("failed: "), "{matrix:?}");
    }

    // The recovery test: a chunkserver wiped during reads, the probe until goal 2 again.
    let dir = lab.dir.path().join("recovery");
    #[rustfmt::skip]
    let args = [
        "study", "clients-sweep", "-t", "lab:moosefs-fs", "--scale", "0.0001", "--points",
        "recovery-1", "-q", "--out", dir.to_str().unwrap(),
    ];
    lab.ok(900, &args);
    let recovery = table(&dir, 9);
    let secs: f64 = recovery[1][1]
        .parse()
        .unwrap_or_else(|_| panic!("a recovery time: {recovery:?}"));
    assert!(secs > 0.0 && secs < 600.0, "{recovery:?}");
    // The lab's daemons are the server whose CPU the study's points record.
    let result = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path().join("recovery-1.json"))
        .find(|p| p.is_file())
        .expect("the point's result");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(result).unwrap()).unwrap();
    let pids = &doc["phases"][0]["server_cpu"]["pids"];
    assert!(pids.as_array().is_some_and(|p| !p.is_empty()), "{pids}");
    assert_eq!(lab.node_state("node4"), "running");

    // A chunkserver restarted during a run's writes: the new daemon is watched from its start.
    let result = lab.dir.path().join("restart.json");
    let r = result.to_str().unwrap();
    #[rustfmt::skip]
    let args = [
        "run", "-t", "lab:moosefs-fs", "-w", "files", "--file-size", "64k", "-j", "2",
        "--duration", "8s", "--phases", "write", "--op-timeout", "30s", "-q", "-o", r,
        "--fault", "write+2s: lab restart node2",
    ];
    lab.ok(300, &args);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&result).unwrap()).unwrap();
    let write = &doc["phases"][0]["server_cpu"];
    let listed = |key: &str| write[key].as_array().map_or(0, Vec::len);
    assert!(listed("missing_pids") > 0 && listed("started_pids") > 0, "{write}");
    for pid in write["started_pids"].as_array().unwrap() {
        assert!(write["pids"].as_array().unwrap().contains(pid), "{write}");
    }

    // Points of several processes run as child `dfsbench run`s: they watch the daemons too.
    let dir = lab.dir.path().join("procs");
    #[rustfmt::skip]
    let args = [
        "study", "dfsperf", "-t", "lab:moosefs-fs", "--scale", "0.001", "--points",
        "metadata-procs", "-q", "--out", dir.to_str().unwrap(),
    ];
    lab.ok(300, &args);
    let result = dir.join("moosefs-fs").join("metadata-procs.json");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(result).unwrap()).unwrap();
    let pids = &doc["phases"][0]["server_cpu"]["pids"];
    assert!(pids.as_array().is_some_and(|p| !p.is_empty()), "{pids}");
}

/// Credentials the network targets of the Swift and HDFS labs take from the environment.
const NET_ENV: &[(&str, &str)] = &[
    ("ST_USER", "test:tester"),
    ("ST_KEY", "testing"),
    ("AWS_ACCESS_KEY_ID", "test:tester"),
    ("AWS_SECRET_ACCESS_KEY", "testing"),
    ("HADOOP_USER_NAME", "root"),
];

impl Lab {
    /// `dfsbench run` of the files workload on a network target, killed after 300 s; its result.
    fn net_files(&self, target: &str, files: &str, extra: &[&str], out: &str) -> (Output, Option<Value>) {
        let result = self.dir.path().join(out);
        let r = result.display().to_string();
        let mut args = vec![
            "run",
            "-t",
            target,
            "-w",
            "files",
            "--files",
            files,
            "--file-size",
            "64k",
            "-j",
            "2",
            "-q",
            "-o",
            &r,
        ];
        args.extend_from_slice(extra);
        let output = self.net_command(&args).output().expect("run dfsbench");
        let value = std::fs::read_to_string(&result)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok());
        (output, value)
    }

    fn net_command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new("timeout");
        cmd.args(["-s", "KILL", "300", env!("CARGO_BIN_EXE_dfsbench")])
            .args(args)
            .env("DFSBENCH_LAB_DIR", self.dir.path())
            .current_dir(self.dir.path());
        // A `lab:` target brings its own credentials; a URI needs them from the environment.
        if !args.iter().any(|a| a.starts_with("lab:")) {
            for (k, v) in NET_ENV {
                cmd.env(k, v);
            }
        }
        cmd
    }

    /// A verified files workload on a network target completes with no errors (after failed
    /// attempts within `limit`: HDFS keeps a dead DataNode in new pipelines until it is
    /// declared dead).
    fn net_files_clean(&self, target: &str, limit: std::time::Duration) {
        let deadline = std::time::Instant::now() + limit;
        let (out, v) = loop {
            let (out, v) = self.net_files(target, "50", &["--verify"], "net.json");
            if out.status.success() || std::time::Instant::now() > deadline {
                break (out, v);
            }
            std::thread::sleep(std::time::Duration::from_secs(2));
        };
        assert!(out.status.success(), "{target}: {}", describe(&out));
        let v = v.expect("a result file");
        assert_eq!(v["status"], "complete");
        for p in v["phases"].as_array().unwrap() {
            assert_eq!(p["errors"]["total"], 0, "{target}: errors in {}", p["label"]);
            assert_eq!(p["ops"], 100, "{target} {}: every file once", p["label"]);
            let rate = p["ops_per_sec"].as_f64().unwrap();
            assert!(rate > 1.0 && rate < 1e6, "{target} {}: {rate} ops/s", p["label"]);
        }
    }

    fn probe_code(&self) -> Option<i32> {
        self.dfsbench(180, &["lab", "probe", self.system]).status.code()
    }
}

/// Swift, HDFS and Alluxio, reached over the network from the root namespace: up; a verified
/// files workload on every target (`want_targets` of them); files kept for the probe to
/// count; node2 killed while a workload runs; the probe fails while node2 is dead and every
/// target serves again; restart and wipe of node2 each end with the probe's success; down
/// leaves nothing.
fn network_cluster_survives_a_node_kill(lab: &Lab, nodes: usize, want_targets: usize, errors_while_killed: bool) {
    lab.ok(900, &["lab", "up", lab.system]);
    let st = lab.status();
    assert_eq!(st["nodes"].as_array().unwrap().len(), nodes);
    assert_eq!(st["health"], "ok", "{st}");
    for n in st["nodes"].as_array().unwrap() {
        assert!(n["addr"].as_str().unwrap().starts_with("198.18."), "{n}");
        assert!(!n["pids"].as_array().unwrap().is_empty(), "{} runs nothing", n["name"]);
    }
    let targets: Vec<String> = st["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().into())
        .collect();
    assert_eq!(targets.len(), want_targets, "{targets:?}");
    // Through `lab:NAME-KIND`, with no credentials in the environment: the lab hands them over.
    for t in &targets {
        let kind = t.split_once("://").expect("a URI").0;
        lab.net_files_clean(&format!("lab:{}-{kind}", lab.system), std::time::Duration::ZERO);
    }
    // Kept files: copies for the probe to miss and the system to restore.
    let (out, _) = lab.net_files(&targets[0], "50", &["--phases", "write", "--keep"], "kept.json");
    assert!(out.status.success(), "kept files: {}", describe(&out));
    lab.ok(400, &["lab", "probe", lab.system, "--wait", "5m"]);

    // node2 dies while a verified workload runs: the run's own `--fault 'lab kill node2'`.
    let kind = targets[0].split_once("://").expect("a URI").0;
    let running = spawn_files(lab, &format!("lab:{}-{kind}", lab.system), "2s: lab kill node2");
    let during = running.wait_with_output().expect("the workload ends");
    let result: Value =
        serde_json::from_str(&std::fs::read_to_string(lab.dir.path().join("during.json")).expect("a result")).unwrap();
    let kill = &result["faults"][0];
    assert_eq!(kill["run"]["status"], "ok", "{kill}");
    assert!(kill["phase"].is_string(), "the kill fell in a phase: {kill}");
    let kinds: Vec<&str> = result["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["kind"].as_str())
        .collect();
    assert_eq!(kinds, ["fault-start", "fault-end"], "{}", result["events"]);
    if !errors_while_killed {
        // Swift writes 2 of 3 copies and reads from the others: nothing fails.
        assert!(kill.get("errors_by_kind").is_none(), "{kill}");
    }
    // It runs to its end either way: Swift writes 2 of 3 copies and reads from the others;
    // hdfs-native fails the writes whose pipeline held node2 until the NameNode leaves it out.
    assert_eq!(result["status"], "complete", "{}", describe(&during));
    if !errors_while_killed {
        assert!(during.status.success(), "{}", describe(&during));
    }
    assert_eq!(lab.node_state("node2"), "down");
    // The probe sees the dead node (HDFS: once the NameNode marks it stale), and every target
    // serves again with node2 dead (HDFS: once it is declared dead, 12 s after its last
    // heartbeat; it stays in new write pipelines until then for want of a third DataNode).
    let seen = (0..60).any(|_| {
        lab.probe_code() == Some(1) || {
            std::thread::sleep(std::time::Duration::from_secs(1));
            false
        }
    });
    assert!(seen, "the probe never noticed node2 dead");
    for t in &targets {
        lab.net_files_clean(t, std::time::Duration::from_secs(120));
    }

    lab.ok(180, &["lab", "fault", lab.system, "restart", "node2"]);
    assert_eq!(lab.node_state("node2"), "running");
    lab.ok(400, &["lab", "probe", lab.system, "--wait", "5m"]);
    // A wiped node comes back empty and is refilled by the others.
    lab.ok(180, &["lab", "fault", lab.system, "wipe", "node2"]);
    lab.ok(400, &["lab", "probe", lab.system, "--wait", "5m"]);
    lab.net_files_clean(targets.last().unwrap(), std::time::Duration::ZERO);

    let mut pids: Vec<i64> = Vec::new();
    for n in lab.status()["nodes"].as_array().unwrap() {
        pids.extend(n["pids"].as_array().unwrap().iter().filter_map(Value::as_i64));
    }
    lab.ok(180, &["lab", "down", lab.system]);
    assert_nothing_left(lab.system, lab.dir.path(), &pids);
}

/// A verified files workload on `target` with one `--fault`, started in the background
/// (result: during.json).
fn spawn_files(lab: &Lab, target: &str, fault: &str) -> std::process::Child {
    let out = lab.dir.path().join("during.json").display().to_string();
    let args = [
        "run",
        "-t",
        target,
        "-w",
        "files",
        "--files",
        "150",
        "--file-size",
        "64k",
        "-j",
        "2",
        "--verify",
        "--fault",
        fault,
        "-q",
        "-o",
        &out,
    ];
    lab.net_command(&args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start dfsbench run")
}

#[test]
fn swift_survives_a_storage_node_kill_and_replicates() {
    if !lab_available("swift") {
        return;
    }
    let lab = Lab::new("swift");
    network_cluster_survives_a_node_kill(&lab, 4, 2, false);
}

/// Object requests under `path` in one proxy's own access log, by method (PUT, GET, ...).
fn proxy_requests(log: &Path, path: &str) -> std::collections::BTreeMap<String, u64> {
    let text = std::fs::read_to_string(log).unwrap_or_else(|e| panic!("{}: {e}", log.display()));
    let mut by_method = std::collections::BTreeMap::new();
    for line in text.lines() {
        // `proxy-server: CLIENT REMOTE 25/Nov/2026/01/56/29 METHOD PATH HTTP/1.0 STATUS ...`
        let words: Vec<&str> = line.split_whitespace().collect();
        if let ["proxy-server:", _, _, _, method, target, ..] = words[..] {
            if target.starts_with(path) && !target.contains(".dfsbench-run") {
                *by_method.entry(method.to_string()).or_insert(0) += 1;
            }
        }
    }
    by_method
}

/// Swift behind a proxy on every node (`--layout proxy-per-node`): the lab's own target names
/// every proxy, and a files workload given three of them with `--endpoints` (not node1's, which
/// authenticates) sends each proxy exactly the requests of its workers, as the proxies' own
/// access logs count them, and node1's proxy none.
#[test]
fn swift_proxies_each_serve_their_workers_share() {
    if !lab_available("swift") {
        return;
    }
    let lab = Lab::new("swift");
    lab.ok(900, &["lab", "up", "swift", "--layout", "proxy-per-node"]);
    let st = lab.status();
    assert_eq!(st["health"], "ok", "{st}");
    let nodes = st["nodes"].as_array().unwrap();
    let proxies: Vec<String> = nodes
        .iter()
        .map(|n| format!("{}:8080", n["addr"].as_str().unwrap()))
        .collect();
    let auth = format!("http://{}/auth/v1.0", proxies[0]);
    assert_eq!(
        st["targets"][0],
        format!("swift://{}/dfsbench?auth={auth}", proxies.join(",")),
        "{st}"
    );
    lab.net_files_clean("lab:swift-swift", std::time::Duration::ZERO);

    let used = &proxies[1..];
    let result = lab.dir.path().join("spread.json").display().to_string();
    let target = format!("swift://dfsbench/spread?auth={auth}");
    let list = used.join(",");
    let args = [
        "run",
        "-t",
        &target,
        "--endpoints",
        &list,
        "-w",
        "files",
        "--files",
        "10",
        "--file-size",
        "64k",
        "-j",
        "6",
        "-q",
        "-o",
        &result,
    ];
    let out = lab.net_command(&args).output().expect("run dfsbench");
    assert!(out.status.success(), "files over three proxies: {}", describe(&out));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&result).unwrap()).unwrap();
    let urls: Vec<String> = used.iter().map(|p| format!("http://{p}")).collect();
    assert_eq!(v["target"]["details"]["endpoints"], urls.join(","));
    // The run's objects: /v1/<account>/dfsbench/spread/dfsbench-<run id>/...
    let run_path = format!("/dfsbench/{}/", v["target"]["run_path"].as_str().unwrap());
    let log = |i: usize| lab.dir.path().join(format!("swift/node{}/proxy-server.log", i + 1));
    // AUTH_test: tempauth's account of test:tester.
    let path = format!("/v1/AUTH_test{run_path}");
    assert!(
        proxy_requests(&log(0), &path).is_empty(),
        "node1's proxy served the run's objects"
    );
    let method_of = |label: &str| match label.split_whitespace().next() {
        Some("write") => "PUT",
        Some("read") => "GET",
        Some("delete") => "DELETE",
        _ => panic!("a files phase named {label}"),
    };
    let counted: Vec<_> = (1..proxies.len()).map(|i| proxy_requests(&log(i), &path)).collect();
    for p in v["phases"].as_array().unwrap().iter().filter(|p| p["prepare"] != true) {
        let eps = p["endpoints"].as_array().expect("per-proxy figures");
        assert_eq!(eps.len(), used.len(), "{}", p["label"]);
        let method = method_of(p["label"].as_str().unwrap());
        for (e, seen) in eps.iter().zip(&counted) {
            // 6 workers over 3 proxies: 2 each, 10 files each.
            assert_eq!(e["workers"], 2, "{e}");
            assert_eq!(e["ops"], 20, "{e}");
            assert_eq!(
                seen.get(method).copied(),
                Some(20),
                "{} {method}: {seen:?}",
                e["endpoint"]
            );
        }
    }
}

#[test]
fn hdfs_survives_a_datanode_kill_and_re_replicates() {
    if !lab_available("hdfs") {
        return;
    }
    let lab = Lab::new("hdfs");
    network_cluster_survives_a_node_kill(&lab, 4, 2, true);
}

#[test]
fn alluxio_survives_a_worker_kill_and_serves_from_the_under_store() {
    if !lab_available("alluxio") {
        return;
    }
    let lab = Lab::new("alluxio");
    network_cluster_survives_a_node_kill(&lab, 3, 1, true);
}

/// Average round trip client -> node1 in ms, from `lab rtt`.
fn rtt_ms(lab: &Lab) -> f64 {
    let out = lab.ok(120, &["lab", "rtt", lab.system, "--count", "40"]);
    let row = out
        .lines()
        .find(|l| l.starts_with("client -> node1"))
        .expect("a client row");
    row.split_whitespace().nth(4).unwrap().parse().unwrap()
}

/// Whether a ping from the root namespace to `addr` gets its answer within a second.
fn answers(addr: &str) -> bool {
    let out = Command::new("ping").args(["-c", "1", "-W", "1", addr]).output();
    out.is_ok_and(|o| o.status.success())
}

/// The delay line, the bandwidth limit and the one-sided partition of the node links, each
/// applied and removed.
#[test]
fn node_links_take_delay_bandwidth_limits_and_partitions() {
    if !lab_available("lab delay") {
        return;
    }
    let lab = Lab::new("gluster");
    lab.ok(900, &["lab", "up", "gluster"]);
    let before = rtt_ms(&lab);
    lab.ok(60, &["lab", "delay", "gluster", "10ms"]);
    let delayed = rtt_ms(&lab);
    // 10 ms each way: about 20 ms more (a busy machine adds, never removes, time).
    assert!(
        delayed - before > 17.0 && delayed < 200.0,
        "rtt {before} ms -> {delayed} ms"
    );
    lab.ok(60, &["lab", "delay", "gluster", "0"]);
    let after = rtt_ms(&lab);
    assert!(after < delayed / 4.0, "rtt with the delay removed: {after} ms");
    let rules = Command::new("iptables").args(["-S", "INPUT"]).output().unwrap();
    assert!(
        !String::from_utf8_lossy(&rules.stdout).contains("NFQUEUE"),
        "root NFQUEUE rule left"
    );

    // 8 Mbit/s each way on every node link: a 2 MiB file written to the replica 3 volume
    // reaches each brick at 1 MB/s at most, so it takes 2 s at least (load only adds time).
    let st = lab.status();
    let mount = PathBuf::from(st["targets"][0].as_str().unwrap().strip_prefix("file://").unwrap());
    lab.ok(60, &["lab", "limit", "gluster", "8mbit"]);
    assert_eq!(lab.status()["rate"], "8mbit");
    let started = std::time::Instant::now();
    let data = vec![7u8; 2 << 20];
    let mut f = std::fs::File::create(mount.join("limited")).unwrap();
    std::io::Write::write_all(&mut f, &data).unwrap();
    f.sync_all().unwrap();
    drop(f);
    let took = started.elapsed().as_secs_f64();
    assert!(took > 1.5, "2 MiB through 8 Mbit/s links in {took:.2} s");
    links_limited_to_8mbit_are_measured_and_judge_reads(&lab);
    lab.ok(60, &["lab", "limit", "gluster", "0"]);
    assert!(lab.status()["rate"].is_null());
    for n in st["nodes"].as_array().unwrap() {
        let ns = n["netns"].as_str().unwrap();
        let q = Command::new("tc")
            .args(["-n", ns, "qdisc", "show", "dev", "eth0"])
            .output()
            .unwrap();
        assert!(!String::from_utf8_lossy(&q.stdout).contains("tbf"), "{ns}: tbf left");
    }
    let bad = lab.dfsbench(60, &["lab", "limit", "gluster", "fast"]);
    assert_eq!(bad.status.code(), Some(2), "{}", describe(&bad));

    // A one-sided partition of node2: its answers are dropped, then it is back.
    let addr = st["nodes"][1]["addr"].as_str().unwrap().to_string();
    assert!(answers(&addr), "node2 answers before");
    lab.ok(60, &["lab", "fault", "gluster", "partition", "node2"]);
    assert!(!answers(&addr), "node2 still answers while partitioned");
    lab.ok(60, &["lab", "fault", "gluster", "heal-link", "node2"]);
    assert!(answers(&addr), "node2 answers after heal-link");
}

/// Under `lab limit 8mbit` (1 MB/s each way per link), a run's null tests measure each node
/// through its link (connect, ping, at most about 1 MB/s from it) and the run judges its reads
/// by the configured limit on the three bricks' links: a read phase is marked `[cache?]` for
/// the link exactly when it read more than 1.5x 3 MB/s.
fn links_limited_to_8mbit_are_measured_and_judge_reads(lab: &Lab) {
    let result = lab.dir.path().join("limited.json");
    let r = result.display().to_string();
    let args = [
        "run",
        "-t",
        "lab:gluster",
        "-w",
        "files",
        "--files",
        "8",
        "--file-size",
        "256k",
        "-j",
        "1",
        "--null-tests",
        "--invalidate",
        "0",
        "-q",
        "-o",
        &r,
    ];
    lab.ok(300, &args);
    let doc: Value = serde_json::from_slice(&std::fs::read(&result).unwrap()).unwrap();
    let n = &doc["null_tests"];
    assert!(n.get("errors").is_none(), "{n}");
    let nodes = n["nodes"].as_array().expect("the nodes were measured");
    assert_eq!(nodes.len(), 3, "{n}");
    for node in nodes {
        assert_eq!(node["serves_data"], true, "a brick: {node}");
        assert!(
            node["port"].as_u64().is_some() && node["connect"]["median_ns"].as_u64().is_some(),
            "{node}"
        );
        assert_eq!(node["ping"]["op"], "icmp echo", "{node}");
        // 8 Mbit/s is 1 MB/s; the token bucket's burst may add a little, never double it.
        for way in ["bandwidth", "bandwidth_to_node"] {
            let bps = node[way]["bytes_per_sec"].as_f64().expect("measured");
            assert!(
                bps > 0.0 && bps < 2e6,
                "{way} {bps} B/s through an 8 Mbit/s link: {node}"
            );
        }
    }
    let link = &doc["target"]["link"];
    assert_eq!(link["source"], "configured", "{link}");
    assert_eq!(link["bytes_per_sec"].as_f64(), Some(3e6), "{link}");
    let read = doc["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "read")
        .expect("a read phase");
    let beyond = read["bytes_per_sec"].as_f64().unwrap() > 1.5 * 3e6;
    let marked = read["cache_suspect"].as_array().is_some_and(|s| {
        s.iter().any(|r| {
            r.as_str()
                .unwrap()
                .contains("what the client's link to the storage carries")
        })
    });
    assert_eq!(beyond, marked, "{read}");
}

/// The minio binary `dfsbench lab install minio` builds (`go install`, 5-10 min): the MinIO test skips
/// without it, as the single-host server tests do, unless DFSBENCH_REQUIRE_LAB=1.
fn minio_installed() -> bool {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.cache/bin/minio");
    if bin.is_file() {
        return true;
    }
    assert!(
        std::env::var("DFSBENCH_REQUIRE_LAB").as_deref() != Ok("1"),
        "DFSBENCH_REQUIRE_LAB=1 but minio is not installed: run dfsbench lab install minio"
    );
    eprintln!("note: skipping the MinIO lab: minio is not installed (dfsbench lab install minio)");
    false
}

/// The MinIO lab's S3 credentials, from the env.sh it writes.
fn s3_env(lab: &Lab) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(lab.dir.path().join("minio/env.sh")).expect("the lab's env.sh");
    text.lines()
        .filter_map(|l| l.strip_prefix("export ")?.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Distributed MinIO (4 nodes x 2 drives, one erasure set) with the s3fs mount over it:
/// both targets serve a verified workload; a workload running while node2 is killed completes
/// with no errors; the probe fails while node2 is dead and succeeds (MinIO's heal status) after
/// it returns, and after node3 is wiped; files written through s3fs during the outage read back
/// intact; `down` leaves nothing.
#[test]
fn minio_with_s3fs_survives_a_node_kill_and_heals() {
    if !lab_available("minio") || !minio_installed() {
        return;
    }
    let lab = Lab::new("minio");
    lab.ok(900, &["lab", "up", "s3fs"]);
    let st = lab.status();
    assert_eq!(st["layout"], "s3fs");
    assert_eq!(st["nodes"].as_array().unwrap().len(), 4);
    assert_eq!(st["health"], "ok", "{st}");
    let targets: Vec<String> = st["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_string())
        .collect();
    let s3 = targets
        .iter()
        .find(|t| t.starts_with("s3://"))
        .expect("an s3:// target");
    let file = targets
        .iter()
        .find(|t| t.starts_with("file://"))
        .expect("the s3fs target");
    let mount = PathBuf::from(file.strip_prefix("file://").unwrap());
    let env = s3_env(&lab);
    // The lab's credentials come with `lab:minio-s3`; the URI takes them from env.sh.
    lab.files_workload_with("lab:minio-s3", 25, &[]);
    lab.files_workload_with(s3, 25, &env);
    lab.files_workload_with(file, 10, &[]);
    let files = write_files(&mount, 4);

    // The same store through all four gateways: 8 workers, 2 on each node; every gateway's
    // figures add up to the phase's.
    let hosts: Vec<String> = st["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| format!("{}:9000", n["addr"].as_str().unwrap()))
        .collect();
    let bucket = s3.strip_prefix("s3://").unwrap().split('/').next().unwrap();
    let gateways = format!("s3://{}/{bucket}/gateways", hosts.join(","));
    let result = lab.dir.path().join("gateways.json");
    let r = result.display().to_string();
    let args = [
        "run",
        "-t",
        &gateways,
        "-w",
        "files",
        "--files",
        "10",
        "--file-size",
        "64k",
        "-j",
        "8",
        "-q",
        "-o",
        &r,
    ];
    // A gateway that lost sight of its peers for a moment on this loaded box refuses writes
    // with MinIO's answer to a missing write quorum (503 SlowDownWrite) until it reconnects,
    // within seconds: the run is repeated then, for up to a minute (as net_files_clean does for
    // HDFS). Any other failure fails at once.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let out = loop {
        let out = lab
            .command(300, &args)
            .envs(env.iter().cloned())
            .output()
            .expect("run dfsbench");
        let no_quorum = String::from_utf8_lossy(&out.stdout).contains("SlowDownWrite");
        if out.status.success() || !no_quorum || std::time::Instant::now() > deadline {
            break out;
        }
        eprintln!("note: a gateway had no write quorum, running again: {}", describe(&out));
        std::thread::sleep(std::time::Duration::from_secs(2));
    };
    assert!(out.status.success(), "files over four gateways: {}", describe(&out));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&result).unwrap()).unwrap();
    for p in v["phases"].as_array().unwrap().iter().filter(|p| p["prepare"] != true) {
        let eps = p["endpoints"].as_array().expect("per-gateway figures");
        let got: Vec<String> = eps
            .iter()
            .map(|e| e["endpoint"].as_str().unwrap().replace("http://", ""))
            .collect();
        assert_eq!(got, hosts, "{}", p["label"]);
        assert!(
            eps.iter().all(|e| e["workers"] == 2 && e["ops"].as_u64().unwrap() > 0),
            "{eps:?}"
        );
        let ops: u64 = eps.iter().map(|e| e["ops"].as_u64().unwrap()).sum();
        assert_eq!(ops, p["ops"].as_u64().unwrap(), "{}", p["label"]);
    }

    // Kill node2 while a workload runs: EC:4 over 8 drives keeps reads and writes going with
    // 6 drives left, whenever the kill lands.
    let result = lab.dir.path().join("during-kill.json");
    let mut running = lab.files_command(s3, 100, &result);
    let running = running
        .envs(env.iter().cloned())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let running = running.expect("start the workload");
    lab.ok(60, &["lab", "fault", "minio", "kill", "node2"]);
    let out = running.wait_with_output().expect("the workload ends");
    assert!(out.status.success(), "workload across the kill: {}", describe(&out));
    check_files_result(&result, 100);
    assert_eq!(lab.node_state("node2"), "down");
    let probe = lab.dfsbench(120, &["lab", "probe", "minio"]);
    assert_eq!(
        probe.status.code(),
        Some(1),
        "probe with node2 dead: {}",
        describe(&probe)
    );
    lab.files_workload_with(file, 10, &[]);
    let more = write_files(&mount.join("during-outage"), 4);

    lab.ok(180, &["lab", "fault", "minio", "restart", "node2"]);
    assert_eq!(lab.node_state("node2"), "running");
    lab.ok(400, &["lab", "probe", "minio", "--wait", "5m"]);
    lab.ok(180, &["lab", "fault", "minio", "wipe", "node3"]);
    lab.ok(400, &["lab", "probe", "minio", "--wait", "5m"]);
    for (path, data) in files.iter().chain(&more) {
        assert_eq!(&std::fs::read(path).unwrap(), data, "{} changed", path.display());
    }

    let pids = lab_pids(&lab);
    lab.ok(180, &["lab", "down", "minio"]);
    assert_nothing_left("minio", lab.dir.path(), &pids);
}

/// Ceph (mon, mgr, MDS and radosgw on node1, one bluestore OSD on each of node2..4, 3 copies,
/// min_size 2): CephFS through `lab:ceph-fs` and RGW through `lab:ceph-s3` serve verified
/// workloads; a workload on the mount running while node2's OSD is killed completes with no
/// errors; the probe sees the dead OSD; S3 serves with it dead; after a restart of node2 and
/// after a wipe of node3 the probe succeeds (every PG active+clean); files written before and
/// during the outage read back intact; `down` leaves nothing (block files included).
#[test]
fn ceph_survives_an_osd_node_kill_and_recovers() {
    if !lab_available("ceph") {
        return;
    }
    let lab = Lab::new("ceph");
    lab.ok(900, &["lab", "up", "ceph"]);
    let st = lab.status();
    assert_eq!(st["nodes"].as_array().unwrap().len(), 4);
    assert_eq!(st["health"], "ok", "{st}");
    for n in st["nodes"].as_array().unwrap() {
        assert!(n["addr"].as_str().unwrap().starts_with("198.18."), "{n}");
        assert!(!n["pids"].as_array().unwrap().is_empty(), "{} runs nothing", n["name"]);
    }
    let file = st["targets"][0].as_str().unwrap().to_string();
    let mount = PathBuf::from(file.strip_prefix("file://").expect("a file:// target first"));
    assert!(st["targets"][1].as_str().unwrap().starts_with("s3://"), "{st}");
    let via_lab = lab.files_workload("lab:ceph-fs");
    let run_path = via_lab["target"]["run_path"].as_str().unwrap();
    assert!(run_path.starts_with(mount.to_str().unwrap()), "{run_path}");
    assert!(
        via_lab["phases"][0]["server_cpu"]["pids"]
            .as_array()
            .is_some_and(|p| !p.is_empty()),
        "no daemon CPU recorded"
    );
    // The RGW user's keys come with the lab target, none from the environment.
    lab.files_workload_with("lab:ceph-s3", 25, &[]);
    let files = write_files(&mount, 8);

    // Kill node2's OSD while a workload runs on the mount: 2 copies left meet min_size 2.
    let result = lab.dir.path().join("during-kill.json");
    let running = lab
        .files_command(&file, 300, &result)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the workload");
    std::thread::sleep(std::time::Duration::from_secs(1));
    lab.ok(60, &["lab", "fault", "ceph", "kill", "node2"]);
    let out = running.wait_with_output().expect("the workload ends");
    assert!(out.status.success(), "workload across the kill: {}", describe(&out));
    check_files_result(&result, 300);
    assert_eq!(lab.node_state("node2"), "down");
    let seen = (0..60).any(|_| {
        lab.probe_code() == Some(1) || {
            std::thread::sleep(std::time::Duration::from_secs(1));
            false
        }
    });
    assert!(seen, "the probe never noticed node2's OSD dead");
    lab.files_workload_with("lab:ceph-s3", 25, &[]);
    let more = write_files(&mount.join("during-outage"), 4);

    lab.ok(180, &["lab", "fault", "ceph", "restart", "node2"]);
    assert_eq!(lab.node_state("node2"), "running");
    lab.ok(400, &["lab", "probe", "ceph", "--wait", "5m"]);
    // A wiped OSD is destroyed and made anew under its id; the others backfill it.
    lab.ok(180, &["lab", "fault", "ceph", "wipe", "node3"]);
    lab.ok(400, &["lab", "probe", "ceph", "--wait", "5m"]);
    for (path, data) in files.iter().chain(&more) {
        assert_eq!(&std::fs::read(path).unwrap(), data, "{} changed", path.display());
    }

    let pids = lab_pids(&lab);
    lab.ok(180, &["lab", "down", "ceph"]);
    assert_nothing_left("ceph", lab.dir.path(), &pids);
}

/// The namespaces a lab's status names, one per node.
fn node_netns(st: &Value) -> Vec<String> {
    st["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["netns"].as_str().unwrap().to_string())
        .collect()
}

/// Two lab directories (two checkouts, CI and a person) run the same system at once: the two
/// `lab up` race for a subnet and each gets its own, every name carries its directory's id,
/// both serve a workload, and `down --all` in one takes down only its own lab, says it left the
/// other's namespaces alone, and the other still serves.
#[test]
fn two_lab_directories_run_the_same_system_at_once() {
    if !lab_available("two lab directories") {
        return;
    }
    let a = Lab::new("gluster");
    let b = a.beside("gluster");
    let (up_a, up_b) = std::thread::scope(|s| {
        let up_a = s.spawn(|| a.dfsbench(900, &["lab", "up", "gluster"]));
        let up_b = s.spawn(|| b.dfsbench(900, &["lab", "up", "gluster"]));
        (up_a.join().unwrap(), up_b.join().unwrap())
    });
    assert!(
        up_a.status.success(),
        "lab up in the first directory: {}",
        describe(&up_a)
    );
    assert!(
        up_b.status.success(),
        "lab up in the second directory: {}",
        describe(&up_b)
    );
    let (st_a, st_b) = (a.status(), b.status());
    assert_ne!(a.id(), b.id());
    assert_eq!(st_a["id"], a.id().as_str(), "{st_a}");
    assert_eq!(st_b["id"], b.id().as_str(), "{st_b}");
    assert_ne!(st_a["client_addr"], st_b["client_addr"], "the same subnet twice");
    assert_ne!(st_a["bridge"], st_b["bridge"]);
    let (ns_a, ns_b) = (node_netns(&st_a), node_netns(&st_b));
    for (lab, names) in [(&a, &ns_a), (&b, &ns_b)] {
        for ns in names {
            assert!(ns.starts_with(&format!("dfsb-{}-gluster-", lab.id())), "{ns}");
        }
    }
    eprintln!(
        "first: id {} {} bridge {}; second: id {} {} bridge {}",
        a.id(),
        st_a["client_addr"],
        st_a["bridge"],
        b.id(),
        st_b["client_addr"],
        st_b["bridge"]
    );
    let target_a = st_a["targets"][0].as_str().unwrap().to_string();
    let target_b = st_b["targets"][0].as_str().unwrap().to_string();
    a.files_workload(&target_a);
    b.files_workload(&target_b);

    let pids_a = lab_pids(&a);
    let swept = a.ok(180, &["lab", "down", "--all"]);
    assert!(swept.lines().any(|l| l == "removed gluster"), "{swept}");
    for ns in &ns_b {
        let said = swept
            .lines()
            .any(|l| l.starts_with(&format!("left alone: namespace {ns} (")));
        assert!(said, "down --all does not say it left {ns} alone:\n{swept}");
    }
    assert_nothing_left("gluster", a.dir.path(), &pids_a);

    let netns = lab_netns();
    for ns in &ns_b {
        assert!(netns.contains(ns), "{ns} is gone: {netns:?}");
    }
    assert_eq!(b.status()["health"], "ok");
    b.files_workload(&target_b);
    let pids_b = lab_pids(&b);
    b.ok(180, &["lab", "down", "gluster"]);
    assert_nothing_left("gluster", b.dir.path(), &pids_b);
}

/// The words of the lab's mpirun line, and its rsh agent (the word after `plm_rsh_agent`).
#[cfg(feature = "mpi")]
fn lab_mpirun(st: &Value) -> (Vec<String>, PathBuf) {
    let words = shell_words::split(st["mpirun"].as_str().expect("an mpirun line")).unwrap();
    let at = words.iter().position(|w| w == "plm_rsh_agent").expect("an rsh agent");
    let agent = PathBuf::from(&words[at + 1]);
    (words, agent)
}

/// One point of `study` on the lab's first 2 client nodes (`--launcher lab`): its result.
#[cfg(feature = "mpi")]
fn lab_study_point(lab: &Lab, study: &str, scale: &str, point: &str) -> Value {
    let dir = lab.dir.path().join(study);
    let d = dir.display().to_string();
    let target = format!("lab:{}-fs", lab.system);
    let mut args = vec!["study", study, "-t", &target];
    // The node axis goes through the lab's launcher; surfnet's client row places its own.
    if study != "surfnet" {
        args.extend(["--nodes", "2", "--launcher", "lab"]);
    }
    args.extend(["--scale", scale, "--points", point, "-o", &d]);
    lab.ok(600, &args);
    let label = format!("{}-fs", lab.system);
    serde_json::from_str(&std::fs::read_to_string(dir.join(label).join(format!("{point}.json"))).unwrap()).unwrap()
}

/// `COMMAND` on a client node through the lab's rsh agent, as mpirun runs it.
#[cfg(feature = "mpi")]
fn on_client(agent: &Path, client: &str, command: &str) -> Output {
    Command::new("timeout")
        .args(["-s", "KILL", "60"])
        .arg(agent)
        .args([client, command])
        .output()
        .expect("run the rsh agent")
}

/// Client nodes: each has its own host name, address and FUSE client; the lab's mpirun line
/// runs a rank on each over the lab's links, and their shuffled reads of each other's files
/// verify; the study's node axis runs through `--launcher lab`; Slurm runs on them (srun);
/// a killed client node is down until restarted; `down` removes them with the rest.
#[cfg(feature = "mpi")]
#[test]
fn client_nodes_run_ranks_over_the_lab_links() {
    if !lab_available("client nodes") || !common::mpirun_found() {
        return;
    }
    let lab = Lab::new("gluster");
    for (args, says) in [
        (&["--clients", "36"][..], "35 client nodes at most"),
        (&["--slurm"][..], "add them with --clients N"),
    ] {
        let bad = lab.dfsbench(60, &[&["lab", "up", "gluster"][..], args].concat());
        assert_eq!(bad.status.code(), Some(2), "{args:?}: {}", describe(&bad));
        assert!(
            String::from_utf8_lossy(&bad.stderr).contains(says),
            "{}",
            describe(&bad)
        );
    }
    assert!(!lab.dir.path().join("gluster").exists(), "a refused up started nothing");
    lab.ok(900, &["lab", "up", "gluster", "--clients", "2"]);
    let st = lab.status();
    assert_eq!(st["health"], "ok", "{st}");
    let clients = st["clients"].as_array().expect("the client nodes are listed");
    assert_eq!(clients.len(), 2, "{st}");
    for (i, c) in clients.iter().enumerate() {
        assert_eq!(c["name"], format!("client{}", i + 1), "{c}");
        assert_eq!(c["state"], "running", "{c}");
        assert!(c["addr"].as_str().unwrap().ends_with(&format!(".{}", 101 + i)), "{c}");
    }
    let hostfile = std::fs::read_to_string(st["hostfile"].as_str().expect("a hostfile")).unwrap();
    let hosts: Vec<&str> = hostfile.lines().filter_map(|l| l.split_whitespace().next()).collect();
    assert_eq!(hosts, ["client1", "client2"]);
    let target = st["targets"][0].as_str().unwrap().to_string();
    let mount = target.strip_prefix("file://").expect("a file:// target").to_string();
    let (mpirun, agent) = lab_mpirun(&st);

    // Each node is entered with its own name, and its own FUSE client serves the mount point.
    let mut fuse_clients = Vec::new();
    for (c, status) in ["client1", "client2"].iter().zip(clients) {
        let out = on_client(&agent, c, "hostname; cat /proc/mounts");
        assert!(out.status.success(), "{c}: {}", describe(&out));
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(text.lines().next(), Some(*c), "{text}");
        assert!(
            text.contains(&format!(" {mount} fuse.glusterfs ")),
            "{c} has no own mount: {text}"
        );
        let own = status["pids"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_i64)
            .find(|p| std::fs::read_to_string(format!("/proc/{p}/comm")).is_ok_and(|comm| comm.trim() == "glusterfs"));
        fuse_clients.push(own.unwrap_or_else(|| panic!("{c} runs no glusterfs client: {status}")));
    }
    assert_ne!(fuse_clients[0], fuse_clients[1]);
    // A mount whose FUSE client died is no target (it would be this machine's disk once
    // unmounted); `up` mounts it again.
    let state: Value =
        serde_json::from_str(&std::fs::read_to_string(lab.dir.path().join("gluster/state.json")).unwrap()).unwrap();
    let root_client = state["pids"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["what"] == "glusterfs mount");
    let pid = root_client.expect("the root mount's FUSE client is recorded")["pid"]
        .as_i64()
        .unwrap();
    // SAFETY: kill(2) of the lab's own FUSE client, which this test's lab started.
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    let gone = lab.dfsbench(
        120,
        &["run", "-t", "lab:gluster-fs", "-w", "files", "--files", "5", "-q"],
    );
    assert_eq!(gone.status.code(), Some(1), "{}", describe(&gone));
    assert!(
        String::from_utf8_lossy(&gone.stderr).contains("its FUSE client is gone"),
        "{}",
        describe(&gone)
    );
    lab.ok(300, &["lab", "up", "gluster"]);
    lab.files_workload_with("lab:gluster-fs", 5, &[]);
    // `lab` commands work from a node (a run's `--fault 'lab kill node2'` runs on rank 0's):
    // it sees the storage nodes' namespaces and their daemons.
    let inside = format!(
        "DFSBENCH_LAB_DIR={} {} lab status gluster --format json",
        lab.dir.path().display(),
        env!("CARGO_BIN_EXE_dfsbench")
    );
    let out = on_client(&agent, "client1", &inside);
    let seen: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", describe(&out)));
    assert_eq!(seen[0]["health"], "ok", "{seen}");

    // One rank per client node, over TCP on the lab's subnet: hosts, sums and shuffled reads.
    let result = lab.dir.path().join("mpi.json");
    let r = result.display().to_string();
    let args = [
        "run",
        "-t",
        "lab:gluster-fs",
        "-w",
        "files",
        "--files",
        "20",
        "--file-size",
        "4k",
        "-j",
        "2",
        "--shuffle",
        "--verify",
        "-q",
        "-o",
        &r,
    ];
    let out = Command::new("timeout")
        .args(["-s", "KILL", "300"])
        .args(&mpirun)
        .arg(env!("CARGO_BIN_EXE_dfsbench"))
        .args(args)
        .env("DFSBENCH_LAB_DIR", lab.dir.path())
        .current_dir(lab.dir.path())
        .output()
        .expect("run mpirun");
    assert!(
        out.status.success(),
        "mpirun across the client nodes: {}",
        describe(&out)
    );
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&result).unwrap()).unwrap();
    let c = &v["cluster"];
    assert_eq!(c["mode"], "mpi", "{c}");
    assert_eq!(c["nodes"], serde_json::json!(["client1", "client2"]), "{c}");
    assert!(c["members"][1]["clock_rtt_s"].as_f64().is_some_and(|t| t > 0.0), "{c}");
    let sum = |p: &Value, list: &str, field: &str| -> u64 {
        p[list]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x[field].as_u64().unwrap())
            .sum()
    };
    for p in v["phases"].as_array().unwrap() {
        assert_eq!(p["errors"]["total"], 0, "{p}");
        assert_eq!(p["ops"], 80, "{}: 20 files of each of 4 workers", p["label"]);
        let hosts: Vec<&str> = p["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["host"].as_str().unwrap())
            .collect();
        assert_eq!(hosts, ["client1", "client2"], "{}", p["label"]);
        for field in ["ops", "bytes"] {
            assert_eq!(
                sum(p, "nodes", field),
                p[field].as_u64().unwrap(),
                "{}: {field}",
                p["label"]
            );
        }
    }
    let read = v["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["label"].as_str().unwrap().starts_with("read"))
        .unwrap();
    assert_eq!(read["verify"]["mismatches"], 0, "{read}");
    for w in read["workers_detail"].as_array().unwrap() {
        let (me, from) = (w["worker"].as_u64().unwrap(), w["read_from"].as_u64().unwrap());
        assert_ne!(me / 2, from / 2, "worker {me} read its own node's files");
    }

    // The study's node axis through the lab's launcher: each point's ranks on client nodes;
    // clients-sweep spreads a row's clients over them (4 clients, 2 on each node).
    let point = lab_study_point(&lab, "size-sweep", "0.001", "n10000-s1024-nodes2");
    assert_eq!(point["cluster"]["nodes"], serde_json::json!(["client1", "client2"]));
    let point = lab_study_point(&lab, "clients-sweep", "0.0001", "clients4");
    assert_eq!(point["cluster"]["nodes"], serde_json::json!(["client1", "client2"]));
    assert_eq!(point["cluster"]["workers_per_rank"][0], 2, "{}", point["cluster"]);

    // dfsbench's own processes over the client nodes (the lab's procs line): rank 0 on
    // client1, rank 1 started on client2 through the agent, joined over the lab's links.
    let procs = lab.status()["procs"].as_str().expect("a procs line").to_string();
    let result = lab.dir.path().join("procs.json");
    let mut line = shell_words::split(&procs).unwrap();
    line.extend(
        [
            "-t",
            "lab:gluster-fs",
            "-w",
            "files",
            "--files",
            "5",
            "--shuffle",
            "--verify",
            "-q",
            "-o",
        ]
        .map(String::from),
    );
    line.push(result.display().to_string());
    let out = Command::new("timeout")
        .args(["-s", "KILL", "300"])
        .args(&line)
        .env("DFSBENCH_LAB_DIR", lab.dir.path())
        .output()
        .expect("run the procs line");
    assert!(out.status.success(), "{}", describe(&out));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&result).unwrap()).unwrap();
    let c = &v["cluster"];
    assert_eq!(
        (&c["mode"], &c["nodes"]),
        (&serde_json::json!("procs"), &serde_json::json!(["client1", "client2"])),
        "{c}"
    );
    assert!(c["members"][1]["clock_rtt_s"].as_f64().is_some_and(|t| t > 0.0), "{c}");
    let read = v["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "read")
        .unwrap();
    assert_eq!(
        (&read["errors"]["total"], &read["verify"]["mismatches"]),
        (&serde_json::json!(0), &serde_json::json!(0)),
        "{read}"
    );

    // SURFnet's client row: client2 is killed during the copy with its process; the process
    // on client1 goes on, and the run records the lost one and what it had done.
    let point = lab_study_point(&lab, "surfnet", "0.05", "fail-client");
    assert_eq!(point["status"], "complete", "{}", point["status_message"]);
    assert_eq!(point["cluster"]["nodes"], serde_json::json!(["client1", "client2"]));
    let lost = &point["cluster"]["lost"];
    assert_eq!(lost.as_array().map(Vec::len), Some(1), "{lost}");
    assert_eq!(
        (&lost[0]["host"], &lost[0]["rank"]),
        (&serde_json::json!("client2"), &serde_json::json!(1)),
        "{lost}"
    );
    assert!(lost[0]["why"].as_str().unwrap().contains("SIGKILL"), "{lost}");
    let write = &point["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "write")
        .unwrap();
    assert!(write["ops"].as_u64().unwrap() > 0, "{write}");
    assert_eq!(
        write["nodes"].as_array().unwrap().len(),
        1,
        "client1's part alone: {}",
        write["nodes"]
    );
    let table = std::fs::read_to_string(lab.dir.path().join("surfnet/tables.md")).unwrap();
    // (A loaded machine may leave a gap long enough to count as a stall: "writes back N s".)
    assert!(table.contains("| client | out 6-14 s, "), "{table}");
    // The study brought client2 back.
    assert_eq!(lab.status()["clients"][1]["state"], "running");

    // Slurm on the client nodes: srun (the lab's line) runs a task on each, dfsbench's ranks
    // meet through PMIx, and a batch job does the same.
    lab.ok(300, &["lab", "up", "gluster", "--slurm"]);
    let srun = shell_words::split(lab.status()["srun"].as_str().expect("an srun line")).unwrap();
    let slurm = |extra: &[&str]| {
        let out = Command::new("timeout")
            .args(["-s", "KILL", "300"])
            .args(&srun)
            .args(extra)
            .env("DFSBENCH_LAB_DIR", lab.dir.path())
            .current_dir(lab.dir.path())
            .output()
            .expect("run srun");
        assert!(out.status.success(), "srun {extra:?}: {}", describe(&out));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let mut hosts: Vec<String> = slurm(&["hostname"]).lines().map(String::from).collect();
    hosts.sort();
    assert_eq!(hosts, ["client1", "client2"]);
    let result = lab.dir.path().join("srun.json");
    let r = result.display().to_string();
    let mut run = vec![env!("CARGO_BIN_EXE_dfsbench")];
    run.extend_from_slice(&args[..args.len() - 1]);
    run.push(&r);
    slurm(&run);
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&result).unwrap()).unwrap();
    assert_eq!(
        v["cluster"]["nodes"],
        serde_json::json!(["client1", "client2"]),
        "{}",
        v["cluster"]
    );
    assert_eq!(v["status"], "complete");
    // The same as a batch job (sbatch --wait returns when it ended, with its exit code).
    let batch = lab.dir.path().join("batch.json");
    let script = lab.dir.path().join("job.sbatch");
    let line = shell_words::join(run.iter().take(run.len() - 1).chain([&batch.to_str().unwrap()]));
    std::fs::write(
        &script,
        format!("#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\nsrun --mpi=pmix {line}\n"),
    )
    .unwrap();
    let conf = srun
        .iter()
        .find_map(|w| w.strip_prefix("SLURM_CONF="))
        .expect("SLURM_CONF in the srun line");
    let out = Command::new("timeout")
        .args(["-s", "KILL", "300", "sbatch", "--wait", "--output", "/dev/null"])
        .arg(&script)
        .env("SLURM_CONF", conf)
        .env("DFSBENCH_LAB_DIR", lab.dir.path())
        .current_dir(lab.dir.path())
        .output()
        .expect("run sbatch");
    assert!(out.status.success(), "sbatch --wait: {}", describe(&out));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&batch).unwrap()).unwrap();
    assert_eq!(
        v["cluster"]["nodes"],
        serde_json::json!(["client1", "client2"]),
        "{}",
        v["cluster"]
    );

    // A killed client node is down (and cannot be entered) until it is restarted.
    lab.ok(60, &["lab", "fault", "gluster", "kill", "client2"]);
    let st = lab.status();
    assert_eq!(st["clients"][1]["state"], "down", "{st}");
    assert_eq!(st["health"], "ok", "a client node is not the storage: {st}");
    assert!(!on_client(&agent, "client2", "true").status.success());
    lab.ok(120, &["lab", "fault", "gluster", "restart", "client2"]);
    let out = on_client(&agent, "client2", "hostname; cat /proc/mounts");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(&format!(" {mount} fuse.glusterfs ")),
        "{}",
        describe(&out)
    );
    let wipe = lab.dfsbench(60, &["lab", "fault", "gluster", "wipe", "client2"]);
    assert_eq!(wipe.status.code(), Some(2), "{}", describe(&wipe));

    let mut pids = lab_pids(&lab);
    for c in lab.status()["clients"].as_array().unwrap() {
        pids.extend(c["pids"].as_array().unwrap().iter().filter_map(Value::as_i64));
    }
    lab.ok(180, &["lab", "down", "gluster"]);
    assert_nothing_left("gluster", lab.dir.path(), &pids);
}
