//! What gathering one phase at rank 0 costs (the result's `gather`): dfsbench's own overhead,
//! which grows with the ranks while the storage's share does not. bench/rank-scale.sh reads
//! it for 1 to 256 ranks and docs/scaling.md extrapolates it.

use std::time::Instant;

use dfsbench_result::Gather;

use crate::cluster::tree::Tree;
use crate::host::peak_rss_bytes;

/// Times one end-of-phase merge at rank 0: started when rank 0's own part is ready.
pub(crate) struct GatherClock {
    started: Instant,
    arrived: Option<Instant>,
    merged: Option<Instant>,
    /// This thread's CPU time when the parts were in and when they were merged.
    cpu: (f64, f64),
    received: (u64, u64),
    reply_bytes: u64,
    start_skew_s: f64,
    tree: Option<Tree>,
}

impl GatherClock {
    pub(crate) fn start() -> GatherClock {
        GatherClock {
            started: Instant::now(),
            arrived: None,
            merged: None,
            cpu: (0.0, 0.0),
            received: (0, 0),
            reply_bytes: 0,
            start_skew_s: 0.0,
            tree: None,
        }
    }

    /// Every tree child's subtotal is in (by child rank).
    pub(crate) fn arrived(&mut self, children: &[(usize, Vec<u8>)]) {
        self.arrived = Some(Instant::now());
        self.cpu.0 = thread_cpu_s();
        let others = children.iter().map(|(_, p)| p.len() as u64);
        self.received = (others.clone().sum(), others.max().unwrap_or(0));
    }

    /// The parts are merged (`starts`: each rank's departure from the start barrier) along
    /// `tree`, and the answer to every rank is `reply_bytes` long.
    pub(crate) fn merged(&mut self, starts: impl Iterator<Item = f64> + Clone, reply_bytes: usize, tree: Tree) {
        // The CPU clock is read inside the wall interval, at both ends: the thread's CPU time
        // then never exceeds the wall time (read after it, it did by 1 us once).
        self.cpu.1 = thread_cpu_s();
        self.merged = Some(Instant::now());
        self.reply_bytes = reply_bytes as u64;
        self.tree = Some(tree);
        let skew = starts.clone().fold(f64::NEG_INFINITY, f64::max) - starts.fold(f64::INFINITY, f64::min);
        self.start_skew_s = if skew.is_finite() { skew } else { 0.0 };
    }

    /// The record, once the answer went to every rank; None when the round did not get as far.
    pub(crate) fn finish(&self) -> Option<Gather> {
        let (arrived, merged) = (self.arrived?, self.merged?);
        Some(Gather {
            start_skew_s: self.start_skew_s,
            bytes_received: self.received.0,
            largest_part_bytes: self.received.1,
            reply_bytes: self.reply_bytes,
            wait_s: (arrived - self.started).as_secs_f64(),
            merge_s: (merged - arrived).as_secs_f64(),
            merge_cpu_s: (self.cpu.1 - self.cpu.0).max(0.0),
            reply_s: merged.elapsed().as_secs_f64(),
            peak_rss_bytes: peak_rss_bytes(),
            fanout: self.tree.map_or(0, |t| t.fanout as u64),
            depth: self.tree.map_or(0, |t| t.height() as u64),
        })
    }
}

/// CPU time of the calling thread: the merge's own cost, which other processes on the same
/// cores do not inflate as they inflate its wall time.
fn thread_cpu_s() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec it is given.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } != 0 {
        return 0.0;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}
