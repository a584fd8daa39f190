//! The HTML report: one self-contained file (inline CSS and SVG, no scripts, no network) that
//! opens from a mail attachment and stands on its own: each run's target, host, tool version,
//! date, command and config are on the page.

use std::fmt::Write as _;

use crate::charts::RenderError;
use crate::figures::{self, Figure};
use crate::fmt;
use crate::runs::{self, Run};
use crate::sweep;
use crate::tables;

/// Page-level facts the result files do not hold.
pub struct Page {
    /// The page title; default: from the runs.
    pub title: Option<String>,
    /// The command that made the report, shown in the footer.
    pub command: String,
    /// When the report was made (RFC 3339).
    pub generated_at: String,
}

/// `&`, `<`, `>`, `"` escaped for text and attributes.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            _ => o.push(c),
        }
    }
    o
}

const CSS: &str = r#"
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

fn swatch(run: &Run) -> String {
    tables::swatch(run).into_string()
}

fn figure(out: &mut String, f: &Figure, id: usize) {
    let _ = write!(
        out,
        r#"<figure class="chart{}" id="chart-{id}" data-kind="{}" data-title="{}">"#,
        if f.wide { " wide" } else { "" },
        f.kind,
        esc(&f.title)
    );
    // plotters writes an XML-style header-less <svg>: inline it as it is, with a label.
    out.push_str(&f.svg.replacen(
        "<svg ",
        &format!(r#"<svg role="img" aria-label="{}" "#, esc(&f.title)),
        1,
    ));
    if let Some(n) = &f.note {
        let _ = write!(out, "<figcaption>{}</figcaption>", esc(n));
    }
    out.push_str("</figure>\n");
}

fn grid(out: &mut String, figs: &[Figure], next_id: &mut usize) {
    out.push_str("<div class=\"grid\">\n");
    for f in figs {
        figure(out, f, *next_id);
        *next_id += 1;
    }
    out.push_str("</div>\n");
}

fn gib(bytes: u64) -> String {
    format!("{:.1} GiB", bytes as f64 / (1024.0 * 1024.0 * 1024.0))
}

fn run_card(out: &mut String, r: &Run) {
    let res = r.result;
    let ok = res.status == "complete";
    let t = &res.target;
    let mut target = esc(&t.uri);
    let mut facts = vec![t.backend.clone()];
    facts.extend(t.details.iter().map(|(k, v)| format!("{k} {v}")));
    let _ = write!(target, " <span class=\"sub\">({})</span>", esc(&facts.join(", ")));
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
    let _ = write!(
        out,
        r#"<div class="run"><h3>{sw}{label}</h3><dl>
<dt>run</dt><dd><code>{id}</code> <span class="status{bad}">{status}</span>{msg}</dd>
<dt>date</dt><dd>{start} → {end} <span class="sub">({span})</span></dd>
<dt>target</dt><dd>{target}<br><span class="sub">run directory <code>{run_path}</code></span></dd>
<dt>host</dt><dd>{host} · {os} · {kernel} · {cpus} CPUs · {mem}</dd>
<dt>tool</dt><dd>{tool} {version}</dd>
<dt>command</dt><dd><code>{cmd}</code></dd>
<dt>jobs</dt><dd>{jobs}</dd>
<dt>config</dt><dd><details><summary>config hash <code>{hash}</code></summary><pre>{config}</pre></details></dd>
<dt>file</dt><dd><code>{file}</code></dd>
</dl></div>
"#,
        sw = swatch(r),
        label = esc(&r.label),
        id = esc(&res.run_id),
        bad = if ok { "" } else { " bad" },
        status = esc(&res.status),
        msg = res
            .status_message
            .as_ref()
            .map(|m| format!(" <span class=\"bad\">{}</span>", esc(m)))
            .unwrap_or_default(),
        start = esc(&res.started_at),
        end = esc(&res.finished_at),
        span = fmt::seconds(span),
        run_path = esc(&t.run_path),
        host = esc(&h.hostname),
        os = esc(&h.os),
        kernel = esc(&h.kernel),
        cpus = h.cpus,
        mem = gib(h.memory_bytes),
        tool = esc(&res.tool.name),
        version = esc(&res.tool.version),
        cmd = esc(&shell_words(&res.command_line)),
        jobs = esc(&jobs.join("; ")),
        hash = esc(&res.config_hash[..res.config_hash.len().min(16)]),
        config = esc(&config),
        file = esc(&r.path.display().to_string()),
    );
}

/// argv as a shell line: words with spaces or quotes quoted.
/// The run's faults and recovery, as the text output shows them.
fn faults_table(out: &mut String, r: &Run) {
    let Some(rows) = crate::faults::rows(r.result) else {
        return;
    };
    out.push_str("<table class=\"faults\">\n<tr>");
    for h in &rows[0] {
        let _ = write!(out, "<th>{}</th>", esc(h));
    }
    out.push_str("</tr>\n");
    for row in &rows[1..] {
        out.push_str("<tr>");
        for c in row {
            let _ = write!(out, "<td>{}</td>", esc(c));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
    for line in crate::faults::recovery_line(r.result)
        .into_iter()
        .chain(crate::faults::stall_lines(r.result))
    {
        let _ = writeln!(out, "<p class=\"note\">{}</p>", esc(&line));
    }
}

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
    let mut timelines = Vec::new();
    let mut workers = Vec::new();
    for r in runs {
        let mut figs: Vec<Figure> = figures::faults(r)?.into_iter().collect();
        figs.extend(figures::timeline(r)?);
        timelines.push(figs);
        workers.push(figures::workers(r)?);
    }

    let mut out = String::with_capacity(256 * 1024);
    let _ = writeln!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"dfsbench {}\">\n<title>{}</title>\n<style>{CSS}</style></head>\n<body><main>",
        env!("CARGO_PKG_VERSION"),
        esc(&title)
    );
    let _ = writeln!(out, "<header><h1>{}</h1>", esc(&title));
    let phases: usize = runs.iter().map(|r| r.phases().count()).sum();
    let _ = writeln!(
        out,
        "<p class=\"sub\">{} run{}, {} measured phase{} · report made {} by dfsbench {}</p>",
        runs.len(),
        if runs.len() == 1 { "" } else { "s" },
        phases,
        if phases == 1 { "" } else { "s" },
        esc(&page.generated_at),
        env!("CARGO_PKG_VERSION")
    );
    out.push_str("<nav><a href=\"#runs\">runs</a><a href=\"#summary\">summary</a><a href=\"#throughput\">throughput</a><a href=\"#latency\">latency</a>");
    if !rate_steps.is_empty() {
        out.push_str("<a href=\"#rate-steps\">rate steps</a>");
    }
    if !sweeps.is_empty() {
        out.push_str("<a href=\"#comparison\">comparison</a>");
    }
    if runs.iter().any(|r| r.phases().any(|p| p.errors.total > 0)) {
        out.push_str("<a href=\"#errors\">errors</a>");
    }
    out.push_str("<a href=\"#timeline\">over time</a><a href=\"#workers\">per worker</a>");
    out.push_str("</nav></header>\n");

    for r in runs.iter().filter(|r| r.result.status != "complete") {
        let _ = writeln!(
            out,
            "<div class=\"warn\">{}<b>{}</b> did not complete: {}{}. Its measured phases are shown.</div>",
            swatch(r),
            esc(&r.label),
            esc(&r.result.status),
            r.result
                .status_message
                .as_ref()
                .map(|m| format!(" ({})", esc(m)))
                .unwrap_or_default()
        );
    }
    let hashes: std::collections::BTreeSet<&str> = runs.iter().map(|r| r.result.config_hash.as_str()).collect();
    out.push_str("<h2 id=\"runs\">Runs</h2>\n");
    if runs.len() > 1 && hashes.len() == 1 {
        out.push_str("<p class=\"note\">All runs ran the same workload (equal config hashes).</p>\n");
    }
    out.push_str("<div class=\"runs\">\n");
    for r in runs {
        run_card(&mut out, r);
    }
    out.push_str("</div>\n<h2 id=\"summary\">Summary</h2>\n");
    out.push_str(&tables::summary(runs, &keys, ambiguous).into_string());
    out.push_str(&tables::marks_section(runs).into_string());

    let mut id = 0;
    out.push_str("<h2 id=\"throughput\">Throughput per phase</h2>\n");
    grid(&mut out, &throughput, &mut id);
    out.push_str(
        "<h2 id=\"latency\">Latency</h2>\n<p class=\"note\">From each phase's merged HDR histogram \
        (every successful operation, 3 significant digits). Left: latency at each percentile, p90, p99, p99.9 ... \
        up to the max; right: the share of operations at or below a latency.</p>\n",
    );
    grid(&mut out, &latency, &mut id);
    if !rate_steps.is_empty() {
        out.push_str(
            "<h2 id=\"rate-steps\">Rate steps</h2>\n<p class=\"note\">Open-loop phases run at each rate of \
            <code>--rate-steps</code>: what was asked against what the target achieved, and the response time \
            that bought (the SPECsfs curve).</p>\n",
        );
        out.push_str(&tables::rate_steps(runs).into_string());
        grid(&mut out, &rate_steps, &mut id);
    }
    if !sweeps.is_empty() {
        out.push_str(
            "<h2 id=\"comparison\">Comparison</h2>\n<p class=\"note\">Charts chosen from what the \
            results contain: a line per system (where the runs ran), a point per run or phase.</p>\n",
        );
        grid(&mut out, &sweeps, &mut id);
    }
    // Per-run details: open for up to two runs, folded for more so the page stays short.
    out.push_str("<h2 id=\"timeline\">Over time</h2>\n");
    if runs.len() > 2 {
        out.push_str("<p class=\"note\">One section per run: click a run to open it.</p>\n");
    }
    for (r, figs) in runs.iter().zip(&timelines) {
        let _ = writeln!(
            out,
            "<details{}><summary>{}{}</summary>",
            if runs.len() <= 2 { " open" } else { "" },
            swatch(r),
            esc(&r.label)
        );
        faults_table(&mut out, r);
        grid(&mut out, figs, &mut id);
        out.push_str("</details>\n");
    }
    let _ = writeln!(
        out,
        "<h2 id=\"workers\">Per worker</h2>\n<p class=\"note\">Each worker's rate over its own time; workers \
         below 80% of the median (stragglers) are red.{}</p>",
        if runs.len() > 2 { " Click a run to open it." } else { "" }
    );
    for (r, figs) in runs.iter().zip(&workers) {
        let _ = writeln!(
            out,
            "<details{}><summary>{}{}</summary>",
            if runs.len() <= 2 { " open" } else { "" },
            swatch(r),
            esc(&r.label)
        );
        grid(&mut out, figs, &mut id);
        out.push_str("</details>\n");
    }
    out.push_str(&tables::endpoints(runs).into_string());
    out.push_str(&tables::errors(runs).into_string());
    let _ = writeln!(
        out,
        "<footer>Made with <code>{}</code> from {} result file{} (schema {}). Every number on this page comes from \
         those files: rates over the measured time, latency from the merged histograms, time lines from the \
         per-second series.</footer>\n</main></body></html>",
        esc(&page.command),
        runs.len(),
        if runs.len() == 1 { "" } else { "s" },
        dfsbench_result::SCHEMA
    );
    Ok(out)
}
