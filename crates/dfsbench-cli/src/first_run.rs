//! `dfsbench run` without a workload. The first run: metadata, small files and block I/O, each
//! phase time-based for a few seconds (30-60 s in all), with the null tests, ending with what
//! its figures mean against those null tests and the commands to try next. `--quick`: the
//! two-second smoke mix, every phase too short to trust.

use dfsbench_core::config::{JobSettings, JobSpec, RunConfig, RunSpec};
use dfsbench_core::workloads::SharedOptions;

use crate::cli::RunArgs;
use dfsbench_result::units::rate_si;
use dfsbench_result::{format_ns, validity_reasons, PhaseResult, RunResult};

/// How long each time-based phase of a job runs: creates need the longest, so that the rename
/// and delete passes over what they made last a second or more.
const METADATA_SECS: &str = "5s";
const FILES_SECS: &str = "3s";
const BLOCK_SECS: &str = "3s";
/// Each block worker's file: its writes go round it, so the first run holds at most 4 x this.
const BLOCK_FILE: &str = "256m";
/// Operations that move less than this each are compared by their rate.
const SMALL_OP: u64 = 64 << 10;
/// A figure this many times the local disk's null test says why it can be.
const ABOVE_DISK: f64 = 1.2;
/// A latency under this comes from memory, not from a disk or a network round trip.
const CACHE_NS: u64 = 10_000;

/// A run of neither a workload file, nor a fio command line, nor `--workload`.
pub(crate) fn without_workload(a: &RunArgs) -> bool {
    a.workload_file.is_none() && a.fio_args.is_none() && a.job.workload.is_none()
}

/// The jobs of a run without a workload; `flags` carries --workers and --threads.
pub(crate) fn jobs(flags: &JobSpec, quick: bool) -> Vec<JobSpec> {
    let job = |name: &str, workload: &str, duration: Option<&str>, shared: SharedOptions| JobSpec {
        settings: JobSettings {
            name: Some(name.into()),
            workload: Some(workload.into()),
            workers: flags.settings.workers,
            threads: flags.settings.threads,
            duration: duration.map(str::to_string),
            ..Default::default()
        },
        shared,
        ..Default::default()
    };
    if quick {
        let meta = SharedOptions {
            files: Some(1000),
            ..Default::default()
        };
        let files = SharedOptions {
            sizes: Some(vec!["1000x4k".into(), "4x16m".into()]),
            ..Default::default()
        };
        return vec![job("metadata", "meta", None, meta), job("files", "files", None, files)];
    }
    // A list of a directory of many thousand files takes tens of milliseconds: too few
    // listings in a few seconds for sound percentiles (`-w meta` lists).
    let meta = SharedOptions {
        phases: Some(
            ["create", "stat", "open", "rename", "delete"]
                .map(String::from)
                .to_vec(),
        ),
        ..Default::default()
    };
    let files = SharedOptions {
        sizes: Some(vec!["1000x4k".into()]),
        ..Default::default()
    };
    // O_DIRECT: the writes go round a file that the page cache would otherwise hold.
    let block = SharedOptions {
        bs: Some("1m".into()),
        direct: Some(true),
        ..Default::default()
    };
    let mut block = job("block", "io", Some(BLOCK_SECS), block);
    block.workloads.io.rw = Some("write".into());
    block.workloads.io.then = Some(vec!["read".into()]);
    block.workloads.io.size = Some(BLOCK_FILE.into());
    vec![
        job("metadata", "meta", Some(METADATA_SECS), meta),
        job("files", "files", Some(FILES_SECS), files),
        block,
    ]
}

/// The run settings of a run without a workload: the first run measures the null tests.
pub(crate) fn run_spec(quick: bool) -> RunSpec {
    RunSpec {
        null_tests: (!quick).then_some(true),
        ..Default::default()
    }
}

/// Where the backend cannot do block I/O (an object store), the first run leaves that job out.
pub(crate) fn mark_optional(config: &mut RunConfig) {
    for job in config.jobs.iter_mut().filter(|j| j.name == "block") {
        job.optional = true;
    }
}

fn mib(bytes_per_sec: f64) -> String {
    format!("{:.0} MiB/s", bytes_per_sec / (1024.0 * 1024.0))
}

/// What the figures mean against the null tests, and the commands to try next.
pub(crate) fn footer(result: &RunResult, target: &str, path: &str) -> String {
    let measured: Vec<&PhaseResult> = result.phases.iter().filter(|p| !p.prepare && p.ops > 0).collect();
    let mut out = String::from("\nwhat this means");
    let null = result.null_tests.as_ref();
    let disk = null.and_then(|n| n.local_disk.as_ref());
    let memory = null.and_then(|n| n.memory_copy.as_ref());
    let mut bounds = Vec::new();
    if let Some(d) = disk {
        bounds.push(format!(
            "the local disk writes {} (fsync-ed) and reads {} (its cache dropped)",
            mib(d.write_bytes_per_sec),
            mib(d.read_bytes_per_sec)
        ));
    }
    if let Some(m) = memory {
        bounds.push(format!("memory copies {}", mib(m.bytes_per_sec)));
    }
    if bounds.is_empty() {
        out += ":\n";
    } else {
        out += &format!(" (null tests: {}):\n", bounds.join("; "));
    }
    // Rates compare where an operation is small: a 1 MiB block is slow only per operation.
    let small: Vec<&PhaseResult> = measured
        .iter()
        .copied()
        .filter(|p| p.bytes / p.ops < SMALL_OP)
        .collect();
    let by_rate = |a: &&&PhaseResult, b: &&&PhaseResult| a.ops_per_sec.total_cmp(&b.ops_per_sec);
    if let (Some(fast), Some(slow)) = (small.iter().max_by(by_rate), small.iter().min_by(by_rate)) {
        out += &format!("  fastest: {}\n", ops_line(fast));
        out += &format!("  slowest: {}\n", ops_line(slow));
    }
    for p in measured.iter().filter(|p| p.bytes > 0) {
        let reads = p.name.contains("read");
        let mut against = Vec::new();
        if let Some(d) = disk {
            let (bound, what) = if reads {
                (d.read_bytes_per_sec, "read")
            } else {
                (d.write_bytes_per_sec, "write")
            };
            let share = p.bytes_per_sec / bound;
            let why = if share > ABOVE_DISK {
                " (more than the null test, which moves 16 MiB with one thread and waits for the flush)"
            } else {
                ""
            };
            against.push(format!("{}x the local disk's {what}{why}", times(share)));
        }
        if let Some(m) = memory {
            let share = p.bytes_per_sec / m.bytes_per_sec;
            let why = if share > 1.0 {
                ": no client moves data faster than memory, report this"
            } else {
                ""
            };
            against.push(format!("{}x a memory copy{why}", times(share)));
        }
        out += &format!("  {}: {}", label(p), mib(p.bytes_per_sec));
        if !against.is_empty() {
            out += &format!(" = {}", against.join(", "));
        }
        out += "\n";
    }
    let weak = measured.iter().filter(|p| !validity_reasons(p).is_empty()).count();
    if weak > 0 {
        out += &format!(
            "  {weak} of {} phases are [weak] (the reasons are above): on a busy machine, run again\n",
            measured.len()
        );
    }
    out += &format!(
        "next:\n  dfsbench report {path} -o report.html   # this run's charts\n  \
         dfsbench study size-sweep -t {target} --scale 0.01   # a published evaluation, in its tables\n  \
         dfsbench lab up ceph && dfsbench run -t lab:ceph-fs   # a Ceph cluster on this machine (root)\n  \
         dfsbench run --quick   # the 2-second smoke run\n"
    );
    out
}

/// A ratio with two significant digits below 0.1 (0.0046x), two decimals above.
fn times(v: f64) -> String {
    let decimals = if v > 0.0 && v < 0.1 {
        (1.0 - v.log10().floor()) as usize
    } else {
        2
    };
    format!("{v:.decimals$}")
}

/// The phase as the table names it: with its job's name where the run has several jobs.
fn label(p: &PhaseResult) -> String {
    format!("{}: {}", p.job_name, p.label)
}

/// A phase's rate and median, and where a median that low comes from.
fn ops_line(p: &PhaseResult) -> String {
    let p50 = p.latency.p50_ns;
    let whence = if p50 < CACHE_NS {
        ": under 10 us, so served from memory (the kernel's or the client's caches), not by a disk or a network"
    } else {
        ""
    };
    format!(
        "{} at {} ops/s (p50 {}){whence}",
        label(p),
        rate_si(p.ops_per_sec),
        format_ns(p50)
    )
}
