//! The train workload end to end: each epoch reads every sample of the dataset it generated
//! once (counted in samples and bytes, per accelerator too), and its accelerator utilization
//! is compute / (compute + wait) of what was recorded, lowered by a slower store.

mod common;

use common::{expect_ok, run, run_ok, Target};
use serde_json::Value;

fn phases<'a>(r: &'a Value, name: &str) -> Vec<&'a Value> {
    r["phases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["name"] == name)
        .collect()
}

fn n(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// AU as the result defines it, from the recorded compute and wait times.
fn au_of(a: &Value) -> f64 {
    let (c, w) = (n(&a["compute_ns"]) as f64, n(&a["wait_ns"]) as f64);
    c / (c + w)
}

#[test]
fn every_epoch_reads_the_generated_dataset_once_on_both_backends() {
    for target in Target::both() {
        // A file per sample (whole-file reads) and records of 4 samples (ranged reads).
        for spf in [1u64, 4] {
            let per_file = spf.to_string();
            let args = [
                "-w",
                "train",
                "--files",
                "24",
                "--samples-per-file",
                &per_file,
                "--sample-size",
                "8k",
                "--sample-size-stdev",
                "2k",
                "--batch-size",
                "3",
                "--accelerators",
                "2",
                "--epochs",
                "2",
                "--compute-time",
                "1ms",
            ];
            let r = run_ok(&target, &args);
            let generate = phases(&r, "generate");
            assert_eq!(generate.len(), 1);
            assert_eq!(n(&generate[0]["ops"]), 24);
            let dataset = n(&generate[0]["bytes"]);
            let samples = 24 * spf;
            // Drawn sizes: not every sample is the mean.
            assert_ne!(dataset, samples * 8192, "{}", target.uri());
            let epochs = phases(&r, "train");
            assert_eq!(epochs.len(), 2);
            for e in epochs {
                let at = format!("{} on {}", e["label"], target.uri());
                assert_eq!((n(&e["ops"]), n(&e["bytes"])), (samples, dataset), "{at}");
                let t = &e["train"];
                assert_eq!(n(&t["accelerators"]), 2, "{at}");
                let total = &t["total"];
                assert_eq!((n(&total["samples"]), n(&total["bytes"])), (samples, dataset), "{at}");
                assert_eq!(n(&total["steps"]), samples / 3, "{at}");
                assert_eq!(n(&t["wait"]["count"]), samples / 3, "{at}: a wait per step");
                // unet3d's 4 read threads: each accelerator is 4 workers, the first reports it.
                let detail = e["workers_detail"].as_array().unwrap();
                assert_eq!(detail.len(), 8, "{at}");
                let accels: Vec<&Value> = detail.iter().filter_map(|w| w.get("accelerator")).collect();
                assert_eq!(accels.len(), 2, "{at}");
                for a in &accels {
                    assert_eq!(n(&a["samples"]), samples / 2, "{at}: an even share");
                }
                let summed: u64 = accels.iter().map(|a| n(&a["bytes"])).sum();
                assert_eq!(summed, dataset, "{at}");
                series_adds_up_to_the_epoch(e, &at);
            }
        }
    }
}

/// AU over time: the epoch's series of compute and wait times, second by second, adds up
/// exactly to the accelerators' totals.
fn series_adds_up_to_the_epoch(e: &Value, at: &str) {
    let sum = |k: &str| -> u64 { e["series"][k].as_array().map_or(0, |v| v.iter().map(n).sum()) };
    let total = &e["train"]["total"];
    assert!(n(&total["compute_ns"]) > 0, "{at}");
    assert_eq!(
        (sum("compute_ns"), sum("wait_ns")),
        (n(&total["compute_ns"]), n(&total["wait_ns"])),
        "{at}: {}",
        e["series"]
    );
}

/// Two processes' accelerators: their series add up across the processes as their totals do.
#[test]
fn au_over_time_adds_up_over_processes() {
    let target = Target::temp();
    let args = [
        "-w",
        "train",
        "--files",
        "16",
        "--sample-size",
        "4k",
        "--batch-size",
        "2",
        "--accelerators",
        "1",
        "--epochs",
        "2",
        "--compute-time",
        "3ms",
        "--procs",
        "2",
    ];
    let r = run_ok(&target, &args);
    let epochs = phases(&r, "train");
    assert_eq!(epochs.len(), 2);
    for e in epochs {
        assert_eq!(n(&e["train"]["accelerators"]), 2, "one per process");
        series_adds_up_to_the_epoch(e, e["label"].as_str().unwrap());
    }
}

#[test]
fn au_is_compute_over_compute_and_wait_and_a_slower_store_lowers_it() {
    // 32 samples, 2 accelerators of batches of 4: 4 steps each, 2 ms of compute per step, and
    // one batch loaded ahead at most.
    let args = [
        "-w",
        "train",
        "--files",
        "32",
        "--sample-size",
        "4k",
        "--sample-size-stdev",
        "0",
        "--batch-size",
        "4",
        "--accelerators",
        "2",
        "--epochs",
        "1",
        "--compute-time",
        "2ms",
        "--read-threads",
        "1",
        "--prefetch",
        "1",
    ];
    let fast = run_ok(&Target::Mem, &args);
    // Every read takes at least 5 ms: a batch of 4 loads in 20 ms or more.
    let slow = expect_ok(&Target::Mem, &args, run("mem://?latency=5ms", &args));
    let mut aus = Vec::new();
    for r in [&fast, &slow] {
        let e = phases(r, "train")[0];
        let t = &e["train"];
        let total = &t["total"];
        let steps = n(&total["steps"]);
        assert_eq!(steps, 8);
        assert_eq!(
            n(&total["compute_ns"]),
            steps * 2_000_000,
            "compute is the steps' compute time"
        );
        let au = t["au"].as_f64().unwrap();
        assert!((au - au_of(total)).abs() < 1e-12, "{au} against {}", au_of(total));
        let (mut c, mut w) = (0, 0);
        for d in e["workers_detail"].as_array().unwrap() {
            let a = &d["accelerator"];
            c += n(&a["compute_ns"]);
            w += n(&a["wait_ns"]);
            assert!(au_of(a) >= t["au_min"].as_f64().unwrap() - 1e-12);
        }
        assert_eq!((c, w), (n(&total["compute_ns"]), n(&total["wait_ns"])));
        assert_eq!(t["meets_threshold"], au >= t["au_threshold"].as_f64().unwrap());
        aus.push(au);
    }
    // The slow store: an accelerator's 4 steps (2 ms each) cannot end before its 16 reads of
    // 5 ms and the last batch's compute, so compute + wait >= 4 * 20 ms + 2 ms per
    // accelerator, and every step waits at least the 18 ms its batch takes beyond the
    // previous compute (one batch ahead at most).
    let t = &phases(&slow, "train")[0]["train"];
    let bound = (8.0 * 2.0) / (2.0 * (4.0 * 20.0 + 2.0));
    assert!(
        aus[1] <= bound + 1e-9,
        "AU {} above the latency's bound {bound}",
        aus[1]
    );
    assert!(n(&t["wait"]["min_ns"]) >= 17_900_000, "{}", t["wait"]);
    assert!(aus[1] < aus[0], "latency lowered AU: {} < {}", aus[1], aus[0]);
    assert_eq!(t["meets_threshold"], false);
}

/// An accelerator's read threads are parallel readers: on a store where every read takes
/// 5 ms, four of them keep it busier than one, and the epoch still reads the dataset once.
#[test]
fn parallel_readers_raise_au_where_latency_limits_one() {
    let args = |readers: &'static str| {
        [
            "-w",
            "train",
            "--files",
            "48",
            "--sample-size",
            "4k",
            "--sample-size-stdev",
            "0",
            "--batch-size",
            "4",
            "--accelerators",
            "2",
            "--epochs",
            "1",
            "--compute-time",
            "5ms",
            "--prefetch",
            "1",
            "--read-threads",
            readers,
        ]
    };
    let mut aus = Vec::new();
    for readers in ["1", "4"] {
        let a = args(readers);
        let r = expect_ok(&Target::Mem, &a, run("mem://?latency=5ms", &a));
        let e = phases(&r, "train")[0];
        let t = &e["train"];
        let at = format!("{readers} read threads");
        assert_eq!(n(&t["accelerators"]), 2, "{at}");
        assert_eq!(n(&e["workers"]), 2 * readers.parse::<u64>().unwrap(), "{at}");
        assert_eq!((n(&e["ops"]), n(&e["bytes"])), (48, 48 * 4096), "{at}");
        let total = &t["total"];
        assert_eq!((n(&total["samples"]), n(&total["bytes"])), (48, 48 * 4096), "{at}");
        assert_eq!(
            (n(&total["steps"]), n(&t["wait"]["count"])),
            (12, 12),
            "{at}: a wait per step"
        );
        assert!((t["au"].as_f64().unwrap() - au_of(total)).abs() < 1e-12, "{at}");
        aus.push(t["au"].as_f64().unwrap());
    }
    // One reader: every 5 ms compute waits for a batch of four 5 ms reads, AU <= 5/20 at best.
    // Four readers load four batches at once.
    assert!(aus[0] <= 0.25 + 1e-9, "one reader: AU {}", aus[0]);
    assert!(aus[1] > aus[0], "4 readers AU {} above 1 reader's {}", aus[1], aus[0]);
}

/// workloads/mlperf-train.toml runs as shipped, its preset and scale from the environment.
#[test]
fn the_shipped_workload_file_runs_a_preset() {
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../../workloads/mlperf-train.toml");
    let mut cmd = std::process::Command::new(common::bin());
    cmd.envs([
        ("PRESET", "cosmoflow"),
        ("SCALE", "0.00005"),
        ("ACCELERATORS", "2"),
        ("EPOCHS", "1"),
    ]);
    let r = expect_ok(&Target::Mem, &[file], common::run_with(cmd, "mem://", &[file]));
    // 524288 files x 0.00005 = 26 samples, batches of 1 over 2 accelerators.
    let e = phases(&r, "train");
    assert_eq!(e.len(), 1);
    assert_eq!(e[0]["params"]["preset"], "cosmoflow");
    assert_eq!(n(&e[0]["train"]["total"]["samples"]), 26);
    assert_eq!(e[0]["train"]["au_threshold"], 0.7);
}

/// An accelerator search runs an epoch with 1, 2 ... accelerators per rank, the others sitting
/// it out, and names the most that every step up to it kept at the threshold.
#[test]
fn an_accelerator_search_steps_up_to_the_accelerators_given() {
    let args = |threshold: &str| {
        [
            "-w",
            "train",
            "--files",
            "36",
            "--sample-size",
            "4k",
            "--batch-size",
            "2",
            "--compute-time",
            "1ms",
            "--accelerators",
            "3",
            "--accelerator-search",
            "--au-threshold",
            threshold,
        ]
        .map(str::to_string)
    };
    let a = args("0");
    let r = run_ok(&Target::Mem, &a.iter().map(String::as_str).collect::<Vec<_>>());
    let steps = phases(&r, "train");
    assert_eq!(steps.len(), 3);
    for (step, active) in steps.iter().zip([1u64, 2, 3]) {
        assert_eq!(n(&step["params"]["active_accelerators"]), active);
        let t = &step["train"];
        assert_eq!(n(&t["accelerators"]), active, "{}", step["label"]);
        // 36 samples in batches of 2 over `active` accelerators, the rest left out.
        let read = 36 / (2 * active) * 2 * active;
        assert_eq!(n(&t["total"]["samples"]), read, "{}", step["label"]);
        let busy = step["workers_detail"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|w| w.get("accelerator").is_some());
        assert_eq!(busy.count() as u64, active);
    }
    // The verdict line: every step holds at 0%, none at 100% (the first batch is always waited for).
    for (threshold, line) in [
        ("0", "the most accelerators per rank kept at AU >= 0.0%: 3"),
        ("100", "no step kept AU >= 100.0%, not even 1 accelerator per rank"),
    ] {
        let a = args(threshold);
        let mut cmd = vec!["run", "-t", "mem://"];
        cmd.extend(a.iter().map(String::as_str));
        let out = common::dfsbench(&cmd);
        assert_eq!(out.code, Some(0), "{}", out.describe());
        assert!(out.stdout.contains(line), "{}", out.stdout);
    }
}

/// A run of `args` on `dir` that must succeed with `note` its only stderr line (a kept
/// dataset's).
fn run_noting(dir: &std::path::Path, args: &[&str], note: &str) -> Value {
    let r = run(&dir.display().to_string(), args);
    assert_eq!(r.code, Some(0), "{args:?}: {}", r.describe());
    let lines = r.stderr_lines();
    assert!(
        lines.len() == 1 && lines[0].contains(note),
        "{args:?}: {}",
        r.describe()
    );
    r.result().clone()
}

/// A run of `args` on `target` that must be refused before it ran, with `why` in its one line.
fn refused(target: &str, args: &[&str], why: &str) {
    let r = run(target, args);
    assert!(matches!(r.code, Some(1 | 2)), "{args:?}: {}", r.describe());
    let lines = r.stderr_lines();
    assert!(lines.len() == 1 && lines[0].contains(why), "{args:?}: {}", r.describe());
}

/// `--phases generate --dataset NAME` keeps the dataset beside the run directories; later runs
/// train on it without writing a byte, and refuse another layout, a foreign or half-made
/// folder, and mem://, each in one line; `dfsbench clean` removes it.
#[test]
fn a_kept_dataset_is_generated_once_and_trained_on_in_later_runs() {
    let target = Target::temp();
    let dir = target.path().unwrap();
    let layout = [
        "-w",
        "train",
        "--files",
        "12",
        "--samples-per-file",
        "4",
        "--sample-size",
        "8k",
        "--batch-size",
        "3",
        "--accelerators",
        "2",
        "--epochs",
        "1",
        "--compute-time",
        "1ms",
    ];
    let with = |extra: &[&'static str]| [&layout[..], extra].concat();
    refused(
        &target.uri(),
        &with(&["--phases", "train"]),
        "train alone reads a dataset an earlier run kept: give --dataset NAME",
    );
    refused(
        &target.uri(),
        &with(&["--phases", "train", "--dataset", "s1"]),
        "no dataset 's1' at",
    );
    let made = run_noting(
        dir,
        &with(&["--phases", "generate", "--dataset", "s1"]),
        "kept after the run",
    );
    let generate = phases(&made, "generate");
    assert_eq!((generate.len(), phases(&made, "train").len()), (1, 0));
    let dataset = n(&generate[0]["bytes"]);
    let kept = dir.join("dfsbench-dataset-s1");
    assert!(kept.join("f11").is_file() && target.run_dirs().is_empty());
    // Train alone, and the default run, read what is there: every sample once, nothing written.
    for extra in [
        &["--phases", "train", "--dataset", "s1"][..],
        &["--dataset", "s1", "--seed", "7"],
    ] {
        let r = run_noting(dir, &with(extra), "not generated again");
        assert!(phases(&r, "generate").is_empty(), "{extra:?}");
        let e = phases(&r, "train");
        assert_eq!(e.len(), 1);
        assert_eq!((n(&e[0]["ops"]), n(&e[0]["bytes"])), (48, dataset), "{extra:?}");
        assert!(target.run_dirs().is_empty());
    }
    let s1 = kept.display().to_string();
    refused(
        &target.uri(),
        &with(&["--phases", "generate", "--dataset", "s1"]),
        &format!("dataset 's1' is already at {s1}"),
    );
    let other = [&layout[..], &["--dataset", "s1"]].concat();
    let mut other: Vec<&str> = other.into_iter().collect();
    other[7] = "4k";
    refused(
        &target.uri(),
        &other,
        "holds another layout: sample size 8192 there, 4096 asked (--sample-size 8192 reads it)",
    );
    std::fs::create_dir(dir.join("dfsbench-dataset-mine")).unwrap();
    refused(
        &target.uri(),
        &with(&["--phases", "train", "--dataset", "mine"]),
        "is there but is not a dataset dfsbench kept (no readable manifest)",
    );
    refused(
        "mem://",
        &with(&["--dataset", "s1"]),
        "mem:// keeps nothing after its process ends",
    );
    // A half-made dataset (a generate that was killed) is refused, not read.
    std::fs::OpenOptions::new()
        .write(true)
        .open(kept.join("f3"))
        .unwrap()
        .set_len(100)
        .unwrap();
    refused(&target.uri(), &with(&["--dataset", "s1"]), "is incomplete");
    // clean removes the kept dataset, and refuses the folder dfsbench did not make.
    let out = common::dfsbench(&["clean", &s1]);
    assert_eq!(out.code, Some(0), "{}", out.describe());
    assert!(!kept.exists() && dir.join("dfsbench-dataset-mine").is_dir());
    let out = common::dfsbench(&["clean", &dir.join("dfsbench-dataset-mine").display().to_string()]);
    assert_eq!(out.code, Some(1), "{}", out.describe());
}
