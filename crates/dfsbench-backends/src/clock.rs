//! The clock every timed operation reads.
//!
//! quanta reads the invariant TSC directly, as fio's default `clocksource=cpu` does: cheaper than
//! `clock_gettime` through the vDSO, which matters at two reads per metadata operation of a few
//! hundred nanoseconds. Where the TSC is not invariant it falls back to the OS monotonic clock.

pub use quanta::Instant;
