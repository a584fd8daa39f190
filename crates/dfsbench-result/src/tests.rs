//! Tests of the schema types' own logic: the median, the marks on weak and cache-served phases,
//! and the link capacity over the nodes that serve data.

use serde_json::json;

use crate::units::MIB;
use crate::*;

/// A measured read phase of 2 workers: 10 s, 50,000 operations of 1 MiB, all of it
/// within the stonewall window.
fn read_phase() -> PhaseResult {
    let latency = json!({"count": 0, "min_ns": 0, "mean_ns": 0.0, "stdev_ns": 0.0, "p50_ns": 0, "p90_ns": 0,
        "p99_ns": 0, "p99_9_ns": 0, "p99_99_ns": 0, "max_ns": 0, "histogram": ""});
    serde_json::from_value(json!({
        "name": "read", "label": "read 1 MiB", "job": 0, "job_name": "files", "workload": "files",
        "params": {}, "workers": 2, "threads": 2, "start_s": 0.0, "duration_s": 10.0, "ramp_s": 0.0,
        "ops": 50000, "bytes": 50000u64 << 20, "ops_per_sec": 5000.0, "bytes_per_sec": 5000.0 * MIB,
        "errors": {"total": 0, "by_kind": {}, "samples": []},
        "stonewall": {"duration_s": 10.0, "ops": 50000, "bytes": 0, "ops_per_sec": 0.0, "bytes_per_sec": 0.0},
        "latency": latency, "series": {"interval_s": 1.0, "ops": [], "bytes": [], "errors": []},
        "cpu": {"user_s": 0.0, "sys_s": 0.0, "cores": 0.0}, "workers_detail": [],
        "cache": {"policy": "invalidated", "files": 2, "dropped_kernel_caches": false}
    }))
    .expect("a phase")
}

#[test]
fn the_median_ignores_one_outlier_either_way() {
    assert_eq!(median(&[]), 0.0);
    assert_eq!(median(&[5.0]), 5.0);
    assert_eq!(median(&[1.0, 100.0, 3.0, 2.0]), 2.5);
    assert_eq!(median(&[10.0, 11.0, 0.1, 12.0, 9.0, 1e9]), 10.5);
}

#[test]
fn each_broken_rule_gives_its_reason() {
    let mut p = read_phase();
    assert!(validity_reasons(&p).is_empty());
    p.stonewall.duration_s = 4.9;
    assert_eq!(
        validity_reasons(&p),
        ["stonewall window 4.900 s is under half of the phase (10.000 s)"]
    );
    p.stonewall.duration_s = 0.4;
    p.duration_s = 0.999;
    p.ops = 999;
    let r = validity_reasons(&p);
    assert_eq!(r.len(), 3, "{r:?}");
    assert_eq!(r[0], "shorter than 1 s (0.999 s)");
    assert_eq!(r[1], "fewer than 1000 operations (999)");
    p.prepare = true;
    assert!(validity_reasons(&p).is_empty(), "prepare steps are not judged");
}

fn null_tests(cold_mib: f64, cached_mib: f64) -> NullTests {
    NullTests {
        bandwidth: Some(Bandwidth {
            bytes: 8 << 20,
            write_bytes_per_sec: 100.0 * MIB,
            read_bytes_per_sec: cold_mib * MIB,
            cached_read_bytes_per_sec: Some(cached_mib * MIB),
        }),
        ..NullTests::default()
    }
}

#[test]
fn a_reread_left_warm_marks_the_phase_even_after_dropped_kernel_caches() {
    let mut p = read_phase();
    let cache = p.cache.as_mut().unwrap();
    (cache.rereads, cache.reread_invalidations, cache.reread_invalidation_s) = (100, 100, 1.5);
    assert!(!cache.left_warm());
    assert_eq!(
        cache.describe(),
        "invalidated 2 files, and again before each of 100 re-reads (1.500 s of the workers' time)"
    );
    cache.policy = PhaseCache::DISABLED.into();
    (cache.dropped_kernel_caches, cache.reread_invalidations) = (true, 0);
    assert!(
        cache.left_warm(),
        "dropping before the phase does not cool the re-reads"
    );
    assert_eq!(
        cache.describe(),
        "not invalidated (--invalidate 0), kernel caches dropped, 100 of 100 re-reads not invalidated first"
    );
    let s = cache_suspects(&p, None, None);
    assert_eq!(s.len(), 1, "{s:?}");
    assert!(s[0].ends_with("100 of 100 re-reads not invalidated first"), "{}", s[0]);
}

#[test]
fn reads_faster_than_the_uncached_target_are_suspect_where_the_cache_makes_a_difference() {
    // 2500 MiB/s per worker.
    let p = read_phase();
    assert!(
        cache_suspects(&p, None, None).is_empty(),
        "no null test, invalidated: nothing to say"
    );
    let s = cache_suspects(&p, Some(&null_tests(1000.0, 6000.0)), None);
    assert_eq!(s.len(), 1, "{s:?}");
    assert!(
        s[0].starts_with("served from client cache? 2500 MiB/s per worker"),
        "{}",
        s[0]
    );
    assert!(
        cache_suspects(&p, Some(&null_tests(1300.0, 6000.0)), None).is_empty(),
        "within 2x"
    );
    assert!(
        cache_suspects(&p, Some(&null_tests(1000.0, 1500.0)), None).is_empty(),
        "the cache made no difference in the null test (tmpfs, mem): nothing to compare"
    );
    let mut off = read_phase();
    off.cache.as_mut().unwrap().policy = PhaseCache::DISABLED.into();
    let s = cache_suspects(&off, None, None);
    assert_eq!(
        s,
        ["served from client cache? the page cache was not invalidated (--invalidate 0)"]
    );
    off.cache = None;
    assert!(
        cache_suspects(&off, None, None).is_empty(),
        "phases that read nothing are not judged"
    );
}

fn node(name: &str, serves_data: bool, mib: Option<f64>) -> NodeNullTests {
    NodeNullTests {
        name: name.into(),
        addr: "127.0.0.1".into(),
        serves_data,
        bandwidth: mib.map(|m| NodeBandwidth {
            bytes: 16 << 20,
            bytes_per_sec: m * MIB,
        }),
        ..NodeNullTests::default()
    }
}

#[test]
fn the_link_is_the_sum_over_the_nodes_that_serve_data_and_all_of_them() {
    let nodes = [
        node("node1", false, Some(9000.0)),
        node("node2", true, Some(1000.0)),
        node("node3", true, Some(1500.0)),
    ];
    let link = LinkCapacity::measured(&nodes).expect("every data node measured");
    assert_eq!(link.bytes_per_sec, 2500.0 * MIB, "the metadata node carries no data");
    assert_eq!(link.source, "measured");
    assert!(link.basis.contains("node2 + node3"), "{}", link.basis);
    let unmeasured = [node("node2", true, Some(1000.0)), node("node3", true, None)];
    assert!(
        LinkCapacity::measured(&unmeasured).is_none(),
        "a sum without node3 would understate the link"
    );
    assert!(LinkCapacity::measured(&[node("node1", false, Some(1.0))]).is_none());
}

#[test]
fn reads_beyond_what_the_link_carries_are_marked_and_reads_within_it_are_not() {
    // 5000 MiB/s over the phase.
    let p = read_phase();
    let link = |mib: f64| LinkCapacity {
        bytes_per_sec: mib * MIB,
        source: LinkCapacity::CONFIGURED.into(),
        basis: format!("lab limit on 2 node links, {mib} MiB/s in all"),
    };
    let s = cache_suspects(&p, None, Some(&link(1000.0)));
    assert_eq!(s.len(), 1, "{s:?}");
    assert!(
        s[0].starts_with("served from client cache? read 5000 MiB/s, over 1.5x what the client's link to the storage carries (configured, lab limit on 2 node links, 1000 MiB/s in all)"),
        "{}",
        s[0]
    );
    assert!(
        cache_suspects(&p, None, Some(&link(4000.0))).is_empty(),
        "5000 MiB/s is within the margin of a 4000 MiB/s link"
    );
    let mut two_hosts = read_phase();
    let host = |name: &str, mib: f64| -> NodeSummary {
        serde_json::from_value(json!({"host": name, "ranks": [0], "ops": 1, "bytes": 1, "errors": 0,
            "duration_s": 10.0, "ops_per_sec": 1.0, "bytes_per_sec": mib * MIB, "p50_ns": 0, "p99_ns": 0, "max_ns": 0}))
        .expect("a node summary")
    };
    two_hosts.nodes = vec![host("a", 2500.0), host("b", 2500.0)];
    assert!(
        cache_suspects(&two_hosts, None, Some(&link(2000.0))).is_empty(),
        "each host's 2500 MiB/s goes through its own link"
    );
}
