//! Tests of the ranks' parts: their wire form, the engine pick and the exact merge.

use super::combine::probe_pick;
use super::*;
use crate::cluster::Member;
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
        wait: rank.is_multiple_of(3).then(|| serialize(&hists[0])),
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
            ..Default::default()
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
            clock_rtt_s: None,
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
    // The accelerators' waits (train epochs) travel up the tree as exactly.
    let waits = merge_histograms(hists.iter().step_by(3).map(|h| &h[0]));
    for fanout in [1, 3] {
        let tree = tree_merge(parts().map(|p| p.0).collect(), fanout, &members);
        let wait = tree.wait.expect("ranks 0 and 3 waited");
        assert_eq!(deserialize(&serialize(&wait)).unwrap(), waits, "fanout {fanout}");
    }
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
