//! Cells whose number comes from several phases of one run: the answer of a train run's
//! accelerator search (its largest step that held the AU threshold) and a checkpoint job's
//! mean over its checkpoints.

use dfsbench_result::{PhaseResult, RunResult};

use super::model::{Metric, PhaseSel};

const MIB: f64 = 1048576.0;

/// A cell's number from several phases: the phases it speaks for, the raw number and the
/// factor to the table's unit, and why the phases' reads may have come from the cache.
pub(super) struct Figure {
    pub(super) phase: String,
    pub(super) raw: f64,
    pub(super) factor: f64,
    pub(super) suspect: Option<String>,
}

/// The run's own marks on a phase, as the study's cells show them.
fn marks(p: &PhaseResult) -> Option<String> {
    (!p.cache_suspect.is_empty()).then(|| p.cache_suspect.join("; "))
}

/// The cell's number, or why it has none; None for a metric of one phase.
pub(super) fn figure(r: &RunResult, metric: Metric, sel: &PhaseSel) -> Option<Result<Figure, String>> {
    let search = matches!(
        metric,
        Metric::SearchAccelerators | Metric::SearchAu | Metric::SearchSamplesPerSec | Metric::SearchMibPerSec
    );
    let checkpoint = matches!(metric, Metric::CheckpointGbPerSec | Metric::CheckpointSecs);
    if !search && !checkpoint {
        return None;
    }
    if r.status != "complete" {
        let why = r.status_message.as_deref().unwrap_or("");
        return Some(Err(format!("error: {}: {why}", r.status)));
    }
    Some(if search {
        searched(r, metric)
    } else {
        checkpoints(r, metric, sel)
    })
}

/// A failed operation in any of `phases` spoils the figure over them.
fn failed(phases: &[&PhaseResult]) -> Result<(), String> {
    match phases.iter().find(|p| p.errors.total > 0) {
        Some(p) => Err(format!("error: {} failed ops in {}", p.errors.total, p.label)),
        None => Ok(()),
    }
}

fn searched(r: &RunResult, metric: Metric) -> Result<Figure, String> {
    let steps = dfsbench_report::accelerator_search(r);
    let first = steps.first().ok_or("n/a: the run did no accelerator search")?;
    failed(&steps.iter().map(|s| s.phase).collect::<Vec<_>>())?;
    let held = dfsbench_report::largest_held(&steps);
    let (step, raw, factor) = match (metric, held) {
        // Not even one accelerator was kept busy enough: MLPerf's answer is none.
        (Metric::SearchAccelerators, None) => (first, 0.0, 1.0),
        (Metric::SearchAccelerators, Some(s)) => (s, s.train.accelerators as f64, 1.0),
        (_, None) => {
            return Err(format!(
                "n/a: no step kept AU >= {:.0}%, not even 1 accelerator per client (AU {:.1}%)",
                first.train.au_threshold * 100.0,
                first.train.au * 100.0
            ))
        }
        (Metric::SearchAu, Some(s)) => (s, s.train.au, 100.0),
        (Metric::SearchSamplesPerSec, Some(s)) => (s, s.train.samples_per_sec, 1.0),
        (_, Some(s)) => (s, s.train.bytes_per_sec, 1.0 / MIB),
    };
    Ok(Figure {
        phase: step.phase.label.clone(),
        raw,
        factor,
        suspect: marks(step.phase),
    })
}

/// The mean over the checkpoints of the job's `sel.name` phases (write or read).
fn checkpoints(r: &RunResult, metric: Metric, sel: &PhaseSel) -> Result<Figure, String> {
    let phases: Vec<&PhaseResult> = r
        .phases
        .iter()
        .filter(|p| !p.prepare && p.workload == "checkpoint" && p.name == sel.name)
        .filter(|p| sel.job.as_ref().is_none_or(|j| &p.job_name == j))
        .collect();
    if phases.is_empty() {
        return Err(format!("n/a: no checkpoint {} phase", sel.name));
    }
    failed(&phases)?;
    let (figure, factor): (fn(&PhaseResult) -> f64, f64) = match metric {
        Metric::CheckpointGbPerSec => (|p| p.bytes_per_sec, 1e-9),
        _ => (|p| p.duration_s, 1.0),
    };
    let raw = phases.iter().map(|p| figure(p)).sum::<f64>() / phases.len() as f64;
    Ok(Figure {
        phase: format!("mean of {} checkpoint {} phases", phases.len(), sel.name),
        raw,
        factor,
        suspect: phases.iter().find_map(|p| marks(p)),
    })
}
