//! The mlperf-storage study and the train charts of the HTML report, against the result files
//! they come from: the accelerators a profile supports are its search's largest step held, a
//! checkpoint's GB/s its bytes over its slowest rank's time, and the report's search curve
//! has a point per step searched.

mod common;

use std::path::Path;
use std::process::Command;

use common::{bin, run_ok, Target};
use serde_json::Value;

fn json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))).unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-300)
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// The measured train epochs of an accelerator search, in the order they ran.
fn search_steps(r: &Value) -> Vec<&Value> {
    r["phases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["prepare"] != true && p["params"]["active_accelerators"].is_u64())
        .collect()
}

/// MLPerf's answer from the result file: the last step of the unbroken run of steps from the
/// first that met the threshold.
fn largest_held<'r>(steps: &[&'r Value]) -> Option<&'r Value> {
    steps
        .iter()
        .take_while(|p| p["train"]["meets_threshold"] == true)
        .last()
        .copied()
}

/// Cell `column` of `system` in row `row` of table `table`.
fn cell(doc: &Value, table: usize, row: usize, column: usize) -> &Value {
    &doc["tables"][table]["rows"][row]["cells"][column][0]
}

#[test]
fn mlperf_storage_tables_are_their_result_files() {
    let target = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("mlperf");
    let run = Command::new(bin())
        .args(["study", "mlperf-storage", "-t", target.path().to_str().unwrap()])
        .args(["--scale", "0.0001", "--out", dir.to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    assert_eq!(
        String::from_utf8_lossy(&run.stdout),
        std::fs::read_to_string(dir.join("tables.md")).unwrap()
    );
    let doc = json(&dir.join("tables.json"));
    assert_eq!(doc["study"], "mlperf-storage");
    let result = |row: usize, table: usize, column: usize| {
        let file = cell(&doc, table, row, column)["result"].as_str().unwrap().to_string();
        json(&dir.join(file))
    };

    // Training: a row per profile, the search's answer and its figures.
    for (i, profile) in ["unet3d", "resnet50", "cosmoflow"].into_iter().enumerate() {
        let row = &doc["tables"][0]["rows"][i];
        assert_eq!(row["labels"][0], profile);
        let r = result(i, 0, 0);
        let steps = search_steps(&r);
        let tried: Vec<u64> = steps
            .iter()
            .map(|p| p["params"]["active_accelerators"].as_u64().unwrap())
            .collect();
        assert_eq!(tried, [1, 2], "{profile}: the search at this scale");
        let accelerators = num(&cell(&doc, 0, i, 0)["value"]);
        assert_eq!(cell(&doc, 0, i, 0)["text"], format!("{accelerators:.0}"), "a count");
        match largest_held(&steps) {
            Some(held) => {
                let t = &held["train"];
                assert_eq!(accelerators, num(&t["accelerators"]), "{profile}");
                assert!(close(num(&cell(&doc, 0, i, 1)["value"]), num(&t["au"]) * 100.0));
                assert!(close(num(&cell(&doc, 0, i, 2)["value"]), num(&t["samples_per_sec"])));
                assert!(close(
                    num(&cell(&doc, 0, i, 3)["value"]),
                    num(&t["bytes_per_sec"]) / 1048576.0
                ));
            }
            None => {
                assert_eq!(accelerators, 0.0, "{profile}: no step held");
                let why = cell(&doc, 0, i, 1)["text"].as_str().unwrap();
                assert!(why.starts_with("n/a"), "{profile}: {why}");
            }
        }
        // A row per step, its AU and threshold from that step's epoch.
        for (k, step) in steps.iter().enumerate() {
            let at = 2 * i + k;
            assert_eq!(
                doc["tables"][1]["rows"][at]["labels"],
                serde_json::json!([profile, tried[k].to_string()])
            );
            let t = &step["train"];
            assert!(close(num(&cell(&doc, 1, at, 0)["value"]), num(&t["au"]) * 100.0));
            assert!(close(
                num(&cell(&doc, 1, at, 1)["value"]),
                num(&t["au_threshold"]) * 100.0
            ));
            // AU is what the epoch's accelerators recorded.
            let (c, w) = (num(&t["total"]["compute_ns"]), num(&t["total"]["wait_ns"]));
            assert!((num(&t["au"]) - c / (c + w)).abs() < 1e-9, "{profile}");
        }
    }

    // Checkpoints: the checkpoint's bytes over the slowest rank's time, the mean over K.
    for (i, (preset, ranks, bytes)) in [("llama3-8b", 8u64, 105e9), ("llama3-70b", 64, 912e9)]
        .into_iter()
        .enumerate()
    {
        let r = result(i, 2, 0);
        for (col, op) in [(0, "write"), (2, "read")] {
            let phases: Vec<&Value> = r["phases"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|p| p["prepare"] != true && p["workload"] == "checkpoint" && p["name"] == op)
                .collect();
            assert_eq!(phases.len(), 2, "{preset} {op}: 2 checkpoints at this scale");
            let mut gbs = 0.0;
            let mut secs = 0.0;
            for p in &phases {
                let shard = (bytes / ranks as f64 * 0.0001).round();
                assert_eq!(
                    num(&p["bytes"]),
                    shard * ranks as f64,
                    "{preset} {op}: every rank's shard"
                );
                let workers = p["workers_detail"].as_array().unwrap();
                assert_eq!(workers.len() as u64, ranks);
                let slowest = workers.iter().map(|w| num(&w["duration_s"])).fold(0.0, f64::max);
                let d = num(&p["duration_s"]);
                assert!(d >= slowest * 0.999, "{preset} {op}: the phase lasts its slowest rank");
                gbs += num(&p["bytes"]) / d / 1e9;
                secs += d;
            }
            let (gbs, secs) = (gbs / 2.0, secs / 2.0);
            let shown = num(&cell(&doc, 2, i, col)["value"]);
            assert!((shown - gbs).abs() <= 1e-6 * gbs, "{preset} {op}: {shown} != {gbs}");
            assert!(close(num(&cell(&doc, 2, i, col + 1)["value"]), secs), "{preset} {op}");
        }
    }

    // The study page draws the figures tables.json names: the accelerators, a search curve
    // per profile and the checkpoint bars.
    assert_eq!(doc["figures"].as_array().unwrap().len(), 6);
    let html = dir.with_extension("html");
    let page = Command::new(bin())
        .args(["report", dir.to_str().unwrap(), "-o", html.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(page.status.success(), "{}", String::from_utf8_lossy(&page.stderr));
    let text = std::fs::read_to_string(&html).unwrap();
    assert_eq!(
        text.matches("data-kind=\"study-line\"").count(),
        3,
        "a search curve per profile"
    );
    assert_eq!(text.matches("data-kind=\"study-bars\"").count(), 3);
    // Every run's own charts follow: each train point's three.
    assert_eq!(text.matches("data-kind=\"train-search\"").count(), 3);
    assert_eq!(std::fs::read_dir(target.path()).unwrap().count(), 0, "nothing left");
}

/// The `<figure>` of `kind` on a report page, and its SVG.
fn figure<'p>(page: &'p str, kind: &str) -> &'p str {
    let at = page
        .find(&format!("data-kind=\"{kind}\""))
        .unwrap_or_else(|| panic!("no {kind} chart"));
    let end = at + page[at..].find("</figure>").unwrap();
    &page[at..end]
}

/// Circles drawn in the run's colour: a chart's points and its legend's marker.
fn circles(svg: &str, colour: &str) -> usize {
    svg.split("<circle")
        .skip(1)
        .filter(|c| c.to_uppercase().contains(colour))
        .count()
}

#[test]
fn report_of_a_train_run_draws_au_waits_and_the_search() {
    let target = Target::temp();
    let args = [
        "-w",
        "train",
        "--files",
        "48",
        "--sample-size",
        "16k",
        "--batch-size",
        "2",
        "--compute-time",
        "2ms",
        "--accelerators",
        "4",
        "--accelerator-search",
    ];
    let r = run_ok(&target, &args);
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("train.json");
    std::fs::write(&file, serde_json::to_vec(&r).unwrap()).unwrap();
    let html = out.path().join("train.html");
    let report = Command::new(bin())
        .args(["report", file.to_str().unwrap(), "-o", html.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(report.status.success(), "{}", String::from_utf8_lossy(&report.stderr));
    let page = std::fs::read_to_string(&html).unwrap();
    let colour = dfsbench_report::svg::hex(dfsbench_report::svg::PALETTE[0]).to_uppercase();
    let steps = search_steps(&r);
    let tried: Vec<String> = steps
        .iter()
        .map(|p| p["params"]["active_accelerators"].to_string())
        .collect();
    assert_eq!(tried, ["1", "2", "4"]);

    // The search curve: a point per step, the answer and the counts in its caption.
    let search = figure(&page, "train-search");
    assert_eq!(
        circles(search, &colour),
        steps.len() + 1,
        "a point per step and the legend's"
    );
    let answer = match largest_held(&steps) {
        Some(h) => match h["params"]["active_accelerators"].as_u64().unwrap() {
            1 => "Largest held: 1 accelerator per rank".to_string(),
            n => format!("Largest held: {n} accelerators per rank"),
        },
        None => "No step held".to_string(),
    };
    assert!(search.contains(&answer), "{answer}: {search}");
    assert!(search.contains(&format!("with {} accelerators per rank", tried.join(", "))));

    // AU over time: second by second, as steps from the series, and an epoch's average
    // drawn across its time, two points each.
    let time = figure(&page, "train-au-time");
    assert_eq!(circles(time, &colour), 2 * steps.len() + 1);
    assert!(time.contains("AU per 1 s, all accelerators"), "{time}");
    assert!(time.contains("in each 1 s of the run"), "{time}");
    let held = steps.iter().filter(|p| p["train"]["meets_threshold"] == true).count();
    assert!(time.contains(&format!("{held} of {} epochs reached the threshold", steps.len())));

    // The waits: a line per epoch, named with its median from the exact histogram.
    let waits = figure(&page, "train-wait");
    let total: u64 = steps
        .iter()
        .map(|p| p["train"]["wait"]["count"].as_u64().unwrap())
        .sum();
    assert!(waits.contains(&format!("each of its {total} steps")), "{waits}");
    for p in &steps {
        let p50 = dfsbench_report::fmt::format_ns(p["train"]["wait"]["p50_ns"].as_u64().unwrap());
        let line = format!("{} (p50 {p50})", p["label"].as_str().unwrap());
        assert!(waits.contains(&line), "no line '{line}'");
    }
}

/// With --nodes 2 under mpirun on this one machine: a profile's search runs a client process
/// per node, each with the step's accelerators, and llama3-8b's 8 ranks run 4 per node; the
/// rows are those results' and say the launcher did not spread them over hosts.
#[cfg(feature = "mpi")]
#[test]
fn client_nodes_run_under_the_launcher() {
    if !common::mpirun_found() {
        return;
    }
    let target = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("mlperf");
    let launcher = format!("mpirun {} -np {{np}}", common::MPIRUN_OPTIONS.join(" "));
    let run = Command::new(bin())
        .args(["study", "mlperf-storage", "-t", target.path().to_str().unwrap()])
        .args(["--scale", "0.0001", "--nodes", "2", "--launcher", &launcher])
        .args(["--points", "train-resnet50-nodes2,checkpoint-llama3-8b-nodes2"])
        .args(["--out", dir.to_str().unwrap()])
        .envs(common::MPIRUN_ENV)
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let doc = json(&dir.join("tables.json"));
    // Table 0: each profile's row on this client, then on 2 client nodes.
    let row = &doc["tables"][0]["rows"][3];
    assert_eq!(row["labels"][0], "resnet50, 2 client nodes");
    let r = json(&dir.join(cell(&doc, 0, 3, 0)["result"].as_str().unwrap()));
    assert_eq!(r["cluster"]["ranks"], 2);
    let steps = search_steps(&r);
    assert!(!steps.is_empty());
    for p in steps {
        let active = p["params"]["active_accelerators"].as_u64().unwrap();
        assert_eq!(
            p["train"]["accelerators"],
            2 * active,
            "the step's accelerators on each client"
        );
    }
    assert_eq!(cell(&doc, 0, 2, 0)["value"], Value::Null, "one client's row: not run");
    // Table 2: llama3-8b's 8 ranks over 2 nodes.
    assert_eq!(doc["tables"][2]["rows"][1]["labels"][1], "8 on 2 nodes");
    let r = json(&dir.join(cell(&doc, 2, 1, 0)["result"].as_str().unwrap()));
    assert_eq!(r["cluster"]["ranks"], 8);
    assert!(num(&cell(&doc, 2, 1, 0)["value"]) > 0.0);
    let md = std::fs::read_to_string(dir.join("tables.md")).unwrap();
    assert!(md.contains("the launcher did not spread them"), "{md}");
    assert_eq!(std::fs::read_dir(target.path()).unwrap().count(), 0, "nothing left");
}
