//! `--op-timeout`: a client whose operations fail with a `timeout` error once they take longer
//! than the limit. Asynchronous requests (HTTP, HDFS RPC) are cancelled at the limit; a
//! blocking call (a file-system syscall) cannot be, so it counts as a timeout when it returns.

use std::future::Future;
use std::time::Duration;

use dfsbench_backends::clock::Instant;
use dfsbench_backends::{AlignedBuf, BlockOpts, Check, Client, FileOpts, FileRead, OpError, OpResult, Source};

/// The error kind of an operation over the limit.
pub(crate) const TIMEOUT: &str = "timeout";

/// A worker's client with its operations bounded in time (no bound: `limit` None).
pub(crate) struct Bounded<C> {
    inner: C,
    limit: Option<Duration>,
}

impl<C> Bounded<C> {
    pub(crate) fn new(inner: C, limit: Option<Duration>) -> Self {
        Bounded { inner, limit }
    }
}

/// Run `op` within `limit`: cancelled at the limit if it yields, else judged by its duration.
async fn within<T>(limit: Option<Duration>, op: impl Future<Output = OpResult<T>>) -> OpResult<T> {
    let Some(limit) = limit else {
        return op.await;
    };
    let start = Instant::now();
    let over = |took: Duration| {
        OpError::new(
            TIMEOUT,
            format!(
                "no answer within --op-timeout {:.3} s (gave up after {:.3} s)",
                limit.as_secs_f64(),
                took.as_secs_f64()
            ),
        )
    };
    match tokio::time::timeout(limit, op).await {
        Err(_) => Err(over(start.elapsed())),
        Ok(r) => {
            let took = start.elapsed();
            if took > limit {
                Err(over(took))
            } else {
                r
            }
        }
    }
}

impl<C: Client> Client for Bounded<C> {
    type Block = C::Block;

    async fn mkdir(&mut self, path: &str) -> OpResult<()> {
        within(self.limit, self.inner.mkdir(path)).await
    }

    async fn rmdir(&mut self, path: &str) -> OpResult<()> {
        within(self.limit, self.inner.rmdir(path)).await
    }

    async fn create(&mut self, path: &str) -> OpResult<()> {
        within(self.limit, self.inner.create(path)).await
    }

    async fn stat(&mut self, path: &str) -> OpResult<u64> {
        within(self.limit, self.inner.stat(path)).await
    }

    async fn open_close(&mut self, path: &str) -> OpResult<()> {
        within(self.limit, self.inner.open_close(path)).await
    }

    async fn rename(&mut self, from: &str, to: &str) -> OpResult<()> {
        within(self.limit, self.inner.rename(from, to)).await
    }

    async fn list(&mut self, dir: &str) -> OpResult<u64> {
        within(self.limit, self.inner.list(dir)).await
    }

    async fn delete(&mut self, path: &str) -> OpResult<()> {
        within(self.limit, self.inner.delete(path)).await
    }

    async fn write_file(&mut self, path: &str, size: u64, opts: FileOpts, src: Source<'_>) -> OpResult<()> {
        within(self.limit, self.inner.write_file(path, size, opts, src)).await
    }

    async fn read_file(
        &mut self,
        path: &str,
        opts: FileOpts,
        buf: &mut AlignedBuf,
        check: Option<Check<'_>>,
    ) -> OpResult<FileRead> {
        within(self.limit, self.inner.read_file(path, opts, buf, check)).await
    }

    /// Opening is bounded; the queue's operations are not (the io workload: see the README).
    async fn open_block(&mut self, path: &str, opts: BlockOpts) -> OpResult<Self::Block> {
        within(self.limit, self.inner.open_block(path, opts)).await
    }

    async fn invalidate(&mut self, path: &str) -> OpResult<()> {
        self.inner.invalidate(path).await
    }

    async fn invalidate_clean(&mut self, path: &str) -> OpResult<()> {
        self.inner.invalidate_clean(path).await
    }

    fn take_retries(&mut self) -> u64 {
        self.inner.take_retries()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    #[test]
    fn a_request_that_never_answers_is_cancelled_at_the_limit() {
        let never = std::future::pending::<OpResult<()>>();
        let e = rt()
            .block_on(within(Some(Duration::from_millis(50)), never))
            .unwrap_err();
        assert_eq!(e.kind, TIMEOUT);
    }

    #[test]
    fn a_blocking_call_over_the_limit_counts_as_a_timeout_when_it_returns() {
        let slow = async {
            std::thread::sleep(Duration::from_millis(80));
            Ok(7u64)
        };
        let e = rt()
            .block_on(within(Some(Duration::from_millis(20)), slow))
            .unwrap_err();
        assert_eq!(e.kind, TIMEOUT);
        let quick = async { Ok(7u64) };
        assert_eq!(rt().block_on(within(Some(Duration::from_secs(60)), quick)), Ok(7));
        assert_eq!(rt().block_on(within(None, async { Ok(1u8) })), Ok(1));
    }
}
