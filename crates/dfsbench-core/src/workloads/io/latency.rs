//! fio's latency target (`latency_target`, `latency_window`, `latency_percentile`): the
//! highest queue depth at which the I/Os keep their latency under the target, found as fio
//! finds it (io_u.c, lat_target_*): from a depth of 1, every window the depth doubles while
//! at least the percentile of the window's I/Os were under the target, then halves its way
//! back between the last depth that held and the last that failed; a depth that held twice
//! in a row is the one. As in fio, what the search did is not the job's result: the measured
//! phase is one more window at the depth found (fio resets its statistics for it), and the
//! phase's queue depth (`queue.depth`) is that depth (fio's `latency_depth`).
//!
//! With `latency_percentile=100` (fio's default) an I/O over the target lowers the depth at
//! once, and at a depth of 1 ends the job with an error (fio's ETIMEDOUT "max latency
//! exceeded").

use std::time::Duration;

use dfsbench_backends::clock::Instant;
use serde::Serialize;

use crate::error::ConfigError;
use crate::units::parse_duration;

use super::Options;

/// The target, as given.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct LatencyTarget {
    /// The most an I/O may take, from its start to its completion.
    pub target_ns: u64,
    /// How long each depth runs before it is judged (and the measured window lasts).
    #[serde(serialize_with = "secs")]
    pub window: Duration,
    /// The share of a window's I/Os that must be under the target, in percent.
    pub percentile: f64,
}

fn secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

impl LatencyTarget {
    /// Read latency_target, latency_window and latency_percentile (these two only with the
    /// target). Times without a unit are microseconds, as in fio.
    pub(super) fn validate(own: &Options) -> Result<Option<LatencyTarget>, ConfigError> {
        let time = |key: &'static str, t: &str| {
            let t = t.trim();
            let text = if t.bytes().all(|b| b.is_ascii_digit()) {
                format!("{t}us")
            } else {
                t.to_string()
            };
            parse_duration(&text).map_err(|e| ConfigError::value(key, format!("'{t}'"), e))
        };
        let Some(target) = own.latency_target.as_deref() else {
            if own.latency_window.is_some() || own.latency_percentile.is_some() {
                return Err(
                    "latency_window and latency_percentile shape the search of latency_target: give latency_target too"
                        .into(),
                );
            }
            return Ok(None);
        };
        let target = time("latency_target", target)?;
        let window = own
            .latency_window
            .as_deref()
            .map(|w| time("latency_window", w))
            .transpose()?
            .unwrap_or(Duration::ZERO);
        let percentile = own.latency_percentile.unwrap_or(100.0);
        if !(percentile > 0.0 && percentile <= 100.0) {
            return Err(ConfigError::value(
                "latency_percentile",
                percentile,
                "give a share of the I/Os above 0 and at most 100",
            ));
        }
        if target.is_zero() {
            return Err(ConfigError::value(
                "latency_target",
                0,
                "give the most an I/O may take, above 0",
            ));
        }
        Ok(Some(LatencyTarget {
            target_ns: target.as_nanos().min(u128::from(u64::MAX)) as u64,
            window,
            percentile,
        }))
    }
}

/// One worker's search.
pub(super) struct Search {
    target: LatencyTarget,
    /// The job's queue depth: the most the search may reach.
    max: usize,
    /// The depth now, the last that held and the last that failed (or the most).
    pub(super) qd: usize,
    low: usize,
    high: usize,
    stable: u32,
    /// The window's start, and the I/Os done and over the target in it.
    since: Instant,
    ios: u64,
    failed: u64,
    /// Let the I/Os in flight complete before the next is issued (fio's io_u_quiesce): a
    /// lower depth is then what is in flight.
    pub(super) quiesce: bool,
    /// The depth held twice in a row: the search is over.
    pub(super) found: bool,
    /// An I/O over the target at a depth of 1, with the percentile at 100.
    pub(super) fatal: bool,
}

impl Search {
    pub(super) fn new(target: LatencyTarget, max: usize) -> Search {
        Search {
            target,
            max: max.max(1),
            qd: 1,
            low: 1,
            high: max.max(1),
            stable: 0,
            since: Instant::now(),
            ios: 0,
            failed: 0,
            quiesce: false,
            found: false,
            fatal: false,
        }
    }

    /// An I/O that took `ns` from its start to its completion.
    #[inline]
    pub(super) fn completed(&mut self, ns: u64, now: Instant) {
        self.ios += 1;
        if ns > self.target.target_ns {
            if self.target.percentile >= 100.0 {
                if self.qd == 1 {
                    self.fatal = true;
                } else {
                    self.down(now);
                }
            } else {
                self.failed += 1;
            }
        }
    }

    /// Judge the window once it is over (fio's lat_target_check).
    pub(super) fn check(&mut self, now: Instant) {
        if now.saturating_duration_since(self.since) < self.target.window || self.ios == 0 {
            return;
        }
        let success = (self.ios - self.failed) as f64 / self.ios as f64 * 100.0;
        if success >= self.target.percentile {
            self.up(now);
        } else if self.qd > 1 {
            self.down(now);
        } else {
            self.cycle(now);
        }
    }

    fn cycle(&mut self, now: Instant) {
        self.since = now;
        self.ios = 0;
        self.failed = 0;
    }

    /// fio's __lat_target_failed.
    fn down(&mut self, now: Instant) {
        self.high = self.qd;
        if self.qd == self.low {
            self.low = self.low.saturating_sub(1).max(1);
        }
        self.qd = ((self.qd + self.low) / 2).max(1);
        self.stable = 0;
        self.quiesce = true;
        self.cycle(now);
    }

    /// fio's lat_target_success.
    fn up(&mut self, now: Instant) {
        let qd = self.qd;
        self.low = self.qd;
        if self.qd + 1 == self.high {
            self.stable += 1;
            if self.stable >= 3 {
                self.high += 1;
                self.stable = 0;
            }
        }
        self.qd = if self.high != self.max {
            (self.qd + self.high) / 2
        } else {
            self.qd * 2
        }
        .clamp(1, self.max);
        if self.qd == qd {
            // The same depth again: fio then quiesces and runs its final window.
            self.found = true;
            self.quiesce = true;
        }
        self.cycle(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(percentile: f64) -> LatencyTarget {
        LatencyTarget {
            target_ns: 1000,
            window: Duration::ZERO,
            percentile,
        }
    }

    /// A device that keeps I/Os under the target up to a depth of 5 (of at most 16).
    #[test]
    fn the_search_finds_the_highest_depth_that_holds() {
        let mut s = Search::new(target(99.0), 16);
        let now = Instant::now();
        let mut depths = vec![s.qd];
        while !s.found && depths.len() < 100 {
            let ns = if s.qd <= 5 { 500 } else { 5000 };
            for _ in 0..100 {
                s.completed(ns, now);
            }
            s.check(now);
            depths.push(s.qd);
        }
        assert!(s.found, "{depths:?}");
        assert_eq!(s.qd, 5, "{depths:?}");
        assert_eq!(
            &depths[..6],
            &[1, 2, 4, 8, 6, 5],
            "doubling, then bisecting: {depths:?}"
        );
    }

    #[test]
    fn at_a_depth_of_one_an_io_over_the_target_is_fatal_at_100_percent() {
        let mut s = Search::new(target(100.0), 8);
        s.completed(5000, Instant::now());
        assert!(s.fatal);
        let mut s = Search::new(target(99.9), 8);
        s.completed(5000, Instant::now());
        assert!(!s.fatal);
    }
}
