//! One rank's measurements of a phase, as sent to rank 0, and their exact merge into the phase
//! result. A solo run is a group of one and goes the same way.
//!
//! Histograms travel in their serialized V2 form and are merged, never averaged; times are on
//! the common clock (seconds after rank 0's start), so windows of different ranks compare.

use dfsbench_backends::clock::Instant;
use dfsbench_backends::IoEngine;
use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::cluster::Member;

mod subtotal;
use crate::faults::stalls::Quiet;
use crate::host::CpuSample;
use crate::job::Job;
use crate::plan::Phase;
use crate::stats::{
    coarsen, merge_errors, merge_histograms, Buckets, Latencies, PhaseControl, Rereads, WorkerPhase,
    FINE_SERIES_INTERVAL, SERIES_INTERVAL,
};
use dfsbench_result::histogram::{deserialize, latency, new_histogram, serialize};
use dfsbench_result::{
    Cpu, EndpointResult, Errors, NodeSummary, OpKind, PhaseResult, ProcessSummary, Queue, RateResult, Series,
    ServerCpu, Steady, Stonewall, Verify, WorkerSummary,
};
pub use subtotal::{Merger, RankLine, Subtotal};

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
pub fn peer_histogram(text: &str) -> Result<Histogram<u64>, String> {
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
pub struct ClassPart {
    pub ops: u64,
    pub bytes: u64,
    pub hist: String,
}

/// What one rank's workers of one gateway measured (targets with several endpoints).
#[derive(Debug, Serialize, Deserialize)]
pub struct EndpointPart {
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

/// How much more an engine must move than psync to be picked over it: psync is the plainest path
/// (one system call per block, no ring or context to keep, fio's default) and costs the least
/// CPU per block where the others are not faster; a smaller lead is within the probe's noise on
/// a busy machine.
const PSYNC_MARGIN: f64 = 0.05;

/// The engine `auto` runs on after a probe: the one with the most blocks per second summed
/// over every worker, so that all of them run the same, unless psync is within
/// [`PSYNC_MARGIN`] of it.
fn probe_pick(sums: &BTreeMap<String, f64>) -> Option<&String> {
    let best = sums.iter().max_by(|a, b| a.1.total_cmp(b.1))?;
    match sums.get_key_value(IoEngine::Psync.name()) {
        Some((psync, rate)) if rate * (1.0 + PSYNC_MARGIN) >= *best.1 => Some(psync),
        _ => Some(best.0),
    }
}

/// What one rank measured in one phase.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct RankPart {
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
pub fn rank_part(
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

/// Merge the ranks' parts of one phase exactly, from what `merger` added up: their parts one
/// by one (a flat merge) or their tree children's subtotals. `ranks` is the size of the group
/// (parts may be fewer when a rank was lost); `run_start_s` is the run's start on the common
/// clock. Parts that could not be read are left out (`merger.unreadable` says which).
pub fn combine(
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
        stalls,
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
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine as _;
    use std::io::Write as _;

    #[test]
    fn a_restarted_server_is_counted_from_its_start_and_the_old_one_is_named_gone() {
        use crate::host::ProcessStat;
        let stat = |cpu: f64, started_s: f64| {
            Some(ProcessStat {
                cpu: (cpu, 0.0),
                started_s,
            })
        };
        let before = CpuSample {
            own: (0.0, 0.0),
            at_s: 100.0,
            servers: vec![(10, stat(1.0, 5.0)), (11, stat(2.0, 5.0))],
        };
        // 11 was killed and came back as 12 (started after the first sample); 13 was there
        // all along but not watched at the start: its CPU before the phase is unknown.
        let after = CpuSample {
            own: (0.0, 0.0),
            at_s: 110.0,
            servers: vec![(10, stat(3.0, 5.0)), (12, stat(0.5, 104.0)), (13, stat(9.0, 50.0))],
        };
        let s = server_cpu(&before, &after).expect("watched");
        assert_eq!(s.user_s, 2.0 + 0.5);
        assert_eq!(s.cores, 2.5 / 10.0, "over the 10 s between the samples");
        assert_eq!(s.pids, vec![10, 11, 12]);
        assert_eq!(s.missing_pids, vec![11]);
        assert_eq!(s.started_pids, vec![12]);
        assert!(server_cpu(&CpuSample::default(), &CpuSample::default()).is_none());
    }

    #[test]
    fn auto_keeps_psync_unless_another_engine_is_clearly_faster() {
        let sums = |v: &[(&str, f64)]| v.iter().map(|(e, r)| (e.to_string(), *r)).collect::<BTreeMap<_, _>>();
        let pick = |v: &[(&str, f64)]| probe_pick(&sums(v)).cloned();
        assert_eq!(pick(&[]), None);
        assert_eq!(pick(&[("psync", 100.0), ("io_uring", 104.0)]).unwrap(), "psync");
        assert_eq!(
            pick(&[("psync", 100.0), ("libaio", 106.0), ("io_uring", 90.0)]).unwrap(),
            "libaio"
        );
        assert_eq!(pick(&[("psync", 100.0), ("libaio", 50.0)]).unwrap(), "psync");
        // Without a psync figure the fastest runs.
        assert_eq!(pick(&[("libaio", 10.0), ("io_uring", 10.4)]).unwrap(), "io_uring");
    }

    /// A V2 + DEFLATE histogram whose inner header says what the arguments say.
    fn crafted(payload_len: u32, digits: u32, low: u64, high: u64) -> String {
        let mut inner = Vec::new();
        inner.extend_from_slice(&V2_COOKIE.to_be_bytes());
        inner.extend_from_slice(&payload_len.to_be_bytes());
        inner.extend_from_slice(&0u32.to_be_bytes());
        inner.extend_from_slice(&digits.to_be_bytes());
        inner.extend_from_slice(&low.to_be_bytes());
        inner.extend_from_slice(&high.to_be_bytes());
        inner.extend_from_slice(&1.0f64.to_be_bytes());
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(&inner).unwrap();
        let z = z.finish().unwrap();
        let mut out = V2_DEFLATE_COOKIE.to_be_bytes().to_vec();
        out.extend_from_slice(&(z.len() as u32).to_be_bytes());
        out.extend_from_slice(&z);
        base64::engine::general_purpose::STANDARD.encode(out)
    }

    /// Rank `rank`'s part: class `c` holds `n` latencies spread over microseconds to seconds,
    /// different for every rank and class; with time to first byte on odd ranks.
    fn part(rank: usize, classes: usize, n: u64) -> (RankPart, Vec<Histogram<u64>>) {
        let hists: Vec<Histogram<u64>> = (0..classes)
            .map(|c| {
                let mut h = new_histogram();
                for i in 0..n {
                    let v = 1 + (rank as u64 * 7919 + c as u64 * 104_729 + i * i * 31) % 2_000_000_000;
                    h.record(v).unwrap();
                }
                h
            })
            .collect();
        let part = RankPart {
            rank,
            threads: 1,
            start_s: 0.001 * rank as f64,
            measured_from_s: 0.001 * rank as f64,
            end_s: Some(1.0 + 0.01 * rank as f64),
            first_done_s: None,
            classes: hists
                .iter()
                .map(|h| ClassPart {
                    ops: h.len(),
                    bytes: 0,
                    hist: serialize(h),
                })
                .collect(),
            ttfb: (rank % 2 == 1).then(|| serialize(&hists[0])),
            service: None,
            stable_at_s: None,
            errors: Errors::default(),
            items: 0,
            retries: 0,
            rereads: Rereads::default(),
            verified_bytes: 0,
            mismatches: 0,
            engine: None,
            queue_depth: None,
            probe: BTreeMap::new(),
            stonewall_ops: 0,
            stonewall_bytes: 0,
            // Series of different lengths, so that adding them must pad.
            series: Series {
                interval_s: 1.0,
                ops: (0..1 + rank as u64 % 3).map(|i| i + rank as u64).collect(),
                bytes: vec![rank as u64; 2],
                errors: vec![0, 1],
                errors_by_kind: BTreeMap::new(),
            },
            fine_series: None,
            quiet: None,
            cpu_user_s: 0.0,
            cpu_sys_s: 0.0,
            server_cpu: None,
            workers: Vec::new(),
            // Rank 0 talks to gateway b only: the flat merge lists b first.
            endpoints: ["a", "b"]
                .iter()
                .enumerate()
                .filter(|(i, _)| rank > 0 || *i == 1)
                .map(|(i, e)| EndpointPart {
                    endpoint: e.to_string(),
                    workers: 1,
                    ops: hists[0].len(),
                    bytes: i as u64,
                    errors: 0,
                    hist: serialize(&hists[0]),
                })
                .collect(),
            existing: Vec::new(),
            interrupted: false,
            stuck: 0,
            aborted: false,
        };
        (part, hists)
    }

    /// The parts merged as the ranks of a `fanout`-ary tree merge them: each rank adds its
    /// children's subtotals (sent as JSON) to its own part.
    fn tree_merge(mut parts: Vec<RankPart>, fanout: usize, members: &[Member]) -> Merger {
        use crate::cluster::tree::Tree;
        let tree = Tree {
            size: parts.len(),
            fanout,
        };
        let mut sent: Vec<Option<Vec<u8>>> = (0..parts.len()).map(|_| None).collect();
        while let Some(part) = parts.pop() {
            let r = part.rank;
            let mut merger = Merger::default();
            merger.add_part(part, members);
            for c in tree.children(r) {
                let bytes = sent[c].take().expect("children merge before their parent");
                merger.add_subtotal(serde_json::from_slice(&bytes).unwrap());
            }
            if r == 0 {
                return merger;
            }
            sent[r] = Some(serde_json::to_vec(&merger.subtotal()).unwrap());
        }
        unreachable!("rank 0 is the last part")
    }

    /// Merging one rank at a time, and up trees of several fan-outs, gives exactly what
    /// merging every rank's histograms at once gives: per phase, class, process, host, gateway
    /// and for time to first byte.
    #[test]
    fn the_merge_one_rank_at_a_time_and_up_a_tree_equals_the_flat_merge() {
        use crate::config::{validate, JobSpec, RunSpec};
        let config = validate(&RunSpec::default(), &[JobSpec::new("m", "mix")]).unwrap();
        let job = &config.jobs[0];
        let phase = crate::plan::phases(0, job)
            .into_iter()
            .find(|p| p.classes.len() > 1)
            .expect("mix has a phase of several classes");
        let k = phase.classes.len();
        let hosts = ["a", "b", "a", "c", "b"];
        let members: Vec<Member> = hosts
            .iter()
            .enumerate()
            .map(|(rank, h)| Member {
                rank,
                host: h.to_string(),
                pid: 100 + rank as u32,
                version: crate::cluster::build().into(),
            })
            .collect();
        let parts = || (0..hosts.len()).map(|r| part(r, k, 50 + 20 * r as u64));
        let hists: Vec<Vec<Histogram<u64>>> = parts().map(|p| p.1).collect();
        let mut flat = Merger::default();
        for (p, _) in parts() {
            flat.add_part(p, &members);
        }
        let result = combine(&phase, job, &mut flat, hosts.len(), &members, 0.0, 1.0);
        // The tree merges give the flat merge's result, to the last byte.
        let json = serde_json::to_string(&result).unwrap();
        for fanout in [1, 2, 3, 8] {
            let mut tree = tree_merge(parts().map(|p| p.0).collect(), fanout, &members);
            let merged = combine(&phase, job, &mut tree, hosts.len(), &members, 0.0, 1.0);
            assert_eq!(serde_json::to_string(&merged).unwrap(), json, "fanout {fanout}");
        }
        assert_eq!(
            result.endpoints.iter().map(|e| e.endpoint.as_str()).collect::<Vec<_>>(),
            ["b", "a"]
        );
        assert_eq!(result.series.ops, [10, 10, 4]);

        let flat = merge_histograms(hists.iter().flatten());
        assert_eq!(deserialize(&result.latency.histogram).unwrap(), flat);
        assert_eq!(result.ops, flat.len());
        assert_eq!(result.ops_by_kind.len(), k);
        for (c, kind) in result.ops_by_kind.iter().enumerate() {
            let class = merge_histograms(hists.iter().map(|h| &h[c]));
            assert_eq!(deserialize(&kind.latency.histogram).unwrap(), class, "class {c}");
        }
        let ttfb = merge_histograms(hists.iter().skip(1).step_by(2).map(|h| &h[0]));
        assert_eq!(deserialize(&result.ttfb.unwrap().histogram).unwrap(), ttfb);
        for (p, h) in result.processes.iter().zip(&hists) {
            let own = merge_histograms(h);
            assert_eq!(
                (p.ops, p.p50_ns, p.p99_ns, p.max_ns),
                (own.len(), quantile(&own, 0.5), quantile(&own, 0.99), own.max())
            );
        }
        assert_eq!(
            result.nodes.iter().map(|n| n.host.as_str()).collect::<Vec<_>>(),
            ["a", "b", "c"]
        );
        for n in &result.nodes {
            let mine = merge_histograms(n.ranks.iter().flat_map(|&r| &hists[r]));
            assert!(n.ranks.iter().all(|&r| hosts[r] == n.host), "{n:?}");
            assert_eq!(
                (n.ops, n.p50_ns, n.p99_ns, n.max_ns),
                (mine.len(), quantile(&mine, 0.5), quantile(&mine, 0.99), mine.max())
            );
        }
        // Host a: ranks 0 and 2, from rank 0's start to rank 2's end.
        assert!(
            (result.nodes[0].duration_s - 1.02).abs() < 1e-9,
            "{}",
            result.nodes[0].duration_s
        );
    }

    #[test]
    fn a_histogram_of_this_program_is_read_back() {
        let mut h = new_histogram();
        h.record_n(1500, 7).unwrap();
        let back = peer_histogram(&serialize(&h)).unwrap();
        assert_eq!(back.len(), 7);
        assert_eq!(back.max(), h.max());
    }

    #[test]
    fn a_histogram_header_claiming_two_gigabytes_is_refused_before_reading() {
        let want = new_histogram();
        let e = peer_histogram(&crafted(0x7fff_ffff, 3, want.low(), want.high())).unwrap_err();
        assert!(e.contains("other bounds or length"), "{e}");
        // Bounds a merge could not hold, or that would allocate tens of megabytes.
        let e = peer_histogram(&crafted(100, 5, 1, u64::MAX / 2)).unwrap_err();
        assert!(e.contains("other bounds or length"), "{e}");
        let other = Histogram::<u64>::new_with_bounds(1, u64::MAX / 2, 3).unwrap();
        assert!(peer_histogram(&serialize(&other)).is_err());
        for garbage in ["", "!!!", "AAAA", "HIST", &crafted(10, 3, 1, 10)[..12]] {
            assert!(peer_histogram(garbage).is_err(), "{garbage}");
        }
    }
}
