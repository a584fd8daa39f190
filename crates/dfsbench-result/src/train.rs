//! What an epoch of the train workload measured: how busy its emulated accelerators were kept
//! (accelerator utilization, AU, as MLPerf Storage reports it), per accelerator and over all.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::Latency;

/// One emulated accelerator's figures in one epoch (in its worker's `workers_detail` entry).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Accelerator {
    /// Batches it computed.
    pub steps: u64,
    /// Samples and bytes its readers loaded.
    pub samples: u64,
    pub bytes: u64,
    /// Nanoseconds it computed (its emulated compute time per batch, summed).
    pub compute_ns: u64,
    /// Nanoseconds it was idle waiting for its next batch (before the first one too).
    pub wait_ns: u64,
}

impl Accelerator {
    /// compute / (compute + wait), 0 when it did nothing.
    pub fn au(&self) -> f64 {
        au(self.compute_ns, self.wait_ns)
    }

    /// The sum of two accelerators' figures.
    pub fn plus(self, o: Accelerator) -> Accelerator {
        Accelerator {
            steps: self.steps + o.steps,
            samples: self.samples + o.samples,
            bytes: self.bytes + o.bytes,
            compute_ns: self.compute_ns + o.compute_ns,
            wait_ns: self.wait_ns + o.wait_ns,
        }
    }
}

/// compute / (compute + wait), 0 when both are 0.
pub fn au(compute_ns: u64, wait_ns: u64) -> f64 {
    let busy = compute_ns as f64 + wait_ns as f64;
    if busy > 0.0 {
        compute_ns as f64 / busy
    } else {
        0.0
    }
}

/// An epoch of the train workload over every accelerator of every rank.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TrainResult {
    pub accelerators: u64,
    /// Every accelerator's figures added up.
    pub total: Accelerator,
    /// Over all accelerators: total compute / (total compute + total wait).
    pub au: f64,
    /// The least and the most busy accelerator's AU.
    pub au_min: f64,
    pub au_max: f64,
    /// Samples and bytes loaded per second of the epoch's measured duration.
    pub samples_per_sec: f64,
    pub bytes_per_sec: f64,
    /// The profile's minimum AU (MLPerf Storage: 0.9 for unet3d and resnet50, 0.7 for
    /// cosmoflow), and whether `au` reached it.
    pub au_threshold: f64,
    pub meets_threshold: bool,
    /// Each step's wait for its batch, from the exactly merged histogram of every accelerator.
    pub wait: Latency,
}
