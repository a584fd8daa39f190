//! `dfsbench study`: every study at a tiny scale on a temporary directory and on a real MinIO;
//! the tables have the publication's shape and every number in them is the number in the
//! result file (and field) its provenance line in tables.csv names.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use common::lab::lab_test;
use common::{bin, csv_fields as fields};
use serde_json::Value;

const SCALE: &str = "0.0001";

struct Out {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn study(args: &[&str], env: &BTreeMap<String, String>) -> Out {
    let out = Command::new("timeout")
        .args(["-s", "KILL", "600", bin(), "study"])
        .args(args)
        .envs(env)
        .output()
        .expect("run dfsbench study");
    Out {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into(),
        stderr: String::from_utf8_lossy(&out.stderr).into(),
    }
}

/// `a.b.c` in a JSON value; `ops_by_kind.read` picks the array element whose op is `read`.
fn at<'v>(v: &'v Value, path: &str) -> &'v Value {
    path.split('.').fold(v, |v, key| match v {
        Value::Array(items) => items.iter().find(|i| i["op"] == key).unwrap_or(&Value::Null),
        _ => &v[key],
    })
}

fn number(v: &Value, what: &str) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("{what}: not a number: {v}"))
}

/// The result file and the number a provenance line names.
fn source(dir: &Path, file: &str, phase: &str, field: &str) -> f64 {
    let doc: Value = serde_json::from_slice(&std::fs::read(dir.join(file)).unwrap()).unwrap();
    common::validate(&doc);
    let holder = if phase == "null tests" || phase == "recovery probe" {
        &doc
    } else {
        doc["phases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["label"] == phase && p["prepare"] != true)
            .unwrap_or_else(|| panic!("{file}: no phase {phase}"))
    };
    number(at(holder, field), &format!("{file} {phase} {field}"))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-300)
}

/// The study in `dir` against its files: `shape` is (rows, row-label columns, value columns)
/// per table. Returns the notes of cells without a number.
fn check(dir: &Path, systems: usize, shape: &[(usize, usize, usize)], stdout: &str) -> Vec<String> {
    let manifest: Value = serde_json::from_slice(&std::fs::read(dir.join("study.json")).unwrap()).unwrap();
    assert_eq!(manifest["schema"], "dfsbench.study/1");
    assert_eq!(manifest["systems"].as_array().unwrap().len(), systems);
    let md = std::fs::read_to_string(dir.join("tables.md")).unwrap();
    assert_eq!(stdout, md, "stdout is tables.md");
    let mut md_tables: Vec<Vec<&str>> = Vec::new();
    let mut inside = false;
    for l in md.lines() {
        match (l.starts_with('|'), inside) {
            (true, false) => md_tables.push(vec![l]),
            (true, true) => md_tables.last_mut().unwrap().push(l),
            _ => {}
        }
        inside = l.starts_with('|');
    }
    assert_eq!(md_tables.len(), shape.len(), "tables in tables.md");
    for (i, &(rows, labels, values)) in shape.iter().enumerate() {
        let wide = std::fs::read_to_string(dir.join(format!("table-{}.csv", i + 1))).unwrap();
        let lines: Vec<Vec<String>> = wide.lines().map(fields).collect();
        assert_eq!(lines.len(), rows + 1, "table {}: header + rows", i + 1);
        for l in &lines {
            assert_eq!(l.len(), labels + values * systems, "table {}: {l:?}", i + 1);
        }
        // The i-th Markdown table has the same header, then the same cells.
        let block = &md_tables[i];
        assert_eq!(block[0], format!("| {} |", lines[0].join(" | ")), "table {}", i + 1);
        assert_eq!(block.len(), rows + 2, "table {}", i + 1);
        for (l, m) in lines[1..].iter().zip(&block[2..]) {
            assert_eq!(*m, format!("| {} |", l.join(" | ")), "table {}", i + 1);
        }
    }
    let long = std::fs::read_to_string(dir.join("tables.csv")).unwrap();
    let mut lines = long.lines();
    let head = fields(lines.next().unwrap());
    let col = |name: &str| head.iter().position(|h| h == name).unwrap();
    let mut per_table = vec![0usize; shape.len()];
    let mut missing = Vec::new();
    let mut outcomes = Vec::new();
    for line in lines {
        let f = fields(line);
        assert_eq!(f.len(), head.len(), "{line}");
        per_table[f[col("table")].parse::<usize>().unwrap() - 1] += 1;
        if f[col("value")].is_empty() {
            missing.push(f[col("note")].clone());
            continue;
        }
        let raw: f64 = f[col("raw")].parse().unwrap();
        // A fault's outcome is words (continued, stalled 3.1 s, failed: ...) over the stall
        // of the run's first fault.
        if f[col("field")] == "faults[0].stall_s" {
            let doc: Value = serde_json::from_slice(&std::fs::read(dir.join(&f[col("result")])).unwrap()).unwrap();
            assert_eq!(raw, number(&doc["faults"][0]["stall_s"], line), "{line}");
            outcomes.push(f[col("value")].clone());
            continue;
        }
        let value: f64 = f[col("value")].parse().unwrap();
        let file_raw = source(dir, &f[col("result")], &f[col("phase")], &f[col("field")]);
        assert_eq!(raw, file_raw, "{line}: raw is the result file's number");
        let expected = match f[col("baseline_result")].as_str() {
            "" => raw * f[col("factor")].parse::<f64>().unwrap(),
            _ => raw / f[col("baseline_raw")].parse::<f64>().unwrap(),
        };
        assert!(close(value, expected), "{line}: {value} != {expected}");
    }
    for (i, &(rows, _, values)) in shape.iter().enumerate() {
        assert_eq!(
            per_table[i],
            rows * values * systems,
            "table {}: a line per cell",
            i + 1
        );
    }
    missing.extend(outcomes.into_iter().map(|o| format!("outcome: {o}")));
    missing
}

/// (rows, label columns, value columns) of each table of each study.
fn shape(name: &str) -> Vec<(usize, usize, usize)> {
    match name {
        "size-sweep" => vec![(9, 3, 2), (2, 1, 1)],
        "clients-sweep" => vec![
            (8, 1, 5),
            (8, 1, 5),
            (8, 1, 4),
            (8, 1, 5),
            (8, 1, 5),
            (8, 1, 5),
            (8, 1, 5),
            (8, 1, 2),
            (2, 1, 1),
        ],
        "dfsperf" => vec![(6, 1, 2), (3, 1, 4), (2, 1, 4), (6, 1, 4), (6, 1, 4)],
        "surfnet" => vec![(9, 2, 1), (3, 2, 4), (3, 2, 4), (2, 1, 1), (4, 1, 1)],
        "fio-matrix" => vec![(4, 1, 3); 4],
        _ => unreachable!(),
    }
}

/// Points run in the tests: all, except that the many-client and many-point sweeps are cut
/// to a few (a debug build merges 256 workers' histograms slowly).
fn points(name: &str, all_fio: bool) -> Vec<&'static str> {
    match name {
        "clients-sweep" => vec!["--points", "clients2,clients16,iops"],
        "fio-matrix" if !all_fio => vec!["--points", "*-t1,*-t2"],
        _ => vec![],
    }
}

/// `servers`: whether the study was given --server-pid.
fn only_expected_gaps(name: &str, missing: &[String], object_store: bool, servers: bool) {
    for m in missing {
        let ok = m == "not run"
            || (m.starts_with("n/a: server CPU not measured") && !servers)
            // A temp dir is a local file system: no server to watch.
            || (m.starts_with("n/a: local ") && m.contains(", no server: ") && !servers)
            || (m.starts_with("n/a: no null_tests.connect") && !object_store)
            || (m.starts_with("n/a: no rename phase") && object_store && name == "dfsperf")
            // Fault points take out lab nodes: other targets say so.
            || m.starts_with("n/a: needs a lab target (-t lab:NAME)")
            // Rows whose files are too few to make one at the test's scale.
            || m.starts_with("n/a: left out at scale")
            // Object stores have no positional writes: write patterns of the io workload.
            || (m.contains("does not support it") && object_store);
        assert!(ok, "{name}: unexpected cell: {m}");
    }
}

#[test]
fn every_study_on_a_temp_dir() {
    for name in ["size-sweep", "clients-sweep", "dfsperf", "surfnet", "fio-matrix"] {
        let target = tempfile::tempdir().unwrap();
        let out = tempfile::tempdir().unwrap();
        let dir = out.path().join("study");
        let mut args = vec![
            name,
            "--target",
            target.path().to_str().unwrap(),
            "--scale",
            SCALE,
            "--out",
        ];
        args.push(dir.to_str().unwrap());
        args.extend(points(name, true));
        let r = study(&args, &BTreeMap::new());
        assert_eq!(r.code, Some(0), "{name}: {}", r.stderr);
        assert!(r.stderr.contains("ok"), "{name}: a line per point: {}", r.stderr);
        let systems = if name == "dfsperf" { 2 } else { 1 };
        let missing = check(&dir, systems, &shape(name), &r.stdout);
        only_expected_gaps(name, &missing, false, false);
        if name == "clients-sweep" {
            // 6 client counts were not run, in 7 tables; the 2 that ran have no server CPU and
            // leave out their large files (1 MB, 10 MB) in the other 5 tables; the 2 recovery
            // runs were not run.
            assert_eq!(
                missing.len(),
                6 * (5 + 5 + 4 + 5 + 5 + 5 + 5) + 2 * (5 + 5) + 2 * 5 * 2 + 2,
                "{missing:?}"
            );
        }
        // At this scale surfnet's I/O points measure for milliseconds: the tables say so.
        if name == "surfnet" {
            let md = std::fs::read_to_string(dir.join("tables.md")).unwrap();
            let short = md.lines().find(|l| l.contains("a phase measured for under a second"));
            assert!(short.is_some_and(|l| l.contains("read-8k")), "{md}");
        }
        // Nothing is left in the target.
        assert_eq!(std::fs::read_dir(target.path()).unwrap().count(), 0, "{name}");
    }
}

/// The recovery test on a target dfsbench cannot take apart: the user's --fault and
/// --recovery-probe stand in for the lab's wipe and probe; the cell is the probe's time.
#[test]
fn clients_sweep_recovery_with_the_users_fault_and_probe() {
    let target = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("study");
    let args = [
        "clients-sweep",
        "-t",
        target.path().to_str().unwrap(),
        "--scale",
        SCALE,
        "--points",
        "recovery-1",
        "--fault",
        "read+1s: true",
        "--recovery-probe",
        "test -e /proc/self",
        "--out",
        dir.to_str().unwrap(),
    ];
    let r = study(&args, &BTreeMap::new());
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let missing = check(&dir, 1, &shape("clients-sweep"), &r.stdout);
    // Every cell but the first recovery run's is "not run", or left out at this scale.
    let other = |m: &&String| *m != "not run" && !m.starts_with("n/a: left out at scale");
    assert_eq!(missing.iter().filter(other).count(), 0, "{missing:?}");
    let table = std::fs::read_to_string(dir.join("table-9.csv")).unwrap();
    let run1: Vec<&str> = table.lines().nth(1).unwrap().split(',').collect();
    let secs: f64 = run1[1].parse().unwrap_or_else(|_| panic!("a recovery time: {table}"));
    // The probe succeeds at once: the recovery time is the probe's own, well under a second.
    assert!((0.0..1.0).contains(&secs), "{table}");
    assert_eq!(std::fs::read_dir(target.path()).unwrap().count(), 0);
}

/// A target that cannot be used (a missing directory) stops the study before its first point,
/// with one line, and leaves nothing behind: no study directory, no run directory in the
/// targets that were fine.
#[test]
fn an_unusable_target_stops_the_study_before_any_point() {
    let target = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("s");
    let t = format!("disk={}", target.path().display());
    let args = [
        "size-sweep",
        "-t",
        &t,
        "-t",
        "bad=/nonexistent-dfsbench-dir/x",
        "--scale",
        SCALE,
        "--out",
        dir.to_str().unwrap(),
    ];
    let r = study(&args, &BTreeMap::new());
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    let lines: Vec<&str> = r.stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{}", r.stderr);
    assert!(
        lines[0].contains("/nonexistent-dfsbench-dir/x does not exist")
            && lines[0].ends_with("; no point of the study was run"),
        "{}",
        lines[0]
    );
    assert!(!dir.exists(), "no study directory");
    assert_eq!(
        std::fs::read_dir(target.path()).unwrap().count(),
        0,
        "the check's run directory is gone"
    );
}

#[test]
fn several_targets_failures_and_rerendering() {
    let target = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("s");
    let t = format!("disk={}", target.path().display());
    // A target that opens but fails its runs: 1 KiB of room.
    let bad = "bad=mem://?size=1k";
    let args = [
        "size-sweep",
        "-t",
        &t,
        "-t",
        "mem://",
        "-t",
        bad,
        "--scale",
        SCALE,
        "--out",
        dir.to_str().unwrap(),
    ];
    let r = study(&args, &BTreeMap::new());
    assert_eq!(r.code, Some(1), "a failing system fails the study: {}", r.stderr);
    assert!(r.stderr.contains("runs failed"), "{}", r.stderr);
    // A column per system, named by its label (mem:// by its backend).
    assert!(
        r.stdout.contains(
            "| N | S | unit | write (disk) | write (mem) | write (bad) | read (disk) | read (mem) | read (bad) |"
        ),
        "{}",
        r.stdout
    );
    let missing = check(&dir, 3, &shape("size-sweep"), &r.stdout);
    // At this scale only the rows of 10000 files make a whole file: the 7 others are left out
    // on every system.
    let (left_out, failed): (Vec<&String>, Vec<&String>) =
        missing.iter().partition(|m| m.starts_with("n/a: left out at scale"));
    assert_eq!(left_out.len(), 3 * 7 * 2, "{left_out:?}");
    // Only `bad`'s cells fail (a write past its room, a read of what was not written), and
    // each says why.
    assert!(!failed.is_empty() && failed.len() <= 2 * 3 + 2, "{failed:?}");
    assert!(
        failed
            .iter()
            .all(|m| m.starts_with("error: ") && (m.contains("ENOSPC") || m.contains("ENOENT"))),
        "{failed:?}"
    );

    // The tables again from the files alone, and as the long CSV.
    let again = study(&["size-sweep", "--from", dir.to_str().unwrap()], &BTreeMap::new());
    assert_eq!(again.code, Some(0), "{}", again.stderr);
    assert_eq!(again.stdout, r.stdout);
    let csv = study(
        &["size-sweep", "--from", dir.to_str().unwrap(), "--format", "csv"],
        &BTreeMap::new(),
    );
    assert_eq!(csv.stdout, std::fs::read_to_string(dir.join("tables.csv")).unwrap());
    // `dfsbench report` reads a study directory too (the manifest is skipped).
    let rep = Command::new(bin())
        .args(["report", dir.to_str().unwrap(), "--format", "csv"])
        .output()
        .unwrap();
    assert!(rep.status.success(), "{}", String::from_utf8_lossy(&rep.stderr));
}

#[test]
fn list_and_bad_input() {
    let none = BTreeMap::new();
    let r = study(&["list"], &none);
    assert_eq!(r.code, Some(0));
    let names: Vec<&str> = r.stdout.lines().filter_map(|l| l.split_whitespace().next()).collect();
    assert_eq!(
        names,
        [
            "size-sweep",
            "clients-sweep",
            "dfsperf",
            "surfnet",
            "fio-matrix",
            "io500",
            "mlperf-storage"
        ]
    );
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().to_str().unwrap();
    for (args, says) in [
        (vec!["nope", "-t", t], "unknown study 'nope'"),
        (vec!["size-sweep"], "needs --target"),
        (vec!["size-sweep", "-t", t, "--scale", "0"], "--scale 0"),
        (vec!["size-sweep", "-t", t, "--scale", "2"], "at most 1"),
        (vec!["size-sweep", "-t", "a=mem://", "-t", "a=mem://"], "used twice"),
        (vec!["size-sweep", "-t", "a b=mem://"], "label 'a b'"),
        (vec!["size-sweep", "-t", "foo://x"], "unknown target scheme"),
        (vec!["size-sweep", "-t", t, "--points", "zz*"], "matches no point"),
        (vec!["size-sweep", "--from", t], "study.json"),
        (vec!["size-sweep", "-t", t, "--nodes", "4"], "--launcher"),
        (
            vec!["size-sweep", "-t", t, "--nodes", "4", "--launcher", "mpirun -np 4"],
            "{np}",
        ),
        (
            vec!["surfnet", "-t", t, "--nodes", "4", "--launcher", "mpirun -np {np}"],
            "surfnet has no point over these node counts",
        ),
        (
            vec!["size-sweep", "-t", t, "--nodes", "0", "--launcher", "mpirun -np {np}"],
            "--nodes 0",
        ),
        (
            vec!["clients-sweep", "-t", t, "--server-pid", "4000000000"],
            "--server-pid 4000000000: no such process",
        ),
    ] {
        let r = study(&args, &none);
        assert_eq!(r.code, Some(2), "{args:?}: {}", r.stderr);
        assert_eq!(r.stderr.lines().count(), 1, "{args:?}: one line: {}", r.stderr);
        assert!(r.stderr.contains(says), "{args:?}: {}", r.stderr);
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn every_study_on_minio() {
    lab_test("minio", |s| {
        let target = format!("s3={}", s.s3_uri(""));
        for name in ["size-sweep", "clients-sweep", "dfsperf", "surfnet", "fio-matrix"] {
            let out = tempfile::tempdir().unwrap();
            let dir = out.path().join("study");
            let mut args = vec![
                name,
                "--target",
                &target,
                "--scale",
                SCALE,
                "--out",
                dir.to_str().unwrap(),
            ];
            args.extend(points(name, false));
            // MinIO's CPU beside the client's (clients-sweep's server CPU tables).
            let servers = name == "clients-sweep";
            if servers {
                args.extend(["--server-pid", s.var("DFSBENCH_SERVER_PIDS")]);
            }
            let r = study(&args, &s.env);
            assert_eq!(r.code, Some(0), "{name}: {}", r.stderr);
            let systems = if name == "dfsperf" { 2 } else { 1 };
            let missing = check(&dir, systems, &shape(name), &r.stdout);
            only_expected_gaps(name, &missing, true, servers);
            if name == "surfnet" {
                // S3 has no positional writes, so its first point is n/a: the null tests ran
                // with the next one, and the column has them; the rows of each node are a
                // lab's only.
                let nulls = std::fs::read_to_string(dir.join("table-1.csv")).unwrap();
                for l in nulls.lines().skip(1).map(fields) {
                    if l[0].contains("node") {
                        assert!(
                            l[2].starts_with("n/a: needs a lab target"),
                            "null test {}: {}",
                            l[0],
                            l[2]
                        );
                    } else {
                        assert!(l[2].parse::<f64>().is_ok(), "null test {}: {}", l[0], l[2]);
                    }
                }
            }
            if servers {
                let md = std::fs::read_to_string(dir.join("table-6.csv")).unwrap();
                assert!(md.lines().nth(1).unwrap().starts_with("2,"), "{md}");
            }
            for k in ["AWS_SECRET_ACCESS_KEY"] {
                let secret = s.var(k);
                for f in ["study.json", "tables.md", "tables.csv"] {
                    let text = std::fs::read_to_string(dir.join(f)).unwrap();
                    assert!(!text.contains(secret), "{name}: {f} holds the secret");
                }
            }
        }
    });
}

/// `dfsbench study ARGS -t TARGET --out DIR`, sent SIGINT after `after_ms`; it must end within
/// 20 s of it.
fn interrupted_study(args: &[&str], target: &Path, dir: &Path, after_ms: u64) -> std::process::Output {
    let child = Command::new(bin())
        .arg("study")
        .args(args)
        .arg("-t")
        .arg(target)
        .arg("--out")
        .arg(dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(after_ms));
    // SAFETY: signalling the child we started.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let signalled = std::time::Instant::now();
    let r = child.wait_with_output().unwrap();
    assert!(signalled.elapsed().as_secs() < 20, "the study ended soon after Ctrl-C");
    r
}

#[test]
fn ctrl_c_keeps_finished_points() {
    let target = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("study");
    // At scale 0.01 every fio-matrix point runs 1.8 s: Ctrl-C lands in the second or third.
    let r = interrupted_study(&["fio-matrix", "--scale", "0.01"], target.path(), &dir, 4000);
    let stdout = String::from_utf8_lossy(&r.stdout);
    assert_eq!(r.status.code(), Some(130), "{}", String::from_utf8_lossy(&r.stderr));
    let manifest: Value = serde_json::from_slice(&std::fs::read(dir.join("study.json")).unwrap()).unwrap();
    assert_eq!(manifest["status"], "interrupted");
    let missing = check(&dir, 1, &shape("fio-matrix"), &stdout);
    let done = 48 - missing.len();
    assert!(
        (1..48).contains(&done),
        "finished points keep their numbers: {missing:?}"
    );
    for m in &missing {
        assert!(m == "not run" || m.starts_with("error: interrupted"), "{m}");
    }
    assert_eq!(std::fs::read_dir(target.path()).unwrap().count(), 0);
}

/// `--launcher` for mpirun on this machine, as CI runs it, and its environment; None when
/// mpirun is missing.
#[cfg(feature = "mpi")]
fn mpirun_launcher() -> Option<(String, BTreeMap<String, String>)> {
    common::mpirun_found().then(|| {
        let env = common::MPIRUN_ENV.map(|(k, v)| (k.to_string(), v.to_string())).into();
        (format!("mpirun {} -np {{np}}", common::MPIRUN_OPTIONS.join(" ")), env)
    })
}

/// Points over nodes run under --launcher; on one machine every one of them says the launcher
/// did not spread the processes.
#[cfg(feature = "mpi")]
#[test]
fn node_points_run_under_the_launcher() {
    let Some((launcher, env)) = mpirun_launcher() else {
        return;
    };
    let target = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    for (name, points, shape) in [
        ("size-sweep", None, vec![(9, 3, 2), (9, 3, 4), (4, 2, 2)]),
        (
            "dfsperf",
            Some("nodes*"),
            vec![(6, 1, 2), (3, 1, 4), (2, 1, 4), (6, 1, 4), (6, 1, 4), (4, 2, 4)],
        ),
    ] {
        let dir = out.path().join(name);
        let mut args = vec![
            name,
            "-t",
            target.path().to_str().unwrap(),
            "--scale",
            SCALE,
            "--nodes",
            "2",
            "--launcher",
            &launcher,
            "--out",
            dir.to_str().unwrap(),
        ];
        if let Some(p) = points {
            args.extend(["--points", p]);
        }
        let r = study(&args, &env);
        assert_eq!(r.code, Some(0), "{name}: {}", r.stderr);
        let systems = if name == "dfsperf" { 2 } else { 1 };
        let missing = check(&dir, systems, &shape, &r.stdout);
        let skipped_localfs = missing
            .iter()
            .filter(|m| m.starts_with("n/a: LocalFS is the single-node baseline"))
            .count();
        if name == "dfsperf" {
            // The node table's LocalFS column (4 rows x 4 columns) is skipped; every other
            // table was not run (--points).
            assert_eq!(skipped_localfs, 16, "{missing:?}");
        }
        assert!(
            missing
                .iter()
                .all(|m| m == "not run" || m.starts_with("n/a: LocalFS") || m.starts_with("n/a: left out")),
            "{name}: {missing:?}"
        );
        let manifest: Value = serde_json::from_slice(&std::fs::read(dir.join("study.json")).unwrap()).unwrap();
        assert_eq!(manifest["nodes"], serde_json::json!([2]));
        let mut children = 0;
        for p in manifest["points"].as_array().unwrap() {
            for run in p["runs"].as_array().unwrap() {
                let Some(command) = run["command"].as_str() else {
                    continue;
                };
                children += 1;
                let id = p["id"].as_str().unwrap();
                let result: Value =
                    serde_json::from_slice(&std::fs::read(dir.join(run["result"].as_str().unwrap())).unwrap()).unwrap();
                // One process is a run of its own (no cluster section).
                let ranks = result["cluster"]["ranks"].as_u64().unwrap_or(1);
                assert!(
                    command.starts_with("mpirun ") && command.contains(&format!(" -np {ranks} ")),
                    "{command}"
                );
                if ranks > 1 {
                    assert_eq!(result["cluster"]["mode"], "mpi", "{id}");
                }
                let warned = run["warning"].as_str().is_some_and(|w| w.contains("ran on 1 host"));
                assert_eq!(warned, id.contains("nodes2"), "{id}: {run}");
                // The workload file the command names is in the study directory.
                assert!(dir.join("workloads").join(format!("{id}.toml")).exists(), "{id}");
            }
        }
        // size-sweep: the two rows of 10000 files (the others are left out) and the metadata.
        assert_eq!(children, if name == "dfsperf" { 4 } else { 3 }, "{name}");
        let md = std::fs::read_to_string(dir.join("tables.md")).unwrap();
        assert!(
            md.contains("Warnings:") && md.contains("the launcher did not spread them"),
            "{md}"
        );
    }
    assert_eq!(std::fs::read_dir(target.path()).unwrap().count(), 0);
}

/// Ctrl-C during a point of several processes: the study passes it on, the processes write
/// their partial result and end, and the study ends with what it has.
#[test]
fn ctrl_c_reaches_the_processes_of_a_point() {
    let target = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("study");
    // At scale 0.1 the mixtures are time-based, 6 s each.
    let args = ["dfsperf", "--scale", "0.1", "--points", "mix80-procs"];
    let r = interrupted_study(&args, target.path(), &dir, 3000);
    assert_eq!(r.status.code(), Some(130), "{}", String::from_utf8_lossy(&r.stderr));
    let manifest: Value = serde_json::from_slice(&std::fs::read(dir.join("study.json")).unwrap()).unwrap();
    assert_eq!(manifest["status"], "interrupted");
    let run = &manifest["points"][0]["runs"][0];
    assert!(run["command"].as_str().unwrap().contains("--procs 16"), "{run}");
    let result: Value =
        serde_json::from_slice(&std::fs::read(dir.join(run["result"].as_str().unwrap())).unwrap()).unwrap();
    assert_eq!(result["status"], "interrupted", "the processes wrote a partial result");
    assert_eq!(result["cluster"]["ranks"], 16);
    assert_eq!(
        std::fs::read_dir(target.path()).unwrap().count(),
        0,
        "the run cleaned up"
    );
    let left = Command::new("pgrep")
        .args(["-f", &dir.join("workloads").display().to_string()])
        .output()
        .unwrap();
    assert!(left.stdout.is_empty(), "no process of the point is left");
}

/// A launcher that starts nothing, or is not there, fails its points with the reason in their
/// cells; the study goes on and says so.
#[test]
fn a_launcher_that_runs_nothing_fails_its_points_clearly() {
    let target = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    for (launcher, says) in [
        ("sh -c 'exit 0' {np}", "the run ended but its result is not at"),
        (
            "dfsbench-no-such-launcher -np {np}",
            "cannot start `dfsbench-no-such-launcher`",
        ),
    ] {
        let dir = out.path().join(launcher.split_whitespace().next().unwrap());
        let args = [
            "size-sweep",
            "-t",
            target.path().to_str().unwrap(),
            "--scale",
            SCALE,
            "--nodes",
            "2",
            "--points",
            "metadata*",
            "--launcher",
            launcher,
            "--out",
            dir.to_str().unwrap(),
        ];
        let r = study(&args, &BTreeMap::new());
        assert_eq!(r.code, Some(1), "{launcher}: {}", r.stderr);
        assert!(r.stderr.contains("1 of 2 runs failed"), "{}", r.stderr);
        let manifest: Value = serde_json::from_slice(&std::fs::read(dir.join("study.json")).unwrap()).unwrap();
        assert_eq!(manifest["status"], "complete");
        let error = manifest["points"][1]["runs"][0]["error"].as_str().unwrap();
        assert!(error.contains(says), "{launcher}: {error}");
    }
}

// ---------------------------------------------------------------- the study page

/// `dfsbench study ARGS --out DIR` that must succeed; returns DIR's tables.md.
/// A number whose phase the run report marks `[cache?]` keeps the mark in the study's tables,
/// with the reason in a footnote and in the long CSV's note.
#[test]
fn a_cell_from_a_phase_marked_cache_keeps_the_mark() {
    let target = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("s");
    let t = format!("disk={}", target.path().display());
    study_ok(&["size-sweep", "-t", &t, "--scale", SCALE], &dir);
    let long = std::fs::read_to_string(dir.join("tables.csv")).unwrap();
    let mut lines = long.lines();
    let head = fields(lines.next().unwrap());
    let col = |name: &str| head.iter().position(|h| h == name).unwrap();
    let read = lines
        .map(fields)
        .find(|f| f[col("column")].starts_with("read") && !f[col("value")].is_empty())
        .expect("a read cell with a number");
    let file = dir.join(&read[col("result")]);
    let mut doc: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let why = "served from client cache? a test's reason";
    for p in doc["phases"].as_array_mut().unwrap() {
        if p["label"] == read[col("phase")].as_str() {
            p["cache_suspect"] = serde_json::json!([why]);
        }
    }
    std::fs::write(&file, serde_json::to_vec(&doc).unwrap()).unwrap();

    let md = study(&["size-sweep", "--from", dir.to_str().unwrap()], &BTreeMap::new());
    assert_eq!(md.code, Some(0), "{}", md.stderr);
    assert!(md.stdout.contains(" [cache?] ["), "the cell: {}", md.stdout);
    assert!(
        md.stdout.contains(&format!("[cache?] {why}")),
        "the footnote: {}",
        md.stdout
    );
    let csv = study(
        &["size-sweep", "--from", dir.to_str().unwrap(), "--format", "csv"],
        &BTreeMap::new(),
    );
    assert!(csv.stdout.contains(why), "the note: {}", csv.stdout);
    let (_, page) = study_page(&dir);
    assert!(page.contains("[cache?]"), "the study page");
}

fn study_ok(args: &[&str], dir: &Path) -> String {
    let mut a = args.to_vec();
    a.extend(["--out", dir.to_str().unwrap()]);
    let r = study(&a, &BTreeMap::new());
    assert_eq!(r.code, Some(0), "{args:?}: {}", r.stderr);
    r.stdout
}

/// `dfsbench report DIR -o DIR.html`; returns the page's path and text.
fn study_page(dir: &Path) -> (std::path::PathBuf, String) {
    let html = dir.with_extension("html");
    let out = Command::new(bin())
        .args(["report", dir.to_str().unwrap(), "-o", html.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&html).unwrap();
    (html, text)
}

fn chromium() -> Option<String> {
    let out = Command::new("sh")
        .args([
            "-c",
            "command -v chromium || command -v chromium-browser || command -v google-chrome",
        ])
        .output()
        .ok()?;
    let p = String::from_utf8_lossy(&out.stdout).lines().next()?.trim().to_string();
    (!p.is_empty()).then_some(p)
}

fn headless(chrome: &str) -> Command {
    let mut c = Command::new(chrome);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--no-first-run",
        "--disable-extensions",
        "--disable-background-networking",
        "--enable-logging=stderr",
        "--v=0",
    ]);
    c
}

/// Measures the study page as Chromium lays it out: the order of its sections, whether the run
/// cards are folded, each study figure's size, texts and colours, and the page's system legend.
const PAGE_SCRIPT: &str = r#"<script>
const out = { errors: [], order: [], folded: null, figures: [], legend: {}, tables: [] };
window.addEventListener('error', e => out.errors.push(String(e.message)));
const at = id => document.getElementById(id);
const ids = ['figures', 'tables', 'per-run', 'run-cards'];
for (let i = 0; i + 1 < ids.length; i++)
  out.order.push(!!(at(ids[i]) && at(ids[i + 1]) &&
    (at(ids[i]).compareDocumentPosition(at(ids[i + 1])) & Node.DOCUMENT_POSITION_FOLLOWING)));
out.folded = ['run-cards', 'run-charts'].every(id => at(id) && at(id).tagName === 'DETAILS' && !at(id).open);
document.querySelectorAll('#systems .system').forEach(s =>
  out.legend[s.querySelector('b').textContent] = s.dataset.colour.toUpperCase());
document.querySelectorAll('figure.study').forEach(f => {
  const svg = f.querySelector('svg');
  const box = svg.getBoundingClientRect();
  const colours = new Set();
  svg.querySelectorAll('polyline, rect, circle, path, polygon').forEach(e => {
    for (const a of ['stroke', 'fill']) {
      const c = (e.getAttribute(a) || '').toUpperCase();
      if (c.startsWith('#')) colours.add(c);
    }
  });
  out.figures.push({ title: f.dataset.title, width: box.width, height: box.height,
    systems: JSON.parse(f.dataset.systems), colours: [...colours],
    texts: [...svg.querySelectorAll('text')].map(t => t.textContent.trim()) });
});
document.querySelectorAll('#tables .scroll').forEach(s =>
  out.tables.push({ box: s.getBoundingClientRect().right, page: document.querySelector('main').getBoundingClientRect().right }));
const pre = document.createElement('pre');
pre.id = 'dfsbench-check';
pre.textContent = JSON.stringify(out);
document.body.appendChild(pre);
</script>"#;

/// A screenshot of the page (to look at) and the measurements of PAGE_SCRIPT.
fn open_page(chrome: &str, html: &Path, name: &str) -> Value {
    let shot = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("study-page-{name}.png"));
    let out = headless(chrome)
        .arg("--window-size=1280,3000")
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", html.display()))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(std::fs::metadata(&shot).unwrap().len() > 10_000, "a screenshot");
    println!("screenshot: {}", shot.display());
    let probe = html.with_extension("probe.html");
    let page = std::fs::read_to_string(html).unwrap();
    std::fs::write(&probe, page.replace("</body>", &format!("{PAGE_SCRIPT}</body>"))).unwrap();
    let out = headless(chrome)
        .arg("--window-size=1280,1000")
        .arg("--dump-dom")
        .arg(format!("file://{}", probe.display()))
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&out.stdout);
    let tag = "<pre id=\"dfsbench-check\">";
    let start = dom.find(tag).expect("the check ran") + tag.len();
    let end = start + dom[start..].find("</pre>").unwrap();
    let text = dom[start..end]
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.lines().any(|l| l.contains("CONSOLE") || l.contains("Uncaught")),
        "console output: {stderr}"
    );
    serde_json::from_str(&text).unwrap()
}

/// Figures, then tables, then the per-run data, with the run cards folded at the end; every
/// figure has one legend entry per system and gives each system the colour of the page's
/// legend; wide tables stay inside the page.
fn check_page(v: &Value, systems: &[&str], figures: usize) {
    assert_eq!(v["errors"], serde_json::json!([]));
    assert_eq!(
        v["order"],
        serde_json::json!([true, true, true]),
        "figures, tables, per run, run cards"
    );
    assert_eq!(
        v["folded"], true,
        "the run cards and the charts with a legend entry per run are folded"
    );
    let legend = v["legend"].as_object().unwrap();
    assert_eq!(legend.len(), systems.len(), "the page legend: {legend:?}");
    let colours: Vec<&str> = systems.iter().map(|s| legend[*s].as_str().unwrap()).collect();
    let distinct: std::collections::BTreeSet<&&str> = colours.iter().collect();
    assert_eq!(distinct.len(), systems.len(), "a colour per system: {colours:?}");
    let figs = v["figures"].as_array().unwrap();
    assert_eq!(figs.len(), figures, "figures drawn");
    for f in figs {
        let title = f["title"].as_str().unwrap();
        assert!(
            f["width"].as_f64().unwrap() > 300.0 && f["height"].as_f64().unwrap() > 150.0,
            "{title}"
        );
        let texts: Vec<&str> = f["texts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap())
            .collect();
        assert!(texts.contains(&title), "{title}: {texts:?}");
        let used: Vec<String> = f["colours"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap().to_string())
            .collect();
        for (s, c) in systems.iter().zip(&colours) {
            assert_eq!(
                texts.iter().filter(|t| *t == s).count(),
                1,
                "{title}: one legend entry for {s}: {texts:?}"
            );
            assert_eq!(
                f["systems"][*s].as_str().unwrap().to_uppercase(),
                *c,
                "{title}: {s}'s colour"
            );
            assert!(
                used.iter().any(|u| u == c),
                "{title}: {s} is drawn in its colour {c}: {used:?}"
            );
        }
        // No colour of the palette other than the systems'.
        for c in dfsbench_report::svg::PALETTE.map(|p| dfsbench_report::svg::hex(p).to_uppercase()) {
            assert!(
                colours.contains(&c.as_str()) || !used.contains(&c),
                "{title}: stray colour {c}"
            );
        }
    }
    for t in v["tables"].as_array().unwrap() {
        assert!(
            t["box"].as_f64().unwrap() <= t["page"].as_f64().unwrap() + 0.5,
            "a table cut at the page's edge: {t}"
        );
    }
}

/// The fio matrix on two systems: a chart per (pattern, block size) with threads on x and a
/// line per system, above the tables, the run cards folded at the end.
#[test]
fn study_page_opens_with_the_publications_figures() {
    let target = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("fio");
    let disk = format!("disk={}", target.path().display());
    study_ok(
        &[
            "fio-matrix",
            "-t",
            &disk,
            "-t",
            "mem=mem://",
            "--scale",
            SCALE,
            "--points",
            "*-t1,*-t2",
        ],
        &dir,
    );
    let doc: Value = serde_json::from_slice(&std::fs::read(dir.join("tables.json")).unwrap()).unwrap();
    assert_eq!(doc["schema"], "dfsbench.study-tables/1");
    assert_eq!(
        doc["figures"].as_array().unwrap().len(),
        12,
        "a figure per (pattern, block size)"
    );
    // Provenance names the publication, not a file.
    assert!(!doc["publication"].as_str().unwrap().contains("seeds/"));
    let (html, text) = study_page(&dir);
    assert!(text.contains("id=\"provenance\">Reproduces Performance evaluation of distributed file systems"));
    let Some(chrome) = chromium() else {
        println!("SKIP: chromium not found: the page was not opened in a browser");
        return;
    };
    let v = open_page(&chrome, &html, "fio-matrix");
    check_page(&v, &["disk", "mem"], 12);
}

/// Cells that cannot run hold a short code with the full reason in a footnote, in tables.md
/// and on the page; the null tests run on every system even when its first point is n/a.
#[test]
fn gaps_have_codes_and_footnotes_and_null_tests_every_column() {
    let target = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("surfnet");
    let disk = format!("disk={}", target.path().display());
    // The 20 ms points come first and are n/a on both: the null tests go with read-256k.
    let md = study_ok(
        &[
            "surfnet",
            "-t",
            &disk,
            "-t",
            "mem=mem://",
            "--scale",
            SCALE,
            "--points",
            "*-20ms,read-256k",
        ],
        &dir,
    );
    let notes: BTreeMap<String, String> = md
        .lines()
        .filter_map(|l| l.strip_prefix("- ["))
        .filter_map(|l| l.split_once("] "))
        .map(|(n, t)| (n.to_string(), t.to_string()))
        .collect();
    let delayed = std::fs::read_to_string(dir.join("table-3.csv")).unwrap();
    for row in delayed.lines().skip(1) {
        for cell in &fields(row)[2..] {
            let (code, n) = cell.rsplit_once(" [").unwrap_or_else(|| panic!("no footnote: {cell}"));
            assert_eq!(code, "n/a: needs a lab target", "{cell}");
            let full = &notes[n.trim_end_matches(']')];
            assert!(
                full.starts_with("n/a: needs a lab target (-t lab:NAME) to add network delay"),
                "{full}"
            );
        }
    }
    // Every cell of every table is short; a footnote holds the rest.
    for i in 1..=5 {
        for row in std::fs::read_to_string(dir.join(format!("table-{i}.csv")))
            .unwrap()
            .lines()
            .skip(1)
        {
            for cell in fields(row) {
                assert!(cell.chars().count() <= 40, "a long cell: {cell}");
            }
        }
    }
    let nulls = std::fs::read_to_string(dir.join("table-1.csv")).unwrap();
    let lines: Vec<Vec<String>> = nulls.lines().map(fields).collect();
    assert_eq!(lines[0][2..], ["value (disk)", "value (mem)"]);
    for l in &lines[1..5] {
        for v in &l[2..] {
            assert!(
                v.parse::<f64>().is_ok_and(|x| x > 0.0),
                "{}: a number per system: {v}",
                l[0]
            );
        }
    }
    let (html, text) = study_page(&dir);
    let note = notes.iter().find(|(_, t)| t.contains("add network delay")).unwrap();
    assert!(
        text.contains(&format!("<sup><a href=\"#note-{}\">", note.0)),
        "a footnote mark on the page"
    );
    assert!(
        text.contains(&format!("<li id=\"note-{}\">{}</li>", note.0, note.1)),
        "the footnote on the page"
    );
    let Some(chrome) = chromium() else {
        return;
    };
    let v = open_page(&chrome, &html, "surfnet");
    // Only the sequential read has a number (read-256k ran).
    check_page(&v, &["disk", "mem"], 1);
}

/// --scale scales counts, never the sizes that are a study's rows: the result files record
/// the publication's file sizes, and rows without a whole file at this scale are left out.
#[test]
fn scale_keeps_the_sizes_of_the_rows() {
    let target = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("sizes");
    let md = study_ok(
        &["size-sweep", "-t", target.path().to_str().unwrap(), "--scale", "0.001"],
        &dir,
    );
    let manifest: Value = serde_json::from_slice(&std::fs::read(dir.join("study.json")).unwrap()).unwrap();
    let mut ran = Vec::new();
    for p in manifest["points"].as_array().unwrap() {
        let id = p["id"].as_str().unwrap();
        let Some((n, s)) = id.strip_prefix('n').and_then(|x| x.split_once("-s")) else {
            continue;
        };
        let (n, s): (u64, u64) = (n.parse().unwrap(), s.parse().unwrap());
        let run = &p["runs"][0];
        if n < 500 {
            assert!(
                run["skipped"].as_str().unwrap().starts_with("left out at scale 0.001"),
                "{id}: {run}"
            );
            continue;
        }
        let doc: Value =
            serde_json::from_slice(&std::fs::read(dir.join(run["result"].as_str().unwrap())).unwrap()).unwrap();
        let sets = &doc["config"]["jobs"][0]["sets"];
        assert_eq!(sets, &serde_json::json!([{"count": n / 1000, "size": s}]), "{id}");
        let write = doc["phases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == "write")
            .unwrap();
        assert_eq!(
            write["bytes"].as_u64().unwrap(),
            n / 1000 * s,
            "{id}: whole files of the row's size"
        );
        ran.push(id.to_string());
    }
    assert_eq!(ran.len(), 6, "{ran:?}");
    // The page draws MiB/s per (N, S) row, a bar per system, from tables.json, or from the
    // manifest and results when the folder has none.
    let (_, page) = study_page(&dir);
    assert_eq!(page.matches("data-kind=\"study-bars\"").count(), 2, "write and read");
    std::fs::remove_file(dir.join("tables.json")).unwrap();
    let (_, again) = study_page(&dir);
    assert_eq!(again.matches("data-kind=\"study-bars\"").count(), 2);
    // tables.json of another schema: one line naming it, exit 2.
    std::fs::write(dir.join("tables.json"), r#"{"schema": "dfsbench.study-tables/9"}"#).unwrap();
    let r = Command::new(bin())
        .args(["report", dir.to_str().unwrap(), "-o", "-"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("has schema \"dfsbench.study-tables/9\""), "{stderr}");
    for (row, least) in [
        ("| 100 | 100 MB |", "0.005"),
        ("| 10 | 1 GB |", "0.05"),
        ("| 1 | 10 GB |", "0.5"),
    ] {
        let line = md.lines().find(|l| l.starts_with(row)).unwrap();
        assert!(line.contains("n/a: left out at this scale ["), "{line}");
        assert!(md.contains(&format!("run with --scale {least} or more")), "{row}");
    }
}
