//! dfsperf (seed 002, DFS-Perf): metadata, mixture and iterate workloads in multi-thread and
//! multi-process mode, scalability over threads, processes and nodes, with LocalFS.

use dfsbench_core::config::JobSpec;

use super::super::model::{line, series, Cell, FigureSpec, Metric, PhaseSel, Point, Row, Spread, Study, Table, XAxis};
use super::super::scale::Scale;
use super::common::{files_job, nodes_off, timed, timing, MB};

/// Threads, or processes, of one node in the workload tables and the node scaling.
const CLIENTS: usize = 16;

/// DFS-Perf's two ways to run `CLIENTS` clients on a node: threads of one process, or
/// single-threaded processes.
#[derive(Clone, Copy)]
enum Mode {
    Threads,
    Processes,
}

impl Mode {
    const BOTH: [Mode; 2] = [Mode::Threads, Mode::Processes];

    fn word(self) -> &'static str {
        match self {
            Mode::Threads => "threads",
            Mode::Processes => "processes",
        }
    }

    /// `1 thread`, `16 processes`.
    fn count(self, n: usize) -> String {
        match (self, n) {
            (Mode::Threads, 1) => "1 thread".into(),
            (Mode::Processes, 1) => "1 process".into(),
            _ => format!("{n} {}", self.word()),
        }
    }

    /// The suffix of its point ids.
    fn suffix(self) -> &'static str {
        match self {
            Mode::Threads => "",
            Mode::Processes => "-procs",
        }
    }

    /// `clients` clients on each of `nodes` nodes (1: this machine, no launcher needed).
    fn spread(self, clients: usize, nodes: Option<usize>) -> Spread {
        match (self, nodes) {
            (Mode::Threads, None) => Spread::Threads,
            (Mode::Processes, None) => Spread::Procs(clients),
            (Mode::Threads, Some(n)) => Spread::Nodes { nodes: n, per_node: 1 },
            (Mode::Processes, Some(n)) => Spread::Nodes {
                nodes: n,
                per_node: clients,
            },
        }
    }

    /// A job of `clients` clients per node as one process of this mode runs it.
    fn job(self, clients: usize, job: JobSpec) -> JobSpec {
        let per_process = match self {
            Mode::Threads => clients,
            Mode::Processes => 1,
        };
        let mut job = job;
        job.settings.workers = Some(per_process);
        job.settings.threads = Some(per_process);
        job
    }
}

/// `nodes`: the node counts of the scaling over nodes (1 is always run, as its baseline); empty
/// runs this machine only.
pub fn dfsperf(scale: Scale, nodes: &[usize]) -> Study {
    const MIX_SECS: f64 = 60.0;
    // Per client, when the scaled duration is too short to be time-based.
    const MIX_OPS: u64 = 10000;
    const MIXES: [u32; 3] = [80, 50, 20];
    const SCALING: [usize; 6] = [1, 2, 4, 8, 16, 32];
    let meta_files = scale.count(1000);
    let mix_secs = scale.duration(MIX_SECS);
    let files = scale.count(100);
    // DFS-Perf gives no size: 1 MB files, at every scale (the count scales).
    let file_size = MB;
    let mut points = Vec::new();
    // A point of `clients` clients of `mode` on each of `nodes` nodes (None: this machine).
    let mut point = |id: String, params: String, mode: Mode, clients: usize, nodes: Option<usize>, job: JobSpec| {
        let who = match nodes {
            None => mode.count(clients),
            Some(1) => format!("1 node x {}", mode.count(clients)),
            Some(n) => format!("{n} nodes x {}", mode.count(clients)),
        };
        points.push(Point {
            disruption: None,
            one_way_delay_ms: None,
            left_out: None,
            null_tests: false,
            id,
            params: format!("{params}; {who}"),
            jobs: vec![mode.job(clients, job)],
            spread: mode.spread(clients, nodes),
        });
    };

    let mut meta_job = JobSpec::new("metadata", "meta");
    meta_job.shared.files = Some(meta_files);
    for mode in Mode::BOTH {
        point(
            format!("metadata{}", mode.suffix()),
            format!("{meta_files} files per client"),
            mode,
            CLIENTS,
            None,
            meta_job.clone(),
        );
    }
    let meta_rows = ["create", "stat", "open", "list", "rename", "delete"]
        .map(|op| Row {
            labels: vec![op.into()],
            cells: Mode::BOTH
                .map(|m| Cell::new(&format!("metadata{}", m.suffix()), PhaseSel::op(op), Metric::OpsPerSec))
                .into(),
        })
        .into();

    let mut mix_rows = Vec::new();
    for r in MIXES {
        let ops = scale.count(MIX_OPS);
        let mut job = JobSpec::new("mixture", "mix");
        job.shared.files = Some(files);
        job.shared.file_size = Some(file_size.to_string());
        job.workloads.mix.mix = Some(vec![format!("read={r}"), format!("write={}", 100 - r)]);
        let mut job = timed(job, mix_secs);
        if mix_secs.is_none() {
            job.workloads.mix.ops = Some(ops);
        }
        let mut cells = Vec::new();
        for mode in Mode::BOTH {
            let id = format!("mix{r}{}", mode.suffix());
            point(
                id.clone(),
                format!(
                    "whole-file reads/writes {r}/{} over {files} files of {file_size} B each, {}",
                    100 - r,
                    mix_secs.map_or(format!("{ops} operations per client"), |_| timing(mix_secs))
                ),
                mode,
                CLIENTS,
                None,
                job.clone(),
            );
            cells.extend(["read", "write"].map(|k| Cell::new(&id, PhaseSel::op("mix"), Metric::KindMibPerWorker(k))));
        }
        mix_rows.push(Row {
            labels: vec![format!("{r}/{}", 100 - r)],
            cells,
        });
    }

    let mut iter_rows = Vec::new();
    for shuffle in [true, false] {
        let base = if shuffle { "iterate-shuffle" } else { "iterate" };
        let mut cells = Vec::new();
        for mode in Mode::BOTH {
            let id = format!("{base}{}", mode.suffix());
            point(
                id.clone(),
                format!(
                    "{files} files of {file_size} B per client; iteration 1 reads iteration 0's files ({})",
                    if shuffle { "another client's" } else { "its own" }
                ),
                mode,
                CLIENTS,
                None,
                {
                    let mut job = JobSpec::new("iterate", "iterate");
                    job.shared.files = Some(files);
                    job.shared.file_size = Some(file_size.to_string());
                    job.workloads.iterate.iterations = Some(2);
                    job.workloads.iterate.shuffle = Some(shuffle);
                    job
                },
            );
            cells.extend(["read", "write"].map(|k| {
                Cell::new(
                    &id,
                    PhaseSel::with("iterate", "iteration", 1.0),
                    Metric::KindMibPerWorker(k),
                )
            }));
        }
        iter_rows.push(Row {
            labels: vec![if shuffle { "shuffle" } else { "non-shuffle" }.into()],
            cells,
        });
    }

    // Scalability: write, read and delete `files` files per client.
    let scaling_job = || {
        let mut job = files_job("files", 1, &[(files, file_size)]);
        job.shared.phases = Some(vec!["write".into(), "read".into(), "delete".into()]);
        job
    };
    let speedup_cells = |id: &str, baseline: &str| -> Vec<Cell> {
        ["write", "read"]
            .into_iter()
            .flat_map(|op| {
                let c = Cell::new(id, PhaseSel::op(op), Metric::MibPerSec);
                [c.clone(), c.speedup(baseline)]
            })
            .collect()
    };
    let mut scale_tables = Vec::new();
    for mode in Mode::BOTH {
        let mut rows = Vec::new();
        for n in SCALING {
            // One process with one thread is the same run in both modes.
            let id = match (mode, n) {
                (Mode::Processes, 1) => "threads1".to_string(),
                (Mode::Threads, _) => format!("threads{n}"),
                (Mode::Processes, _) => format!("procs{n}"),
            };
            if id != "threads1" || matches!(mode, Mode::Threads) {
                point(
                    id.clone(),
                    format!("{files} files of {file_size} B per client"),
                    mode,
                    n,
                    None,
                    scaling_job(),
                );
            }
            rows.push(Row {
                labels: vec![n.to_string()],
                cells: speedup_cells(&id, "threads1"),
            });
        }
        scale_tables.push(Table {
            title: format!(
                "Scalability on one node over {}: MiB/s and speedup against 1 client",
                mode.word()
            ),
            row_header: vec![mode.word().into()],
            columns: ["write MiB/s", "write speedup", "read MiB/s", "read speedup"]
                .map(String::from)
                .into(),
            rows,
        });
    }

    let mut node_counts: Vec<usize> = nodes.to_vec();
    if !node_counts.is_empty() && !node_counts.contains(&1) {
        node_counts.insert(0, 1);
    }
    let mut node_rows = Vec::new();
    for mode in Mode::BOTH {
        let baseline = format!("nodes1-{}", mode.word());
        for &k in &node_counts {
            let id = format!("nodes{k}-{}", mode.word());
            point(
                id.clone(),
                format!("{files} files of {file_size} B per client"),
                mode,
                CLIENTS,
                Some(k),
                scaling_job(),
            );
            node_rows.push(Row {
                labels: vec![k.to_string(), format!("{CLIENTS} {}", mode.word())],
                cells: speedup_cells(&id, &baseline),
            });
        }
    }

    let per_client_columns = || {
        ["threads read", "threads write", "processes read", "processes write"]
            .map(String::from)
            .into()
    };
    let mut tables = vec![
        Table {
            title: format!("Metadata workload, ops/s ({CLIENTS} clients; whole system)"),
            row_header: vec!["operation".into()],
            columns: vec!["threads".into(), "processes".into()],
            rows: meta_rows,
        },
        Table {
            title: format!("Mixture workload: average throughput per client, MiB/s ({CLIENTS} clients)"),
            row_header: vec!["read/write".into()],
            columns: per_client_columns(),
            rows: mix_rows,
        },
        Table {
            title: format!("Iterate workload: average throughput per client, MiB/s ({CLIENTS} clients)"),
            row_header: vec!["mode".into()],
            columns: per_client_columns(),
            rows: iter_rows,
        },
    ];
    tables.extend(scale_tables);
    let nodes_note = if node_rows.is_empty() {
        format!("1..16 nodes: {}.", nodes_off("2,4,8,16", CLIENTS))
    } else {
        tables.push(Table {
            title: format!(
                "Scalability over nodes, {CLIENTS} threads or processes per node: MiB/s and speedup against 1 node"
            ),
            row_header: vec!["nodes".into(), "clients per node".into()],
            columns: ["write MiB/s", "write speedup", "read MiB/s", "read speedup"]
                .map(String::from)
                .into(),
            rows: node_rows,
        });
        "Nodes: the processes of every node-scaling point were started by --launcher; 1 node is run the same way as the baseline.".into()
    };
    Study {
        name: "dfsperf",
        title: "DFS-Perf performance report",
        publication: "DFS-Perf performance report (the DFS-Perf project's Perf Report)",
        points,
        figures: speedup_figures(&tables, SCALING.len(), node_counts.len()),
        tables,
        notes: vec![
            "LocalFS is measured as the single-node baseline (the `localfs` column, a directory under the system temp directory) unless a target is labelled localfs.".into(),
            format!("Multi-process mode: {CLIENTS} single-threaded `dfsbench run --procs` processes on this machine against the threads of one process; the scaling over processes shares its 1-client row with the threads."),
            nodes_note,
        ],
        localfs_baseline: true,
        run: Default::default(),
        score: None,
    }
}

/// Figure 4: speedup over threads and processes on one node (tables 3 and 4) and over nodes
/// (table 5, threads rows then processes rows), write and read, a line per system.
fn speedup_figures(tables: &[Table], scaling: usize, nodes: usize) -> Vec<FigureSpec> {
    let mut out = Vec::new();
    let x_of = |t: &Table, rows: &[usize]| -> Vec<f64> {
        rows.iter()
            .map(|&r| t.rows[r].labels[0].parse().unwrap_or(f64::NAN))
            .collect()
    };
    let mut sets = vec![(3, "threads", (0..scaling).collect::<Vec<_>>(), "one node".to_string())];
    sets.push((4, "processes", (0..scaling).collect(), "one node".into()));
    if nodes > 0 {
        for (i, mode) in Mode::BOTH.iter().enumerate() {
            let rows = (i * nodes..(i + 1) * nodes).collect();
            sets.push((5, "nodes", rows, format!("{CLIENTS} {} per node", mode.word())));
        }
    }
    for (t, x_label, rows, who) in sets {
        for (c, op) in [(1, "write"), (3, "read")] {
            out.push(line(
                format!("{op} speedup over {x_label}, {who}"),
                x_label,
                XAxis::Count,
                "speedup (x)",
                vec![series(t, c, rows.clone(), x_of(&tables[t], &rows))],
            ));
        }
    }
    out
}
