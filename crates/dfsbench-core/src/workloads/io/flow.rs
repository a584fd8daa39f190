//! fio's flow: token-based pacing of jobs relative to each other. Every worker (fio: clone) of
//! the jobs with a flow weight in one flow counts the I/Os it issues, and so does the flow;
//! a worker whose share of the flow's I/Os exceeds its share of the weights (its weight over
//! the flow's total) holds back until the others catch up: it lets its I/Os in flight
//! complete and sleeps `flow_sleep` before it tries again (fio's flow.c,
//! flow_threshold_exceeded). Every worker's weight is in the flow from the start, as fio adds
//! each job's when it sets the job up (one that starts later holds the others back until it
//! catches up); a worker that ends takes its weight and its count out of the flow, as fio's
//! flow_exit_job does, and a later pattern of it puts its weight back.
//!
//! The flow of a job is shared with the jobs of its group (those running at the same time)
//! that have the same `flow_id`; groups run within one process, so the counters are atomics.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use serde::Serialize;

use crate::error::ConfigError;
use crate::units::parse_duration;

use super::{Options, Placed};

/// A job's place in a flow, as given.
#[derive(Debug, Clone, Serialize)]
pub struct Flow {
    /// The weight of each of the job's workers.
    pub flow: u64,
    #[serde(skip_serializing_if = "is_zero")]
    pub flow_id: u64,
    /// Microseconds a held-back worker sleeps before it tries again (0: it tries at once).
    #[serde(skip_serializing_if = "is_zero")]
    pub flow_sleep_us: u64,
    /// The counters shared with the other jobs of the flow, once the run's jobs are known.
    #[serde(skip)]
    pub(super) shared: Arc<Counters>,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// A flow's I/Os and weights, over the workers in it now.
#[derive(Debug, Default)]
pub(super) struct Counters {
    ios: AtomicU64,
    weight: AtomicU64,
    /// Weight put in for workers that have not joined yet: each first join takes its own.
    reserved: AtomicU64,
}

impl Flow {
    /// Read flow, flow_id and flow_sleep (these two only with flow).
    pub(super) fn validate(own: &Options) -> Result<Option<Flow>, ConfigError> {
        let sleep = own
            .flow_sleep
            .as_deref()
            .map(|t| {
                parse_duration(t)
                    .map(|d| d.as_micros().min(u128::from(u64::MAX)) as u64)
                    .map_err(|e| ConfigError::value("flow_sleep", format!("'{t}'"), e))
            })
            .transpose()?;
        match own.flow.filter(|w| *w > 0) {
            Some(weight) => Ok(Some(Flow {
                flow: weight,
                flow_id: own.flow_id.unwrap_or(0),
                flow_sleep_us: sleep.unwrap_or(0),
                shared: Arc::default(),
            })),
            None if own.flow_id.is_some() => {
                Err("flow_id names the flow of a job with a flow weight: give flow too".into())
            }
            None => Ok(None),
        }
    }

    /// A worker joins the flow for a run of I/Os: with the weight put in for it, the first
    /// time, or with its weight again.
    pub(super) fn join(&self) -> Member<'_> {
        let w = self.flow;
        let claimed = self
            .shared
            .reserved
            .fetch_update(Relaxed, Relaxed, |r| r.checked_sub(w))
            .is_ok();
        if !claimed {
            self.shared.weight.fetch_add(w, Relaxed);
        }
        Member { flow: self, ios: 0 }
    }
}

/// One worker in a flow.
pub(super) struct Member<'a> {
    flow: &'a Flow,
    /// The I/Os this worker counted.
    ios: u64,
}

impl Member<'_> {
    /// Whether the worker may issue its next I/O now (and counts it), or holds back: its share
    /// of the flow's I/Os is above its share of the weights.
    pub(super) fn admit(&mut self) -> bool {
        let shared = &self.flow.shared;
        let (all, weights) = (shared.ios.load(Relaxed), shared.weight.load(Relaxed));
        // ios / all > flow / weights, without division.
        if u128::from(self.ios) * u128::from(weights) > u128::from(self.flow.flow) * u128::from(all) {
            return false;
        }
        shared.ios.fetch_add(1, Relaxed);
        self.ios += 1;
        true
    }

    /// How long a worker held back sleeps before it tries again.
    pub(super) fn sleep_us(&self) -> u64 {
        self.flow.flow_sleep_us
    }
}

impl Drop for Member<'_> {
    fn drop(&mut self) {
        let shared = &self.flow.shared;
        shared.ios.fetch_sub(self.ios, Relaxed);
        shared.weight.fetch_sub(self.flow.flow, Relaxed);
    }
}

/// Give the io jobs with a flow weight that run at the same time (one group, or a job alone)
/// and have the same flow_id one set of counters, with every worker's weight in it.
pub(crate) fn share(jobs: &mut [Placed<'_>]) {
    let mut flows: HashMap<(Option<&str>, usize, u64), Arc<Counters>> = HashMap::new();
    for (index, group, workers, io) in jobs.iter_mut() {
        // A job outside a group runs alone: its flow is its own.
        let stage = match group {
            Some(g) => (Some(*g), 0),
            None => (None, *index),
        };
        if let Some(flow) = &mut io.flow {
            let shared = flows.entry((stage.0, stage.1, flow.flow_id)).or_default();
            let weight = flow.flow * *workers as u64;
            shared.weight.fetch_add(weight, Relaxed);
            shared.reserved.fetch_add(weight, Relaxed);
            flow.shared = shared.clone();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(weight: u64, shared: &Arc<Counters>) -> Flow {
        Flow {
            flow: weight,
            flow_id: 0,
            flow_sleep_us: 0,
            shared: shared.clone(),
        }
    }

    /// Two workers of weights 1 and 8 that each try as often as they can get their I/Os in
    /// the ratio 1:8 (flow.fio's), and one alone is never held back.
    #[test]
    fn workers_share_the_ios_by_weight() {
        let shared: Arc<Counters> = Arc::default();
        let (light, heavy) = (flow(1, &shared), flow(8, &shared));
        let (mut a, mut b) = (light.join(), heavy.join());
        let (mut ios_a, mut ios_b) = (0u64, 0u64);
        for _ in 0..9000 {
            ios_a += u64::from(a.admit());
            ios_b += u64::from(b.admit());
        }
        assert!((7.5..8.5).contains(&(ios_b as f64 / ios_a as f64)), "{ios_a} : {ios_b}");
        drop(b);
        assert!((0..100).all(|_| a.admit()), "alone once the other left");
        drop(a);
        assert_eq!(shared.ios.load(Relaxed) + shared.weight.load(Relaxed), 0);
    }

    /// Weight put in before a worker joins holds the others back until it does.
    #[test]
    fn a_late_worker_is_waited_for() {
        let shared: Arc<Counters> = Arc::default();
        shared.weight.store(9, Relaxed);
        shared.reserved.store(9, Relaxed);
        let (light, heavy) = (flow(1, &shared), flow(8, &shared));
        let mut a = light.join();
        assert!(a.admit());
        assert!(!a.admit(), "its share is 1/9 while the other has not begun");
        let mut b = heavy.join();
        assert_eq!(
            shared.weight.load(Relaxed),
            9,
            "the reserved weight is taken, not added"
        );
        assert!((0..8).all(|_| b.admit()));
        assert!(a.admit());
        drop((a, b));
        let again = light.join();
        assert_eq!(shared.weight.load(Relaxed), 1, "a later pattern adds its weight again");
        drop(again);
    }
}
