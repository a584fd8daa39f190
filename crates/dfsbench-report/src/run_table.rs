//! The text tables printed after a run: the phases, the paced phases, client and server CPU,
//! and the gateways of a target with several.

use dfsbench_result::units::{format_ns, rate_si};
use dfsbench_result::{Latency, OpKind, PhaseResult, RunResult};

use crate::table::{left, right, Table};

fn mib(bytes_per_sec: f64) -> String {
    format!("{:.1}", bytes_per_sec / (1024.0 * 1024.0))
}

/// A latency figure, `-` when there were none.
fn lat(l: &Latency, v: u64) -> String {
    if l.count == 0 {
        "-".to_string()
    } else {
        format_ns(v)
    }
}

/// The line of one kind of operation under its phase or group.
fn kind_row(k: &OpKind) -> Vec<String> {
    let l = &k.latency;
    vec![
        format!("  {}", k.op),
        String::new(),
        k.ops.to_string(),
        rate_si(k.ops_per_sec),
        mib(k.bytes_per_sec),
        lat(l, l.p50_ns),
        lat(l, l.p99_ns),
        lat(l, l.p99_9_ns),
        lat(l, l.max_ns),
        String::new(),
    ]
}

/// The columns of a table of phases or groups, after the first two.
fn figure_columns(first: &str, second: &str) -> Table {
    Table::new(vec![
        left(first),
        right(second),
        right("ops"),
        right("ops/s"),
        right("MiB/s"),
        right("p50"),
        right("p99"),
        right("p99.9"),
        right("max"),
        right("errors"),
    ])
}

fn row(p: &PhaseResult) -> Vec<String> {
    let moves_data = p.bytes > 0 || matches!(p.name.as_str(), "write" | "read") || p.workload == "io";
    let l = &p.latency;
    vec![
        format!("{}{}", crate::runs::label(p), crate::flags::marks(p)),
        p.workers.to_string(),
        p.ops.to_string(),
        rate_si(p.ops_per_sec),
        if moves_data { mib(p.bytes_per_sec) } else { "-".into() },
        lat(l, l.p50_ns),
        lat(l, l.p99_ns),
        lat(l, l.p99_9_ns),
        lat(l, l.max_ns),
        p.errors.total.to_string(),
    ]
}

/// Measured phases as an aligned text table; mixed phases get a line per operation kind.
/// Marked phases ([`crate::flags`]) carry their mark after the label; the reasons and every
/// read phase's page cache policy are listed by [`crate::flags::notes`].
/// With phases of several jobs, the label carries the job's name (`files: write 4 KiB`).
pub fn phases_table(result: &RunResult) -> String {
    let mut t = figure_columns("phase", "workers");
    let measured = || result.phases.iter().filter(|p| !p.prepare);
    let jobs = measured().any(|p| measured().any(|q| q.job_name != p.job_name));
    for p in measured() {
        let mut r = row(p);
        if jobs {
            r[0] = format!("{}: {}", p.job_name, r[0]);
        }
        t.push(r);
        for k in &p.ops_by_kind {
            t.push(kind_row(k));
        }
    }
    t.text()
}

/// Jobs that ran at the same time: each group's total over its span, and a line per kind of
/// operation (fio's group report); None when every job ran alone.
pub fn groups_table(result: &RunResult) -> Option<String> {
    let mut t = figure_columns("jobs at the same time", "span");
    for g in &result.groups {
        let l = &g.latency;
        t.push(vec![
            g.jobs.join(" + "),
            format!("{:.2} s", g.duration_s),
            g.ops.to_string(),
            rate_si(g.ops_per_sec),
            mib(g.bytes_per_sec),
            lat(l, l.p50_ns),
            lat(l, l.p99_ns),
            lat(l, l.p99_9_ns),
            lat(l, l.max_ns),
            g.errors.to_string(),
        ]);
        for k in &g.by_kind {
            t.push(kind_row(k));
        }
    }
    (!t.is_empty()).then(|| t.text())
}

/// Open-loop phases: requested against achieved rate and the response time from the intended
/// start (the curve of a --rate-steps sweep); None when no phase ran at a rate.
pub fn rate_table(result: &RunResult) -> Option<String> {
    let mut t = Table::new(vec![
        left("paced phase"),
        right("requested/s"),
        right("achieved/s"),
        right("mean"),
        right("p50"),
        right("p99"),
        right("service p50"),
    ]);
    for p in result.phases.iter().filter(|p| !p.prepare) {
        let Some(r) = &p.rate else { continue };
        let l = &p.latency;
        t.push(vec![
            crate::runs::label(p),
            rate_si(r.requested_ops_per_sec),
            rate_si(r.achieved_ops_per_sec),
            lat(l, l.mean_ns.round() as u64),
            lat(l, l.p50_ns),
            lat(l, l.p99_ns),
            lat(l, r.service_latency.p50_ns),
        ]);
    }
    (!t.is_empty()).then(|| t.text())
}

/// Client and server CPU per phase, when the run watched server processes (`--server-pid`).
pub fn cpu_table(result: &RunResult) -> Option<String> {
    let watched = result.phases.iter().find_map(|p| p.server_cpu.as_ref())?;
    let pids: Vec<String> = watched.pids.iter().map(u32::to_string).collect();
    let mut t = Table::new(vec![
        left("CPU, cores"),
        right("client"),
        right(format!("server (pid {})", pids.join(", "))),
    ]);
    for p in result.phases.iter().filter(|p| !p.prepare) {
        let server = match &p.server_cpu {
            Some(s) => match s.pids_note() {
                Some(note) => format!("{:.2} ({note})", s.cores),
                None => format!("{:.2}", s.cores),
            },
            None => "-".into(),
        };
        t.push(vec![crate::runs::label(p), format!("{:.2}", p.cpu.cores), server]);
    }
    Some(t.text())
}

/// Phases of a target with several gateways: a line per gateway (ops, rates, latency, errors
/// and its share of the phase's operations); None for a target with one way in.
pub fn endpoints_table(result: &RunResult) -> Option<String> {
    let mut t = Table::new(vec![
        left("phase / endpoint"),
        right("workers"),
        right("ops"),
        right("ops/s"),
        right("MiB/s"),
        right("p50"),
        right("p99"),
        right("errors"),
        right("share"),
    ]);
    for p in result.phases.iter().filter(|p| !p.prepare && !p.endpoints.is_empty()) {
        let mib = |rate: f64| if p.bytes > 0 { mib(rate) } else { "-".into() };
        t.push(vec![
            p.label.clone(),
            p.workers.to_string(),
            p.ops.to_string(),
            rate_si(p.ops_per_sec),
            mib(p.bytes_per_sec),
            lat(&p.latency, p.latency.p50_ns),
            lat(&p.latency, p.latency.p99_ns),
            p.errors.total.to_string(),
            String::new(),
        ]);
        for e in &p.endpoints {
            t.push(vec![
                format!("  {}", e.endpoint),
                e.workers.to_string(),
                e.ops.to_string(),
                rate_si(e.ops_per_sec),
                mib(e.bytes_per_sec),
                lat(&e.latency, e.latency.p50_ns),
                lat(&e.latency, e.latency.p99_ns),
                e.errors.to_string(),
                format!("{:.0}%", 100.0 * e.ops as f64 / p.ops.max(1) as f64),
            ]);
        }
    }
    (!t.is_empty()).then(|| t.text())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run over two gateways: every view has a line per gateway, with its share.
    #[test]
    fn gateways_have_their_own_lines_in_every_view() {
        let mut result = crate::synthetic::long_run(4, 2);
        let p = &mut result.phases[0];
        p.ops -= p.ops % 2;
        let half = |n: u64| n / 2;
        p.endpoints = ["http://10.0.0.1:9000", "http://10.0.0.2:9000"]
            .iter()
            .map(|e| dfsbench_result::EndpointResult {
                endpoint: e.to_string(),
                workers: 1,
                ops: half(p.ops),
                bytes: half(p.bytes),
                errors: 0,
                ops_per_sec: p.ops_per_sec / 2.0,
                bytes_per_sec: p.bytes_per_sec / 2.0,
                latency: p.latency.clone(),
            })
            .collect();
        let text = endpoints_table(&result).expect("a per-endpoint table");
        assert!(text.starts_with("phase / endpoint"), "{text}");
        assert_eq!(text.matches("  http://10.0.0.").count(), 2, "{text}");
        assert_eq!(text.matches("50%").count(), 2, "{text}");
        let loaded = [crate::input::Loaded {
            path: "gw.json".into(),
            result,
        }];
        let runs = crate::runs::runs(&loaded);
        let md = crate::markdown::report(&runs);
        assert!(
            md.contains("## Per endpoint: gw") && md.contains("| http://10.0.0.2:9000 |"),
            "{md}"
        );
        let html = crate::html_tables::endpoints(&runs).into_string();
        assert_eq!(html.matches("<tr>").count(), 3, "{html}");
        assert!(html.contains("id=\"endpoints\"") && html.contains(">50%<"), "{html}");
        // One way in: no such table.
        assert!(crate::html_tables::endpoints(&runs[..0]).into_string().is_empty());
    }
}
