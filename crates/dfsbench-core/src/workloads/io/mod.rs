//! fio-style block I/O: sequential or random reads and writes with a real queue depth.
//!
//! This file holds the workload's validation and its phases; `options.rs` its options, `rw.rs`
//! its patterns, `span.rs` where operations go, `think.rs` the pauses between them, `engine.rs`
//! its file work and hot loop, `probe.rs` the engine probe of `--ioengine auto`.

use dfsbench_backends::{Capabilities, Capability, Client, IoEngine};
use dfsbench_result::PhaseResult;
use serde::Serialize;

use crate::data::{DataShape, Written};
use crate::dist::Access;
use crate::error::ConfigError;
use crate::pattern::FileKey;
use crate::stats::Recorder;
use crate::units::format_size;
use crate::worker::{JobContext, Worker};
use crate::workloads::shared::{size_key, size_or};
use crate::workloads::whole::chunk_for;
use crate::workloads::{Kind, Phase, RunSettings, SharedOptions, Timing};

use engine::{OpenedIo, LAYOUT_CHUNK};

mod engine;
mod floor;
mod flow;
mod latency;
mod log;
mod numa;
mod options;
mod phases;
mod prio;
mod probe;
mod rw;
mod span;
mod think;

pub(crate) use options::share_dedupe;
pub use options::Options;
pub use rw::{IoStep, Rw};

pub(crate) use flow::share as share_flows;

/// Why io's `key` (numa_cpu_nodes or numa_mem_policy) cannot be `value` here, if it cannot:
/// fio job files name the line.
pub(crate) fn numa_refused(key: &str, value: &str) -> Option<String> {
    let own = Options {
        numa_cpu_nodes: (key == "numa_cpu_nodes").then(|| value.to_string()),
        numa_mem_policy: (key == "numa_mem_policy").then(|| value.to_string()),
        ..Options::default()
    };
    Numa::validate(&own).err().map(|e| match e {
        ConfigError::Value { fix, .. } => fix,
        other => other.to_string(),
    })
}

/// Number the run's named files (see [`IoJob::file_id`]): the jobs naming one share it.
pub(crate) fn share_files(jobs: &mut [Placed<'_>]) {
    let mut names: Vec<String> = Vec::new();
    for (.., io) in jobs.iter_mut() {
        let Some(name) = &io.filename else { continue };
        let id = match names.iter().position(|n| n == name) {
            Some(id) => id,
            None => {
                names.push(name.clone());
                names.len() - 1
            }
        };
        io.file_id = Some(id as u32);
    }
}

/// An io job of the run: its index, group, workers, and the job (what the run's jobs share
/// between them is set after each is validated).
pub(crate) type Placed<'a> = (usize, Option<&'a str>, usize, &'a mut IoJob);
use flow::Flow;
pub use latency::LatencyTarget;
pub use log::Logs;
pub use numa::Numa;
pub use prio::Prio;
use span::Span;
pub use span::Zones;
use think::Think;

/// A sync every so many writes (`fsync=N`, `fdatasync=N`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SyncEvery {
    pub writes: u64,
    /// fdatasync(2) instead of fsync(2).
    pub data_only: bool,
}

/// fio-style block I/O.
#[derive(Debug, Clone, Serialize)]
pub struct IoJob {
    pub rw: Rw,
    /// Patterns run after `rw` on the same files.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub then: Vec<Rw>,
    /// The file's name in the job's directory, instead of `w<worker>.dat` / `shared.dat`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
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
    /// Every worker over all of one file (fio's clones sharing a file).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub same_file: bool,
    pub ioengine: IoEngine,
    /// Read each file once, unmeasured, before every pattern that reads it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub pre_read: bool,
    /// Probe the engines before each pattern: `auto` on a backend that offers a choice.
    #[serde(skip)]
    pub probe: bool,
    #[serde(flatten)]
    pub data: DataShape,
    /// Offsets of random patterns; None or random: every block once per pass.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub random_distribution: Option<Access>,
    /// Random offsets drawn independently (fio's norandommap).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub norandommap: bool,
    /// Sync the file every so many writes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sync_every: Option<SyncEvery>,
    /// Passes over the file when the phase is not time-based.
    pub loops: u64,
    /// Where worker 0's region starts, and how much further each next worker's does.
    #[serde(skip_serializing_if = "is_zero")]
    pub offset: u64,
    #[serde(skip_serializing_if = "is_zero")]
    pub offset_increment: u64,
    /// Block sizes and their shares (bs is then the largest, the size of the buffers).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub bssplit: Vec<(usize, u32)>,
    /// Writes' block sizes, when not bssplit's.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub bssplit_write: Vec<(usize, u32)>,
    /// fio's NUMA placement of the workers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub numa: Option<Box<Numa>>,
    /// fio's I/O priorities.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prio: Option<Box<Prio>>,
    /// Bytes per second each worker keeps at least, over every second.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_min: Option<u64>,
    /// Bytes each worker moves in each loop of a pattern that is not time-based, instead of size.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub io_size: Option<u64>,
    /// Bytes added to the offset after every sequential operation (fio's rw modifier).
    #[serde(skip_serializing_if = "is_zero_i")]
    pub seq_add: i64,
    /// What random offsets are multiples of, when not the smallest block (fio's blockalign).
    #[serde(skip_serializing_if = "is_zero")]
    pub blockalign: u64,
    /// fio's strided zones.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zones: Option<Zones>,
    /// A pause after every so many operations (fio's thinktime).
    #[serde(flatten)]
    pub think: Option<Box<Think>>,
    /// The most operations each worker issues in a pattern.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub number_ios: Option<u64>,
    /// The job's weight in its flow (fio's flow).
    #[serde(flatten)]
    pub flow: Option<Box<Flow>>,
    /// fio's latency target: the queue depth is searched for first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_target: Option<LatencyTarget>,
    /// Check the blocks written after every so many of them (fio's verify_backlog).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verify_backlog: Option<u64>,
    /// In a run that verifies, this job does not (its data is not the pattern, its reads are
    /// not checked).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub skip_verify: bool,
    /// Error kinds not counted, for reads, writes and checks (fio's ignore_error).
    #[serde(skip_serializing_if = "is_none_ignored")]
    pub ignore_error: [Vec<String>; 3],
    /// Dump a block that fails its check to files; end the pattern at the first.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub verify_dump: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub verify_fatal: bool,
    /// fio's per-I/O logs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logs: Option<Box<Logs>>,
    /// Write until the target is full, which ends the pattern without an error.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub fill_device: bool,
    /// The path a fio job gave as filename; the file is `filename`, its base name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fio_filename: Option<String>,
    /// Whether `size` was given: on a device, without it, the job spans the device.
    #[serde(skip)]
    pub size_given: bool,
    /// The size is the named file's when the job starts (an earlier job made it): until then
    /// `size` is 0.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub size_from_file: bool,
    /// The named file's number among the run's named files, which its verify key holds: the
    /// jobs that name a file share its data (set once the run's jobs are known).
    #[serde(skip)]
    pub file_id: Option<u32>,
    /// The run verifies what it reads: on a device, the layout then writes what is checked.
    #[serde(skip)]
    pub verify: bool,
    /// The target is a block device: reads read what is on it, without a layout.
    #[serde(skip)]
    pub on_device: bool,
    /// The job's file is a character device that holds no data (/dev/null, /dev/zero): read
    /// as it is, without a layout, its pages never cached.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_file: Option<String>,
}

fn is_none_ignored(v: &[Vec<String>; 3]) -> bool {
    v.iter().all(Vec::is_empty)
}

/// fio's ignore_error lists (`READS,WRITES,CHECKS`, kinds joined by `:`): errno names, or
/// numbers as errno's names.
fn ignore_lists(text: Option<&str>) -> Result<[Vec<String>; 3], ConfigError> {
    let mut out: [Vec<String>; 3] = Default::default();
    let Some(text) = text else { return Ok(out) };
    for (i, list) in text.split(',').enumerate() {
        if i > 2 {
            return Err(ConfigError::value(
                "ignore_error",
                format!("'{text}'"),
                "give at most three lists: reads, writes, checks",
            ));
        }
        for kind in list.split(':').map(str::trim).filter(|k| !k.is_empty()) {
            let name = match kind.parse::<i32>() {
                Ok(n) => dfsbench_backends::OpError::from_errno(n).kind.to_string(),
                Err(_)
                    if kind.starts_with('E') && kind.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit()) =>
                {
                    kind.to_string()
                }
                Err(_) => {
                    return Err(ConfigError::value(
                        "ignore_error",
                        format!("'{kind}'"),
                        "give errno names such as ENOSPC, or numbers",
                    ))
                }
            };
            out[i].push(name);
        }
    }
    Ok(out)
}

impl IoJob {
    /// Whether an error of `kind` of an operation (0 read, 1 write, 2 check) is not counted.
    #[inline]
    pub(super) fn ignores(&self, which: usize, kind: &str) -> bool {
        self.ignore_error[which].iter().any(|k| k == kind)
    }
}

fn is_zero_i(v: &i64) -> bool {
    *v == 0
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

impl IoJob {
    /// All workers work on one file (their regions of it, or all of it): worker 0 lays it
    /// out, and its data is worker 0's.
    pub(super) fn one_file(&self) -> bool {
        self.shared_file || self.same_file
    }
}

impl Kind for IoJob {
    const NAME: &'static str = "io";
    const SHARED: &'static [&'static str] = &[
        "bs",
        "direct",
        "fsync",
        "compress_percentage",
        "dedupe_percentage",
        "random_distribution",
    ];
    type Options = Options;
    type Step = IoStep;

    fn validate(own: &Options, s: &SharedOptions, run: &RunSettings) -> Result<IoJob, ConfigError> {
        let rw = Rw::parse("rw", own.rw.as_deref().unwrap_or("read"))?;
        let then = own
            .then
            .iter()
            .flatten()
            .map(|t| Rw::parse("then", t))
            .collect::<Result<Vec<_>, _>>()?;
        if own.then.as_ref().is_some_and(Vec::is_empty) {
            return Err("then is empty: name the patterns to run after rw, e.g. read".into());
        }
        let filename = own.filename.clone();
        if let Some(f) = filename
            .as_deref()
            .filter(|f| f.is_empty() || f.contains('/') || *f == "." || *f == "..")
        {
            return Err(ConfigError::value(
                "filename",
                format!("'{f}'"),
                "give a plain file name: the file is made in the job's directory under the target",
            ));
        }
        let span = Span::validate(own, s.bs.is_some())?;
        let sizes = || span.bssplit.iter().chain(&span.bssplit_write).map(|(bs, _)| *bs);
        let bs = match sizes().max() {
            Some(largest) => largest,
            None => s.block_size(4096)?,
        };
        let unit = sizes().min().unwrap_or(bs);
        let fill_device = own.fill_device.unwrap_or(false);
        if fill_device && (rw != Rw::Write || !then.is_empty()) {
            return Err("fill_device writes until the target is full: give rw = write alone".into());
        }
        // Filling: size bounds the writes when given, else the target's space does (1 PiB).
        let size_from_file = own.size_from_file == Some(true) && own.size.is_none();
        if size_from_file && (filename.is_none() || fill_device || own.dedupe_working_set.is_some()) {
            return Err(
                "size_from_file takes the size of the job's named file: give filename, and no fill_device or dedupe_working_set (which need the size first)"
                    .into(),
            );
        }
        let size = if size_from_file {
            0
        } else {
            size_or(
                "size",
                own.size.as_deref(),
                if fill_device { 1 << 50 } else { 64 << 20 },
            )?
        };
        if size < unit as u64 && !size_from_file {
            return Err(ConfigError::value(
                "size",
                format!(
                    "{} is smaller than bs = {}",
                    format_size(size),
                    format_size(unit as u64)
                ),
                "make the file at least one block",
            ));
        }
        let iodepth = own.iodepth.unwrap_or(1);
        if iodepth == 0 || iodepth > 4096 {
            return Err(ConfigError::value(
                "iodepth",
                iodepth,
                "give a queue depth between 1 and 4096",
            ));
        }
        let rwmixread = own.rwmixread.unwrap_or(50);
        if rwmixread > 100 {
            return Err(ConfigError::value(
                "rwmixread",
                rwmixread,
                "give a percentage from 0 to 100",
            ));
        }
        let ioengine = match own.ioengine.as_deref().unwrap_or("auto") {
            "auto" => IoEngine::Auto,
            "io_uring" => IoEngine::IoUring,
            "libaio" => IoEngine::Libaio,
            "posixaio" => IoEngine::Posixaio,
            "mmap" => IoEngine::Mmap,
            "psync" | "sync" => IoEngine::Psync,
            other => {
                return Err(ConfigError::value(
                    "ioengine",
                    format!("'{other}'"),
                    "use auto, io_uring, libaio, posixaio, psync or mmap",
                ))
            }
        };
        let direct = s.direct.unwrap_or(false);
        let sizes = [
            bs,
            unit,
            span.offset as usize,
            span.offset_increment as usize,
            span.blockalign as usize,
        ];
        if let Some(odd) = sizes.iter().find(|b| direct && *b % 512 != 0) {
            return Err(
                format!("direct I/O needs bs, bssplit and offsets in whole 512-byte sectors, got {odd}").into(),
            );
        }
        let pre_read = own.pre_read.unwrap_or(false);
        if pre_read && direct {
            return Err("pre_read fills the page cache, and direct I/O bypasses it: leave one of them out".into());
        }
        if pre_read && run.invalidate != Some(false) {
            return Err(
                "pre_read reads the files into the page cache, and invalidate (on by default) drops them again before the reads: add --invalidate 0 (workload file: invalidate = false)"
                    .into(),
            );
        }
        let random_distribution = s.access()?;
        if random_distribution.is_some() && !rw.random() {
            return Err(format!(
                "random_distribution places random offsets, and rw = {} is sequential: use randread, randwrite or randrw, or leave random_distribution out",
                rw.name()
            )
            .into());
        }
        let norandommap = own.norandommap.unwrap_or(false);
        if norandommap && !rw.random() && !then.iter().any(|t| t.random()) {
            return Err(format!(
                "norandommap draws random offsets, and rw = {} is sequential: use randread, randwrite or randrw, or leave norandommap out",
                rw.name()
            )
            .into());
        }
        let sync_every = match (own.fsync_every, own.fdatasync_every) {
            (Some(0), _) | (_, Some(0)) => {
                return Err(
                    "fsync_every and fdatasync_every count writes: give 1 or more (leave them out for no syncs)".into(),
                )
            }
            (Some(_), Some(_)) => return Err("give fsync_every or fdatasync_every, not both".into()),
            (Some(n), None) => Some(SyncEvery {
                writes: n,
                data_only: false,
            }),
            (None, Some(n)) => Some(SyncEvery {
                writes: n,
                data_only: true,
            }),
            (None, None) => None,
        };
        if sync_every.is_some() && !rw.writes() && !then.iter().any(|t| t.writes()) {
            return Err(
                "fsync_every and fdatasync_every sync after writes, and this job only reads: leave them out".into(),
            );
        }
        if own.same_file == Some(true) && own.shared_file == Some(true) {
            return Err("same_file (every worker over all of one file) and shared_file (a region each) are two ways of sharing a file: give one".into());
        }
        let loops = own.loops.unwrap_or(1);
        if loops == 0 {
            return Err(ConfigError::value("loops", 0, "give 1 or more passes over the file"));
        }
        let sequential = !rw.random() || then.iter().any(|t| !t.random());
        if span.seq_add != 0 && !sequential {
            return Err(format!(
                "seq_add leaves holes between sequential operations, and rw = {} is random: use read, write or readwrite, or leave seq_add out",
                rw.name()
            )
            .into());
        }
        if span.seq_add < 0 && span.seq_add.unsigned_abs() > size && !size_from_file {
            return Err(ConfigError::value(
                "seq_add",
                span.seq_add,
                "go back at most the file's size",
            ));
        }
        if direct && span.seq_add % 512 != 0 {
            return Err(format!(
                "direct I/O needs seq_add in whole 512-byte sectors, got {}",
                span.seq_add
            )
            .into());
        }
        let io_size = own
            .io_size
            .as_deref()
            .map(|t| size_key("io_size", t))
            .transpose()?
            .filter(|b| *b > 0);
        if own.number_ios == Some(0) {
            return Err(ConfigError::value("number_ios", 0, "give 1 or more operations"));
        }
        if span.blockalign > 0 && rw.random() && span.blockalign > size {
            return Err(ConfigError::value(
                "blockalign",
                span.blockalign,
                "align random offsets to at most the file's size",
            ));
        }
        let zones = zones(own, unit as u64, direct)?;
        if zones.is_some() && (span.seq_add != 0 || random_distribution.is_some()) {
            return Err(
                "zonesize places every operation in its zone: leave seq_add and random_distribution out".into(),
            );
        }
        Ok(IoJob {
            io_size,
            seq_add: span.seq_add,
            blockalign: span.blockalign,
            zones,
            // Boxed: the io job is the largest workload, which these rarely used options would
            // make larger still.
            think: Think::validate(own)?.map(Box::new),
            flow: Flow::validate(own)?.map(Box::new),
            latency_target: LatencyTarget::validate(own)?,
            verify_backlog: match own.verify_backlog {
                Some(0) => return Err(ConfigError::value("verify_backlog", 0, "give 1 or more blocks")),
                Some(_) if run.verify != Some(true) => {
                    return Err(
                        "verify_backlog checks written blocks: add --verify (workload file: verify = true)".into(),
                    )
                }
                Some(_) if !rw.writes() => {
                    return Err(
                        "verify_backlog checks the blocks a pattern writes, and rw only reads: leave it out".into(),
                    )
                }
                n => n,
            },
            verify_dump: own.verify_dump.unwrap_or(false),
            skip_verify: own.skip_verify.unwrap_or(false),
            ignore_error: ignore_lists(own.ignore_error.as_deref())?,
            verify_fatal: own.verify_fatal.unwrap_or(false),
            logs: Logs::validate(own)?.map(|mut l| {
                l.slat = !matches!(ioengine, IoEngine::Psync | IoEngine::Mmap);
                Box::new(l)
            }),
            number_ios: own.number_ios,
            fio_filename: own.fio_filename.clone(),
            fill_device,
            loops,
            rate_min: own
                .rate_min
                .as_deref()
                .map(|t| size_key("rate_min", t))
                .transpose()?
                .filter(|b| *b > 0),
            offset: span.offset,
            offset_increment: span.offset_increment,
            bssplit: span.bssplit,
            bssplit_write: span.bssplit_write,
            numa: Numa::validate(own)?.map(Box::new),
            prio: match prio::Prio::validate(own)? {
                Some(p) if p.per_io() && !matches!(ioengine, IoEngine::IoUring | IoEngine::Libaio) => {
                    return Err(
                        "cmdprio_percentage and cmdprio_bssplit give I/Os priorities of their own, which io_uring and libaio carry: give ioengine = io_uring or libaio (as fio's options of those engines)"
                            .into(),
                    )
                }
                p => p.map(Box::new),
            },
            norandommap,
            sync_every,
            data: own.dedupe_working_set(s.data_shape(run)?, size, bs)?,
            random_distribution,
            rw,
            then,
            filename,
            bs,
            size,
            iodepth,
            rwmixread,
            direct,
            fsync: s.fsync.unwrap_or(false),
            shared_file: own.shared_file.unwrap_or(false),
            same_file: own.same_file.unwrap_or(own.device_file.is_some() && own.shared_file != Some(true)),
            pre_read,
            probe: ioengine == IoEngine::Auto,
            ioengine,
            size_given: own.size.is_some(),
            size_from_file,
            file_id: None,
            verify: run.verify == Some(true),
            on_device: own.device_file.is_some(),
            device_file: match own.device_file.as_deref() {
                Some(d) if !dfsbench_backends::is_dataless_char_device(std::path::Path::new(d)) => {
                    return Err(ConfigError::value(
                        "device_file",
                        format!("'{d}'"),
                        "name a character device that holds no data: /dev/null, /dev/zero or /dev/full",
                    ))
                }
                d => d.map(str::to_string),
            },
        })
    }

    fn phases(&self, index: usize, job: &Timing) -> Vec<Phase> {
        phases::of(self, index, job)
    }

    fn needs(&self) -> Vec<Capability> {
        let mut needs = vec![Capability::RangedRead];
        if self.rw.writes() || self.then.iter().any(|rw| rw.writes()) {
            needs.push(Capability::PositionalWrite);
        }
        if self.direct {
            needs.push(Capability::DirectIo);
        }
        if self.fsync {
            needs.push(Capability::Fsync);
        }
        needs
    }

    fn setup_dirs(&self, index: usize, _: usize) -> Box<dyn Iterator<Item = String> + '_> {
        let named = self.filename.as_ref().map(|_| crate::workloads::RUN_FILES.to_string());
        Box::new(std::iter::once(io_dir(index)).chain(named))
    }

    fn files_read(&self, index: usize, step: IoStep, owner: usize, _: &[u64]) -> Vec<String> {
        if self.device_file.is_some() {
            // A device of no data caches no pages.
            return Vec::new();
        }
        match step {
            IoStep::Run(_) => vec![io_file(index, self, owner)],
            IoStep::Layout | IoStep::PreRead(_) | IoStep::Probe(_) => Vec::new(),
        }
    }

    async fn run<C: Client>(
        &self,
        worker: &mut Worker<C>,
        ctx: &JobContext,
        step: IoStep,
        _: Option<u64>,
        rec: &mut Recorder<'_>,
    ) {
        match step {
            IoStep::Layout => engine::run_layout(worker, ctx, self, rec).await,
            IoStep::PreRead(rw) => engine::pre_read(worker, ctx, self, rw, rec).await,
            IoStep::Probe(rw) => {
                let figures = probe::probe_engines(worker, ctx, self, rw, rec).await;
                let mut state: IoState<C::Block> = worker.take_state();
                state.opened = None;
                state.probe_figures = figures;
                worker.keep_state(state);
            }
            IoStep::Run(rw) => {
                let mut state: IoState<C::Block> = worker.take_state();
                if self.ioengine == IoEngine::Auto {
                    rec.note_probe(&state.probe_figures);
                }
                let stint = if ctx.duration.is_some() && ctx.time_based {
                    Stint::Timed
                } else {
                    Stint::Pass
                };
                let opened = state
                    .opened
                    .take()
                    .expect("the runner prepares a phase before it runs it");
                if let Some(e) = state.numa_error.take() {
                    let e = dfsbench_backends::OpError::new(
                        "numa",
                        format!("cannot place the worker on its NUMA nodes: {e}"),
                    );
                    rec.error(0, dfsbench_backends::clock::Instant::now(), &e, "", None);
                }
                // fio's prio/prioclass: the worker's thread's I/O priority.
                if let Some(v) = self.prio.as_ref().and_then(|p| p.job) {
                    if let Err(e) = prio::set_thread(v) {
                        let e = dfsbench_backends::OpError::new(
                            "ioprio_set",
                            format!("cannot set the I/O priority {v:#06x}: {e}"),
                        );
                        rec.error(0, dfsbench_backends::clock::Instant::now(), &e, "", None);
                    }
                }
                let mut log = state.log.take();
                let mut x = engine::Extras {
                    log: log.as_mut(),
                    ..Default::default()
                };
                // The latency target: the depth is searched for first, unmeasured, and the
                // phase is one window at the depth found, with what is left of its bytes.
                let mut search = None;
                let opened = match self.latency_target {
                    Some(t) => {
                        let mut s = latency::Search::new(t, self.iodepth);
                        let (issued, samples) = latency_search(worker, ctx, self, rw, opened, stint, &mut s, rec).await;
                        if let Some(l) = &mut x.log {
                            l.absorb(&samples);
                        }
                        // fio ends the job when the target fails at a depth of 1.
                        let left = if s.fatal {
                            0
                        } else {
                            self.bytes_per_pattern().saturating_sub(issued)
                        };
                        x.budget = Some(left);
                        x.until = Some(dfsbench_backends::clock::Instant::now() + t.window);
                        search = Some(s);
                        engine::open_io(worker, ctx, self, rw, opened_engine(worker, self)).await
                    }
                    None => opened,
                };
                let depth = search.as_ref().map(|s| s.qd);
                if let Some(qd) = depth {
                    x.depth = Some(qd);
                }
                engine::run_io(worker, ctx, self, rw, opened, stint, x, rec).await;
                if let Some(qd) = depth {
                    // The depth found: fio's latency_depth.
                    rec.note_depth(qd);
                }
                // fio's logs, once the phase's I/O is done: in the working directory.
                if let (Some(logs), Some(l)) = (&self.logs, &mut log) {
                    if let Err(e) = l.flush(logs, worker.id, std::path::Path::new(".")) {
                        let e = dfsbench_backends::OpError::new("log", format!("cannot write the job's logs: {e}"));
                        rec.error(0, dfsbench_backends::clock::Instant::now(), &e, "", None);
                    }
                }
                state.log = log;
                worker.keep_state(state);
            }
        }
    }

    /// The measured pattern's file is opened and its write buffers filled before the phase
    /// starts: 25-31 ms for 32 blocks of 1 MiB on io_uring here, 3 % of a 1 s run.
    async fn prepare<C: Client>(&self, worker: &mut Worker<C>, ctx: &JobContext, step: IoStep) {
        if let IoStep::Run(rw) = step {
            // The engine the probe picked on every rank; without a probe (a backend with
            // nothing to choose) it stays auto.
            let engine = opened_engine(worker, self);
            let mut state: IoState<C::Block> = worker.take_state();
            // fio's NUMA placement, before the buffers are allocated.
            if let Some(n) = &self.numa {
                state.numa_error = n.place().err().map(|e| e.to_string());
            }
            state.opened = Some(engine::open_io(worker, ctx, self, rw, engine).await);
            if self.logs.is_some() {
                // Room for the pattern's samples before its clock starts.
                let ops = self.ops_per_pattern().unwrap_or(1 << 16) as usize;
                match &mut state.log {
                    Some(l) => l.reserve(ops),
                    None => state.log = Some(log::IoLog::new(ops)),
                }
            }
            worker.keep_state(state);
        }
    }

    /// After a probe, the engine rank 0 picked from the merged figures (part.rs): every
    /// worker of every rank runs it, as workers that picked alone could run different ones.
    fn agreed(&self, result: &PhaseResult) -> Option<serde_json::Value> {
        result.params.get("ioengine_probe")?;
        result.params.get("ioengine").cloned()
    }

    fn queue_depth(&self) -> usize {
        self.iodepth
    }

    fn written(&self) -> Written {
        Written {
            shape: self.data,
            block: self.bs,
            // The layout writes the file whole, from the shared data: before the first pattern
            // when it reads, or before later reads when the first is cut short by a duration.
            chunk: if self.rw.reads() || self.then.iter().any(|rw| rw.reads()) {
                chunk_for(LAYOUT_CHUNK, self.size)
            } else {
                0
            },
        }
    }

    /// Only file backends choose an engine: elsewhere `auto` has nothing to probe.
    fn fit(&mut self, caps: Capabilities, _backend: &str) -> Option<String> {
        self.probe &= caps.page_cache;
        None
    }

    /// On a device of `bytes`: every worker over the whole region (fio's jobs on one device),
    /// which is all of the device when no size was given.
    fn on_device(&mut self, bytes: u64, workers: usize) -> Result<(), String> {
        self.on_device = true;
        if !self.shared_file {
            self.same_file = true;
        }
        if !self.size_given {
            // fio gives each clone the device from its offset on; dfsbench's clones have one
            // size, the room the last one has (offset_increment puts it furthest).
            let per_worker = if self.shared_file { workers.max(1) as u64 } else { 1 };
            let last = self.offset + (workers.max(1) as u64 - 1) * self.offset_increment;
            self.size = bytes.saturating_sub(last) / per_worker;
            if self.size < self.unit() {
                return Err(format!(
                    "the device ({bytes} bytes) has no room for a block past offset {}",
                    self.offset
                ));
            }
        }
        let end = self.file_len(workers.max(1) - 1, workers);
        if end > bytes {
            return Err(format!(
                "the job reaches byte {end}, past the device's end ({bytes} bytes): give a smaller size or offset"
            ));
        }
        Ok(())
    }

    fn verifies(&self) -> bool {
        !self.skip_verify
    }

    fn sized_by_file(&self, index: usize) -> Option<String> {
        (self.size_from_file && self.size == 0).then(|| io_file(index, self, 0))
    }

    /// The file's size is each worker's (every clone over all of it, as fio's), or the
    /// regions' of a shared file, from the offset on.
    fn take_file_size(&mut self, bytes: u64, workers: usize) -> Result<(), String> {
        let per_worker = if self.shared_file { workers.max(1) as u64 } else { 1 };
        self.size = bytes.saturating_sub(self.offset) / per_worker;
        if self.size < self.unit() {
            return Err(format!(
                "it has no size, and its file {} ({bytes} bytes) has no room for a block past offset {} (fio takes an existing file's size): give size",
                io_file(0, self, 0),
                self.offset
            ));
        }
        Ok(())
    }

    /// One named file is one worker's, a shared file's regions, or every worker's whole.
    fn check_workers(&self, workers: usize) -> Result<(), ConfigError> {
        if self.filename.is_some() && !self.shared_file && !self.same_file && workers > 1 {
            return Err(format!(
                "filename names one file, but the job has {workers} workers: add shared_file (one file, a region per worker), same_file (every worker over all of it, as fio's clones) or leave filename out (a file per worker)"
            )
            .into());
        }
        Ok(())
    }
}

/// fio's strided zones: zonesize, and zoneskip beside it.
fn zones(own: &Options, unit: u64, direct: bool) -> Result<Option<Zones>, ConfigError> {
    let size = own.zonesize.as_deref().map(|t| size_key("zonesize", t)).transpose()?;
    let skip = own.zoneskip.as_deref().map(|t| size_key("zoneskip", t)).transpose()?;
    match (size, skip) {
        (None, Some(_)) => Err("zoneskip is the gap between zones of zonesize: give zonesize too".into()),
        (None, None) => Ok(None),
        (Some(size), _) if size < unit => Err(ConfigError::value(
            "zonesize",
            size,
            format!("a zone holds at least one block ({unit} bytes)"),
        )),
        (Some(size), skip) if direct && (size % 512 != 0 || skip.unwrap_or(0) % 512 != 0) => Err(format!(
            "direct I/O needs zonesize and zoneskip in whole 512-byte sectors, got {size} and {}",
            skip.unwrap_or(0)
        )
        .into()),
        (Some(size), skip) => Ok(Some(Zones {
            size,
            skip: skip.unwrap_or(0),
        })),
    }
}

/// The engine a pattern runs on: the job's, or the one the probe picked.
fn opened_engine<C: Client>(worker: &Worker<C>, io: &IoJob) -> IoEngine {
    match io.ioengine {
        IoEngine::Auto => worker
            .agreed
            .as_ref()
            .and_then(|e| serde_json::from_value(e.clone()).ok())
            .unwrap_or(IoEngine::Auto),
        named => named,
    }
}

/// The latency target's search on `opened`, recorded apart: it ends once the depth is found,
/// the pattern's bytes are moved or the phase's time is over. A search that found its depth
/// is thrown away, as fio resets its statistics then (see latency.rs); one that did not is
/// the phase's result, as fio's then is the whole job's. Returns the bytes it issued and its
/// I/Os (for the job's own logs).
#[allow(clippy::too_many_arguments)]
async fn latency_search<C: Client>(
    worker: &mut Worker<C>,
    ctx: &JobContext,
    io: &IoJob,
    rw: Rw,
    opened: OpenedIo<C::Block>,
    stint: Stint,
    search: &mut latency::Search,
    rec: &mut Recorder<'_>,
) -> (u64, log::IoLog) {
    use crate::stats::{series_of, Latencies, Live};
    use crate::workloads::shared::{READ, RW_CLASSES, WRITE};
    let far = dfsbench_backends::clock::Instant::now() + std::time::Duration::from_secs(1 << 32);
    let ctl = rec.ctl().private(rec.ctl().deadline.unwrap_or(far));
    let live = Live::default();
    let series = std::cell::RefCell::new(series_of(&ctl));
    let latencies = std::sync::Mutex::new(Latencies::new(1, RW_CLASSES.len()));
    let mut apart = Recorder::new(worker.id, RW_CLASSES, &ctl, &live, &series, &latencies);
    let mut samples = log::IoLog::new(io.ops_per_pattern().unwrap_or(1 << 16) as usize);
    let x = engine::Extras {
        search: Some(search),
        log: Some(&mut samples),
        ..Default::default()
    };
    let issued = engine::run_io(worker, ctx, io, rw, opened, stint, x, &mut apart).await;
    let out = apart.finish();
    if !search.found {
        for s in &samples.samples {
            let (start, done) = samples.times(s);
            rec.record_op(if s.write { WRITE } else { READ }, start, start, done, u64::from(s.len));
        }
    }
    // Its errors are the phase's (an I/O over the target at a depth of 1 ends the job).
    if let Some(first) = out.errors.samples.first() {
        let kind = if search.fatal { "ETIMEDOUT" } else { "latency_search" };
        let e = dfsbench_backends::OpError::new(
            kind,
            format!(
                "in the latency_target search, {} errors; the first: {}",
                out.errors.total, first.message
            ),
        );
        rec.error(
            0,
            dfsbench_backends::clock::Instant::now(),
            &e,
            &first.path,
            first.offset,
        );
    }
    (issued, samples)
}

/// What a worker keeps of the io workload between phases.
struct IoState<B> {
    /// The file the next phase runs on, opened before the phase starts.
    opened: Option<OpenedIo<B>>,
    /// Blocks per second of each engine in this worker's own probe, recorded again by the
    /// measured phase after it.
    probe_figures: Vec<(IoEngine, f64)>,
    /// fio's per-I/O logs of the worker, over the job's phases.
    log: Option<log::IoLog>,
    /// Why the worker could not be placed on its NUMA nodes.
    numa_error: Option<String>,
}

impl<B> Default for IoState<B> {
    fn default() -> Self {
        IoState {
            opened: None,
            probe_figures: Vec::new(),
            log: None,
            numa_error: None,
        }
    }
}

/// How long an io run issues blocks.
#[derive(Clone, Copy)]
pub(super) enum Stint {
    /// One pass over the blocks, cut short by the phase's deadline if there is one (fio's
    /// plain runtime).
    Pass,
    /// Round and round the blocks until the phase's deadline (fio's time_based).
    Timed,
}

/// The highest verify key's worker: named files count down from it (a job's workers count up
/// from 0, and a million of them in one job is not a run anyone gives).
const NAMED_KEYS: u32 = 0xf_ffff;

/// The job's directory.
fn io_dir(job: usize) -> String {
    format!("j{job}-io")
}

/// The file a worker works on and where its region starts.
fn file_and_region(ctx: &JobContext, io: &IoJob, worker: usize) -> (String, u64) {
    (io_file(ctx.job_index, io, worker), io.region_start(worker))
}

/// The file worker `worker` of job `job` reads and writes. A named file is the run's, shared
/// by every job that names it (fio's jobs of one filename).
pub(super) fn io_file(job: usize, io: &IoJob, worker: usize) -> String {
    if let Some(device) = &io.device_file {
        device.clone()
    } else if let Some(name) = &io.filename {
        format!("{}/{name}", crate::workloads::RUN_FILES)
    } else if io.one_file() {
        format!("{}/shared.dat", io_dir(job))
    } else {
        format!("{}/w{worker}.dat", io_dir(job))
    }
}

/// The verify key of an io file: a shared file is one file, written as worker 0's; a named
/// file is the run's, whichever job writes or reads it.
fn file_key(ctx: &JobContext, io: &IoJob, worker: usize) -> FileKey {
    if let Some(id) = io.file_id {
        return FileKey {
            job: 0,
            set: 0,
            worker: NAMED_KEYS - id,
            index: 0,
        };
    }
    FileKey {
        job: ctx.job_index as u16,
        set: 0,
        worker: if io.one_file() { 0 } else { worker as u32 },
        index: 0,
    }
}

#[cfg(test)]
mod tests {
    use crate::config::{validate, JobSpec, RunSpec};

    #[test]
    fn bad_values_are_explained() {
        let mut s = JobSpec::new("io", "io");
        s.workloads.io.iodepth = Some(0);
        let e = |s: JobSpec| validate(&RunSpec::default(), &[s]).unwrap_err().to_string();
        assert!(e(s).contains("iodepth = 0"));
        let mut s = JobSpec::new("io", "io");
        s.workloads.io.size = Some("1k".into());
        s.shared.bs = Some("4k".into());
        assert!(e(s).contains("smaller than bs"));
        let mut s = JobSpec::new("io", "io");
        s.settings.ramp = Some("2s".into());
        assert!(e(s).contains("ramp needs"));
    }
}
