//! dfsbench writes and deletes only under a run directory it created, removes it after the
//! run, and refuses to clean anything it did not create.

mod common;

use std::path::Path;

use common::{dfsbench, run, run_dirs, run_ok, snapshot, Target};

/// A target directory that already holds the user's data, including names that look like
/// dfsbench's own.
fn user_target() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let p = t.path();
    std::fs::write(p.join("notes.txt"), "keep me").unwrap();
    std::fs::create_dir_all(p.join("data/j0-files/w0")).unwrap();
    std::fs::write(p.join("data/j0-files/w0/s0.f0"), "user file with a dfsbench-like name").unwrap();
    std::fs::create_dir(p.join("j0-io")).unwrap();
    std::fs::write(p.join("j0-io/w0.dat"), vec![7u8; 10_000]).unwrap();
    std::fs::create_dir(p.join("dfsbench-results")).unwrap();
    std::fs::write(p.join("dfsbench-results/old.json"), "{}").unwrap();
    t
}

#[test]
fn runs_leave_user_files_untouched_and_remove_their_directory() {
    let t = Target::Dir(user_target());
    let dir = t.path().unwrap().to_path_buf();
    let before = snapshot(&dir);
    // run_ok checks that no run directory is left behind.
    run_ok(&t, &["-w", "meta", "-j", "2", "--files", "10", "--dirs", "3"]);
    run_ok(&t, &["-w", "files", "-j", "2", "--sizes", "2x0,2x5000"]);
    run_ok(&t, &["-w", "io", "--rw", "randrw", "-j", "2", "--size", "64k"]);
    assert_eq!(snapshot(&dir), before, "the user's files changed");
    // A run refused after its directory was made (posix needs a thread per worker) leaves
    // nothing behind either.
    let r = run(&t.uri(), &["-w", "meta", "-j", "2", "--threads", "1", "--files", "2"]);
    assert_eq!(r.code, Some(1), "{}", r.describe());
    assert!(r.stderr.contains("threads"), "{}", r.stderr);
    assert_eq!(snapshot(&dir), before);
}

#[test]
fn keep_then_clean() {
    let t = Target::Dir(user_target());
    let dir = t.path().unwrap().to_path_buf();
    let before = snapshot(&dir);
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
            "4k",
            "--phases",
            "write",
            "--keep",
        ],
    );
    assert_eq!(r["config"]["keep"], true);
    let kept = run_dirs(&dir);
    assert_eq!(kept.len(), 1, "--keep keeps exactly the run directory");
    let run_dir = &kept[0];
    assert_eq!(
        run_dir.file_name().unwrap().to_str().unwrap(),
        format!("dfsbench-{}", r["run_id"].as_str().unwrap())
    );
    assert_eq!(r["target"]["run_path"], run_dir.display().to_string());
    let marker = std::fs::read_to_string(run_dir.join(".dfsbench-run")).unwrap();
    assert_eq!(marker.trim(), run_dir.file_name().unwrap().to_str().unwrap());
    for w in 0..2 {
        for i in 0..3 {
            let f = run_dir.join(format!("j0-files/w{w}/s0.f{i}"));
            assert_eq!(std::fs::metadata(&f).unwrap().len(), 4096, "{}", f.display());
        }
    }

    let c = dfsbench(&["clean", run_dir.to_str().unwrap()]);
    assert_eq!(c.code, Some(0), "{}", c.describe());
    // 2 workers x 3 files, and the marker.
    assert_eq!(
        c.stdout.trim(),
        format!("removed {} (7 files, the marker included)", run_dir.display())
    );
    assert!(!run_dir.exists());
    assert_eq!(snapshot(&dir), before, "clean removed only the run directory");
}

/// `dfsbench clean <dir>` must refuse `dir` and leave it exactly as it was.
fn assert_refused(dir: &Path, why: &str) {
    let before = snapshot(dir);
    let c = dfsbench(&["clean", dir.to_str().unwrap()]);
    assert_eq!(c.code, Some(1), "{}", c.describe());
    let lines = c.stderr_lines();
    assert!(
        lines[0].starts_with(&format!("dfsbench: refusing to remove {}", dir.display())),
        "{}",
        c.stderr
    );
    assert!(lines[0].contains(why), "expected '{why}' in: {}", lines[0]);
    assert!(!c.stderr.contains("panicked"), "{}", c.stderr);
    assert!(dir.is_dir(), "{} was removed", dir.display());
    assert_eq!(snapshot(dir), before, "{} changed", dir.display());
}

#[test]
fn clean_refuses_what_dfsbench_did_not_create() {
    let root = tempfile::tempdir().unwrap();
    let fill = |d: &Path| {
        std::fs::create_dir_all(d.join("sub")).unwrap();
        std::fs::write(d.join("precious.txt"), "user data").unwrap();
        std::fs::write(d.join("sub/more.bin"), [1u8, 2, 3]).unwrap();
    };

    let plain = root.path().join("projects");
    fill(&plain);
    assert_refused(&plain, "does not start with 'dfsbench-'");

    let unmarked = root.path().join("dfsbench-x");
    fill(&unmarked);
    assert_refused(&unmarked, "no .dfsbench-run marker");

    let foreign = root.path().join("dfsbench-20260101-000000-abcdef");
    fill(&foreign);
    std::fs::write(foreign.join(".dfsbench-run"), "dfsbench-20260101-000000-000000\n").unwrap();
    assert_refused(&foreign, "marker file names another run");

    // A marker that is a directory, not a file.
    let odd = root.path().join("dfsbench-odd");
    fill(&odd);
    std::fs::create_dir(odd.join(".dfsbench-run")).unwrap();
    assert_refused(&odd, "marker");

    // A symbolic link named like a run directory, pointing at the user's data.
    let link = root.path().join("dfsbench-link");
    std::os::unix::fs::symlink(&plain, &link).unwrap();
    std::fs::write(plain.join(".dfsbench-run"), "dfsbench-link\n").unwrap();
    let before = snapshot(&plain);
    let c = dfsbench(&["clean", link.to_str().unwrap()]);
    assert_eq!(c.code, Some(1), "{}", c.describe());
    assert!(c.stderr.contains("refusing"), "{}", c.stderr);
    assert_eq!(snapshot(&plain), before, "clean followed a symbolic link");

    // Several paths: the good one goes, the bad ones stay, the exit code says so.
    let t = Target::temp();
    run_ok(&t, &["-w", "meta", "-j", "1", "--files", "2", "--keep"]);
    let good = run_dirs(t.path().unwrap()).remove(0);
    let c = dfsbench(&["clean", plain.to_str().unwrap(), good.to_str().unwrap()]);
    assert_eq!(c.code, Some(1), "{}", c.describe());
    assert!(!good.exists());
    assert!(plain.join("precious.txt").exists());
    assert!(
        c.stdout.trim().starts_with(&format!("removed {} (", good.display())),
        "{}",
        c.stdout
    );
    assert_eq!(c.stderr_lines().len(), 1, "one line per refused path: {}", c.stderr);
    assert!(c.stderr.contains("refusing to remove"), "{}", c.stderr);

    // A path that does not exist: one line naming it.
    let gone = root.path().join("dfsbench-gone");
    let c = dfsbench(&["clean", gone.to_str().unwrap()]);
    assert_eq!(c.code, Some(1), "{}", c.describe());
    assert_eq!(c.stderr_lines().len(), 1, "{}", c.stderr);
    assert!(
        c.stderr.contains(gone.to_str().unwrap()),
        "names the path: {}",
        c.stderr
    );
    assert!(!c.stderr.contains("panicked"), "{}", c.stderr);
}

#[test]
fn mem_runs_touch_no_file() {
    let cwd_files = |r: &common::Run| snapshot(r.scratch.path());
    let r = run(
        "mem://",
        &["-w", "files", "-j", "2", "--files", "2", "--file-size", "1k"],
    );
    assert_eq!(r.code, Some(0), "{}", r.describe());
    let names: Vec<String> = cwd_files(&r)
        .into_iter()
        .map(|(p, _)| p.display().to_string())
        .collect();
    assert_eq!(names, ["result.json"], "only the result file was written");
}
