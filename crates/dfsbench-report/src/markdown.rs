//! Markdown tables: the runs, then a row per phase; with several runs, a table per metric with
//! a column per run.

use std::fmt::Write as _;

use dfsbench_result::PhaseResult;

use crate::flags;
use crate::fmt;
use crate::html::shell_words;
use crate::lines::{self, Line};
use crate::runs::{self, Run};
use crate::stonewall;
use crate::table::{left, right, Column, Table};

type Metric = (&'static str, fn(&Line) -> String);

/// The metrics of a phase's (or operation kind's) line, in column order.
const METRICS: [Metric; 7] = [
    ("ops", |l| l.ops.to_string()),
    ("ops/s", |l| fmt::rate(l.ops_per_sec)),
    ("MiB/s", |l| l.bytes_per_sec.map_or("-".into(), fmt::mib_s)),
    ("p50", |l| lines::lat(l.latency, l.latency.p50_ns, "-")),
    ("p99", |l| lines::lat(l.latency, l.latency.p99_ns, "-")),
    ("p99.9", |l| lines::lat(l.latency, l.latency.p99_9_ns, "-")),
    ("max", |l| lines::lat(l.latency, l.latency.max_ns, "-")),
];

/// The row title of a line: the phase, or `phase: read` for an operation kind of a mixed phase.
fn line_title(title: &str, l: &Line) -> String {
    match l.op {
        None => title.to_string(),
        Some(op) => format!("{title}: {op}"),
    }
}

fn server_cpu(p: &PhaseResult) -> String {
    match &p.server_cpu {
        Some(s) => match s.pids_note() {
            Some(note) => format!("{:.2} ({note})", s.cores),
            None => format!("{:.2}", s.cores),
        },
        None => "-".into(),
    }
}

pub fn report(runs: &[Run]) -> String {
    let mut out = String::from("# dfsbench report\n\n");
    let mut t = Table::new(
        [
            "run", "run id", "status", "started", "target", "host", "dfsbench", "command",
        ]
        .map(left)
        .into(),
    );
    for r in runs {
        let res = r.result;
        t.push(vec![
            r.label.clone(),
            res.run_id.clone(),
            res.status.clone(),
            res.started_at.clone(),
            format!("{} ({})", r.system, res.target.backend),
            format!("{}, {}, {} CPUs", res.host.hostname, res.host.os, res.host.cpus),
            res.tool.version.clone(),
            format!("`{}`", shell_words(&res.command_line)),
        ]);
    }
    out.push_str(&t.markdown());

    let (keys, ambiguous) = runs::phase_keys(runs);
    let jobs = runs::several_jobs(runs);
    let title = |k: &(String, String)| runs::phase_title(k, ambiguous && !jobs);
    let servers = runs.iter().any(|r| r.phases().any(|p| p.server_cpu.is_some()));
    if runs.len() == 1 {
        let r = &runs[0];
        let mut columns = vec![left("phase")];
        if jobs {
            columns.push(left("job"));
        }
        columns.push(right("workers"));
        columns.extend(METRICS.iter().map(|m| right(m.0)));
        columns.extend(["stonewall ops/s", "client CPU"].map(right));
        if servers {
            columns.push(right("server CPU"));
        }
        columns.push(right("errors"));
        let mut t = Table::new(columns);
        for (k, p) in keys.iter().filter_map(|k| runs::find(r, k).map(|p| (k, p))) {
            for l in lines::lines(p) {
                let own = l.op.is_none();
                let blank = |s: String| if own { s } else { String::new() };
                let mut row = vec![if own {
                    format!("{}{}", title(k), flags::marks(p))
                } else {
                    line_title(&title(k), &l)
                }];
                if jobs {
                    row.push(blank(p.job_name.clone()));
                }
                row.push(blank(p.workers.to_string()));
                row.extend(METRICS.iter().map(|m| (m.1)(&l)));
                row.push(blank(stonewall::rate(p, "-")));
                row.push(blank(format!("{:.2}", p.cpu.cores)));
                if servers {
                    row.push(blank(server_cpu(p)));
                }
                row.push(blank(p.errors.total.to_string()));
                t.push(row);
            }
        }
        out.push_str(&t.markdown());
    } else {
        type RunMetric = (&'static str, fn(&PhaseResult) -> String);
        let phase_metrics: [RunMetric; 4] = [
            ("stonewall ops/s", |p| stonewall::rate(p, "-")),
            ("client CPU", |p| format!("{:.2}", p.cpu.cores)),
            ("server CPU", server_cpu),
            ("errors", |p| p.errors.total.to_string()),
        ];
        // A column per run: the phase (and job), then the runs' values.
        let columns = || -> Vec<Column> {
            let mut c = vec![left("phase")];
            if jobs {
                c.push(left("job"));
            }
            c.extend(runs.iter().map(|r| right(r.label.clone())));
            c
        };
        for (name, f) in METRICS.iter().skip(1) {
            let _ = writeln!(out, "## {name}\n");
            let mut t = Table::new(columns());
            for k in &keys {
                // The phase's own line, then its operation kinds as any run has them.
                let mut ops: Vec<Option<String>> = vec![None];
                for r in runs {
                    for kind in runs::find(r, k).iter().flat_map(|p| &p.ops_by_kind) {
                        if !ops.contains(&Some(kind.op.clone())) {
                            ops.push(Some(kind.op.clone()));
                        }
                    }
                }
                for op in ops {
                    let mut row = vec![match &op {
                        None => title(k),
                        Some(op) => format!("{}: {op}", title(k)),
                    }];
                    if jobs {
                        row.push(k.0.clone());
                    }
                    row.extend(runs.iter().map(|r| {
                        runs::find(r, k)
                            .and_then(|p| {
                                lines::lines(p)
                                    .into_iter()
                                    .find(|l| l.op == op.as_deref())
                                    .map(|l| f(&l))
                            })
                            .unwrap_or_else(|| "-".into())
                    }));
                    t.push(row);
                }
            }
            out.push_str(&t.markdown());
        }
        for (name, f) in phase_metrics {
            if name == "server CPU" && !servers {
                continue;
            }
            let _ = writeln!(out, "## {name}\n");
            let mut t = Table::new(columns());
            for k in &keys {
                let mut row = vec![title(k)];
                if jobs {
                    row.push(k.0.clone());
                }
                row.extend(runs.iter().map(|r| runs::find(r, k).map_or("-".into(), f)));
                t.push(row);
            }
            out.push_str(&t.markdown());
        }
    }
    stonewall_notes(&mut out, runs, &keys, &title);
    rate_steps(&mut out, runs);
    flags_table(&mut out, runs);
    errors(&mut out, runs);
    faults_tables(&mut out, runs);
    endpoints_tables(&mut out, runs);
    out.push_str(
        "Rates over each phase's measured time; `phase: read` rows are a mixed phase's operation kinds; \
         latency percentiles from the merged HDR histograms; stonewall: the rate of all workers at once, up to \
         when the first one finished; CPU in cores busy.\n",
    );
    out
}

/// Phases whose stonewall and phase rate differ by more than 10%, with why.
fn stonewall_notes(
    out: &mut String,
    runs: &[Run],
    keys: &[(String, String)],
    title: &dyn Fn(&(String, String)) -> String,
) {
    let mut notes = Vec::new();
    for k in keys {
        for r in runs {
            if let Some(p) = runs::find(r, k) {
                let who = if runs.len() > 1 {
                    format!("{} {}", r.label, title(k))
                } else {
                    title(k)
                };
                notes.extend(stonewall::explain(p, &who));
            }
        }
    }
    if notes.is_empty() {
        return;
    }
    out.push_str("## Stonewall and phase rate differ by more than 10%\n\n");
    for n in notes {
        let _ = writeln!(out, "- {}", n.replace('|', "\\|"));
    }
    out.push('\n');
}

/// Requested against achieved rate and response time of the paced phases (`--rate`,
/// `--rate-steps`).
fn rate_steps(out: &mut String, runs: &[Run]) {
    let mut t = Table::new(vec![
        left("run"),
        left("paced phase"),
        right("requested/s"),
        right("achieved/s"),
        right("mean"),
        right("p50"),
        right("p99"),
        right("service p50"),
    ]);
    for (r, p) in runs.iter().flat_map(|r| r.phases().map(move |p| (r, p))) {
        let Some(rate) = p.rate.as_ref() else { continue };
        let l = &p.latency;
        t.push(vec![
            r.label.clone(),
            runs::label(p),
            fmt::rate(rate.requested_ops_per_sec),
            fmt::rate(rate.achieved_ops_per_sec),
            lines::lat(l, l.mean_ns.round() as u64, "-"),
            lines::lat(l, l.p50_ns, "-"),
            lines::lat(l, l.p99_ns, "-"),
            lines::lat(&rate.service_latency, rate.service_latency.p50_ns, "-"),
        ]);
    }
    if t.is_empty() {
        return;
    }
    out.push_str("## Rate steps\n\n");
    out.push_str(&t.markdown());
}

/// Errors by kind with each kind's first samples in full.
fn errors(out: &mut String, runs: &[Run]) {
    let mut t = Table::new(vec![
        left("run"),
        left("phase"),
        left("kind"),
        right("count"),
        left(format!("first {} in full", crate::errors::SHOWN)),
    ]);
    for (r, p) in runs.iter().flat_map(|r| r.phases().map(move |p| (r, p))) {
        for (kind, n) in &p.errors.by_kind {
            let samples: Vec<String> = crate::errors::first(p, kind)
                .into_iter()
                .map(|s| format!("`{}`", crate::errors::sample(s).replace('`', "'")))
                .collect();
            t.push(vec![
                r.label.clone(),
                runs::label(p),
                kind.clone(),
                n.to_string(),
                samples.join("<br>"),
            ]);
        }
    }
    if t.is_empty() {
        return;
    }
    out.push_str("## Errors\n\n");
    out.push_str(&t.markdown());
}

/// Runs over several gateways: a row per phase and gateway.
fn endpoints_tables(out: &mut String, runs: &[Run]) {
    for r in runs.iter().filter(|r| r.phases().any(|p| !p.endpoints.is_empty())) {
        let _ = writeln!(out, "## Per endpoint: {}\n", r.label);
        // Every column but the phase right-aligned, the endpoint too: the layout this table
        // has always had.
        let mut t = Table::new(
            std::iter::once(left("phase"))
                .chain(["endpoint", "workers", "ops", "ops/s", "MiB/s", "p50", "p99", "errors"].map(right))
                .collect(),
        );
        for (p, e) in r.phases().flat_map(|p| p.endpoints.iter().map(move |e| (p, e))) {
            t.push(vec![
                p.label.clone(),
                e.endpoint.clone(),
                e.workers.to_string(),
                e.ops.to_string(),
                fmt::rate(e.ops_per_sec),
                if runs::moves_data(p) {
                    fmt::mib_s(e.bytes_per_sec)
                } else {
                    "-".into()
                },
                lines::lat(&e.latency, e.latency.p50_ns, "-"),
                lines::lat(&e.latency, e.latency.p99_ns, "-"),
                e.errors.to_string(),
            ]);
        }
        out.push_str(&t.markdown());
    }
}

/// Each read phase's page cache policy and every marked phase with its reasons.
fn flags_table(out: &mut String, runs: &[Run]) {
    let mut t = Table::new(["run", "phase", "page cache", "marks"].map(left).into());
    let marked = runs
        .iter()
        .flat_map(|r| r.phases().map(move |p| (r, p)))
        .filter(|(_, p)| p.cache.is_some() || !p.cache_suspect.is_empty() || !p.validity.is_empty());
    for (r, p) in marked {
        t.push(vec![
            r.label.clone(),
            format!("{}{}", runs::label(p), flags::marks(p)),
            flags::cache(p),
            flags::reasons(p),
        ]);
    }
    if t.is_empty() {
        return;
    }
    let _ = writeln!(out, "## Page cache and marks\n");
    out.push_str(&t.markdown());
}

/// Each run's faults, the same table the text output prints, with the recovery verdict and
/// the phases' stalls under it.
fn faults_tables(out: &mut String, runs: &[Run]) {
    for r in runs {
        let Some(t) = crate::faults::table(r.result) else {
            continue;
        };
        let _ = writeln!(out, "## Faults: {}\n", r.label);
        out.push_str(&t.markdown());
        for line in crate::faults::recovery_line(r.result)
            .into_iter()
            .chain(crate::faults::stall_lines(r.result))
        {
            let _ = writeln!(out, "{line}\n");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::Loaded;

    #[test]
    fn a_row_per_phase_and_a_column_per_run() {
        let loaded = [Loaded {
            path: "one.json".into(),
            result: crate::synthetic::long_run(5, 2),
        }];
        let md = report(&runs::runs(&loaded));
        let p = &loaded[0].result.phases[0];
        // Two jobs: a job column.
        let row = format!("| {} | files | 2 | {} | {} |", p.label, p.ops, fmt::rate(p.ops_per_sec));
        assert!(md.contains(&row), "{md}");
        assert!(!md.contains("| layout"), "no prepare phase: {md}");
        // The mixed phase's reads and writes apart, each with its own figures.
        let mixed = loaded[0]
            .result
            .phases
            .iter()
            .find(|p| !p.ops_by_kind.is_empty())
            .unwrap();
        for k in &mixed.ops_by_kind {
            let row = format!(
                "| {}: {} |  |  | {} | {} | {} | {} |",
                mixed.label,
                k.op,
                k.ops,
                fmt::rate(k.ops_per_sec),
                fmt::mib_s(k.bytes_per_sec),
                fmt::latency(k.latency.p50_ns as f64)
            );
            assert!(md.contains(&row), "no {row}: {md}");
        }
        let two = [
            Loaded {
                path: "a.json".into(),
                result: crate::synthetic::long_run(5, 2),
            },
            Loaded {
                path: "b.json".into(),
                result: crate::synthetic::long_run(5, 4),
            },
        ];
        let md = report(&runs::runs(&two));
        assert!(
            md.contains("## p99.9") && md.contains("| phase | job | a | b |"),
            "{md}"
        );
        assert!(
            md.contains("## stonewall ops/s") && md.contains("## client CPU"),
            "{md}"
        );
        assert!(
            md.contains("| randrw 4 KiB qd16: write | io |"),
            "kinds in the per-metric tables: {md}"
        );
    }
}
