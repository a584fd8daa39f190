//! The training profiles of MLPerf Storage, as its DLIO workload files give them. Every value
//! comes from mlcommons/storage, configs/dlio/workload/<model>_<accelerator>.yaml (commit
//! caa90c9): `dataset` (num_files_train, num_samples_per_file, record_length_bytes,
//! record_length_bytes_stdev), `reader` (batch_size, read_threads), `train`
//! (computation_time, epochs) and `metric.au`. DLIO's `reader.prefetch_size` defaults to 2
//! (argonne-lcf/dlio_benchmark, dlio_benchmark/utils/config.py), and none of the files sets it.

use std::time::Duration;

/// The accelerators MLPerf Storage emulates, each with its own compute time per batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Accelerator {
    H100,
    A100,
}

impl Accelerator {
    pub(crate) fn parse(text: &str) -> Option<Accelerator> {
        match text.to_ascii_lowercase().as_str() {
            "h100" => Some(Accelerator::H100),
            "a100" => Some(Accelerator::A100),
            _ => None,
        }
    }
}

/// One model's workload: its dataset, its reader and its accelerator.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Profile {
    pub name: &'static str,
    pub files: u64,
    pub samples_per_file: u64,
    pub sample_size: u64,
    pub sample_size_stdev: u64,
    pub batch_size: u64,
    pub read_threads: u64,
    pub prefetch: u64,
    pub epochs: u64,
    /// Compute time per batch on each accelerator.
    pub h100: Duration,
    pub a100: Duration,
    /// MLPerf's minimum accelerator utilization for the profile.
    pub au: f64,
}

impl Profile {
    pub(crate) fn compute(&self, a: Accelerator) -> Duration {
        match a {
            Accelerator::H100 => self.h100,
            Accelerator::A100 => self.a100,
        }
    }
}

/// unet3d_h100.yaml and unet3d_a100.yaml: npz files of one sample each.
const UNET3D: Profile = Profile {
    name: "unet3d",
    files: 168,
    samples_per_file: 1,
    sample_size: 146_600_628,
    sample_size_stdev: 68_341_808,
    batch_size: 7,
    read_threads: 4,
    prefetch: 2,
    epochs: 5,
    h100: Duration::from_micros(323_000),
    a100: Duration::from_micros(636_000),
    au: 0.90,
};

/// resnet50_h100.yaml and resnet50_a100.yaml: TFRecord files of 1251 samples each
/// (record_length_bytes 114660.07, here in whole bytes).
const RESNET50: Profile = Profile {
    name: "resnet50",
    files: 1024,
    samples_per_file: 1251,
    sample_size: 114_660,
    sample_size_stdev: 0,
    batch_size: 400,
    read_threads: 8,
    prefetch: 2,
    epochs: 5,
    h100: Duration::from_micros(224_000),
    a100: Duration::from_micros(435_000),
    au: 0.90,
};

/// cosmoflow_h100.yaml and cosmoflow_a100.yaml: TFRecord files of one sample each.
const COSMOFLOW: Profile = Profile {
    name: "cosmoflow",
    files: 524_288,
    samples_per_file: 1,
    sample_size: 2_828_486,
    sample_size_stdev: 71_311,
    batch_size: 1,
    read_threads: 4,
    prefetch: 2,
    epochs: 5,
    h100: Duration::from_micros(3_500),
    a100: Duration::from_micros(5_510),
    au: 0.70,
};

pub(crate) const PROFILES: [Profile; 3] = [UNET3D, RESNET50, COSMOFLOW];

/// The profile named `name`.
pub(crate) fn profile(name: &str) -> Option<Profile> {
    PROFILES.iter().copied().find(|p| p.name == name)
}
