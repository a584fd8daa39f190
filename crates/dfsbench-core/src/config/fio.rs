//! fio job files (`dfsbench run job.fio`): fio's INI format read into a [`WorkloadFile`] of io
//! jobs, for the options whose meaning dfsbench has. Every other option is named, with its
//! section and line, in one error (the first 50, then how many more): a job file never runs as
//! something it does not say.
//!
//! As in fio: `[global]` sections set defaults for the jobs after them, `;` and `#` start
//! comments, an option without `=` is a flag, `${VAR}` takes the environment's value (an unset
//! one is an error here; `${VAR:-default}` as in workload files), sizes follow fio's
//! `kb_base=1024` (`4k` = 4096, `1KiB` = 1000), times are seconds without a unit, the default
//! engine is psync, and jobs run at the same time unless `stonewall` separates them: dfsbench
//! runs jobs one after another, so each job after the first needs it.

use crate::dist::Access;
use crate::error::ConfigError;
use crate::units::parse_duration;

use super::{vars, JobSpec, RunSpec, WorkloadFile};
use values::{bytes_pair, bytes_range, flag, one_rate, percentage, size_bytes};

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
    "gtod_reduce",
    "unified_rw_reporting",
    "loops",
    "verify",
    "do_verify",
];

/// The most refused options one error names: a line, not a listing of a generated file.
const MAX_LISTED: usize = 50;

/// Read fio job file `name`; `lookup` gives the variables' values.
pub fn parse(name: &str, text: &str, lookup: impl Fn(&str) -> Option<String>) -> Result<WorkloadFile, ConfigError> {
    let sections = sections(text, &lookup).map_err(|(line, m)| ConfigError::File {
        file: dfsbench_backends::one_line(name),
        line: Some(line),
        message: dfsbench_backends::one_line(&m),
    })?;
    read(name, &sections, "line")
}

/// One option of a fio command line: its position among the arguments, its name (without
/// the dashes) and its value.
pub type Arg = (usize, String, Option<String>);

/// Name of a fio command line in messages.
pub const COMMAND_LINE: &str = "the fio command line";

/// Read a fio command line as fio does: the options before the first `--name` are the
/// globals, and each `--name` starts a job. Without `--directory` the files go in the working
/// directory, as fio's do.
pub fn parse_args(args: &[Arg]) -> Result<WorkloadFile, ConfigError> {
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
    let mut file = read(COMMAND_LINE, &sections, "argument")?;
    // The working directory by name, so that the result says where the run was.
    file.target
        .get_or_insert_with(|| std::env::current_dir().map_or_else(|_| ".".into(), |d| d.display().to_string()));
    Ok(file)
}

/// The workload of `sections`; a refusal names each option's `unit` (line, argument).
fn read(name: &str, sections: &[Section], unit: &str) -> Result<WorkloadFile, ConfigError> {
    let file_error = |line: usize, message: String| ConfigError::File {
        file: dfsbench_backends::one_line(name),
        line: Some(line),
        message: dfsbench_backends::one_line(&message),
    };
    let mut refused = Vec::new();
    let mut file = WorkloadFile::default();
    // [global] options are applied once, to the defaults every later job starts from: a file of
    // many sections is read in linear time.
    let mut defaults = Job::default();
    let mut jobs = 0;
    // Whether the jobs so far verify (all alike).
    let mut verified = None;
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
        if jobs > 0 && !job.stonewall {
            refused.push(Refused {
                section: s.name.clone(),
                line: s.line,
                shown: format!("[{}]", s.name),
                why: Some("fio runs it at the same time as the job before; dfsbench runs jobs one after another: add stonewall".into()),
            });
        }
        jobs += 1;
        file.jobs.push(job.spec);
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
            ("bs" | "blocksize", Some(bs)) => match bytes_pair(bs) {
                Ok(b) => self.spec.shared.bs = Some(b.to_string()),
                Err(why) => refuse(Some(why)),
            },
            ("bsrange" | "blocksize_range", Some(r)) => match bytes_range(r) {
                Ok(b) => self.spec.shared.bs = Some(b.to_string()),
                Err(why) => refuse(Some(why)),
            },
            ("size", Some(t)) => match size_bytes(t) {
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
                "io_uring" | "libaio" => self.spec.workloads.io.ioengine = Some(e.to_string()),
                _ => refuse(Some("dfsbench's engines are psync/sync, io_uring and libaio".into())),
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
                if f.contains(['/', ':']) {
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
                if size_bytes(c) != Ok(512) {
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
            ("rate", Some(r)) => match one_rate(r).map(size_bytes) {
                Some(Ok(b)) if b > 0 => self.rate = Some((Rate::BytesPerSec(b), o)),
                _ => refuse(Some("give one bytes-per-second figure for reads and writes alike, such as 10m".into())),
            },
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
                Rate::BytesPerSec(b) if b >= bs => b as f64 / bs as f64,
                Rate::BytesPerSec(_) => {
                    refuse(o, "less than one block a second: give a rate of at least bs bytes");
                    0.0
                }
            };
            self.spec.settings.rate = Some(per_clone * self.workers as f64);
        }
        if self.size.is_none() {
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
mod tests {
    use super::*;

    /// Every key of [`KEYS`] is one the reader knows, whatever its value: refused, if at all,
    /// for its value (with a reason), never as an unknown option; and another key is.
    #[test]
    fn the_known_keys_are_the_ones_read() {
        let known = |key: &str, value: &str| {
            let o = Opt {
                section: "j".into(),
                key: key.into(),
                value: Some(value.into()),
                line: 1,
            };
            let mut refused = Vec::new();
            Job::default().apply(&o, &mut WorkloadFile::default(), &mut refused);
            refused.iter().all(|r| r.why.is_some())
        };
        for key in KEYS {
            for value in ["1", "read", "4k", "x:y"] {
                assert!(known(key, value), "{key}={value}");
            }
        }
        assert!(!known("verify_fatal", "1"));
    }
    use crate::config::validate;

    fn no_vars(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn sizes_as_fio_reads_them() {
        assert_eq!(size_bytes("4k").unwrap(), 4096);
        assert_eq!(size_bytes("4K").unwrap(), 4096);
        assert_eq!(size_bytes("4KB").unwrap(), 4096);
        assert_eq!(size_bytes("1MiB").unwrap(), 1_000_000);
        assert_eq!(size_bytes("10G").unwrap(), 10 << 30);
        assert_eq!(size_bytes("524288").unwrap(), 524288);
        assert_eq!(size_bytes("2pb").unwrap(), 2 << 50);
        assert!(size_bytes("50%").is_err());
        assert!(size_bytes("1x").is_err());
        // Suffixes are read by characters: a multi-byte one is refused, not sliced.
        for odd in ["4ý", "4kÿ", "ý", "4\u{1F600}b"] {
            assert!(size_bytes(odd).unwrap_err().contains(odd), "{odd}");
        }
    }

    #[test]
    fn global_and_jobs_become_io_jobs() {
        let text = "; a comment\n[global]\nbs=4K\nsize=${SIZE}\nioengine=libaio\nstonewall\n\n[w]\nrw=write\nnumjobs=2 # two\n[r]\nrw=randread\niodepth=16\n";
        let vars = |n: &str| (n == "SIZE").then(|| "1m".to_string());
        let f = parse("t.fio", text, vars).unwrap();
        assert_eq!(f.jobs.len(), 2);
        let (w, r) = (&f.jobs[0], &f.jobs[1]);
        assert_eq!(w.settings.name.as_deref(), Some("w"));
        assert_eq!(w.settings.workers, Some(2));
        assert_eq!(w.shared.bs.as_deref(), Some("4096"));
        assert_eq!(w.workloads.io.size.as_deref(), Some("1048576"));
        assert_eq!(r.workloads.io.rw.as_deref(), Some("randread"));
        assert_eq!(r.workloads.io.ioengine.as_deref(), Some("libaio"));
        assert_eq!(r.workloads.io.iodepth, Some(16));
        validate(&f.run, &f.jobs).unwrap();
    }

    /// fio's cached-read setup: pre_read with invalidate off runs; pre_read alone is refused at
    /// validation, where the message says to turn invalidation off.
    #[test]
    fn pre_read_needs_invalidate_off() {
        let cached = parse(
            "t.fio",
            "[r]\nrw=randread\nsize=1m\npre_read=1\ninvalidate=0\n",
            no_vars,
        )
        .unwrap();
        assert_eq!(cached.jobs[0].workloads.io.pre_read, Some(true));
        assert_eq!(cached.run.invalidate, Some(false));
        validate(&cached.run, &cached.jobs).unwrap();
        let alone = parse("t.fio", "[r]\nrw=randread\nsize=1m\npre_read=1\n", no_vars).unwrap();
        let e = validate(&alone.run, &alone.jobs).unwrap_err().to_string();
        assert!(e.contains("pre_read") && e.contains("invalidate"), "{e}");
    }

    #[test]
    fn every_unsupported_option_is_named_with_its_line() {
        let text = "[global]\nsize=1m\nstartdelay=3\n[a]\nrw=trim\n[b]\nbssplit=4k/50:8k/50\n";
        let e = parse("t.fio", text, no_vars).unwrap_err().to_string();
        assert!(e.starts_with("t.fio: fio options dfsbench cannot run:"), "{e}");
        for part in [
            "[global] line 3 `startdelay=3`",
            "[a] line 5 `rw=trim`",
            "[b] line 7 `bssplit=4k/50:8k/50`",
            "[b] line 6 `[b]`",
        ] {
            assert!(e.contains(part), "{part} in {e}");
        }
        assert!(!e.contains('\n'));
    }

    #[test]
    fn fio_semantics_dfsbench_lacks_are_refused() {
        let e = |t: &str| parse("t.fio", t, no_vars).unwrap_err().to_string();
        let capped = parse("t.fio", "[a]\nsize=1m\nruntime=10\n", no_vars).unwrap();
        assert_eq!(capped.jobs[0].settings.time_based, Some(false));
        // numjobs clones of a named file share it, each over all of it.
        let clones = parse("t.fio", "[a]\nsize=1m\nfilename=f\nnumjobs=4\n", no_vars).unwrap();
        assert_eq!(clones.jobs[0].workloads.io.same_file, Some(true));
        validate(&clones.run, &clones.jobs).unwrap();
        assert!(e("[a]\nrw=read\n").contains("no size"));
        assert!(e("[a]\nsize=${NOPE}\n").contains("variable NOPE is not set"));
        assert!(e("size=1m\n").contains("outside a section"));
    }

    /// fio's data and access options become dfsbench's; what dfsbench cannot write is refused.
    #[test]
    fn data_and_access_options() {
        let text = "[global]\nsize=1m\nrw=randwrite\nstonewall\n[a]\nbuffer_compress_percentage=60\nbuffer_compress_chunk=512\ndedupe_percentage=20\nrandom_distribution=zipf:1.2\n[b]\nrefill_buffers\n[c]\nscramble_buffers=0\n[d]\ndedupe_percentage=30\nrefill_buffers=1\n";
        let f = parse("t.fio", text, no_vars).unwrap();
        let (a, b, c, d) = (&f.jobs[0], &f.jobs[1], &f.jobs[2], &f.jobs[3]);
        assert_eq!(a.shared.compress_percentage, Some(60));
        assert_eq!(a.shared.dedupe_percentage, Some(20));
        assert_eq!(a.shared.random_distribution.as_deref(), Some("zipf:1.2"));
        // refill_buffers: every block generated anew, none a copy.
        assert_eq!(b.shared.dedupe_percentage, Some(0));
        assert_eq!(b.shared.compress_percentage, None);
        // scramble_buffers=0 is dfsbench's default data.
        assert_eq!((c.shared.compress_percentage, c.shared.dedupe_percentage), (None, None));
        // refill_buffers keeps a dedupe percentage the job gave.
        assert_eq!(d.shared.dedupe_percentage, Some(30));
        validate(&f.run, &f.jobs).unwrap();

        let e = |t: &str| {
            parse("t.fio", &format!("[a]\nsize=1m\n{t}\n"), no_vars)
                .unwrap_err()
                .to_string()
        };
        assert!(
            e("scramble_buffers=1").contains("does not scramble"),
            "{}",
            e("scramble_buffers=1")
        );
        assert!(e("buffer_compress_percentage=101").contains("0-100"));
        assert!(e("dedupe_percentage=x").contains("0-100"));
        assert!(e("buffer_compress_chunk=4k").contains("segments of 512 bytes"));
        let zoned = e("random_distribution=zoned:50/5:50/95");
        assert!(
            zoned.contains("[a] line 3 `random_distribution=zoned:50/5:50/95`") && zoned.contains("zipf:THETA"),
            "{zoned}"
        );
    }

    /// Pacing, syncs, seeds, passes and the random map as fio means them.
    #[test]
    fn rates_syncs_seeds_and_passes() {
        let text = "[global]\nsize=1m\nbs=8k\n[a]\nrw=randwrite\nnumjobs=2\nrate_iops=50\nrate_process=poisson\nfdatasync=4\nnorandommap\n\
                    [b]\nstonewall\nrw=write\nrate=80k,80k\nfsync=1\nloops=3\nrandseed=42\n";
        let f = parse("t.fio", text, no_vars).unwrap();
        let (a, b) = (&f.jobs[0], &f.jobs[1]);
        // fio paces each clone: dfsbench's rate is the job's.
        assert_eq!(
            (a.settings.rate, a.settings.arrival.as_deref()),
            (Some(100.0), Some("poisson"))
        );
        assert_eq!(
            (a.workloads.io.fdatasync_every, a.workloads.io.norandommap),
            (Some(4), Some(true))
        );
        // 80k bytes a second in 8k blocks.
        assert_eq!(b.settings.rate, Some(10.0));
        assert_eq!((b.workloads.io.fsync_every, b.workloads.io.loops), (Some(1), Some(3)));
        assert_eq!(f.run.seed, Some(42));
        validate(&f.run, &f.jobs).unwrap();
        // randrepeat=0: a seed of its own, not the fixed default.
        let fresh = |_| {
            parse("t.fio", "[a]\nsize=1m\nrandrepeat=0\n", no_vars)
                .unwrap()
                .run
                .seed
        };
        assert!(fresh(0).is_some() && fresh(0) != fresh(1));

        let e = |t: &str| {
            parse("t.fio", &format!("[a]\nsize=1m\n{t}\n"), no_vars)
                .unwrap_err()
                .to_string()
        };
        for (opt, says) in [
            ("rate=1m,500k", "one bytes-per-second figure"),
            ("rate_iops=,50", "one operations-per-second figure"),
            ("rate=100", "less than one block a second"),
            ("rate_process=step", "linear or poisson"),
            ("loops=0", "1 or more"),
        ] {
            assert!(
                e(opt).contains(&format!("`{opt}` (")) && e(opt).contains(says),
                "{opt}: {}",
                e(opt)
            );
        }
    }

    /// verify= of a checksum kind is dfsbench's check of every byte; a write job reads its
    /// data back after writing, as fio's do_verify does (counted as reads in both).
    #[test]
    fn verify_keeps_fio_checksum_kinds() {
        let f = parse("t.fio", "[w]\nsize=1m\nrw=randwrite\nverify=crc32c\n", no_vars).unwrap();
        assert_eq!(f.run.verify, Some(true));
        assert_eq!(f.jobs[0].workloads.io.then, Some(vec!["read".to_string()]));
        validate(&f.run, &f.jobs).unwrap();
        let quiet = parse("t.fio", "[w]\nsize=1m\nrw=write\nverify=md5\ndo_verify=0\n", no_vars).unwrap();
        assert_eq!(
            (quiet.run.verify, &quiet.jobs[0].workloads.io.then),
            (Some(true), &None)
        );
        let none = parse("t.fio", "[r]\nsize=1m\nverify=0\n", no_vars).unwrap();
        assert_eq!(none.run.verify, None);

        let e = |t: &str| parse("t.fio", t, no_vars).unwrap_err().to_string();
        let pattern = e("[w]\nsize=1m\nrw=write\nverify=pattern\n");
        assert!(
            pattern.contains("`verify=pattern` (") && pattern.contains("crc32c"),
            "{pattern}"
        );
        let mixed = e("[a]\nsize=1m\nrw=write\nverify=md5\n[b]\nstonewall\nsize=1m\n");
        assert!(
            mixed.contains("[b] line 5 `[b]` (it does not verify, and an earlier job does"),
            "{mixed}"
        );
    }

    /// The options of a fio command line, read as a job: the globals before the first
    /// `--name`, a job per `--name`, positions named as arguments, the working directory.
    #[test]
    fn a_command_line_is_read_as_fio_reads_it() {
        let arg = |at: usize, k: &str, v: Option<&str>| (at, k.to_string(), v.map(str::to_string));
        let f = parse_args(&[
            arg(1, "bs", Some("8k")),
            arg(2, "name", Some("one")),
            arg(3, "rw", Some("randread")),
            arg(4, "size", Some("1m")),
        ])
        .unwrap();
        let here = std::env::current_dir().unwrap();
        assert_eq!(f.target.as_deref(), Some(here.to_str().unwrap()));
        let job = &f.jobs[0];
        assert_eq!(job.settings.name.as_deref(), Some("one"));
        assert_eq!(
            (job.shared.bs.as_deref(), job.workloads.io.rw.as_deref()),
            (Some("8192"), Some("randread"))
        );
        let e = parse_args(&[
            arg(1, "name", Some("x")),
            arg(2, "size", Some("1m")),
            arg(3, "exitall", None),
        ])
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("the fio command line: ") && e.contains("[x] argument 3 `exitall`"),
            "{e}"
        );
    }

    /// [global] options are applied once, not again for every job after them: a file of 100,000
    /// sections is read in linear time (50,000 took 52 s), and each option refused once.
    #[test]
    fn many_sections_read_in_linear_time() {
        let text = format!("[global]\nsize=1m\n{}", "[j]\nstonewall\n".repeat(100_000));
        let f = parse("t.fio", &text, no_vars).unwrap();
        assert_eq!(f.jobs.len(), 100_000);
        assert_eq!(f.jobs[99_999].workloads.io.size.as_deref(), Some("1048576"));
        let text = "[global]\nfoo=1\n[j]\nsize=1m\nstonewall\n".repeat(50_000);
        let e = parse("t.fio", &text, no_vars).unwrap_err().to_string();
        // Each refused once: the first 50 named, then how many more.
        assert_eq!(e.matches("`foo=1`").count(), 50);
        assert!(
            e.ends_with(", and 49950 more; remove or change them (README: Coming from fio)"),
            "{e}"
        );
    }

    /// Values are read by characters, and expanded within the size a workload file may have.
    #[test]
    fn odd_and_huge_values() {
        let e = parse("t.fio", "[a]\nsize=4\u{fd}\n", no_vars).unwrap_err().to_string();
        assert!(
            e.contains("[a] line 2 `size=4\u{fd}`") && e.contains("no byte count"),
            "{e}"
        );
        let big = "x".repeat(10_000);
        let vars = |n: &str| (n == "BIG").then(|| big.clone());
        let text = format!("[a]\nsize=1m\n{}", "description=${BIG}\n".repeat(200));
        let e = parse("t.fio", &text, vars).unwrap_err().to_string();
        assert!(
            e.contains("line 107: with its variables expanded the file is longer than"),
            "{e}"
        );
    }

    #[test]
    fn detects_job_files() {
        assert!(is_job_file("x.fio", ""));
        assert!(is_job_file("job", "; c\n[global]\nbs=4k\n"));
        assert!(!is_job_file("w", "[[job]]\nworkload = \"io\"\n"));
        assert!(!is_job_file("w.toml", "[global]\n"));
    }
}
