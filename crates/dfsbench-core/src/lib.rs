//! The dfsbench engine: workloads, workers and measurement; it writes the result document of
//! the dfsbench-result crate.

mod bounded;
mod cache;
pub mod cluster;
pub mod config;
pub mod data;
pub mod dist;
mod error;
mod executor;
pub mod faults;
mod gate;
mod gather;
pub mod host;
mod job;
pub mod load;
mod nulltest;
pub use nulltest::nodes;
pub mod panics;
pub mod part;
pub mod pattern;
pub mod plan;
pub mod runner;
pub mod session;
pub mod stats;
/// Sizes and durations as people write them.
pub use dfsbench_backends::units;
mod worker;
pub mod workloads;
