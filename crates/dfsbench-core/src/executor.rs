//! Where a client's futures run.

use dfsbench_backends::{Capabilities, Drive};

/// Where a thread runs its workers' futures: a runtime of its own for blocking backends (which
/// finish every call on the calling thread) and for HTTP clients (whose connections then live on
/// the thread that uses them); the backends' shared runtime for clients whose background tasks
/// must keep running between phases.
pub(crate) enum Executor {
    Local(tokio::runtime::Runtime),
    Shared,
}

impl Executor {
    pub(crate) fn for_backend(caps: Capabilities) -> Executor {
        match caps.drive {
            Drive::Blocking | Drive::PerThread => Executor::Local(
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("a current-thread runtime"),
            ),
            Drive::Shared => Executor::Shared,
        }
    }

    pub(crate) fn block_on<F: std::future::Future>(&self, f: F) -> F::Output {
        match self {
            Executor::Local(rt) => rt.block_on(f),
            Executor::Shared => dfsbench_backends::runtime::shared().block_on(f),
        }
    }
}
