//! POSIX AIO (fio's `posixaio`): aio_read and aio_write, with aio_error and aio_suspend to
//! collect them. glibc runs each request on a thread of its own pool, so this is the queue
//! depth a portable program gets, not the kernel's (io_uring, libaio).

use crate::{OpError, OpResult};

/// A control block per slot, at a fixed address from submission until the request is reaped.
pub(super) struct PosixAio {
    cbs: Box<[libc::aiocb]>,
    inflight: Vec<bool>,
}

impl PosixAio {
    pub(super) fn new(depth: usize) -> PosixAio {
        // SAFETY: aiocb is a plain C struct; all zeroes is its empty state.
        let cbs = (0..depth)
            .map(|_| unsafe { std::mem::zeroed::<libc::aiocb>() })
            .collect();
        PosixAio {
            cbs,
            inflight: vec![false; depth],
        }
    }

    /// Start a read (or write) of `len` bytes at `offset` through `buf` in `slot`.
    pub(super) fn submit(
        &mut self,
        slot: usize,
        fd: i32,
        write: bool,
        buf: *mut u8,
        len: usize,
        offset: u64,
    ) -> OpResult<()> {
        let cb = &mut self.cbs[slot];
        // SAFETY: as in `new`.
        *cb = unsafe { std::mem::zeroed() };
        cb.aio_fildes = fd;
        cb.aio_buf = buf.cast();
        cb.aio_nbytes = len;
        cb.aio_offset = offset as libc::off_t;
        cb.aio_sigevent.sigev_notify = libc::SIGEV_NONE;
        // SAFETY: the control block and the buffer stay where they are until the request is
        // reaped (`reap`, or `cancel_all` before they are freed).
        let r = unsafe {
            if write {
                libc::aio_write(cb)
            } else {
                libc::aio_read(cb)
            }
        };
        if r < 0 {
            return Err(OpError::last_os_error());
        }
        self.inflight[slot] = true;
        Ok(())
    }

    pub(super) fn inflight(&self) -> usize {
        self.inflight.iter().filter(|f| **f).count()
    }

    /// Wait until at least `min` requests (or all in flight, if fewer) finished, or `timeout`
    /// passed; each one finished as (slot, bytes or error).
    pub(super) fn reap(
        &mut self,
        min: usize,
        timeout: Option<std::time::Duration>,
        out: &mut Vec<(usize, OpResult<usize>)>,
    ) -> OpResult<()> {
        let want = min.min(self.inflight());
        let mut got = 0;
        loop {
            for slot in 0..self.cbs.len() {
                if !self.inflight[slot] {
                    continue;
                }
                let cb = &mut self.cbs[slot];
                // SAFETY: a control block of a request in flight.
                let e = unsafe { libc::aio_error(cb) };
                if e == libc::EINPROGRESS {
                    continue;
                }
                // SAFETY: the request finished: aio_return reads its result once.
                let ret = unsafe { libc::aio_return(cb) };
                self.inflight[slot] = false;
                got += 1;
                out.push((
                    slot,
                    if e == 0 {
                        Ok(ret as usize)
                    } else {
                        Err(OpError::from_errno(e))
                    },
                ));
            }
            if got >= want {
                return Ok(());
            }
            if !self.suspend(timeout)? {
                return Ok(());
            }
        }
    }

    /// Block until a request in flight finishes (true) or `timeout` passes (false).
    fn suspend(&self, timeout: Option<std::time::Duration>) -> OpResult<bool> {
        let list: Vec<*const libc::aiocb> = (0..self.cbs.len())
            .filter(|&s| self.inflight[s])
            .map(|s| &self.cbs[s] as *const libc::aiocb)
            .collect();
        let ts = timeout.map(super::timespec);
        let ts_ptr = ts.as_ref().map_or(std::ptr::null(), |t| t as *const libc::timespec);
        // SAFETY: pointers to control blocks of requests in flight, `list.len()` of them.
        let r = unsafe { libc::aio_suspend(list.as_ptr(), list.len() as i32, ts_ptr) };
        match r {
            0 => Ok(true),
            _ => match std::io::Error::last_os_error().raw_os_error() {
                // EAGAIN: the time passed (without one, a spurious wake-up: look again).
                Some(libc::EAGAIN) => Ok(timeout.is_none()),
                Some(libc::EINTR) => Ok(true),
                _ => Err(OpError::last_os_error()),
            },
        }
    }

    /// Cancel what can be and wait for the rest: afterwards nothing refers to the buffers.
    /// Returns how many are still in flight (0 unless waiting failed).
    pub(super) fn cancel_all(&mut self, fd: i32) -> usize {
        if self.inflight() == 0 {
            return 0;
        }
        for slot in (0..self.cbs.len()).filter(|&s| self.inflight[s]) {
            // SAFETY: a control block of a request in flight on `fd`.
            unsafe { libc::aio_cancel(fd, &mut self.cbs[slot]) };
        }
        let mut done = Vec::new();
        while self.inflight() > 0 {
            if self.reap(1, None, &mut done).is_err() {
                break;
            }
        }
        self.inflight()
    }
}
