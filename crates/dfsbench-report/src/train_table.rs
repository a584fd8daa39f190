//! The tables of a train run: per epoch and over every epoch (the mean of their AU, as DLIO's), how busy the emulated
//! accelerators were kept (AU), what they loaded and how long a step waited for its batch; and
//! each accelerator's AU over the epochs.

use dfsbench_result::units::{format_ns, rate_si};
use dfsbench_result::{Accelerator, PhaseResult, RunResult, TrainResult};

use crate::table::{left, right, Table};

/// Accelerators listed one by one at most; more are summed up by their least and most AU.
const LISTED: usize = 32;

fn pct(v: f64) -> String {
    format!("{:.1}%", v * 100.0)
}

fn verdict(meets: bool) -> String {
    if meets { "yes" } else { "NO" }.to_string()
}

/// The train epochs of a run with their figures: an accelerator search's steps (`search`) or
/// the other epochs.
fn epochs(result: &RunResult, search: bool) -> Vec<(&PhaseResult, &TrainResult)> {
    result
        .phases
        .iter()
        .filter(|p| !p.prepare && p.params.contains_key("active_accelerators") == search)
        .filter_map(|p| Some((p, p.train.as_ref()?)))
        .collect()
}

/// One step of an accelerator search: its accelerators per rank and its epoch's figures.
pub struct SearchStep<'r> {
    pub per_rank: u64,
    pub phase: &'r PhaseResult,
    pub train: &'r TrainResult,
}

/// The steps of a run's accelerator search, in the order they ran (1, 2, 4 ... per rank);
/// empty when the run searched nothing.
pub fn accelerator_search(result: &RunResult) -> Vec<SearchStep<'_>> {
    epochs(result, true)
        .into_iter()
        .map(|(phase, train)| SearchStep {
            per_rank: phase
                .params
                .get("active_accelerators")
                .and_then(|v| v.as_u64())
                .unwrap_or(0),
            phase,
            train,
        })
        .collect()
}

/// The search's answer, as MLPerf Storage's: the last step of the unbroken run of steps from
/// the first that kept AU at the threshold; None when even the first did not.
pub fn largest_held<'a, 'r>(steps: &'a [SearchStep<'r>]) -> Option<&'a SearchStep<'r>> {
    steps.iter().take_while(|s| s.train.meets_threshold).last()
}

/// An accelerator search: each step's AU and throughput, and the most accelerators per rank
/// that every step up to it kept at the threshold; None when the run searched nothing.
pub fn search_table(result: &RunResult) -> Option<String> {
    let steps = accelerator_search(result);
    let first = steps.first()?;
    let mut t = Table::new(vec![
        left("accelerator search"),
        right("per rank"),
        right("accel"),
        right("samples/s"),
        right("MiB/s"),
        right("AU"),
        right("AU min"),
        right(format!("AU >= {}", pct(first.train.au_threshold))),
    ]);
    for s in &steps {
        let tr = s.train;
        t.push(vec![
            crate::runs::label(s.phase),
            s.per_rank.to_string(),
            tr.accelerators.to_string(),
            rate_si(tr.samples_per_sec),
            format!("{:.1}", tr.bytes_per_sec / (1024.0 * 1024.0)),
            pct(tr.au),
            pct(tr.au_min),
            verdict(tr.meets_threshold),
        ]);
    }
    let held = largest_held(&steps).map(|s| s.per_rank);
    let threshold = pct(first.train.au_threshold);
    let verdict = match held {
        Some(n) => format!("the most accelerators per rank kept at AU >= {threshold}: {n}\n"),
        None => format!("no step kept AU >= {threshold}, not even 1 accelerator per rank\n"),
    };
    Some(t.text() + &verdict)
}

/// Per epoch and over all of them; None when the run trained nothing.
pub fn train_table(result: &RunResult) -> Option<String> {
    let epochs = epochs(result, false);
    let first = epochs.first()?;
    let mut t = Table::new(vec![
        left("train epoch"),
        right("accel"),
        right("samples/s"),
        right("MiB/s"),
        right("AU"),
        right("AU min"),
        right("wait p50"),
        right("wait p99"),
        right("wait max"),
        right(format!("AU >= {}", pct(first.1.au_threshold))),
    ]);
    for (p, tr) in &epochs {
        let w = &tr.wait;
        t.push(vec![
            crate::runs::label(p),
            tr.accelerators.to_string(),
            rate_si(tr.samples_per_sec),
            format!("{:.1}", tr.bytes_per_sec / (1024.0 * 1024.0)),
            pct(tr.au),
            pct(tr.au_min),
            format_ns(w.p50_ns),
            format_ns(w.p99_ns),
            format_ns(w.max_ns),
            verdict(tr.meets_threshold),
        ]);
    }
    let total = epochs.iter().fold(Accelerator::default(), |a, (_, t)| a.plus(t.total));
    let seconds: f64 = epochs.iter().map(|(p, _)| p.duration_s).sum();
    let per_s = |n: u64| if seconds > 0.0 { n as f64 / seconds } else { 0.0 };
    // Over the epochs, the mean of their AU: what DLIO reports as train_au_mean_percentage
    // and MLPerf Storage checks against the threshold.
    let all = epochs.iter().map(|(_, t)| t.au).sum::<f64>() / epochs.len() as f64;
    t.push(vec![
        format!("all {} epochs", epochs.len()),
        first.1.accelerators.to_string(),
        rate_si(per_s(total.samples)),
        format!("{:.1}", per_s(total.bytes) / (1024.0 * 1024.0)),
        pct(all),
        pct(epochs.iter().map(|(_, t)| t.au_min).fold(1.0, f64::min)),
        String::new(),
        String::new(),
        String::new(),
        verdict(all >= first.1.au_threshold),
    ]);
    Some(t.text())
}

/// Each accelerator's AU over every epoch (the first [`LISTED`]); None when the run trained
/// nothing.
pub fn accelerators_table(result: &RunResult) -> Option<String> {
    let epochs = epochs(result, false);
    let mut sums: Vec<(usize, Accelerator)> = Vec::new();
    for (p, _) in &epochs {
        // Each accelerator is its read_threads workers; the first of them holds its figures.
        let readers = p
            .params
            .get("read_threads")
            .and_then(|r| r.as_u64())
            .unwrap_or(1)
            .max(1) as usize;
        for w in &p.workers_detail {
            let Some(a) = w.accelerator else { continue };
            let id = w.worker / readers;
            match sums.iter_mut().find(|(i, _)| *i == id) {
                Some((_, s)) => *s = s.plus(a),
                None => sums.push((id, a)),
            }
        }
    }
    if sums.is_empty() {
        return None;
    }
    sums.sort_by_key(|(id, _)| *id);
    let mut t = Table::new(vec![
        left("accelerator"),
        right("steps"),
        right("samples"),
        right("compute s"),
        right("wait s"),
        right("AU"),
    ]);
    for (id, a) in sums.iter().take(LISTED) {
        t.push(vec![
            id.to_string(),
            a.steps.to_string(),
            a.samples.to_string(),
            format!("{:.3}", a.compute_ns as f64 / 1e9),
            format!("{:.3}", a.wait_ns as f64 / 1e9),
            pct(a.au()),
        ]);
    }
    if sums.len() > LISTED {
        t.push(vec![
            format!("({} more)", sums.len() - LISTED),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
        ]);
    }
    Some(t.text())
}
