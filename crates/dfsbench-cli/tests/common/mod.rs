//! Helpers shared by the integration tests: run the real `dfsbench` binary, read its result
//! file, validate it against docs/result-schema.json and check that its numbers add up.

// Each test file uses a different subset of these helpers.
#![allow(dead_code)]

pub mod bindfs;
pub mod lab;
pub mod loopdev;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use jsonschema::JSONSchema;
use serde_json::Value;
use tempfile::TempDir;

/// The binary under test.
pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_dfsbench")
}

/// mpirun's options on this machine as CI runs it: oversubscribed, shared memory without the
/// single-copy mechanism a VM lacks.
pub const MPIRUN_OPTIONS: [&str; 7] = [
    "--oversubscribe",
    "--mca",
    "btl",
    "self,vader",
    "--mca",
    "btl_vader_single_copy_mechanism",
    "none",
];

/// The environment mpirun needs to run as root (CI runs as root in a VM).
pub const MPIRUN_ENV: [(&str, &str); 2] = [("OMPI_ALLOW_RUN_AS_ROOT", "1"), ("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")];

/// Whether mpirun is here; its absence fails a test under DFSBENCH_REQUIRE_LAB (CI installs it).
pub fn mpirun_found() -> bool {
    let found = Command::new("mpirun")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var_os("DFSBENCH_REQUIRE_LAB").is_none(),
            "mpirun is missing: scripts/test.sh installs openmpi-bin"
        );
        eprintln!("mpirun not found: skipping (apt-get install openmpi-bin libopenmpi-dev)");
    }
    found
}

/// A place to run: a fresh temporary directory (posix backend) or the in-process store.
pub enum Target {
    Dir(TempDir),
    Mem,
}

impl Target {
    pub fn temp() -> Target {
        Target::Dir(tempfile::tempdir().expect("a temp dir"))
    }

    /// Both backends, each test runs its workload on every one.
    pub fn both() -> [Target; 2] {
        [Target::temp(), Target::Mem]
    }

    pub fn uri(&self) -> String {
        match self {
            Target::Dir(d) => d.path().display().to_string(),
            Target::Mem => "mem://".into(),
        }
    }

    pub fn path(&self) -> Option<&Path> {
        match self {
            Target::Dir(d) => Some(d.path()),
            Target::Mem => None,
        }
    }

    pub fn backend(&self) -> &'static str {
        match self {
            Target::Dir(_) => "posix",
            Target::Mem => "mem",
        }
    }

    /// Run directories (`dfsbench-<run id>`) present in the target directory.
    pub fn run_dirs(&self) -> Vec<PathBuf> {
        self.path().map(run_dirs).unwrap_or_default()
    }
}

/// True for `dfsbench-<run id>`, e.g. `dfsbench-20261122-013012-4f2a9c`.
pub fn is_run_dir_name(name: &str) -> bool {
    let Some(id) = name.strip_prefix("dfsbench-") else {
        return false;
    };
    let parts: Vec<&str> = id.split('-').collect();
    parts.len() == 3
        && parts[0].len() == 8
        && parts[1].len() == 6
        && parts[2].len() == 6
        && parts[..2].iter().all(|p| p.bytes().all(|b| b.is_ascii_digit()))
        && parts[2].bytes().all(|b| b.is_ascii_hexdigit())
}

/// Run directories (`dfsbench-<run id>`) in `dir`.
pub fn run_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("read the target dir")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(is_run_dir_name))
        .collect();
    v.sort();
    v
}

/// What one invocation of the binary did.
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    /// The result file, when the run wrote one.
    pub result: Option<Value>,
    /// Keeps the scratch directory (cwd and result file) alive.
    pub scratch: TempDir,
}

impl Run {
    pub fn result(&self) -> &Value {
        self.result
            .as_ref()
            .unwrap_or_else(|| panic!("no result file written (exit {:?})\nstderr: {}", self.code, self.stderr))
    }

    /// stderr lines, without empty ones.
    pub fn stderr_lines(&self) -> Vec<&str> {
        self.stderr.lines().filter(|l| !l.trim().is_empty()).collect()
    }

    pub fn describe(&self) -> String {
        format!(
            "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

fn finish(out: Output, scratch: TempDir, result_file: &Path) -> Run {
    let result = std::fs::read_to_string(result_file)
        .ok()
        .map(|t| serde_json::from_str(&t).unwrap_or_else(|e| panic!("result file is not JSON: {e}\n{t}")));
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        result,
        scratch,
    }
}

/// Run `dfsbench <args>` in a scratch directory (so no stray output lands in the repository).
pub fn dfsbench(args: &[&str]) -> Run {
    let scratch = tempfile::tempdir().expect("a temp dir");
    let out = Command::new(bin())
        .args(args)
        .current_dir(scratch.path())
        .output()
        .expect("run dfsbench");
    let missing = scratch.path().join("no-result-file");
    finish(out, scratch, &missing)
}

/// `dfsbench run -t <target> -q -o <scratch>/result.json <args>`: any outcome.
pub fn run(target: &str, args: &[&str]) -> Run {
    run_with(Command::new(bin()), target, args)
}

/// As [`run`], starting from a prepared command (e.g. a wrapper such as setpriv).
pub fn run_with(mut cmd: Command, target: &str, args: &[&str]) -> Run {
    let scratch = tempfile::tempdir().expect("a temp dir");
    let result_file = scratch.path().join("result.json");
    let out = cmd
        .arg("run")
        .args(["-t", target, "-q", "-o"])
        .arg(&result_file)
        .args(args)
        .current_dir(scratch.path())
        .output()
        .expect("run dfsbench");
    finish(out, scratch, &result_file)
}

/// A run that must succeed: exit 0, nothing on stderr, a valid result file whose numbers add
/// up, status complete, no errors, and no run directory left in the target (unless `--keep`).
pub fn run_ok(target: &Target, args: &[&str]) -> Value {
    expect_ok(target, args, run(&target.uri(), args))
}

/// The checks of [`run_ok`] on a finished run `r` of `args` on `target`.
pub fn expect_ok(target: &Target, args: &[&str], r: Run) -> Value {
    assert_eq!(
        r.code,
        Some(0),
        "dfsbench run {args:?} on {}: {}",
        target.uri(),
        r.describe()
    );
    assert!(r.stderr.trim().is_empty(), "unexpected stderr: {}", r.describe());
    let result = r.result().clone();
    validate(&result);
    check_invariants(&result);
    assert_eq!(result["status"], "complete");
    assert_eq!(result["target"]["backend"], target.backend());
    for p in phases(&result) {
        assert_eq!(p["errors"]["total"], 0, "errors in {}: {}", p["label"], p["errors"]);
    }
    if !args.contains(&"--keep") {
        assert!(
            target.run_dirs().is_empty(),
            "run directory left behind: {:?}",
            target.run_dirs()
        );
    }
    result
}

fn schema() -> &'static JSONSchema {
    static SCHEMA: OnceLock<JSONSchema> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/result-schema.json");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
        let value: Value = serde_json::from_str(&text).expect("the schema is JSON");
        JSONSchema::options()
            .with_draft(jsonschema::Draft::Draft7)
            .compile(&value)
            .unwrap_or_else(|e| panic!("docs/result-schema.json is not a valid schema: {e}"))
    })
}

/// Schema violations of `doc`, one line each.
pub fn schema_errors(doc: &Value) -> Vec<String> {
    match schema().validate(doc) {
        Ok(()) => Vec::new(),
        Err(errors) => errors.map(|e| format!("{}: {e}", e.instance_path)).collect(),
    }
}

/// Panic unless `doc` is valid against docs/result-schema.json.
pub fn validate(doc: &Value) {
    let errors = schema_errors(doc);
    assert!(
        errors.is_empty(),
        "result does not match docs/result-schema.json:\n{}",
        errors.join("\n")
    );
}

pub fn phases(result: &Value) -> &Vec<Value> {
    result["phases"].as_array().expect("phases is an array")
}

/// The measured (not prepare) phases.
pub fn measured(result: &Value) -> Vec<&Value> {
    phases(result).iter().filter(|p| p["prepare"] != true).collect()
}

/// The single phase called `name`.
pub fn phase<'a>(result: &'a Value, name: &str) -> &'a Value {
    let found: Vec<&Value> = phases(result).iter().filter(|p| p["name"] == name).collect();
    assert_eq!(found.len(), 1, "expected one '{name}' phase in {:?}", names(result));
    found[0]
}

pub fn names(result: &Value) -> Vec<String> {
    phases(result)
        .iter()
        .map(|p| p["name"].as_str().expect("name").to_string())
        .collect()
}

pub fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("{v} is not an unsigned integer"))
}

pub fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("{v} is not a number"))
}

fn sum(v: &Value) -> u64 {
    v.as_array().expect("an array").iter().map(u).sum()
}

fn sum_field(items: &Value, field: &str) -> u64 {
    items.as_array().expect("an array").iter().map(|i| u(&i[field])).sum()
}

/// What must hold for every result, whatever the workload.
pub fn check_invariants(result: &Value) {
    // Phases run one after another, except those of jobs of one group (`group`), which run
    // at the same time: a phase starts after the job's previous one, and after every phase
    // of the jobs before its group. Every phase so far: its job, its group, its end, its label.
    let group_of = |job: &Value| result["config"]["jobs"][u(job) as usize]["group"].clone();
    let mut ends: Vec<(Value, Value, f64, String)> = Vec::new();
    for p in phases(result) {
        let label = p["label"].as_str().expect("label").to_string();
        let ops = u(&p["ops"]);
        let bytes = u(&p["bytes"]);
        let errors = u(&p["errors"]["total"]);
        let workers = u(&p["workers"]);
        let ramp = f(&p["ramp_s"]);
        let ctx = format!("phase '{label}'");

        // Latency histogram: one entry per successful operation, percentiles in order.
        let lat = &p["latency"];
        assert_eq!(u(&lat["count"]), ops, "{ctx}: latency.count == ops");
        let hist = dfsbench_result::histogram::deserialize(lat["histogram"].as_str().expect("histogram"))
            .unwrap_or_else(|e| panic!("{ctx}: {e}"));
        assert_eq!(hist.len(), ops, "{ctx}: the serialized histogram holds every operation");
        if ops > 0 {
            let order = [
                "min_ns",
                "p50_ns",
                "p90_ns",
                "p99_ns",
                "p99_9_ns",
                "p99_99_ns",
                "max_ns",
            ];
            let vals: Vec<u64> = order.iter().map(|k| u(&lat[*k])).collect();
            assert!(
                vals.windows(2).all(|w| w[0] <= w[1]),
                "{ctx}: percentiles in order: {vals:?}"
            );
            assert!(vals[0] > 0, "{ctx}: a latency of 0 ns");
            assert_eq!(hist.max(), u(&lat["max_ns"]), "{ctx}: max matches the histogram");
        }

        // Workers add up to the phase.
        let detail = &p["workers_detail"];
        let ids: Vec<u64> = detail
            .as_array()
            .expect("workers_detail")
            .iter()
            .map(|w| u(&w["worker"]))
            .collect();
        assert_eq!(
            ids,
            (0..workers).collect::<Vec<_>>(),
            "{ctx}: one entry per worker, in order"
        );
        assert_eq!(sum_field(detail, "ops"), ops, "{ctx}: sum of workers_detail ops == ops");
        assert_eq!(
            sum_field(detail, "bytes"),
            bytes,
            "{ctx}: sum of workers_detail bytes == bytes"
        );
        assert_eq!(
            sum_field(detail, "errors"),
            errors,
            "{ctx}: sum of workers_detail errors == errors.total"
        );
        assert!(u(&p["threads"]) <= workers, "{ctx}: no more threads than workers");

        // Errors: counts by kind add up, samples are capped.
        let by_kind: u64 = p["errors"]["by_kind"]
            .as_object()
            .expect("by_kind")
            .values()
            .map(u)
            .sum();
        assert_eq!(by_kind, errors, "{ctx}: errors.by_kind adds up to errors.total");
        let samples = p["errors"]["samples"].as_array().expect("samples").len() as u64;
        assert_eq!(samples, errors.min(100), "{ctx}: error samples");

        // Per-interval series: equal lengths; without ramp-up it adds up to the phase.
        let s = &p["series"];
        let n = s["ops"].as_array().expect("series").len();
        assert_eq!(s["bytes"].as_array().expect("series").len(), n, "{ctx}");
        assert_eq!(s["errors"].as_array().expect("series").len(), n, "{ctx}");
        let dur = f(&p["duration_s"]);
        if ramp == 0.0 {
            assert_eq!(sum(&s["ops"]), ops, "{ctx}: sum of series ops == ops");
            assert_eq!(sum(&s["bytes"]), bytes, "{ctx}: sum of series bytes == bytes");
            assert_eq!(sum(&s["errors"]), errors, "{ctx}: sum of series errors == errors.total");
        } else {
            assert!(sum(&s["ops"]) >= ops, "{ctx}: the series includes ramp-up");
            assert!(sum(&s["bytes"]) >= bytes, "{ctx}: the series includes ramp-up");
        }

        // Stonewall: a part of the phase.
        let sw = &p["stonewall"];
        assert!(u(&sw["ops"]) <= ops, "{ctx}: stonewall.ops <= ops");
        assert!(u(&sw["bytes"]) <= bytes, "{ctx}: stonewall.bytes <= bytes");
        let sw_dur = f(&sw["duration_s"]);
        assert!(sw_dur <= dur + 1e-6, "{ctx}: stonewall within the phase");
        // Operations in the stonewall window need a window: no rate of 0 for work done.
        if u(&sw["ops"]) > 0 {
            assert!(sw_dur > 0.0, "{ctx}: stonewall of {} ops in 0 s: {sw}", sw["ops"]);
            let rate = u(&sw["ops"]) as f64 / sw_dur;
            assert!(
                (f(&sw["ops_per_sec"]) - rate).abs() <= 1e-6 * rate,
                "{ctx}: stonewall rate"
            );
        }

        // Rates are the counts over the measured time.
        if dur > 0.0 {
            let close = |a: f64, b: f64| (a - b).abs() <= 1e-6 * b.abs().max(1.0);
            assert!(close(f(&p["ops_per_sec"]), ops as f64 / dur), "{ctx}: ops_per_sec");
            assert!(
                close(f(&p["bytes_per_sec"]), bytes as f64 / dur),
                "{ctx}: bytes_per_sec"
            );
        }

        // Mixed phases: the kinds add up.
        if let Some(kinds) = p.get("ops_by_kind") {
            assert_eq!(sum_field(kinds, "ops"), ops, "{ctx}: ops_by_kind ops add up");
            assert_eq!(sum_field(kinds, "bytes"), bytes, "{ctx}: ops_by_kind bytes add up");
            for k in kinds.as_array().expect("kinds") {
                assert_eq!(
                    u(&k["latency"]["count"]),
                    u(&k["ops"]),
                    "{ctx}: latency count of {}",
                    k["op"]
                );
            }
        }

        if let Some(v) = p.get("verify") {
            assert!(u(&v["checked_bytes"]) <= bytes, "{ctx}: checked at most what was read");
            let verify_errors = p["errors"]["by_kind"].get("verify").map_or(0, u);
            assert_eq!(
                u(&v["mismatches"]),
                verify_errors,
                "{ctx}: mismatches are verify errors"
            );
        }

        // The barrier: a phase starts after every worker finished the previous one.
        let start = f(&p["start_s"]);
        let group = group_of(&p["job"]);
        for (job, job_group, end, prev) in &ends {
            let beside = *job != p["job"] && !group.is_null() && *job_group == group;
            assert!(
                beside || start + 1e-6 >= *end,
                "{ctx} starts at {start} s, before phase '{prev}' ended at {end} s"
            );
        }
        ends.push((p["job"].clone(), group, start + ramp + dur, label));
    }
    if result["status"] == "complete" {
        assert!(result.get("status_message").is_none());
    }
}

/// Sum of a numeric field over the phases called `name`.
pub fn total(result: &Value, name: &str, field: &str) -> u64 {
    phases(result)
        .iter()
        .filter(|p| p["name"] == name)
        .map(|p| u(&p[field]))
        .sum()
}

/// True when the file system under `dir` accepts O_DIRECT.
pub fn supports_o_direct(dir: &Path) -> bool {
    use std::os::unix::fs::OpenOptionsExt;
    let probe = dir.join(".o_direct_probe");
    let ok = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(libc::O_DIRECT)
        .open(&probe)
        .is_ok();
    let _ = std::fs::remove_file(&probe);
    ok
}

pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Every file below `dir` with its content, for before/after comparisons.
pub fn snapshot(dir: &Path) -> Vec<(PathBuf, Option<Vec<u8>>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read dir") {
            let p = e.expect("entry").path();
            let rel = p.strip_prefix(dir).expect("below dir").to_path_buf();
            if p.is_dir() {
                out.push((rel, None));
                stack.push(p);
            } else {
                out.push((rel, Some(std::fs::read(&p).expect("read file"))));
            }
        }
    }
    out.sort();
    out
}

/// The first `n` children of `pid` (the `--procs` processes), once all are started or `bound`
/// has passed.
pub fn children(pid: u32, n: usize, bound: std::time::Duration) -> Vec<i32> {
    let deadline = std::time::Instant::now() + bound;
    loop {
        let text = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
        let kids: Vec<i32> = text.split_whitespace().filter_map(|p| p.parse().ok()).collect();
        if kids.len() >= n || std::time::Instant::now() > deadline {
            return kids;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// A CSV line's fields (RFC 4180 quoting: a cell may hold a comma or a quote).
pub fn csv_fields(line: &str) -> Vec<String> {
    let (mut out, mut cur, mut quoted, mut chars) = (Vec::new(), String::new(), false, line.chars().peekable());
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    out.push(cur);
    out
}

/// Whether the unprivileged user (nobody, 65534) can run the binary under test: a checkout
/// under a private home (0700) cannot be entered by nobody, and a test that runs as nobody then
/// has nothing to test. Says so when not.
pub fn nobody_can_run_the_binary() -> bool {
    let ran = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", bin(), "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ran {
        eprintln!(
            "note: nobody (65534) cannot run {} here (setpriv missing or a private directory): not tested as nobody",
            bin()
        );
    }
    ran
}
