//! Where the parallel readers of one accelerator meet: its time line for the epoch, shared
//! by the workers that load its batches. They lock it once per batch, never per read.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::timeline::Timeline;

/// Which epoch a line is for: the epoch and, in a search step, the active accelerators.
pub(crate) type EpochKey = (u64, Option<u64>);

/// One accelerator's line in an epoch, and how its readers are doing.
#[derive(Debug)]
pub(crate) struct Line {
    key: EpochKey,
    pub timeline: Timeline,
    /// Readers that loaded their last batch.
    pub done: usize,
    /// A reader stopped early (the phase ends): the others stop waiting for its batches.
    pub stopped: bool,
}

/// A shared line: its readers lock it per batch.
#[derive(Debug, Clone)]
pub(crate) struct Shared(Arc<Mutex<Line>>);

impl Shared {
    pub(crate) fn lock(&self) -> MutexGuard<'_, Line> {
        // A reader that panicked leaves a line still worth reading: the run reports the panic.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The lines of a job's accelerators on this rank, by accelerator.
#[derive(Debug, Clone, Default)]
pub(crate) struct Lines(Arc<Mutex<BTreeMap<u64, Shared>>>);

impl Lines {
    /// Accelerator `a`'s line in epoch `key`: the first of its readers there makes it with
    /// `new` (a line of an earlier epoch is replaced).
    pub(crate) fn get(&self, a: u64, key: EpochKey, new: impl FnOnce() -> Timeline) -> Shared {
        let mut lines = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let stale = lines.get(&a).is_none_or(|l| l.lock().key != key);
        if stale {
            let line = Line {
                key,
                timeline: new(),
                done: 0,
                stopped: false,
            };
            lines.insert(a, Shared(Arc::new(Mutex::new(line))));
        }
        lines[&a].clone()
    }
}
