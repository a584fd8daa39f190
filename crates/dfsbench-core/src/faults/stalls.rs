//! Stalls: intervals in which no operation completed anywhere, at millisecond resolution from
//! each operation's own completion time.
//!
//! Each worker logs its own gaps between successful completions that are at least a grain
//! long. A moment is a stall of the phase when it lies in a gap of every worker still working,
//! so the phase's stalls are the intersection of the workers' gaps (a worker that has finished
//! constrains nothing). Any gap of the phase of at least the grain is in every worker's log,
//! so the intersection finds all of them exactly. A worker's log is bounded: when it fills,
//! the grain doubles and shorter gaps are dropped.

use serde::{Deserialize, Serialize};

use dfsbench_result::faults::{Interval, Stalls, MAX_STALLS_LISTED};

/// The finest gap logged: 10 ms.
const GRAIN_NS: u64 = 10_000_000;
/// Gaps a worker keeps before its grain doubles: 16 KiB per worker at most.
const MAX_GAPS: usize = 1024;

/// One worker's gaps in a phase, in nanoseconds after the phase's start.
#[derive(Debug)]
pub struct GapLog {
    grain_ns: u64,
    last_ns: u64,
    gaps: Vec<(u64, u64)>,
}

impl Default for GapLog {
    fn default() -> Self {
        GapLog {
            grain_ns: GRAIN_NS,
            last_ns: 0,
            gaps: Vec::new(),
        }
    }
}

impl GapLog {
    /// A successful operation completed at `at_ns`.
    #[inline]
    pub fn complete(&mut self, at_ns: u64) {
        if at_ns <= self.last_ns {
            return;
        }
        if at_ns - self.last_ns >= self.grain_ns {
            self.push(self.last_ns, at_ns);
        }
        self.last_ns = at_ns;
    }

    fn push(&mut self, from: u64, to: u64) {
        while self.gaps.len() >= MAX_GAPS {
            self.grain_ns *= 2;
            let grain = self.grain_ns;
            self.gaps.retain(|(a, b)| b - a >= grain);
        }
        if to - from >= self.grain_ns {
            self.gaps.push((from, to));
        }
    }

    /// The worker stopped working at `done_ns` (its last operation, successful or not, ended):
    /// its quiet time, on the common clock where the phase started at `start_s`.
    pub fn finish(mut self, done_ns: u64, start_s: f64) -> Quiet {
        let done_ns = done_ns.max(self.last_ns);
        if done_ns - self.last_ns >= self.grain_ns {
            self.push(self.last_ns, done_ns);
        }
        let s = |ns: u64| start_s + ns as f64 / 1e9;
        Quiet {
            resolution_s: self.grain_ns as f64 / 1e9,
            gaps: self.gaps.iter().map(|&(a, b)| (s(a), s(b))).collect(),
            done_s: s(done_ns),
        }
    }
}

/// When no operation of some workers completed: `gaps`, and everything from `done_s` on (they
/// had all finished). Seconds on the common clock.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Quiet {
    pub resolution_s: f64,
    pub gaps: Vec<(f64, f64)>,
    pub done_s: f64,
}

impl Quiet {
    /// The moments quiet for both `self` and `other`'s workers.
    pub fn intersect(&self, other: &Quiet) -> Quiet {
        let a = self.with_tail();
        let b = other.with_tail();
        let (mut i, mut j) = (0, 0);
        let mut out = Vec::new();
        while i < a.len() && j < b.len() {
            let from = a[i].0.max(b[j].0);
            let to = a[i].1.min(b[j].1);
            if from < to {
                out.push((from, to));
            }
            if a[i].1 < b[j].1 {
                i += 1;
            } else {
                j += 1;
            }
        }
        let done_s = match out.last() {
            Some(&(from, to)) if to == f64::INFINITY => {
                out.pop();
                from
            }
            _ => f64::INFINITY,
        };
        Quiet {
            resolution_s: self.resolution_s.max(other.resolution_s),
            gaps: out,
            done_s,
        }
    }

    fn with_tail(&self) -> Vec<(f64, f64)> {
        let mut v = self.gaps.clone();
        v.push((self.done_s, f64::INFINITY));
        v
    }

    /// The phase's stalls between `from_s` and `to_s` (its start and its last operation's
    /// end), on the run's clock (`run_start_s` subtracted).
    pub fn stalls(&self, from_s: f64, to_s: f64, threshold_s: f64, run_start_s: f64) -> Stalls {
        let gaps: Vec<Interval> = self
            .gaps
            .iter()
            .map(|&(a, b)| (a.max(from_s), b.min(to_s)))
            .filter(|(a, b)| b - a >= self.resolution_s)
            .map(|(a, b)| Interval {
                from_s: a - run_start_s,
                to_s: b - run_start_s,
            })
            .collect();
        let longest = gaps.iter().copied().max_by(|x, y| x.length().total_cmp(&y.length()));
        let stalls: Vec<Interval> = gaps.iter().copied().filter(|g| g.length() >= threshold_s).collect();
        Stalls {
            resolution_s: self.resolution_s,
            threshold_s,
            longest_s: longest.map_or(0.0, |g| g.length()),
            longest_from_s: longest.map(|g| g.from_s),
            count: stalls.len() as u64,
            total_s: stalls.iter().map(Interval::length).fold(0.0, |a, b| a + b),
            intervals: stalls.into_iter().take(MAX_STALLS_LISTED).collect(),
            gaps: gaps.into_iter().take(MAX_STALLS_LISTED).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn log(completions_ms: &[u64], done_ms: u64) -> Quiet {
        let mut g = GapLog::default();
        for &c in completions_ms {
            g.complete(c * MS);
        }
        g.finish(done_ms * MS, 100.0)
    }

    #[test]
    fn a_stall_is_a_gap_of_every_worker_still_working() {
        // Worker a stalls 1000..4000 ms; b completes at 2500 ms inside it, then stops at 3000.
        let a = log(&[5, 1000, 4000, 4005], 4010);
        let b = log(&[5, 1002, 2500], 3000);
        let q = a.intersect(&b);
        let st = q.stalls(100.0, 104.01, 1.0, 90.0);
        // 1002..2500 and 3000..4000 (b had finished), both on the run's clock.
        assert_eq!(st.count, 2, "{st:?}");
        let i = &st.intervals;
        assert!(
            (i[0].from_s - 11.002).abs() < 1e-9 && (i[0].to_s - 12.5).abs() < 1e-9,
            "{i:?}"
        );
        assert!(
            (i[1].from_s - 13.0).abs() < 1e-9 && (i[1].to_s - 14.0).abs() < 1e-9,
            "{i:?}"
        );
        assert!((st.longest_s - 1.498).abs() < 1e-9);
        assert!((st.total_s - 2.498).abs() < 1e-9);
    }

    #[test]
    fn short_gaps_are_not_stalls_and_memory_stays_bounded() {
        // 3000 gaps of 20 ms fill the log: the grain doubles to 20 ms, then 40 ms.
        let mut g = GapLog::default();
        for i in 0..3000u64 {
            g.complete(i * 20 * MS + 20 * MS);
        }
        g.complete(60_000 * MS + 3000 * MS);
        let q = g.finish(63_000 * MS, 0.0);
        assert!(q.gaps.len() <= MAX_GAPS);
        assert!(q.resolution_s > 0.01);
        let st = q.stalls(0.0, 63.0, 1.0, 0.0);
        assert_eq!(st.count, 1);
        assert!((st.longest_s - 3.0).abs() < 1e-9, "{st:?}");
    }

    #[test]
    fn nothing_completing_until_the_end_is_one_stall() {
        let a = log(&[10, 20], 5000);
        let st = a.stalls(100.0, 105.0, 1.0, 100.0);
        assert_eq!(st.count, 1);
        assert!((st.intervals[0].from_s - 0.02).abs() < 1e-9);
        assert!((st.intervals[0].to_s - 5.0).abs() < 1e-9);
    }
}
