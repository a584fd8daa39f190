//! Bad input and failing storage: exit code 2 for usage errors and 1 for runtime errors,
//! exactly one line on stderr that names the problem, never a panic.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use common::{is_root, run, run_with, u, validate, Run};

/// Exit `code`, one stderr line starting `dfsbench: ` and containing every needle, no panic,
/// nothing on stdout, no result file.
#[track_caller]
fn assert_one_line(r: &Run, code: i32, needles: &[&str]) -> String {
    assert_eq!(r.code, Some(code), "{}", r.describe());
    assert!(!r.stderr.contains("panicked"), "{}", r.describe());
    assert!(!r.stderr.to_lowercase().contains("backtrace"), "{}", r.describe());
    let lines = r.stderr_lines();
    assert_eq!(lines.len(), 1, "exactly one line on stderr:\n{}", r.stderr);
    let line = lines[0];
    assert!(line.starts_with("dfsbench: "), "{line}");
    for n in needles {
        assert!(line.contains(n), "expected '{n}' in: {line}");
    }
    assert!(r.stdout.trim().is_empty(), "{}", r.describe());
    line.to_string()
}

const USAGE: i32 = 2;
const RUNTIME: i32 = 1;

#[test]
fn bad_targets() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no/such/dir");
    let r = run(missing.to_str().unwrap(), &["-w", "meta", "--files", "2"]);
    assert_one_line(&r, RUNTIME, &[missing.to_str().unwrap(), "does not exist"]);

    let file = dir.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let r = run(file.to_str().unwrap(), &["-w", "meta", "--files", "2"]);
    assert_one_line(&r, RUNTIME, &[file.to_str().unwrap(), "not a directory"]);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");

    let r = run("gopher://host/x", &["-w", "meta", "--files", "2"]);
    assert_one_line(&r, RUNTIME, &["gopher://"]);
    let r = run("file://relative/dir", &["-w", "meta", "--files", "2"]);
    assert_one_line(&r, RUNTIME, &["file:///"]);
}

#[test]
fn bad_flags_and_values() {
    let cases: &[(&[&str], &[&str])] = &[
        (&["-w", "meta", "--bogus"], &["--bogus"]),
        (&["-w", "meta", "--workers", "0"], &["workers = 0"]),
        (&["-w", "meta", "--workers", "-3"], &["-3"]),
        (&["-w", "io", "--bs", "abc"], &["bs", "'abc'"]),
        (&["-w", "io", "--rw", "foo"], &["rw = 'foo'", "randrw"]),
        (
            &["-w", "meta", "--rw", "randread"],
            &["'rw' does not apply to the meta workload"],
        ),
        (
            &["-w", "files", "--layout", "shared"],
            &["'layout' does not apply to the files workload"],
        ),
        (
            &["-w", "io", "--files", "3"],
            &["'files' does not apply to the io workload"],
        ),
        (&["-w", "nfs"], &["unknown workload 'nfs'"]),
        (
            &["-w", "jobs/seq.fio"],
            &["give a workload file without -w: dfsbench run jobs/seq.fio"],
        ),
        (&["--rw", "randread"], &["--workload"]),
        (&["-w", "io", "--iodepth", "0"], &["iodepth = 0"]),
        (&["-w", "io", "--pre-read"], &["pre_read", "add --invalidate 0"]),
        (
            &["-w", "io", "--pre-read", "--invalidate", "0", "--direct"],
            &["pre_read", "direct I/O bypasses"],
        ),
        (&["-w", "io", "--size", "1k", "--bs", "4k"], &["smaller than bs"]),
        (&["-w", "io", "--duration", "0"], &["duration = 0"]),
        (&["-w", "io", "--duration", "soon"], &["invalid duration 'soon'"]),
        (&["-w", "io", "--ramp", "1s"], &["ramp needs a time-based job"]),
        (&["-w", "io", "--rwmixread", "101"], &["rwmixread = 101"]),
        (
            &["-w", "io", "--ioengine", "windowsaio"],
            &["ioengine = 'windowsaio'", "posixaio"],
        ),
        (&["-w", "io", "--direct=2"], &["'2' is not 0 or 1"]),
        (&["-w", "io", "--direct", "--bs", "1000"], &["512-byte"]),
        (&["-w", "files", "--sizes", "10-1k"], &["COUNTxSIZE"]),
        (&["-w", "files", "--sizes", "0x1k"], &["0 files"]),
        (&["-w", "files", "--phases", "read"], &["keep the write phase"]),
        (&["-w", "meta", "--phases", "create,chmod"], &["unknown phase 'chmod'"]),
        (&["-w", "meta", "--phases", "mkdir"], &["need dirs"]),
        (&["-w", "meta", "--layout", "tree"], &["layout = 'tree'"]),
        (&["-w", "meta", "-j", "2", "--threads", "3"], &["threads = 3"]),
        (&["-w", "meta", "--max-errors", "many"], &["many"]),
        (&["--format", "xml"], &["xml"]),
        (&["-w", "train", "--preset", "gpt"], &["preset = 'gpt'", "unet3d"]),
        (
            &["-w", "train", "--accelerator", "tpu"],
            &["accelerator = 'tpu'", "h100"],
        ),
        (&["-w", "train", "--accelerators", "0"], &["accelerators = 0"]),
        (
            &["-w", "train", "--accelerators", "2", "--workers", "3"],
            &["accelerators = 2", "not both"],
        ),
        (&["-w", "train", "--phases", "train"], &["keep the generate phase"]),
        (&["-w", "train", "--files", "4", "--scale", "0.1"], &["files or scale"]),
        (&["-w", "train", "--scale", "0"], &["scale = 0"]),
        (&["-w", "train", "--batch-size", "0"], &["batch_size = 0"]),
        (&["-w", "train", "--compute-time", "fast"], &["compute_time", "'fast'"]),
        (&["-w", "train", "--au-threshold", "120"], &["au_threshold = 120"]),
        (
            &["-w", "train", "--duration", "10s"],
            &["'duration' does not apply to the train workload"],
        ),
        (
            &["-w", "train", "--accelerator-search"],
            &["accelerator_search needs accelerators"],
        ),
        (
            &[
                "-w",
                "train",
                "--accelerator-search",
                "--accelerators",
                "2",
                "--epochs",
                "2",
            ],
            &["leave out epochs"],
        ),
        (&["-w", "checkpoint"], &["--checkpoint-size SIZE", "--preset llama3-8b"]),
        (
            &["-w", "checkpoint", "--preset", "llama3-2t"],
            &["preset = 'llama3-2t'", "llama3-405b"],
        ),
        (
            &["-w", "checkpoint", "--preset", "llama3-8b", "--checkpoint-size", "1m"],
            &["not both"],
        ),
        (
            &["-w", "checkpoint", "--checkpoint-size", "1m", "--scale", "2"],
            &["scale applies to a preset"],
        ),
        (
            &["-w", "checkpoint", "--checkpoint-size", "4", "--checkpoint-files", "5"],
            &["checkpoint_files = 5"],
        ),
        (
            &["-w", "checkpoint", "--checkpoint-size", "1m", "--checkpoints", "0"],
            &["checkpoints = 0"],
        ),
        (
            &["-w", "checkpoint", "--checkpoint-size", "1m", "--files", "3"],
            &["'files' does not apply to the checkpoint workload"],
        ),
    ];
    for (args, needles) in cases {
        let r = run("mem://", args);
        assert_one_line(&r, USAGE, needles);
    }
    // A missing subcommand or value is a usage error too.
    let r = common::dfsbench(&["run", "-t"]);
    assert_one_line(&r, USAGE, &["-t"]);
    let r = common::dfsbench(&["explode"]);
    assert_one_line(&r, USAGE, &["explode"]);
}

#[test]
fn bad_workload_files() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    // A misspelt key: the error names the file, the line and the key.
    let f = write("typo.toml", "[[job]]\nworkload = \"meta\"\nfiles = 3\nwrkers = 2\n");
    let r = run("mem://", &[&f]);
    assert_one_line(&r, USAGE, &[&f, "line 4", "wrkers"]);
    // Broken syntax (TOML's message spans several lines): still one line, naming the line.
    let f = write("syntax.toml", "[[job]]\nworkload = \"meta\"\nfiles = [3\n\n");
    let r = run("mem://", &[&f]);
    assert_one_line(&r, USAGE, &[&f, "line "]);
    let f = write("string.toml", "[[job]]\nworkload = \"meta\nfiles = 3\n");
    let r = run("mem://", &[&f]);
    assert_one_line(&r, USAGE, &[&f, "line 2"]);
    // A wrong type.
    let f = write("type.toml", "[[job]]\nworkload = \"io\"\niodepth = \"deep\"\n");
    let r = run("mem://", &[&f]);
    assert_one_line(&r, USAGE, &[&f, "line 3"]);
    // A valid file with a key of another workload.
    let f = write(
        "other.toml",
        "[[job]]\nname = \"md\"\nworkload = \"meta\"\nbs = \"4k\"\n",
    );
    let r = run("mem://", &[&f]);
    assert_one_line(&r, USAGE, &["job 'md'", "'bs' does not apply to the meta workload"]);
    // No jobs at all.
    let f = write("empty.toml", "verify = true\n");
    let r = run("mem://", &[&f]);
    assert_one_line(&r, USAGE, &["no job"]);
    // A file and job flags it would ignore.
    let f = write("ok.toml", "[[job]]\nworkload = \"meta\"\nfiles = 2\n");
    let r = run("mem://", &[&f, "--rw", "read"]);
    assert_one_line(&r, USAGE, &["workload file"]);
    // A file that is not there.
    let missing = dir.path().join("missing.toml");
    let r = run("mem://", &[missing.to_str().unwrap()]);
    assert_one_line(&r, USAGE, &[missing.to_str().unwrap()]);
}

#[test]
fn missing_capability_is_named_before_the_run() {
    let r = run(
        "mem://",
        &["-w", "io", "--rw", "randread", "--size", "64k", "--direct=1"],
    );
    let line = assert_one_line(&r, RUNTIME, &["O_DIRECT", "mem backend"]);
    assert!(line.contains("job 'io'"), "{line}");
    let r = run("mem://", &["-w", "files", "--files", "2", "--direct"]);
    assert_one_line(&r, RUNTIME, &["O_DIRECT", "mem"]);
}

#[test]
fn permission_denied() {
    let target = tempfile::tempdir().unwrap();
    let uri = target.path().to_str().unwrap();
    let args = ["-w", "meta", "--files", "2"];
    let r = if is_root() {
        // Root may write anywhere: run as nobody against a root-owned 0755 directory.
        std::fs::set_permissions(target.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let ok = Command::new("setpriv")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        if !ok {
            eprintln!("note: setpriv is missing: permission denied not tested as root");
            return;
        }
        let mut cmd = Command::new("setpriv");
        cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups", common::bin()]);
        run_with(cmd, uri, &args)
    } else {
        std::fs::set_permissions(target.path(), std::fs::Permissions::from_mode(0o555)).unwrap();
        run(uri, &args)
    };
    if r.stderr.contains("Permission denied") && r.stderr.contains("dfsbench") && r.code == Some(126) {
        eprintln!("note: nobody may not execute the test binary here: permission denied not tested");
        return;
    }
    assert_one_line(&r, RUNTIME, &["permission denied", uri]);
    assert_eq!(
        std::fs::read_dir(target.path()).unwrap().count(),
        0,
        "nothing was created"
    );
}

/// A tiny tmpfs, unmounted when dropped.
struct TinyFs {
    dir: tempfile::TempDir,
}

impl TinyFs {
    fn mount() -> Option<TinyFs> {
        let dir = tempfile::tempdir().unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=1m", "tmpfs"])
            .arg(dir.path())
            .status()
            .is_ok_and(|s| s.success());
        ok.then_some(TinyFs { dir })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for TinyFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

#[test]
fn disk_full() {
    if !is_root() {
        eprintln!("note: not root, cannot mount a tiny tmpfs: disk full not tested");
        return;
    }
    let Some(fs) = TinyFs::mount() else {
        eprintln!("note: mounting a tmpfs failed: disk full not tested");
        return;
    };
    let uri = fs.path().to_str().unwrap();
    let r = fill_up(uri);
    let doc = r.result();
    assert_eq!(common::names(doc), ["write"], "the run stopped in the write phase");
    let write = &doc["phases"][0];
    assert_eq!(write["errors"]["samples"][0]["kind"], "ENOSPC");
    assert!(u(&write["ops"]) > 0, "files that fitted were written");
    assert!(u(&write["ops"]) < 80);
    // The run directory was removed from the full file system.
    assert_eq!(std::fs::read_dir(fs.path()).unwrap().count(), 0);

    // With --max-errors 0 the run goes on: complete, with errors, and exit code 1.
    let args = [
        "-w",
        "files",
        "-j",
        "2",
        "--files",
        "20",
        "--file-size",
        "64k",
        "--phases",
        "write,delete",
        "--max-errors",
        "0",
    ];
    let r = run(uri, &args);
    assert_eq!(r.code, Some(RUNTIME), "{}", r.describe());
    let lines = r.stderr_lines();
    assert_eq!(lines.len(), 1, "{}", r.stderr);
    assert!(lines[0].contains("operations failed"), "{}", lines[0]);
    let doc = r.result();
    validate(doc);
    common::check_invariants(doc);
    assert_eq!(doc["status"], "complete");
    let write = &doc["phases"][0];
    assert_eq!(
        u(&write["ops"]) + u(&write["errors"]["total"]),
        40,
        "every file written or counted as failed"
    );
    assert_eq!(u(&doc["phases"][1]["ops"]), 40, "every file deleted, partial ones too");
    assert_eq!(std::fs::read_dir(fs.path()).unwrap().count(), 0);

    // Reads pass by the files whose write failed: they read what was written, without errors.
    let args = [
        "-w",
        "files",
        "-j",
        "2",
        "--files",
        "20",
        "--file-size",
        "64k",
        "--phases",
        "write,read",
        "--max-errors",
        "0",
    ];
    let r = run(uri, &args);
    let doc = r.result();
    validate(doc);
    let (write, read) = (&doc["phases"][0], &doc["phases"][1]);
    assert!(u(&write["errors"]["total"]) > 0, "{}", r.describe());
    assert_eq!(u(&read["ops"]), u(&write["ops"]), "{}", read["errors"]);
    assert_eq!(u(&read["errors"]["total"]), 0, "{}", read["errors"]);
    assert_eq!(std::fs::read_dir(fs.path()).unwrap().count(), 0);
}

/// Write 2 x 40 x 64 KiB = 5 MiB into the 1 MiB `target` with --max-errors 5: the run ends
/// as on a full disk, in one line naming ENOSPC, with its result written (status aborted, 5 or
/// 6 ENOSPC errors from the 2 workers).
fn fill_up(target: &str) -> Run {
    let args = [
        "-w",
        "files",
        "-j",
        "2",
        "--files",
        "40",
        "--file-size",
        "64k",
        "--max-errors",
        "5",
    ];
    let r = run(target, &args);
    assert_eq!(r.code, Some(RUNTIME), "{}", r.describe());
    let lines = r.stderr_lines();
    assert_eq!(lines.len(), 1, "one line on stderr: {}", r.stderr);
    assert!(lines[0].contains("ENOSPC"), "{}", lines[0]);
    assert!(!r.stderr.contains("panicked"));
    let doc = r.result();
    validate(doc);
    common::check_invariants(doc);
    assert_eq!(doc["status"], "aborted");
    assert!(doc["status_message"].as_str().unwrap().contains("ENOSPC"));
    let enospc = u(&doc["phases"][0]["errors"]["by_kind"]["ENOSPC"]);
    assert!(
        (5..=6).contains(&enospc),
        "{enospc} ENOSPC errors with --max-errors 5 and 2 workers"
    );
    r
}

/// mem:// has a capacity (`?size=`): writes beyond it fail with ENOSPC, counted as a full
/// disk's, and the run ends as on one, with its result written.
#[test]
fn mem_store_full() {
    // Stopped by --max-errors as on a full disk.
    let r = fill_up("mem://?size=1m");
    assert!(r.stderr.contains("mem://?size="), "{}", r.stderr);
    let doc = r.result();
    assert_eq!(doc["target"]["details"]["capacity_bytes"], "1048576");
    let write = &doc["phases"][0];
    assert!(
        (10..16).contains(&u(&write["ops"])),
        "the files that fitted: {}",
        write["ops"]
    );

    // A time-based run goes on at the capacity to its end and completes, with the errors
    // counted (exit 1, as with failed operations); the later phases read and delete the files.
    let args = [
        "-w",
        "files",
        "-j",
        "2",
        "--file-size",
        "64k",
        "--duration",
        "2s",
        "--max-errors",
        "0",
    ];
    let r = run("mem://?size=1m", &args);
    assert_eq!(r.code, Some(RUNTIME), "{}", r.describe());
    assert!(r.stderr_lines()[0].contains("operations failed"), "{}", r.stderr);
    let doc = r.result();
    validate(doc);
    assert_eq!(doc["status"], "complete");
    let write = &doc["phases"][0];
    assert!(u(&write["errors"]["by_kind"]["ENOSPC"]) > 0, "{}", write["errors"]);
    assert_eq!(u(&write["errors"]["by_kind"]["ENOSPC"]), u(&write["errors"]["total"]));
    assert!(
        u(&write["bytes"]) <= 1 << 20,
        "{} bytes written into 1 MiB",
        write["bytes"]
    );
    assert!(write["errors"]["samples"].as_array().unwrap().len() <= 100);
    for p in &doc["phases"].as_array().unwrap()[1..] {
        assert_eq!(u(&p["errors"]["total"]), 0, "{}: {}", p["label"], p["errors"]);
    }

    // A size that is none is refused in one line.
    let r = run("mem://?size=lots", &["-w", "meta"]);
    assert_one_line(&r, RUNTIME, &["mem:// size: invalid size 'lots'", "mem://?size=4g"]);
}

/// Hangs fail the test instead of hanging it: a run is killed after this long (a generous
/// bound for a loaded machine; every case below ends in milliseconds when it works).
const HANG: &str = "120";

/// `dfsbench <args>` in a scratch directory, killed if it has not ended after [`HANG`] seconds
/// (it then exits 137 and the test fails on the exit code).
fn bounded(args: &[&str]) -> Run {
    let scratch = tempfile::tempdir().unwrap();
    let out = Command::new("timeout")
        .args(["-s", "KILL", HANG, common::bin()])
        .args(args)
        .current_dir(scratch.path())
        .output()
        .expect("run dfsbench under timeout");
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        result: None,
        scratch,
    }
}

/// `dfsbench run -t <target> ...` that is killed if it hangs.
fn bounded_run(target: &str, args: &[&str]) -> Run {
    let mut cmd = Command::new("timeout");
    cmd.args(["-s", "KILL", HANG, common::bin()]);
    run_with(cmd, target, args)
}

/// Numbers that used to panic or exhaust memory (issue 13): durations past what the clock
/// holds, rates whose gaps overflow it, counts that allocated before any work.
#[test]
fn numbers_beyond_the_clock_and_memory_are_refused() {
    let cases: &[(&[&str], &[&str])] = &[
        (&["-w", "meta", "--duration", "1e11"], &["duration '1e11'", "365d"]),
        (&["-w", "meta", "--duration", "1e20"], &["duration '1e20'", "365d"]),
        (&["-w", "meta", "--duration", "NaN"], &["invalid duration 'NaN'"]),
        (&["-w", "meta", "--duration", "5s", "--ramp", "1e11"], &["ramp", "365d"]),
        (
            &[
                "-w",
                "meta",
                "--duration",
                "5s",
                "--until-stable",
                "--stable-window",
                "1e11",
            ],
            &["stable_window", "365d"],
        ),
        (
            &["-w", "meta", "--rate", "1e-300"],
            &["rate = 1e-300", "at least 0.001"],
        ),
        (
            &["-w", "meta", "--rate", "5e-324"],
            &["rate = 5e-324", "at least 0.001"],
        ),
        (&["-w", "meta", "--rate", "inf"], &["rate = inf"]),
        (&["-w", "meta", "--rate", "NaN"], &["rate = NaN"]),
        (
            &["-w", "meta", "--duration", "1s", "--rate-steps", "100,1e-300"],
            &["rate_steps = 1e-300"],
        ),
        (
            &["-w", "iterate", "--iterations", "100000000"],
            &["iterations = 100000000", "10000"],
        ),
        (
            &["-w", "iterate", "--iterations", "4294967296"],
            &["iterations = 4294967296"],
        ),
        (
            &["-w", "mix", "--files", "9223372036854775807"],
            &["files = 9223372036854775807"],
        ),
    ];
    for (args, needles) in cases {
        let r = bounded_run("mem://", args);
        assert_one_line(&r, USAGE, needles);
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("huge.toml");
    std::fs::write(
        &file,
        "[[job]]\nworkload = \"iterate\"\nworkers = 1\nfiles = 9223372036854775807\niterations = 4294967296\n",
    )
    .unwrap();
    let r = bounded_run("mem://", &[file.to_str().unwrap()]);
    assert_one_line(&r, USAGE, &["iterations = 4294967296"]);
}

/// A blocking backend needs a thread per worker: more than the address space holds is refused
/// before the run starts, naming the limit, and leaves no run directory.
#[test]
fn more_threads_than_the_limits_allow_are_refused() {
    let target = tempfile::tempdir().unwrap();
    let mut cmd = Command::new("sh");
    cmd.args([
        "-c",
        "ulimit -v 4194304 && exec timeout -s KILL \"$0\" \"$@\"",
        HANG,
        common::bin(),
    ]);
    let r = run_with(
        cmd,
        target.path().to_str().unwrap(),
        &["-w", "meta", "--files", "1", "-j", "1048576"],
    );
    assert_one_line(&r, RUNTIME, &["1048576 threads", "give fewer workers"]);
    assert_eq!(
        std::fs::read_dir(target.path()).unwrap().count(),
        0,
        "no run directory left"
    );
}

/// Workload and result files are read only when they are regular files of a sane size: a FIFO
/// used to hang, /dev/zero to eat memory.
#[test]
fn inputs_that_are_not_small_regular_files_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.toml");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let fifo = fifo.to_str().unwrap();
    let big = dir.path().join("big.toml");
    std::fs::write(&big, "# padding\n".repeat(200_000)).unwrap();
    let big = big.to_str().unwrap();
    for (file, needle) in [
        ("/dev/zero", "not a regular file"),
        (fifo, "not a regular file"),
        (big, "larger than 1 MiB"),
    ] {
        let r = bounded_run("mem://", &[file]);
        assert_one_line(&r, USAGE, &[file, needle]);
    }
    for args in [
        &["report", fifo][..],
        &["compare", fifo, fifo],
        &["report", "/dev/zero"],
    ] {
        let r = bounded(args);
        assert_one_line(&r, USAGE, &["not a regular file"]);
    }
}

/// `report DIR` does not follow links to folders (a cycle used to grow memory forever) and
/// gives up on a folder of far too many entries (`report /` used to run forever).
#[test]
fn report_walks_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("a")).unwrap();
    std::os::unix::fs::symlink(dir.path(), dir.path().join("a/loop")).unwrap();
    // A large JSON file that is no result is skipped without being parsed.
    std::fs::write(dir.path().join("a/big.json"), format!("[{}0]", "0,".repeat(1 << 20))).unwrap();
    let d = dir.path().to_str().unwrap();
    let r = bounded(&["report", d, "--format", "md"]);
    assert_one_line(&r, USAGE, &[d, "holds no dfsbench result files"]);
    let r = bounded(&["report", "/", "--format", "md"]);
    assert_eq!(r.code, Some(USAGE), "{}", r.describe());
    assert_eq!(r.stderr_lines().len(), 1, "{}", r.describe());
}

/// `-o user.txt` writes through a temporary file of its own: a neighbour named like the old
/// temporary file (`user.json.tmp`) is left alone.
#[test]
fn results_are_written_without_touching_other_files() {
    let dir = tempfile::tempdir().unwrap();
    let neighbour = dir.path().join("user.json.tmp");
    std::fs::write(&neighbour, "not dfsbench's").unwrap();
    let out = dir.path().join("user.txt");
    let r = bounded(&[
        "run",
        "-t",
        "mem://",
        "-w",
        "meta",
        "--files",
        "3",
        "-j",
        "1",
        "-q",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(r.code, Some(0), "{}", r.describe());
    assert_eq!(std::fs::read_to_string(&neighbour).unwrap(), "not dfsbench's");
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    validate(&doc);
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 2, "no temporary file left: {names:?}");
}

#[test]
fn study_list_takes_no_folder() {
    let r = bounded(&["study", "list", "--from", "/nonexistent"]);
    assert_one_line(&r, USAGE, &["study list takes no --from", "/nonexistent"]);
}

/// Target URIs and network failures get one line that says what to do; `-v` adds the full
/// text of the error (HTTP context, every cause) on a line of its own.
#[test]
fn target_errors_are_actionable() {
    let r = run("s3://b/x?region=", &["-w", "meta", "--files", "1"]);
    assert_one_line(&r, RUNTIME, &["option 'region' has no value", "region=us-east-1"]);
    let r = run("hdfs://127.0.0.1:99999/x", &["-w", "meta", "--files", "1"]);
    assert_one_line(
        &r,
        RUNTIME,
        &["port is not a number from 1 to 65535", "hdfs://namenode:8020"],
    );
    // --endpoints (and the workload file's `endpoints`) only where workers can spread.
    let r = run("mem://", &["-w", "meta", "--files", "1", "--endpoints", "h1:9000"]);
    assert_one_line(
        &r,
        RUNTIME,
        &["the mem target 'mem://' has one way in: drop --endpoints"],
    );
    let r = run(
        "s3://h1:9000,h2:9000/b",
        &["-w", "meta", "--files", "1", "--endpoints", "h3:9000"],
    );
    assert_one_line(
        &r,
        RUNTIME,
        &["(h1:9000,h2:9000) and so does --endpoints", "keep one list"],
    );
    let r = run(
        "s3://b",
        &["-w", "meta", "--files", "1", "--endpoints", "h1:9000,ftp://h2"],
    );
    assert_one_line(
        &r,
        RUNTIME,
        &["--endpoints entry 'ftp://h2' has the scheme 'ftp'", "http://"],
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("spread.toml");
    std::fs::write(
        &file,
        "endpoints = [\"h1:9000\", \"h2:9000\"]\n[[job]]\nworkload = \"meta\"\nfiles = 1\n",
    )
    .unwrap();
    let r = run("webdav://127.0.0.1:1/x", &[file.to_str().unwrap()]);
    assert_one_line(&r, RUNTIME, &["the webdav target", "drop --endpoints"]);
    // Port 1 of the loopback refuses connections: the message names the cause and the fix.
    let refused = || {
        let mut cmd = Command::new(common::bin());
        cmd.env("AWS_ACCESS_KEY_ID", "k").env("AWS_SECRET_ACCESS_KEY", "s");
        cmd
    };
    let uri = "s3://b/x?endpoint=http://127.0.0.1:1";
    let r = run_with(refused(), uri, &["-w", "meta", "--files", "1"]);
    let line = assert_one_line(&r, RUNTIME, &["cannot connect", "Connection refused"]);
    assert!(line.len() < 400, "{} characters: {line}", line.len());
    assert!(!line.contains("context"), "{line}");
    let r = run_with(refused(), uri, &["-w", "meta", "--files", "1", "-v"]);
    assert_eq!(r.code, Some(RUNTIME), "{}", r.describe());
    let lines = r.stderr_lines();
    assert_eq!(lines.len(), 2, "{}", r.describe());
    assert!(
        lines[0].starts_with("dfsbench: detail: ") && lines[0].contains("context"),
        "{}",
        lines[0]
    );
    assert!(lines[1].contains("cannot connect"), "{}", lines[1]);
}

/// A service that accepts connections and never answers: the run's set-up gives up at
/// --op-timeout with one line, and a Ctrl-C during the set-up (no --op-timeout) ends it at once.
#[test]
fn a_silent_service_holds_no_run() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    // Accepts and keeps every connection open, saying nothing, until the test ends.
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for c in listener.incoming().flatten() {
            held.push(c);
        }
    });
    let target = format!("s3://b/x?endpoint=http://127.0.0.1:{port}");
    let keys = [("AWS_ACCESS_KEY_ID", "a"), ("AWS_SECRET_ACCESS_KEY", "b")];
    let mut cmd = Command::new("timeout");
    cmd.args(["-s", "KILL", HANG, common::bin()]).envs(keys);
    let r = run_with(cmd, &target, &["-w", "files", "--op-timeout", "2s", "--duration", "5s"]);
    assert_one_line(
        &r,
        RUNTIME,
        &["no answer within 2s while creating the run prefix", "--op-timeout"],
    );

    let scratch = tempfile::tempdir().unwrap();
    let mut child = Command::new(common::bin())
        .args(["run", "-t", &target, "-q", "-w", "files", "--duration", "5s"])
        .envs(keys)
        .current_dir(scratch.path())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    // SAFETY: kill(2) on the child this test started.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    // The set-up's own limit is 60 s: ending well before it is the Ctrl-C's doing.
    let sent = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if sent.elapsed() > std::time::Duration::from_secs(30) {
            let _ = child.kill();
            panic!("the run ignored Ctrl-C during its set-up");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(!status.success(), "{stderr}");
    assert!(stderr.contains("interrupted while creating the run prefix"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}
