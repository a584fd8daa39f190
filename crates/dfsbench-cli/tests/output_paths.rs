//! It touches only what is its own. Every file a command writes where the user says follows one
//! rule (`dfsbench_result::files::write_output`): a new path or a regular file is replaced
//! atomically, a link is followed, a FIFO or a character device is written through, anything
//! else is refused with one line; nothing is renamed over a device, a FIFO or a link. Checked
//! for every command that takes an output path, on every kind of path, as root and as an
//! unprivileged user. And every command whose stdout reader goes away ends quietly.

mod common;

use std::os::fd::{FromRawFd as _, OwnedFd};
use std::os::unix::fs::{FileTypeExt as _, MetadataExt as _, OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::{bin, is_root, validate};

/// What is at the output path before the command runs.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    New,
    Regular,
    Link,
    DanglingLink,
    Fifo,
    CharDevice,
    Directory,
    Socket,
    BlockDevice,
}

const KINDS: [Kind; 9] = [
    Kind::New,
    Kind::Regular,
    Kind::Link,
    Kind::DanglingLink,
    Kind::Fifo,
    Kind::CharDevice,
    Kind::Directory,
    Kind::Socket,
    Kind::BlockDevice,
];

fn c_path(p: &Path) -> std::ffi::CString {
    std::ffi::CString::new(p.to_str().unwrap()).unwrap()
}

fn mknod(p: &Path, kind: libc::mode_t, major: u32, minor: u32) {
    // SAFETY: a NUL-terminated path in the test's own directory.
    let made = unsafe { libc::mknod(c_path(p).as_ptr(), kind | 0o666, libc::makedev(major, minor)) };
    assert_eq!(made, 0, "mknod {}", p.display());
    // Usable by anyone, whatever the umask, as /dev/null is.
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o666)).unwrap();
}

/// Make `kind` at `dir/out` (its target at `dir/target` for links); the socket's listener must
/// live as long as the check.
fn make(kind: Kind, dir: &Path) -> Option<std::os::unix::net::UnixListener> {
    let out = dir.join("out");
    match kind {
        Kind::New => {}
        Kind::Regular => {
            std::fs::write(&out, "the user's").unwrap();
            std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o640)).unwrap();
        }
        Kind::Link => {
            std::fs::write(dir.join("target"), "the user's").unwrap();
            std::os::unix::fs::symlink("target", &out).unwrap();
        }
        Kind::DanglingLink => std::os::unix::fs::symlink("target", &out).unwrap(),
        Kind::Fifo => {
            // SAFETY: a NUL-terminated path.
            assert_eq!(unsafe { libc::mkfifo(c_path(&out).as_ptr(), 0o666) }, 0);
            std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o666)).unwrap();
        }
        // A copy of /dev/null, never the system's.
        Kind::CharDevice => mknod(&out, libc::S_IFCHR, 1, 3),
        Kind::Directory => {
            std::fs::create_dir(&out).unwrap();
            std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o777)).unwrap();
        }
        Kind::Socket => return Some(std::os::unix::net::UnixListener::bind(&out).unwrap()),
        // Major 240 is for local use: no driver answers it, so not even a wrong open reaches a disk.
        Kind::BlockDevice => mknod(&out, libc::S_IFBLK, 240, 0),
    }
    None
}

/// A command that writes to the path given after its arguments.
struct Writer {
    name: &'static str,
    args: Vec<String>,
    /// Whether a directory is a place to put a file named by the command (run's `-o DIR`).
    dir_holds_output: bool,
    /// Whether what was written must be a result document.
    result_json: bool,
}

impl Writer {
    fn new(name: &'static str, args: &[&str], dir_holds_output: bool, result_json: bool) -> Writer {
        Writer {
            name,
            args: args.iter().map(|a| a.to_string()).collect(),
            dir_holds_output,
            result_json,
        }
    }

    fn args_to(&self, out: &Path) -> Vec<String> {
        let mut args = self.args.clone();
        args.push(out.to_str().unwrap().to_string());
        args
    }
}

/// A result file to report on, readable by anyone.
fn result_file(dir: &Path) -> PathBuf {
    let path = dir.join("input.json");
    let out = Command::new(bin())
        .args([
            "run", "-t", "mem://", "-w", "meta", "--files", "3", "-j", "1", "-q", "-o",
        ])
        .arg(&path)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    path
}

fn writers(input: &Path) -> [Writer; 4] {
    let input = input.to_str().unwrap();
    let run = [
        "run", "-t", "mem://", "-w", "meta", "--files", "3", "-j", "1", "-q", "-o",
    ];
    [
        Writer::new("run -o", &run, true, true),
        Writer::new(
            "report --format md -o",
            &["report", input, "--format", "md", "-o"],
            false,
            false,
        ),
        Writer::new("report (html) -o", &["report", input, "-o"], false, false),
        Writer::new("compare -o", &["compare", input, input, "-o"], false, false),
    ]
}

/// Run `args` (as `uid` when given) in `dir`, under a bound, with a reader on `dir/out` when
/// it is a FIFO; the output and what the reader got.
fn run_in(dir: &Path, args: &[String], uid: Option<u32>, fifo: bool) -> (Output, Option<Vec<u8>>) {
    let reader = fifo.then(|| {
        let out = dir.join("out");
        std::thread::spawn(move || std::fs::read(out).unwrap())
    });
    let mut cmd = Command::new("timeout");
    cmd.args(["-s", "KILL", "120"]);
    if let Some(uid) = uid {
        cmd.arg("setpriv")
            .arg(format!("--reuid={uid}"))
            .arg(format!("--regid={uid}"))
            .arg("--clear-groups");
    }
    let out = cmd.arg(bin()).args(args).current_dir(dir).output().unwrap();
    if fifo {
        // A writer that comes and goes: the reader ends even if the command never opened the FIFO.
        let _ = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(dir.join("out"));
    }
    (out, reader.map(|r| r.join().unwrap()))
}

fn describe(out: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// What `w` must have done with `kind` at `dir/out`.
fn check(w: &Writer, kind: Kind, dir: &Path, out: &Output, read: Option<Vec<u8>>) {
    let path = dir.join("out");
    let what = format!("{} on {kind:?}: {}", w.name, describe(out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("panicked") && !stderr.contains("internal error"),
        "{what}"
    );
    let written = |bytes: &[u8]| {
        assert!(!bytes.is_empty(), "{what}");
        if w.result_json {
            validate(&serde_json::from_slice(bytes).unwrap_or_else(|e| panic!("not JSON ({e}): {what}")));
        }
    };
    let meta = std::fs::symlink_metadata(&path).unwrap_or_else(|e| panic!("{e}: {what}"));
    let refused = |needle: &str| {
        assert_ne!(out.status.code(), Some(0), "{what}");
        let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(lines.len(), 1, "one line: {what}");
        assert!(lines[0].contains(needle) && lines[0].contains("out"), "{what}");
    };
    match kind {
        Kind::New | Kind::Regular => {
            assert!(out.status.success(), "{what}");
            assert!(meta.is_file(), "{what}");
            written(&std::fs::read(&path).unwrap());
            if kind == Kind::Regular {
                assert_eq!(meta.mode() & 0o777, 0o640, "the replaced file keeps its mode: {what}");
            }
        }
        Kind::Link | Kind::DanglingLink => {
            assert!(out.status.success(), "{what}");
            assert!(meta.file_type().is_symlink(), "the link stays a link: {what}");
            written(&std::fs::read(dir.join("target")).unwrap());
        }
        Kind::Fifo => {
            assert!(out.status.success(), "{what}");
            assert!(meta.file_type().is_fifo(), "the FIFO stays: {what}");
            written(&read.expect("a reader"));
        }
        Kind::CharDevice => {
            assert!(out.status.success(), "{what}");
            assert!(meta.file_type().is_char_device(), "the device stays: {what}");
            assert_eq!(meta.rdev(), libc::makedev(1, 3), "{what}");
        }
        Kind::Directory if w.dir_holds_output => {
            assert!(out.status.success(), "{what}");
            let files: Vec<_> = std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()).collect();
            assert_eq!(files.len(), 1, "{what}");
            written(&std::fs::read(&files[0]).unwrap());
        }
        Kind::Directory => {
            refused("it is a directory");
            assert_eq!(std::fs::read_dir(&path).unwrap().count(), 0, "{what}");
        }
        Kind::Socket => {
            refused("it is a socket");
            assert!(meta.file_type().is_socket(), "{what}");
        }
        Kind::BlockDevice => {
            refused("it is a block device");
            assert!(meta.file_type().is_block_device(), "{what}");
        }
    }
    // Nothing but what the kind made and the command's output: no temporary file left.
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let expected: &[&str] = match kind {
        Kind::Link | Kind::DanglingLink => &["out", "target"],
        _ => &["out"],
    };
    assert_eq!(names, expected, "{what}");
}

/// Every writer on every kind of path, as `uid` (None: as ourselves).
fn every_writer_on_every_kind(uid: Option<u32>) {
    let base = tempfile::tempdir().unwrap();
    std::fs::set_permissions(base.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let input = result_file(base.path());
    for w in writers(&input) {
        for kind in KINDS {
            if matches!(kind, Kind::CharDevice | Kind::BlockDevice) && !is_root() {
                eprintln!("skipped {kind:?}: mknod needs root");
                continue;
            }
            let dir = base
                .path()
                .join(format!("{}-{kind:?}", w.name.replace([' ', '(', ')'], "_")));
            std::fs::create_dir(&dir).unwrap();
            let _listener = make(kind, &dir);
            // The user's own directory: writable by whoever runs the command.
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
            let (out, read) = run_in(&dir, &w.args_to(&dir.join("out")), uid, kind == Kind::Fifo);
            check(&w, kind, &dir, &out, read);
        }
    }
}

#[test]
fn every_output_path_kind_as_this_user() {
    every_writer_on_every_kind(None);
}

/// Root's case is the one that destroyed /dev/null; an unprivileged user's must hold too.
#[test]
fn every_output_path_kind_as_an_unprivileged_user() {
    if !is_root() {
        eprintln!("skipped: needs root to become another user (this run is that user already)");
        return;
    }
    if !common::nobody_can_run_the_binary() {
        return;
    }
    every_writer_on_every_kind(Some(65534));
}

/// `dfsbench man DIR` writes each page by the same rule: a device or a FIFO of a page's name
/// is written through, not replaced.
#[test]
fn man_pages_leave_devices_in_their_place() {
    if !is_root() {
        eprintln!("skipped: mknod needs root");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("dfsbench.1");
    mknod(&page, libc::S_IFCHR, 1, 3);
    let out = Command::new(bin())
        .args(["man", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", describe(&out));
    let meta = std::fs::symlink_metadata(&page).unwrap();
    assert!(meta.file_type().is_char_device() && meta.rdev() == libc::makedev(1, 3));
    assert!(
        dir.path().join("dfsbench-run.1").is_file(),
        "the other pages are written"
    );
}

/// `-o` through a descriptor's link (`/dev/stdout` when stdout is a pipe) reaches the reader.
#[test]
fn output_through_dev_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("stdout");
    std::os::unix::fs::symlink("/proc/self/fd/1", &link).unwrap();
    let out = Command::new(bin())
        .args([
            "run", "-t", "mem://", "-w", "meta", "--files", "3", "-j", "1", "-q", "--format", "json", "-o",
        ])
        .arg(&link)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", describe(&out));
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    // The result, then the same document as the --format json table.
    let text = String::from_utf8(out.stdout).unwrap();
    let docs: Vec<serde_json::Value> = serde_json::Deserializer::from_str(&text)
        .into_iter()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(docs.len(), 2, "{text}");
    validate(&docs[0]);
}

/// A pipe whose reader is already gone: every write to it fails with EPIPE.
fn closed_pipe() -> OwnedFd {
    let mut ends = [0; 2];
    // SAFETY: two ints for pipe(2) to fill.
    assert_eq!(unsafe { libc::pipe2(ends.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    // SAFETY: both ends are ours; the read end is closed at once, the write end owned once.
    unsafe {
        libc::close(ends[0]);
        OwnedFd::from_raw_fd(ends[1])
    }
}

/// Every command that prints on stdout, run where a result can be found.
fn printing_commands(input: &Path) -> Vec<Vec<String>> {
    let input = input.to_str().unwrap();
    let list = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    vec![
        list(&["run", "-t", "mem://", "-w", "meta", "--files", "3", "-j", "1"]),
        list(&[
            "run", "-t", "mem://", "-w", "meta", "--files", "3", "-j", "1", "-o", "-",
        ]),
        list(&["report", input, "--format", "md"]),
        list(&["report", input, "--format", "csv"]),
        list(&["compare", input, input]),
        list(&["study", "list"]),
        list(&["targets"]),
        list(&["lab", "status"]),
        list(&["lab", "status", "--format", "json"]),
        list(&["completions", "bash"]),
        list(&["man"]),
        list(&["--help"]),
        list(&["run", "--help"]),
        list(&["--version"]),
    ]
}

const CLOSED: &str = "into a closed pipe";

/// What a command whose stdout went away must have done: exit as it would have (0 here),
/// without a panic, and a run still saves its result.
fn check_quiet_end(args: &[String], how: &str, scratch: &Path, code: Option<i32>, stderr: &[u8]) {
    let stderr = String::from_utf8_lossy(stderr);
    let what = format!("`dfsbench {}` {how}: exit {code:?}\n{stderr}", args.join(" "));
    assert_eq!(code, Some(0), "{what}");
    assert!(
        !stderr.contains("panicked") && !stderr.contains("internal error"),
        "{what}"
    );
    // With `-o -` the result is saved to a file only when it could not reach the reader.
    let to_stdout = args.windows(2).any(|w| w == ["-o", "-"]);
    let runs = args[0] == "run" && !args.iter().any(|a| a == "--help");
    if runs && (!to_stdout || how == CLOSED) {
        let saved = scratch.join("dfsbench-results");
        let files: Vec<_> = std::fs::read_dir(&saved)
            .unwrap_or_else(|e| panic!("{e}: {what}"))
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(files.len(), 1, "the result is saved: {what}");
        validate(&serde_json::from_slice(&std::fs::read(&files[0]).unwrap()).unwrap());
    }
}

#[test]
fn a_closed_stdout_ends_every_command_quietly() {
    let base = tempfile::tempdir().unwrap();
    let input = result_file(base.path());
    let labs = tempfile::tempdir().unwrap();
    for args in printing_commands(&input) {
        // The reader is gone before the first write.
        let scratch = tempfile::tempdir().unwrap();
        let out = Command::new(bin())
            .args(&args)
            .env("DFSBENCH_LAB_DIR", labs.path())
            .current_dir(scratch.path())
            .stdout(Stdio::from(closed_pipe()))
            .output()
            .unwrap();
        check_quiet_end(&args, CLOSED, scratch.path(), out.status.code(), &out.stderr);

        // The reader goes after one line, as with `| head -1`.
        let scratch = tempfile::tempdir().unwrap();
        let out = Command::new("bash")
            .args([
                "-c",
                "\"$@\" | head -1 >/dev/null; exit ${PIPESTATUS[0]}",
                "bash",
                bin(),
            ])
            .args(&args)
            .env("DFSBENCH_LAB_DIR", labs.path())
            .current_dir(scratch.path())
            .output()
            .unwrap();
        check_quiet_end(&args, "| head -1", scratch.path(), out.status.code(), &out.stderr);

        // No stdout at all (`>&-`).
        let scratch = tempfile::tempdir().unwrap();
        let out = Command::new("bash")
            .args(["-c", "exec \"$@\" >&-", "bash", bin()])
            .args(&args)
            .env("DFSBENCH_LAB_DIR", labs.path())
            .current_dir(scratch.path())
            .output()
            .unwrap();
        check_quiet_end(&args, ">&-", scratch.path(), out.status.code(), &out.stderr);
    }
}

/// `study --out DIR` writes its tables by the same rule: a device of a table's name stays, a
/// link's target gets the table.
#[test]
fn study_tables_leave_devices_and_follow_links() {
    let target = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("study");
    std::fs::create_dir(&dir).unwrap();
    let md = dir.join("tables.md");
    if is_root() {
        mknod(&md, libc::S_IFCHR, 1, 3);
    }
    std::os::unix::fs::symlink(out.path().join("mine.csv"), dir.join("tables.csv")).unwrap();
    let r = Command::new("timeout")
        .args([
            "-s",
            "KILL",
            "300",
            bin(),
            "study",
            "clients-sweep",
            "--scale",
            "0.0001",
        ])
        .args([
            "--points",
            "recovery-1",
            "--fault",
            "read+1s: true",
            "--recovery-probe",
            "test -e /proc/self",
        ])
        .arg("-t")
        .arg(target.path())
        .arg("--out")
        .arg(&dir)
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", describe(&r));
    if is_root() {
        let meta = std::fs::symlink_metadata(&md).unwrap();
        assert!(meta.file_type().is_char_device() && meta.rdev() == libc::makedev(1, 3));
    }
    assert!(std::fs::symlink_metadata(dir.join("tables.csv"))
        .unwrap()
        .file_type()
        .is_symlink());
    let csv = std::fs::read_to_string(out.path().join("mine.csv")).unwrap();
    assert!(csv.lines().count() > 1, "{csv}");
}
