//! The dfsbench engine: workloads, workers and measurement; it writes the result document of
//! the dfsbench-result crate.
//!
//! Its surface is what the binary and the tests name: the run's settings (`config`), the
//! workloads' options (`workloads`), running a session (`session`, `runner`, `plan`), the
//! group of ranks (`cluster`) and a few items below; everything else is the engine's own.

// An item `pub` inside a private module that nothing outside names is `pub(crate)` instead.
#![warn(unreachable_pub)]

mod bounded;
mod cache;
pub mod cluster;
pub mod config;
mod data;
mod dist;
mod error;
mod executor;
mod faults;
mod gate;
mod gather;
mod host;
mod job;
mod load;
mod nulltest;
mod panics;
mod part;
mod pattern;
pub mod plan;
pub mod runner;
pub mod session;
mod stats;
mod worker;
pub mod workloads;

/// Sizes and durations as people write them.
pub use dfsbench_backends::units;
pub use faults::FaultEntry;
pub use host::process_cpu_times;
pub use nulltest::nodes;
pub use panics::{install_panic_hook, internal_error};
