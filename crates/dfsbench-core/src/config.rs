//! What to run: workload files and command-line flags, validated into [`RunConfig`].
//!
//! Both sources fill the same flat [`JobSpec`] (fio's flag names where the concept is the same),
//! so a flag and a workload-file key always mean one thing. Validation turns specs into typed
//! [`Job`]s and names the offending key and its fix on error.

use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use crate::error::{ConfigError, JobLabel};
use crate::faults::{self, FaultEntry, FaultPlan, FaultSettings};
use crate::load::{parse_band, Arrival, Stable};
use crate::units::parse_duration;
use crate::workloads::{self, field_names, from_keys, SharedOptions, Workload, WorkloadOptions};

/// Workers when neither flag nor file says.
pub const DEFAULT_WORKERS: usize = 4;
/// The lowest open-loop rate: one operation per 1000 s over all workers. Lower rates would
/// schedule the first operation beyond any phase (and, split over a million workers, beyond
/// what the clock can count).
pub const MIN_RATE: f64 = 0.001;
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

/// Settings of the whole run: the `Run` flags, and the top-level keys of a workload file.
#[derive(clap::Args, Debug, Default, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RunSpec {
    /// Write self-describing data and check every byte read.
    #[arg(long, num_args = 0, default_missing_value = "true", help_heading = "Run")]
    pub verify: Option<bool>,

    /// Keep the run directory and its files afterwards (remove later with `dfsbench clean`).
    #[arg(long, num_args = 0, default_missing_value = "true", help_heading = "Run")]
    pub keep: Option<bool>,

    /// Stop after this many errors; 0 never stops [default: 1000].
    #[arg(long, value_name = "N", help_heading = "Run")]
    pub max_errors: Option<u64>,

    /// Seed of random offsets and choices.
    #[arg(long, value_name = "N", help_heading = "Run")]
    pub seed: Option<u64>,

    /// Create the S3 bucket of the target when it does not exist.
    #[arg(long, num_args = 0, default_missing_value = "true", help_heading = "Run")]
    pub create_bucket: Option<bool>,

    /// Retry requests that failed temporarily up to N times, counting every retry (network
    /// backends; by default nothing is retried).
    #[arg(long, value_name = "N", help_heading = "Run")]
    pub retries: Option<u32>,

    /// The gateways of an s3:// or swift:// target (S3 gateways, RGWs, Swift proxies):
    /// host:port or http(s)://host:port, comma-separated; worker w of the whole run talks to
    /// gateway w mod n, and every phase reports each one. For s3:// the same as
    /// s3://h1:9000,h2:9000/bucket; a Swift proxy serves the storage URL's account path.
    #[arg(long, value_delimiter = ',', value_name = "LIST", help_heading = "Run")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoints: Option<Vec<String>>,

    /// Reads read another client's data: the same worker of another process, a node away when
    /// there are several (IOR -C, mdtest -N), or the next worker in a single process; iterate
    /// reads another worker's previous iteration (DFS-Perf's Shuffle mode).
    #[arg(long, num_args = 0, default_missing_value = "true", help_heading = "Processes")]
    pub shuffle: Option<bool>,

    /// After a time-limited create or write phase, every worker creates or writes files until
    /// it has as many as the busiest one (unmeasured; IOR -O stoneWallingWearOut=1), so reads
    /// find every file.
    #[arg(long, num_args = 0, default_missing_value = "true", help_heading = "Processes")]
    pub stonewall_wear_out: Option<bool>,

    /// Workers of every job that does not say (workload files; the flag is --workers).
    #[arg(skip)]
    pub workers: Option<usize>,

    /// Threads of every job that does not say (workload files; the flag is --threads).
    #[arg(skip)]
    pub threads: Option<usize>,

    /// Measure local disk throughput and the round trip and bandwidth to the target first,
    /// so results can be read against the hardware.
    #[arg(long, num_args = 0, default_missing_value = "true", help_heading = "Run")]
    pub null_tests: Option<bool>,

    /// Record the CPU of these server processes in every phase, beside the client's (a
    /// server on this host, e.g. `--server-pid $(pidof minio)`; with several processes, on the
    /// host of the first).
    #[arg(
        long = "server-pid",
        value_delimiter = ',',
        value_name = "PID,...",
        help_heading = "Run"
    )]
    pub server_pids: Option<Vec<u32>>,

    /// Before every measured read phase, write back and drop the cached pages of the files it
    /// reads (fsync + posix_fadvise DONTNEED, fio's invalidate=1), so reads reach the storage;
    /// 0 reads whatever the client's page cache holds, and the result flags it [default: 1].
    #[arg(long, value_name = "0|1", num_args = 0..=1, default_missing_value = "1", value_parser = workloads::parse_flag, help_heading = "Run")]
    #[serde(default, deserialize_with = "flag_or_01", skip_serializing_if = "Option::is_none")]
    pub invalidate: Option<bool>,

    /// Also drop the kernel's page, dentry and inode caches (sync, then 3 to
    /// /proc/sys/vm/drop_caches) before every measured read phase; needs root.
    #[arg(long, num_args = 0, default_missing_value = "true", help_heading = "Run")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drop_caches: Option<bool>,

    /// Run COMMAND with `sh -c` at AT after the start of the first measured phase (30s), or of
    /// a named phase (read+10s), on rank 0, without pausing the workload; repeatable. Its start,
    /// end, exit status and output are events of the result. With -t lab:NAME, 'lab kill node2'
    /// (any `lab fault`), 'lab delay 10ms' and 'lab probe' are that lab's commands.
    #[arg(long, value_name = "'AT: COMMAND'", help_heading = "Faults")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<Vec<FaultEntry>>,

    /// A fault command that fails stops the run (by default it is recorded, not fatal).
    #[arg(long, num_args = 0, default_missing_value = "true", help_heading = "Faults")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault_must_succeed: Option<bool>,

    /// Kill a fault command (and its process group) still running after this long [default: 60s].
    #[arg(long, value_name = "TIME", help_heading = "Faults")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault_timeout: Option<String>,

    /// After the last fault, run COMMAND every --probe-interval until it exits 0: the time from
    /// the fault to its first success is the recovery time (e.g. 'ceph health | grep -q HEALTH_OK',
    /// 'lab probe' with -t lab:NAME).
    #[arg(long, value_name = "COMMAND", help_heading = "Faults")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery_probe: Option<String>,

    /// Start probing once the last fault command ended (last-fault) or once the workload
    /// ended (end) [default: last-fault].
    #[arg(long, value_name = "last-fault|end", help_heading = "Faults")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe_from: Option<String>,

    /// Time between the starts of two probes [default: 1s].
    #[arg(long, value_name = "TIME", help_heading = "Faults")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe_interval: Option<String>,

    /// Give up probing after this long; the run waits for the probe [default: 10m].
    #[arg(long, value_name = "TIME", help_heading = "Faults")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery_timeout: Option<String>,

    /// An operation that takes longer is counted as a `timeout` error: network requests are
    /// cancelled at the limit; a file-system call that cannot be cancelled is counted when it
    /// returns.
    #[arg(long, value_name = "TIME", help_heading = "Faults")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op_timeout: Option<String>,

    /// Gaps without a completed operation this long count as stalls [default: 1s].
    #[arg(long, value_name = "TIME", help_heading = "Faults")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stall_threshold: Option<String>,
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

/// The help of `--workload`, with the names from the registry.
fn workload_help() -> String {
    format!(
        "Workload to run: {}. Without it and without a file: the default mix",
        workloads::names_in_words()
    )
}

/// The keys every job has, whatever its workload: what to run, how many workers, for how long
/// and at what rate. Flags and workload-file keys at once.
#[derive(clap::Args, Debug, Default, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct JobSettings {
    /// The job's name in results (fio: name) [default: the workload's name].
    #[arg(long, value_name = "NAME", help_heading = "Workload")]
    pub name: Option<String>,

    /// Workload to run (the registry's names). Without it and without a file: the default mix.
    #[arg(short, long, value_name = "NAME", help = workload_help(), help_heading = "Workload")]
    pub workload: Option<String>,

    /// Concurrent clients (closed loop, no think time) [default: 4].
    #[arg(
        short = 'j',
        long,
        visible_alias = "numjobs",
        value_name = "N",
        help_heading = "Workload"
    )]
    pub workers: Option<usize>,

    /// OS threads carrying the workers (async backends); blocking backends use one per worker.
    #[arg(long, value_name = "N", help_heading = "Workload")]
    pub threads: Option<usize>,

    /// Make the job time-based: e.g. 30s, 2m (fio: runtime).
    #[arg(long, visible_alias = "runtime", value_name = "TIME", help_heading = "Workload")]
    pub duration: Option<String>,

    /// fio's time_based: with --duration/--runtime, 1 (the default) loops until the time is
    /// over; 0 makes one pass, cut short at the duration, as fio without time_based (io).
    #[arg(long = "time-based", visible_alias = "time_based", value_name = "0|1", num_args = 0..=1, default_missing_value = "1", value_parser = workloads::parse_flag, help_heading = "Workload")]
    #[serde(default, deserialize_with = "flag_or_01", skip_serializing_if = "Option::is_none")]
    pub time_based: Option<bool>,

    /// Unmeasured warm-up before a time-based phase (fio: ramp_time).
    #[arg(long, visible_alias = "ramp_time", value_name = "TIME", help_heading = "Workload")]
    pub ramp: Option<String>,

    /// Open loop: issue OPS operations per second in total, split over the workers; latency
    /// counts from each operation's intended start (io: at queue depth 1).
    #[arg(long, value_name = "OPS", help_heading = "Load")]
    pub rate: Option<f64>,

    /// Run each time-based phase once per rate: 3000,4000,5000 (needs --duration).
    #[arg(long, value_delimiter = ',', value_name = "LIST", help_heading = "Load")]
    pub rate_steps: Option<Vec<f64>>,

    /// Spacing of intended starts: uniform or poisson [default: uniform].
    #[arg(long, value_name = "KIND", help_heading = "Load")]
    pub arrival: Option<String>,

    /// End time-based phases once throughput is steady; --duration is the longest they run.
    #[arg(long, num_args = 0, default_missing_value = "true", help_heading = "Load")]
    pub until_stable: Option<bool>,

    /// Steady: every 1-second sample within this share of the window's mean [default: 5%].
    #[arg(long, value_name = "PCT", help_heading = "Load")]
    pub stable_band: Option<String>,

    /// Steady: for this long [default: 10s].
    #[arg(long, value_name = "TIME", help_heading = "Load")]
    pub stable_window: Option<String>,

    /// Faults of this job, due after the start of its first measured phase (workload files:
    /// `[[job.fault]]` tables with `at` and `command`; the flag is the run's --fault).
    #[arg(skip)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<Vec<FaultEntry>>,
}

/// One job as written in a file or given as flags: its settings, the options several workloads
/// share, and the options of each workload. Every key is optional; validation fills defaults
/// and refuses keys that do not belong to the job's workload.
#[derive(Debug, Default, Clone, PartialEq, Serialize)]
pub struct JobSpec {
    #[serde(flatten)]
    pub settings: JobSettings,
    #[serde(flatten)]
    pub shared: SharedOptions,
    #[serde(flatten)]
    pub workloads: WorkloadOptions,
}

impl<'de> Deserialize<'de> for JobSpec {
    /// A `[[job]]` table: each key goes to the struct that declares it; a key no struct
    /// declares is an error that names it.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<JobSpec, D::Error> {
        let table = toml::Table::deserialize(d)?;
        JobSpec::from_table(&table).map_err(serde::de::Error::custom)
    }
}

impl JobSpec {
    fn from_table(table: &toml::Table) -> Result<JobSpec, String> {
        let (settings_keys, shared_keys) = (field_names::<JobSettings>(), field_names::<SharedOptions>());
        if let Some(key) = table.keys().find(|k| {
            !settings_keys.contains(&k.as_str())
                && !shared_keys.contains(&k.as_str())
                && workloads::owner_of(k).is_none()
        }) {
            return Err(format!(
                "unknown key `{key}` in a [[job]]: check its spelling (`dfsbench run --help` lists every key as a flag)"
            ));
        }
        Ok(JobSpec {
            settings: from_keys(table)?,
            shared: from_keys(table)?,
            workloads: workloads::options_from(table)?,
        })
    }

    /// The keys set in this job, in their structs' order.
    fn keys_set(&self) -> Vec<&'static str> {
        fn set<T: Serialize + for<'de> Deserialize<'de> + 'static>(value: &T) -> Vec<&'static str> {
            let json = serde_json::to_value(value).unwrap_or_default();
            field_names::<T>()
                .iter()
                .copied()
                .filter(|k| json.get(k).is_some_and(|v| !v.is_null()))
                .collect()
        }
        let mut keys = set(&self.settings);
        keys.extend(set(&self.shared));
        let own = serde_json::to_value(&self.workloads).unwrap_or_default();
        let all_own = workloads::names()
            .into_iter()
            .filter_map(workloads::accepted)
            .flat_map(|(_, own)| own);
        keys.extend(all_own.filter(|k| own.get(k).is_some_and(|v| !v.is_null())));
        keys
    }
}

/// Every key a `[[job]]` table takes, in the order `dfsbench run --help` shows them.
pub fn job_keys() -> Vec<&'static str> {
    let own = workloads::names().into_iter().filter_map(workloads::accepted);
    let mut keys = field_names::<JobSettings>().to_vec();
    keys.extend(field_names::<SharedOptions>());
    keys.extend(own.flat_map(|(_, own)| own.iter().copied()));
    keys
}

/// Every top-level key of a workload file.
pub fn run_keys() -> Vec<&'static str> {
    let mut keys = vec!["target"];
    keys.extend(field_names::<RunSpec>());
    keys
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
    /// The gateways of the target (`--endpoints`), checked against it when it is opened.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub endpoints: Vec<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub null_tests: bool,
    /// Server processes whose CPU every phase records, on rank 0's host.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub server_pids: Vec<u32>,
    /// Where the server processes are found again at every phase (a lab, whose daemons get
    /// new PIDs when restarted); None: `server_pids` as given.
    #[serde(skip)]
    pub server_pids_now: Option<ServerPids>,
    /// Read phases read the data of the workers a node away (multi-process runs).
    pub shuffle: bool,
    /// Drop the cached pages of a read phase's files before it (fio's invalidate=1).
    pub invalidate: bool,
    /// Also drop the kernel's caches before every read phase.
    pub drop_caches: bool,
    /// After a time-limited create or write phase, every worker creates or writes files until
    /// it has as many as the busiest worker (unmeasured), so later phases find them all.
    pub stonewall_wear_out: bool,
    /// Fault commands and the recovery probe (rank 0).
    #[serde(skip_serializing_if = "FaultPlan::is_empty")]
    pub faults: FaultPlan,
    /// Operations longer than this count as `timeout` errors.
    #[serde(with = "opt_secs", skip_serializing_if = "Option::is_none")]
    pub op_timeout: Option<Duration>,
    /// Gaps without a completed operation at least this long are stalls.
    #[serde(with = "secs")]
    pub stall_threshold: Duration,
    pub jobs: Vec<Job>,
}

/// Reads the current PIDs of a run's server processes.
#[derive(Clone)]
pub struct ServerPids(pub std::sync::Arc<dyn Fn() -> Vec<u32> + Send + Sync>);

impl std::fmt::Debug for ServerPids {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ServerPids(..)")
    }
}

impl RunConfig {
    /// The server processes to watch now: found again where the run knows how (the list as
    /// given when that finds none).
    pub fn watched_servers(&self) -> Vec<u32> {
        self.server_pids_now
            .as_ref()
            .map(|now| (now.0)())
            .filter(|pids| !pids.is_empty())
            .unwrap_or_else(|| self.server_pids.clone())
    }

    /// Phases keep 100 ms series (with errors by kind) when there is a fault timeline to
    /// read them against.
    pub fn fine_series(&self) -> bool {
        !self.faults.is_empty()
    }
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
    /// Phases with a duration loop until it is over; false (io only, fio's runtime without
    /// time_based): they make one pass, cut short at the duration.
    #[serde(skip_serializing_if = "is_true")]
    pub time_based: bool,
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
            endpoints: over.endpoints.clone().or_else(|| self.endpoints.clone()),
            workers: over.workers.or(self.workers),
            threads: over.threads.or(self.threads),
            null_tests: over.null_tests.or(self.null_tests),
            server_pids: over.server_pids.clone().or_else(|| self.server_pids.clone()),
            invalidate: over.invalidate.or(self.invalidate),
            drop_caches: over.drop_caches.or(self.drop_caches),
            fault: over.fault.clone().or_else(|| self.fault.clone()),
            fault_must_succeed: over.fault_must_succeed.or(self.fault_must_succeed),
            fault_timeout: over.fault_timeout.clone().or_else(|| self.fault_timeout.clone()),
            recovery_probe: over.recovery_probe.clone().or_else(|| self.recovery_probe.clone()),
            probe_from: over.probe_from.clone().or_else(|| self.probe_from.clone()),
            probe_interval: over.probe_interval.clone().or_else(|| self.probe_interval.clone()),
            recovery_timeout: over.recovery_timeout.clone().or_else(|| self.recovery_timeout.clone()),
            op_timeout: over.op_timeout.clone().or_else(|| self.op_timeout.clone()),
            stall_threshold: over.stall_threshold.clone().or_else(|| self.stall_threshold.clone()),
        }
    }
}

impl JobSpec {
    /// A job named `name` of workload `workload`, every other key unset.
    pub fn new(name: &str, workload: &str) -> JobSpec {
        JobSpec {
            settings: JobSettings {
                name: Some(name.into()),
                workload: Some(workload.into()),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    /// Fill every key unset here from `over` winning: used to apply command-line flags on top of
    /// a workload file's jobs.
    pub fn overlay(&self, over: &JobSpec) -> JobSpec {
        let table = |spec: &JobSpec| toml::Table::try_from(spec).unwrap_or_default();
        let mut merged = table(self);
        merged.extend(table(over));
        JobSpec::from_table(&merged).unwrap_or_else(|_| over.clone())
    }
}

/// Validate a run: `run` settings, and jobs whose unset keys fall back to `run`'s defaults.
/// Errors quote what was given, on one line whatever it holds.
pub fn validate(run: &RunSpec, jobs: &[JobSpec]) -> Result<RunConfig, ConfigError> {
    if jobs.is_empty() {
        return Err(ConfigError::NoJob {
            choices: workloads::names().join("|"),
        });
    }
    let jobs = jobs
        .iter()
        .enumerate()
        .map(|(i, spec)| {
            Ok((
                validate_job(i, spec, run)?,
                spec.settings.fault.clone().unwrap_or_default(),
            ))
        })
        .collect::<Result<Vec<_>, ConfigError>>()?;
    let faults = faults::validate(
        &FaultSettings {
            faults: run.fault.as_deref().unwrap_or_default(),
            must_succeed: run.fault_must_succeed.unwrap_or(false),
            command_timeout: run.fault_timeout.as_deref(),
            probe: run.recovery_probe.as_deref(),
            probe_from: run.probe_from.as_deref(),
            probe_interval: run.probe_interval.as_deref(),
            recovery_timeout: run.recovery_timeout.as_deref(),
        },
        &jobs,
    )?;
    let time = |key: &'static str, text: &Option<String>| {
        let d = text
            .as_deref()
            .map(parse_duration)
            .transpose()
            .map_err(|e| ConfigError::unreadable(key, e))?;
        match d {
            Some(Duration::ZERO) => Err(ConfigError::value(
                key,
                0,
                "give a positive time such as 10s, or leave it out",
            )),
            d => Ok(d),
        }
    };
    let op_timeout = time("op_timeout", &run.op_timeout)?;
    let stall_threshold = time("stall_threshold", &run.stall_threshold)?.unwrap_or(faults::DEFAULT_STALL_THRESHOLD);
    let jobs = jobs.into_iter().map(|(j, _)| j).collect();
    Ok(RunConfig {
        faults,
        op_timeout,
        stall_threshold,
        verify: run.verify.unwrap_or(false),
        shuffle: run.shuffle.unwrap_or(false),
        stonewall_wear_out: run.stonewall_wear_out.unwrap_or(false),
        keep: run.keep.unwrap_or(false),
        max_errors: run.max_errors.unwrap_or(DEFAULT_MAX_ERRORS),
        seed: run.seed.unwrap_or(0x5eed_d15b_e4c4),
        create_bucket: run.create_bucket.unwrap_or(false),
        retries: run.retries.unwrap_or(0),
        endpoints: run.endpoints.clone().unwrap_or_default(),
        null_tests: run.null_tests.unwrap_or(false),
        invalidate: run.invalidate.unwrap_or(true),
        drop_caches: match run.drop_caches.unwrap_or(false) {
            // SAFETY: geteuid has no preconditions.
            true if unsafe { libc::geteuid() } != 0 => return Err(ConfigError::Rule(
                "drop_caches needs root (it writes /proc/sys/vm/drop_caches): run as root or leave --drop-caches out"
                    .into(),
            )),
            d => d,
        },
        server_pids: match run.server_pids.as_deref() {
            Some(pids) if pids.contains(&0) => {
                return Err(ConfigError::unreadable(
                    "server_pids",
                    "0 is not a process: give the PIDs of the server processes (pidof minio)",
                ))
            }
            pids => pids.unwrap_or_default().to_vec(),
        },
        server_pids_now: None,
        jobs,
    })
}

fn validate_job(index: usize, s: &JobSpec, run: &RunSpec) -> Result<Job, ConfigError> {
    let names = workloads::names_in_words();
    let Some(name) = s.settings.workload.as_deref() else {
        return Err(ConfigError::MissingWorkload {
            job: index + 1,
            choices: names,
        });
    };
    let ctx = |e: ConfigError| e.in_job(JobLabel::new(index, s.settings.name.as_deref(), name));
    let Some((shared, own)) = workloads::accepted(name) else {
        // `-w jobs.fio` is the habit of tools whose -w takes a file; here a file is the argument.
        let file = name.contains('/') || [".toml", ".fio", ".job", ".ini"].iter().any(|e| name.ends_with(e));
        let choices = if file {
            format!("{names}, or give a workload file without -w: dfsbench run {name}")
        } else {
            names
        };
        return Err(ConfigError::UnknownWorkload {
            job: index + 1,
            name: dfsbench_backends::one_line(name),
            choices,
        });
    };
    let untimed = ["duration", "rate", "rate_steps", "until_stable"];
    let foreign = s.keys_set().into_iter().find(|k| {
        let setting = field_names::<JobSettings>().contains(k);
        (setting && !workloads::timed(name) && untimed.contains(k))
            || (!setting && !shared.contains(k) && !own.contains(k))
    });
    if let Some(key) = foreign {
        return Err(ctx(ConfigError::NotApplicable {
            key: dfsbench_backends::one_line(key),
            workload: name.to_string(),
        }));
    }
    let j = &s.settings;
    let workers = j.workers.or(run.workers).unwrap_or(DEFAULT_WORKERS);
    if workers == 0 || workers > 1 << 20 {
        return Err(ctx(ConfigError::value(
            "workers",
            workers,
            "give between 1 and 1048576 workers",
        )));
    }
    let threads = j.threads.or(run.threads);
    if let Some(t) = threads.filter(|&t| t == 0 || t > workers) {
        return Err(ctx(ConfigError::value(
            "threads",
            t,
            format!("give between 1 and the number of workers ({workers})"),
        )));
    }
    // The parser's message names the text and the units (`'3x' is not a time: ...`).
    let duration = j.duration.as_deref().map(parse_duration).transpose();
    let duration = duration.map_err(|e| ctx(e.into()))?;
    if duration == Some(Duration::ZERO) {
        return Err(ctx(ConfigError::value(
            "duration",
            0,
            "give a positive duration such as 30s, or leave it out",
        )));
    }
    let time_based = j.time_based != Some(false);
    match (j.time_based, duration) {
        (Some(true), None) => return Err(ctx("time_based needs a duration: add duration (--runtime/--duration)".into())),
        (Some(false), Some(_)) if name != "io" => {
            return Err(ctx(format!(
                "time_based = false (one pass, cut short at the duration) applies to io jobs: remove it from this {name} job"
            )
            .into()))
        }
        (Some(false), Some(_)) if j.until_stable == Some(true) || j.rate_steps.is_some() => {
            return Err(ctx(
                "until_stable and rate_steps need a time-based job: remove time_based = false".into(),
            ))
        }
        _ => {}
    }
    let ramp = j.ramp.as_deref().map(parse_duration).transpose();
    let ramp = ramp
        .map_err(|e| ctx(ConfigError::unreadable("ramp", e)))?
        .unwrap_or_default();
    if !ramp.is_zero() && duration.is_none() {
        return Err(ctx("ramp needs a time-based job: add duration".into()));
    }
    // `accepted` above found the workload, so the registry validates it.
    let workload = workloads::validate(name, &s.workloads, &s.shared, run)
        .unwrap_or_else(|| Err(format!("unknown workload '{name}'").into()))
        .map_err(&ctx)?;
    if let Workload::Io(io) = &workload {
        if io.filename.is_some() && !io.shared_file && workers > 1 {
            return Err(ctx(format!(
                "filename names one file, but the job has {workers} workers: add shared_file (one file, a region per worker) or leave filename out (a file per worker)"
            ).into()));
        }
    }
    let (rate, rate_steps, arrival, until_stable) = validate_load(j, duration.is_some(), &workload).map_err(ctx)?;
    Ok(Job {
        name: j.name.clone().unwrap_or_else(|| workload.name().to_string()),
        workers,
        threads,
        duration,
        time_based,
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
fn validate_load(s: &JobSettings, time_based: bool, workload: &Workload) -> Result<Load, ConfigError> {
    let check_rate = |key: &'static str, r: f64| {
        if r.is_finite() && r >= MIN_RATE {
            Ok(r)
        } else {
            Err(ConfigError::value(
                key,
                format!("{r:?}"),
                format!("give at least {MIN_RATE} operations per second (one per 1000 s), a finite number"),
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
    if paced {
        workload.check_paced()?;
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
            .map_err(|e| ConfigError::unreadable("stable_window", e))?
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

fn is_true(b: &bool) -> bool {
    *b
}

pub(crate) mod secs {
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

/// Read a workload file: a fio job file (see [`crate::fiojob`]) or TOML.
pub fn load_workload_file(name: &str, text: &str) -> Result<WorkloadFile, ConfigError> {
    if crate::fiojob::is_job_file(name, text) {
        crate::fiojob::parse(name, text, crate::vars::env)
    } else {
        parse_workload_file(name, text)
    }
}

/// Parse a workload file's text after expanding its `${VAR:-default}` variables; errors name
/// the file's line.
pub fn parse_workload_file(name: &str, text: &str) -> Result<WorkloadFile, ConfigError> {
    let text = &expand_toml(text).map_err(|(line, e)| ConfigError::File {
        file: dfsbench_backends::one_line(name),
        line: Some(line),
        message: e.to_string(),
    })?;
    toml::from_str(text).map_err(|e| {
        // TOML's messages can span lines ("invalid array\nexpected `]`"): errors are one line.
        let msg = e
            .message()
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join(": ");
        ConfigError::File {
            file: dfsbench_backends::one_line(name),
            line: e.span().map(|sp| key_line(text, sp.start.min(text.len()), &msg)),
            message: dfsbench_backends::one_line(&msg),
        }
    })
}

/// A TOML text with the variables of its values expanded, leaving comments as written (they
/// may well show `${SIZE}`); an error comes with its line.
fn expand_toml(text: &str) -> Result<String, (usize, crate::vars::VarError)> {
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let (code, comment) = line.split_at(comment_start(line));
        let room = crate::vars::MAX_EXPANDED.saturating_sub(out.len());
        out += &crate::vars::expand(code, true, room, crate::vars::env).map_err(|e| (i + 1, e))?;
        out += comment;
    }
    Ok(out)
}

/// Where a TOML line's comment starts: the first `#` outside a quoted string (or the end).
fn comment_start(line: &str) -> usize {
    let mut quote = None;
    let mut escaped = false;
    for (at, c) in line.char_indices() {
        match (quote, c) {
            (Some('"'), '\\') if !escaped => {
                escaped = true;
                continue;
            }
            (Some(q), c) if c == q && !escaped => quote = None,
            (None, '"' | '\'') => quote = Some(c),
            (None, '#') => return at,
            _ => {}
        }
        escaped = false;
    }
    line.len()
}

/// The line of an error at byte `start`: a job's error names its key (`` `workers`: ... ``) and
/// TOML points at the job's table, so the line is the key's first line in that table.
fn key_line(text: &str, start: usize, msg: &str) -> usize {
    let line_of = |at: usize| text[..at].matches('\n').count() + 1;
    let key = msg.split('`').nth(1).filter(|k| !k.is_empty());
    let found = key.and_then(|key| {
        let mut at = start;
        text[start..].split_inclusive('\n').find_map(|l| {
            let here = at;
            at += l.len();
            let (k, _) = l.split_once('=')?;
            (k.trim() == key).then_some(here)
        })
    });
    line_of(found.unwrap_or(start))
}

impl WorkloadFile {
    /// The file as `dfsbench run FILE` reads it back: every `$` doubled, so no value is taken
    /// for a variable.
    pub fn to_toml(&self) -> String {
        toml::to_string(self)
            .expect("a workload file serializes to TOML")
            .replace('$', "$$")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::{FileSet, MetaPhase, Rw};

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
                {
                    // `$` in a value comes back as written, not as a variable.
                    let mut job = JobSpec::new("mixture ${NOT_A_VARIABLE} $$1", "mix");
                    job.settings.workers = Some(1);
                    job.settings.duration = Some("1500ms".into());
                    job.workloads.mix.mix = Some(vec!["read=80".into(), "write=20".into()]);
                    job
                },
                {
                    let mut job = spec("iterate");
                    job.workloads.iterate.shuffle = Some(true);
                    job.workloads.iterate.iterations = Some(2);
                    job
                },
            ],
        };
        let text = file.to_toml();
        let back = parse_workload_file("w.toml", &text).unwrap();
        assert_eq!(format!("{:?}", back), format!("{:?}", file), "{text}");
        let config = |f: &WorkloadFile| serde_json::to_string(&validate(&f.run, &f.jobs).unwrap()).unwrap();
        assert_eq!(config(&back), config(&file));
    }

    #[test]
    fn endpoints_come_from_the_file_unless_the_flag_gives_them() {
        let file = parse_workload_file(
            "w.toml",
            "endpoints = [\"h1:9000\", \"h2:9000\"]\n[[job]]\nworkload = \"meta\"\n",
        )
        .unwrap();
        let from_file = validate(&file.run.merge(&RunSpec::default()), &file.jobs).unwrap();
        assert_eq!(from_file.endpoints, ["h1:9000", "h2:9000"]);
        let flag = RunSpec {
            endpoints: Some(vec!["h3:9000".into()]),
            ..Default::default()
        };
        assert_eq!(
            validate(&file.run.merge(&flag), &file.jobs).unwrap().endpoints,
            ["h3:9000"]
        );
        let none = validate(&RunSpec::default(), &file.jobs).unwrap();
        assert!(serde_json::to_value(&none).unwrap().get("endpoints").is_none());
    }

    fn spec(workload: &str) -> JobSpec {
        let mut job = JobSpec::default();
        job.settings.workload = Some(workload.into());
        job
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
        s.workloads.io.rw = Some("randread".into());
        let e = validate(&RunSpec::default(), &[s]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "job 1 (meta): 'rw' does not apply to the meta workload: remove it"
        );
    }

    #[test]
    fn parses_size_sets() {
        let mut s = spec("files");
        s.shared.sizes = Some(vec!["10000x0".into(), "1000x1k".into(), "1x10g".into()]);
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
        bad.shared.sizes = Some(vec!["1000-1k".into()]);
        assert!(validate(&RunSpec::default(), &[bad])
            .unwrap_err()
            .to_string()
            .contains("COUNTxSIZE"));
    }

    #[test]
    fn phases_run_in_canonical_order() {
        let mut s = spec("meta");
        s.shared.phases = Some(vec!["delete".into(), "create".into(), "stat".into()]);
        let c = validate(&RunSpec::default(), &[s]).unwrap();
        let Workload::Meta(m) = &c.jobs[0].workload else {
            panic!()
        };
        assert_eq!(m.phases, vec![MetaPhase::Create, MetaPhase::Stat, MetaPhase::Delete]);
    }

    #[test]
    fn variables_expand_in_values_not_in_comments() {
        let text = "# size = \"${UNSET_IN_A_COMMENT}\"\n[[job]]\nworkload = \"io\" # ${ALSO_UNSET}\nsize = \"${DFSBENCH_T_SIZE:-2m}\" # 2m\nname = \"a#b$$\"\n";
        let file = parse_workload_file("w.toml", text).unwrap();
        assert_eq!(file.jobs[0].workloads.io.size.as_deref(), Some("2m"));
        assert_eq!(file.jobs[0].settings.name.as_deref(), Some("a#b$"));
        let e = parse_workload_file(
            "w.toml",
            "[[job]]\nworkload = \"io\"\n\nsize = \"${DFSBENCH_T_UNSET}\"\n",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("w.toml: line 4: variable DFSBENCH_T_UNSET is not set"),
            "{e}"
        );
    }

    #[test]
    fn workload_file_errors_name_the_line() {
        let e = parse_workload_file("w.toml", "[[job]]\nworkload = \"meta\"\nwrkers = 3\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("w.toml: line 3:"), "{e}");
        assert!(e.contains("wrkers"), "{e}");
        let e = parse_workload_file("w.toml", "[[job]]\nfiles = [3\n")
            .unwrap_err()
            .to_string();
        assert!(!e.contains('\n'), "one line: {e}");
    }

    #[test]
    fn bad_values_are_explained() {
        let mut s = spec("io");
        s.workloads.io.iodepth = Some(0);
        let e = |s: JobSpec| validate(&RunSpec::default(), &[s]).unwrap_err().to_string();
        assert!(e(s).contains("iodepth = 0"));
        let mut s = spec("io");
        s.workloads.io.size = Some("1k".into());
        s.shared.bs = Some("4k".into());
        assert!(e(s).contains("smaller than bs"));
        let mut s = spec("io");
        s.settings.ramp = Some("2s".into());
        assert!(e(s).contains("ramp needs"));
    }
}
