//! One rank's measurements of a phase, as sent to rank 0, and their exact merge into the phase
//! result. A solo run is a group of one and goes the same way.
//!
//! Histograms travel in their serialized V2 form and are merged, never averaged; times are on
//! the common clock (seconds after rank 0's start), so windows of different ranks compare.

use dfsbench_backends::clock::Instant;
use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

mod combine;
mod subtotal;
use crate::faults::stalls::Quiet;
use crate::host::CpuSample;
use crate::stats::{
    coarsen, merge_errors, merge_histograms, Buckets, Latencies, PhaseControl, Rereads, WorkerPhase,
    FINE_SERIES_INTERVAL, SERIES_INTERVAL,
};
pub(crate) use combine::combine;
use dfsbench_result::histogram::{deserialize, new_histogram, serialize};
use dfsbench_result::{Errors, Series, ServerCpu, WorkerSummary};
pub(crate) use subtotal::{Merger, RankLine, Subtotal};

/// Cookies of HdrHistogram's V2 format with DEFLATE (what [`serialize`] writes) and of the
/// plain V2 inside it.
const V2_DEFLATE_COOKIE: u32 = 0x1c84_9314;
const V2_COOKIE: u32 = 0x1c84_9313;
/// The V2 header: cookie, payload length, normalizing offset, digits, low, high, ratio.
const V2_HEADER: usize = 40;

/// A histogram another rank sent. The V2 header says how much to allocate, and it comes from
/// the sender: it is checked first (this program's bounds, a payload no longer than such a
/// histogram can need), so garbage is an error, never an allocation of what it claims, and
/// merging it cannot fail.
pub(crate) fn peer_histogram(text: &str) -> Result<Histogram<u64>, String> {
    use base64::Engine as _;
    use std::io::Read as _;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|e| format!("a histogram is not base64: {e}"))?;
    let be32 = |b: &[u8], at: usize| {
        b.get(at..at + 4)
            .map(|s| u32::from_be_bytes(s.try_into().expect("4 bytes")))
    };
    let be64 = |b: &[u8], at: usize| {
        b.get(at..at + 8)
            .map(|s| u64::from_be_bytes(s.try_into().expect("8 bytes")))
    };
    if be32(&bytes, 0) != Some(V2_DEFLATE_COOKIE) {
        return Err("a histogram is not HdrHistogram V2 with DEFLATE".into());
    }
    let mut inner = [0u8; V2_HEADER];
    flate2::read::ZlibDecoder::new(bytes.get(8..).unwrap_or_default())
        .read_exact(&mut inner)
        .map_err(|e| format!("a histogram's header does not inflate: {e}"))?;
    let want = new_histogram();
    // The longest encoding of a count is 9 bytes.
    let most = want.distinct_values() as u64 * 9;
    let fits = be32(&inner, 0) == Some(V2_COOKIE)
        && be32(&inner, 4).is_some_and(|n| u64::from(n) <= most)
        && be32(&inner, 12) == Some(u32::from(want.sigfig()))
        && be64(&inner, 16) == Some(want.low())
        && be64(&inner, 24) == Some(want.high());
    if !fits {
        return Err(format!(
            "a histogram has other bounds or length than this program's ({}..{} ns, {} digits)",
            want.low(),
            want.high(),
            want.sigfig()
        ));
    }
    deserialize(text)
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct ClassPart {
    pub ops: u64,
    pub bytes: u64,
    pub hist: String,
}

/// What one rank's workers of one gateway measured (targets with several endpoints).
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct EndpointPart {
    pub endpoint: String,
    pub workers: usize,
    pub ops: u64,
    pub bytes: u64,
    pub errors: u64,
    pub hist: String,
}

/// Per engine, the sum of the probe figures (the workers probed side by side).
fn probe_sums(figures: impl Iterator<Item = (String, f64)>) -> BTreeMap<String, f64> {
    let mut sums = BTreeMap::new();
    for (engine, v) in figures {
        *sums.entry(engine).or_insert(0.0) += v;
    }
    sums
}

/// What one rank measured in one phase.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct RankPart {
    pub rank: usize,
    pub threads: usize,
    /// When this rank left the start barrier, and when its measurement began (after ramp-up).
    pub start_s: f64,
    pub measured_from_s: f64,
    /// End of its last operation.
    pub end_s: Option<f64>,
    /// When its stonewall was set: its own first worker done, or another rank's notice.
    pub first_done_s: Option<f64>,
    pub classes: Vec<ClassPart>,
    pub ttfb: Option<String>,
    /// Service time (actual start to end) of a paced phase.
    pub service: Option<String>,
    /// The emulated accelerators' waits for their batches (train epochs).
    #[serde(default)]
    pub wait: Option<String>,
    /// When this rank's throughput became steady (seconds after its phase start).
    pub stable_at_s: Option<f64>,
    pub errors: Errors,
    pub items: u64,
    pub retries: u64,
    #[serde(default)]
    pub rereads: Rereads,
    pub verified_bytes: u64,
    pub mismatches: u64,
    pub engine: Option<String>,
    /// Requests the engine kept in flight per worker.
    #[serde(default)]
    pub queue_depth: Option<u64>,
    /// Blocks per second of each engine `auto` probed, summed over this rank's workers.
    #[serde(default)]
    pub probe: BTreeMap<String, f64>,
    pub stonewall_ops: u64,
    pub stonewall_bytes: u64,
    pub series: Series,
    /// The 100 ms series, in runs with faults.
    pub fine_series: Option<Series>,
    /// When none of this rank's workers completed an operation (closed-loop phases).
    pub quiet: Option<Quiet>,
    pub cpu_user_s: f64,
    pub cpu_sys_s: f64,
    /// The watched server processes' CPU (rank 0 only); `cores` is set when merged.
    pub server_cpu: Option<ServerCpu>,
    pub workers: Vec<WorkerSummary>,
    /// Per gateway, when the target has several.
    #[serde(default)]
    pub endpoints: Vec<EndpointPart>,
    /// Files each worker has after the phase, per file set, by global worker index.
    pub existing: Vec<(usize, Vec<u64>)>,
    pub interrupted: bool,
    pub aborted: bool,
    /// Operations still inside the storage when the runner stopped waiting for them (their
    /// threads stuck in a system call): counted as timeouts, and the run ends.
    #[serde(default)]
    pub stuck: u64,
}

fn rate(n: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        n as f64 / seconds
    } else {
        0.0
    }
}

fn quantile(hist: &Histogram<u64>, q: f64) -> u64 {
    if hist.is_empty() {
        0
    } else {
        hist.value_at_quantile(q)
    }
}

/// The watched servers' CPU between two samples: summed over the processes seen in both, and
/// over those started in between (a restarted daemon), whose whole CPU falls in the phase. One
/// gone by the end is left out: its CPU until it ended is lost.
fn server_cpu(cpu0: &CpuSample, cpu1: &CpuSample) -> Option<ServerCpu> {
    if cpu0.servers.is_empty() && cpu1.servers.is_empty() {
        return None;
    }
    let at_end = |pid: u32| cpu1.servers.iter().find(|(p, _)| *p == pid).and_then(|(_, s)| *s);
    let mut sum = ServerCpu::default();
    let mut add = |(user, sys): (f64, f64)| {
        sum.user_s += user;
        sum.sys_s += sys;
    };
    let mut missing = Vec::new();
    for &(pid, before) in &cpu0.servers {
        match (before, at_end(pid)) {
            (Some(b), Some(a)) => add((a.cpu.0 - b.cpu.0, a.cpu.1 - b.cpu.1)),
            _ => missing.push(pid),
        }
    }
    let mut started = Vec::new();
    for &(pid, after) in &cpu1.servers {
        match after {
            Some(a) if !cpu0.servers.iter().any(|(p, _)| *p == pid) && a.started_s >= cpu0.at_s => {
                add(a.cpu);
                started.push(pid);
            }
            _ => {}
        }
    }
    sum.pids = cpu0
        .servers
        .iter()
        .map(|(p, _)| *p)
        .chain(started.iter().copied())
        .collect();
    sum.missing_pids = missing;
    sum.started_pids = started;
    // Over the interval the samples span (it holds the measured window, and the setup and
    // close around it): over the measured window alone, a 13 ms phase read as 74 cores.
    let span = cpu1.at_s - cpu0.at_s;
    sum.cores = if span > 0.0 {
        (sum.user_s + sum.sys_s) / span
    } else {
        0.0
    };
    Some(sum)
}

/// This rank's workers summed per gateway: worker `w` talks to `endpoints[w % len]` (the rule
/// of `Storage::endpoints`).
fn endpoint_parts(endpoints: &[String], workers: &[WorkerPhase], latencies: &Latencies) -> Vec<EndpointPart> {
    if endpoints.len() < 2 {
        return Vec::new();
    }
    endpoints
        .iter()
        .enumerate()
        .filter_map(|(i, endpoint)| {
            let mine: Vec<&WorkerPhase> = workers.iter().filter(|w| w.worker % endpoints.len() == i).collect();
            (!mine.is_empty()).then(|| EndpointPart {
                endpoint: endpoint.clone(),
                workers: mine.len(),
                ops: mine.iter().flat_map(|w| &w.classes).map(|c| c.ops).sum(),
                bytes: mine.iter().flat_map(|w| &w.classes).map(|c| c.bytes).sum(),
                errors: mine.iter().map(|w| w.errors.total).sum(),
                hist: serialize(&merge_histograms(&latencies.classes[i])),
            })
        })
        .collect()
}

/// Sum this rank's workers up; `clock` maps a local instant to the common clock. `endpoints`
/// are the target's gateways when it has several.
#[allow(clippy::too_many_arguments)]
pub(crate) fn rank_part(
    rank: usize,
    threads: usize,
    ctl: &PhaseControl,
    mut workers: Vec<WorkerPhase>,
    latencies: &Latencies,
    series: &[Buckets],
    endpoints: &[String],
    stable_at_s: Option<f64>,
    cpu0: &CpuSample,
    cpu1: &CpuSample,
    clock: &dyn Fn(Instant) -> f64,
) -> RankPart {
    workers.sort_by_key(|w| w.worker);
    let measured_from = ctl.ramp_end.unwrap_or(ctl.start);
    let class_count = workers.first().map_or(0, |w| w.classes.len());
    let classes = (0..class_count)
        .map(|c| ClassPart {
            ops: workers.iter().map(|w| w.classes[c].ops).sum(),
            bytes: workers.iter().map(|w| w.classes[c].bytes).sum(),
            hist: serialize(&merge_histograms(latencies.classes.iter().filter_map(|row| row.get(c)))),
        })
        .collect();
    // Serialized with the bounds of every other rank's (new_histogram's), not a growing one's.
    let ttfb = latencies.ttfb.as_ref().map(|h| serialize(&merge_histograms([h])));
    let service = latencies.service.as_ref().map(|h| serialize(&merge_histograms([h])));
    let wait = latencies.wait.as_ref().map(|h| serialize(&merge_histograms([h])));
    let (series, fine_series) = collect_series(ctl, series);
    let start_s = clock(ctl.start);
    let quiet = workers
        .iter_mut()
        .filter_map(|w| {
            let done = w
                .last_end
                .map_or(0, |e| e.saturating_duration_since(ctl.start).as_nanos() as u64);
            Some(w.gaps.take()?.finish(done, start_s))
        })
        .reduce(|a, b| a.intersect(&b));
    let mut errors = Errors::default();
    let mut detail = Vec::with_capacity(workers.len());
    let mut part = RankPart {
        rank,
        threads,
        start_s,
        measured_from_s: clock(measured_from),
        end_s: workers.iter().filter_map(|w| w.last_end).max().map(clock),
        first_done_s: ctl.first_done_at().map(clock),
        classes,
        ttfb,
        service,
        wait,
        stable_at_s,
        errors: Errors::default(),
        items: workers.iter().map(|w| w.items).sum(),
        retries: workers.iter().map(|w| w.retries).sum(),
        rereads: Rereads::sum(workers.iter().map(|w| &w.rereads)),
        verified_bytes: workers.iter().map(|w| w.verified_bytes).sum(),
        mismatches: workers.iter().map(|w| w.mismatches).sum(),
        engine: workers.iter().find_map(|w| w.engine).map(|(e, _)| e.name().to_string()),
        queue_depth: workers.iter().find_map(|w| w.engine).map(|(_, d)| d as u64),
        probe: probe_sums(
            workers
                .iter()
                .flat_map(|w| w.probe.iter().map(|(e, v)| (e.name().to_string(), *v))),
        ),
        stonewall_ops: workers.iter().map(|w| w.stonewall_ops).sum(),
        stonewall_bytes: workers.iter().map(|w| w.stonewall_bytes).sum(),
        series,
        fine_series,
        quiet,
        cpu_user_s: cpu1.own.0 - cpu0.own.0,
        cpu_sys_s: cpu1.own.1 - cpu0.own.1,
        server_cpu: server_cpu(cpu0, cpu1),
        workers: Vec::new(),
        endpoints: endpoint_parts(endpoints, &workers, latencies),
        existing: workers.iter().map(|w| (w.worker, w.existing.clone())).collect(),
        interrupted: ctl.interrupted(),
        stuck: 0,
        aborted: ctl.aborted(),
    };
    for w in workers {
        let ops: u64 = w.classes.iter().map(|c| c.ops).sum();
        let bytes: u64 = w.classes.iter().map(|c| c.bytes).sum();
        let dur = match (w.first_start, w.last_end) {
            (Some(_), Some(e)) => e.saturating_duration_since(measured_from).as_secs_f64(),
            _ => 0.0,
        };
        detail.push(WorkerSummary {
            worker: w.worker,
            ops,
            bytes,
            errors: w.errors.total,
            duration_s: dur,
            ops_per_sec: rate(ops, dur),
            bytes_per_sec: rate(bytes, dur),
            p50_ns: w.latency.p50_ns,
            p99_ns: w.latency.p99_ns,
            max_ns: w.latency.max_ns,
            read_from: w.read_from,
            ioengine: w.engine.map(|(e, _)| e.name().to_string()),
            accelerator: w.accelerator,
        });
        merge_errors(&mut errors, w.errors);
    }
    part.errors = errors;
    part.workers = detail;
    part
}

/// The workers' series added up: the 1 s series, and the 100 ms one it is summed from when
/// the phase keeps one.
fn collect_series(ctl: &PhaseControl, threads: &[Buckets]) -> (Series, Option<Series>) {
    let first = if ctl.fine_series {
        FINE_SERIES_INTERVAL
    } else {
        SERIES_INTERVAL
    };
    // A long phase widened some threads' intervals: all take the widest.
    let width = threads.iter().map(Buckets::width).max().unwrap_or(first);
    let mut series = Series {
        interval_s: width.as_secs_f64(),
        ..Series::default()
    };
    for t in threads {
        t.add_into(&mut series);
    }
    if !ctl.fine_series {
        return (series, None);
    }
    let factor = (SERIES_INTERVAL.as_nanos() / width.as_nanos().max(1)).max(1) as usize;
    (coarsen(&series, factor), Some(series))
}

#[cfg(test)]
mod tests;
