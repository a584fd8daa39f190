//! A lab target's nodes in the null tests, end to end through `dfsbench run -t lab:NAME`,
//! without a storage cluster: a lab directory of the test's own holds a gluster state whose
//! one node is a network namespace the test made (a veth pair on TEST-NET-3 addresses), with a
//! listener in it standing in for the brick daemon, and a plain directory as the mount. The run
//! must find the node's port from its namespace, measure the node, and judge its read by the
//! state's `lab limit`. Needs root (namespaces) and python3 (the listener); skips without.

mod common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use common::{bin, is_root, validate};
use serde_json::{json, Value};

/// A network namespace joined to this one by a veth pair on TEST-NET-3 (203.0.113.0/24, never
/// routed; core's node test uses TEST-NET-2, so the two never share a subnet); removed with
/// both ends on drop.
struct TestNamespace {
    name: String,
    host_if: String,
    node_addr: String,
}

impl TestNamespace {
    fn create() -> Option<TestNamespace> {
        let pid = std::process::id();
        let net = 4 * (pid % 60);
        let ns = TestNamespace {
            name: format!("nulltest-e2e-{pid}"),
            host_if: format!("ne{pid}a"),
            node_addr: format!("203.0.113.{}", net + 2),
        };
        let node_if = format!("ne{pid}b");
        let (host_cidr, node_cidr) = (format!("203.0.113.{}/30", net + 1), format!("{}/30", ns.node_addr));
        let steps: [Vec<&str>; 8] = [
            vec!["netns", "add", &ns.name],
            vec!["link", "add", &ns.host_if, "type", "veth", "peer", "name", &node_if],
            vec!["link", "set", &node_if, "netns", &ns.name],
            vec!["addr", "add", &host_cidr, "dev", &ns.host_if],
            vec!["link", "set", &ns.host_if, "up"],
            vec!["-n", &ns.name, "addr", "add", &node_cidr, "dev", &node_if],
            vec!["-n", &ns.name, "link", "set", &node_if, "up"],
            vec!["-n", &ns.name, "link", "set", "lo", "up"],
        ];
        for step in steps {
            if !Command::new("ip").args(&step).status().is_ok_and(|s| s.success()) {
                return None;
            }
        }
        Some(ns)
    }
}

impl Drop for TestNamespace {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["link", "del", &self.host_if]).status();
        let _ = Command::new("ip").args(["netns", "del", &self.name]).status();
    }
}

/// A listener in the namespace, as a daemon would be; stopped by its PID on drop.
struct Listener {
    child: Child,
    port: u16,
}

impl Listener {
    fn start(ns: &TestNamespace) -> Option<Listener> {
        let script = "import socket,sys,time\ns=socket.socket()\ns.bind((sys.argv[1],0))\ns.listen()\nprint(s.getsockname()[1],flush=True)\ntime.sleep(300)";
        let mut child = Command::new("ip")
            .args(["netns", "exec", &ns.name, "python3", "-c", script, &ns.node_addr])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let mut line = String::new();
        BufReader::new(child.stdout.take()?).read_line(&mut line).ok()?;
        match line.trim().parse() {
            Ok(port) => Some(Listener { child, port }),
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                None
            }
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A gluster lab state in `labs` whose one node is `ns`, limited to `rate` per link.
fn fake_gluster(labs: &Path, ns: &TestNamespace, rate: &str) {
    let dir = labs.join("gluster");
    std::fs::create_dir_all(dir.join("mnt")).unwrap();
    let state = json!({
        "name": "gluster", "system": "gluster", "layout": "replica3", "subnet": 0, "bridge": "none",
        "nodes": [{"name": "node1", "netns": ns.name, "addr": ns.node_addr, "veth": ns.host_if,
            "role": "brick", "data_dir": dir.join("node1")}],
        "pids": [], "mounts": [], "data_dirs": [], "root_rules": [], "delay_us": 0, "rate": rate,
        "delayers": [], "up": true
    });
    std::fs::write(dir.join("state.json"), state.to_string()).unwrap();
}

#[test]
fn a_lab_targets_node_is_measured_and_its_limit_judges_the_reads() {
    if !is_root() {
        eprintln!("skipped: network namespaces need root");
        return;
    }
    let Some(ns) = TestNamespace::create() else {
        eprintln!("skipped: could not make a network namespace with a veth pair (ip)");
        return;
    };
    let Some(listener) = Listener::start(&ns) else {
        eprintln!("skipped: no python3 to stand in for the node's daemon");
        return;
    };
    let labs = tempfile::tempdir().unwrap();
    fake_gluster(labs.path(), &ns, "1kbit");
    let result = labs.path().join("result.json");
    let out = Command::new(bin())
        .args([
            "run",
            "-t",
            "lab:gluster",
            "-w",
            "files",
            "--files",
            "4",
            "--file-size",
            "64k",
            "-j",
            "1",
        ])
        .args(["--null-tests", "--invalidate", "0", "-q", "-o"])
        .arg(&result)
        .env("DFSBENCH_LAB_DIR", labs.path())
        .current_dir(labs.path())
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let doc: Value = serde_json::from_slice(&std::fs::read(&result).unwrap()).unwrap();
    validate(&doc);
    let n = &doc["null_tests"];
    assert!(n.get("errors").is_none(), "{n}");
    let node = &n["nodes"][0];
    assert_eq!(
        (node["name"].as_str(), node["serves_data"].as_bool()),
        (Some("node1"), Some(true))
    );
    assert_eq!(
        node["port"].as_u64(),
        Some(u64::from(listener.port)),
        "the port found in the namespace"
    );
    assert_eq!(node["connect"]["count"], 5, "{node}");
    assert_eq!(node["ping"]["op"], "icmp echo", "{node}");
    for way in ["bandwidth", "bandwidth_to_node"] {
        assert!(
            node[way]["bytes_per_sec"].as_f64().is_some_and(|b| b > 0.0),
            "{way}: {node}"
        );
    }
    assert!(
        stdout.contains(&format!(
            "null test: node1 {}: tcp connect :{} median",
            ns.node_addr, listener.port
        )),
        "{stdout}"
    );
    // The daemon's CPU is recorded, as for a real lab.
    let pids = doc["phases"][0]["server_cpu"]["pids"]
        .as_array()
        .expect("server CPU")
        .clone();
    assert_eq!(pids, [json!(listener.child.id())], "the listener is the node's daemon");
    // 1 kbit/s on the one brick's link: 125 B/s, which any read of 256 KiB beats.
    let link = &doc["target"]["link"];
    assert_eq!(link["source"], "configured", "{link}");
    assert_eq!(link["basis"], "lab limit 1kbit on each of the links of node1", "{link}");
    let read = doc["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "read")
        .unwrap();
    let reasons = read["cache_suspect"].as_array().expect("the read is marked").clone();
    assert!(
        reasons.iter().any(|r| r
            .as_str()
            .unwrap()
            .contains("what the client's link to the storage carries (configured")),
        "{reasons:?}"
    );
    assert!(stdout.contains("[cache?]"), "{stdout}");
}
