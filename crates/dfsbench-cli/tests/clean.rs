//! `dfsbench clean` removes what a kept run left, on a directory and on an object store, and
//! nothing that lacks its marker; it says what it removed.

mod common;

use common::lab::lab_test;
use common::{dfsbench, run, run_dirs};

#[test]
fn cleans_a_kept_run_in_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().to_str().unwrap();
    let r = run(
        target,
        &[
            "-w",
            "files",
            "--files",
            "3",
            "--file-size",
            "4k",
            "--phases",
            "write",
            "--keep",
            "-j",
            "1",
        ],
    );
    assert_eq!(r.code, Some(0), "{}", r.describe());
    let kept = run_dirs(dir.path());
    assert_eq!(kept.len(), 1, "the run kept its directory");
    let stranger = dir.path().join("dfsbench-not-ours");
    std::fs::create_dir(&stranger).unwrap();
    std::fs::write(stranger.join("data"), "x").unwrap();

    let r = dfsbench(&["clean", kept[0].to_str().unwrap()]);
    assert_eq!(r.code, Some(0), "{}", r.describe());
    // 3 files, the marker.
    assert_eq!(
        r.stdout.trim(),
        format!("removed {} (4 files, the marker included)", kept[0].display())
    );
    assert!(!kept[0].exists());

    let r = dfsbench(&["clean", stranger.to_str().unwrap(), dir.path().to_str().unwrap()]);
    assert_eq!(r.code, Some(1), "{}", r.describe());
    let lines = r.stderr_lines();
    assert_eq!(lines.len(), 2, "a line per refusal: {}", r.stderr);
    assert!(lines[0].contains("no .dfsbench-run marker"), "{}", lines[0]);
    assert!(lines[1].contains("does not start with 'dfsbench-'"), "{}", lines[1]);
    assert!(stranger.join("data").exists(), "what dfsbench did not make stays");

    let r = dfsbench(&["clean", "mem://"]);
    assert_eq!(r.code, Some(1), "{}", r.describe());
    assert!(r.stderr.contains("nothing of it is left"), "{}", r.describe());
}

#[test]
fn cleans_a_kept_run_on_minio() {
    lab_test("minio", |s| {
        let base = s.s3_uri("");
        let r = s.run(
            &base,
            &[
                "-w",
                "files",
                "--files",
                "3",
                "--file-size",
                "4k",
                "--phases",
                "write",
                "--keep",
                "-j",
                "1",
            ],
        );
        assert_eq!(r.code, Some(0), "{}", r.describe());
        let run_id = r.result()["run_id"].as_str().unwrap().to_string();
        let (path, query) = base.split_once('?').unwrap();
        let kept = format!("{path}/dfsbench-{run_id}?{query}");
        let clean = |what: &str| {
            let out = s.command().args(["clean", what]).output().unwrap();
            (
                out.status.code(),
                String::from_utf8_lossy(&out.stdout).into_owned(),
                String::from_utf8_lossy(&out.stderr).into_owned(),
            )
        };
        let (code, stdout, stderr) = clean(&kept);
        assert_eq!(code, Some(0), "{stdout}{stderr}");
        assert!(stdout.starts_with("removed s3://"), "{stdout}");
        assert!(
            stdout.contains(&run_id) && stdout.contains("(4 files, the marker included)"),
            "{stdout}"
        );
        // Gone: a second clean finds no marker.
        let (code, _, stderr) = clean(&kept);
        assert_eq!(code, Some(1), "{stderr}");
        assert!(stderr.contains("no .dfsbench-run marker"), "{stderr}");
        // Only run prefixes.
        let (code, _, stderr) = clean(&base);
        assert_eq!(code, Some(1), "{stderr}");
        assert!(stderr.contains("does not start with 'dfsbench-'"), "{stderr}");
    });
}
