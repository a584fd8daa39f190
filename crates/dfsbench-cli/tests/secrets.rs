//! A password in a target URI never leaves the process: every output of a run, a report, a
//! comparison and a study made with one is searched for it.

mod common;

use std::path::Path;
use std::process::Command;

use common::lab::lab_test;
use common::{bin, dfsbench};

const SECRET: &str = "Hunter2Secret";

/// Every file under `dir`, with its text.
fn files(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(files(&path));
        } else {
            let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
            out.push((path.display().to_string(), text));
        }
    }
    out
}

/// Run dfsbench with `env` in `dir`; returns stdout + stderr, which must not hold the secret.
fn checked(env: &std::collections::BTreeMap<String, String>, dir: &Path, args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new("timeout")
        .args(["-s", "KILL", "300", bin()])
        .args(args)
        .envs(env)
        .current_dir(dir)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!text.contains(SECRET), "{args:?} printed the secret:\n{text}");
    (out.status.code(), text)
}

#[test]
fn a_password_in_the_target_reaches_no_output() {
    lab_test("minio", |s| {
        let endpoint = s.var("DFSBENCH_S3_ENDPOINT");
        let bucket = s.var("DFSBENCH_S3_BUCKET");
        let key = s.var("AWS_ACCESS_KEY_ID");
        // The password in the URI is not used (credentials come from the environment), but
        // people write it there.
        let target = format!("s3://{key}:{SECRET}@{bucket}/secrets?endpoint={endpoint}");
        let scratch = tempfile::tempdir().unwrap();
        let dir = scratch.path();
        let run = |out: &str, extra: &[&str]| {
            let mut args = vec![
                "run",
                "-t",
                &target,
                "-w",
                "files",
                "--files",
                "5",
                "--file-size",
                "4k",
                "-j",
                "2",
                "-o",
                out,
            ];
            args.extend(extra);
            let (code, text) = checked(&s.env, dir, &args);
            assert_eq!(code, Some(0), "{text}");
        };
        run("a.json", &[]);
        run("b.json", &["--procs", "2"]);
        for format in ["html", "md", "csv", "json"] {
            let out = format!("report.{format}");
            let (code, text) = checked(
                &s.env,
                dir,
                &["report", "a.json", "b.json", "--format", format, "-o", &out],
            );
            assert_eq!(code, Some(0), "{text}");
        }
        for format in ["table", "md", "json"] {
            let (code, text) = checked(&s.env, dir, &["compare", "a.json", "b.json", "--format", format]);
            assert_eq!(code, Some(0), "{text}");
        }
        let study_target = format!("s3={target}");
        let (code, text) = checked(
            &s.env,
            dir,
            &[
                "study",
                "size-sweep",
                "-t",
                &study_target,
                "--scale",
                "0.001",
                "--points",
                "metadata*",
                "--out",
                "study",
            ],
        );
        assert_eq!(code, Some(0), "{text}");
        let written = files(dir);
        for must in ["a.json", "b.json", "report.html", "study.json", "tables.md"] {
            assert!(
                written.iter().any(|(p, _)| p.ends_with(must)),
                "{must} was written: {written:?}"
            );
        }
        for (path, text) in written {
            assert!(!text.contains(SECRET), "{path} holds the secret");
        }
    });
}

/// Error messages quote the target masked, also a password nested in the endpoint option,
/// percent-encoded or not; this needs no server.
#[test]
fn error_messages_mask_passwords() {
    for target in [
        format!("s3://k:{SECRET}@bucket/p?colour=1"),
        format!("s3://bucket/p?endpoint=http://u:{SECRET}@127.0.0.1:9&colour=1"),
        format!("s3://bucket/p?endpoint=http%3A%2F%2Fu%3A{SECRET}%40127.0.0.1%3A9&colour=1"),
        format!("webdav://user:{SECRET}@127.0.0.1:99999/x"),
        format!("nosuch://user:{SECRET}@host/x"),
    ] {
        let r = dfsbench(&["run", "-t", &target, "-w", "meta", "--files", "1"]);
        assert_ne!(r.code, Some(0), "{target}: {}", r.describe());
        assert!(!r.stderr.contains(SECRET), "{target}: {}", r.stderr);
        assert!(
            r.stderr.contains("***"),
            "{target}: the message still shows where: {}",
            r.stderr
        );
    }
}
