//! The total of jobs that ran at the same time (a group, fio's jobs between two stonewalls):
//! what they did together over the time they ran, with latencies merged exactly from every
//! measured phase's histogram.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::histogram::{deserialize, latency, new_growing_histogram};
use crate::{Latency, OpKind, PhaseResult};

/// The jobs of one group, together.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct GroupTotal {
    pub name: String,
    /// Its jobs, by name, in the config's order.
    pub jobs: Vec<String>,
    /// From the first measured phase's start (after its ramp) to the last one's end, seconds
    /// after the run started: the span the rates are over, as fio's group bandwidth is.
    pub start_s: f64,
    pub duration_s: f64,
    pub ops: u64,
    pub bytes: u64,
    pub errors: u64,
    pub ops_per_sec: f64,
    pub bytes_per_sec: f64,
    /// Every operation of the group's measured phases.
    pub latency: Latency,
    /// Per kind of operation (read, write, sync, ...), as fio reports a group.
    pub by_kind: Vec<OpKind>,
}

#[derive(Default)]
struct Sum {
    ops: u64,
    bytes: u64,
    hist: Option<Histogram<u64>>,
}

impl Sum {
    fn add(&mut self, ops: u64, bytes: u64, histogram: &str) {
        self.ops += ops;
        self.bytes += bytes;
        // A histogram this program wrote always reads back; one that does not adds no latency.
        if let Ok(h) = deserialize(histogram) {
            let into = self.hist.get_or_insert_with(new_growing_histogram);
            // A growing histogram takes any value another one holds.
            let _ = into.add(&h);
        }
    }

    fn latency(&self) -> Latency {
        latency(self.hist.as_ref().unwrap_or(&new_growing_histogram()))
    }
}

/// The total of group `name`, whose jobs are `jobs` (indices and names), from the measured
/// phases of those jobs in `phases`; None when none of them measured anything.
pub fn group_total(name: &str, jobs: &[(usize, String)], phases: &[PhaseResult]) -> Option<GroupTotal> {
    let mine: Vec<&PhaseResult> = phases
        .iter()
        .filter(|p| !p.prepare && jobs.iter().any(|(j, _)| *j == p.job))
        .collect();
    let start = mine.iter().map(|p| p.start_s + p.ramp_s).reduce(f64::min)?;
    let end = mine
        .iter()
        .map(|p| p.start_s + p.ramp_s + p.duration_s)
        .fold(start, f64::max);
    let span = end - start;
    let per_sec = |v: u64| if span > 0.0 { v as f64 / span } else { 0.0 };
    let mut all = Sum::default();
    let mut kinds: BTreeMap<String, Sum> = BTreeMap::new();
    for p in &mine {
        all.add(p.ops, p.bytes, &p.latency.histogram);
        if p.ops_by_kind.is_empty() {
            kinds
                .entry(p.name.clone())
                .or_default()
                .add(p.ops, p.bytes, &p.latency.histogram);
        }
        for k in &p.ops_by_kind {
            kinds
                .entry(k.op.clone())
                .or_default()
                .add(k.ops, k.bytes, &k.latency.histogram);
        }
    }
    Some(GroupTotal {
        name: name.to_string(),
        jobs: jobs.iter().map(|(_, n)| n.clone()).collect(),
        start_s: start,
        duration_s: span,
        ops: all.ops,
        bytes: all.bytes,
        errors: mine.iter().map(|p| p.errors.total).sum(),
        ops_per_sec: per_sec(all.ops),
        bytes_per_sec: per_sec(all.bytes),
        latency: all.latency(),
        by_kind: kinds
            .into_iter()
            .map(|(op, s)| OpKind {
                ops_per_sec: per_sec(s.ops),
                bytes_per_sec: per_sec(s.bytes),
                latency: s.latency(),
                op,
                ops: s.ops,
                bytes: s.bytes,
            })
            .collect(),
    })
}
