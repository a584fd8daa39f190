//! Distributed MinIO: four nodes, each a namespace running one `minio server` with two drives;
//! the eight drives form one erasure set (MinIO's default parity for 8 drives, EC:4: reads need
//! 4 drives, writes 5, so one node of four can go and both keep working). The S3 endpoint the
//! targets use is node1's; every node serves every object. Layout `s3fs` adds an s3fs FUSE mount
//! of a second bucket in the root namespace (the first seed's S3FS); `lab up s3fs` is that.
//!
//! The binary is the one `dfsbench lab install minio` builds with `go install` (the only version
//! the Go proxy serves), found in the project's `.cache/bin`; nothing is built twice. Layouts
//! `local` and `local-ec` run it on 127.0.0.1 alone (`local.rs`).

mod api;
mod local;

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::local::Local;
use crate::state::{NodeState, State};
use crate::sys::{self, spawn_in, wait_for};
use crate::{Cluster, Error, Result, System};

const PORT: u16 = 9000;
const CONSOLE_PORT: u16 = 9001;
const DRIVES_PER_NODE: usize = 2;
/// The bucket of the s3:// target; s3fs mounts its own, so neither sees the other's files.
const BUCKET: &str = "dfsbench";
const FS_BUCKET: &str = "dfsbench-fs";
/// The lab's own root credentials (the single-host layouts use them too).
const KEY: &str = "dfsbench-lab";
const SECRET: &str = "dfsbench-lab-secret";
const REGION: &str = "us-east-1";
/// How the s3fs client is named among the lab's processes.
const S3FS: &str = "s3fs";
const START_LIMIT: Duration = Duration::from_secs(120);

pub(crate) struct Minio;

fn drive(node: &NodeState, i: usize) -> PathBuf {
    node.data_dir.join(format!("d{i}"))
}

fn endpoint(node: &NodeState) -> String {
    format!("http://{}:{PORT}", node.addr)
}

/// Every drive of the cluster, listed one by one: ellipses in both the host and the path would
/// multiply (4 hosts x 4 node paths), and each node's drives sit in its own directory.
fn drive_urls(state: &State) -> Vec<String> {
    state
        .nodes
        .iter()
        .flat_map(|n| (1..=DRIVES_PER_NODE).map(move |i| format!("{}{}", endpoint(n), drive(n, i).display())))
        .collect()
}

/// The pinned MinIO release: the only version the Go module proxy serves is a pseudo-version.
const MODULE: &str = "github.com/minio/minio@v0.0.0-20260212201848-7aac2a2c5b7c";

fn minio_binary() -> Result<PathBuf> {
    let bin = crate::install::bin_dir().join("minio");
    if bin.is_file() {
        return Ok(bin);
    }
    Err(Error::runtime(format!(
        "minio is not installed (not in {}): run `dfsbench lab install minio`, \
         or set DFSBENCH_CACHE_DIR to the .cache folder of the checkout that has it",
        bin.display()
    )))
}

/// Build MinIO with `go install` when it is missing (5-10 min on 2 cores; idempotent: a stamp
/// names the version).
fn install_minio() -> Result<Vec<String>> {
    crate::install::go_install("minio", MODULE, "minio")
}

fn mkdirs(dirs: &[PathBuf]) -> Result<()> {
    for d in dirs {
        fs::create_dir_all(d).map_err(|e| Error::runtime(format!("cannot create {}: {e}", d.display())))?;
    }
    Ok(())
}

/// Write a file only the owner can read (credentials).
fn write_private(path: &Path, text: &str) -> Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    fs::OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .map_err(|e| Error::runtime(format!("cannot write {}: {e}", path.display())))
}

/// The credentials files: curl's netrc (the secret stays off command lines), s3fs's passwd file
/// and env.sh with the variables dfsbench's s3 backend reads.
fn write_credentials(state: &State) -> Result<()> {
    let netrc: String = state
        .nodes
        .iter()
        .map(|n| format!("machine {} login {KEY} password {SECRET}\n", n.addr))
        .collect();
    write_private(&api::netrc(state), &netrc)?;
    write_private(&passwd_file(state), &format!("{KEY}:{SECRET}\n"))?;
    let ep = endpoint(&state.nodes[0]);
    let env = [
        ("DFSBENCH_S3_ENDPOINT", ep.as_str()),
        ("DFSBENCH_S3_BUCKET", BUCKET),
        ("AWS_ACCESS_KEY_ID", KEY),
        ("AWS_SECRET_ACCESS_KEY", SECRET),
        ("AWS_REGION", REGION),
        ("AWS_DEFAULT_REGION", REGION),
    ];
    let text: String = env.iter().map(|(k, v)| format!("export {k}={v}\n")).collect();
    write_private(&env_file(state), &text)
}

pub(crate) fn env_file(state: &State) -> PathBuf {
    state.dir().join("env.sh")
}

fn passwd_file(state: &State) -> PathBuf {
    state.dir().join("passwd-s3fs")
}

fn start_server(state: &State, node: &NodeState) -> Result<()> {
    let drives: Vec<PathBuf> = (1..=DRIVES_PER_NODE).map(|i| drive(node, i)).collect();
    let certs = node.data_dir.join("certs");
    mkdirs(&drives)?;
    mkdirs(std::slice::from_ref(&certs))?;
    let minio = minio_binary()?.display().to_string();
    let user = format!("MINIO_ROOT_USER={KEY}");
    let password = format!("MINIO_ROOT_PASSWORD={SECRET}");
    let region = format!("MINIO_SITE_REGION={REGION}");
    let address = format!("{}:{PORT}", node.addr);
    let console = format!("{}:{CONSOLE_PORT}", node.addr);
    let certs = certs.display().to_string();
    let mut args = vec![
        user.as_str(),
        &password,
        &region,
        // Drives on the root file system are refused unless MinIO runs "in CI".
        "MINIO_CI_CD=1",
        "MINIO_BROWSER=off",
        "MINIO_UPDATE=off",
        &minio,
        "server",
        "--quiet",
        "--anonymous",
        "--address",
        &address,
        "--console-address",
        &console,
        "--certs-dir",
        &certs,
    ];
    let urls = drive_urls(state);
    args.extend(urls.iter().map(String::as_str));
    let log = node.data_dir.join("minio.log");
    spawn_in(Some(&node.netns), "env", &args, &log)?;
    Ok(())
}

fn wait_live(node: &NodeState) -> Result<()> {
    let url = format!("{}/minio/health/live", endpoint(node));
    wait_for(&format!("MinIO on {} to answer", node.name), START_LIMIT, || {
        (api::http_status(&url) == Some(200)).then_some(())
    })
}

/// Wait until each of `nodes` sees write quorum. Each node answers for its own view: one that
/// does not yet reach enough drives refuses writes (503 SlowDownWrite) while node1 takes them,
/// which a client spread over every gateway meets at once.
fn wait_cluster<'a>(nodes: impl IntoIterator<Item = &'a NodeState>) -> Result<()> {
    for node in nodes {
        let url = format!("{}/minio/health/cluster", endpoint(node));
        wait_for(
            &format!("MinIO on {} to see write quorum", node.name),
            START_LIMIT,
            || (api::http_status(&url) == Some(200)).then_some(()),
        )?;
    }
    Ok(())
}

fn mount(cl: &dyn Cluster, state: &mut State) -> Result<()> {
    sys::apt_install(&["s3fs"])?;
    crate::mount::fuse(cl, state, None, Duration::from_secs(30))
}

/// s3fs over bucket `dfsbench-fs` through node1.
fn fuse_argv(state: &State, mnt: &str) -> Vec<String> {
    let url = format!("url={}", endpoint(&state.nodes[0]));
    let passwd = format!("passwd_file={}", passwd_file(state).display());
    let options = [
        "-o",
        &url,
        "-o",
        "use_path_request_style",
        "-o",
        &passwd,
        "-o",
        "dbglevel=warn",
    ];
    let mut argv = [S3FS, FS_BUCKET, mnt, "-f"].map(String::from).to_vec();
    argv.extend(options.map(String::from));
    argv
}

fn unmount(state: &mut State) -> Result<()> {
    for m in std::mem::take(&mut state.mounts) {
        sys::unmount(&m)?;
    }
    let s3fs: Vec<_> = state
        .pids
        .iter()
        .filter(|p| p.what.starts_with(S3FS))
        .cloned()
        .collect();
    sys::stop_all(&s3fs, Duration::from_secs(10))?;
    state.pids.retain(|p| p.alive());
    state.save()
}

impl System for Minio {
    fn name(&self) -> &'static str {
        "minio"
    }
    fn code(&self) -> &'static str {
        "mio"
    }
    fn summary(&self) -> &'static str {
        "MinIO: 4 nodes of 2 drives, one erasure set (s3fs: plus a mount); one host: 1 drive, or 6 (EC:3)"
    }
    fn packages(&self) -> &'static [&'static str] {
        // s3fs comes with the s3fs layout only.
        &["curl"]
    }
    fn later_packages(&self) -> &'static [&'static str] {
        &["s3fs"]
    }
    fn install_other(&self) -> Result<Vec<String>> {
        install_minio()
    }
    fn cluster(&self) -> Option<&dyn Cluster> {
        Some(self)
    }
    fn local(&self) -> Option<&dyn Local> {
        Some(&local::LocalMinio)
    }
}

impl Cluster for Minio {
    fn layouts(&self) -> &'static [&'static str] {
        &["erasure", "s3fs"]
    }
    fn nodes(&self, _layout: &str) -> Vec<&'static str> {
        vec!["minio"; 4]
    }

    fn up(&self, state: &mut State) -> Result<()> {
        write_credentials(state)?;
        for node in &state.nodes {
            start_server(state, node)?;
        }
        for node in &state.nodes {
            wait_live(node)?;
        }
        wait_cluster(&state.nodes)?;
        let first = &state.nodes[0];
        for bucket in [BUCKET, FS_BUCKET] {
            wait_for(&format!("bucket {bucket} created"), Duration::from_secs(60), || {
                api::make_bucket(state, first, bucket).ok()
            })?;
        }
        if state.layout == "s3fs" {
            mount(self, state)?;
        }
        // A fresh cluster may still run a heal sequence of its own, which the health probe
        // reports as recovering: the lab is up once it says healthy.
        wait_for("the cluster to report healthy", Duration::from_secs(120), || {
            matches!(api::probe(state), Ok(None)).then_some(())
        })
    }

    fn relayout(&self, state: &mut State, layout: &str) -> Result<bool> {
        match layout {
            "s3fs" => mount(self, state)?,
            _ => unmount(state)?,
        }
        Ok(true)
    }

    fn start_node(&self, state: &mut State, node: &str) -> Result<()> {
        let n = state.node(node)?.clone();
        start_server(state, &n)?;
        wait_live(&n)?;
        // Other nodes may be down on purpose (a fault): the restarted one's view is what counts.
        wait_cluster([&n])?;
        // Objects written while the node was away lack their shards on its drives. MinIO's
        // scanner would find them only in 1 of 1024 cycles and its MRF queue gave up while the
        // node was down, so start what an operator runs after a node returns (`mc admin heal
        // -r`): a heal sequence over every bucket, run by the server in the background.
        api::start_heal(state, node)
    }

    fn wipe_node(&self, state: &State, node: &str) -> Result<()> {
        let n = state.node(node)?;
        for i in 1..=DRIVES_PER_NODE {
            let d = drive(n, i);
            fs::remove_dir_all(&d)
                .and_then(|_| fs::create_dir_all(&d))
                .map_err(|e| Error::runtime(format!("cannot wipe {}: {e}", d.display())))?;
        }
        Ok(())
    }

    fn rejoin_wiped(&self, _state: &mut State, _node: &str) -> Result<()> {
        // MinIO formats fresh drives of a known set itself and heals them in the background.
        Ok(())
    }

    fn targets(&self, state: &State) -> Vec<String> {
        let mut t = vec![format!("s3://{BUCKET}/lab?endpoint={}", endpoint(&state.nodes[0]))];
        if state.layout == "s3fs" {
            t.push(format!("file://{}", state.mount_point().display()));
        }
        t
    }

    fn target_env(&self, _state: &State, target: &str) -> Vec<(&'static str, String)> {
        crate::target::s3_env(target, KEY, SECRET, REGION)
    }

    fn notes(&self, state: &State) -> Vec<String> {
        let eps: Vec<String> = state.nodes.iter().map(endpoint).collect();
        let mut notes = vec![
            format!("S3 endpoints (any node serves every object): {}", eps.join(" ")),
            format!(
                "every gateway at once (workers round-robin, figures per gateway): -t s3://{}/{BUCKET}/lab",
                state
                    .nodes
                    .iter()
                    .map(|n| format!("{}:{PORT}", n.addr))
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            format!(
                "S3 credentials: `. {}` (access key {KEY}, region {REGION})",
                env_file(state).display()
            ),
        ];
        if state.layout == "s3fs" {
            notes.push(format!("s3fs mounts bucket {FS_BUCKET} through node1"));
        }
        notes
    }

    fn fuse_client(&self, state: &State, mnt: &str, _logs: &Path) -> Option<Vec<String>> {
        (state.layout == "s3fs").then(|| fuse_argv(state, mnt))
    }

    fn probe(&self, state: &State) -> Result<Option<String>> {
        api::probe(state)
    }
}
