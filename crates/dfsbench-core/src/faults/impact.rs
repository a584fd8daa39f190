//! What the measurements show around each fault: throughput before, during and after it,
//! errors and the stall in its window, the first success after it, and when throughput came
//! back. Everything is read from the phases' 100 ms series and stalls, on the run's clock.

use std::collections::BTreeMap;

use dfsbench_result::faults::{FaultImpact, Interval, Window};
use dfsbench_result::PhaseResult;

use super::spec::FaultPlan;
use super::timeline::Record;

/// The windows before and after a fault are at most this long.
const WINDOW_S: f64 = 10.0;
/// Throughput is back when a 1 s window reaches this share of the pre-fault level.
const RECOVERED_SHARE: f64 = 0.9;
const RECOVERY_WINDOW_S: f64 = 1.0;
/// How long before the first operation it stops a fault may have bitten: a kill is sent after
/// the shell starts, and the last operation before it may complete a moment earlier.
const BITE_S: f64 = 1.0;

/// One row per fault of the plan.
pub(crate) fn analyse(plan: &FaultPlan, record: &Record, phases: &[PhaseResult]) -> Vec<FaultImpact> {
    let starts: Vec<Option<f64>> = record.runs.iter().map(|r| r.started_s).collect();
    let recovered = record.recovery.as_ref().and_then(|r| r.recovered_s);
    plan.faults
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let mut row = FaultImpact {
                at: f.entry.at.clone(),
                command: f.entry.command.clone(),
                due_s: record.due.get(i).copied().flatten(),
                run: record.runs.get(i).cloned().unwrap_or_default(),
                ..FaultImpact::default()
            };
            if let Some(t) = starts.get(i).copied().flatten() {
                let next = starts.iter().flatten().copied().filter(|&s| s > t).reduce(f64::min);
                let prev = starts.iter().flatten().copied().filter(|&s| s < t).reduce(f64::max);
                let until = [next, recovered.filter(|&r| r > t)]
                    .into_iter()
                    .flatten()
                    .reduce(f64::min);
                if let Some(p) = phases.iter().find(|p| !p.prepare && contains(p, t)) {
                    measure(&mut row, p, t, (prev, next), until);
                }
            }
            row
        })
        .collect()
}

fn end_of(p: &PhaseResult) -> f64 {
    p.start_s + p.ramp_s + p.duration_s
}

fn contains(p: &PhaseResult, t: f64) -> bool {
    t >= p.start_s && t < end_of(p)
}

/// The phase's figures around a fault at `t`, between the faults before and after it
/// (`prev`, `next`); its window ends at `until` or the phase's end. The window before starts no
/// earlier than `prev`: the level a second fault (a restart, a CONT) changes is the one the
/// first left.
fn measure(
    row: &mut FaultImpact,
    p: &PhaseResult,
    t: f64,
    (prev, next): (Option<f64>, Option<f64>),
    until: Option<f64>,
) {
    row.phase = Some(p.label.clone());
    let end = end_of(p);
    let during_to = until.map_or(end, |u| u.min(end));
    let series = p.fine_series.as_ref();
    let window = |from: f64, to: f64| series.map(|s| window(s, p.start_s, from, to));
    row.before = (t > p.start_s)
        .then(|| window(p.start_s.max(t - WINDOW_S).max(prev.unwrap_or(f64::MIN)), t))
        .flatten();
    row.during = window(t, during_to);
    row.after = (during_to < end)
        .then(|| window(during_to, end.min(during_to + WINDOW_S)))
        .flatten();
    let base = row.before.map(|b| b.ops_per_sec).filter(|&b| b > 0.0);
    row.during_ratio = base.zip(row.during).map(|(b, d)| d.ops_per_sec / b);
    row.after_ratio = base.zip(row.after).map(|(b, a)| a.ops_per_sec / b);
    if let Some(s) = series {
        row.errors_by_kind = errors_by_kind(s, p.start_s, t, during_to);
        row.throughput_recovered_after_s = base.and_then(|b| back_to(s, p.start_s, t, during_to, end, b));
    }
    if let Some(stalls) = &p.stalls {
        // A gap is the stall of the fault it began after (give or take the moment a fault
        // takes to bite): a STOP's stall is not the CONT's too, though it lasts past it.
        let owned =
            |g: &&Interval| prev.is_none_or(|_| g.from_s + BITE_S >= t) && next.is_none_or(|n| g.from_s + BITE_S < n);
        let overlapping = stalls.gaps.iter().filter(|g| g.to_s > t && g.from_s < during_to);
        let stall = overlapping
            .filter(owned)
            .max_by(|a, b| a.length().total_cmp(&b.length()));
        if let Some(g) = stall {
            row.stall_s = g.length();
            row.stall_from_s = Some(g.from_s);
        }
        // Operations resume at the end of the stall that holds them at or after the fault
        // (an earlier fault's, for a CONT). A gap below the threshold is the workload's own
        // rhythm, not a stop: they never stopped.
        let holding = stalls
            .gaps
            .iter()
            .filter(|g| g.to_s > t && g.from_s < during_to && g.length() >= stalls.threshold_s)
            .filter(|g| g.from_s <= t || owned(g))
            .map(|g| g.to_s)
            .reduce(f64::min);
        row.first_success_after_s = Some(holding.map_or(0.0, |end| (end - t).max(0.0)));
    }
    // A fault the I/O did not notice has nothing to recover from: a 1 s window under the level
    // before is then the workload's own noise (a copy at 4 files/s dips to 3 by chance), not a
    // dip. It did not notice when nothing stopped and the window after the fault kept the level.
    let stopped = row.first_success_after_s.is_some_and(|s| s > 0.0);
    if !stopped && row.during_ratio.is_some_and(|r| r >= RECOVERED_SHARE) {
        row.throughput_recovered_after_s = Some(0.0);
    }
}

/// The buckets of a series that `[from, to)` touches (the phase started at `start`): a window
/// shorter than a bucket still reads the one it falls in.
fn buckets(interval: f64, start: f64, from: f64, to: f64) -> std::ops::Range<usize> {
    // Times on the bucket grid stay on it despite rounding in the subtraction.
    let index = |t: f64| ((t - start) / interval * 1e6).round() / 1e6;
    let first = index(from).floor().max(0.0) as usize;
    (first)..(index(to).ceil().max(0.0) as usize).max(first + 1)
}

fn window(s: &dfsbench_result::Series, start: f64, from: f64, to: f64) -> Window {
    let r = buckets(s.interval_s, start, from, to);
    let sum = |v: &[u64]| {
        v.get(r.start.min(v.len())..r.end.min(v.len()))
            .map_or(0, |x| x.iter().sum::<u64>())
    };
    let secs = (r.end.saturating_sub(r.start)) as f64 * s.interval_s;
    let per_sec = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
    Window {
        from_s: from,
        to_s: to,
        ops_per_sec: per_sec(sum(&s.ops)),
        bytes_per_sec: per_sec(sum(&s.bytes)),
        errors: sum(&s.errors),
    }
}

fn errors_by_kind(s: &dfsbench_result::Series, start: f64, from: f64, to: f64) -> BTreeMap<String, u64> {
    let r = buckets(s.interval_s, start, from, to);
    s.errors_by_kind
        .iter()
        .map(|(k, v)| {
            (
                k.clone(),
                v.get(r.start.min(v.len())..r.end.min(v.len()))
                    .map_or(0, |x| x.iter().sum()),
            )
        })
        .filter(|(_, n)| *n > 0)
        .collect()
}

/// Seconds from `t` to the end of the first 1 s window whose throughput is back at 90% of
/// `base`, after it first fell below that in `[t, during_to)`; 0 if it never fell; None if it
/// did not come back before the phase ended.
fn back_to(s: &dfsbench_result::Series, start: f64, t: f64, during_to: f64, end: f64, base: f64) -> Option<f64> {
    let per = (RECOVERY_WINDOW_S / s.interval_s).round().max(1.0) as usize;
    let first = buckets(s.interval_s, start, start, t).end;
    let last = buckets(s.interval_s, start, start, end).end.min(s.ops.len());
    let dip_end = buckets(s.interval_s, start, start, during_to).end;
    let rate = |k: usize| s.ops[k..k + per].iter().sum::<u64>() as f64 / RECOVERY_WINDOW_S;
    let ok = |k: usize| rate(k) >= RECOVERED_SHARE * base;
    let windows = first..last.saturating_sub(per - 1);
    let Some(dipped) = windows.clone().find(|&k| k < dip_end && !ok(k)) else {
        return Some(0.0);
    };
    let back = windows.filter(|&k| k > dipped).find(|&k| ok(k))?;
    // Counted to the window's end: only then has the 1 s at that level been seen.
    Some((start + (back + per) as f64 * s.interval_s - t).max(0.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use dfsbench_result::faults::Stalls;
    use dfsbench_result::Series;

    /// 100 ops per 100 ms, nothing from 5.0 to 8.0 s (10 timeouts in the first second of it),
    /// half speed until 9.0 s.
    fn series() -> Series {
        let ops: Vec<u64> = (0..150)
            .map(|k| match k {
                50..=79 => 0,
                80..=89 => 50,
                _ => 100,
            })
            .collect();
        Series {
            interval_s: 0.1,
            bytes: ops.iter().map(|o| o * 10).collect(),
            errors: (0..150).map(|k| u64::from((50..60).contains(&k))).collect(),
            errors_by_kind: [(
                "timeout".to_string(),
                (0..150).map(|k| u64::from((50..60).contains(&k))).collect(),
            )]
            .into(),
            ops,
            ..Default::default()
        }
    }

    #[test]
    fn windows_stall_and_recovery_come_from_the_series() {
        let s = series();
        // The phase started at run time 2.0 s: the fault at 7.0 s is 5.0 s into it.
        let mut row = FaultImpact::default();
        let stalls = Stalls {
            gaps: vec![Interval {
                from_s: 7.0,
                to_s: 10.0,
            }],
            ..Stalls::default()
        };
        let phase: PhaseResult = serde_json::from_value(serde_json::json!({
            "name": "write", "label": "write 1 KiB", "job": 0, "job_name": "files", "workload": "files",
            "params": {}, "workers": 1, "threads": 1, "start_s": 2.0, "duration_s": 15.0, "ramp_s": 0.0,
            "ops": 0, "bytes": 0, "ops_per_sec": 0.0, "bytes_per_sec": 0.0,
            "errors": {"total": 0, "by_kind": {}, "samples": []},
            "stonewall": {"duration_s": 0.0, "ops": 0, "bytes": 0, "ops_per_sec": 0.0, "bytes_per_sec": 0.0},
            "latency": {"count": 0, "min_ns": 0, "mean_ns": 0.0, "stdev_ns": 0.0, "p50_ns": 0, "p90_ns": 0,
                "p99_ns": 0, "p99_9_ns": 0, "p99_99_ns": 0, "max_ns": 0, "histogram": ""},
            "series": {"interval_s": 1.0, "ops": [], "bytes": [], "errors": []},
            "cpu": {"user_s": 0.0, "sys_s": 0.0, "cores": 0.0}, "workers_detail": []
        }))
        .unwrap();
        let phase = PhaseResult {
            fine_series: Some(s),
            stalls: Some(stalls),
            ..phase
        };
        measure(&mut row, &phase, 7.0, (None, None), Some(10.0));
        let (b, d, a) = (row.before.unwrap(), row.during.unwrap(), row.after.unwrap());
        assert!((b.ops_per_sec - 1000.0).abs() < 1e-6, "{b:?}");
        assert_eq!(d.ops_per_sec, 0.0, "{d:?}");
        assert_eq!(d.errors, 10);
        // 10 s after the window, cut at the phase's end (17 s): 10 x 50 + 60 x 100 in 7 s.
        assert!((a.ops_per_sec - 6500.0 / 7.0).abs() < 1e-6, "{a:?}");
        assert_eq!(row.errors_by_kind["timeout"], 10);
        assert_eq!(row.stall_s, 3.0);
        assert_eq!(row.first_success_after_s, Some(3.0));
        // The 1 s window from 8.8 s of the phase holds 2 x 50 + 8 x 100 = 900 operations, 90%
        // of the level before; it ends at 9.8 s, 4.8 s after the fault.
        let back = row.throughput_recovered_after_s.unwrap();
        assert!((back - 4.8).abs() < 1e-6, "{back}");
        assert_eq!(row.during_ratio, Some(0.0));

        // A STOP at 7.0 s and its CONT at 9.0 s: the gap (7.0-10.0 s) is the STOP's stall; the
        // CONT's row says operations came back 1 s after it, with no stall of its own.
        let mut stop = FaultImpact::default();
        measure(&mut stop, &phase, 7.0, (None, Some(9.0)), Some(9.0));
        let mut cont = FaultImpact::default();
        measure(&mut cont, &phase, 9.0, (Some(7.0), None), None);
        assert_eq!((stop.stall_s, stop.first_success_after_s), (3.0, Some(3.0)));
        assert_eq!((cont.stall_s, cont.stall_from_s), (0.0, None));
        assert_eq!(cont.first_success_after_s, Some(1.0));

        // A longest gap under the stall threshold is no stop: operations resumed at once.
        let short = Stalls {
            threshold_s: 1.0,
            gaps: vec![Interval { from_s: 9.0, to_s: 9.5 }],
            ..Stalls::default()
        };
        let phase = PhaseResult {
            stalls: Some(short),
            ..phase
        };
        let mut row = FaultImpact::default();
        measure(&mut row, &phase, 7.0, (None, None), Some(10.0));
        assert_eq!(row.stall_s, 0.5);
        assert_eq!(row.first_success_after_s, Some(0.0));

        // Throughput that kept its level (here: rose) over a fault did not recover from it,
        // whatever a noisy second within the window did.
        let mut noisy = series();
        for (k, v) in noisy.ops.iter_mut().enumerate() {
            *v = match k {
                50..=59 => 80,
                60.. => 130,
                _ => 100,
            };
        }
        let steady = PhaseResult {
            fine_series: Some(noisy),
            stalls: Some(Stalls::default()),
            ..phase.clone()
        };
        let mut row = FaultImpact::default();
        measure(&mut row, &steady, 5.0, (None, None), None);
        assert!(row.during_ratio.unwrap() > 1.0, "{:?}", row.during_ratio);
        assert_eq!(row.throughput_recovered_after_s, Some(0.0));

        // A second fault at 9.0 s (the CONT of a stop at 7.0 s) is judged against the quiet
        // the first left, not the level before it.
        let mut row = FaultImpact::default();
        measure(&mut row, &phase, 9.0, (Some(7.0), None), None);
        let b = row.before.unwrap();
        assert_eq!((b.from_s, b.ops_per_sec), (7.0, 0.0), "{b:?}");
    }
}
