//! What a user of any command-line tool expects: shell completions, a man page, a version that
//! names its commit, help that lists every target, `-o -` for pipes and documented exit codes.

mod common;

use std::process::Command;

use common::{dfsbench, lab::repo, run};
use serde_json::Value;

const SUBCOMMANDS: [&str; 9] = [
    "run",
    "targets",
    "report",
    "compare",
    "study",
    "lab",
    "clean",
    "completions",
    "man",
];

#[test]
fn completions_name_every_subcommand() {
    for shell in ["bash", "zsh", "fish"] {
        let r = dfsbench(&["completions", shell]);
        assert_eq!(r.code, Some(0), "{shell}: {}", r.describe());
        for sub in SUBCOMMANDS {
            assert!(r.stdout.contains(sub), "{shell} completion lacks '{sub}'");
        }
        assert!(
            r.stdout.contains("progress-interval"),
            "{shell}: run's flags are completed too"
        );
    }
    let bash = dfsbench(&["completions", "bash"]);
    let ok = Command::new("bash")
        .args(["-n", "-c", &bash.stdout])
        .status()
        .unwrap()
        .success();
    assert!(ok, "the bash completion parses");
    let r = dfsbench(&["completions", "tcsh"]);
    assert_eq!(r.code, Some(2), "{}", r.describe());
}

/// `man -l FILE` as a user reads it, without a pager.
fn render(page: &std::path::Path) -> String {
    let out = Command::new("man")
        .args(["-P", "cat", "-l"])
        .arg(page)
        .env("MANWIDTH", "100")
        .output()
        .expect("man is installed (man-db)");
    assert!(
        out.status.success(),
        "man -l {}: {}",
        page.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn man_pages_render() {
    let r = dfsbench(&["man"]);
    assert_eq!(r.code, Some(0), "{}", r.describe());
    let page = r.scratch.path().join("dfsbench.1");
    std::fs::write(&page, &r.stdout).unwrap();
    let text = render(&page);
    for part in [
        "NAME",
        "SYNOPSIS",
        "SUBCOMMANDS",
        "dfsbench-run(1)",
        "dfsbench-clean(1)",
    ] {
        assert!(text.contains(part), "'{part}' missing in:\n{text}");
    }
    let dir = tempfile::tempdir().unwrap();
    let r = dfsbench(&["man", "--dir", dir.path().to_str().unwrap()]);
    assert_eq!(r.code, Some(0), "{}", r.describe());
    for sub in SUBCOMMANDS {
        assert!(
            dir.path().join(format!("dfsbench-{sub}.1")).is_file(),
            "no page for {sub}"
        );
    }
    let run = render(&dir.path().join("dfsbench-run.1"));
    for part in ["--target", "--progress-interval", "--workers"] {
        assert!(run.contains(part), "'{part}' missing in dfsbench-run(1)");
    }
    let r = dfsbench(&["man", "--dir", "/nonexistent/man"]);
    assert_eq!(r.code, Some(1), "{}", r.describe());
    assert_eq!(r.stderr_lines().len(), 1, "{}", r.describe());
}

#[test]
fn version_names_commit_and_features() {
    let r = dfsbench(&["--version"]);
    assert_eq!(r.code, Some(0), "{}", r.describe());
    let head = Command::new("git")
        .arg("-C")
        .arg(repo())
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .unwrap();
    let head = String::from_utf8_lossy(&head.stdout).trim().to_string();
    let line = r.stdout.trim();
    assert!(
        line.starts_with(&format!("dfsbench {}", env!("CARGO_PKG_VERSION"))),
        "{line}"
    );
    if head.is_empty() {
        assert!(line.contains("commit unknown"), "{line}");
    } else {
        assert!(line.contains(&format!("commit {head}")), "{line} vs HEAD {head}");
    }
    assert!(line.contains("features: io_uring"), "{line}");
}

#[test]
fn target_help_lists_every_scheme() {
    let r = dfsbench(&["run", "--help"]);
    assert_eq!(r.code, Some(0));
    for example in [
        "file:///",
        "mem://",
        "s3://bucket/",
        "swift://container/",
        "hdfs://namenode:",
        "webhdfs://namenode:",
        "webdav://host:",
        "alluxio://proxy:",
    ] {
        assert!(r.stdout.contains(example), "no example of {example} in run --help");
    }
}

#[test]
fn result_to_stdout() {
    let r = dfsbench(&[
        "run", "-t", "mem://", "-w", "meta", "--files", "10", "-j", "2", "-o", "-",
    ]);
    assert_eq!(r.code, Some(0), "{}", r.describe());
    let doc: Value = serde_json::from_str(&r.stdout).expect("stdout is the result JSON alone");
    common::validate(&doc);
    assert_eq!(doc["status"], "complete");
    // The table went to stderr, and no result file was written.
    assert!(
        r.stderr.contains("phase ") && r.stderr.contains("create"),
        "{}",
        r.describe()
    );
    assert!(!r.stderr.contains("results: "), "{}", r.describe());
    assert!(!r.scratch.path().join("dfsbench-results").exists());
    // CSV to stderr as well; JSON only once.
    let r = dfsbench(&[
        "run", "-t", "mem://", "-w", "meta", "--files", "10", "-o", "-", "--format", "csv", "-q",
    ]);
    let _: Value = serde_json::from_str(&r.stdout).expect("stdout is the result JSON alone");
    assert!(
        r.stderr.starts_with("run_id,") || r.stderr.contains(','),
        "{}",
        r.describe()
    );
    let r = dfsbench(&[
        "run", "-t", "mem://", "-w", "meta", "--files", "10", "-o", "-", "--format", "json", "-q",
    ]);
    let _: Value = serde_json::from_str(&r.stdout).expect("one JSON document");
    assert!(r.stderr.is_empty(), "{}", r.describe());
}

#[test]
fn exit_codes() {
    // 0: done.
    let r = run("mem://", &["-w", "meta", "--files", "5"]);
    assert_eq!(r.code, Some(0), "{}", r.describe());
    // 1: the run failed (it could not start).
    let r = run("/nonexistent/dfsbench-target", &["-w", "meta", "--files", "5"]);
    assert_eq!(r.code, Some(1), "{}", r.describe());
    assert_eq!(r.stderr_lines().len(), 1, "{}", r.describe());
    // 1: errors beyond --max-errors (every create outlives --op-timeout).
    let r = run(
        "mem://?latency=50ms",
        &[
            "-w",
            "meta",
            "--files",
            "20",
            "-j",
            "2",
            "--op-timeout",
            "5ms",
            "--max-errors",
            "3",
        ],
    );
    assert_eq!(r.code, Some(1), "{}", r.describe());
    assert_eq!(r.result()["status"], "aborted");
    assert!(r.stderr.contains("stopped after 3 errors"), "{}", r.describe());
    // 2: bad usage, in flags and in values.
    for args in [
        &["-w", "meta", "--no-such-flag"][..],
        &["-w", "meta", "--progress-interval", "soon"],
        &["-w", "meta", "--files", "-1"],
        &["-w", "nosuch"],
    ] {
        let r = run("mem://", args);
        assert_eq!(r.code, Some(2), "{args:?}: {}", r.describe());
        assert_eq!(r.stderr_lines().len(), 1, "{args:?}: {}", r.describe());
    }
    let r = dfsbench(&[]);
    assert_eq!(r.code, Some(2), "no command: {}", r.describe());
}

/// scripts/install-docs.sh (the end of install.sh) for a binary in `root`/bin, as a user.
fn install_docs(root: &std::path::Path, home: &std::path::Path, completion_dir: Option<&str>) -> std::process::Output {
    let mut cmd = Command::new(repo().join("scripts/install-docs.sh"));
    cmd.arg(root).env("HOME", home).env_remove("XDG_DATA_HOME");
    match completion_dir {
        Some(d) => cmd.env("BASH_COMPLETION_USER_DIR", d),
        None => cmd.env_remove("BASH_COMPLETION_USER_DIR"),
    };
    cmd.output().unwrap()
}

#[test]
fn install_puts_man_pages_and_completion_where_they_are_found() {
    let tmp = tempfile::tempdir().unwrap();
    let (root, home) = (tmp.path().join("root"), tmp.path().join("home"));
    std::fs::create_dir_all(root.join("bin")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::os::unix::fs::symlink(common::bin(), root.join("bin/dfsbench")).unwrap();
    let completion = home.join(".local/share/bash-completion/completions/dfsbench");
    let mut first = None;
    for _ in 0..2 {
        let out = install_docs(&root, &home, None);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
        let files = (
            std::fs::read(root.join("share/man/man1/dfsbench-run.1")).unwrap(),
            std::fs::read(&completion).unwrap(),
        );
        assert!(
            first.as_ref().is_none_or(|f| *f == files),
            "a second install changes nothing"
        );
        first = Some(files);
    }
    let leftovers: Vec<_> = std::fs::read_dir(completion.parent().unwrap()).unwrap().collect();
    assert_eq!(leftovers.len(), 1, "no temporary file left");
    // man finds the pages from PATH, as it does for ~/.cargo/bin.
    let path = format!("{}:{}", root.join("bin").display(), std::env::var("PATH").unwrap());
    let out = Command::new("man")
        .args(["-w", "dfsbench-run"])
        .env("PATH", path)
        .env_remove("MANPATH")
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        root.join("share/man/man1/dfsbench-run.1").display().to_string()
    );
    // A directory that cannot be made is a warning, and the rest is still installed.
    std::fs::remove_dir_all(root.join("share")).unwrap();
    let out = install_docs(&root, &home, Some("/proc/dfsbench-no-such-dir"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("warning: could not install the bash completion"),
        "{stderr}"
    );
    assert!(root.join("share/man/man1/dfsbench.1").is_file());
}
