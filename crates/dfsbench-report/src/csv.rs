//! One CSV row per measured phase, for spreadsheets and pandas.

use dfsbench_core::result::RunResult;

const COLUMNS: &str = "run_id,job,phase,label,workers,ops,bytes,duration_s,ops_per_sec,bytes_per_sec,\
stonewall_ops_per_sec,stonewall_bytes_per_sec,lat_min_ns,lat_mean_ns,lat_p50_ns,lat_p90_ns,lat_p99_ns,\
lat_p99_9_ns,lat_max_ns,errors";

fn quote(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

pub fn phases_csv(result: &RunResult) -> String {
    let mut out = String::from(COLUMNS);
    out.push('\n');
    for p in result.phases.iter().filter(|p| !p.prepare) {
        let l = &p.latency;
        let cells = [
            quote(&result.run_id),
            quote(&p.job_name),
            quote(&p.name),
            quote(&p.label),
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
        ];
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    out
}
