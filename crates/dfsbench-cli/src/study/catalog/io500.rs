//! io500: IO500's phases with IO500's rules (time-bounded writes with stonewalling and
//! wear-out, its order, its units and its score), on any target dfsbench reaches.

use dfsbench_core::config::{JobSpec, RunSpec};

use super::super::model::{Cell, Metric, PhaseSel, Point, Row, Spread, Study, Table};
use super::super::scale::Scale;
use super::common::nodes_off;

/// IO500's shortest write phase, in seconds (its stonewall).
pub(crate) const MIN_WRITE_S: f64 = 300.0;
/// Clients per node: the workers of the threads point, the processes of the others.
const PER_NODE: usize = 4;
/// ior-easy's transfer (IO500's -t 2m), and on backends without positional writes (object
/// stores, HDFS) the size of each whole file a client writes instead of one growing file.
const EASY_XFER: u64 = 2 << 20;
const EASY_FILE: u64 = 1 << 30;

/// IO500's phases in its order, with the unit each is reported in: the first `SCORED` make
/// the score, and ior-rnd4K-easy-read is reported beside them, unscored, as in IO500.
pub(crate) const PHASES: [(&str, Metric); 13] = [
    ("ior-easy-write", Metric::GibPerSec),
    ("mdtest-easy-write", Metric::KiloOpsPerSec),
    ("ior-hard-write", Metric::GibPerSec),
    ("mdtest-hard-write", Metric::KiloOpsPerSec),
    ("find", Metric::KiloItemsPerSec),
    ("ior-easy-read", Metric::GibPerSec),
    ("mdtest-easy-stat", Metric::KiloOpsPerSec),
    ("ior-hard-read", Metric::GibPerSec),
    ("mdtest-hard-stat", Metric::KiloOpsPerSec),
    ("mdtest-easy-delete", Metric::KiloOpsPerSec),
    ("mdtest-hard-read", Metric::KiloOpsPerSec),
    ("mdtest-hard-delete", Metric::KiloOpsPerSec),
    ("ior-rnd4K-easy-read", Metric::GibPerSec),
];

/// The scored phases: the first of `PHASES`.
pub(crate) const SCORED: usize = 12;

/// `nodes`: node counts to run with `PER_NODE` processes each under --launcher.
pub fn io500(scale: Scale, nodes: &[usize]) -> Study {
    // In whole milliseconds, as the jobs run it.
    let write_s = (MIN_WRITE_S * scale.factor() * 1000.0).round().max(1.0) / 1000.0;
    let easy_file = scale.blocks(EASY_FILE, EASY_XFER);
    let job = |workers: usize| {
        let mut job = JobSpec::new("io500", "io500");
        job.settings.workers = Some(workers);
        job.settings.threads = Some(workers);
        job.settings.duration = Some(format!("{}ms", (write_s * 1000.0).round() as u64));
        job.workloads.io500.easy_file_size = Some(easy_file.to_string());
        job
    };
    let what = format!(
        "write phases {write_s} s each with stonewall wear-out; ior-easy 2 MiB transfers into a file per client (without positional writes: whole files of {easy_file} B), ior-hard 47008-byte records interleaved in one file (without positional writes: an object a record), mdtest-easy empty files in a directory per client, mdtest-hard 3901-byte files in one directory"
    );
    let mut configs: Vec<(String, String, Spread, JobSpec)> = vec![
        (
            "io500".into(),
            format!("{PER_NODE} threads"),
            Spread::Threads,
            job(PER_NODE),
        ),
        (
            "io500-procs".into(),
            format!("{PER_NODE} processes"),
            Spread::Procs(PER_NODE),
            job(1),
        ),
    ];
    for &k in nodes {
        configs.push((
            format!("io500-nodes{k}"),
            format!("{k} nodes x {PER_NODE} processes"),
            Spread::Nodes {
                nodes: k,
                per_node: PER_NODE,
            },
            job(1),
        ));
    }
    let points = configs
        .iter()
        .map(|(id, who, spread, job)| Point {
            id: id.clone(),
            params: format!("{what}; {who}"),
            jobs: vec![job.clone()],
            null_tests: false,
            spread: *spread,
            disruption: None,
            one_way_delay_ms: None,
            left_out: None,
        })
        .collect();
    let rows = PHASES
        .iter()
        .map(|&(phase, metric)| Row {
            labels: vec![phase.into(), metric.unit().into()],
            cells: configs
                .iter()
                .map(|(id, ..)| Cell::new(id, PhaseSel::op(phase), metric))
                .collect(),
        })
        .collect();
    let mut notes = vec![
        "The score is IO500's: the geometric mean of the four ior phases in GiB/s and of the eight mdtest and find phases in kIOPS, then the geometric mean of the two; ior-rnd4K-easy-read (4 KiB reads at random offsets of ior-easy's files for the write phases' time) is IO500's unscored last phase. Write phases count their wear-out step, as IOR and mdtest time it; find's rate is the entries it looked at per second, as pfind's. How dfsbench's phases differ from IOR's and mdtest's: docs/studies.md (io500).".to_string(),
    ];
    notes.push("On targets without positional writes (object stores, HDFS) ior-easy writes whole files one after another and ior-hard each record as an object of its own (as IOR's S3 backend does), a different load from one shared file taking writes at offsets: compare their ior figures with a file system's with that in mind.".to_string());
    if write_s < MIN_WRITE_S {
        notes.push(format!(
            "Not a valid IO500 run: the write phases ran {write_s} s, IO500's rules ask for at least {MIN_WRITE_S} s (--scale 1)."
        ));
    }
    // IO500's drop-caches between phases: as root, every process drops its kernel's page,
    // dentry and inode caches before each read phase, so stats and opens pay the lookups a
    // cold client pays; otherwise only the pages of each read phase's files are dropped.
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    notes.push(if root {
        "Caches: before every read phase each process wrote back and dropped its kernel's page, dentry and inode caches (IO500's drop-caches).".to_string()
    } else {
        "Caches: not root, so only the cached pages of each read phase's files were dropped; names and inodes stayed cached (IO500's drop-caches needs root).".to_string()
    });
    if nodes.is_empty() {
        notes.push(format!("Nodes: {}.", nodes_off("2,4", PER_NODE)));
    }
    Study {
        name: "io500",
        title: "IO500 (ior-easy, ior-hard, mdtest-easy, mdtest-hard, find)",
        publication: "the IO500 benchmark's phases and rules (io500.org, github.com/IO500/io500)",
        points,
        tables: vec![Table {
            title: "IO500 phases, in IO500's order".into(),
            row_header: vec!["phase".into(), "unit".into()],
            columns: configs.iter().map(|c| c.1.clone()).collect(),
            rows,
        }],
        figures: Vec::new(),
        notes,
        localfs_baseline: false,
        run: RunSpec {
            stonewall_wear_out: Some(true),
            drop_caches: Some(root),
            ..Default::default()
        },
        score: Some(0),
    }
}
