//! Markdown tables: the runs, then a row per phase; with several runs, a table per metric with
//! a column per run.

use std::fmt::Write as _;

use dfsbench_result::PhaseResult;

use crate::flags;
use crate::fmt;
use crate::html::shell_words;
use crate::runs::{self, Run};

/// A table cell: `|` escaped, newlines flattened.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

fn table(out: &mut String, header: &[String], rows: &[Vec<String>]) {
    let _ = writeln!(
        out,
        "| {} |",
        header.iter().map(|h| cell(h)).collect::<Vec<_>>().join(" | ")
    );
    let align: Vec<&str> = (0..header.len()).map(|i| if i == 0 { "---" } else { "---:" }).collect();
    let _ = writeln!(out, "|{}|", align.join("|"));
    for r in rows {
        let _ = writeln!(out, "| {} |", r.iter().map(|c| cell(c)).collect::<Vec<_>>().join(" | "));
    }
    out.push('\n');
}

fn lat(p: &PhaseResult, v: u64) -> String {
    if p.latency.count == 0 {
        "-".into()
    } else {
        fmt::latency(v as f64)
    }
}

type Metric = (&'static str, fn(&PhaseResult) -> String);

/// The metrics of the tables, in column order of the single-run table.
pub const METRICS: [Metric; 8] = [
    ("ops", |p| p.ops.to_string()),
    ("ops/s", |p| fmt::rate(p.ops_per_sec)),
    ("MiB/s", |p| {
        if runs::moves_data(p) {
            fmt::mib_s(p.bytes_per_sec)
        } else {
            "-".into()
        }
    }),
    ("p50", |p| lat(p, p.latency.p50_ns)),
    ("p99", |p| lat(p, p.latency.p99_ns)),
    ("p99.9", |p| lat(p, p.latency.p99_9_ns)),
    ("max", |p| lat(p, p.latency.max_ns)),
    ("errors", |p| p.errors.total.to_string()),
];

pub fn report(runs: &[Run]) -> String {
    let mut out = String::from("# dfsbench report\n\n");
    let header: Vec<String> = [
        "run", "run id", "status", "started", "target", "host", "dfsbench", "command",
    ]
    .map(String::from)
    .to_vec();
    let rows: Vec<Vec<String>> = runs
        .iter()
        .map(|r| {
            let res = r.result;
            vec![
                r.label.clone(),
                res.run_id.clone(),
                res.status.clone(),
                res.started_at.clone(),
                format!("{} ({})", r.system, res.target.backend),
                format!("{}, {}, {} CPUs", res.host.hostname, res.host.os, res.host.cpus),
                res.tool.version.clone(),
                format!("`{}`", shell_words(&res.command_line)),
            ]
        })
        .collect();
    table(&mut out, &header, &rows);

    let (keys, ambiguous) = runs::phase_keys(runs);
    if runs.len() == 1 {
        let r = &runs[0];
        let mut header = vec!["phase".to_string(), "workers".to_string()];
        header.extend(METRICS.iter().map(|m| m.0.to_string()));
        let rows: Vec<Vec<String>> = keys
            .iter()
            .filter_map(|k| runs::find(r, k).map(|p| (k, p)))
            .map(|(k, p)| {
                let title = format!("{}{}", runs::phase_title(k, ambiguous), flags::marks(p));
                let mut row = vec![title, p.workers.to_string()];
                row.extend(METRICS.iter().map(|m| (m.1)(p)));
                row
            })
            .collect();
        table(&mut out, &header, &rows);
    } else {
        for (name, f) in METRICS.iter().skip(1) {
            let _ = writeln!(out, "## {name}\n");
            let mut header = vec!["phase".to_string()];
            header.extend(runs.iter().map(|r| r.label.clone()));
            let rows: Vec<Vec<String>> = keys
                .iter()
                .map(|k| {
                    let mut row = vec![runs::phase_title(k, ambiguous)];
                    row.extend(runs.iter().map(|r| runs::find(r, k).map_or("-".into(), f)));
                    row
                })
                .collect();
            table(&mut out, &header, &rows);
        }
    }
    flags_table(&mut out, runs);
    faults_tables(&mut out, runs);
    endpoints_tables(&mut out, runs);
    out.push_str("Rates over each phase's measured time; latency percentiles from the merged HDR histograms.\n");
    out
}

/// Runs over several gateways: a row per phase and gateway.
fn endpoints_tables(out: &mut String, runs: &[Run]) {
    for r in runs.iter().filter(|r| r.phases().any(|p| !p.endpoints.is_empty())) {
        let _ = writeln!(out, "## Per endpoint: {}\n", r.label);
        let header = [
            "phase", "endpoint", "workers", "ops", "ops/s", "MiB/s", "p50", "p99", "errors",
        ]
        .map(String::from);
        let rows: Vec<Vec<String>> = r
            .phases()
            .flat_map(|p| p.endpoints.iter().map(move |e| (p, e)))
            .map(|(p, e)| {
                vec![
                    p.label.clone(),
                    e.endpoint.clone(),
                    e.workers.to_string(),
                    e.ops.to_string(),
                    crate::rate_si(e.ops_per_sec),
                    format!("{:.1}", e.bytes_per_sec / (1024.0 * 1024.0)),
                    dfsbench_result::format_ns(e.latency.p50_ns),
                    dfsbench_result::format_ns(e.latency.p99_ns),
                    e.errors.to_string(),
                ]
            })
            .collect();
        table(out, &header, &rows);
    }
}

/// Each read phase's page cache policy and every marked phase with its reasons.
fn flags_table(out: &mut String, runs: &[Run]) {
    let rows: Vec<Vec<String>> = runs
        .iter()
        .flat_map(|r| r.phases().map(move |p| (r, p)))
        .filter(|(_, p)| p.cache.is_some() || !p.cache_suspect.is_empty() || !p.validity.is_empty())
        .map(|(r, p)| {
            vec![
                r.label.clone(),
                format!("{}{}", p.label, flags::marks(p)),
                flags::cache(p),
                flags::reasons(p),
            ]
        })
        .collect();
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(out, "## Page cache and marks\n");
    let header = ["run", "phase", "page cache", "marks"].map(String::from);
    table(out, &header, &rows);
}

/// Each run's faults, the same table the text output prints, with the recovery verdict and
/// the phases' stalls under it.
fn faults_tables(out: &mut String, runs: &[Run]) {
    for r in runs {
        let Some(rows) = crate::faults::rows(r.result) else {
            continue;
        };
        let _ = writeln!(out, "## Faults: {}\n", r.label);
        let header: Vec<String> = rows[0].to_vec();
        let body: Vec<Vec<String>> = rows[1..].iter().map(|row| row.to_vec()).collect();
        table(out, &header, &body);
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
        let row = format!("| {} | 2 | {} | {} |", p.label, p.ops, fmt::rate(p.ops_per_sec));
        assert!(md.contains(&row), "{md}");
        assert!(!md.contains("| layout"), "no prepare phase: {md}");
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
        assert!(md.contains("## p99.9") && md.contains("| phase | a | b |"), "{md}");
    }
}
