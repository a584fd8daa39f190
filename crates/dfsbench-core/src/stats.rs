//! Per-worker measurement and its exact merge.
//!
//! A worker records each operation into its counters and into the exact HDR histograms that
//! the workers of its thread share (per gateway and class: their memory does not grow with the
//! workers), with no locks and no allocation, and publishes running totals through
//! single-writer atomics that the sampler reads for the per-second series and the progress
//! line.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::Duration;

use dfsbench_backends::clock::Instant;
use dfsbench_backends::{IoEngine, OpError};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::faults::stalls::GapLog;
use dfsbench_result::histogram::{new_growing_histogram, new_histogram, record_latency};
use dfsbench_result::{ErrorSample, Errors, Series, MAX_ERROR_SAMPLES};

/// Running totals of one worker, written by it and read by the sampler (and, when the worker's
/// thread is stuck in the storage at the end of a phase, by the runner instead of its result).
#[derive(Default)]
#[repr(align(128))]
pub struct Live {
    pub ops: AtomicU64,
    pub bytes: AtomicU64,
    pub errors: AtomicU64,
    /// Measured (after ramp-up) operations and bytes of each of the phase's first classes whose
    /// latencies are in the process's histograms (updated with each batch of them).
    pub classes: [(AtomicU64, AtomicU64); LIVE_CLASSES],
}

/// Classes whose measured counts [`Live`] keeps: every workload's (mix has the most, 5).
pub const LIVE_CLASSES: usize = 6;

impl Live {
    /// Zero every count before a phase starts.
    pub fn reset(&self) {
        for a in [&self.ops, &self.bytes, &self.errors]
            .into_iter()
            .chain(self.classes.iter().flat_map(|(o, b)| [o, b]))
        {
            a.store(0, Relaxed);
        }
    }
}

/// Width of the per-interval series of a phase.
pub const SERIES_INTERVAL: Duration = Duration::from_secs(1);
/// Width of the finer series of runs with faults.
pub const FINE_SERIES_INTERVAL: Duration = Duration::from_millis(100);
/// Intervals reserved up front per worker; a longer phase grows its series once an interval.
const SERIES_RESERVE: usize = 3600;
/// Intervals a worker thread's series holds at most: past that its intervals widen (see
/// [`widening`]), so a run of any length keeps a bounded series. 4.5 h at 1 s, 27 min at
/// 100 ms before the first widening; 400 KB per thread.
pub const MAX_INTERVALS: usize = 16_384;

/// How many intervals of `width` the next wider interval holds: 100 ms intervals widen to
/// whole seconds (the 1 s series is still made from them), wider ones double.
fn widening(width: Duration) -> usize {
    if width < SERIES_INTERVAL {
        (SERIES_INTERVAL.as_nanos() / width.as_nanos().max(1)) as usize
    } else {
        2
    }
}

/// Operations, bytes and errors of one worker per interval of a phase, counted in the interval
/// of each operation's own completion time: exact however late anything else runs, so the sum
/// of the series is the phase's total. (A sampler reading running totals puts several seconds
/// into one bucket when it wakes late on a loaded machine.)
pub struct Buckets {
    start: Instant,
    width: Duration,
    /// The interval the last operation fell in, and its bounds: the common case costs two
    /// comparisons, no division.
    current: usize,
    current_from: Instant,
    current_to: Instant,
    ops: Vec<u64>,
    bytes: Vec<u64>,
    errors: Vec<u64>,
    /// Errors per interval by kind, when asked for (the 100 ms series of runs with faults).
    errors_by_kind: Option<BTreeMap<&'static str, Vec<u64>>>,
}

impl Buckets {
    /// Intervals of `width` from `start`; `expected` is the phase's planned length, if known.
    pub fn new(start: Instant, width: Duration, expected: Option<Duration>) -> Self {
        let reserve = expected.map_or(1, |d| {
            ((d.as_nanos() / width.as_nanos().max(1)) as usize + 2).min(SERIES_RESERVE)
        });
        let mut b = Buckets {
            start,
            width,
            current: 0,
            current_from: start,
            current_to: start + width,
            ops: Vec::with_capacity(reserve),
            bytes: Vec::with_capacity(reserve),
            errors: Vec::with_capacity(reserve),
            errors_by_kind: None,
        };
        b.grow_to(0);
        b
    }

    /// Also count errors by kind.
    pub fn by_kind(mut self) -> Self {
        self.errors_by_kind = Some(BTreeMap::new());
        self
    }

    fn grow_to(&mut self, index: usize) {
        if self.ops.len() <= index {
            self.ops.resize(index + 1, 0);
            self.bytes.resize(index + 1, 0);
            self.errors.resize(index + 1, 0);
        }
    }

    /// The interval `at` falls in (the first for anything before the start).
    #[inline]
    fn slot(&mut self, at: Instant) -> usize {
        if at >= self.current_from && at < self.current_to {
            return self.current;
        }
        let since = at.saturating_duration_since(self.start).as_nanos();
        let mut index = (since / self.width.as_nanos().max(1)) as usize;
        while index >= MAX_INTERVALS {
            self.widen();
            index = (since / self.width.as_nanos().max(1)) as usize;
        }
        let width = self.width.as_nanos().max(1);
        self.grow_to(index);
        self.current = index;
        self.current_from = self.start + Duration::from_nanos((index as u128 * width) as u64);
        self.current_to = self.current_from + self.width;
        index
    }

    /// Count an operation that completed at `at`.
    #[inline]
    pub fn add(&mut self, at: Instant, bytes: u64) {
        let i = self.slot(at);
        self.ops[i] += 1;
        self.bytes[i] += bytes;
    }

    /// Count an error of `kind` at `at`.
    pub fn add_error(&mut self, at: Instant, kind: &'static str) {
        let i = self.slot(at);
        self.errors[i] += 1;
        if let Some(by_kind) = &mut self.errors_by_kind {
            let v = by_kind.entry(kind).or_default();
            if v.len() <= i {
                v.resize(i + 1, 0);
            }
            v[i] += 1;
        }
    }

    /// Make every interval [`widening`] times wider, summing the counts they take in.
    fn widen(&mut self) {
        let factor = widening(self.width);
        for v in [&mut self.ops, &mut self.bytes, &mut self.errors]
            .into_iter()
            .chain(self.errors_by_kind.iter_mut().flat_map(|m| m.values_mut()))
        {
            *v = sum_chunks(v, factor);
        }
        self.width *= factor as u32;
        // The next count finds its interval anew.
        self.current_to = self.current_from;
    }

    /// The width of this series' intervals: its first, or wider after a long phase.
    pub fn width(&self) -> Duration {
        self.width
    }

    /// Add these counts into `series`, interval by interval; `series` has intervals of this
    /// width or a wider one of the same sequence (another thread's series widened sooner).
    pub fn add_into(&self, series: &mut Series) {
        let factor = (series.interval_s / self.width.as_secs_f64()).round().max(1.0) as usize;
        let add = |into: &mut Vec<u64>, v: &[u64]| add_vec(into, &sum_chunks(v, factor));
        add(&mut series.ops, &self.ops);
        add(&mut series.bytes, &self.bytes);
        add(&mut series.errors, &self.errors);
        for (kind, v) in self.errors_by_kind.iter().flatten() {
            add(series.errors_by_kind.entry(kind.to_string()).or_default(), v);
        }
    }
}

/// Sums of every `factor` consecutive counts.
fn sum_chunks(v: &[u64], factor: usize) -> Vec<u64> {
    v.chunks(factor.max(1)).map(|c| c.iter().sum()).collect()
}

/// `series` with `factor` times wider intervals, errors by kind included.
pub fn widen_series(series: &Series, factor: usize) -> Series {
    Series {
        interval_s: series.interval_s * factor as f64,
        ops: sum_chunks(&series.ops, factor),
        bytes: sum_chunks(&series.bytes, factor),
        errors: sum_chunks(&series.errors, factor),
        errors_by_kind: series
            .errors_by_kind
            .iter()
            .map(|(k, v)| (k.clone(), sum_chunks(v, factor)))
            .collect(),
    }
}

/// A series of `factor` times wider intervals without errors by kind (the 1 s series from the
/// 100 ms one).
pub fn coarsen(fine: &Series, factor: usize) -> Series {
    Series {
        errors_by_kind: Default::default(),
        ..widen_series(fine, factor)
    }
}

/// `into[i] += from[i]`, growing `into` as needed.
pub fn add_vec(into: &mut Vec<u64>, from: &[u64]) {
    if into.len() < from.len() {
        into.resize(from.len(), 0);
    }
    for (a, b) in into.iter_mut().zip(from) {
        *a += b;
    }
}

/// What every worker of a phase shares: stop conditions and the stonewall mark.
pub struct PhaseControl {
    pub start: Instant,
    pub deadline: Option<Instant>,
    pub ramp_end: Option<Instant>,
    interrupt: &'static AtomicBool,
    aborted: AtomicBool,
    errors: AtomicU64,
    max_errors: u64,
    first_done: AtomicBool,
    first_done_at: Mutex<Option<Instant>>,
    /// Set when throughput became steady (until_stable).
    steady: AtomicBool,
    /// Set when another thread of the run failed: the phase ends at once.
    halted: AtomicBool,
    /// Keep the 100 ms series with errors by kind (runs with faults).
    pub fine_series: bool,
    /// Log each worker's gaps between completions (closed-loop measured phases).
    pub log_gaps: bool,
}

impl PhaseControl {
    pub fn new(
        start: Instant,
        duration: Option<Duration>,
        ramp: Duration,
        max_errors: u64,
        interrupt: &'static AtomicBool,
    ) -> Self {
        let ramp_end = (!ramp.is_zero()).then(|| start + ramp);
        PhaseControl {
            start,
            deadline: duration.map(|d| start + ramp + d),
            ramp_end,
            interrupt,
            aborted: AtomicBool::new(false),
            errors: AtomicU64::new(0),
            max_errors,
            first_done: AtomicBool::new(false),
            first_done_at: Mutex::new(None),
            steady: AtomicBool::new(false),
            halted: AtomicBool::new(false),
            fine_series: false,
            log_gaps: false,
        }
    }

    /// True once the phase must end: its time is up, the user interrupted, or too many errors.
    #[inline]
    pub fn should_stop(&self, now: Instant) -> bool {
        self.deadline.is_some_and(|d| now >= d)
            || self.interrupt.load(Relaxed)
            || self.aborted.load(Relaxed)
            || self.steady.load(Relaxed)
            || self.halted.load(Relaxed)
    }

    /// The control of a worker's private run from now until `end` (a trial of the io engine
    /// probe): it ends at its own deadline or with the phase's interrupt; nobody else sees it.
    pub fn private(&self, end: Instant) -> PhaseControl {
        let start = Instant::now();
        let length = end.saturating_duration_since(start);
        PhaseControl::new(start, Some(length), Duration::ZERO, u64::MAX, self.interrupt)
    }

    /// End the phase: a thread of the run panicked.
    pub fn halt(&self) {
        self.halted.store(true, Relaxed);
    }

    /// End the phase: its throughput is steady.
    pub fn stop_steady(&self) {
        self.steady.store(true, Relaxed);
    }

    pub fn interrupted(&self) -> bool {
        self.interrupt.load(Relaxed)
    }

    pub fn aborted(&self) -> bool {
        self.aborted.load(Relaxed)
    }

    fn count_error(&self) {
        let n = self.errors.fetch_add(1, Relaxed) + 1;
        if self.max_errors > 0 && n >= self.max_errors {
            self.aborted.store(true, Relaxed);
        }
    }

    /// Set the stonewall at `at`: a worker of this process finished, or another rank said
    /// one of its workers did. The earliest mark wins.
    pub fn mark_done(&self, at: Instant) {
        self.first_done.store(true, Relaxed);
        let mut first = self.first_done_at.lock().expect("stonewall lock");
        *first = Some(first.map_or(at, |t| t.min(at)));
    }

    pub fn first_done_at(&self) -> Option<Instant> {
        *self.first_done_at.lock().expect("stonewall lock")
    }
}

/// Measurements of one kind of operation by one worker.
pub struct ClassStats {
    pub ops: u64,
    pub bytes: u64,
}

/// The exact latency histograms of one process's workers in one phase: per gateway of the
/// target (worker `w` talks to gateway `w mod n`) and class of operation, the time to first
/// byte and the service time. One set for every worker of the process keeps memory flat in
/// the workers whatever carries them: a histogram per worker held 127 of 145 MiB at 256 S3
/// workers, and one per thread 80 of 97 MiB at 256 file:// workers (a blocking backend runs a
/// thread per worker). Workers add their latencies in batches ([`Recorder`]), so the lock is
/// taken once per [`BATCH`] operations, after they were timed.
#[derive(Default)]
pub struct Latencies {
    /// `[gateway][class]`, growing histograms (see [`new_growing_histogram`]).
    pub classes: Vec<Vec<Histogram<u64>>>,
    pub ttfb: Option<Histogram<u64>>,
    pub service: Option<Histogram<u64>>,
}

impl Latencies {
    pub fn new(endpoints: usize, classes: usize) -> Self {
        Latencies {
            classes: (0..endpoints.max(1))
                .map(|_| (0..classes).map(|_| new_growing_histogram()).collect())
                .collect(),
            ttfb: None,
            service: None,
        }
    }

    /// Add a batch of one worker's latencies; `endpoint` is its row of `classes`.
    fn add(&mut self, endpoint: usize, batch: &[(Slot, u64)]) {
        for &(slot, ns) in batch {
            let hist = match slot {
                Slot::Class(c) => &mut self.classes[endpoint][c],
                Slot::Ttfb => self.ttfb.get_or_insert_with(new_growing_histogram),
                Slot::Service => self.service.get_or_insert_with(new_growing_histogram),
            };
            record_latency(hist, ns);
        }
    }
}

/// Latencies a worker holds before adding them to its process's [`Latencies`].
pub const BATCH: usize = 128;

/// Which histogram of [`Latencies`] a held latency goes to.
#[derive(Clone, Copy)]
enum Slot {
    Class(usize),
    Ttfb,
    Service,
}

/// One worker's own latency over its phase, for its line in the workers table.
#[derive(Clone, Copy, Default)]
pub struct WorkerLatency {
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub max_ns: u64,
}

impl WorkerLatency {
    fn of(hist: &Histogram<u64>) -> Self {
        if hist.is_empty() {
            return WorkerLatency::default();
        }
        WorkerLatency {
            p50_ns: hist.value_at_quantile(0.5),
            p99_ns: hist.value_at_quantile(0.99),
            max_ns: hist.max(),
        }
    }
}

/// A worker's own histogram: two significant digits (1%, about 1 KiB per doubling of latency),
/// enough for a line of the workers table.
fn worker_histogram() -> Histogram<u64> {
    let mut hist = Histogram::new_with_bounds(1, 2, 2).expect("valid histogram bounds");
    hist.auto(true);
    hist
}

/// What was done before one read of a file: nothing (its first read in the phase, or a
/// backend without a page cache), or, for a file the worker already read or wrote in the
/// phase, its cached pages dropped again, kept (`--invalidate 0`), or a failed drop; with the
/// time the drop took.
#[derive(Debug, PartialEq)]
pub enum Reread {
    First,
    Dropped(Duration),
    Kept,
    Failed(Duration, String),
}

/// Reads of files already read or written in the phase, of a worker, a process or a phase.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Rereads {
    pub reads: u64,
    /// Of them, those whose file was dropped again first.
    pub dropped: u64,
    /// Seconds the drops took, summed over workers.
    pub seconds: f64,
    /// The first failed drop.
    pub failure: Option<String>,
}

impl Rereads {
    fn note(&mut self, r: Reread) {
        match r {
            Reread::First => return,
            Reread::Dropped(took) => {
                self.dropped += 1;
                self.seconds += took.as_secs_f64();
            }
            Reread::Kept => {}
            Reread::Failed(took, m) => {
                self.seconds += took.as_secs_f64();
                self.failure.get_or_insert(m);
            }
        }
        self.reads += 1;
    }

    /// The sum of `parts`, with the first failure among them.
    pub fn sum<'a>(parts: impl IntoIterator<Item = &'a Rereads>) -> Rereads {
        parts.into_iter().fold(Rereads::default(), |mut all, p| {
            all.reads += p.reads;
            all.dropped += p.dropped;
            all.seconds += p.seconds;
            all.failure = all.failure.or_else(|| p.failure.clone());
            all
        })
    }
}

/// Everything a worker measured in one phase.
pub struct WorkerPhase {
    pub worker: usize,
    pub classes: Vec<ClassStats>,
    pub errors: Errors,
    pub items: u64,
    /// Start of the first measured successful operation.
    pub first_start: Option<Instant>,
    /// End of the last operation, successful or not.
    pub last_end: Option<Instant>,
    pub stonewall_ops: u64,
    pub stonewall_bytes: u64,
    pub verified_bytes: u64,
    pub mismatches: u64,
    /// Latency of this worker's successful operations, to 2 significant digits (the exact
    /// ones are its process's [`Latencies`]).
    pub latency: WorkerLatency,
    /// Requests retried after a temporary failure (with --retries).
    pub retries: u64,
    pub rereads: Rereads,
    /// The I/O engine that ran, for io phases (`auto` resolves to one).
    pub engine: Option<IoEngine>,
    /// Blocks per second of each engine `auto` probed before this phase's pattern.
    pub probe: Vec<(IoEngine, f64)>,
    /// Files the worker has after the phase, per file set (what another rank's shuffled
    /// reads of them may read).
    pub existing: Vec<u64>,
    /// The worker whose data this one read, when not its own (`--shuffle`).
    pub read_from: Option<usize>,
    /// Gaps between successful completions (`log_gaps`).
    pub gaps: Option<GapLog>,
}

impl WorkerPhase {
    fn empty(worker: usize, classes: usize, log_gaps: bool) -> Self {
        WorkerPhase {
            worker,
            classes: (0..classes).map(|_| ClassStats { ops: 0, bytes: 0 }).collect(),
            errors: Errors::default(),
            items: 0,
            first_start: None,
            last_end: None,
            stonewall_ops: 0,
            stonewall_bytes: 0,
            verified_bytes: 0,
            mismatches: 0,
            latency: WorkerLatency::default(),
            retries: 0,
            rereads: Rereads::default(),
            engine: None,
            probe: Vec::new(),
            existing: Vec::new(),
            read_from: None,
            gaps: log_gaps.then(GapLog::default),
        }
    }

    /// What is known of a worker whose thread is still inside an operation at `at`, well past
    /// the phase's end: the operations whose latencies it handed to the process's histograms
    /// (`live`), and the operation it waits for as a timeout. Its last operations (less than a
    /// batch), its series, its own latency and the kinds of its earlier errors are lost with
    /// the thread.
    pub fn stuck(worker: usize, classes: &[&str], live: &Live, ctl: &PhaseControl, at: Instant) -> Self {
        let end = ctl.deadline.unwrap_or(ctl.start);
        let waited_s = at.saturating_duration_since(end).as_secs_f64();
        let mut out = WorkerPhase::empty(worker, classes.len(), false);
        for (c, (ops, bytes)) in out.classes.iter_mut().zip(&live.classes) {
            (c.ops, c.bytes) = (ops.load(Relaxed), bytes.load(Relaxed));
        }
        out.stonewall_ops = out.classes.iter().map(|c| c.ops).sum();
        out.stonewall_bytes = out.classes.iter().map(|c| c.bytes).sum();
        out.last_end = Some(at);
        let earlier = live.errors.load(Relaxed);
        let e = &mut out.errors;
        e.total = earlier + 1;
        if earlier > 0 {
            e.by_kind.insert("unrecorded".into(), earlier);
        }
        e.by_kind.insert("timeout".into(), 1);
        e.samples.push(ErrorSample {
            time_s: at.saturating_duration_since(ctl.start).as_secs_f64(),
            worker,
            op: classes.join("/"),
            kind: "timeout".into(),
            path: String::new(),
            offset: None,
            message: format!(
                "still inside the storage {waited_s:.1} s after the phase's end: the thread is stuck in a system call (a stopped or hung server)"
            ),
        });
        out
    }
}

/// The series of completions and errors a worker thread counts in a phase, by interval, ramp-up
/// included: 1 s, or 100 ms with `fine_series`.
pub fn series_of(ctl: &PhaseControl) -> Buckets {
    let expected = ctl.deadline.map(|d| d.saturating_duration_since(ctl.start));
    if ctl.fine_series {
        Buckets::new(ctl.start, FINE_SERIES_INTERVAL, expected).by_kind()
    } else {
        Buckets::new(ctl.start, SERIES_INTERVAL, expected)
    }
}

/// The recording side of a worker in one phase.
pub struct Recorder<'a> {
    ctl: &'a PhaseControl,
    live: &'a Live,
    class_names: &'static [&'static str],
    /// The series of the thread that carries this worker (see [`series_of`]).
    series: &'a RefCell<Buckets>,
    latencies: &'a Mutex<Latencies>,
    /// Latencies not yet added to `latencies`.
    held: Vec<(Slot, u64)>,
    /// This worker's row of `latencies.classes`.
    endpoint: usize,
    /// This worker's own histogram, to 2 significant digits.
    own: Histogram<u64>,
    /// Whether service times are kept apart (the phase runs at a rate).
    service: bool,
    out: WorkerPhase,
    ops: u64,
    bytes: u64,
    live_ops: u64,
    live_bytes: u64,
    stonewalled: bool,
    /// Whether recording did more than count since [`Recorder::took_long`] last asked.
    long: bool,
}

impl<'a> Recorder<'a> {
    /// `live` must read zero: the runner resets it before the phase starts. `latencies` has a
    /// row per gateway and a histogram per class; `series` is the carrying thread's.
    pub fn new(
        worker: usize,
        classes: &'static [&'static str],
        ctl: &'a PhaseControl,
        live: &'a Live,
        series: &'a RefCell<Buckets>,
        latencies: &'a Mutex<Latencies>,
    ) -> Self {
        let endpoint = worker % latencies.lock().expect("lock").classes.len();
        Recorder {
            ctl,
            live,
            class_names: classes,
            series,
            latencies,
            held: Vec::with_capacity(BATCH),
            endpoint,
            own: worker_histogram(),
            service: false,
            out: WorkerPhase::empty(worker, classes.len(), ctl.log_gaps),
            ops: 0,
            bytes: 0,
            live_ops: 0,
            live_bytes: 0,
            stonewalled: false,
            long: false,
        }
    }

    pub fn ctl(&self) -> &'a PhaseControl {
        self.ctl
    }

    /// Record a successful operation of class `class` that ran from `start` to `end`.
    #[inline]
    pub fn record(&mut self, class: usize, start: Instant, end: Instant, bytes: u64) {
        self.live_ops += 1;
        self.live_bytes += bytes;
        self.live.ops.store(self.live_ops, Relaxed);
        self.live.bytes.store(self.live_bytes, Relaxed);
        self.series.borrow_mut().add(end, bytes);
        if let Some(g) = &mut self.out.gaps {
            g.complete(end.saturating_duration_since(self.ctl.start).as_nanos() as u64);
        }
        if self.ctl.ramp_end.is_some_and(|r| start < r) {
            return;
        }
        // Once a worker has finished, what this one does no longer counts for the stonewall.
        if !self.stonewalled && self.ctl.first_done.load(Relaxed) {
            self.snapshot_stonewall();
        }
        // Counted before the latency is held: a full batch publishes the counts with it.
        let c = &mut self.out.classes[class];
        c.ops += 1;
        c.bytes += bytes;
        let ns = end.saturating_duration_since(start).as_nanos() as u64;
        self.hold(Slot::Class(class), ns);
        // A histogram grows (allocates and copies) for a latency beyond its bound.
        self.long |= ns > self.own.high();
        record_latency(&mut self.own, ns);
        self.ops += 1;
        self.bytes += bytes;
        if self.out.first_start.is_none() {
            self.out.first_start = Some(start);
        }
        self.out.last_end = Some(end);
    }

    /// Keep service times apart from response times: the phase runs at a rate.
    pub fn measure_service(&mut self) {
        self.service = true;
    }

    /// Record an operation meant to start at `intended` that started at `start`: its latency
    /// is the response time from `intended`, and with a rate its service time is kept too.
    #[inline]
    pub fn record_op(&mut self, class: usize, intended: Instant, start: Instant, end: Instant, bytes: u64) {
        self.record(class, intended, end, bytes);
        if self.service && self.ctl.ramp_end.is_none_or(|r| intended >= r) {
            self.hold(Slot::Service, end.saturating_duration_since(start).as_nanos() as u64);
        }
    }

    /// Keep a latency for the process's histograms; add the batch once it is full.
    #[inline]
    fn hold(&mut self, slot: Slot, ns: u64) {
        self.held.push((slot, ns));
        if self.held.len() >= BATCH {
            self.add_held();
        }
    }

    fn add_held(&mut self) {
        if !self.held.is_empty() {
            self.latencies.lock().expect("lock").add(self.endpoint, &self.held);
            self.held.clear();
            self.long = true;
            // What the process's histograms hold of this worker, should its thread hang.
            for (c, (ops, bytes)) in self.out.classes.iter().zip(&self.live.classes) {
                ops.store(c.ops, Relaxed);
                bytes.store(c.bytes, Relaxed);
            }
        }
    }

    /// Whether recording did more than count since the last call: added a batch of latencies
    /// under the process's lock (once per [`BATCH`]) or grew a histogram. A loop that starts
    /// its next operation at the last completion time (one clock read per operation) reads
    /// the clock again after such work, which would otherwise be timed as part of the next
    /// operation: once every 128 operations is the p99.2, right in the tail.
    #[inline]
    pub fn took_long(&mut self) -> bool {
        std::mem::take(&mut self.long)
    }

    /// Note what a successful whole-file read tells besides its latency: when its first byte
    /// came, and the bytes the verify pattern checked (all of them, when verifying).
    pub fn note_read(&mut self, start: Instant, bytes: u64, first_byte: Option<Instant>, verified: bool) {
        if let Some(t) = first_byte {
            self.record_ttfb(start, t);
        }
        if verified {
            self.add_verified(bytes);
        }
    }

    /// Record when the first byte of a read arrived.
    pub fn record_ttfb(&mut self, start: Instant, first_byte: Instant) {
        if self.ctl.ramp_end.is_some_and(|r| start < r) {
            return;
        }
        self.hold(
            Slot::Ttfb,
            first_byte.saturating_duration_since(start).as_nanos() as u64,
        );
    }

    /// Note the I/O engine the worker's file runs on.
    pub fn note_engine(&mut self, engine: IoEngine) {
        self.out.engine = Some(engine);
    }

    /// Note what the io engine probe measured, blocks per second by engine.
    pub fn note_probe(&mut self, figures: &[(IoEngine, f64)]) {
        self.out.probe = figures.to_vec();
    }

    /// Work that is not recorded as operations (the engine probe's trials) went on until
    /// `end`: the phase lasts until then too.
    pub fn busy_until(&mut self, end: Instant) {
        self.out.last_end = Some(self.out.last_end.map_or(end, |e| e.max(end)));
    }

    /// Count requests the backend retried.
    #[inline]
    pub fn add_retries(&mut self, n: u64) {
        self.out.retries += n;
    }

    /// Count what was done before a read of a file (see [`Reread`]).
    pub fn note_reread(&mut self, r: Reread) {
        self.out.rereads.note(r);
    }

    /// Count directory entries seen by a list operation.
    pub fn add_items(&mut self, n: u64) {
        self.out.items += n;
    }

    /// Count verified bytes.
    pub fn add_verified(&mut self, n: u64) {
        self.out.verified_bytes += n;
    }

    fn snapshot_stonewall(&mut self) {
        self.stonewalled = true;
        self.out.stonewall_ops = self.ops;
        self.out.stonewall_bytes = self.bytes;
    }

    /// Record a failed operation. Errors are counted by kind, never hidden, and do not enter
    /// the latency histogram of successful operations.
    pub fn error(&mut self, class: usize, at: Instant, err: &OpError, path: &str, offset: Option<u64>) {
        // Failed operations took time too: the phase lasts until the last one ended.
        self.out.last_end = Some(self.out.last_end.map_or(at, |e| e.max(at)));
        if err.kind == "verify" {
            self.out.mismatches += 1;
        }
        let e = &mut self.out.errors;
        e.total += 1;
        *e.by_kind.entry(err.kind.to_string()).or_insert(0) += 1;
        if e.samples.len() < MAX_ERROR_SAMPLES {
            e.samples.push(ErrorSample {
                time_s: at.saturating_duration_since(self.ctl.start).as_secs_f64(),
                worker: self.out.worker,
                op: self.class_names[class].to_string(),
                kind: err.kind.to_string(),
                path: path.to_string(),
                offset,
                message: err.message.clone(),
            });
        }
        self.live.errors.store(e.total, Relaxed);
        self.series.borrow_mut().add_error(at, err.kind);
        self.ctl.count_error();
    }

    /// End of this worker's phase: mark the stonewall if it is the first to finish.
    pub fn finish(mut self) -> WorkerPhase {
        let end = self.out.last_end.unwrap_or_else(Instant::now);
        self.ctl.mark_done(end);
        if !self.stonewalled {
            self.snapshot_stonewall();
        }
        self.add_held();
        self.out.latency = WorkerLatency::of(&self.own);
        self.out
    }
}

/// Share of operations at which latencies "cluster at 40 ms" (see [`delayed_ack_signature`]).
const DELAYED_ACK_SHARE: f64 = 0.2;

/// Whether a phase's latencies cluster at 40 ms, the delayed-ACK timeout of Linux: a small
/// request or response written in two pieces by a sender that runs Nagle's algorithm waits
/// for the receiver's delayed ACK (Ceph RGW's frontend without `tcp_nodelay=1` does this to
/// every small GET). dfsbench's own connections set TCP_NODELAY, so the cause is on the
/// other side. Returns a reason for the phase's marks, or None.
pub fn delayed_ack_signature(hist: &Histogram<u64>) -> Option<String> {
    const MS: u64 = 1_000_000;
    let total = hist.len();
    if total < 10 {
        return None;
    }
    let near_40ms = hist.count_between(36 * MS, 48 * MS);
    let share = near_40ms as f64 / total as f64;
    (share >= DELAYED_ACK_SHARE).then(|| {
        format!(
            "latencies cluster at 40 ms ({:.0}% of operations): Nagle's algorithm meeting delayed ACKs; \
             dfsbench sets TCP_NODELAY, so check the server (Ceph RGW: tcp_nodelay=1 in rgw frontends)",
            share * 100.0
        )
    })
}

/// Merge error logs, keeping samples in time order up to the cap.
pub fn merge_errors(into: &mut Errors, from: Errors) {
    into.total += from.total;
    for (k, v) in from.by_kind {
        *into.by_kind.entry(k).or_insert(0) += v;
    }
    into.samples.extend(from.samples);
    into.samples.sort_by(|a, b| a.time_s.total_cmp(&b.time_s));
    into.samples.truncate(MAX_ERROR_SAMPLES);
}

/// Counts by error kind for a quick summary line, most common first.
pub fn top_error(errors: &Errors) -> Option<(&str, u64, &str)> {
    let (kind, n) = errors.by_kind.iter().max_by_key(|(_, n)| **n)?;
    let message = errors
        .samples
        .iter()
        .find(|s| &s.kind == kind)
        .map_or("", |s| s.message.as_str());
    Some((kind.as_str(), *n, message))
}

/// Merge histograms exactly (never averaging percentiles).
pub fn merge_histograms<'h>(hists: impl IntoIterator<Item = &'h Histogram<u64>>) -> Histogram<u64> {
    let mut total = new_histogram();
    for h in hists {
        // Every histogram is new_histogram()'s, a thread's growing one capped at the same
        // hour, or one peer_histogram decoded from another rank, which refuses other bounds:
        // adding cannot fail.
        total.add(h).expect("histograms share bounds");
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use dfsbench_result::histogram::{deserialize, serialize};

    static NO: AtomicBool = AtomicBool::new(false);

    #[test]
    fn histograms_round_trip_and_merge_exactly() {
        let mut a = new_histogram();
        let mut b = new_histogram();
        for v in 1..=1000u64 {
            a.record(v * 1000).unwrap();
            b.record(v * 3000).unwrap();
        }
        let m = merge_histograms([&a, &b]);
        assert_eq!(m.len(), 2000);
        let back = deserialize(&serialize(&m)).unwrap();
        assert_eq!(back, m);
        assert_eq!(back.value_at_quantile(0.5), m.value_at_quantile(0.5));
    }

    #[test]
    fn recorder_counts_and_stonewalls() {
        let start = Instant::now();
        let ctl = PhaseControl::new(start, None, Duration::ZERO, 2, &NO);
        let live = Live::default();
        let (series, lat) = (RefCell::new(series_of(&ctl)), Mutex::new(Latencies::new(1, 1)));
        let mut r = Recorder::new(0, &["write"], &ctl, &live, &series, &lat);
        r.record(0, start, start + Duration::from_micros(5), 4096);
        r.record(0, start, start + Duration::from_micros(7), 4096);
        assert_eq!(live.ops.load(Relaxed), 2);
        let e = OpError::new("ENOSPC", "disk full");
        r.error(0, start, &e, "f1", Some(0));
        assert!(!ctl.should_stop(Instant::now()));
        r.error(0, start, &e, "f2", None);
        assert!(ctl.should_stop(Instant::now()), "max_errors reached");
        let w = r.finish();
        assert_eq!((w.classes[0].ops, w.classes[0].bytes), (2, 8192));
        assert_eq!((w.stonewall_ops, w.stonewall_bytes), (2, 8192));
        assert_eq!(w.errors.total, 2);
        assert_eq!(w.errors.by_kind["ENOSPC"], 2);
        assert!(ctl.first_done_at().is_some());
    }

    #[test]
    fn workers_share_exact_histograms_per_gateway_and_keep_their_own_summary() {
        let start = Instant::now();
        let ctl = PhaseControl::new(start, None, Duration::ZERO, 0, &NO);
        let (live0, live1) = (Live::default(), Live::default());
        let (series, lat) = (RefCell::new(series_of(&ctl)), Mutex::new(Latencies::new(2, 2)));
        let mut a = Recorder::new(4, &["read", "write"], &ctl, &live0, &series, &lat);
        let mut b = Recorder::new(7, &["read", "write"], &ctl, &live1, &series, &lat);
        let us = Duration::from_micros;
        a.record(0, start, start + us(10), 1);
        a.record(1, start, start + us(30), 1);
        b.record(0, start, start + us(2_000), 1);
        let (a, b) = (a.finish(), b.finish());
        let shared = lat.into_inner().unwrap();
        // Worker 4 talks to gateway 0, worker 7 to gateway 1.
        let lens: Vec<Vec<u64>> = shared
            .classes
            .iter()
            .map(|row| row.iter().map(|h| h.len()).collect())
            .collect();
        assert_eq!(lens, [[1, 1], [1, 0]]);
        assert_eq!(
            shared.classes[1][0].max(),
            shared.classes[1][0].highest_equivalent(2_000_000)
        );
        // Each worker's summary holds only its own operations, to 1%.
        assert!(a.latency.max_ns.abs_diff(30_000) <= 300, "{}", a.latency.max_ns);
        assert!(a.latency.p50_ns.abs_diff(10_000) <= 100, "{}", a.latency.p50_ns);
        assert!(b.latency.p50_ns.abs_diff(2_000_000) <= 20_000, "{}", b.latency.p50_ns);
    }

    #[test]
    fn a_long_phase_widens_its_intervals_and_keeps_every_count() {
        let start = Instant::now();
        let secs = Duration::from_secs;
        let mut b = Buckets::new(start, SERIES_INTERVAL, None).by_kind();
        let mut n = 0;
        for t in (0..3 * MAX_INTERVALS as u64).step_by(7) {
            b.add(start + secs(t), 2);
            n += 1;
        }
        b.add_error(start + secs(3 * MAX_INTERVALS as u64), "timeout");
        // 49,152 s of 1 s intervals: twice doubled, to 4 s.
        assert_eq!(b.width(), secs(4));
        assert!(b.ops.len() <= MAX_INTERVALS, "{}", b.ops.len());
        let mut series = Series::default();
        b.add_into(&mut series);
        assert_eq!(series.ops.iter().sum::<u64>(), n);
        assert_eq!(series.bytes.iter().sum::<u64>(), 2 * n);
        assert_eq!(series.errors_by_kind["timeout"].iter().sum::<u64>(), 1);

        // 100 ms intervals widen to whole seconds first; a narrower thread's series adds into
        // the wider one interval by interval.
        let mut fine = Buckets::new(start, FINE_SERIES_INTERVAL, None);
        fine.add(start + secs(2000), 1);
        assert_eq!(fine.width(), SERIES_INTERVAL);
        let mut narrow = Buckets::new(start, FINE_SERIES_INTERVAL, None);
        narrow.add(start + Duration::from_millis(1950), 1);
        let mut wide = Series {
            interval_s: fine.width().as_secs_f64(),
            ..Series::default()
        };
        fine.add_into(&mut wide);
        narrow.add_into(&mut wide);
        assert_eq!(wide.ops[1], 1, "1.95 s is in the second 1 s interval");
        assert_eq!(wide.ops[2000], 1);
        assert_eq!(wide.ops.iter().sum::<u64>(), 2);
    }

    #[test]
    fn every_held_latency_reaches_the_histograms_batch_or_not() {
        let start = Instant::now();
        let ctl = PhaseControl::new(start, None, Duration::ZERO, 0, &NO);
        let (live0, live1) = (Live::default(), Live::default());
        let (series, lat) = (RefCell::new(series_of(&ctl)), Mutex::new(Latencies::new(1, 1)));
        let mut a = Recorder::new(0, &["read"], &ctl, &live0, &series, &lat);
        let mut b = Recorder::new(1, &["read"], &ctl, &live1, &series, &lat);
        a.measure_service();
        let us = Duration::from_micros;
        // A full batch and then some, one operation short of a batch, and the first bytes.
        for i in 0..BATCH as u64 + 3 {
            a.record_op(0, start, start + us(1), start + us(10 + i), 1);
        }
        for i in 0..BATCH as u64 - 1 {
            b.record(0, start, start + us(100 + i), 1);
            b.record_ttfb(start, start + us(5));
        }
        // Full batches are in, what is still held is not.
        let added = lat.lock().unwrap().classes[0][0].len();
        assert!(added > 0 && added < 2 * BATCH as u64 + 2, "{added}");
        let (a, b) = (a.finish(), b.finish());
        let lat = lat.into_inner().unwrap();
        let ops = a.classes[0].ops + b.classes[0].ops;
        assert_eq!(lat.classes[0][0].len(), ops);
        assert_eq!(lat.service.expect("a ran at a rate").len(), a.classes[0].ops);
        assert_eq!(lat.ttfb.expect("b noted first bytes").len(), b.classes[0].ops);
        let mut counted = Series::default();
        series.into_inner().add_into(&mut counted);
        assert_eq!(counted.ops.iter().sum::<u64>(), ops);
    }

    /// The io loop reads the clock again after recording that took long: once per batch added
    /// under the lock, and when the worker's histogram grew; never for a plain count.
    #[test]
    fn recording_says_when_it_took_long() {
        let start = Instant::now();
        let ctl = PhaseControl::new(start, None, Duration::ZERO, 0, &NO);
        let live = Live::default();
        let (series, lat) = (RefCell::new(series_of(&ctl)), Mutex::new(Latencies::new(1, 1)));
        let mut r = Recorder::new(0, &["read"], &ctl, &live, &series, &lat);
        let ns = Duration::from_nanos;
        // The first latency beyond the histogram's first bound grows it.
        r.record(0, start, start + ns(1_000_000), 1);
        assert!(r.took_long());
        assert!(!r.took_long(), "asking clears it");
        let mut long = 0;
        for _ in 1..3 * BATCH - 1 {
            r.record(0, start, start + ns(500), 1);
            long += r.took_long() as usize;
        }
        // Batches were full at the 128th and 256th latency; the last 127 are still held.
        assert_eq!(long, 2);
        assert_eq!(lat.lock().unwrap().classes[0][0].len(), 2 * BATCH as u64);
    }

    #[test]
    fn buckets_count_each_operation_in_its_own_interval() {
        let start = Instant::now();
        let s = Duration::from_secs(1);
        let mut b = Buckets::new(start, s, Some(3 * s));
        let ms = Duration::from_millis;
        // Out of order, across intervals, and one long after the others.
        for at in [ms(10), ms(999), ms(1000), ms(2500), ms(1500), ms(7200)] {
            b.add(start + at, 10);
        }
        b.add_error(start + ms(2999), "EIO");
        let mut series = Series::default();
        b.add_into(&mut series);
        b.add_into(&mut series);
        assert_eq!(series.ops, [4, 4, 2, 0, 0, 0, 0, 2]);
        assert_eq!(series.bytes, [40, 40, 20, 0, 0, 0, 0, 20]);
        assert_eq!(series.errors, [0, 0, 2, 0, 0, 0, 0, 0]);
    }

    #[test]
    fn latencies_at_the_delayed_ack_timeout_are_named() {
        let ms = 1_000_000;
        let mut nagle = new_histogram();
        for i in 0..100u64 {
            // 60 small GETs held for the delayed ACK, 40 answered at once.
            nagle
                .record(if i < 60 { 40 * ms + i * 10_000 } else { 300_000 })
                .unwrap();
        }
        let reason = delayed_ack_signature(&nagle).expect("a 40 ms cluster");
        assert!(reason.contains("40 ms (60% of operations)"), "{reason}");
        let mut spread = new_histogram();
        for i in 1..=100u64 {
            spread.record(i * ms).unwrap();
        }
        assert_eq!(delayed_ack_signature(&spread), None, "1..100 ms puts 13% near 40 ms");
        let mut few = new_histogram();
        few.record(40 * ms).unwrap();
        assert_eq!(delayed_ack_signature(&few), None, "too few operations to tell");
    }

    #[test]
    fn ramp_is_not_measured() {
        let start = Instant::now();
        let ctl = PhaseControl::new(start, Some(Duration::from_secs(1)), Duration::from_millis(100), 0, &NO);
        let live = Live::default();
        let (series, lat) = (RefCell::new(series_of(&ctl)), Mutex::new(Latencies::new(1, 1)));
        let mut r = Recorder::new(0, &["read"], &ctl, &live, &series, &lat);
        r.record(0, start, start + Duration::from_micros(5), 1);
        r.record(
            0,
            start + Duration::from_millis(200),
            start + Duration::from_millis(201),
            1,
        );
        let w = r.finish();
        assert_eq!(w.classes[0].ops, 1);
        assert_eq!(lat.lock().unwrap().classes[0][0].len(), 1);
        assert_eq!(live.ops.load(Relaxed), 2, "the live view shows ramp-up activity too");
    }
}
