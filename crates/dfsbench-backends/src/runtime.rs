//! The shared executor of asynchronous backends.
//!
//! Some network clients (hdfs-native's RPC readers and lease renewals) spawn background tasks on
//! the runtime that opens their connections, and those tasks must keep running between phases
//! and across worker threads. Such backends (`Drive::Shared`), and every backend's setup and
//! cleanup, use this one process-wide multi-threaded runtime: its threads drive I/O, timers and
//! spawned tasks, while the runner's worker threads `block_on` their workers on it (allowed from
//! many threads at once).

use std::sync::OnceLock;

use tokio::runtime::Runtime;

/// The shared runtime, started on first use.
pub fn shared() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(std::thread::available_parallelism().map_or(2, |n| n.get()))
            .thread_name("dfsbench-io")
            .enable_all()
            .build()
            .expect("a multi-threaded runtime")
    })
}
