//! The exact merge of the ranks' parts of one phase into the phase result (part.rs has the
//! parts themselves); and the engine `auto` runs on after a probe, from the summed figures.

use std::collections::BTreeMap;

use dfsbench_backends::IoEngine;
use hdrhistogram::Histogram;

use crate::cluster::Member;
use crate::job::Job;
use crate::plan::Phase;
use crate::stats::{merge_errors, merge_histograms, SERIES_INTERVAL};
use dfsbench_result::histogram::{latency, new_histogram};
use dfsbench_result::{
    Accelerator, Cpu, EndpointResult, Errors, NodeSummary, OpKind, PhaseResult, ProcessSummary, Queue, RateResult,
    Series, Steady, Stonewall, TrainResult, Verify, WorkerSummary,
};

use super::{probe_sums, quantile, rate, EndpointPart, Merger, RankLine, RankPart};

/// How much more an engine must move than psync to be picked over it: psync is the plainest path
/// (one system call per block, no ring or context to keep, fio's default) and costs the least
/// CPU per block where the others are not faster; a smaller lead is within the probe's noise on
/// a busy machine.
const PSYNC_MARGIN: f64 = 0.05;

/// The engine `auto` runs on after a probe: the one with the most blocks per second summed
/// over every worker, so that all of them run the same, unless psync is within
/// [`PSYNC_MARGIN`] of it.
pub(super) fn probe_pick(sums: &BTreeMap<String, f64>) -> Option<&String> {
    let best = sums.iter().max_by(|a, b| a.1.total_cmp(b.1))?;
    match sums.get_key_value(IoEngine::Psync.name()) {
        Some((psync, rate)) if rate * (1.0 + PSYNC_MARGIN) >= *best.1 => Some(psync),
        _ => Some(best.0),
    }
}

/// Merge the ranks' parts of one phase exactly, from what `merger` added up: their parts one
/// by one (a flat merge) or their tree children's subtotals. `ranks` is the size of the group
/// (parts may be fewer when a rank was lost); `run_start_s` is the run's start on the common
/// clock. Parts that could not be read are left out (`merger.unreadable` says which).
pub(crate) fn combine(
    phase: &Phase,
    job: &Job,
    merger: &mut Merger,
    ranks: usize,
    members: &[Member],
    run_start_s: f64,
    stall_threshold_s: f64,
) -> PhaseResult {
    merger.ranks.sort_by_key(|l| l.part.rank);
    let lines = &merger.ranks;
    let parts: Vec<&RankPart> = lines.iter().map(|l| &l.part).collect();
    let min = |it: &mut dyn Iterator<Item = f64>| it.fold(f64::INFINITY, f64::min);
    let max = |it: &mut dyn Iterator<Item = f64>| it.fold(f64::NEG_INFINITY, f64::max);
    let start = min(&mut parts.iter().map(|p| p.start_s));
    // Every rank leaves the same barrier: the phase starts when the first one does.
    let measured_from = min(&mut parts.iter().map(|p| p.measured_from_s));
    let last_end = max(&mut parts.iter().filter_map(|p| p.end_s)).max(measured_from);
    let duration = (last_end - measured_from).max(0.0);

    let mut classes = std::mem::take(&mut merger.classes).into_iter();
    let kinds: Vec<(&str, Histogram<u64>, u64, u64)> = phase
        .classes
        .iter()
        .map(|name| {
            let (hist, ops, bytes) = classes.next().unwrap_or_else(|| (new_histogram(), 0, 0));
            (*name, hist, ops, bytes)
        })
        .collect();
    let all = merge_histograms(kinds.iter().map(|k| &k.1));
    let ops: u64 = kinds.iter().map(|k| k.2).sum();
    let bytes: u64 = kinds.iter().map(|k| k.3).sum();
    let ops_by_kind = ops_by_kind(&kinds, duration);
    let endpoints = endpoint_totals(std::mem::take(&mut merger.endpoints), duration);

    // Stonewall, as IOR: from the common start (the barrier every rank leaves) to the moment
    // the first worker of any rank finished, counting what each had finished by then.
    let first_done = min(&mut parts.iter().filter_map(|p| p.first_done_s));
    let first_done = if first_done.is_finite() { first_done } else { last_end };
    let sw_duration = (first_done - measured_from).max(0.0);
    let sw_ops: u64 = parts.iter().map(|p| p.stonewall_ops).sum();
    let sw_bytes: u64 = parts.iter().map(|p| p.stonewall_bytes).sum();

    let ttfb = merger.ttfb.as_ref().map(latency);
    let rate_result = phase.rate.map(|r| RateResult {
        requested_ops_per_sec: r,
        achieved_ops_per_sec: rate(ops, duration),
        arrival: phase.arrival.name().to_string(),
        service_latency: latency(&merger.service.take().unwrap_or_else(new_histogram)),
    });
    let steady = steady(phase, &parts);
    let mut params = phase.params.clone();
    let probe = probe_sums(parts.iter().flat_map(|p| p.probe.clone()));
    // A probe phase runs no engine of its own: it names the one the measured phase will run.
    if let Some(engine) = parts
        .iter()
        .find_map(|p| p.engine.as_ref())
        .or_else(|| probe_pick(&probe))
    {
        params.insert("ioengine".into(), serde_json::json!(engine));
    }
    if !probe.is_empty() {
        params.insert("ioengine_probe".into(), serde_json::json!(probe));
    }
    // What the engine of a phase that ran one really kept in flight.
    let queue = parts.iter().find_map(|p| {
        Some(Queue {
            engine: p.engine.clone()?,
            depth: p.queue_depth?,
        })
    });
    let mut errors = Errors::default();
    for p in &parts {
        merge_errors(&mut errors, p.errors.clone());
    }
    let verify = Verify {
        checked_bytes: parts.iter().map(|p| p.verified_bytes).sum(),
        mismatches: parts.iter().map(|p| p.mismatches).sum(),
    };
    let series = with_interval(std::mem::take(&mut merger.series));
    let fine_series = merger.fine_series.take().map(with_interval);
    let stalls = parts
        .iter()
        .map(|p| p.quiet.as_ref())
        .collect::<Option<Vec<_>>>()
        .and_then(|all| all.into_iter().cloned().reduce(|a, b| a.intersect(&b)))
        .map(|q| q.stalls(start, last_end, stall_threshold_s, run_start_s));
    let cpu_user: f64 = parts.iter().map(|p| p.cpu_user_s).sum();
    let cpu_sys: f64 = parts.iter().map(|p| p.cpu_sys_s).sum();
    let wall = (last_end - start).max(0.0);
    let mut detail: Vec<WorkerSummary> = parts.iter().flat_map(|p| p.workers.iter().cloned()).collect();
    detail.sort_by_key(|w| w.worker);
    let train = train_result(phase, &detail, merger.wait.take(), duration);

    let (mut processes, mut nodes) = (Vec::new(), Nodes::default());
    if ranks > 1 {
        for line in lines {
            let process = process_summary(line, members, run_start_s);
            let p = &line.part;
            nodes.add(&process, (p.measured_from_s, p.end_s.unwrap_or(p.measured_from_s)));
            processes.push(process);
        }
    }
    let nodes = nodes.finish(std::mem::take(&mut merger.hosts));
    PhaseResult {
        name: phase.name.to_string(),
        label: phase.label.clone(),
        job: phase.job,
        job_name: job.name.clone(),
        workload: job.workload.name().to_string(),
        params,
        prepare: phase.prepare,
        workers: job.workers * ranks,
        threads: parts.iter().map(|p| p.threads).sum(),
        start_s: (start - run_start_s).max(0.0),
        duration_s: duration,
        ramp_s: phase.ramp.as_secs_f64(),
        ops,
        bytes,
        items: parts.iter().map(|p| p.items).sum(),
        ops_per_sec: rate(ops, duration),
        bytes_per_sec: rate(bytes, duration),
        errors,
        stonewall: Stonewall {
            duration_s: sw_duration,
            ops: sw_ops,
            bytes: sw_bytes,
            ops_per_sec: rate(sw_ops, sw_duration),
            bytes_per_sec: rate(sw_bytes, sw_duration),
        },
        latency: latency(&all),
        ttfb,
        retries: parts.iter().map(|p| p.retries).sum(),
        ops_by_kind,
        endpoints,
        series,
        fine_series,
        // An epoch's readers rest by design while their accelerator has its batches: gaps
        // without a completion are the workload's, not the storage's.
        stalls: stalls.filter(|_| train.is_none()),
        cpu: Cpu {
            user_s: cpu_user,
            sys_s: cpu_sys,
            cores: if wall > 0.0 { (cpu_user + cpu_sys) / wall } else { 0.0 },
        },
        server_cpu: parts.iter().find_map(|p| p.server_cpu.clone()),
        workers_detail: detail,
        processes,
        nodes,
        // Set by the runner, which times the gathering.
        gather: None,
        rate: rate_result,
        steady,
        verify: (verify.checked_bytes > 0 || verify.mismatches > 0).then_some(verify),
        // Set by the runner and the session, which know the cache policy and the null tests.
        cache: None,
        cache_suspect: Vec::new(),
        validity: Vec::new(),
        queue,
        train,
    }
}

/// An epoch's figures over its emulated accelerators, when the phase's workers were ones
/// (train epochs): their sums, AU from the summed compute and wait times, and the exact
/// histogram of their waits.
fn train_result(
    phase: &Phase,
    detail: &[WorkerSummary],
    wait: Option<Histogram<u64>>,
    duration: f64,
) -> Option<TrainResult> {
    let accelerators: Vec<Accelerator> = detail.iter().filter_map(|w| w.accelerator).collect();
    if accelerators.is_empty() {
        return None;
    }
    let total = accelerators.iter().fold(Accelerator::default(), |a, b| a.plus(*b));
    let aus = accelerators.iter().map(Accelerator::au);
    let threshold = phase
        .params
        .get("au_threshold")
        .and_then(serde_json::Value::as_f64)
        .unwrap_or(0.0);
    let au = total.au();
    Some(TrainResult {
        accelerators: accelerators.len() as u64,
        total,
        au,
        au_min: aus.clone().fold(f64::INFINITY, f64::min),
        au_max: aus.fold(0.0, f64::max),
        samples_per_sec: rate(total.samples, duration),
        bytes_per_sec: rate(total.bytes, duration),
        au_threshold: threshold,
        meets_threshold: au >= threshold,
        wait: latency(&wait.unwrap_or_else(new_histogram)),
    })
}

/// Figures per kind of operation, when more than one kind occurred.
fn ops_by_kind(kinds: &[(&str, Histogram<u64>, u64, u64)], duration: f64) -> Vec<OpKind> {
    let active: Vec<_> = kinds.iter().filter(|k| k.2 > 0).collect();
    if active.len() < 2 {
        return Vec::new();
    }
    active
        .iter()
        .map(|(name, hist, ops, bytes)| OpKind {
            op: name.to_string(),
            ops: *ops,
            bytes: *bytes,
            ops_per_sec: rate(*ops, duration),
            bytes_per_sec: rate(*bytes, duration),
            latency: latency(hist),
        })
        .collect()
}

/// The ranks' per-gateway sums, in the order the flat merge met them (rank by rank, each in
/// the order the target names them).
fn endpoint_totals(mut by: Vec<((usize, usize), EndpointPart, Histogram<u64>)>, duration: f64) -> Vec<EndpointResult> {
    by.sort_by_key(|(first, _, _)| *first);
    by.into_iter()
        .map(|(_, e, h)| EndpointResult {
            endpoint: e.endpoint,
            workers: e.workers,
            ops: e.ops,
            bytes: e.bytes,
            errors: e.errors,
            ops_per_sec: rate(e.ops, duration),
            bytes_per_sec: rate(e.bytes, duration),
            latency: latency(&h),
        })
        .collect()
}

/// The steady-state verdict: each process judges its own throughput, and the phase is steady
/// once every one of them is.
fn steady(phase: &Phase, parts: &[&RankPart]) -> Option<Steady> {
    let stable_at = parts
        .iter()
        .map(|p| p.stable_at_s)
        .try_fold(0.0f64, |at, s| s.map(|s| at.max(s)));
    phase.stable.map(|s| Steady {
        band: s.band,
        window_s: s.window.as_secs_f64(),
        stable: stable_at.is_some(),
        stable_at_s: stable_at,
    })
}

/// A merged series; one no rank set the interval of is a 1 s series.
fn with_interval(mut series: Series) -> Series {
    if series.interval_s == 0.0 {
        series.interval_s = SERIES_INTERVAL.as_secs_f64();
    }
    series
}

/// What one rank did in a phase.
fn process_summary(line: &RankLine, members: &[Member], run_start_s: f64) -> ProcessSummary {
    let p = &line.part;
    let ops: u64 = p.classes.iter().map(|c| c.ops).sum();
    let bytes: u64 = p.classes.iter().map(|c| c.bytes).sum();
    let end = p.end_s.unwrap_or(p.measured_from_s);
    let dur = (end - p.measured_from_s).max(0.0);
    ProcessSummary {
        rank: p.rank,
        host: members.get(p.rank).map_or_else(|| "?".to_string(), |m| m.host.clone()),
        pid: members.get(p.rank).map_or(0, |m| m.pid),
        workers: p.workers.len(),
        ops,
        bytes,
        errors: p.errors.total,
        start_s: p.start_s - run_start_s,
        end_s: end - run_start_s,
        duration_s: dur,
        ops_per_sec: rate(ops, dur),
        bytes_per_sec: rate(bytes, dur),
        p50_ns: line.p50_ns,
        p99_ns: line.p99_ns,
        max_ns: line.max_ns,
    }
}

/// The hosts of a phase, in the order their first rank appears.
#[derive(Default)]
struct Nodes {
    index: BTreeMap<String, usize>,
    /// Each host's sums so far and the earliest start and latest end of its processes (common
    /// clock).
    all: Vec<(NodeSummary, f64, f64)>,
}

impl Nodes {
    /// Add one process: `span` is when its measurement began and ended, on the common clock.
    fn add(&mut self, p: &ProcessSummary, span: (f64, f64)) {
        let at = *self.index.entry(p.host.clone()).or_insert_with(|| {
            let node = NodeSummary {
                host: p.host.clone(),
                ranks: Vec::new(),
                ops: 0,
                bytes: 0,
                errors: 0,
                duration_s: 0.0,
                ops_per_sec: 0.0,
                bytes_per_sec: 0.0,
                p50_ns: 0,
                p99_ns: 0,
                max_ns: 0,
            };
            self.all.push((node, f64::INFINITY, f64::NEG_INFINITY));
            self.all.len() - 1
        });
        let (node, from, to) = &mut self.all[at];
        node.ranks.push(p.rank);
        node.ops += p.ops;
        node.bytes += p.bytes;
        node.errors += p.errors;
        *from = from.min(span.0);
        *to = to.max(span.1);
    }

    /// The hosts' summaries; `hists` holds each host's histogram of every operation.
    fn finish(self, hists: Vec<(String, usize, Histogram<u64>)>) -> Vec<NodeSummary> {
        let mut hists: BTreeMap<String, Histogram<u64>> = hists.into_iter().map(|(h, _, hist)| (h, hist)).collect();
        self.all
            .into_iter()
            .map(|(node, from, to)| {
                let hist = hists.remove(&node.host).unwrap_or_else(new_histogram);
                let dur = (to - from).max(0.0);
                NodeSummary {
                    duration_s: dur,
                    ops_per_sec: rate(node.ops, dur),
                    bytes_per_sec: rate(node.bytes, dur),
                    p50_ns: quantile(&hist, 0.5),
                    p99_ns: quantile(&hist, 0.99),
                    max_ns: hist.max(),
                    ..node
                }
            })
            .collect()
    }
}
