//! The toy workload of crates/dfsbench-core/tests/toy, added as docs/architecture.md says (its
//! module and one registry line), works end to end: its flag, its workload-file key, its
//! validation, its phase and its result, on both backends, with nothing else changed.

mod common;

use common::*;
use serde_json::Value;

/// A run that must succeed, checked as [`run_ok`] does except against the result schema, which
/// documents the shipped workloads' parameters (a shipped workload adds its own there).
fn toy_ok(target: &str, args: &[&str]) -> Value {
    let r = run(target, args);
    assert_eq!(r.code, Some(0), "{args:?}: {}", r.describe());
    assert!(r.stderr.trim().is_empty(), "{}", r.describe());
    let result = r.result().clone();
    check_invariants(&result);
    assert_eq!(result["status"], "complete");
    result
}

#[test]
fn the_toy_workload_runs_from_its_flag_and_from_a_workload_file() {
    for target in Target::both() {
        let result = toy_ok(&target.uri(), &["-w", "toy", "--toy-ops", "7", "-j", "3"]);
        let stat = phase(&result, "stat");
        assert_eq!(stat["workload"], "toy");
        assert_eq!(u(&stat["ops"]), 21, "7 stats by each of 3 workers");
        assert_eq!(stat["params"]["toy_ops"], 7);
        assert_eq!(result["config"]["jobs"][0]["toy_ops"], 7);
    }
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), "[[job]]\nworkload = \"toy\"\nworkers = 2\ntoy_ops = 4\n").unwrap();
    let result = toy_ok(&Target::temp().uri(), &[file.path().to_str().unwrap()]);
    assert_eq!(u(&phase(&result, "stat")["ops"]), 8);
}

#[test]
fn the_toy_workload_checks_its_key_and_others_check_theirs() {
    let cases: [(&[&str], &str); 3] = [
        (
            &["-w", "toy", "--toy-ops", "0"],
            "toy_ops = 0: give the stats per worker",
        ),
        (
            &["-w", "io", "--toy-ops", "3"],
            "'toy_ops' does not apply to the io workload: remove it",
        ),
        (
            &["-w", "toy", "--iodepth", "3"],
            "'iodepth' does not apply to the toy workload: remove it",
        ),
    ];
    for (args, expected) in cases {
        let r = run("mem://", args);
        assert_eq!(r.code, Some(2), "{args:?}: {}", r.describe());
        let lines = r.stderr_lines();
        assert_eq!(lines.len(), 1, "{args:?}: one line: {}", r.describe());
        assert!(lines[0].contains(expected), "{args:?}: {}", lines[0]);
    }
}
