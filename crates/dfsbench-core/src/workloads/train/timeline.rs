//! One emulated accelerator's time line: it computes each batch for a fixed time, in order,
//! starting when the batch is loaded and the previous one is computed, and waits for data in
//! between. Its readers (a PyTorch DataLoader's workers) load batches side by side, reader `r`
//! batches `r`, `r + readers` ... as the DataLoader hands them out, and may be ahead of it by at
//! most `depth` batches (`num_workers * prefetch_factor` outstanding): batch `k` may start
//! loading once batch `k - depth` went to compute. The accelerator is a clock, not a thread:
//! loading goes on while it "computes".

use std::time::Duration;

use dfsbench_backends::clock::Instant;
use dfsbench_result::Accelerator;

/// A loaded batch the accelerator has not started: it waits for the ones before it.
#[derive(Debug, Clone, Copy)]
struct Loaded {
    batch: u64,
    ready: Instant,
    samples: u64,
    bytes: u64,
}

/// A batch the accelerator started: it was idle from `idle_from` until `start` (no time when
/// the batch was there before it was free), then computed for `compute`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Started {
    pub idle_from: Instant,
    pub start: Instant,
    pub compute: Duration,
}

impl Started {
    pub(crate) fn waited(&self) -> Duration {
        self.start.saturating_duration_since(self.idle_from)
    }
}

#[derive(Debug)]
pub(crate) struct Timeline {
    compute: Duration,
    depth: usize,
    /// When the accelerator has computed every batch it started.
    free_at: Instant,
    /// Batches started so far: the next to start is this one.
    started: u64,
    /// When each of the last `depth` started batches started, batch `k` at `k % depth`.
    starts: Vec<Instant>,
    /// Loaded batches that wait for an earlier one still loading (at most one per reader).
    loaded: Vec<Loaded>,
    figures: Accelerator,
}

impl Timeline {
    /// An idle accelerator from `start` on (it waits for its first batch from then).
    pub(crate) fn new(start: Instant, compute: Duration, depth: usize) -> Timeline {
        let depth = depth.max(1);
        Timeline {
            compute,
            depth,
            free_at: start,
            started: 0,
            starts: vec![start; depth],
            loaded: Vec::new(),
            figures: Accelerator::default(),
        }
    }

    /// When batch `k` may start loading: at once (`now`) while fewer than `depth` batches
    /// are ahead of the accelerator, else when batch `k - depth` starts; None while that is
    /// not known (a batch before it is still loading).
    pub(crate) fn load_at(&self, k: u64, now: Instant) -> Option<Instant> {
        let Some(gate) = k.checked_sub(self.depth as u64) else {
            return Some(now);
        };
        (gate < self.started).then(|| self.starts[(gate % self.depth as u64) as usize].max(now))
    }

    /// Batch `k` of `samples` samples and `bytes` bytes finished loading at `ready`. It and the
    /// loaded batches after it start in order, each as soon as the accelerator is free; `seen`
    /// sees each one that started.
    pub(crate) fn loaded(&mut self, k: u64, ready: Instant, samples: u64, bytes: u64, seen: &mut impl FnMut(Started)) {
        self.loaded.push(Loaded {
            batch: k,
            ready,
            samples,
            bytes,
        });
        while let Some(i) = self.loaded.iter().position(|b| b.batch == self.started) {
            let b = self.loaded.swap_remove(i);
            let step = Started {
                idle_from: self.free_at,
                start: b.ready.max(self.free_at),
                compute: self.compute,
            };
            let start = step.start;
            self.free_at = start + self.compute;
            self.starts[(self.started % self.depth as u64) as usize] = start;
            self.started += 1;
            let f = &mut self.figures;
            f.steps += 1;
            f.samples += b.samples;
            f.bytes += b.bytes;
            f.compute_ns += self.compute.as_nanos() as u64;
            f.wait_ns += step.waited().as_nanos() as u64;
            seen(step);
        }
    }

    /// When the last started batch is computed.
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

    /// One reader loading `n` batches of `load` each, as early as the line lets it.
    fn one_reader(t: &mut Timeline, t0: Instant, n: u64, load: Duration) -> Vec<Duration> {
        let mut waits = Vec::new();
        let mut now = t0;
        for k in 0..n {
            now = t.load_at(k, now).expect("one reader never waits for another") + load;
            t.loaded(k, now, 4, 400, &mut |s| waits.push(s.waited()));
        }
        waits
    }

    #[test]
    fn a_fast_reader_keeps_the_accelerator_busy_after_the_first_batch() {
        let t0 = Instant::now();
        let mut t = Timeline::new(t0, 10 * MS, 2);
        // Batches load in 1 ms each: only the first is waited for.
        one_reader(&mut t, t0, 5, MS);
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
        let waits = one_reader(&mut t, t0, 3, 10 * MS);
        // Waits: 10, then 8 and 8 (10 ms loads, 2 ms computes).
        assert_eq!(waits, [10 * MS, 8 * MS, 8 * MS]);
        assert_eq!(t.figures().wait_ns, (26 * MS).as_nanos() as u64);
        assert!(t.figures().au() < 0.2);
    }

    #[test]
    fn readers_stay_at_most_depth_batches_ahead() {
        let t0 = Instant::now();
        let mut t = Timeline::new(t0, 100 * MS, 2);
        // Loading is instant: batch 0 computes from t0, 1 from t0+100ms, 2 from t0+200ms.
        let mut none = |_: Started| {};
        assert_eq!(t.load_at(0, t0), Some(t0));
        t.loaded(0, t0, 1, 1, &mut none);
        assert_eq!(t.load_at(1, t0), Some(t0));
        t.loaded(1, t0, 1, 1, &mut none);
        // Batch 2 may load when batch 0 starts (t0), batch 3 when batch 1 does.
        assert_eq!(t.load_at(2, t0), Some(t0));
        t.loaded(2, t0, 1, 1, &mut none);
        assert_eq!(t.load_at(3, t0), Some(t0 + 100 * MS));
    }

    #[test]
    fn parallel_readers_overlap_their_loads_and_batches_start_in_order() {
        // Two readers, 10 ms per batch, 1 ms of compute: reader 0 loads batches 0 and 2,
        // reader 1 batches 1 and 3, side by side.
        let t0 = Instant::now();
        let mut t = Timeline::new(t0, MS, 4);
        let mut waits = Vec::new();
        let mut w = |s: Started| waits.push(s.waited());
        // Batch 1 is loaded first: it waits for batch 0.
        t.loaded(1, t0 + 10 * MS, 1, 1, &mut w);
        assert_eq!(t.started, 0);
        assert_eq!(t.load_at(4, t0), None, "batch 0 has not started");
        t.loaded(0, t0 + 10 * MS, 1, 1, &mut w);
        assert_eq!(t.started, 2);
        t.loaded(3, t0 + 20 * MS, 1, 1, &mut w);
        t.loaded(2, t0 + 20 * MS, 1, 1, &mut w);
        assert_eq!(t.started, 4);
        // Batch 0 waited 10 ms, batch 1 none (it was there when 0 was computed), batch 2
        // 20 - 12 = 8 ms, batch 3 none: 18 ms in all, where one reader would wait 37 ms.
        assert_eq!(waits, [10 * MS, Duration::ZERO, 8 * MS, Duration::ZERO]);
        assert_eq!(t.end(), t0 + 22 * MS);
        assert_eq!(t.load_at(4, t0), Some(t0 + 10 * MS), "batch 4 when batch 0 started");
    }
}
