//! mlperf-storage: MLPerf Storage's training workloads (an accelerator search per profile:
//! the most emulated accelerators the storage keeps at the profile's AU) and two of its
//! checkpoint presets (write and read GB/s of the slowest rank), in its tables' shape; with
//! `--nodes`, the same over several client nodes (MLPerf's hosts).

use dfsbench_core::config::JobSpec;
use dfsbench_core::workloads::{checkpoint, train};

use super::super::model::{bars, line, series, Cell, Metric, PhaseSel, Point, Row, Spread, Study, Table, XAxis};
use super::super::scale::Scale;
use super::common::nodes_off;

/// The training profiles with MLPerf Storage's minimum AU, in percent.
const PROFILES: [(&str, u64); 3] = [("unet3d", 90), ("resnet50", 90), ("cosmoflow", 70)];
/// The checkpoint presets: the smallest two of MLPerf Storage's table.
const CHECKPOINTS: [&str; 2] = ["llama3-8b", "llama3-70b"];
/// Accelerators per client at the top of the search, at scale 1.
const TOP: u64 = 32;
/// Seconds each accelerator of the top step computes, at scale 1, and at least: the dataset
/// is sized by it (in whole batches), so every step reads the same dataset and fewer
/// accelerators take longer.
const TOP_SECONDS: f64 = 30.0;
const MIN_TOP_SECONDS: f64 = 0.5;
/// Checkpoints written and read back at scale 1 (MLPerf's num_checkpoints_write/read).
const REPEATS: u64 = 10;

/// The accelerators per client at the top of the search at `scale`: a power of two, at least 2.
fn top(scale: Scale) -> u64 {
    let want = (TOP as f64 * scale.factor()).max(2.0) as u64;
    1 << want.ilog2()
}

/// The counts a search tries: 1, 2, 4 ... `top`.
fn counts(top: u64) -> Vec<u64> {
    std::iter::successors(Some(1u64), |a| Some(a * 2))
        .take_while(|&a| a <= top)
        .collect()
}

/// `nodes`: client node counts to run each profile's search (one client process per node,
/// its accelerators per client) and each checkpoint (its ranks spread evenly) on, under
/// --launcher.
pub fn mlperf_storage(scale: Scale, nodes: &[usize]) -> Study {
    let top = top(scale);
    let top_seconds = (TOP_SECONDS * scale.factor()).max(MIN_TOP_SECONDS);
    let repeats = scale.count(REPEATS).max(2);
    let mut points = Vec::new();
    let mut held_rows = Vec::new();
    let mut step_rows = Vec::new();
    let mut figures = Vec::new();
    for (name, au) in PROFILES {
        let (batch, per_file, compute) =
            train::preset_batch(name, train::Accelerator::H100).expect("a preset of the train workload");
        let steps = (top_seconds / compute.as_secs_f64()).ceil() as u64;
        let files = (steps * batch * top).div_ceil(per_file);
        let mut job = JobSpec::new(name, "train");
        job.shared.preset = Some(name.into());
        job.shared.files = Some(files);
        job.workloads.train.accelerators = Some(top as usize);
        job.workloads.train.accelerator_search = Some(true);
        let what = format!(
            "{name} on emulated H100s: {files} files of {per_file} samples ({} samples, batch {batch}: {steps} batches for each of {top} accelerators), one epoch each with {} accelerators per client",
            files * per_file,
            counts(top).iter().map(u64::to_string).collect::<Vec<_>>().join(", ")
        );
        let id = format!("train-{name}");
        let rows = search_rows(&id, name, au, top, &mut held_rows, &mut step_rows);
        points.push(point(&id, what.clone(), job.clone(), Spread::Threads));
        for &k in nodes {
            let id = format!("train-{name}-nodes{k}");
            search_rows(&id, &clients(name, k), au, top, &mut held_rows, &mut step_rows);
            let spread = Spread::Nodes { nodes: k, per_node: 1 };
            points.push(point(&id, format!("{what}; {}", clients_on(k)), job.clone(), spread));
        }
        let x: Vec<f64> = counts(top).iter().map(|&a| a as f64).collect();
        let mut threshold = series(1, 1, rows.clone(), x.clone());
        threshold.dashed = true;
        threshold.dashed_label = Some("AU threshold".into());
        let mut f = line(
            format!("{name}: AU over emulated accelerators per client"),
            "accelerators per client",
            XAxis::Count,
            "AU %",
            vec![series(1, 0, rows, x), threshold],
        );
        f.caption = Some(format!(
            "An epoch per count; the storage feeds the most accelerators whose AU, and every smaller count's, stays at the dashed threshold ({au}%)."
        ));
        figures.push(f);
    }
    let mut ckpt_rows = Vec::new();
    for preset in CHECKPOINTS {
        let ranks = checkpoint::preset_ranks(preset).expect("a preset of the checkpoint workload");
        let mut job = JobSpec::new(preset, "checkpoint");
        job.shared.preset = Some(preset.into());
        job.shared.scale = Some(scale.factor());
        job.settings.workers = Some(ranks as usize);
        job.workloads.checkpoint.checkpoints = Some(repeats);
        let what = format!(
            "{preset} at scale {scale}: {ranks} ranks each write their shard, fsync-ed, then read it back, {repeats} times"
        );
        let id = format!("checkpoint-{preset}");
        ckpt_rows.push(checkpoint_row(&id, vec![preset.into(), ranks.to_string()], None));
        points.push(point(&id, what.clone(), job.clone(), Spread::Threads));
        for &k in nodes {
            let id = format!("checkpoint-{preset}-nodes{k}");
            let per_node = ranks as usize / k;
            let uneven = (!(ranks as usize).is_multiple_of(k))
                .then(|| format!("left out on {k} nodes: {preset}'s {ranks} ranks do not spread evenly over them"));
            let labels = vec![preset.into(), format!("{ranks} on {}", nodes_n(k))];
            ckpt_rows.push(checkpoint_row(&id, labels, uneven.as_ref()));
            let mut job = job.clone();
            job.settings.workers = Some(1);
            let spread = Spread::Nodes {
                nodes: k,
                per_node: per_node.max(1),
            };
            let on = match &uneven {
                Some(_) => format!("{k} nodes: left out"),
                None => format!("{} x {per_node} processes", nodes_n(k)),
            };
            let mut p = point(&id, format!("{what}; {on}"), job, spread);
            p.left_out = uneven;
            points.push(p);
        }
    }
    figures.insert(
        0,
        bars(
            "Emulated accelerators kept at the profile's AU, per client".into(),
            "accelerators",
            0,
            0,
            (0..held_rows.len()).collect(),
        ),
    );
    for (column, op) in [(0, "write"), (2, "read")] {
        figures.push(bars(
            format!("Checkpoint {op} GB/s (slowest rank)"),
            "GB/s",
            2,
            column,
            (0..ckpt_rows.len()).collect(),
        ));
    }
    let mut notes = vec![
        format!(
            "Training: each profile's dataset (whole batches for each accelerator of the top of the search to compute {TOP_SECONDS} s at scale 1, here {top_seconds} s) is generated once; then one epoch per count of accelerators per client (1, 2, 4 ... {top}), the page cache dropped before each. The answer is MLPerf's: the largest count whose AU, and every smaller count's, reached the profile's threshold; 0 when one accelerator did not. A count equal to the top means every step held: the storage may feed more (`dfsbench run -w train --accelerator-search --accelerators N`)."
        ),
        "Checkpoints: a checkpoint's GB/s is its bytes over its slowest rank's time, and its time that rank's, as MLPerf reports them; the cells are the mean over the checkpoints.".into(),
        "How this differs from MLPerf Storage (no Python data loader or framework, one client process unless --nodes): README.md, `-w train` and `-w checkpoint`.".into(),
    ];
    if nodes.is_empty() {
        notes.push(format!("Client nodes: {}.", nodes_off("2,4", 1)));
    } else {
        notes.push("Over client nodes: each profile's search runs one client process per node, each with the step's accelerators (the accelerators per client are MLPerf's per host), and each checkpoint's ranks are spread evenly over the nodes, a process each; the figures are over every client.".into());
    }
    if scale.factor() < 1.0 {
        notes.push(format!(
            "Not an MLPerf-sized run: at scale {scale} each accelerator of the top of the search computes for {top_seconds} s (MLPerf's `datasize` sizes the dataset from the accelerators and the clients' memory, far larger), so the first batch's wait weighs more and AU is lower; checkpoints are {scale} of the model's size, {repeats} times."
        ));
    }
    Study {
        name: "mlperf-storage",
        title: "MLPerf Storage: training (accelerators supported) and checkpointing",
        publication: "MLPerf Storage (MLCommons, github.com/mlcommons/storage): its training workloads' accelerator utilization and its checkpoint workloads",
        points,
        tables: vec![
            Table {
                title: "Training: the most emulated H100s per client kept at the profile's AU".into(),
                row_header: vec!["profile".into(), "AU threshold".into(), "searched".into()],
                columns: ["accelerators", "AU %", "samples/s", "MiB/s"].map(String::from).into(),
                rows: held_rows,
            },
            Table {
                title: "Training: AU at each step of the search".into(),
                row_header: vec!["profile".into(), "accelerators".into()],
                columns: ["AU %", "AU threshold %", "MiB/s"].map(String::from).into(),
                rows: step_rows,
            },
            Table {
                title: "Checkpoints: write and read of the whole checkpoint (slowest rank), mean over the checkpoints".into(),
                row_header: vec!["preset".into(), "ranks".into()],
                columns: ["write GB/s", "write s", "read GB/s", "read s"].map(String::from).into(),
                rows: ckpt_rows,
            },
        ],
        figures,
        notes,
        localfs_baseline: false,
        run: Default::default(),
        score: None,
    }
}

/// A profile's rows of the first two tables for point `id` (`label` names the profile and its
/// clients): the search's answer, and AU at each of its steps; returns the steps' rows.
fn search_rows(
    id: &str,
    label: &str,
    au: u64,
    top: u64,
    held_rows: &mut Vec<Row>,
    step_rows: &mut Vec<Row>,
) -> Vec<usize> {
    held_rows.push(Row {
        labels: vec![label.into(), format!("{au}%"), format!("1-{top}")],
        cells: [
            Metric::SearchAccelerators,
            Metric::SearchAu,
            Metric::SearchSamplesPerSec,
            Metric::SearchMibPerSec,
        ]
        .map(|m| Cell::new(id, PhaseSel::op("train"), m))
        .into(),
    });
    let first = step_rows.len();
    for a in counts(top) {
        let at = PhaseSel::with("train", "active_accelerators", a as f64);
        step_rows.push(Row {
            labels: vec![label.into(), a.to_string()],
            cells: [Metric::TrainAu, Metric::TrainAuThreshold, Metric::MibPerSec]
                .map(|m| Cell::new(id, at.clone(), m))
                .into(),
        });
    }
    (first..step_rows.len()).collect()
}

/// A profile's label on `k` client nodes.
fn clients(profile: &str, k: usize) -> String {
    format!("{profile}, {}", clients_on(k))
}

/// `1 node`, `2 nodes`.
fn nodes_n(k: usize) -> String {
    match k {
        1 => "1 node".into(),
        k => format!("{k} nodes"),
    }
}

/// `1 client node`, `2 client nodes`.
fn clients_on(k: usize) -> String {
    match k {
        1 => "1 client node".into(),
        k => format!("{k} client nodes"),
    }
}

/// A checkpoint's row: write and read GB/s and seconds of the slowest rank.
fn checkpoint_row(id: &str, labels: Vec<String>, left_out: Option<&String>) -> Row {
    Row {
        labels,
        cells: ["write", "read"]
            .into_iter()
            .flat_map(|op| {
                [Metric::CheckpointGbPerSec, Metric::CheckpointSecs]
                    .map(|m| Cell::new(id, PhaseSel::op(op), m).left_out(left_out))
            })
            .collect(),
    }
}

fn point(id: &str, params: String, job: JobSpec, spread: Spread) -> Point {
    Point {
        id: id.into(),
        params,
        jobs: vec![job],
        null_tests: false,
        spread,
        disruption: None,
        one_way_delay_ms: None,
        left_out: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_search_and_the_dataset_shrink_with_the_scale() {
        let at = |f: &str| Scale::parse(f).unwrap();
        assert_eq!([top(at("1")), top(at("0.25")), top(at("0.01"))], [32, 8, 2]);
        assert_eq!(counts(8), [1, 2, 4, 8]);
        let s = mlperf_storage(at("0.01"), &[]);
        assert_eq!(s.tables[1].rows.len(), 3 * 2, "a row per profile and count");
        let files = |id: &str| s.points.iter().find(|p| p.id == id).unwrap().jobs[0].shared.files;
        // 0.5 s of compute for each of 2 accelerators: 2 batches of 7 at 323 ms, 3 of 400 at
        // 224 ms (2400 samples in records of 1251), 143 of 1 at 3.5 ms.
        assert_eq!(files("train-unet3d"), Some(28));
        assert_eq!(files("train-resnet50"), Some(2));
        assert_eq!(files("train-cosmoflow"), Some(286));
        // At scale 1: 30 s for each of 32 accelerators.
        let s = mlperf_storage(at("1"), &[]);
        let files = |id: &str| s.points.iter().find(|p| p.id == id).unwrap().jobs[0].shared.files;
        assert_eq!(files("train-cosmoflow"), Some(8572 * 32));
        assert_eq!(s.tables[1].rows.len(), 3 * 6, "1, 2, 4, 8, 16, 32 accelerators");
    }

    /// With --nodes each search runs a client process per node and each checkpoint spreads
    /// its ranks evenly, or is left out where they do not divide.
    #[test]
    fn client_nodes_add_points_and_rows() {
        let s = mlperf_storage(Scale::parse("0.01").unwrap(), &[2, 3]);
        let spread = |id: &str| s.points.iter().find(|p| p.id == id).unwrap().spread;
        assert!(matches!(
            spread("train-unet3d-nodes2"),
            Spread::Nodes { nodes: 2, per_node: 1 }
        ));
        // llama3-8b's 8 ranks: 4 per node on 2 nodes; 3 nodes do not divide them.
        assert!(matches!(
            spread("checkpoint-llama3-8b-nodes2"),
            Spread::Nodes { nodes: 2, per_node: 4 }
        ));
        let three = s.points.iter().find(|p| p.id == "checkpoint-llama3-8b-nodes3").unwrap();
        assert!(three.left_out.as_deref().unwrap().contains("do not spread evenly"));
        assert_eq!(s.tables[0].rows.len(), 3 * 3, "a row per profile and client count");
        assert_eq!(s.tables[0].rows[1].labels[0], "unet3d, 2 client nodes");
        let one = mlperf_storage(Scale::parse("0.01").unwrap(), &[1]);
        assert_eq!(one.tables[0].rows[1].labels[0], "unet3d, 1 client node");
        assert_eq!(one.tables[2].rows[1].labels[1], "8 on 1 node");
        assert_eq!(s.tables[2].rows.len(), 2 * 3);
        assert_eq!(s.figures[0].series[0].rows.len(), 9, "every row's bar");
    }
}
