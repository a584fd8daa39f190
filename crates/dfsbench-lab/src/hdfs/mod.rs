//! HDFS: the NameNode on node1 (RPC 8020, HTTP and WebHDFS 9870) and a DataNode on each of
//! node2..4, replication 3, from the Hadoop 3.4.1 jars `dfsbench lab install hdfs` puts in
//! `.cache/hdfs`, run with the machine's Java 17. The single-host layout is in `local.rs`.

mod local;

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::install::{finish_maven, maven_jars, MavenJars};
use crate::local::Local;
use crate::state::{NodeState, State};
use crate::sys::{self, render, run, spawn_in, wait_for};
use crate::{Cluster, Error, Result, System};

const CORE_SITE: &str = include_str!("core-site.xml");
const HDFS_SITE: &str = include_str!("hdfs-site.xml");
const LOG4J: &str = include_str!("log4j.properties");

const HADOOP_VERSION: &str = "3.4.1";
const RPC_PORT: u16 = 8020;
const HTTP_PORT: u16 = 9870;
/// The directory every lab target points into (created at `up`).
const DIR: &str = "dfsbench";
const START_LIMIT: Duration = Duration::from_secs(120);
const NAMENODE_CLASS: &str = "org.apache.hadoop.hdfs.server.namenode.NameNode";
const DATANODE_CLASS: &str = "org.apache.hadoop.hdfs.server.datanode.DataNode";
/// Java 17 closes the JDK internals Hadoop 3.4 still reflects into.
const ADD_OPENS: &[&str] = &[
    "java.base/java.lang",
    "java.base/java.lang.reflect",
    "java.base/java.io",
    "java.base/java.net",
    "java.base/java.nio",
    "java.base/java.util",
    "java.base/java.util.concurrent",
    "java.base/java.util.concurrent.atomic",
    "java.base/java.util.regex",
    "java.base/java.security",
    "java.base/sun.nio.ch",
    "java.base/sun.nio.cs",
    "java.base/sun.security.action",
    "java.base/sun.util.calendar",
    "java.base/jdk.internal.misc",
    "java.security.jgss/sun.security.krb5",
];

pub(crate) struct Hdfs;

fn namenode(state: &State) -> &NodeState {
    &state.nodes[0]
}

fn hadoop_home() -> PathBuf {
    sys::cache_dir().join("hdfs")
}

fn jars_installed(home: &Path) -> bool {
    home.join(format!("lib/hadoop-hdfs-{HADOOP_VERSION}.jar")).is_file()
        && home.join("res/webapps/hdfs/WEB-INF/web.xml").is_file()
}

/// The Hadoop jars from Maven Central (Hadoop's own `hadoop-project` BOM, so the versions
/// match what Hadoop tested) into `.cache/hdfs/lib`, and `webapps/` (which the NameNode and
/// WebHDFS need, shipped only in the tests jar) into `.cache/hdfs/res`; cached.
fn install_jars() -> Result<Vec<String>> {
    let jars = MavenJars {
        part: "hdfs",
        release: "hadoop-3.4.1",
        pom: include_str!("pom.xml"),
        scope: "test",
        exclude: None,
        needed: &["lib/hadoop-hdfs-3.4.1.jar", "res/webapps/hdfs/WEB-INF/web.xml"],
    };
    let Some(staging) = maven_jars(&jars)? else {
        return Ok(Vec::new());
    };
    let res = hadoop_home().join("res");
    let _ = fs::remove_dir_all(&res);
    let tests = staging.join(format!("hadoop-hdfs-{HADOOP_VERSION}-tests.jar"));
    let extract = "import sys, zipfile\nwith zipfile.ZipFile(sys.argv[1]) as z:\n    z.extractall(sys.argv[2], [n for n in z.namelist() if n.startswith('webapps/')])";
    let (tests_arg, res_arg) = (tests.display().to_string(), res.display().to_string());
    run(
        "python3",
        &["-c", extract, &tests_arg, &res_arg],
        Duration::from_secs(120),
    )?;
    fs::remove_file(&tests).map_err(|e| Error::runtime(format!("cannot remove {}: {e}", tests.display())))?;
    finish_maven(&jars, &staging)
}

fn conf_dir(node: &NodeState) -> PathBuf {
    node.data_dir.join("conf")
}

fn data_dir(node: &NodeState) -> PathBuf {
    node.data_dir.join("data")
}

fn write_config(state: &State, node: &NodeState) -> Result<()> {
    let conf = conf_dir(node);
    fs::create_dir_all(&conf).map_err(|e| Error::runtime(format!("cannot create {}: {e}", conf.display())))?;
    let dir = node.data_dir.display().to_string();
    let values = [
        ("nn", namenode(state).addr.as_str()),
        ("addr", &node.addr),
        ("dir", &dir),
    ];
    sys::write(&conf.join("core-site.xml"), &render(CORE_SITE, &values))?;
    sys::write(&conf.join("hdfs-site.xml"), &render(HDFS_SITE, &values))?;
    sys::write(&conf.join("log4j.properties"), LOG4J)
}

/// The `java` arguments of a Hadoop daemon: heap, the JDK internals it needs opened, its
/// config folder and logs, and the jars.
fn java_args(conf: &Path, log_dir: &Path, heap_mb: u32, class: &str) -> Vec<String> {
    let home = hadoop_home();
    let mut args = vec![format!("-Xmx{heap_mb}m"), "-XX:+UseParallelGC".into()];
    for m in ADD_OPENS {
        args.extend(["--add-opens".into(), format!("{m}=ALL-UNNAMED")]);
    }
    args.extend([
        "-Djava.net.preferIPv4Stack=true".into(),
        format!("-Dhadoop.home.dir={}", home.display()),
        format!("-Dhadoop.log.dir={}", log_dir.display()),
        format!("-Dlog4j.configuration=file:{}", conf.join("log4j.properties").display()),
        "-cp".into(),
        // webapps/ (the NameNode's web UI and WebHDFS) is only in the tests jar: extracted.
        format!(
            "{}:{}:{}/*",
            conf.display(),
            home.join("res").display(),
            home.join("lib").display()
        ),
        class.into(),
    ]);
    args
}

/// Start a Hadoop daemon in the node's namespace, logging into `<node>/<name>.log`.
fn spawn_java(node: &NodeState, heap_mb: u32, class: &str, name: &str) -> Result<()> {
    let args = java_args(&conf_dir(node), &node.data_dir, heap_mb, class);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    spawn_in(
        Some(&node.netns),
        "java",
        &args,
        &node.data_dir.join(format!("{name}.log")),
    )?;
    Ok(())
}

/// The NameNode's name directory: a copy of the formatted empty one the single-host layout
/// keeps in the cache, else `NameNode -format` (a one-shot JVM).
fn format_namenode(state: &State) -> Result<()> {
    let nn = namenode(state);
    format_name_dir(&conf_dir(nn), &nn.data_dir.join("name"))
}

/// An empty formatted name directory at `name`: a copy of the cache's (made on the first
/// format, ~3 s of JVM saved each later start), else `NameNode -format` with `conf`.
fn format_name_dir(conf: &Path, name: &Path) -> Result<()> {
    if name.join("current/VERSION").is_file() {
        return Ok(());
    }
    let template = hadoop_home().join(format!("nn-formatted-{HADOOP_VERSION}"));
    if template.join("current/VERSION").is_file() {
        let (from, to) = (template.display().to_string(), name.display().to_string());
        return run("cp", &["-a", &from, &to], Duration::from_secs(30)).map(|_| ());
    }
    let home = hadoop_home();
    let cp = format!("{}:{}/*", conf.display(), home.join("lib").display());
    run(
        "java",
        &[
            "-Xmx256m",
            "-cp",
            &cp,
            NAMENODE_CLASS,
            "-format",
            "-force",
            "-nonInteractive",
            "-clusterid",
            "dfsbench-lab",
        ],
        Duration::from_secs(120),
    )?;
    // Kept for later starts (best effort: another start may be making it at the same time).
    let tmp = template.with_extension(format!("tmp.{}", std::process::id()));
    let (from, to) = (name.display().to_string(), tmp.display().to_string());
    if run("cp", &["-a", &from, &to], Duration::from_secs(30)).is_ok() && fs::rename(&tmp, &template).is_err() {
        let _ = fs::remove_dir_all(&tmp);
    }
    Ok(())
}

fn web(state: &State) -> String {
    format!("http://{}:{HTTP_PORT}", namenode(state).addr)
}

/// One bean of the NameNode's JMX servlet.
fn jmx(state: &State, bean: &str) -> Option<Value> {
    let url = format!("{}/jmx?qry=Hadoop:service=NameNode,name={bean}", web(state));
    let text = sys::curl(&["-f", &url], Duration::from_secs(10)).ok()?;
    let v: Value = serde_json::from_str(&text).ok()?;
    v["beans"].get(0).cloned()
}

/// Operational, out of safe mode, with `want` live DataNodes.
fn namenode_ready(state: &State, want: u64) -> Option<()> {
    let fs_state = jmx(state, "FSNamesystemState")?;
    let ok = fs_state["FSState"] == "Operational" && fs_state["NumLiveDataNodes"].as_u64()? >= want;
    let info = jmx(state, "NameNodeInfo")?;
    (ok && info["Safemode"] == "").then_some(())
}

/// WebHDFS: make /dfsbench, then write a file (the NameNode redirects the data to a DataNode),
/// read it back and delete it.
fn round_trip(state: &State) -> Option<()> {
    let base = format!("{}/webhdfs/v1/{DIR}", web(state));
    let limit = Duration::from_secs(20);
    sys::curl(
        &[
            "-f",
            "-o",
            "/dev/null",
            "-X",
            "PUT",
            &format!("{base}?op=MKDIRS&user.name=root"),
        ],
        limit,
    )
    .ok()?;
    let file = format!("{base}/.lab-ready");
    let create = format!("{file}?op=CREATE&overwrite=true&user.name=root");
    let to = sys::curl(
        &["-f", "-o", "/dev/null", "-w", "%{redirect_url}", "-X", "PUT", &create],
        limit,
    )
    .ok()?;
    let body = format!("dfsbench lab {}", std::process::id());
    sys::curl(
        &["-f", "-o", "/dev/null", "-X", "PUT", "--data-binary", &body, to.trim()],
        limit,
    )
    .ok()?;
    let got = sys::curl(&["-f", "-L", &format!("{file}?op=OPEN&user.name=root")], limit).ok()?;
    sys::curl(
        &[
            "-f",
            "-o",
            "/dev/null",
            "-X",
            "DELETE",
            &format!("{file}?op=DELETE&user.name=root"),
        ],
        limit,
    )
    .ok()?;
    (got == body).then_some(())
}

/// The new DataNode process itself says it has registered with the NameNode (the NameNode's
/// own list still shows a just-killed one as live for a few seconds).
fn datanode_registered(node: &NodeState) -> Option<()> {
    let url = format!(
        "http://{}:9864/jmx?qry=Hadoop:service=DataNode,name=DataNodeInfo",
        node.addr
    );
    let text = sys::curl(&["-f", &url], Duration::from_secs(10)).ok()?;
    let v: Value = serde_json::from_str(&text).ok()?;
    let actors: Value = serde_json::from_str(v["beans"][0]["BPServiceActorInfo"].as_str()?).ok()?;
    let registered = actors.as_array()?.iter().any(|a| a["ActorState"] == "RUNNING");
    registered.then_some(())
}

fn start_namenode(state: &State) -> Result<()> {
    let nn = namenode(state);
    write_config(state, nn)?;
    format_namenode(state)?;
    spawn_java(nn, 384, NAMENODE_CLASS, "namenode")?;
    wait_for("the NameNode's web server", START_LIMIT, || jmx(state, "NameNodeInfo"))?;
    Ok(())
}

fn start_datanode(state: &State, node: &NodeState) -> Result<()> {
    write_config(state, node)?;
    spawn_java(node, 256, DATANODE_CLASS, "datanode")
}

impl System for Hdfs {
    fn name(&self) -> &'static str {
        "hdfs"
    }
    fn code(&self) -> &'static str {
        "hd"
    }
    fn summary(&self) -> &'static str {
        "HDFS 3.4.1: a NameNode and 3 DataNodes, replication 3; one host: 2 DataNodes, replication 2"
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
    fn local(&self) -> Option<&dyn Local> {
        Some(&local::LocalHdfs)
    }
}

impl Cluster for Hdfs {
    fn layouts(&self) -> &'static [&'static str] {
        &["replication3"]
    }
    fn nodes(&self, _layout: &str) -> Vec<&'static str> {
        vec!["namenode", "datanode", "datanode", "datanode"]
    }

    fn up(&self, state: &mut State) -> Result<()> {
        if !jars_installed(&hadoop_home()) {
            install_jars()?;
        }
        start_namenode(state)?;
        for node in &state.nodes[1..] {
            start_datanode(state, node)?;
        }
        let want = (state.nodes.len() - 1) as u64;
        wait_for(
            "the NameNode out of safe mode with every DataNode live",
            START_LIMIT,
            || namenode_ready(state, want),
        )?;
        wait_for("a WebHDFS write + read of /dfsbench", START_LIMIT, || round_trip(state))
    }

    fn start_node(&self, state: &mut State, node: &str) -> Result<()> {
        let n = state.node(node)?.clone();
        if n.role == "namenode" {
            start_namenode(state)?;
            let want = (state.nodes.len() - 1) as u64;
            return wait_for("the NameNode out of safe mode", START_LIMIT, || {
                namenode_ready(state, want)
            });
        }
        start_datanode(state, &n)?;
        wait_for(&format!("the DataNode of {node} registered"), START_LIMIT, || {
            datanode_registered(&n)
        })
    }

    fn wipe_node(&self, state: &State, node: &str) -> Result<()> {
        let n = state.node(node)?;
        if n.role == "namenode" {
            return Err(Error::usage(format!(
                "wiping {node}, the NameNode, would destroy the file system; wipe a DataNode (node2..)"
            )));
        }
        let d = data_dir(n);
        match fs::remove_dir_all(&d) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(Error::runtime(format!("cannot wipe {}: {e}", d.display())))
            }
            _ => Ok(()),
        }
    }

    fn rejoin_wiped(&self, _state: &mut State, _node: &str) -> Result<()> {
        // The empty DataNode registers under a new id; the NameNode re-replicates onto it.
        Ok(())
    }

    fn target_env(&self, _state: &State, _target: &str) -> Vec<(&'static str, String)> {
        // The NameNode runs as root, its superuser; the run's files are root's.
        vec![("HADOOP_USER_NAME", "root".into())]
    }

    fn targets(&self, state: &State) -> Vec<String> {
        let nn = &namenode(state).addr;
        vec![
            format!("hdfs://{nn}:{RPC_PORT}/{DIR}"),
            format!("webhdfs://{nn}:{HTTP_PORT}/{DIR}"),
        ]
    }

    fn probe(&self, state: &State) -> Result<Option<String>> {
        // `hdfs fsck /` is a client of this servlet; curl saves a JVM start.
        let url = format!("{}/fsck?ugi=root&path=%2F", web(state));
        let report = sys::curl(&["-f", &url], Duration::from_secs(60))?;
        let stale = jmx(state, "FSNamesystemState")
            .and_then(|b| b["NumStaleDataNodes"].as_u64())
            .ok_or_else(|| Error::runtime("the NameNode's JMX does not answer".into()))?;
        Ok(fsck_problems(&report, stale))
    }
}

/// From an fsck report: None when no block is under-replicated, missing or corrupt and no
/// DataNode is stale (a DataNode silent for 3 s still counts as holding its copies until it is
/// declared dead, 12 s after its last heartbeat).
fn fsck_problems(report: &str, stale_datanodes: u64) -> Option<String> {
    let mut problems: Vec<String> = ["Under-replicated blocks", "Missing blocks", "Corrupt blocks"]
        .iter()
        .filter_map(|what| {
            let n: u64 = report
                .lines()
                .filter_map(|l| l.trim().strip_prefix(what)?.trim_start().strip_prefix(':'))
                .filter_map(|rest| rest.split_whitespace().next()?.parse().ok())
                .max()?;
            (n > 0).then(|| format!("{n} {}", what.to_lowercase()))
        })
        .collect();
    if !report.contains("is HEALTHY") && problems.is_empty() {
        problems.push("fsck does not say HEALTHY".into());
    }
    if stale_datanodes > 0 {
        problems.push(format!("{stale_datanodes} DataNode(s) not heard from"));
    }
    (!problems.is_empty()).then(|| problems.join(", "))
}

#[cfg(test)]
mod tests {
    use super::fsck_problems;

    const HEALTHY: &str = "Status: HEALTHY\n Number of data-nodes:\t3\n Total blocks (validated):\t101\n \
        Minimally replicated blocks:\t101 (100.0 %)\n Under-replicated blocks:\t0 (0.0 %)\n \
        Mis-replicated blocks:\t\t0 (0.0 %)\n Corrupt blocks:\t\t0\n Missing replicas:\t\t0 (0.0 %)\n\
        The filesystem under path '/' is HEALTHY\n";

    #[test]
    fn a_healthy_fsck_with_every_datanode_heard_is_recovered() {
        assert_eq!(fsck_problems(HEALTHY, 0), None);
    }

    #[test]
    fn under_replicated_blocks_and_stale_datanodes_are_named() {
        let under = HEALTHY.replace("Under-replicated blocks:\t0", "Under-replicated blocks:\t101");
        assert_eq!(
            fsck_problems(&under, 1).as_deref(),
            Some("101 under-replicated blocks, 1 DataNode(s) not heard from")
        );
    }

    #[test]
    fn a_report_that_is_not_healthy_is_not_recovered() {
        let corrupt = "Status: CORRUPT\n Missing blocks:\t\t2\nThe filesystem under path '/' is CORRUPT\n";
        assert_eq!(fsck_problems(corrupt, 0).as_deref(), Some("2 missing blocks"));
    }
}
