//! Open-loop load and steady-state detection.
//!
//! With a rate, each worker issues operations at intended start times from a schedule instead
//! of as fast as it can. Latency is measured from the intended start, so a server that falls
//! behind shows up as growing latency and a lower achieved rate, not as a silently lower load
//! (no coordinated omission). A worker behind its schedule issues at once and never skips.

use std::time::Duration;

use dfsbench_backends::clock::Instant;
use dfsbench_backends::units::MAX_DURATION;

use crate::error::ConfigError;
use crate::stats::PhaseControl;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;

/// How intended start times are spaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Arrival {
    /// Evenly, 1/rate apart.
    Uniform,
    /// Exponential gaps of mean 1/rate: independent arrivals, as from many users.
    Poisson,
}

impl Arrival {
    pub fn name(self) -> &'static str {
        match self {
            Arrival::Uniform => "uniform",
            Arrival::Poisson => "poisson",
        }
    }

    pub fn parse(text: &str) -> Result<Arrival, ConfigError> {
        match text {
            "uniform" => Ok(Arrival::Uniform),
            "poisson" => Ok(Arrival::Poisson),
            other => Err(ConfigError::value(
                "arrival",
                format!("'{other}'"),
                "use uniform or poisson",
            )),
        }
    }
}

/// End a time-based phase once throughput is steady: every per-second sample of the last
/// `window` within `band` (a fraction) of the window's mean; or, with `slope`, the slope of
/// the least-squares line through them within `band` of the mean per second (fio's
/// `ss=iops_slope:1%`). The samples are operations per second, or bytes with `bytes`, from
/// `ramp` (and one second more, as fio's ss_ramp) after the phase's start.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Stable {
    pub band: f64,
    #[serde(serialize_with = "secs")]
    pub window: Duration,
    /// Bytes per second instead of operations (fio's `bw`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub bytes: bool,
    /// The slope's rule instead of the deviation's (fio's `*_slope`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub slope: bool,
    #[serde(serialize_with = "secs", skip_serializing_if = "Duration::is_zero")]
    pub ramp: Duration,
}

impl Stable {
    /// The rule of every sample within `band` of the mean, over `window`.
    pub fn band(band: f64, window: Duration) -> Stable {
        Stable {
            band,
            window,
            bytes: false,
            slope: false,
            ramp: Duration::ZERO,
        }
    }

    /// `iops`, `bw`, `iops_slope` or `bw_slope` (fio's ss metrics): what the rule measures.
    pub fn with_measure(mut self, text: &str) -> Result<Stable, ConfigError> {
        (self.bytes, self.slope) = match text.trim() {
            "iops" => (false, false),
            "bw" => (true, false),
            "iops_slope" => (false, true),
            "bw_slope" => (true, true),
            other => {
                return Err(ConfigError::value(
                    "stable_measure",
                    format!("'{other}'"),
                    "use iops, bw, iops_slope or bw_slope",
                ))
            }
        };
        Ok(self)
    }
}

fn secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

/// Parse a band such as `5%` or `0.05`.
pub(crate) fn parse_band(text: &str) -> Result<f64, ConfigError> {
    let t = text.trim();
    let quoted = || format!("'{text}'");
    let v = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|v| v / 100.0),
        None => t.parse::<f64>(),
    }
    .map_err(|_| ConfigError::value("stable_band", quoted(), "write a percentage such as 5%"))?;
    if !(v > 0.0 && v < 1.0) {
        return Err(ConfigError::value(
            "stable_band",
            quoted(),
            "give a band above 0% and below 100%",
        ));
    }
    Ok(v)
}

impl Stable {
    /// True when the last `window` samples (whole seconds) are within the band of their mean
    /// (or, with `slope`, their slope is: fio's steadystate_slope, x the sample's number).
    pub fn holds(&self, samples: &[u64], interval: Duration) -> bool {
        let n = (self.window.as_secs_f64() / interval.as_secs_f64()).round().max(2.0) as usize;
        if samples.len() < n {
            return false;
        }
        let tail = &samples[samples.len() - n..];
        let mean = tail.iter().sum::<u64>() as f64 / n as f64;
        if mean <= 0.0 {
            return false;
        }
        if self.slope {
            let nf = n as f64;
            let (sx, sxx) = (
                (0..n).map(|x| x as f64).sum::<f64>(),
                (0..n).map(|x| (x * x) as f64).sum::<f64>(),
            );
            let sxy: f64 = tail.iter().enumerate().map(|(x, &y)| x as f64 * y as f64).sum();
            let sy = mean * nf;
            let slope = (sxy - sx * sy / nf) / (sxx - sx * sx / nf);
            return (slope / mean).abs() < self.band;
        }
        tail.iter().all(|&s| (s as f64 - mean).abs() <= self.band * mean)
    }
}

/// The longest a paced worker sleeps before it checks whether its phase must stop.
const MAX_NAP: Duration = Duration::from_millis(100);

/// One worker's schedule of intended start times.
pub(crate) struct Pacer {
    next: Instant,
    /// Mean gap between operations in seconds.
    gap: f64,
    arrival: Arrival,
    rng: SmallRng,
    /// The worker has its thread to itself (see [`sleep_until`]).
    alone: bool,
}

impl Pacer {
    /// A schedule of `rate` operations per second from `start`. Uniform schedules of the
    /// `workers` workers are staggered so their operations do not all start at once.
    pub(crate) fn new(
        start: Instant,
        rate: f64,
        arrival: Arrival,
        worker: usize,
        workers: usize,
        seed: u64,
        alone: bool,
    ) -> Self {
        let gap = 1.0 / rate;
        let mut rng = SmallRng::seed_from_u64(seed ^ 0x9ace_0000_0000 ^ worker as u64);
        let first = match arrival {
            Arrival::Uniform => gap * worker as f64 / workers as f64,
            Arrival::Poisson => exp_gap(&mut rng, gap),
        };
        Pacer {
            next: later(start, first),
            gap,
            arrival,
            rng,
            alone,
        }
    }

    /// The intended start of the next operation, without waiting for it.
    pub(crate) fn peek(&self) -> Instant {
        self.next
    }

    /// Take the next intended start off the schedule.
    fn advance(&mut self) -> Instant {
        let at = self.next;
        let gap = match self.arrival {
            Arrival::Uniform => self.gap,
            Arrival::Poisson => exp_gap(&mut self.rng, self.gap),
        };
        self.next = later(self.next, gap);
        at
    }

    /// Wait until the next operation's intended start (not at all when behind) and return it;
    /// None when the phase must stop meanwhile.
    pub(crate) async fn wait(&mut self, ctl: &PhaseControl) -> Option<Instant> {
        let at = self.advance();
        sleep_until(at, ctl, self.alone).await.then_some(at)
    }
}

/// Wait until `at` (not at all when it is past); false when the phase must stop meanwhile.
/// Long waits are slept in naps, so a Ctrl-C is heard within one. A worker `alone` on its
/// thread sleeps the thread (precise to tens of microseconds), others the executor's timer
/// (whole milliseconds).
pub(crate) async fn sleep_until(at: Instant, ctl: &PhaseControl, alone: bool) -> bool {
    loop {
        let now = Instant::now();
        if at <= now {
            return true;
        }
        if ctl.should_stop(now) {
            return false;
        }
        let nap = (at - now).min(MAX_NAP);
        if alone {
            std::thread::sleep(nap);
        } else {
            tokio::time::sleep(nap).await;
        }
    }
}

/// `at` plus `secs`, at most [`MAX_DURATION`] later: validation keeps rates high enough that
/// this never binds in a phase, and the clock cannot overflow whatever the worker count.
fn later(at: Instant, secs: f64) -> Instant {
    at + Duration::try_from_secs_f64(secs).map_or(MAX_DURATION, |d| d.min(MAX_DURATION))
}

fn exp_gap(rng: &mut SmallRng, mean: f64) -> f64 {
    // 1 - u is in (0, 1]: ln never sees 0.
    -mean * (1.0 - rng.gen::<f64>()).ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stability_needs_a_full_window_within_the_band() {
        let s = Stable::band(0.05, Duration::from_secs(3));
        let i = Duration::from_secs(1);
        assert!(!s.holds(&[100, 100], i), "window not full");
        assert!(s.holds(&[10, 100, 103, 98], i));
        assert!(!s.holds(&[100, 100, 120], i));
        assert!(!s.holds(&[0, 0, 0], i), "no throughput is not a steady state");
        // fio's bw_slope:1%: a rising series is not steady, a flat noisy one is.
        let slope = Stable::band(0.01, Duration::from_secs(4))
            .with_measure("bw_slope")
            .unwrap();
        assert!(!slope.holds(&[100, 110, 120, 130], i));
        assert!(slope.holds(&[100, 101, 99, 100], i));
        assert!(Stable::band(0.1, i).with_measure("lat").is_err());
        assert_eq!(parse_band("5%").unwrap(), 0.05);
        assert!(parse_band("0%").is_err());
    }

    #[test]
    fn schedules_keep_their_rate() {
        let start = Instant::now();
        for arrival in [Arrival::Uniform, Arrival::Poisson] {
            let mut p = Pacer::new(start, 1000.0, arrival, 1, 4, 3, true);
            let first = p.peek();
            let mut last = first;
            for _ in 0..10_000 {
                last = p.advance();
            }
            let rate = 10_000.0 / (last - first).as_secs_f64();
            assert!((rate - 1000.0).abs() < 30.0, "{arrival:?}: {rate}");
        }
        let p = Pacer::new(start, 1000.0, Arrival::Uniform, 1, 4, 3, true);
        assert_eq!(
            p.peek() - start,
            Duration::from_micros(250),
            "staggered by a quarter gap"
        );
    }
}
