//! fio-matrix (seed 004): 4 patterns x 3 block sizes x 4 thread counts, iodepth 32, 180 s.

use super::super::model::{line, series, Cell, Metric, PhaseSel, Point, Row, Spread, Study, Table, XAxis};
use super::super::scale::Scale;
use super::common::{fio_size, io_job, timed, timing};

pub fn fio_matrix(scale: Scale) -> Study {
    const PATTERNS: [(&str, &str); 4] = [
        ("read", "sequential read"),
        ("write", "sequential write"),
        ("randread", "random read"),
        ("randwrite", "random write"),
    ];
    const BS: [u64; 3] = [4 << 10, 128 << 10, 1024 << 10];
    const THREADS: [usize; 4] = [1, 2, 4, 8];
    const SECS: f64 = 180.0;
    let secs = scale.duration(SECS);
    let mut points = Vec::new();
    let mut tables = Vec::new();
    let mut figures = Vec::new();
    for (t, (rw, title)) in PATTERNS.into_iter().enumerate() {
        // A chart per (pattern, block size): threads on x, a line per system.
        for (c, &bs) in BS.iter().enumerate() {
            figures.push(line(
                format!("{title}, bs {}: MiB/s over threads", fio_size(bs)),
                "threads",
                XAxis::Count,
                "MiB/s",
                vec![series(
                    t,
                    c,
                    (0..THREADS.len()).collect(),
                    THREADS.map(|n| n as f64).into(),
                )],
            ));
        }
        let mut rows = Vec::new();
        for t in THREADS {
            let mut cells = Vec::new();
            for bs in BS {
                let id = format!("{rw}-{}k-t{t}", bs >> 10);
                let size = scale.blocks(1 << 30, bs);
                let mut job = timed(io_job(rw, t, bs, size, 32), secs);
                job.settings.threads = Some(t);
                points.push(Point {
                    disruption: None,
                    one_way_delay_ms: None,
                    left_out: None,
                    null_tests: false,
                    spread: Spread::Threads,
                    id: id.clone(),
                    params: format!(
                        "{rw}, bs {}, {t} threads x {size} B, iodepth 32, {}",
                        fio_size(bs),
                        timing(secs)
                    ),
                    jobs: vec![job],
                });
                cells.push(Cell::new(&id, PhaseSel::op(rw), Metric::MibPerSec));
            }
            rows.push(Row {
                labels: vec![t.to_string()],
                cells,
            });
        }
        tables.push(Table {
            title: format!("{title}, MiB/s: threads x block size"),
            row_header: vec!["threads".into()],
            columns: BS.iter().map(|&b| fio_size(b)).collect(),
            rows,
        });
    }
    Study {
        name: "fio-matrix",
        title: "Performance evaluation of distributed file systems for data-intensive computing",
        publication: "Performance evaluation of distributed file systems for data-intensive computing (Ceph, GlusterFS, Lustre, EOS and others; fio with plain and erasure-coded layouts)",
        points,
        tables,
        figures,
        notes: vec![
            "Layouts plain vs erasure-coded 4+2: give both as labelled targets, e.g. `--target plain=/mnt/plain --target ec=/mnt/ec42`; each table then has a column per layout.".into(),
        ],
        localfs_baseline: false,
        run: Default::default(),
        score: None,
    }
}
