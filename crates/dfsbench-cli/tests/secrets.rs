//! A password in a target URI never leaves the process: a target with credentials is refused
//! without quoting them, and other messages that quote a target mask its passwords.

mod common;

use std::path::Path;
use std::process::Command;

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

/// A target with credentials in it is refused before anything runs (they would be dropped, or
/// taken for a bucket), and the refusal quotes no password: by run and by study.
#[test]
fn a_password_in_the_target_is_refused_unquoted() {
    let scratch = tempfile::tempdir().unwrap();
    let env = std::collections::BTreeMap::new();
    for target in [
        format!("s3://key:{SECRET}@bucket/p?endpoint=http://127.0.0.1:9"),
        format!("s3://user:{SECRET}@127.0.0.1:9/bucket"),
        format!("s3://bucket/p?endpoint=http://u:{SECRET}@127.0.0.1:9"),
    ] {
        let run = ["run", "-t", &target, "-w", "meta", "--files", "1"];
        let study_target = format!("s3={target}");
        let study = [
            "study",
            "size-sweep",
            "-t",
            &study_target,
            "--scale",
            "0.001",
            "--out",
            "study",
        ];
        for args in [&run[..], &study[..]] {
            let (code, text) = checked(&env, scratch.path(), args);
            assert_ne!(code, Some(0), "{args:?}: {text}");
            assert!(text.contains("credentials do not go in"), "{args:?}: {text}");
        }
    }
    for (path, text) in files(scratch.path()) {
        assert!(!text.contains(SECRET), "{path} holds the secret");
    }
}

/// Error messages quote the target masked, also a password nested in the endpoint option,
/// percent-encoded or not; this needs no server.
#[test]
fn error_messages_mask_passwords() {
    for target in [
        format!("s3://bucket/p?endpoint=http%3A%2F%2Fu%3A{SECRET}%40127.0.0.1%3A9&colour=1"),
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
