//! Latency curves from a phase's merged HDR histogram (never from per-request logs): the
//! percentile distribution (HdrHistogram's classic plot) and the cumulative distribution.

use hdrhistogram::Histogram;

/// Distinct recorded values (highest equivalent value of each bucket) and their counts.
fn buckets(h: &Histogram<u64>) -> Vec<(u64, u64)> {
    h.iter_recorded()
        .map(|v| (h.highest_equivalent(v.value_iterated_to()), v.count_at_value()))
        .collect()
}

/// The percentile curve: points (nines, latency ns) where nines = -log10(1 - q), so 1 is
/// p90, 2 is p99, 3 is p99.9. It runs from p0 to the max, and stops at the last percentile
/// the number of operations can tell apart (log10(count) nines) plus the max.
pub(crate) fn percentile_curve(h: &Histogram<u64>) -> Vec<(f64, f64)> {
    let total = h.len();
    if total == 0 {
        return Vec::new();
    }
    let b = buckets(h);
    let top = (total as f64).log10().clamp(0.0, 6.0);
    let steps = (top / 0.02).ceil() as usize;
    let mut out = Vec::with_capacity(steps + 2);
    let mut idx = 0;
    let mut cum = b[0].1;
    for s in 0..=steps {
        let x = (s as f64 * 0.02).min(top);
        let q = 1.0 - 10f64.powf(-x);
        // The value below which a fraction q of the operations lie (at least one op).
        let want = ((q * total as f64).ceil() as u64).max(1);
        while cum < want && idx + 1 < b.len() {
            idx += 1;
            cum += b[idx].1;
        }
        out.push((x, b[idx].0 as f64));
    }
    // The max at the last position, so the curve ends where the table's max is.
    let max = h.max() as f64;
    if let Some(last) = out.last_mut() {
        last.1 = last.1.max(max);
    }
    out
}

/// The cumulative distribution: points (latency ns, fraction of operations at or below it),
/// one per recorded bucket, thinned to about `max_points` on a log scale of latency.
pub(crate) fn cdf(h: &Histogram<u64>, max_points: usize) -> Vec<(f64, f64)> {
    let total = h.len();
    if total == 0 {
        return Vec::new();
    }
    let b = buckets(h);
    let lo = (b[0].0.max(1) as f64).log10();
    let hi = (b[b.len() - 1].0.max(1) as f64).log10();
    let min_step = ((hi - lo) / max_points.max(1) as f64).max(1e-9);
    let mut out = Vec::with_capacity(max_points.min(b.len()) + 2);
    let mut cum = 0u64;
    let mut last_x = f64::NEG_INFINITY;
    for (i, (v, c)) in b.iter().enumerate() {
        cum += c;
        let x = (*v.max(&1) as f64).log10();
        if x - last_x >= min_step || i == b.len() - 1 {
            out.push((*v as f64, cum as f64 / total as f64));
            last_x = x;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hist(values: &[(u64, u64)]) -> Histogram<u64> {
        let mut h = dfsbench_result::histogram::new_histogram();
        for (v, n) in values {
            h.record_n(*v, *n).unwrap();
        }
        h
    }

    #[test]
    fn percentiles_match_the_histogram() {
        let h = hist(&[(1_000, 900), (10_000, 90), (100_000, 9), (1_000_000, 1)]);
        let c = percentile_curve(&h);
        assert_eq!(c[0].0, 0.0);
        let at = |x: f64| c.iter().find(|p| (p.0 - x).abs() < 1e-9).unwrap().1;
        assert_eq!(at(0.0), h.highest_equivalent(1_000) as f64);
        assert_eq!(at(1.0), h.value_at_quantile(0.9) as f64);
        assert_eq!(at(2.0), h.value_at_quantile(0.99) as f64);
        assert_eq!(c.last().unwrap().0, 3.0);
        assert_eq!(c.last().unwrap().1, h.max() as f64);
        assert!(c.windows(2).all(|w| w[0].1 <= w[1].1));
    }

    #[test]
    fn cdf_ends_at_one() {
        let h = hist(&[(1_000, 50), (2_000, 50)]);
        let c = cdf(&h, 100);
        assert_eq!(c.len(), 2);
        assert!((c[0].1 - 0.5).abs() < 1e-12);
        assert_eq!(c[1].1, 1.0);
        assert!(cdf(&dfsbench_result::histogram::new_histogram(), 10).is_empty());
    }
}
