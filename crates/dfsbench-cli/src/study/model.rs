//! What a study is: runs to make (points) and tables to fill from their result files.

use dfsbench_core::config::{JobSpec, RunSpec};
pub use dfsbench_report::study_page::{FigureKind, FigureSpec, SeriesSpec, XAxis};

/// A named, reproducible evaluation.
pub struct Study {
    pub name: &'static str,
    pub title: &'static str,
    /// The publication it reproduces: authors, title, kind of document.
    pub publication: &'static str,
    pub points: Vec<Point>,
    pub tables: Vec<Table>,
    /// The publication's figures, drawn from the tables by `dfsbench report`.
    pub figures: Vec<FigureSpec>,
    /// Parts of the publication this study cannot run here, and why.
    pub notes: Vec<String>,
    /// Also run every point on a local directory (DFS-Perf measures LocalFS as its baseline).
    pub localfs_baseline: bool,
    /// Run-wide settings every point runs with (io500: `stonewall_wear_out`, IO500's rule).
    pub run: RunSpec,
    /// The table whose GiB/s and kIOPS rows make IO500's score: rendered after it with the
    /// published entries of similar client counts.
    pub score: Option<usize>,
}

/// One run of the study on each system.
pub struct Point {
    /// File-name-safe and unique in the study: `n1000-s10240`.
    pub id: String,
    /// The effective parameters, for people: `N=1000 S=10240 B`.
    pub params: String,
    /// The jobs of one process: with several processes, each runs them all.
    pub jobs: Vec<JobSpec>,
    /// Measure the hardware's limits (local disk, network to the target) before the jobs.
    pub null_tests: bool,
    pub spread: Spread,
    /// A node taken out while the jobs run: only on targets whose nodes dfsbench controls.
    pub disruption: Option<Disruption>,
    /// One-way delay added on every node link of a lab target for the whole run, in ms (10:
    /// 20 ms more round trip).
    pub one_way_delay_ms: Option<u64>,
    /// Why the point does not run at this scale (its files would be other than the
    /// publication's): every system's cells say so.
    pub left_out: Option<String>,
}

/// A fault a point injects: a node of a role taken out during a phase and brought back, as
/// `--fault` commands on the lab (`dfsbench lab fault NAME ACTION NODE`), optionally with the
/// lab's recovery probe after it.
#[derive(Clone, Copy, Debug)]
pub struct Disruption {
    pub role: dfsbench_lab::Role,
    /// The `lab fault` that takes the node out: kill, wipe, cut-link.
    pub action: &'static str,
    /// The phase it happens in, and when after that phase's start.
    pub phase: &'static str,
    pub at_s: f64,
    /// The `lab fault` that brings it back and when (restart, heal-link); None when the first
    /// brings it back by itself (a wipe restarts the node empty).
    pub back: Option<(&'static str, f64)>,
    /// Probe until every copy exists again: the result's recovery time.
    pub probe: bool,
}

impl Disruption {
    /// The node in words, for cells and notes.
    pub fn what(&self) -> &'static str {
        match self.role {
            dfsbench_lab::Role::Storage => "storage node",
            dfsbench_lab::Role::Metadata => "metadata server",
            dfsbench_lab::Role::Client => "client node",
        }
    }
}

/// Which processes run a point's jobs.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Spread {
    /// The study's own process.
    Threads,
    /// N processes on this machine: `dfsbench run --procs N` as a child of the study.
    Procs(usize),
    /// `nodes` x `per_node` processes started by the study's `--launcher` (mpirun, srun).
    Nodes { nodes: usize, per_node: usize },
    /// One process on each of the first N client nodes of the point's lab target, as
    /// dfsbench's own processes (`--procs --hosts`), which go on without one that is lost.
    LabClients(usize),
}

impl Spread {
    pub fn processes(self) -> usize {
        match self {
            Spread::Threads => 1,
            Spread::Procs(n) => n,
            Spread::Nodes { nodes, per_node } => nodes * per_node,
            Spread::LabClients(n) => n,
        }
    }
}

/// A table in the publication's shape: rows of labels, then metric columns (one per system each).
pub struct Table {
    pub title: String,
    pub row_header: Vec<String>,
    pub columns: Vec<String>,
    pub rows: Vec<Row>,
}

pub struct Row {
    pub labels: Vec<String>,
    /// One per column.
    pub cells: Vec<Cell>,
}

/// Where a cell's number comes from: a phase of a point's result, a field of it, and a factor.
#[derive(Clone)]
pub struct Cell {
    pub point: String,
    pub phase: PhaseSel,
    pub metric: Metric,
    /// Divide by the same cell of this point (speedup against a baseline).
    pub baseline: Option<String>,
    /// Divide by this many nodes: the mean per node of an aggregate.
    pub per_node: Option<usize>,
    /// Why this cell is not measured at the study's scale (every system's cell says so).
    pub left_out: Option<String>,
}

/// Which phase of a result: its operation name, the job's name when the run has several, and
/// a parameter when one job has several phases of that name (rate steps, iterations).
#[derive(Clone)]
pub struct PhaseSel {
    pub name: &'static str,
    pub job: Option<String>,
    pub param: Option<(&'static str, f64)>,
}

impl PhaseSel {
    pub fn op(name: &'static str) -> Self {
        PhaseSel {
            name,
            job: None,
            param: None,
        }
    }
    pub fn of_job(name: &'static str, job: &str) -> Self {
        PhaseSel {
            job: Some(job.to_string()),
            ..PhaseSel::op(name)
        }
    }
    pub fn with(name: &'static str, param: &'static str, value: f64) -> Self {
        PhaseSel {
            param: Some((param, value)),
            ..PhaseSel::op(name)
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Metric {
    /// bytes_per_sec in MiB/s.
    MibPerSec,
    OpsPerSec,
    /// Client CPU: cpu.cores x 100.
    CpuPercent,
    /// CPU of the `--server-pid` processes: server_cpu.cores x 100.
    ServerCpuPercent,
    /// bytes_per_sec of one operation kind of a mixed phase, per worker, in MiB/s.
    KindMibPerWorker(&'static str),
    /// Open-loop phases: rate.achieved_ops_per_sec.
    AchievedOps,
    /// latency.mean_ns in ms (from the intended start in open-loop phases).
    MeanLatencyMs,
    /// The run's null tests (not a phase): bandwidth in MiB/s, round trips in ms.
    Null(NullField),
    /// The run's recovery probe: seconds from the fault to every copy existing again.
    RecoverySecs,
    /// What the first fault did to the phase's I/O, in words: continued, stalled N s, failed.
    FaultOutcome,
    /// IO500's units, over the phase and its wear-out step (IOR and mdtest time the wear-out
    /// as part of the phase): bytes in GiB/s, operations in kIOPS, and the entries a find
    /// looked at in kIOPS.
    GibPerSec,
    KiloOpsPerSec,
    KiloItemsPerSec,
    /// A train run's accelerator search, as MLPerf Storage answers it: the accelerators of
    /// its largest step held (every step up to it kept AU at the threshold), 0 when none did;
    /// and that step's AU in percent, samples/s and MiB/s.
    SearchAccelerators,
    SearchAu,
    SearchSamplesPerSec,
    SearchMibPerSec,
    /// A train epoch's AU and its profile's threshold, in percent.
    TrainAu,
    TrainAuThreshold,
    /// A checkpoint job's write or read (the phase's name), as the mean over its checkpoints:
    /// GB/s (the checkpoint's bytes over its slowest rank's time) and that time in seconds.
    CheckpointGbPerSec,
    CheckpointSecs,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum NullField {
    DiskWrite,
    DiskRead,
    NetWrite,
    NetRead,
    RoundTrip,
    Connect,
    /// A lab target's nodes: the median over the nodes of their TCP connect medians.
    NodeConnect,
    /// The median over the nodes of their ping medians.
    NodePing,
    /// The bandwidth from the nodes that serve data to the client, summed.
    NodeBandwidth,
}

impl NullField {
    pub fn path(self) -> &'static str {
        match self {
            NullField::DiskWrite => "null_tests.local_disk.write_bytes_per_sec",
            NullField::DiskRead => "null_tests.local_disk.read_bytes_per_sec",
            NullField::NetWrite => "null_tests.bandwidth.write_bytes_per_sec",
            NullField::NetRead => "null_tests.bandwidth.read_bytes_per_sec",
            NullField::RoundTrip => "null_tests.round_trip.median_ns",
            NullField::Connect => "null_tests.connect.median_ns",
            NullField::NodeConnect => "null_tests.nodes.connect.median_ns",
            NullField::NodePing => "null_tests.nodes.ping.median_ns",
            NullField::NodeBandwidth => "null_tests.nodes.bandwidth.bytes_per_sec",
        }
    }
    pub fn is_time(self) -> bool {
        matches!(
            self,
            NullField::RoundTrip | NullField::Connect | NullField::NodeConnect | NullField::NodePing
        )
    }
    /// Measured per node of a lab target.
    pub fn is_per_node(self) -> bool {
        matches!(
            self,
            NullField::NodeConnect | NullField::NodePing | NullField::NodeBandwidth
        )
    }
}

impl Metric {
    /// The result field the number is read from (as written in tables.csv).
    pub fn field(self) -> String {
        match self {
            Metric::MibPerSec => "bytes_per_sec".into(),
            Metric::OpsPerSec => "ops_per_sec".into(),
            Metric::CpuPercent => "cpu.cores".into(),
            Metric::ServerCpuPercent => "server_cpu.cores".into(),
            Metric::KindMibPerWorker(k) => format!("ops_by_kind.{k}.bytes_per_sec"),
            Metric::AchievedOps => "rate.achieved_ops_per_sec".into(),
            Metric::MeanLatencyMs => "latency.mean_ns".into(),
            Metric::Null(f) => f.path().into(),
            Metric::RecoverySecs => "recovery.recovery_time_s".into(),
            Metric::FaultOutcome => "faults[0].stall_s".into(),
            Metric::GibPerSec => "bytes / duration_s, with the wear-out".into(),
            Metric::KiloOpsPerSec => "ops / duration_s, with the wear-out".into(),
            Metric::KiloItemsPerSec => "items / duration_s".into(),
            Metric::SearchAccelerators => "train.accelerators of the largest search step held".into(),
            Metric::SearchAu => "train.au of the largest search step held".into(),
            Metric::SearchSamplesPerSec => "train.samples_per_sec of the largest search step held".into(),
            Metric::SearchMibPerSec => "train.bytes_per_sec of the largest search step held".into(),
            Metric::TrainAu => "train.au".into(),
            Metric::TrainAuThreshold => "train.au_threshold".into(),
            Metric::CheckpointGbPerSec => "bytes_per_sec, mean over the checkpoints".into(),
            Metric::CheckpointSecs => "duration_s, mean over the checkpoints".into(),
        }
    }

    /// A count of things, shown without decimals.
    pub fn is_count(self) -> bool {
        self == Metric::SearchAccelerators
    }

    pub fn unit(self) -> &'static str {
        match self {
            Metric::MibPerSec => "MiB/s",
            Metric::OpsPerSec => "ops/s",
            Metric::CpuPercent | Metric::ServerCpuPercent => "%",
            Metric::KindMibPerWorker(_) => "MiB/s per worker",
            Metric::AchievedOps => "ops/s",
            Metric::MeanLatencyMs => "ms",
            Metric::Null(f) if f.is_time() => "ms",
            Metric::Null(_) => "MiB/s",
            Metric::RecoverySecs => "s",
            Metric::FaultOutcome => "",
            Metric::GibPerSec => "GiB/s",
            Metric::KiloOpsPerSec | Metric::KiloItemsPerSec => "kIOPS",
            Metric::SearchAccelerators => "accelerators",
            Metric::SearchAu | Metric::TrainAu | Metric::TrainAuThreshold => "%",
            Metric::SearchSamplesPerSec => "samples/s",
            Metric::SearchMibPerSec => "MiB/s",
            Metric::CheckpointGbPerSec => "GB/s",
            Metric::CheckpointSecs => "s",
        }
    }
}

impl Cell {
    pub fn new(point: &str, phase: PhaseSel, metric: Metric) -> Self {
        Cell {
            point: point.to_string(),
            phase,
            metric,
            baseline: None,
            per_node: None,
            left_out: None,
        }
    }
    pub fn left_out(mut self, why: Option<&String>) -> Self {
        self.left_out = why.cloned();
        self
    }
    pub fn speedup(mut self, baseline: &str) -> Self {
        self.baseline = Some(baseline.to_string());
        self
    }
    pub fn per_node(mut self, nodes: usize) -> Self {
        self.per_node = Some(nodes);
        self
    }
}

/// A line figure: for each system, the cells of `table`'s `column` over the rows `rows`, at x
/// `x` (one per row).
pub fn line(title: String, x_label: &str, x_axis: XAxis, y_label: &str, series: Vec<SeriesSpec>) -> FigureSpec {
    FigureSpec {
        kind: FigureKind::Line,
        title,
        x_label: x_label.into(),
        x_axis,
        y_label: y_label.into(),
        series,
        caption: None,
        categories: Vec::new(),
    }
}

/// A bar figure: a bar per system in each of `rows` of `table`'s `column`.
pub fn bars(title: String, y_label: &str, table: usize, column: usize, rows: Vec<usize>) -> FigureSpec {
    FigureSpec {
        kind: FigureKind::Bars,
        title,
        x_label: String::new(),
        x_axis: XAxis::Linear,
        y_label: y_label.into(),
        series: vec![SeriesSpec {
            table,
            column,
            rows,
            x: Vec::new(),
            dashed: false,
            dashed_label: None,
        }],
        caption: None,
        categories: Vec::new(),
    }
}

/// The cells of `column` of `table` in `rows`, at x values `x`.
pub fn series(table: usize, column: usize, rows: Vec<usize>, x: Vec<f64>) -> SeriesSpec {
    SeriesSpec {
        table,
        column,
        rows,
        x,
        dashed: false,
        dashed_label: None,
    }
}
