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
pub mod fiojob;
mod gate;
mod gather;
pub mod host;
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
pub mod vars;
mod worker;
pub mod workloads;
