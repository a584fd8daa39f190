//! One CSV row per measured phase (and per operation kind of a mixed phase), for spreadsheets
//! and pandas, and the long format of the reports; tables of [`crate::table`] written as CSV.

use dfsbench_result::RunResult;

use crate::table::{left, Column, Table};

const COLUMNS: [&str; 27] = [
    "run_id",
    "job",
    "phase",
    "label",
    "op",
    "workers",
    "ops",
    "bytes",
    "duration_s",
    "ops_per_sec",
    "bytes_per_sec",
    "stonewall_ops_per_sec",
    "stonewall_bytes_per_sec",
    "lat_min_ns",
    "lat_mean_ns",
    "lat_p50_ns",
    "lat_p90_ns",
    "lat_p99_ns",
    "lat_p99_9_ns",
    "lat_max_ns",
    "errors",
    "cache",
    "cache_files",
    "cache_rereads",
    "cache_reread_invalidations",
    "cache_suspect",
    "validity",
];

/// CSV columns: CSV has no alignment, every column is written as it is.
fn columns<const N: usize>(heads: [&str; N]) -> Vec<Column> {
    heads.map(left).into()
}

/// A row of borrowed cells as the table's own.
fn cells<const N: usize>(cells: [&str; N]) -> Vec<String> {
    cells.map(String::from).into()
}

/// A row per measured phase (`op` = `all`), and after a mixed phase (randrw, readwrite, mix,
/// iterate) a row per operation kind (`op` = `read`, `write`, ...) with that kind's figures;
/// `df[df.op == "all"]` gives the phases alone.
pub fn phases_csv(result: &RunResult) -> String {
    let mut t = Table::new(columns(COLUMNS));
    for p in result.phases.iter().filter(|p| !p.prepare) {
        let l = &p.latency;
        t.push(vec![
            result.run_id.clone(),
            p.job_name.clone(),
            p.name.clone(),
            p.label.clone(),
            "all".into(),
            p.workers.to_string(),
            p.ops.to_string(),
            p.bytes.to_string(),
            format!("{:.6}", p.duration_s),
            format!("{:.3}", p.ops_per_sec),
            format!("{:.3}", p.bytes_per_sec),
            format!("{:.3}", p.stonewall.ops_per_sec),
            format!("{:.3}", p.stonewall.bytes_per_sec),
            l.min_ns.to_string(),
            format!("{:.1}", l.mean_ns),
            l.p50_ns.to_string(),
            l.p90_ns.to_string(),
            l.p99_ns.to_string(),
            l.p99_9_ns.to_string(),
            l.max_ns.to_string(),
            p.errors.total.to_string(),
            p.cache.as_ref().map_or(String::new(), |c| c.policy.clone()),
            p.cache.as_ref().map_or(String::new(), |c| c.files.to_string()),
            p.cache.as_ref().map_or(String::new(), |c| c.rereads.to_string()),
            p.cache
                .as_ref()
                .map_or(String::new(), |c| c.reread_invalidations.to_string()),
            p.cache_suspect.join("; "),
            p.validity.join("; "),
        ]);
        // A kind's own figures; what is the phase's alone (stonewall, errors, cache) stays empty.
        for k in &p.ops_by_kind {
            let l = &k.latency;
            t.push(vec![
                result.run_id.clone(),
                p.job_name.clone(),
                p.name.clone(),
                p.label.clone(),
                k.op.clone(),
                p.workers.to_string(),
                k.ops.to_string(),
                k.bytes.to_string(),
                format!("{:.6}", p.duration_s),
                format!("{:.3}", k.ops_per_sec),
                format!("{:.3}", k.bytes_per_sec),
                String::new(),
                String::new(),
                l.min_ns.to_string(),
                format!("{:.1}", l.mean_ns),
                l.p50_ns.to_string(),
                l.p90_ns.to_string(),
                l.p99_ns.to_string(),
                l.p99_9_ns.to_string(),
                l.max_ns.to_string(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
            ]);
        }
    }
    t.csv()
}

/// Long-format CSV for pandas: one row per run x phase (x operation kind) x metric, with the
/// run's and phase's identity in every row (`df.pivot_table(index="label", columns="run",
/// values="value")` gives the wide shape back).
pub fn long_csv(runs: &[crate::runs::Run]) -> String {
    let mut t = Table::new(columns([
        "run",
        "run_id",
        "system",
        "backend",
        "host",
        "started_at",
        "job",
        "phase",
        "label",
        "op",
        "workload",
        "workers",
        "threads",
        "file_size",
        "bs",
        "queue_depth",
        "metric",
        "value",
        "unit",
    ]));
    for r in runs {
        let res = r.result;
        for p in r.phases() {
            let param = |k: &str| {
                p.params
                    .get(k)
                    .and_then(|v| v.as_u64())
                    .map(|v| v.to_string())
                    .unwrap_or_default()
            };
            let label = crate::runs::label(p);
            let mut row = |op: &str, metric: &str, value: String, unit: &str| {
                t.push(cells([
                    r.label.as_str(),
                    &res.run_id,
                    &r.system,
                    &res.target.backend,
                    &res.host.hostname,
                    &res.started_at,
                    &p.job_name,
                    &p.name,
                    &label,
                    op,
                    &p.workload,
                    &p.workers.to_string(),
                    &p.threads.to_string(),
                    &param("file_size"),
                    &param("bs"),
                    &crate::runs::queue_depth(p).map(|d| d.to_string()).unwrap_or_default(),
                    metric,
                    &value,
                    unit,
                ]));
            };
            let l = &p.latency;
            let op = p.name.as_str();
            row(op, "ops", p.ops.to_string(), "ops");
            row(op, "bytes", p.bytes.to_string(), "B");
            row(op, "duration_s", p.duration_s.to_string(), "s");
            row(op, "ops_per_sec", p.ops_per_sec.to_string(), "ops/s");
            row(op, "bytes_per_sec", p.bytes_per_sec.to_string(), "B/s");
            row(
                op,
                "stonewall_ops_per_sec",
                p.stonewall.ops_per_sec.to_string(),
                "ops/s",
            );
            row(
                op,
                "stonewall_bytes_per_sec",
                p.stonewall.bytes_per_sec.to_string(),
                "B/s",
            );
            if l.count > 0 {
                latency_rows(&mut row, op, l);
            }
            row(op, "errors", p.errors.total.to_string(), "errors");
            row(op, "cpu_cores", p.cpu.cores.to_string(), "cores");
            if let Some(s) = &p.server_cpu {
                row(op, "server_cpu_cores", s.cores.to_string(), "cores");
            }
            if let Some(cv) = crate::noise::ops_cv(p) {
                row(op, "noise_cv", cv.to_string(), "ratio");
            }
            // The page cache policy and the marks, as numbers a pivot can use.
            if let Some(c) = &p.cache {
                row(op, &format!("cache_{}", c.policy), "1".into(), "flag");
                row(op, "cache_invalidated_files", c.files.to_string(), "files");
                if c.rereads > 0 {
                    row(op, "cache_rereads", c.rereads.to_string(), "reads");
                    row(
                        op,
                        "cache_reread_invalidations",
                        c.reread_invalidations.to_string(),
                        "files",
                    );
                    row(
                        op,
                        "cache_reread_invalidation_s",
                        c.reread_invalidation_s.to_string(),
                        "s",
                    );
                }
            }
            if !p.cache_suspect.is_empty() {
                row(op, "cache_suspect", p.cache_suspect.len().to_string(), "reasons");
            }
            if !p.validity.is_empty() {
                row(op, "weak", p.validity.len().to_string(), "reasons");
            }
            if let Some(st) = &p.stalls {
                row(op, "stall_longest_s", st.longest_s.to_string(), "s");
                row(op, "stalls", st.count.to_string(), "stalls");
                row(op, "stall_total_s", st.total_s.to_string(), "s");
            }
            // The faults that fell in this phase: the columns of the text output's table.
            for (i, f) in res
                .faults
                .iter()
                .enumerate()
                .filter(|(_, f)| f.phase.as_deref() == Some(p.label.as_str()))
            {
                let op = format!("fault {}", i + 1);
                let mut opt = |metric: &str, v: Option<f64>, unit: &str| {
                    if let Some(v) = v {
                        row(&op, metric, v.to_string(), unit);
                    }
                };
                opt("fault_started_s", f.run.started_s, "s");
                opt("stall_s", Some(f.stall_s), "s");
                opt("ops_per_sec_before", f.before.map(|w| w.ops_per_sec), "ops/s");
                opt("ops_per_sec_during", f.during.map(|w| w.ops_per_sec), "ops/s");
                opt("ops_per_sec_after", f.after.map(|w| w.ops_per_sec), "ops/s");
                opt("errors_during", f.during.map(|w| w.errors as f64), "errors");
                opt("ops_resumed_after_s", f.first_success_after_s, "s");
                opt("throughput_back_after_s", f.throughput_recovered_after_s, "s");
            }
            for k in &p.ops_by_kind {
                let op = k.op.as_str();
                row(op, "ops", k.ops.to_string(), "ops");
                row(op, "bytes", k.bytes.to_string(), "B");
                row(op, "ops_per_sec", k.ops_per_sec.to_string(), "ops/s");
                row(op, "bytes_per_sec", k.bytes_per_sec.to_string(), "B/s");
                if k.latency.count > 0 {
                    latency_rows(&mut row, op, &k.latency);
                }
            }
        }
        if let Some(time) = res.recovery.as_ref().and_then(|r| r.recovery_time_s) {
            t.push(cells([
                r.label.as_str(),
                &res.run_id,
                &r.system,
                &res.target.backend,
                &res.host.hostname,
                &res.started_at,
                "",
                "",
                "recovery",
                "recovery",
                "",
                "",
                "",
                "",
                "",
                "",
                "recovery_time_s",
                &time.to_string(),
                "s",
            ]));
        }
    }
    t.csv()
}

fn latency_rows(row: &mut impl FnMut(&str, &str, String, &str), op: &str, l: &dfsbench_result::Latency) {
    for (m, v) in [
        ("lat_min_ns", l.min_ns as f64),
        ("lat_mean_ns", l.mean_ns),
        ("lat_stdev_ns", l.stdev_ns),
        ("lat_p50_ns", l.p50_ns as f64),
        ("lat_p90_ns", l.p90_ns as f64),
        ("lat_p99_ns", l.p99_ns as f64),
        ("lat_p99_9_ns", l.p99_9_ns as f64),
        ("lat_p99_99_ns", l.p99_99_ns as f64),
        ("lat_max_ns", l.max_ns as f64),
    ] {
        row(op, m, v.to_string(), "ns");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::Loaded;

    #[test]
    fn fields_with_commas_and_quotes_read_back() {
        let mut r = crate::synthetic::long_run(5, 2);
        r.phases[0].job_name = "a, \"quoted\" job".into();
        let back = |text: String| -> Vec<csv::StringRecord> {
            csv::Reader::from_reader(text.as_bytes())
                .records()
                .map(|r| r.expect("a CSV record"))
                .collect()
        };
        let rows = back(phases_csv(&r));
        assert_eq!(rows[0].get(1), Some("a, \"quoted\" job"));
        assert!(rows.iter().all(|row| row.len() == COLUMNS.len()));
        let loaded = [Loaded {
            path: "x.json".into(),
            result: r,
        }];
        let rows = back(long_csv(&crate::runs::runs(&loaded)));
        assert!(rows.iter().any(|row| row.get(6) == Some("a, \"quoted\" job")));
        // The mixed phase's kinds are rows of their own, `op` = the kind.
        assert!(rows
            .iter()
            .any(|row| row.get(9) == Some("read") && row.get(16) == Some("lat_p99_ns")));
    }
}
