//! Command-line interface. Flags follow fio's names where the concept is the same.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

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
    /// A workload file (TOML with [[job]] tables); see workloads/ for examples.
    pub workload_file: Option<PathBuf>,

    /// Where to run: a directory, file:///path or mem://. Default: the system temp directory.
    #[arg(short, long, value_name = "URI")]
    pub target: Option<String>,

    /// Workload to run: meta, files, io, mix or iterate. Without it and without a file: the default mix.
    #[arg(short, long, value_name = "NAME", help_heading = "Workload")]
    pub workload: Option<String>,

    /// Concurrent clients (closed loop, no think time) [default: 4].
    #[arg(
        short = 'j',
        long,
        visible_alias = "numjobs",
        value_name = "N",
        help_heading = "Workload"
    )]
    pub workers: Option<usize>,

    /// OS threads carrying the workers (async backends); blocking backends use one per worker.
    #[arg(long, value_name = "N", help_heading = "Workload")]
    pub threads: Option<usize>,

    /// Make the job time-based: e.g. 30s, 2m (fio: runtime).
    #[arg(long, visible_alias = "runtime", value_name = "TIME", help_heading = "Workload")]
    pub duration: Option<String>,

    /// Unmeasured warm-up before a time-based phase (fio: ramp_time).
    #[arg(long, visible_alias = "ramp_time", value_name = "TIME", help_heading = "Workload")]
    pub ramp: Option<String>,

    /// Files per worker (meta, files; mix: pool per worker; iterate: per worker and iteration).
    #[arg(long, visible_alias = "nrfiles", value_name = "N", help_heading = "meta and files")]
    pub files: Option<u64>,

    /// Phases to run, comma-separated (meta: mkdir,create,stat,open,list,rename,delete,rmdir; files: write,read,delete).
    #[arg(long, value_delimiter = ',', value_name = "LIST", help_heading = "meta and files")]
    pub phases: Option<Vec<String>>,

    /// per-worker (a directory per worker, mdtest -u) or shared (one directory).
    #[arg(long, value_name = "LAYOUT", help_heading = "meta and files")]
    pub layout: Option<String>,

    /// Directories per worker for the mkdir and rmdir phases.
    #[arg(long, value_name = "N", help_heading = "meta and files")]
    pub dirs: Option<u64>,

    /// Fan-out of the directory tree (0: flat).
    #[arg(long, value_name = "N", help_heading = "meta and files")]
    pub branch: Option<u64>,

    /// Size of each file (files): 0, 4k, 10m, 1024000 ...
    #[arg(long, value_name = "SIZE", help_heading = "meta and files")]
    pub file_size: Option<String>,

    /// files: size sweep of COUNTxSIZE (10000x0,1000x10k,10x1g); mix: size distribution, 4k
    /// (fixed), 4k-1m (uniform), 4k~1m or log:4k-1m (log-uniform), 4k:70,1m:30 (weighted).
    #[arg(long, value_delimiter = ',', value_name = "LIST", help_heading = "meta and files")]
    pub sizes: Option<Vec<String>>,

    /// Operation mix by weight: read=80,write=20 or get=45,put=15,stat=30,delete=5,list=5 (mix).
    #[arg(long, value_delimiter = ',', value_name = "LIST", help_heading = "mix and iterate")]
    pub mix: Option<Vec<String>>,

    /// Operations per worker when not time-based (mix) [default: 1000].
    #[arg(long, value_name = "N", help_heading = "mix and iterate")]
    pub ops: Option<u64>,

    /// Iterations, each reading the previous one's files and writing new ones (iterate) [default: 3].
    #[arg(long, value_name = "N", help_heading = "mix and iterate")]
    pub iterations: Option<u64>,

    /// Open loop: issue OPS operations per second in total, split over the workers; latency
    /// counts from each operation's intended start (io: with --iodepth 1).
    #[arg(long, value_name = "OPS", help_heading = "Load")]
    pub rate: Option<f64>,

    /// Run each time-based phase once per rate: 3000,4000,5000 (needs --duration).
    #[arg(long, value_delimiter = ',', value_name = "LIST", help_heading = "Load")]
    pub rate_steps: Option<Vec<f64>>,

    /// Spacing of intended starts: uniform or poisson [default: uniform].
    #[arg(long, value_name = "KIND", help_heading = "Load")]
    pub arrival: Option<String>,

    /// End time-based phases once throughput is steady; --duration is the longest they run.
    #[arg(long, help_heading = "Load")]
    pub until_stable: bool,

    /// Steady: every 1-second sample within this share of the window's mean [default: 5%].
    #[arg(long, value_name = "PCT", help_heading = "Load")]
    pub stable_band: Option<String>,

    /// Steady: for this long [default: 10s].
    #[arg(long, value_name = "TIME", help_heading = "Load")]
    pub stable_window: Option<String>,

    /// Access pattern: read, write, randread, randwrite, readwrite, randrw (io).
    #[arg(long, value_name = "PATTERN", help_heading = "io")]
    pub rw: Option<String>,

    /// Block size (io; files: bytes per write/read call) [default: io 4k, files 1m].
    #[arg(long, value_name = "SIZE", help_heading = "io")]
    pub bs: Option<String>,

    /// File size per worker (io) [default: 64m].
    #[arg(long, value_name = "SIZE", help_heading = "io")]
    pub size: Option<String>,

    /// Operations in flight per worker (io) [default: 1].
    #[arg(long, value_name = "N", help_heading = "io")]
    pub iodepth: Option<usize>,

    /// Percentage of reads in readwrite/randrw [default: 50].
    #[arg(long, value_name = "PCT", help_heading = "io")]
    pub rwmixread: Option<u32>,

    /// Bypass the page cache with O_DIRECT (--direct or --direct=1).
    #[arg(long, value_name = "0|1", num_args = 0..=1, default_missing_value = "1", value_parser = parse_flag, help_heading = "io")]
    pub direct: Option<bool>,

    /// fsync written files before close (files) or at the end of writing (io).
    #[arg(long, value_name = "0|1", num_args = 0..=1, default_missing_value = "1", value_parser = parse_flag, help_heading = "io")]
    pub fsync: Option<bool>,

    /// All workers use one file, each its own region (IOR's shared file) (io).
    #[arg(long, value_name = "0|1", num_args = 0..=1, default_missing_value = "1", value_parser = parse_flag, help_heading = "io")]
    pub shared_file: Option<bool>,

    /// I/O engine: auto, io_uring or psync (io) [default: auto].
    #[arg(long, value_name = "ENGINE", help_heading = "io")]
    pub ioengine: Option<String>,

    /// Write self-describing data and check every byte read.
    #[arg(long, help_heading = "Run")]
    pub verify: bool,

    /// Keep the run directory and its files afterwards (remove later with `dfsbench clean`).
    #[arg(long, help_heading = "Run")]
    pub keep: bool,

    /// Stop after this many errors; 0 never stops [default: 1000].
    #[arg(long, value_name = "N", help_heading = "Run")]
    pub max_errors: Option<u64>,

    /// Create the S3 bucket of the target when it does not exist.
    #[arg(long, help_heading = "Run")]
    pub create_bucket: bool,

    /// Retry requests that failed temporarily up to N times, counting every retry (network
    /// backends; by default nothing is retried).
    #[arg(long, value_name = "N", help_heading = "Run")]
    pub retries: Option<u32>,

    /// Before every measured read phase, write back and drop the cached pages of the files it
    /// reads (fsync + posix_fadvise DONTNEED, fio's invalidate=1), so reads reach the storage;
    /// 0 reads whatever the client's page cache holds, and the result flags it [default: 1].
    #[arg(long, value_name = "0|1", num_args = 0..=1, default_missing_value = "1", value_parser = parse_flag, help_heading = "Run")]
    pub invalidate: Option<bool>,

    /// Also drop the kernel's page, dentry and inode caches (sync, then 3 to
    /// /proc/sys/vm/drop_caches) before every measured read phase; needs root.
    #[arg(long, help_heading = "Run")]
    pub drop_caches: bool,

    /// Measure local disk throughput and the round trip and bandwidth to the target first,
    /// so results can be read against the hardware.
    #[arg(long, help_heading = "Run")]
    pub null_tests: bool,

    /// Record the CPU of these server processes in every phase, beside the client's (a
    /// server on this host, e.g. `--server-pid $(pidof minio)`; with several processes, on the
    /// host of the first).
    #[arg(
        long = "server-pid",
        value_delimiter = ',',
        value_name = "PID,...",
        help_heading = "Run"
    )]
    pub server_pids: Option<Vec<u32>>,
    /// Run N client processes on this machine (rank 0 and N - 1 copies of itself); needs no
    /// MPI. Across machines, start dfsbench with mpirun or srun instead.
    #[arg(long, value_name = "N", help_heading = "Processes")]
    pub procs: Option<usize>,

    /// Reads read another client's data: the same worker of another process, a node away when
    /// there are several (IOR -C, mdtest -N), or the next worker in a single process; iterate
    /// reads another worker's previous iteration (DFS-Perf's Shuffle mode).
    #[arg(long, help_heading = "Processes")]
    pub shuffle: bool,

    /// After a time-limited create or write phase, every worker creates or writes files until
    /// it has as many as the busiest one (unmeasured; IOR -O stoneWallingWearOut=1), so reads
    /// find every file.
    #[arg(long, help_heading = "Processes")]
    pub stonewall_wear_out: bool,

    /// How long the processes wait for a missing one at a phase boundary before the run ends
    /// with a partial result [default: 5m].
    #[arg(long, value_name = "TIME", help_heading = "Processes")]
    pub rank_timeout: Option<String>,

    /// Seed of random offsets and choices.
    #[arg(long, value_name = "N", help_heading = "Run")]
    pub seed: Option<u64>,

    /// What to print on stdout.
    #[arg(long, value_enum, default_value_t = Format::Table, help_heading = "Output")]
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

fn parse_flag(s: &str) -> Result<bool, String> {
    match s {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => Err(format!("'{s}' is not 0 or 1")),
    }
}
