//! What the backends' unit tests share.

/// Poll `f` once: the mem and posix clients do their work inline and never wait, so one poll
/// finishes every call.
pub(crate) fn block_on<F: std::future::Future>(f: F) -> F::Output {
    use std::task::{Context, Poll, Waker};
    let mut f = std::pin::pin!(f);
    match f.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(v) => v,
        Poll::Pending => panic!("a mem or posix client call waited"),
    }
}
