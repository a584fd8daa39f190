//! `--ioengine auto`: before each io pattern, an unmeasured phase runs the pattern on every
//! worker's own file for a moment with each engine the backend offers, and the measured phase
//! then runs, on every worker, on the engine that moved the most blocks per second summed over
//! all workers (fio leaves the choice to the user; which engine wins depends on the file
//! system, the cache and the queue depth). Rank 0 makes that pick when it merges the probe
//! phase (part.rs) and hands it to every rank with the phase's end (`Kind::agreed`): workers that
//! picked alone could run different engines in one phase.
//!
//! Trial k of every worker (and rank) runs in the k-th window of the phase's clock, so that all
//! of them run the same engine at the same time, and each worker opens its file and fills its
//! buffers before its window opens. Before, a trial began with that setup (32 buffers of 1 MiB
//! to fill at queue depth 32): an async engine's trial issued one burst of 32 blocks or none,
//! late in its time, and workers' trials of different engines overlapped. With 2 workers on
//! 1 MiB O_DIRECT writes at QD 32 the probe ranked libaio at 11.9-13.2k blocks/s, which then
//! ran at 5.8-6.9k while psync ran at 9.5-9.9k.

use std::cell::RefCell;
use std::sync::Mutex;
use std::time::Duration;

use dfsbench_backends::clock::Instant;
use dfsbench_backends::{Client, IoEngine};
use dfsbench_result::median;

use crate::load::sleep_until;
use crate::stats::{series_of, Latencies, Live, Recorder};
use crate::worker::{JobContext, Worker};
use crate::workloads::shared::RW_CLASSES;

use super::engine::{open_io, run_io};
use super::{io_file, IoJob, Rw, Stint};

/// How long each candidate runs in all: long enough for thousands of cached 4 KiB operations
/// and several round trips of a disk, short beside any measured phase. With the pauses between
/// trials ([`SETTLE`]) the probe phase lasts about 0.9 s.
pub(super) const PROBE_TIME: Duration = Duration::from_millis(150);

/// Trials per engine, [`PROBE_TIME`] split evenly between them. The engines take turns, one
/// trial each per round, so that a moment of CPU load or write-back falls on all of them alike
/// rather than on one engine's single long trial; each engine's figure is the median of its
/// trials, which one unlucky (or lucky) trial does not move.
pub(super) const ROUNDS: usize = 6;

/// The engines tried. Round r starts at the r-th of them (modulo their count): each goes first
/// equally often, and the first trial after the layout (its write-back, a cold device) is not
/// always the same engine's.
pub(super) const CANDIDATES: [IoEngine; 3] = [IoEngine::Psync, IoEngine::Libaio, IoEngine::IoUring];

/// How long one trial issues blocks.
const TRIAL: Duration = Duration::from_millis(PROBE_TIME.as_millis() as u64 / ROUNDS as u64);

/// The gap before each window opens: the requests still in flight at the last window's end
/// complete in it (a queue of 32 MiB written to a disk at a few hundred MB/s takes tens of ms)
/// rather than during another engine's trial, and the next trial's setup runs in it.
const SETTLE: Duration = TRIAL;

/// Run `rw` for [`PROBE_TIME`] on each candidate engine and note every figure in `rec` (the
/// probe phase's result, where they are summed over the workers into the pick); returns them
/// for the measured phase to record again. A candidate that moves nothing, or that the backend runs on another
/// engine, gets no figure.
pub(super) async fn probe_engines<C: Client>(
    w: &mut Worker<C>,
    ctx: &JobContext,
    io: &IoJob,
    rw: Rw,
    rec: &mut Recorder<'_>,
) -> Vec<(IoEngine, f64)> {
    let mut rates: Vec<(IoEngine, Vec<f64>)> = Vec::new();
    let phase_start = rec.ctl().start;
    for round in 0..ROUNDS {
        for i in 0..CANDIDATES.len() {
            let engine = CANDIDATES[(round + i) % CANDIDATES.len()];
            let opens = phase_start + SETTLE + (TRIAL + SETTLE) * (round * CANDIDATES.len() + i) as u32;
            if let Some(rate) = probe_trial(w, ctx, io, rw, engine, opens, rec).await {
                match rates.iter_mut().find(|(e, _)| *e == engine) {
                    Some((_, r)) => r.push(rate),
                    None => rates.push((engine, vec![rate])),
                }
            }
        }
    }
    let figures: Vec<(IoEngine, f64)> = rates.into_iter().map(|(e, r)| (e, median(&r))).collect();
    rec.note_probe(&figures);
    figures
}

/// One trial of `engine`, issuing blocks in the window that `opens` then: blocks per second,
/// or None when it moved nothing or the backend ran it on another engine. A trial whose
/// setup ends late (the last one's requests took longer than [`SETTLE`]) still ends with
/// its window, with every other worker's.
async fn probe_trial<C: Client>(
    w: &mut Worker<C>,
    ctx: &JobContext,
    io: &IoJob,
    rw: Rw,
    engine: IoEngine,
    opens: Instant,
    rec: &mut Recorder<'_>,
) -> Option<f64> {
    // The measured phase drops the file's cached pages before it reads: so does each trial,
    // or the engines would be ranked on reads the measured phase does not do.
    if ctx.invalidate && rw.reads() {
        let _ = w.client.invalidate(&io_file(ctx.job_index, io, w.id)).await;
    }
    let ctl = rec.ctl().private(opens + TRIAL);
    let live = Live::default();
    // Its latencies are thrown away with it.
    let series = RefCell::new(series_of(&ctl));
    let latencies = Mutex::new(Latencies::new(1, RW_CLASSES.len()));
    let mut trial = Recorder::new(w.id, RW_CLASSES, &ctl, &live, &series, &latencies);
    // Opened and filled before its window opens, as the measured phase's file is before
    // the phase starts; then it runs until the window closes.
    let opened = open_io(w, ctx, io, rw, engine).await;
    if sleep_until(opens, &ctl, w.alone).await {
        run_io(w, ctx, io, rw, opened, Stint::Timed, Default::default(), &mut trial).await;
    }
    let out = trial.finish();
    rec.busy_until(out.last_end.unwrap_or_else(Instant::now));
    let ops: u64 = out.classes.iter().map(|c| c.ops).sum();
    let span = match (out.first_start, out.last_end) {
        (Some(a), Some(b)) => b.saturating_duration_since(a).as_secs_f64(),
        _ => 0.0,
    };
    // Errors (a mismatch of --verify included) end the trial early; the rate of what
    // succeeded before still ranks the engine.
    (out.engine.map(|(e, _)| e) == Some(engine) && ops > 0 && span > 0.0).then(|| ops as f64 / span)
}
