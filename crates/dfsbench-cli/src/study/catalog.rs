//! The seed evaluations (see STUDIES.md) as data: their points at a scale, and their tables.

use dfsbench_core::config::JobSpec;

use super::model::{Cell, Metric, NullField, PhaseSel, Point, Row, Study, Table};
use super::scale::Scale;

/// Name and one line of every study, in `dfsbench study list` order.
pub const STUDIES: [(&str, &str); 5] = [
    (
        "size-sweep",
        "write/read N files of size S, 10000 x 0 B to 1 x 10 GB, and metadata ops/s (CS597 report)",
    ),
    (
        "clients-sweep",
        "2..256 closed-loop clients x 0 KB..10 MB files: write/read/delete, client CPU (BTH thesis)",
    ),
    (
        "dfsperf",
        "DFS-Perf: metadata, 80/20 50/50 20/80 read/write mixtures, 1..32 thread scalability, LocalFS baseline",
    ),
    (
        "surfnet",
        "SURFnet: sequential and random I/O with 8K/256K/8M records on a 2 GB file, random seeks/s",
    ),
    (
        "fio-matrix",
        "fio: read/write/randread/randwrite x 4K/128K/1024K blocks x 1/2/4/8 threads, iodepth 32, 180 s",
    ),
];

pub fn build(name: &str, scale: Scale) -> Option<Study> {
    Some(match name {
        "size-sweep" => size_sweep(scale),
        "clients-sweep" => clients_sweep(scale),
        "dfsperf" => dfsperf(scale),
        "surfnet" => surfnet(scale),
        "fio-matrix" => fio_matrix(scale),
        _ => return None,
    })
}

/// The publications' units: 1 KB = 1024 B, 1 MB = 1000 KB, 1 GB = 1000 MB (STUDIES.md).
const KB: u64 = 1024;
const MB: u64 = 1000 * KB;
const GB: u64 = 1000 * MB;

fn pub_size(bytes: u64) -> String {
    match bytes {
        0 => "0".into(),
        b if b >= GB && b % GB == 0 => format!("{} GB", b / GB),
        b if b >= MB && b % MB == 0 => format!("{} MB", b / MB),
        b if b % KB == 0 => format!("{} KB", b / KB),
        b => format!("{b} B"),
    }
}

/// fio's binary units for block sizes: 4K, 128K, 1024K.
fn fio_size(bytes: u64) -> String {
    format!("{}K", bytes / 1024)
}

/// A files job. Its buffer is the largest file up to 1 MiB (at least 4 KiB): the same calls as
/// the default 1 MiB buffer, without filling megabytes per worker for tiny files.
fn files_job(name: &str, workers: usize, sets: &[(u64, u64)]) -> JobSpec {
    let largest = sets.iter().map(|s| s.1).max().unwrap_or(0);
    JobSpec {
        bs: Some(largest.clamp(4 << 10, 1 << 20).to_string()),
        name: Some(name.into()),
        workload: Some("files".into()),
        workers: Some(workers),
        sizes: Some(sets.iter().map(|(n, s)| format!("{n}x{s}")).collect()),
        ..Default::default()
    }
}

fn io_job(rw: &str, workers: usize, bs: u64, size: u64, iodepth: usize) -> JobSpec {
    JobSpec {
        name: Some(rw.into()),
        workload: Some("io".into()),
        workers: Some(workers),
        rw: Some(rw.into()),
        bs: Some(bs.to_string()),
        size: Some(size.to_string()),
        iodepth: Some(iodepth),
        ..Default::default()
    }
}

/// Shortest time-based phase that can end early when steady: a window needs a few samples.
const MIN_STEADY_S: f64 = 10.0;

/// End a time-based job's phases once throughput is steady (the duration is then the longest).
fn steady(mut job: JobSpec) -> JobSpec {
    let long_enough = job
        .duration
        .as_deref()
        .and_then(|d| d.strip_suffix("ms"))
        .and_then(|ms| ms.parse::<f64>().ok())
        .is_some_and(|ms| ms >= MIN_STEADY_S * 1000.0);
    if long_enough {
        job.until_stable = Some(true);
    }
    job
}

/// `duration` on a job when the scaled duration is at least a second.
fn timed(mut job: JobSpec, secs: Option<f64>) -> JobSpec {
    job.duration = secs.map(|s| format!("{}ms", (s * 1000.0).round() as u64));
    job
}

fn timing(secs: Option<f64>) -> String {
    match secs {
        Some(s) if s >= MIN_STEADY_S => format!("until steady, at most {s:.0} s"),
        Some(s) => format!("{s:.0} s time-based"),
        None => "one pass (scaled duration under 1 s)".into(),
    }
}

const LAB: &str =
    "needs a lab target with node control (fault and delay injection), which dfsbench does not have yet: not run";
const NODES: &str = "client nodes and processes scale with MPI: run this study under `mpirun -n NODES dfsbench study ...` (or with `--procs`) once dfsbench's MPI mode is available; this run is one client node";

fn size_sweep(scale: Scale) -> Study {
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

fn clients_sweep(scale: Scale) -> Study {
    const CLIENTS: [usize; 8] = [2, 4, 8, 16, 32, 64, 128, 256];
    const SMALL: [u64; 3] = [0, 10 * KB, 100 * KB];
    const LARGE: [u64; 2] = [MB, 10 * MB];
    const OPS: u64 = 1_000_000;
    // Large files run until throughput is steady, for at most this long.
    const LARGE_SECS: f64 = 300.0;
    const IOPS_CLIENTS: usize = 64;
    const IOPS_STEPS: [f64; 8] = [3000.0, 4000.0, 5000.0, 6000.0, 7000.0, 8000.0, 9000.0, 10000.0];
    const STEP_SECS: f64 = 60.0;
    let large_secs = scale.duration(LARGE_SECS);
    let all: Vec<u64> = SMALL.iter().chain(&LARGE).copied().collect();
    // A job per size, so every phase is found by its job's name whatever the scale.
    let job_name = |s: u64| format!("size-{s}");
    let mut points = Vec::new();
    let (mut write, mut read, mut delete, mut cpu_w, mut cpu_r) = Default::default();
    let row = |rows: &mut Vec<Row>, c: usize, cells: Vec<Cell>| {
        rows.push(Row {
            labels: vec![c.to_string()],
            cells,
        })
    };
    for c in CLIENTS {
        let id = format!("clients{c}");
        let per_client = (scale.count(OPS) / c as u64).max(1);
        let jobs = all
            .iter()
            .map(|&s| {
                let job = files_job(&job_name(s), c, &[(per_client, scale.size(s))]);
                if LARGE.contains(&s) {
                    steady(timed(job, large_secs))
                } else {
                    job
                }
            })
            .collect();
        points.push(Point {
            null_tests: false,
            id: id.clone(),
            params: format!(
                "{c} clients x {per_client} files of each size ({} B); large files {}",
                all.iter()
                    .map(|&s| scale.size(s).to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                timing(large_secs)
            ),
            jobs,
        });
        let cell =
            |op: &'static str, s: u64, metric: Metric| Cell::new(&id, PhaseSel::of_job(op, &job_name(s)), metric);
        let rate = |s: u64| if s == 0 { Metric::OpsPerSec } else { Metric::MibPerSec };
        row(&mut write, c, all.iter().map(|&s| cell("write", s, rate(s))).collect());
        row(&mut read, c, all.iter().map(|&s| cell("read", s, rate(s))).collect());
        row(
            &mut delete,
            c,
            all[1..].iter().map(|&s| cell("delete", s, Metric::OpsPerSec)).collect(),
        );
        row(
            &mut cpu_w,
            c,
            all.iter().map(|&s| cell("write", s, Metric::CpuPercent)).collect(),
        );
        row(
            &mut cpu_r,
            c,
            all.iter().map(|&s| cell("read", s, Metric::CpuPercent)).collect(),
        );
    }
    // SPECsfs-style open-loop load: 10 KB files read and written 80/20 at each requested rate.
    let step_secs = (STEP_SECS * scale.factor()).max(1.0);
    let mut iops = JobSpec {
        name: Some("iops".into()),
        workload: Some("mix".into()),
        workers: Some(IOPS_CLIENTS),
        files: Some(scale.count(100)),
        file_size: Some(scale.size(10 * KB).to_string()),
        mix: Some(vec!["read=80".into(), "write=20".into()]),
        duration: Some(format!("{}ms", (step_secs * 1000.0).round() as u64)),
        ..Default::default()
    };
    iops.rate_steps = Some(IOPS_STEPS.to_vec());
    points.push(Point {
        null_tests: false,
        id: "iops".into(),
        params: format!(
            "{IOPS_CLIENTS} clients, 80/20 reads/writes of {} B files, {step_secs:.0} s per requested rate",
            scale.size(10 * KB)
        ),
        jobs: vec![iops],
    });
    let iops_rows = IOPS_STEPS
        .iter()
        .map(|&r| Row {
            labels: vec![format!("{r:.0}")],
            cells: vec![
                Cell::new("iops", PhaseSel::with("mix", "rate", r), Metric::AchievedOps),
                Cell::new("iops", PhaseSel::with("mix", "rate", r), Metric::MeanLatencyMs),
            ],
        })
        .collect();
    let size_cols = |zero_ops: bool, from: usize| -> Vec<String> {
        all[from..]
            .iter()
            .map(|&s| {
                if s == 0 && zero_ops {
                    "0 KB (ops/s)".to_string()
                } else {
                    pub_size(s)
                }
            })
            .collect()
    };
    let table = |title: &str, columns: Vec<String>, rows: Vec<Row>| Table {
        title: title.into(),
        row_header: vec!["clients".into()],
        columns,
        rows,
    };
    Study {
        name: "clients-sweep",
        title: "Performance Evaluation of Distributed Storage Systems (BTH)",
        source: "seeds/001_fa73fd1af02ac1e0.txt",
        points,
        tables: vec![
            table("Write (open+write+close), MiB/s; 0 KB = create, ops/s", size_cols(true, 0), write),
            table("Read (open+read+close), MiB/s; 0 KB = open, ops/s", size_cols(true, 0), read),
            table("Delete, ops/s", size_cols(false, 1), delete),
            table("Client CPU % during writes (100 = one core)", size_cols(false, 0), cpu_w),
            table("Client CPU % during reads (100 = one core)", size_cols(false, 0), cpu_r),
            Table {
                title: "Requested vs achieved IOPS, mean response time from the intended start".into(),
                row_header: vec!["requested IOPS".into()],
                columns: vec!["achieved IOPS".into(), "response ms".into()],
                rows: iops_rows,
            },
        ],
        notes: vec![
            format!("Small files: {OPS} operations per size split over the clients; large files run until throughput is steady (at most {LARGE_SECS} s per phase)."),
            "Server CPU %: not measured; dfsbench sees only the client.".into(),
            format!("Recovery time after a storage node is wiped: {LAB}."),
        ],
        localfs_baseline: false,
    }
}

fn dfsperf(scale: Scale) -> Study {
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

fn surfnet(scale: Scale) -> Study {
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
    seeks.shared_file = Some(true);
    points.push(Point {
        null_tests: false,
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

fn fio_matrix(scale: Scale) -> Study {
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
    for (rw, title) in PATTERNS {
        let mut rows = Vec::new();
        for t in THREADS {
            let mut cells = Vec::new();
            for bs in BS {
                let id = format!("{rw}-{}k-t{t}", bs >> 10);
                let size = scale.blocks(1 << 30, bs);
                let mut job = timed(io_job(rw, t, bs, size, 32), secs);
                job.threads = Some(t);
                points.push(Point {
                    null_tests: false,
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
        source: "seeds/004_ae6fccd7e65edd80.txt",
        points,
        tables,
        notes: vec![
            "Layouts plain vs erasure-coded 4+2: give both as labelled targets, e.g. `--target plain=/mnt/plain --target ec=/mnt/ec42`; each table then has a column per layout.".into(),
        ],
        localfs_baseline: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_study_is_consistent() {
        let scale = Scale::parse("0.001").unwrap();
        for (name, _) in STUDIES {
            let s = build(name, scale).unwrap();
            assert_eq!(s.name, name);
            let ids: std::collections::BTreeSet<_> = s.points.iter().map(|p| p.id.as_str()).collect();
            assert_eq!(ids.len(), s.points.len(), "{name}: point ids are unique");
            for t in &s.tables {
                for r in &t.rows {
                    assert_eq!(r.labels.len(), t.row_header.len(), "{name}: {}", t.title);
                    assert_eq!(r.cells.len(), t.columns.len(), "{name}: {}", t.title);
                    for c in &r.cells {
                        assert!(
                            ids.contains(c.point.as_str()),
                            "{name}: cell of unknown point {}",
                            c.point
                        );
                    }
                }
            }
            // Every job of every point validates.
            for p in &s.points {
                dfsbench_core::config::validate(&Default::default(), &p.jobs)
                    .unwrap_or_else(|e| panic!("{name} {}: {e}", p.id));
            }
        }
        assert_eq!(pub_size(10 * GB), "10 GB");
        assert_eq!(pub_size(10 * KB), "10 KB");
        assert_eq!(build("nope", scale).map(|s| s.name), None);
    }
}
