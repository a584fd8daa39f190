//! The history of runs: every run records itself in the store `DFSBENCH_HISTORY` names;
//! `history` lists, filters and trends them; `compare --baseline` finds the stored run to
//! compare with; `--rebuild` makes the store again from the result files; and a store that
//! is missing, corrupt, off or not a file never costs a run its result.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{bin, Target};

/// `dfsbench ARGS` in `cwd` with the history at `store`.
fn dfsbench(store: &Path, cwd: &Path, args: &[&str]) -> std::process::Output {
    Command::new(bin())
        .args(args)
        .current_dir(cwd)
        .env("DFSBENCH_HISTORY", store)
        .output()
        .expect("run dfsbench")
}

fn text(o: &std::process::Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// A small run of `target` with its result in `out`; returns the result file.
fn run(store: &Path, cwd: &Path, target: &str, files: &str, extra: &[&str]) -> PathBuf {
    let mut args = vec![
        "run",
        "-t",
        target,
        "-w",
        "files",
        "--files",
        files,
        "--file-size",
        "4k",
        "-q",
    ];
    args.extend_from_slice(extra);
    let o = dfsbench(store, cwd, &args);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(!err.contains("not in the history"), "{err}");
    let line = err.lines().chain(out.lines()).find(|l| l.starts_with("results: "));
    let path = match line {
        Some(l) => PathBuf::from(l.trim_start_matches("results: ")),
        None => {
            // -q prints no "results:" line: the newest file in dfsbench-results/.
            let dir = cwd.join("dfsbench-results");
            let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
            files.sort_by_key(|p| std::fs::metadata(p).unwrap().modified().unwrap());
            files.pop().unwrap()
        }
    };
    if path.is_absolute() {
        path
    } else {
        cwd.join(path)
    }
}

#[test]
fn runs_are_remembered_listed_trended_and_compared_with_their_baseline() {
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("state/history.sqlite");
    let cwd = tempfile::tempdir().unwrap();
    let t = Target::temp();
    let first = run(&store, cwd.path(), &t.uri(), "20", &["--tag", "before"]);
    let second = run(&store, cwd.path(), &t.uri(), "20", &[]);
    run(&store, cwd.path(), &t.uri(), "30", &[]);
    assert!(store.is_file(), "the store was made with its folder");

    let o = dfsbench(&store, cwd.path(), &["history", "--format", "json"]);
    let runs: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let runs = runs.as_array().unwrap();
    assert_eq!(runs.len(), 3, "{runs:?}");
    assert_eq!(runs[0]["tag"], "before");
    assert_eq!(runs[0]["workload"], "files");
    assert!(runs.iter().all(|r| Path::new(r["path"].as_str().unwrap()).is_file()));
    let phases = runs[0]["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 3, "write, read and delete: {phases:?}");
    assert!(phases.iter().all(|p| p["ops_per_sec"].as_f64().unwrap() > 0.0));

    // Filters narrow the list; the table names every run.
    let o = dfsbench(&store, cwd.path(), &["history", "--tag", "before"]);
    let (out, _) = text(&o);
    assert_eq!(out.lines().count(), 2, "a head and one run:\n{out}");
    let o = dfsbench(&store, cwd.path(), &["history", "--last", "2", "--format", "json"]);
    let last: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(last.as_array().unwrap().len(), 2);
    let o = dfsbench(&store, cwd.path(), &["history", "--target", "no-such-target"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0));
    assert!(err.contains("no run in"), "{out}{err}");

    // The trend: the two runs of 20 files are one configuration, the run of 30 another.
    let html = cwd.path().join("trend.html");
    let o = dfsbench(
        &store,
        cwd.path(),
        &["history", "--trend", "--html", html.to_str().unwrap()],
    );
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert_eq!(out.matches(": 2 runs from").count(), 1, "{out}");
    assert_eq!(out.matches(": 1 run from").count(), 1, "{out}");
    assert!(out.contains("vs previous"), "{out}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<svg"), "the report of the runs, with its charts");

    // compare --baseline finds the earlier run of the same configuration, or the tagged one.
    for (which, expected) in [("last", &first), ("before", &first)] {
        let o = dfsbench(
            &store,
            cwd.path(),
            &[
                "compare",
                "--baseline",
                which,
                second.to_str().unwrap(),
                "--format",
                "json",
            ],
        );
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(0), "{out}{err}");
        assert!(err.contains(expected.to_str().unwrap()), "baseline {which}: {err}");
    }
    let o = dfsbench(
        &store,
        cwd.path(),
        &["compare", "--baseline", "last", first.to_str().unwrap()],
    );
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.starts_with("dfsbench: no stored run of") && err.lines().count() == 1,
        "{err}"
    );
    let o = dfsbench(
        &store,
        cwd.path(),
        &[
            "compare",
            "--baseline",
            "last",
            first.to_str().unwrap(),
            second.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o).1);
}

#[test]
fn the_store_is_made_again_from_the_result_files() {
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("history.sqlite");
    let cwd = tempfile::tempdir().unwrap();
    let t = Target::temp();
    run(&store, cwd.path(), &t.uri(), "10", &["--tag", "v1"]);
    run(&store, cwd.path(), &t.uri(), "10", &[]);

    // A corrupt store costs no run its result, and says how to mend it.
    std::fs::write(&store, vec![b'x'; 8192]).unwrap();
    let results = cwd.path().join("dfsbench-results");
    let before = std::fs::read_dir(&results).unwrap().count();
    let o = dfsbench(
        &store,
        cwd.path(),
        &["run", "-t", &t.uri(), "-w", "meta", "--files", "5", "-q"],
    );
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(err.contains("not in the history") && err.contains("--rebuild"), "{err}");
    assert_eq!(
        std::fs::read_dir(&results).unwrap().count(),
        before + 1,
        "the result was written"
    );
    let o = dfsbench(&store, cwd.path(), &["history"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).1.contains("--rebuild"));

    let o = dfsbench(&store, cwd.path(), &["history", "--rebuild"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(out.contains("3 runs and 0 studies"), "{out}");
    assert!(err.contains("kept it as"), "the unreadable store is kept aside: {err}");
    assert!(home.path().join("history.sqlite.unreadable").is_file());
    let o = dfsbench(&store, cwd.path(), &["history", "--format", "json"]);
    let runs: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let runs = runs.as_array().unwrap();
    assert_eq!(runs.len(), 3);
    assert_eq!(runs[0]["tag"], "v1", "the tag comes back from the result file");

    // Moved results are found again in the folders named.
    let moved = cwd.path().join("moved");
    std::fs::rename(&results, &moved).unwrap();
    let o = dfsbench(&store, cwd.path(), &["history", "--rebuild", moved.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    let o = dfsbench(&store, cwd.path(), &["history", "--format", "json"]);
    let runs: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(runs
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["path"].as_str().unwrap().contains("/moved/")));
}

#[test]
fn a_store_that_is_off_or_no_file_is_left_alone() {
    let cwd = tempfile::tempdir().unwrap();
    let t = Target::temp();
    // Off: runs record nothing, history says how to keep one.
    let o = dfsbench(
        Path::new("off"),
        cwd.path(),
        &["run", "-t", &t.uri(), "-w", "meta", "--files", "5", "-q"],
    );
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    assert!(!text(&o).1.contains("history"), "{:?}", text(&o));
    let o = dfsbench(Path::new("off"), cwd.path(), &["history"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("DFSBENCH_HISTORY=off"));

    // A FIFO (or a device) named as the store is never opened, renamed or replaced.
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let o = dfsbench(
        &fifo,
        cwd.path(),
        &["run", "-t", &t.uri(), "-w", "meta", "--files", "5", "-q"],
    );
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(err.contains("not a regular file"), "{err}");
    for args in [&["history"][..], &["history", "--rebuild"][..]] {
        let o = dfsbench(&fifo, cwd.path(), args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {:?}", text(&o));
        assert!(text(&o).1.contains("not a regular file"));
    }
    let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
    use std::os::unix::fs::FileTypeExt;
    assert!(kind.is_fifo(), "the FIFO is still a FIFO");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "nothing made beside it"
    );
}

#[test]
fn a_study_is_remembered_with_its_points() {
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("history.sqlite");
    let cwd = tempfile::tempdir().unwrap();
    let t = Target::temp();
    let o = dfsbench(
        &store,
        cwd.path(),
        &[
            "study",
            "size-sweep",
            "-t",
            &t.uri(),
            "--scale",
            "0.001",
            "--points",
            "n10000-s0,n1000-s10240",
            "-q",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    let listed = |store: &Path| -> Vec<serde_json::Value> {
        let o = dfsbench(store, cwd.path(), &["history", "--format", "json"]);
        serde_json::from_slice::<serde_json::Value>(&o.stdout)
            .unwrap()
            .as_array()
            .unwrap()
            .clone()
    };
    let check = |runs: &[serde_json::Value]| {
        let study: Vec<_> = runs.iter().filter(|r| r["kind"] == "study").collect();
        assert_eq!(study.len(), 1, "{runs:?}");
        assert_eq!(study[0]["workload"], "size-sweep");
        assert!(study[0]["path"].as_str().unwrap().ends_with("/study.json"));
        let points: Vec<_> = runs.iter().filter(|r| r["study"] == study[0]["id"]).collect();
        assert_eq!(points.len(), 2, "a run per point, under the study's id: {runs:?}");
    };
    check(&listed(&store));
    // Made again from the study's folder alone.
    std::fs::remove_file(&store).unwrap();
    let o = dfsbench(
        &store,
        cwd.path(),
        &["history", "--rebuild", cwd.path().to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    check(&listed(&store));
}
