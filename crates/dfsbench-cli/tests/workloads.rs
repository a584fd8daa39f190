//! Every workload on both backends (a temp directory and mem://): the phases that run and
//! the counts they report.

mod common;

use common::{expect_ok, f, measured, names, phase, phases, run, run_ok, u, Target};
use serde_json::Value;

/// Size-based meta: every phase does its items once per worker.
fn check_meta_counts(r: &Value, workers: u64, files: u64, dirs: u64) {
    for p in phases(r) {
        let ops = u(&p["ops"]);
        let label = &p["label"];
        assert_eq!(u(&p["bytes"]), 0, "{label}: metadata moves no data");
        let want = match p["name"].as_str().unwrap() {
            "mkdir" | "rmdir" => workers * dirs,
            "list" => workers,
            _ => workers * files,
        };
        assert_eq!(ops, want, "{label}: ops");
        assert_eq!(
            u(&p["params"]["items_per_worker"]),
            if matches!(p["name"].as_str(), Some("mkdir" | "rmdir")) {
                dirs
            } else {
                files
            },
            "{label}: items_per_worker"
        );
    }
}

#[test]
fn meta_all_phases_per_worker_tree() {
    for t in Target::both() {
        // dirs > 0 adds mkdir and rmdir to the default phases; --branch 2 makes a deep tree
        // whose parents must exist before their children (and be removed after them).
        let r = run_ok(
            &t,
            &[
                "-w", "meta", "-j", "3", "--files", "20", "--dirs", "15", "--branch", "2",
            ],
        );
        assert_eq!(
            names(&r),
            ["mkdir", "create", "stat", "open", "list", "rename", "delete", "rmdir"],
            "{}",
            t.uri()
        );
        check_meta_counts(&r, 3, 20, 15);
        // Each worker lists its own directory, holding its own files.
        assert_eq!(u(&phase(&r, "list")["items"]), 3 * 20);
        assert_eq!(phase(&r, "create")["params"]["layout"], "per-worker");
        assert_eq!(r["config"]["jobs"][0]["branch"], 2);
    }
}

#[test]
fn meta_shared_layout_flat_dirs() {
    for t in Target::both() {
        let r = run_ok(
            &t,
            &[
                "-w", "meta", "-j", "3", "--files", "10", "--dirs", "4", "--layout", "shared",
            ],
        );
        assert_eq!(names(&r).len(), 8);
        check_meta_counts(&r, 3, 10, 4);
        // Every worker lists the shared directory after all workers created their files (the
        // barrier), so each one sees every file.
        assert_eq!(u(&phase(&r, "list")["items"]), 3 * 3 * 10, "{}", t.uri());
        assert_eq!(phase(&r, "stat")["params"]["layout"], "shared");
    }
}

#[test]
fn meta_chosen_phases_without_dirs() {
    for t in Target::both() {
        let r = run_ok(
            &t,
            &[
                "-w",
                "meta",
                "-j",
                "2",
                "--files",
                "7",
                "--phases",
                "delete,create,stat",
            ],
        );
        assert_eq!(names(&r), ["create", "stat", "delete"]);
        check_meta_counts(&r, 2, 7, 0);
    }
}

#[test]
fn meta_time_based_create() {
    for t in Target::both() {
        let r = run_ok(&t, &["-w", "meta", "-j", "2", "--duration", "300ms"]);
        let create = phase(&r, "create");
        let created = u(&create["ops"]);
        assert!(created > 0);
        assert!(f(&create["duration_s"]) >= 0.25, "{}", create["duration_s"]);
        // The reads go round the files that exist for the duration; the changes make one pass.
        for name in ["stat", "open", "list"] {
            let p = phase(&r, name);
            assert!(f(&p["duration_s"]) >= 0.25, "{name}: {}", p["duration_s"]);
            assert!(u(&p["ops"]) > 0, "{name}");
        }
        // Every worker lists its directory at least once, each listing all its files.
        assert!(u(&phase(&r, "list")["items"]) >= created);
        for name in ["rename", "delete"] {
            assert_eq!(u(&phase(&r, name)["ops"]), created, "{name}");
        }
    }
}

#[test]
fn files_size_sweep() {
    // 0-byte files, a file smaller than a block, and sizes that are not a multiple of bs.
    let sets = [(5u64, 0u64), (4, 1000), (3, 4096), (2, 10_000)];
    let sizes = sets.map(|(n, s)| format!("{n}x{s}")).join(",");
    for t in Target::both() {
        let r = run_ok(&t, &["-w", "files", "-j", "2", "--sizes", &sizes, "--bs", "4k"]);
        assert_eq!(phases(&r).len(), 12, "write, read, delete per size");
        for (i, (count, size)) in sets.iter().enumerate() {
            let ps = &phases(&r)[i * 3..i * 3 + 3];
            for (p, name) in ps.iter().zip(["write", "read", "delete"]) {
                let label = &p["label"];
                assert_eq!(p["name"], name, "{label}");
                assert_eq!(u(&p["params"]["file_size"]), *size, "{label}");
                assert_eq!(u(&p["params"]["files_per_worker"]), *count, "{label}");
                assert_eq!(u(&p["params"]["bs"]), 4096, "{label}");
                assert_eq!(u(&p["ops"]), 2 * count, "{label}: ops == workers x files");
                let bytes = if name == "delete" { 0 } else { u(&p["ops"]) * size };
                assert_eq!(u(&p["bytes"]), bytes, "{label}: bytes == ops x file size");
            }
        }
    }
}

#[test]
fn files_fsync_and_write_only() {
    for t in Target::both() {
        let r = run_ok(
            &t,
            &[
                "-w",
                "files",
                "-j",
                "2",
                "--files",
                "3",
                "--file-size",
                "5000",
                "--bs",
                "1k",
                "--fsync",
                "--phases",
                "write",
            ],
        );
        assert_eq!(names(&r), ["write"]);
        assert_eq!(u(&phases(&r)[0]["bytes"]), 2 * 3 * 5000);
    }
}

#[test]
fn files_time_based() {
    for t in Target::both() {
        let r = run_ok(
            &t,
            &[
                "-w",
                "files",
                "-j",
                "2",
                "--file-size",
                "3000",
                "--bs",
                "1k",
                "--duration",
                "300ms",
            ],
        );
        let (write, read, delete) = (phase(&r, "write"), phase(&r, "read"), phase(&r, "delete"));
        assert!(u(&write["ops"]) > 0 && u(&read["ops"]) > 0);
        assert_eq!(u(&write["bytes"]), u(&write["ops"]) * 3000);
        assert_eq!(u(&read["bytes"]), u(&read["ops"]) * 3000);
        // Delete is not time-based: it removes every file the write phase made.
        assert_eq!(u(&delete["ops"]), u(&write["ops"]));
    }
}

/// Checks of a size-based io run: the layout phase (for patterns that read) writes every
/// worker's file whole, as one file write (worker 0 writes a shared file for all), and the
/// measured phase does every block of every worker once.
fn check_io(r: &Value, rw: &str, workers: u64, size: u64, bs: u64) {
    let blocks = workers * (size / bs);
    let reads = !matches!(rw, "write" | "randwrite");
    // `--ioengine auto` on a directory probes the engines first (see check_probe).
    let probed = names(r).contains(&"probe".to_string());
    let mut expected: Vec<&str> = if reads { vec!["layout"] } else { vec![] };
    expected.extend(probed.then_some("probe"));
    expected.push(rw);
    assert_eq!(names(r), expected);
    if probed {
        check_probe(r, rw);
    }
    if reads {
        let layout = phase(r, "layout");
        assert_eq!(layout["prepare"], true);
        let files = if layout["params"]["shared_file"] == true {
            1
        } else {
            workers
        };
        assert_eq!(u(&layout["ops"]), files, "layout writes each file once");
        assert_eq!(u(&layout["bytes"]), blocks * bs, "layout writes every block");
    }
    let p = phase(r, rw);
    assert_eq!(p["prepare"], false);
    assert_eq!(p["params"]["rw"], rw);
    assert_eq!(u(&p["ops"]), blocks, "{rw}: ops == workers x size / bs");
    assert_eq!(u(&p["bytes"]), u(&p["ops"]) * bs, "{rw}: bytes == ops x bs");
    let mixed = matches!(rw, "readwrite" | "randrw");
    assert_eq!(p["params"].get("rwmixread").is_some(), mixed);
    if mixed {
        let kinds = p["ops_by_kind"].as_array().expect("ops_by_kind in a mixed phase");
        let ops: Vec<&str> = kinds.iter().map(|k| k["op"].as_str().unwrap()).collect();
        assert_eq!(ops, ["read", "write"]);
        assert_eq!(u(&kinds[0]["ops"]) + u(&kinds[1]["ops"]), u(&p["ops"]));
        for k in kinds {
            assert_eq!(u(&k["bytes"]), u(&k["ops"]) * bs);
        }
    } else {
        assert!(p.get("ops_by_kind").is_none(), "{rw}: one kind only");
    }
}

/// The probe of `--ioengine auto` before pattern `rw`: an unmeasured phase that records every
/// engine's blocks per second, and the measured phase runs on one of them and records them too.
fn check_probe(r: &Value, rw: &str) {
    let probe = phase(r, "probe");
    assert_eq!(probe["prepare"], true, "the probe is not measured");
    let figures = probe["params"]["ioengine_probe"]
        .as_object()
        .expect("the probe's figures");
    assert!(figures.contains_key("psync"), "psync always runs: {figures:?}");
    for (engine, v) in figures {
        assert!(["psync", "libaio", "io_uring"].contains(&engine.as_str()), "{engine}");
        assert!(f(v) > 0.0, "{engine}: {v}");
    }
    let p = phase(r, rw);
    assert_eq!(p["params"]["ioengine_probe"], probe["params"]["ioengine_probe"]);
    let ran = p["params"]["ioengine"].as_str().expect("the engine that ran");
    assert!(figures.contains_key(ran), "ran {ran}, a probed engine");
    assert_eq!(probe["params"]["ioengine"], ran, "the probe phase names its pick");
}

#[test]
fn io_every_pattern() {
    for t in Target::both() {
        for rw in ["read", "write", "randread", "randwrite", "readwrite", "randrw"] {
            let r = run_ok(&t, &["-w", "io", "--rw", rw, "-j", "2", "--bs", "4k", "--size", "128k"]);
            check_io(&r, rw, 2, 128 << 10, 4096);
            assert_eq!(u(&phase(&r, rw)["params"]["iodepth"]), 1);
            // Only a file backend offers engines to choose from.
            let probed = names(&r).contains(&"probe".to_string());
            assert_eq!(probed, t.path().is_some(), "{}: {rw}", t.uri());
        }
    }
}

/// `auto` with one worker runs the engine its probe measured fastest (psync when it is nearly
/// as fast); an engine the user names runs without a probe.
#[test]
fn io_auto_picks_the_fastest_probed_engine() {
    let t = Target::temp();
    let r = run_ok(
        &t,
        &[
            "-w",
            "io",
            "--rw",
            "randread",
            "-j",
            "1",
            "--size",
            "256k",
            "--iodepth",
            "4",
        ],
    );
    common::validate(&r);
    check_io(&r, "randread", 1, 256 << 10, 4096);
    let probe = phase(&r, "probe");
    let (figures, best) = probe_pick(probe);
    assert_eq!(phase(&r, "randread")["params"]["ioengine"], best, "{figures:?}");

    for engine in ["psync", "libaio"] {
        let r = run_ok(
            &t,
            &["-w", "io", "--rw", "randread", "--size", "256k", "--ioengine", engine],
        );
        assert_eq!(names(&r), ["layout", "randread"], "{engine}: no probe");
        let p = phase(&r, "randread");
        assert_eq!(p["params"]["ioengine"], engine);
        assert!(p["params"].get("ioengine_probe").is_none(), "{engine}");
    }
}

/// A probe phase's figures by engine, and the engine `auto` runs: the one with the most blocks
/// per second, unless psync moved within 5 % of it (psync is kept then, see README).
fn probe_pick(probe: &Value) -> (&serde_json::Map<String, Value>, &str) {
    let figures = probe["params"]["ioengine_probe"].as_object().unwrap();
    let (best, rate) = figures.iter().max_by(|a, b| f(a.1).total_cmp(&f(b.1))).unwrap();
    let pick = match figures.get("psync") {
        Some(p) if f(p) * 1.05 >= f(rate) => "psync",
        _ => best.as_str(),
    };
    (figures, pick)
}

/// `auto` with several workers, in one process and in two: the engine picked from the probe's
/// figures summed over every worker is the one every worker runs, and the result names it once;
/// the trials of all workers line up in time.
#[test]
fn io_auto_every_worker_runs_the_one_pick() {
    let base = ["-w", "io", "--rw", "randread", "--size", "256k", "--iodepth", "4"];
    for (workers, procs) in [("4", "1"), ("2", "2")] {
        let t = Target::temp();
        let mut args = base.to_vec();
        args.extend(["-j", workers, "--procs", procs]);
        let r = run_ok(&t, &args);
        let probe = phase(&r, "probe");
        let (figures, best) = probe_pick(probe);
        assert_eq!(probe["params"]["ioengine"], best, "{args:?}: {figures:?}");
        // Every worker of every rank runs trial k in the k-th window of the phase's clock: 18
        // trials of 25 ms, each after a pause of 25 ms. Load can only make it longer.
        let probe_s = f(&probe["duration_s"]);
        assert!(probe_s >= 0.9, "{args:?}: the probe lasted {probe_s} s");
        let p = phase(&r, "randread");
        assert_eq!(p["params"]["ioengine"], best, "{args:?}: {figures:?}");
        let detail = p["workers_detail"].as_array().unwrap();
        assert_eq!(detail.len(), 4, "{args:?}");
        for w in detail {
            assert_eq!(w["ioengine"], best, "{args:?}: worker {}", w["worker"]);
        }
    }
}

/// libaio moves the same blocks as psync for the same job, and what it reads back is the data
/// written (`--verify` checks every block).
#[test]
fn io_libaio_moves_what_psync_moves() {
    let t = Target::temp();
    for rw in ["write", "randread", "randrw"] {
        let mut moved = Vec::new();
        for (engine, depth) in [("psync", "1"), ("libaio", "1"), ("libaio", "8")] {
            let args = [
                "-w",
                "io",
                "--rw",
                rw,
                "-j",
                "2",
                "--size",
                "128k",
                "--ioengine",
                engine,
                "--iodepth",
                depth,
                "--verify",
            ];
            let r = run_ok(&t, &args);
            check_io(&r, rw, 2, 128 << 10, 4096);
            let p = phase(&r, rw);
            assert_eq!(p["params"]["ioengine"], engine, "{args:?}");
            assert_eq!(p["errors"]["total"], 0, "{args:?}");
            if rw != "write" {
                let read = match p.get("ops_by_kind") {
                    Some(kinds) => u(&kinds[0]["bytes"]),
                    None => u(&p["bytes"]),
                };
                assert_eq!(
                    u(&p["verify"]["checked_bytes"]),
                    read,
                    "{args:?}: every block read is checked"
                );
                assert_eq!(u(&p["verify"]["mismatches"]), 0, "{args:?}");
            }
            moved.push((u(&p["ops"]), u(&p["bytes"])));
        }
        assert!(moved.windows(2).all(|w| w[0] == w[1]), "{rw}: {moved:?}");
    }
}

#[test]
fn io_queue_depth() {
    for t in Target::both() {
        for rw in ["randread", "randwrite", "randrw"] {
            let r = run_ok(
                &t,
                &[
                    "-w",
                    "io",
                    "--rw",
                    rw,
                    "-j",
                    "2",
                    "--bs",
                    "8k",
                    "--size",
                    "256k",
                    "--iodepth",
                    "16",
                ],
            );
            check_io(&r, rw, 2, 256 << 10, 8192);
            let p = phase(&r, rw);
            assert_eq!(u(&p["params"]["iodepth"]), 16);
            assert!(p["label"].as_str().unwrap().ends_with("qd16"), "{}", p["label"]);
        }
    }
}

#[test]
fn io_explicit_engines() {
    let t = Target::temp();
    for engine in ["psync", "io_uring"] {
        let args = [
            "-w",
            "io",
            "--rw",
            "randrw",
            "-j",
            "2",
            "--size",
            "64k",
            "--iodepth",
            "4",
            "--ioengine",
            engine,
        ];
        let r = run(&t.uri(), &args);
        if engine == "io_uring" && r.code != Some(0) {
            eprintln!("note: io_uring unavailable here, not tested: {}", r.stderr.trim());
            continue;
        }
        let r = expect_ok(&t, &args, r);
        check_io(&r, "randrw", 2, 64 << 10, 4096);
        assert_eq!(r["config"]["jobs"][0]["ioengine"], engine);
    }
    // mem:// takes the engine flag and does its own queue-depth-1 I/O.
    let r = run_ok(
        &Target::Mem,
        &[
            "-w",
            "io",
            "--rw",
            "randread",
            "-j",
            "2",
            "--size",
            "64k",
            "--ioengine",
            "psync",
        ],
    );
    check_io(&r, "randread", 2, 64 << 10, 4096);
}

/// `--pre-read` (fio's pre_read) reads every worker's file whole in an unmeasured phase before
/// each pattern that reads, never before a pattern that only writes; the reads record it.
#[test]
fn io_pre_read_before_every_reading_pattern() {
    let t = Target::temp();
    #[rustfmt::skip]
    let args = [
        "-w", "io", "--rw", "write", "--then", "randread,read", "-j", "2", "--size", "256k",
        "--ioengine", "psync", "--pre-read", "--invalidate", "0",
    ];
    let r = run_ok(&t, &args);
    assert_eq!(
        names(&r),
        ["write", "pre-read", "randread", "pre-read", "read"],
        "no layout (the write lays the files out) and no pre-read before the write"
    );
    for p in phases(&r).iter().filter(|p| p["name"] == "pre-read") {
        assert_eq!(p["prepare"], true);
        assert_eq!(u(&p["ops"]), 2, "one whole-file read per worker");
        assert_eq!(u(&p["bytes"]), 2 * (256 << 10), "both files, whole");
    }
    assert_eq!(phase(&r, "randread")["params"]["pre_read"], true);
    assert!(phase(&r, "write")["params"].get("pre_read").is_none());
    assert_eq!(r["config"]["jobs"][0]["pre_read"], true);
    for rw in ["randread", "read"] {
        assert_eq!(u(&phase(&r, rw)["ops"]), 2 * 64, "{rw}: one pass over both files");
    }
}

#[test]
fn io_shared_file() {
    for t in Target::both() {
        for rw in ["randwrite", "read", "randrw"] {
            let r = run_ok(
                &t,
                &[
                    "-w",
                    "io",
                    "--rw",
                    rw,
                    "-j",
                    "3",
                    "--bs",
                    "4k",
                    "--size",
                    "64k",
                    "--shared-file",
                    "--iodepth",
                    "2",
                ],
            );
            check_io(&r, rw, 3, 64 << 10, 4096);
            assert_eq!(phase(&r, rw)["params"]["shared_file"], true);
        }
    }
    // One file of workers x size, each worker in its own region.
    let t = Target::temp();
    let r = run_ok(
        &t,
        &[
            "-w",
            "io",
            "--rw",
            "write",
            "-j",
            "3",
            "--size",
            "64k",
            "--shared-file",
            "--keep",
        ],
    );
    let dirs = t.run_dirs();
    assert_eq!(dirs.len(), 1, "--keep keeps the run directory");
    let io_dir = dirs[0].join("j0-io");
    let entries: Vec<_> = std::fs::read_dir(&io_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(entries, ["shared.dat"]);
    assert_eq!(
        std::fs::metadata(io_dir.join("shared.dat")).unwrap().len(),
        3 * (64 << 10)
    );
    assert_eq!(u(&phase(&r, "write")["bytes"]), 3 * (64 << 10));
}

#[test]
fn io_direct_on_temp_dir() {
    let t = Target::temp();
    if !common::supports_o_direct(t.path().unwrap()) {
        eprintln!("note: the temp directory's file system refuses O_DIRECT: --direct not tested");
        return;
    }
    for rw in ["randread", "write", "randrw"] {
        let r = run_ok(
            &t,
            &[
                "-w",
                "io",
                "--rw",
                rw,
                "-j",
                "2",
                "--size",
                "128k",
                "--iodepth",
                "4",
                "--direct=1",
            ],
        );
        check_io(&r, rw, 2, 128 << 10, 4096);
        assert_eq!(phase(&r, rw)["params"]["direct"], true);
    }
    // Whole files with O_DIRECT, including a size that is not a multiple of the sector.
    let r = run_ok(
        &t,
        &[
            "-w",
            "files",
            "-j",
            "2",
            "--sizes",
            "2x8k,2x10000",
            "--bs",
            "4k",
            "--direct=1",
        ],
    );
    assert_eq!(
        u(&phases(&r)[4]["bytes"]),
        2 * 2 * 10_000,
        "read of the 10000-byte files"
    );
}

#[test]
fn io_time_based_with_ramp() {
    let both = Target::both();
    std::thread::scope(|s| {
        for t in &both {
            // A mixed pattern with a queue on the file system, plain reads in memory.
            let rw = if t.path().is_some() { "randrw" } else { "randread" };
            s.spawn(move || {
                let r = run_ok(
                    t,
                    &[
                        "-w",
                        "io",
                        "--rw",
                        rw,
                        "-j",
                        "2",
                        "--size",
                        "64k",
                        "--iodepth",
                        "4",
                        "--duration",
                        "1s",
                        "--ramp",
                        "300ms",
                    ],
                );
                // The layout is size-based: not ramped, not timed.
                let layout = phase(&r, "layout");
                assert_eq!(f(&layout["ramp_s"]), 0.0);
                assert_eq!(u(&layout["ops"]), 2, "one whole-file write per worker");
                assert_eq!(u(&layout["bytes"]), 2 * (64 << 10));
                let p = phase(&r, rw);
                assert_eq!(f(&p["ramp_s"]), 0.3);
                // The phase ends at its deadline, once the operations in flight complete (each
                // within the slowest latency; a loaded machine can stall one for seconds).
                let d = f(&p["duration_s"]);
                let slowest = f(&p["latency"]["max_ns"]) / 1e9;
                assert!(
                    d >= 1.0 - 1e-3 && d <= 1.0 + slowest + 0.5,
                    "measured {d} s of a 1 s phase after ramp-up (slowest op {slowest} s)"
                );
                let ops = u(&p["ops"]);
                assert!(ops > 0);
                assert_eq!(u(&p["bytes"]), ops * 4096);
                // The series covers ramp-up and the measured second: more than 1 interval.
                let series: u64 = p["series"]["ops"].as_array().unwrap().iter().map(u).sum();
                assert!(
                    series > ops,
                    "ramp-up ops ({series} in the series) are not measured ({ops})"
                );
                assert!(p["series"]["ops"].as_array().unwrap().len() >= 2);
                assert!(f(&p["start_s"]) >= f(&layout["start_s"]) + f(&layout["duration_s"]));
                if rw == "randrw" {
                    let kinds = p["ops_by_kind"].as_array().expect("ops_by_kind");
                    assert_eq!(u(&kinds[0]["ops"]) + u(&kinds[1]["ops"]), ops);
                }
            });
        }
    });
}

#[test]
fn workload_file_with_two_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("two.toml");
    std::fs::write(
        &file,
        r#"
workers = 2

[[job]]
name = "md"
workload = "meta"
files = 10
phases = ["create", "stat", "delete"]

[[job]]
name = "rand"
workload = "io"
rw = "randwrite"
size = "32k"
bs = "4k"
workers = 3
"#,
    )
    .unwrap();
    for t in Target::both() {
        let r = run_ok(&t, &[file.to_str().unwrap()]);
        // On a directory, `auto` probes the engines in an unmeasured phase first.
        let probe = t.path().map(|_| "probe");
        let expected: Vec<&str> = ["create", "stat", "delete"]
            .into_iter()
            .chain(probe)
            .chain(["randwrite"])
            .collect();
        assert_eq!(names(&r), expected);
        let jobs: Vec<(u64, &str, u64)> = measured(&r)
            .iter()
            .map(|p| (u(&p["job"]), p["job_name"].as_str().unwrap(), u(&p["workers"])))
            .collect();
        assert_eq!(jobs, [(0, "md", 2), (0, "md", 2), (0, "md", 2), (1, "rand", 3)]);
        assert_eq!(u(&phase(&r, "create")["ops"]), 20);
        assert_eq!(u(&phase(&r, "randwrite")["ops"]), 3 * 8);
        assert_eq!(measured(&r).len(), 4);
    }
}

/// Jobs of one group run at the same time: a metadata storm beside a streaming writer, then
/// a reader alone; the group's total adds its jobs up, and a start delay holds its job back.
#[test]
fn workload_file_groups_run_jobs_at_the_same_time() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("groups.toml");
    std::fs::write(
        &file,
        r#"
[[job]]
name = "storm"
group = "beside"
workload = "meta"
phases = ["create"]
duration = "1s"
workers = 2

[[job]]
name = "stream"
group = "beside"
workload = "io"
rw = "write"
size = "1m"
bs = "64k"
duration = "1s"
workers = 1
start_delay = "1s"

[[job]]
name = "after"
workload = "io"
rw = "read"
size = "256k"
workers = 1
"#,
    )
    .unwrap();
    for t in Target::both() {
        let r = run_ok(&t, &[file.to_str().unwrap()]);
        let span = |job: &str| {
            let p = measured(&r).into_iter().find(|p| p["job_name"] == job).unwrap();
            let start = f(&p["start_s"]) + f(&p["ramp_s"]);
            (start, start + f(&p["duration_s"]), u(&p["ops"]))
        };
        let (storm, stream, after) = (span("storm"), span("stream"), span("after"));
        // The stream waited a second after the group started, which was after the run did.
        assert!(stream.0 >= 1.0, "{stream:?}");
        // The storm began before the stream ended: together, not one after the other.
        assert!(storm.0 < stream.1, "storm {storm:?}, stream {stream:?}");
        assert!(after.0 >= storm.1.max(stream.1), "after {after:?}");
        let groups = r["groups"].as_array().expect("a group total");
        assert_eq!(groups.len(), 1);
        let g = &groups[0];
        assert_eq!(
            (g["name"].as_str(), g["jobs"].clone()),
            (Some("beside"), serde_json::json!(["storm", "stream"]))
        );
        assert_eq!(u(&g["ops"]), storm.2 + stream.2);
        assert_eq!(u(&g["latency"]["count"]), storm.2 + stream.2);
        let span_s = storm.1.max(stream.1) - storm.0.min(stream.0);
        assert!((f(&g["duration_s"]) - span_s).abs() < 1e-6, "{g}");
    }
    // Jobs of a group run in one process, and are next to each other.
    let t = Target::temp();
    let procs = run(&t.uri(), &[file.to_str().unwrap(), "--procs", "2"]);
    assert_eq!(procs.code, Some(2), "{}", procs.describe());
    assert!(
        procs.stderr.contains(
            "jobs 'storm', 'stream' run at the same time (group 'beside'), which dfsbench does in one process only"
        ),
        "{}",
        procs.stderr
    );
    let apart = dir.path().join("apart.toml");
    let text = std::fs::read_to_string(&file)
        .unwrap()
        .replace("group = \"beside\"\nworkload = \"io\"", "workload = \"io\"");
    std::fs::write(&apart, format!("{text}group = \"beside\"\n")).unwrap();
    let r = run(&t.uri(), &[apart.to_str().unwrap()]);
    assert_eq!(r.code, Some(2), "{}", r.describe());
    assert_eq!(r.stderr_lines().len(), 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("jobs 'storm' and 'after' are in group 'beside' but job 'stream' is between them"),
        "{}",
        r.stderr
    );
}

/// `--files` caps a time-based create phase, as mdtest's `-I` does with `-W`: 200 files per
/// worker and no more, however much time is left; without `--files` creates go on until the
/// time is up.
#[test]
fn files_cap_a_time_based_create() {
    let capped = run_ok(
        &Target::Mem,
        &[
            "-w",
            "meta",
            "--files",
            "200",
            "-j",
            "2",
            "--duration",
            "2s",
            "--phases",
            "create",
        ],
    );
    assert_eq!(u(&phase(&capped, "create")["ops"]), 400);
    let timed = run_ok(
        &Target::Mem,
        &["-w", "meta", "-j", "2", "--duration", "1s", "--phases", "create,delete"],
    );
    let created = u(&phase(&timed, "create")["ops"]);
    assert!(created > 400, "no cap without --files: {created} files");
    assert_eq!(
        u(&phase(&timed, "delete")["ops"]),
        created,
        "later phases work on the files created"
    );
}

/// workloads/ior-easy.toml writes each worker's file and reads that same file back, with no
/// layout of a new one in between; its sizes come from the environment.
#[test]
fn ior_easy_reads_the_files_it_wrote() {
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../../workloads/ior-easy.toml");
    let target = Target::temp();
    let mut cmd = std::process::Command::new(common::bin());
    cmd.envs([("SIZE", "256k"), ("BS", "64k"), ("WORKERS", "3")]);
    let args = [file, "--keep"];
    let r = common::run_with(cmd, &target.uri(), &args);
    let result = expect_ok(&target, &args, r);
    // `auto` probes the engines before each pattern (unmeasured), and no layout runs.
    assert_eq!(names(&result), ["probe", "write", "probe", "read"], "no layout phase");
    for p in measured(&result) {
        assert_eq!(u(&p["workers"]), 3);
        assert_eq!(u(&p["bytes"]), 3 * (256 << 10), "{}", p["label"]);
        assert_eq!(u(&p["ops"]), 3 * 4, "{}", p["label"]);
    }
    // The run directory holds the three files the write made and the read read, each whole.
    let run_dir = &target.run_dirs()[0];
    let mut files: Vec<(String, u64)> = std::fs::read_dir(run_dir.join("j0-io"))
        .unwrap()
        .map(|e| e.unwrap())
        .map(|e| (e.file_name().into_string().unwrap(), e.metadata().unwrap().len()))
        .collect();
    files.sort();
    assert_eq!(
        files,
        [
            ("w0.dat".into(), 256 << 10),
            ("w1.dat".into(), 256 << 10),
            ("w2.dat".into(), 256 << 10)
        ]
    );
}

/// A write cut short by a duration may leave blocks unwritten, so later reads get the file laid
/// out first, from the job's shared data (this combination used to panic without it): on
/// flags and with workloads/ior-easy.toml.
#[test]
fn timed_write_then_read_lays_the_file_out() {
    let args = [
        "-w",
        "io",
        "--rw",
        "write",
        "--then",
        "read",
        "--size",
        "1m",
        "-j",
        "1",
        "--duration",
        "1s",
    ];
    let r = run_ok(&Target::Mem, &args);
    assert_eq!(names(&r), ["layout", "write", "read"]);
    assert!(u(&phase(&r, "read")["ops"]) > 0);

    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../../workloads/ior-easy.toml");
    let mut cmd = std::process::Command::new(common::bin());
    cmd.envs([("SIZE", "256k"), ("BS", "64k"), ("WORKERS", "2")]);
    let args = [file, "--duration", "1s"];
    let r = expect_ok(&Target::Mem, &args, common::run_with(cmd, &Target::Mem.uri(), &args));
    assert_eq!(names(&r), ["layout", "write", "read"]);
}

/// A variable a workload file needs and nobody set is one line naming it, and exit 2;
/// `${NAME:-default}` takes the default.
#[test]
fn workload_file_variables() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("v.toml");
    std::fs::write(
        &file,
        "[[job]]\nworkload = \"io\"\nrw = \"write\"\nsize = \"${DFSBENCH_TEST_UNSET_SIZE}\"\nbs = \"${DFSBENCH_TEST_UNSET_BS:-8k}\"\n",
    )
    .unwrap();
    let r = common::run(&Target::Mem.uri(), &[file.to_str().unwrap()]);
    assert_eq!(r.code, Some(2), "{}", r.describe());
    assert_eq!(
        r.stderr_lines(),
        [format!(
            "dfsbench: {}: line 4: variable DFSBENCH_TEST_UNSET_SIZE is not set: export DFSBENCH_TEST_UNSET_SIZE=VALUE, or give a default as ${{DFSBENCH_TEST_UNSET_SIZE:-VALUE}}",
            file.display()
        )]
    );
    let mut cmd = std::process::Command::new(common::bin());
    cmd.env("DFSBENCH_TEST_UNSET_SIZE", "64k");
    let args = [file.to_str().unwrap()];
    let result = expect_ok(&Target::Mem, &args, common::run_with(cmd, &Target::Mem.uri(), &args));
    assert_eq!(u(&result["config"]["jobs"][0]["size"]), 64 << 10);
    assert_eq!(u(&result["config"]["jobs"][0]["bs"]), 8 << 10);
}

/// `--time_based=0` with a duration: one pass over the file, cut short at the duration (fio's
/// runtime without time_based). 2 ms per operation make a pass of 16384 blocks take 32 s.
#[test]
fn io_runtime_without_time_based_cuts_one_pass() {
    // Paced at 2000 blocks/s, a 64 MiB pass (16384 blocks) takes 8 s on any machine: the
    // 1 s runtime must cut it.
    let slow = "mem://";
    let base = [
        "-w",
        "io",
        "--rw",
        "write",
        "--bs",
        "4k",
        "-j",
        "1",
        "--time_based=0",
        "--rate",
        "2000",
    ];
    let cut = common::run(slow, &[&base[..], &["--size", "64m", "--runtime", "1s"]].concat());
    let r = expect_ok(&Target::Mem, &base, cut);
    let bytes = u(&phase(&r, "write")["bytes"]);
    assert!(bytes > 0 && bytes < 64 << 20, "cut short: {bytes}");
    assert_eq!(r["config"]["jobs"][0]["time_based"], false);
    // A pass that ends before the duration is not repeated.
    let whole = common::run(slow, &[&base[..], &["--size", "64k", "--runtime", "30s"]].concat());
    let r = expect_ok(&Target::Mem, &base, whole);
    assert_eq!(u(&phase(&r, "write")["bytes"]), 64 << 10);
    assert!(f(&phase(&r, "write")["duration_s"]) < 30.0);
}

/// The same for a files job (a study's `--max-point-time`): the write and the read make one
/// pass, cut short at the duration; the delete removes every file the write made.
#[test]
fn files_runtime_without_time_based_cuts_one_pass() {
    // Paced at 500 files/s, 20000 files take 40 s on any machine: the 1 s runtime must cut
    // the write, and the read of what it wrote.
    let base = [
        "-w",
        "files",
        "--file-size",
        "1k",
        "-j",
        "2",
        "--time_based=0",
        "--rate",
        "500",
    ];
    let cut = common::run(
        "mem://",
        &[&base[..], &["--files", "10000", "--runtime", "1s"]].concat(),
    );
    let r = expect_ok(&Target::Mem, &base, cut);
    let (write, read, delete) = (phase(&r, "write"), phase(&r, "read"), phase(&r, "delete"));
    let written = u(&write["ops"]);
    assert!(written > 0 && written < 20_000, "cut short: {written}");
    assert!(u(&read["ops"]) <= written, "one pass: no file read twice");
    assert_eq!(u(&delete["ops"]), written);
    assert_eq!(r["config"]["jobs"][0]["time_based"], false);
    // A pass that ends before the duration is not repeated.
    let whole = common::run("mem://", &[&base[..], &["--files", "20", "--runtime", "30s"]].concat());
    let r = expect_ok(&Target::Mem, &base, whole);
    for op in ["write", "read", "delete"] {
        assert_eq!(u(&phase(&r, op)["ops"]), 40, "{op}");
        assert!(f(&phase(&r, op)["duration_s"]) < 30.0, "{op}");
    }
}

/// A worker opens its io file (and fills its write buffers) before the phase's clock starts,
/// as fio does before its job's: on a store where opening takes 300 ms, the 300 ms fall
/// between the layout's end and the read's start, not into the read phase. Load can only
/// widen that gap.
#[test]
fn io_opens_its_file_before_the_phase_starts() {
    let slow_open = "mem://?latency=300ms";
    let args = ["-w", "io", "--rw", "read", "--size", "8k", "--bs", "4k", "-j", "2"];
    let r = expect_ok(&Target::Mem, &args, run(slow_open, &args));
    let layout = phase(&r, "layout");
    let read = phase(&r, "read");
    assert_eq!(u(&read["ops"]), 2 * 2, "two blocks per worker");
    let gap = f(&read["start_s"]) - (f(&layout["start_s"]) + f(&layout["duration_s"]));
    assert!(
        gap >= 0.3,
        "the open is not timed: {gap} s from the layout's end to the read's start"
    );
}
