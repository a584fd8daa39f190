//! One emulated accelerator's time line: it computes each batch for a fixed time, starting
//! when the batch is loaded and the previous one is computed, and waits for data in between.
//! Its readers may be ahead of it by at most `depth` batches (the batch being loaded counts):
//! a PyTorch DataLoader keeps `num_workers * prefetch_factor` batches outstanding. The
//! accelerator is a clock, not a thread: loading goes on while it "computes".

use std::collections::VecDeque;
use std::time::Duration;

use dfsbench_backends::clock::Instant;
use dfsbench_result::Accelerator;

pub(crate) struct Timeline {
    compute: Duration,
    depth: usize,
    /// When the accelerator has computed every batch it started.
    free_at: Instant,
    /// When each loaded batch it has not started yet will start, in order.
    queued: VecDeque<Instant>,
    figures: Accelerator,
}

impl Timeline {
    /// An idle accelerator from `start` on (it waits for its first batch from then).
    pub(crate) fn new(start: Instant, compute: Duration, depth: usize) -> Timeline {
        Timeline {
            compute,
            depth: depth.max(1),
            free_at: start,
            queued: VecDeque::new(),
            figures: Accelerator::default(),
        }
    }

    /// When the readers may start loading the next batch, from `now`: at once while fewer than
    /// `depth` batches are outstanding, else when the oldest queued one goes to compute.
    pub(crate) fn next_load_at(&mut self, now: Instant) -> Instant {
        while self.queued.front().is_some_and(|&s| s <= now) {
            self.queued.pop_front();
        }
        // The next batch may load while at most `depth - 1` loaded ones wait: else once
        // enough of them went to compute.
        match self.queued.len().checked_sub(self.depth) {
            Some(i) => self.queued[i],
            None => now,
        }
    }

    /// A batch of `samples` samples and `bytes` bytes finished loading at `ready`: it computes
    /// as soon as the accelerator is free. Returns how long the accelerator waited for it.
    pub(crate) fn loaded(&mut self, ready: Instant, samples: u64, bytes: u64) -> Duration {
        let wait = ready.saturating_duration_since(self.free_at);
        let start = ready.max(self.free_at);
        self.free_at = start + self.compute;
        self.queued.push_back(start);
        let f = &mut self.figures;
        f.steps += 1;
        f.samples += samples;
        f.bytes += bytes;
        f.compute_ns += self.compute.as_nanos() as u64;
        f.wait_ns += wait.as_nanos() as u64;
        wait
    }

    /// When the last batch is computed.
    pub(crate) fn end(&self) -> Instant {
        self.free_at
    }

    pub(crate) fn figures(&self) -> Accelerator {
        self.figures
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn a_fast_reader_keeps_the_accelerator_busy_after_the_first_batch() {
        let t0 = Instant::now();
        let mut t = Timeline::new(t0, 10 * MS, 2);
        // Batches load in 1 ms each: only the first is waited for.
        let mut now = t0;
        for _ in 0..5 {
            now = t.next_load_at(now) + MS;
            t.loaded(now, 4, 400);
        }
        let f = t.figures();
        assert_eq!((f.steps, f.samples, f.bytes), (5, 20, 2000));
        assert_eq!(f.wait_ns, MS.as_nanos() as u64);
        assert_eq!(f.compute_ns, 5 * (10 * MS).as_nanos() as u64);
        assert_eq!(t.end(), t0 + MS + 50 * MS);
    }

    #[test]
    fn a_slow_reader_makes_the_accelerator_wait_for_every_batch() {
        let t0 = Instant::now();
        let mut t = Timeline::new(t0, 2 * MS, 4);
        let mut now = t0;
        for _ in 0..3 {
            now = t.next_load_at(now) + 10 * MS;
            let wait = t.loaded(now, 1, 1);
            assert!(wait >= 8 * MS);
        }
        // Waits: 10, then 8 and 8 (10 ms loads, 2 ms computes).
        assert_eq!(t.figures().wait_ns, (26 * MS).as_nanos() as u64);
        assert!(t.figures().au() < 0.2);
    }

    #[test]
    fn readers_stay_at_most_depth_batches_ahead() {
        let t0 = Instant::now();
        let mut t = Timeline::new(t0, 100 * MS, 2);
        // Loading is instant: batch 0 computes from t0, 1 from t0+100ms, 2 from t0+200ms.
        assert_eq!(t.next_load_at(t0), t0);
        t.loaded(t0, 1, 1);
        assert_eq!(t.next_load_at(t0), t0);
        t.loaded(t0, 1, 1);
        // Batch 1 is queued and batch 2 would be the second outstanding one: it may load.
        assert_eq!(t.next_load_at(t0), t0);
        t.loaded(t0, 1, 1);
        // Batches 1 and 2 are queued: the next may load when batch 1 starts.
        assert_eq!(t.next_load_at(t0), t0 + 100 * MS);
    }
}
