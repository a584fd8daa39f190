//! What to run: workload files and command-line flags, validated into [`RunConfig`].
//!
//! Both sources fill the same flat [`JobSpec`] (fio's flag names where the concept is the same),
//! so a flag and a workload-file key always mean one thing. Validation turns specs into typed
//! [`Job`]s and names the offending key and its fix on error.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::dist::{Mix, SizeDist};
use crate::load::{parse_band, Arrival, Stable};
use crate::units::{format_size, parse_duration, parse_size};
use dfsbench_backends::IoEngine;

/// Workers when neither flag nor file says.
pub const DEFAULT_WORKERS: usize = 4;
/// The lowest open-loop rate: one operation per 1000 s over all workers. Lower rates would
/// schedule the first operation beyond any phase (and, split over a million workers, beyond
/// what the clock can count).
pub const MIN_RATE: f64 = 0.001;
/// Most iterations of an iterate job: each is a phase of its own with its own result.
pub const MAX_ITERATIONS: u64 = 10_000;
/// Most files in a mix job's pool per worker: the pool's sizes are kept in memory (16 bytes
/// a file).
pub const MAX_MIX_FILES: u64 = 1 << 24;
/// Errors after which a run stops, unless `max_errors` says otherwise.
pub const DEFAULT_MAX_ERRORS: u64 = 1000;
/// The largest workload file read: real ones are a few hundred bytes.
pub const MAX_WORKLOAD_FILE: u64 = 1 << 20;

/// A workload file: run settings and `[[job]]` tables. It serializes back to TOML (keys that are
/// `None` are left out), which is how a study hands a point to `dfsbench run` in other processes.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadFile {
    pub target: Option<String>,
    #[serde(flatten)]
    pub run: RunSpec,
    #[serde(default, rename = "job")]
    pub jobs: Vec<JobSpec>,
}

/// Settings of the whole run.
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RunSpec {
    /// Check the content of every byte read.
    pub verify: Option<bool>,
    /// Keep the run directory and its files after the run.
    pub keep: Option<bool>,
    /// Stop the run after this many errors (0: never).
    pub max_errors: Option<u64>,
    /// Seed of random offsets and operation choices.
    pub seed: Option<u64>,
    /// Create the S3 bucket if it does not exist.
    pub create_bucket: Option<bool>,
    /// Retries of temporary failures per request (network backends; 0: none).
    pub retries: Option<u32>,
    /// Read phases read another rank's data (IOR -C, mdtest -N).
    pub shuffle: Option<bool>,
    /// After a time-limited create/write phase, every worker catches up with the busiest one
    /// (IOR's stoneWallingWearOut).
    pub stonewall_wear_out: Option<bool>,
    /// Defaults for every job.
    pub workers: Option<usize>,
    pub threads: Option<usize>,
    /// Measure local disk throughput and the round trip and bandwidth to the target first.
    pub null_tests: Option<bool>,
    /// Server processes on this host whose CPU every phase records (a lab's MinIO, ...).
    pub server_pids: Option<Vec<u32>>,
    /// Drop the client's cached pages of the files a read phase reads before it (fio's
    /// `invalidate`, true or 1 by default).
    #[serde(default, deserialize_with = "flag_or_01", skip_serializing_if = "Option::is_none")]
    pub invalidate: Option<bool>,
    /// Also drop the kernel's caches before every read phase (root only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drop_caches: Option<bool>,
}

/// A boolean key that also takes fio's 0 and 1.
fn flag_or_01<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Flag {
        Bool(bool),
        Int(i64),
    }
    match Option::<Flag>::deserialize(d)? {
        None => Ok(None),
        Some(Flag::Bool(b)) => Ok(Some(b)),
        Some(Flag::Int(0)) => Ok(Some(false)),
        Some(Flag::Int(1)) => Ok(Some(true)),
        Some(Flag::Int(n)) => Err(serde::de::Error::custom(format!("{n} is not 0 or 1 (or true/false)"))),
    }
}

/// One job as written in a file or given as flags. Every key is optional; validation fills
/// defaults and rejects keys that do not belong to the workload.
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct JobSpec {
    pub name: Option<String>,
    pub workload: Option<String>,
    pub workers: Option<usize>,
    pub threads: Option<usize>,
    pub duration: Option<String>,
    pub ramp: Option<String>,
    // meta and files
    pub files: Option<u64>,
    pub phases: Option<Vec<String>>,
    // meta
    pub layout: Option<String>,
    pub dirs: Option<u64>,
    pub branch: Option<u64>,
    // files
    pub file_size: Option<String>,
    pub sizes: Option<Vec<String>>,
    // files and io
    pub bs: Option<String>,
    pub direct: Option<bool>,
    pub fsync: Option<bool>,
    // io
    pub rw: Option<String>,
    pub size: Option<String>,
    pub iodepth: Option<usize>,
    pub rwmixread: Option<u32>,
    pub shared_file: Option<bool>,
    pub ioengine: Option<String>,
    // mix
    pub mix: Option<Vec<String>>,
    pub ops: Option<u64>,
    // iterate
    pub iterations: Option<u64>,
    pub shuffle: Option<bool>,
    // open-loop load and steady state (any workload where noted)
    pub rate: Option<f64>,
    pub rate_steps: Option<Vec<f64>>,
    pub arrival: Option<String>,
    pub until_stable: Option<bool>,
    pub stable_band: Option<String>,
    pub stable_window: Option<String>,
}

/// A validated run.
#[derive(Debug, Clone, Serialize)]
pub struct RunConfig {
    pub verify: bool,
    pub keep: bool,
    pub max_errors: u64,
    pub seed: u64,
    pub create_bucket: bool,
    pub retries: u32,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub null_tests: bool,
    /// Server processes whose CPU every phase records, on rank 0's host.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub server_pids: Vec<u32>,
    /// Read phases read the data of the workers a node away (multi-process runs).
    pub shuffle: bool,
    /// Drop the cached pages of a read phase's files before it (fio's invalidate=1).
    pub invalidate: bool,
    /// Also drop the kernel's caches before every read phase.
    pub drop_caches: bool,
    /// After a time-limited create or write phase, every worker creates or writes files until
    /// it has as many as the busiest worker (unmeasured), so later phases find them all.
    pub stonewall_wear_out: bool,
    pub jobs: Vec<Job>,
}

/// A validated job.
#[derive(Debug, Clone, Serialize)]
pub struct Job {
    pub name: String,
    pub workers: usize,
    /// OS threads that carry the workers (None: the backend decides).
    pub threads: Option<usize>,
    #[serde(with = "opt_secs")]
    pub duration: Option<Duration>,
    #[serde(with = "secs")]
    pub ramp: Duration,
    /// Open-loop rate: total operations per second over all workers (None: closed loop).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    /// Rates to run each time-based phase at, one after the other (SPECsfs-style curve).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rate_steps: Vec<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arrival: Option<Arrival>,
    /// End time-based phases early once throughput is steady.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub until_stable: Option<Stable>,
    #[serde(flatten)]
    pub workload: Workload,
}

#[derive(Debug, Clone, Serialize)]
#[serde(tag = "workload", rename_all = "lowercase")]
pub enum Workload {
    Meta(MetaJob),
    Files(FilesJob),
    Io(IoJob),
    Mix(MixJob),
    Iterate(IterateJob),
}

impl Workload {
    pub fn name(&self) -> &'static str {
        match self {
            Workload::Meta(_) => "meta",
            Workload::Files(_) => "files",
            Workload::Io(_) => "io",
            Workload::Mix(_) => "mix",
            Workload::Iterate(_) => "iterate",
        }
    }

    /// Bytes per whole-file write/read call, for workloads that move whole files.
    pub fn file_bs(&self) -> usize {
        match self {
            Workload::Files(f) => f.bs,
            Workload::Mix(m) => m.bs,
            Workload::Iterate(i) => i.bs,
            Workload::Meta(_) | Workload::Io(_) => 0,
        }
    }
}

/// One phase of operations drawn by weight (DFS-Perf's mixture, warp's mixed) over a pool of
/// files per worker whose sizes follow a distribution.
#[derive(Debug, Clone, Serialize)]
pub struct MixJob {
    pub mix: Mix,
    pub sizes: SizeDist,
    /// Files in each worker's pool, written before the mix starts.
    pub files: u64,
    /// Operations per worker when the job is not time-based.
    pub ops: u64,
    pub bs: usize,
    pub direct: bool,
    pub fsync: bool,
}

/// DFS-Perf's iterative workload: each iteration reads the files of the previous one and
/// writes new ones; with shuffle a worker reads another worker's files.
#[derive(Debug, Clone, Serialize)]
pub struct IterateJob {
    pub iterations: u64,
    pub shuffle: bool,
    /// Files per worker and iteration.
    pub files: u64,
    pub file_size: u64,
    pub bs: usize,
    pub direct: bool,
    pub fsync: bool,
}

/// mdtest-style metadata phases.
#[derive(Debug, Clone, Serialize)]
pub struct MetaJob {
    /// Files per worker.
    pub files: u64,
    pub layout: DirLayout,
    /// Directories per worker for mkdir/rmdir.
    pub dirs: u64,
    /// Fan-out of the directory tree (0: all directories side by side).
    pub branch: u64,
    pub phases: Vec<MetaPhase>,
    /// Phases named by the user, kept even where the backend lacks them (then it is an error).
    #[serde(skip)]
    pub explicit_phases: bool,
    /// Files given by the user: a time-based create stops there too (mdtest's `-I` with `-W`);
    /// without it, a time-based create goes on until the time is up.
    #[serde(skip)]
    pub explicit_files: bool,
}

/// Where workers put their files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DirLayout {
    /// One directory per worker (mdtest -u).
    PerWorker,
    /// All workers in one directory.
    Shared,
}

/// Metadata phases, in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MetaPhase {
    Mkdir,
    Create,
    Stat,
    Open,
    List,
    Rename,
    Delete,
    Rmdir,
}

impl MetaPhase {
    pub const ALL: [MetaPhase; 8] = [
        MetaPhase::Mkdir,
        MetaPhase::Create,
        MetaPhase::Stat,
        MetaPhase::Open,
        MetaPhase::List,
        MetaPhase::Rename,
        MetaPhase::Delete,
        MetaPhase::Rmdir,
    ];

    pub fn name(self) -> &'static str {
        match self {
            MetaPhase::Mkdir => "mkdir",
            MetaPhase::Create => "create",
            MetaPhase::Stat => "stat",
            MetaPhase::Open => "open",
            MetaPhase::List => "list",
            MetaPhase::Rename => "rename",
            MetaPhase::Delete => "delete",
            MetaPhase::Rmdir => "rmdir",
        }
    }
}

/// Whole-file write/read/delete over one or more (count, size) sets.
#[derive(Debug, Clone, Serialize)]
pub struct FilesJob {
    pub sets: Vec<FileSet>,
    /// Bytes per write/read call.
    pub bs: usize,
    pub direct: bool,
    pub fsync: bool,
    pub phases: Vec<FilePhase>,
}

/// `count` files of `size` bytes per worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct FileSet {
    pub count: u64,
    pub size: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FilePhase {
    Write,
    Read,
    Delete,
}

impl FilePhase {
    pub fn name(self) -> &'static str {
        match self {
            FilePhase::Write => "write",
            FilePhase::Read => "read",
            FilePhase::Delete => "delete",
        }
    }
}

/// fio-style block I/O.
#[derive(Debug, Clone, Serialize)]
pub struct IoJob {
    pub rw: Rw,
    pub bs: usize,
    /// File size per worker (the region of each worker with a shared file).
    pub size: u64,
    pub iodepth: usize,
    /// Percentage of reads in mixed patterns.
    pub rwmixread: u32,
    pub direct: bool,
    /// fsync the file when a worker's writes end.
    pub fsync: bool,
    pub shared_file: bool,
    pub ioengine: IoEngine,
}

/// Access pattern, named as fio's `rw`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Rw {
    Read,
    Write,
    Randread,
    Randwrite,
    Readwrite,
    Randrw,
}

impl Rw {
    pub fn name(self) -> &'static str {
        match self {
            Rw::Read => "read",
            Rw::Write => "write",
            Rw::Randread => "randread",
            Rw::Randwrite => "randwrite",
            Rw::Readwrite => "readwrite",
            Rw::Randrw => "randrw",
        }
    }
    pub fn random(self) -> bool {
        matches!(self, Rw::Randread | Rw::Randwrite | Rw::Randrw)
    }
    pub fn reads(self) -> bool {
        !matches!(self, Rw::Write | Rw::Randwrite)
    }
    pub fn writes(self) -> bool {
        !matches!(self, Rw::Read | Rw::Randread)
    }
}

/// A validation error: one line naming the key, the bad value and the fix.
pub type ConfigError = String;

impl RunSpec {
    /// Later values win: `self` are the defaults, `over` the overrides.
    pub fn merge(&self, over: &RunSpec) -> RunSpec {
        RunSpec {
            verify: over.verify.or(self.verify),
            shuffle: over.shuffle.or(self.shuffle),
            stonewall_wear_out: over.stonewall_wear_out.or(self.stonewall_wear_out),
            keep: over.keep.or(self.keep),
            max_errors: over.max_errors.or(self.max_errors),
            seed: over.seed.or(self.seed),
            create_bucket: over.create_bucket.or(self.create_bucket),
            retries: over.retries.or(self.retries),
            workers: over.workers.or(self.workers),
            threads: over.threads.or(self.threads),
            null_tests: over.null_tests.or(self.null_tests),
            server_pids: over.server_pids.clone().or_else(|| self.server_pids.clone()),
            invalidate: over.invalidate.or(self.invalidate),
            drop_caches: over.drop_caches.or(self.drop_caches),
        }
    }
}

impl JobSpec {
    /// Fill every key unset here from `over` winning: used to apply command-line flags on top of
    /// a workload file's jobs.
    pub fn overlay(&self, over: &JobSpec) -> JobSpec {
        macro_rules! pick {
            ($($f:ident),*) => { JobSpec { $($f: over.$f.clone().or_else(|| self.$f.clone())),* } };
        }
        pick!(
            name,
            workload,
            workers,
            threads,
            duration,
            ramp,
            files,
            phases,
            layout,
            dirs,
            branch,
            file_size,
            sizes,
            bs,
            direct,
            fsync,
            rw,
            size,
            iodepth,
            rwmixread,
            shared_file,
            ioengine,
            mix,
            ops,
            iterations,
            shuffle,
            rate,
            rate_steps,
            arrival,
            until_stable,
            stable_band,
            stable_window
        )
    }
}

/// Validate a run: `run` settings, and jobs whose unset keys fall back to `run`'s defaults.
/// Errors quote what was given, on one line whatever it holds.
pub fn validate(run: &RunSpec, jobs: &[JobSpec]) -> Result<RunConfig, ConfigError> {
    validate_run(run, jobs).map_err(|e| dfsbench_backends::one_line(&e))
}

fn validate_run(run: &RunSpec, jobs: &[JobSpec]) -> Result<RunConfig, ConfigError> {
    if jobs.is_empty() {
        return Err(
            "no job to run: give --workload meta|files|io|mix|iterate or a workload file with [[job]] tables".into(),
        );
    }
    let jobs = jobs
        .iter()
        .enumerate()
        .map(|(i, spec)| validate_job(i, spec, run))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(RunConfig {
        verify: run.verify.unwrap_or(false),
        shuffle: run.shuffle.unwrap_or(false),
        stonewall_wear_out: run.stonewall_wear_out.unwrap_or(false),
        keep: run.keep.unwrap_or(false),
        max_errors: run.max_errors.unwrap_or(DEFAULT_MAX_ERRORS),
        seed: run.seed.unwrap_or(0x5eed_d15b_e4c4),
        create_bucket: run.create_bucket.unwrap_or(false),
        retries: run.retries.unwrap_or(0),
        null_tests: run.null_tests.unwrap_or(false),
        invalidate: run.invalidate.unwrap_or(true),
        drop_caches: match run.drop_caches.unwrap_or(false) {
            // SAFETY: geteuid has no preconditions.
            true if unsafe { libc::geteuid() } != 0 => return Err(
                "drop_caches needs root (it writes /proc/sys/vm/drop_caches): run as root or leave --drop-caches out"
                    .into(),
            ),
            d => d,
        },
        server_pids: match run.server_pids.as_deref() {
            Some(pids) if pids.contains(&0) => {
                return Err(
                    "server_pids: 0 is not a process: give the PIDs of the server processes (pidof minio)".into(),
                )
            }
            pids => pids.unwrap_or_default().to_vec(),
        },
        jobs,
    })
}

fn size_key(key: &str, text: &str) -> Result<u64, ConfigError> {
    parse_size(text).map_err(|e| format!("{key}: {e}"))
}

fn validate_job(index: usize, s: &JobSpec, run: &RunSpec) -> Result<Job, ConfigError> {
    let workload = s.workload.as_deref().ok_or_else(|| {
        format!(
            "job {}: missing 'workload': set it to meta, files, io, mix or iterate",
            index + 1
        )
    })?;
    let ctx = |msg: String| match &s.name {
        Some(n) => format!("job '{n}': {msg}"),
        None => format!("job {} ({workload}): {msg}", index + 1),
    };
    let workers = s.workers.or(run.workers).unwrap_or(DEFAULT_WORKERS);
    if workers == 0 || workers > 1 << 20 {
        return Err(ctx(format!("workers = {workers}: give between 1 and 1048576 workers")));
    }
    let threads = s.threads.or(run.threads);
    if let Some(t) = threads {
        if t == 0 || t > workers {
            return Err(ctx(format!(
                "threads = {t}: give between 1 and the number of workers ({workers})"
            )));
        }
    }
    let duration = s.duration.as_deref().map(parse_duration).transpose().map_err(&ctx)?;
    if duration == Some(Duration::ZERO) {
        return Err(ctx(
            "duration = 0: give a positive duration such as 30s, or leave it out".into(),
        ));
    }
    let ramp = s
        .ramp
        .as_deref()
        .map(parse_duration)
        .transpose()
        .map_err(|e| ctx(format!("ramp: {e}")))?
        .unwrap_or_default();
    if !ramp.is_zero() && duration.is_none() {
        return Err(ctx("ramp needs a time-based job: add duration".into()));
    }
    let reject = |keys: &[(&str, bool)]| -> Result<(), ConfigError> {
        for (k, set) in keys {
            if *set {
                return Err(ctx(format!(
                    "'{k}' does not apply to the {workload} workload: remove it"
                )));
            }
        }
        Ok(())
    };
    let io_keys = [
        ("rw", s.rw.is_some()),
        ("size", s.size.is_some()),
        ("iodepth", s.iodepth.is_some()),
        ("rwmixread", s.rwmixread.is_some()),
        ("shared_file", s.shared_file.is_some()),
        ("ioengine", s.ioengine.is_some()),
    ];
    let meta_keys = [
        ("layout", s.layout.is_some()),
        ("dirs", s.dirs.is_some()),
        ("branch", s.branch.is_some()),
    ];
    let files_keys = [("file_size", s.file_size.is_some()), ("sizes", s.sizes.is_some())];
    let mix_keys = [("mix", s.mix.is_some()), ("ops", s.ops.is_some())];
    let iterate_keys = [("iterations", s.iterations.is_some()), ("shuffle", s.shuffle.is_some())];
    let workload = match workload {
        "meta" | "files" | "io" => {
            reject(&mix_keys)?;
            reject(&iterate_keys)?;
            workload
        }
        other => other,
    };
    let workload = match workload {
        "meta" => {
            reject(&io_keys)?;
            reject(&files_keys)?;
            reject(&[
                ("bs", s.bs.is_some()),
                ("direct", s.direct.is_some()),
                ("fsync", s.fsync.is_some()),
            ])?;
            Workload::Meta(validate_meta(s).map_err(ctx)?)
        }
        "files" => {
            reject(&io_keys)?;
            reject(&meta_keys)?;
            Workload::Files(validate_files(s).map_err(ctx)?)
        }
        "io" => {
            reject(&meta_keys)?;
            reject(&files_keys)?;
            reject(&[("files", s.files.is_some()), ("phases", s.phases.is_some())])?;
            Workload::Io(validate_io(s).map_err(ctx)?)
        }
        "mix" => {
            reject(&io_keys)?;
            reject(&meta_keys)?;
            reject(&iterate_keys)?;
            reject(&[("phases", s.phases.is_some())])?;
            Workload::Mix(validate_mix(s).map_err(ctx)?)
        }
        "iterate" => {
            reject(&io_keys)?;
            reject(&meta_keys)?;
            reject(&mix_keys)?;
            reject(&[
                ("phases", s.phases.is_some()),
                ("sizes", s.sizes.is_some()),
                ("duration", s.duration.is_some()),
                ("rate", s.rate.is_some()),
                ("rate_steps", s.rate_steps.is_some()),
                ("until_stable", s.until_stable.is_some()),
            ])?;
            Workload::Iterate(validate_iterate(s, run).map_err(ctx)?)
        }
        other => {
            return Err(format!(
                "job {}: unknown workload '{other}': use meta, files, io, mix or iterate",
                index + 1
            ))
        }
    };
    let (rate, rate_steps, arrival, until_stable) = validate_load(s, duration.is_some(), &workload).map_err(ctx)?;
    Ok(Job {
        name: s.name.clone().unwrap_or_else(|| workload.name().to_string()),
        workers,
        threads,
        duration,
        ramp,
        rate,
        rate_steps,
        arrival,
        until_stable,
        workload,
    })
}

type Load = (Option<f64>, Vec<f64>, Option<Arrival>, Option<Stable>);

/// Open-loop rate and steady-state keys, which apply across workloads.
fn validate_load(s: &JobSpec, time_based: bool, workload: &Workload) -> Result<Load, ConfigError> {
    let check_rate = |key: &str, r: f64| {
        if r.is_finite() && r >= MIN_RATE {
            Ok(r)
        } else {
            Err(format!(
                "{key} = {r:?}: give at least {MIN_RATE} operations per second (one per 1000 s), a finite number"
            ))
        }
    };
    let rate = s.rate.map(|r| check_rate("rate", r)).transpose()?;
    let steps = s
        .rate_steps
        .iter()
        .flatten()
        .map(|&r| check_rate("rate_steps", r))
        .collect::<Result<Vec<_>, _>>()?;
    if rate.is_some() && !steps.is_empty() {
        return Err("give either rate or rate_steps, not both".into());
    }
    if s.rate_steps.is_some() && steps.is_empty() {
        return Err("rate_steps is empty: give rates such as 3000,4000,5000".into());
    }
    if !steps.is_empty() && !time_based {
        return Err("rate_steps runs each step for the job's duration: add duration (e.g. 30s)".into());
    }
    let paced = rate.is_some() || !steps.is_empty();
    if let Workload::Io(io) = workload {
        if paced && io.iodepth > 1 {
            return Err(format!(
                "rate with iodepth = {}: an open-loop io job issues one block at a time, set iodepth = 1 (more workers give more concurrency)",
                io.iodepth
            ));
        }
    }
    let arrival = match (&s.arrival, paced) {
        (Some(a), true) => Some(Arrival::parse(a)?),
        (Some(_), false) => return Err("arrival needs rate or rate_steps: add --rate OPS".into()),
        (None, true) => Some(Arrival::Uniform),
        (None, false) => None,
    };
    let until_stable = if s.until_stable.unwrap_or(false) {
        if !time_based {
            return Err("until_stable needs a time-based job: add duration as the longest it may run".into());
        }
        let window = s
            .stable_window
            .as_deref()
            .map(parse_duration)
            .transpose()
            .map_err(|e| format!("stable_window: {e}"))?
            .unwrap_or(Duration::from_secs(10));
        if window < Duration::from_secs(2) {
            return Err("stable_window must span at least two 1-second samples: give 2s or more".into());
        }
        Some(Stable {
            band: s.stable_band.as_deref().map(parse_band).transpose()?.unwrap_or(0.05),
            window,
        })
    } else {
        if s.stable_band.is_some() || s.stable_window.is_some() {
            return Err("stable_band and stable_window need until_stable: add --until-stable".into());
        }
        None
    };
    Ok((rate, steps, arrival, until_stable))
}

fn validate_mix(s: &JobSpec) -> Result<MixJob, ConfigError> {
    let mix = Mix::parse(
        s.mix
            .as_deref()
            .unwrap_or(&["read=80".to_string(), "write=20".to_string()]),
    )
    .map_err(|e| e.to_string())?;
    let sizes = match (&s.sizes, &s.file_size) {
        (Some(_), Some(_)) => return Err("give either sizes or file_size, not both".into()),
        (Some(list), None) => SizeDist::parse(list).map_err(|e| e.to_string())?,
        (None, fs) => SizeDist::Fixed {
            size: fs
                .as_deref()
                .map(|t| size_key("file_size", t))
                .transpose()?
                .unwrap_or(64 << 10),
        },
    };
    let files = s.files.unwrap_or(100);
    if files == 0 || files > MAX_MIX_FILES {
        return Err(format!(
            "files = {files}: the mix needs a pool of 1 to {MAX_MIX_FILES} files per worker (e.g. files = 100)"
        ));
    }
    let ops = s.ops.unwrap_or(1000);
    if ops == 0 {
        return Err("ops = 0: give the operations per worker, or a duration".into());
    }
    let bs = block_size(s, 1 << 20)?;
    Ok(MixJob {
        mix,
        sizes,
        files,
        ops,
        bs,
        direct: s.direct.unwrap_or(false),
        fsync: s.fsync.unwrap_or(false),
    })
}

fn validate_iterate(s: &JobSpec, run: &RunSpec) -> Result<IterateJob, ConfigError> {
    let iterations = s.iterations.unwrap_or(3);
    if !(2..=MAX_ITERATIONS).contains(&iterations) {
        return Err(format!(
            "iterations = {iterations}: give at least 2 and at most {MAX_ITERATIONS} (the first writes, each later one reads the previous)"
        ));
    }
    let files = s.files.unwrap_or(10);
    if files == 0 {
        return Err("files = 0: give the files per worker and iteration (e.g. files = 10)".into());
    }
    let bs = block_size(s, 1 << 20)?;
    Ok(IterateJob {
        iterations,
        shuffle: s.shuffle.or(run.shuffle).unwrap_or(false),
        files,
        file_size: s
            .file_size
            .as_deref()
            .map(|t| size_key("file_size", t))
            .transpose()?
            .unwrap_or(1 << 20),
        bs,
        direct: s.direct.unwrap_or(false),
        fsync: s.fsync.unwrap_or(false),
    })
}

fn parse_phases<T: Copy + Ord>(list: &[String], all: &[T], name: fn(T) -> &'static str) -> Result<Vec<T>, ConfigError> {
    let mut out = Vec::new();
    for p in list {
        let phase = all.iter().copied().find(|&x| name(x) == p.trim()).ok_or_else(|| {
            let names: Vec<_> = all.iter().map(|&x| name(x)).collect();
            format!("unknown phase '{p}': choose from {}", names.join(", "))
        })?;
        if !out.contains(&phase) {
            out.push(phase);
        }
    }
    if out.is_empty() {
        return Err("phases is empty: name at least one phase".into());
    }
    out.sort();
    Ok(out)
}

fn validate_meta(s: &JobSpec) -> Result<MetaJob, ConfigError> {
    let files = s.files.unwrap_or(1000);
    let dirs = s.dirs.unwrap_or(0);
    let layout = match s.layout.as_deref().unwrap_or("per-worker") {
        "per-worker" | "unique" => DirLayout::PerWorker,
        "shared" => DirLayout::Shared,
        other => return Err(format!("layout = '{other}': use per-worker or shared")),
    };
    let default_phases: Vec<MetaPhase> = MetaPhase::ALL
        .into_iter()
        .filter(|p| dirs > 0 || !matches!(p, MetaPhase::Mkdir | MetaPhase::Rmdir))
        .collect();
    let phases = match &s.phases {
        Some(list) => parse_phases(list, &MetaPhase::ALL, MetaPhase::name)?,
        None => default_phases,
    };
    let wants_dirs = phases.iter().any(|p| matches!(p, MetaPhase::Mkdir | MetaPhase::Rmdir));
    if wants_dirs && dirs == 0 {
        return Err("mkdir/rmdir phases need dirs: set dirs to the directories per worker".into());
    }
    if files == 0 && phases.iter().any(|p| !matches!(p, MetaPhase::Mkdir | MetaPhase::Rmdir)) {
        return Err("files = 0: give the files per worker (e.g. files = 1000)".into());
    }
    Ok(MetaJob {
        files,
        layout,
        dirs,
        branch: s.branch.unwrap_or(0),
        phases,
        explicit_phases: s.phases.is_some(),
        explicit_files: s.files.is_some(),
    })
}

/// Parse `COUNTxSIZE`, e.g. `1000x10k`.
fn parse_set(text: &str) -> Result<FileSet, ConfigError> {
    let (n, size) = text
        .split_once(['x', 'X', '*'])
        .ok_or_else(|| format!("sizes entry '{text}': write COUNTxSIZE, e.g. 1000x10k"))?;
    let count = n
        .trim()
        .parse()
        .map_err(|_| format!("sizes entry '{text}': '{n}' is not a file count"))?;
    let size = size_key("sizes", size)?;
    Ok(FileSet { count, size })
}

fn validate_files(s: &JobSpec) -> Result<FilesJob, ConfigError> {
    let sets = match (&s.sizes, &s.file_size) {
        (Some(_), Some(_)) => return Err("give either sizes or file_size/files, not both".into()),
        (Some(list), None) => {
            if s.files.is_some() {
                return Err("give either sizes or file_size/files, not both".into());
            }
            list.iter().map(|t| parse_set(t)).collect::<Result<Vec<_>, _>>()?
        }
        (None, fs) => vec![FileSet {
            count: s.files.unwrap_or(100),
            size: fs
                .as_deref()
                .map(|t| size_key("file_size", t))
                .transpose()?
                .unwrap_or(1 << 20),
        }],
    };
    if sets.is_empty() {
        return Err("sizes is empty: give COUNTxSIZE entries such as 1000x10k".into());
    }
    if let Some(bad) = sets.iter().find(|s| s.count == 0) {
        return Err(format!(
            "a set of 0 files of {}: give a file count of at least 1",
            format_size(bad.size)
        ));
    }
    let bs = block_size(s, 1 << 20)?;
    let phases = match &s.phases {
        Some(list) => parse_phases(
            list,
            &[FilePhase::Write, FilePhase::Read, FilePhase::Delete],
            FilePhase::name,
        )?,
        None => vec![FilePhase::Write, FilePhase::Read, FilePhase::Delete],
    };
    if phases[0] != FilePhase::Write {
        return Err("the files workload reads and deletes the files it wrote: keep the write phase".into());
    }
    Ok(FilesJob {
        sets,
        bs,
        direct: s.direct.unwrap_or(false),
        fsync: s.fsync.unwrap_or(false),
        phases,
    })
}

/// The job's `bs`, or `default` when unset, checked.
fn block_size(s: &JobSpec, default: u64) -> Result<usize, ConfigError> {
    let bs =
        s.bs.as_deref()
            .map(|t| size_key("bs", t))
            .transpose()?
            .unwrap_or(default);
    if bs == 0 || bs > 1 << 30 {
        return Err(format!("bs = {bs}: give a block size between 1 byte and 1g"));
    }
    Ok(bs as usize)
}

fn validate_io(s: &JobSpec) -> Result<IoJob, ConfigError> {
    let rw = match s.rw.as_deref().unwrap_or("read") {
        "read" => Rw::Read,
        "write" => Rw::Write,
        "randread" => Rw::Randread,
        "randwrite" => Rw::Randwrite,
        "readwrite" | "rw" => Rw::Readwrite,
        "randrw" => Rw::Randrw,
        other => {
            return Err(format!(
                "rw = '{other}': use read, write, randread, randwrite, readwrite or randrw"
            ))
        }
    };
    let bs = block_size(s, 4096)?;
    let size = s
        .size
        .as_deref()
        .map(|t| size_key("size", t))
        .transpose()?
        .unwrap_or(64 << 20);
    if size < bs as u64 {
        return Err(format!(
            "size = {} is smaller than bs = {}: make the file at least one block",
            format_size(size),
            format_size(bs as u64)
        ));
    }
    let iodepth = s.iodepth.unwrap_or(1);
    if iodepth == 0 || iodepth > 4096 {
        return Err(format!("iodepth = {iodepth}: give a queue depth between 1 and 4096"));
    }
    let rwmixread = s.rwmixread.unwrap_or(50);
    if rwmixread > 100 {
        return Err(format!("rwmixread = {rwmixread}: give a percentage from 0 to 100"));
    }
    let ioengine = match s.ioengine.as_deref().unwrap_or("auto") {
        "auto" => IoEngine::Auto,
        "io_uring" => IoEngine::IoUring,
        "psync" | "sync" => IoEngine::Psync,
        other => return Err(format!("ioengine = '{other}': use auto, io_uring or psync")),
    };
    let direct = s.direct.unwrap_or(false);
    if direct && bs % 512 != 0 {
        return Err(format!("direct I/O needs bs in whole 512-byte sectors, got {bs}"));
    }
    Ok(IoJob {
        rw,
        bs,
        size,
        iodepth,
        rwmixread,
        direct,
        fsync: s.fsync.unwrap_or(false),
        shared_file: s.shared_file.unwrap_or(false),
        ioengine,
    })
}

mod secs {
    use serde::Serializer;
    use std::time::Duration;
    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }
}

mod opt_secs {
    use serde::Serializer;
    use std::time::Duration;
    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.serialize_f64(d.as_secs_f64()),
            None => s.serialize_none(),
        }
    }
}

/// Parse a workload file's text; errors name the file's line.
pub fn parse_workload_file(name: &str, text: &str) -> Result<WorkloadFile, ConfigError> {
    toml::from_str(text).map_err(|e| {
        // TOML's messages can span lines ("invalid array\nexpected `]`"): errors are one line.
        let msg = e
            .message()
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join(": ");
        let line = e
            .span()
            .map(|sp| text[..sp.start.min(text.len())].matches('\n').count() + 1)
            .map(|l| format!(" line {l}:"))
            .unwrap_or_default();
        dfsbench_backends::one_line(&format!("{name}:{line} {msg}"))
    })
}

impl WorkloadFile {
    /// The file as `dfsbench run FILE` reads it back.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("a workload file serializes to TOML")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workload_file_round_trips_through_toml() {
        let file = WorkloadFile {
            target: None,
            run: RunSpec {
                null_tests: Some(true),
                retries: Some(3),
                ..Default::default()
            },
            jobs: vec![
                JobSpec {
                    name: Some("mixture".into()),
                    workers: Some(1),
                    mix: Some(vec!["read=80".into(), "write=20".into()]),
                    duration: Some("1500ms".into()),
                    ..spec("mix")
                },
                JobSpec {
                    shuffle: Some(true),
                    iterations: Some(2),
                    ..spec("iterate")
                },
            ],
        };
        let text = file.to_toml();
        let back = parse_workload_file("w.toml", &text).unwrap();
        assert_eq!(format!("{:?}", back), format!("{:?}", file), "{text}");
        let config = |f: &WorkloadFile| serde_json::to_string(&validate(&f.run, &f.jobs).unwrap()).unwrap();
        assert_eq!(config(&back), config(&file));
    }

    fn spec(workload: &str) -> JobSpec {
        JobSpec {
            workload: Some(workload.into()),
            ..Default::default()
        }
    }

    #[test]
    fn defaults_are_filled() {
        let c = validate(&RunSpec::default(), &[spec("meta"), spec("files"), spec("io")]).unwrap();
        assert_eq!(c.jobs.len(), 3);
        assert!(
            matches!(&c.jobs[0].workload, Workload::Meta(m) if m.files == 1000 && !m.phases.contains(&MetaPhase::Mkdir))
        );
        assert!(
            matches!(&c.jobs[1].workload, Workload::Files(f) if f.sets == vec![FileSet { count: 100, size: 1 << 20 }])
        );
        assert!(matches!(&c.jobs[2].workload, Workload::Io(io) if io.bs == 4096 && io.rw == Rw::Read));
        assert_eq!(c.jobs[0].workers, DEFAULT_WORKERS);
    }

    #[test]
    fn rejects_keys_of_other_workloads() {
        let mut s = spec("meta");
        s.rw = Some("randread".into());
        let e = validate(&RunSpec::default(), &[s]).unwrap_err();
        assert_eq!(e, "job 1 (meta): 'rw' does not apply to the meta workload: remove it");
    }

    #[test]
    fn parses_size_sets() {
        let mut s = spec("files");
        s.sizes = Some(vec!["10000x0".into(), "1000x1k".into(), "1x10g".into()]);
        let c = validate(&RunSpec::default(), &[s]).unwrap();
        let Workload::Files(f) = &c.jobs[0].workload else {
            panic!()
        };
        assert_eq!(
            f.sets[2],
            FileSet {
                count: 1,
                size: 10 << 30
            }
        );
        let mut bad = spec("files");
        bad.sizes = Some(vec!["1000-1k".into()]);
        assert!(validate(&RunSpec::default(), &[bad])
            .unwrap_err()
            .contains("COUNTxSIZE"));
    }

    #[test]
    fn phases_run_in_canonical_order() {
        let mut s = spec("meta");
        s.phases = Some(vec!["delete".into(), "create".into(), "stat".into()]);
        let c = validate(&RunSpec::default(), &[s]).unwrap();
        let Workload::Meta(m) = &c.jobs[0].workload else {
            panic!()
        };
        assert_eq!(m.phases, vec![MetaPhase::Create, MetaPhase::Stat, MetaPhase::Delete]);
    }

    #[test]
    fn workload_file_errors_name_the_line() {
        let e = parse_workload_file("w.toml", "[[job]]\nworkload = \"meta\"\nwrkers = 3\n").unwrap_err();
        assert!(e.starts_with("w.toml: line 3:"), "{e}");
        assert!(e.contains("wrkers"), "{e}");
        let e = parse_workload_file("w.toml", "[[job]]\nfiles = [3\n").unwrap_err();
        assert!(!e.contains('\n'), "one line: {e}");
    }

    #[test]
    fn bad_values_are_explained() {
        let mut s = spec("io");
        s.iodepth = Some(0);
        assert!(validate(&RunSpec::default(), &[s]).unwrap_err().contains("iodepth = 0"));
        let mut s = spec("io");
        s.size = Some("1k".into());
        s.bs = Some("4k".into());
        assert!(validate(&RunSpec::default(), &[s])
            .unwrap_err()
            .contains("smaller than bs"));
        let mut s = spec("io");
        s.ramp = Some("2s".into());
        assert!(validate(&RunSpec::default(), &[s]).unwrap_err().contains("ramp needs"));
    }
}
