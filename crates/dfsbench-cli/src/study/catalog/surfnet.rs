//! surfnet (seed 003, SURFnet): null tests, iozone-style I/O on a 2 GB file, bonnie++-style seeks.

use super::super::model::{Cell, Metric, NullField, PhaseSel, Point, Row, Spread, Study, Table};
use super::super::scale::Scale;
use super::common::{fio_size, io_job, timed, timing, LAB};

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
    let mut points = Vec::new();
    let mut rows = Vec::new();
    for rec in RECORDS {
        let size = scale.blocks(FILE, rec);
        let mut cells = Vec::new();
        for (rw, _) in PATTERNS {
            let id = format!("{rw}-{}k", rec >> 10);
            points.push(Point {
                null_tests: points.is_empty(),
                spread: Spread::Threads,
                id: id.clone(),
                params: format!("{rw}, {} records, one {size} B file, 1 process", fio_size(rec)),
                jobs: vec![io_job(rw, 1, rec, size, 1)],
            });
            cells.push(Cell::new(&id, PhaseSel::op(rw), Metric::MibPerSec));
        }
        rows.push(Row {
            labels: vec![fio_size(rec)],
            cells,
        });
    }
    let seek_secs = scale.duration(SEEK_SECS);
    let seek_size = scale.blocks(FILE, 8 << 10);
    let mut seeks = timed(
        io_job("randread", SEEKERS, 8 << 10, seek_size / SEEKERS as u64, 1),
        seek_secs,
    );
    seeks.workloads.io.shared_file = Some(true);
    points.push(Point {
        null_tests: false,
        spread: Spread::Threads,
        id: "seeks".into(),
        params: format!(
            "{SEEKERS} processes reading 8 KiB at random offsets of one {seek_size} B file, {}",
            timing(seek_secs)
        ),
        jobs: vec![seeks],
    });
    Study {
        name: "surfnet",
        title: "Distributed file system on the SURFnet network",
        source: "seeds/003_58e89ffa19cf4598.txt",
        points,
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
                    ("round trip, stat (median)", NullField::RoundTrip),
                    ("TCP connect (median)", NullField::Connect),
                ]
                .map(|(label, f)| Row {
                    labels: vec![label.into(), Metric::Null(f).unit().into()],
                    cells: vec![Cell::new("write-8k", PhaseSel::op("write"), Metric::Null(f))],
                })
                .into(),
            },
            Table {
                title: "Sequential and random I/O on a 2 GB file, MiB/s".into(),
                row_header: vec!["record".into()],
                columns: PATTERNS.iter().map(|p| p.1.to_string()).collect(),
                rows,
            },
            Table {
                title: "Random seeks/s (one 8 KiB block read per seek)".into(),
                row_header: vec!["test".into()],
                columns: vec!["seeks/s".into()],
                rows: vec![Row {
                    labels: vec!["random seeks".into()],
                    cells: vec![Cell::new("seeks", PhaseSel::op("randread"), Metric::OpsPerSec)],
                }],
            },
        ],
        notes: vec![
            "Null tests run once, before the first point (`write-8k`); a TCP connect time exists only for network targets.".into(),
            format!("20 ms RTT between client and servers: {LAB}."),
            format!("Failure matrix (client, metadata server, storage server, link): {LAB}."),
        ],
        localfs_baseline: false,
    }
}
