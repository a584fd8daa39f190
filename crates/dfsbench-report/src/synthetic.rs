//! A synthetic but schema-valid result of a long, wide run, for measuring how fast reports are
//! made (bench/report-speed.sh) and for tests: `--duration` long time-based phases with a
//! per-second series, many workers with a few stragglers, error seconds, and latency
//! histograms shaped like storage (a log-normal body and a slow tail).
//!
//! Deterministic: the same arguments give the same document.

use std::collections::BTreeMap;

use dfsbench_result::histogram as hdr;
use dfsbench_result::{
    Cpu, ErrorSample, Errors, Host, OpKind, PhaseResult, RunResult, Series, Stonewall, Target, Tool, WorkerSummary,
    SCHEMA,
};
use serde_json::{json, Value};

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// erf, Abramowitz and Stegun 7.1.26 (error below 1.5e-7).
fn erf(x: f64) -> f64 {
    let s = x.signum();
    let x = x.abs();
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let y = 1.0
        - (((((1.061_405_429 * t - 1.453_152_027) * t) + 1.421_413_741) * t - 0.284_496_736) * t + 0.254_829_592)
            * t
            * (-x * x).exp();
    s * y
}

/// P(X <= v) of a log-normal with this median and sigma.
fn lognormal_cdf(v: f64, median: f64, sigma: f64) -> f64 {
    0.5 * (1.0 + erf((v.ln() - median.ln()) / (sigma * std::f64::consts::SQRT_2)))
}

/// A latency histogram of exactly `ops` operations: 98% log-normal around `median_ns`,
/// 2% a slow tail around 30x the median.
fn histogram(ops: u64, median_ns: f64) -> hdrhistogram::Histogram<u64> {
    let mut h = hdr::new_histogram();
    if ops == 0 {
        return h;
    }
    let cdf = |v: f64| 0.98 * lognormal_cdf(v, median_ns, 0.45) + 0.02 * lognormal_cdf(v, median_ns * 30.0, 0.9);
    // 200 bins per decade from 100 ns to 100 s.
    let mut placed = 0u64;
    let mut prev = cdf(100.0);
    let mut bins = Vec::new();
    for i in 1..=1800 {
        let v = 100.0 * 10f64.powf(i as f64 / 200.0);
        let c = cdf(v);
        let n = ((c - prev) * ops as f64).floor() as u64;
        prev = c;
        if n > 0 {
            bins.push((v as u64, n));
            placed += n;
        }
    }
    for (v, n) in bins {
        h.record_n(v, n).expect("in range");
    }
    // What rounding left out goes to the median.
    h.record_n(median_ns as u64, ops - placed).expect("in range");
    h
}

/// Split `total` into `n` parts proportional to `weights`, exactly.
fn split(total: u64, weights: &[f64]) -> Vec<u64> {
    let sum: f64 = weights.iter().sum();
    let mut parts: Vec<u64> = weights
        .iter()
        .map(|w| (total as f64 * w / sum).floor() as u64)
        .collect();
    let mut rest = total - parts.iter().sum::<u64>();
    let n = parts.len();
    let mut i = 0;
    while rest > 0 {
        parts[i % n] += 1;
        rest -= 1;
        i += 1;
    }
    parts
}

struct PhaseSpec {
    name: &'static str,
    label: &'static str,
    job: usize,
    job_name: &'static str,
    workload: &'static str,
    params: serde_json::Value,
    prepare: bool,
    seconds: usize,
    ops_per_worker_s: f64,
    bytes_per_op: u64,
    median_ns: f64,
    kinds: &'static [&'static str],
}

fn phase(spec: &PhaseSpec, workers: usize, start_s: f64, rng: &mut Rng) -> PhaseResult {
    let secs = spec.seconds.max(1);
    let duration_s = secs as f64 - 0.4;
    // Per-second ops: steady with noise, a slow minute in the middle, and a shorter last second.
    let base = spec.ops_per_worker_s * workers as f64;
    let weights: Vec<f64> = (0..secs)
        .map(|s| {
            let dip = if secs > 120 && (secs / 2..secs / 2 + 60).contains(&s) {
                0.55
            } else {
                1.0
            };
            let last = if s == secs - 1 { 0.6 } else { 1.0 };
            base * dip * last * (0.94 + 0.12 * rng.next())
        })
        .collect();
    let ops = weights.iter().sum::<f64>().round() as u64;
    let series_ops = split(ops, &weights);
    let series_bytes: Vec<u64> = series_ops.iter().map(|o| o * spec.bytes_per_op).collect();
    // Errors: a few bad seconds (EIO bursts) in measured phases.
    let mut series_errors = vec![0u64; secs];
    if !spec.prepare && secs > 10 {
        for k in 0..5 {
            let s = (secs / 7) * (k + 1);
            series_errors[s.min(secs - 1)] += 3 + k as u64;
        }
    }
    let errors_total: u64 = series_errors.iter().sum();
    // Workers: equal shares but for three stragglers at 60%.
    let ww: Vec<f64> = (0..workers)
        .map(|w| if w % 97 == 13 { 0.6 } else { 0.97 + 0.06 * rng.next() })
        .collect();
    let w_ops = split(ops, &ww);
    let w_err = split(errors_total, &vec![1.0; workers]);
    let h = histogram(ops, spec.median_ns);
    let mut latency = hdr::latency(&h);
    latency.histogram = hdr::serialize(&h);
    let bytes = ops * spec.bytes_per_op;
    let mut samples = Vec::new();
    let mut worker_of_error = 0;
    for (s, &n) in series_errors.iter().enumerate() {
        for i in 0..n {
            if samples.len() < dfsbench_result::MAX_ERROR_SAMPLES {
                while w_err[worker_of_error % workers] == 0 {
                    worker_of_error += 1;
                }
                samples.push(ErrorSample {
                    time_s: s as f64 + 0.1 * i as f64,
                    worker: worker_of_error % workers,
                    op: spec.name.to_string(),
                    kind: "EIO".into(),
                    path: format!("w{}/f{}", worker_of_error % workers, s * 10 + i as usize),
                    offset: None,
                    message: "Input/output error (os error 5)".into(),
                });
                worker_of_error += 1;
            }
        }
    }
    let mut by_kind = BTreeMap::new();
    if errors_total > 0 {
        by_kind.insert("EIO".to_string(), errors_total);
    }
    let workers_detail: Vec<WorkerSummary> = (0..workers)
        .map(|w| {
            let d = duration_s * if ww[w] < 0.9 { 1.0 } else { 0.999 };
            WorkerSummary {
                worker: w,
                ops: w_ops[w],
                bytes: w_ops[w] * spec.bytes_per_op,
                errors: w_err[w],
                duration_s: d,
                ops_per_sec: w_ops[w] as f64 / d,
                bytes_per_sec: (w_ops[w] * spec.bytes_per_op) as f64 / d,
                p50_ns: latency.p50_ns,
                p99_ns: latency.p99_ns,
                max_ns: latency.max_ns,
                read_from: None,
                ioengine: None,
                accelerator: None,
            }
        })
        .collect();
    let sw_dur = duration_s * 0.98;
    let sw_ops = (ops as f64 * 0.975) as u64;
    let ops_by_kind: Vec<OpKind> = if spec.kinds.len() > 1 {
        let parts = split(ops, &[0.7, 0.3]);
        spec.kinds
            .iter()
            .zip(parts)
            .map(|(k, n)| {
                let h = histogram(n, spec.median_ns * if *k == "write" { 1.6 } else { 1.0 });
                let mut l = hdr::latency(&h);
                l.histogram = hdr::serialize(&h);
                OpKind {
                    op: k.to_string(),
                    ops: n,
                    bytes: n * spec.bytes_per_op,
                    ops_per_sec: n as f64 / duration_s,
                    bytes_per_sec: (n * spec.bytes_per_op) as f64 / duration_s,
                    latency: l,
                }
            })
            .collect()
    } else {
        Vec::new()
    };
    // Built through serde, so fields added to the result later (with defaults) need no change here.
    let phase = json!({
        "name": spec.name,
        "label": spec.label,
        "job": spec.job,
        "job_name": spec.job_name,
        "workload": spec.workload,
        "params": spec.params,
        "prepare": spec.prepare,
        "workers": workers,
        "threads": workers.min(64),
        "start_s": start_s,
        "duration_s": duration_s,
        "ramp_s": 0.0,
        "ops": ops,
        "bytes": bytes,
        "ops_per_sec": ops as f64 / duration_s,
        "bytes_per_sec": bytes as f64 / duration_s,
        "errors": Errors { total: errors_total, by_kind, samples },
        "stonewall": Stonewall {
            duration_s: sw_dur,
            ops: sw_ops,
            bytes: sw_ops * spec.bytes_per_op,
            ops_per_sec: sw_ops as f64 / sw_dur,
            bytes_per_sec: (sw_ops * spec.bytes_per_op) as f64 / sw_dur,
        },
        "latency": latency,
        "ops_by_kind": ops_by_kind,
        "series": Series { interval_s: 1.0, ops: series_ops, bytes: series_bytes, errors: series_errors, ..Default::default() },
        "cpu": Cpu { user_s: duration_s * 0.8, sys_s: duration_s * 1.1, cores: 1.9 },
        "workers_detail": workers_detail,
    });
    let mut phase = phase;
    if spec.kinds.len() < 2 {
        phase.as_object_mut().expect("an object").remove("ops_by_kind");
    }
    if spec.workload == "io" && !spec.prepare {
        // What the engine of the io job's config (io_uring at 16 in flight) records.
        phase["queue"] = json!({"engine": "io_uring", "depth": 16});
    }
    serde_json::from_value(phase).expect("a phase")
}

/// A run of `seconds`-long time-based phases with `workers` workers: files write and read of
/// 1 MiB, their delete, an io layout (prepare) and a randrw 4 KiB qd16 phase with reads and
/// writes reported apart. With seconds = 3600 and workers = 256: a one-hour run of 256 workers.
pub fn long_run(seconds: usize, workers: usize) -> RunResult {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let files_params = json!({"file_size": 1048576, "files_per_worker": 1000, "bs": 1048576});
    // The io job's documents are data (fixtures/long-run.json), as a real result records them.
    let io_job: Value = serde_json::from_str(include_str!("../fixtures/long-run.json")).expect("the fixture's JSON");
    let io_params = io_job["io_params"].clone();
    let specs = [
        PhaseSpec {
            name: "write",
            label: "write 1 MiB",
            job: 0,
            job_name: "files",
            workload: "files",
            params: files_params.clone(),
            prepare: false,
            seconds,
            ops_per_worker_s: 6.0,
            bytes_per_op: 1 << 20,
            median_ns: 9.0e6,
            kinds: &[],
        },
        PhaseSpec {
            name: "read",
            label: "read 1 MiB",
            job: 0,
            job_name: "files",
            workload: "files",
            params: files_params.clone(),
            prepare: false,
            seconds,
            ops_per_worker_s: 14.0,
            bytes_per_op: 1 << 20,
            median_ns: 3.5e6,
            kinds: &[],
        },
        PhaseSpec {
            name: "delete",
            label: "delete 1 MiB",
            job: 0,
            job_name: "files",
            workload: "files",
            params: files_params,
            prepare: false,
            seconds: (seconds / 60).max(2),
            ops_per_worker_s: 400.0,
            bytes_per_op: 0,
            median_ns: 250e3,
            kinds: &[],
        },
        PhaseSpec {
            name: "layout",
            label: "layout 1 GiB",
            job: 1,
            job_name: "io",
            workload: "io",
            params: io_params.clone(),
            prepare: true,
            seconds: (seconds / 30).max(2),
            ops_per_worker_s: 40.0,
            bytes_per_op: 1 << 20,
            median_ns: 4e6,
            kinds: &[],
        },
        PhaseSpec {
            name: "randrw",
            label: "randrw 4 KiB qd16",
            job: 1,
            job_name: "io",
            workload: "io",
            params: io_params,
            prepare: false,
            seconds,
            ops_per_worker_s: 900.0,
            bytes_per_op: 4096,
            median_ns: 180e3,
            kinds: &["read", "write"],
        },
    ];
    let mut start = 0.05;
    let mut phases = Vec::new();
    for s in &specs {
        let p = phase(s, workers, start, &mut rng);
        start += p.duration_s + 0.05;
        phases.push(p);
    }
    let secs = seconds as f64;
    let caps = [
        "append",
        "blocking",
        "direct_io",
        "directories",
        "fsync",
        "positional_write",
        "ranged_read",
        "rename",
    ];
    let mut config = io_job["config"].clone();
    for job in config["jobs"].as_array_mut().expect("the fixture's jobs") {
        job["workers"] = json!(workers);
        job["duration"] = json!(secs);
    }
    let run = json!({
        "schema": SCHEMA,
        "tool": Tool { name: "dfsbench".into(), version: env!("CARGO_PKG_VERSION").into() },
        "run_id": "20260101-000000-5e1f00",
        "started_at": "2026-01-01T00:00:00Z",
        "finished_at": "2026-01-01T03:01:00Z",
        "status": "complete",
        "command_line": ["dfsbench", "run", "synthetic.toml", "-t", "/mnt/synthetic", "-j", workers.to_string(),
            "--duration", format!("{seconds}s")],
        "host": Host {
            hostname: "synthetic-client".into(),
            os: "Debian GNU/Linux 12 (bookworm)".into(),
            kernel: "Linux 6.1.0".into(),
            cpus: 64,
            memory_bytes: 256 << 30,
        },
        "target": Target {
            uri: "/mnt/synthetic".into(),
            backend: "posix".into(),
            run_path: "/mnt/synthetic/dfsbench-20260101-000000-5e1f00".into(),
            capabilities: caps.iter().map(|c| (c.to_string(), true)).collect(),
            details: [("fs_type".to_string(), "ceph".to_string())].into_iter().collect(),
            link: None,
        },
        "config": config,
        "config_hash": "5e1f".repeat(16),
        "phases": phases,
    });
    serde_json::from_value(run).expect("a run")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_add_up() {
        let r = long_run(60, 16);
        for p in &r.phases {
            assert_eq!(p.series.ops.iter().sum::<u64>(), p.ops);
            assert_eq!(p.series.errors.iter().sum::<u64>(), p.errors.total);
            assert_eq!(p.workers_detail.iter().map(|w| w.ops).sum::<u64>(), p.ops);
            assert_eq!(p.workers_detail.iter().map(|w| w.errors).sum::<u64>(), p.errors.total);
            let h = hdr::deserialize(&p.latency.histogram).unwrap();
            assert_eq!(h.len(), p.ops);
            assert_eq!(p.errors.samples.len() as u64, p.errors.total.min(100));
        }
        assert!(erf(0.0).abs() < 1e-9 && (erf(3.0) - 0.999_977_9).abs() < 1e-6);
    }
}
