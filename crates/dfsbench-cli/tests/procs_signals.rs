//! Signals in a run of several processes (`--procs N`): a killed rank 0 takes every rank with
//! it and leaves no files; one Ctrl-C, to rank 0 or to the whole process group, stops every
//! rank at once; `timeout -s INT` is one interruption, not two.

mod common;

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{children, f, Target};
use serde_json::Value;

/// Far more than any of these runs needs on a loaded machine; a rank that ignores its parent
/// runs its whole 60 s phase.
const BOUND: Duration = Duration::from_secs(20);

/// A 60 s, 2-worker write run of `procs` processes in its own process group, its stderr (and
/// its ranks') into `scratch/stderr`: a file, which a rank that outlives rank 0 cannot hold
/// open against the test.
fn start(target: &Target, scratch: &Path, procs: &str) -> Child {
    Command::new(common::bin())
        .args(["run", "-t", &target.uri(), "-q", "-o"])
        .arg(scratch.join("r.json"))
        .args(["-w", "files", "--files", "1000000", "--file-size", "1k", "-j", "2"])
        .args(["--duration", "60s", "--procs", procs])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(scratch.join("stderr")).unwrap())
        .process_group(0)
        .spawn()
        .expect("start dfsbench")
}

/// Wait until the run is measuring: its run directory has files in it.
fn wait_until_working(target: &Target) {
    let deadline = Instant::now() + BOUND;
    while Instant::now() < deadline {
        let files = target
            .run_dirs()
            .iter()
            .flat_map(|d| walk(d))
            .filter(|p| p.is_file())
            .count();
        if files > 100 {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("the run never started writing");
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        }
        out.push(p);
    }
    out
}

fn alive(pid: i32) -> bool {
    // A zombie has exited: only rank 0 (dead too) could reap it.
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rsplit(')')
            .next()
            .is_some_and(|rest| !rest.trim_start().starts_with('Z'))
    })
}

fn signal(pid: i32, sig: i32) {
    // SAFETY: kill(2) on a process (or, negative, the process group) this test started.
    assert_eq!(unsafe { libc::kill(pid, sig) }, 0);
}

/// Wait for `child` to exit within [`BOUND`]; its exit code and stderr.
fn finish(mut child: Child, scratch: &Path) -> (Option<i32>, String) {
    let deadline = Instant::now() + BOUND;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("dfsbench still running {BOUND:?} after the signal");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    (
        status.code(),
        std::fs::read_to_string(scratch.join("stderr")).unwrap_or_default(),
    )
}

#[test]
fn a_killed_rank_0_takes_every_rank_with_it_and_leaves_no_files() {
    let target = Target::temp();
    let scratch = tempfile::tempdir().unwrap();
    let child = start(&target, scratch.path(), "3");
    let kids = children(child.id(), 2, BOUND);
    assert_eq!(kids.len(), 2, "--procs 3 started two more processes");
    wait_until_working(&target);
    signal(child.id() as i32, libc::SIGKILL);
    let killed = Instant::now();
    let _ = finish(child, scratch.path());
    while kids.iter().any(|&k| alive(k)) && killed.elapsed() < BOUND {
        std::thread::sleep(Duration::from_millis(20));
    }
    let left: Vec<i32> = kids.iter().copied().filter(|&k| alive(k)).collect();
    for &k in &left {
        signal(k, libc::SIGKILL);
    }
    assert!(left.is_empty(), "ranks {left:?} outlived rank 0 by {BOUND:?}");
    eprintln!("the other ranks were gone {:?} after rank 0", killed.elapsed());
    let stderr = std::fs::read_to_string(scratch.path().join("stderr")).unwrap();
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 2, "one line per rank left: {stderr}");
    assert!(
        lines
            .iter()
            .all(|l| l.contains("rank 0 exited before") && !l.contains("rank-timeout")),
        "{stderr}"
    );
    assert!(
        target.run_dirs().is_empty(),
        "the ranks left removed the run directory: {:?}",
        target.run_dirs()
    );
}

/// Send SIGINT to rank 0 alone (`group` false) or to the whole process group, as a terminal
/// does; check the run stopped every rank and wrote one interrupted result.
fn interrupted_run(group: bool) {
    let target = Target::temp();
    let scratch = tempfile::tempdir().unwrap();
    let out = scratch.path().join("r.json");
    let child = start(&target, scratch.path(), "2");
    let pid = child.id() as i32;
    let kids = children(child.id(), 1, BOUND);
    wait_until_working(&target);
    signal(if group { -pid } else { pid }, libc::SIGINT);
    let sent = Instant::now();
    let (code, stderr) = finish(child, scratch.path());
    let took = sent.elapsed();
    assert_eq!(code, Some(130), "{stderr}");
    assert!(!stderr.contains("twice") && !stderr.contains("panicked"), "{stderr}");
    assert_eq!(
        stderr.matches("interrupted: finishing operations in flight").count(),
        1,
        "rank 0 alone says so: {stderr}"
    );
    assert!(kids.iter().all(|&k| !alive(k)), "every rank ended");
    assert!(target.run_dirs().is_empty(), "run directory removed");
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(r["status"], "interrupted");
    let last = common::phases(&r).last().unwrap();
    let ends: Vec<f64> = last["processes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| f(&p["end_s"]))
        .collect();
    assert_eq!(ends.len(), 2, "both ranks measured the interrupted phase");
    let spread = ends.iter().cloned().fold(f64::MIN, f64::max) - ends.iter().cloned().fold(f64::MAX, f64::min);
    // A rank that was not told runs on alone until its 60 s are up.
    assert!(spread < 5.0, "the ranks stopped {spread:.3} s apart: one ran alone");
    assert!(f(&last["duration_s"]) < 30.0, "{}", last["duration_s"]);
    eprintln!("stopped {took:?} after the signal; the ranks' ends {spread:.3} s apart");
}

#[test]
fn one_sigint_to_rank_0_stops_every_rank() {
    interrupted_run(false);
}

#[test]
fn one_sigint_to_the_process_group_stops_every_rank_once() {
    interrupted_run(true);
}

/// timeout(1) sends its signal to the run and then to its whole process group: rank 0 gets
/// it twice within microseconds, which is still one interruption.
#[test]
fn timeout_s_int_is_one_interruption() {
    let timeout = Command::new("timeout").arg("--version").output();
    assert!(
        timeout.is_ok_and(|o| o.status.success()),
        "coreutils timeout is missing"
    );
    for attempt in 0..4 {
        let target = Target::temp();
        let scratch = tempfile::tempdir().unwrap();
        let out = scratch.path().join("r.json");
        let run = Command::new("timeout")
            .args(["-s", "INT", "1", common::bin(), "run", "-t", &target.uri(), "-q", "-o"])
            .arg(&out)
            .args(["-w", "files", "--files", "1000000", "--file-size", "1k", "-j", "1"])
            .args(["--duration", "60s", "--procs", "2"])
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(scratch.path().join("stderr")).unwrap())
            .spawn()
            .unwrap();
        let (_, stderr) = finish(run, scratch.path());
        assert!(!stderr.contains("twice"), "attempt {attempt}: {stderr}");
        assert!(!stderr.contains("panicked"), "attempt {attempt}: {stderr}");
        assert!(
            target.run_dirs().is_empty(),
            "attempt {attempt}: run directory left: {stderr}"
        );
        let r: Value = serde_json::from_str(
            &std::fs::read_to_string(&out).unwrap_or_else(|e| panic!("attempt {attempt}: no result ({e}): {stderr}")),
        )
        .unwrap();
        assert_eq!(r["status"], "interrupted", "attempt {attempt}");
    }
}

/// A rank whose rank 0 is stopped (SIGSTOP, a hung node) stops soon after its own SIGTERM,
/// saying why, instead of waiting out --rank-timeout.
#[test]
fn a_rank_stops_on_sigterm_while_rank_0_is_silent() {
    let target = Target::temp();
    let scratch = tempfile::tempdir().unwrap();
    let child = Command::new(common::bin())
        .args(["run", "-t", &target.uri(), "-q", "-o"])
        .arg(scratch.path().join("r.json"))
        .args(["-w", "files", "--files", "1000000", "--file-size", "1k", "-j", "2"])
        .args(["--duration", "60s", "--procs", "2", "--rank-timeout", "10m"])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(scratch.path().join("stderr")).unwrap())
        .process_group(0)
        .spawn()
        .expect("start dfsbench");
    let root = child.id() as i32;
    let kids = children(child.id(), 1, BOUND);
    wait_until_working(&target);
    signal(root, libc::SIGSTOP);
    signal(kids[0], libc::SIGTERM);
    let sent = Instant::now();
    while alive(kids[0]) && sent.elapsed() < BOUND {
        std::thread::sleep(Duration::from_millis(20));
    }
    let stayed = alive(kids[0]);
    if stayed {
        signal(kids[0], libc::SIGKILL);
    }
    // Rank 0 goes on and ends the run: its rank is gone.
    signal(root, libc::SIGCONT);
    signal(root, libc::SIGINT);
    let (_, stderr) = finish(child, scratch.path());
    assert!(
        !stayed,
        "rank 1 still waited for rank 0 {BOUND:?} after SIGTERM: {stderr}"
    );
    eprintln!("rank 1 stopped {:?} after its SIGTERM", sent.elapsed());
    assert!(
        stderr.contains("rank 1: rank 0 did not answer") && stderr.contains("stop signal"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}
