//! Jobs expanded into the phases that run, in order.

use serde_json::json;

use crate::job::Job;
pub use crate::workloads::{Phase, PhaseOp};

/// The phases of job `index`, with the job's open-loop rate and steady-state rule applied:
/// measured phases run at `rate`, and with rate steps every time-based phase runs once per step.
pub fn phases(index: usize, job: &Job) -> Vec<Phase> {
    let mut out = Vec::new();
    for mut p in job.workload.phases(index, &job.timing()) {
        let timed = p.duration.is_some();
        if timed {
            p.stable = job.until_stable;
        }
        if p.prepare {
            out.push(p);
        } else if !job.rate_steps.is_empty() && timed {
            for &r in &job.rate_steps {
                let mut step = p.clone();
                step.rate = Some(r);
                step.label = format!("{} @{}/s", p.label, r);
                step.params.insert("rate".into(), json!(r));
                out.push(step);
            }
        } else {
            p.rate = job.rate;
            out.push(p);
        }
    }
    out
}
