//! Faults during a run: real stalls (a bindfs FUSE daemon stopped and continued, a stopped
//! MinIO with --op-timeout), the events, the stall length against what was induced, the
//! recovery probe, bad input and Ctrl-C while probing.

mod common;

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::bindfs::Bindfs;
use common::lab::lab_test;
use common::{check_invariants, f, phase, run, u, validate, Target};
use serde_json::Value;

fn events<'a>(r: &'a Value, kind: &str) -> Vec<&'a Value> {
    r["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == kind)
        .collect()
}

/// The run's start of fault `i`, from its events.
fn fault_start(r: &Value, i: u64) -> f64 {
    f(&events(r, "fault-start")
        .iter()
        .find(|e| e["fault"] == i)
        .expect("a fault-start")["time_s"])
}

#[test]
fn a_stopped_fuse_daemon_is_a_stall_as_long_as_the_stop() {
    let Some(fs) = Bindfs::mount("") else { return };
    let pid = fs.pid;
    let (stop, cont) = (format!("2s: kill -STOP {pid}"), format!("5s: kill -CONT {pid}"));
    let probe = format!("ls {} >/dev/null", fs.path().display());
    let r = run(
        &fs.path().display().to_string(),
        &[
            "-w",
            "files",
            "--sizes",
            "1000000x4k",
            "--duration",
            "8s",
            "-j",
            "2",
            "--fault",
            &stop,
            "--fault",
            &cont,
            "--recovery-probe",
            &probe,
        ],
    );
    assert_eq!(r.code, Some(0), "{}", r.describe());
    let res = r.result();
    validate(res);
    check_invariants(res);
    assert_eq!(res["status"], "complete");
    // Both faults ran, in order, and the probe succeeded after the last one.
    assert_eq!(events(res, "fault-start").len(), 2, "{}", res["events"]);
    assert_eq!(events(res, "fault-end").len(), 2);
    for fault in res["faults"].as_array().unwrap() {
        assert_eq!(fault["run"]["status"], "ok", "{fault}");
        assert_eq!(fault["phase"], "write 4 KiB");
    }
    let (t_stop, t_cont) = (fault_start(res, 0), fault_start(res, 1));
    assert!(
        t_cont - t_stop >= 2.5,
        "the faults ran {t_stop} and {t_cont} s into the run"
    );
    let rec = &res["recovery"];
    assert!(rec["recovered_s"].as_f64().unwrap() >= t_cont, "{rec}");
    assert!(f(&rec["recovery_time_s"]) >= 0.0);
    assert_eq!(events(res, "recovered").len(), 1);

    // The stall spans the stop: from the STOP taking effect to the first completion after CONT.
    let write = phase(res, "write");
    let stalls = &write["stalls"];
    let induced = t_cont - t_stop;
    let longest = f(&stalls["longest_s"]);
    assert!(
        (induced - 0.05..=induced + 0.5).contains(&longest),
        "stall {longest} s for a stop of {induced} s: {stalls}"
    );
    assert_eq!(u(&stalls["count"]), 1, "{stalls}");
    let fault = &res["faults"][0];
    assert!((f(&fault["stall_s"]) - longest).abs() < 1e-9, "{fault}");
    let resumed = f(&fault["first_success_after_s"]);
    assert!((induced - 0.05..=induced + 0.5).contains(&resumed), "{fault}");
    assert!(f(&fault["during_ratio"]) < 0.5, "{fault}");

    // The 100 ms series holds every operation, and the 1 s series is its sum.
    let fine = &write["fine_series"];
    assert_eq!(f(&fine["interval_s"]), 0.1);
    let sum = |s: &Value| s["ops"].as_array().unwrap().iter().map(u).sum::<u64>();
    assert_eq!(sum(fine), sum(&write["series"]));
    let ops = fine["ops"].as_array().unwrap();
    let from = ((t_stop - f(&write["start_s"])) / 0.1).ceil() as usize + 1;
    let quiet = &ops[from..from + 20];
    assert!(quiet.iter().all(|o| u(o) == 0), "2 s inside the stop: {quiet:?}");
}

/// A FUSE daemon stopped during the run and never resumed holds the workers' threads in their
/// system calls. The phase's end plus the op timeout (and a grace) later the run writes its
/// result while the daemon is still stopped: the stuck operations as timeouts, every
/// operation it kept with its latency, the phase marked, the run failed; the process then
/// ends (at once, or when the daemon answers the requests it had already read).
#[test]
fn a_run_writes_its_result_while_the_fuse_daemon_stays_stopped() {
    let Some(fs) = Bindfs::mount("") else { return };
    let daemon_state = || {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", fs.pid)).unwrap();
        stat.rsplit(')')
            .next()
            .unwrap()
            .split_whitespace()
            .next()
            .unwrap()
            .to_string()
    };
    let scratch = tempfile::tempdir().unwrap();
    let out = scratch.path().join("r.json");
    let stop = format!("1s: kill -STOP {}", fs.pid);
    let child = Command::new(common::bin())
        .args(["run", "-t"])
        .arg(fs.path())
        .args(["-w", "files", "--file-size", "4k", "-j", "2", "--duration", "3s"])
        .args(["--op-timeout", "1s", "--fault", &stop, "-o"])
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Bounded: the run needs about 6 s; a hang ends the test after two minutes.
    let begun = Instant::now();
    let written = loop {
        if let Some(r) = std::fs::read(&out)
            .ok()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        {
            break r;
        }
        assert!(
            begun.elapsed() < Duration::from_secs(120),
            "no result while the daemon is stopped"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(daemon_state(), "T", "the result came while the daemon was stopped");
    // SAFETY: kill has no memory preconditions; the pid is the daemon this test started.
    unsafe { libc::kill(fs.pid as i32, libc::SIGCONT) };
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("did not return"), "{stderr}");
    assert!(stderr.contains("left the run directory"), "{stderr}");

    validate(&written);
    assert_eq!(written["status"], "failed", "{}", written["status_message"]);
    assert!(written["status_message"]
        .as_str()
        .unwrap()
        .contains("--op-timeout 1.0 s"));
    let write = phase(&written, "write");
    let timeouts = u(&write["errors"]["by_kind"]["timeout"]);
    assert!((1..=2).contains(&timeouts), "{}", write["errors"]);
    // The operations kept are those whose latencies were kept: the percentiles cover them all.
    assert_eq!(u(&write["latency"]["count"]), u(&write["ops"]));
    assert!(u(&write["ops"]) > 0, "the second before the stop wrote files");
    let marks = write["validity"].as_array().unwrap();
    assert!(
        marks
            .iter()
            .any(|m| m.as_str().unwrap().contains("stuck inside the storage")),
        "{marks:?}"
    );
    // The stop ran, and the phase ends no earlier than its stuck operations were given up.
    assert_eq!(events(&written, "fault-start").len(), 1);
    assert!(f(&write["duration_s"]) >= 3.0 + 1.0, "{}", write["duration_s"]);
}

#[test]
fn the_text_output_has_the_faults_table_and_the_stalls() {
    let t = Target::temp();
    let scratch = tempfile::tempdir().unwrap();
    let out = Command::new(common::bin())
        .args([
            "run",
            "-t",
            &t.uri(),
            "-w",
            "meta",
            "--files",
            "200",
            "-j",
            "2",
            "--fault",
            "create+0s: echo hi",
        ])
        .args(["--recovery-probe", "true", "-o"])
        .arg(scratch.path().join("r.json"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    let header = stdout
        .lines()
        .find(|l| l.starts_with("fault "))
        .unwrap_or_else(|| panic!("{stdout}"));
    for col in [
        "at",
        "status",
        "stall",
        "ops/s before",
        "during",
        "after",
        "errors",
        "ops resumed after",
    ] {
        assert!(header.contains(col), "{header}");
    }
    assert!(stdout.contains("1 echo hi"), "{stdout}");
    assert!(stdout.contains("recovery: 'true' succeeded"), "{stdout}");

    // The reports carry the same faults: a markdown table, CSV rows, an HTML figure and table.
    let json = scratch.path().join("r.json");
    let report = |args: &[&str]| {
        let out = Command::new(common::bin())
            .arg("report")
            .args(args)
            .arg(&json)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let md = report(&["--format", "md"]);
    assert!(md.contains("## Faults: ") && md.contains("| 1 echo hi |"), "{md}");
    let csv = report(&["--format", "csv"]);
    assert!(
        csv.lines().any(|l| l.contains(",fault 1,") && l.contains("stall_s")),
        "{csv}"
    );
    assert!(csv.lines().any(|l| l.contains("recovery_time_s")), "{csv}");
    let html_path = scratch.path().join("r.html");
    report(&["-o", html_path.to_str().unwrap()]);
    let html = std::fs::read_to_string(&html_path).unwrap();
    assert!(
        html.contains("echo hi") && html.contains("ops/s per 100 ms"),
        "the faults figure and table"
    );
}

/// MinIO stopped with SIGSTOP: without a bound, a request waits for ever; with --op-timeout
/// each one fails as a `timeout` at the limit, and the run goes on and ends.
#[test]
fn a_stopped_object_store_gives_timeouts_within_the_fault_window() {
    lab_test("minio", |server| {
        let pid = server
            .var("DFSBENCH_SERVER_PIDS")
            .split(',')
            .next()
            .unwrap()
            .to_string();
        let (stop, cont) = (format!("1s: kill -STOP {pid}"), format!("4s: kill -CONT {pid}"));
        let target = server.s3_uri("");
        let r = server.run(
            &target,
            &[
                "-w",
                "files",
                "--sizes",
                "100000x1k",
                "--duration",
                "6s",
                "-j",
                "2",
                "--op-timeout",
                "500ms",
                "--max-errors",
                "0",
                "--fault",
                &stop,
                "--fault",
                &cont,
            ],
        );
        // Whatever happens, the server goes on.
        // SAFETY: kill has no memory preconditions; the pid is the lab server's.
        unsafe { libc::kill(pid.parse().unwrap(), libc::SIGCONT) };
        let res = r.result();
        validate(res);
        check_invariants(res);
        let (t_stop, t_cont) = (fault_start(res, 0), fault_start(res, 1));
        let write = phase(res, "write");
        let timeouts = u(&write["errors"]["by_kind"]["timeout"]);
        assert!(timeouts >= 2, "{}", write["errors"]);
        // Timeouts come from the stop: a loaded machine may make a stray slow request outside
        // it, but most fall between the STOP and a second after the CONT.
        let samples = write["errors"]["samples"].as_array().unwrap();
        let inside = samples
            .iter()
            .filter(|s| {
                let at = f(&write["start_s"]) + f(&s["time_s"]);
                at > t_stop && at < t_cont + 1.0
            })
            .count();
        assert!(
            inside >= 2 && 2 * inside > samples.len(),
            "stop {t_stop}..{t_cont}: {samples:?}"
        );
        assert!(samples.iter().all(|s| s["kind"] == "timeout"), "{samples:?}");
        let fault = &res["faults"][0];
        assert!(u(&fault["errors_by_kind"]["timeout"]) >= 2, "{fault}");
        // No request completes while the server is stopped. After the CONT a busy machine may
        // take a while to schedule MinIO again (3.7 s for a 3 s stop was seen at load 9): the
        // stall never ends before the CONT, and a generous bound holds under load.
        let stall = f(&fault["stall_s"]);
        let induced = t_cont - t_stop;
        assert!(
            (induced - 0.05..=induced + 1.5).contains(&stall),
            "stall {stall} s for {induced} s"
        );
    });
}

#[test]
fn fault_input_errors_are_one_line() {
    let t = Target::temp();
    let uri = t.uri();
    for (args, says) in [
        (
            vec!["-w", "io", "--size", "1m", "--duration", "5s", "--fault", "5s: true"],
            "past the end of the phases",
        ),
        (
            vec![
                "-w",
                "io",
                "--size",
                "1m",
                "--duration",
                "5s",
                "--fault",
                "read+6s: true",
            ],
            "past the end",
        ),
        (vec!["--fault", "soon: true"], "fault time 'soon'"),
        (vec!["--fault", "30s"], "has no time"),
        (vec!["--fault", "nosuch+1s: true"], "no phase 'nosuch'"),
        (vec!["--fault", "1s: true", "--fault-timeout", "0"], "fault_timeout = 0"),
        (vec!["--recovery-probe", "true"], "there is none"),
        (vec!["--recovery-timeout", "1m"], "add --recovery-probe"),
        (
            vec![
                "--fault",
                "1s: true",
                "--recovery-probe",
                "true",
                "--probe-from",
                "later",
            ],
            "probe_from = 'later'",
        ),
        (vec!["--op-timeout", "never"], "op_timeout"),
        (vec!["--fault", "1s: lab kill node2"], "the target is not a lab"),
        (
            vec!["--fault", "1s: true", "--recovery-probe", "lab probe"],
            "the target is not a lab",
        ),
    ] {
        let mut all = if args[0] == "-w" {
            vec![]
        } else {
            vec!["-w", "files", "--sizes", "10x1k"]
        };
        all.extend(&args);
        let r = run(&uri, &all);
        assert_eq!(r.code, Some(2), "{args:?}: {}", r.describe());
        let lines = r.stderr_lines();
        assert_eq!(lines.len(), 1, "{args:?}: {}", r.stderr);
        assert!(lines[0].contains(says), "{args:?}: {}", lines[0]);
        assert!(t.run_dirs().is_empty());
    }
}

#[test]
fn a_probe_that_never_succeeds_is_a_recorded_timeout_and_a_missing_one_too() {
    let t = Target::temp();
    for probe in ["false", "/no/such/probe-command"] {
        let r = run(
            &t.uri(),
            &[
                "-w",
                "meta",
                "--files",
                "50",
                "-j",
                "1",
                "--fault",
                "0s: true",
                "--recovery-probe",
                probe,
                "--probe-interval",
                "200ms",
                "--recovery-timeout",
                "1s",
            ],
        );
        assert_eq!(r.code, Some(0), "{}", r.describe());
        let rec = &r.result()["recovery"];
        assert_eq!(rec["timed_out"], true, "{rec}");
        assert!(rec.get("recovered_s").is_none());
        assert!(u(&rec["probes"]) >= 2, "{rec}");
        assert_eq!(events(r.result(), "recovery-timeout").len(), 1);
        if probe.starts_with('/') {
            assert!(rec["last_output"].as_str().unwrap().contains("not found"), "{rec}");
        }
    }
}

#[test]
fn a_fault_that_must_succeed_and_fails_stops_the_run() {
    let t = Target::temp();
    let r = run(
        &t.uri(),
        &[
            "-w",
            "files",
            "--sizes",
            "1000000x1k",
            "--duration",
            "20s",
            "-j",
            "1",
            "--fault",
            "1s: exit 3",
            "--fault-must-succeed",
        ],
    );
    assert_eq!(r.code, Some(1), "{}", r.describe());
    let res = r.result();
    assert_eq!(res["status"], "failed");
    assert!(
        res["status_message"].as_str().unwrap().contains("exit 3"),
        "{}",
        res["status_message"]
    );
    // It stopped at the fault, not after 20 s.
    assert!(f(&phase(res, "write")["duration_s"]) < 15.0);
    assert!(t.run_dirs().is_empty());
}

#[test]
fn job_faults_in_a_workload_file_count_from_their_job() {
    let t = Target::temp();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("w.toml");
    std::fs::write(
        &file,
        "[[job]]\nworkload = 'meta'\nfiles = 50\nworkers = 1\n\n[[job]]\nname = 'second'\nworkload = 'meta'\nfiles = 50\nworkers = 1\n\n[[job.fault]]\nat = '0s'\ncommand = 'echo second'\n",
    )
    .unwrap();
    let r = run(&t.uri(), &[file.to_str().unwrap()]);
    assert_eq!(r.code, Some(0), "{}", r.describe());
    let res = r.result();
    let started = fault_start(res, 0);
    let second = res["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["job_name"] == "second" && p["prepare"] != true)
        .unwrap();
    assert!(
        started >= f(&second["start_s"]),
        "the fault waits for its job: {}",
        res["events"]
    );
    assert_eq!(res["faults"][0]["run"]["output"], "second");
}

#[test]
fn ctrl_c_while_probing_keeps_the_events_and_leaves_no_process() {
    let t = Target::temp();
    let scratch = tempfile::tempdir().unwrap();
    let out: PathBuf = scratch.path().join("r.json");
    // The probe says who it is (its pid leads its process group), then would sleep an hour.
    let pid_file = scratch.path().join("probe.pid");
    let probe = format!("echo $$ > {}; sleep 3600; false", pid_file.display());
    let mut child = Command::new(common::bin())
        .args([
            "run",
            "-t",
            &t.uri(),
            "-w",
            "meta",
            "--files",
            "50",
            "-j",
            "1",
            "--fault",
            "0s: true",
        ])
        .args(["--recovery-probe", &probe, "--recovery-timeout", "10m", "-o"])
        .arg(&out)
        .current_dir(scratch.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let group: i32 = loop {
        if let Some(pid) = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|s| s.trim().parse().ok())
        {
            break pid;
        }
        assert!(start.elapsed() < Duration::from_secs(120), "the probe never started");
        std::thread::sleep(Duration::from_millis(50));
    };
    // SAFETY: kill has no memory preconditions; the pid is our child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let res: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    validate(&res);
    assert_eq!(res["status"], "interrupted");
    assert_eq!(res["recovery"]["interrupted"], true);
    assert_eq!(events(&res, "fault-end").len(), 1);
    assert_eq!(events(&res, "probe-start").len(), 1);
    assert_eq!(events(&res, "probe-stopped").len(), 1);
    let left = live_members(group);
    assert!(left.is_empty(), "the probe's process group {group} still has {left:?}");
}

/// Processes of a group that still run; zombies do not count, since reaping orphans is
/// the job of pid 1, which in a container may never do it.
fn live_members(group: i32) -> Vec<String> {
    let mut live = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // After the command name in parentheses: state, ppid, pgrp.
        let Some(tail) = stat.rsplit_once(") ").map(|(_, t)| t) else {
            continue;
        };
        let fields: Vec<&str> = tail.split_whitespace().collect();
        if fields.len() > 2 && fields[2] == group.to_string() && fields[0] != "Z" {
            live.push(stat.trim().to_string());
        }
    }
    live
}
