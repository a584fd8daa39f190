//! Every network backend against a real server started by `dfsbench lab up NAME --dir STATE`: MinIO
//! (single drive and a 6-drive erasure set), SeaweedFS S3, Swift (native API and s3api), HDFS
//! (native RPC and WebHDFS) and WebDAV. Each test starts its server in a private state directory,
//! runs every workload the backend supports, checks the numbers and that nothing is left under the
//! prefix, and stops the server by its PIDs when it ends (even on failure). The servers come from
//! common::lab.

mod common;

use common::lab::{lab_test, Server};
use common::{phase, phases, run_with, u};
use serde_json::Value;
use std::collections::BTreeMap;

/// meta, files (with multipart uploads and verify) and ranged io reads: what every object
/// store and file service supports.
fn common_workloads(s: &Server, target: &str, backend: &str, part_size: bool) {
    let r = s.run_ok(target, backend, &["-w", "meta", "-j", "3", "--files", "20"]);
    for name in ["create", "stat", "open", "list", "delete"] {
        assert_eq!(
            u(&phase(&r, name)["ops"]),
            if name == "list" { 3 } else { 60 },
            "{backend} {name}"
        );
    }
    assert_eq!(u(&phase(&r, "list")["items"]), 60, "{backend}: list sees every file");

    // 6 MiB files go up in two parts where the target takes a part size.
    let sizes = "10x0,10x10k,2x6m";
    let r = s.run_ok(
        target,
        backend,
        &["-w", "files", "-j", "2", "--sizes", sizes, "--verify"],
    );
    let reads: Vec<&Value> = phases(&r).iter().filter(|p| p["name"] == "read").collect();
    assert_eq!(reads.len(), 3);
    for p in reads.iter().filter(|p| u(&p["bytes"]) > 0) {
        assert_eq!(
            u(&p["verify"]["checked_bytes"]),
            u(&p["bytes"]),
            "{backend}: every byte checked"
        );
        assert_eq!(u(&p["verify"]["mismatches"]), 0);
    }
    assert_eq!(u(&reads[2]["bytes"]), 2 * 2 * (6 << 20));
    assert!(
        u(&reads[2]["ttfb"]["count"]) == 4,
        "{backend}: time to first byte of each read"
    );
    if part_size {
        assert_eq!(r["target"]["details"]["part_size"], (5 << 20).to_string());
    }

    let r = s.run_ok(
        target,
        backend,
        &[
            "-w",
            "io",
            "--rw",
            "randread",
            "-j",
            "2",
            "--bs",
            "64k",
            "--size",
            "1m",
            "--iodepth",
            "4",
            "--verify",
        ],
    );
    let p = phase(&r, "randread");
    assert_eq!(u(&p["ops"]), 2 * 16);
    assert_eq!(p["params"]["ioengine"], "requests");
    assert_eq!(u(&p["verify"]["checked_bytes"]), 2 << 20);
    load_workloads(s, target, backend);
}

/// The mix and iterate workloads and the null tests over the network.
fn load_workloads(s: &Server, target: &str, backend: &str) {
    let r = s.run_ok(
        target,
        backend,
        &[
            "-w",
            "mix",
            "--mix",
            "get=45,put=15,stat=30,delete=5,list=5",
            "--sizes",
            "1k-64k",
            "--files",
            "10",
            "--ops",
            "60",
            "-j",
            "2",
            "--verify",
            "--null-tests",
        ],
    );
    let p = phase(&r, "mix");
    assert_eq!(u(&p["ops"]), 120, "{backend}: every mix operation ran");
    assert_eq!(u(&p["verify"]["mismatches"]), 0);
    let n = &r["null_tests"];
    assert!(n.get("errors").is_none(), "{backend}: {n}");
    assert!(u(&n["round_trip"]["median_ns"]) > 0, "{backend}: {n}");
    assert!(u(&n["bandwidth"]["bytes"]) > 0, "{backend}: {n}");
    if backend == "s3" {
        assert!(
            u(&n["connect"]["median_ns"]) > 0,
            "{backend}: TCP connect to the endpoint: {n}"
        );
    }

    let r = s.run_ok(
        target,
        backend,
        &[
            "-w",
            "iterate",
            "--iterations",
            "2",
            "--shuffle",
            "--files",
            "3",
            "--file-size",
            "10k",
            "-j",
            "2",
            "--verify",
        ],
    );
    assert_eq!(
        u(&phases(&r)[1]["verify"]["checked_bytes"]),
        2 * 3 * 10240,
        "{backend}: shuffled reads"
    );
}

/// Object stores have no rename, no directories and no writes at an offset: asking for them
/// is refused before anything runs, naming the capability and the backend.
fn refuses_what_objects_cannot_do(s: &Server, target: &str, backend: &str) {
    for (args, cap) in [
        (&["-w", "meta", "--phases", "create,rename"][..], "rename"),
        (&["-w", "meta", "--dirs", "3"][..], "directories"),
        (&["-w", "io", "--rw", "randwrite"][..], "positional write"),
    ] {
        let r = s.run(target, args);
        assert_eq!(r.code, Some(1), "{args:?}: {}", r.describe());
        let lines = r.stderr_lines();
        assert_eq!(lines.len(), 1, "{}", r.describe());
        assert!(lines[0].contains(cap) && lines[0].contains(backend), "{}", lines[0]);
    }
}

/// IO500 where nothing is written at an offset (object stores, HDFS), as IOR's S3 backend
/// runs it: ior-easy in whole files, ior-hard a record an object, every record read back and
/// checked, the random 4 KiB reads ranged reads of ior-easy's files, and the find sees them all.
fn io500_without_positional_writes(s: &Server, target: &str, backend: &str) {
    let args = [
        "-w",
        "io500",
        "-j",
        "2",
        "--duration",
        "300ms",
        "--stonewall-wear-out",
        "--easy-file-size",
        "2m",
        "--verify",
    ];
    let run = s.run(target, &args);
    assert!(
        run.stderr
            .contains("ior-hard writes each 47008-byte record as an object of its own"),
        "{}",
        run.describe()
    );
    let r = s.run_ok(target, backend, &args);
    let job = &r["config"]["jobs"][0];
    assert!(job["hard_one_file"] == false && job["easy_one_file"] == false, "{job}");
    // (ops, bytes, verified bytes) of a phase and its wear-out step.
    let moved = |name: &str| {
        phases(&r)
            .iter()
            .filter(|p| p["name"] == name)
            .map(|p| {
                (
                    u(&p["ops"]),
                    u(&p["bytes"]),
                    p["verify"]["checked_bytes"].as_u64().unwrap_or(0),
                )
            })
            .fold((0, 0, 0), |a, b| (a.0 + b.0, a.1 + b.1, a.2 + b.2))
    };
    let (records, bytes, _) = moved("ior-hard-write");
    assert!(
        records > 0 && records % 2 == 0,
        "{backend}: {records} records, evened out"
    );
    assert_eq!(bytes, records * 47008);
    assert_eq!(
        moved("ior-hard-read"),
        (records, bytes, bytes),
        "{backend}: every record checked"
    );
    let (files, bytes, _) = moved("ior-easy-write");
    assert_eq!(bytes, files * (2 << 20));
    assert_eq!(moved("ior-easy-read"), (files, bytes, bytes));
    let (random, bytes, checked) = moved("ior-rnd4K-easy-read");
    assert!(random > 0, "{backend}: random reads ran");
    assert_eq!((bytes, checked), (random * 4096, random * 4096));
    let easy = moved("mdtest-easy-write").0;
    let hard = moved("mdtest-hard-write").0;
    assert_eq!(
        u(&phase(&r, "find")["items"]),
        files + easy + hard + records,
        "{backend}: the find sees every file and every record"
    );
}

/// A train dataset kept beside the runs on the service (`--dataset`): generated once, trained
/// on by a later run without a byte written, refused when half there, and removed by `dfsbench
/// clean` at the location the run named, which leaves the prefix as it was.
fn kept_dataset_beside_the_runs(s: &Server, target: &str, backend: &str) {
    let layout = [
        "-w",
        "train",
        "--files",
        "6",
        "--samples-per-file",
        "2",
        "--sample-size",
        "8k",
        "--batch-size",
        "2",
        "--accelerators",
        "1",
        "--epochs",
        "1",
        "--compute-time",
        "1ms",
    ];
    let with = |extra: &[&'static str]| [&layout[..], extra].concat();
    let made = s.run(target, &with(&["--phases", "generate", "--dataset", "kd"]));
    assert_eq!(made.code, Some(0), "{backend}: {}", made.describe());
    let note = made
        .stderr_lines()
        .into_iter()
        .find(|l| l.contains("kept after the run"));
    let note = note.unwrap_or_else(|| panic!("{backend}: no note of the kept dataset: {}", made.describe()));
    // `dfsbench clean LOCATION` removes it: the location is the target's URI and the name.
    let location = note
        .split('`')
        .nth(1)
        .and_then(|c| c.strip_prefix("dfsbench clean "))
        .unwrap();
    assert!(location.contains("/dfsbench-dataset-kd"), "{backend}: {location}");
    let dataset = u(&phase(made.result(), "generate")["bytes"]);
    let r = s.run_ok(target, backend, &with(&["--phases", "train", "--dataset", "kd"]));
    assert!(
        phases(&r).iter().all(|p| p["name"] != "generate"),
        "{backend}: not generated again"
    );
    let e = phase(&r, "train");
    assert_eq!(
        (u(&e["ops"]), u(&e["bytes"])),
        (12, dataset),
        "{backend}: every sample read once"
    );
    let other = s.run(target, &with(&["--phases", "generate", "--dataset", "kd"]));
    assert_eq!(other.code, Some(1), "{backend}: {}", other.describe());
    assert!(
        other.stderr.contains("dataset 'kd' is already at"),
        "{}",
        other.describe()
    );
    let mut clean = s.command();
    let out = clean.args(["clean", location]).output().unwrap();
    assert!(
        out.status.success(),
        "{backend}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let gone = s.run(target, &with(&["--phases", "train", "--dataset", "kd"]));
    assert!(
        gone.stderr.contains("no dataset 'kd' at"),
        "{backend}: {}",
        gone.describe()
    );
}

/// What a file service adds: directory trees, and rename where the service has it.
fn file_service_workloads(s: &Server, target: &str, backend: &str, rename: bool) {
    let r = s.run_ok(
        target,
        backend,
        &["-w", "meta", "-j", "2", "--files", "10", "--dirs", "7", "--branch", "2"],
    );
    let expected: Vec<&str> = ["mkdir", "create", "stat", "open", "list", "rename", "delete", "rmdir"]
        .into_iter()
        .filter(|p| rename || *p != "rename")
        .collect();
    assert_eq!(common::names(&r), expected, "{backend}");
    for name in expected {
        let ops = match name {
            "mkdir" | "rmdir" => 14,
            "list" => 2,
            _ => 20,
        };
        assert_eq!(u(&phase(&r, name)["ops"]), ops, "{backend} {name}");
    }
}

#[test]
fn minio_single_drive() {
    lab_test("minio", |s| {
        let target = s.s3_uri("&part_size=5m&part_concurrency=2");
        common_workloads(s, &target, "s3", true);
        refuses_what_objects_cannot_do(s, &target, "s3");
        io500_without_positional_writes(s, &target, "s3");
        kept_dataset_beside_the_runs(s, &target, "s3");
        // The rename phase of a default meta run is skipped on object stores, with a note.
        let r = s.run(&s.s3_uri(""), &["-w", "meta", "--files", "5", "-j", "1"]);
        assert_eq!(r.code, Some(0), "{}", r.describe());
        assert!(
            r.stderr.contains("no rename: skipping the rename phase"),
            "{}",
            r.describe()
        );
    });
}

#[test]
fn minio_erasure_set() {
    lab_test("minio-ec", |s| {
        common_workloads(s, &s.s3_uri("&part_size=5m"), "s3", true)
    });
}

#[test]
fn seaweedfs_s3() {
    lab_test("seaweedfs", |s| common_workloads(s, &s.s3_uri(""), "s3", false));
}

#[test]
fn swift_native_and_s3api() {
    lab_test("swift", |s| {
        let native = format!("swift://{}/bench", s.var("DFSBENCH_SWIFT_CONTAINER"));
        common_workloads(s, &native, "swift", false);
        common_workloads(s, &s.s3_uri(""), "s3", false);
    });
}

#[test]
fn hdfs_native_and_webhdfs() {
    lab_test("hdfs", |s| {
        let native = format!("{}/bench", s.var("DFSBENCH_HDFS_URL"));
        common_workloads(s, &native, "hdfs", false);
        file_service_workloads(s, &native, "hdfs", true);
        io500_without_positional_writes(s, &native, "hdfs");
        kept_dataset_beside_the_runs(s, &native, "hdfs");
        let web = s.var("DFSBENCH_HDFS_HTTP").replacen("http://", "webhdfs://", 1);
        let web = format!("{}/bench", web.trim_end_matches('/'));
        common_workloads(s, &web, "webhdfs", false);
        // OpenDAL's WebHDFS service has no rename: the default meta phases skip it.
        file_service_workloads(s, &web, "webhdfs", false);
    });
}

#[test]
fn webdav() {
    lab_test("webdav", |s| {
        let url = s.var("DFSBENCH_WEBDAV_URL").replacen("http://", "webdav://", 1);
        let collection = s.var("DFSBENCH_WEBDAV_COLLECTION").trim_matches('/');
        let target = format!("{}/{collection}/bench", url.trim_end_matches('/'));
        common_workloads(s, &target, "webdav", false);
        file_service_workloads(s, &target, "webdav", true);
    });
}

/// One store behind two gateways (the same MinIO as 127.0.0.1 and as localhost): workers are
/// spread over them round-robin, each gateway's figures are reported, and they add up to the
/// phase's.
#[test]
fn s3_workers_spread_over_several_endpoints() {
    lab_test("minio", |s| {
        let endpoint = s.var("DFSBENCH_S3_ENDPOINT");
        let port = endpoint.rsplit(':').next().unwrap();
        let bucket = s.var("DFSBENCH_S3_BUCKET");
        let gateways = [format!("http://127.0.0.1:{port}"), format!("http://localhost:{port}")];
        let hosts = format!("127.0.0.1:{port},localhost:{port}");
        let file = s.state.path().join("spread.toml");
        let text = format!(
            "endpoints = [\"127.0.0.1:{port}\", \"localhost:{port}\"]\n[[job]]\nworkload = \"files\"\nworkers = 5\nsizes = [\"6x4k\"]\n"
        );
        std::fs::write(&file, text).unwrap();
        let file = file.display().to_string();
        let flags = ["-w", "files", "-j", "5", "--sizes", "6x4k"];
        let with_endpoints = [&flags[..], &["--endpoints", &hosts]].concat();
        for (target, args) in [
            (format!("s3://{hosts}/{bucket}/bench"), &flags[..]),
            (
                format!("s3://{bucket}/bench?endpoint={}", gateways.join(",")),
                &flags[..],
            ),
            // The same gateways from --endpoints, and from a workload file's `endpoints`.
            (format!("s3://{bucket}/bench"), &with_endpoints[..]),
            (format!("s3://{bucket}/bench"), &[file.as_str()][..]),
        ] {
            let r = s.run(&target, args);
            assert_eq!(r.code, Some(0), "{target}: {}", r.describe());
            let result = r.result();
            assert_eq!(result["target"]["details"]["endpoints"], gateways.join(","));
            for p in phases(result).iter().filter(|p| p["prepare"] != true) {
                let eps = p["endpoints"].as_array().expect("per-endpoint figures");
                let names: Vec<&str> = eps.iter().map(|e| e["endpoint"].as_str().unwrap()).collect();
                assert_eq!(names, gateways, "{}", p["label"]);
                // Workers 0, 2, 4 on the first gateway, 1 and 3 on the second.
                let workers: Vec<u64> = eps.iter().map(|e| u(&e["workers"])).collect();
                assert_eq!(workers, [3, 2], "{}", p["label"]);
                for field in ["ops", "bytes", "errors"] {
                    let sum: u64 = eps.iter().map(|e| u(&e[field])).sum();
                    let whole = if field == "errors" {
                        &p["errors"]["total"]
                    } else {
                        &p[field]
                    };
                    assert_eq!(sum, u(whole), "{}: {field}", p["label"]);
                }
                let counted: u64 = eps.iter().map(|e| u(&e["latency"]["count"])).sum();
                assert_eq!(counted, u(&p["latency"]["count"]), "{}", p["label"]);
                assert!(eps.iter().all(|e| u(&e["ops"]) > 0), "{}: {eps:?}", p["label"]);
            }
            assert!(
                r.stdout.contains("phase / endpoint") && r.stdout.contains(&format!("  {}", gateways[1])),
                "{}",
                r.describe()
            );
        }
    });
}

/// Start-up errors are one line that says what to fix; the run never starts.
#[test]
fn s3_start_errors_are_one_line() {
    lab_test("minio", |s| {
        let endpoint = s.var("DFSBENCH_S3_ENDPOINT");
        let port: u16 = endpoint.rsplit(':').next().unwrap().parse().unwrap();
        let closed = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let cases: Vec<(String, BTreeMap<&str, &str>, &str)> = vec![
            (
                format!("s3://dfsbench/x?endpoint=http://127.0.0.1:{closed}"),
                BTreeMap::new(),
                "cannot connect",
            ),
            (
                s.s3_uri(""),
                BTreeMap::from([("AWS_SECRET_ACCESS_KEY", "wrong-secret")]),
                "credentials",
            ),
            (
                format!("s3://no-such-bucket/x?endpoint={endpoint}"),
                BTreeMap::new(),
                "--create-bucket",
            ),
            (
                format!("s3://dfsbench/x?endpoint=https://127.0.0.1:{port}"),
                BTreeMap::new(),
                "TLS",
            ),
        ];
        for (target, env, fix) in cases {
            let mut cmd = s.command();
            cmd.envs(env);
            let r = run_with(cmd, &target, &["-w", "meta", "--files", "1", "-j", "1"]);
            assert_eq!(r.code, Some(1), "{target}: {}", r.describe());
            let lines = r.stderr_lines();
            assert_eq!(lines.len(), 1, "{target}: {}", r.describe());
            assert!(lines[0].contains(fix), "{target}: expected '{fix}' in: {}", lines[0]);
            assert!(!r.stderr.contains("panicked"));
            s.assert_no_secrets(&r);
        }
        // --create-bucket makes the missing bucket and runs.
        let target = format!("s3://made-by-dfsbench/x?endpoint={endpoint}");
        s.run_ok(
            &target,
            "s3",
            &["-w", "meta", "--files", "2", "-j", "1", "--create-bucket"],
        );
    });
}

/// A server that dies mid-run: errors are counted by kind with their time in the series, the
/// run stops at --max-errors and the partial result is written.
#[test]
fn s3_server_dies_mid_run() {
    lab_test("minio", |s| {
        let cmd = s.command();
        let target = s.s3_uri("");
        // The one MinIO process, as `dfsbench lab env` names it.
        let pid: i32 = s.var("DFSBENCH_SERVER_PIDS").parse().expect("one PID");
        let kill = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(1500));
            // SAFETY: kill(2) on the PID the lab recorded for this test's server.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        });
        let r = run_with(
            cmd,
            &target,
            &[
                "-w",
                "files",
                "-j",
                "2",
                "--file-size",
                "4k",
                "--duration",
                "20s",
                "--max-errors",
                "5",
                "--phases",
                "write",
            ],
        );
        kill.join().unwrap();
        assert_eq!(r.code, Some(1), "{}", r.describe());
        // One line says why the run stopped; with the server gone, one more says the run prefix
        // could not be removed.
        let lines = r.stderr_lines();
        let (stop, rest): (Vec<&str>, Vec<&str>) = lines.iter().partition(|l| l.contains("stopped after 5 errors"));
        assert_eq!(stop.len(), 1, "{}", r.describe());
        assert!(
            rest.iter()
                .all(|l| l.starts_with("dfsbench: could not remove the run directory")),
            "{}",
            r.describe()
        );
        assert!(!r.stderr.contains("panicked"));
        let result = r.result();
        assert_eq!(result["status"], "aborted");
        let p = &phases(result)[0];
        assert!(u(&p["ops"]) > 0, "writes before the server died are kept");
        let errors = u(&p["errors"]["total"]);
        assert!((5..=6).contains(&errors), "{}", p["errors"]);
        let series_errors: u64 = p["series"]["errors"].as_array().unwrap().iter().map(u).sum();
        assert_eq!(series_errors, errors, "errors are in the per-second series");
        assert!(p["errors"]["samples"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["time_s"].as_f64().unwrap() >= 1.0));
        s.assert_no_secrets(&r);
    });
}
