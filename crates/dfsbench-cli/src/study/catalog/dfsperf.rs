//! dfsperf (seed 002, DFS-Perf): metadata, mixture, iterate and thread scalability, with LocalFS.

use dfsbench_core::config::JobSpec;

use super::super::model::{Cell, Metric, PhaseSel, Point, Row, Study, Table};
use super::super::scale::Scale;
use super::{files_job, timed, timing, MB, NODES};

pub fn dfsperf(scale: Scale) -> Study {
    const THREADS: usize = 16;
    const MIX_SECS: f64 = 60.0;
    // Per thread, when the scaled duration is too short to be time-based.
    const MIX_OPS: u64 = 10000;
    const MIXES: [u32; 3] = [80, 50, 20];
    const SCALING: [usize; 6] = [1, 2, 4, 8, 16, 32];
    let meta_files = scale.count(1000);
    let mix_secs = scale.duration(MIX_SECS);
    let files = scale.count(100);
    let file_size = scale.size(MB);
    let mut points = vec![Point {
        null_tests: false,
        id: "metadata".into(),
        params: format!("{THREADS} threads x {meta_files} files"),
        jobs: vec![JobSpec {
            name: Some("metadata".into()),
            workload: Some("meta".into()),
            workers: Some(THREADS),
            threads: Some(THREADS),
            files: Some(meta_files),
            ..Default::default()
        }],
    }];
    let meta_rows = ["create", "stat", "open", "list", "rename", "delete"]
        .map(|op| Row {
            labels: vec![op.into()],
            cells: vec![Cell::new("metadata", PhaseSel::op(op), Metric::OpsPerSec)],
        })
        .into();
    let mut mix_rows = Vec::new();
    for r in MIXES {
        let id = format!("mix{r}");
        let ops = scale.count(MIX_OPS);
        let mut job = timed(
            JobSpec {
                name: Some("mixture".into()),
                workload: Some("mix".into()),
                workers: Some(THREADS),
                threads: Some(THREADS),
                files: Some(files),
                file_size: Some(file_size.to_string()),
                mix: Some(vec![format!("read={r}"), format!("write={}", 100 - r)]),
                ..Default::default()
            },
            mix_secs,
        );
        if mix_secs.is_none() {
            job.ops = Some(ops);
        }
        points.push(Point {
            null_tests: false,
            id: id.clone(),
            params: format!(
                "{THREADS} threads, whole-file reads/writes {r}/{} over {files} files of {file_size} B each, {}",
                100 - r,
                mix_secs.map_or(format!("{ops} operations per thread"), |_| timing(mix_secs))
            ),
            jobs: vec![job],
        });
        mix_rows.push(Row {
            labels: vec![format!("{r}/{}", 100 - r)],
            cells: ["read", "write"]
                .map(|k| Cell::new(&id, PhaseSel::op("mix"), Metric::KindMibPerWorker(k)))
                .to_vec(),
        });
    }
    let mut iter_rows = Vec::new();
    for shuffle in [true, false] {
        let id = if shuffle { "iterate-shuffle" } else { "iterate" };
        points.push(Point {
            null_tests: false,
            id: id.into(),
            params: format!(
                "{THREADS} threads x {files} files of {file_size} B; iteration 1 reads iteration 0's files ({})",
                if shuffle { "another thread's" } else { "its own" }
            ),
            jobs: vec![JobSpec {
                name: Some("iterate".into()),
                workload: Some("iterate".into()),
                workers: Some(THREADS),
                threads: Some(THREADS),
                files: Some(files),
                file_size: Some(file_size.to_string()),
                iterations: Some(2),
                shuffle: Some(shuffle),
                ..Default::default()
            }],
        });
        iter_rows.push(Row {
            labels: vec![if shuffle { "shuffle" } else { "non-shuffle" }.into()],
            cells: ["read", "write"]
                .map(|k| {
                    Cell::new(
                        id,
                        PhaseSel::with("iterate", "iteration", 1.0),
                        Metric::KindMibPerWorker(k),
                    )
                })
                .to_vec(),
        });
    }
    let mut scale_rows = Vec::new();
    for t in SCALING {
        let id = format!("threads{t}");
        let mut job = files_job("files", t, &[(files, file_size)]);
        job.threads = Some(t);
        job.phases = Some(vec!["write".into(), "read".into(), "delete".into()]);
        points.push(Point {
            null_tests: false,
            id: id.clone(),
            params: format!("{t} threads x {files} files of {file_size} B"),
            jobs: vec![job],
        });
        let cells = ["write", "read"]
            .into_iter()
            .flat_map(|op| {
                let c = Cell::new(&id, PhaseSel::op(op), Metric::MibPerSec);
                [c.clone(), c.speedup("threads1")]
            })
            .collect();
        scale_rows.push(Row {
            labels: vec![t.to_string()],
            cells,
        });
    }
    Study {
        name: "dfsperf",
        title: "DFS-Perf performance report",
        source: "seeds/002_f9927a88126f4750.txt",
        points,
        tables: vec![
            Table {
                title: format!("Metadata workload, ops/s ({THREADS} threads; whole system)"),
                row_header: vec!["operation".into()],
                columns: vec!["ops/s".into()],
                rows: meta_rows,
            },
            Table {
                title: format!("Mixture workload: average throughput per thread, MiB/s ({THREADS} threads)"),
                row_header: vec!["read/write".into()],
                columns: vec!["read".into(), "write".into()],
                rows: mix_rows,
            },
            Table {
                title: format!("Iterate workload: average throughput per thread, MiB/s ({THREADS} threads)"),
                row_header: vec!["mode".into()],
                columns: vec!["read".into(), "write".into()],
                rows: iter_rows,
            },
            Table {
                title: "Scalability on one node: MiB/s and speedup against 1 thread".into(),
                row_header: vec!["threads".into()],
                columns: vec![
                    "write MiB/s".into(),
                    "write speedup".into(),
                    "read MiB/s".into(),
                    "read speedup".into(),
                ],
                rows: scale_rows,
            },
        ],
        notes: vec![
            "LocalFS is measured as the single-node baseline (the `localfs` column, a directory under the system temp directory) unless a target is labelled localfs.".into(),
            format!("Multi-process mode and 1..16 nodes: {NODES}."),
        ],
        localfs_baseline: true,
    }
}
