//! What the studies of the catalog share: the publications' units, and jobs in their shapes.

use dfsbench_core::config::JobSpec;
use dfsbench_core::workloads::io;

/// The publications' units: 1 KB = 1024 B, 1 MB = 1000 KB, 1 GB = 1000 MB (STUDIES.md).
pub(super) const KB: u64 = 1024;
pub(super) const MB: u64 = 1000 * KB;
pub(super) const GB: u64 = 1000 * MB;

pub(super) fn pub_size(bytes: u64) -> String {
    match bytes {
        0 => "0".into(),
        b if b >= GB && b % GB == 0 => format!("{} GB", b / GB),
        b if b >= MB && b % MB == 0 => format!("{} MB", b / MB),
        b if b % KB == 0 => format!("{} KB", b / KB),
        b => format!("{b} B"),
    }
}

/// fio's binary units for block sizes: 4K, 128K, 1024K.
pub(super) fn fio_size(bytes: u64) -> String {
    format!("{}K", bytes / 1024)
}

/// A files job. Its buffer is the largest file up to 1 MiB (at least 4 KiB): the same calls as
/// the default 1 MiB buffer, without filling megabytes per worker for tiny files.
pub(super) fn files_job(name: &str, workers: usize, sets: &[(u64, u64)]) -> JobSpec {
    let largest = sets.iter().map(|s| s.1).max().unwrap_or(0);
    let mut job = JobSpec::new(name, "files");
    job.settings.workers = Some(workers);
    job.shared.bs = Some(largest.clamp(4 << 10, 1 << 20).to_string());
    job.shared.sizes = Some(sets.iter().map(|(n, s)| format!("{n}x{s}")).collect());
    job
}

pub(super) fn io_job(rw: &str, workers: usize, bs: u64, size: u64, iodepth: usize) -> JobSpec {
    let mut job = JobSpec::new(rw, "io");
    job.settings.workers = Some(workers);
    job.shared.bs = Some(bs.to_string());
    job.workloads.io = io::Options {
        rw: Some(rw.into()),
        size: Some(size.to_string()),
        iodepth: Some(iodepth),
        ..Default::default()
    };
    job
}

/// Shortest time-based phase that can end early when steady: a window needs a few samples.
pub(super) const MIN_STEADY_S: f64 = 10.0;

/// End a time-based job's phases once throughput is steady (the duration is then the longest).
pub(super) fn steady(mut job: JobSpec) -> JobSpec {
    let long_enough = job
        .settings
        .duration
        .as_deref()
        .and_then(|d| d.strip_suffix("ms"))
        .and_then(|ms| ms.parse::<f64>().ok())
        .is_some_and(|ms| ms >= MIN_STEADY_S * 1000.0);
    if long_enough {
        job.settings.until_stable = Some(true);
    }
    job
}

/// `duration` on a job when the scaled duration is at least a second.
pub(super) fn timed(mut job: JobSpec, secs: Option<f64>) -> JobSpec {
    job.settings.duration = secs.map(|s| format!("{}ms", (s * 1000.0).round() as u64));
    job
}

pub(super) fn timing(secs: Option<f64>) -> String {
    match secs {
        Some(s) if s >= MIN_STEADY_S => format!("until steady, at most {s:.0} s"),
        Some(s) => format!("{s:.0} s time-based"),
        None => "one pass (scaled duration under 1 s)".into(),
    }
}

/// A fault point's phases run this long whatever the scale: the node must have time to go,
/// stay out and come back, and a stall does not shrink with the data.
pub(super) const FAULT_PHASE_S: f64 = 24.0;

/// Clients writing (and, with `read`, then reading) 1 MB files at `rate` files/s in all for
/// `secs` each phase: the "copy" a node is taken out of. An open-loop rate keeps the data set
/// the same on every system (a faster one does not have more to recover), and latency counts
/// from each file's intended start, so a stall is not hidden by the clients waiting.
pub(super) fn copy_job(name: &str, clients: usize, secs: f64, rate: f64, read: bool) -> JobSpec {
    let mut job = timed(files_job(name, clients, &[(1_000_000, MB)]), Some(secs));
    job.settings.rate = Some(rate);
    let phases: &[&str] = if read { &["write", "read"] } else { &["write"] };
    job.shared.phases = Some(phases.iter().map(|p| p.to_string()).collect());
    job
}
/// Why the node points did not run, with the flags that run them: `nodes` as `--nodes` takes
/// them, `per_node` client processes on each.
pub(super) fn nodes_off(nodes: &str, per_node: usize) -> String {
    let ppn = if per_node == 1 { "1" } else { "{ppn}" };
    format!(
        "not run: give `--nodes {nodes} --launcher 'mpirun --hostfile hosts --map-by ppr:{ppn}:node -np {{np}}'` (hosts: a file naming one machine per line) or `--launcher 'srun -N {{nodes}} --ntasks-per-node {ppn}'` to run them across machines (docs/studies.md)"
    )
}
