//! Ctrl-C: the run stops within moments, writes what it measured and exits with 130.

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{check_invariants, u, validate, Target};
use serde_json::Value;

/// Start a 60 s run, send SIGINT after about a second, and return its exit code, stderr and
/// result.
fn interrupt_run(target: &Target) -> (Option<i32>, String, Value, Duration) {
    let scratch = tempfile::tempdir().unwrap();
    let out = scratch.path().join("result.json");
    let mut child = Command::new(common::bin())
        .args([
            "run",
            "-t",
            &target.uri(),
            "-w",
            "io",
            "--rw",
            "randread",
            "-j",
            "2",
            "--size",
            "256k",
            // A named engine: `auto` would add a probe phase before the measured one.
            "--ioengine",
            "psync",
        ])
        .args(["--duration", "60s", "-q", "-o"])
        .arg(&out)
        .current_dir(scratch.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start dfsbench");
    std::thread::sleep(Duration::from_secs(1));
    let pid = i32::try_from(child.id()).unwrap();
    // SAFETY: kill has no memory preconditions; pid is our child, still running or a zombie.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let sent = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if sent.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("dfsbench still running 10 s after SIGINT");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let took = sent.elapsed();
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    let text = std::fs::read_to_string(&out).unwrap_or_else(|e| panic!("no result file ({e}); stderr: {stderr}"));
    (status.code(), stderr, serde_json::from_str(&text).unwrap(), took)
}

#[test]
fn ctrl_c_writes_partial_results_and_exits_130() {
    let both = Target::both();
    std::thread::scope(|s| {
        for t in &both {
            s.spawn(move || {
                let (code, stderr, r, took) = interrupt_run(t);
                assert_eq!(code, Some(130), "{}: {stderr}", t.uri());
                assert!(took < Duration::from_secs(5), "took {took:?} to stop");
                assert!(!stderr.contains("panicked"), "{stderr}");
                assert!(stderr.contains("interrupted"), "{stderr}");
                validate(&r);
                check_invariants(&r);
                assert_eq!(r["status"], "interrupted");
                assert_eq!(r["status_message"], "interrupted by the user");
                assert!(t.run_dirs().is_empty(), "run directory removed after Ctrl-C");
                // The phase running at Ctrl-C keeps what it measured. The layout (32 blocks)
                // is done long before the signal in memory; a stalled file system may still be
                // laying out.
                let names = common::names(&r);
                let last = r["phases"].as_array().unwrap().last().unwrap();
                assert!(
                    u(&last["ops"]) > 0,
                    "the interrupted phase kept its measurements: {names:?}"
                );
                if names != ["layout", "randread"] {
                    assert!(t.path().is_some(), "mem:// interrupted in {names:?}");
                    assert_eq!(names, ["layout"]);
                    eprintln!("note: the file system was slow: Ctrl-C came during the layout");
                    return;
                }
                let p = common::phase(&r, "randread");
                assert_eq!(u(&p["bytes"]), u(&p["ops"]) * 4096);
                let d = common::f(&p["duration_s"]);
                assert!(d > 0.0 && d < 10.0, "measured {d} s of a 60 s phase");
            });
        }
    });
}
