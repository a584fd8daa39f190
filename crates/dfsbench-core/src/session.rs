//! One benchmark run from start to end: open the run directory in the target, check
//! capabilities, run the jobs, clean up, and assemble the result document.

use std::convert::Infallible;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::SystemTime;

use sha2::{Digest, Sha256};

use dfsbench_backends::NetOptions;
use dfsbench_backends::{with_storage, AnyStorage, Storage, Target, TargetInfo};

use crate::cluster::Group;
use crate::config::RunConfig;
use crate::faults::{self, Record, Timeline};
use crate::host::{host, process_cpu_times};
use crate::runner::{agree, bind_to_target, fit_to_backend, fit_to_device, run, FitError, Observer, RunClock, Status};
use crate::workloads::TargetAt;
use dfsbench_backends::clock::Instant;
use dfsbench_result::PhaseResult;
use dfsbench_result::{self as result, RunResult, Tool};

/// A run that could not start: nothing was measured. The settings were valid (that is
/// `ConfigError`): the target, the processes or the backend refused, so the CLI exits with 1.
/// Why is `.0`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(transparent)]
pub struct StartError(pub StartCause);

/// Why a run could not start. Ranks agree on these messages as text, so most variants hold
/// the text one rank wrote.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StartCause {
    /// The target URI names no backend, or has a bad option.
    #[error("{0}")]
    Target(String),
    /// mem:// and more than one process.
    #[error(
        "mem:// lives inside one process: runs of several processes need a shared target (a directory or an object store)"
    )]
    MemAcrossProcesses,
    /// A rank left before the run started.
    #[error("{0}")]
    RankLost(String),
    /// Rank 0 sent a run id this build would not make: another dfsbench runs there.
    #[error(
        "rank 0 sent the run id {shown:?}, which is not a run id of this program: run the same dfsbench on every rank"
    )]
    ForeignRunId { shown: String },
    /// A `--server-pid` that names no process on rank 0's host.
    #[error("{0}")]
    ServerPid(String),
    /// A rank could not create or open the run directory.
    #[error("{0}")]
    RunDir(String),
    /// The backend cannot do what a job needs.
    #[error(transparent)]
    Backend(FitError),
}

/// Identifies a run: `20261122-013012-4f2a9c`. The run directory is `dfsbench-<id>`.
pub fn new_run_id() -> String {
    let now = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
    let stamp: String = now.chars().filter(|c| c.is_ascii_digit()).take(14).collect();
    format!(
        "{}-{}-{:06x}",
        &stamp[..8],
        &stamp[8..],
        rand::random::<u32>() & 0xff_ffff
    )
}

/// True for a run id [`new_run_id`] could have made. Rank 0 sends its id to the other ranks,
/// which put it into paths: anything else (`../x`, `/`, a megabyte) is refused.
pub(crate) fn is_run_id(id: &str) -> bool {
    let b = id.as_bytes();
    b.len() == "20261122-013012-4f2a9c".len()
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 15 => *c == b'-',
            0..=14 => c.is_ascii_digit(),
            _ => c.is_ascii_digit() || (b'a'..=b'f').contains(c),
        })
}

/// A 32-bit tag of the run id, written into verified data.
pub(crate) fn run_tag(run_id: &str) -> u32 {
    run_id
        .bytes()
        .fold(0x811c_9dc5u32, |h, b| (h ^ u32::from(b)).wrapping_mul(0x0100_0193))
}

fn target_json(info: &TargetInfo) -> result::Target {
    let caps = serde_json::to_value(info.capabilities).expect("capabilities serialize");
    result::Target {
        uri: dfsbench_backends::redact::redact(&info.uri),
        backend: info.backend.clone(),
        run_path: info.run_path.clone(),
        capabilities: serde_json::from_value(caps).expect("capabilities are booleans"),
        details: info.details.clone(),
        link: None,
    }
}

/// What a finished (or stopped) run produced.
pub struct Outcome {
    pub result: RunResult,
    pub status: Status,
    /// What the user should know: skipped phases, cleanup problems.
    pub warnings: Vec<String>,
}

/// Takes the outcome of a run whose worker threads are stuck inside the storage (a stopped or
/// hung server holds them in a system call): it writes the result and ends the process, as
/// those threads cannot be joined.
pub type Deliver<'a> = &'a dyn Fn(Outcome) -> Infallible;

/// Run `config` against `target_uri` as one rank of `group`. Rank 0's `run_id` names the run
/// for every rank; rank 0 creates and removes the run directory, the others join it, and only
/// rank 0's outcome holds the results. Without `deliver`, a run with stuck threads waits for
/// them.
pub fn execute(
    config: &RunConfig,
    target_uri: &str,
    run_id: &str,
    interrupt: &'static AtomicBool,
    observer: &mut dyn Observer,
    group: &mut Group,
    deliver: Option<Deliver<'_>>,
) -> Result<Outcome, StartError> {
    let run_id = agree_run_id(group, run_id)?;
    let target = Target::parse_with_endpoints(target_uri, &config.endpoints)
        .map_err(|e| StartError(StartCause::Target(e.message)))?;
    if group.size() > 1 && matches!(target, Target::Mem(_)) {
        return Err(StartError(StartCause::MemAcrossProcesses));
    }
    check_server_pids(group, config)?;
    let storage = open_storage(group, &target, target_uri, &run_id, config, interrupt)?;
    let run = Started {
        run_id: &run_id,
        target: &target,
        started_at: humantime::format_rfc3339_millis(SystemTime::now()).to_string(),
    };
    with_storage!(&storage, s => run.measure(s, config, interrupt, observer, group, deliver))
}

/// Every rank takes rank 0's run id; a rank that cannot read it leaves.
fn agree_run_id(group: &mut Group, run_id: &str) -> Result<String, StartError> {
    let run_id = group
        .round(run_id.as_bytes().to_vec(), "the start of the run", |mut all| {
            all.swap_remove(0).1
        })
        .map(|id| String::from_utf8_lossy(&id).into_owned())
        .map_err(|lost| StartError(StartCause::RankLost(lost.message)))?;
    if !is_run_id(&run_id) {
        // This rank cannot take part: it says why itself.
        group.break_off();
        let shown: String = run_id.chars().take(40).collect();
        return Err(StartError(StartCause::ForeignRunId { shown }));
    }
    Ok(run_id)
}

/// The server processes whose CPU rank 0 records must exist on its host.
fn check_server_pids(group: &mut Group, config: &RunConfig) -> Result<(), StartError> {
    let gone = group
        .is_root()
        .then(|| config.server_pids.iter().find(|&&p| process_cpu_times(p).is_none()))
        .flatten()
        .map(|pid| {
            format!(
                "--server-pid {pid}: no process {pid} on {}: give the PIDs of server processes on this host (pidof minio)",
                host().hostname
            )
        });
    match agree(group, gone, "the check of the server processes") {
        Some(e) => Err(StartError(StartCause::ServerPid(e))),
        None => Ok(()),
    }
}

/// Rank 0 makes the run directory before anyone else looks for it; then every rank opens it.
/// If any rank cannot, rank 0 removes it again.
fn open_storage(
    group: &mut Group,
    target: &Target,
    target_uri: &str,
    run_id: &str,
    config: &RunConfig,
    interrupt: &'static AtomicBool,
) -> Result<AnyStorage, StartError> {
    let run_name = format!("{}{run_id}", dfsbench_backends::RUN_PREFIX);
    let net = NetOptions {
        create_bucket: config.create_bucket,
        retries: config.retries,
        setup_limit: config.op_timeout,
        stop: Some(interrupt),
        overwrite_device: match (config.overwrite_device.as_deref(), target) {
            (Some(dev), Target::Posix(path)) => Path::new(dev) == path.as_path(),
            _ => false,
        },
    };
    let created = group.is_root().then(|| target.open_run(target_uri, &run_name, net));
    let problem = created
        .as_ref()
        .and_then(|c| c.as_ref().err())
        .map(|e| e.message.clone());
    if let Some(e) = agree(group, problem, "the creation of the run directory") {
        return Err(StartError(StartCause::RunDir(e)));
    }
    let storage = match created {
        Some(c) => c,
        None => target.join_run(target_uri, &run_name, net),
    };
    let problem = storage.as_ref().err().map(|e| e.message.clone());
    let joined = agree(group, problem, "the opening of the run directory");
    match (storage, joined) {
        (Ok(s), None) => Ok(s),
        (storage, Some(e)) => {
            if let (Ok(s), true) = (&storage, group.is_root()) {
                with_storage!(s, s => { let _ = s.remove_run(); });
            }
            Err(StartError(StartCause::RunDir(e)))
        }
        (Err(e), None) => Err(StartError(StartCause::RunDir(e.message))),
    }
}

/// Bind the jobs to what the target holds: rank 0 first (it makes what is missing), then,
/// once every rank knows it succeeded, the others to what it made.
fn bind<S: Storage>(
    config: &mut RunConfig,
    s: &S,
    info: &TargetInfo,
    run_id: &str,
    group: &mut Group,
) -> Result<Vec<String>, StartError> {
    // The same config on every rank: all skip the round alike.
    if !config.jobs.iter().any(|j| j.workload.binds_to_target()) {
        return Ok(Vec::new());
    }
    let beside = s.beside();
    let mut at = TargetAt {
        info,
        run_id,
        seed: config.seed,
        root: true,
        beside: beside.as_deref(),
    };
    let first = group.is_root().then(|| bind_to_target(config, &at));
    let problem = first.as_ref().and_then(|r| r.as_ref().err()).map(|e| e.to_string());
    if let Some(e) = agree(group, problem, "the check of what the target holds") {
        return Err(StartError(StartCause::RunDir(e)));
    }
    match first {
        Some(notes) => notes.map_err(|e| StartError(StartCause::Backend(e))),
        None => {
            at.root = false;
            bind_to_target(config, &at).map_err(|e| StartError(StartCause::Backend(e)))
        }
    }
}

/// A run whose directory is open.
struct Started<'a> {
    run_id: &'a str,
    target: &'a Target,
    started_at: String,
}

impl Started<'_> {
    /// Fit the jobs to the backend, run the null tests and the jobs, clean up, and assemble the
    /// result document.
    fn measure<S: Storage>(
        self,
        s: &S,
        config: &RunConfig,
        interrupt: &'static AtomicBool,
        observer: &mut dyn Observer,
        group: &mut Group,
        deliver: Option<Deliver<'_>>,
    ) -> Result<Outcome, StartError> {
        let info = s.info();
        let mut config = config.clone();
        let device_bytes = info.details.get("device_bytes").and_then(|b| b.parse().ok());
        let fitted =
            fit_to_backend(&mut config, s.capabilities(), &info.backend).and_then(|notes| match device_bytes {
                Some(bytes) => fit_to_device(&mut config, bytes).map(|()| notes),
                None => Ok(notes),
            });
        let mut notes = match fitted {
            Ok(notes) => notes,
            Err(e) => {
                if group.is_root() {
                    let _ = s.remove_run();
                }
                return Err(StartError(StartCause::Backend(e)));
            }
        };
        notes.extend(bind(&mut config, s, &info, self.run_id, group).inspect_err(|_| {
            if group.is_root() {
                let _ = s.remove_run();
            }
        })?);
        let endpoint = match self.target {
            Target::Net(spec) => spec.endpoint_address(),
            _ => None,
        };
        // One process measures the hardware; the others wait for it at the first phase.
        let null_tests = (config.null_tests && group.is_root())
            .then(|| crate::nulltest::run(s, endpoint, config.nodes.as_ref(), self.run_id));
        let measured = null_tests.as_ref().map_or(&[][..], |n| &n.nodes[..]);
        let link = config.nodes.as_ref().and_then(|k| k.link(measured));
        let doc = Document {
            started: self,
            // The config as it ran, after fitting to the backend.
            config_json: serde_json::to_value(&config).expect("config serializes"),
            config: &config,
            target: result::Target {
                link,
                ..target_json(&info)
            },
            null_tests,
            cluster: cluster(group, &config),
        };
        let warnings = if group.is_root() { notes } else { Vec::new() };
        let origin = Instant::now();
        let timeline =
            (group.is_root() && !config.faults.is_empty()).then(|| Timeline::start(&config.faults, origin, interrupt));
        // Threads stuck in the storage: the run directory stays (removing it would hang too).
        let abandon = deliver.map(|deliver| {
            let (doc, timeline, warnings, info) = (&doc, &timeline, &warnings, &info);
            move |phases: Vec<PhaseResult>, status: Status| -> Infallible {
                let record = timeline.as_ref().map(|t| t.finish(&mut |_| {}));
                let mut warnings = warnings.clone();
                warnings.push(format!(
                    "left the run directory {} in place: operations in it had not returned",
                    info.run_path
                ));
                deliver(doc.outcome(phases, status, record, warnings, Vec::new()))
            }
        });
        let clock = RunClock {
            run_tag: run_tag(doc.started.run_id),
            interrupt,
            origin,
            timeline: timeline.as_ref(),
            abandon: abandon.as_ref().map(|a| a as _),
        };
        let (phases, status) = run(s, &config, &clock, observer, group);
        let record = timeline.as_ref().map(|t| t.finish(&mut |what| observer.waiting(what)));
        let mut warnings = warnings;
        warnings.extend(clean_up(s, &config, group, &info.run_path));
        Ok(doc.outcome(phases, status, record, warnings, group.lost().to_vec()))
    }
}

/// What the result document holds besides the phases, known before they run.
struct Document<'a> {
    started: Started<'a>,
    config: &'a RunConfig,
    config_json: serde_json::Value,
    target: result::Target,
    null_tests: Option<result::NullTests>,
    cluster: Option<result::Cluster>,
}

impl Document<'_> {
    /// The run's outcome from its phases, how it ended, its fault record and the ranks it
    /// went on without.
    fn outcome(
        &self,
        mut phases: Vec<PhaseResult>,
        status: Status,
        record: Option<Record>,
        warnings: Vec<String>,
        lost: Vec<result::LostRank>,
    ) -> Outcome {
        for p in &mut phases {
            p.cache_suspect = result::cache_suspects(p, self.null_tests.as_ref(), self.target.link.as_ref());
        }
        let faults = record
            .as_ref()
            .map(|r| faults::analyse(&self.config.faults, r, &phases));
        let status = match (status, record.as_ref()) {
            (Status::Complete | Status::Interrupted, Some(Record { failure: Some(f), .. })) => {
                Status::Failed(f.clone())
            }
            (Status::Complete, Some(r)) if r.recovery.as_ref().is_some_and(|r| r.interrupted) => Status::Interrupted,
            (status, _) => status,
        };
        let (status_name, status_message) = match &status {
            Status::Complete => ("complete", None),
            Status::Interrupted => ("interrupted", Some("interrupted by the user".to_string())),
            Status::Aborted(m) => ("aborted", Some(m.clone())),
            Status::Failed(m) => ("failed", Some(m.clone())),
        };
        let config_hash = format!("{:x}", Sha256::digest(self.config_json.to_string().as_bytes()));
        let result = RunResult {
            schema: result::SCHEMA.to_string(),
            tool: Tool {
                name: "dfsbench".into(),
                version: env!("CARGO_PKG_VERSION").into(),
            },
            run_id: self.started.run_id.to_string(),
            started_at: self.started.started_at.clone(),
            finished_at: humantime::format_rfc3339_millis(SystemTime::now()).to_string(),
            status: status_name.into(),
            status_message,
            tag: None,
            command_line: dfsbench_backends::redact::command_line(),
            host: host(),
            target: self.target.clone(),
            config: self.config_json.clone(),
            config_hash,
            null_tests: self.null_tests.clone(),
            cluster: self.cluster.clone().map(|c| result::Cluster { lost, ..c }),
            groups: group_totals(self.config, &phases),
            phases,
            faults: faults.unwrap_or_default(),
            events: record.as_ref().map(|r| r.events.clone()).unwrap_or_default(),
            recovery: record.and_then(|r| r.recovery),
        };
        Outcome {
            result,
            status,
            warnings,
        }
    }
}

/// The total of every group of jobs that ran at the same time.
fn group_totals(config: &RunConfig, phases: &[PhaseResult]) -> Vec<result::GroupTotal> {
    let groups = config.stages().into_iter().filter(|s| s.len() > 1);
    groups
        .filter_map(|s| {
            let jobs: Vec<(usize, String)> = s.clone().map(|i| (i, config.jobs[i].name.clone())).collect();
            let name = config.jobs[s.start].group.as_deref().unwrap_or_default();
            result::group_total(name, &jobs, phases)
        })
        .collect()
}

/// Remove the run directory unless `--keep`, once nobody works in it; warnings on failure.
fn clean_up<S: Storage>(s: &S, config: &RunConfig, group: &mut Group, run_path: &str) -> Vec<String> {
    let mut warnings = Vec::new();
    // Nobody may still be working in the run directory when rank 0 removes it.
    if !group.is_broken() {
        let _ = group.barrier("the end of the run");
    }
    if !config.keep && group.is_root() {
        if let Err(e) = s.remove_run() {
            warnings.push(format!("could not remove the run directory {run_path}: {e}"));
        }
    }
    // Rank 0 died (SIGKILL, a crash): nobody else will remove the run directory. Every
    // rank left tries; one of them gets it all.
    if !config.keep && group.root_gone() {
        let _ = s.remove_run();
    }
    warnings
}

/// Who ran the run, when more than one process did.
fn cluster(group: &Group, config: &RunConfig) -> Option<result::Cluster> {
    if group.size() == 1 {
        return None;
    }
    let mut nodes: Vec<String> = Vec::new();
    for m in group.members() {
        if !nodes.contains(&m.host) {
            nodes.push(m.host.clone());
        }
    }
    Some(result::Cluster {
        mode: group.kind().to_string(),
        ranks: group.size(),
        nodes,
        workers_per_rank: config.jobs.iter().map(|j| j.workers).collect(),
        shuffle: config.shuffle,
        members: group
            .members()
            .iter()
            .map(|m| result::Member {
                rank: m.rank,
                host: m.host.clone(),
                pid: m.pid,
                clock_rtt_s: m.clock_rtt_s,
            })
            .collect(),
        lost: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_ids_are_unique_and_sortable() {
        let a = new_run_id();
        let b = new_run_id();
        assert_eq!(a.len(), "20261122-013012-4f2a9c".len());
        assert_ne!(a, b);
        assert_ne!(run_tag(&a), run_tag(&b));
        assert!(is_run_id(&a));
    }

    #[test]
    fn only_run_ids_go_into_paths() {
        for bad in [
            "",
            "../../etc/passwd-xxxxxx",
            "20261122-013012-4f2a9",
            "20261122-013012-4f2a9c0",
            "20261122/013012-4f2a9c",
            "20261122-013012-4F2A9C",
            "2026112a-013012-4f2a9c",
        ] {
            assert!(!is_run_id(bad), "{bad}");
        }
        assert!(is_run_id("20261122-013012-4f2a9c"));
    }
}
