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

use crate::dist::Access;
use crate::error::ConfigError;
use crate::units::parse_duration;

use super::{vars, JobSpec, RunSpec, WorkloadFile};
use values::{bssplit, bytes_pair, bytes_range, flag, one_rate, percentage, size_bytes};

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
}

/// The fio options this reader knows: it reads them (or takes them as fio's default and
/// dfsbench's), and refuses every other one by name. A test checks each against the reader.
pub const KEYS: &[&str] = &[
    "name",
    "description",
    "group_reporting",
    "new_group",
    "thread",
    "stonewall",
    "wait_for_previous",
    "rw",
    "readwrite",
    "bs",
    "blocksize",
    "bsrange",
    "blocksize_range",
    "size",
    "numjobs",
    "iodepth",
    "rwmixread",
    "rwmixwrite",
    "direct",
    "buffered",
    "pre_read",
    "end_fsync",
    "fsync_on_close",
    "ioengine",
    "time_based",
    "runtime",
    "timeout",
    "ramp_time",
    "filename",
    "directory",
    "buffer_compress_percentage",
    "buffer_compress_chunk",
    "dedupe_percentage",
    "refill_buffers",
    "scramble_buffers",
    "random_distribution",
    "invalidate",
    "norandommap",
    "randrepeat",
    "randseed",
    "fsync",
    "fdatasync",
    "rate",
    "rate_iops",
    "rate_process",
    "io_submit_mode",
    "gtod_reduce",
    "unified_rw_reporting",
    "loops",
    "verify",
    "do_verify",
    "kb_base",
    "startdelay",
    "offset",
    "offset_increment",
    "bssplit",
    "ratemin",
    "ratecycle",
];

/// The most refused options one error names: a line, not a listing of a generated file.
const MAX_LISTED: usize = 50;

/// Read fio job file `name`; `lookup` gives the variables' values.
pub fn parse(name: &str, text: &str, lookup: impl Fn(&str) -> Option<String>) -> Result<WorkloadFile, ConfigError> {
    parse_on_device(name, text, lookup, None)
}

/// [`parse`], where `device` is the block device the user let the run overwrite
/// (`--overwrite-device`): a `filename=` may then name it.
pub(super) fn parse_on_device(
    name: &str,
    text: &str,
    lookup: impl Fn(&str) -> Option<String>,
    device: Option<&str>,
) -> Result<WorkloadFile, ConfigError> {
    let sections = sections(text, &lookup).map_err(|(line, m)| ConfigError::File {
        file: dfsbench_backends::one_line(name),
        line: Some(line),
        message: dfsbench_backends::one_line(&m),
    })?;
    read(name, &sections, "line", device)
}

/// One option of a fio command line: its position among the arguments, its name (without
/// the dashes) and its value.
pub type Arg = (usize, String, Option<String>);

/// Name of a fio command line in messages.
pub const COMMAND_LINE: &str = "the fio command line";

/// Read a fio command line as fio does: the options before the first `--name` are the
/// globals, and each `--name` starts a job. Without `--directory` the files go in the working
/// directory, as fio's do. `device` may be named as in [`parse_on_device`].
pub fn parse_args(args: &[Arg], device: Option<&str>) -> Result<WorkloadFile, ConfigError> {
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
        });
    }
    let mut file = read(COMMAND_LINE, &sections, "argument", device)?;
    // The working directory by name, so that the result says where the run was.
    file.target
        .get_or_insert_with(|| std::env::current_dir().map_or_else(|_| ".".into(), |d| d.display().to_string()));
    Ok(file)
}

/// The workload of `sections`; a refusal names each option's `unit` (line, argument).
fn read(name: &str, sections: &[Section], unit: &str, device: Option<&str>) -> Result<WorkloadFile, ConfigError> {
    let file_error = |line: usize, message: String| ConfigError::File {
        file: dfsbench_backends::one_line(name),
        line: Some(line),
        message: dfsbench_backends::one_line(&message),
    };
    let mut refused = Vec::new();
    let mut file = WorkloadFile::default();
    // [global] options are applied once, to the defaults every later job starts from: a file of
    // many sections is read in linear time.
    let mut defaults = Job {
        device,
        ..Job::default()
    };
    let mut jobs = 0;
    // Whether the jobs so far verify (all alike).
    let mut verified = None;
    // The jobs between stonewalls, by index.
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for s in sections {
        if s.name == "global" {
            for o in &s.opts {
                defaults.apply(o, &mut file, &mut refused);
            }
            continue;
        }
        let mut job = defaults.clone();
        job.spec.settings.name.get_or_insert_with(|| s.name.clone());
        for o in &s.opts {
            job.apply(o, &mut file, &mut refused);
        }
        let job = job.finish(s, &mut refused);
        // dfsbench checks the data of the whole run or of none of it.
        let verifies = job.verify.is_some();
        match verified {
            Some(earlier) if earlier != verifies => refused.push(Refused {
                section: s.name.clone(),
                line: job.verify.map_or(s.line, |o| o.line),
                shown: job.verify.map_or_else(|| format!("[{}]", s.name), Opt::shown),
                why: Some(format!(
                    "{}, and an earlier job {}: dfsbench verifies the whole run or none of it",
                    if verifies { "it verifies" } else { "it does not verify" },
                    if earlier { "does" } else { "does not" }
                )),
            }),
            _ => verified = Some(verifies),
        }
        if verifies {
            file.run.verify = Some(true);
        }
        // fio starts a job at the same time as the ones before it, back to the last stonewall.
        if jobs == 0 || job.stonewall {
            groups.push(Vec::new());
        }
        groups.last_mut().expect("a group per job").push(file.jobs.len());
        jobs += 1;
        file.jobs.push(job.spec);
    }
    name_groups(&mut file.jobs, &groups);
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
        let (key, value) = match body.split_once('=') {
            Some((k, v)) => {
                let room = vars::MAX_EXPANDED.saturating_sub(expanded);
                let v = vars::expand(v.trim(), false, room, lookup).map_err(|e| (line, e.to_string()))?;
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
        });
    }
    Ok(out)
}

/// A job section read into a dfsbench io job: fio's defaults, then its [global] options and its
/// own, one at a time.
#[derive(Clone)]
struct Job<'a> {
    spec: JobSpec,
    stonewall: bool,
    workers: usize,
    time_based: Option<&'a Opt>,
    runtime: Option<&'a Opt>,
    filename: Option<&'a Opt>,
    size: Option<&'a Opt>,
    /// `rate_iops` or `rate` (bytes/s), per clone, and the option that gave it.
    rate: Option<(Rate, &'a Opt)>,
    /// `verify=` of a kind dfsbench keeps, and `do_verify` (fio's default: on).
    verify: Option<&'a Opt>,
    do_verify: bool,
    /// What `k` means in sizes: 1024 (fio's default) or 1000.
    kb_base: u64,
    /// bssplit gives the block sizes: bs is then fio's default, not one to keep.
    bssplit: bool,
    /// The block device `--overwrite-device` names, and whether `filename=` is that device.
    device: Option<&'a str>,
    on_device: bool,
}

/// fio's rate limits, per clone.
#[derive(Clone, Copy)]
enum Rate {
    Iops(f64),
    BytesPerSec(u64),
}

impl Default for Job<'_> {
    /// fio's defaults where dfsbench's differ: one clone, the psync engine.
    fn default() -> Self {
        let mut spec = JobSpec::default();
        spec.settings.workload = Some("io".into());
        spec.settings.workers = Some(1);
        spec.workloads.io.ioengine = Some("psync".into());
        Job {
            spec,
            stonewall: false,
            workers: 1,
            time_based: None,
            runtime: None,
            filename: None,
            size: None,
            rate: None,
            verify: None,
            do_verify: true,
            kb_base: 1024,
            bssplit: false,
            device: None,
            on_device: false,
        }
    }
}

/// A job read whole.
struct ReadJob<'a> {
    spec: JobSpec,
    stonewall: bool,
    /// Its `verify=` option, when it verifies.
    verify: Option<&'a Opt>,
}

/// fio's checksum kinds (and `meta`): dfsbench's check of every byte against its own data
/// finds whatever they find.
const VERIFY_KINDS: &[&str] = &[
    "md5",
    "crc64",
    "crc32c",
    "crc32c-intel",
    "crc32",
    "crc16",
    "crc7",
    "xxhash",
    "sha1",
    "sha256",
    "sha512",
    "sha3-224",
    "sha3-256",
    "sha3-384",
    "sha3-512",
    "meta",
];

impl<'a> Job<'a> {
    /// Apply option `o`, or say in `refused` why it cannot be.
    fn apply(&mut self, o: &'a Opt, file: &mut WorkloadFile, refused: &mut Vec<Refused>) {
        let mut refuse = |why: Option<String>| {
            refused.push(Refused {
                section: o.section.clone(),
                line: o.line,
                shown: o.shown(),
                why,
            })
        };
        let v = o.value.as_deref();
        match (o.key.as_str(), v) {
            ("name", Some(n)) => self.spec.settings.name = Some(n.to_string()),
            ("description" | "group_reporting" | "new_group" | "thread", _) => {}
            ("stonewall" | "wait_for_previous", _) => match flag(v) {
                Some(b) => self.stonewall = b,
                None => refuse(Some("give 0 or 1".into())),
            },
            ("rw" | "readwrite", Some(rw)) => match rw {
                "read" | "write" | "randread" | "randwrite" | "randrw" => self.spec.workloads.io.rw = Some(rw.into()),
                "rw" | "readwrite" => self.spec.workloads.io.rw = Some("readwrite".into()),
                _ => refuse(Some(
                    "dfsbench has read, write, randread, randwrite, rw and randrw, without modifiers".into(),
                )),
            },
            ("bs" | "blocksize", Some(bs)) => match bytes_pair(bs, self.kb_base) {
                Ok(b) => self.spec.shared.bs = Some(b.to_string()),
                Err(why) => refuse(Some(why)),
            },
            ("bsrange" | "blocksize_range", Some(r)) => match bytes_range(r, self.kb_base) {
                Ok(b) => self.spec.shared.bs = Some(b.to_string()),
                Err(why) => refuse(Some(why)),
            },
            ("size", Some(t)) => match size_bytes(t, self.kb_base) {
                Ok(b) => {
                    self.spec.workloads.io.size = Some(b.to_string());
                    self.size = Some(o);
                }
                Err(why) => refuse(Some(why)),
            },
            ("numjobs", Some(n)) => match n.parse::<usize>() {
                Ok(n) if n > 0 => {
                    self.spec.settings.workers = Some(n);
                    self.workers = n;
                }
                _ => refuse(Some("give a number of clones, 1 or more".into())),
            },
            ("iodepth", Some(n)) => match n.parse() {
                Ok(n) => self.spec.workloads.io.iodepth = Some(n),
                Err(_) => refuse(Some("give a queue depth".into())),
            },
            ("rwmixread" | "rwmixwrite", Some(p)) => match percentage(p) {
                Some(p) => {
                    let read = if o.key == "rwmixread" { p } else { 100 - p };
                    self.spec.workloads.io.rwmixread = Some(read);
                }
                None => refuse(Some("give a percentage".into())),
            },
            ("direct" | "buffered", _) => match flag(v) {
                Some(b) => self.spec.shared.direct = Some(b == (o.key == "direct")),
                None => refuse(Some("give 0 or 1".into())),
            },
            ("pre_read", _) => match flag(v) {
                Some(b) => self.spec.workloads.io.pre_read = Some(b),
                None => refuse(Some("give 0 or 1".into())),
            },
            ("end_fsync" | "fsync_on_close", _) => match flag(v) {
                Some(b) => self.spec.shared.fsync = Some(b),
                None => refuse(Some("give 0 or 1".into())),
            },
            ("ioengine", Some(e)) => match e {
                "psync" | "sync" | "pvsync" => self.spec.workloads.io.ioengine = Some("psync".into()),
                "io_uring" | "libaio" | "posixaio" | "mmap" => self.spec.workloads.io.ioengine = Some(e.to_string()),
                _ => refuse(Some("dfsbench's engines are psync/sync, io_uring, libaio, posixaio and mmap".into())),
            },
            ("time_based", _) => match flag(v) {
                Some(true) => self.time_based = Some(o),
                Some(false) => self.time_based = None,
                None => refuse(Some("give 0 or 1".into())),
            },
            ("runtime" | "timeout", Some(t)) => match parse_duration(t) {
                Ok(_) => {
                    self.spec.settings.duration = Some(t.to_string());
                    self.runtime = Some(o);
                }
                Err(e) => refuse(Some(e)),
            },
            ("ramp_time", Some(t)) => match parse_duration(t) {
                Ok(_) => self.spec.settings.ramp = Some(t.to_string()),
                Err(e) => refuse(Some(e)),
            },
            ("filename", Some(f)) => {
                if f.starts_with("/dev/") || dfsbench_backends::is_block_device(std::path::Path::new(f)) {
                    if self.device.is_some_and(|d| std::path::Path::new(d) == std::path::Path::new(f)) {
                        if file.target.as_deref().is_some_and(|t| t != f) {
                            refuse(Some("another target than an earlier job's: dfsbench runs in one target".into()));
                        } else {
                            file.target = Some(f.to_string());
                            self.on_device = true;
                        }
                    } else {
                        refuse(Some(format!(
                            "a device: dfsbench overwrites a device only when --overwrite-device {f} names it"
                        )));
                    }
                } else if f.contains(['/', ':']) {
                    refuse(Some("a path or several files: dfsbench works in a fresh directory of the target (-t, directory)".into()));
                } else {
                    self.spec.workloads.io.filename = Some(f.to_string());
                    self.filename = Some(o);
                }
            }
            ("directory", Some(d)) => {
                if d.contains(':') {
                    refuse(Some("one directory only".into()));
                } else if file.target.as_deref().is_some_and(|t| t != d) {
                    refuse(Some(
                        "another directory than an earlier job's: dfsbench runs in one target".into(),
                    ));
                } else {
                    file.target = Some(d.to_string());
                }
            }
            ("buffer_compress_percentage", Some(p)) => match percentage(p) {
                Some(p) => self.spec.shared.compress_percentage = Some(p),
                None => refuse(Some("give a percentage, 0-100".into())),
            },
            ("buffer_compress_chunk", Some(c)) => {
                if size_bytes(c, self.kb_base) != Ok(512) {
                    refuse(Some("dfsbench makes data compressible in segments of 512 bytes, fio's default chunk: give 512 or leave it out".into()));
                }
            }
            ("dedupe_percentage", Some(p)) => match percentage(p) {
                Some(p) => self.spec.shared.dedupe_percentage = Some(p),
                None => refuse(Some("give a percentage, 0-100".into())),
            },
            // New random bytes for every block: dfsbench's generated data, with no zeros and
            // no copies unless the job asks for them.
            ("refill_buffers", _) => match flag(v) {
                Some(true) => {
                    self.spec.shared.dedupe_percentage.get_or_insert(0);
                }
                Some(false) => {}
                None => refuse(Some("give 0 or 1".into())),
            },
            // 0 is dfsbench's default: one buffer of random bytes, repeated.
            ("scramble_buffers", _) => match flag(v) {
                Some(false) => {}
                Some(true) => refuse(Some(
                    "dfsbench does not scramble a repeated buffer: set 0 (one random buffer, repeated) or use refill_buffers (new random bytes every block)".into(),
                )),
                None => refuse(Some("give 0 or 1".into())),
            },
            ("random_distribution", Some(d)) => match Access::parse(d) {
                Ok(_) => self.spec.shared.random_distribution = Some(d.to_string()),
                Err(e) => refuse(Some(e.to_string())),
            },
            ("invalidate", _) => match (flag(v), file.run.invalidate) {
                (Some(b), Some(was)) if b != was => refuse(Some(
                    "differs from an earlier job's: dfsbench invalidates for the whole run".into(),
                )),
                (Some(b), _) => {
                    file.run = RunSpec {
                        invalidate: Some(b),
                        ..std::mem::take(&mut file.run)
                    }
                }
                (None, _) => refuse(Some("give 0 or 1".into())),
            },
            // Each block once per pass is fio's random map and dfsbench's default.
            ("verify", Some(kind)) => match kind {
                "0" | "null" => self.verify = None,
                k if VERIFY_KINDS.contains(&k) => self.verify = Some(o),
                _ => refuse(Some(format!(
                    "dfsbench checks every byte read against its own data, which keeps fio's checksum kinds ({}) and meta; not a pattern of yours",
                    VERIFY_KINDS[..VERIFY_KINDS.len() - 1].join(", ")
                ))),
            },
            ("do_verify", _) => match flag(v) {
                Some(b) => self.do_verify = b,
                None => refuse(Some("give 0 or 1".into())),
            },
            ("loops", Some(n)) => match n.parse::<u64>() {
                Ok(n) if n > 0 => self.spec.workloads.io.loops = Some(n),
                _ => refuse(Some("give a number of passes, 1 or more".into())),
            },
            ("norandommap", _) => match flag(v) {
                Some(b) => self.spec.workloads.io.norandommap = Some(b),
                None => refuse(Some("give 0 or 1".into())),
            },
            // fio's randrepeat=1 (its default) repeats the random sequence run after run, as
            // dfsbench's fixed default seed does; randrepeat=0 takes a new seed each run.
            ("randrepeat", _) => match flag(v) {
                Some(true) => {}
                Some(false) => {
                    file.run.seed.get_or_insert_with(rand::random);
                }
                None => refuse(Some("give 0 or 1".into())),
            },
            ("randseed", Some(n)) => match n.parse::<u64>() {
                Ok(seed) => file.run.seed = Some(seed),
                Err(_) => refuse(Some("give a number".into())),
            },
            ("fsync" | "fdatasync", Some(n)) => match n.parse::<u64>() {
                Ok(0) => {}
                Ok(n) if o.key == "fsync" => self.spec.workloads.io.fsync_every = Some(n),
                Ok(n) => self.spec.workloads.io.fdatasync_every = Some(n),
                Err(_) => refuse(Some("give a number of writes".into())),
            },
            ("rate_iops", Some(r)) => match one_rate(r).and_then(|r| r.parse::<f64>().ok()).filter(|r| *r > 0.0) {
                Some(iops) => self.rate = Some((Rate::Iops(iops), o)),
                None => refuse(Some("give one operations-per-second figure for reads and writes alike".into())),
            },
            ("rate", Some(r)) => match one_rate(r).map(|r| size_bytes(r, self.kb_base)) {
                Some(Ok(b)) if b > 0 => self.rate = Some((Rate::BytesPerSec(b), o)),
                _ => refuse(Some("give one bytes-per-second figure for reads and writes alike, such as 10m".into())),
            },
            // dfsbench's open loop submits each block at its intended start whatever is in
            // flight at any queue depth, as fio's offload; without a rate both are fio's inline.
            ("io_submit_mode", Some("inline" | "offload")) => {}
            ("io_submit_mode", Some(_)) => refuse(Some("fio's io_submit_mode is inline or offload".into())),
            ("rate_process", Some(p)) => match p {
                "linear" => self.spec.settings.arrival = Some("uniform".into()),
                "poisson" => self.spec.settings.arrival = Some("poisson".into()),
                _ => refuse(Some("fio's rate_process is linear or poisson".into())),
            },
            // fio then keeps fewer clock readings and reports no latencies; dfsbench's clock is
            // cheap, and it still times every operation. One report of reads and writes:
            // dfsbench's phase totals are that, beside its per-kind figures.
            ("gtod_reduce" | "unified_rw_reporting", _) => {
                if flag(v).is_none() {
                    refuse(Some("give 0 or 1".into()));
                }
            }
            // fio paces and checks each clone: dfsbench's floor is per worker too.
            ("ratemin", Some(r)) => match one_rate(r).map(|r| size_bytes(r, self.kb_base)) {
                Some(Ok(b)) => self.spec.workloads.io.rate_min = Some(b.to_string()),
                _ => refuse(Some("give one bytes-per-second figure for reads and writes alike, such as 1m".into())),
            },
            ("ratecycle", Some(ms)) => {
                if ms.trim() != "1000" {
                    refuse(Some("dfsbench checks ratemin over every second: give 1000 or leave it out".into()));
                }
            }
            ("kb_base", Some(b)) => match b {
                "1024" => self.kb_base = 1024,
                "1000" => self.kb_base = 1000,
                _ => refuse(Some("fio's kb_base is 1024 or 1000".into())),
            },
            ("startdelay", Some(t)) => match parse_duration(t) {
                Ok(_) => self.spec.settings.start_delay = Some(t.to_string()),
                Err(_) if t.contains('-') => refuse(Some("a random delay from a range: give one time".into())),
                Err(e) => refuse(Some(e)),
            },
            ("offset" | "offset_increment", Some(t)) => match size_bytes(t, self.kb_base) {
                Ok(b) if o.key == "offset" => self.spec.workloads.io.offset = Some(b.to_string()),
                Ok(b) => self.spec.workloads.io.offset_increment = Some(b.to_string()),
                Err(_) if t.ends_with('%') => refuse(Some("a share of the file: give a byte count".into())),
                Err(why) => refuse(Some(why)),
            },
            ("bssplit", Some(t)) => match bssplit(t, self.kb_base) {
                Ok(split) => {
                    self.spec.workloads.io.bssplit = Some(split);
                    self.bssplit = true;
                }
                Err(why) => refuse(Some(why)),
            },
            _ => refuse(None),
        }
    }

    /// The job once all its options are applied: what holds only for options together.
    fn finish(mut self, s: &Section, refused: &mut Vec<Refused>) -> ReadJob<'a> {
        let mut refuse = |o: &Opt, why: &str| {
            refused.push(Refused {
                section: o.section.clone(),
                line: o.line,
                shown: o.shown(),
                why: Some(why.into()),
            })
        };
        match (self.time_based, self.runtime) {
            (Some(o), None) => refuse(o, "time_based needs runtime"),
            // One pass over size, cut short at runtime: also a runtime given on dfsbench's
            // command line (`--runtime`), as fio's own would be.
            (None, _) => self.spec.settings.time_based = Some(false),
            _ => {}
        }
        // numjobs clones of a job with a filename share the file, each over all of it.
        if self.filename.is_some() && self.workers > 1 {
            self.spec.workloads.io.same_file = Some(true);
        }
        // bssplit's sizes replace bs, which fio then ignores.
        if self.bssplit {
            self.spec.shared.bs = None;
        }
        // fio paces each clone; dfsbench's rate is the job's total, split over its workers.
        if let Some((rate, o)) = self.rate {
            let bs = self
                .spec
                .shared
                .bs
                .as_deref()
                .and_then(|b| b.parse::<u64>().ok())
                .unwrap_or(4096);
            let per_clone = match rate {
                Rate::Iops(iops) => iops,
                Rate::BytesPerSec(_) if self.bssplit => {
                    refuse(o, "bytes per second over blocks of several sizes: give rate_iops");
                    0.0
                }
                // Under a block a second is a block every so many seconds, as fio paces it.
                Rate::BytesPerSec(b) => b as f64 / bs as f64,
            };
            self.spec.settings.rate = Some(per_clone * self.workers as f64);
        }
        // A device's size is the job's without one, as in fio.
        if self.size.is_none() && !self.on_device {
            refused.push(Refused {
                section: s.name.clone(),
                line: s.line,
                shown: format!("[{}]", s.name),
                why: Some("no size: give size= (fio needs it for a regular file too)".into()),
            });
        }
        // fio reads back what a write job wrote and checks it (do_verify, on by default),
        // counting those reads as the job's reads: dfsbench's read after the write.
        let io = &mut self.spec.workloads.io;
        let writes_only = matches!(io.rw.as_deref(), Some("write" | "randwrite"));
        if self.verify.is_some() && self.do_verify && writes_only && io.then.is_none() {
            io.then = Some(vec!["read".into()]);
        }
        ReadJob {
            spec: self.spec,
            stonewall: self.stonewall,
            verify: self.verify,
        }
    }
}

#[cfg(test)]
mod tests;
