//! HDFS on 127.0.0.1: a NameNode and 2 DataNodes, replication 2, every port a free one.

use std::process::Command;

use serde_json::Value;

use super::{format_name_dir, java_args, DATANODE_CLASS, LOG4J, NAMENODE_CLASS};
use crate::local::{fresh_body, http, http_ok, Local, Run, BUCKET, STOP_GRACE};
use crate::{Error, Result};

const DATANODES: usize = 2;
const NAMENODE_HEAP_MB: u32 = 384;
const DATANODE_HEAP_MB: u32 = 256;

pub(super) struct LocalHdfs;

fn site(properties: &[(String, String)]) -> String {
    let props: String = properties
        .iter()
        .map(|(k, v)| format!("  <property><name>{k}</name><value>{v}</value></property>\n"))
        .collect();
    format!("<?xml version=\"1.0\"?>\n<configuration>\n{props}</configuration>\n")
}

fn jmx(web: &str, bean: &str) -> Result<Value> {
    let body = http_ok(&[], &format!("{web}/jmx?qry=Hadoop:service=NameNode,name={bean}"))?;
    let v: Value = serde_json::from_str(&body).map_err(|e| Error::runtime(format!("JMX {bean}: {e}")))?;
    Ok(v["beans"][0].clone())
}

/// Out of safe mode, operational, with every DataNode live.
fn ready(web: &str) -> Result<()> {
    let st = jmx(web, "FSNamesystemState")?;
    let live = st["NumLiveDataNodes"].as_u64().unwrap_or(0);
    if st["FSState"] != "Operational" || live != DATANODES as u64 {
        return Err(Error::runtime(format!(
            "{live} live DataNodes, state {}",
            st["FSState"]
        )));
    }
    match jmx(web, "NameNodeInfo")?["Safemode"].as_str() {
        Some("") => Ok(()),
        other => Err(Error::runtime(format!("safe mode: {other:?}"))),
    }
}

/// WebHDFS: make /dfsbench, write a file in two steps (the NameNode redirects the data to a
/// DataNode), read it back, delete it.
fn round_trip(run: &Run, web: &str, user: &str) -> Result<()> {
    let base = format!("{web}/webhdfs/v1/{BUCKET}");
    let u = format!("user.name={user}");
    http_ok(&["-o", "/dev/null", "-X", "PUT"], &format!("{base}?op=MKDIRS&{u}"))?;
    let file = format!("{base}/.lab-ready");
    let (_, to) = http(
        &[
            "-f",
            "-o",
            "/dev/null",
            "-w",
            "%{redirect_url}\n%{http_code}",
            "-X",
            "PUT",
        ],
        &format!("{file}?op=CREATE&overwrite=true&{u}"),
    )?;
    let to = to.lines().next().unwrap_or_default().to_string();
    if to.is_empty() {
        return Err(Error::runtime("CREATE gave no DataNode URL".into()));
    }
    let (body, path) = fresh_body(run.dir())?;
    http_ok(
        &["-o", "/dev/null", "-X", "PUT", "-T", &path.display().to_string()],
        &to,
    )?;
    if http_ok(&["-L"], &format!("{file}?op=OPEN&{u}"))? != body {
        return Err(Error::runtime(
            "WebHDFS OPEN returned other bytes than were written".into(),
        ));
    }
    http_ok(&["-o", "/dev/null", "-X", "DELETE"], &format!("{file}?op=DELETE&{u}")).map(|_| ())
}

impl Local for LocalHdfs {
    fn layouts(&self) -> &'static [&'static str] {
        &["local"]
    }

    fn start(&self, _layout: &str, run: &mut Run) -> Result<()> {
        if !super::jars_installed(&super::hadoop_home()) {
            return Err(Error::runtime(
                "the Hadoop jars are not installed: run `dfsbench lab install hdfs`".into(),
            ));
        }
        let p = run.ports(2 + 3 * DATANODES)?;
        let (rpc, http_port) = (p[0], p[1]);
        let dir = run.dir().to_path_buf();
        let user = crate::sys::run("id", &["-un"], std::time::Duration::from_secs(10))?
            .trim()
            .to_string();
        let kv = |k: &str, v: String| (k.to_string(), v);
        let common = vec![
            kv("fs.defaultFS", format!("hdfs://127.0.0.1:{rpc}")),
            kv("hadoop.tmp.dir", dir.join("tmp").display().to_string()),
            kv("hadoop.security.authentication", "simple".into()),
            kv("dfs.namenode.rpc-address", format!("127.0.0.1:{rpc}")),
            kv("dfs.namenode.http-address", format!("127.0.0.1:{http_port}")),
            kv("dfs.namenode.https-address", "127.0.0.1:0".into()),
            kv("dfs.namenode.secondary.http-address", "127.0.0.1:0".into()),
            kv("dfs.namenode.secondary.https-address", "127.0.0.1:0".into()),
            kv("dfs.namenode.backup.address", "127.0.0.1:0".into()),
            kv("dfs.namenode.backup.http-address", "127.0.0.1:0".into()),
            kv("dfs.namenode.name.dir", format!("file://{}", dir.join("nn").display())),
            kv("dfs.replication", DATANODES.to_string()),
            kv("dfs.permissions.enabled", "false".into()),
            kv("dfs.webhdfs.enabled", "true".into()),
            kv("dfs.namenode.safemode.extension", "0".into()),
            kv("dfs.namenode.safemode.min.datanodes", "0".into()),
            kv("dfs.namenode.datanode.registration.ip-hostname-check", "false".into()),
            kv("dfs.heartbeat.interval", "1".into()),
            kv("dfs.namenode.heartbeat.recheck-interval", "10000".into()),
            kv("dfs.client.use.datanode.hostname", "false".into()),
            kv("dfs.datanode.hostname", "127.0.0.1".into()),
        ];
        let core = site(&[kv("fs.defaultFS", format!("hdfs://127.0.0.1:{rpc}"))]);
        run.mkdirs(&["conf/nn", "tmp"])?;
        run.write("conf/nn/hdfs-site.xml", &site(&common))?;
        run.write("conf/nn/core-site.xml", &core)?;
        run.write("conf/nn/log4j.properties", LOG4J)?;
        let mut datanodes = Vec::new();
        for i in 1..=DATANODES {
            let b = 2 + 3 * (i - 1);
            let mut props = common.clone();
            props.extend([
                kv(
                    "dfs.datanode.data.dir",
                    format!("file://{}", dir.join(format!("dn{i}")).display()),
                ),
                kv("dfs.datanode.address", format!("127.0.0.1:{}", p[b])),
                kv("dfs.datanode.http.address", format!("127.0.0.1:{}", p[b + 1])),
                kv("dfs.datanode.ipc.address", format!("127.0.0.1:{}", p[b + 2])),
                kv("dfs.datanode.https.address", "127.0.0.1:0".into()),
            ]);
            let conf = format!("conf/dn{i}");
            run.mkdirs(&[&conf, &format!("dn{i}")])?;
            run.write(&format!("{conf}/hdfs-site.xml"), &site(&props))?;
            run.write(&format!("{conf}/core-site.xml"), &core)?;
            run.write(&format!("{conf}/log4j.properties"), LOG4J)?;
            datanodes.push(format!("127.0.0.1:{}", p[b]));
        }
        let logs = dir.join("logs");
        format_name_dir(&dir.join("conf/nn"), &dir.join("nn"))?;
        let java = |conf: &str, heap, class| {
            let mut cmd = Command::new("java");
            cmd.args(java_args(&dir.join(conf), &logs, heap, class));
            cmd
        };
        run.spawn(
            "namenode",
            java("conf/nn", NAMENODE_HEAP_MB, NAMENODE_CLASS),
            STOP_GRACE,
        )?;
        for i in 1..=DATANODES {
            let conf = format!("conf/dn{i}");
            run.spawn(
                &format!("datanode{i}"),
                java(&conf, DATANODE_HEAP_MB, DATANODE_CLASS),
                STOP_GRACE,
            )?;
        }
        let web = format!("http://127.0.0.1:{http_port}");
        run.wait(
            &format!("the NameNode out of safe mode with {DATANODES} live DataNodes"),
            || ready(&web),
        )?;
        run.wait("a WebHDFS write+read round trip", || round_trip(run, &web, &user))?;
        for (k, v) in [
            ("DFSBENCH_HDFS_URL", format!("hdfs://127.0.0.1:{rpc}")),
            ("DFSBENCH_HDFS_NAMENODE", format!("127.0.0.1:{rpc}")),
            ("DFSBENCH_WEBHDFS_URL", format!("{web}/webhdfs/v1")),
            ("DFSBENCH_HDFS_HTTP", web.clone()),
            ("DFSBENCH_HDFS_DIR", format!("/{BUCKET}")),
            ("DFSBENCH_HDFS_DATANODES", datanodes.join(",")),
            ("HADOOP_USER_NAME", user.clone()),
        ] {
            run.set_env(k, &v);
        }
        run.set_probe(
            &format!("{web}/jmx?qry=Hadoop:service=NameNode,name=NameNodeInfo"),
            "GET",
        );
        Ok(())
    }
}
