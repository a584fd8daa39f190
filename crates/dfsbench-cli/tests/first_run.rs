//! `dfsbench run` without a workload: the first run's time-based metadata, small-file and block
//! phases, its null tests and its footer (what the figures mean, the next commands), and
//! `--quick`, the smoke run it replaced.

mod common;

use common::{f, measured, phase, run, run_ok, u, Target};
use serde_json::Value;

/// The configured duration of job `name`, in seconds.
fn job_duration(result: &Value, name: &str) -> f64 {
    let jobs = result["config"]["jobs"].as_array().expect("jobs");
    let job = jobs
        .iter()
        .find(|j| j["name"] == name)
        .unwrap_or_else(|| panic!("job {name}"));
    f(&job["duration"])
}

fn labels(result: &Value) -> Vec<String> {
    measured(result)
        .iter()
        .map(|p| format!("{}: {}", p["job_name"].as_str().unwrap(), p["label"].as_str().unwrap()))
        .collect()
}

/// The phase `label` of job `job`.
fn phase_of<'a>(result: &'a Value, job: &str, label: &str) -> &'a Value {
    measured(result)
        .into_iter()
        .find(|p| p["job_name"] == job && p["label"] == label)
        .unwrap_or_else(|| panic!("no phase '{label}' in job '{job}'"))
}

/// The footer's ratios: two significant digits below 0.1, two decimals above.
fn times(v: f64) -> String {
    if v < 0.1 {
        let digits = (1.0 - v.log10().floor()) as usize;
        format!("{v:.digits$}")
    } else {
        format!("{v:.2}")
    }
}

#[test]
fn the_first_run_is_time_based_measures_the_null_tests_and_says_what_its_figures_mean() {
    let t = Target::temp();
    let r = run(&t.uri(), &[]);
    let (out, result_file) = (r.stdout.clone(), r.scratch.path().join("result.json"));
    let result = common::expect_ok(&t, &[], r);
    assert_eq!(
        labels(&result),
        [
            "metadata: create",
            "metadata: stat",
            "metadata: open",
            "metadata: rename",
            "metadata: delete",
            "files: write 4 KiB",
            "files: read 4 KiB",
            "files: delete 4 KiB",
            "block: write 1 MiB qd1",
            "block: read 1 MiB qd1",
        ]
    );
    // Time-based phases run at least their job's duration, whatever the machine's speed.
    for (job, label) in [
        ("metadata", "create"),
        ("metadata", "stat"),
        ("metadata", "open"),
        ("files", "write 4 KiB"),
        ("files", "read 4 KiB"),
        ("block", "write 1 MiB qd1"),
        ("block", "read 1 MiB qd1"),
    ] {
        let p = phase_of(&result, job, label);
        let wanted = job_duration(&result, job);
        assert!(wanted >= 3.0, "{job}: {wanted} s");
        assert!(
            f(&p["duration_s"]) >= wanted * 0.99,
            "{job}: {label} ran {} s of {wanted} s",
            p["duration_s"]
        );
        assert!(u(&p["ops"]) > 0, "{job}: {label}: no operation");
    }
    // Rename and delete make one pass over what the time-based create made.
    let created = u(&phase_of(&result, "metadata", "create")["ops"]);
    for label in ["rename", "delete"] {
        assert_eq!(u(&phase_of(&result, "metadata", label)["ops"]), created, "{label}");
    }
    let written = u(&phase_of(&result, "files", "write 4 KiB")["ops"]);
    assert_eq!(u(&phase_of(&result, "files", "delete 4 KiB")["ops"]), written);
    // The block phases bypass the page cache.
    let block = result["config"]["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["name"] == "block")
        .unwrap();
    assert_eq!(block["direct"], true, "{block}");

    let null = &result["null_tests"];
    assert!(f(&null["memory_copy"]["bytes_per_sec"]) > 0.0, "{null}");
    assert!(u(&null["memory_copy"]["bytes"]) > 0, "{null}");
    assert!(f(&null["local_disk"]["read_bytes_per_sec"]) > 0.0, "{null}");

    let footer = out
        .split("\nwhat this means")
        .nth(1)
        .unwrap_or_else(|| panic!("no footer: {out}"));
    // The fastest and slowest rates are those of the phases of small operations.
    let small: Vec<&Value> = measured(&result)
        .into_iter()
        .filter(|p| u(&p["bytes"]) / u(&p["ops"]) < 64 << 10)
        .collect();
    let by_rate = |a: &&&Value, b: &&&Value| f(&a["ops_per_sec"]).total_cmp(&f(&b["ops_per_sec"]));
    let fastest = small.iter().max_by(by_rate).unwrap();
    let slowest = small.iter().min_by(by_rate).unwrap();
    for (word, p) in [("fastest", fastest), ("slowest", slowest)] {
        let line = format!(
            "  {word}: {}: {} at ",
            p["job_name"].as_str().unwrap(),
            p["label"].as_str().unwrap()
        );
        assert!(footer.contains(&line), "no '{line}' in: {footer}");
    }
    // Every phase that moved data is set against the null tests, with its own figure.
    for p in measured(&result).into_iter().filter(|p| u(&p["bytes"]) > 0) {
        let mib = f(&p["bytes_per_sec"]) / (1024.0 * 1024.0);
        let disk = if p["name"].as_str().unwrap().contains("read") {
            f(&null["local_disk"]["read_bytes_per_sec"])
        } else {
            f(&null["local_disk"]["write_bytes_per_sec"])
        };
        let line = format!(
            "  {}: {}: {mib:.0} MiB/s = {}x the local disk's ",
            p["job_name"].as_str().unwrap(),
            p["label"].as_str().unwrap(),
            times(f(&p["bytes_per_sec"]) / disk)
        );
        assert!(footer.contains(&line), "no '{line}' in: {footer}");
    }
    assert!(
        footer.contains(&format!("dfsbench report {} -o report.html", result_file.display())),
        "{footer}"
    );
    assert!(
        footer.contains(&format!("dfsbench study size-sweep -t {} ", t.uri())),
        "{footer}"
    );
    assert!(footer.contains("dfsbench run --quick"), "{footer}");
}

#[test]
fn quick_is_the_smoke_run_without_null_tests_or_footer() {
    let t = Target::temp();
    let r = run(&t.uri(), &["--quick"]);
    let out = r.stdout.clone();
    let result = common::expect_ok(&t, &["--quick"], r);
    assert_eq!(
        labels(&result),
        [
            "metadata: create",
            "metadata: stat",
            "metadata: open",
            "metadata: list",
            "metadata: rename",
            "metadata: delete",
            "files: write 4 KiB",
            "files: read 4 KiB",
            "files: delete 4 KiB",
            "files: write 16 MiB",
            "files: read 16 MiB",
            "files: delete 16 MiB",
        ]
    );
    assert_eq!(u(&phase(&result, "create")["ops"]), 4000);
    assert!(result.get("null_tests").is_none());
    assert!(!out.contains("what this means"), "{out}");
}

#[test]
fn quick_with_a_workload_is_refused_in_one_line() {
    let r = run("mem://", &["--quick", "-w", "meta"]);
    assert_eq!(r.code, Some(2), "{}", r.describe());
    assert_eq!(
        r.stderr.trim(),
        "dfsbench: --quick is the smoke run of `dfsbench run` without a workload: leave it out, or leave out the workload"
    );
}

#[test]
fn time_based_metadata_reads_go_round_the_files_and_the_changes_make_one_pass() {
    let result = run_ok(
        &Target::Mem,
        &["-w", "meta", "--files", "50", "--duration", "400ms", "-j", "2"],
    );
    let created = u(&phase(&result, "create")["ops"]);
    assert!(created > 0);
    for name in ["stat", "open", "list"] {
        let p = phase(&result, name);
        assert!(f(&p["duration_s"]) >= 0.4 * 0.99, "{name}: {}", p["duration_s"]);
        assert!(u(&p["ops"]) > 0, "{name}");
    }
    for name in ["rename", "delete"] {
        assert_eq!(u(&phase(&result, name)["ops"]), created, "{name}");
    }
}
