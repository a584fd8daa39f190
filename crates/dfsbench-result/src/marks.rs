//! The marks that only read a result: weak phases (too short, too few operations, a short
//! stonewall window) and reads that may have come from the client's cache or beat its link.

use crate::{LinkCapacity, NullTests, PhaseResult};

const MIB: f64 = 1024.0 * 1024.0;

/// A phase shorter than this is flagged: start-up and the last operations weigh too much.
const MIN_SOUND_SECONDS: f64 = 1.0;
/// A phase with fewer operations is flagged: its percentiles rest on too few samples.
const MIN_SOUND_OPS: u64 = 1000;
/// A phase whose stonewall window (all workers running) is shorter than this share of it is
/// flagged: stragglers ran alone for most of it.
const MIN_STONEWALL_SHARE: f64 = 0.5;

/// Why a measured phase's figures are weak, one reason per broken rule; empty for prepare
/// steps and sound phases.
pub fn validity_reasons(p: &PhaseResult) -> Vec<String> {
    let mut out = Vec::new();
    if p.prepare {
        return out;
    }
    if p.duration_s < MIN_SOUND_SECONDS {
        out.push(format!("shorter than 1 s ({:.3} s)", p.duration_s));
    }
    if p.ops < MIN_SOUND_OPS {
        out.push(format!("fewer than {MIN_SOUND_OPS} operations ({})", p.ops));
    }
    if p.duration_s > 0.0 && p.stonewall.duration_s < MIN_STONEWALL_SHARE * p.duration_s {
        out.push(format!(
            "stonewall window {:.3} s is under half of the phase ({:.3} s)",
            p.stonewall.duration_s, p.duration_s
        ));
    }
    out
}

/// A read phase this many times faster than an uncached read of the target in the null test
/// is suspect, when the null test saw the client cache make a difference.
const SUSPECT_FACTOR: f64 = 2.0;

/// A read phase this many times faster than the client's link can carry is suspect: a
/// margin for the link's burst and the measurement's noise, so honest reads are not flagged.
pub const LINK_MARGIN: f64 = 1.5;

/// Why a read phase may have been served from the client's cache: its invalidation was
/// disabled or failed on a backend with a page cache, it read faster per worker than the
/// target delivered without the cache in the null test (when the null test saw a cached read
/// at least twice as fast as an uncached one, so the cache is what makes the difference), or
/// it read more than 1.5x what the client's link to the storage can carry.
pub fn cache_suspects(p: &PhaseResult, null_tests: Option<&NullTests>, link: Option<&LinkCapacity>) -> Vec<String> {
    let mut out = Vec::new();
    let Some(cache) = &p.cache else {
        return out;
    };
    if cache.left_warm() {
        out.push(format!(
            "served from client cache? the page cache was {}",
            cache.describe()
        ));
    }
    let read_bps = p
        .ops_by_kind
        .iter()
        .find(|k| k.op == "read")
        .map_or(p.bytes_per_sec, |k| k.bytes_per_sec);
    let bw = null_tests.and_then(|n| n.bandwidth.as_ref());
    if let Some((cold, warm)) = bw.and_then(|b| Some((b.read_bytes_per_sec, b.cached_read_bytes_per_sec?))) {
        let per_worker = read_bps / p.workers.max(1) as f64;
        if cold > 0.0 && warm >= SUSPECT_FACTOR * cold && per_worker > SUSPECT_FACTOR * cold {
            out.push(format!(
                "served from client cache? {:.0} MiB/s per worker, over {SUSPECT_FACTOR}x the target's uncached read in the null test ({:.0} MiB/s; cached {:.0} MiB/s)",
                per_worker / MIB,
                cold / MIB,
                warm / MIB
            ));
        }
    }
    if let Some(link) = link.filter(|l| l.bytes_per_sec > 0.0) {
        let per_host = busiest_host_read(p, read_bps);
        if per_host > LINK_MARGIN * link.bytes_per_sec {
            let host = if p.nodes.len() > 1 { " on one host" } else { "" };
            out.push(format!(
                "served from client cache? read {:.0} MiB/s{host}, over {LINK_MARGIN}x what the client's link to the storage carries ({}, {})",
                per_host / MIB,
                link.source,
                link.basis
            ));
        }
    }
    out
}

/// The read throughput through one client's link: the phase's, or in a run over several
/// hosts the busiest host's share of it.
fn busiest_host_read(p: &PhaseResult, read_bps: f64) -> f64 {
    let busiest = p.nodes.iter().map(|n| n.bytes_per_sec).fold(0.0, f64::max);
    if p.nodes.len() > 1 && p.bytes_per_sec > 0.0 {
        busiest * read_bps / p.bytes_per_sec
    } else {
        read_bps
    }
}
