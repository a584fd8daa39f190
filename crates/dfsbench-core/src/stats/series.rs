//! Per-interval counts of a phase: each worker thread counts every completion and error in
//! the interval of its own time, and intervals widen so a run of any length stays bounded.

use dfsbench_backends::clock::Instant;
use dfsbench_result::Series;
use std::collections::BTreeMap;
use std::time::Duration;

use super::PhaseControl;

/// Width of the per-interval series of a phase.
pub(crate) const SERIES_INTERVAL: Duration = Duration::from_secs(1);

/// Width of the finer series of runs with faults.
pub(crate) const FINE_SERIES_INTERVAL: Duration = Duration::from_millis(100);

/// Intervals reserved up front per worker; a longer phase grows its series once an interval.
const SERIES_RESERVE: usize = 3600;

/// Intervals a worker thread's series holds at most: past that its intervals widen (see
/// [`widening`]), so a run of any length keeps a bounded series. 4.5 h at 1 s, 27 min at
/// 100 ms before the first widening; 400 KB per thread.
pub(crate) const MAX_INTERVALS: usize = 16_384;

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
    /// Nanoseconds emulated accelerators computed and waited (train epochs; empty otherwise).
    compute_ns: Vec<u64>,
    wait_ns: Vec<u64>,
}

/// What an emulated accelerator did over a span of time: computed a batch or waited for one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Busy {
    Compute,
    Wait,
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
            compute_ns: Vec::new(),
            wait_ns: Vec::new(),
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

    /// Count the nanoseconds from `from` to `to` that an emulated accelerator computed or
    /// waited, each in the interval it fell in (time before the start in the first): a batch
    /// computed across a second's end counts in both seconds.
    pub fn add_span(&mut self, from: Instant, to: Instant, busy: Busy) {
        let mut at = from;
        while at < to {
            let i = self.slot(at);
            let until = self.current_to.min(to);
            let v = match busy {
                Busy::Compute => &mut self.compute_ns,
                Busy::Wait => &mut self.wait_ns,
            };
            if v.len() <= i {
                v.resize(i + 1, 0);
            }
            v[i] += until.saturating_duration_since(at).as_nanos() as u64;
            at = until;
        }
    }

    /// Make every interval [`widening`] times wider, summing the counts they take in.
    fn widen(&mut self) {
        let factor = widening(self.width);
        for v in [
            &mut self.ops,
            &mut self.bytes,
            &mut self.errors,
            &mut self.compute_ns,
            &mut self.wait_ns,
        ]
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
        add(&mut series.compute_ns, &self.compute_ns);
        add(&mut series.wait_ns, &self.wait_ns);
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
pub(crate) fn widen_series(series: &Series, factor: usize) -> Series {
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
        compute_ns: sum_chunks(&series.compute_ns, factor),
        wait_ns: sum_chunks(&series.wait_ns, factor),
    }
}

/// A series of `factor` times wider intervals without errors by kind (the 1 s series from the
/// 100 ms one).
pub(crate) fn coarsen(fine: &Series, factor: usize) -> Series {
    Series {
        errors_by_kind: Default::default(),
        ..widen_series(fine, factor)
    }
}

/// `into[i] += from[i]`, growing `into` as needed.
pub(crate) fn add_vec(into: &mut Vec<u64>, from: &[u64]) {
    if into.len() < from.len() {
        into.resize(from.len(), 0);
    }
    for (a, b) in into.iter_mut().zip(from) {
        *a += b;
    }
}

/// The series of completions and errors a worker thread counts in a phase, by interval, ramp-up
/// included: 1 s, or 100 ms with `fine_series`.
pub(crate) fn series_of(ctl: &PhaseControl) -> Buckets {
    let expected = ctl.deadline.map(|d| d.saturating_duration_since(ctl.start));
    if ctl.fine_series {
        Buckets::new(ctl.start, FINE_SERIES_INTERVAL, expected).by_kind()
    } else {
        Buckets::new(ctl.start, SERIES_INTERVAL, expected)
    }
}
