//! Before every measured read phase, each process writes back and drops the cached pages of
//! the files its workers read and wrote (fio's `invalidate=1`), and with `--drop-caches` the
//! kernel's caches too: unmeasured, before the phase starts (cache.rs has the drops during it).

use std::collections::BTreeSet;

use dfsbench_backends::{Client, Storage};
use dfsbench_result::PhaseCache;

use crate::config::RunConfig;
use crate::executor::Executor;
use crate::job::Job;
use crate::plan::Phase;

/// Prepare the client's cache for `phase` on this process: `owners` are the global workers
/// whose files this process's workers read or wrote, `existing` the files per set of every
/// global worker.
pub(super) fn prepare_read<S: Storage>(
    storage: &S,
    config: &RunConfig,
    job_index: usize,
    job: &Job,
    phase: &Phase,
    owners: &BTreeSet<usize>,
    existing: &[Vec<u64>],
) -> PhaseCache {
    if !storage.capabilities().page_cache {
        return PhaseCache {
            policy: PhaseCache::NOT_APPLICABLE.into(),
            ..PhaseCache::default()
        };
    }
    let mut out = PhaseCache {
        policy: PhaseCache::DISABLED.into(),
        ..PhaseCache::default()
    };
    if config.invalidate {
        let paths: BTreeSet<String> = owners
            .iter()
            .flat_map(|&w| {
                let files = existing.get(w).map_or(&[][..], Vec::as_slice);
                job.workload.files_read(job_index, phase.op, w, files)
            })
            .collect();
        invalidate_all(storage, &paths, &mut out);
    }
    if config.drop_caches {
        match drop_kernel_caches() {
            Ok(()) => out.dropped_kernel_caches = true,
            Err(e) => {
                out.message.get_or_insert(e);
            }
        }
    }
    out
}

/// Invalidate every file in `paths` through one client, counting what worked and what failed.
fn invalidate_all<S: Storage>(storage: &S, paths: &BTreeSet<String>, out: &mut PhaseCache) {
    out.policy = PhaseCache::INVALIDATED.into();
    let written_back = storage.write_back();
    let mut client = match storage.client(0, 1) {
        Ok(c) => c,
        Err(e) => {
            out.policy = PhaseCache::FAILED.into();
            out.failed = paths.len() as u64;
            out.message = Some(format!("cannot open a client: {e}"));
            return;
        }
    };
    Executor::for_backend(storage.capabilities()).block_on(async {
        for p in paths {
            let r = if written_back {
                client.invalidate_clean(p).await
            } else {
                client.invalidate(p).await
            };
            match r {
                Ok(()) => out.files += 1,
                // A file that is not there has nothing cached (a mix slot whose fill failed).
                Err(e) if e.kind == "ENOENT" => {}
                Err(e) => {
                    out.failed += 1;
                    out.policy = PhaseCache::FAILED.into();
                    out.message.get_or_insert_with(|| format!("{p}: {e}"));
                }
            }
        }
    });
}

/// Write dirty data back and drop the kernel's page, dentry and inode caches (root only).
fn drop_kernel_caches() -> Result<(), String> {
    // SAFETY: sync has no preconditions.
    unsafe { libc::sync() };
    std::fs::write("/proc/sys/vm/drop_caches", "3\n")
        .map_err(|e| format!("cannot drop the kernel's caches (/proc/sys/vm/drop_caches): {e}"))
}
