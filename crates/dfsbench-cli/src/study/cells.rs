//! A study cell's value from the result files: which run and phase it reads, its raw number
//! and factor, the outcome of a fault in words, or why there is none; and the doubts a cell
//! carries (reads maybe from the client's cache, write phases shorter than the added delay).

use std::collections::BTreeMap;
use std::path::Path;

use dfsbench_result::faults::FaultImpact;
use dfsbench_result::{median, LinkCapacity, NodeNullTests, NullTests, PhaseResult, RoundTrips, RunResult};

use super::manifest::Manifest;
use super::model::{Cell, Metric, NullField, PhaseSel, Study};

/// A cell's number and where it came from.
pub(super) struct Source {
    pub(super) file: String,
    pub(super) phase: String,
    pub(super) raw: f64,
    /// Why the phase's reads may have come from the client's cache, when they may have.
    pub(super) suspect: Option<String>,
}

pub(super) enum Value {
    Num {
        value: f64,
        src: Source,
        factor: f64,
        baseline: Option<Source>,
    },
    /// A measured outcome in words (a fault's effect: continued, stalled 3.1 s, failed).
    Text { text: String, src: Source },
    /// Why there is no number: not run, failed, not applicable.
    Missing(String),
}

/// Result files by (point, system), or why a point has none, and the points in the order they
/// ran.
pub(super) struct Loaded {
    pub(super) runs: BTreeMap<(String, String), Result<(String, RunResult), String>>,
    pub(super) order: Vec<String>,
    /// Seconds of round trip each point with added delay added (surfnet's 20 ms points).
    pub(super) added_rtt_s: BTreeMap<String, f64>,
}

impl Loaded {
    pub(super) fn get(&self, point: &str, system: &str) -> Option<&Result<(String, RunResult), String>> {
        self.runs.get(&(point.to_string(), system.to_string()))
    }

    /// The first result of `system` with null tests: they run once per system, with its first
    /// point that runs.
    fn null_tests(&self, system: &str) -> Option<&(String, RunResult)> {
        self.order
            .iter()
            .filter_map(|p| self.get(p, system)?.as_ref().ok())
            .find(|(_, r)| r.null_tests.is_some())
    }
}

pub(super) fn load(study: &Study, m: &Manifest, dir: &Path) -> Loaded {
    let mut out = Loaded {
        runs: BTreeMap::new(),
        order: m.points.iter().map(|p| p.id.clone()).collect(),
        added_rtt_s: study
            .points
            .iter()
            .filter_map(|p| Some((p.id.clone(), 2.0 * p.one_way_delay_ms? as f64 / 1000.0)))
            .collect(),
    };
    for p in &m.points {
        for r in &p.runs {
            let v = match (&r.result, &r.error) {
                _ if r.skipped.is_some() => Err(format!("n/a: {}", r.skipped.as_deref().unwrap_or(""))),
                (Some(file), _) => std::fs::read(dir.join(file))
                    .map_err(|e| format!("error: cannot read {file}: {e}"))
                    .and_then(|t| serde_json::from_slice::<RunResult>(&t).map_err(|e| format!("error: {file}: {e}")))
                    .map(|r| (file.clone(), r)),
                (None, Some(e)) => Err(format!("error: {e}")),
                (None, None) => Err("not run".into()),
            };
            out.runs.insert((p.id.clone(), r.system.clone()), v);
        }
    }
    out
}

pub(super) fn find<'r>(r: &'r RunResult, sel: &PhaseSel) -> Option<&'r PhaseResult> {
    r.phases.iter().find(|p| {
        !p.prepare
            && p.name == sel.name
            && sel.job.as_ref().is_none_or(|j| &p.job_name == j)
            && sel
                .param
                .is_none_or(|(k, v)| p.params.get(k).and_then(|x| x.as_f64()) == Some(v))
    })
}

/// A null-test number of the run and the factor to the table's unit.
pub(super) fn null_raw(r: &RunResult, f: NullField) -> Option<(f64, f64)> {
    let n = r.null_tests.as_ref()?;
    const MIB: f64 = 1048576.0;
    Some(match f {
        NullField::DiskWrite => (n.local_disk.as_ref()?.write_bytes_per_sec, 1.0 / MIB),
        NullField::DiskRead => (n.local_disk.as_ref()?.read_bytes_per_sec, 1.0 / MIB),
        NullField::NetWrite => (n.bandwidth.as_ref()?.write_bytes_per_sec, 1.0 / MIB),
        NullField::NetRead => (n.bandwidth.as_ref()?.read_bytes_per_sec, 1.0 / MIB),
        NullField::RoundTrip => (n.round_trip.as_ref()?.median_ns as f64, 1e-6),
        NullField::Connect => (n.connect.as_ref()?.median_ns as f64, 1e-6),
        NullField::NodeConnect => (median_over_nodes(n, |x| x.connect.as_ref())?, 1e-6),
        NullField::NodePing => (median_over_nodes(n, |x| x.ping.as_ref())?, 1e-6),
        NullField::NodeBandwidth => (LinkCapacity::measured(&n.nodes)?.bytes_per_sec, 1.0 / MIB),
    })
}

/// The median of the nodes' median round trips; None unless every node has one.
pub(super) fn median_over_nodes(n: &NullTests, trips: impl Fn(&NodeNullTests) -> Option<&RoundTrips>) -> Option<f64> {
    let medians: Option<Vec<f64>> = n.nodes.iter().map(|x| Some(trips(x)?.median_ns as f64)).collect();
    medians.filter(|m| !m.is_empty()).map(|m| median(&m))
}

/// The raw number of `metric` in phase `p` and the factor that makes it the table's unit.
pub(super) fn raw(p: &PhaseResult, metric: Metric) -> Option<(f64, f64)> {
    const MIB: f64 = 1048576.0;
    Some(match metric {
        Metric::MibPerSec => (p.bytes_per_sec, 1.0 / MIB),
        Metric::OpsPerSec => (p.ops_per_sec, 1.0),
        Metric::CpuPercent => (p.cpu.cores, 100.0),
        Metric::ServerCpuPercent => (p.server_cpu.as_ref()?.cores, 100.0),
        Metric::KindMibPerWorker(k) => (
            p.ops_by_kind.iter().find(|o| o.op == k)?.bytes_per_sec,
            1.0 / MIB / p.workers as f64,
        ),
        Metric::AchievedOps => (p.rate.as_ref()?.achieved_ops_per_sec, 1.0),
        Metric::MeanLatencyMs => (p.latency.mean_ns, 1e-6),
        Metric::TrainAu => (p.train.as_ref()?.au, 100.0),
        Metric::TrainAuThreshold => (p.train.as_ref()?.au_threshold, 100.0),
        Metric::Null(_)
        | Metric::RecoverySecs
        | Metric::FaultOutcome
        | Metric::SearchAccelerators
        | Metric::SearchAu
        | Metric::SearchSamplesPerSec
        | Metric::SearchMibPerSec
        | Metric::CheckpointGbPerSec
        | Metric::CheckpointSecs => return None,
        Metric::GibPerSec | Metric::KiloOpsPerSec | Metric::KiloItemsPerSec => return io500_raw(&[p], metric),
    })
}

/// An IO500 figure over `phases`: a phase and its wear-out step, when it had one (IOR and
/// mdtest time the wear-out as part of the phase, and IO500 scores that).
fn io500_raw(phases: &[&PhaseResult], metric: Metric) -> Option<(f64, f64)> {
    let secs: f64 = phases.iter().map(|p| p.duration_s).sum();
    let sum = |f: fn(&PhaseResult) -> u64| phases.iter().map(|p| f(p)).sum::<u64>() as f64 / secs;
    if secs <= 0.0 {
        return None;
    }
    Some(match metric {
        Metric::GibPerSec => (sum(|p| p.bytes), 1.0 / (1u64 << 30) as f64),
        Metric::KiloOpsPerSec => (sum(|p| p.ops), 1e-3),
        Metric::KiloItemsPerSec => (sum(|p| p.items), 1e-3),
        _ => return None,
    })
}

/// The unmeasured wear-out step after phase `p` of `r` (`--stonewall-wear-out`).
fn wear_out_of<'r>(r: &'r RunResult, p: &PhaseResult) -> Option<&'r PhaseResult> {
    let label = format!("wear-out {}", p.label);
    r.phases
        .iter()
        .find(|w| w.prepare && w.job == p.job && w.label == label)
}

pub(super) fn source(loaded: &Loaded, point: &str, system: &str, cell: &Cell) -> Result<(Source, f64), String> {
    let at_point = || {
        loaded
            .get(point, system)
            .ok_or_else(|| "not run".to_string())?
            .as_ref()
            .map_err(Clone::clone)
    };
    let (file, r) = match cell.metric {
        Metric::Null(_) => loaded.null_tests(system).map_or_else(at_point, Ok)?,
        _ => at_point()?,
    };
    if cell.metric == Metric::RecoverySecs {
        return Ok((
            Source {
                file: file.clone(),
                phase: "recovery probe".into(),
                raw: recovery_secs(r)?,
                suspect: None,
            },
            1.0,
        ));
    }
    if let Metric::Null(f) = cell.metric {
        let nodes_known = r.null_tests.as_ref().is_some_and(|n| !n.nodes.is_empty());
        if f.is_per_node() && !nodes_known {
            return Err("n/a: needs a lab target (-t lab:NAME): only a lab's nodes are known".into());
        }
        if f == NullField::Connect && nodes_known && r.null_tests.as_ref().is_some_and(|n| n.connect.is_none()) {
            return Err(format!(
                "n/a: no single endpoint on the {} backend: each node's TCP connect is in the row below",
                r.target.backend
            ));
        }
        let (raw, factor) = null_raw(r, f).ok_or_else(|| match r.null_tests.as_ref().map(|n| n.errors.join("; ")) {
            Some(why) if !why.is_empty() => format!("n/a: {why}"),
            Some(_) => format!("n/a: no {} on the {} backend", f.path(), r.target.backend),
            None => "n/a: the run has no null tests".into(),
        })?;
        return Ok((
            Source {
                file: file.clone(),
                phase: "null tests".into(),
                raw,
                suspect: None,
            },
            factor,
        ));
    }
    if let Some(found) = super::run_cells::figure(r, cell.metric, &cell.phase) {
        return found.map(|f| {
            let src = Source {
                file: file.clone(),
                phase: f.phase,
                raw: f.raw,
                suspect: f.suspect,
            };
            (src, f.factor)
        });
    }
    let what = match &cell.phase.job {
        Some(j) => format!("{} phase in job {j}", cell.phase.name),
        None => format!("{} phase", cell.phase.name),
    };
    let Some(p) = find(r, &cell.phase) else {
        return Err(match r.status.as_str() {
            "complete" => format!("n/a: no {what} (not run on {})", r.target.backend),
            s => format!("error: {s}: {}", r.status_message.as_deref().unwrap_or("")),
        });
    };
    if p.errors.total > 0 {
        let kinds: Vec<&str> = p.errors.by_kind.keys().map(String::as_str).collect();
        return Err(format!("error: {} failed ops ({})", p.errors.total, kinds.join(", ")));
    }
    if r.status != "complete" {
        return Err(format!(
            "error: {}: {}",
            r.status,
            r.status_message.as_deref().unwrap_or("")
        ));
    }
    let io500 = matches!(cell.metric, Metric::GibPerSec | Metric::KiloOpsPerSec);
    let wear_out = wear_out_of(r, p).filter(|_| io500);
    if let Some(w) = wear_out.filter(|w| w.errors.total > 0) {
        return Err(format!("error: {} failed ops in {}", w.errors.total, w.label));
    }
    let figure = match wear_out {
        Some(w) => io500_raw(&[p, w], cell.metric),
        None => raw(p, cell.metric),
    };
    let (raw, factor) = figure.ok_or_else(|| match cell.metric {
        Metric::ServerCpuPercent => no_server_cpu(r),
        m => format!("n/a: no {} in the {what}", m.field()),
    })?;
    Ok((
        Source {
            file: file.clone(),
            phase: p.label.clone(),
            raw,
            suspect: doubts(p, loaded.added_rtt_s.get(point).copied()),
        },
        factor,
    ))
}

/// Why a phase's number may not be the storage's: the run's own marks, a phase with added
/// delay that ended within one added round trip, which no request to the servers can do, and
/// a write phase whose workers each wrote faster than one request per added round trip (each
/// waits for its last write: a worker writes one block at a time).
pub(super) fn doubts(p: &PhaseResult, added_rtt_s: Option<f64>) -> Option<String> {
    let mut why = p.cache_suspect.clone();
    let Some(rtt) = added_rtt_s else {
        return (!why.is_empty()).then(|| why.join("; "));
    };
    let per_worker = p.ops_per_sec / p.workers.max(1) as f64;
    if p.duration_s < rtt {
        why.push(format!(
            "the phase (its close included) took {:.1} ms, less than the {:.0} ms round trip added to the servers: the client answered it without waiting for them (its write-back buffer or cache)",
            p.duration_s * 1e3,
            rtt * 1e3
        ));
    } else if p.name.contains("write") && per_worker * rtt > WRITES_PER_ROUND_TRIP {
        why.push(format!(
            "each worker wrote {per_worker:.0} blocks a second, more than one per the {:.0} ms round trip added to the servers allows: the client acknowledged writes before the servers had them (write-behind, as iozone's writes without fsync were)",
            rtt * 1e3
        ));
    }
    (!why.is_empty()).then(|| why.join("; "))
}

/// Writes per added round trip and worker beyond which the client must have buffered them: 1
/// is the most a synchronous writer can do; the margin leaves room for the phase's own timing.
pub(super) const WRITES_PER_ROUND_TRIP: f64 = 1.5;

/// File systems of the client's own disks and memory: no server process serves them.
pub(super) const LOCAL_FS: &[&str] = &["ext4", "xfs", "btrfs", "tmpfs", "overlayfs", "zfs"];

/// Why a run has no server CPU: a local file system has no server; elsewhere no PID was given.
pub(super) fn no_server_cpu(r: &RunResult) -> String {
    match r
        .target
        .details
        .get("fs_type")
        .filter(|t| LOCAL_FS.contains(&t.as_str()))
    {
        Some(fs) => format!("n/a: local {fs}, no server: a local file system has no server processes to watch"),
        None => "n/a: server CPU not measured: give --server-pid PID of the server processes on this host".into(),
    }
}

/// Seconds from the fault to the probe's first success, or why there are none.
pub(super) fn recovery_secs(r: &RunResult) -> Result<f64, String> {
    let rec = r.recovery.as_ref().ok_or("n/a: no recovery probe ran")?;
    rec.recovery_time_s.ok_or_else(|| match () {
        _ if rec.timed_out => format!("timed out: not recovered after {} probes", rec.probes),
        _ if rec.interrupted => "interrupted while probing".into(),
        _ => "n/a: the probe did not start (no fault ran)".into(),
    })
}

/// What the run's first fault did to the I/O of its phase, as an engineer reads a failure test:
/// the outage (from the fault to the command that brought the node back, seconds into the
/// phase), when the I/O came back (the end of its longest gap, when that gap reached the stall
/// threshold; else it continued), and the errors: `out 6-14 s, writes back 19.2 s`.
pub(super) fn outcome(loaded: &Loaded, system: &str, cell: &Cell) -> Value {
    let (file, r) = match loaded.get(&cell.point, system) {
        Some(Ok(found)) => found,
        Some(Err(why)) => return Value::Missing(why.clone()),
        None => return Value::Missing("not run".into()),
    };
    let Some(f) = r.faults.first() else {
        return Value::Missing("n/a: the run has no fault".into());
    };
    if let Some(bad) = r.faults.iter().find(|f| f.run.status != "ok") {
        let first = bad.run.output.lines().next().unwrap_or("");
        return Value::Missing(format!("error: the fault command {}: {first}", bad.run.status));
    }
    let phase = r.phases.iter().find(|p| f.phase.as_ref() == Some(&p.label));
    let text = if matches!(r.status.as_str(), "complete" | "interrupted") {
        outcome_text(r, f, phase)
    } else {
        format!("failed: {}", r.status_message.as_deref().unwrap_or(&r.status))
    };
    Value::Text {
        text,
        src: Source {
            file: file.clone(),
            phase: f.phase.clone().unwrap_or_default(),
            raw: f.stall_s,
            suspect: None,
        },
    }
}

/// The words of [`outcome`] for a run that ended normally.
pub(super) fn outcome_text(r: &RunResult, f: &FaultImpact, phase: Option<&PhaseResult>) -> String {
    let start = phase.map_or(0.0, |p| p.start_s);
    let at = |f: &FaultImpact| f.run.started_s.or(f.due_s).map(|t| t - start);
    // The command that brought the node back: the next fault of the same phase.
    let back = r.faults.get(1).filter(|b| b.phase == f.phase);
    let out = match (at(f), back.and_then(at)) {
        (Some(a), Some(b)) => format!("out {a:.0}-{b:.0} s"),
        (Some(a), None) => format!("out from {a:.0} s"),
        _ => "out".into(),
    };
    let threshold = phase.and_then(|p| p.stalls.as_ref()).map_or(1.0, |s| s.threshold_s);
    let io = phase.map_or("I/O", |p| p.name.as_str());
    let errors: u64 = r
        .faults
        .iter()
        .filter(|x| x.phase == f.phase)
        .flat_map(|x| x.errors_by_kind.values())
        .sum();
    // Short enough for a table cell (40 characters): the kind of I/O only without errors.
    let resumed = match f.stall_from_s {
        Some(from) if f.stall_s >= threshold => {
            let back = from + f.stall_s - start;
            match errors {
                0 => format!("{io}s back {back:.1} s"),
                _ => format!("back {back:.1} s"),
            }
        }
        // A lost client (its rank) does not come back: the others went on.
        _ if r.cluster.as_ref().is_some_and(|c| !c.lost.is_empty()) => "rest continued".into(),
        _ => "continued".into(),
    };
    match errors {
        0 => format!("{out}, {resumed}"),
        1 => format!("{out}, {resumed}, 1 error"),
        n => format!("{out}, {resumed}, {n} errors"),
    }
}

pub(super) fn value(loaded: &Loaded, system: &str, cell: &Cell) -> Value {
    if let Some(why) = &cell.left_out {
        return Value::Missing(format!("n/a: {why}"));
    }
    if cell.metric == Metric::FaultOutcome {
        return outcome(loaded, system, cell);
    }
    let per_node = |(src, factor): (Source, f64)| (src, factor / cell.per_node.unwrap_or(1) as f64);
    let main = source(loaded, &cell.point, system, cell).map(per_node);
    let base = cell
        .baseline
        .as_ref()
        .map(|b| source(loaded, b, system, cell).map_err(|e| format!("n/a: baseline {b}: {e}")));
    match (main, base) {
        (Err(e), _) | (Ok(_), Some(Err(e))) => Value::Missing(e),
        (Ok((src, factor)), None) => Value::Num {
            value: src.raw * factor,
            src,
            factor,
            baseline: None,
        },
        (Ok((src, _)), Some(Ok((b, _)))) if b.raw > 0.0 => Value::Num {
            value: src.raw / b.raw,
            src,
            factor: 1.0,
            baseline: Some(b),
        },
        (Ok(_), Some(Ok(_))) => Value::Missing("n/a: the baseline measured 0".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dfsbench_result::faults::FaultRun;

    /// A write phase starting 5 s into the run; a node taken out 6 s into it and brought back
    /// at 14 s; writes stopped at 7.5 s and came back 11.7 s later (19.2 s into the phase).
    fn run(errors: u64, stall_s: f64) -> RunResult {
        let mut r = dfsbench_report::synthetic::long_run(30, 2);
        r.phases[0].start_s = 5.0;
        let label = r.phases[0].label.clone();
        let fault = |at: f64| FaultImpact {
            phase: Some(label.clone()),
            run: FaultRun {
                started_s: Some(5.0 + at),
                status: "ok".into(),
                ..FaultRun::default()
            },
            ..FaultImpact::default()
        };
        let mut out = fault(6.0);
        out.stall_s = stall_s;
        out.stall_from_s = Some(12.5);
        if errors > 0 {
            out.errors_by_kind.insert("timeout".into(), errors);
        }
        r.faults = vec![out, fault(14.0)];
        r
    }

    /// MooseFS's write-256k-20ms: 10 MiB written and closed in 13 ms with 20 ms more round
    /// trip to the servers, which no write that waited for them can do.
    #[test]
    fn a_phase_within_one_added_round_trip_is_doubted() {
        let mut p = dfsbench_report::synthetic::long_run(30, 2).phases[0].clone();
        p.cache_suspect.clear();
        p.duration_s = 0.013;
        let why = doubts(&p, Some(0.020)).expect("doubted");
        assert!(why.contains("took 13.0 ms, less than the 20 ms round trip"), "{why}");
        assert_eq!(doubts(&p, None), None, "no delay added: nothing to compare");
        p.duration_s = 0.5;
        assert_eq!(doubts(&p, Some(0.020)), None, "longer than a round trip");
        p.cache_suspect = vec!["read faster than one invalidated pass".into()];
        assert_eq!(
            doubts(&p, Some(0.020)).as_deref(),
            Some("read faster than one invalidated pass")
        );
    }

    #[test]
    fn writes_faster_than_the_added_round_trips_allow_are_doubted() {
        let mut p = dfsbench_report::synthetic::long_run(30, 2).phases[0].clone();
        p.cache_suspect.clear();
        (p.name, p.workers, p.duration_s) = ("randwrite".into(), 2, 5.0);
        // 2 workers at 20 ms more round trip: at most 50 synchronous writes a second each.
        p.ops_per_sec = 2.0 * 1000.0;
        let why = doubts(&p, Some(0.020)).expect("doubted");
        assert!(why.contains("each worker wrote 1000 blocks a second"), "{why}");
        assert!(why.contains("write-behind"), "{why}");
        p.ops_per_sec = 2.0 * 45.0;
        assert_eq!(doubts(&p, Some(0.020)), None, "one write per round trip");
        p.ops_per_sec = 2.0 * 1000.0;
        assert_eq!(doubts(&p, None), None, "no delay added");
        p.name = "randread".into();
        assert_eq!(doubts(&p, Some(0.020)), None, "reads are not doubted for their rate");
    }

    #[test]
    fn a_fault_cell_shows_the_outage_and_when_the_io_came_back() {
        let text = |r: &RunResult| outcome_text(r, &r.faults[0], r.phases.first());
        assert_eq!(text(&run(0, 11.7)), "out 6-14 s, writes back 19.2 s");
        assert_eq!(text(&run(3, 11.7)), "out 6-14 s, back 19.2 s, 3 errors");
        assert_eq!(text(&run(0, 0.2)), "out 6-14 s, continued");
        assert_eq!(text(&run(1, 0.2)), "out 6-14 s, continued, 1 error");
        // A lost client does not come back; the other clients went on.
        let mut lost = run(0, 0.2);
        let mut cluster: dfsbench_result::Cluster = serde_json::from_value(serde_json::json!({
            "mode": "procs", "ranks": 2, "nodes": ["client1", "client2"], "workers_per_rank": [1],
            "shuffle": false, "members": [],
            "lost": [{"rank": 1, "host": "client2", "pid": 7, "at_s": 6.0, "during": "phase 'write'",
                      "why": "exited on client2 (signal: 9 (SIGKILL))", "ops": 12, "bytes": 12, "errors": 0}]
        }))
        .unwrap();
        lost.cluster = Some(cluster.clone());
        assert_eq!(text(&lost), "out 6-14 s, rest continued");
        cluster.lost.clear();
        lost.cluster = Some(cluster);
        assert_eq!(text(&lost), "out 6-14 s, continued");
        for r in [run(99999, 11.7), run(99999, 0.2)] {
            assert!(text(&r).chars().count() <= 40, "{}", text(&r));
        }
    }

    /// A lab run's null tests: three nodes, node1 a metadata server.
    fn lab_run(with_nodes: bool) -> Loaded {
        const MIB: f64 = 1048576.0;
        let trips = |op: &str, us: u64| RoundTrips {
            op: op.into(),
            count: 5,
            min_ns: us * 1000,
            median_ns: us * 1000,
            max_ns: us * 1000,
        };
        let node = |name: &str, serves_data, connect_us, ping_us, mib: f64| NodeNullTests {
            name: name.into(),
            addr: "198.18.2.2".into(),
            serves_data,
            port: Some(9421),
            connect: Some(trips("tcp connect", connect_us)),
            ping: Some(trips("icmp echo", ping_us)),
            bandwidth: Some(dfsbench_result::NodeBandwidth {
                bytes: 32 << 20,
                bytes_per_sec: mib * MIB,
            }),
            bandwidth_to_node: None,
        };
        let mut r = dfsbench_report::synthetic::long_run(30, 2);
        r.null_tests = Some(NullTests {
            nodes: if with_nodes {
                vec![
                    node("node1", false, 40, 20, 100.0),
                    node("node2", true, 60, 30, 200.0),
                    node("node3", true, 50, 10, 300.0),
                ]
            } else {
                Vec::new()
            },
            ..NullTests::default()
        });
        Loaded {
            runs: [(("p".to_string(), "lab".to_string()), Ok(("lab/p.json".to_string(), r)))].into(),
            order: vec!["p".into()],
            added_rtt_s: BTreeMap::new(),
        }
    }

    #[test]
    fn node_rows_take_medians_over_the_nodes_and_the_sum_over_data_nodes() {
        let cell = |f| Cell::new("p", PhaseSel::op("write"), Metric::Null(f));
        let get = |loaded: &Loaded, f| source(loaded, "p", "lab", &cell(f)).map(|(s, _)| s.raw);
        let lab = lab_run(true);
        assert_eq!(get(&lab, NullField::NodeConnect), Ok(50_000.0), "ns");
        assert_eq!(get(&lab, NullField::NodePing), Ok(20_000.0));
        assert_eq!(
            get(&lab, NullField::NodeBandwidth),
            Ok(500.0 * 1048576.0),
            "without node1"
        );
        let endpoint = get(&lab, NullField::Connect).unwrap_err();
        assert!(
            endpoint.starts_with("n/a: no single endpoint on the posix backend"),
            "{endpoint}"
        );
        let plain = lab_run(false);
        for f in [NullField::NodeConnect, NullField::NodePing, NullField::NodeBandwidth] {
            let why = get(&plain, f).unwrap_err();
            assert!(why.starts_with("n/a: needs a lab target (-t lab:NAME)"), "{why}");
        }
    }
}
