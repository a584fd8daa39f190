//! How much a phase's throughput moves from second to second: the yardstick against which a
//! difference between two runs is judged.

use dfsbench_result::PhaseResult;

/// Fewest full intervals for a noise estimate.
pub(crate) const MIN_INTERVALS: usize = 3;

/// The rule, for people: printed by `compare` and the reports.
pub(crate) const RULE: &str = "noise = coefficient of variation (sample stdev / mean) of the per-second ops \
over the phase's full seconds (ramp-up and the last, partial second left out; at least 3 needed); a \
change smaller than the larger noise of the two runs is marked \"~ within noise\"";

/// The per-interval ops counts that lie wholly inside the measured window.
pub(crate) fn full_intervals(p: &PhaseResult) -> &[u64] {
    let dt = p.series.interval_s;
    if dt <= 0.0 || p.series.ops.is_empty() {
        return &[];
    }
    let eps = 1e-6 * dt;
    let first = ((p.ramp_s - eps) / dt).ceil().max(0.0) as usize;
    let end = p.ramp_s + p.duration_s;
    let last = (((end + eps) / dt).floor().max(0.0) as usize).min(p.series.ops.len());
    if first >= last {
        &[]
    } else {
        &p.series.ops[first..last]
    }
}

/// Coefficient of variation of the per-second ops, when the phase has enough full seconds.
pub fn ops_cv(p: &PhaseResult) -> Option<f64> {
    let v = full_intervals(p);
    if v.len() < MIN_INTERVALS {
        return None;
    }
    let n = v.len() as f64;
    let mean = v.iter().map(|&x| x as f64).sum::<f64>() / n;
    if mean <= 0.0 {
        return None;
    }
    let var = v.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / (n - 1.0);
    Some(var.sqrt() / mean)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthetic::long_run;

    #[test]
    fn full_intervals_leave_out_ramp_and_the_partial_last() {
        let mut p = long_run(30, 4).phases.remove(0);
        p.series.ops = vec![100, 10, 10, 12, 11, 1];
        p.series.interval_s = 1.0;
        p.ramp_s = 1.0;
        p.duration_s = 4.4; // ends at 5.4 s: interval 5 is partial
        assert_eq!(full_intervals(&p), &[10, 10, 12, 11]);
        let cv = ops_cv(&p).unwrap();
        assert!((cv - 0.0887).abs() < 1e-3, "{cv}");
        p.duration_s = 2.5;
        assert_eq!(full_intervals(&p).len(), 2);
        assert_eq!(ops_cv(&p), None, "fewer than 3 full intervals");
    }
}
