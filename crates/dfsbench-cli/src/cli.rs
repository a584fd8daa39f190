//! Command-line interface. Flags follow fio's names where the concept is the same.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use dfsbench_core::config::{JobSettings, RunSpec};
use dfsbench_core::workloads::{SharedOptions, WorkloadOptions};

#[derive(Parser, Debug)]
#[command(
    name = "dfsbench",
    version,
    about = "One honest benchmark for file systems, object stores and HDFS",
    long_about = "dfsbench measures storage systems with mdtest-style metadata, whole-file and fio-style \
block workloads. Latency goes into HDR histograms merged exactly across workers; throughput is \
reported over the whole phase and over the window in which all workers ran (stonewalling).",
    after_help = "Examples:\n  dfsbench run                                   # default mix in a fresh temp directory\n  \
dfsbench run -t /mnt/cephfs -w meta --files 10000\n  \
dfsbench run -t /mnt/x -w files --sizes 1000x10k,10x100m\n  \
dfsbench run -t /mnt/x -w io --rw randread --bs 4k --iodepth 32 --duration 30s\n  \
dfsbench run workloads/example.toml -t /mnt/x"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run a benchmark (the default mix, one workload from flags, or a workload file).
    Run(Box<RunArgs>),
    /// List the storage backends and what each can do.
    Targets,
    /// Make a report of result files: an HTML page with charts, Markdown, CSV or JSON.
    Report(crate::report::ReportArgs),
    /// Compare two result files metric by metric, with the change and whether it is noise.
    Compare(crate::report::CompareArgs),
    /// Run a published evaluation (size-sweep, clients-sweep, dfsperf, surfnet, fio-matrix) and
    /// print its tables in the publication's shape; `dfsbench study list` lists them.
    Study(crate::study::args::StudyArgs),
    /// Multi-node storage clusters on this machine, with faults and delay (docs/lab.md).
    Lab(crate::lab::LabArgs),
    /// Remove run directories left by `--keep` or a killed run (only ones dfsbench created).
    Clean {
        /// Run directories (dfsbench-<run id>) to remove.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
}

#[derive(Args, Debug, Default)]
pub struct RunArgs {
    /// A workload file (TOML with [[job]] tables; see workloads/) or a fio job file (job.fio).
    pub workload_file: Option<PathBuf>,

    /// Where to run: a directory, file:///path or mem://. Default: the system temp directory.
    #[arg(short, long, visible_alias = "directory", value_name = "URI")]
    pub target: Option<String>,

    #[command(flatten)]
    pub job: JobSettings,

    #[command(flatten)]
    pub shared: SharedOptions,

    #[command(flatten)]
    pub workloads: WorkloadOptions,

    #[command(flatten)]
    pub run: RunSpec,

    /// Run N client processes on this machine (rank 0 and N - 1 copies of itself); needs no
    /// MPI. Across machines, start dfsbench with mpirun or srun instead.
    #[arg(long, value_name = "N", help_heading = "Processes")]
    pub procs: Option<usize>,

    /// How long the processes wait for a missing one at a phase boundary before the run ends
    /// with a partial result [default: 5m].
    #[arg(long, value_name = "TIME", help_heading = "Processes")]
    pub rank_timeout: Option<String>,

    /// What to print on stdout.
    #[arg(long, visible_alias = "output-format", value_enum, default_value_t = Format::Table, help_heading = "Output")]
    pub format: Format,

    /// Result JSON file or directory [default: ./dfsbench-results/<run id>.json].
    #[arg(short, long, value_name = "PATH", help_heading = "Output")]
    pub out: Option<PathBuf>,

    /// No progress line.
    #[arg(short, long, help_heading = "Output")]
    pub quiet: bool,

    /// On a failure, print the full text of the error under its one-line message (HTTP
    /// responses, the chain of causes).
    #[arg(short, long, help_heading = "Output")]
    pub verbose: bool,
}

#[derive(ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Format {
    #[default]
    Table,
    Json,
    Csv,
}
