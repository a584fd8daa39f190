//! `dfsbench study io500` and the io500 workload: IO500's phases in IO500's order, each moving
//! what IO500's does (47008-byte records interleaved in one file, 3901-byte mdtest-hard files,
//! a find that sees every file), the score computed from the table's own figures, and a run
//! shorter than IO500's rules marked as not valid.

mod common;

use std::path::Path;
use std::process::Command;

use common::{bin, run_ok, Target};
use serde_json::Value;

const ORDER: [&str; 13] = [
    "ior-easy-write",
    "mdtest-easy-write",
    "ior-hard-write",
    "mdtest-hard-write",
    "find",
    "ior-easy-read",
    "mdtest-easy-stat",
    "ior-hard-read",
    "mdtest-hard-stat",
    "mdtest-easy-delete",
    "mdtest-hard-read",
    "mdtest-hard-delete",
    "ior-rnd4K-easy-read",
];
const RECORD: u64 = 47008;
const MD_HARD: u64 = 3901;

fn phases(r: &Value) -> &Vec<Value> {
    r["phases"].as_array().unwrap()
}

/// The measured phase `name` and, summed with it, its wear-out step: (ops, bytes).
fn moved(r: &Value, name: &str) -> (u64, u64) {
    phases(r)
        .iter()
        .filter(|p| p["name"] == name)
        .map(|p| (p["ops"].as_u64().unwrap(), p["bytes"].as_u64().unwrap()))
        .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
}

fn measured<'r>(r: &'r Value, name: &str) -> &'r Value {
    phases(r)
        .iter()
        .find(|p| p["name"] == name && p["prepare"] != true)
        .unwrap_or_else(|| panic!("no measured {name}"))
}

/// What every io500 run must show: the phases in IO500's order (a wear-out step only right
/// after a write), each moving what IO500's moves (whichever way the backend stores ior-easy's
/// and ior-hard's data), and the find seeing every file.
fn check_run(r: &Value, workers: u64) {
    assert_eq!(r["status"], "complete", "{r}");
    let names: Vec<&str> = phases(r)
        .iter()
        .filter(|p| p["prepare"] != true)
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ORDER);
    let mut last = f64::MIN;
    for p in phases(r) {
        let start = p["start_s"].as_f64().unwrap();
        assert!(start >= last, "phases one after another: {}", p["label"]);
        last = start;
        assert_eq!(p["errors"]["total"], 0, "{}", p["label"]);
        if p["prepare"] == true {
            assert!(p["label"].as_str().unwrap().starts_with("wear-out "), "{}", p["label"]);
            assert!(p["name"].as_str().unwrap().ends_with("-write"));
        }
    }
    // ior-hard: whole records, and after the wear-out every worker has as many; the reads
    // find them all.
    let (records, bytes) = moved(r, "ior-hard-write");
    assert!(records > 0);
    assert_eq!(bytes, records * RECORD);
    assert_eq!(records % workers, 0, "wear-out evens the workers out");
    assert_eq!(moved(r, "ior-hard-read"), (records, bytes));
    // mdtest-hard: 3901 bytes into each file and out of it again.
    let (files, bytes) = moved(r, "mdtest-hard-write");
    assert_eq!(bytes, files * MD_HARD);
    assert_eq!(moved(r, "mdtest-hard-read"), (files, files * MD_HARD));
    assert_eq!(moved(r, "mdtest-hard-stat").0, files);
    assert_eq!(moved(r, "mdtest-hard-delete").0, files);
    // mdtest-easy: empty files, every one stat'ed and deleted.
    let (easy, bytes) = moved(r, "mdtest-easy-write");
    assert_eq!(bytes, 0);
    assert_eq!(moved(r, "mdtest-easy-stat").0, easy);
    assert_eq!(moved(r, "mdtest-easy-delete").0, easy);
    // ior-easy: one file per worker written in 2 MiB transfers (whole files on backends
    // without positional writes), all read back.
    let (transfers, ior_bytes) = moved(r, "ior-easy-write");
    assert_eq!(ior_bytes, transfers * (2 << 20));
    assert_eq!(moved(r, "ior-easy-read"), (transfers, ior_bytes));
    // ior-rnd4K-easy-read: whole 4 KiB transfers of ior-easy's files, for the stonewall.
    let (random, bytes) = moved(r, "ior-rnd4K-easy-read");
    assert!(random > 0);
    assert_eq!(bytes, random * 4096);
    assert_eq!(measured(r, "ior-rnd4K-easy-read")["params"]["xfer"], 4096);
    let job = &r["config"]["jobs"][0];
    assert_eq!(
        job["easy_one_file"],
        measured(r, "ior-easy-write")["params"].get("file_size").is_none()
    );
    let ior_files = if job["easy_one_file"] == true {
        workers
    } else {
        transfers
    };
    // ior-hard's one shared file, or an object a record without positional writes.
    let hard_files = if job["hard_one_file"] == true { 1 } else { records };
    // The find lists every file the writes made.
    let find = measured(r, "find");
    assert_eq!(
        find["items"].as_u64().unwrap_or(0),
        ior_files + easy + files + hard_files,
        "the find sees every file"
    );
}

/// `dfsbench run -w io500`, kept: the shared file holds exactly the records of all workers
/// side by side (offsets (i*W + w) * 47008, no gap, no overlap), and --verify reads each
/// record back from the offset it was written at.
#[test]
fn ior_hard_interleaves_records_in_one_shared_file() {
    let target = Target::temp();
    let args = [
        "-w",
        "io500",
        "--workers",
        "3",
        "--duration",
        "300ms",
        "--stonewall-wear-out",
        "--verify",
        "--keep",
    ];
    let r = run_ok(&target, &args);
    check_run(&r, 3);
    let (records, _) = moved(&r, "ior-hard-write");
    let dirs = target.run_dirs();
    assert_eq!(dirs.len(), 1, "the kept run directory");
    // ior-easy: a file per worker, each as many 2 MiB transfers as the others after the
    // wear-out.
    let (transfers, _) = moved(&r, "ior-easy-write");
    for w in 0..3 {
        let f = dirs[0].join(format!("j0-io500/ior-easy/w{w}/file"));
        assert_eq!(
            std::fs::metadata(&f).unwrap().len(),
            transfers / 3 * (2 << 20),
            "{}",
            f.display()
        );
    }
    let file = dirs[0].join("j0-io500/ior-hard/file");
    let len = std::fs::metadata(&file).unwrap().len();
    assert_eq!(len, records * RECORD, "{}", file.display());
    assert!(measured(&r, "ior-hard-read")["verify"]["checked_bytes"].as_u64() == Some(records * RECORD));
    let md_hard = std::fs::read_dir(dirs[0].join("j0-io500/mdtest-hard")).unwrap().count();
    assert_eq!(md_hard, 0, "mdtest-hard-delete removed every file");
}

/// The same workload on mem:// (no page cache, one process).
#[test]
fn io500_runs_on_mem() {
    let r = run_ok(
        &Target::Mem,
        &[
            "-w",
            "io500",
            "--workers",
            "2",
            "--duration",
            "200ms",
            "--stonewall-wear-out",
            "--easy-file-size",
            "2m",
        ],
    );
    check_run(&r, 2);
}

fn study(args: &[&str], out: &Path) {
    let r = Command::new("timeout")
        .args(["-s", "KILL", "600", bin(), "study", "io500"])
        .args(args)
        .args(["--out", out.to_str().unwrap(), "--quiet"])
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
}

/// The study on a directory (threads and processes) and mem:// (threads; processes are n/a
/// there): its runs follow IO500's order and rules, the score is the geometric mean of the
/// table's own figures, and at this scale the run says it is not a valid IO500 run.
#[test]
fn study_scores_from_its_own_table_and_marks_a_short_run() {
    let target = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("s");
    let posix = format!("posix={}", target.path().display());
    study(&["-t", &posix, "-t", "mem=mem://", "--scale", "0.001"], &dir);
    for (file, workers) in [
        ("posix/io500.json", 4),
        ("mem/io500.json", 4),
        ("posix/io500-procs.json", 4),
    ] {
        let r: Value = serde_json::from_slice(&std::fs::read(dir.join(file)).unwrap()).unwrap();
        check_run(&r, workers);
        // IO500's rule: the writes run for their time (0.3 s at this scale), at least.
        for p in phases(&r).iter().filter(|p| p["prepare"] != true) {
            if p["name"].as_str().unwrap().ends_with("-write") {
                assert!(p["duration_s"].as_f64().unwrap() >= 0.3 * 0.99, "{file} {}", p["name"]);
            }
        }
    }
    let doc: Value = serde_json::from_slice(&std::fs::read(dir.join("tables.json")).unwrap()).unwrap();
    let tables = doc["tables"].as_array().unwrap();
    let (phase_table, score) = (&tables[0], &tables[1]);
    assert_eq!(score["title"], "IO500 score");
    let labels = |t: &Value| -> Vec<String> {
        t["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["labels"][0].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(labels(phase_table), ORDER);
    let cell = |t: &Value, row: usize, col: usize, sys: usize| t["rows"][row]["cells"][col][sys].clone();
    let geo = |xs: &[f64]| (xs.iter().map(|x| x.ln()).sum::<f64>() / xs.len() as f64).exp();
    let mut scored = 0;
    for col in 0..2 {
        for sys in 0..2 {
            let values: Vec<Option<f64>> = (0..12)
                .map(|r| cell(phase_table, r, col, sys)["value"].as_f64())
                .collect();
            let valid = cell(score, 3, col, sys)["text"].as_str().unwrap().to_string();
            if values.iter().all(Option::is_none) {
                // mem:// runs no processes: no score, and why.
                assert!(cell(score, 2, col, sys)["value"].is_null());
                assert!(cell(score, 2, col, sys)["text"].as_str().unwrap().starts_with("n/a"));
                continue;
            }
            let units: Vec<String> = phase_table["rows"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["labels"][1].as_str().unwrap().to_string())
                .collect();
            let pick = |unit: &str| -> Vec<f64> {
                values
                    .iter()
                    .zip(&units)
                    .filter(|(_, u)| *u == unit)
                    .map(|(v, _)| v.unwrap())
                    .collect()
            };
            let (bw, md) = (pick("GiB/s"), pick("kIOPS"));
            assert_eq!((bw.len(), md.len()), (4, 8));
            let want = [geo(&bw), geo(&md), (geo(&bw) * geo(&md)).sqrt()];
            for (row, w) in want.iter().enumerate() {
                let got = cell(score, row, col, sys)["value"].as_f64().unwrap();
                assert!((got - w).abs() <= 1e-9 * w, "row {row}: {got} != {w}");
            }
            assert!(valid.starts_with("no: a write phase ran"), "{valid}");
            scored += 1;
        }
    }
    assert_eq!(scored, 3, "threads on both systems, processes on the directory");
    let md = std::fs::read_to_string(dir.join("tables.md")).unwrap();
    assert!(md.contains("Not a valid IO500 run: the write phases ran 0.3 s"), "{md}");
    // The page shows the score beside published entries.
    let html = out.path().join("s.html");
    let r = Command::new(bin())
        .args(["report", dir.to_str().unwrap(), "-o", html.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let page = std::fs::read_to_string(&html).unwrap();
    for want in ["IO500 score", "Published IO500 entries", "Not a valid IO500 run"] {
        assert!(page.contains(want), "the page shows {want}");
    }
}
