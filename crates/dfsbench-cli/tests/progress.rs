//! The progress lines of a run whose stderr is not a terminal: one plain line every
//! `--progress-interval`, with done / total or elapsed / planned time, rates and errors; with
//! several processes rank 0's lines count every process.

mod common;

use common::{dfsbench, u, Run};
use serde_json::Value;

/// The progress lines of a run, in order.
fn progress_lines(r: &Run, phase: &str) -> Vec<String> {
    let prefix = format!("dfsbench: {phase} (");
    r.stderr
        .lines()
        .filter(|l| l.starts_with(&prefix))
        .map(String::from)
        .collect()
}

/// The number before `what` in a line (`1234/4000 ops` -> done 1234, total 4000).
fn done_total(line: &str) -> (u64, u64) {
    let field = line
        .split_whitespace()
        .find(|w| w.contains('/') && w.chars().next().is_some_and(|c| c.is_ascii_digit()))
        .unwrap_or_else(|| panic!("no done/total in {line}"));
    let (a, b) = field.split_once('/').unwrap();
    let b = b.trim_end_matches('s');
    (a.parse::<f64>().unwrap() as u64, b.parse::<f64>().unwrap() as u64)
}

/// The operations a line of a time-based phase shows (`12345 ops`).
fn ops_shown(line: &str) -> u64 {
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words
        .iter()
        .position(|w| *w == "ops")
        .unwrap_or_else(|| panic!("no ops in {line}"));
    words[at - 1]
        .parse()
        .unwrap_or_else(|_| panic!("no count before 'ops' in {line}"))
}

fn result(r: &Run) -> Value {
    let text = std::fs::read_to_string(r.scratch.path().join("r.json")).expect("a result file");
    serde_json::from_str(&text).unwrap()
}

#[test]
fn plain_lines_count_towards_the_total() {
    // 2 workers x 400 creates of at least 2 ms each: at least 0.4 s, lines every 50 ms.
    let args = [
        "run",
        "-t",
        "mem://?latency=2ms",
        "-w",
        "meta",
        "--phases",
        "create",
        "--files",
        "400",
        "-j",
        "2",
        "--progress-interval",
        "50ms",
        "-o",
        "r.json",
    ];
    let r = dfsbench(&args);
    assert_eq!(r.code, Some(0), "{}", r.describe());
    let lines = progress_lines(&r, "create");
    assert!(!lines.is_empty(), "no progress line: {}", r.describe());
    let mut last = 0;
    for l in &lines {
        let (done, total) = done_total(l);
        assert_eq!(total, 800, "{l}");
        assert!(done >= last && done <= 800, "{l}");
        last = done;
        for part in [
            "create (2 workers)",
            "ops ",
            "%",
            "ETA ",
            "ops/s now",
            " avg",
            "MiB/s now",
            "0 errors",
        ] {
            assert!(l.contains(part), "'{part}' missing in {l}");
        }
    }
    assert_eq!(u(&result(&r)["phases"][0]["ops"]), 800);
    // The table still goes to stdout, nothing else to stderr but the progress and the result's path.
    assert!(r.stdout.contains("create"), "{}", r.describe());
    let other: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| !l.starts_with("dfsbench: create (") && !l.starts_with("results: "))
        .collect();
    assert!(other.is_empty(), "{other:?}");
}

#[test]
fn time_based_lines_and_off_switch() {
    let args = [
        "run",
        "-t",
        "mem://?latency=1ms",
        "-w",
        "meta",
        "--phases",
        "create",
        "--duration",
        "1s",
        "-j",
        "1",
        "--progress-interval",
        "200ms",
        "-o",
        "r.json",
    ];
    let r = dfsbench(&args);
    assert_eq!(r.code, Some(0), "{}", r.describe());
    let lines = progress_lines(&r, "create");
    assert!(!lines.is_empty(), "{}", r.describe());
    for l in &lines {
        let (elapsed, planned) = done_total(l);
        assert_eq!(planned, 1, "{l}");
        assert!(elapsed <= 1, "{l}");
        assert!(l.contains("/1s ") && l.contains("ETA "), "{l}");
    }
    let mut off = args.to_vec();
    let at = off.iter().position(|a| *a == "200ms").unwrap();
    off[at] = "0";
    let r = dfsbench(&off);
    assert_eq!(r.code, Some(0), "{}", r.describe());
    assert!(progress_lines(&r, "create").is_empty(), "{}", r.describe());
    // -q silences them too.
    let mut quiet = args.to_vec();
    quiet.push("-q");
    let r = dfsbench(&quiet);
    assert!(progress_lines(&r, "create").is_empty(), "{}", r.describe());
}

#[test]
fn rank_zero_counts_every_process() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "run",
        "-t",
        dir.path().to_str().unwrap(),
        "-w",
        "meta",
        "--phases",
        "create",
        "--duration",
        "4s",
        "-j",
        "1",
        "--procs",
        "2",
        "--progress-interval",
        "250ms",
        "-o",
        "r.json",
    ];
    let r = dfsbench(&args);
    assert_eq!(r.code, Some(0), "{}", r.describe());
    let lines = progress_lines(&r, "create");
    assert!(!lines.is_empty(), "{}", r.describe());
    assert!(lines.iter().all(|l| l.contains("create (2 workers)")), "{lines:?}");
    // Counts of the group: near the end, more creates than either process made in the whole
    // phase (both run the same loop for the same 4 s).
    let doc = result(&r);
    let most_by_one = doc["phases"][0]["processes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| u(&p["ops"]))
        .max()
        .unwrap();
    let shown = lines.iter().map(|l| ops_shown(l)).max().unwrap();
    assert!(shown > most_by_one, "{shown} <= {most_by_one}: {lines:?}");
}
