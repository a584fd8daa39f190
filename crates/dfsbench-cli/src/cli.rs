//! Command-line interface. Flags follow fio's names where the concept is the same.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use dfsbench_core::config::{JobSettings, RunSpec};
use dfsbench_core::workloads::{SharedOptions, WorkloadOptions};

#[derive(Parser, Debug)]
#[command(
    name = "dfsbench",
    // `0.1.0 (commit 4f3af94c12ab, features: io_uring, mpi)`: see build.rs.
    version = env!("DFSBENCH_VERSION"),
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
    /// Run a published evaluation (size-sweep, clients-sweep, dfsperf, surfnet, fio-matrix) or a
    /// suite (io500, mlperf-storage) and print its tables in the publication's shape; `dfsbench
    /// study list` lists them, `dfsbench study all` runs the five seed studies into one report.
    Study(Box<crate::study::args::StudyArgs>),
    /// Multi-node storage clusters on this machine, with faults and delay (docs/lab.md).
    Lab(crate::lab::LabArgs),
    /// Past runs and studies of this machine: list, filter, trend, rebuild (`--rebuild`).
    History(crate::history::HistoryArgs),
    /// Remove run directories left by `--keep` or a killed run (only ones dfsbench created).
    Clean {
        /// Run directories (dfsbench-<run id>) or kept train datasets (dfsbench-dataset-NAME) to
        /// remove: a path, or a target URI ending in the run's name
        /// (s3://bucket/prefix/dfsbench-<run id>?endpoint=..., hdfs://nn:8020/p/dfsbench-...).
        #[arg(required = true, value_name = "RUN_DIR")]
        paths: Vec<String>,
    },
    /// Print a shell completion script: `dfsbench completions bash > /etc/bash_completion.d/dfsbench`.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff), or write one page per command into a directory.
    Man {
        /// Write dfsbench.1 and dfsbench-COMMAND.1 for every command into DIR instead.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
}

/// The `--target` help: every scheme with an example.
const TARGET_HELP: &str = "Where to run: a directory or a storage URI. Default: the system temp directory.

  /mnt/cephfs/bench, file:///mnt/x     posix: any mounted file system
  mem://, mem://?latency=2ms           mem: in-process store (the tool's own ceiling)
  s3://bucket/prefix?endpoint=http://127.0.0.1:9000
                                       s3: AWS S3, MinIO, Ceph RGW, SeaweedFS
  s3://h1:9000,h2:9000/bucket/prefix   s3 behind several gateways: workers round-robin
  swift://container/prefix             swift: OpenStack Swift (ST_AUTH/ST_USER/ST_KEY or OS_*)
  hdfs://namenode:8020/bench           hdfs: HDFS native RPC
  webhdfs://namenode:9870/bench        webhdfs: HDFS through the NameNode's REST API
  webdav://host:8080/dav/bench         webdav: WebDAV servers (webdavs:// for TLS)
  alluxio://proxy:39999/bench          alluxio: Alluxio through its REST proxy
  lab:NAME                             a running `dfsbench lab` cluster

`dfsbench targets` lists what each backend can do.";

#[derive(Args, Debug, Default)]
pub struct RunArgs {
    /// A workload file (TOML with [[job]] tables; see workloads/) or a fio job file (job.fio).
    pub workload_file: Option<PathBuf>,

    /// The options of a fio command line (`--name=...` without `--workload`), read as a fio
    /// job (fio_args.rs).
    #[arg(skip)]
    pub fio_args: Option<Vec<dfsbench_core::config::FioArg>>,

    /// Where to run: a directory, file:///path, mem://, s3://, swift://, hdfs://, webhdfs://,
    /// webdav://, alluxio:// (examples: --help). Default: the system temp directory.
    #[arg(short, long, visible_alias = "directory", value_name = "URI", long_help = TARGET_HELP)]
    pub target: Option<String>,

    /// Let this run write to the block device DEVICE, destroying the data on it: the target
    /// (or a fio job's filename=) must be this device; or to a character device that holds no
    /// data (/dev/null, /dev/zero, /dev/full) a fio job's filename= names. Once per device.
    /// io jobs only.
    #[arg(long, value_name = "DEVICE", help_heading = "Run")]
    pub overwrite_device: Vec<String>,

    /// Without a workload: the 2-second smoke run (4 workers x 1000 empty files, 1000 x 4 KiB
    /// and 4 x 16 MiB files; every phase too short to trust) instead of the 30-60 s first run.
    #[arg(long, help_heading = "Run")]
    pub quick: bool,

    #[command(flatten)]
    pub job: JobSettings,

    #[command(flatten)]
    pub shared: SharedOptions,

    #[command(flatten)]
    pub workloads: WorkloadOptions,

    #[command(flatten)]
    pub run: RunSpec,

    /// Run N client processes (rank 0 and N - 1 copies of itself); needs no MPI. They run on
    /// this machine, or where --hosts says. Across machines, mpirun and srun start dfsbench
    /// too.
    #[arg(long, value_name = "N", help_heading = "Processes")]
    pub procs: Option<usize>,

    /// Hosts for the --procs processes, comma-separated: rank r runs on host r mod the count,
    /// rank 0 on the first, which must be this one. The others are started through --rsh, in
    /// the same working directory with the same program path and arguments, and talk to
    /// rank 0 over TCP.
    #[arg(long, value_name = "HOST,...", value_delimiter = ',', help_heading = "Processes")]
    pub hosts: Vec<String>,

    /// The command that runs a command line on another host of --hosts, as ssh does
    /// [default: ssh]; a lab's client nodes have their own (`dfsbench lab status`).
    #[arg(long, value_name = "COMMAND", help_heading = "Processes")]
    pub rsh: Option<String>,

    /// What the other processes do when one exits or does not answer in time: stop (the run
    /// ends with a partial result) or continue (the run goes on without it, and records it
    /// with what it had done). continue needs --procs: under mpirun or srun, the launcher ends
    /// the job when a rank is lost.
    #[arg(long, value_enum, value_name = "WHAT", default_value_t = RankLoss::Stop, help_heading = "Processes")]
    pub rank_loss: RankLoss,

    /// How long the processes wait for a missing one at a phase boundary before the run ends
    /// with a partial result [default: 5m].
    #[arg(long, value_name = "TIME", help_heading = "Processes")]
    pub rank_timeout: Option<String>,

    /// What to print on stdout.
    #[arg(long, visible_alias = "output-format", value_enum, default_value_t = Format::Table, help_heading = "Output")]
    pub format: Format,

    /// Result JSON file or directory [default: ./dfsbench-results/<run id>.json]; `-` writes it
    /// to stdout (the table then goes to stderr: `dfsbench run -o - | jq`).
    #[arg(short, long, value_name = "PATH", help_heading = "Output")]
    pub out: Option<PathBuf>,

    /// A name for this run in the history (`dfsbench history --tag`, `compare --baseline TAG`),
    /// kept in the result file too.
    #[arg(long, value_name = "TAG", value_parser = parse_tag, help_heading = "Output")]
    pub tag: Option<String>,

    /// No progress line.
    #[arg(short, long, help_heading = "Output")]
    pub quiet: bool,

    /// When stderr is not a terminal (CI logs, `tee`), print a progress line this often; 0 turns
    /// them off.
    #[arg(long, value_name = "TIME", default_value = "10s", value_parser = dfsbench_backends::units::parse_duration, help_heading = "Output")]
    pub progress_interval: std::time::Duration,

    /// On a failure, print the full text of the error under its one-line message (HTTP
    /// responses, the chain of causes).
    #[arg(short, long, help_heading = "Output")]
    pub verbose: bool,
}

#[derive(ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RankLoss {
    #[default]
    Stop,
    Continue,
}

#[derive(ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Format {
    #[default]
    Table,
    Json,
    Csv,
}

/// A run's tag: one line of printable text.
fn parse_tag(s: &str) -> Result<String, String> {
    if s.trim().is_empty() || s.chars().any(char::is_control) {
        return Err(format!(
            "'{}' is no tag: give a name of printable characters, such as v1.2 or before-upgrade",
            dfsbench_backends::one_line(s)
        ));
    }
    Ok(s.to_string())
}
