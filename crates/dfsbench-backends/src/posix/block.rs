//! Block I/O engines for files: io_uring with a real queue depth, and psync.

use std::os::fd::{AsRawFd, OwnedFd};

use io_uring::{opcode, types, IoUring};

use crate::storage::{BlockIo, BlockOp, BlockOpts, Completion, IoEngine, OpResult};
use crate::{AlignedBuf, OpError};

/// The queue depth of the synchronous engine.
pub const PSYNC_DEPTH: usize = 1;

/// A file opened for block I/O on one of the engines.
pub struct PosixBlock {
    fd: OwnedFd,
    bufs: Vec<AlignedBuf>,
    engine: Engine,
}

enum Engine {
    Uring {
        ring: Box<IoUring>,
    },
    /// Synchronous pread/pwrite: `submit` does the I/O, `complete` hands over its result.
    Psync {
        done: Option<Completion>,
    },
}

impl PosixBlock {
    pub(crate) fn new(fd: OwnedFd, opts: BlockOpts) -> OpResult<Self> {
        let depth = opts.queue_depth.max(1);
        let engine = match opts.engine {
            IoEngine::Psync => Engine::Psync { done: None },
            IoEngine::IoUring => Engine::Uring {
                ring: new_ring(depth).map_err(|e| {
                    OpError::new(
                        e.kind,
                        format!("io_uring is not available here ({}): use --ioengine psync", e.message),
                    )
                })?,
            },
            IoEngine::Auto | IoEngine::Requests => match new_ring(depth) {
                Ok(ring) => Engine::Uring { ring },
                Err(_) => Engine::Psync { done: None },
            },
        };
        let slots = match engine {
            Engine::Uring { .. } => depth,
            Engine::Psync { .. } => PSYNC_DEPTH,
        };
        let bufs = (0..slots).map(|_| AlignedBuf::new(opts.block_size)).collect();
        Ok(PosixBlock { fd, bufs, engine })
    }
}

/// A ring set up as fio sets up its own: only the worker thread that made the ring submits to
/// it (SINGLE_ISSUER), and completions are posted when it waits for them (DEFER_TASKRUN)
/// instead of interrupting it (COOP_TASKRUN). Without these, every completion from io-wq
/// (all of them on tmpfs, which punts buffered I/O there) sends the worker an IPI and runs
/// task work in its interrupt return. Kernels older than 6.1 reject the flags: fall back as
/// fio does.
fn new_ring(depth: usize) -> OpResult<Box<IoUring>> {
    let entries = depth.next_power_of_two().max(2) as u32;
    let fast = IoUring::builder()
        .setup_coop_taskrun()
        .setup_single_issuer()
        .setup_defer_taskrun()
        .build(entries);
    match fast {
        Ok(ring) => Ok(Box::new(ring)),
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
            match IoUring::builder().setup_coop_taskrun().build(entries) {
                Ok(ring) => Ok(Box::new(ring)),
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                    IoUring::new(entries).map(Box::new).map_err(OpError::from)
                }
                Err(e) => Err(e.into()),
            }
        }
        Err(e) => Err(e.into()),
    }
}

fn io_result(ret: isize) -> OpResult<usize> {
    if ret < 0 {
        Err(OpError::last_os_error())
    } else {
        Ok(ret as usize)
    }
}

impl BlockIo for PosixBlock {
    fn depth(&self) -> usize {
        self.bufs.len()
    }

    fn engine(&self) -> IoEngine {
        match self.engine {
            Engine::Uring { .. } => IoEngine::IoUring,
            Engine::Psync { .. } => IoEngine::Psync,
        }
    }

    fn buffer(&mut self, slot: usize) -> &mut [u8] {
        &mut self.bufs[slot]
    }

    fn submit(&mut self, slot: usize, op: BlockOp, offset: u64, len: usize) -> OpResult<()> {
        let fd = self.fd.as_raw_fd();
        let buf = &mut self.bufs[slot][..len];
        match &mut self.engine {
            Engine::Uring { ring } => {
                let ptr = buf.as_mut_ptr();
                let entry = match op {
                    BlockOp::Read => opcode::Read::new(types::Fd(fd), ptr, len as u32).offset(offset).build(),
                    BlockOp::Write => opcode::Write::new(types::Fd(fd), ptr, len as u32)
                        .offset(offset)
                        .build(),
                }
                .user_data(slot as u64);
                // SAFETY: the buffer lives in self.bufs until the completion for this slot is
                // reaped; callers never reuse a slot that is in flight.
                if unsafe { ring.submission().push(&entry) }.is_err() {
                    ring.submit().map_err(OpError::from)?;
                    unsafe { ring.submission().push(&entry) }
                        .map_err(|_| OpError::new("EBUSY", "io_uring submission queue is full"))?;
                }
                Ok(())
            }
            Engine::Psync { done } => {
                debug_assert!(done.is_none(), "psync has a queue depth of 1");
                // SAFETY: buf is a valid slice of len bytes.
                let ret = match op {
                    BlockOp::Read => unsafe { libc::pread(fd, buf.as_mut_ptr().cast(), len, offset as i64) },
                    BlockOp::Write => unsafe { libc::pwrite(fd, buf.as_ptr().cast(), len, offset as i64) },
                };
                *done = Some(Completion {
                    slot,
                    result: io_result(ret),
                });
                Ok(())
            }
        }
    }

    async fn complete(&mut self, min: usize, out: &mut Vec<Completion>) -> OpResult<()> {
        match &mut self.engine {
            Engine::Uring { ring } => {
                loop {
                    match ring.submit_and_wait(min) {
                        Ok(_) => break,
                        Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                        Err(e) => return Err(e.into()),
                    }
                }
                for cqe in ring.completion() {
                    let res = cqe.result();
                    out.push(Completion {
                        slot: cqe.user_data() as usize,
                        result: if res < 0 {
                            Err(OpError::from_errno(-res))
                        } else {
                            Ok(res as usize)
                        },
                    });
                }
                Ok(())
            }
            Engine::Psync { done } => {
                out.extend(done.take());
                Ok(())
            }
        }
    }

    async fn sync(&mut self) -> OpResult<()> {
        // SAFETY: fsync on an open descriptor; no I/O is in flight when workloads call sync.
        if unsafe { libc::fsync(self.fd.as_raw_fd()) } < 0 {
            return Err(OpError::last_os_error());
        }
        Ok(())
    }
}
