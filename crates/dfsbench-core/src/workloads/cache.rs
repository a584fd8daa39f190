//! The files a read phase reads, so that their cached pages can be dropped before it starts.

use crate::config::{Job, Workload};
use crate::plan::{Phase, PhaseOp};
use crate::workloads::{files, io, iterate, mix};

/// The files of worker `owner` that `phase` reads; `existing` is how many files that worker
/// has per file set.
pub(crate) fn files_read(job_index: usize, job: &Job, phase: &Phase, owner: usize, existing: &[u64]) -> Vec<String> {
    let mut path = String::new();
    let mut each = |count: u64, name: &mut dyn FnMut(&mut String, u64)| -> Vec<String> {
        (0..count)
            .map(|i| {
                name(&mut path, i);
                path.clone()
            })
            .collect()
    };
    match (&job.workload, phase.op) {
        (Workload::Files(_), PhaseOp::Files { set, .. }) => {
            let count = existing.get(set).copied().unwrap_or(0);
            each(count, &mut |p, i| files::file_path(p, job_index, owner, set, i))
        }
        (Workload::Io(io), PhaseOp::Io(_)) => vec![io::io_file(job_index, io, owner)],
        (Workload::Mix(m), PhaseOp::Mix) => each(m.files, &mut |p, slot| mix::slot_path(p, job_index, owner, slot)),
        (Workload::Iterate(it), PhaseOp::Iterate(n)) if n > 0 => {
            each(it.files, &mut |p, i| iterate::file_path(p, job_index, n - 1, owner, i))
        }
        _ => Vec::new(),
    }
}
