//! Linux native AIO (fio's `libaio`), through the raw system calls: io_setup, io_submit,
//! io_getevents, io_destroy. The ABI is two small, stable structs, so no wrapper crate (or the
//! C libaio) is needed.
//!
//! The kernel only queues a request when the file is opened with O_DIRECT; on a buffered file
//! (or tmpfs) `io_submit` does the copy itself and returns with it done, so the engine then
//! behaves as psync with one system call more per operation (io_getevents), as fio's does.

use std::cell::RefCell;

use crate::{OpError, OpResult};

thread_local! {
    /// A context this thread is done with, nothing in flight, kept for its next file of the
    /// same depth: io_destroy waits for an RCU grace period (30-46 ms each on the project's
    /// VM), which `auto`'s probe, a file per trial, paid in the window of the trial after.
    static SPARE: RefCell<Option<Aio>> = const { RefCell::new(None) };
}

/// `struct iocb` of `<linux/aio_abi.h>` on a little-endian machine (`aio_key` before
/// `aio_rw_flags`).
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Iocb {
    aio_data: u64,
    aio_key: u32,
    aio_rw_flags: i32,
    aio_lio_opcode: u16,
    aio_reqprio: i16,
    aio_fildes: u32,
    aio_buf: u64,
    aio_nbytes: u64,
    aio_offset: i64,
    aio_reserved2: u64,
    aio_flags: u32,
    aio_resfd: u32,
}

/// `struct io_event`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub(super) struct IoEvent {
    pub data: u64,
    obj: u64,
    pub res: i64,
    res2: i64,
}

const IOCB_CMD_PREAD: u16 = 0;
const IOCB_CMD_PWRITE: u16 = 1;
/// `aio_reqprio` holds the request's I/O priority (Linux 5.0).
const IOCB_FLAG_IOPRIO: u32 = 1 << 1;

/// One AIO context with a control block per slot. Control blocks stay at their address (the
/// kernel reads them during io_submit only, but the slot's buffer until completion).
pub(super) struct Aio {
    ctx: libc::c_ulong,
    iocbs: Vec<Iocb>,
    /// Slots queued by `queue` and not yet handed to io_submit.
    queued: Vec<*mut Iocb>,
    pub events: Vec<IoEvent>,
    /// Requests submitted and not yet reaped.
    pub inflight: usize,
}

impl Aio {
    pub(super) fn new(depth: usize) -> OpResult<Aio> {
        if let Some(aio) = SPARE.with(|s| s.borrow_mut().take_if(|a| a.iocbs.len() == depth)) {
            return Ok(aio);
        }
        let mut ctx: libc::c_ulong = 0;
        // SAFETY: io_setup writes the new context into ctx.
        if unsafe {
            libc::syscall(
                libc::SYS_io_setup,
                depth as libc::c_long,
                &mut ctx as *mut libc::c_ulong,
            )
        } < 0
        {
            return Err(OpError::last_os_error());
        }
        Ok(Aio {
            ctx,
            iocbs: vec![Iocb::default(); depth],
            queued: Vec::with_capacity(depth),
            events: vec![IoEvent::default(); depth],
            inflight: 0,
        })
    }

    /// Queue a read or write of `len` bytes at `buf` for `slot`, at I/O priority `prio` (0:
    /// none); `complete` submits it.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn queue(
        &mut self,
        slot: usize,
        fd: i32,
        write: bool,
        buf: *mut u8,
        len: usize,
        offset: u64,
        prio: u16,
    ) {
        let cb = &mut self.iocbs[slot];
        *cb = Iocb {
            aio_reqprio: prio as i16,
            aio_flags: if prio != 0 { IOCB_FLAG_IOPRIO } else { 0 },
            aio_data: slot as u64,
            aio_lio_opcode: if write { IOCB_CMD_PWRITE } else { IOCB_CMD_PREAD },
            aio_fildes: fd as u32,
            aio_buf: buf as u64,
            aio_nbytes: len as u64,
            aio_offset: offset as i64,
            ..Iocb::default()
        };
        self.queued.push(cb);
    }

    /// Submit what is queued, then wait for at least `min` completions or until `timeout`
    /// passed; returns how many events are in `self.events`.
    pub(super) fn complete(&mut self, min: usize, timeout: Option<std::time::Duration>) -> OpResult<usize> {
        let mut sent = 0;
        while sent < self.queued.len() {
            let rest = &mut self.queued[sent..];
            // SAFETY: every pointer is a control block of self.iocbs, whose buffer outlives the
            // request (PosixBlock frees buffers only after io_destroy reaped everything).
            let n = unsafe {
                libc::syscall(
                    libc::SYS_io_submit,
                    self.ctx,
                    rest.len() as libc::c_long,
                    rest.as_mut_ptr(),
                )
            };
            if n < 0 {
                let errno = errno();
                if errno == libc::EINTR || errno == libc::EAGAIN && self.inflight + sent > 0 {
                    // Busy: reap below first, then the caller's next call submits the rest.
                    break;
                }
                self.queued.drain(..sent);
                self.inflight += sent;
                return Err(OpError::from_errno(errno));
            }
            sent += n as usize;
        }
        self.queued.drain(..sent);
        self.inflight += sent;
        let min = min.min(self.inflight);
        let mut ts = timeout.map(super::timespec);
        let ts_ptr = ts.as_mut().map_or(std::ptr::null_mut(), |t| t as *mut libc::timespec);
        loop {
            // SAFETY: events has room for every request in flight; ts_ptr is null or a timespec.
            let n = unsafe {
                libc::syscall(
                    libc::SYS_io_getevents,
                    self.ctx,
                    min as libc::c_long,
                    self.events.len() as libc::c_long,
                    self.events.as_mut_ptr(),
                    ts_ptr,
                )
            };
            if n >= 0 {
                self.inflight -= n as usize;
                return Ok(n as usize);
            }
            let errno = errno();
            if errno != libc::EINTR {
                return Err(OpError::from_errno(errno));
            }
            if timeout.is_some() {
                // The caller looks at the time again.
                return Ok(0);
            }
        }
    }

    /// The kernel's name of the context.
    #[cfg(test)]
    pub(super) fn id(&self) -> libc::c_ulong {
        self.ctx
    }

    /// Done with the context, nothing in flight: keep it as this thread's spare (replacing,
    /// and so destroying, the one before).
    pub(super) fn keep(mut self) {
        debug_assert_eq!(self.inflight, 0, "a kept context has nothing in flight");
        // Queued and never submitted: the kernel never saw them.
        self.queued.clear();
        SPARE.with(|s| s.borrow_mut().replace(self));
    }

    /// Destroy the context: the kernel cancels what it can and waits for the rest. Returns
    /// false if it failed (the buffers must then be leaked).
    pub(super) fn destroy(&mut self) -> bool {
        if self.ctx == 0 {
            return true;
        }
        // SAFETY: ctx came from io_setup and is destroyed once.
        let ok = unsafe { libc::syscall(libc::SYS_io_destroy, self.ctx) } == 0;
        self.ctx = 0;
        ok
    }
}

/// A thread's spare context goes with the thread.
impl Drop for Aio {
    fn drop(&mut self) {
        self.destroy();
    }
}

/// The errno of the last failed system call on this thread.
fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}
