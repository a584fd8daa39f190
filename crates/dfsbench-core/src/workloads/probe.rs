//! `--ioengine auto`: before each io pattern, an unmeasured phase runs the pattern on every
//! worker's own file for a moment with each engine the backend offers, and the measured phase
//! then runs, on every worker, on the engine that moved the most blocks per second summed over
//! all workers (fio leaves the choice to the user; which engine wins depends on the file
//! system, the cache and the queue depth). Rank 0 makes that pick when it merges the probe
//! phase (part.rs) and hands it to every rank with the phase's end (runner.rs): workers that
//! picked alone could run different engines in one phase.

use std::cell::RefCell;
use std::sync::Mutex;
use std::time::Duration;

use dfsbench_backends::clock::Instant;
use dfsbench_backends::{Client, IoEngine};

use crate::stats::{series_of, Latencies, Live, Recorder};
use crate::worker::{JobContext, Worker};
use crate::workloads::io::{io_file, IoJob, Rw};
use crate::workloads::shared::RW_CLASSES;

/// How long each candidate runs in all: long enough for thousands of cached 4 KiB operations
/// and several round trips of a disk, short beside any measured phase.
pub const PROBE_TIME: Duration = Duration::from_millis(150);

/// The engines tried, in this order and then in reverse, half of [`PROBE_TIME`] each time: the
/// first trial runs right after the layout (its write-back, a cold device) and a fixed order
/// would always hand that to one engine. Each engine's figure is its better half.
pub const CANDIDATES: [IoEngine; 3] = [IoEngine::Psync, IoEngine::Libaio, IoEngine::IoUring];

impl<C: Client> Worker<C> {
    /// Run `rw` for [`PROBE_TIME`] on each candidate engine and note every figure in `rec` (the
    /// probe phase's result, where they are summed over the workers into the pick) and for the
    /// measured phase. A candidate that moves nothing, or that the backend runs on another
    /// engine, gets no figure.
    pub(super) async fn probe_engines(&mut self, ctx: &JobContext<'_>, io: &IoJob, rw: Rw, rec: &mut Recorder<'_>) {
        let mut figures: Vec<(IoEngine, f64)> = Vec::new();
        // The measured phase drops the file's cached pages before it reads: so does each trial,
        // or the engines would be ranked on reads the measured phase does not do.
        let path = (ctx.config.invalidate && rw.reads()).then(|| io_file(ctx.job_index, io, self.id));
        for engine in CANDIDATES.into_iter().chain(CANDIDATES.into_iter().rev()) {
            if let Some(path) = &path {
                let _ = self.client.invalidate(path).await;
            }
            let ctl = rec.ctl().private(PROBE_TIME / 2);
            let live = Live::default();
            // Its latencies are thrown away with it.
            let series = RefCell::new(series_of(&ctl));
            let latencies = Mutex::new(Latencies::new(1, RW_CLASSES.len()));
            let mut trial = Recorder::new(self.id, RW_CLASSES, &ctl, &live, &series, &latencies);
            self.run_io(ctx, io, rw, engine, true, &mut trial).await;
            let out = trial.finish();
            rec.busy_until(out.last_end.unwrap_or_else(Instant::now));
            let ops: u64 = out.classes.iter().map(|c| c.ops).sum();
            let span = match (out.first_start, out.last_end) {
                (Some(a), Some(b)) => b.saturating_duration_since(a).as_secs_f64(),
                _ => 0.0,
            };
            // Errors (a mismatch of --verify included) end the trial early; the rate of what
            // succeeded before still ranks the engine.
            if out.engine == Some(engine) && ops > 0 && span > 0.0 {
                let rate = ops as f64 / span;
                match figures.iter_mut().find(|(e, _)| *e == engine) {
                    Some((_, best)) => *best = best.max(rate),
                    None => figures.push((engine, rate)),
                }
            }
        }
        rec.note_probe(&figures);
        self.probe_figures = figures;
    }
}
