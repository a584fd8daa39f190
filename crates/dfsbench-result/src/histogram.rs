//! The latency histograms of a result: how they are bounded, summarised into a [`Latency`]
//! and written into (and read back from) its `histogram` field.

use base64::Engine as _;
use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;

use crate::Latency;

/// Highest latency the histograms hold exactly (one hour); longer ones saturate.
const MAX_LATENCY_NS: u64 = 3_600_000_000_000;

pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_LATENCY_NS, 3).expect("valid histogram bounds")
}

/// A histogram that one worker records into: the unit and precision of [`new_histogram`], but
/// it starts at 16 KiB (up to 2 µs) and grows as slower operations come, to at most the same
/// hour. The full range costs 264 KiB, every page written when it is made; a worker whose
/// operations take 100 µs needs 64 KiB. Record with [`record_latency`]; it merges into
/// [`new_histogram`]'s, which is what a result serializes.
pub fn new_growing_histogram() -> Histogram<u64> {
    let mut hist = Histogram::new_with_bounds(1, 2, 3).expect("valid histogram bounds");
    hist.auto(true);
    hist
}

/// Record a latency, capped at the hour the histograms hold exactly (a growing histogram would
/// otherwise grow past what merges into [`new_histogram`]). Not `saturating_record`: it clamps
/// to the current bound and never grows.
#[inline]
pub fn record_latency(hist: &mut Histogram<u64>, ns: u64) {
    hist.record(ns.min(MAX_LATENCY_NS))
        .expect("a histogram grows to any latency up to its hour");
}

/// Summarise a histogram, with its serialized form.
pub fn latency(hist: &Histogram<u64>) -> Latency {
    if hist.is_empty() {
        return Latency {
            histogram: serialize(hist),
            ..Latency::default()
        };
    }
    Latency {
        count: hist.len(),
        min_ns: hist.min(),
        mean_ns: hist.mean(),
        stdev_ns: hist.stdev(),
        p50_ns: hist.value_at_quantile(0.50),
        p90_ns: hist.value_at_quantile(0.90),
        p99_ns: hist.value_at_quantile(0.99),
        p99_9_ns: hist.value_at_quantile(0.999),
        p99_99_ns: hist.value_at_quantile(0.9999),
        max_ns: hist.max(),
        histogram: serialize(hist),
    }
}

/// HdrHistogram V2 + DEFLATE, base64: the interchange format every HdrHistogram port reads.
pub fn serialize(hist: &Histogram<u64>) -> String {
    let mut bytes = Vec::new();
    V2DeflateSerializer::new()
        .serialize(hist, &mut bytes)
        .expect("serializing into memory cannot fail");
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Read back a histogram written by [`serialize`].
pub fn deserialize(text: &str) -> Result<Histogram<u64>, String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|e| format!("histogram is not base64: {e}"))?;
    hdrhistogram::serialization::Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| format!("histogram is not HdrHistogram V2: {e:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_growing_histogram_holds_what_a_full_one_does_and_merges_into_it() {
        let mut grow = new_growing_histogram();
        let mut full = new_histogram();
        // distinct_values() is the length of the counts array: what the histogram costs.
        for ns in [0, 1, 2_047, 150_000] {
            record_latency(&mut grow, ns);
            record_latency(&mut full, ns);
        }
        let fast = grow.distinct_values();
        assert!(fast * 3 < full.distinct_values(), "{fast} counts for 150 µs");
        for ns in [7_000_000, 40_000_000_000, MAX_LATENCY_NS, u64::MAX / 4] {
            record_latency(&mut grow, ns);
            record_latency(&mut full, ns);
        }
        assert!(fast < grow.distinct_values(), "it grew");
        assert_eq!(grow.distinct_values(), full.distinct_values(), "up to the same hour");
        for q in [0.1, 0.3, 0.5, 0.7, 0.9, 1.0] {
            assert_eq!(grow.value_at_quantile(q), full.value_at_quantile(q), "q {q}");
        }
        assert_eq!(full.max(), grow.max());
        let mut merged = new_histogram();
        merged.add(&grow).unwrap();
        assert_eq!(serialize(&merged), serialize(&full));
    }
}
