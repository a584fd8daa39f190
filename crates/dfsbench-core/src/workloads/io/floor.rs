//! fio's `ratemin`: the least bandwidth a worker must keep. Checked over each second of the
//! phase (fio's `ratecycle` of 1000 ms); a second below it ends the worker's run with an
//! error of kind `ratemin`, as fio ends the job.

use std::time::Duration;

use dfsbench_backends::clock::Instant;
use dfsbench_backends::OpError;

/// The cycle the bandwidth is averaged over.
const CYCLE: Duration = Duration::from_secs(1);

/// A worker's bytes in the current cycle, against its floor.
pub(super) struct Floor {
    bytes_per_sec: u64,
    from: Instant,
    bytes: u64,
}

impl Floor {
    pub(super) fn new(bytes_per_sec: u64, start: Instant) -> Floor {
        Floor {
            bytes_per_sec,
            from: start,
            bytes: 0,
        }
    }

    /// Count `bytes` done by `now`; the error when a cycle ended below the floor.
    pub(super) fn add(&mut self, bytes: u64, now: Instant) -> Option<OpError> {
        self.bytes += bytes;
        let took = now.saturating_duration_since(self.from);
        if took < CYCLE {
            return None;
        }
        let rate = self.bytes as f64 / took.as_secs_f64();
        (self.bytes, self.from) = (0, now);
        (rate < self.bytes_per_sec as f64).then(|| {
            OpError::new(
                "ratemin",
                format!(
                    "moved {rate:.0} bytes/s over {:.1} s, below the {} bytes/s of ratemin",
                    took.as_secs_f64(),
                    self.bytes_per_sec
                ),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_below_the_floor_is_an_error() {
        let t0 = Instant::now();
        let mut floor = Floor::new(1000, t0);
        assert!(floor.add(600, t0 + Duration::from_millis(500)).is_none(), "mid-cycle");
        assert!(floor.add(600, t0 + CYCLE).is_none(), "1200 bytes in a second");
        let e = floor.add(900, t0 + 2 * CYCLE).expect("900 bytes in the next");
        assert_eq!(e.kind, "ratemin");
        assert!(e.message.contains("below the 1000 bytes/s"), "{}", e.message);
    }
}
