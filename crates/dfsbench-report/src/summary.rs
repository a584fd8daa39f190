//! The JSON summary: every run and measured phase with its headline numbers (no histograms or
//! series), for scripts that want the numbers without the full result documents.

use serde_json::{json, Value};

use crate::noise;
use crate::runs::Run;

/// Schema identifier of the summary.
const SUMMARY_SCHEMA: &str = "dfsbench.report-summary/1";

pub fn summary(runs: &[Run]) -> Value {
    let runs: Vec<Value> = runs
        .iter()
        .map(|r| {
            let res = r.result;
            let phases: Vec<Value> = r
                .phases()
                .map(|p| {
                    let l = &p.latency;
                    json!({
                        "job_name": p.job_name,
                        "name": p.name,
                        "label": p.label,
                        "workload": p.workload,
                        "params": p.params,
                        "workers": p.workers,
                        "threads": p.threads,
                        "duration_s": p.duration_s,
                        "ops": p.ops,
                        "bytes": p.bytes,
                        "ops_per_sec": p.ops_per_sec,
                        "bytes_per_sec": p.bytes_per_sec,
                        "stonewall_ops_per_sec": p.stonewall.ops_per_sec,
                        "stonewall_bytes_per_sec": p.stonewall.bytes_per_sec,
                        "latency_ns": {
                            "min": l.min_ns, "mean": l.mean_ns, "p50": l.p50_ns, "p90": l.p90_ns, "p99": l.p99_ns,
                            "p99_9": l.p99_9_ns, "p99_99": l.p99_99_ns, "max": l.max_ns,
                        },
                        "errors": {"total": p.errors.total, "by_kind": p.errors.by_kind},
                        "noise_cv": noise::ops_cv(p),
                        "cpu_cores": p.cpu.cores,
                    })
                })
                .collect();
            json!({
                "label": r.label,
                "file": r.path.display().to_string(),
                "run_id": res.run_id,
                "status": res.status,
                "started_at": res.started_at,
                "finished_at": res.finished_at,
                "system": r.system,
                "target": {"uri": res.target.uri, "backend": res.target.backend, "details": res.target.details},
                "host": res.host,
                "tool": res.tool,
                "config_hash": res.config_hash,
                "command_line": res.command_line,
                "phases": phases,
            })
        })
        .collect();
    json!({ "schema": SUMMARY_SCHEMA, "noise_rule": noise::RULE, "runs": runs })
}
