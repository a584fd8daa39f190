//! The tables of a checkpoint run, in MLPerf Storage's terms: a checkpoint's duration is its
//! slowest rank's, and its throughput the checkpoint's bytes over that duration; over the K
//! checkpoints their mean and spread; and each rank's (worker's) own time and throughput.

use dfsbench_result::{PhaseResult, RunResult};

use crate::table::{left, right, Table};

/// Ranks listed one by one at most.
const LISTED: usize = 32;

/// The measured write and read phases of checkpoint jobs.
fn phases<'a>(result: &'a RunResult, name: &'a str) -> impl Iterator<Item = &'a PhaseResult> + 'a {
    result
        .phases
        .iter()
        .filter(move |p| p.workload == "checkpoint" && !p.prepare && p.name == name)
}

fn gb_s(bytes_per_sec: f64) -> String {
    format!("{:.3}", bytes_per_sec / 1e9)
}

/// Mean and standard deviation (of the population: the checkpoints that ran).
fn mean_sd(v: &[f64]) -> (f64, f64) {
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / v.len() as f64;
    (mean, var.sqrt())
}

/// Writes and reads over the checkpoints: the slowest rank's seconds and the checkpoint's
/// GB/s, as mean, standard deviation, least and most; None without checkpoint phases.
pub fn checkpoint_table(result: &RunResult) -> Option<String> {
    let mut t = Table::new(vec![
        left("checkpoint"),
        right("times"),
        right("slowest rank s"),
        right("+-"),
        right("GB/s"),
        right("+-"),
        right("GB/s min"),
        right("GB/s max"),
    ]);
    for name in ["write", "read"] {
        let all: Vec<&PhaseResult> = phases(result, name).collect();
        if all.is_empty() {
            continue;
        }
        let secs: Vec<f64> = all.iter().map(|p| p.duration_s).collect();
        let rates: Vec<f64> = all.iter().map(|p| p.bytes_per_sec).collect();
        let (s, s_sd) = mean_sd(&secs);
        let (r, r_sd) = mean_sd(&rates);
        t.push(vec![
            name.to_string(),
            all.len().to_string(),
            format!("{s:.3}"),
            format!("{s_sd:.3}"),
            gb_s(r),
            gb_s(r_sd),
            gb_s(rates.iter().copied().fold(f64::INFINITY, f64::min)),
            gb_s(rates.iter().copied().fold(0.0, f64::max)),
        ]);
    }
    (!t.is_empty()).then(|| t.text())
}

/// Each rank's mean seconds and GB/s over the checkpoints, writing and reading (the first
/// [`LISTED`] ranks); None without checkpoint phases.
pub fn checkpoint_ranks_table(result: &RunResult) -> Option<String> {
    let mut t = Table::new(vec![
        left("rank"),
        right("write s"),
        right("write GB/s"),
        right("read s"),
        right("read GB/s"),
    ]);
    let per_rank = |name: &str, worker: usize| {
        let (mut s, mut rate, mut n) = (0.0, 0.0, 0);
        for p in phases(result, name) {
            if let Some(w) = p.workers_detail.iter().find(|w| w.worker == worker) {
                (s, rate, n) = (s + w.duration_s, rate + w.bytes_per_sec, n + 1);
            }
        }
        match n {
            0 => ("-".to_string(), "-".to_string()),
            n => (format!("{:.3}", s / n as f64), gb_s(rate / n as f64)),
        }
    };
    let first = phases(result, "write")
        .next()
        .or_else(|| phases(result, "read").next())?;
    for w in first.workers_detail.iter().take(LISTED) {
        let (ws, wr) = per_rank("write", w.worker);
        let (rs, rr) = per_rank("read", w.worker);
        t.push(vec![w.worker.to_string(), ws, wr, rs, rr]);
    }
    if first.workers_detail.len() > LISTED {
        let more = format!("({} more)", first.workers_detail.len() - LISTED);
        t.push(vec![more, String::new(), String::new(), String::new(), String::new()]);
    }
    Some(t.text())
}
