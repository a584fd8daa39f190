//! Running a study: every point on every system in turn, through the same path as
//! `dfsbench run`, a line per point, the manifest rewritten after each so that Ctrl-C or a
//! crash keeps what finished.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant, SystemTime};

use dfsbench_backends::{Target, BACKENDS};
use dfsbench_core::cluster::Group;
use dfsbench_core::config::{validate, RunConfig, RunSpec, WorkloadFile};
use dfsbench_core::runner::{fit_to_backend, Quiet};
use dfsbench_core::session::{execute as execute_run, new_run_id};
use dfsbench_core::FaultEntry;
use dfsbench_result::{LinkCapacity, RunResult};

use super::args::StudyArgs;
use super::launch::{self, Launcher};
use super::manifest::{Manifest, PointRecord, RunRecord, System, SCHEMA};
use super::model::{Disruption, Point, Spread, Study};
use super::scale::Scale;
use crate::failure::Failure;
use crate::interrupt::{on_interrupt, INTERRUPT};
use crate::output::save;

/// A label is a column header and a directory name.
fn valid_label(l: &str) -> bool {
    !l.is_empty() && l.len() <= 40 && l.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
}

/// `LABEL=URI` or `URI`: a label is a plain word before `=` (a URI's own `=` comes after
/// `:` or `/`).
fn split_label(arg: &str) -> (Option<&str>, &str) {
    match arg.split_once('=') {
        Some((l, uri)) if !l.contains([':', '/', '?']) => (Some(l), uri),
        _ => (None, arg),
    }
}

/// The systems of a study: the `--target`s with their labels, and LocalFS when the study wants it.
pub fn systems(targets: &[String], localfs: bool) -> Result<Vec<System>, String> {
    if targets.is_empty() {
        return Err("a study needs --target URI (repeat it for a column per system)".into());
    }
    let mut out: Vec<System> = Vec::new();
    for arg in targets {
        let (label, given) = split_label(arg);
        // A lab target (`lab:gluster`, `lab:ceph-s3`) runs on the lab's URI, named after the lab.
        let lab = given.strip_prefix("lab:");
        let (uri, env, lab_name) = match lab {
            Some(spec) => {
                let lab = dfsbench_lab::resolve_target(spec).map_err(|e| format!("--target {arg}: {e}"))?;
                (lab.uri, lab.env, Some(lab.lab))
            }
            None => (given.to_string(), Vec::new(), None),
        };
        let uri = uri.as_str();
        let parsed = Target::parse(uri).map_err(|e| format!("--target {arg}: {}", e))?;
        let label = match label {
            Some(l) if !valid_label(l) => {
                return Err(format!(
                    "--target {arg}: label '{l}' must be letters, digits, '.', '_' or '-' (at most 40)"
                ))
            }
            Some(l) => l.to_string(),
            None => {
                let base = lab.map_or_else(|| backend_name(&parsed, uri).to_string(), str::to_string);
                let taken = |l: &str| out.iter().any(|s| s.label == l);
                (1..)
                    .map(|i| if i == 1 { base.clone() } else { format!("{base}-{i}") })
                    .find(|l| !taken(l))
                    .expect("a free label")
            }
        };
        if out.iter().any(|s| s.label == label) {
            return Err(format!(
                "--target {arg}: label '{label}' is used twice: give each target its own LABEL="
            ));
        }
        out.push(System {
            label,
            target: uri.to_string(),
            local_baseline: false,
            env,
            lab_target: lab_name.as_ref().map(|_| given.to_string()),
            lab: lab_name,
        });
    }
    if localfs && !out.iter().any(|s| s.label == "localfs") {
        out.push(System {
            label: "localfs".into(),
            target: std::env::temp_dir().display().to_string(),
            local_baseline: true,
            env: Vec::new(),
            lab: None,
            lab_target: None,
        });
    }
    Ok(out)
}

fn out_dir(a: &StudyArgs, study: &str, id: &str, resume: bool) -> Result<PathBuf, Failure> {
    let dir = a
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("dfsbench-study-{study}-{id}")));
    if dir.join(super::manifest::FILE).exists() && !resume {
        return Err(Failure::usage(format!(
            "{} already holds a study: give another --out (or re-render it with --from)",
            dir.display()
        )));
    }
    std::fs::create_dir_all(&dir).map_err(|e| Failure::runtime(format!("cannot create {}: {e}", dir.display())))?;
    Ok(dir)
}

/// A result path as the manifest stores it: relative to the study directory when inside it.
fn relative(path: &Path, dir: &Path) -> String {
    path.strip_prefix(dir).unwrap_or(path).display().to_string()
}

/// Why the target's backend cannot run `config` at all, judged from the capabilities every
/// target of that backend has (a particular file system may still refuse, e.g. O_DIRECT on
/// tmpfs: that is an error of the run).
fn unsupported(config: &RunConfig, spread: Spread, sys: &System) -> Option<String> {
    let uri = sys.target.as_str();
    let target = Target::parse(uri).ok()?;
    if matches!(target, Target::Mem(_)) && spread != Spread::Threads {
        return Some("mem:// lives in one process: points of several processes need a shared target".into());
    }
    if sys.local_baseline && matches!(spread, Spread::Nodes { .. }) {
        return Some("LocalFS is the single-node baseline: points over nodes run on the targets".into());
    }
    let backend = backend_name(&target, uri);
    let info = BACKENDS.iter().find(|b| b.name == backend)?;
    fit_to_backend(&mut config.clone(), info.capabilities, backend)
        .err()
        .map(|e| e.to_string())
}

fn backend_name<'u>(t: &Target, uri: &'u str) -> &'u str {
    match t {
        Target::Posix(_) => "posix",
        Target::Mem(_) => "mem",
        Target::Net(_) => uri.split_once("://").map_or("net", |(s, _)| s),
    }
}

/// The variables lab targets set, with the values they had before, so that each system's
/// points see its own credentials and a lab's never leak into another target's points.
pub(super) struct LabEnv(Vec<(&'static str, Option<std::ffi::OsString>)>);

impl LabEnv {
    pub(super) fn of(systems: &[System]) -> LabEnv {
        let mut keys: Vec<&'static str> = systems.iter().flat_map(|s| s.env.iter().map(|(k, _)| *k)).collect();
        keys.sort_unstable();
        keys.dedup();
        LabEnv(keys.into_iter().map(|k| (k, std::env::var_os(k))).collect())
    }

    /// The variables as they were before any lab target's.
    pub(super) fn restore(&self) {
        for (key, before) in &self.0 {
            match before {
                Some(v) => std::env::set_var(key, v),
                None => std::env::remove_var(key),
            }
        }
    }

    pub(super) fn switch_to(&self, sys: &System) {
        for (key, before) in &self.0 {
            match (sys.env.iter().find(|(k, _)| k == key), before) {
                (Some((_, v)), _) => std::env::set_var(key, v),
                (None, Some(v)) => std::env::set_var(key, v),
                (None, None) => std::env::remove_var(key),
            }
        }
    }
}

/// A fault point's operations give up after this long, so that a hung mount (MooseFS without
/// its master blocks for minutes) ends as counted timeouts, not a hung study.
const FAULT_OP_TIMEOUT: &str = "30s";

/// The settings of a point with a disruption on `sys`: the lab's own fault and probe commands
/// on a lab target; the study's --fault and --recovery-probe for a recovery point elsewhere.
/// Err says why the point does not apply to `sys`.
fn disruption_spec(d: &Disruption, sys: &System, a: &StudyArgs, base: &RunSpec) -> Result<RunSpec, String> {
    let mut spec = RunSpec {
        op_timeout: Some(FAULT_OP_TIMEOUT.into()),
        ..base.clone()
    };
    let Some(lab) = &sys.lab else {
        return match (&a.fault, &a.recovery_probe) {
            (Some(faults), Some(probe)) if d.probe => {
                spec.fault = Some(faults.clone());
                spec.recovery_probe = Some(probe.clone());
                Ok(spec)
            }
            _ if d.probe => Err("needs a lab target (-t lab:NAME), or --fault and --recovery-probe".into()),
            _ => Err(format!("needs a lab target (-t lab:NAME) to take out a {}", d.what())),
        };
    };
    let node = dfsbench_lab::node_for(lab, d.role)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| match d.role {
            dfsbench_lab::Role::Client => {
                format!("needs two client nodes: `dfsbench lab up {lab} --clients 2`")
            }
            _ => format!("the {lab} lab has no {}", d.what()),
        })?;
    let fault = |action: &str, at_s: f64| -> Result<FaultEntry, String> {
        Ok(FaultEntry {
            at: format!("{}+{}ms", d.phase, (at_s * 1000.0).round() as u64),
            command: crate::lab::lab_command(&["fault", lab, action, &node]).map_err(|e| e.to_string())?,
        })
    };
    let mut faults = vec![fault(d.action, d.at_s)?];
    if let Some((action, at_s)) = d.back {
        faults.push(fault(action, at_s)?);
    }
    spec.fault = Some(faults);
    if d.probe {
        spec.recovery_probe = Some(crate::lab::lab_command(&["probe", lab]).map_err(|e| e.to_string())?);
    }
    Ok(spec)
}

/// Set the lab's one-way delay on its node links (0 removes it).
fn set_delay(lab: &str, ms: u64) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find the dfsbench binary: {e}"))?;
    dfsbench_lab::delay::apply(lab, std::time::Duration::from_millis(ms), &exe)
        .map_err(|e| format!("cannot set a {ms} ms delay on lab {lab}: {}", e))
}

/// What the study passes to every point.
struct Context<'a> {
    dir: &'a Path,
    launcher: Option<&'a Launcher>,
}

/// How a run ended, in a word or a line: `ok`, `interrupted`, or what went wrong.
fn status_of(r: &RunResult) -> String {
    let errors: u64 = r.phases.iter().map(|p| p.errors.total).sum();
    match r.status.as_str() {
        "complete" if errors == 0 => "ok".into(),
        "complete" => format!("{errors} operations failed"),
        "interrupted" => "interrupted".into(),
        other => r.status_message.clone().unwrap_or_else(|| other.into()),
    }
}

fn record(sys: &System) -> RunRecord {
    RunRecord {
        system: sys.label.clone(),
        ..Default::default()
    }
}

/// A point of one process, in this process.
fn run_here(
    config: &RunConfig,
    sys: &System,
    result: &Path,
    ctx: &Context,
    measured_links: &mut BTreeMap<String, LinkCapacity>,
) -> Result<(RunRecord, String), Failure> {
    let mut rec = record(sys);
    let run_id = new_run_id();
    // A point whose threads hang in the storage waits for them (no hook ends the study).
    match execute_run(
        config,
        &sys.target,
        &run_id,
        &INTERRUPT,
        &mut Quiet,
        &mut Group::solo(),
        None,
    ) {
        Err(e) => {
            crate::failure::print_detail();
            rec.error = Some(e.to_string());
            Ok((rec, format!("failed: {e}")))
        }
        Ok(outcome) => {
            let nodes = outcome.result.null_tests.as_ref().map(|n| &n.nodes[..]);
            if let Some(link) = nodes.and_then(LinkCapacity::measured) {
                measured_links.insert(sys.label.clone(), link);
            }
            let path = save(&outcome.result, result)?.path;
            rec.result = Some(relative(&path, ctx.dir));
            Ok((rec, status_of(&outcome.result)))
        }
    }
}

/// A point of several processes: `dfsbench run` in a child, from the point's workload file.
fn run_child(
    point: &Point,
    workload: &Path,
    sys: &System,
    result: &Path,
    ctx: &Context,
) -> Result<(RunRecord, String), Failure> {
    let mut rec = record(sys);
    let log = result.with_extension("log");
    let ended = match launch::run(
        point.spread,
        ctx.launcher,
        sys.lab.as_deref(),
        workload,
        sys.lab_target.as_deref().unwrap_or(&sys.target),
        result,
        &log,
        &INTERRUPT,
    ) {
        Ok(ended) => ended,
        Err(e) => {
            rec.error = Some(e.clone());
            return Ok((rec, format!("failed: {e}")));
        }
    };
    rec.command = Some(ended.command);
    let loaded = std::fs::read(result)
        .ok()
        .and_then(|t| serde_json::from_slice::<RunResult>(&t).ok());
    let Some(r) = loaded else {
        let why = match (ended.code, ended.reason) {
            (Some(130), _) => "interrupted".to_string(),
            // Rank 0 writes the result: on another host's disk when the launcher put it there.
            (Some(0), _) => format!(
                "the run ended but its result is not at {}: if the launcher started rank 0 on another host, run the study there or give --out on a shared file system",
                result.display()
            ),
            (_, Some(reason)) => reason,
            (Some(code), None) => format!("exited with code {code} and no result"),
            (None, None) => "ended by a signal, with no result".into(),
        };
        rec.error = Some(why.clone());
        let status = if why == "interrupted" {
            why
        } else {
            format!("failed: {why}")
        };
        return Ok((rec, status));
    };
    rec.result = Some(relative(result, ctx.dir));
    let ranks = r.cluster.as_ref().map_or(1, |c| c.ranks);
    let hosts = r.cluster.as_ref().map_or(1, |c| c.nodes.len());
    rec.warning = match point.spread {
        _ if ranks != point.spread.processes() => Some(format!(
            "{ranks} processes ran, the point asks for {}: check --launcher",
            point.spread.processes()
        )),
        Spread::Nodes { nodes, .. } if hosts < nodes => Some(format!(
            "the {ranks} processes ran on {hosts} host(s), not {nodes} nodes: the launcher did not spread them"
        )),
        _ => None,
    };
    Ok((rec, status_of(&r)))
}

/// The points of an earlier run of the study in `dir` to keep: all of a complete one; of one
/// that stopped, those that ran on every system without a run cut short by Ctrl-C.
fn kept(before: Manifest, systems: usize, dir: &Path) -> Vec<PointRecord> {
    if before.status == "complete" {
        return before.points;
    }
    let interrupted = |r: &RunRecord| {
        let status = r.result.as_ref().and_then(|f| {
            let text = std::fs::read(dir.join(f)).ok()?;
            let v: serde_json::Value = serde_json::from_slice(&text).ok()?;
            v["status"].as_str().map(str::to_string)
        });
        r.error.as_deref() == Some("interrupted") || status.as_deref() == Some("interrupted")
    };
    let mut points = before.points;
    points.retain(|p| p.runs.len() == systems && !p.runs.iter().any(interrupted));
    points
}

/// Run every point (with `before`, an earlier run of it to go on with: only the points it
/// lacks); returns the manifest, the directory and how the study ended.
pub fn execute(
    study: &Study,
    scale: Scale,
    systems: Vec<System>,
    a: &StudyArgs,
    launcher: Option<&Launcher>,
    before: Option<Manifest>,
) -> Result<(Manifest, PathBuf, Result<(), Failure>), Failure> {
    let (study_id, started_at) = match &before {
        Some(b) => (b.study_id.clone(), b.started_at.clone()),
        None => (
            new_run_id(),
            humantime::format_rfc3339_millis(SystemTime::now()).to_string(),
        ),
    };
    let dir = out_dir(a, study.name, &study_id, before.is_some())?;
    let kept = before.map(|b| kept(b, systems.len(), &dir)).unwrap_or_default();
    let mut m = Manifest {
        schema: SCHEMA.into(),
        study: study.name.into(),
        study_id,
        scale: scale.factor(),
        nodes: a.nodes.clone().unwrap_or_default(),
        launcher: a.launcher.clone(),
        started_at,
        status: "running".into(),
        systems: systems.clone(),
        points: Vec::new(),
    };
    let save_manifest = |m: &Manifest| {
        m.save(&dir)
            .map_err(|e| Failure::runtime(format!("cannot write {}/study.json: {e}", dir.display())))
    };
    save_manifest(&m)?;
    let ctx = Context { dir: &dir, launcher };
    let say = |line: String| {
        if !a.quiet {
            eprintln!("{line}");
        }
    };
    say(format!(
        "study {} ({}) at scale {scale}: {} points x {} systems -> {}{}",
        study.name,
        study.title,
        study.points.len(),
        systems.len(),
        dir.display(),
        match kept.len() {
            0 => String::new(),
            1 => " (resumed: 1 point kept)".to_string(),
            n => format!(" (resumed: {n} points kept)"),
        }
    ));
    let run_spec = RunSpec {
        create_bucket: a.create_bucket.then_some(true),
        retries: a.retries,
        server_pids: a.server_pids.clone(),
        ..study.run.clone()
    };
    let env = LabEnv::of(&systems);
    on_interrupt();
    let total = study.points.len() * systems.len();
    let (mut done, mut failed) = (0, 0);
    // Systems whose null tests are still to run: with the first point that runs on each, so a
    // system the first point skips (S3 and positional writes) still has them. Lab systems run
    // them in every study: what they measure of the nodes' links is what the system's read
    // phases are judged by.
    let mut null_pending: Vec<&str> = systems
        .iter()
        .filter(|s| s.lab.is_some())
        .map(|s| s.label.as_str())
        .collect();
    // What each lab system's null tests measured its client's link to carry.
    let mut measured_links: BTreeMap<String, LinkCapacity> = BTreeMap::new();
    // The kept points, in the study's order as the others run: a later Ctrl-C keeps them too.
    let order = |id: &str| study.points.iter().position(|p| p.id == id);
    m.points = kept;
    m.points.sort_by_key(|p| order(&p.id));
    'points: for point in &study.points {
        if m.points.iter().any(|p| p.id == point.id) {
            done += systems.len();
            continue;
        }
        let mut record = PointRecord {
            id: point.id.clone(),
            params: point.params.clone(),
            runs: Vec::new(),
        };
        if point.null_tests {
            null_pending = systems.iter().map(|s| s.label.as_str()).collect();
        }
        let spec = run_spec.clone();
        let config = validate(&spec, &point.jobs).map_err(|e| Failure::usage(format!("{}: {e}", point.id)))?;
        let workload = (point.spread != Spread::Threads)
            .then(|| write_workload(&dir, point, None, spec.clone()))
            .transpose()?;
        for sys in &systems {
            if INTERRUPT.load(Ordering::SeqCst) {
                m.points.push(record);
                break 'points;
            }
            done += 1;
            let started = Instant::now();
            let left_out = point.left_out.clone().map(Err);
            // A disruption's settings are the system's own (its lab's nodes).
            let sys_spec = point.disruption.as_ref().map(|d| disruption_spec(d, sys, a, &spec));
            let config =
                left_out
                    .unwrap_or(Ok(()))
                    .and_then(|()| match (&sys_spec, point.one_way_delay_ms, &sys.lab) {
                        (_, Some(_), None) => Err("needs a lab target (-t lab:NAME) to add network delay".into()),
                        (None, _, _) => Ok(config.clone()),
                        (Some(s), _, _) => s
                            .clone()
                            .and_then(|s| validate(&s, &point.jobs).map_err(|e| e.to_string())),
                    });
            // A lab's daemons are the server whose CPU a point records (--server-pid wins),
            // read again for each phase: a fault point restarts some of them.
            let config = config.and_then(|mut c| {
                if let Some(lab) = &sys.lab {
                    crate::lab::watch_lab_daemons(&mut c, lab).map_err(|e| e.to_string())?;
                }
                // Its nodes too, with the link the system's null tests measured for points
                // that measure nothing.
                if let Some(lab) = &sys.lab {
                    let mut known = crate::lab::known_nodes(
                        dfsbench_lab::target_nodes(lab, &sys.target).map_err(|e| e.to_string())?,
                    );
                    known.measured_before = measured_links.get(&sys.label).cloned();
                    c.nodes = Some(known);
                }
                Ok(c)
            });
            if let Some(why) = config
                .as_ref()
                .err()
                .cloned()
                .or_else(|| config.as_ref().ok().and_then(|c| unsupported(c, point.spread, sys)))
            {
                say(format!(
                    "[{done:>3}/{total}] {:<10} {:<18} {:<10} {:>6.1} s  {why}",
                    sys.label, point.id, "n/a", 0.0
                ));
                record.runs.push(RunRecord {
                    skipped: Some(why),
                    ..self::record(sys)
                });
                continue;
            }
            let result = dir.join(&sys.label).join(format!("{}.json", point.id));
            std::fs::create_dir_all(dir.join(&sys.label))
                .map_err(|e| Failure::runtime(format!("cannot create {}: {e}", dir.join(&sys.label).display())))?;
            // Between points no run is under way: nothing reads the environment meanwhile.
            env.switch_to(sys);
            let mut config = config.map_err(Failure::runtime)?;
            // (In this process: a child's workload file has its own settings. Not under added
            // delay or a fault: the null tests measure what the hardware can do.)
            let pending = null_pending.iter().position(|l| *l == sys.label);
            let undisturbed = point.one_way_delay_ms.is_none() && point.disruption.is_none();
            if let Some(at) = pending.filter(|_| workload.is_none() && undisturbed) {
                null_pending.remove(at);
                config.null_tests = true;
            }
            let delayed = point.one_way_delay_ms.zip(sys.lab.as_deref());
            if let (Some(_), Some((ops, least))) = (delayed, super::budget::least_time(point)) {
                let capped = a
                    .max_point_time
                    .as_deref()
                    .map(|t| format!(", capped at {t}"))
                    .unwrap_or_default();
                say(format!(
                    "[{done:>3}/{total}] {:<10} {:<18} starts: at least {} ({ops} operations x {} ms added round trip{capped})",
                    sys.label,
                    point.id,
                    humantime::format_duration(Duration::from_secs(least.as_secs())),
                    2 * point.one_way_delay_ms.unwrap_or(0)
                ));
            }
            let (run, status) = match delayed.map(|(ms, lab)| set_delay(lab, ms)) {
                Some(Err(why)) => (
                    RunRecord {
                        error: Some(why.clone()),
                        ..self::record(sys)
                    },
                    format!("failed: {why}"),
                ),
                _ => match (&workload, sys_spec) {
                    (None, _) => run_here(&config, sys, &result, &ctx, &mut measured_links)?,
                    (Some(_), Some(Ok(own))) => {
                        let file = write_workload(&dir, point, Some(&sys.label), own)?;
                        run_child(point, &file, sys, &result, &ctx)?
                    }
                    (Some(file), _) => run_child(point, file, sys, &result, &ctx)?,
                },
            };
            if let Some((_, lab)) = delayed {
                if let Err(why) = set_delay(lab, 0) {
                    say(format!("warning: {why}: remove it with `dfsbench lab delay {lab} 0`"));
                }
            }
            // Errors while a node is out are what a fault point measures, not a failed run.
            let measured = point.disruption.is_some() && status.ends_with(" operations failed");
            if status != "ok" && status != "interrupted" && !measured {
                failed += 1;
            }
            let detail = match (&run.warning, status.as_str()) {
                (Some(w), "ok") => format!("{}; warning: {w}", point.params),
                (None, "ok") => point.params.clone(),
                _ => status.clone(),
            };
            say(format!(
                "[{done:>3}/{total}] {:<10} {:<18} {:<10} {:>6.1} s  {detail}",
                sys.label,
                point.id,
                status.split(':').next().unwrap_or(""),
                started.elapsed().as_secs_f64(),
            ));
            record.runs.push(run);
        }
        m.points.push(record);
        m.points.sort_by_key(|p| order(&p.id));
        save_manifest(&m)?;
    }
    let interrupted = INTERRUPT.load(Ordering::SeqCst);
    m.status = if interrupted { "interrupted" } else { "complete" }.into();
    save_manifest(&m)?;
    let outcome = if interrupted {
        Err(Failure::Interrupted)
    } else if failed > 0 {
        Err(Failure::runtime(format!(
            "{failed} of {total} runs failed: their cells say why (results in {})",
            dir.display()
        )))
    } else {
        Ok(())
    };
    Ok((m, dir, outcome))
}

/// The point's jobs as `DIR/workloads/POINT.toml` (`POINT-SYSTEM.toml` with a system's own
/// settings: the faults of its lab), for `dfsbench run` in other processes (and for people
/// repeating a point by hand).
fn write_workload(dir: &Path, point: &Point, system: Option<&str>, run: RunSpec) -> Result<PathBuf, Failure> {
    let file = WorkloadFile {
        target: None,
        run,
        jobs: point.jobs.clone(),
    };
    let name = match system {
        Some(s) => format!("{}-{s}.toml", point.id),
        None => format!("{}.toml", point.id),
    };
    let path = dir.join("workloads").join(name);
    let text = format!("# {}: {}\n{}", point.id, point.params, file.to_toml());
    dfsbench_result::files::write_output(&path, text.as_bytes())
        .map_err(|e| Failure::runtime(format!("cannot write {}: {e}", path.display())))?;
    Ok(path)
}
