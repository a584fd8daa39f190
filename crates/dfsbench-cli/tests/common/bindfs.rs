//! A bindfs FUSE mount of a temporary directory, for tests that need a FUSE file system: one
//! whose daemon can be stopped (a stall), or one that keeps its page cache across opens
//! (`kernel_cache`, as mfsmount and ceph-fuse do).

use std::path::Path;
use std::process::Command;

/// A bindfs mount of a temporary directory, unmounted (and its daemon killed) when dropped.
pub struct Bindfs {
    mount: tempfile::TempDir,
    _source: tempfile::TempDir,
    pub pid: u32,
}

impl Bindfs {
    /// Mount with bindfs's `-o` `options` (none when empty); None (with a note) where bindfs
    /// is missing and the lab is not required.
    pub fn mount(options: &str) -> Option<Bindfs> {
        if Command::new("bindfs").arg("--version").output().is_err() {
            assert!(
                std::env::var("DFSBENCH_REQUIRE_LAB").as_deref() != Ok("1"),
                "bindfs is missing: scripts/test.sh installs it"
            );
            eprintln!("note: skipping: bindfs is not installed (apt-get install bindfs)");
            return None;
        }
        let source = tempfile::tempdir().unwrap();
        let mount = tempfile::tempdir().unwrap();
        let before = pids_of("bindfs");
        let mut cmd = Command::new("bindfs");
        if !options.is_empty() {
            cmd.args(["-o", options]);
        }
        let st = cmd.arg(source.path()).arg(mount.path()).status().unwrap();
        assert!(st.success(), "bindfs failed");
        let pid = pids_of("bindfs")
            .into_iter()
            .find(|p| !before.contains(p) && cmdline(*p).contains(&mount.path().display().to_string()))
            .expect("the new bindfs daemon");
        Some(Bindfs {
            mount,
            _source: source,
            pid,
        })
    }

    pub fn path(&self) -> &Path {
        self.mount.path()
    }
}

impl Drop for Bindfs {
    fn drop(&mut self) {
        // SAFETY: kill has no memory preconditions; the pid is the daemon this test started.
        unsafe { libc::kill(self.pid as i32, libc::SIGCONT) };
        let _ = Command::new("fusermount").arg("-u").arg(self.mount.path()).status();
        unsafe { libc::kill(self.pid as i32, libc::SIGKILL) };
    }
}

fn pids_of(name: &str) -> Vec<u32> {
    let out = Command::new("pgrep").arg("-x").arg(name).output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

fn cmdline(pid: u32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
        .unwrap_or_default()
}
