//! fio job files (`dfsbench run job.fio`): fio's INI format read into a [`WorkloadFile`] of io
//! jobs, for the options whose meaning dfsbench has. Every other option is named, with its
//! section and line, in one error (the first 50, then how many more): a job file never runs as
//! something it does not say.
//!
//! As in fio: `[global]` sections set defaults for the jobs after them, `;` and `#` start
//! comments, an option without `=` is a flag, `${VAR}` takes the environment's value (an unset
//! one is an error here; `${VAR:-default}` as in workload files), sizes follow fio's
//! `kb_base=1024` (`4k` = 4096, `1KiB` = 1000), times are seconds without a unit, the default
//! engine is psync, and jobs run at the same time unless `stonewall` separates them (a group
//! of jobs for dfsbench: see `JobSettings::group`). `kb_base=1000` makes `k` 1000 and `KiB`
//! 1024 in the options after it.

use crate::error::ConfigError;

use super::{vars, JobSpec, WorkloadFile};
use job::Job;
pub use options::KEYS;

mod job;
mod names;
mod options;
mod values;

/// Whether `text` is a fio job file: a `.fio` name, or a first section header `[name]` (a
/// TOML workload file starts with keys or `[[job]]`).
pub(super) fn is_job_file(name: &str, text: &str) -> bool {
    if name.ends_with(".fio") {
        return true;
    }
    if name.ends_with(".toml") {
        return false;
    }
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with(['#', ';']));
    first.is_some_and(|l| l.starts_with('[') && !l.starts_with("[["))
}

/// One `key[=value]` line.
#[derive(Debug)]
struct Opt {
    /// The section it is written in (`global` for defaults).
    section: String,
    key: String,
    value: Option<String>,
    line: usize,
    /// Why the value could not be read: a variable it names is not set. The option is then
    /// refused with that reason, unless its job's engine is not dfsbench's (which is named
    /// instead: the engine is why such a file cannot run).
    unset: Option<String>,
}

impl Opt {
    fn shown(&self) -> String {
        match &self.value {
            Some(v) => format!("{}={v}", self.key),
            None => self.key.clone(),
        }
    }
}

#[derive(Debug)]
struct Section {
    name: String,
    line: usize,
    opts: Vec<Opt>,
}

/// An option dfsbench does not run, and why when there is more to say than that.
struct Refused {
    section: String,
    line: usize,
    shown: String,
    why: Option<String>,
    /// Why its job cannot run whatever its other options say: an engine that is not
    /// dfsbench's, or a zoned device. Such a job is refused for it alone.
    whole: bool,
}

impl Refused {
    /// Option `o` refused for `why`.
    fn of(o: &Opt, why: Option<String>) -> Refused {
        Refused {
            section: o.section.clone(),
            line: o.line,
            shown: o.shown(),
            why,
            whole: false,
        }
    }
}

/// The most refused options one error names: a line, not a listing of a generated file.
const MAX_LISTED: usize = 50;

/// Read fio job file `name`; `lookup` gives the variables' values.
pub fn parse(name: &str, text: &str, lookup: impl Fn(&str) -> Option<String>) -> Result<WorkloadFile, ConfigError> {
    parse_on_device(name, text, lookup, Given::default())
}

/// What the command line gives a job file besides its own options.
#[derive(Debug, Clone, Copy, Default)]
pub struct Given<'a> {
    /// The devices the user let the run overwrite (`--overwrite-device`): a `filename=` may
    /// then name one.
    pub devices: &'a [String],
    /// `--size` gives every job its size: a job of the file needs none of its own.
    pub sized: bool,
}

/// [`parse`], with what the command line gives.
pub(super) fn parse_on_device(
    name: &str,
    text: &str,
    lookup: impl Fn(&str) -> Option<String>,
    given: Given<'_>,
) -> Result<WorkloadFile, ConfigError> {
    let sections = sections(text, &lookup).map_err(|(line, m)| ConfigError::File {
        file: dfsbench_backends::one_line(name),
        line: Some(line),
        message: dfsbench_backends::one_line(&m),
    })?;
    read(name, &sections, "line", given)
}

/// One option of a fio command line: its position among the arguments, its name (without
/// the dashes) and its value.
pub type Arg = (usize, String, Option<String>);

/// Name of a fio command line in messages.
pub const COMMAND_LINE: &str = "the fio command line";

/// Read a fio command line as fio does: the options before the first `--name` are the
/// globals, and each `--name` starts a job. Without `--directory` the files go in the working
/// directory, as fio's do. `device` may be named as in [`parse_on_device`].
pub fn parse_args(args: &[Arg], devices: &[String]) -> Result<WorkloadFile, ConfigError> {
    let given = Given { devices, sized: false };
    let mut sections = vec![Section {
        name: "global".into(),
        line: 0,
        opts: Vec::new(),
    }];
    for (at, key, value) in args {
        if key == "name" {
            sections.push(Section {
                name: value.clone().unwrap_or_default(),
                line: *at,
                opts: Vec::new(),
            });
        }
        let section = sections.last_mut().expect("the globals come first");
        section.opts.push(Opt {
            section: section.name.clone(),
            key: key.clone(),
            value: value.clone(),
            line: *at,
            unset: None,
        });
    }
    let mut file = read(COMMAND_LINE, &sections, "argument", given)?;
    // The working directory by name, so that the result says where the run was.
    file.target
        .get_or_insert_with(|| std::env::current_dir().map_or_else(|_| ".".into(), |d| d.display().to_string()));
    Ok(file)
}

/// The workload of `sections`; a refusal names each option's `unit` (line, argument).
fn read(name: &str, sections: &[Section], unit: &str, given: Given<'_>) -> Result<WorkloadFile, ConfigError> {
    let file_error = |line: usize, message: String| ConfigError::File {
        file: dfsbench_backends::one_line(name),
        line: Some(line),
        message: dfsbench_backends::one_line(&message),
    };
    let mut refused = Vec::new();
    // What the [global] sections refuse: named unless every job's engine is not dfsbench's.
    let mut global_refused = Vec::new();
    let mut file = WorkloadFile::default();
    // [global] options are applied once, to the defaults every later job starts from: a file of
    // many sections is read in linear time.
    let mut defaults = Job {
        devices: given.devices,
        sized: given.sized,
        ..Job::default()
    };
    let mut jobs = 0;
    // The clones of the jobs so far.
    let mut threads = 0;
    // Jobs whose engine is dfsbench's.
    let mut native = 0;
    // Whether each job verifies.
    let mut verifies: Vec<bool> = Vec::new();
    // The jobs between stonewalls, by index.
    let mut groups: Vec<Vec<usize>> = Vec::new();
    // A job whose wait_for started a group, while no later job joined that group.
    let mut waiter: Option<&Opt> = None;
    // exit_what=all of a job with exitall, and its group.
    let mut exit_all: Vec<(usize, &Opt)> = Vec::new();
    // The files named by filename=, as fio names them, and their names in the run.
    let mut names = names::Names::default();
    for s in sections {
        if s.name == "global" {
            for o in &s.opts {
                defaults.apply(o, &mut file, &mut global_refused);
            }
            continue;
        }
        let mut job = defaults.clone();
        job.spec.settings.name.get_or_insert_with(|| s.name.clone());
        let mut own = Vec::new();
        for o in &s.opts {
            job.apply(o, &mut file, &mut own);
        }
        let clones = job.workers;
        let mut job = job.finish(s, &mut own);
        let whole = job.whole;
        jobs += 1;
        // fio numbers its clones from 1 over the file's jobs: the logs' names hold it.
        let io = &mut job.spec.workloads.io;
        if io.write_bw_log.is_some() || io.write_lat_log.is_some() || io.write_iops_log.is_some() {
            io.log_number = Some(threads + 1);
        }
        threads += clones;
        if whole {
            // Another engine's job (or a zoned device's): its options are that engine's, and
            // the engine is why it cannot run (named where it is written, here or in [global]).
            own.retain(|r| r.whole);
            refused.append(&mut own);
            continue;
        }
        native += 1;
        refused.append(&mut own);
        // Jobs with verify beside jobs without: the run verifies, and those without skip it.
        if job.verify.is_some() {
            file.run.verify = Some(true);
        }
        verifies.push(job.verify.is_some());
        // wait_for the only job running now is a stonewall; for a job of an earlier group,
        // which ended before this group started, nothing.
        let after = job
            .wait_for
            .map(|o| waits(o, &file.jobs, groups.last().map_or(&[][..], Vec::as_slice)));
        let stonewall = job.stonewall || after == Some(Ok(true));
        if let (Some(Err(why)), Some(o)) = (&after, job.wait_for) {
            refused.push(Refused::of(o, Some(why.clone())));
        }
        match waiter.take() {
            Some(o) if !stonewall => refused.push(Refused::of(
                o,
                Some(format!(
                    "in fio, job '{}' after it starts beside the job it waits for, and in dfsbench with it: put stonewall (or wait_for) in '{}'",
                    s.name, s.name
                )),
            )),
            _ => {}
        }
        if after == Some(Ok(true)) && !job.stonewall {
            waiter = job.wait_for;
        }
        // fio starts a job at the same time as the ones before it, back to the last stonewall.
        if file.jobs.is_empty() || stonewall {
            groups.push(Vec::new());
        }
        groups.last_mut().expect("a group per job").push(file.jobs.len());
        // Jobs that name the same file share it, as in fio; one without a size takes the
        // file's: as an earlier group left it, or as it is at the path given.
        let group = groups.len() - 1;
        if let Some(path) = job.file_sized {
            let existing = std::fs::metadata(path).ok().filter(std::fs::Metadata::is_file);
            let io = &mut job.spec.workloads.io;
            match existing {
                _ if names.named_before(path, group) => io.size_from_file = Some(true),
                Some(m) => io.size = Some(m.len().to_string()),
                None => refused.push(Refused {
                    section: s.name.clone(),
                    line: s.line,
                    shown: format!("[{}]", s.name),
                    why: Some(format!(
                        "no size, and no file at {path} nor a job before its group that names it: fio takes an existing file's size; give size="
                    )),
                    whole: false,
                }),
            }
        }
        names.name(&mut job.spec.workloads.io, group);
        if let Some(o) = job.exit_all {
            exit_all.push((groups.len(), o));
        }
        file.jobs.push(job.spec);
    }
    // A block device as the run's target is its one file: a character device cannot be
    // beside it.
    let char_jobs = file.jobs.iter().any(|j| j.workloads.io.device_file.is_some());
    if char_jobs
        && file
            .target
            .as_deref()
            .is_some_and(|t| dfsbench_backends::is_block_device(std::path::Path::new(t)))
    {
        if let Some(s) = sections.iter().find(|s| s.name != "global") {
            refused.push(Refused {
                section: s.name.clone(),
                line: s.line,
                shown: format!("[{}]", s.name),
                why: Some("jobs on a block device and on a character device in one run: a block device is the run's target and its one file; run them apart".into()),
                whole: false,
            });
        }
    }
    if verifies.contains(&true) {
        for (job, _) in file.jobs.iter_mut().zip(&verifies).filter(|(_, v)| !**v) {
            job.workloads.io.skip_verify = Some(true);
        }
    }
    refused.append(&mut global_refused);
    // A job of another engine (or a zoned device's) is why the file cannot run, whatever
    // else it holds: the file is refused for those alone.
    if native < jobs {
        refused.retain(|r| r.whole);
    }
    name_groups(&mut file.jobs, &groups);
    // exit_what=all ends the whole run in fio: in dfsbench it stops the job's group, which
    // is the same in the last group.
    for (_, o) in exit_all.into_iter().filter(|(g, _)| *g < groups.len()) {
        refused.push(Refused::of(
            o,
            Some(
                "with exitall, fio stops the jobs after its group too, and dfsbench only its group: use exit_what=group, or make it the last group".into(),
            ),
        ));
    }
    if !refused.is_empty() {
        // A [global] option a job's own check refuses (time_based without runtime) is named
        // once, not once per job that inherits it.
        refused.sort_by_key(|r| r.line);
        refused.dedup_by(|a, b| a.line == b.line && a.why == b.why);
        let mut list: Vec<String> = refused
            .iter()
            .take(MAX_LISTED)
            .map(|r| {
                let why = r.why.as_deref().map(|w| format!(" ({w})")).unwrap_or_default();
                format!("[{}] {unit} {} `{}`{why}", r.section, r.line, r.shown)
            })
            .collect();
        if refused.len() > MAX_LISTED {
            list.push(format!("and {} more", refused.len() - MAX_LISTED));
        }
        return Err(ConfigError::File {
            file: dfsbench_backends::one_line(name),
            line: None,
            message: dfsbench_backends::one_line(&format!(
                "fio options dfsbench cannot run: {}; remove or change them (README: Coming from fio)",
                list.join(", ")
            )),
        });
    }
    if file.jobs.is_empty() {
        return Err(file_error(
            1,
            "no job section: add one such as [seq-read] with rw=read and size=1g".into(),
        ));
    }
    Ok(file)
}

/// Whether a job that waits for the job `o` names starts a group of its own (true: that job
/// is the only one of the running `group`) or not (false: that job ended before the group
/// started); an error says why dfsbench cannot keep fio's order.
fn waits(o: &Opt, jobs: &[JobSpec], group: &[usize]) -> Result<bool, String> {
    let waitee = o.value.as_deref().unwrap_or_default();
    let named = |j: &usize| jobs[*j].settings.name.as_deref() == Some(waitee);
    match group {
        [only] if named(only) => Ok(true),
        running if running.iter().any(named) => Err(format!(
            "'{waitee}' runs beside other jobs, and dfsbench starts a job with its group or after all of it: put stonewall here to wait for all of them"
        )),
        _ if (0..jobs.len()).any(|j| named(&j)) => Ok(false),
        _ => Err(format!("no job before it is named '{waitee}': fio's waitee comes before the job that waits")),
    }
}

/// Jobs that run at the same time get a group, named after the first of them (with a number
/// when an earlier group has that name): `stages` runs them together.
fn name_groups(jobs: &mut [JobSpec], groups: &[Vec<usize>]) {
    let mut taken: Vec<String> = Vec::new();
    for members in groups.iter().filter(|g| g.len() > 1) {
        let first = jobs[members[0]].settings.name.clone().unwrap_or_default();
        let mut name = first.clone();
        let mut n = 1;
        while taken.contains(&name) {
            n += 1;
            name = format!("{first} {n}");
        }
        for &j in members {
            jobs[j].settings.group = Some(name.clone());
        }
        taken.push(name);
    }
}

/// The file's sections with comments stripped and variables expanded; an error is the line
/// and the message.
fn sections(text: &str, lookup: &impl Fn(&str) -> Option<String>) -> Result<Vec<Section>, (usize, String)> {
    let mut out: Vec<Section> = Vec::new();
    let mut expanded = 0;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        // fio cuts a line at its first `;` or `#`, wherever it is.
        let body = raw.split([';', '#']).next().unwrap_or_default().trim();
        if body.is_empty() {
            continue;
        }
        if let Some(rest) = body.strip_prefix('[') {
            let name = rest
                .strip_suffix(']')
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .ok_or((line, format!("`{body}` is no section header: write [name]")))?;
            out.push(Section {
                name: name.to_string(),
                line,
                opts: Vec::new(),
            });
            continue;
        }
        let Some(section) = out.last_mut() else {
            return Err((
                line,
                format!("`{body}` is outside a section: put it under [global] or a job's [name]"),
            ));
        };
        let mut unset = None;
        let (key, value) = match body.split_once('=') {
            Some((k, v)) => {
                let room = vars::MAX_EXPANDED.saturating_sub(expanded);
                let v = match vars::expand(v.trim(), false, room, lookup) {
                    Ok(v) => v,
                    // Named with the option, unless the job's engine is another's: the engine
                    // is then why the file cannot run, whatever its variables.
                    Err(e @ vars::VarError::Unset { .. }) => {
                        unset = Some(e.to_string());
                        v.trim().to_string()
                    }
                    Err(e) => return Err((line, e.to_string())),
                };
                expanded += v.len();
                (k.trim(), Some(v))
            }
            None => (body, None),
        };
        section.opts.push(Opt {
            section: section.name.clone(),
            key: key.to_string(),
            value,
            line,
            unset,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
