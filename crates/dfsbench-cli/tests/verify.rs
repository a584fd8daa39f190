//! `--verify`: clean runs check every byte they read, and data corrupted between the write
//! and the read phase is reported with its file and offset.
//!
//! The corruption tests drive the engine through its library API so the file is changed
//! exactly between two phases: an [`Observer`] corrupts it when the write (or layout) phase
//! has finished and before the read phase starts.

mod common;

use std::io::{Read, Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use common::{check_invariants, phase, phases, run_ok, u, validate, Target};
use dfsbench_core::config::{validate as validate_config, JobSpec, RunSpec};
use dfsbench_core::runner::{Observer, Status};
use dfsbench_core::session::{execute, new_run_id};
use dfsbench_result::PhaseResult;
use serde_json::Value;

static NO_INTERRUPT: AtomicBool = AtomicBool::new(false);

#[test]
fn clean_verify_runs_check_every_byte_read() {
    for t in Target::both() {
        let r = run_ok(
            &t,
            &[
                "-w",
                "files",
                "-j",
                "2",
                "--sizes",
                "3x0,3x1000,2x10000",
                "--bs",
                "4k",
                "--verify",
            ],
        );
        assert_eq!(r["config"]["verify"], true);
        for p in phases(&r) {
            let read_bytes = if p["name"] == "read" { u(&p["bytes"]) } else { 0 };
            match p.get("verify") {
                Some(v) => {
                    assert_eq!(u(&v["checked_bytes"]), read_bytes, "{}: checked == read", p["label"]);
                    assert_eq!(u(&v["mismatches"]), 0);
                }
                None => assert_eq!(read_bytes, 0, "{}: read data was not verified", p["label"]),
            }
        }

        for (rw, extra) in [
            ("randread", &["--iodepth", "8"][..]),
            ("read", &["--shared-file"][..]),
            ("randrw", &["--iodepth", "4", "--bs", "8k"][..]),
        ] {
            let mut args = vec!["-w", "io", "--rw", rw, "-j", "2", "--size", "64k", "--verify"];
            args.extend_from_slice(extra);
            let r = run_ok(&t, &args);
            assert!(phase(&r, "layout").get("verify").is_none(), "the layout only writes");
            let p = phase(&r, rw);
            let read_bytes = match p.get("ops_by_kind") {
                Some(kinds) => u(&kinds[0]["bytes"]),
                None => u(&p["bytes"]),
            };
            assert!(read_bytes > 0);
            assert_eq!(
                u(&p["verify"]["checked_bytes"]),
                read_bytes,
                "{rw} {extra:?}: checked == bytes read"
            );
            assert_eq!(u(&p["verify"]["mismatches"]), 0);
        }
    }
}

/// Changes a file of the run directory once the phase `after` has finished.
struct Corrupt {
    run_dir: PathBuf,
    after: &'static str,
    how: fn(&PathBuf),
    done: bool,
}

impl Observer for Corrupt {
    fn phase_finished(&mut self, result: &PhaseResult) {
        if result.name == self.after && !self.done {
            assert!(self.run_dir.is_dir(), "run directory {} exists", self.run_dir.display());
            (self.how)(&self.run_dir);
            self.done = true;
        }
    }
}

/// Run `job` with verification in a fresh temp directory, corrupting data after `after`.
fn run_corrupted(job: JobSpec, after: &'static str, how: fn(&PathBuf)) -> (Value, Status) {
    let target = tempfile::tempdir().unwrap();
    let run = RunSpec {
        verify: Some(true),
        ..Default::default()
    };
    let config = validate_config(&run, &[job]).expect("a valid config");
    let run_id = new_run_id();
    let mut observer = Corrupt {
        run_dir: target.path().join(format!("dfsbench-{run_id}")),
        after,
        how,
        done: false,
    };
    let outcome = execute(
        &config,
        target.path().to_str().unwrap(),
        &run_id,
        &NO_INTERRUPT,
        &mut observer,
        &mut dfsbench_core::cluster::Group::solo(),
        None,
    )
    .unwrap_or_else(|e| panic!("the run did not start: {}", e.0));
    assert!(observer.done, "the observer saw the '{after}' phase");
    assert!(outcome.warnings.is_empty(), "{:?}", outcome.warnings);
    assert!(
        common::run_dirs(target.path()).is_empty(),
        "run directory removed after a run with errors"
    );
    let doc = serde_json::to_value(&outcome.result).unwrap();
    validate(&doc);
    check_invariants(&doc);
    (doc, outcome.status)
}

fn flip_byte(path: PathBuf, offset: u64) {
    let mut f = std::fs::OpenOptions::new().read(true).write(true).open(&path).unwrap();
    let mut b = [0u8];
    f.seek(SeekFrom::Start(offset)).unwrap();
    f.read_exact(&mut b).unwrap();
    f.seek(SeekFrom::Start(offset)).unwrap();
    f.write_all(&[b[0] ^ 0xff]).unwrap();
}

#[test]
fn corrupted_file_is_reported_with_path_and_offset() {
    let mut job = JobSpec::new("files", "files");
    job.settings.workers = Some(2);
    job.shared.files = Some(3);
    job.shared.file_size = Some("10000".into());
    job.shared.bs = Some("4k".into());
    let (r, status) = run_corrupted(job, "write", |dir| flip_byte(dir.join("j0-files/w1/s0.f2"), 5000));

    // The run completes (one error is far from max_errors) but says what it found; the CLI
    // turns errors in a complete run into exit code 1.
    assert_eq!(status, Status::Complete);
    assert_eq!(r["status"], "complete");
    let write = phase(&r, "write");
    assert_eq!(write["errors"]["total"], 0);
    assert_eq!(u(&write["ops"]), 6);

    let read = phase(&r, "read");
    assert_eq!(read["errors"]["total"], 1);
    assert_eq!(read["errors"]["by_kind"]["verify"], 1);
    let s = &read["errors"]["samples"][0];
    assert_eq!(s["kind"], "verify");
    assert_eq!(s["op"], "read");
    assert_eq!(s["worker"], 1);
    assert_eq!(s["path"], "j0-files/w1/s0.f2");
    assert_eq!(s["offset"], 5000);
    assert!(
        s["message"].as_str().unwrap().contains("wrong data at offset 5000"),
        "{}",
        s["message"]
    );
    // The bad file is not counted as a successful read; the others were all checked.
    assert_eq!(u(&read["ops"]), 5);
    assert_eq!(u(&read["bytes"]), 5 * 10_000);
    assert_eq!(u(&read["verify"]["checked_bytes"]), 5 * 10_000);
    assert_eq!(read["verify"]["mismatches"], 1);
    assert_eq!(u(&read["workers_detail"][1]["errors"]), 1);
    // Delete still removes every file written.
    assert_eq!(u(&phase(&r, "delete")["ops"]), 6);
}

#[test]
fn misplaced_block_is_reported_with_whose_data_it_is() {
    let mut job = JobSpec::new("io", "io");
    job.settings.workers = Some(2);
    job.shared.bs = Some("4k".into());
    job.workloads.io.rw = Some("randread".into());
    job.workloads.io.size = Some("64k".into());
    job.workloads.io.iodepth = Some(4);
    // Block 3 of worker 0's file is overwritten with block 3 of worker 1's file: a write that
    // landed in the wrong file.
    let (r, status) = run_corrupted(job, "layout", |dir| {
        let mut block = vec![0u8; 4096];
        let mut from = std::fs::File::open(dir.join("j0-io/w1.dat")).unwrap();
        from.seek(SeekFrom::Start(3 * 4096)).unwrap();
        from.read_exact(&mut block).unwrap();
        let mut to = std::fs::OpenOptions::new()
            .write(true)
            .open(dir.join("j0-io/w0.dat"))
            .unwrap();
        to.seek(SeekFrom::Start(3 * 4096)).unwrap();
        to.write_all(&block).unwrap();
    });
    assert_eq!(status, Status::Complete);
    assert_eq!(r["status"], "complete");
    assert_eq!(phase(&r, "layout")["errors"]["total"], 0);

    let p = phase(&r, "randread");
    assert_eq!(p["errors"]["total"], 1);
    let s = &p["errors"]["samples"][0];
    assert_eq!(s["kind"], "verify");
    assert_eq!(s["op"], "read");
    assert_eq!(s["worker"], 0);
    assert_eq!(s["path"], "j0-io/w0.dat");
    // The sector header's file word (bytes 8..16) differs first, in the worker field.
    let offset = u(&s["offset"]);
    assert!((3 * 4096 + 8..3 * 4096 + 16).contains(&offset), "offset {offset}");
    let message = s["message"].as_str().unwrap();
    assert!(message.contains("worker 1"), "names whose data was found: {message}");
    assert!(message.contains(&format!("offset {}", 3 * 4096)), "{message}");
    // Every other block was read once and checked.
    assert_eq!(u(&p["ops"]), 2 * 16 - 1);
    assert_eq!(u(&p["verify"]["checked_bytes"]), u(&p["bytes"]));
    assert_eq!(p["verify"]["mismatches"], 1);
}
