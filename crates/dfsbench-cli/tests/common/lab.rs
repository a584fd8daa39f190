//! Lab servers for the tests: started by `dfsbench lab up NAME --dir STATE` (the single-host
//! layout) in a private state directory, one at a time across test processes, stopped by their
//! recorded PIDs (`dfsbench lab down NAME --dir STATE`) when dropped.
//!
//! The servers are installed by `dfsbench lab install NAME` (scripts/test.sh does it). Without
//! them the tests print a note and pass, unless DFSBENCH_REQUIRE_LAB=1 (as in CI) makes that a
//! failure.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use serde_json::Value;

use super::{bin, check_invariants, phases, run_with, validate, Run};

/// Servers share two cores and the memory: one at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A running lab server; stopped when dropped.
pub struct Server {
    pub name: &'static str,
    pub state: tempfile::TempDir,
    pub env: BTreeMap<String, String>,
}

fn lab(args: &[&str], state: &Path) -> std::process::Output {
    Command::new(bin())
        .arg("lab")
        .args(args)
        .arg("--dir")
        .arg(state)
        .output()
        .expect("run dfsbench lab")
}

/// Parse `export NAME=value` lines (values are single-quoted only when they need it).
fn parse_env(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("export "))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| {
            let v = match v.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')) {
                Some(quoted) => quoted.replace("'\\''", "'"),
                None => v.to_string(),
            };
            (k.to_string(), v)
        })
        .collect()
}

impl Server {
    /// Start `name`, or return None (with a note) when the lab is not installed here.
    pub fn start(name: &'static str) -> Option<Server> {
        let installed = repo().join(".cache/lab-install");
        if !installed.is_dir() {
            assert!(
                std::env::var("DFSBENCH_REQUIRE_LAB").as_deref() != Ok("1"),
                "DFSBENCH_REQUIRE_LAB=1 but the lab is not installed: run dfsbench lab install {name}"
            );
            eprintln!("note: skipping {name}: the lab servers are not installed (dfsbench lab install {name})");
            return None;
        }
        let state = tempfile::Builder::new()
            .prefix("dfsbench-lab-")
            .tempdir()
            .expect("a temp dir");
        let out = lab(&["up", name], state.path());
        assert!(
            out.status.success(),
            "dfsbench lab up {name} failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let env = parse_env(&String::from_utf8_lossy(&lab(&["env", name], state.path()).stdout));
        Some(Server { name, state, env })
    }

    pub fn var(&self, k: &str) -> &str {
        self.env
            .get(k)
            .unwrap_or_else(|| panic!("{} exports no {k}: {:?}", self.name, self.env))
    }

    pub fn s3_uri(&self, query: &str) -> String {
        format!(
            "s3://{}/bench?endpoint={}{query}",
            self.var("DFSBENCH_S3_BUCKET"),
            self.var("DFSBENCH_S3_ENDPOINT")
        )
    }

    /// `dfsbench run` with the server's credentials in the environment, killed if it hangs.
    pub fn run(&self, target: &str, args: &[&str]) -> Run {
        run_with(self.command(), target, args)
    }

    pub fn command(&self) -> Command {
        let mut cmd = Command::new("timeout");
        cmd.args(["-s", "KILL", "300", bin()]).envs(&self.env);
        cmd
    }

    /// A run that must succeed with no error and leave no secret anywhere.
    pub fn run_ok(&self, target: &str, backend: &str, args: &[&str]) -> Value {
        let r = self.run(target, args);
        assert_eq!(r.code, Some(0), "{} {target} {args:?}: {}", self.name, r.describe());
        let result = r.result().clone();
        validate(&result);
        check_invariants(&result);
        assert_eq!(result["status"], "complete");
        assert_eq!(result["target"]["backend"], backend);
        for p in phases(&result) {
            assert_eq!(
                p["errors"]["total"], 0,
                "{}: errors in {}: {}",
                self.name, p["label"], p["errors"]
            );
        }
        self.assert_no_secrets(&r);
        result
    }

    /// Credentials never reach stdout, stderr or the result file.
    pub fn assert_no_secrets(&self, r: &Run) {
        let text = format!(
            "{}{}{}",
            r.stdout,
            r.stderr,
            r.result.as_ref().map(|v| v.to_string()).unwrap_or_default()
        );
        for k in ["AWS_SECRET_ACCESS_KEY", "ST_KEY", "OS_PASSWORD", "OS_AUTH_TOKEN"] {
            if let Some(secret) = self.env.get(k).filter(|s| s.len() >= 4) {
                assert!(
                    !text.contains(secret.as_str()),
                    "{}: the secret of {k} leaked:\n{}",
                    self.name,
                    r.describe()
                );
            }
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let out = lab(&["down", self.name], self.state.path());
        if !out.status.success() {
            eprintln!(
                "dfsbench lab down {} failed: {}",
                self.name,
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

/// Held while a test's server runs: one server at a time in this process and in any other
/// test process of this checkout.
pub struct LabLock {
    _in_process: std::sync::MutexGuard<'static, ()>,
    _file: std::fs::File,
}

pub fn lab_lock() -> LabLock {
    let in_process = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = repo().join(".cache/lab");
    std::fs::create_dir_all(&dir).expect("create .cache/lab");
    let file = std::fs::File::create(dir.join(".tests.lock")).expect("create the lab lock file");
    // SAFETY: flock on a file we hold open; released when it is closed.
    let rc = unsafe { libc::flock(std::os::fd::AsRawFd::as_raw_fd(&file), libc::LOCK_EX) };
    assert_eq!(rc, 0, "flock .cache/lab/.tests.lock");
    LabLock {
        _in_process: in_process,
        _file: file,
    }
}

pub fn lab_test(name: &'static str, body: impl FnOnce(&Server)) {
    let _lock = lab_lock();
    if let Some(server) = Server::start(name) {
        body(&server);
    }
}
