//! The single-host layout: a system's servers as plain processes of this machine on 127.0.0.1
//! (free ports, no namespaces, no mounts), everything in one state directory the caller picks
//! (default `.cache/lab/NAME`). What it started is recorded there (`local.json`: PID, start
//! time, environment), so `down` stops exactly those processes from any later command.
//!
//! `up` refuses a running instance and a non-empty folder it did not make; `down` refuses to
//! delete such a folder. A system is ready only after a real write and read-back.

mod check;
pub mod host;
mod ports;
mod selftest;

pub use selftest::{selftest, Outcome};

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::thread::sleep;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

pub(crate) use check::{fresh_body, http, http_ok, s3_round_trip, swift_login, write_s3_netrc, S3};

use crate::sys::{self, PidRecord};
use crate::{Error, Result};

/// Names the folders `up` made (holds the system's name).
const MARKER: &str = ".dfsbench-lab";
const RECORD: &str = "local.json";
/// The bucket, container, directory or collection every single-host server serves.
pub(crate) const BUCKET: &str = "dfsbench";
/// How long a server may take to come up (HDFS's JVMs take the longest: ~20 s here).
const START_LIMIT: Duration = Duration::from_secs(120);
/// TERM, then KILL after this.
pub(crate) const STOP_GRACE: Duration = Duration::from_secs(10);

/// One started daemon.
#[derive(Serialize, Deserialize, Debug, Clone)]
struct Daemon {
    name: String,
    pid: PidRecord,
    /// Seconds between TERM and KILL (SeaweedFS's filer never ends gracefully).
    grace_s: u64,
}

/// What `up` made, on disk as `STATE/local.json`.
#[derive(Serialize, Deserialize, Debug, Default)]
struct Record {
    system: String,
    layout: String,
    daemons: Vec<Daemon>,
    env: Vec<(String, String)>,
    /// A URL that answers while the system serves, and the HTTP method to ask it with.
    probe: Option<(String, String)>,
}

/// A single-host instance being started: a system module's `start` spawns its daemons through
/// it, waits for them, and sets the environment a client needs.
pub struct Run {
    dir: PathBuf,
    record: Record,
}

impl Run {
    /// The state directory (absolute).
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// Create folders under the state directory.
    pub(crate) fn mkdirs(&self, rel: &[&str]) -> Result<()> {
        for r in rel {
            let d = self.dir.join(r);
            fs::create_dir_all(&d).map_err(|e| Error::runtime(format!("cannot create {}: {e}", d.display())))?;
        }
        Ok(())
    }

    /// Write a file under the state directory.
    pub(crate) fn write(&self, rel: &str, text: &str) -> Result<PathBuf> {
        let path = self.dir.join(rel);
        fs::write(&path, text).map_err(|e| Error::runtime(format!("cannot write {}: {e}", path.display())))?;
        Ok(path)
    }

    /// `n` distinct free TCP ports on 127.0.0.1.
    pub(crate) fn ports(&self, n: usize) -> Result<Vec<u16>> {
        ports::free_ports(n)
    }

    /// Start a daemon (its own session, working directory the state directory, output to
    /// `logs/NAME.log`) and record it before anything else happens.
    pub(crate) fn spawn(&mut self, name: &str, mut cmd: Command, grace: Duration) -> Result<()> {
        cmd.current_dir(&self.dir);
        // Lab traffic never leaves the machine through a proxy.
        for var in [
            "http_proxy",
            "https_proxy",
            "HTTP_PROXY",
            "HTTPS_PROXY",
            "all_proxy",
            "ALL_PROXY",
        ] {
            cmd.env_remove(var);
        }
        let log = self.dir.join("logs").join(format!("{name}.log"));
        let pid = sys::spawn(cmd, name, &log)?;
        self.record.daemons.push(Daemon {
            name: name.to_string(),
            pid,
            grace_s: grace.as_secs(),
        });
        self.save()
    }

    /// Poll `check` until it succeeds; fail at once when a daemon died, or after the start
    /// limit, with the last check's error and the tails of the logs.
    pub(crate) fn wait(&self, what: &str, mut check: impl FnMut() -> Result<()>) -> Result<()> {
        let deadline = Instant::now() + START_LIMIT;
        loop {
            let why = match check() {
                Ok(()) => return Ok(()),
                Err(e) => e.to_string(),
            };
            let dead = self.record.daemons.iter().find(|d| !d.pid.running());
            let failure = match dead {
                Some(d) => Some(format!("{} died while waiting for {what}", d.name)),
                None if Instant::now() > deadline => Some(format!(
                    "timed out after {} s waiting for {what}",
                    START_LIMIT.as_secs()
                )),
                None => None,
            };
            if let Some(failure) = failure {
                // The logs say why; the error stays one line.
                eprint!("{}", log_tails(&self.dir));
                return Err(Error::runtime(format!("{failure} (last check: {why})")));
            }
            sleep(Duration::from_millis(200));
        }
    }

    /// An S3 service answers at `endpoint`: the bucket made, a PUT + GET round trip done, and
    /// the variables of its clients set.
    pub(crate) fn s3_ready(&mut self, endpoint: &str, key: &str, secret: &str, region: &str) -> Result<()> {
        let netrc = self.dir.join("netrc");
        write_s3_netrc(&netrc, key, secret)?;
        let s3 = S3 {
            endpoint,
            region,
            netrc: &netrc,
        };
        self.wait(&format!("create bucket {BUCKET} on {endpoint}"), || {
            s3.make_bucket(BUCKET)
        })?;
        self.wait(&format!("S3 PUT+GET round trip on {endpoint}"), || {
            s3_round_trip(&s3, &self.dir, BUCKET, ".lab-ready")
        })?;
        self.set_s3_env(endpoint, key, secret, region);
        Ok(())
    }

    /// A variable `lab env` prints.
    pub(crate) fn set_env(&mut self, name: &str, value: &str) {
        self.record.env.push((name.to_string(), value.to_string()));
    }

    /// The variables an S3 client of the server reads.
    pub(crate) fn set_s3_env(&mut self, endpoint: &str, key: &str, secret: &str, region: &str) {
        for (k, v) in [
            ("DFSBENCH_S3_ENDPOINT", endpoint),
            ("DFSBENCH_S3_BUCKET", BUCKET),
            ("DFSBENCH_S3_PATH_STYLE", "1"),
            ("AWS_ACCESS_KEY_ID", key),
            ("AWS_SECRET_ACCESS_KEY", secret),
            ("AWS_REGION", region),
            ("AWS_DEFAULT_REGION", region),
            ("AWS_ENDPOINT_URL", endpoint),
        ] {
            self.set_env(k, v);
        }
    }

    /// The URL `lab status` asks (with `method`) to tell whether the system serves.
    pub(crate) fn set_probe(&mut self, url: &str, method: &str) {
        self.record.probe = Some((url.to_string(), method.to_string()));
    }

    fn save(&self) -> Result<()> {
        let text = serde_json::to_string_pretty(&self.record)
            .map_err(|e| Error::runtime(format!("cannot encode the lab record: {e}")))?;
        sys::write(&self.dir.join(RECORD), &text)
    }
}

/// The last lines of every log of a state directory, for a failed start.
fn log_tails(dir: &Path) -> String {
    let Ok(entries) = fs::read_dir(dir.join("logs")) else {
        return String::new();
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| Some(e.ok()?.path())).collect();
    paths.sort();
    paths
        .iter()
        .map(|p| {
            let text = fs::read_to_string(p).unwrap_or_default();
            let lines: Vec<&str> = text.lines().collect();
            let tail = lines[lines.len().saturating_sub(15)..].join("\n");
            format!("----- {} (last lines) -----\n{tail}\n", p.display())
        })
        .collect()
}

/// A system that runs on one host: the layouts it offers there (the first is the default) and
/// how to start one in a prepared `Run`.
pub trait Local {
    fn layouts(&self) -> &'static [&'static str];
    /// Start the daemons, wait until a real write and read-back work, set the environment.
    fn start(&self, layout: &str, run: &mut Run) -> Result<()>;
}

/// The default state directory of a single-host `name`: `.cache/lab/NAME`.
pub(crate) fn default_dir(name: &str) -> PathBuf {
    sys::cache_dir().join("lab").join(name)
}

fn absolute(dir: &Path) -> Result<PathBuf> {
    std::path::absolute(dir).map_err(|e| Error::runtime(format!("cannot resolve {}: {e}", dir.display())))
}

fn load(dir: &Path) -> Result<Option<Record>> {
    let path = dir.join(RECORD);
    match fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| Error::runtime(format!("{} is not a lab record ({e}); delete it", path.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::runtime(format!("cannot read {}: {e}", path.display()))),
    }
}

fn made_by_lab(dir: &Path) -> bool {
    dir.join(MARKER).is_file()
}

fn alive(record: &Record) -> Vec<&Daemon> {
    record.daemons.iter().filter(|d| d.pid.running()).collect()
}

/// Start `layout` of `system` in `dir` (named `name` in messages); returns the started PIDs.
pub(crate) fn up(system: &str, local: &dyn Local, layout: &str, name: &str, dir: &Path) -> Result<Vec<i32>> {
    let dir = absolute(dir)?;
    if made_by_lab(&dir) {
        if load(&dir)?.is_some_and(|r| !alive(&r).is_empty()) {
            return Err(Error::usage(format!(
                "{name} is already running from {} (`dfsbench lab down {name} --dir {}` first)",
                dir.display(),
                dir.display()
            )));
        }
        remove_dir(&dir)?;
    } else if fs::read_dir(&dir).is_ok_and(|mut d| d.next().is_some()) {
        return Err(Error::usage(format!(
            "{} exists, is not empty and was not made by the lab: refusing to use it",
            dir.display()
        )));
    }
    let mut run = Run {
        dir: dir.clone(),
        record: Record {
            system: system.to_string(),
            layout: layout.to_string(),
            ..Record::default()
        },
    };
    run.mkdirs(&["logs"])?;
    run.write(MARKER, name)?;
    run.set_env("DFSBENCH_LAB_SERVER", name);
    run.set_env("DFSBENCH_LAB_STATE_DIR", &dir.display().to_string());
    run.save()?;
    if let Err(e) = local.start(layout, &mut run) {
        let _ = stop(&run.record);
        return Err(Error::runtime(format!(
            "{name} failed to start: {e}\n(what was started is stopped; the logs stay in {})",
            dir.join("logs").display()
        )));
    }
    run.save()?;
    Ok(run.record.daemons.iter().map(|d| d.pid.pid).collect())
}

/// Stop every recorded daemon (TERM to its process group, KILL after its grace) and delete the
/// state directory; false when nothing was there.
pub(crate) fn down(dir: &Path) -> Result<bool> {
    let dir = absolute(dir)?;
    if !dir.exists() {
        return Ok(false);
    }
    if !made_by_lab(&dir) {
        return Err(Error::usage(format!(
            "{} was not made by the lab: not touching it",
            dir.display()
        )));
    }
    if let Some(record) = load(&dir)? {
        stop(&record)?;
    }
    remove_dir(&dir)?;
    Ok(true)
}

fn remove_dir(dir: &Path) -> Result<()> {
    match fs::remove_dir_all(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(Error::runtime(format!("cannot delete {}: {e}", dir.display())))
        }
        _ => Ok(()),
    }
}

/// Stop daemons in the reverse order of their start.
fn stop(record: &Record) -> Result<()> {
    let mut left = Vec::new();
    for d in record.daemons.iter().rev() {
        if !stop_group(&d.pid, Duration::from_secs(d.grace_s)) {
            left.push(format!("{} (pid {})", d.name, d.pid.pid));
        }
    }
    if left.is_empty() {
        Ok(())
    } else {
        Err(Error::runtime(format!("{} did not stop", left.join(", "))))
    }
}

/// TERM the process group the daemon leads, KILL it after `grace`; false if it lives on.
fn stop_group(pid: &PidRecord, grace: Duration) -> bool {
    let kill = |signal| {
        if pid.alive() {
            // SAFETY: kill(2) on the group of a process we checked by its start time just now.
            unsafe { libc::kill(-pid.pid, signal) };
        }
    };
    let gone_within = |limit: Duration| {
        let deadline = Instant::now() + limit;
        while pid.running() && Instant::now() < deadline {
            sleep(Duration::from_millis(100));
        }
        !pid.running()
    };
    kill(libc::SIGTERM);
    if !gone_within(grace) {
        kill(libc::SIGKILL);
    }
    let gone = gone_within(Duration::from_secs(10));
    // Children that outlived their leader (the same process group) go too.
    // SAFETY: the group id is the daemon's pid; the group is empty or only its children.
    unsafe { libc::kill(-pid.pid, libc::SIGKILL) };
    gone
}

/// The environment of a running instance as `export NAME=value` lines, with
/// DFSBENCH_SERVER_PIDS (its live processes, for `dfsbench run --server-pid`).
pub(crate) fn env(name: &str, dir: &Path) -> Result<String> {
    let dir = absolute(dir)?;
    let record = load(&dir)?
        .filter(|_| made_by_lab(&dir))
        .ok_or_else(|| Error::usage(format!("{name} is not running (no lab record in {})", dir.display())))?;
    let pids: Vec<String> = alive(&record).iter().map(|d| d.pid.pid.to_string()).collect();
    if pids.is_empty() {
        return Err(Error::runtime(format!(
            "{name}: no process alive under {}",
            dir.display()
        )));
    }
    let mut text: String = record
        .env
        .iter()
        .map(|(k, v)| format!("export {k}={}\n", shell_quote(v)))
        .collect();
    text.push_str(&format!("export DFSBENCH_SERVER_PIDS={}\n", pids.join(",")));
    Ok(text)
}

/// A value as the shell reads it back: bare when it holds only safe characters, else quoted.
fn shell_quote(v: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "_-./:@,+=%".contains(c);
    if !v.is_empty() && v.chars().all(safe) {
        v.to_string()
    } else {
        format!("'{}'", v.replace('\'', r"'\''"))
    }
}

/// Each daemon's state and whether the probe URL answers; Ok(None) when nothing runs there.
pub(crate) fn status(dir: &Path) -> Result<Option<(Vec<String>, bool)>> {
    let dir = absolute(dir)?;
    let Some(record) = load(&dir)?.filter(|_| made_by_lab(&dir)) else {
        return Ok(None);
    };
    let mut lines = Vec::new();
    let mut ok = true;
    for d in &record.daemons {
        let state = if d.pid.running() { "running" } else { "DEAD" };
        ok &= d.pid.running();
        lines.push(format!("  {}: pid {} {state}", d.name, d.pid.pid));
    }
    if let Some((url, method)) = &record.probe {
        let answers = http(&["-X", method, "-H", "Depth: 0"], url).is_ok_and(|(code, _)| code < 400);
        ok &= answers;
        lines.push(if answers {
            format!("responding at {url}")
        } else {
            format!("NOT responding at {url}")
        });
    }
    Ok(Some((lines, ok)))
}

#[cfg(test)]
mod tests {
    use super::shell_quote;

    #[test]
    fn values_are_quoted_only_when_the_shell_needs_it() {
        assert_eq!(shell_quote("http://127.0.0.1:9000"), "http://127.0.0.1:9000");
        assert_eq!(shell_quote("test:tester"), "test:tester");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}
