//! Commands, processes and packages: the small pieces every system module uses.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// Check root, network namespaces and /dev/fuse before touching anything.
pub(crate) fn preflight() -> Result<()> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err(Error::runtime(
            "the lab needs root (network namespaces, FUSE mounts, apt-get): run as root".into(),
        ));
    }
    if !std::path::Path::new("/dev/fuse").exists() {
        return Err(Error::runtime("the lab needs /dev/fuse for its client mounts".into()));
    }
    if !std::path::Path::new("/proc/self/ns/net").exists() {
        return Err(Error::runtime("this kernel has no network namespaces".into()));
    }
    Ok(())
}

/// Run a command to completion, killed after `limit`; its stdout, or an error with its stderr.
pub(crate) fn run(program: &str, args: &[&str], limit: Duration) -> Result<String> {
    let secs = limit.as_secs().max(1).to_string();
    let out = Command::new("timeout")
        .args(["-k", "2", &secs, program])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| Error::runtime(format!("cannot run {program}: {e}")))?;
    if out.status.success() {
        return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
    }
    let why = if out.status.code() == Some(124) {
        format!("timed out after {secs} s")
    } else {
        let err = String::from_utf8_lossy(&out.stderr);
        let text = if err.trim().is_empty() {
            String::from_utf8_lossy(&out.stdout)
        } else {
            err
        };
        text.trim().lines().last().unwrap_or("failed").to_string()
    };
    Err(Error::runtime(format!("{program} {}: {why}", args.join(" "))))
}

/// `run` inside a node's network namespace (nsenter, not `ip netns exec`, which would give the
/// command a private mount namespace and hide FUSE mounts).
pub(crate) fn run_in(netns: &str, program: &str, args: &[&str], limit: Duration) -> Result<String> {
    let net = format!("--net=/run/netns/{netns}");
    let mut all = vec![net.as_str(), program];
    all.extend_from_slice(args);
    run("nsenter", &all, limit)
}

/// `nsenter` options that enter a client node through its holder process: its network, host
/// name and mounts, with its root and working directory (entering a mount namespace alone
/// resets them to the namespace's, which in a chroot is another tree).
pub(crate) fn enter_node(holder: i32) -> Vec<String> {
    ["-t", &holder.to_string(), "--net", "--uts", "--mount", "--root", "--wd"]
        .map(String::from)
        .to_vec()
}

/// Start a long-running daemon in a network namespace, in its own session, output to `log`.
pub(crate) fn spawn_in(netns: Option<&str>, program: &str, args: &[&str], log: &Path) -> Result<PidRecord> {
    let mut cmd = match netns {
        Some(ns) => {
            let mut c = Command::new("nsenter");
            c.arg(format!("--net=/run/netns/{ns}")).arg(program);
            c
        }
        None => Command::new(program),
    };
    cmd.args(args);
    spawn(cmd, program, log)
}

/// Start `cmd` as a daemon in its own session (so its process group holds it and its
/// children), stdin from /dev/null, stdout and stderr appended to `log`.
pub(crate) fn spawn(mut cmd: Command, what: &str, log: &Path) -> Result<PidRecord> {
    let log_file = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .map_err(|e| Error::runtime(format!("cannot open {}: {e}", log.display())))?;
    let err_file = log_file.try_clone().map_err(|e| Error::runtime(e.to_string()))?;
    cmd.stdin(Stdio::null()).stdout(log_file).stderr(err_file);
    // SAFETY: setsid is async-signal-safe; the child leaves our process group, so a Ctrl-C of
    // dfsbench does not take the cluster down with it.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
            libc::setsid();
            Ok(())
        });
    }
    let child = cmd
        .spawn()
        .map_err(|e| Error::runtime(format!("cannot start {what}: {e}")))?;
    let pid = child.id() as i32;
    // The child is reaped by a thread so a daemon that dies is not left a zombie while we run.
    std::thread::spawn(move || {
        let mut child = child;
        let _ = child.wait();
    });
    PidRecord::of(pid, what).ok_or_else(|| Error::runtime(format!("{what} exited at once; see {}", log.display())))
}

/// A process we started, with its start time so a reused pid is never signalled.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct PidRecord {
    pub pid: i32,
    pub start_time: u64,
    pub what: String,
}

impl PidRecord {
    pub fn of(pid: i32, what: &str) -> Option<PidRecord> {
        let (start_time, _) = proc_stat(pid)?;
        Some(PidRecord {
            pid,
            start_time,
            what: what.to_string(),
        })
    }

    /// The same process is still there (a zombie counts: it can still be signalled harmlessly).
    pub fn alive(&self) -> bool {
        proc_stat(self.pid).is_some_and(|(t, _)| t == self.start_time)
    }

    /// Alive and not a zombie.
    pub fn running(&self) -> bool {
        proc_stat(self.pid).is_some_and(|(t, s)| t == self.start_time && s != 'Z')
    }

    pub fn stopped(&self) -> bool {
        proc_stat(self.pid).is_some_and(|(t, s)| t == self.start_time && s == 'T')
    }
}

/// Field 22 of /proc/PID/stat (start time in clock ticks), and the state letter.
pub(crate) fn proc_stat(pid: i32) -> Option<(u64, char)> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: the fields start after the last ')'.
    let rest = &text[text.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let state = fields.first()?.chars().next()?;
    Some((fields.get(19)?.parse().ok()?, state))
}

/// The processes whose network namespace is the named one.
pub(crate) fn pids_in_netns(netns: &str) -> Vec<i32> {
    let Ok(meta) = fs::metadata(format!("/run/netns/{netns}")) else {
        return Vec::new();
    };
    let want = format!("net:[{}]", std::os::unix::fs::MetadataExt::ino(&meta));
    let Ok(dir) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| fs::read_link(format!("/proc/{pid}/ns/net")).is_ok_and(|l| l.to_string_lossy() == want))
        .filter(|pid| proc_stat(*pid).is_some_and(|(_, s)| s != 'Z'))
        .collect()
}

/// The TCP ports process `pid`'s network namespace listens on for other hosts (any address
/// but 127.0.0.0/8 and ::1), lowest first.
pub(crate) fn listening_ports(pid: i32) -> Vec<u16> {
    let read = |file: &str| fs::read_to_string(format!("/proc/{pid}/net/{file}")).unwrap_or_default();
    let mut ports = listening_ports_in(&read("tcp"));
    ports.extend(listening_ports_in(&read("tcp6")));
    ports.sort_unstable();
    ports.dedup();
    ports
}

/// The listening ports of a /proc/net/tcp or tcp6 table not bound to a loopback address.
fn listening_ports_in(table: &str) -> Vec<u16> {
    const LISTEN: &str = "0A";
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (addr, port) = fields.get(1)?.split_once(':')?;
            (fields.get(3) == Some(&LISTEN) && !is_loopback_hex(addr)).then(|| u16::from_str_radix(port, 16).ok())?
        })
        .collect()
}

/// An address of /proc/net/tcp (the 32-bit words of the address in network order, each
/// printed as a number of this host) on a loopback address.
fn is_loopback_hex(addr: &str) -> bool {
    let bytes: Vec<u8> = (0..addr.len() / 8)
        .filter_map(|i| u32::from_str_radix(addr.get(i * 8..i * 8 + 8)?, 16).ok())
        .flat_map(u32::to_ne_bytes)
        .collect();
    match bytes.len() {
        4 => bytes[0] == 127,
        16 => std::net::Ipv6Addr::from(<[u8; 16]>::try_from(bytes).unwrap_or_default()).is_loopback(),
        _ => false,
    }
}

/// Send `signal` to each pid; then, for SIGKILL/SIGTERM, wait until they are really gone
/// (PID 1 here reaps late, and a restart must not find the old daemon's pid still there).
pub(crate) fn signal_all(pids: &[PidRecord], signal: i32, wait: Duration) -> Result<()> {
    for p in pids.iter().filter(|p| p.alive()) {
        // SAFETY: kill(2) on a pid we checked by its start time just now.
        unsafe { libc::kill(p.pid, signal) };
    }
    if signal != libc::SIGKILL && signal != libc::SIGTERM {
        return Ok(());
    }
    let deadline = Instant::now() + wait;
    // Gone means reaped: a zombie still holds its pid, and a daemon restarted over its pid
    // file would believe its old self still runs.
    while pids.iter().any(|p| p.alive()) {
        if Instant::now() > deadline {
            let left: Vec<String> = pids.iter().filter(|p| p.alive()).map(|p| p.pid.to_string()).collect();
            return Err(Error::runtime(format!(
                "processes {} did not exit within {} s",
                left.join(", "),
                wait.as_secs()
            )));
        }
        sleep(Duration::from_millis(100));
    }
    Ok(())
}

/// Stop processes: SIGTERM, then SIGKILL for those still there after `grace`.
pub(crate) fn stop_all(pids: &[PidRecord], grace: Duration) -> Result<()> {
    if signal_all(pids, libc::SIGTERM, grace).is_err() {
        signal_all(pids, libc::SIGKILL, Duration::from_secs(20))?;
    }
    Ok(())
}

/// Poll `check` until it returns Some, or fail with `what` after `limit`.
pub(crate) fn wait_for<T>(what: &str, limit: Duration, mut check: impl FnMut() -> Option<T>) -> Result<T> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(v) = check() {
            return Ok(v);
        }
        if Instant::now() > deadline {
            return Err(Error::runtime(format!(
                "timed out after {} s waiting for {what}",
                limit.as_secs()
            )));
        }
        sleep(Duration::from_millis(250));
    }
}

/// Install the Debian packages that are missing (apt-get, idempotent: nothing when all are
/// there). A `NAME=VERSION` spec pins the version the lab was tested with: an installed package
/// of another version is kept, and when the archive has moved on from the pinned version the
/// current one of the release is installed.
pub(crate) fn apt_install(specs: &[&str]) -> Result<Vec<String>> {
    let missing: Vec<&str> = specs
        .iter()
        .copied()
        .filter(|s| !dpkg_installed(package_name(s)))
        .collect();
    if missing.is_empty() {
        return Ok(Vec::new());
    }
    let install = || {
        let wanted: Vec<&str> = missing
            .iter()
            .map(|s| if in_archive(s) { *s } else { package_name(s) })
            .collect();
        let mut args = vec!["install", "-y", "--no-install-recommends"];
        args.extend_from_slice(&wanted);
        run("apt-get", &args, Duration::from_secs(600))
    };
    if install().is_err() {
        run("apt-get", &["update"], Duration::from_secs(300))?;
        install()?;
    }
    Ok(missing.iter().map(|s| s.to_string()).collect())
}

/// The package a spec names (`swift` of `swift=2.30.1-0+deb12u3`).
pub(crate) fn package_name(spec: &str) -> &str {
    spec.split_once('=').map_or(spec, |(name, _)| name)
}

/// The archive has the version a spec pins (a spec without one: true).
fn in_archive(spec: &str) -> bool {
    let Some((name, version)) = spec.split_once('=') else {
        return true;
    };
    run("apt-cache", &["madison", name], Duration::from_secs(60)).is_ok_and(|out| {
        out.lines()
            .any(|l| l.split('|').nth(1).is_some_and(|v| v.trim() == version))
    })
}

fn dpkg_installed(package: &str) -> bool {
    run("dpkg-query", &["-W", "-f=${Status}", package], Duration::from_secs(30))
        .is_ok_and(|s| s.contains("install ok installed"))
}

/// The path with symlinks resolved (as /proc/mounts shows it), as far as it exists: a dead
/// FUSE mount point cannot be resolved itself, its parent can.
pub(crate) fn real_path(path: &Path) -> PathBuf {
    if let Ok(p) = fs::canonicalize(path) {
        return p;
    }
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) if !parent.as_os_str().is_empty() => real_path(parent).join(name),
        _ => path.to_path_buf(),
    }
}

/// The mount points under /proc/mounts that start with `prefix`.
pub(crate) fn mounts_under(prefix: &Path) -> Vec<String> {
    let prefix = real_path(prefix);
    mounts_of(None)
        .into_iter()
        .map(|(point, _)| point)
        .filter(|m| Path::new(m).starts_with(&prefix))
        .collect()
}

/// The mount points and file-system types of the mount namespace of process `pid` (None: ours).
pub(crate) fn mounts_of(pid: Option<i32>) -> Vec<(String, String)> {
    let file = pid.map_or("/proc/mounts".to_string(), |p| format!("/proc/{p}/mounts"));
    fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let mut words = l.split_whitespace().skip(1);
            Some((words.next()?.replace("\\040", " "), words.next()?.to_string()))
        })
        .collect()
}

/// Unmount a FUSE mount; lazily when it is busy or its server is gone.
pub(crate) fn unmount(mount: &str) -> Result<()> {
    let real = real_path(Path::new(mount)).display().to_string();
    if !mounts_under(Path::new(mount)).contains(&real) {
        return Ok(());
    }
    let mount = real.as_str();
    let limit = Duration::from_secs(20);
    run("umount", &[mount], limit)
        .or_else(|_| run("umount", &["-l", mount], limit))
        .map(|_| ())
}

/// Fill `{key}` placeholders of a config template.
pub(crate) fn render(template: &str, values: &[(&str, &str)]) -> String {
    values
        .iter()
        .fold(template.to_string(), |t, (k, v)| t.replace(&format!("{{{k}}}"), v))
}

/// Write a file by the rule of every output dfsbench writes (atomically; never over a device,
/// a FIFO or a link), with the path in the error.
pub(crate) fn write(path: &Path, text: &str) -> Result<()> {
    dfsbench_result::files::write_output(path, text.as_bytes())
        .map_err(|e| Error::runtime(format!("cannot write {}: {e}", path.display())))
}

/// curl to a lab address: never through a proxy the environment names, bounded in time.
pub(crate) fn curl(args: &[&str], limit: Duration) -> Result<String> {
    let secs = limit.as_secs().max(1).to_string();
    let mut all = vec!["--noproxy", "*", "-s", "-S", "--max-time", &secs];
    all.extend_from_slice(args);
    run("curl", &all, limit + Duration::from_secs(5))
}

/// Where downloads, builds and single-host state live: $DFSBENCH_CACHE_DIR, else `.cache` of
/// the dfsbench checkout holding the current directory, else of the one this binary was built
/// from.
pub(crate) fn cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("DFSBENCH_CACHE_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    checkout().join(".cache")
}

/// The dfsbench checkout holding the current directory, else the one this binary was built
/// from.
fn checkout() -> PathBuf {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    cwd.ancestors()
        .find(|d| d.join(".git").exists() && d.join("crates/dfsbench-lab").is_dir())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."))
}

#[cfg(test)]
mod tests {
    use super::{in_archive, listening_ports_in, package_name};

    #[test]
    fn a_spec_names_its_package_and_pins_a_version_only_with_one() {
        assert_eq!(package_name("swift=2.30.1-0+deb12u3"), "swift");
        assert_eq!(package_name("python3-swiftclient=1:4.1.0-2"), "python3-swiftclient");
        assert_eq!(package_name("curl"), "curl");
        assert!(in_archive("curl"), "no version: whatever the archive has");
        assert!(!in_archive("curl=0.0-not-a-version"));
    }

    #[test]
    fn listening_ports_leave_out_loopback_and_connections() {
        // As this host (little-endian) prints them: 127.0.0.1:8080 and 0.0.0.0:9421 listen,
        // 198.18.2.2:9422 is a connection, 198.18.2.2:24023 listens.
        let tcp = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0 100 0 0 10 0
   1: 00000000:24CD 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2 1 0 100 0 0 10 0
   2: 020212C6:24CE 030212C6:8F2A 01 00000000:00000000 00:00000000 00000000     0        0 3 1 0 20 4 30 10 -1
   3: 020212C6:5DD7 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4 1 0 100 0 0 10 0
";
        assert_eq!(listening_ports_in(tcp), [9421, 24023]);
        // [::1]:9000 and [::]:9001 listen.
        let tcp6 = "  sl  local_address                         remote_address                        st
   0: 00000000000000000000000001000000:2328 00000000000000000000000000000000:0000 0A 0
   1: 00000000000000000000000000000000:2329 00000000000000000000000000000000:0000 0A 0
";
        assert_eq!(listening_ports_in(tcp6), [9001]);
        assert!(listening_ports_in("").is_empty());
    }
}
