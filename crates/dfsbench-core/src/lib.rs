//! The dfsbench engine: workloads, workers, measurement and the result document.

mod cache;
pub mod cluster;
pub mod config;
pub mod dist;
pub mod fault;
pub mod files;
mod gate;
pub mod host;
pub mod load;
mod nulltest;
pub mod part;
pub mod pattern;
pub mod plan;
pub mod result;
pub mod runner;
pub mod session;
pub mod stats;
/// Sizes and durations as people write them.
pub use dfsbench_backends::units;
mod worker;
mod workloads;
