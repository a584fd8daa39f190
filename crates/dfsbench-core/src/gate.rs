//! A barrier that can be broken open.
//!
//! The runner's threads meet at a barrier before and after every phase. With `std`'s barrier
//! a thread that panicked, or was never started, leaves every other thread waiting forever
//! (and the process deaf to Ctrl-C). Breaking this gate releases every waiter, now and later.

use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

pub(crate) struct Gate {
    parties: usize,
    state: Mutex<State>,
    cv: Condvar,
}

#[derive(Default)]
struct State {
    arrived: usize,
    generation: u64,
    broken: bool,
}

impl Gate {
    pub(crate) fn new(parties: usize) -> Gate {
        Gate {
            parties,
            state: Mutex::default(),
            cv: Condvar::new(),
        }
    }

    /// A panic elsewhere must not turn into a second one here: the state is plain counters.
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Wait until every party arrived: true. False once the gate is broken.
    pub(crate) fn wait(&self) -> bool {
        let mut s = self.lock();
        if s.broken {
            return false;
        }
        s.arrived += 1;
        if s.arrived == self.parties {
            s.arrived = 0;
            s.generation += 1;
            self.cv.notify_all();
            return true;
        }
        let generation = s.generation;
        while s.generation == generation && !s.broken {
            s = self.cv.wait(s).unwrap_or_else(PoisonError::into_inner);
        }
        s.generation != generation
    }

    /// Release every waiter; every later wait returns false at once.
    pub(crate) fn break_open(&self) {
        self.lock().broken = true;
        self.cv.notify_all();
    }

    pub(crate) fn is_broken(&self) -> bool {
        self.lock().broken
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meets_every_party_until_broken() {
        let gate = Gate::new(3);
        std::thread::scope(|s| {
            let waiters: Vec<_> = (0..2).map(|_| s.spawn(|| (gate.wait(), gate.wait()))).collect();
            assert!(gate.wait(), "all three met");
            // The second round misses a party: breaking it releases the two waiting.
            while gate.lock().arrived < 2 {
                std::thread::yield_now();
            }
            gate.break_open();
            for w in waiters {
                assert_eq!(w.join().unwrap(), (true, false));
            }
        });
        assert!(!gate.wait(), "a broken gate stays open");
    }
}
