//! The checkpoint workload end to end: every rank writes and reads back exactly its shard in
//! every checkpoint, as one or several files, and the checkpoint's duration is its slowest
//! rank's.

mod common;

use common::{run_ok, Target};
use serde_json::Value;

fn n(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

#[test]
fn every_rank_writes_and_reads_its_shard_in_every_checkpoint() {
    for target in Target::both() {
        for files in ["1", "3"] {
            let args = [
                "-w",
                "checkpoint",
                "--checkpoint-size",
                "100001",
                "--checkpoint-files",
                files,
                "--checkpoints",
                "2",
                "-j",
                "3",
                "--verify",
            ];
            let r = run_ok(&target, &args);
            let files: u64 = files.parse().unwrap();
            let phases: Vec<&Value> = r["phases"].as_array().unwrap().iter().collect();
            // write, read and the unmeasured removal, per checkpoint.
            assert_eq!(phases.len(), 6);
            for p in phases.iter().filter(|p| p["prepare"] == false) {
                let at = format!("{} on {}", p["label"], target.uri());
                assert!(p["name"] == "write" || p["name"] == "read", "{at}");
                assert_eq!((n(&p["ops"]), n(&p["bytes"])), (3 * files, 3 * 100_001), "{at}");
                let ranks = p["workers_detail"].as_array().unwrap();
                assert_eq!(ranks.len(), 3);
                for w in ranks {
                    assert_eq!(
                        (n(&w["ops"]), n(&w["bytes"])),
                        (files, 100_001),
                        "{at}: rank {}",
                        w["worker"]
                    );
                    assert!(w["duration_s"].as_f64().unwrap() <= p["duration_s"].as_f64().unwrap() + 1e-9);
                }
                if p["name"] == "read" {
                    // Every byte read back was the one its rank wrote in this checkpoint.
                    assert_eq!(n(&p["verify"]["checked_bytes"]), 3 * 100_001, "{at}");
                }
            }
            let removals = phases.iter().filter(|p| p["prepare"] == true && p["name"] == "delete");
            assert_eq!(removals.count(), 2);
        }
    }
}

#[test]
fn a_preset_gives_each_rank_its_share_of_the_model() {
    // llama3-8b: 105 GB over 8 ranks; a millionth of a rank's share is 13125 bytes.
    let args = [
        "-w",
        "checkpoint",
        "--preset",
        "llama3-8b",
        "--scale",
        "0.000001",
        "-j",
        "2",
    ];
    let r = run_ok(&Target::Mem, &args);
    let job = &r["config"]["jobs"][0];
    assert_eq!((n(&job["shard_size"]), n(&job["preset_ranks"])), (13_125, 8));
    // MLPerf's workload files write and read 10 checkpoints.
    let writes = r["phases"].as_array().unwrap().iter().filter(|p| p["name"] == "write");
    assert_eq!(writes.clone().count(), 10);
    for p in writes {
        assert_eq!(n(&p["bytes"]), 2 * 13_125);
    }
}
