//! size-sweep (seed 000, CS597 report): write then read N files of size S, and metadata ops/s.

use dfsbench_core::config::JobSpec;

use super::super::model::{Cell, Metric, PhaseSel, Point, Row, Study, Table};
use super::super::scale::Scale;
use super::{files_job, pub_size, GB, KB, MB, NODES};

pub fn size_sweep(scale: Scale) -> Study {
    const SETS: [(u64, u64); 9] = [
        (10000, 0),
        (10000, KB),
        (1000, 10 * KB),
        (1000, 100 * KB),
        (1000, MB),
        (1000, 10 * MB),
        (100, 100 * MB),
        (10, GB),
        (1, 10 * GB),
    ];
    let mut points = Vec::new();
    let mut rows = Vec::new();
    for (n, s) in SETS {
        let (n2, s2) = (scale.count(n), scale.size(s));
        let id = format!("n{n}-s{s}");
        let metric = if s == 0 { Metric::OpsPerSec } else { Metric::MibPerSec };
        rows.push(Row {
            labels: vec![n.to_string(), pub_size(s), metric.unit().into()],
            cells: ["write", "read"]
                .map(|op| Cell::new(&id, PhaseSel::op(op), metric))
                .to_vec(),
        });
        points.push(Point {
            null_tests: false,
            params: format!("{n2} x {s2} B files, 1 client"),
            jobs: vec![files_job("files", 1, &[(n2, s2)])],
            id,
        });
    }
    let touch = scale.count(10000);
    points.push(Point {
        null_tests: false,
        id: "metadata".into(),
        params: format!("create, open and delete {touch} empty files, 1 client"),
        jobs: vec![JobSpec {
            name: Some("metadata".into()),
            workload: Some("meta".into()),
            workers: Some(1),
            files: Some(touch),
            phases: Some(vec!["create".into(), "open".into(), "delete".into()]),
            ..Default::default()
        }],
    });
    let meta_row = |label: &str, op| Row {
        labels: vec![label.into()],
        cells: vec![Cell::new("metadata", PhaseSel::op(op), Metric::OpsPerSec)],
    };
    Study {
        name: "size-sweep",
        title: "An Evaluation of Distributed Storage Systems (CS597 report)",
        source: "seeds/000_529a54b9192bcd68.txt",
        points,
        tables: vec![
            Table {
                title: "Write and read throughput per (N, S), one client".into(),
                row_header: vec!["N".into(), "S".into(), "unit".into()],
                columns: vec!["write".into(), "read".into()],
                rows,
            },
            Table {
                title: "Metadata: create empty files (touch) and read 0-byte files, ops/s".into(),
                row_header: vec!["operation".into()],
                columns: vec!["ops/s".into()],
                rows: vec![
                    meta_row("touch (create)", "create"),
                    meta_row("read 0 B (open)", "open"),
                ],
            },
        ],
        notes: vec![format!("Scale 1, 4, 16, 64 nodes: {NODES}.")],
        localfs_baseline: false,
    }
}
