//! Runs of several processes: `--procs N` on one machine and `mpirun -np 4`. Totals are the
//! sums of the processes, phases never overlap across processes, shuffled reads read another
//! process's files, and a dead or hung process ends the run with its name and a partial result.

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{children, f, phases, run_with, u, Target};
use serde_json::Value;

fn sum(items: &Value, field: &str) -> u64 {
    items.as_array().expect("an array").iter().map(|i| u(&i[field])).sum()
}

/// Totals equal the sums over processes, nodes and workers; every global worker appears once;
/// no process starts a phase before every process finished the one before.
fn check_cluster(result: &Value, ranks: u64, workers_per_rank: u64, mode: &str) {
    let c = &result["cluster"];
    assert_eq!(c["mode"], mode);
    assert_eq!(u(&c["ranks"]), ranks);
    assert_eq!(c["members"].as_array().unwrap().len() as u64, ranks);
    let mut prev_end: Option<(f64, String)> = None;
    for p in phases(result) {
        let label = p["label"].as_str().unwrap();
        assert_eq!(u(&p["workers"]), ranks * workers_per_rank, "{label}");
        let procs = p["processes"].as_array().expect("processes");
        assert_eq!(procs.len() as u64, ranks, "{label}: one entry per process");
        for field in ["ops", "bytes", "errors"] {
            let total = if field == "errors" {
                u(&p["errors"]["total"])
            } else {
                u(&p[field])
            };
            assert_eq!(
                sum(&p["processes"], field),
                total,
                "{label}: {field} = sum of processes"
            );
            assert_eq!(sum(&p["nodes"], field), total, "{label}: {field} = sum of nodes");
            assert_eq!(
                sum(&p["workers_detail"], field),
                total,
                "{label}: {field} = sum of workers"
            );
        }
        let ids: Vec<u64> = p["workers_detail"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| u(&w["worker"]))
            .collect();
        assert_eq!(
            ids,
            (0..ranks * workers_per_rank).collect::<Vec<_>>(),
            "{label}: global worker ids"
        );
        for (r, pr) in procs.iter().enumerate() {
            assert_eq!(u(&pr["rank"]), r as u64);
            assert_eq!(u(&pr["workers"]), workers_per_rank);
            assert!(
                f(&pr["start_s"]) <= f(&pr["end_s"]),
                "{label}: rank {r} ends after it starts"
            );
        }
        // The barrier: the earliest start of this phase is after the latest end of the last.
        let start = procs.iter().map(|r| f(&r["start_s"])).fold(f64::INFINITY, f64::min);
        if let Some((end, prev)) = &prev_end {
            assert!(
                start >= *end,
                "a process started '{label}' at {start} before every process finished '{prev}' (last at {end})"
            );
        }
        let end = procs.iter().map(|r| f(&r["end_s"])).fold(0.0, f64::max);
        prev_end = Some((end, label.to_string()));
    }
}

/// Every worker of the read phase read the files of a worker of another process, and found
/// the data that worker wrote.
fn check_shuffled(p: &Value, workers_per_rank: u64) {
    let label = p["label"].as_str().unwrap();
    for w in p["workers_detail"].as_array().unwrap() {
        let (me, from) = (u(&w["worker"]), u(&w["read_from"]));
        assert_ne!(
            me / workers_per_rank,
            from / workers_per_rank,
            "{label}: worker {me} read its own rank's files"
        );
        assert_eq!(
            me % workers_per_rank,
            from % workers_per_rank,
            "{label}: same worker slot"
        );
    }
}

#[test]
fn procs_totals_are_sums_and_phases_do_not_overlap() {
    let target = Target::temp();
    let args = [
        "-w",
        "files",
        "--files",
        "20",
        "--file-size",
        "4k",
        "-j",
        "2",
        "--procs",
        "4",
    ];
    let result = common::run_ok(&target, &args);
    check_cluster(&result, 4, 2, "procs");
    assert!(result["cluster"]["members"]
        .as_array()
        .unwrap()
        .iter()
        .all(|m| u(&m["pid"]) > 0));
}

/// Rank 0 records what gathering each phase cost (`gather`): the parts it received, at least
/// the largest and at most one largest per other rank, its answer, and the spread of the
/// processes' starts; a run of one process records none. The phase's histogram, merged rank by
/// rank, and the one host's, merged through each process's, are the same: their percentiles
/// agree exactly.
#[test]
fn procs_record_the_cost_of_gathering_and_merge_exactly() {
    let target = Target::temp();
    let mut args = vec!["-w", "files", "--files", "20", "--file-size", "4k", "-j", "2"];
    let solo = common::run_ok(&target, &args);
    assert!(
        phases(&solo).iter().all(|p| p.get("gather").is_none()),
        "a run of one process has no gather"
    );
    args.extend(["--procs", "3"]);
    let result = common::run_ok(&target, &args);
    for p in common::measured(&result) {
        let label = p["label"].as_str().unwrap();
        let g = &p["gather"];
        let (received, largest) = (u(&g["bytes_received"]), u(&g["largest_part_bytes"]));
        assert!(
            largest > 0 && largest <= received && received <= 2 * largest,
            "{label}: {g}"
        );
        assert!(u(&g["reply_bytes"]) > 0 && u(&g["peak_rss_bytes"]) > 0, "{label}: {g}");
        // A thread's CPU time never exceeds the wall time it ran in (both read to nanoseconds).
        assert!(f(&g["merge_cpu_s"]) <= f(&g["merge_s"]) + 1e-6, "{label}: {g}");
        let starts: Vec<f64> = p["processes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| f(&r["start_s"]))
            .collect();
        let spread = starts.iter().cloned().fold(f64::MIN, f64::max) - starts.iter().cloned().fold(f64::MAX, f64::min);
        assert!(
            (f(&g["start_skew_s"]) - spread).abs() < 1e-6,
            "{label}: skew {g} vs starts {starts:?}"
        );

        let (lat, node) = (&p["latency"], &p["nodes"][0]);
        assert_eq!(u(&lat["count"]), u(&p["ops"]), "{label}");
        for q in ["p50_ns", "p99_ns", "max_ns"] {
            assert_eq!(u(&node[q]), u(&lat[q]), "{label}: {q} of the one host and of the phase");
        }
        let max = p["processes"].as_array().unwrap().iter().map(|r| u(&r["max_ns"])).max();
        assert_eq!(
            max,
            Some(u(&lat["max_ns"])),
            "{label}: the slowest operation is a process's"
        );
    }
}

#[test]
fn procs_shuffled_reads_read_other_processes_files() {
    let target = Target::temp();
    let args = [
        "-w",
        "files",
        "--files",
        "10",
        "--file-size",
        "8k",
        "-j",
        "2",
        "--procs",
        "3",
        "--shuffle",
        "--verify",
    ];
    let result = common::run_ok(&target, &args);
    check_cluster(&result, 3, 2, "procs");
    assert_eq!(result["cluster"]["shuffle"], true);
    let read = common::phase(&result, "read");
    check_shuffled(read, 2);
    assert_eq!(
        u(&read["verify"]["checked_bytes"]),
        60 * 8192,
        "every byte read was checked"
    );
    assert_eq!(u(&read["verify"]["mismatches"]), 0);
    let write = common::phase(&result, "write");
    assert!(
        write["workers_detail"][0].get("read_from").is_none(),
        "writes write their own files"
    );

    let target = Target::temp();
    let args = ["-w", "meta", "--files", "30", "-j", "1", "--procs", "2", "--shuffle"];
    let result = common::run_ok(&target, &args);
    for name in ["stat", "open", "list"] {
        check_shuffled(common::phase(&result, name), 1);
    }
    assert_eq!(u(&common::phase(&result, "stat")["ops"]), 60);
}

#[test]
fn procs_run_the_mix_and_a_shuffled_iterate() {
    let target = Target::temp();
    let args = [
        "-w",
        "mix",
        "--files",
        "4",
        "--file-size",
        "4k",
        "--ops",
        "20",
        "-j",
        "2",
        "--procs",
        "3",
        "--verify",
    ];
    let result = common::run_ok(&target, &args);
    check_cluster(&result, 3, 2, "procs");
    assert_eq!(u(&common::phase(&result, "mix")["ops"]), 3 * 2 * 20);

    let target = Target::temp();
    let args = [
        "-w",
        "iterate",
        "--iterations",
        "2",
        "--files",
        "3",
        "--file-size",
        "4k",
        "-j",
        "2",
        "--procs",
        "3",
        "--shuffle",
        "--verify",
    ];
    let result = common::run_ok(&target, &args);
    check_cluster(&result, 3, 2, "procs");
    let second = phases(&result)
        .iter()
        .find(|p| p["name"] == "iterate" && p["params"]["iteration"] == 1)
        .expect("iteration 1");
    check_shuffled(second, 2);
    assert_eq!(u(&second["verify"]["mismatches"]), 0);
    assert!(u(&second["verify"]["checked_bytes"]) > 0);
}

#[test]
fn shuffled_reads_in_one_process_read_the_next_workers_files() {
    let target = Target::temp();
    let args = [
        "-w",
        "files",
        "--files",
        "5",
        "--file-size",
        "4k",
        "-j",
        "3",
        "--shuffle",
        "--verify",
    ];
    let result = common::run_ok(&target, &args);
    let read = common::phase(&result, "read");
    let from: Vec<u64> = read["workers_detail"]
        .as_array()
        .expect("workers_detail")
        .iter()
        .map(|w| u(&w["read_from"]))
        .collect();
    assert_eq!(from, [1, 2, 0], "worker w reads worker (w + 1) mod 3");
    assert_eq!(
        u(&read["verify"]["checked_bytes"]),
        15 * 4096,
        "every byte read was checked"
    );
    assert_eq!(
        u(&read["verify"]["mismatches"]),
        0,
        "and each file was the one its writer wrote"
    );
}

#[test]
fn wear_out_brings_every_worker_to_the_busiest_ones_count() {
    let target = Target::temp();
    let args = [
        "-w",
        "meta",
        "--phases",
        "create,stat,delete",
        "--duration",
        "1s",
        "-j",
        "2",
        "--procs",
        "2",
        "--stonewall-wear-out",
    ];
    let result = common::run_ok(&target, &args);
    let by_label = |l: &str| phases(&result).iter().find(|p| p["label"] == l);
    let create = by_label("create").expect("a create phase");
    let counts: Vec<u64> = create["workers_detail"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| u(&w["ops"]))
        .collect();
    let most = *counts.iter().max().unwrap();
    let delete = common::phase(&result, "delete");
    assert_eq!(
        u(&delete["ops"]),
        4 * most,
        "every worker deletes as many files as the busiest created"
    );
    let wear = by_label("wear-out create");
    if counts.iter().any(|&c| c != most) {
        let wear = wear.expect("a wear-out phase when the counts differ");
        assert_eq!(wear["prepare"], true);
        assert_eq!(u(&create["ops"]) + u(&wear["ops"]), 4 * most);
    }
}

/// Start a 3-process time-based run, send `signal` to process 2 after a second, and return
/// the outcome, the time the run took and the pid of process 2.
fn disturbed_run(signal: i32) -> (common::Run, Duration, i32) {
    disturbed_rank(signal, 3, 2)
}

/// The pid of rank `rank` among the `n` children of the `--procs` parent `parent` (each says
/// its rank in its environment, once it has started).
fn pid_of_rank(parent: u32, n: usize, rank: usize) -> i32 {
    let mark = format!("DFSBENCH_PROCS_CHILD={rank}:");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let found = children(parent, n, Duration::from_secs(10)).into_iter().find(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .unwrap_or_default()
                .split(|&b| b == 0)
                .any(|v| v.starts_with(mark.as_bytes()))
        });
        match found {
            Some(pid) => return pid,
            None if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(50)),
            None => panic!("no child of {parent} is rank {rank}"),
        }
    }
}

/// Start a `procs`-process time-based run, send `signal` to rank `victim` a second into the
/// write phase, and return the outcome, the time the run took and the victim's pid.
fn disturbed_rank(signal: i32, procs: usize, victim: usize) -> (common::Run, Duration, i32) {
    disturbed(signal, procs, victim, &[])
}

/// [`disturbed_rank`] with more options for the run.
fn disturbed(signal: i32, procs: usize, victim: usize, more: &[&str]) -> (common::Run, Duration, i32) {
    let target = Target::temp();
    let scratch = tempfile::tempdir().unwrap();
    let result_file = scratch.path().join("result.json");
    let started = Instant::now();
    let child = Command::new(common::bin())
        .args(["run", "-t", &target.uri(), "-q", "-o"])
        .arg(&result_file)
        .args(["-w", "files", "--files", "1000000", "--file-size", "1k", "-j", "1"])
        .args(["--duration", "4s", "--procs", &procs.to_string()])
        // 2 s unless the test gives its own.
        .args(
            ["--rank-timeout", "2s"]
                .iter()
                .filter(|_| !more.contains(&"--rank-timeout")),
        )
        .args(more)
        .current_dir(scratch.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let kids = children(child.id(), procs - 1, Duration::from_secs(10));
    assert_eq!(
        kids.len(),
        procs - 1,
        "--procs {procs} started {} more processes",
        procs - 1
    );
    // The run directory appears once every rank joined; the write phase follows.
    let joined = Instant::now() + Duration::from_secs(30);
    while target.run_dirs().is_empty() && Instant::now() < joined {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_secs(1));
    let victim = pid_of_rank(child.id(), procs - 1, victim);
    // SAFETY: kill(2) on a process this test started.
    assert_eq!(unsafe { libc::kill(victim, signal) }, 0);
    let out = child.wait_with_output().unwrap();
    let took = started.elapsed();
    let text = std::fs::read_to_string(&result_file).ok();
    let run = common::Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        result: text.map(|t| serde_json::from_str(&t).unwrap()),
        scratch,
    };
    assert!(
        target.run_dirs().is_empty(),
        "run directory removed: {:?}",
        target.run_dirs()
    );
    (run, took, victim)
}

#[test]
fn a_killed_process_ends_the_run_with_its_name_and_a_partial_result() {
    let (run, took, victim) = disturbed_run(libc::SIGKILL);
    assert_eq!(run.code, Some(1), "{}", run.describe());
    let line = run.stderr_lines().last().copied().unwrap_or_default().to_string();
    assert!(
        line.contains("rank 2 (host ") && line.contains(&format!("pid {victim})")) && line.contains("SIGKILL"),
        "names the dead process: {line}"
    );
    assert!(line.contains("partial results in"), "{line}");
    let result = run.result();
    common::validate(result);
    assert_eq!(result["status"], "failed");
    let write = common::phase(result, "write");
    assert_eq!(
        write["processes"].as_array().unwrap().len(),
        2,
        "the two live processes' measurements"
    );
    assert!(u(&write["ops"]) > 0);
    // Not a speed check: a run that waited for the lost rank would hang (the default rank
    // timeout is 5 minutes); removing the files of a loaded machine can take seconds.
    assert!(took < Duration::from_secs(60), "ended at the phase end, took {took:?}");
}

#[test]
fn a_hung_process_times_out_with_its_name_and_a_partial_result() {
    let (run, took, victim) = disturbed_run(libc::SIGSTOP);
    assert_eq!(run.code, Some(1), "{}", run.describe());
    let line = run.stderr_lines().last().copied().unwrap_or_default().to_string();
    assert!(
        line.contains("rank 2 (host ") && line.contains(&format!("pid {victim})")),
        "names the hung process: {line}"
    );
    assert!(line.contains("did not finish phase 'write 1 KiB' within 2s"), "{line}");
    assert_eq!(run.result()["status"], "failed");
    // The 2 s --rank-timeout, not the 5-minute default, ended it.
    assert!(
        took < Duration::from_secs(60),
        "the timeout ended the run, took {took:?}"
    );
    // The hung process was ended too, not left behind.
    assert!(
        !std::path::Path::new(&format!("/proc/{victim}")).exists(),
        "process {victim} is gone"
    );
}

/// The line in which rank 0 ends a run that lost a rank.
fn rank0_line(run: &common::Run) -> String {
    let lines = run.stderr_lines();
    let line = lines.iter().find(|l| l.contains("partial results in"));
    line.unwrap_or_else(|| panic!("no line of rank 0: {}", run.describe()))
        .to_string()
}

/// With 10 processes the merge tree (8 children per rank) has rank 1 between rank 0 and
/// rank 9: killing rank 1 loses rank 9's part with it, and rank 0 names rank 1 and says so.
#[test]
fn a_killed_inner_rank_of_the_merge_tree_is_named_with_the_parts_it_carried() {
    let (run, took, victim) = disturbed_rank(libc::SIGKILL, 10, 1);
    assert_eq!(run.code, Some(1), "{}", run.describe());
    // Rank 0's line: the other ranks may give up on rank 0 while it removes the files.
    let line = rank0_line(&run);
    assert!(
        line.contains("rank 1 (host ") && line.contains(&format!("pid {victim})")) && line.contains("SIGKILL"),
        "names the dead process: {line}"
    );
    assert!(line.contains("the parts of ranks 9 went with it"), "{line}");
    let result = run.result();
    common::validate(result);
    let write = common::phase(result, "write");
    let ranks: Vec<u64> = write["processes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| u(&p["rank"]))
        .collect();
    assert_eq!(ranks, [0, 2, 3, 4, 5, 6, 7, 8], "every part but ranks 1 and 9");
    assert!(took < Duration::from_secs(60), "ended at the phase end, took {took:?}");
}

/// A hung leaf below rank 1: rank 1 names it (it, not rank 0, waited for it) within its
/// share of the timeout, and rank 0 ends the run with every other part.
#[test]
fn a_hung_rank_below_an_inner_rank_is_named_by_it() {
    let (run, took, victim) = disturbed_rank(libc::SIGSTOP, 10, 9);
    assert_eq!(run.code, Some(1), "{}", run.describe());
    // Rank 0's line: the other ranks may give up on rank 0 while it removes the files.
    let line = rank0_line(&run);
    assert!(
        line.contains("rank 9 (host ") && line.contains(&format!("pid {victim})")),
        "names the hung process: {line}"
    );
    // 2 s less a sixth per level: rank 1 gives up before rank 0 gives up on rank 1.
    assert!(
        line.contains("did not finish phase 'write 1 KiB' within 1s 667ms of rank 1"),
        "{line}"
    );
    let write = common::phase(run.result(), "write");
    assert_eq!(write["processes"].as_array().unwrap().len(), 9);
    assert!(
        took < Duration::from_secs(60),
        "the timeout ended the run, took {took:?}"
    );
    assert!(
        !std::path::Path::new(&format!("/proc/{victim}")).exists(),
        "process {victim} is gone"
    );
}

/// The ranks of a phase's per-process figures.
fn ranks_of(phase: &Value) -> Vec<u64> {
    phase["processes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| u(&p["rank"]))
        .collect()
}

/// `--rank-loss continue`: the run goes on without a killed rank through its later phases,
/// completes, and records the rank with what it had done in the phase it was lost in.
#[test]
fn with_rank_loss_continue_the_others_go_on_without_a_killed_rank() {
    // A killed rank is seen at once (its connection closes); the long timeout keeps a live
    // rank that is slow on a loaded machine (dropping the pages of thousands of files before
    // the read) from being lost too.
    let more = ["--rank-loss", "continue", "--rank-timeout", "30s"];
    let (run, _, victim) = disturbed(libc::SIGKILL, 3, 2, &more);
    assert_eq!(run.code, Some(0), "{}", run.describe());
    let result = run.result();
    common::validate(result);
    assert_eq!(result["status"], "complete");
    let lost = result["cluster"]["lost"].as_array().expect("lost ranks");
    assert_eq!(lost.len(), 1, "{lost:?}");
    let l = &lost[0];
    assert_eq!((u(&l["rank"]), u(&l["pid"])), (2, victim as u64));
    assert!(l["why"].as_str().unwrap().contains("SIGKILL"), "{l}");
    assert_eq!(l["phase"], "write 1 KiB");
    // It wrote for about a second before the kill: its last progress report says so.
    assert!(u(&l["ops"]) > 0 && u(&l["bytes"]) == 1024 * u(&l["ops"]), "{l}");
    let write = common::phase(result, "write");
    assert_eq!(ranks_of(write), [0, 1], "the live processes' parts");
    assert_eq!(u(&write["ops"]), sum(&write["processes"], "ops"));
    let marks = write["validity"].to_string();
    assert!(marks.contains("rank 2 (host ") && marks.contains("was lost"), "{marks}");
    // The phases after the loss ran with the other two.
    let after: Vec<&Value> = result["phases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["name"] != "write" && p["prepare"] == false)
        .collect();
    assert!(!after.is_empty(), "phases after the write: {}", run.describe());
    for p in after {
        assert_eq!(ranks_of(p), [0, 1], "{}", p["label"]);
        assert!(u(&p["ops"]) > 0, "{}", p["label"]);
    }
}

/// A hung rank is lost at --rank-timeout, told to stop, and gone when the run ends.
#[test]
fn with_rank_loss_continue_a_hung_rank_is_left_behind_at_the_timeout() {
    let (run, _, victim) = disturbed(libc::SIGSTOP, 3, 1, &["--rank-loss", "continue"]);
    assert_eq!(run.code, Some(0), "{}", run.describe());
    let result = run.result();
    assert_eq!(result["status"], "complete");
    let l = &result["cluster"]["lost"][0];
    assert_eq!(u(&l["rank"]), 1, "{l}");
    assert!(l["why"].as_str().unwrap().contains("did not answer within 2s"), "{l}");
    assert_eq!(ranks_of(common::phase(result, "write")), [0, 2]);
    assert!(
        !std::path::Path::new(&format!("/proc/{victim}")).exists(),
        "process {victim} is gone"
    );
}

/// `--hosts` with a host other than this one: the process there is started through `--rsh`
/// (here an agent that runs the command on this machine) and joins rank 0 over TCP.
#[test]
fn procs_on_other_hosts_start_through_the_rsh_agent_and_join_over_tcp() {
    let target = Target::temp();
    let scratch = tempfile::tempdir().unwrap();
    let agent = scratch.path().join("rsh");
    let log = scratch.path().join("agent.log");
    std::fs::write(
        &agent,
        format!("#!/bin/sh\necho \"$1\" >> {}\nexec sh -c \"$2\"\n", log.display()),
    )
    .unwrap();
    std::fs::set_permissions(&agent, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let here = dfsbench_core::cluster::this_host();
    let hosts = format!("{here},elsewhere");
    let r = common::run(
        &target.uri(),
        &[
            "-w",
            "files",
            "--files",
            "8",
            "--file-size",
            "4k",
            "-j",
            "1",
            "--procs",
            "3",
            "--hosts",
            &hosts,
            "--rsh",
            agent.to_str().unwrap(),
            "--shuffle",
            "--verify",
        ],
    );
    assert_eq!(r.code, Some(0), "{}", r.describe());
    let result = r.result();
    common::validate(result);
    check_cluster(result, 3, 1, "procs");
    // Rank 1 went through the agent (to "elsewhere"); rank 2 is on rank 0's host again.
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "elsewhere\n");
    let read = common::phase(result, "read");
    assert_eq!(u(&read["errors"]["total"]), 0, "verified reads of the others' files");
}

#[test]
fn procs_refuses_what_cannot_work() {
    let r = common::run("mem://", &["-w", "meta", "--procs", "2"]);
    assert_eq!(r.code, Some(1), "{}", r.describe());
    assert!(r.stderr.contains("mem:// lives inside one process"), "{}", r.describe());
    let dir = Target::temp();
    let r = common::run(&dir.uri(), &["-w", "meta", "--shuffle", "-j", "1"]);
    assert_eq!(r.code, Some(2), "{}", r.describe());
    assert!(
        r.stderr.contains("--shuffle reads another worker's data"),
        "{}",
        r.describe()
    );
    let r = common::run(&dir.uri(), &["-w", "meta", "--procs", "2", "--rank-timeout", "soon"]);
    assert_eq!(r.code, Some(2), "{}", r.describe());
    assert!(r.stderr.contains("--rank-timeout"), "{}", r.describe());
    let r = common::run(&dir.uri(), &["-w", "meta", "--hosts", "a,b"]);
    assert_eq!(r.code, Some(2), "{}", r.describe());
    assert!(
        r.stderr.contains("--hosts places the processes of --procs"),
        "{}",
        r.describe()
    );
    let r = common::run(
        &dir.uri(),
        &["-w", "meta", "--procs", "2", "--hosts", "not-this-host,b"],
    );
    assert_eq!(r.code, Some(2), "{}", r.describe());
    assert!(
        r.stderr
            .contains("--hosts starts with not-this-host, but rank 0 runs here"),
        "{}",
        r.describe()
    );
}

/// `mpirun -np N dfsbench` on this machine, as CI runs it.
fn mpirun(np: usize) -> Option<Command> {
    if !common::mpirun_found() {
        return None;
    }
    let mut cmd = Command::new("mpirun");
    cmd.args(["-np", &np.to_string()])
        .args(common::MPIRUN_OPTIONS)
        .envs(common::MPIRUN_ENV)
        .arg(common::bin());
    Some(cmd)
}

#[cfg(feature = "mpi")]
#[test]
fn mpirun_four_ranks_write_one_result() {
    let Some(cmd) = mpirun(4) else { return };
    let target = Target::temp();
    let args = [
        "-w",
        "files",
        "--files",
        "10",
        "--file-size",
        "4k",
        "-j",
        "2",
        "--shuffle",
        "--verify",
    ];
    let r = run_with(cmd, &target.uri(), &args);
    let result = common::expect_ok(&target, &args, r);
    check_cluster(&result, 4, 2, "mpi");
    check_shuffled(common::phase(&result, "read"), 2);
    assert_eq!(u(&common::phase(&result, "read")["verify"]["mismatches"]), 0);
}

/// Under mpirun a lost rank ends the job (Open MPI 4.1): going on without one is refused,
/// with the way that can.
#[cfg(feature = "mpi")]
#[test]
fn mpirun_refuses_to_go_on_without_a_lost_rank() {
    let Some(cmd) = mpirun(2) else { return };
    let target = Target::temp();
    let r = run_with(
        cmd,
        &target.uri(),
        &["-w", "meta", "--files", "5", "--rank-loss", "continue"],
    );
    assert_ne!(r.code, Some(0), "{}", r.describe());
    assert!(
        r.stderr
            .contains("--rank-loss continue: mpirun and srun end the whole job")
            && r.stderr.contains("--procs N --hosts"),
        "{}",
        r.describe()
    );
}

/// A run that cannot start says why under mpirun too: the other ranks wait for rank 0's line
/// instead of exiting first, which made mpirun end rank 0 before it could say it.
#[cfg(feature = "mpi")]
#[test]
fn mpirun_says_why_a_run_cannot_start() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no/such/dir");
    let cases = [
        (missing.to_str().unwrap().to_string(), "does not exist"),
        ("mem://".to_string(), "mem:// lives inside one process"),
    ];
    for (target, says) in cases {
        let Some(cmd) = mpirun(3) else { return };
        let r = run_with(cmd, &target, &["-w", "meta", "--files", "5"]);
        assert_ne!(r.code, Some(0), "{}", r.describe());
        let said: Vec<&str> = r
            .stderr_lines()
            .into_iter()
            .filter(|l| l.starts_with("dfsbench: "))
            .collect();
        // Rank 0 says why before anything else. (On a loaded machine mpirun may still end
        // rank 0 after that line, when another rank has exited: an `interrupted` line can follow.)
        assert!(!said.is_empty(), "rank 0 says why: {}", r.describe());
        assert!(said[0].contains(says), "{}", r.describe());
        assert_eq!(
            said.iter().filter(|l| l.contains(says)).count(),
            1,
            "said once, by rank 0: {}",
            r.describe()
        );
    }
}

#[cfg(not(feature = "mpi"))]
#[test]
fn mpirun_without_the_mpi_feature_says_how_to_get_it() {
    let Some(cmd) = mpirun(2) else { return };
    let target = Target::temp();
    let r = run_with(cmd, &target.uri(), &["-w", "meta", "--files", "5"]);
    assert_ne!(r.code, Some(0), "{}", r.describe());
    assert!(r.stderr.contains("built without MPI"), "{}", r.describe());
}

/// An MPI rank that is not dfsbench: rank 1 of an MPMD job, a C program that answers rank 0's
/// go with `what` (`big`: a 300 MiB message; `garbage`: two bytes that are no member record).
#[cfg(feature = "mpi")]
fn fake_mpi_peer(what: &str) -> Option<common::Run> {
    mpirun(1)?;
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("peer.c");
    std::fs::write(
        &source,
        r#"#include <mpi.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    char go;
    MPI_Recv(&go, 0, MPI_BYTE, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    int big = strcmp(argv[1], "big") == 0;
    int n = big ? 300 << 20 : 2;
    char *bytes = calloc(n, 1);
    if (!big) { bytes[0] = (char)0xff; bytes[1] = (char)0xfe; }
    MPI_Send(bytes, n, MPI_BYTE, 0, 3, MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
"#,
    )
    .unwrap();
    let peer = dir.path().join("peer");
    let built = Command::new("mpicc")
        .arg(&source)
        .arg("-o")
        .arg(&peer)
        .status()
        .unwrap();
    assert!(built.success(), "mpicc (libopenmpi-dev, installed by scripts/test.sh)");
    let target = Target::temp();
    let mut cmd = Command::new("timeout");
    cmd.args(["-s", "KILL", "120", "mpirun", "-np", "1"])
        .args(common::MPIRUN_OPTIONS)
        .envs(common::MPIRUN_ENV)
        .arg(common::bin())
        .args([
            "run",
            "-t",
            &target.uri(),
            "-q",
            "-w",
            "meta",
            "--files",
            "5",
            "--rank-timeout",
            "10m",
        ])
        .args([":", "-np", "1"])
        .arg(&peer)
        .arg(what);
    let out = cmd.output().unwrap();
    Some(common::Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        result: None,
        scratch: dir,
    })
}

/// MPI receives are capped as the --procs frames are: an oversized message from a peer is
/// refused by its size, before it is received, in one line; a malformed record is named.
#[cfg(feature = "mpi")]
#[test]
fn an_mpi_peer_that_is_not_dfsbench_is_refused_in_one_line() {
    let Some(r) = fake_mpi_peer("big") else { return };
    assert_ne!(r.code, Some(0), "{}", r.describe());
    assert!(!r.stderr.contains("panicked"), "{}", r.describe());
    assert!(
        r.stderr
            .contains("rank 1 sent a message of 314572800 bytes, more than the 256 MiB limit"),
        "{}",
        r.describe()
    );
    let Some(r) = fake_mpi_peer("garbage") else { return };
    assert_ne!(r.code, Some(0), "{}", r.describe());
    assert!(!r.stderr.contains("panicked"), "{}", r.describe());
    assert!(
        r.stderr.contains("rank 1 sent a member record that dfsbench") && r.stderr.contains("cannot read"),
        "{}",
        r.describe()
    );
}
