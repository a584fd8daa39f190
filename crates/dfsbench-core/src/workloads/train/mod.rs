//! MLPerf Storage's training workloads, native: emulated accelerators read a dataset in
//! batches and "compute" each batch for a fixed time (DLIO's sleep), and the storage must keep
//! them busy. `generate` writes the dataset; each epoch reads it in a seeded shuffled order,
//! every accelerator its share, and is a phase of its own whose result holds the accelerators'
//! utilization (AU), throughput and waits (`PhaseResult::train`).

use std::time::Duration;

use dfsbench_backends::Capability;
use dfsbench_backends::Client;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::data::{DataShape, Written};
use crate::error::ConfigError;
use crate::stats::Recorder;
use crate::units::parse_duration;
use crate::worker::{push_num, JobContext, Worker};
use crate::workloads::shared::{parse_phases, size_key, RW_CLASSES};
use crate::workloads::whole::chunk_for;
use crate::workloads::Phase;
use crate::workloads::{Kind, SharedOptions, Step};
use crate::workloads::{RunSettings, TargetAt, Timing};

mod dataset;
mod kept;
mod lines;
mod profile;
mod reader;
mod run;
mod timeline;

use dataset::Dataset;
use kept::Kept;
use lines::Lines;
pub use profile::Accelerator;
use profile::{profile, Profile, PROFILES};

/// Most epochs of a train job: each is a phase with its own result.
const MAX_EPOCHS: u64 = 10_000;

/// The train workload's own flags and workload-file keys.
#[derive(clap::Args, Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[group(id = "train-options")]
pub struct Options {
    /// Emulated accelerator, whose compute time per batch the profile gives: h100 or a100
    /// [default: h100].
    #[arg(long, value_name = "TYPE", help_heading = "train")]
    pub accelerator: Option<String>,

    /// Emulated accelerators per rank, --read-threads workers each [default: --workers].
    #[arg(long, value_name = "N", help_heading = "train")]
    pub accelerators: Option<usize>,

    /// Epochs, each reading the whole dataset in a new shuffled order [default: the profile's, 5].
    #[arg(long, value_name = "N", help_heading = "train")]
    pub epochs: Option<u64>,

    /// Samples per file: 1 is a file per sample, more are read as ranges of a record file.
    #[arg(long, value_name = "N", help_heading = "train")]
    pub samples_per_file: Option<u64>,

    /// Mean size of a sample.
    #[arg(long, value_name = "SIZE", help_heading = "train")]
    pub sample_size: Option<String>,

    /// Standard deviation of the sample sizes (0: every sample is the mean) [default: the
    /// profile's, in proportion to --sample-size].
    #[arg(long, value_name = "SIZE", help_heading = "train")]
    pub sample_size_stdev: Option<String>,

    /// Samples per batch of each accelerator.
    #[arg(long, value_name = "N", help_heading = "train")]
    pub batch_size: Option<u64>,

    /// Compute time per batch, e.g. 323ms or 0.323.
    #[arg(long, value_name = "TIME", help_heading = "train")]
    pub compute_time: Option<String>,

    /// Parallel readers per accelerator, each a worker loading whole batches (DLIO's
    /// read_threads); with --prefetch they set how many batches may be loaded ahead of it.
    #[arg(long, value_name = "N", help_heading = "train")]
    pub read_threads: Option<u64>,

    /// Batches each reader thread may load ahead (DLIO's prefetch_size).
    #[arg(long, value_name = "N", help_heading = "train")]
    pub prefetch: Option<u64>,

    /// Find the most accelerators per rank the storage keeps busy: one epoch with 1, 2, 4 ...
    /// and --accelerators of them, each with its AU (--accelerator-search or =1).
    #[arg(long, value_name = "0|1", num_args = 0..=1, default_missing_value = "1", value_parser = crate::workloads::parse_flag, help_heading = "train")]
    pub accelerator_search: Option<bool>,

    /// Keep the dataset for later runs in the target's dfsbench-dataset-NAME, and train on it
    /// there if an earlier run generated it (NAME: from the layout when left out).
    #[arg(long, value_name = "NAME", num_args = 0..=1, default_missing_value = "", help_heading = "train")]
    pub dataset: Option<String>,

    /// Least accelerator utilization for a pass, in percent [default: the profile's].
    #[arg(long, value_name = "PCT", help_heading = "train")]
    pub au_threshold: Option<f64>,
}

/// Emulated accelerators reading a dataset, as MLPerf Storage's training workloads.
#[derive(Debug, Clone, Serialize)]
pub struct TrainJob {
    pub preset: &'static str,
    pub accelerator: Accelerator,
    /// Accelerators per rank, when given: the job's workers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accelerators: Option<usize>,
    pub epochs: u64,
    pub files: u64,
    pub samples_per_file: u64,
    pub sample_size: u64,
    pub sample_size_stdev: u64,
    pub batch_size: u64,
    /// Seconds per batch.
    pub compute_time: f64,
    pub read_threads: u64,
    pub prefetch: u64,
    /// A fraction, 0.9 for 90 %.
    pub au_threshold: f64,
    pub phases: Vec<TrainPhase>,
    /// One epoch per step of accelerators per rank (1, 2, 4 ... accelerators) instead of the
    /// epochs.
    pub accelerator_search: bool,
    /// Bytes per write call when generating, and per read call of a ranged read.
    pub bs: usize,
    /// The name of the dataset kept for later runs (`--dataset`), when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dataset: Option<String>,
    /// The kept dataset, once bound to the target.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) kept: Option<Kept>,
    /// Whether the phases were named (else a kept dataset already there skips generate).
    #[serde(skip)]
    pub phases_given: bool,
    /// Where the readers of each accelerator meet in an epoch.
    #[serde(skip)]
    pub(crate) lines: Lines,
}

/// The phases of a train job, in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TrainPhase {
    Generate,
    Train,
}

impl TrainPhase {
    const ALL: [TrainPhase; 2] = [TrainPhase::Generate, TrainPhase::Train];

    fn name(self) -> &'static str {
        match self {
            TrainPhase::Generate => "generate",
            TrainPhase::Train => "train",
        }
    }
}

/// What a worker does in a phase: write its share of the dataset, or be an accelerator for
/// an epoch, in a search only when it is among the first `active` of its rank.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TrainStep {
    Generate,
    Epoch { epoch: u64, active: Option<u64> },
}

impl Step for TrainStep {
    fn reads_data(self) -> bool {
        matches!(self, TrainStep::Epoch { .. })
    }
}

/// The accelerators per rank a search tries: 1, 2, 4 ... and `most`.
pub(crate) fn search_steps(most: u64) -> Vec<u64> {
    let mut steps: Vec<u64> = std::iter::successors(Some(1u64), |a| a.checked_mul(2))
        .take_while(|&a| a < most)
        .collect();
    steps.push(most);
    steps
}

/// A preset's batch size, samples per file and compute time per batch on `accelerator`, for
/// callers that size a dataset in batches (the mlperf-storage study); None for an unknown
/// preset.
pub fn preset_batch(name: &str, accelerator: Accelerator) -> Option<(u64, u64, Duration)> {
    profile(name).map(|p| (p.batch_size, p.samples_per_file, p.compute(accelerator)))
}

/// A count key's value, at least 1.
fn count(key: &'static str, given: Option<u64>, default: u64) -> Result<u64, ConfigError> {
    match given.unwrap_or(default) {
        0 => Err(ConfigError::value(key, 0, "give at least 1")),
        n => Ok(n),
    }
}

/// The profile's files times `scale`, at least one.
fn scaled_files(p: &Profile, scale: f64) -> u64 {
    ((p.files as f64 * scale).round() as u64).max(1)
}

impl Kind for TrainJob {
    const NAME: &'static str = "train";
    const SHARED: &'static [&'static str] = &["files", "phases", "bs", "preset", "scale"];
    const TIMED: bool = false;
    type Options = Options;
    type Step = TrainStep;

    fn validate(own: &Options, s: &SharedOptions, run: &RunSettings) -> Result<TrainJob, ConfigError> {
        let name = s.preset.as_deref().unwrap_or("unet3d");
        let p = profile(name).ok_or_else(|| {
            let names: Vec<&str> = PROFILES.iter().map(|p| p.name).collect();
            ConfigError::value("preset", format!("'{name}'"), format!("choose {}", names.join(", ")))
        })?;
        let accel = own.accelerator.as_deref().unwrap_or("h100");
        let accelerator = Accelerator::parse(accel)
            .ok_or_else(|| ConfigError::value("accelerator", format!("'{accel}'"), "choose h100 or a100"))?;
        if own.accelerators == Some(0) {
            return Err(ConfigError::value(
                "accelerators",
                0,
                "give at least 1 accelerator per rank",
            ));
        }
        if run.verify == Some(true) {
            return Err(
                "verify does not apply to train: its samples are read as ranges of shared files; leave out --verify"
                    .into(),
            );
        }
        let epochs = count("epochs", own.epochs, p.epochs)?;
        if epochs > MAX_EPOCHS {
            return Err(ConfigError::value(
                "epochs",
                epochs,
                format!("give at most {MAX_EPOCHS}"),
            ));
        }
        let files = match s.files {
            Some(_) if s.scale.is_some() => return Err("give either files or scale, not both".into()),
            Some(n) => count("files", Some(n), 1)?,
            None => scaled_files(&p, s.scale()?),
        };
        let size =
            |key, text: Option<&str>, default| text.map(|t| size_key(key, t)).transpose().map(|v| v.unwrap_or(default));
        let sample_size = size("sample_size", own.sample_size.as_deref(), p.sample_size)?;
        if sample_size == 0 {
            return Err(ConfigError::value(
                "sample_size",
                0,
                "give a sample size of at least 1 byte",
            ));
        }
        let compute = match own.compute_time.as_deref() {
            Some(t) => parse_duration(t).map_err(|e| ConfigError::unreadable("compute_time", e))?,
            None => p.compute(accelerator),
        };
        let au_threshold = match own.au_threshold {
            Some(pct) if !(0.0..=100.0).contains(&pct) => {
                return Err(ConfigError::value(
                    "au_threshold",
                    pct,
                    "give a percentage from 0 to 100",
                ))
            }
            Some(pct) => pct / 100.0,
            None => p.au,
        };
        let phases = match &s.phases {
            Some(list) => parse_phases(list, &TrainPhase::ALL, TrainPhase::name)?,
            None => TrainPhase::ALL.to_vec(),
        };
        if phases[0] != TrainPhase::Generate && own.dataset.is_none() {
            return Err(
                "train alone reads a dataset an earlier run kept: give --dataset NAME (the name --phases generate --dataset NAME kept it under), or keep the generate phase".into(),
            );
        }
        if let Some(name) = own.dataset.as_deref().filter(|n| !n.is_empty()) {
            kept::check_name(name).map_err(|e| ConfigError::value("dataset", format!("'{name}'"), e))?;
        }
        let accelerator_search = own.accelerator_search.unwrap_or(false);
        if accelerator_search && own.accelerators.is_none() {
            return Err(
                "accelerator_search needs accelerators: give --accelerators N, the most per rank it tries".into(),
            );
        }
        if accelerator_search && own.epochs.is_some() {
            return Err("accelerator_search runs one epoch per step: leave out epochs".into());
        }
        let mut job = TrainJob {
            preset: p.name,
            accelerator,
            accelerators: own.accelerators,
            epochs,
            files,
            samples_per_file: count("samples_per_file", own.samples_per_file, p.samples_per_file)?,
            sample_size,
            // A sample size of one's own keeps the profile's spread relative to the mean.
            sample_size_stdev: size(
                "sample_size_stdev",
                own.sample_size_stdev.as_deref(),
                (p.sample_size_stdev as f64 * sample_size as f64 / p.sample_size as f64).round() as u64,
            )?,
            batch_size: count("batch_size", own.batch_size, p.batch_size)?,
            compute_time: compute.as_secs_f64(),
            read_threads: count("read_threads", own.read_threads, p.read_threads)?,
            prefetch: count("prefetch", own.prefetch, p.prefetch)?,
            au_threshold,
            phases,
            accelerator_search,
            bs: s.block_size(1 << 20)?,
            dataset: None,
            kept: None,
            phases_given: s.phases.is_some(),
            lines: Lines::default(),
        };
        job.dataset = own.dataset.as_ref().map(|n| match n.as_str() {
            "" => kept::derived_name(&job),
            n => n.to_string(),
        });
        Ok(job)
    }

    fn phases(&self, index: usize, job: &Timing) -> Vec<Phase> {
        let d = self.dataset(0);
        let mut out = Vec::new();
        if self.phases.contains(&TrainPhase::Generate) {
            let params = vec![
                ("preset", json!(self.preset)),
                ("files", json!(self.files)),
                ("samples_per_file", json!(self.samples_per_file)),
                ("sample_size", json!(self.sample_size)),
                ("sample_size_stdev", json!(self.sample_size_stdev)),
            ];
            let label = match self.samples_per_file {
                1 => format!("generate {} files of 1 sample", self.files),
                n => format!("generate {} files of {n} samples", self.files),
            };
            out.push(Phase::new(index, job, TrainStep::Generate, "generate", label, RW_CLASSES, params).untimed());
        }
        // A search's steps, each an epoch with that many accelerators per rank; else the epochs
        // with all of them.
        let steps: Vec<(u64, Option<u64>)> = match (self.accelerator_search, self.accelerators) {
            (true, Some(most)) => search_steps(most as u64)
                .into_iter()
                .enumerate()
                .map(|(e, a)| (e as u64, Some(a)))
                .collect(),
            _ => (0..self.epochs).map(|e| (e, None)).collect(),
        };
        if self.phases.contains(&TrainPhase::Train) {
            for (e, active) in steps {
                let mut params = vec![
                    ("preset", json!(self.preset)),
                    ("accelerator", json!(self.accelerator)),
                    ("epoch", json!(e)),
                    ("samples", json!(d.samples())),
                    ("samples_per_file", json!(self.samples_per_file)),
                    ("sample_size", json!(self.sample_size)),
                    ("batch_size", json!(self.batch_size)),
                    ("compute_time_s", json!(self.compute_time)),
                    ("read_threads", json!(self.read_threads)),
                    ("prefetch", json!(self.prefetch)),
                    ("au_threshold", json!(self.au_threshold)),
                ];
                let accel = json!(self.accelerator);
                let accel = accel.as_str().unwrap_or("?");
                let label = match active {
                    Some(a) => {
                        params.push(("active_accelerators", json!(a)));
                        format!("search {a} x {} {accel}", self.preset)
                    }
                    None => format!("epoch {e} {} {accel}", self.preset),
                };
                let step = TrainStep::Epoch { epoch: e, active };
                out.push(Phase::new(index, job, step, "train", label, RW_CLASSES, params).untimed());
            }
        }
        out
    }

    fn needs(&self) -> Vec<Capability> {
        if self.samples_per_file > 1 {
            vec![Capability::RangedRead]
        } else {
            Vec::new()
        }
    }

    fn setup_dirs(&self, index: usize, _: usize) -> Box<dyn Iterator<Item = String> + '_> {
        match self.kept {
            Some(_) => Box::new(std::iter::empty()),
            None => Box::new(std::iter::once(train_dir(index))),
        }
    }

    /// Any accelerator may read any file of the shuffled dataset.
    fn files_read(&self, index: usize, step: TrainStep, _: usize, _: &[u64]) -> Vec<String> {
        if step == TrainStep::Generate {
            return Vec::new();
        }
        let mut path = String::new();
        (0..self.files)
            .map(|f| {
                self.file_path(&mut path, index, f);
                path.clone()
            })
            .collect()
    }

    async fn run<C: Client>(
        &self,
        worker: &mut Worker<C>,
        ctx: &JobContext,
        step: TrainStep,
        _: Option<u64>,
        rec: &mut Recorder<'_>,
    ) {
        match step {
            TrainStep::Generate => worker.generate(ctx, self, rec).await,
            TrainStep::Epoch { epoch, active } => worker.epoch(ctx, self, epoch, active, rec).await,
        }
    }

    fn file_bs(&self) -> usize {
        chunk_for(self.bs, self.dataset(0).largest_sample() * self.samples_per_file)
    }

    fn written(&self) -> Written {
        Written {
            shape: DataShape::default(),
            block: self.bs,
            chunk: self.file_bs(),
        }
    }

    fn workers(&self) -> Option<usize> {
        self.accelerators
    }

    fn workers_each(&self) -> usize {
        usize::try_from(self.read_threads).unwrap_or(usize::MAX)
    }

    fn binds_to_target(&self) -> bool {
        self.dataset.is_some()
    }
    fn on_target(&mut self, index: usize, at: &TargetAt) -> Result<Option<String>, String> {
        let Some(name) = self.dataset.clone() else {
            return Ok(None);
        };
        match kept::bind(self, &name, index, at)? {
            kept::Bound::Generate(k) => {
                let note = format!(
                    "generates dataset '{name}' in {}, kept after the run (later runs with --dataset {name} train on it; `dfsbench clean {}` removes it)",
                    k.path, k.path
                );
                self.kept = Some(k);
                Ok(at.root.then_some(note))
            }
            kept::Bound::Read(k, m) => {
                self.phases.retain(|&p| p != TrainPhase::Generate);
                let note = format!(
                    "trains on dataset '{name}' in {} ({} files, {} bytes, generated by run {}): not generated again",
                    k.path, m.files, m.bytes, m.made_by_run
                );
                self.kept = Some(k);
                Ok(at.root.then_some(note))
            }
        }
    }
}

impl TrainJob {
    /// The dataset, its sizes drawn from `seed`.
    fn dataset(&self, seed: u64) -> Dataset {
        Dataset {
            files: self.files,
            samples_per_file: self.samples_per_file,
            mean: self.sample_size,
            stdev: self.sample_size_stdev,
            seed,
        }
    }

    /// Batches the readers of an accelerator may load ahead of it.
    fn depth(&self) -> usize {
        usize::try_from(self.read_threads * self.prefetch).unwrap_or(usize::MAX)
    }

    fn compute(&self) -> Duration {
        Duration::from_secs_f64(self.compute_time)
    }
}

/// The job's dataset directory in the run directory.
fn train_dir(job: usize) -> String {
    format!("j{job}-train")
}

impl TrainJob {
    /// The path of the dataset's file `file`: in the run directory, or in the kept dataset's
    /// beside it.
    fn file_path(&self, s: &mut String, job: usize, file: u64) {
        s.clear();
        match &self.kept {
            Some(k) => {
                s.push_str("../");
                s.push_str(&k.dir);
            }
            None => {
                s.push('j');
                push_num(s, job as u64);
                s.push_str("-train");
            }
        }
        s.push_str("/f");
        push_num(s, file);
    }
}
