//! Reads must reach the storage: before every measured read phase, each process writes back
//! and drops the cached pages of the files its workers read and wrote (fio's `invalidate=1`),
//! and with `--drop-caches` the kernel's caches too, unmeasured, before the phase starts
//! (runner/invalidate.rs). This file holds what the workers do during a phase and the merge of
//! the records.
//!
//! A phase that reads a file again (time-based reads go round their files, io passes over its
//! file again, a mix reads its pool again) drops that file again just before, between
//! operations: inside the phase's wall time, outside every operation's latency. The phase's
//! record counts those re-reads and drops, and a re-read left warm marks the phase.

use dfsbench_backends::clock::Instant;
use dfsbench_backends::Client;

use crate::stats::{Reread, Rereads};
use crate::worker::JobContext;
use dfsbench_result::PhaseCache;

/// Drop `path`'s cached pages again before it is read again, unless `invalidate` is off; only
/// a file written since its last drop (`dirty`) needs the write-back first.
pub(crate) async fn drop_again<C: Client>(client: &mut C, path: &str, invalidate: bool, dirty: bool) -> Reread {
    if !invalidate {
        return Reread::Kept;
    }
    let start = Instant::now();
    let r = if dirty {
        client.invalidate(path).await
    } else {
        client.invalidate_clean(path).await
    };
    let took = start.elapsed();
    match r {
        // A file that is not there has nothing cached: its read fails on its own.
        Ok(()) => Reread::Dropped(took),
        Err(e) if e.kind == "ENOENT" => Reread::Dropped(took),
        Err(e) => Reread::Failed(took, format!("{path}: {e}")),
    }
}

/// The files, by index, a worker read or wrote in the current phase (reading one of them again
/// drops it first), and those written since their last drop. Tracks nothing where no page
/// cache is involved (the backend keeps none, or direct I/O bypasses it).
pub(crate) struct Seen {
    touched: Vec<u64>,
    dirty: Vec<u64>,
    on: bool,
    invalidate: bool,
}

/// Set (`to`) or clear bit `i` of `bits`; whether it was set.
fn flip(bits: &mut Vec<u64>, i: u64, to: bool) -> bool {
    let (word, bit) = ((i / 64) as usize, 1u64 << (i % 64));
    if word >= bits.len() {
        bits.resize(word + 1, 0);
    }
    let was = bits[word] & bit != 0;
    if to {
        bits[word] |= bit;
    } else {
        bits[word] &= !bit;
    }
    was
}

impl Seen {
    pub(crate) fn new(ctx: &JobContext, direct: bool) -> Self {
        Seen {
            touched: Vec::new(),
            dirty: Vec::new(),
            on: ctx.page_cache && !direct,
            invalidate: ctx.invalidate,
        }
    }

    /// Note file `i` as written: its next read drops it, writing it back first.
    pub(crate) fn wrote(&mut self, i: u64) {
        if self.on {
            flip(&mut self.touched, i, true);
            flip(&mut self.dirty, i, true);
        }
    }

    /// Before reading file `i` at `path`: drop it again if this phase already read or wrote it.
    pub(crate) async fn ready<C: Client>(&mut self, client: &mut C, path: &str, i: u64) -> Reread {
        if !self.on || !flip(&mut self.touched, i, true) {
            return Reread::First;
        }
        let dirty = flip(&mut self.dirty, i, false);
        drop_again(client, path, self.invalidate, dirty).await
    }
}

/// The phase's record with what its workers did before their re-reads: a failed drop fails
/// the policy and gives the message, if none came before.
pub(crate) fn with_rereads(mut cache: PhaseCache, r: Rereads) -> PhaseCache {
    cache.rereads = r.reads;
    cache.reread_invalidations = r.dropped;
    cache.reread_invalidation_s = r.seconds;
    if let Some(m) = r.failure {
        if cache.policy == PhaseCache::INVALIDATED {
            cache.policy = PhaseCache::FAILED.into();
        }
        cache.message.get_or_insert(m);
    }
    cache
}

/// One record for the phase from every process's.
pub(crate) fn merge(parts: &[PhaseCache]) -> PhaseCache {
    let Some(first) = parts.first() else {
        return PhaseCache::default();
    };
    let failed = parts.iter().find(|p| p.policy == PhaseCache::FAILED);
    PhaseCache {
        policy: failed.unwrap_or(first).policy.clone(),
        files: parts.iter().map(|p| p.files).sum(),
        failed: parts.iter().map(|p| p.failed).sum(),
        dropped_kernel_caches: parts.iter().all(|p| p.dropped_kernel_caches),
        message: parts.iter().find_map(|p| p.message.clone()),
        // Counted by the workers during the phase: see with_rereads.
        ..PhaseCache::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(policy: &str, files: u64, failed: u64, message: Option<&str>) -> PhaseCache {
        PhaseCache {
            policy: policy.into(),
            files,
            failed,
            dropped_kernel_caches: true,
            message: message.map(String::from),
            ..PhaseCache::default()
        }
    }

    #[test]
    fn bits_flip_and_tell_what_they_were() {
        let mut bits = Vec::new();
        assert!(!flip(&mut bits, 200, true), "the first read of a file");
        assert!(flip(&mut bits, 200, true), "read again");
        assert!(!flip(&mut bits, 199, true) && !flip(&mut bits, 0, false));
        assert!(flip(&mut bits, 200, false) && !flip(&mut bits, 200, false), "cleared");
        assert_eq!(bits.len(), 4);
    }

    #[test]
    fn a_failed_drop_before_a_reread_fails_the_policy_and_marks_the_phase() {
        let r = Rereads {
            reads: 10,
            dropped: 9,
            seconds: 0.5,
            failure: Some("w0/f3: EIO".into()),
        };
        let c = with_rereads(part(PhaseCache::INVALIDATED, 4, 0, None), r);
        assert_eq!(c.policy, PhaseCache::FAILED);
        assert_eq!((c.rereads, c.reread_invalidations), (10, 9));
        assert_eq!(c.message.as_deref(), Some("w0/f3: EIO"));
        assert!(
            c.left_warm(),
            "the kernel's caches dropped before the phase do not cool a re-read"
        );
        assert_eq!(
            c.describe(),
            "invalidated 4 files, kernel caches dropped, 1 of 10 re-reads not invalidated first"
        );
        let all = Rereads {
            reads: 10,
            dropped: 10,
            seconds: 0.25,
            failure: None,
        };
        let c = with_rereads(part(PhaseCache::INVALIDATED, 4, 0, None), all);
        assert_eq!(c.policy, PhaseCache::INVALIDATED);
        assert!(!c.left_warm());
        assert_eq!(
            c.describe(),
            "invalidated 4 files, kernel caches dropped, and again before each of 10 re-reads (0.250 s of the workers' time)"
        );
    }

    #[test]
    fn one_failing_process_makes_the_phase_failed() {
        let m = merge(&[
            part(PhaseCache::INVALIDATED, 3, 0, None),
            part(PhaseCache::FAILED, 2, 1, Some("w5.dat: EIO")),
        ]);
        assert_eq!(m.policy, PhaseCache::FAILED);
        assert_eq!((m.files, m.failed), (5, 1));
        assert_eq!(m.message.as_deref(), Some("w5.dat: EIO"));
        assert!(m.dropped_kernel_caches);
        assert!(!m.left_warm(), "the kernel's caches were dropped after the failure");
        let m = merge(&[PhaseCache {
            dropped_kernel_caches: false,
            ..part(PhaseCache::FAILED, 0, 1, None)
        }]);
        assert!(m.left_warm());
    }

    #[test]
    fn dropped_kernel_caches_cool_a_disabled_invalidation() {
        let mut p = part(PhaseCache::DISABLED, 0, 0, None);
        assert!(!p.left_warm());
        p.dropped_kernel_caches = false;
        assert!(p.left_warm());
    }
}
