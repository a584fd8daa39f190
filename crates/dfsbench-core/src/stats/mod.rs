//! Per-worker measurement and its exact merge.
//!
//! A worker records each operation into its counters and into the exact HDR histograms that
//! the workers of its thread share (per gateway and class: their memory does not grow with the
//! workers), with no locks and no allocation, and publishes running totals through
//! single-writer atomics that the sampler reads for the per-second series and the progress
//! line.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use dfsbench_backends::clock::Instant;
use dfsbench_backends::IoEngine;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::faults::stalls::GapLog;
use dfsbench_result::histogram::new_histogram;
use dfsbench_result::{ErrorSample, Errors, MAX_ERROR_SAMPLES};

mod recorder;
mod series;

pub(crate) use recorder::{Latencies, Recorder, BATCH};
pub(crate) use series::{
    add_vec, coarsen, series_of, widen_series, Buckets, Busy, FINE_SERIES_INTERVAL, SERIES_INTERVAL,
};

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
pub(crate) const LIVE_CLASSES: usize = 6;

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
    /// Set when a job of the group this job runs in ended with exitall: the phase ends at once.
    pub group_ended: Option<Arc<AtomicBool>>,
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
            group_ended: None,
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
            || self.group_ended.as_ref().is_some_and(|e| e.load(Relaxed))
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
    /// The I/O engine that ran, for io phases (`auto` resolves to one), and the requests it
    /// kept in flight.
    pub engine: Option<(IoEngine, usize)>,
    /// Blocks per second of each engine `auto` probed before this phase's pattern.
    pub probe: Vec<(IoEngine, f64)>,
    /// Files the worker has after the phase, per file set (what another rank's shuffled
    /// reads of them may read).
    pub existing: Vec<u64>,
    /// The worker whose data this one read, when not its own (`--shuffle`).
    pub read_from: Option<usize>,
    /// Gaps between successful completions (`log_gaps`).
    pub gaps: Option<GapLog>,
    /// The emulated accelerator this worker is (train epochs).
    pub accelerator: Option<dfsbench_result::Accelerator>,
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
            accelerator: None,
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

/// Share of operations at which latencies "cluster at 40 ms" (see [`delayed_ack_signature`]).
const DELAYED_ACK_SHARE: f64 = 0.2;

/// Whether a phase's latencies cluster at 40 ms, the delayed-ACK timeout of Linux: a small
/// request or response written in two pieces by a sender that runs Nagle's algorithm waits
/// for the receiver's delayed ACK (Ceph RGW's frontend without `tcp_nodelay=1` does this to
/// every small GET). dfsbench's own connections set TCP_NODELAY, so the cause is on the
/// other side. Returns a reason for the phase's marks, or None.
pub(crate) fn delayed_ack_signature(hist: &Histogram<u64>) -> Option<String> {
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
pub(crate) fn merge_errors(into: &mut Errors, from: Errors) {
    into.total += from.total;
    for (k, v) in from.by_kind {
        *into.by_kind.entry(k).or_insert(0) += v;
    }
    into.samples.extend(from.samples);
    into.samples.sort_by(|a, b| a.time_s.total_cmp(&b.time_s));
    into.samples.truncate(MAX_ERROR_SAMPLES);
}

/// Counts by error kind for a quick summary line, most common first.
pub(crate) fn top_error(errors: &Errors) -> Option<(&str, u64, &str)> {
    let (kind, n) = errors.by_kind.iter().max_by_key(|(_, n)| **n)?;
    let message = errors
        .samples
        .iter()
        .find(|s| &s.kind == kind)
        .map_or("", |s| s.message.as_str());
    Some((kind.as_str(), *n, message))
}

/// Merge histograms exactly (never averaging percentiles).
pub(crate) fn merge_histograms<'h>(hists: impl IntoIterator<Item = &'h Histogram<u64>>) -> Histogram<u64> {
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
    use super::series::MAX_INTERVALS;
    use super::*;
    use dfsbench_backends::OpError;
    use dfsbench_result::histogram::{deserialize, serialize};
    use dfsbench_result::Series;
    use std::cell::RefCell;

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
        let mut series = Series::default();
        b.add_into(&mut series);
        assert!(series.ops.len() <= MAX_INTERVALS, "{}", series.ops.len());
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

    /// An accelerator's compute and wait spans count in the intervals they cover, split at
    /// interval ends, and their sums are the spans' lengths however the series widens.
    #[test]
    fn busy_spans_split_over_intervals_and_sum_exactly() {
        let start = Instant::now();
        let (ms, secs) = (Duration::from_millis, Duration::from_secs);
        let mut b = Buckets::new(start, SERIES_INTERVAL, None);
        b.add_span(start + ms(200), start + ms(2500), Busy::Wait);
        b.add_span(start + ms(2500), start + ms(2600), Busy::Compute);
        let mut s = Series {
            interval_s: 1.0,
            ..Series::default()
        };
        b.add_into(&mut s);
        let ns = |d: Duration| d.as_nanos() as u64;
        assert_eq!(s.wait_ns, [ns(ms(800)), ns(ms(1000)), ns(ms(500))]);
        assert_eq!(s.compute_ns, [0, 0, ns(ms(100))]);
        assert_eq!(s.au()[2], Some(100.0 / 600.0));
        assert_eq!(s.au()[0], Some(0.0));

        // 100 ms intervals, a span far out makes them widen: nothing is lost.
        let mut fine = Buckets::new(start, FINE_SERIES_INTERVAL, None);
        fine.add_span(start + ms(50), start + ms(350), Busy::Compute);
        fine.add_span(start + secs(1999), start + secs(2001), Busy::Compute);
        assert_eq!(fine.width(), SERIES_INTERVAL);
        let mut wide = Series {
            interval_s: fine.width().as_secs_f64(),
            ..Series::default()
        };
        fine.add_into(&mut wide);
        assert_eq!(wide.compute_ns.iter().sum::<u64>(), ns(ms(300)) + ns(secs(2)));
        assert_eq!(wide.compute_ns[0], ns(ms(300)));
        assert_eq!(wide.compute_ns[1999], ns(secs(1)));
        assert!(wide.wait_ns.is_empty() && wide.ops.iter().all(|&o| o == 0));
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
