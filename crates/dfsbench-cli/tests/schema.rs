//! docs/result-schema.json: real results of every workload pass it, and it is strict enough
//! to catch a result that changed shape.

mod common;

use common::{run_ok, schema_errors, validate, Target};
use serde_json::{json, Value};

/// A result with a meta, a files and a mixed io job, with verification.
fn sample() -> Value {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mix.toml");
    std::fs::write(
        &file,
        r#"
verify = true
workers = 2

[[job]]
workload = "meta"
files = 5
dirs = 3

[[job]]
workload = "files"
sizes = ["3x0", "2x5000"]
bs = "4k"

[[job]]
workload = "io"
rw = "randrw"
size = "32k"
"#,
    )
    .unwrap();
    run_ok(&Target::Mem, &[file.to_str().unwrap()])
}

fn assert_rejected(doc: &Value, what: &str) {
    let errors = schema_errors(doc);
    assert!(!errors.is_empty(), "the schema accepts a result with {what}");
}

#[test]
fn real_results_pass_and_changed_shapes_fail() {
    let good = sample();
    validate(&good);
    let mut names: Vec<&str> = good["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    names.dedup();
    assert_eq!(
        names,
        [
            "mkdir", "create", "stat", "open", "list", "rename", "delete", "rmdir", "write", "read", "delete", "write",
            "read", "delete", "layout", "randrw"
        ]
    );

    type Mutation = Box<dyn Fn(&mut Value)>;
    let cases: Vec<(&str, Mutation)> = vec![
        (
            "another schema version",
            Box::new(|d| d["schema"] = json!("dfsbench.result/2")),
        ),
        ("an unknown top-level field", Box::new(|d| d["extra"] = json!(1))),
        (
            "no phases",
            Box::new(|d| drop(d.as_object_mut().unwrap().remove("phases"))),
        ),
        ("an unknown status", Box::new(|d| d["status"] = json!("done"))),
        (
            "a status message on a complete run",
            Box::new(|d| d["status_message"] = json!("x")),
        ),
        (
            "an aborted run without a message",
            Box::new(|d| d["status"] = json!("aborted")),
        ),
        ("a bad run id", Box::new(|d| d["run_id"] = json!("run-1"))),
        ("a short config hash", Box::new(|d| d["config_hash"] = json!("abc"))),
        (
            "a local timestamp",
            Box::new(|d| d["started_at"] = json!("2026-01-01 10:00:00")),
        ),
        ("ops as a string", Box::new(|d| d["phases"][0]["ops"] = json!("10"))),
        ("negative bytes", Box::new(|d| d["phases"][0]["bytes"] = json!(-1))),
        (
            "a null rate (NaN)",
            Box::new(|d| d["phases"][0]["ops_per_sec"] = Value::Null),
        ),
        (
            "an unknown phase field",
            Box::new(|d| d["phases"][0]["iops"] = json!(1)),
        ),
        (
            "a missing latency percentile",
            Box::new(|d| drop(d["phases"][0]["latency"].as_object_mut().unwrap().remove("p99_ns"))),
        ),
        (
            "a histogram that is not base64",
            Box::new(|d| d["phases"][0]["latency"]["histogram"] = json!("not base64!")),
        ),
        (
            "items = 0 (omitted when 0)",
            Box::new(|d| d["phases"][0]["items"] = json!(0)),
        ),
        (
            "an empty workers_detail",
            Box::new(|d| d["phases"][0]["workers_detail"] = json!([])),
        ),
        (
            "an unknown job key",
            Box::new(|d| d["config"]["jobs"][0]["numjobs"] = json!(4)),
        ),
        (
            "a job of an unknown workload",
            Box::new(|d| d["config"]["jobs"][0]["workload"] = json!("s3")),
        ),
        (
            "a meta job with an io key",
            Box::new(|d| d["config"]["jobs"][0]["rw"] = json!("read")),
        ),
        (
            "an unknown io pattern",
            Box::new(|d| d["config"]["jobs"][2]["rw"] = json!("trim")),
        ),
        (
            "an unknown phase param",
            Box::new(|d| d["phases"][0]["params"]["depth"] = json!(1)),
        ),
        (
            "a missing capability",
            Box::new(|d| drop(d["target"]["capabilities"].as_object_mut().unwrap().remove("rename"))),
        ),
        (
            "a verify block without mismatches",
            Box::new(|d| {
                let read = d["phases"]
                    .as_array_mut()
                    .unwrap()
                    .iter_mut()
                    .find(|p| p["name"] == "read" && p.get("verify").is_some())
                    .unwrap();
                drop(read["verify"].as_object_mut().unwrap().remove("mismatches"));
            }),
        ),
        (
            "an error sample without a kind",
            Box::new(|d| {
                d["phases"][0]["errors"]["samples"] =
                    json!([{ "time_s": 0.1, "worker": 0, "op": "mkdir", "path": "x", "message": "m" }]);
            }),
        ),
        (
            "a single-kind ops_by_kind",
            Box::new(|d| {
                let p = d["phases"].as_array_mut().unwrap().last_mut().unwrap();
                p["ops_by_kind"].as_array_mut().unwrap().truncate(1);
            }),
        ),
        (
            "an unknown page cache policy",
            Box::new(|d| {
                let read = d["phases"]
                    .as_array_mut()
                    .unwrap()
                    .iter_mut()
                    .find(|p| p.get("cache").is_some())
                    .unwrap();
                read["cache"]["policy"] = json!("warm");
            }),
        ),
        (
            "an empty list of validity reasons (omitted when empty)",
            Box::new(|d| d["phases"][0]["validity"] = json!([])),
        ),
        (
            "a cache suspicion that does not say so",
            Box::new(|d| d["phases"][0]["cache_suspect"] = json!(["fast"])),
        ),
    ];
    for (what, mutate) in cases {
        let mut doc = good.clone();
        mutate(&mut doc);
        assert_rejected(&doc, what);
    }

    // Optional parts the schema allows to be absent.
    let mut doc = good.clone();
    for p in doc["phases"].as_array_mut().unwrap() {
        let p = p.as_object_mut().unwrap();
        p.remove("verify");
        p.remove("items");
        p.remove("ops_by_kind");
    }
    validate(&doc);
    // A result from before the page cache policy and the validity marks is still valid.
    let mut doc = good.clone();
    assert!(doc["phases"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p.get("cache").is_some()));
    assert!(
        doc["phases"][0].get("validity").is_some(),
        "the sample's tiny phases are weak"
    );
    for p in doc["phases"].as_array_mut().unwrap() {
        let p = p.as_object_mut().unwrap();
        p.remove("cache");
        p.remove("cache_suspect");
        p.remove("validity");
    }
    let config = doc["config"].as_object_mut().unwrap();
    config.remove("invalidate");
    config.remove("drop_caches");
    validate(&doc);
    let old: dfsbench_result::RunResult = serde_json::from_value(doc).expect("an older result reads");
    assert!(old.phases.iter().all(|p| p.cache.is_none() && p.validity.is_empty()));
    // An error sample with an offset, and an aborted run with its message.
    let mut doc = good.clone();
    doc["status"] = json!("aborted");
    doc["status_message"] = json!("stopped after 5 errors");
    doc["phases"][0]["errors"]["samples"] = json!([{ "time_s": 0.1, "worker": 1, "op": "read", "kind": "verify", "path": "j0-io/w1.dat", "offset": 4096, "message": "wrong data" }]);
    validate(&doc);
}
