//! Live progress on stderr: a line redrawn in place when stderr is a terminal, else a plain
//! line every `--progress-interval` (CI logs, `tee`), as fio's `--eta` and elbencho do.

use std::collections::VecDeque;
use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use dfsbench_core::plan::Phase;
use dfsbench_core::runner::Observer;
use dfsbench_report::rate_si;
use dfsbench_result::PhaseResult;

/// How progress is shown.
enum Mode {
    /// A terminal: one line redrawn ten times a second.
    Live(ProgressBar),
    /// Not a terminal: a plain line every `every`, the next one due at `next` into the phase.
    Plain {
        every: Duration,
        next: Duration,
    },
    Off,
}

/// What the current phase will do: its time, or its operations in total.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Plan {
    Time(Duration),
    Ops(u64),
    Open,
}

/// The running totals of a phase at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Sample {
    elapsed: Duration,
    ops: u64,
    bytes: u64,
    errors: u64,
}

pub struct Progress {
    mode: Mode,
    label: String,
    plan: Plan,
    /// Samples of about the last second, for the rates "now".
    window: VecDeque<Sample>,
    quiet: bool,
}

impl Progress {
    /// `quiet`: nothing at all; `interval`: how often a plain line is printed when stderr is
    /// not a terminal (zero: never).
    pub fn new(quiet: bool, interval: Duration) -> Self {
        let mode = if quiet {
            Mode::Off
        } else if std::io::stderr().is_terminal() {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            bar.set_style(ProgressStyle::with_template("{spinner} {msg}").expect("valid template"));
            Mode::Live(bar)
        } else if interval.is_zero() {
            Mode::Off
        } else {
            Mode::Plain {
                every: interval,
                next: interval,
            }
        };
        Progress {
            mode,
            label: String::new(),
            plan: Plan::Open,
            window: VecDeque::new(),
            quiet,
        }
    }

    /// Print a line above the progress line (or plainly when there is none).
    pub fn println(&self, line: &str) {
        match &self.mode {
            Mode::Live(b) => b.println(line),
            _ => eprintln!("{line}"),
        }
    }

    pub fn finish(&self) {
        if let Mode::Live(b) = &self.mode {
            b.finish_and_clear();
        }
    }

    /// What clears the progress line while the run still holds this (a run that must end the
    /// process from inside: see `run::run`).
    pub fn clearer(&self) -> impl Fn() {
        let bar = match &self.mode {
            Mode::Live(b) => Some(b.clone()),
            _ => None,
        };
        move || {
            if let Some(b) = &bar {
                b.finish_and_clear();
            }
        }
    }
}

impl Observer for Progress {
    fn phase_started(&mut self, phase: &Phase, workers: usize) {
        self.label = format!("{} ({} workers)", phase.label, workers);
        if phase.prepare {
            self.label.push_str(" [unmeasured]");
        }
        self.plan = match (phase.duration, phase.ops_per_worker) {
            (Some(d), _) => Plan::Time(phase.ramp + d),
            (None, Some(n)) => Plan::Ops(n.saturating_mul(workers as u64)),
            (None, None) => Plan::Open,
        };
        self.window.clear();
        // The phase starts from nothing: the first line's rate "now" is its rate so far.
        self.window.push_back(Sample::default());
        match &mut self.mode {
            Mode::Live(b) => {
                b.set_message(self.label.clone());
                b.enable_steady_tick(Duration::from_millis(100));
            }
            Mode::Plain { every, next } => *next = *every,
            Mode::Off => {}
        }
    }

    fn tick(&mut self, elapsed: Duration, ops: u64, bytes: u64, errors: u64) {
        let now = Sample {
            elapsed,
            ops,
            bytes,
            errors,
        };
        self.window.push_back(now);
        while self.window.len() > 11 {
            self.window.pop_front();
        }
        let before = self.window.front().copied().unwrap_or_default();
        let text = line(&self.label, self.plan, before, now);
        match &mut self.mode {
            Mode::Live(b) => b.set_message(text),
            Mode::Plain { every, next } if elapsed >= *next => {
                eprintln!("dfsbench: {text}");
                // The next line is due a whole interval on, however late this one was.
                while *next <= elapsed {
                    *next += *every;
                }
            }
            _ => {}
        }
    }

    fn phase_finished(&mut self, r: &PhaseResult) {
        if matches!(self.mode, Mode::Live(_)) && !r.prepare {
            self.println(&format!(
                "  {:<24} {:>10} ops/s {:>9.1} MiB/s  {} errors",
                r.label,
                rate_si(r.ops_per_sec),
                r.bytes_per_sec / 1048576.0,
                r.errors.total
            ));
        }
    }

    fn waiting(&mut self, what: &str) {
        match &self.mode {
            Mode::Live(b) => b.set_message(what.to_string()),
            _ if !self.quiet => eprintln!("dfsbench: {what}"),
            _ => {}
        }
    }
}

/// The progress line: phase, elapsed / planned time or done / total operations with the
/// share done and the time left, operations and MiB per second over the last second ("now")
/// and since the phase started ("avg"), and errors.
fn line(label: &str, plan: Plan, before: Sample, now: Sample) -> String {
    let secs = now.elapsed.as_secs_f64();
    let per_sec = |v: u64, t: f64| if t > 0.0 { v as f64 / t } else { 0.0 };
    let dt = (now.elapsed.saturating_sub(before.elapsed)).as_secs_f64();
    let ops_now = per_sec(now.ops.saturating_sub(before.ops), dt);
    let mib_now = per_sec(now.bytes.saturating_sub(before.bytes), dt) / 1048576.0;
    let ops_avg = per_sec(now.ops, secs);
    let mib_avg = per_sec(now.bytes, secs) / 1048576.0;
    let done = match plan {
        Plan::Time(total) => {
            let t = total.as_secs_f64();
            let share = if t > 0.0 { (secs / t).min(1.0) } else { 1.0 };
            format!(
                "{secs:.1}/{t:.0}s {:.0}%  ETA {}  {} ops",
                share * 100.0,
                clock((t - secs).max(0.0)),
                now.ops
            )
        }
        Plan::Ops(total) => {
            let share = if total > 0 {
                (now.ops as f64 / total as f64).min(1.0)
            } else {
                1.0
            };
            let left = total.saturating_sub(now.ops);
            let eta = if left == 0 {
                clock(0.0)
            } else if ops_avg > 0.0 {
                clock(left as f64 / ops_avg)
            } else {
                "?".to_string()
            };
            format!("{}/{total} ops {:.0}%  {secs:.1}s  ETA {eta}", now.ops, share * 100.0)
        }
        Plan::Open => format!("{} ops  {secs:.1}s", now.ops),
    };
    format!(
        "{label}  {done}  {} ops/s now, {} avg  {:.1} MiB/s now, {:.1} avg  {} errors",
        rate_si(ops_now),
        rate_si(ops_avg),
        mib_now,
        mib_avg,
        now.errors
    )
}

/// Seconds as `4.2s`, `42s`, `3m05s` or `2h07m`.
fn clock(secs: f64) -> String {
    if secs < 9.95 {
        return format!("{secs:.1}s");
    }
    let s = secs.round() as u64;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: f64, ops: u64, bytes: u64) -> Sample {
        Sample {
            elapsed: Duration::from_secs_f64(secs),
            ops,
            bytes,
            errors: 2,
        }
    }

    #[test]
    fn time_based_line() {
        let l = line(
            "read 4 KiB (4 workers)",
            Plan::Time(Duration::from_secs(30)),
            at(9.0, 9000, 9 << 20),
            at(10.0, 11000, 11 << 20),
        );
        assert_eq!(
            l,
            "read 4 KiB (4 workers)  10.0/30s 33%  ETA 20s  11000 ops  2000 ops/s now, 1100 avg  2.0 MiB/s now, 1.1 avg  2 errors"
        );
    }

    #[test]
    fn count_based_line() {
        let l = line("create (2 workers)", Plan::Ops(4000), at(1.0, 500, 0), at(2.0, 1000, 0));
        assert_eq!(
            l,
            "create (2 workers)  1000/4000 ops 25%  2.0s  ETA 6.0s  500 ops/s now, 500 avg  0.0 MiB/s now, 0.0 avg  2 errors"
        );
        let done = line(
            "create (2 workers)",
            Plan::Ops(4000),
            at(7.0, 3900, 0),
            at(8.0, 4000, 0),
        );
        assert!(done.contains("4000/4000 ops 100%  8.0s  ETA 0.0s"), "{done}");
        let stuck = line("create (2 workers)", Plan::Ops(4000), at(0.0, 0, 0), at(0.1, 0, 0));
        assert!(stuck.contains("ETA ?"), "{stuck}");
    }

    #[test]
    fn open_ended_line() {
        let l = line("stat (1 workers)", Plan::Open, at(0.0, 0, 0), at(0.0, 0, 0));
        assert_eq!(
            l,
            "stat (1 workers)  0 ops  0.0s  0.0 ops/s now, 0.0 avg  0.0 MiB/s now, 0.0 avg  2 errors"
        );
    }

    #[test]
    fn clock_units() {
        assert_eq!(clock(4.24), "4.2s");
        assert_eq!(clock(42.4), "42s");
        assert_eq!(clock(185.0), "3m05s");
        assert_eq!(clock(7620.0), "2h07m");
    }
}
