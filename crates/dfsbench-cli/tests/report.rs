//! `dfsbench report` and `dfsbench compare` on real result files made by running the binary:
//! the HTML page is opened in headless Chromium (screenshots, charts present and drawn, no
//! console errors), Markdown/CSV/JSON are checked against the result JSON, `compare` against
//! its noise rule, and bad input gets one line.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use common::{dfsbench, run_ok, Target};
use serde_json::Value;

/// Real result files, made once: a default-like mix on mem://, a files size sweep, and io
/// randread with 1 and 2 workers on a temp dir (posix) and mem:// (time-based, for noise).
struct Results {
    /// The result files (a study's folder).
    dir: tempfile::TempDir,
    /// What the tests derive from them.
    out: tempfile::TempDir,
}

fn write(dir: &Path, name: &str, v: &Value) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_string_pretty(v).unwrap()).unwrap();
    p
}

fn results() -> &'static Results {
    static R: OnceLock<Results> = OnceLock::new();
    R.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let mem = Target::Mem;
        let posix = Target::temp();
        let files = run_ok(&mem, &["-w", "files", "--sizes", "40x4k,8x256k,2x2m", "-j", "2"]);
        write(dir.path(), "files-sweep.json", &files);
        for j in ["1", "2"] {
            let args = [
                "-w",
                "io",
                "--rw",
                "randread",
                "--bs",
                "4k",
                "--size",
                "2m",
                "-j",
                j,
                "--duration",
                "3s",
            ];
            write(dir.path(), &format!("mem-randread-j{j}.json"), &run_ok(&mem, &args));
            write(dir.path(), &format!("posix-randread-j{j}.json"), &run_ok(&posix, &args));
        }
        let bs = ["-w", "io", "--rw", "read", "--size", "4m", "-j", "1"];
        write(
            dir.path(),
            "mem-read-64k.json",
            &run_ok(&mem, &[&bs[..], &["--bs", "64k"]].concat()),
        );
        write(
            dir.path(),
            "mem-read-4k.json",
            &run_ok(&mem, &[&bs[..], &["--bs", "4k"]].concat()),
        );
        // A study folder may hold other JSON files: they are skipped.
        std::fs::write(dir.path().join("study.json"), r#"{"study": "not a result"}"#).unwrap();
        Results {
            dir,
            out: tempfile::tempdir().unwrap(),
        }
    })
}

fn path(name: &str) -> String {
    results().dir.path().join(name).display().to_string()
}

fn json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// Run dfsbench and expect success; returns stdout.
fn ok(args: &[&str]) -> String {
    let r = dfsbench(args);
    assert_eq!(r.code, Some(0), "dfsbench {args:?}: {}", r.describe());
    assert!(r.stderr.trim().is_empty(), "stderr of {args:?}: {}", r.describe());
    r.stdout
}

// ---------------------------------------------------------------- Chromium

fn chromium() -> Option<PathBuf> {
    for name in ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"] {
        if let Ok(out) = Command::new("sh").args(["-c", &format!("command -v {name}")]).output() {
            let p = String::from_utf8_lossy(&out.stdout).trim().to_string();
            if out.status.success() && !p.is_empty() {
                return Some(PathBuf::from(p));
            }
        }
    }
    None
}

fn headless(chrome: &Path) -> Command {
    let mut c = Command::new(chrome);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--no-first-run",
        "--disable-extensions",
        "--disable-background-networking",
        "--enable-logging=stderr",
        "--v=0",
    ]);
    c
}

/// A script appended to a copy of the page: opens every <details>, then measures each chart
/// as laid out and drawn by the browser, and writes the findings into the DOM as JSON.
fn check_script(colours: &[String]) -> String {
    format!(
        r#"<script>
window.__errors = [];
window.addEventListener('error', e => window.__errors.push(String(e.message)));
document.querySelectorAll('details').forEach(d => d.open = true);
const colours = new Set({list});
const out = {{ figures: [], errors: window.__errors, external: [] }};
document.querySelectorAll('[src],[href]').forEach(e => {{
  const u = e.getAttribute('src') || e.getAttribute('href');
  if (!u.startsWith('#')) out.external.push(u);
}});
document.querySelectorAll('figure.chart').forEach(f => {{
  const svg = f.querySelector('svg');
  const box = svg ? svg.getBoundingClientRect() : {{width: 0, height: 0}};
  let plotted = 0;
  if (svg) svg.querySelectorAll('polyline, rect, circle, polygon').forEach(e => {{
    const c = (e.getAttribute('stroke') || '').toUpperCase();
    const fill = (e.getAttribute('fill') || '').toUpperCase();
    const b = e.getBBox();
    if ((colours.has(c) || colours.has(fill)) && (b.width > 0 || b.height > 0)) plotted++;
  }});
  const texts = svg ? [...svg.querySelectorAll('text')].map(t => t.textContent.trim()) : [];
  out.figures.push({{ kind: f.dataset.kind, title: f.dataset.title, width: box.width, height: box.height,
    plotted, texts }});
}});
out.tables = [...document.querySelectorAll('table')].map(t => ({{ cls: t.className,
  head: [...t.querySelectorAll('th')].map(c => c.textContent.trim()),
  rows: [...t.querySelectorAll('tbody tr')].map(r => ({{ cls: r.className,
    cells: [...r.cells].map(c => c.textContent.trim()), items: r.querySelectorAll('li').length }})) }}));
out.warnings = [...document.querySelectorAll('.warn')].map(w => w.textContent.trim());
const pre = document.createElement('pre');
pre.id = 'dfsbench-check';
pre.textContent = JSON.stringify(out);
document.body.appendChild(pre);
</script>"#,
        list = serde_json::to_string(colours).unwrap()
    )
}

/// Console messages and load failures in Chromium's log.
fn console_problems(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter(|l| {
            l.contains("CONSOLE") || l.contains("Uncaught") || l.contains("net::ERR") || l.contains("Failed to load")
        })
        .map(str::to_string)
        .collect()
}

fn screenshots_dir() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-screenshots");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Open `html` in Chromium: a screenshot of the page as it is (no console output allowed),
/// then the measured charts of an instrumented copy.
fn open_in_chromium(chrome: &Path, html: &Path, name: &str) -> Value {
    let shot = screenshots_dir().join(format!("{name}.png"));
    let _ = std::fs::remove_file(&shot);
    let out = headless(chrome)
        .arg("--window-size=1280,3000")
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", html.display()))
        .output()
        .expect("run chromium");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "chromium failed: {stderr}");
    assert!(
        std::fs::metadata(&shot).map(|m| m.len() > 10_000).unwrap_or(false),
        "no screenshot at {}: {stderr}",
        shot.display()
    );
    assert_eq!(
        console_problems(&stderr),
        Vec::<String>::new(),
        "console output of the page"
    );
    println!("screenshot: {}", shot.display());

    let colours: Vec<String> = dfsbench_report::svg::PALETTE
        .iter()
        .chain([&dfsbench_report::svg::ALERT])
        .map(|c| dfsbench_report::svg::hex(*c).to_uppercase())
        .collect();
    let page = std::fs::read_to_string(html).unwrap();
    let probe = html.with_extension("probe.html");
    std::fs::write(
        &probe,
        page.replace("</body>", &format!("{}</body>", check_script(&colours))),
    )
    .unwrap();
    let out = headless(chrome)
        .arg("--window-size=1280,1000")
        .arg("--dump-dom")
        .arg(format!("file://{}", probe.display()))
        .output()
        .expect("run chromium");
    let dom = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let start = dom
        .find("<pre id=\"dfsbench-check\">")
        .unwrap_or_else(|| panic!("the check did not run: {stderr}"))
        + "<pre id=\"dfsbench-check\">".len();
    let end = start + dom[start..].find("</pre>").unwrap();
    let text = dom[start..end]
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("check output: {e}\n{text}"));
    assert_eq!(v["errors"], serde_json::json!([]), "script errors on the page");
    assert_eq!(
        console_problems(&stderr),
        Vec::<String>::new(),
        "console output of the page"
    );
    v
}

/// Every chart is drawn: a visible SVG with a title, axis descriptions and plotted data.
fn check_figures(v: &Value, expect: &[&str]) {
    assert_eq!(
        v["external"],
        serde_json::json!([]),
        "the page loads nothing from outside"
    );
    let figs = v["figures"].as_array().unwrap();
    let kinds: Vec<&str> = figs.iter().map(|f| f["kind"].as_str().unwrap()).collect();
    for k in expect {
        assert!(kinds.contains(k), "no '{k}' chart among {kinds:?}");
    }
    for f in figs {
        let title = f["title"].as_str().unwrap();
        assert!(f["width"].as_f64().unwrap() > 300.0, "chart '{title}' too narrow: {f}");
        assert!(f["height"].as_f64().unwrap() > 150.0, "chart '{title}' too flat: {f}");
        assert!(
            f["plotted"].as_u64().unwrap() >= 1,
            "chart '{title}' has nothing plotted: {f}"
        );
        let texts: Vec<&str> = f["texts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap())
            .collect();
        assert!(
            texts.contains(&title),
            "chart '{title}' has no title in its SVG: {texts:?}"
        );
        assert!(texts.len() >= 6, "chart '{title}' lacks axis text: {texts:?}");
        let units = [
            "ops/s",
            "response time",
            "MiB/s",
            "latency",
            "percentile",
            "operations at or below",
            "worker",
            "time since",
            "speedup",
        ];
        assert!(
            texts.iter().any(|t| units.iter().any(|u| t.contains(u))),
            "chart '{title}' has no axis description with a unit: {texts:?}"
        );
    }
}

fn report_html(args: &[&str], name: &str) -> (PathBuf, String) {
    let out = results().out.path().join(format!("{name}.html"));
    let mut a = vec!["report"];
    a.extend_from_slice(args);
    a.extend(["-o", out.to_str().unwrap()]);
    let stdout = ok(&a);
    assert!(stdout.contains("report:"), "{stdout}");
    let html = std::fs::read_to_string(&out).unwrap();
    (out, html)
}

/// The page is one self-contained file: no scripts, stylesheets, images or fonts to fetch.
fn self_contained(html: &str) {
    for bad in ["<script", "<link", "<img", "<iframe", "@import", "url(", " src="] {
        assert!(!html.contains(bad), "the page has '{bad}'");
    }
    let without_ns = html.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
    assert!(
        !without_ns.contains("http://") && !without_ns.contains("https://"),
        "a network address in the page"
    );
}

#[test]
fn html_report_of_one_run_in_chromium() {
    let (out, html) = report_html(&[&path("files-sweep.json")], "one-run");
    self_contained(&html);
    let r = json(&results().dir.path().join("files-sweep.json"));
    // The page stands on its own: run, target, host, tool version and date are on it.
    for needle in [
        r["run_id"].as_str().unwrap(),
        r["host"]["hostname"].as_str().unwrap(),
        r["tool"]["version"].as_str().unwrap(),
        r["started_at"].as_str().unwrap(),
        "mem://",
    ] {
        assert!(html.contains(needle), "the page lacks '{needle}'");
    }
    let Some(chrome) = chromium() else {
        println!("SKIP: chromium not found (apt-get install chromium): the page was not opened in a browser");
        return;
    };
    let v = open_in_chromium(&chrome, &out, "one-run");
    check_figures(
        &v,
        &[
            "throughput-ops",
            "throughput-mib",
            "latency-percentiles",
            "latency-cdf",
            "timeline-ops",
            "timeline-mib",
            "workers",
            "sweep-file-size-mib",
            "sweep-file-size-ops",
        ],
    );
}

#[test]
fn html_report_of_a_folder_compares_systems_in_chromium() {
    let dir = results().dir.path().display().to_string();
    let (out, html) = report_html(&[&dir, "--title", "study <test>"], "folder");
    self_contained(&html);
    assert!(html.contains("study &lt;test&gt;"), "the title is escaped");
    // Seven result files found, the non-result JSON skipped.
    assert!(html.contains("7 runs"), "seven runs on the page");
    // Prepare phases (io layout) are left out.
    assert!(!html.contains(">layout 4 MiB<"), "a prepare phase on the page");
    let Some(chrome) = chromium() else {
        println!("SKIP: chromium not found (apt-get install chromium): the page was not opened in a browser");
        return;
    };
    let v = open_in_chromium(&chrome, &out, "folder");
    check_figures(
        &v,
        &[
            "throughput-ops",
            "latency-percentiles",
            "latency-cdf",
            "sweep-workers",
            "sweep-speedup",
            "sweep-block-size-mib",
            "timeline-ops",
            "workers",
        ],
    );
    // A line per system in the workers sweep: both targets are in its legend.
    let sweep = v["figures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "sweep-workers")
        .unwrap();
    let texts = sweep["texts"].to_string();
    let posix = json(&results().dir.path().join("posix-randread-j1.json"));
    let uri = posix["target"]["uri"].as_str().unwrap();
    assert!(
        texts.contains("mem://") && texts.contains(uri),
        "a line per system: {texts}"
    );
}

// ---------------------------------------------------------------- md, csv, json

fn measured(r: &Value) -> Vec<&Value> {
    r["phases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["prepare"] != true)
        .collect()
}

#[test]
fn csv_rows_are_the_json_numbers() {
    let files = [path("files-sweep.json"), path("mem-randread-j1.json")];
    let csv = ok(&["report", "--format", "csv", &files[0], &files[1]]);
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert!(
        rows.iter().all(|r| r.len() == header.len()),
        "a row per run x phase x metric, no quoting needed here"
    );
    for f in &files {
        let r = json(Path::new(f));
        let run_id = r["run_id"].as_str().unwrap();
        for p in measured(&r) {
            let find = |metric: &str| -> f64 {
                let row = rows
                    .iter()
                    .find(|row| {
                        row[col("run_id")] == run_id
                            && row[col("label")] == p["label"].as_str().unwrap()
                            && row[col("op")] == p["name"].as_str().unwrap()
                            && row[col("metric")] == metric
                    })
                    .unwrap_or_else(|| panic!("no {metric} row for {}", p["label"]));
                row[col("value")].parse().unwrap()
            };
            assert_eq!(find("ops"), p["ops"].as_f64().unwrap());
            assert_eq!(find("ops_per_sec"), p["ops_per_sec"].as_f64().unwrap());
            assert_eq!(find("bytes_per_sec"), p["bytes_per_sec"].as_f64().unwrap());
            assert_eq!(find("lat_p99_ns"), p["latency"]["p99_ns"].as_f64().unwrap());
            assert_eq!(find("lat_max_ns"), p["latency"]["max_ns"].as_f64().unwrap());
            assert_eq!(find("errors"), p["errors"]["total"].as_f64().unwrap());
        }
    }
    assert!(!csv.contains(",layout,"), "prepare phases are skipped");
}

#[test]
fn markdown_tables_are_the_json_numbers() {
    let f = path("files-sweep.json");
    let r = json(Path::new(&f));
    let md = ok(&["report", "--format", "md", &f]);
    for p in measured(&r) {
        let label = p["label"].as_str().unwrap();
        let row = md
            .lines()
            // The label, and the phase's marks ([weak], [cache?]) when it has any.
            .find(|l| l.starts_with(&format!("| {label} |")) || l.starts_with(&format!("| {label} [")))
            .unwrap_or_else(|| panic!("no row for {label}:\n{md}"));
        let cells: Vec<&str> = row.trim_matches('|').split('|').map(str::trim).collect();
        // phase, workers, ops, ops/s, MiB/s, p50, p99, p99.9, max, stonewall ops/s, client CPU, errors
        assert_eq!(cells[1], p["workers"].to_string());
        assert_eq!(cells[2], p["ops"].to_string());
        assert_eq!(cells[3], dfsbench_report::rate_si(p["ops_per_sec"].as_f64().unwrap()));
        let lat = |k: &str| dfsbench_report::fmt::latency(p["latency"][k].as_f64().unwrap());
        assert_eq!(cells[5], lat("p50_ns"));
        assert_eq!(cells[6], lat("p99_ns"));
        assert_eq!(cells[8], lat("max_ns"));
        assert_eq!(cells[11], p["errors"]["total"].to_string());
    }
    // Several runs: a table per metric with a column per run.
    let (a, b) = (path("mem-randread-j1.json"), path("mem-randread-j2.json"));
    let md = ok(&["report", "--format", "md", &a, &b]);
    assert!(md.contains("## ops/s") && md.contains("## p99"), "{md}");
    assert!(md.contains("| phase | mem-randread-j1 | mem-randread-j2 |"), "{md}");
    let (ra, rb) = (json(Path::new(&a)), json(Path::new(&b)));
    let ops = |r: &Value| dfsbench_report::rate_si(measured(r)[0]["ops_per_sec"].as_f64().unwrap());
    assert!(
        md.contains(&format!("| randread 4 KiB qd1 | {} | {} |", ops(&ra), ops(&rb))),
        "{md}"
    );
}

#[test]
fn json_summary_is_the_json_numbers() {
    let f = path("posix-randread-j2.json");
    let r = json(Path::new(&f));
    let out = results().out.path().join("summary.json");
    ok(&["report", "--format", "json", &f, "-o", out.to_str().unwrap()]);
    let s = json(&out);
    assert_eq!(s["schema"], "dfsbench.report-summary/1");
    let run = &s["runs"][0];
    assert_eq!(run["run_id"], r["run_id"]);
    let (sp, rp) = (&run["phases"][0], measured(&r)[0]);
    assert_eq!(sp["label"], rp["label"]);
    assert_eq!(sp["ops_per_sec"], rp["ops_per_sec"]);
    assert_eq!(sp["latency_ns"]["p99_9"], rp["latency"]["p99_9_ns"]);
    assert!(
        sp["noise_cv"].as_f64().is_some(),
        "3 s time-based phase has a noise estimate"
    );
    assert_eq!(
        run["phases"].as_array().unwrap().len(),
        measured(&r).len(),
        "no prepare phase"
    );
}

// ---------------------------------------------------------------- compare

/// The noise of the one measured phase of a result, as compare computes it.
fn cv(r: &Value) -> f64 {
    let p: dfsbench_result::PhaseResult = serde_json::from_value(measured(r)[0].clone()).unwrap();
    dfsbench_report::noise::ops_cv(&p).expect("a noise estimate")
}

#[test]
fn compare_marks_changes_within_noise() {
    let a = path("mem-randread-j1.json");
    let ra = json(Path::new(&a));
    let noise = cv(&ra);
    // B: the same run with ops/s raised by half the noise (within), MiB/s by 3x it (beyond).
    let mut rb = ra.clone();
    let p = rb["phases"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|p| p["prepare"] != true)
        .unwrap();
    p["ops_per_sec"] = (p["ops_per_sec"].as_f64().unwrap() * (1.0 + noise / 2.0)).into();
    p["bytes_per_sec"] = (p["bytes_per_sec"].as_f64().unwrap() * (1.0 + noise * 3.0)).into();
    let b = write(results().out.path(), "b.json", &rb);
    let out = ok(&["compare", &a, b.to_str().unwrap()]);
    let line = |metric: &str| {
        out.lines()
            .find(|l| l.split_whitespace().any(|w| w == metric) && l.contains('%'))
            .unwrap_or_else(|| panic!("no {metric} line:\n{out}"))
            .to_string()
    };
    assert!(line("ops/s").contains("~ within noise"), "{out}");
    assert!(line("MiB/s").ends_with("better"), "{out}");
    assert!(line("p99").contains("+0.0%") && line("p99").ends_with("same"), "{out}");
    assert!(
        out.contains(&format!("±{:.1}%", noise * 100.0)),
        "the noise is shown: {out}"
    );
    assert!(out.contains("coefficient of variation"), "the rule is stated: {out}");

    // JSON and Markdown say the same.
    let j: Value = serde_json::from_str(&ok(&["compare", &a, b.to_str().unwrap(), "--format", "json"])).unwrap();
    let m = &j["phases"][0]["metrics"];
    assert_eq!(m[0]["metric"], "ops/s");
    assert_eq!(m[0]["verdict"], "within_noise");
    assert_eq!(m[1]["verdict"], "better");
    let md = ok(&["compare", &a, b.to_str().unwrap(), "--format", "md"]);
    assert!(
        md.contains("| randread 4 KiB qd1 | ops/s |") && md.contains("~ within noise"),
        "{md}"
    );
}

#[test]
fn compare_matches_phases_by_job_and_label() {
    let out = ok(&[
        "compare",
        &path("mem-randread-j1.json"),
        &path("posix-randread-j2.json"),
    ]);
    for metric in ["ops/s", "MiB/s", "p50", "p99", "p99.9", "max", "errors"] {
        assert!(
            out.lines().any(|l| l.split_whitespace().any(|w| w == metric)),
            "no {metric}:\n{out}"
        );
    }
    assert!(out.contains("config hashes differ"), "{out}");
    let out = ok(&["compare", &path("files-sweep.json"), &path("mem-randread-j1.json")]);
    assert!(
        out.contains("no phase in common") && out.contains("only in A: write 4 KiB"),
        "{out}"
    );
    // Short phases have no noise estimate, and the output says why.
    let out = ok(&["compare", &path("files-sweep.json"), &path("files-sweep.json")]);
    assert!(out.contains("fewer than 3 full seconds"), "{out}");
    assert!(
        !out.lines()
            .any(|l| !l.starts_with("note:") && l.contains("~ within noise")),
        "no verdict without a noise estimate: {out}"
    );
}

// ---------------------------------------------------------------- bad input

fn one_line_failure<S: AsRef<str>>(args: &[S], expect: &str) {
    let args: Vec<&str> = args.iter().map(|s| s.as_ref()).collect();
    let args = &args[..];
    let r = dfsbench(args);
    assert_eq!(r.code, Some(2), "dfsbench {args:?}: {}", r.describe());
    let lines = r.stderr_lines();
    assert_eq!(lines.len(), 1, "one line for {args:?}: {}", r.describe());
    assert!(
        lines[0].starts_with("dfsbench: ") && lines[0].contains(expect),
        "{args:?}: {}",
        lines[0]
    );
    assert!(!r.stderr.contains("panicked"), "{}", r.describe());
}

#[test]
fn bad_input_gets_one_line() {
    let d = tempfile::tempdir().unwrap();
    let p = |name: &str, text: &str| {
        let f = d.path().join(name);
        std::fs::write(&f, text).unwrap();
        f.display().to_string()
    };
    let missing = d.path().join("missing.json").display().to_string();
    let not_json = p("not.json", "hello");
    let not_result = p("other.json", r#"{"a": 1}"#);
    let mut v = json(Path::new(&path("mem-randread-j1.json")));
    v["schema"] = "dfsbench.result/9".into();
    let newer = p("newer.json", &v.to_string());
    v["schema"] = "dfsbench.result/1".into();
    v["phases"][0]["ops"] = "many".into();
    let broken = p("broken.json", &v.to_string());
    let empty = tempfile::tempdir().unwrap();

    for cmd in [
        &["report"][..],
        &["report", "--format", "md"],
        &["compare", &path("mem-randread-j1.json")],
    ] {
        let with = |f: &str| -> Vec<String> { cmd.iter().chain([&f]).map(|s| s.to_string()).collect() };
        one_line_failure(&with(&missing), "cannot read");
        one_line_failure(&with(&not_json), "is not a JSON file");
        one_line_failure(&with(&not_result), "is not a dfsbench result file");
        one_line_failure(&with(&newer), "has schema dfsbench.result/9");
        one_line_failure(&with(&broken), "is not a valid dfsbench.result/1 document");
    }
    one_line_failure(
        &["report", empty.path().to_str().unwrap()],
        "holds no dfsbench result files",
    );
    let folder = results().dir.path().to_str().unwrap().to_string();
    one_line_failure(
        &["compare", &folder, &path("mem-randread-j1.json")],
        "compare takes one result file",
    );
    one_line_failure(&["report"], "required");
}

// ---------------------------------------------------------------- big results

#[test]
fn synthetic_long_run_is_schema_valid_and_reports() {
    let r = dfsbench_report::synthetic::long_run(90, 64);
    let v = serde_json::to_value(&r).unwrap();
    common::validate(&v);
    common::check_invariants(&v);
    let f = write(results().out.path(), "synthetic.json", &v);
    let (out, html) = report_html(&[f.to_str().unwrap()], "synthetic");
    self_contained(&html);
    assert!(html.contains("intervals with errors"), "error seconds are marked");
    assert!(html.contains("below 80% of the median"), "stragglers are marked");
    if let Some(chrome) = chromium() {
        let v = open_in_chromium(&chrome, &out, "synthetic");
        check_figures(&v, &["timeline-ops", "timeline-mib", "workers", "latency-cdf"]);
    }
}

// ---------------------------------------------------------------- issue 17: what the reports show

/// Result files of the report features of issue 17, made once by short real runs: a randrw
/// phase asked for iodepth 8 on mem:// (psync: queue depth 1), `--rate-steps`, a workload file
/// with two jobs, operations that time out (errors), and a run watching a server process.
struct Extra {
    dir: tempfile::TempDir,
}

fn extra() -> &'static Extra {
    static E: OnceLock<Extra> = OnceLock::new();
    E.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let mem = Target::Mem;
        let rw = run_ok(
            &mem,
            &[
                "-w",
                "io",
                "--rw",
                "randrw",
                "--bs",
                "4k",
                "--size",
                "2m",
                "-j",
                "2",
                "--iodepth",
                "8",
                "--duration",
                "2s",
            ],
        );
        write(dir.path(), "randrw.json", &rw);
        let steps = run_ok(
            &Target::Mem,
            &[
                "-w",
                "meta",
                "--phases",
                "create",
                "--files",
                "100000000",
                "-j",
                "2",
                "--duration",
                "1s",
                "--rate-steps",
                "200,400",
            ],
        );
        write(dir.path(), "steps.json", &steps);
        let toml = dir.path().join("two.toml");
        std::fs::write(
            &toml,
            "[[job]]\nname = \"small\"\nworkload = \"files\"\nsizes = [\"20x4k\"]\nworkers = 1\n\n\
             [[job]]\nname = \"meta\"\nworkload = \"meta\"\nfiles = 20\nworkers = 1\n",
        )
        .unwrap();
        let two = common::run("mem://", &[toml.to_str().unwrap()]);
        assert_eq!(two.code, Some(0), "{}", two.describe());
        write(dir.path(), "two-jobs.json", two.result());
        // Operations slower than --op-timeout fail as `timeout`: errors with samples.
        let err = common::run(
            "mem://?latency=2ms",
            &[
                "-w",
                "meta",
                "--phases",
                "create",
                "--files",
                "10",
                "-j",
                "1",
                "--op-timeout",
                "1ms",
            ],
        );
        assert!(err.result().as_object().is_some(), "{}", err.describe());
        write(dir.path(), "errors.json", err.result());
        let mut server = Command::new("sleep").arg("60").spawn().unwrap();
        let watched = common::run(
            "mem://",
            &[
                "-w",
                "meta",
                "--files",
                "20",
                "-j",
                "1",
                "--server-pid",
                &server.id().to_string(),
            ],
        );
        let _ = server.kill();
        let _ = server.wait();
        assert_eq!(watched.code, Some(0), "{}", watched.describe());
        write(dir.path(), "server.json", watched.result());
        Extra { dir }
    })
}

fn extra_path(name: &str) -> String {
    extra().dir.path().join(name).display().to_string()
}

fn md_row<'a>(md: &'a str, first_cell: &str) -> Vec<&'a str> {
    let line = md
        .lines()
        // The cell, and the phase's marks ([weak], [cache?]) when it has any.
        .find(|l| l.starts_with(&format!("| {first_cell} |")) || l.starts_with(&format!("| {first_cell} [")))
        .unwrap_or_else(|| panic!("no row '{first_cell}':\n{md}"));
    line.trim_matches('|').split('|').map(str::trim).collect()
}

#[test]
fn mixed_phases_show_reads_and_writes_apart_and_psync_its_real_depth() {
    let f = extra_path("randrw.json");
    let r = json(Path::new(&f));
    let p = measured(&r)[0];
    assert_eq!(p["params"]["ioengine"], "psync", "mem:// block I/O is psync");
    let label = "randrw 4 KiB qd1 (psync)";
    let md = ok(&["report", "--format", "md", &f]);
    assert!(
        !md.contains("qd8"),
        "psync ran at queue depth 1, not the 8 asked for: {md}"
    );
    let own = md_row(&md, label);
    assert_eq!(own[2], p["ops"].to_string(), "{md}");
    // phase, workers, ops, ops/s, MiB/s, p50, p99, p99.9, max, ...
    for k in p["ops_by_kind"].as_array().unwrap() {
        let row = md_row(&md, &format!("{label}: {}", k["op"].as_str().unwrap()));
        assert_eq!(row[2], k["ops"].to_string());
        assert_eq!(row[3], dfsbench_report::rate_si(k["ops_per_sec"].as_f64().unwrap()));
        assert_eq!(
            row[4],
            dfsbench_report::fmt::mib_s(k["bytes_per_sec"].as_f64().unwrap())
        );
        assert_eq!(
            row[5],
            dfsbench_report::fmt::latency(k["latency"]["p50_ns"].as_f64().unwrap())
        );
        assert_eq!(
            row[6],
            dfsbench_report::fmt::latency(k["latency"]["p99_ns"].as_f64().unwrap())
        );
    }
    // Long CSV: a row per operation kind and metric, with the kind in `op`.
    let csv = ok(&["report", "--format", "csv", &f]);
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = |n: &str| header.iter().position(|h| *h == n).unwrap();
    for k in p["ops_by_kind"].as_array().unwrap() {
        let row: Vec<&str> = csv
            .lines()
            .map(|l| l.split(',').collect::<Vec<&str>>())
            .find(|c| c[col("op")] == k["op"].as_str().unwrap() && c[col("metric")] == "lat_p99_ns")
            .unwrap_or_else(|| panic!("no p99 row of {}:\n{csv}", k["op"]));
        assert_eq!(row[col("label")], label);
        assert_eq!(
            row[col("value")].parse::<f64>().unwrap(),
            k["latency"]["p99_ns"].as_f64().unwrap()
        );
    }
    // compare shows the real depth too.
    let out = ok(&["compare", &f, &f]);
    assert!(out.contains(label) && !out.contains("qd8"), "{out}");
}

#[test]
fn markdown_shows_jobs_server_cpu_rate_steps_and_errors() {
    // Two jobs: a job column.
    let two = json(Path::new(&extra_path("two-jobs.json")));
    let md = ok(&["report", "--format", "md", &extra_path("two-jobs.json")]);
    assert!(md.contains("| phase | job | workers |"), "{md}");
    for p in measured(&two) {
        let row = md
            .lines()
            .find(|l| {
                l.starts_with(&format!("| {} |", p["label"].as_str().unwrap()))
                    || l.starts_with(&format!("| {} [", p["label"].as_str().unwrap()))
            })
            .unwrap_or_else(|| panic!("no row for {}: {md}", p["label"]));
        assert!(
            row.contains(&format!("| {} |", p["job_name"].as_str().unwrap())),
            "{row}"
        );
    }
    // Server CPU beside client CPU.
    let srv = json(Path::new(&extra_path("server.json")));
    let md = ok(&["report", "--format", "md", &extra_path("server.json")]);
    assert!(md.contains("| client CPU | server CPU | errors |"), "{md}");
    let p = measured(&srv)[0];
    let row = md_row(&md, p["label"].as_str().unwrap());
    assert_eq!(
        row[row.len() - 3],
        format!("{:.2}", p["cpu"]["cores"].as_f64().unwrap())
    );
    assert_eq!(
        row[row.len() - 2],
        format!("{:.2}", p["server_cpu"]["cores"].as_f64().unwrap())
    );
    // Rate steps: requested against achieved, per step.
    let steps = json(Path::new(&extra_path("steps.json")));
    let md = ok(&["report", "--format", "md", &extra_path("steps.json")]);
    assert!(md.contains("## Rate steps"), "{md}");
    for p in measured(&steps) {
        let rate = &p["rate"];
        let row = md
            .lines()
            .find(|l| l.starts_with(&format!("| steps | {} |", p["label"].as_str().unwrap())))
            .unwrap_or_else(|| panic!("no rate row for {}: {md}", p["label"]));
        let cells: Vec<&str> = row.trim_matches('|').split('|').map(str::trim).collect();
        assert_eq!(
            cells[2],
            dfsbench_report::rate_si(rate["requested_ops_per_sec"].as_f64().unwrap())
        );
        assert_eq!(
            cells[3],
            dfsbench_report::rate_si(rate["achieved_ops_per_sec"].as_f64().unwrap())
        );
    }
    // Errors by kind, the first samples in full.
    let err = json(Path::new(&extra_path("errors.json")));
    let p = measured(&err)[0];
    let md = ok(&["report", "--format", "md", &extra_path("errors.json")]);
    assert!(md.contains("## Errors"), "{md}");
    let row = md
        .lines()
        .find(|l| l.starts_with("| errors | create |"))
        .unwrap_or_else(|| panic!("no error row: {md}"));
    assert!(
        row.contains(&format!("| timeout | {} |", p["errors"]["by_kind"]["timeout"])),
        "{row}"
    );
    let first = &p["errors"]["samples"][0];
    assert!(
        row.contains(first["message"].as_str().unwrap()) && row.contains(first["path"].as_str().unwrap()),
        "{row}"
    );
    assert_eq!(row.matches("worker ").count(), 3, "the first three samples: {row}");
}

/// A copy of a real result with its stonewall rate raised past the phase rate by `factor`.
fn with_stonewall(name: &str, factor: f64) -> PathBuf {
    let mut r = json(Path::new(&extra_path("randrw.json")));
    let p = r["phases"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|p| p["prepare"] != true)
        .unwrap();
    p["stonewall"]["ops_per_sec"] = (p["ops_per_sec"].as_f64().unwrap() * factor).into();
    write(results().out.path(), name, &r)
}

#[test]
fn stonewall_beside_the_phase_rate_and_gaps_explained() {
    let near = with_stonewall("sw-near.json", 1.05);
    let far = with_stonewall("sw-far.json", 1.3);
    let md = ok(&["report", "--format", "md", near.to_str().unwrap()]);
    assert!(
        md.contains("stonewall ops/s") && !md.contains("differ by more than 10%"),
        "{md}"
    );
    let md = ok(&["report", "--format", "md", far.to_str().unwrap()]);
    assert!(
        md.contains("## Stonewall and phase rate differ by more than 10%"),
        "{md}"
    );
    assert!(md.contains("(+30.0%)") && md.contains("stragglers"), "{md}");
    let r = json(&far);
    let sw = dfsbench_report::rate_si(measured(&r)[0]["stonewall"]["ops_per_sec"].as_f64().unwrap());
    assert!(md_row(&md, "randrw 4 KiB qd1 (psync)").contains(&sw.as_str()), "{md}");
}

#[test]
fn sizes_sort_by_value() {
    // File names put 64k first; the phases come out 4 KiB first.
    let md = ok(&[
        "report",
        "--format",
        "md",
        &path("mem-read-64k.json"),
        &path("mem-read-4k.json"),
    ]);
    let at = |label: &str| {
        md.find(&format!("| {label} |"))
            .unwrap_or_else(|| panic!("no {label}: {md}"))
    };
    assert!(at("read 4 KiB qd1") < at("read 64 KiB qd1"), "{md}");
}

#[test]
fn html_report_of_issue_17_features_in_chromium() {
    let dir = extra().dir.path().display().to_string();
    let (out, html) = report_html(&[&dir], "issue-17");
    self_contained(&html);
    assert!(html.contains("5 runs"), "five runs on the page");
    assert!(!html.contains("log scale, as phases"), "throughput bars are linear");
    let Some(chrome) = chromium() else {
        println!("SKIP: chromium not found (apt-get install chromium): the page was not opened in a browser");
        return;
    };
    let v = open_in_chromium(&chrome, &out, "issue-17");
    check_figures(
        &v,
        &[
            "throughput-ops",
            "throughput-mib",
            "rate-steps-throughput",
            "rate-steps-response",
            "latency-cdf",
        ],
    );
    // Throughput bars on a linear axis from 0; latency on a log axis, said so.
    let figs = v["figures"].as_array().unwrap();
    for f in figs
        .iter()
        .filter(|f| f["kind"].as_str().unwrap().starts_with("throughput"))
    {
        let texts: Vec<&str> = f["texts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap())
            .collect();
        assert!(
            texts.contains(&"0") && !texts.iter().any(|t| t.contains("log scale")),
            "{texts:?}"
        );
    }
    let resp = figs.iter().find(|f| f["kind"] == "rate-steps-response").unwrap();
    assert!(
        resp["texts"].to_string().contains("response time (log scale)"),
        "{resp}"
    );
    let tables = v["tables"].as_array().unwrap();
    let summary = tables
        .iter()
        .find(|t| t["cls"] == "summary")
        .expect("the summary table");
    let head: Vec<&str> = summary["head"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h.as_str().unwrap())
        .collect();
    for h in ["job", "run", "stonewallops/s", "clientCPU", "serverCPU", "errors"] {
        assert!(head.contains(&h), "no '{h}' column: {head:?}");
    }
    // The randrw phase's reads and writes are rows of their own under it.
    let rows = summary["rows"].as_array().unwrap();
    let i = rows
        .iter()
        .position(|r| r["cells"][0].as_str().unwrap().starts_with("randrw 4 KiB qd1 (psync)"))
        .expect("the randrw row");
    let rw = json(Path::new(&extra_path("randrw.json")));
    for (k, kind) in measured(&rw)[0]["ops_by_kind"].as_array().unwrap().iter().enumerate() {
        let row = &rows[i + 1 + k];
        assert_eq!(row["cls"], "kind");
        assert_eq!(row["cells"][0], format!("↳ {}", kind["op"].as_str().unwrap()));
        let ops_col = head.iter().position(|h| *h == "ops").unwrap();
        assert_eq!(row["cells"][ops_col], kind["ops"].to_string());
    }
    // Errors: the kind, its count and the first samples as list items.
    let errors = tables.iter().find(|t| t["cls"] == "errors").expect("the errors table");
    let row = &errors["rows"][0];
    assert_eq!(row["cells"][2], "timeout");
    assert_eq!(row["items"], 3, "the first three samples in full: {row}");
    // Page cache and marks: every weak phase with its reasons.
    let marks = tables.iter().find(|t| t["cls"] == "marks").expect("the marks table");
    let weak = marks["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["cells"][1].as_str().unwrap().ends_with("[weak]"))
        .expect("a weak phase");
    assert!(weak["cells"][3].as_str().unwrap().starts_with("weak: "), "{weak}");
    // The rate steps table: a row per step.
    let rates = tables
        .iter()
        .find(|t| t["cls"] == "rates")
        .expect("the rate steps table");
    assert_eq!(rates["rows"].as_array().unwrap().len(), 2);
}

#[test]
fn compare_threshold_gates_a_pipeline() {
    let a = path("mem-randread-j1.json");
    let ra = json(Path::new(&a));
    let noise = cv(&ra);
    // B: ops/s and MiB/s down by 20% plus three times the noise, but never to 0 or below on a
    // machine so loaded that its noise is large: (1 + noise) / 2 still lies beyond the noise.
    assert!(
        noise < 1.0,
        "per-second ops varied by {:.0}%: no comparison can judge that",
        noise * 100.0
    );
    let drop = (0.2 + 3.0 * noise).min((1.0 + noise) / 2.0);
    let mut rb = ra.clone();
    let p = rb["phases"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|p| p["prepare"] != true)
        .unwrap();
    for k in ["ops_per_sec", "bytes_per_sec"] {
        p[k] = (p[k].as_f64().unwrap() * (1.0 - drop)).into();
    }
    let b = write(results().out.path(), "slower.json", &rb);
    let b = b.to_str().unwrap();
    // Without --threshold: exit 0, whatever changed.
    ok(&["compare", &a, b]);
    // Within a threshold larger than the drop: exit 0.
    let wide = format!("{}%", (drop * 100.0 + 10.0).ceil());
    ok(&["compare", &a, b, "--threshold", &wide]);
    // Beyond it: exit 1, the table still on stdout, and one line naming what got worse.
    let r = dfsbench(&["compare", &a, b, "--threshold", "5%"]);
    assert_eq!(r.code, Some(1), "{}", r.describe());
    assert!(
        r.stdout.contains("randread 4 KiB qd1"),
        "the comparison is printed: {}",
        r.describe()
    );
    let lines = r.stderr_lines();
    assert_eq!(lines.len(), 1, "{}", r.describe());
    assert!(
        lines[0].starts_with("dfsbench: 2 metrics worse in")
            && lines[0].contains("randread 4 KiB qd1 ops/s -")
            && lines[0].contains("randread 4 KiB qd1 MiB/s -"),
        "{}",
        lines[0]
    );
    // Better is never a failure.
    let r = dfsbench(&["compare", b, &a, "--threshold", "5"]);
    assert_eq!(r.code, Some(0), "{}", r.describe());
    // A threshold that is not a percentage: one line, exit 2.
    one_line_failure(&["compare", &a, b, "--threshold", "five"], "not a percentage");
    one_line_failure(&["compare", &a, b, "--threshold=-5%"], "not a percentage of 0 or more");
}
