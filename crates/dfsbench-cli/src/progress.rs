//! The live progress line on stderr, shown only when stderr is a terminal.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use dfsbench_core::plan::Phase;
use dfsbench_core::runner::Observer;
use dfsbench_report::rate_si;
use dfsbench_result::PhaseResult;

pub struct Progress {
    bar: Option<ProgressBar>,
    label: String,
    /// (elapsed, ops) about one second ago, for the current rate.
    window: std::collections::VecDeque<(Duration, u64)>,
    quiet: bool,
}

impl Progress {
    pub fn new(quiet: bool) -> Self {
        let show = !quiet && std::io::stderr().is_terminal();
        let bar = show.then(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            bar.set_style(ProgressStyle::with_template("{spinner} {msg}").expect("valid template"));
            bar
        });
        Progress {
            bar,
            label: String::new(),
            window: Default::default(),
            quiet,
        }
    }

    /// Print a line above the progress line (or plainly when there is none).
    pub fn println(&self, line: &str) {
        match &self.bar {
            Some(b) => b.println(line),
            None => eprintln!("{line}"),
        }
    }

    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

impl Observer for Progress {
    fn phase_started(&mut self, phase: &Phase, workers: usize) {
        self.label = format!("{} ({} workers)", phase.label, workers);
        if phase.prepare {
            self.label.push_str(" [unmeasured]");
        }
        self.window.clear();
        if let Some(b) = &self.bar {
            b.set_message(self.label.clone());
            b.enable_steady_tick(Duration::from_millis(100));
        }
    }

    fn tick(&mut self, elapsed: Duration, ops: u64, _bytes: u64, errors: u64) {
        let Some(bar) = &self.bar else { return };
        self.window.push_back((elapsed, ops));
        while self.window.len() > 11 {
            self.window.pop_front();
        }
        let (t0, o0) = self.window.front().copied().unwrap_or_default();
        let dt = (elapsed - t0).as_secs_f64();
        let now = if dt > 0.0 { (ops - o0) as f64 / dt } else { 0.0 };
        bar.set_message(format!(
            "{}  {:.1}s  {} ops  {} ops/s now  {} errors",
            self.label,
            elapsed.as_secs_f64(),
            ops,
            rate_si(now),
            errors
        ));
    }

    fn phase_finished(&mut self, r: &PhaseResult) {
        if self.bar.is_some() && !r.prepare {
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
        if let Some(b) = &self.bar {
            b.set_message(what.to_string());
        } else if !self.quiet {
            eprintln!("dfsbench: {what}");
        }
    }
}
