//! Reads reach the storage, not the client's page cache: before every measured read phase the
//! files it reads leave the page cache (fio's invalidate=1), the result records what was done,
//! and every report shows it, with a mark on reads that may have come from the cache. Also: a
//! failed layout stops the job, and weak phases are marked.
//!
//! The page cache test drives the engine through its library API so it can look at the files
//! exactly when a read phase starts (an [`Observer`] is told before the workers are released),
//! and asks the kernel which of their pages are resident (mincore on a mapping of each file).

mod common;

use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::AtomicBool;

use common::bindfs::Bindfs;
use common::{check_invariants, dfsbench, f, is_root, phase, phases, run, run_ok, u, validate, Target};
use dfsbench_core::config::{validate as validate_config, JobSpec, RunSpec};
use dfsbench_core::plan::Phase;
use dfsbench_core::runner::{Observer, Status};
use dfsbench_core::session::{execute, new_run_id};
use serde_json::Value;

static NO_INTERRUPT: AtomicBool = AtomicBool::new(false);

const TMPFS_MAGIC: i64 = 0x0102_1994;
const RAMFS_MAGIC: i64 = 0x8584_58f6;

/// A directory on a disk-backed file system (the build's temp dir, on the repository's file
/// system, or the system's temp dir): tmpfs keeps every page in memory, so it cannot show
/// whether pages were dropped.
fn disk_backed_dir() -> Option<PathBuf> {
    let candidates = [PathBuf::from(env!("CARGO_TARGET_TMPDIR")), std::env::temp_dir()];
    candidates.into_iter().find(|d| {
        let c = std::ffi::CString::new(d.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: statfs is plain old data filled by the call; c is NUL-terminated.
        let mut st: libc::statfs = unsafe { std::mem::zeroed() };
        let ok = unsafe { libc::statfs(c.as_ptr(), &mut st) } == 0;
        ok && ![TMPFS_MAGIC, RAMFS_MAGIC].contains(&(st.f_type as i64))
    })
}

/// Pages of `path` resident in the page cache, and its pages in all. Mapping a file does not
/// read it, so mincore reports the page cache as it is.
fn resident_pages(path: &Path) -> (usize, usize) {
    let f = std::fs::File::open(path).unwrap();
    let len = f.metadata().unwrap().len() as usize;
    if len == 0 {
        return (0, 0);
    }
    // SAFETY: a read-only shared mapping of an open file, unmapped before returning; mincore
    // writes one byte per page into a vector of that many bytes.
    unsafe {
        let page = libc::sysconf(libc::_SC_PAGESIZE) as usize;
        let addr = libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            f.as_raw_fd(),
            0,
        );
        assert_ne!(addr, libc::MAP_FAILED, "mmap {}", path.display());
        let mut vec = vec![0u8; len.div_ceil(page)];
        let rc = libc::mincore(addr, len, vec.as_mut_ptr());
        libc::munmap(addr, len);
        assert_eq!(rc, 0, "mincore {}", path.display());
        (vec.iter().filter(|b| *b & 1 != 0).count(), vec.len())
    }
}

/// Data files below `dir` (the run marker aside).
fn data_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n != ".dfsbench-run") {
                out.push(p);
            }
        }
    }
    out
}

/// At the start of every read phase: resident and total pages of the run's data files.
struct PageCacheProbe {
    run_dir: PathBuf,
    seen: Vec<(String, usize, usize)>,
}

impl Observer for PageCacheProbe {
    fn phase_started(&mut self, phase: &Phase, _workers: usize) {
        if !phase.reads_data() {
            return;
        }
        let (mut resident, mut pages) = (0, 0);
        for f in data_files(&self.run_dir) {
            let (r, p) = resident_pages(&f);
            resident += r;
            pages += p;
        }
        self.seen.push((phase.label.clone(), resident, pages));
    }
}

/// While a read phase runs, about ten times a second: resident and total pages of the run's
/// data files, after the phase's first `skip` ticks.
struct ResidencySampler {
    run_dir: PathBuf,
    skip: usize,
    reading: bool,
    ticks: usize,
    samples: Vec<(usize, usize)>,
}

impl Observer for ResidencySampler {
    fn phase_started(&mut self, phase: &Phase, _workers: usize) {
        self.reading = phase.reads_data();
        self.ticks = 0;
    }

    fn tick(&mut self, _elapsed: std::time::Duration, _ops: u64, _bytes: u64, _errors: u64) {
        self.ticks += 1;
        if self.reading && self.ticks > self.skip {
            let sums = data_files(&self.run_dir)
                .iter()
                .map(|f| resident_pages(f))
                .fold((0, 0), |(r, p), (fr, fp)| (r + fr, p + fp));
            self.samples.push(sums);
        }
    }
}

/// The first phase of a result that records a page cache policy: its first read phase.
fn first_read_phase(doc: &Value) -> &Value {
    phases(doc)
        .iter()
        .find(|p| p.get("cache").is_some())
        .expect("a read phase")
}

/// Run `job` in `dir` in this process, with or without invalidation, shown to the observer
/// `make` builds from the run directory; the result document.
fn observed_run<O: Observer>(
    dir: &Path,
    job: JobSpec,
    invalidate: bool,
    make: impl FnOnce(PathBuf) -> O,
) -> (O, Value) {
    let run = RunSpec {
        invalidate: Some(invalidate),
        ..Default::default()
    };
    let config = validate_config(&run, &[job]).expect("a valid config");
    let run_id = new_run_id();
    let mut observer = make(dir.join(format!("dfsbench-{run_id}")));
    let outcome = execute(
        &config,
        dir.to_str().unwrap(),
        &run_id,
        &NO_INTERRUPT,
        &mut observer,
        &mut dfsbench_core::cluster::Group::solo(),
        None,
    )
    .unwrap_or_else(|e| panic!("the run did not start: {}", e.0));
    assert_eq!(outcome.status, Status::Complete);
    let doc = serde_json::to_value(&outcome.result).unwrap();
    validate(&doc);
    (observer, doc)
}

/// Run `job` in `dir` with or without invalidation; what the probe saw at each read phase.
fn probe(dir: &Path, job: JobSpec, invalidate: bool) -> (Vec<(String, usize, usize)>, Value) {
    let (observer, doc) = observed_run(dir, job, invalidate, |run_dir| PageCacheProbe {
        run_dir,
        seen: Vec::new(),
    });
    (observer.seen, doc)
}

/// A time-based random read of a small file reads every block many times over: with
/// invalidation its cached pages are dropped at each pass over the file (as fio does when it
/// loops), so the file is never seen wholly cached for long; without it, every pass after the
/// first reads memory and the file stays wholly cached.
#[test]
fn every_pass_of_a_time_based_read_reaches_the_storage() {
    let Some(dir) = disk_backed_dir() else {
        eprintln!("skipped: no disk-backed file system for the test (the build dir and the temp dir are tmpfs)");
        return;
    };
    let scratch = tempfile::tempdir_in(&dir).unwrap();
    let sample = |invalidate: bool| {
        let mut job = JobSpec::new("io", "io");
        job.workloads.io.rw = Some("randread".into());
        job.workloads.io.size = Some("8m".into());
        job.settings.workers = Some(1);
        job.settings.duration = Some("3s".into());
        let (sampler, _) = observed_run(scratch.path(), job, invalidate, |run_dir| ResidencySampler {
            run_dir,
            skip: 5,
            reading: false,
            ticks: 0,
            samples: Vec::new(),
        });
        assert!(!sampler.samples.is_empty(), "the read phase was sampled");
        sampler.samples
    };
    let cold = sample(true);
    assert!(
        cold.iter().any(|&(resident, pages)| resident * 10 < pages * 9),
        "with invalidation some sample sees the file less than 90% cached: {cold:?}"
    );
    let warm = sample(false);
    let &(resident, pages) = warm.last().unwrap();
    assert_eq!(
        resident, pages,
        "without invalidation the file ends wholly cached: {warm:?}"
    );
}

fn jobs() -> Vec<JobSpec> {
    let mut io = JobSpec::new("io", "io");
    io.workloads.io.rw = Some("randread".into());
    io.workloads.io.size = Some("4m".into());
    io.settings.workers = Some(2);
    let mut files = JobSpec::new("files", "files");
    files.shared.files = Some(8);
    files.shared.file_size = Some("256k".into());
    files.settings.workers = Some(2);
    vec![io, files]
}

#[test]
fn read_phases_start_with_their_files_out_of_the_page_cache() {
    let Some(dir) = disk_backed_dir() else {
        eprintln!("skipped: no disk-backed file system for the test (the build dir and the temp dir are tmpfs)");
        return;
    };
    let scratch = tempfile::tempdir_in(&dir).unwrap();
    for job in jobs() {
        let what = job.settings.workload.clone().unwrap();
        let (seen, doc) = probe(scratch.path(), job.clone(), true);
        assert_eq!(seen.len(), 1, "{what}: one read phase: {seen:?}");
        let (label, resident, pages) = &seen[0];
        assert!(*pages > 0, "{what}: the files of '{label}' exist when it starts");
        assert_eq!(
            *resident, 0,
            "{what}: {resident} of {pages} pages cached when '{label}' started"
        );
        let read = first_read_phase(&doc);
        assert_eq!(read["cache"]["policy"], "invalidated");
        assert!(read.get("cache_suspect").is_none(), "{what}: {read}");

        // The control: without invalidation the freshly written pages are still there, so
        // the probe above does see cached pages when they are.
        let (seen, doc) = probe(scratch.path(), job, false);
        let (label, resident, pages) = &seen[0];
        assert!(
            *resident > 0,
            "{what}: no page of {pages} cached at '{label}' without invalidation"
        );
        let read = first_read_phase(&doc);
        assert_eq!(read["cache"]["policy"], "disabled");
        assert!(read["cache_suspect"][0]
            .as_str()
            .unwrap()
            .starts_with("served from client cache?"));
    }
}

/// The read phase of a result: the one with a cache record.
fn read_phase(doc: &Value) -> &Value {
    doc["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p.get("cache").is_some())
        .unwrap_or_else(|| panic!("no phase with a cache record: {doc}"))
}

/// Every report of the result file `path` (Markdown, CSV, HTML), concatenated.
fn reports(path: &Path) -> Vec<(String, String)> {
    let out = tempfile::tempdir().unwrap();
    ["md", "csv", "html"]
        .iter()
        .map(|f| {
            let file = out.path().join(format!("report.{f}"));
            let r = dfsbench(&[
                "report",
                path.to_str().unwrap(),
                "--format",
                f,
                "-o",
                file.to_str().unwrap(),
            ]);
            assert_eq!(r.code, Some(0), "report --format {f}: {}", r.describe());
            (f.to_string(), std::fs::read_to_string(&file).unwrap())
        })
        .collect()
}

#[test]
fn the_cache_policy_is_recorded_and_shown_and_an_opt_out_is_flagged() {
    let disk = disk_backed_dir();
    let posix = match &disk {
        Some(d) => Target::Dir(tempfile::tempdir_in(d).unwrap()),
        None => Target::Dir(tempfile::tempdir().unwrap()),
    };
    let args = ["-w", "io", "--rw", "randread", "--size", "256k", "-j", "2"];

    // Default: two files invalidated, nothing flagged, and every view says so.
    let r = run(&posix.uri(), &args);
    let doc = r.result();
    assert_eq!(doc["config"]["invalidate"], true);
    let read = read_phase(doc);
    assert_eq!(read["cache"]["policy"], "invalidated");
    assert_eq!(read["cache"]["files"], 2);
    assert_eq!(read["cache"]["dropped_kernel_caches"], false);
    assert!(read.get("cache_suspect").is_none());
    assert!(phase(doc, "layout").get("cache").is_none(), "the layout reads nothing");
    assert!(
        r.stdout
            .contains("page cache before randread 4 KiB qd1: invalidated 2 files"),
        "{}",
        r.describe()
    );
    let file = r.scratch.path().join("result.json");
    for (format, text) in reports(&file) {
        let shown = match format.as_str() {
            "csv" => "cache_invalidated,1,flag",
            _ => "invalidated 2 files",
        };
        assert!(text.contains(shown), "{format} report lacks '{shown}'");
        // (The HTML page explains the marks in a note: look for the mark itself.)
        assert!(
            !text.contains("[cache?]<") && !text.contains("[cache?] "),
            "{format} report flags a clean run"
        );
    }

    // --invalidate 0: recorded as the user's choice and flagged in the result and every view.
    let mut off = args.to_vec();
    off.extend(["--invalidate", "0"]);
    let r = run(&posix.uri(), &off);
    let doc = r.result();
    assert_eq!(doc["config"]["invalidate"], false);
    let read = read_phase(doc);
    assert_eq!(read["cache"]["policy"], "disabled");
    assert_eq!(read["cache"]["files"], 0);
    let reason = read["cache_suspect"][0].as_str().unwrap();
    assert!(
        reason.starts_with("served from client cache?") && reason.contains("--invalidate 0"),
        "{reason}"
    );
    assert!(r.stdout.contains("randread 4 KiB qd1 [cache?]"), "{}", r.describe());
    let file = r.scratch.path().join("result.json");
    for (format, text) in reports(&file) {
        let (policy, mark) = match format.as_str() {
            "csv" => ("cache_disabled,1,flag", "cache_suspect,1,reasons"),
            "html" => ("not invalidated (--invalidate 0)", "[cache?]</span>"),
            _ => ("not invalidated (--invalidate 0)", "[cache?]"),
        };
        assert!(text.contains(policy), "{format} report lacks '{policy}'");
        assert!(text.contains(mark), "{format} report lacks '{mark}'");
    }
    // The wide CSV of `run --format csv` carries the same.
    let mut csv = off.clone();
    csv.extend(["--format", "csv"]);
    let r = run(&posix.uri(), &csv);
    let header: Vec<&str> = r.stdout.lines().next().unwrap().split(',').collect();
    let row: Vec<&str> = r.stdout.lines().nth(1).unwrap().split(',').collect();
    let col = |name: &str| row[header.iter().position(|h| *h == name).unwrap()];
    assert_eq!(col("cache"), "disabled");
    assert!(col("cache_suspect").contains("served from client cache?"));

    // The same opt-out in a workload file, with fio's 0.
    let dir = tempfile::tempdir().unwrap();
    let toml = dir.path().join("job.toml");
    std::fs::write(
        &toml,
        "invalidate = 0\n[[job]]\nworkload = \"io\"\nrw = \"read\"\nsize = \"64k\"\n",
    )
    .unwrap();
    let doc = run_ok(&posix, &[toml.to_str().unwrap()]);
    assert_eq!(read_phase(&doc)["cache"]["policy"], "disabled");

    // No client page cache on mem://: recorded as such, and not flagged.
    let doc = run_ok(
        &Target::Mem,
        &["-w", "files", "--files", "3", "--file-size", "1k", "-j", "1"],
    );
    let read = read_phase(&doc);
    assert_eq!(read["cache"]["policy"], "not_applicable");
    assert_eq!(read["name"], "read");
    assert!(read.get("cache_suspect").is_none());
}

/// A run on `target` that must succeed, its result valid and its numbers adding up.
fn ok_run(target: &str, args: &[&str]) -> common::Run {
    let r = run(target, args);
    assert_eq!(r.code, Some(0), "dfsbench run {args:?}: {}", r.describe());
    validate(r.result());
    check_invariants(r.result());
    r
}

/// MiB/s of fio reading `files` files of 1 MiB in `dir` over and over for 2 s, one job, psync,
/// with `invalidate=1` (their cached pages dropped before each pass); None where fio is
/// missing and the lab is not required.
fn fio_time_based_read(dir: &Path, files: u64) -> Option<f64> {
    let found = Command::new("fio")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var("DFSBENCH_REQUIRE_LAB").as_deref() != Ok("1"),
            "fio is missing: scripts/test.sh installs it"
        );
        eprintln!("note: fio not found: no peer (apt-get install fio)");
        return None;
    }
    let work = tempfile::tempdir_in(dir).unwrap();
    let out = Command::new("fio")
        .args([
            "--name=peer",
            "--rw=read",
            "--bs=1m",
            "--filesize=1m",
            "--ioengine=psync",
        ])
        .args(["--invalidate=1", "--time_based", "--runtime=2", "--output-format=json"])
        .arg(format!("--nrfiles={files}"))
        .arg(format!("--directory={}", work.path().display()))
        .output()
        .unwrap();
    assert!(out.status.success(), "fio: {}", String::from_utf8_lossy(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("fio's JSON");
    Some(f(&doc["jobs"][0]["read"]["bw_bytes"]) / (1 << 20) as f64)
}

/// MiB/s of the read phase of a result.
fn read_mib_s(doc: &Value) -> f64 {
    f(&read_phase(doc)["bytes_per_sec"]) / (1 << 20) as f64
}

/// On a FUSE mount that keeps its page cache across opens (bindfs `kernel_cache`, as mfsmount
/// and ceph-fuse do), a file the phase already read is dropped again before it is read again:
/// a time-based read of 4 files over many passes reads no faster than one pass over files
/// dropped before the phase, nor than fio with invalidate=1 on as many files (within 2x, for a
/// busy machine), or is marked, and the result
/// counts a drop for every re-read; without invalidation the same re-reads are counted and
/// marked in every view. The files workload's reads that pick a file again are dropped too.
#[test]
fn rereads_on_a_fuse_mount_that_keeps_its_cache_reach_the_storage() {
    let Some(fs) = Bindfs::mount("kernel_cache") else {
        return;
    };
    let target = fs.path().to_str().unwrap();
    // Every one of 64 files read once after the drop before the phase: the best of three runs.
    let once = [
        "-w",
        "files",
        "--file-size",
        "1m",
        "--files",
        "64",
        "-j",
        "1",
        "--phases",
        "write,read",
    ];
    let one_pass = (0..3)
        .map(|_| read_mib_s(ok_run(target, &once).result()))
        .fold(0.0, f64::max);

    let (files, timed) = (
        4,
        [
            "-w",
            "mix",
            "--mix",
            "read=1",
            "--files",
            "4",
            "--file-size",
            "1m",
            "-j",
            "1",
        ],
    );
    let mut args = timed.to_vec();
    args.extend(["--duration", "2s"]);
    let r = ok_run(target, &args);
    let read = read_phase(r.result());
    let (reads, cache) = (u(&read["ops"]), &read["cache"]);
    assert!(reads > 4 * files, "many passes over the {files} files: {reads} reads");
    let rereads = u(&cache["rereads"]);
    assert!(rereads >= reads - files, "{rereads} re-reads of {reads} reads: {cache}");
    let marked = read.get("cache_suspect").is_some();
    let mib_s = read_mib_s(r.result());
    if marked {
        eprintln!("note: the re-reads were marked, not dropped: {}", read["cache_suspect"]);
    } else {
        assert_eq!(cache["reread_invalidations"], cache["rereads"], "{cache}");
        assert_eq!(cache["policy"], "invalidated");
        assert!(
            mib_s <= 2.0 * one_pass,
            "{mib_s:.0} MiB/s over many passes, {one_pass:.0} MiB/s in one pass"
        );
        // The peer: fio with invalidate=1 reading as many files of that size for as long,
        // the best of three.
        if let Some(fio) = (0..3)
            .filter_map(|_| fio_time_based_read(fs.path(), files))
            .reduce(f64::max)
        {
            assert!(
                mib_s <= 2.0 * fio,
                "{mib_s:.0} MiB/s over many passes, fio invalidate=1 {fio:.0} MiB/s"
            );
        }
        assert!(
            r.stdout
                .contains(&format!("and again before each of {rereads} re-reads")),
            "{}",
            r.describe()
        );
    }

    // Without invalidation the re-reads come from memory: counted, never dropped, marked.
    args.extend(["--invalidate", "0"]);
    let r = ok_run(target, &args);
    let read = read_phase(r.result());
    let cache = &read["cache"];
    assert!(u(&cache["rereads"]) >= u(&read["ops"]) - files, "{cache}");
    assert!(cache.get("reread_invalidations").is_none(), "{cache}");
    let reason = read["cache_suspect"][0].as_str().unwrap();
    assert!(reason.contains("re-reads not invalidated first"), "{reason}");
    let warm = read_mib_s(r.result());
    assert!(
        warm > mib_s,
        "the mount keeps its cache, or this test shows nothing: {warm:.0} MiB/s warm, {mib_s:.0} MiB/s dropped"
    );
    assert!(r.stdout.contains("[cache?]"), "{}", r.describe());
    let file = r.scratch.path().join("result.json");
    for (format, text) in reports(&file) {
        let mark = if format == "csv" {
            "cache_rereads,"
        } else {
            "re-reads not invalidated first"
        };
        assert!(text.contains(mark), "{format} report lacks '{mark}'");
        assert!(
            text.contains("[cache?]") || format == "csv",
            "{format} report lacks the mark"
        );
    }

    // Reads of files the phase wrote write them back before the drop: the data read is the
    // data written.
    let mixed = [
        "-w",
        "mix",
        "--mix",
        "read=1,write=1",
        "--files",
        "4",
        "--file-size",
        "256k",
        "-j",
        "1",
    ];
    let r = ok_run(target, &[&mixed[..], &["--duration", "1s", "--verify"]].concat());
    let read = read_phase(r.result());
    assert_eq!(read["errors"]["total"], 0, "{}", read["errors"]);
    assert!(u(&read["cache"]["rereads"]) > 0, "{}", read["cache"]);
    assert_eq!(read["cache"]["reread_invalidations"], read["cache"]["rereads"]);

    // Reads that pick a file again (a skewed pick over 32 files) drop it first too.
    let mut skewed = once.to_vec();
    skewed[5] = "32";
    skewed.extend(["--random-distribution", "zipf:1.5"]);
    let doc = ok_run(target, &skewed);
    let read = read_phase(doc.result());
    let cache = &read["cache"];
    assert!(u(&cache["rereads"]) > 0, "zipf picks files again: {cache}");
    assert_eq!(cache["reread_invalidations"], cache["rereads"], "{cache}");
    assert!(read.get("cache_suspect").is_none(), "{read}");
}

#[test]
fn drop_caches_needs_root_and_is_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["-w", "io", "--rw", "read", "--size", "64k", "-j", "1", "--drop-caches"];
    let r = run(dir.path().to_str().unwrap(), &args);
    if !is_root() {
        assert_eq!(r.code, Some(2), "{}", r.describe());
        let lines = r.stderr_lines();
        assert_eq!(lines.len(), 1, "{}", r.describe());
        assert!(lines[0].contains("drop_caches needs root"), "{}", r.describe());
        return;
    }
    assert_eq!(r.code, Some(0), "{}", r.describe());
    let doc = r.result();
    assert_eq!(doc["config"]["drop_caches"], true);
    assert_eq!(read_phase(doc)["cache"]["dropped_kernel_caches"], true);
    assert!(r.stdout.contains("kernel caches dropped"), "{}", r.describe());
}

/// A tmpfs of `size` mounted on a fresh directory, unmounted when dropped.
struct Tmpfs(tempfile::TempDir);

impl Tmpfs {
    fn mount(size: &str) -> Tmpfs {
        let dir = tempfile::tempdir().unwrap();
        let st = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .status()
            .expect("run mount");
        assert!(st.success(), "mount a {size} tmpfs on {}", dir.path().display());
        Tmpfs(dir)
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.0.path()).status();
    }
}

#[test]
fn a_layout_that_runs_out_of_space_stops_the_job_naming_enospc() {
    if !is_root() {
        eprintln!("skipped: mounting a small tmpfs needs root");
        return;
    }
    let fs = Tmpfs::mount("32m");
    let target = fs.0.path().to_str().unwrap();
    let r = run(target, &["-w", "io", "--size", "64m", "-j", "2"]);
    assert_eq!(r.code, Some(1), "{}", r.describe());
    let doc = r.result();
    assert_eq!(doc["status"], "failed");
    let message = doc["status_message"].as_str().unwrap();
    assert!(message.contains("ENOSPC"), "{message}");
    let run_dir = format!("{target}/dfsbench-{}/j0-io/w", doc["run_id"].as_str().unwrap());
    assert!(message.contains(&run_dir), "the message names the file: {message}");
    assert!(!message.contains("short_io"), "{message}");
    let names: Vec<&str> = doc["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["layout"], "no read phase ran after the failed layout");
    let line = r
        .stderr_lines()
        .into_iter()
        .find(|l| l.contains("ENOSPC"))
        .unwrap_or_default();
    assert!(
        line.contains(&run_dir),
        "stderr names ENOSPC and the file: {}",
        r.describe()
    );
    assert!(common::run_dirs(fs.0.path()).is_empty(), "the run directory is removed");
}

#[test]
fn weak_phases_are_marked_in_the_result_and_every_report() {
    // 10 files per worker in a few milliseconds: too short and too few operations.
    let r = run(
        "mem://",
        &["-w", "files", "--files", "10", "--file-size", "1k", "-j", "2"],
    );
    assert_eq!(r.code, Some(0), "{}", r.describe());
    let doc = r.result();
    let write = phase(doc, "write");
    let reasons: Vec<&str> = write["validity"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(reasons.iter().any(|r| r.starts_with("shorter than 1 s")), "{reasons:?}");
    assert!(reasons.contains(&"fewer than 1000 operations (20)"), "{reasons:?}");
    assert!(r.stdout.contains("write 1 KiB [weak]"), "{}", r.describe());
    assert!(
        r.stdout
            .lines()
            .any(|l| l.starts_with("[weak] shorter than 1 s: ") && l.contains("write 1 KiB (")),
        "{}",
        r.describe()
    );
    let file = r.scratch.path().join("result.json");
    // The CSV counts the write phase's reasons: two, or three when a loaded machine also
    // stretched a worker's start (a stonewall window under half of the phase).
    let csv_mark = format!("weak,{},reasons", reasons.len());
    for (format, text) in reports(&file) {
        let mark = match format.as_str() {
            "csv" => csv_mark.as_str(),
            "html" => "[weak]</span>",
            _ => "[weak] |",
        };
        assert!(text.contains(mark), "{format} report lacks '{mark}'");
        if format != "csv" {
            assert!(
                text.contains("fewer than 1000 operations (20)"),
                "{format} report lacks the reason"
            );
        }
    }

    // A time-based phase of 1.5 s with every worker running to the end is sound.
    let doc = run_ok(
        &Target::Mem,
        &[
            "-w",
            "io",
            "--rw",
            "randread",
            "--size",
            "1m",
            "-j",
            "2",
            "--duration",
            "1500ms",
        ],
    );
    let read = phase(&doc, "randread");
    assert!(read.get("validity").is_none(), "{}", read["validity"]);
    assert!(
        phase(&doc, "layout").get("validity").is_none(),
        "prepare steps are not judged"
    );
}

/// A read phase faster than the client's link can carry is marked `[cache?]` with both
/// figures, in the result and in the text, Markdown, CSV and HTML views; one within the link
/// is not. The link is a lab's configured limit on a fake node list (no traffic: nothing is
/// measured), the run is on mem://, whose reads never leave the process.
#[test]
fn reads_beyond_the_link_are_marked_in_every_view_and_reads_within_it_are_not() {
    use dfsbench_core::nodes::{KnownNode, KnownNodes, LinkRate};
    let run_with_link = |rate: &str| -> Value {
        let mut job = JobSpec::new("files", "files");
        job.shared.files = Some(8);
        job.shared.file_size = Some("64k".into());
        job.settings.workers = Some(1);
        let mut config = validate_config(&RunSpec::default(), &[job]).expect("a valid config");
        config.nodes = Some(KnownNodes {
            nodes: vec![KnownNode {
                name: "node2".into(),
                addr: "127.0.0.1".into(),
                netns: None,
                port: None,
                serves_data: true,
            }],
            rate: LinkRate::parse(rate),
            measured_before: None,
        });
        let outcome = execute(
            &config,
            "mem://",
            &new_run_id(),
            &NO_INTERRUPT,
            &mut dfsbench_core::runner::Quiet,
            &mut dfsbench_core::cluster::Group::solo(),
            None,
        )
        .unwrap_or_else(|e| panic!("the run did not start: {}", e.0));
        assert_eq!(outcome.status, Status::Complete);
        let doc = serde_json::to_value(&outcome.result).unwrap();
        validate(&doc);
        doc
    };
    // 1 kbit/s: 125 bytes a second, which 8 files of 64 KiB beat whatever the machine's load.
    let slow = run_with_link("1kbit");
    assert_eq!(slow["target"]["link"]["source"], "configured");
    let read = read_phase(&slow);
    let reason = read["cache_suspect"][0].as_str().expect("the read is marked");
    assert!(
        reason.contains("over 1.5x what the client's link to the storage carries (configured, lab limit 1kbit on each of the links of node2)"),
        "{reason}"
    );
    let result: dfsbench_result::RunResult = serde_json::from_value(slow.clone()).unwrap();
    let text = dfsbench_report::flags::notes(&result);
    assert!(
        text.contains(&format!("[cache?] {}: {reason}", read["label"].as_str().unwrap())),
        "{text}"
    );
    let scratch = tempfile::tempdir().unwrap();
    let file = scratch.path().join("result.json");
    std::fs::write(&file, slow.to_string()).unwrap();
    for (format, text) in reports(&file) {
        let mark = match format.as_str() {
            "csv" => "cache_suspect,1,reasons",
            "html" => "[cache?]</span>",
            _ => "[cache?]",
        };
        assert!(text.contains(mark), "{format} report lacks '{mark}'");
        if format != "csv" {
            assert!(
                text.contains("what the client's link to the storage carries"),
                "{format}: no reason"
            );
        }
    }
    // 1000 gbit/s: no read through memory on this machine comes near it.
    let fast = run_with_link("1000gbit");
    assert_eq!(fast["target"]["link"]["bytes_per_sec"], 125e9);
    assert!(
        read_phase(&fast).get("cache_suspect").is_none(),
        "{}",
        read_phase(&fast)
    );
}
