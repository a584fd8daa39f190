//! How runs and phases are named and matched across result files.
//!
//! A run is labelled by its file name (people name result files: `ceph-j16.json`), a *system*
//! is where it ran (target URI, file system type, and the client host when hosts differ), and
//! phases of different runs match by job name and label (`files` / `write 4 KiB`).

use std::collections::BTreeSet;
use std::path::Path;

use dfsbench_result::{PhaseResult, RunResult};

use crate::input::Loaded;

/// A run as the reports show it.
pub struct Run<'a> {
    pub result: &'a RunResult,
    pub path: &'a Path,
    /// Short, unique among the runs of a report: the file name without `.json`.
    pub label: String,
    /// Where it ran: `mem://`, `/mnt/cephfs/bench (ceph)`, `host-a: /data (ext4)`.
    pub system: String,
    /// Index into the run palette: the same run has the same colour in every chart.
    pub colour: usize,
}

impl Run<'_> {
    /// The measured phases (preparation phases such as fio's layout are skipped).
    pub fn phases(&self) -> impl Iterator<Item = &PhaseResult> {
        self.result.phases.iter().filter(|p| !p.prepare)
    }
}

/// The key that matches a phase across runs: job name and label (as [`label`] shows it).
pub(crate) fn phase_key(p: &PhaseResult) -> (String, String) {
    (p.job_name.clone(), label(p))
}

/// The queue depth the phase really had, as its engine recorded it (`queue`): psync issues one
/// block at a time whatever the job asked for (as in fio). None for phases without a queue and
/// for results written before it was recorded.
pub fn queue_depth(p: &PhaseResult) -> Option<u64> {
    p.queue.as_ref().map(|q| q.depth)
}

/// The phase's label for people: an io label's `qdN` says the real queue depth, so a psync
/// run asked for 8 in flight reads `randread 4 KiB qd1 (psync)`, not `qd8`. Results written
/// before the queue was recorded keep their label.
pub fn label(p: &PhaseResult) -> String {
    let Some(q) = &p.queue else {
        return p.label.clone();
    };
    let real = format!("qd{}", q.depth);
    let asked = |w: &str| {
        w.strip_prefix("qd")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    p.label
        .split(' ')
        .map(|w| {
            if asked(w) && w != real {
                format!("{real} ({})", q.engine)
            } else {
                w.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The phase for people: its label, with the job name in front when one run has two jobs
/// with phases of the same label.
pub(crate) fn phase_title(key: &(String, String), ambiguous: bool) -> String {
    if ambiguous {
        format!("{}: {}", key.0, key.1)
    } else {
        key.1.clone()
    }
}

fn system_of(r: &RunResult, with_host: bool) -> String {
    let mut s = r.target.uri.clone();
    if let Some(fs) = r.target.details.get("fs_type") {
        s = format!("{s} ({fs})");
    }
    if with_host {
        s = format!("{}: {s}", r.host.hostname);
    }
    s
}

fn stem(p: &Path) -> String {
    p.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Name the loaded results: unique labels, systems, colours in the order given.
pub fn runs(loaded: &[Loaded]) -> Vec<Run<'_>> {
    let hosts: BTreeSet<&str> = loaded.iter().map(|l| l.result.host.hostname.as_str()).collect();
    let mut labels: Vec<String> = loaded.iter().map(|l| stem(&l.path)).collect();
    // Same file name in different folders: prefix the folder; still equal: the run id.
    for round in 0..2 {
        let dupes: Vec<bool> = labels
            .iter()
            .map(|l| labels.iter().filter(|m| *m == l).count() > 1)
            .collect();
        for (i, d) in dupes.into_iter().enumerate() {
            if d {
                labels[i] = if round == 0 {
                    let parent = loaded[i]
                        .path
                        .parent()
                        .and_then(|p| p.file_name())
                        .map(|s| s.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    format!("{parent}/{}", labels[i])
                } else {
                    format!("{} ({})", labels[i], loaded[i].result.run_id)
                };
            }
        }
    }
    loaded
        .iter()
        .zip(labels)
        .enumerate()
        .map(|(i, (l, label))| Run {
            result: &l.result,
            path: &l.path,
            label,
            system: system_of(&l.result, hosts.len() > 1),
            colour: i,
        })
        .collect()
}

/// The phase keys of all runs and whether any label is used by two jobs (then titles carry
/// the job name). Keys keep the order the phases ran in, except that phases of the same job,
/// operation and workload that differ in size (file size, block size, queue depth, workers)
/// are sorted by those values: `read 4 KiB` before `read 64 KiB`, whatever the file names'
/// order.
pub(crate) fn phase_keys(runs: &[Run]) -> (Vec<(String, String)>, bool) {
    // (key, group rank, sizes)
    let mut keys: Vec<((String, String), usize, [u64; 4])> = Vec::new();
    let mut groups: Vec<(String, String, String)> = Vec::new();
    for r in runs {
        for p in r.phases() {
            let k = phase_key(p);
            if keys.iter().any(|e| e.0 == k) {
                continue;
            }
            let group = (p.job_name.clone(), p.name.clone(), p.workload.clone());
            let rank = groups.iter().position(|g| *g == group).unwrap_or_else(|| {
                groups.push(group);
                groups.len() - 1
            });
            let param = |n: &str| p.params.get(n).and_then(|v| v.as_u64()).unwrap_or(0);
            let sizes = [
                param("file_size"),
                param("bs"),
                queue_depth(p).unwrap_or(0),
                p.workers as u64,
            ];
            keys.push((k, rank, sizes));
        }
    }
    keys.sort_by_key(|e| (e.1, e.2));
    let keys: Vec<(String, String)> = keys.into_iter().map(|e| e.0).collect();
    let ambiguous = keys.iter().any(|k| keys.iter().any(|m| m.1 == k.1 && m.0 != k.0));
    (keys, ambiguous)
}

/// The phase of `run` matching `key`, when it has one.
pub(crate) fn find<'r>(run: &'r Run, key: &(String, String)) -> Option<&'r PhaseResult> {
    run.phases().find(|p| p.job_name == key.0 && label(p) == key.1)
}

/// True when any run has phases of more than one job (then tables get a job column).
pub(crate) fn several_jobs(runs: &[Run]) -> bool {
    runs.iter().any(|r| {
        let mut jobs = r.phases().map(|p| p.job_name.as_str());
        jobs.next().is_some_and(|first| jobs.any(|j| j != first))
    })
}

/// True when the phase moves data (MiB/s makes sense for it).
pub(crate) fn moves_data(p: &PhaseResult) -> bool {
    p.bytes > 0 || matches!(p.name.as_str(), "write" | "read") || p.workload == "io"
}
