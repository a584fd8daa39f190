//! fio-style block I/O: sequential or random reads and writes with a real queue depth.

use dfsbench_backends::clock::Instant;

use rand::{Rng, RngCore};

use dfsbench_backends::{
    AlignedBuf, BlockIo, BlockOp, BlockOpts, Capabilities, Capability, Client, FileOpts, IoEngine, OpError, Source,
};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::cache::drop_again;
use crate::config::{ConfigError, Job, RunSpec};
use crate::data::{DataShape, Written};
use crate::dist::{Access, Picker};
use crate::pattern::FileKey;
use crate::plan::Phase;
use crate::stats::{Recorder, Reread};
use crate::units::format_size;
use crate::worker::{JobContext, Worker};
use crate::workloads::shared::{size_or, READ, RW_CLASSES, WRITE};
use crate::workloads::whole::chunk_for;
use crate::workloads::{Kind, SharedOptions, Step};

/// The io workload's own flags and workload-file keys (fio's names).
#[derive(clap::Args, Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[group(id = "io-options")]
pub struct Options {
    /// Access pattern: read, write, randread, randwrite, readwrite, randrw (io).
    #[arg(long, visible_alias = "readwrite", value_name = "PATTERN", help_heading = "io")]
    pub rw: Option<String>,

    /// Patterns to run after rw on the same files, in order: `--rw write --then read` writes
    /// each worker's file and reads it back, as IOR does (io).
    #[arg(long, value_delimiter = ',', value_name = "LIST", help_heading = "io")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub then: Option<Vec<String>>,

    /// Name of the file in the job's directory (fio's filename): one worker's file, or the
    /// shared file (io) [default: w<worker>.dat, shared.dat].
    #[arg(long, value_name = "NAME", help_heading = "io")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,

    /// File size per worker (io) [default: 64m].
    #[arg(long, value_name = "SIZE", help_heading = "io")]
    pub size: Option<String>,

    /// Operations in flight per worker (io) [default: 1].
    #[arg(long, value_name = "N", help_heading = "io")]
    pub iodepth: Option<usize>,

    /// Percentage of reads in readwrite/randrw [default: 50].
    #[arg(long, value_name = "PCT", help_heading = "io")]
    pub rwmixread: Option<u32>,

    /// All workers use one file, each its own region (IOR's shared file) (io).
    #[arg(long, value_name = "0|1", num_args = 0..=1, default_missing_value = "1", value_parser = super::shared::parse_flag, help_heading = "io")]
    pub shared_file: Option<bool>,

    /// I/O engine: auto, io_uring, libaio or psync (io) [default: auto: the fastest of them
    /// by a short probe on the run's own file before each pattern].
    #[arg(long, value_name = "ENGINE", help_heading = "io")]
    pub ioengine: Option<String>,

    /// Read each worker's file once, unmeasured, before every pattern that reads it (fio's
    /// pre_read), so that cached reads start from a warm page cache; needs --invalidate 0 (io).
    #[arg(long, value_name = "0|1", num_args = 0..=1, default_missing_value = "1", value_parser = super::shared::parse_flag, help_heading = "io")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pre_read: Option<bool>,
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
    const ALL: [Rw; 6] = [
        Rw::Read,
        Rw::Write,
        Rw::Randread,
        Rw::Randwrite,
        Rw::Readwrite,
        Rw::Randrw,
    ];

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
    /// The pattern named `name` (fio's `rw` is `readwrite`), for key `key`.
    fn parse(key: &'static str, name: &str) -> Result<Rw, ConfigError> {
        match name {
            "rw" => Ok(Rw::Readwrite),
            name => Rw::ALL.into_iter().find(|rw| rw.name() == name).ok_or_else(|| {
                ConfigError::value(
                    key,
                    format!("'{name}'"),
                    "use read, write, randread, randwrite, readwrite or randrw",
                )
            }),
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

/// The unmeasured layout of the files (before reads), the unmeasured pre-read (`pre_read`) and
/// engine probe (`auto`), then the pattern.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum IoStep {
    Layout,
    PreRead(Rw),
    Probe(Rw),
    Run(Rw),
}

impl Step for IoStep {
    /// The pre-read reads the file its pattern will read: another rank's with --shuffle.
    fn reads_shuffled(self) -> bool {
        matches!(self, IoStep::Run(rw) | IoStep::PreRead(rw) if !rw.writes())
    }
    fn reads_data(self) -> bool {
        matches!(self, IoStep::Run(rw) if rw.reads())
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

    fn validate(own: &Options, s: &SharedOptions, run: &RunSpec) -> Result<IoJob, ConfigError> {
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
        let bs = s.block_size(4096)?;
        let size = size_or("size", own.size.as_deref(), 64 << 20)?;
        if size < bs as u64 {
            return Err(ConfigError::value(
                "size",
                format!("{} is smaller than bs = {}", format_size(size), format_size(bs as u64)),
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
            "psync" | "sync" => IoEngine::Psync,
            other => {
                return Err(ConfigError::value(
                    "ioengine",
                    format!("'{other}'"),
                    "use auto, io_uring, libaio or psync",
                ))
            }
        };
        let direct = s.direct.unwrap_or(false);
        if direct && bs % 512 != 0 {
            return Err(format!("direct I/O needs bs in whole 512-byte sectors, got {bs}").into());
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
        Ok(IoJob {
            data: s.data_shape(run)?,
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
            pre_read,
            probe: ioengine == IoEngine::Auto,
            ioengine,
        })
    }

    fn phases(&self, index: usize, job: &Job) -> Vec<Phase> {
        let params = vec![
            ("rw", json!(self.rw.name())),
            ("bs", json!(self.bs)),
            ("size", json!(self.size)),
            ("iodepth", json!(self.iodepth)),
            ("direct", json!(self.direct)),
            ("shared_file", json!(self.shared_file)),
        ];
        let mut out = Vec::new();
        // Reads need the file laid out, unless an earlier pattern wrote all of it: one pass by
        // count writes every block, a time-limited one may not.
        let later_reads = job.duration.is_some() && self.then.iter().any(|rw| rw.reads());
        if self.rw.reads() || later_reads {
            let label = format!("layout {}", format_size(self.size));
            let layout = Phase::new(index, job, IoStep::Layout, "layout", label, RW_CLASSES, params.clone());
            out.push(layout.preparation());
        }
        for rw in std::iter::once(self.rw).chain(self.then.iter().copied()) {
            if self.pre_read && rw.reads() {
                let label = format!("pre-read {}", format_size(self.size));
                let step = IoStep::PreRead(rw);
                let pre_read = Phase::new(index, job, step, "pre-read", label, RW_CLASSES, params.clone());
                out.push(pre_read.preparation());
            }
            if self.probe {
                let label = format!("probe engines: {} {}", rw.name(), format_size(self.bs as u64));
                let probe = Phase::new(
                    index,
                    job,
                    IoStep::Probe(rw),
                    "probe",
                    label,
                    RW_CLASSES,
                    params.clone(),
                );
                out.push(probe.preparation());
            }
            let mut params = params.clone();
            if matches!(rw, Rw::Readwrite | Rw::Randrw) {
                params.push(("rwmixread", json!(self.rwmixread)));
            }
            if self.pre_read && rw.reads() {
                params.push(("pre_read", json!(true)));
            }
            params[0].1 = json!(rw.name());
            let (name, bs) = (rw.name(), format_size(self.bs as u64));
            let label = format!("{name} {bs} qd{}", self.iodepth);
            out.push(
                Phase::new(index, job, IoStep::Run(rw), name, label, RW_CLASSES, params)
                    // One pass over the worker's file (or region) in whole blocks: the progress
                    // line's total (a block size of 0 never passes validation; no total then).
                    .counted(self.size.checked_div(self.bs as u64).unwrap_or(0)),
            );
        }
        out
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
        Box::new(std::iter::once(io_dir(index)))
    }

    fn files_read(&self, index: usize, step: IoStep, owner: usize, _: &[u64]) -> Vec<String> {
        match step {
            IoStep::Run(_) => vec![io_file(index, self, owner)],
            IoStep::Layout | IoStep::PreRead(_) | IoStep::Probe(_) => Vec::new(),
        }
    }

    async fn run<C: Client>(
        &self,
        worker: &mut Worker<C>,
        ctx: &JobContext<'_>,
        step: IoStep,
        _: Option<u64>,
        rec: &mut Recorder<'_>,
    ) {
        match step {
            IoStep::Layout => worker.run_layout(ctx, self, rec).await,
            IoStep::PreRead(rw) => worker.pre_read(ctx, self, rw, rec).await,
            IoStep::Probe(rw) => worker.probe_engines(ctx, self, rw, rec).await,
            IoStep::Run(rw) => {
                if self.ioengine == IoEngine::Auto {
                    rec.note_probe(&std::mem::take(&mut worker.probe_figures));
                }
                let stint = if ctx.job.duration.is_some() && ctx.job.time_based {
                    Stint::Timed
                } else {
                    Stint::Pass
                };
                let opened = worker
                    .opened
                    .take()
                    .expect("the runner prepares a phase before it runs it");
                worker.run_io(ctx, self, rw, opened, stint, rec).await
            }
        }
    }

    /// The measured pattern's file is opened and its write buffers filled before the phase
    /// starts: 25-31 ms for 32 blocks of 1 MiB on io_uring here, 3 % of a 1 s run.
    async fn prepare<C: Client>(&self, worker: &mut Worker<C>, ctx: &JobContext<'_>, step: IoStep) {
        if let IoStep::Run(rw) = step {
            let engine = match self.ioengine {
                // Without a probe (a backend with nothing to choose) it stays auto.
                IoEngine::Auto => worker.engine_pick.unwrap_or(IoEngine::Auto),
                named => named,
            };
            worker.opened = Some(worker.open_io(ctx, self, rw, engine).await);
        }
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

    fn check_paced(&self) -> Result<(), ConfigError> {
        if self.iodepth > 1 {
            return Err(format!(
                "rate with iodepth = {}: an open-loop io job issues one block at a time, set iodepth = 1 (more workers give more concurrency)",
                self.iodepth
            )
            .into());
        }
        Ok(())
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

/// A worker's file opened for an io run, its write buffers filled: what is set up before the
/// first block.
pub(crate) struct OpenedIo<B> {
    path: String,
    /// Where the worker's region of the file starts.
    region: u64,
    /// The verify key of the file's data.
    key: FileKey,
    file: Result<B, OpError>,
}

/// The job's directory.
fn io_dir(job: usize) -> String {
    format!("j{job}-io")
}

/// Block order of one pass over a file: in order, or a random permutation that touches every
/// block once per pass (fio's random map) without a map in memory: a full-period LCG modulo
/// the next power of two, skipping indices past the end.
struct BlockOrder {
    blocks: u64,
    mask: u64,
    state: u64,
    increment: u64,
    random: bool,
    next_seq: u64,
}

impl BlockOrder {
    fn new(blocks: u64, random: bool, seed: u64) -> Self {
        let m = blocks.next_power_of_two();
        BlockOrder {
            blocks,
            mask: m - 1,
            state: seed & (m - 1),
            increment: (seed >> 17) | 1,
            random,
            next_seq: 0,
        }
    }

    #[inline]
    fn next(&mut self) -> u64 {
        if !self.random {
            let b = self.next_seq;
            self.next_seq = (b + 1) % self.blocks;
            return b;
        }
        loop {
            // a = 1 (mod 4) and an odd increment give a full period modulo a power of two.
            self.state = self
                .state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(self.increment)
                & self.mask;
            if self.state < self.blocks {
                return self.state;
            }
        }
    }
}

/// Bytes per write call when laying a file out.
const LAYOUT_CHUNK: usize = 1 << 20;

/// The file a worker works on and where its region starts.
fn file_and_region(ctx: &JobContext<'_>, io: &IoJob, worker: usize) -> (String, u64) {
    let region = (io.size / io.bs as u64) * io.bs as u64;
    let offset = if io.shared_file { worker as u64 * region } else { 0 };
    (io_file(ctx.job_index, io, worker), offset)
}

/// The file worker `worker` of job `job` reads and writes.
pub(super) fn io_file(job: usize, io: &IoJob, worker: usize) -> String {
    if let Some(name) = &io.filename {
        format!("{}/{name}", io_dir(job))
    } else if io.shared_file {
        format!("{}/shared.dat", io_dir(job))
    } else {
        format!("{}/w{worker}.dat", io_dir(job))
    }
}

/// The verify key of an io file: a shared file is one file, written as worker 0's.
fn file_key(ctx: &JobContext<'_>, io: &IoJob, worker: usize) -> FileKey {
    FileKey {
        job: ctx.job_index as u16,
        set: 0,
        worker: if io.shared_file { 0 } else { worker as u32 },
        index: 0,
    }
}

impl<C: Client> Worker<C> {
    /// Lay the file out before reads: write it whole, as one file write (a PUT on object
    /// stores). Worker 0 writes a shared file for everyone.
    async fn run_layout(&mut self, ctx: &JobContext<'_>, io: &IoJob, rec: &mut Recorder<'_>) {
        if io.shared_file && self.id != 0 {
            return;
        }
        let (path, _) = file_and_region(ctx, io, self.id);
        let regions = if io.shared_file { ctx.total_workers as u64 } else { 1 };
        let size = (io.size / io.bs as u64) * io.bs as u64 * regions;
        let key = file_key(ctx, io, self.id);
        let content = self.content;
        let mut buf = AlignedBuf::new(if content.is_some() { LAYOUT_CHUNK } else { 0 });
        let mut fill = |b: &mut [u8], off: u64| content.expect("content").fill(key, off, b);
        let src = match content {
            Some(_) => Source::Fill(&mut buf, &mut fill),
            None => Source::Repeat(ctx.data.as_ref().expect("a job with a layout has its shared data")),
        };
        let opts = FileOpts {
            direct: io.direct,
            fsync: false,
        };
        let start = Instant::now();
        let result = self.client.write_file(&path, size, opts, src).await;
        let end = Instant::now();
        rec.add_retries(self.client.take_retries());
        match result {
            Ok(()) => rec.record(WRITE, start, end, size),
            Err(e) => rec.error(WRITE, end, &e, &path, None),
        }
    }

    /// Read the file (or region) that pattern `rw` reads once, whole, as fio's pre_read does:
    /// its pages are then cached before the measured reads. Worker 0 reads a shared file.
    async fn pre_read(&mut self, ctx: &JobContext<'_>, io: &IoJob, rw: Rw, rec: &mut Recorder<'_>) {
        if io.shared_file && self.id != 0 {
            return;
        }
        let owner = if rw.writes() { self.id } else { self.src };
        let path = io_file(ctx.job_index, io, owner);
        let mut buf = AlignedBuf::new(LAYOUT_CHUNK);
        let opts = FileOpts {
            direct: false,
            fsync: false,
        };
        let start = Instant::now();
        let result = self.client.read_file(&path, opts, &mut buf, None).await;
        let end = Instant::now();
        match result {
            Ok(read) => rec.record(READ, start, end, read.bytes),
            Err(e) => rec.error(READ, end, &e, &path, None),
        }
    }

    /// Open the file (or region) pattern `rw` works on, with `iodepth` in flight on `engine`,
    /// and fill its write buffers when writes come from the worker's random bytes.
    pub(super) async fn open_io(
        &mut self,
        ctx: &JobContext<'_>,
        io: &IoJob,
        rw: Rw,
        engine: IoEngine,
    ) -> OpenedIo<C::Block> {
        // Pure reads read `src`'s file or region: another rank's with --shuffle.
        let owner = if rw.writes() { self.id } else { self.src };
        let (path, region) = file_and_region(ctx, io, owner);
        let opts = BlockOpts {
            block_size: io.bs,
            queue_depth: io.iodepth,
            direct: io.direct,
            create: true,
            random: rw.random(),
            engine,
        };
        let mut file = self.client.open_block(&path, opts).await;
        if let Ok(f) = &mut file {
            if rw.writes() && self.content.is_none() {
                for slot in 0..f.depth() {
                    self.rng.fill_bytes(f.buffer(slot));
                }
            }
        }
        OpenedIo {
            path,
            region,
            key: file_key(ctx, io, owner),
            file,
        }
    }

    /// Run an io phase: `rw` with `iodepth` in flight over the file `open_io` opened, for the
    /// `stint`.
    /// One function on purpose (about 120 lines): the submit and the completion halves share
    /// the per-slot arrays and the in-flight count as locals of the hot loop.
    pub(super) async fn run_io(
        &mut self,
        ctx: &JobContext<'_>,
        io: &IoJob,
        rw: Rw,
        opened: OpenedIo<C::Block>,
        stint: Stint,
        rec: &mut Recorder<'_>,
    ) {
        let bs = io.bs as u64;
        let blocks = io.size / bs;
        let OpenedIo {
            path,
            region,
            key,
            file,
        } = opened;
        let mut file = match file {
            Ok(f) => f,
            Err(e) => return rec.error(0, Instant::now(), &e, &path, None),
        };
        rec.note_engine(file.engine());
        let depth = file.depth();
        let time_based = matches!(stint, Stint::Timed);
        let total = if time_based { u64::MAX } else { blocks };
        let mut order = BlockOrder::new(blocks, rw.random(), self.rng.next_u64());
        // A hot set instead of every block once per pass (fio drops its random map too).
        let picker = io
            .random_distribution
            .filter(|a| rw.random() && !a.is_random())
            .map(|a| Picker::new(a, blocks, self.rng.next_u64()));
        // A time-based read phase reads its blocks again once every block was read (the order
        // is a permutation): drop the cached pages at each such pass, as fio does when it loops,
        // or every pass after the first reads the client's memory. Each later pass is a re-read
        // of the file (see cache.rs); a failed drop ends the attempts.
        let rereads = time_based && !rw.writes() && ctx.page_cache && !io.direct && blocks > 0;
        let mut evict_each_pass = rereads && ctx.config.invalidate;
        // Blocks left in this pass: a countdown, not a division per block.
        let mut pass_left = blocks;
        let mut free: Vec<usize> = (0..depth).rev().collect();
        let mut slot_start = vec![Instant::now(); depth];
        let mut slot_intended = slot_start.clone();
        let mut slot_offset = vec![0u64; depth];
        let mut slot_op = vec![BlockOp::Read; depth];
        let (mut issued, mut inflight) = (0u64, 0usize);
        let ctl = rec.ctl();
        let mut now = Instant::now();
        let mut stopping = false;
        loop {
            while inflight < depth && issued < total && !stopping {
                // Before the first block of every pass after the first, whose clock starts after
                // the drop (at depth 1 the previous pass's last block is in by then).
                if pass_left == 0 {
                    pass_left = blocks;
                    if rereads {
                        // Read-only: nothing to write back.
                        let r = drop_again(&mut self.client, &path, evict_each_pass, false).await;
                        evict_each_pass &= !matches!(r, Reread::Failed(..));
                        rec.note_reread(r);
                        now = Instant::now();
                    }
                }
                // Paced phases run at queue depth 1 (validation sees to it): each block waits
                // for its intended start. Closed loops reuse the completion time as the start.
                let intended = if self.pacer.is_some() {
                    let Some((at, start)) = self.begin(ctl).await else {
                        stopping = true;
                        break;
                    };
                    now = start;
                    at
                } else if ctl.should_stop(now) {
                    // `now` may be later than the last completion (recording took long and the
                    // clock was read again): the phase lasted until this decision.
                    rec.busy_until(now);
                    stopping = true;
                    break;
                } else {
                    now
                };
                let slot = free.pop().expect("a free slot when fewer than depth are in flight");
                let block = match &picker {
                    Some(p) => p.pick(&mut self.rng),
                    None => order.next(),
                };
                let offset = region + block * bs;
                let op = match rw {
                    Rw::Read | Rw::Randread => BlockOp::Read,
                    Rw::Write | Rw::Randwrite => BlockOp::Write,
                    Rw::Readwrite | Rw::Randrw => {
                        if self.rng.gen_range(0..100) < io.rwmixread {
                            BlockOp::Read
                        } else {
                            BlockOp::Write
                        }
                    }
                };
                if op == BlockOp::Write {
                    if let Some(c) = &self.content {
                        c.fill(key, offset, file.buffer(slot));
                    }
                }
                if let Err(e) = file.submit(slot, op, offset, io.bs) {
                    free.push(slot);
                    rec.error(class(op), now, &e, &path, Some(offset));
                    stopping = true;
                    break;
                }
                slot_start[slot] = now;
                slot_intended[slot] = intended;
                slot_offset[slot] = offset;
                slot_op[slot] = op;
                inflight += 1;
                issued += 1;
                pass_left -= 1;
            }
            if inflight == 0 {
                break;
            }
            self.completions.clear();
            if let Err(e) = file.complete(1, &mut self.completions).await {
                rec.error(0, Instant::now(), &e, &path, None);
                break;
            }
            now = Instant::now();
            for c in self.completions.drain(..) {
                inflight -= 1;
                free.push(c.slot);
                let (op, offset) = (slot_op[c.slot], slot_offset[c.slot]);
                match c.result {
                    Ok(n) if n == io.bs => {
                        if op == BlockOp::Read {
                            if let Some(p) = &self.pattern {
                                if let Err(m) = p.check(key, offset, &file.buffer(c.slot)[..n]) {
                                    let e = OpError::new(
                                        "verify",
                                        format!("wrong data at offset {}: found {}", m.offset, m.found),
                                    );
                                    rec.error(READ, now, &e, &path, Some(m.offset));
                                    continue;
                                }
                                rec.add_verified(n as u64);
                            }
                        }
                        rec.record_op(class(op), slot_intended[c.slot], slot_start[c.slot], now, n as u64);
                    }
                    Ok(n) => {
                        let e = OpError::new("short_io", format!("moved {n} of {} bytes", io.bs));
                        rec.error(class(op), now, &e, &path, Some(offset));
                    }
                    Err(e) => rec.error(class(op), now, &e, &path, Some(offset)),
                }
            }
            // The next block starts at this completion time unless recording took long.
            if rec.took_long() {
                now = Instant::now();
            }
        }
        if io.fsync && rw.writes() {
            if let Err(e) = file.sync().await {
                rec.error(WRITE, Instant::now(), &e, &path, None);
            }
        }
    }
}

fn class(op: BlockOp) -> usize {
    match op {
        BlockOp::Read => READ,
        BlockOp::Write => WRITE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_order_is_a_permutation() {
        for blocks in [1u64, 2, 7, 64, 1000] {
            let mut o = BlockOrder::new(blocks, true, 0xdead_beef);
            let mut seen: Vec<u64> = (0..blocks).map(|_| o.next()).collect();
            seen.sort();
            assert_eq!(seen, (0..blocks).collect::<Vec<_>>(), "blocks = {blocks}");
        }
    }

    #[test]
    fn sequential_order_wraps() {
        let mut o = BlockOrder::new(3, false, 1);
        let got: Vec<u64> = (0..7).map(|_| o.next()).collect();
        assert_eq!(got, vec![0, 1, 2, 0, 1, 2, 0]);
    }
}
