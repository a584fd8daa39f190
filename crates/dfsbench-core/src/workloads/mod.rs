//! The workloads, one module each, and their registry.
//!
//! A workload module owns everything that is only its own: its options (one struct that is both
//! its command-line flags and its workload-file keys), their validation into a typed job, the
//! phases it runs, the backend capabilities it needs, the directories it makes, its operation
//! loop and the parameters its results show. It implements [`Kind`]. The [`registry!`] line at
//! the end of this file is the only other place that names it: adding a workload is a new
//! module and one line there (docs/architecture.md walks through it).

use std::fmt::Debug;

use dfsbench_backends::{Capabilities, Capability, Client, TargetInfo};
use serde::{Deserialize, Serialize};

use dfsbench_result::PhaseResult;

use crate::data::Written;
use crate::error::ConfigError;
use crate::stats::Recorder;
use crate::worker::{JobContext, Worker};

pub mod checkpoint;
pub mod files;
pub mod io;
pub mod io500;
pub mod iterate;
mod keys;
pub mod meta;
pub mod mix;
mod phase;
mod shared;
#[cfg(feature = "toy-workload")]
#[path = "../../tests/toy/mod.rs"]
pub mod toy;
pub mod train;
mod whole;

pub use files::{FilePhase, FileSet, FilesJob};
pub use io::{IoJob, Rw};
pub use iterate::IterateJob;
pub(crate) use keys::{field_names, from_keys};
pub use meta::{DirLayout, MetaJob, MetaPhase};
pub use mix::MixJob;
pub use phase::Phase;
pub use phase::Timing;
pub(crate) use shared::parse_flag;
pub use shared::SharedOptions;
pub use train::TrainJob;

/// The run directory's directory of the files jobs name (io's `filename`): one for the run,
/// which every job naming a file makes if it is not there yet.
pub(crate) const RUN_FILES: &str = "files";

/// The run-wide settings a workload's validation reads (from the run's flags or file).
#[derive(Debug, Clone, Copy, Default)]
pub struct RunSettings {
    /// `--invalidate`, when given.
    pub invalidate: Option<bool>,
    /// `--shuffle`, when given.
    pub shuffle: Option<bool>,
    /// `--verify`, when given.
    pub verify: Option<bool>,
}

/// The opened target as [`Kind::on_target`] sees it.
#[derive(Clone, Copy)]
pub struct TargetAt<'a> {
    pub info: &'a TargetInfo,
    pub run_id: &'a str,
    /// The run's `--seed`.
    pub seed: u64,
    /// Rank 0, which binds first; the others bind after it, to what it made.
    pub root: bool,
    /// Beside the run directory in the target; None where nothing outlives the run.
    pub beside: Option<&'a dyn dfsbench_backends::Beside>,
}

/// What one workload module provides.
#[allow(async_fn_in_trait)] // run on the worker's own thread: its future is never sent.
pub trait Kind: Sized + Clone + Debug + Serialize + Send + Sync {
    /// The name users give (`--workload NAME`, `workload = "NAME"`).
    const NAME: &'static str;
    /// The keys of [`SharedOptions`] the workload reads; a job that sets another is refused.
    const SHARED: &'static [&'static str];
    /// Whether its phases may be time-based or paced (`duration`, `rate`, `until_stable`...).
    const TIMED: bool = true;
    /// The flags and workload-file keys only this workload has.
    type Options: clap::Args + Serialize + for<'de> Deserialize<'de> + Default + Clone + Debug + PartialEq;
    /// Which of its phases a worker runs.
    type Step: Step;

    /// The typed job from the options; errors name the key and the fix.
    fn validate(own: &Self::Options, shared: &SharedOptions, run: &RunSettings) -> Result<Self, ConfigError>;
    /// The phases of job number `index`, in order.
    fn phases(&self, index: usize, job: &Timing) -> Vec<Phase>;
    /// What it needs from the backend.
    fn needs(&self) -> Vec<Capability>;
    /// The directories rank 0 makes before the first phase, for `workers` workers.
    fn setup_dirs(&self, index: usize, workers: usize) -> Box<dyn Iterator<Item = String> + '_>;
    /// The files of worker `owner` that a phase reads, so their cached pages can be dropped
    /// first; `existing` is how many files that worker has per file set.
    fn files_read(&self, _index: usize, _step: Self::Step, _owner: usize, _existing: &[u64]) -> Vec<String> {
        Vec::new()
    }
    /// Set up what a phase's step needs before the phase's clock starts (open its file, fill
    /// its buffers), kept in the worker's state ([`Worker::keep_state`]) for [`Kind::run`]: the
    /// phase starts, on every rank at once, when every worker is ready, so setting up is not
    /// timed as part of it (fio starts a job's clock after its setup too). What the ranks
    /// agreed on after the last phase ([`Kind::agreed`]) is in `worker.agreed`.
    async fn prepare<C: Client>(&self, _worker: &mut Worker<C>, _ctx: &JobContext, _step: Self::Step) {}
    /// Run one phase's step on a worker.
    async fn run<C: Client>(
        &self,
        worker: &mut Worker<C>,
        ctx: &JobContext,
        step: Self::Step,
        until: Option<u64>,
        rec: &mut Recorder<'_>,
    );
    /// Requests in flight per worker, which the backend's client is opened for.
    fn queue_depth(&self) -> usize {
        1
    }
    /// Bytes of a worker's whole-file buffer (0: it moves no whole files).
    fn file_bs(&self) -> usize {
        0
    }
    /// What it writes: the data options and the chunk of shared data it writes from.
    fn written(&self) -> Written {
        Written::default()
    }
    /// Whether its read phases read another worker's data even without `--shuffle`.
    fn shuffles(&self) -> bool {
        false
    }
    /// Whether it writes the verify pattern and checks its reads, in a run that verifies
    /// (io's skip_verify: fio's jobs without verify beside jobs with it).
    fn verifies(&self) -> bool {
        true
    }
    /// Refuse what the job cannot do with `workers` workers per rank.
    fn check_workers(&self, _workers: usize) -> Result<(), ConfigError> {
        Ok(())
    }
    /// Workers per rank the job's own options ask for (train's accelerators), when they do.
    fn workers(&self) -> Option<usize> {
        None
    }
    /// Workers that each of those is (train's parallel readers of an accelerator).
    fn workers_each(&self) -> usize {
        1
    }
    /// Adapt defaulted choices to the backend; returns a note on what was left out.
    fn fit(&mut self, _caps: Capabilities, _backend: &str) -> Option<String> {
        None
    }
    /// Fit the job to a block device of `bytes` as the target (`--overwrite-device`), run by
    /// `workers` workers; only workloads of positional I/O on one file can.
    fn on_device(&mut self, _bytes: u64, _workers: usize) -> Result<(), String> {
        Err("only io jobs run on a block device".into())
    }
    /// The file (in the run directory) whose size, when job `index` starts, is its size: one
    /// an earlier job made (fio's job without size on an existing file).
    fn sized_by_file(&self, _index: usize) -> Option<String> {
        None
    }
    /// Take the size of [`Kind::sized_by_file`]'s file, `bytes`, which `workers` workers share.
    fn take_file_size(&mut self, _bytes: u64, _workers: usize) -> Result<(), String> {
        Ok(())
    }
    /// Whether [`Kind::on_target`] has anything to bind: the ranks agree on the binding only
    /// then, so that other runs pay no extra round.
    fn binds_to_target(&self) -> bool {
        false
    }
    /// Bind the job to what its target holds before anything runs (train's kept dataset):
    /// rank 0 first (`at.root`), then the other ranks; returns a note for the user.
    fn on_target(&mut self, _index: usize, _at: &TargetAt) -> Result<Option<String>, String> {
        Ok(None)
    }
    /// What every worker of every rank must run alike in the next phase, which rank 0 reads
    /// from the merged `result` of this one and hands to all ranks with the phase's end (io's
    /// `auto`: the engine the probe picked); None when there is nothing to agree on.
    fn agreed(&self, _result: &PhaseResult) -> Option<serde_json::Value> {
        None
    }
}

/// A phase's step, and what the runner must know of it.
pub trait Step: Copy + Debug + PartialEq + Send + Sync {
    /// It reads what earlier phases made: with `--shuffle`, another worker's.
    fn reads_shuffled(self) -> bool {
        false
    }
    /// It reads file data, whose cached pages are dropped before it when it is measured.
    fn reads_data(self) -> bool {
        false
    }
    /// It creates or writes the files of set N, which a time limit can leave uneven between
    /// workers (then a wear-out step evens them out).
    fn fills_set(self) -> Option<usize> {
        None
    }
}

/// The workload names as a sentence says them: "meta, files, io, mix or iterate".
pub(crate) fn names_in_words() -> String {
    match names().split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// Generates, from one line per workload, the enums and the dispatch over them.
macro_rules! registry {
    ($($(#[$attr:meta])* $variant:ident => $module:ident :: $job:ident),* $(,)?) => {
        /// A validated job's workload.
        // One a job, never in a hot loop: an io job's many fio options may make it large.
        #[allow(clippy::large_enum_variant)]
        #[derive(Debug, Clone, Serialize)]
        #[serde(tag = "workload", rename_all = "lowercase")]
        pub enum Workload {
            $($(#[$attr])* $variant($module::$job)),*
        }

        /// What the workers do in one phase: a step of the job's workload.
        #[derive(Debug, Clone, Copy, PartialEq)]
        pub enum PhaseOp {
            $($(#[$attr])* $variant(<$module::$job as Kind>::Step)),*
        }

        $($(#[$attr])* impl From<<$module::$job as Kind>::Step> for PhaseOp {
            fn from(step: <$module::$job as Kind>::Step) -> PhaseOp {
                PhaseOp::$variant(step)
            }
        })*

        /// The options of every workload: flags and workload-file keys, one struct each.
        #[derive(clap::Args, Debug, Default, Clone, PartialEq, Serialize)]
        pub struct WorkloadOptions {
            $(
                $(#[$attr])*
                #[command(flatten)]
                #[serde(flatten)]
                pub $module: <$module::$job as Kind>::Options,
            )*
        }

        /// The workload names, in the registry's order.
        pub fn names() -> Vec<&'static str> {
            vec![$($(#[$attr])* <$module::$job as Kind>::NAME),*]
        }

        impl Workload {
            pub fn name(&self) -> &'static str {
                match self {
                    $($(#[$attr])* Workload::$variant(_) => <$module::$job as Kind>::NAME),*
                }
            }
        }

        /// Validate the options of workload `name`; None when there is no such workload.
        pub(crate) fn validate(
            name: &str,
            own: &WorkloadOptions,
            shared: &SharedOptions,
            run: &RunSettings,
        ) -> Option<Result<Workload, ConfigError>> {
            match name {
                $($(#[$attr])* <$module::$job as Kind>::NAME => {
                    Some(<$module::$job as Kind>::validate(&own.$module, shared, run).map(Workload::$variant))
                })*
                _ => None,
            }
        }

        /// The keys a workload accepts besides the job's common ones: the shared keys it reads
        /// and its own; and the keys of every workload's own options, by workload.
        pub(crate) fn accepted(name: &str) -> Option<(&'static [&'static str], &'static [&'static str])> {
            match name {
                $($(#[$attr])* <$module::$job as Kind>::NAME => Some((
                    <$module::$job as Kind>::SHARED,
                    field_names::<<$module::$job as Kind>::Options>(),
                )),)*
                _ => None,
            }
        }

        /// Which workload's own options hold `key`.
        pub(crate) fn owner_of(key: &str) -> Option<&'static str> {
            let owners: Vec<(&'static str, &'static [&'static str])> =
                vec![$($(#[$attr])* (<$module::$job as Kind>::NAME, field_names::<<$module::$job as Kind>::Options>())),*];
            owners.into_iter().find(|(_, keys)| keys.contains(&key)).map(|(name, _)| name)
        }

        /// Whether workload `name` may be time-based or paced.
        pub(crate) fn timed(name: &str) -> bool {
            match name {
                $($(#[$attr])* <$module::$job as Kind>::NAME => <$module::$job as Kind>::TIMED,)*
                _ => true,
            }
        }

        /// The workload options read from a workload file's job: each workload's keys go to
        /// its own struct.
        pub(crate) fn options_from(table: &toml::Table) -> Result<WorkloadOptions, String> {
            let mut out = WorkloadOptions::default();
            $(
                $(#[$attr])*
                {
                    out.$module = from_keys(table)?;
                }
            )*
            Ok(out)
        }

        /// Set a worker up for one phase's step of the job, before the phase starts.
        pub(crate) async fn prepare_step<C: Client>(workload: &Workload, worker: &mut Worker<C>, ctx: &JobContext, op: PhaseOp) {
            match (workload, op) {
                $($(#[$attr])* (Workload::$variant(job), PhaseOp::$variant(step)) => job.prepare(worker, ctx, step).await,)*
                #[allow(unreachable_patterns)]
                _ => unreachable!("a phase runs a step of its own job's workload"),
            }
        }

        /// Run one phase's step of the job on a worker.
        pub(crate) async fn run_step<C: Client>(
            workload: &Workload,
            worker: &mut Worker<C>,
            ctx: &JobContext,
            op: PhaseOp,
            until: Option<u64>,
            rec: &mut Recorder<'_>,
        ) {
            match (workload, op) {
                $($(#[$attr])* (Workload::$variant(job), PhaseOp::$variant(step)) => job.run(worker, ctx, step, until, rec).await,)*
                #[allow(unreachable_patterns)]
                _ => unreachable!("a phase runs a step of its own job's workload"),
            }
        }

        impl Workload {
            pub(crate) fn phases(&self, index: usize, job: &Timing) -> Vec<Phase> {
                match self {
                    $($(#[$attr])* Workload::$variant(w) => w.phases(index, job)),*
                }
            }
            pub(crate) fn needs(&self) -> Vec<Capability> {
                match self {
                    $($(#[$attr])* Workload::$variant(w) => w.needs()),*
                }
            }
            pub(crate) fn setup_dirs(&self, index: usize, workers: usize) -> Box<dyn Iterator<Item = String> + '_> {
                match self {
                    $($(#[$attr])* Workload::$variant(w) => w.setup_dirs(index, workers)),*
                }
            }
            pub(crate) fn files_read(&self, index: usize, op: PhaseOp, owner: usize, existing: &[u64]) -> Vec<String> {
                match (self, op) {
                    $($(#[$attr])* (Workload::$variant(w), PhaseOp::$variant(step)) => w.files_read(index, step, owner, existing),)*
                    #[allow(unreachable_patterns)]
                    _ => Vec::new(),
                }
            }
            pub(crate) fn queue_depth(&self) -> usize {
                match self {
                    $($(#[$attr])* Workload::$variant(w) => w.queue_depth()),*
                }
            }
            pub(crate) fn file_bs(&self) -> usize {
                match self {
                    $($(#[$attr])* Workload::$variant(w) => w.file_bs()),*
                }
            }
            pub(crate) fn written(&self) -> Written {
                match self {
                    $($(#[$attr])* Workload::$variant(w) => w.written()),*
                }
            }
            pub(crate) fn verifies(&self) -> bool {
                match self {
                    $($(#[$attr])* Workload::$variant(w) => w.verifies()),*
                }
            }
            pub(crate) fn shuffles(&self) -> bool {
                match self {
                    $($(#[$attr])* Workload::$variant(w) => w.shuffles()),*
                }
            }
            pub(crate) fn check_workers(&self, workers: usize) -> Result<(), ConfigError> {
                match self {
                    $($(#[$attr])* Workload::$variant(w) => w.check_workers(workers)),*
                }
            }
            pub(crate) fn workers(&self) -> Option<usize> {
                match self {
                    $($(#[$attr])* Workload::$variant(w) => w.workers()),*
                }
            }
            pub(crate) fn workers_each(&self) -> usize {
                match self {
                    $($(#[$attr])* Workload::$variant(w) => w.workers_each()),*
                }
            }
            pub(crate) fn fit(&mut self, caps: Capabilities, backend: &str) -> Option<String> {
                match self {
                    $($(#[$attr])* Workload::$variant(w) => w.fit(caps, backend)),*
                }
            }
            pub(crate) fn on_device(&mut self, bytes: u64, workers: usize) -> Result<(), String> {
                match self {
                    $($(#[$attr])* Workload::$variant(w) => w.on_device(bytes, workers)),*
                }
            }
            pub(crate) fn sized_by_file(&self, index: usize) -> Option<String> {
                match self {
                    $($(#[$attr])* Workload::$variant(w) => w.sized_by_file(index)),*
                }
            }
            pub(crate) fn take_file_size(&mut self, bytes: u64, workers: usize) -> Result<(), String> {
                match self {
                    $($(#[$attr])* Workload::$variant(w) => w.take_file_size(bytes, workers)),*
                }
            }
            pub(crate) fn binds_to_target(&self) -> bool {
                match self {
                    $($(#[$attr])* Workload::$variant(w) => w.binds_to_target()),*
                }
            }
            pub(crate) fn on_target(&mut self, index: usize, at: &TargetAt) -> Result<Option<String>, String> {
                match self {
                    $($(#[$attr])* Workload::$variant(w) => w.on_target(index, at)),*
                }
            }
            pub(crate) fn agreed(&self, result: &PhaseResult) -> Option<serde_json::Value> {
                match self {
                    $($(#[$attr])* Workload::$variant(w) => w.agreed(result)),*
                }
            }
        }

        impl PhaseOp {
            pub fn reads_shuffled(self) -> bool {
                match self {
                    $($(#[$attr])* PhaseOp::$variant(s) => s.reads_shuffled()),*
                }
            }
            pub fn reads_data(self) -> bool {
                match self {
                    $($(#[$attr])* PhaseOp::$variant(s) => s.reads_data()),*
                }
            }
            pub fn fills_set(self) -> Option<usize> {
                match self {
                    $($(#[$attr])* PhaseOp::$variant(s) => s.fills_set()),*
                }
            }
        }
    };
}

registry! {
    Meta => meta::MetaJob,
    Files => files::FilesJob,
    Io => io::IoJob,
    Mix => mix::MixJob,
    Iterate => iterate::IterateJob,
    Io500 => io500::Io500Job,
    Train => train::TrainJob,
    Checkpoint => checkpoint::CheckpointJob,
    #[cfg(feature = "toy-workload")]
    Toy => toy::ToyJob,
}
