//! A validated run and its jobs: defaults filled, every key checked against its job's
//! workload, errors naming the key and the fix.

use std::time::Duration;

use serde::Serialize;

use crate::error::{ConfigError, JobLabel};
use crate::faults::{self, FaultPlan, FaultSettings};
use crate::job::{opt_secs, secs, Job};
use crate::load::{parse_band, Arrival, Stable};
use crate::units::parse_duration;
use crate::workloads::{self, field_names};

use super::{JobSettings, JobSpec, RunSpec, DEFAULT_MAX_ERRORS, DEFAULT_WORKERS, MIN_RATE};

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
    /// The target's nodes and link limit, where known (a lab target's): the null tests measure
    /// each node, and read phases beyond the link are marked. The target's, not the
    /// workload's: left out of the config and its hash.
    #[serde(skip)]
    pub nodes: Option<crate::nodes::KnownNodes>,
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
    /// The block device the user let this run overwrite (`--overwrite-device`): a target that
    /// is this device opens as the run's one file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overwrite_device: Option<String>,
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
    pub(crate) fn watched_servers(&self) -> Vec<u32> {
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

    /// The jobs in the order they run: one range after another, the jobs of a range at the
    /// same time (a group; any other job is a range of its own).
    pub fn stages(&self) -> Vec<std::ops::Range<usize>> {
        let mut out: Vec<std::ops::Range<usize>> = Vec::new();
        for (i, job) in self.jobs.iter().enumerate() {
            match out.last_mut() {
                Some(last) if job.group.is_some() && self.jobs[last.start].group == job.group => last.end = i + 1,
                _ => out.push(i..i + 1),
            }
        }
        out
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
    let mut jobs: Vec<Job> = jobs.into_iter().map(|(j, _)| j).collect();
    check_groups(&jobs)?;
    share_between_jobs(&mut jobs);
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
        nodes: None,
        server_pids_now: None,
        // Only the command line grants it (run.rs), never a workload file.
        overwrite_device: None,
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
        (Some(false), Some(_)) if !matches!(name, "io" | "files") => {
            return Err(ctx(format!(
                "time_based = false (one pass, cut short at the duration) applies to io and files jobs: remove it from this {name} job"
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
    let workload = workloads::validate(name, &s.workloads, &s.shared, &run.settings())
        .unwrap_or_else(|| Err(format!("unknown workload '{name}'").into()))
        .map_err(&ctx)?;
    // What the workload's own options ask for (train's accelerators) sets the job's workers.
    let workers =
        match workload.workers() {
            Some(n) if j.workers.or(run.workers).is_some_and(|w| w != n) => return Err(ctx(ConfigError::value(
                "accelerators",
                n,
                "without --accelerators, --workers sets the accelerators: give --accelerators or --workers, not both",
            ))),
            Some(n) => n,
            None => workers,
        };
    // Each may be several workers (a train accelerator's parallel readers).
    let workers = workers.saturating_mul(workload.workers_each());
    if let Some(t) = threads.filter(|&t| t > workers) {
        return Err(ctx(ConfigError::value(
            "threads",
            t,
            format!("give between 1 and the number of workers ({workers})"),
        )));
    }
    workload.check_workers(workers).map_err(&ctx)?;
    let (rate, rate_steps, arrival, until_stable) = validate_load(j, duration.is_some()).map_err(ctx)?;
    let start_delay = j.start_delay.as_deref().map(parse_duration).transpose();
    let start_delay = start_delay
        .map_err(|e| ctx(ConfigError::unreadable("start_delay", e)))?
        .unwrap_or_default();
    if j.group.as_deref().is_some_and(|g| g.trim().is_empty()) {
        return Err(ctx(ConfigError::value(
            "group",
            "\"\"",
            "name the group, e.g. group = \"mixed\", or leave it out",
        )));
    }
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
        group: j.group.clone(),
        exitall: j.exitall.unwrap_or(false),
        exitall_on_error: j.exitall_on_error.unwrap_or(false),
        optional: false,
        start_delay,
        workload,
    })
}

type Load = (Option<f64>, Vec<f64>, Option<Arrival>, Option<Stable>);

/// Open-loop rate and steady-state keys, which apply across workloads.
fn validate_load(s: &JobSettings, time_based: bool) -> Result<Load, ConfigError> {
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
        let band = s.stable_band.as_deref().map(parse_band).transpose()?.unwrap_or(0.05);
        let mut rule = Stable::band(band, window);
        if let Some(m) = &s.stable_measure {
            rule = rule.with_measure(m)?;
        }
        if let Some(r) = &s.stable_ramp {
            rule.ramp = parse_duration(r).map_err(|e| ConfigError::unreadable("stable_ramp", e))?;
        }
        Some(rule)
    } else {
        if s.stable_band.is_some() || s.stable_window.is_some() || s.stable_measure.is_some() || s.stable_ramp.is_some()
        {
            return Err(
                "stable_band, stable_window, stable_measure and stable_ramp need until_stable: add --until-stable"
                    .into(),
            );
        }
        None
    };
    Ok((rate, steps, arrival, until_stable))
}

/// A group's jobs run together, so they must be next to each other: a job between them would
/// have to run both before and during the group.
/// What io jobs share with each other: fio's flows (per group), dedupe working sets and the
/// files they name.
fn share_between_jobs(jobs: &mut [Job]) {
    let mut io: Vec<workloads::io::Placed<'_>> = jobs
        .iter_mut()
        .enumerate()
        .filter_map(|(i, j)| match &mut j.workload {
            workloads::Workload::Io(io) => Some((i, j.group.as_deref(), j.workers, io)),
            _ => None,
        })
        .collect();
    workloads::io::share_flows(&mut io);
    workloads::io::share_dedupe(&mut io);
    workloads::io::share_files(&mut io);
}

fn check_groups(jobs: &[Job]) -> Result<(), ConfigError> {
    for (i, job) in jobs.iter().enumerate() {
        let Some(g) = &job.group else { continue };
        let earlier = jobs[..i].iter().rposition(|j| j.group.as_ref() == Some(g));
        if let Some(e) = earlier.filter(|&e| e + 1 != i) {
            return Err(format!(
                "jobs '{}' and '{}' are in group '{}' but job '{}' is between them: put a group's jobs next to each other",
                jobs[e].name,
                job.name,
                dfsbench_backends::one_line(g),
                jobs[e + 1].name
            )
            .into());
        }
    }
    Ok(())
}
