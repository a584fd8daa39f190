//! clients-sweep (seed 001, BTH): 2..256 closed-loop clients x file sizes, CPU, open-loop IOPS steps.

use dfsbench_core::config::JobSpec;

use dfsbench_lab::Role;

use super::super::model::{line, series, Cell, Disruption, Metric, PhaseSel, Point, Row, Spread, Study, Table, XAxis};
use super::super::scale::Scale;
use super::common::{copy_job, files_job, pub_size, steady, timed, timing, KB, MB};

/// With `nodes` (`--nodes`), every clients point runs its clients spread over the largest node
/// count: one process per node (started by `--launcher`), as many workers each as divide the
/// clients evenly.
pub fn clients_sweep(scale: Scale, nodes: &[usize]) -> Study {
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
    // Large files run by time: below a second they are left out rather than run by count with
    // another meaning.
    let large_out = large_secs.is_none().then(|| {
        format!(
            "left out at scale {scale}: large files run until steady (at most {LARGE_SECS} s x scale), under 1 s here; run with --scale {} or more",
            (1e4 / LARGE_SECS).ceil() / 1e4
        )
    });
    let all: Vec<u64> = SMALL.iter().chain(&LARGE).copied().collect();
    let runs = |s: u64| !LARGE.contains(&s) || large_out.is_none();
    // A job per size, so every phase is found by its job's name whatever the scale.
    let job_name = |s: u64| format!("size-{s}");
    let mut points = Vec::new();
    let (mut write, mut read, mut delete) = Default::default();
    let (mut cpu_w, mut cpu_r, mut server_w, mut server_r) = Default::default();
    let row = |rows: &mut Vec<Row>, c: usize, cells: Vec<Cell>| {
        rows.push(Row {
            labels: vec![c.to_string()],
            cells,
        })
    };
    let spread_over = nodes.iter().copied().max();
    for c in CLIENTS {
        let id = format!("clients{c}");
        let per_client = (scale.count(OPS) / c as u64).max(1);
        // The most nodes (up to --nodes) that take an equal share of the clients.
        let (spread, per_process, placed) = match spread_over {
            Some(k) => {
                let k = (1..=k.min(c)).rev().find(|d| c % d == 0).unwrap_or(1);
                let on = format!(", on {k} nodes ({} per node)", c / k);
                (Spread::Nodes { nodes: k, per_node: 1 }, c / k, on)
            }
            None => (Spread::Threads, c, String::new()),
        };
        let jobs = all
            .iter()
            .filter(|&&s| runs(s))
            .map(|&s| {
                let job = files_job(&job_name(s), per_process, &[(per_client, s)]);
                if LARGE.contains(&s) {
                    steady(timed(job, large_secs))
                } else {
                    job
                }
            })
            .collect();
        points.push(Point {
            disruption: None,
            one_way_delay_ms: None,
            left_out: None,
            null_tests: false,
            spread,
            id: id.clone(),
            params: format!(
                "{c} clients{placed} x {per_client} files of each size ({} B); large files {}",
                all.iter()
                    .filter(|&&s| runs(s))
                    .map(|&s| s.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                large_out
                    .as_deref()
                    .map_or_else(|| timing(large_secs), |_| "left out".into())
            ),
            jobs,
        });
        let cell = |op: &'static str, s: u64, metric: Metric| {
            let why = if runs(s) { None } else { large_out.as_ref() };
            Cell::new(&id, PhaseSel::of_job(op, &job_name(s)), metric).left_out(why)
        };
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
        row(
            &mut server_w,
            c,
            all.iter()
                .map(|&s| cell("write", s, Metric::ServerCpuPercent))
                .collect(),
        );
        row(
            &mut server_r,
            c,
            all.iter().map(|&s| cell("read", s, Metric::ServerCpuPercent)).collect(),
        );
    }
    // SPECsfs-style open-loop load: 10 KB files read and written 80/20 at each requested rate.
    let step_secs = (STEP_SECS * scale.factor()).max(1.0);
    let mut iops = JobSpec::new("iops", "mix");
    iops.settings.workers = Some(IOPS_CLIENTS);
    iops.settings.duration = Some(format!("{}ms", (step_secs * 1000.0).round() as u64));
    iops.settings.rate_steps = Some(IOPS_STEPS.to_vec());
    iops.shared.files = Some(scale.count(100));
    iops.shared.file_size = Some((10 * KB).to_string());
    iops.workloads.mix.mix = Some(vec!["read=80".into(), "write=20".into()]);
    points.push(Point {
        disruption: None,
        one_way_delay_ms: None,
        left_out: None,
        null_tests: false,
        spread: Spread::Threads,
        id: "iops".into(),
        params: format!(
            "{IOPS_CLIENTS} clients, 80/20 reads/writes of {} B files, {step_secs:.0} s per requested rate",
            10 * KB
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
    // The recovery test, twice as the publication ran it: a storage node is wiped (its data
    // deleted, the daemon restarted empty) while the clients read what they wrote.
    const WIPE_AT_S: f64 = 2.0;
    // 1.2 GB written at scale 1; at small scales a few seconds still hold the wipe.
    const RECOVERY_PHASE_S: f64 = 60.0;
    let phase_s = scale.duration(RECOVERY_PHASE_S).unwrap_or(0.0).max(2.0 * WIPE_AT_S);
    let rate = (20.0 * scale.factor()).round().max(1.0);
    let mut recovery = Vec::new();
    for run in 1..=2 {
        let id = format!("recovery-{run}");
        points.push(Point {
            null_tests: false,
            spread: Spread::Threads,
            one_way_delay_ms: None,
            left_out: None,
            disruption: Some(Disruption {
                role: Role::Storage,
                action: "wipe",
                phase: "read",
                at_s: WIPE_AT_S,
                back: None,
                probe: true,
            }),
            id: id.clone(),
            params: format!(
                "2 clients write 1 MB files at {rate} files/s for {phase_s:.0} s, then read them as long at that rate; {WIPE_AT_S:.0} s into the reads a storage node is wiped, and the recovery probe runs until every copy exists again (lab targets, or --fault and --recovery-probe)"
            ),
            jobs: vec![copy_job("recovery", 2, phase_s, rate, true)],
        });
        recovery.push(Row {
            labels: vec![format!("run {run}")],
            cells: vec![Cell::new(&id, PhaseSel::op("read"), Metric::RecoverySecs)],
        });
    }
    Study {
        name: "clients-sweep",
        title: "Performance Evaluation of Distributed Storage Systems (BTH)",
        publication: "S. Shirinbab, L. Lundberg, D. Erman: Performance Evaluation of Distributed Storage Systems, Blekinge Institute of Technology",
        points,
        figures: {
            // Throughput over clients, a chart per file size (Figures 3-12), and the open-loop
            // IOPS and response time over the requested rate (Figure 14).
            let x: Vec<f64> = CLIENTS.iter().map(|&c| c as f64).collect();
            let rows: Vec<usize> = (0..CLIENTS.len()).collect();
            let mut f = Vec::new();
            for (t, op) in [(0, "write"), (1, "read")] {
                for (c, &s) in all.iter().enumerate() {
                    let unit = if s == 0 { "ops/s" } else { "MiB/s" };
                    let what = if s == 0 { format!("{op} 0 KB files ({})", if op == "write" { "create" } else { "open" }) } else { format!("{op} {} files", pub_size(s)) };
                    f.push(line(format!("{what}, {unit}"), "clients", XAxis::Count, unit, vec![series(t, c, rows.clone(), x.clone())]));
                }
            }
            let steps: Vec<f64> = IOPS_STEPS.to_vec();
            let rows: Vec<usize> = (0..steps.len()).collect();
            f.push(line("achieved IOPS over requested IOPS".into(), "requested IOPS", XAxis::Linear, "achieved ops/s", vec![series(7, 0, rows.clone(), steps.clone())]));
            f.push(line("mean response time over requested IOPS".into(), "requested IOPS", XAxis::Linear, "response time, ms", vec![series(7, 1, rows, steps)]));
            f
        },
        tables: vec![
            table("Write (open+write+close), MiB/s; 0 KB = create, ops/s", size_cols(true, 0), write),
            table("Read (open+read+close), MiB/s; 0 KB = open, ops/s", size_cols(true, 0), read),
            table("Delete, ops/s", size_cols(false, 1), delete),
            table("Client CPU % during writes (100 = one core)", size_cols(false, 0), cpu_w),
            table("Client CPU % during reads (100 = one core)", size_cols(false, 0), cpu_r),
            table(
                "Server CPU % during writes (100 = one core; a lab's daemons or the --server-pid processes)",
                size_cols(false, 0),
                server_w,
            ),
            table(
                "Server CPU % during reads (100 = one core; a lab's daemons or the --server-pid processes)",
                size_cols(false, 0),
                server_r,
            ),
            Table {
                title: "Requested vs achieved IOPS, mean response time from the intended start".into(),
                row_header: vec!["requested IOPS".into()],
                columns: vec!["achieved IOPS".into(), "response ms".into()],
                rows: iops_rows,
            },
            Table {
                title: "Recovery time after a storage node is wiped: from the wipe until every copy exists again, s".into(),
                row_header: vec!["test".into()],
                columns: vec!["recovery s".into()],
                rows: recovery,
            },
        ],
        notes: vec![
            format!("Small files: {OPS} operations per size split over the clients; large files run until throughput is steady (at most {LARGE_SECS} s per phase)."),
            "Server CPU %: the CPU of a lab target's daemons (looked up again at every phase, so a restarted one is followed), or of the processes given with --server-pid (all their threads, read from /proc on this host); a local file system has no server, and other targets need --server-pid, else those cells are n/a.".into(),
            "Recovery: on a lab target (`-t lab:NAME`) dfsbench wipes a storage node with `dfsbench lab fault` and probes with `dfsbench lab probe`; on another target give the study `--fault 'read+2s: COMMAND'` and `--recovery-probe COMMAND`, else the cells say n/a.".into(),
        ]
        .into_iter()
        .chain(spread_over.map(|k| format!("Nodes: with --nodes {k}, each clients row runs its clients spread evenly over up to {k} nodes, one process per node started by --launcher (2 clients: 2 nodes of 1); the IOPS steps and the recovery runs stay in one process.")))
        .collect(),
        localfs_baseline: false,
        run: Default::default(),
        score: None,
    }
}
