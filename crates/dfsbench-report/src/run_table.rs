//! The summary table printed after a run.

use dfsbench_result::units::{format_ns, rate_si};
use dfsbench_result::{Latency, PhaseResult, RunResult};

fn mib(bytes_per_sec: f64) -> String {
    format!("{:.1}", bytes_per_sec / (1024.0 * 1024.0))
}

const HEADER: [&str; 10] = [
    "phase", "workers", "ops", "ops/s", "MiB/s", "p50", "p99", "p99.9", "max", "errors",
];

fn row(p: &PhaseResult) -> [String; 10] {
    let moves_data = p.bytes > 0 || matches!(p.name.as_str(), "write" | "read") || p.workload == "io";
    let l = &p.latency;
    let lat = |v: u64| if l.count == 0 { "-".to_string() } else { format_ns(v) };
    [
        format!("{}{}", crate::runs::label(p), crate::flags::marks(p)),
        p.workers.to_string(),
        p.ops.to_string(),
        rate_si(p.ops_per_sec),
        if moves_data { mib(p.bytes_per_sec) } else { "-".into() },
        lat(l.p50_ns),
        lat(l.p99_ns),
        lat(l.p99_9_ns),
        lat(l.max_ns),
        p.errors.total.to_string(),
    ]
}

/// Measured phases as an aligned text table; mixed phases get a line per operation kind.
/// Marked phases ([`crate::flags`]) carry their mark after the label; the reasons and every
/// read phase's page cache policy are listed by [`crate::flags::notes`].
/// With phases of several jobs, the label carries the job's name (`files: write 4 KiB`).
pub fn phases_table(result: &RunResult) -> String {
    let mut rows: Vec<[String; 10]> = vec![HEADER.map(String::from)];
    let measured = || result.phases.iter().filter(|p| !p.prepare);
    let jobs = measured().any(|p| measured().any(|q| q.job_name != p.job_name));
    for p in measured() {
        let mut r = row(p);
        if jobs {
            r[0] = format!("{}: {}", p.job_name, r[0]);
        }
        rows.push(r);
        for k in &p.ops_by_kind {
            let l = &k.latency;
            rows.push([
                format!("  {}", k.op),
                String::new(),
                k.ops.to_string(),
                rate_si(k.ops_per_sec),
                mib(k.bytes_per_sec),
                format_ns(l.p50_ns),
                format_ns(l.p99_ns),
                format_ns(l.p99_9_ns),
                format_ns(l.max_ns),
                String::new(),
            ]);
        }
    }
    align(&rows)
}

const RATE_HEADER: [&str; 7] = [
    "paced phase",
    "requested/s",
    "achieved/s",
    "mean",
    "p50",
    "p99",
    "service p50",
];

/// Open-loop phases: requested against achieved rate and the response time from the intended
/// start (the curve of a --rate-steps sweep); None when no phase ran at a rate.
pub fn rate_table(result: &RunResult) -> Option<String> {
    let mut rows: Vec<[String; 7]> = vec![RATE_HEADER.map(String::from)];
    for p in result.phases.iter().filter(|p| !p.prepare) {
        let Some(r) = &p.rate else { continue };
        let l = &p.latency;
        let lat = |v: u64| if l.count == 0 { "-".to_string() } else { format_ns(v) };
        rows.push([
            crate::runs::label(p),
            rate_si(r.requested_ops_per_sec),
            rate_si(r.achieved_ops_per_sec),
            lat(l.mean_ns.round() as u64),
            lat(l.p50_ns),
            lat(l.p99_ns),
            lat(r.service_latency.p50_ns),
        ]);
    }
    (rows.len() > 1).then(|| align(&rows))
}

/// Client and server CPU per phase, when the run watched server processes (`--server-pid`).
pub fn cpu_table(result: &RunResult) -> Option<String> {
    let watched = result.phases.iter().find_map(|p| p.server_cpu.as_ref())?;
    let pids: Vec<String> = watched.pids.iter().map(u32::to_string).collect();
    let mut rows: Vec<[String; 3]> = vec![[
        "CPU, cores".into(),
        "client".into(),
        format!("server (pid {})", pids.join(", ")),
    ]];
    for p in result.phases.iter().filter(|p| !p.prepare) {
        let server = match &p.server_cpu {
            Some(s) => match s.pids_note() {
                Some(note) => format!("{:.2} ({note})", s.cores),
                None => format!("{:.2}", s.cores),
            },
            None => "-".into(),
        };
        rows.push([crate::runs::label(p), format!("{:.2}", p.cpu.cores), server]);
    }
    Some(align(&rows))
}

/// Phases of a target with several gateways: a line per gateway (ops, rates, latency, errors
/// and its share of the phase's operations); None for a target with one way in.
pub fn endpoints_table(result: &RunResult) -> Option<String> {
    let mut rows: Vec<[String; 9]> = vec![[
        "phase / endpoint".into(),
        "workers".into(),
        "ops".into(),
        "ops/s".into(),
        "MiB/s".into(),
        "p50".into(),
        "p99".into(),
        "errors".into(),
        "share".into(),
    ]];
    let lat = |l: &Latency, v: u64| if l.count == 0 { "-".to_string() } else { format_ns(v) };
    for p in result.phases.iter().filter(|p| !p.prepare && !p.endpoints.is_empty()) {
        let mib = |rate: f64| if p.bytes > 0 { mib(rate) } else { "-".into() };
        rows.push([
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
            rows.push([
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
    (rows.len() > 1).then(|| align(&rows))
}

pub(crate) fn align<const N: usize>(rows: &[[String; N]]) -> String {
    let rows: Vec<Vec<String>> = rows.iter().map(|r| r.to_vec()).collect();
    text_table(&rows, &[0])
}

/// Rows as aligned text (comfy-table without borders): the columns in `left` aligned left, the
/// others right, two spaces between columns, no trailing blanks.
pub(crate) fn text_table(rows: &[Vec<String>], left: &[usize]) -> String {
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::NOTHING);
    for r in rows {
        t.add_row(r.clone());
    }
    for (i, col) in t.column_iter_mut().enumerate() {
        col.set_padding((if i == 0 { 0 } else { 2 }, 0));
        if !left.contains(&i) {
            col.set_cell_alignment(comfy_table::CellAlignment::Right);
        }
    }
    let mut out = String::new();
    for line in t.lines() {
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
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

    #[test]
    fn columns_align_without_borders() {
        let rows = [
            ["phase".to_string(), "ops".into(), "p99".into()],
            ["write 4 KiB".into(), "12".into(), "1.5 µs".into()],
            ["  read".into(), "1200".into(), "-".into()],
        ];
        assert_eq!(
            align(&rows),
            "phase         ops     p99\nwrite 4 KiB    12  1.5 µs\n  read       1200       -\n"
        );
    }
}
