//! size-sweep (seed 000, CS597 report): write then read N files of size S, and metadata ops/s.

use dfsbench_core::config::JobSpec;

use super::super::model::{bars, Cell, Metric, PhaseSel, Point, Row, Spread, Study, Table};
use super::super::scale::Scale;
use super::common::{files_job, nodes_off, pub_size, GB, KB, MB};

/// `nodes`: the client node counts above 1 to run besides the single client (the publication's
/// 4, 16 and 64), one client process per node.
pub fn size_sweep(scale: Scale, nodes: &[usize]) -> Study {
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
    let multi: Vec<usize> = nodes.iter().copied().filter(|&k| k > 1).collect();
    // (suffix of the point ids, spread, words for the parameters) of every client count.
    let counts: Vec<(String, Spread, String)> = std::iter::once((String::new(), Spread::Threads, ", 1 client".into()))
        .chain(multi.iter().map(|&k| {
            (
                format!("-nodes{k}"),
                Spread::Nodes { nodes: k, per_node: 1 },
                format!(" on each of {k} nodes, one client process per node"),
            )
        }))
        .collect();
    let mut points = Vec::new();
    let mut tables = Vec::new();
    for (suffix, spread, who) in &counts {
        let mut rows = Vec::new();
        for (n, s) in SETS {
            let files = scale.files(n);
            let n2 = files.unwrap_or(1);
            let id = format!("n{n}-s{s}{suffix}");
            let metric = if s == 0 { Metric::OpsPerSec } else { Metric::MibPerSec };
            let mut cells: Vec<Cell> = ["write", "read"]
                .map(|op| Cell::new(&id, PhaseSel::op(op), metric))
                .to_vec();
            if let Spread::Nodes { nodes, .. } = spread {
                cells.extend(["write", "read"].map(|op| Cell::new(&id, PhaseSel::op(op), metric).per_node(*nodes)));
            }
            // N as it ran: the publication's N x scale files.
            let n_label = match files {
                Some(k) if k != n => format!("{k} of {n}"),
                _ => n.to_string(),
            };
            rows.push(Row {
                labels: vec![n_label, pub_size(s), metric.unit().into()],
                cells,
            });
            let left_out = files.is_none().then(|| {
                format!(
                    "left out at scale {scale}: {n} x {scale} is no whole file of {} (sizes never scale); run with --scale {} or more",
                    pub_size(s),
                    Scale::least_for(n)
                )
            });
            points.push(Point {
                disruption: None,
                one_way_delay_ms: None,
                params: match &left_out {
                    Some(why) => why.clone(),
                    None => format!("{n2} x {s} B files{who}"),
                },
                left_out,
                null_tests: false,
                jobs: vec![files_job("files", 1, &[(n2, s)])],
                spread: *spread,
                id,
            });
        }
        tables.push(match spread {
            Spread::Nodes { nodes, .. } => Table {
                title: format!("Write and read throughput per (N, S), {nodes} nodes: aggregate and mean per node"),
                row_header: vec!["N".into(), "S".into(), "unit".into()],
                columns: ["write", "read", "write per node", "read per node"]
                    .map(String::from)
                    .into(),
                rows,
            },
            _ => Table {
                title: "Write and read throughput per (N, S), one client".into(),
                row_header: vec!["N".into(), "S".into(), "unit".into()],
                columns: vec!["write".into(), "read".into()],
                rows,
            },
        });
    }
    let touch = scale.count(10000);
    let mut meta_rows = Vec::new();
    for (suffix, spread, who) in &counts {
        let id = format!("metadata{suffix}");
        points.push(Point {
            disruption: None,
            one_way_delay_ms: None,
            left_out: None,
            null_tests: false,
            id: id.clone(),
            params: format!("create, open and delete {touch} empty files{who}"),
            jobs: vec![{
                let mut job = JobSpec::new("metadata", "meta");
                job.settings.workers = Some(1);
                job.shared.files = Some(touch);
                job.shared.phases = Some(vec!["create".into(), "open".into(), "delete".into()]);
                job
            }],
            spread: *spread,
        });
        let nodes = spread.processes();
        for (label, op) in [("touch (create)", "create"), ("read 0 B (open)", "open")] {
            let cell = Cell::new(&id, PhaseSel::op(op), Metric::OpsPerSec);
            let mut labels = vec![label.to_string()];
            let mut cells = vec![cell.clone()];
            if !multi.is_empty() {
                labels.insert(0, nodes.to_string());
                cells.push(cell.per_node(nodes));
            }
            meta_rows.push(Row { labels, cells });
        }
    }
    tables.push(if multi.is_empty() {
        Table {
            title: "Metadata: create empty files (touch) and read 0-byte files, ops/s".into(),
            row_header: vec!["operation".into()],
            columns: vec!["ops/s".into()],
            rows: meta_rows,
        }
    } else {
        Table {
            title: "Metadata: create empty files (touch) and read 0-byte files, ops/s over nodes".into(),
            row_header: vec!["nodes".into(), "operation".into()],
            columns: vec!["ops/s".into(), "ops/s per node".into()],
            rows: meta_rows,
        }
    });
    let nodes_note = if multi.is_empty() {
        format!("Scale 1, 4, 16, 64 nodes: {}.", nodes_off("4,16,64", 1))
    } else {
        format!(
            "Nodes {}: every node writes and reads its own N files of size S (one client process per node, started by --launcher); \"per node\" is the aggregate divided by the nodes.",
            multi.iter().map(usize::to_string).collect::<Vec<_>>().join(", ")
        )
    };
    // The publication's figures: MB/s per (N, S) row, a bar per system; the 0 B row is ops/s.
    let mut figures = Vec::new();
    for (t, (_, spread, _)) in counts.iter().enumerate() {
        let who = match spread {
            Spread::Nodes { nodes, .. } => format!("{nodes} nodes, aggregate"),
            _ => "one client".into(),
        };
        for (c, op) in ["write", "read"].into_iter().enumerate() {
            let rows: Vec<usize> = (0..SETS.len()).filter(|&r| SETS[r].1 > 0).collect();
            let mut f = bars(format!("{op} MiB/s per (N, S), {who}"), "MiB/s", t, c, rows.clone());
            f.categories = rows
                .iter()
                .map(|&r| format!("{} x {}", tables[t].rows[r].labels[0], pub_size(SETS[r].1)))
                .collect();
            figures.push(f);
        }
    }
    Study {
        name: "size-sweep",
        title: "An Evaluation of Distributed Storage Systems (CS597 report)",
        publication: "A. Mahakode, S. Lakshminarasaiah: An Evaluation of Distributed Storage Systems, Benchmarking Storage Systems (CS597 course report)",
        points,
        tables,
        figures,
        notes: vec![nodes_note],
        localfs_baseline: false,
        run: Default::default(),
        score: None,
    }
}
