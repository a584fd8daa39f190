//! What a run and its jobs are given: command-line flags and workload-file keys, every one
//! optional, one meaning each (fio's names where the concept is the same).

use serde::{Deserialize, Serialize};

use crate::faults::FaultEntry;
use crate::workloads::{self, field_names, from_keys, RunSettings, SharedOptions, WorkloadOptions};

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
    /// over; 0 makes one pass, cut short at the duration, as fio without time_based (io and files jobs;
    /// a files job's delete always removes every file it wrote).
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

    /// Steady in: iops (each sample's deviation from the mean), bw, iops_slope or bw_slope
    /// (the slope of the window's line, per second, against its mean) (fio's ss) [default:
    /// iops].
    #[arg(long, value_name = "MEASURE", help_heading = "Load")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stable_measure: Option<String>,

    /// Steady: samples count from this long (and one second more) after the phase starts
    /// (fio's ss_ramp) [default: 0].
    #[arg(long, value_name = "TIME", help_heading = "Load")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stable_ramp: Option<String>,

    /// Jobs of one group run at the same time: each lays out its files, then all start
    /// together, and the next job starts when the last of them ends (fio: jobs without
    /// stonewall). A group's jobs are next to each other in the file.
    #[arg(skip)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,

    /// When this job ends, the other jobs of its group stop (fio: exitall).
    #[arg(skip)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exitall: Option<bool>,

    /// When this job fails, the other jobs of its group stop (fio: exitall_on_error).
    #[arg(skip)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exitall_on_error: Option<bool>,

    /// Start the job this long after its group started, e.g. 5s (fio: startdelay).
    #[arg(long, visible_alias = "startdelay", value_name = "TIME", help_heading = "Workload")]
    pub start_delay: Option<String>,

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
    pub(super) fn keys_set(&self) -> Vec<&'static str> {
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

impl RunSpec {
    /// The settings a workload's validation reads.
    pub(crate) fn settings(&self) -> RunSettings {
        RunSettings {
            invalidate: self.invalidate,
            shuffle: self.shuffle,
            verify: self.verify,
        }
    }

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
