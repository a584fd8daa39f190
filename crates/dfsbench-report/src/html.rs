//! The HTML report: one self-contained file (inline CSS and SVG, no scripts, no network) that
//! opens from a mail attachment and stands on its own: each run's target, host, tool version,
//! date, command and config are on the page. Written with maud, which escapes every value it is
//! given; only the charts' SVG and the fixed CSS go in as they are.

use maud::{html, Markup, PreEscaped, DOCTYPE};

use crate::figures::{self, Figure};
use crate::fmt;
use crate::html_tables::{self, swatch};
use crate::runs::{self, Run};
use crate::svg::RenderError;
use crate::sweep;

/// `&`, `<`, `>`, `"` escaped for text and attributes, by maud's escaper, for the pages put
/// together from strings (the study pages).
pub(crate) fn esc(s: &str) -> String {
    use std::fmt::Write as _;
    let mut o = String::with_capacity(s.len());
    let _ = maud::Escaper::new(&mut o).write_str(s);
    o
}

/// Page-level facts the result files do not hold.
pub struct Page {
    /// The page title; default: from the runs.
    pub title: Option<String>,
    /// The command that made the report, shown in the footer.
    pub command: String,
    /// When the report was made (RFC 3339).
    pub generated_at: String,
}

pub(crate) const CSS: &str = r#"
:root { --fg: #1f2328; --muted: #5f6670; --line: #e1e4e8; --soft: #f6f8fa; --alert: #d62728; }
* { box-sizing: border-box; }
body { margin: 0; background: #eef0f3; color: var(--fg);
  font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1200px; margin: 0 auto; padding: 28px 36px 48px; background: #fff; }
h1 { font-size: 26px; margin: 0 0 2px; }
h2 { font-size: 20px; margin: 40px 0 12px; padding-bottom: 6px; border-bottom: 2px solid var(--line); }
h3 { font-size: 16px; margin: 24px 0 8px; }
p { margin: 6px 0; }
.sub, .note, figcaption { color: var(--muted); }
.note, figcaption { font-size: 13px; }
nav { margin: 12px 0 0; font-size: 13px; }
nav a { color: var(--muted); margin-right: 14px; text-decoration: none; border-bottom: 1px dotted var(--muted); }
code, pre { font: 12.5px/1.45 ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; }
pre { background: var(--soft); border: 1px solid var(--line); border-radius: 6px; padding: 10px 12px;
  overflow-x: auto; max-height: 420px; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; margin: 8px 0 4px; width: 100%; font-size: 13.5px; }
.scroll { overflow-x: auto; }
th, td { padding: 4px 8px; border-bottom: 1px solid var(--line); text-align: right; white-space: nowrap; }
th { background: var(--soft); font-weight: 600; font-size: 13px; }
th.l, td.l { text-align: left; }
tbody tr.first td { border-top: 1px solid #c9ced4; }
tr.kind td { color: var(--muted); border-bottom-style: dotted; }
table.summary { font-size: 12px; }
table.summary th, table.summary td { padding: 3px 4px; }
table.summary th { white-space: normal; vertical-align: bottom; }
.op { padding-left: 14px; }
.swatch { display: inline-block; width: 12px; height: 12px; border-radius: 3px; margin-right: 7px; vertical-align: -1px; }
.runs { display: grid; grid-template-columns: repeat(auto-fit, minmax(480px, 1fr)); gap: 14px; }
.run { border: 1px solid var(--line); border-radius: 8px; padding: 12px 16px; }
.run h3 { margin: 0 0 8px; }
dl { display: grid; grid-template-columns: 92px 1fr; gap: 3px 12px; margin: 0; }
dt { color: var(--muted); }
dd { margin: 0; overflow-wrap: anywhere; }
.grid { display: grid; grid-template-columns: repeat(2, minmax(0, 1fr)); gap: 18px 22px; }
figure { margin: 0; }
figure.wide { grid-column: 1 / -1; }
figure svg { display: block; width: 100%; height: auto; }
figcaption { margin-top: 2px; }
details { margin: 8px 0; }
details > summary { cursor: pointer; font-weight: 600; }
.status { display: inline-block; padding: 0 7px; border-radius: 9px; font-size: 12px; background: #e6f4ea; color: #1e6b34; }
.status.bad { background: #fde8e8; color: var(--alert); }
.sample ul { margin: 0; padding-left: 16px; white-space: normal; }
.warn ul { margin: 4px 0 0; padding-left: 18px; }
.warn { border-left: 4px solid var(--alert); background: #fdf1f1; padding: 8px 12px; margin: 12px 0; }
.bad { color: var(--alert); font-weight: 600; }
footer { margin-top: 44px; padding-top: 10px; border-top: 1px solid var(--line); color: var(--muted); font-size: 12.5px; }
@media (max-width: 900px) { .grid { grid-template-columns: 1fr; } main { padding: 16px; } }
@media print { body { background: #fff; } main { max-width: none; padding: 0; } figure { break-inside: avoid; } }
"#;

/// Line breaks between the page's blocks, as the page has always had them: they keep its
/// source readable and the markers `study_page` cuts at where they were.
const NL: &str = "\n";

/// plotters writes an XML-style header-less `<svg>`: it goes in as it is, its opening tag given
/// a role and the figure's title as label (escaped by maud).
fn labelled_svg(svg: &str, label: &str) -> Markup {
    match svg.split_once("<svg ") {
        Some((before, after)) => html! {
            (PreEscaped(before))
            (PreEscaped("<svg role=\"img\" aria-label=\"")) (label) (PreEscaped("\" "))
            (PreEscaped(after))
        },
        None => PreEscaped(svg.to_string()),
    }
}

fn figure(f: &Figure, id: usize) -> Markup {
    html! {
        figure.chart.wide[f.wide] id={ "chart-" (id) } data-kind=(f.kind) data-title=(f.title) {
            (labelled_svg(&f.svg, &f.title))
            @if let Some(n) = &f.note { figcaption { (n) } }
        }
        (NL)
    }
}

/// The figures in a two-column grid; `next_id` numbers them across the page.
fn grid(figs: &[Figure], next_id: &mut usize) -> Markup {
    let first = *next_id;
    *next_id += figs.len();
    html! {
        div.grid { (NL) @for (i, f) in figs.iter().enumerate() { (figure(f, first + i)) } }
        (NL)
    }
}

fn gib(bytes: u64) -> String {
    format!("{:.1} GiB", bytes as f64 / (1024.0 * 1024.0 * 1024.0))
}

/// A run's card: what ran where, when, with which tool, command and config.
fn run_card(r: &Run) -> Markup {
    let res = r.result;
    let ok = res.status == "complete";
    let t = &res.target;
    let mut facts = vec![t.backend.clone()];
    facts.extend(t.details.iter().map(|(k, v)| format!("{k} {v}")));
    let h = &res.host;
    let jobs: Vec<String> = res
        .config
        .get("jobs")
        .and_then(|j| j.as_array())
        .map(|a| {
            a.iter()
                .map(|j| {
                    format!(
                        "{} ({}, {} workers)",
                        j.get("name").and_then(|v| v.as_str()).unwrap_or("?"),
                        j.get("workload").and_then(|v| v.as_str()).unwrap_or("?"),
                        j.get("workers").map_or("?".into(), |v| v.to_string())
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let config = serde_json::to_string_pretty(&res.config).unwrap_or_default();
    let span = res
        .phases
        .iter()
        .map(|p| p.start_s + p.ramp_s + p.duration_s)
        .fold(0.0, f64::max);
    html! {
        div.run {
            h3 { (swatch(r)) (r.label) }
            dl {
                (NL)
                dt { "run" }
                dd {
                    code { (res.run_id) } " " span.status.bad[!ok] { (res.status) }
                    @if let Some(m) = &res.status_message { " " span.bad { (m) } }
                }
                (NL)
                dt { "date" }
                dd { (res.started_at) " → " (res.finished_at) " " span.sub { "(" (fmt::seconds(span)) ")" } }
                (NL)
                dt { "target" }
                dd {
                    (t.uri) " " span.sub { "(" (facts.join(", ")) ")" }
                    br; span.sub { "run directory " code { (t.run_path) } }
                }
                (NL)
                dt { "host" }
                dd { (h.hostname) " · " (h.os) " · " (h.kernel) " · " (h.cpus) " CPUs · " (gib(h.memory_bytes)) }
                (NL)
                dt { "tool" }
                dd { (res.tool.name) " " (res.tool.version) }
                (NL)
                dt { "command" }
                dd { code { (shell_words(&res.command_line)) } }
                (NL)
                dt { "jobs" }
                dd { (jobs.join("; ")) }
                (NL)
                dt { "config" }
                dd {
                    details {
                        summary { "config hash " code { (res.config_hash[..res.config_hash.len().min(16)]) } }
                        pre { (config) }
                    }
                }
                (NL)
                dt { "file" }
                dd { code { (r.path.display().to_string()) } }
                (NL)
            }
        }
        (NL)
    }
}

/// The run's faults and recovery, as the text output shows them; empty without faults.
fn faults_table(r: &Run) -> Markup {
    let Some(t) = crate::faults::table(r.result) else {
        return html! {};
    };
    html! {
        table.faults {
            (NL)
            tr { @for h in t.heads() { th { (h) } } }
            (NL)
            @for row in t.rows() {
                tr { @for c in row { td { (c) } } }
                (NL)
            }
        }
        (NL)
        @for line in crate::faults::recovery_line(r.result).into_iter().chain(crate::faults::stall_lines(r.result)) {
            p.note { (line) }
            (NL)
        }
    }
}

/// argv as a shell line: words with spaces or quotes quoted.
pub fn shell_words(argv: &[String]) -> String {
    argv.iter()
        .enumerate()
        .map(|(i, a)| {
            let a = if i == 0 {
                std::path::Path::new(a)
                    .file_name()
                    .map_or(a.clone(), |n| n.to_string_lossy().into_owned())
            } else {
                a.clone()
            };
            if a.is_empty() || a.contains([' ', '"', '\'', '$', '\\', '*', '?']) {
                format!("'{}'", a.replace('\'', r"'\''"))
            } else {
                a
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The whole page.
pub fn render(runs: &[Run], page: &Page) -> Result<String, RenderError> {
    let (keys, ambiguous) = runs::phase_keys(runs);
    let title = page.title.clone().unwrap_or_else(|| {
        if runs.len() == 1 {
            format!("dfsbench report: {} on {}", runs[0].label, runs[0].system)
        } else {
            let systems: std::collections::BTreeSet<&str> = runs.iter().map(|r| r.system.as_str()).collect();
            format!(
                "dfsbench report: {} runs on {}",
                runs.len(),
                systems.into_iter().collect::<Vec<_>>().join(", ")
            )
        }
    });

    let throughput = figures::throughput(runs, &keys, ambiguous)?;
    let latency = figures::latency(runs, &keys, ambiguous)?;
    let sweeps = sweep::figures(runs)?;
    let rate_steps = figures::rate_steps(runs)?;
    let mut training = Vec::new();
    for r in runs {
        training.extend(crate::train_figures::train(r)?);
    }
    let mut timelines = Vec::new();
    let mut workers = Vec::new();
    for r in runs {
        let mut figs: Vec<Figure> = figures::faults(r)?.into_iter().collect();
        figs.extend(figures::timeline(r)?);
        timelines.push(figs);
        workers.push(figures::workers(r)?);
    }

    let version = env!("CARGO_PKG_VERSION");
    let phases: usize = runs.iter().map(|r| r.phases().count()).sum();
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    let errors = runs.iter().any(|r| r.phases().any(|p| p.errors.total > 0));
    let hashes: std::collections::BTreeSet<&str> = runs.iter().map(|r| r.result.config_hash.as_str()).collect();
    // Per-run details: open for up to two runs, folded for more so the page stays short.
    let open = runs.len() <= 2;
    // The charts are numbered down the page.
    let mut id = 0;
    let markup = html! {
        (DOCTYPE) (NL)
        html lang="en" {
            head {
                meta charset="utf-8"; (NL)
                meta name="viewport" content="width=device-width, initial-scale=1"; (NL)
                meta name="generator" content={ "dfsbench " (version) }; (NL)
                title { (title) } (NL)
                style { (PreEscaped(CSS)) }
            }
            (NL)
            body { main {
                (NL)
                header {
                    h1 { (title) } (NL)
                    p.sub {
                        (runs.len()) " run" (plural(runs.len())) ", " (phases) " measured phase" (plural(phases))
                        " · report made " (page.generated_at) " by dfsbench " (version)
                    }
                    (NL)
                    nav {
                        a href="#runs" { "runs" } a href="#summary" { "summary" }
                        a href="#throughput" { "throughput" } a href="#latency" { "latency" }
                        @if !rate_steps.is_empty() { a href="#rate-steps" { "rate steps" } }
                        @if !training.is_empty() { a href="#training" { "training" } }
                        @if !sweeps.is_empty() { a href="#comparison" { "comparison" } }
                        @if errors { a href="#errors" { "errors" } }
                        a href="#timeline" { "over time" } a href="#workers" { "per worker" }
                        @if runs.iter().any(|r| r.phases().any(|p| !p.endpoints.is_empty())) {
                            a href="#endpoints" { "per endpoint" }
                        }
                    }
                }
                (NL)
                @for r in runs.iter().filter(|r| r.result.status != "complete") {
                    div.warn {
                        (swatch(r)) b { (r.label) } " did not complete: " (r.result.status)
                        @if let Some(m) = &r.result.status_message { " (" (m) ")" }
                        ". Its measured phases are shown."
                    }
                    (NL)
                }
                h2 #runs { "Runs" } (NL)
                @if runs.len() > 1 && hashes.len() == 1 {
                    p.note { "All runs ran the same workload (equal config hashes)." } (NL)
                }
                div.runs { (NL) @for r in runs { (run_card(r)) } }
                (NL)
                h2 #summary { "Summary" } (NL)
                (html_tables::summary(runs, &keys, ambiguous))
                (html_tables::marks_section(runs))

                h2 #throughput { "Throughput per phase" } (NL)
                (grid(&throughput, &mut id))
                h2 #latency { "Latency" } (NL)
                p.note {
                    "From each phase's merged HDR histogram (every successful operation, 3 significant digits). \
                     Left: latency at each percentile, p90, p99, p99.9 ... up to the max; right: the share of \
                     operations at or below a latency."
                }
                (NL)
                (grid(&latency, &mut id))
                @if !rate_steps.is_empty() {
                    h2 #rate-steps { "Rate steps" } (NL)
                    p.note {
                        "Open-loop phases run at each rate of " code { "--rate-steps" } ": what was asked against \
                         what the target achieved, and the response time that bought (the SPECsfs curve)."
                    }
                    (NL)
                    (html_tables::rate_steps(runs))
                    (grid(&rate_steps, &mut id))
                }
                @if !training.is_empty() {
                    h2 #training { "Training: accelerator utilization" } (NL)
                    p.note {
                        "Emulated accelerators of the train workload (MLPerf Storage): how busy the storage kept \
                         them (AU) epoch by epoch, how long a step waited for its data, and the accelerator \
                         search's answer."
                    }
                    (NL)
                    (grid(&training, &mut id))
                }
                @if !sweeps.is_empty() {
                    h2 #comparison { "Comparison" } (NL)
                    p.note {
                        "Charts chosen from what the results contain: a line per system (where the runs ran), \
                         a point per run or phase."
                    }
                    (NL)
                    (grid(&sweeps, &mut id))
                }
                h2 #timeline { "Over time" } (NL)
                @if !open {
                    p.note { "One section per run: click a run to open it." } (NL)
                }
                @for (r, figs) in runs.iter().zip(&timelines) {
                    details open[open] {
                        summary { (swatch(r)) (r.label) } (NL)
                        (faults_table(r))
                        (grid(figs, &mut id))
                    }
                    (NL)
                }
                h2 #workers { "Per worker" } (NL)
                p.note {
                    "Each worker's rate over its own time; workers below 80% of the median (stragglers) are red."
                    @if !open { " Click a run to open it." }
                }
                (NL)
                @for (r, figs) in runs.iter().zip(&workers) {
                    details open[open] {
                        summary { (swatch(r)) (r.label) } (NL)
                        (grid(figs, &mut id))
                    }
                    (NL)
                }
                (html_tables::groups(runs))
                (html_tables::endpoints(runs))
                (html_tables::errors(runs))
                footer {
                    "Made with " code { (page.command) } " from " (runs.len()) " result file" (plural(runs.len()))
                    " (schema " (dfsbench_result::SCHEMA) "). Every number on this page comes from those files: \
                     rates over the measured time, latency from the merged histograms, time lines from the \
                     per-second series."
                }
                (NL)
            } }
        }
        (NL)
    };
    Ok(markup.into_string())
}
