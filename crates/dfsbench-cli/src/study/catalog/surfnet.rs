//! surfnet (seed 003, SURFnet): null tests, iozone-style I/O on a 2 GB file, bonnie++-style seeks.

use dfsbench_lab::Role;

use super::super::model::{
    line, series, Cell, Disruption, Metric, NullField, PhaseSel, Point, Row, Spread, Study, Table, XAxis,
};
use super::super::scale::Scale;
use super::common::{copy_job, fio_size, io_job, timed, timing, FAULT_PHASE_S};

/// An io job as iozone and bonnie++ ran it: plain read(2) and write(2) (psync, one in flight),
/// never an engine probe inside a point (its trials are shorter than one delayed round trip,
/// and each point could pick another engine). Close is in the timed work, as the file is
/// closed before the worker's phase ends; no fsync: iozone ran without -e.
fn iozone_job(rw: &str, workers: usize, bs: u64, size: u64) -> dfsbench_core::config::JobSpec {
    let mut job = io_job(rw, workers, bs, size, 1);
    job.workloads.io.ioengine = Some("psync".into());
    job
}

pub fn surfnet(scale: Scale) -> Study {
    const FILE: u64 = 2 << 30;
    const RECORDS: [u64; 3] = [8 << 10, 256 << 10, 8 << 20];
    const PATTERNS: [(&str, &str); 4] = [
        ("write", "seq write"),
        ("read", "seq read"),
        ("randread", "random read"),
        ("randwrite", "random write"),
    ];
    // bonnie++: three processes seeking in one file, reading an 8 KiB block at each seek.
    const SEEKERS: usize = 3;
    const SEEK_SECS: f64 = 30.0;
    // The same I/O with 20 ms more round trip between client and servers (10 ms each way on
    // every node link), on lab targets: the publication's WAN case.
    const DELAYED_MS: u64 = 10;
    let mut points = Vec::new();
    let (mut rows, mut delayed_rows) = (Vec::new(), Vec::new());
    for rec in RECORDS {
        let size = scale.blocks(FILE, rec);
        let (mut cells, mut delayed_cells) = (Vec::new(), Vec::new());
        for delay in [None, Some(DELAYED_MS)] {
            for (rw, _) in PATTERNS {
                let mut id = format!("{rw}-{}k", rec >> 10);
                let mut params = format!("{rw}, {} records, one {size} B file, 1 process", fio_size(rec));
                if let Some(ms) = delay {
                    id += &format!("-{}ms", 2 * ms);
                    params += &format!(", {} ms more round trip (lab targets only)", 2 * ms);
                }
                points.push(Point {
                    disruption: None,
                    one_way_delay_ms: delay,
                    left_out: None,
                    null_tests: points.is_empty(),
                    spread: Spread::Threads,
                    id: id.clone(),
                    params,
                    jobs: vec![iozone_job(rw, 1, rec, size)],
                });
                let cell = Cell::new(&id, PhaseSel::op(rw), Metric::MibPerSec);
                match delay {
                    None => cells.push(cell),
                    Some(_) => delayed_cells.push(cell),
                }
            }
        }
        // The file the records cover, as it ran (2 GB at scale 1).
        let file = dfsbench_report::fmt::bytes(size as f64);
        rows.push(Row {
            labels: vec![fio_size(rec), file.clone()],
            cells,
        });
        delayed_rows.push(Row {
            labels: vec![fio_size(rec), file],
            cells: delayed_cells,
        });
    }
    let seek_secs = scale.duration(SEEK_SECS);
    let seek_size = scale.blocks(FILE, 8 << 10);
    let mut seeks = timed(
        iozone_job("randread", SEEKERS, 8 << 10, seek_size / SEEKERS as u64),
        seek_secs,
    );
    seeks.workloads.io.shared_file = Some(true);
    // bonnie++'s seeks with the added round trip too, as the publication's Table 3 has them.
    let mut seek_rows = Vec::new();
    for delay in [None, Some(DELAYED_MS)] {
        let (id, label, also) = match delay {
            None => ("seeks".to_string(), "random seeks".to_string(), String::new()),
            Some(ms) => (
                format!("seeks-{}ms", 2 * ms),
                format!("random seeks, {} ms more round trip", 2 * ms),
                format!(", {} ms more round trip (lab targets only)", 2 * ms),
            ),
        };
        points.push(Point {
            disruption: None,
            one_way_delay_ms: delay,
            left_out: None,
            null_tests: false,
            spread: Spread::Threads,
            id: id.clone(),
            params: format!(
                "{SEEKERS} processes reading 8 KiB at random offsets of one {seek_size} B file, {}{also}",
                timing(seek_secs)
            ),
            jobs: vec![seeks.clone()],
        });
        seek_rows.push(Row {
            labels: vec![label],
            cells: vec![Cell::new(&id, PhaseSel::op("randread"), Metric::OpsPerSec)],
        });
    }
    // The failure matrix: during a copy, a server or its link is taken out for a third of the
    // phase, then brought back; the cell says what the copy saw.
    let out_at = FAULT_PHASE_S / 4.0;
    let back_at = out_at + FAULT_PHASE_S / 3.0;
    // At least a few files a second, so that a gap of a second stands out.
    let rate = (50.0 * scale.factor()).round().max(4.0);
    let failures = [
        ("metadata server", "fail-metadata", Role::Metadata, "kill", "restart"),
        ("storage server", "fail-storage", Role::Storage, "kill", "restart"),
        (
            "link to a storage server",
            "fail-link",
            Role::Storage,
            "cut-link",
            "heal-link",
        ),
        // The two clients on two client nodes, as dfsbench's own processes (mpirun would end
        // the job with the node): the second node dies with its client.
        ("client", "fail-client", Role::Client, "kill", "restart"),
    ];
    let mut matrix = Vec::new();
    for (label, id, role, action, back) in failures {
        // Two clients either way: two workers of one process, or one on each client node.
        let (spread, workers, clients) = if role == Role::Client {
            (Spread::LabClients(2), 1, "2 clients (one per client node)")
        } else {
            (Spread::Threads, 2, "2 clients")
        };
        points.push(Point {
            null_tests: false,
            spread,
            one_way_delay_ms: None,
            left_out: None,
            disruption: Some(Disruption {
                role,
                action,
                phase: "write",
                at_s: out_at,
                back: Some((back, back_at)),
                probe: false,
            }),
            id: id.into(),
            params: format!(
                "{clients} copy 1 MB files at {rate} files/s for {FAULT_PHASE_S:.0} s; a {label} is taken out ({action}) {out_at:.0} s in and brought back ({back}) at {back_at:.0} s; lab targets only"
            ),
            jobs: vec![copy_job("copy", workers, FAULT_PHASE_S, rate, false)],
        });
        matrix.push(Row {
            labels: vec![label.into()],
            cells: vec![Cell::new(id, PhaseSel::op("write"), Metric::FaultOutcome)],
        });
    }
    Study {
        name: "surfnet",
        title: "Distributed file system on the SURFnet network",
        publication: "J. Klaver, R. van der Jagt: Distributed file system on the SURFnet network, report, July 2010",
        points,
        figures: PATTERNS
            .iter()
            .enumerate()
            .map(|(c, (_, what))| {
                let rows: Vec<usize> = (0..RECORDS.len()).collect();
                let x: Vec<f64> = RECORDS.iter().map(|&r| r as f64).collect();
                let mut delayed = series(2, c, rows.clone(), x.clone());
                delayed.dashed = true;
                delayed.dashed_label = Some(format!("+{} ms RTT", 2 * DELAYED_MS));
                let mut f = line(
                    format!("{what}, MiB/s over record size"),
                    "record size",
                    XAxis::Bytes,
                    "MiB/s",
                    vec![series(1, c, rows, x), delayed],
                );
                f.caption = Some(format!(
                    "Solid: as the network is; dashed: {} ms more round trip (lab targets only).",
                    2 * DELAYED_MS
                ));
                f
            })
            .collect(),
        tables: vec![
            Table {
                title: "Null tests: what the client's disk and the network to the target can do".into(),
                row_header: vec!["test".into(), "unit".into()],
                columns: vec!["value".into()],
                rows: [
                    ("local disk write", NullField::DiskWrite),
                    ("local disk read", NullField::DiskRead),
                    ("write to the target (one blob)", NullField::NetWrite),
                    ("read from the target (one blob)", NullField::NetRead),
                    ("round trip, new-name lookup (median)", NullField::RoundTrip),
                    ("TCP connect, endpoint (median)", NullField::Connect),
                    ("TCP connect, each node (median)", NullField::NodeConnect),
                    ("ping, each node (median)", NullField::NodePing),
                    ("data nodes to the client (sum)", NullField::NodeBandwidth),
                ]
                .map(|(label, f)| Row {
                    labels: vec![label.into(), Metric::Null(f).unit().into()],
                    cells: vec![Cell::new("write-8k", PhaseSel::op("write"), Metric::Null(f))],
                })
                .into(),
            },
            Table {
                title: "Sequential and random I/O on one file (2 GiB at scale 1), MiB/s".into(),
                row_header: vec!["record".into(), "file".into()],
                columns: PATTERNS.iter().map(|p| p.1.to_string()).collect(),
                rows,
            },
            Table {
                title: format!(
                    "The same with {} ms more round trip between client and servers, MiB/s",
                    2 * DELAYED_MS
                ),
                row_header: vec!["record".into(), "file".into()],
                columns: PATTERNS.iter().map(|p| p.1.to_string()).collect(),
                rows: delayed_rows,
            },
            Table {
                title: "Random seeks/s (one 8 KiB block read per seek)".into(),
                row_header: vec!["test".into()],
                columns: vec!["seeks/s".into()],
                rows: seek_rows,
            },
            Table {
                title: "Failure matrix: what a copy saw while a node or link was out (continued, stalled for the longest gap without a completed write, or failed with errors)".into(),
                row_header: vec!["taken out".into()],
                columns: vec!["during a copy".into()],
                rows: matrix,
            },
        ],
        notes: vec![
            "Null tests run once per system, with the first point that runs on it without added delay or a fault (on S3, whose write points are n/a, the first read); a TCP connect time to the endpoint exists only for network targets; on lab targets each node is measured (TCP connect to a port it serves, ICMP echo, and one TCP stream from the node to the client; medians over the nodes, bandwidth summed over the nodes reads come from: the gateways of an S3, Swift or Alluxio target, else the nodes that hold data).".into(),
            "20 ms more round trip: on lab targets (`-t lab:NAME`) dfsbench adds 10 ms each way on every node link with `dfsbench lab delay` for those points and removes it after; other targets say n/a.".into(),
            "Writes are plain buffered writes, as iozone's were (no -e, no -o): a client with a write-back buffer (GlusterFS's write-behind, mfsmount) acknowledges them before the servers do, so they need not slow down by a round trip each. The file's close is timed; where close does not wait for the servers either, a phase that ends within one added round trip is marked [cache?].".into(),
            "Failure matrix: runs on lab targets (`-t lab:NAME`), whose nodes dfsbench takes out with `dfsbench lab fault`. The client row needs two client nodes (`dfsbench lab up NAME --clients 2`): its two clients run there as dfsbench's own processes (`--procs 2 --hosts client1,client2 --rank-loss continue`; under Open MPI 4.1 a lost node would end the job), and client2 is killed with its process; the other goes on, and the run records the lost one and what it had done (docs/cluster.md).".into(),
        ],
        localfs_baseline: false,
        run: Default::default(),
        score: None,
    }
}
