//! The flags of `dfsbench study`.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

#[derive(ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StudyFormat {
    /// Markdown tables in the publication's shape.
    #[default]
    Md,
    /// Long CSV: a line per cell and system, with the result file and field it comes from.
    Csv,
}

#[derive(Args, Debug, Clone)]
#[command(
    after_help = "Studies: the seed studies size-sweep, clients-sweep, dfsperf, surfnet, fio-matrix, and the suites io500,\n\
mlperf-storage (`dfsbench study list`); `all` runs the five seed studies into one folder with one report.html.\n\
Examples:\n  dfsbench study size-sweep --target /mnt/cephfs/bench --scale 0.01\n  \
dfsbench study all -t cephfs=/mnt/cephfs/bench -t minio=s3://bench --scale 0.01 -o seeds\n  \
dfsbench study fio-matrix --target plain=/mnt/plain --target ec=/mnt/ec42\n  \
dfsbench study size-sweep -t /mnt/cephfs/bench --nodes 4,16,64 --launcher 'mpirun --hostfile hosts --map-by ppr:{ppn}:node -np {np}'\n  \
dfsbench study size-sweep --from dfsbench-study-size-sweep-20261122-050000-1a2b3c"
)]
pub struct StudyArgs {
    /// The study to run, `all` (or `seeds`: the five seed studies, one report), or `list`.
    #[arg(value_name = "NAME")]
    pub name: String,

    /// Where to run; repeat for a column per system. LABEL= names the column (default: the
    /// backend's name).
    #[arg(short, long = "target", value_name = "[LABEL=]URI")]
    pub targets: Vec<String>,

    /// Multiply the publication's file counts, file sizes and durations by F (0 < F <= 1).
    #[arg(long, value_name = "F", default_value = "1")]
    pub scale: String,

    /// Study directory: a result file per point and system, study.json, tables.md and CSV
    /// [default: ./dfsbench-study-NAME-<id>].
    #[arg(short, long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// Print the tables of an earlier study directory again, from its files alone.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["targets", "out"])]
    pub from: Option<PathBuf>,

    /// Run only these points (ids as in tables.md, `*` matches anything: `clients2,read-*-t1`); the
    /// other cells say "not run".
    #[arg(long, value_delimiter = ',', value_name = "LIST", conflicts_with = "from")]
    pub points: Option<Vec<String>>,

    /// Client node counts of the studies with a node axis (size-sweep: 4,16,64; dfsperf:
    /// 1,2,4,8,16; io500 and mlperf-storage: any; clients-sweep spreads its clients over the
    /// largest); needs --launcher.
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "LIST",
        requires = "launcher",
        conflicts_with = "from"
    )]
    pub nodes: Option<Vec<usize>>,

    /// How to start dfsbench on the nodes, with {np} (all processes), {nodes} and {ppn}
    /// (processes per node): 'mpirun --hostfile hosts --map-by ppr:{ppn}:node -np {np}' or
    /// 'srun -N {nodes} --ntasks-per-node {ppn}'; or `lab`: mpirun on the client nodes of the
    /// lab target (`dfsbench lab up NAME --clients N`).
    #[arg(long, value_name = "COMMAND", requires = "nodes", conflicts_with = "from")]
    pub launcher: Option<String>,

    /// Go on with the study in --out where it stopped: its complete points are kept, the rest
    /// run (with `all`: complete studies are kept whole).
    #[arg(long, requires = "out", conflicts_with = "from")]
    pub resume: bool,

    /// What to print on stdout.
    #[arg(long, value_enum, default_value_t = StudyFormat::Md)]
    pub format: StudyFormat,

    /// Create the S3 bucket of a target when it does not exist.
    #[arg(long)]
    pub create_bucket: bool,

    /// Retry requests that failed temporarily up to N times, counting every retry.
    #[arg(long, value_name = "N")]
    pub retries: Option<u32>,

    /// Record the CPU of these server processes on this host in every point (clients-sweep's
    /// server CPU tables): `--server-pid $(pidof minio)`.
    #[arg(long = "server-pid", value_delimiter = ',', value_name = "PID,...")]
    pub server_pids: Option<Vec<u32>>,

    /// For the recovery points (clients-sweep) on a target that is not a lab: what takes a
    /// storage node out, as `dfsbench run --fault` takes it ('read+2s: ssh node3 ...');
    /// repeatable. Lab targets need none: dfsbench wipes a node itself.
    #[arg(long, value_name = "'AT: COMMAND'")]
    pub fault: Option<Vec<dfsbench_core::FaultEntry>>,

    /// With --fault: the command that exits 0 once every copy exists again.
    #[arg(long, value_name = "COMMAND")]
    pub recovery_probe: Option<String>,

    /// Cap each point's count-based I/O (block and whole-file jobs) at TIME: each phase makes
    /// one pass, cut short at TIME (fio's runtime without time_based); deletes still remove
    /// every file written. A point with added delay says before it starts how long it takes
    /// at least (surfnet's randread-8k-20ms at scale 1: 262144 reads x 20 ms, 1 h 27 min).
    #[arg(long, value_name = "TIME", value_parser = super::budget::parse_limit, conflicts_with = "from")]
    pub max_point_time: Option<String>,

    /// No line per point on stderr.
    #[arg(short, long)]
    pub quiet: bool,

    /// For a point that fails to start, print the full text of the error under its one-line
    /// message (HTTP responses, the chain of causes).
    #[arg(short, long)]
    pub verbose: bool,
}
