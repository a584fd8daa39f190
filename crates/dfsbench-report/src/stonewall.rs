//! Stonewall against phase throughput: the stonewall rate counts what every worker had done when
//! the first one finished, the phase rate everything over the whole phase. When they differ by
//! more than [`GAP`], some workers ran on alone at the end (stragglers) or started late, and the
//! phase rate mixes full and partial concurrency.

use dfsbench_result::PhaseResult;

use crate::fmt;

/// The relative difference beyond which the reports explain it.
pub(crate) const GAP: f64 = 0.10;

/// (stonewall - phase) / phase ops/s, when the phase has a stonewall window and ops.
pub(crate) fn gap(p: &PhaseResult) -> Option<f64> {
    (p.stonewall.duration_s > 0.0 && p.ops_per_sec > 0.0)
        .then(|| (p.stonewall.ops_per_sec - p.ops_per_sec) / p.ops_per_sec)
}

/// The stonewall ops/s for tables; `dash` when there is no stonewall window.
pub(crate) fn rate(p: &PhaseResult, dash: &str) -> String {
    if p.stonewall.duration_s > 0.0 {
        fmt::rate(p.stonewall.ops_per_sec)
    } else {
        dash.into()
    }
}

/// Why the two rates differ, when they differ by more than [`GAP`].
pub(crate) fn explain(p: &PhaseResult, label: &str) -> Option<String> {
    let g = gap(p)?;
    if g.abs() <= GAP {
        return None;
    }
    let why = if g > 0.0 {
        "workers finished apart (stragglers): the phase rate includes a tail where fewer workers ran"
    } else {
        "the phase ran faster after the first worker finished (less contention, or late starters)"
    };
    Some(format!(
        "{label}: stonewall {} ops/s over {} vs phase {} ops/s over {} ({}): {why}",
        fmt::rate(p.stonewall.ops_per_sec),
        fmt::seconds(p.stonewall.duration_s),
        fmt::rate(p.ops_per_sec),
        fmt::seconds(p.duration_s),
        fmt::change(g * 100.0),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthetic::long_run;

    #[test]
    fn a_gap_beyond_ten_percent_is_explained() {
        let mut p = long_run(10, 4).phases.remove(1);
        p.stonewall.duration_s = p.duration_s * 0.8;
        p.stonewall.ops_per_sec = p.ops_per_sec * 1.05;
        assert_eq!(explain(&p, "x"), None, "5% is within the rule");
        p.stonewall.ops_per_sec = p.ops_per_sec * 1.25;
        let text = explain(&p, "write").unwrap();
        assert!(text.starts_with("write: stonewall") && text.contains("+25.0%") && text.contains("stragglers"));
        p.stonewall.duration_s = 0.0;
        assert_eq!(gap(&p), None, "no stonewall window");
    }
}
