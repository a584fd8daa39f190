//! The seed evaluations (see STUDIES.md) as data: their points at a scale, and their tables.

use dfsbench_core::config::JobSpec;

mod clients_sweep;
mod dfsperf;
mod fio_matrix;
mod size_sweep;
mod surfnet;

use super::model::Study;
use super::scale::Scale;

/// Name and one line of every study, in `dfsbench study list` order.
pub const STUDIES: [(&str, &str); 5] = [
    (
        "size-sweep",
        "write/read N files of size S, 10000 x 0 B to 1 x 10 GB, and metadata ops/s (CS597 report)",
    ),
    (
        "clients-sweep",
        "2..256 closed-loop clients x 0 KB..10 MB files: write/read/delete, client CPU (BTH thesis)",
    ),
    (
        "dfsperf",
        "DFS-Perf: metadata, 80/20 50/50 20/80 read/write mixtures, 1..32 thread scalability, LocalFS baseline",
    ),
    (
        "surfnet",
        "SURFnet: sequential and random I/O with 8K/256K/8M records on a 2 GB file, random seeks/s",
    ),
    (
        "fio-matrix",
        "fio: read/write/randread/randwrite x 4K/128K/1024K blocks x 1/2/4/8 threads, iodepth 32, 180 s",
    ),
];

/// The study `name` at `scale`; `nodes` are the client node counts of the studies with a node
/// axis (size-sweep, dfsperf), empty for this machine only.
pub fn build(name: &str, scale: Scale, nodes: &[usize]) -> Option<Study> {
    Some(match name {
        "size-sweep" => size_sweep::size_sweep(scale, nodes),
        "clients-sweep" => clients_sweep::clients_sweep(scale),
        "dfsperf" => dfsperf::dfsperf(scale, nodes),
        "surfnet" => surfnet::surfnet(scale),
        "fio-matrix" => fio_matrix::fio_matrix(scale),
        _ => return None,
    })
}

/// The publications' units: 1 KB = 1024 B, 1 MB = 1000 KB, 1 GB = 1000 MB (STUDIES.md).
const KB: u64 = 1024;
const MB: u64 = 1000 * KB;
const GB: u64 = 1000 * MB;

fn pub_size(bytes: u64) -> String {
    match bytes {
        0 => "0".into(),
        b if b >= GB && b % GB == 0 => format!("{} GB", b / GB),
        b if b >= MB && b % MB == 0 => format!("{} MB", b / MB),
        b if b % KB == 0 => format!("{} KB", b / KB),
        b => format!("{b} B"),
    }
}

/// fio's binary units for block sizes: 4K, 128K, 1024K.
fn fio_size(bytes: u64) -> String {
    format!("{}K", bytes / 1024)
}

/// A files job. Its buffer is the largest file up to 1 MiB (at least 4 KiB): the same calls as
/// the default 1 MiB buffer, without filling megabytes per worker for tiny files.
fn files_job(name: &str, workers: usize, sets: &[(u64, u64)]) -> JobSpec {
    let largest = sets.iter().map(|s| s.1).max().unwrap_or(0);
    JobSpec {
        bs: Some(largest.clamp(4 << 10, 1 << 20).to_string()),
        name: Some(name.into()),
        workload: Some("files".into()),
        workers: Some(workers),
        sizes: Some(sets.iter().map(|(n, s)| format!("{n}x{s}")).collect()),
        ..Default::default()
    }
}

fn io_job(rw: &str, workers: usize, bs: u64, size: u64, iodepth: usize) -> JobSpec {
    JobSpec {
        name: Some(rw.into()),
        workload: Some("io".into()),
        workers: Some(workers),
        rw: Some(rw.into()),
        bs: Some(bs.to_string()),
        size: Some(size.to_string()),
        iodepth: Some(iodepth),
        ..Default::default()
    }
}

/// Shortest time-based phase that can end early when steady: a window needs a few samples.
const MIN_STEADY_S: f64 = 10.0;

/// End a time-based job's phases once throughput is steady (the duration is then the longest).
fn steady(mut job: JobSpec) -> JobSpec {
    let long_enough = job
        .duration
        .as_deref()
        .and_then(|d| d.strip_suffix("ms"))
        .and_then(|ms| ms.parse::<f64>().ok())
        .is_some_and(|ms| ms >= MIN_STEADY_S * 1000.0);
    if long_enough {
        job.until_stable = Some(true);
    }
    job
}

/// `duration` on a job when the scaled duration is at least a second.
fn timed(mut job: JobSpec, secs: Option<f64>) -> JobSpec {
    job.duration = secs.map(|s| format!("{}ms", (s * 1000.0).round() as u64));
    job
}

fn timing(secs: Option<f64>) -> String {
    match secs {
        Some(s) if s >= MIN_STEADY_S => format!("until steady, at most {s:.0} s"),
        Some(s) => format!("{s:.0} s time-based"),
        None => "one pass (scaled duration under 1 s)".into(),
    }
}

const LAB: &str =
    "needs a lab target with node control (fault and delay injection), which dfsbench does not have yet: not run";
const NODES_OFF: &str = "not run: give `--nodes 4,16,64 --launcher 'mpirun --hostfile HOSTS --map-by ppr:{ppn}:node -np {np}'` (or an srun line) to run the node points across machines (docs/studies.md)";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_study_is_consistent() {
        let scale = Scale::parse("0.001").unwrap();
        for (name, nodes) in STUDIES.iter().flat_map(|(n, _)| [(*n, vec![]), (*n, vec![4, 16])]) {
            let s = build(name, scale, &nodes).unwrap();
            assert_eq!(s.name, name);
            let ids: std::collections::BTreeSet<_> = s.points.iter().map(|p| p.id.as_str()).collect();
            assert_eq!(ids.len(), s.points.len(), "{name}: point ids are unique");
            for t in &s.tables {
                for r in &t.rows {
                    assert_eq!(r.labels.len(), t.row_header.len(), "{name}: {}", t.title);
                    assert_eq!(r.cells.len(), t.columns.len(), "{name}: {}", t.title);
                    for c in &r.cells {
                        assert!(
                            ids.contains(c.point.as_str()),
                            "{name}: cell of unknown point {}",
                            c.point
                        );
                    }
                }
            }
            // Every job of every point validates.
            for p in &s.points {
                dfsbench_core::config::validate(&Default::default(), &p.jobs)
                    .unwrap_or_else(|e| panic!("{name} {}: {e}", p.id));
            }
        }
        assert_eq!(pub_size(10 * GB), "10 GB");
        assert_eq!(pub_size(10 * KB), "10 KB");
        assert_eq!(build("nope", scale, &[]).map(|s| s.name), None);
    }
}
