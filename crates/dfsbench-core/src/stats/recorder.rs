//! What a worker calls for each operation: its counts, its latencies (batched into the
//! process's exact histograms), its thread's series, errors and the stonewall mark.

use dfsbench_backends::clock::Instant;
use dfsbench_backends::{IoEngine, OpError};
use dfsbench_result::histogram::{new_growing_histogram, record_latency};
use dfsbench_result::{ErrorSample, MAX_ERROR_SAMPLES};
use hdrhistogram::Histogram;
use std::cell::RefCell;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Mutex;

use super::{worker_histogram, Buckets, Busy, Live, PhaseControl, Reread, WorkerLatency, WorkerPhase};

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
    /// Each step's wait of an emulated accelerator for its batch (train epochs).
    pub wait: Option<Histogram<u64>>,
}

impl Latencies {
    pub fn new(endpoints: usize, classes: usize) -> Self {
        Latencies {
            classes: (0..endpoints.max(1))
                .map(|_| (0..classes).map(|_| new_growing_histogram()).collect())
                .collect(),
            ttfb: None,
            service: None,
            wait: None,
        }
    }

    /// Add a batch of one worker's latencies; `endpoint` is its row of `classes`.
    fn add(&mut self, endpoint: usize, batch: &[(Slot, u64)]) {
        for &(slot, ns) in batch {
            let hist = match slot {
                Slot::Class(c) => &mut self.classes[endpoint][c],
                Slot::Ttfb => self.ttfb.get_or_insert_with(new_growing_histogram),
                Slot::Service => self.service.get_or_insert_with(new_growing_histogram),
                Slot::Wait => self.wait.get_or_insert_with(new_growing_histogram),
            };
            record_latency(hist, ns);
        }
    }
}

/// Latencies a worker holds before adding them to its process's [`Latencies`].
pub(crate) const BATCH: usize = 128;

/// Which histogram of [`Latencies`] a held latency goes to.
#[derive(Clone, Copy)]
enum Slot {
    Class(usize),
    Ttfb,
    Service,
    Wait,
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
    /// The worker has no part in the phase (a train search step it sits out): its end is no
    /// stonewall.
    sat_out: bool,
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
            sat_out: false,
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

    /// Record a batch an emulated accelerator started (train epochs): it waited for its data
    /// from `idle_from` to `start` and then computed for `compute`. The wait goes to the
    /// process's exact wait histogram and both spans to the phase's series (AU over time),
    /// none of it to the operations.
    pub fn record_step(&mut self, idle_from: Instant, start: Instant, compute: std::time::Duration) {
        self.hold(Slot::Wait, start.saturating_duration_since(idle_from).as_nanos() as u64);
        let mut series = self.series.borrow_mut();
        series.add_span(idle_from, start, Busy::Wait);
        series.add_span(start, start + compute, Busy::Compute);
    }

    /// Note what the emulated accelerator this worker is did in the phase.
    pub fn note_accelerator(&mut self, figures: dfsbench_result::Accelerator) {
        self.out.accelerator = Some(figures);
    }

    /// The worker has no part in this phase: its early end does not set the stonewall.
    pub fn sit_out(&mut self) {
        self.sat_out = true;
    }

    /// Note the I/O engine the worker's file runs on and the requests it keeps in flight.
    pub fn note_engine(&mut self, engine: IoEngine, depth: usize) {
        self.out.engine = Some((engine, depth));
    }

    /// The requests the engine kept in flight were `depth` at most, below what it was opened
    /// for (io's latency target: the depth it found).
    pub fn note_depth(&mut self, depth: usize) {
        if let Some((_, d)) = &mut self.out.engine {
            *d = depth;
        }
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
        if !self.sat_out {
            self.ctl.mark_done(end);
        }
        if !self.stonewalled {
            self.snapshot_stonewall();
        }
        self.add_held();
        self.out.latency = WorkerLatency::of(&self.own);
        self.out
    }
}
