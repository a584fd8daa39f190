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
