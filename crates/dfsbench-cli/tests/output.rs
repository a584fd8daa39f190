//! What `dfsbench run` prints on stdout (`--format table|json|csv`) agrees with the result file.

mod common;

use common::{check_invariants, f, measured, run, u, validate, Run, Target};
use serde_json::Value;

const ARGS: [&str; 10] = ["-w", "io", "--rw", "randrw", "-j", "2", "--size", "64k", "--bs", "4k"];

fn run_format(t: &Target, format: &str, extra: &[&str]) -> Run {
    let mut args: Vec<&str> = ARGS.to_vec();
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--format", format]);
    let r = run(&t.uri(), &args);
    assert_eq!(r.code, Some(0), "{}", r.describe());
    validate(r.result());
    check_invariants(r.result());
    r
}

#[test]
fn json_stdout_is_the_result_file() {
    for t in Target::both() {
        let r = run_format(&t, "json", &[]);
        let printed: Value = serde_json::from_str(&r.stdout).expect("stdout is one JSON document");
        assert_eq!(&printed, r.result());
    }
}

#[test]
fn csv_has_a_row_per_measured_phase() {
    for t in Target::both() {
        let r = run_format(&t, "csv", &[]);
        check_csv(&r.stdout, r.result());
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("w.toml");
    std::fs::write(
        &file,
        "[[job]]\nname = \"md, quoted\"\nworkload = \"meta\"\nfiles = 4\nworkers = 2\n\n[[job]]\nworkload = \"files\"\nsizes = [\"2x0\", \"2x3000\"]\nworkers = 2\n\n[[job]]\nworkload = \"io\"\nrw = \"randrw\"\nsize = \"64k\"\nworkers = 2\n",
    )
    .unwrap();
    let r = run(&Target::Mem.uri(), &[file.to_str().unwrap(), "--format", "csv"]);
    assert_eq!(r.code, Some(0), "{}", r.describe());
    check_csv(&r.stdout, r.result());
    // The randrw job's reads and writes have rows of their own.
    assert!(
        r.stdout.contains(",read,") && r.stdout.contains(",write,"),
        "{}",
        r.stdout
    );
}

/// Split one CSV line, honouring double quotes.
fn cells(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                out.last_mut().unwrap().push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(String::new()),
            c => out.last_mut().unwrap().push(c),
        }
    }
    out
}

fn check_csv(stdout: &str, result: &Value) {
    let mut lines = stdout.lines();
    let header = cells(lines.next().expect("a header row"));
    let all: Vec<Vec<String>> = lines.map(cells).collect();
    let phases = measured(result);
    let col = |row: &Vec<String>, name: &str| -> String {
        let i = header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("no column {name}"));
        row[i].clone()
    };
    // A mixed phase's row is followed by a row per operation kind, with that kind's figures.
    let kinds: Vec<&Value> = phases
        .iter()
        .flat_map(|p| p["ops_by_kind"].as_array().into_iter().flatten())
        .collect();
    let (rows, kind_rows): (Vec<Vec<String>>, Vec<Vec<String>>) = all.into_iter().partition(|r| col(r, "op") == "all");
    assert_eq!(rows.len(), phases.len(), "one row per measured phase:\n{stdout}");
    assert_eq!(kind_rows.len(), kinds.len(), "one row per operation kind:\n{stdout}");
    for (row, k) in kind_rows.iter().zip(kinds) {
        assert_eq!(col(row, "op"), k["op"].as_str().unwrap());
        assert_eq!(col(row, "ops").parse::<u64>().unwrap(), u(&k["ops"]));
        assert_eq!(col(row, "bytes").parse::<u64>().unwrap(), u(&k["bytes"]));
        assert_eq!(
            col(row, "lat_p99_ns").parse::<u64>().unwrap(),
            u(&k["latency"]["p99_ns"])
        );
    }
    for (row, p) in rows.iter().zip(phases) {
        assert_eq!(row.len(), header.len(), "{row:?}");
        assert_eq!(col(row, "run_id"), result["run_id"].as_str().unwrap());
        assert_eq!(col(row, "job"), p["job_name"].as_str().unwrap());
        assert_eq!(col(row, "phase"), p["name"].as_str().unwrap());
        assert_eq!(col(row, "label"), p["label"].as_str().unwrap());
        for (c, field) in [
            ("workers", &p["workers"]),
            ("ops", &p["ops"]),
            ("bytes", &p["bytes"]),
            ("errors", &p["errors"]["total"]),
            ("lat_min_ns", &p["latency"]["min_ns"]),
            ("lat_p50_ns", &p["latency"]["p50_ns"]),
            ("lat_p90_ns", &p["latency"]["p90_ns"]),
            ("lat_p99_ns", &p["latency"]["p99_ns"]),
            ("lat_p99_9_ns", &p["latency"]["p99_9_ns"]),
            ("lat_max_ns", &p["latency"]["max_ns"]),
        ] {
            assert_eq!(col(row, c).parse::<u64>().unwrap(), u(field), "column {c}");
        }
        for (c, field, decimals) in [
            ("duration_s", &p["duration_s"], 6),
            ("ops_per_sec", &p["ops_per_sec"], 3),
            ("bytes_per_sec", &p["bytes_per_sec"], 3),
            ("stonewall_ops_per_sec", &p["stonewall"]["ops_per_sec"], 3),
            ("stonewall_bytes_per_sec", &p["stonewall"]["bytes_per_sec"], 3),
            ("lat_mean_ns", &p["latency"]["mean_ns"], 1),
        ] {
            let v: f64 = col(row, c).parse().unwrap();
            let tolerance = 0.5 * 10f64.powi(-decimals) + 1e-9 * f(field).abs();
            assert!((v - f(field)).abs() <= tolerance, "column {c}: {v} vs {}", f(field));
        }
    }
}

#[test]
fn table_has_a_header_and_a_row_per_measured_phase() {
    for t in Target::both() {
        let r = run_format(&t, "table", &[]);
        let result = r.result();
        let lines: Vec<&str> = r.stdout.lines().collect();
        assert!(lines[0].starts_with("dfsbench "), "{}", r.stdout);
        assert!(lines[0].contains(result["run_id"].as_str().unwrap()));
        let header: Vec<&str> = lines[1].split_whitespace().collect();
        assert_eq!(
            header,
            ["phase", "workers", "ops", "ops/s", "MiB/s", "p50", "p99", "p99.9", "max", "errors"]
        );
        // Phase rows start at column 0; the read/write lines of a mixed phase are indented;
        // the notes under the table (page cache, marks) follow it.
        let is_note = |l: &&str| l.starts_with("page cache before ") || l.starts_with('[');
        let rows: Vec<&str> = lines[2..]
            .iter()
            .copied()
            .filter(|l| !l.starts_with(' ') && !is_note(l))
            .collect();
        let phases = measured(result);
        assert_eq!(rows.len(), phases.len(), "{}", r.stdout);
        assert!(
            !r.stdout.contains("layout"),
            "the unmeasured layout phase is not a result row"
        );
        for (row, p) in rows.iter().zip(&phases) {
            let label = p["label"].as_str().unwrap();
            let rest: Vec<&str> = row
                .strip_prefix(label)
                .expect("row starts with the label")
                .split_whitespace()
                .filter(|w| !["[cache?]", "[weak]"].contains(w))
                .collect();
            assert_eq!(rest[0].parse::<u64>().unwrap(), u(&p["workers"]));
            assert_eq!(rest[1].parse::<u64>().unwrap(), u(&p["ops"]));
            assert_eq!(rest.last().unwrap().parse::<u64>().unwrap(), u(&p["errors"]["total"]));
        }
        let kinds: Vec<&str> = lines[2..].iter().copied().filter(|l| l.starts_with(' ')).collect();
        let by_kind = phases[0]["ops_by_kind"].as_array().unwrap();
        assert_eq!(kinds.len(), by_kind.len());
        for (line, k) in kinds.iter().zip(by_kind) {
            let cells: Vec<&str> = line.split_whitespace().collect();
            assert_eq!(cells[0], k["op"].as_str().unwrap());
            assert_eq!(cells[1].parse::<u64>().unwrap(), u(&k["ops"]));
        }
    }
}

#[test]
fn output_directory_gets_run_id_file() {
    let out = tempfile::tempdir().unwrap();
    let r = common::dfsbench(&[
        "run",
        "-t",
        "mem://",
        "-w",
        "meta",
        "-j",
        "1",
        "--files",
        "3",
        "-o",
        out.path().to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(r.code, Some(0), "{}", r.describe());
    let printed: Value = serde_json::from_str(&r.stdout).unwrap();
    let file = out.path().join(format!("{}.json", printed["run_id"].as_str().unwrap()));
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(saved, printed);
    // Without -q, the only stderr line says where the result went.
    assert_eq!(r.stderr.trim(), format!("results: {}", file.display()));
}

/// A result that cannot go where `-o` says is kept in the temp directory, and the run fails
/// (exit 1), so a script does not look for it where it is not. The directory refuses the
/// write (read-only for the user; root runs the command as nobody).
#[test]
fn unwritable_output_path_fails_the_run() {
    use std::os::unix::fs::PermissionsExt as _;
    let tmp = tempfile::tempdir().unwrap();
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let locked = tmp.path().join("locked");
    std::fs::create_dir(&locked).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).unwrap();
    if common::is_root() && !common::nobody_can_run_the_binary() {
        return;
    }
    let mut cmd = if common::is_root() {
        let mut c = std::process::Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", common::bin()]);
        c
    } else {
        std::process::Command::new(common::bin())
    };
    let r = cmd
        .args([
            "run", "-t", "mem://", "-w", "meta", "-j", "1", "--files", "3", "-q", "-o",
        ])
        .arg(locked.join("result.json"))
        .env("TMPDIR", tmp.path())
        .current_dir(tmp.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(1), "{stderr}");
    let kept: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("dfsbench-result-"))
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    let last = stderr.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("dfsbench: the result is not where -o asked") && last.contains(&kept[0]),
        "{stderr}"
    );
    assert_eq!(std::fs::read_dir(&locked).unwrap().count(), 0);
}

/// An output path that cannot be a file (under a file) is refused before the run, in one line.
#[test]
fn an_impossible_output_path_is_refused_before_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let r = common::dfsbench(&[
        "run",
        "-t",
        "mem://",
        "-w",
        "meta",
        "--files",
        "3",
        "-o",
        file.join("result.json").to_str().unwrap(),
    ]);
    assert_eq!(r.code, Some(2), "{}", r.describe());
    assert_eq!(r.stderr_lines().len(), 1, "{}", r.describe());
    assert!(
        r.stderr.contains("Not a directory") && r.stdout.is_empty(),
        "{}",
        r.describe()
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
}
