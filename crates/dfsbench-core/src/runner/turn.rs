//! One worker's turn in a phase: set up before the phase's clock starts, then run to its end,
//! through the job's workload.

use std::cell::RefCell;
use std::sync::Mutex;

use dfsbench_backends::Client;

use crate::load::Pacer;
use crate::stats::{Buckets, Latencies, Live, PhaseControl, Recorder, WorkerPhase};
use crate::worker::{JobContext, Worker};
use crate::workloads::{self, Phase, Workload};

/// Get a worker ready for a phase before its clock starts: whose data it reads (its own, or
/// with --shuffle another rank's: `source`), what the ranks agreed on after the last phase,
/// and what the workload sets up beforehand.
pub(super) async fn prepare<C: Client>(
    worker: &mut Worker<C>,
    workload: &Workload,
    ctx: &JobContext,
    phase: &Phase,
    source: Option<(usize, Vec<u64>)>,
    agreed: Option<serde_json::Value>,
) {
    (worker.src, worker.src_existing) = source.unwrap_or_else(|| (worker.id, worker.existing.clone()));
    worker.agreed = agreed;
    workloads::prepare_step(workload, worker, ctx, phase.op).await;
}

/// Run one phase, prepared by [`prepare`], to its end and return what was measured:
/// latencies into `latencies`, completions into `series`, the carrying thread's.
#[allow(clippy::too_many_arguments)]
pub(super) async fn run<C: Client>(
    worker: &mut Worker<C>,
    workload: &Workload,
    ctx: &JobContext,
    phase: &Phase,
    ctl: &PhaseControl,
    live: &Live,
    series: &RefCell<Buckets>,
    latencies: &Mutex<Latencies>,
) -> WorkerPhase {
    let mut rec = Recorder::new(worker.id, phase.classes, ctl, live, series, latencies);
    worker.pacer = phase.rate.map(|r| {
        // The rate is the total over every worker of every process.
        let workers = ctx.total_workers;
        rec.measure_service();
        Pacer::new(
            ctl.start,
            r / workers as f64,
            phase.arrival,
            worker.id,
            workers,
            ctx.seed,
            worker.alone,
        )
    });
    worker.paced_out = false;
    workloads::run_step(workload, worker, ctx, phase.op, phase.until, &mut rec).await;
    // An open loop stopped because its next arrival falls after the phase's end is idle until
    // that end, not done: its rate is its operations over the phase's time, as fio's is over
    // runtime (a pace sparser than the phase would otherwise report its few operations' rate).
    if let Some(end) = ctl.deadline.filter(|_| worker.paced_out) {
        if crate::load::sleep_until(end, ctl, worker.alone).await {
            rec.busy_until(end);
        }
    }
    let mut out = rec.finish();
    out.existing = worker.existing.clone();
    out.read_from = (worker.src != worker.id).then_some(worker.src);
    out
}
