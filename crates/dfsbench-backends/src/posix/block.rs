//! Block I/O engines for files: io_uring and libaio with a real queue depth, POSIX AIO
//! (glibc's threads), psync and mmap.

use std::os::fd::{AsRawFd, OwnedFd};
use std::time::Duration;

use io_uring::{opcode, types, IoUring};

use super::aio::Aio;
use super::mmap::Mapped;
use super::posixaio::PosixAio;
use crate::storage::{BlockIo, BlockOp, BlockOpts, Completion, IoEngine, OpResult};
use crate::{AlignedBuf, OpError};

/// The queue depth of the synchronous engine.
pub(crate) const PSYNC_DEPTH: usize = 1;

/// A file opened for block I/O on one of the engines.
///
/// The kernel writes into `bufs` until each request's completion is reaped: `Drop` cancels
/// and reaps every request in flight before any field goes. The fields then drop in
/// declaration order, ring first, buffers next, file last, so that nothing the ring may
/// still refer to is freed before it (the order matters only if reaping had to give up, and
/// then the buffers are leaked instead of freed).
pub struct PosixBlock {
    engine: Engine,
    bufs: Vec<AlignedBuf>,
    /// Each slot's I/O priority (io_uring and libaio only; 0: none).
    prio: Vec<u16>,
    fd: OwnedFd,
}

/// The `user_data` of cancel requests; read and write requests carry their slot.
const CANCEL: u64 = u64::MAX;

enum Engine {
    Uring {
        ring: Box<IoUring>,
        /// Slots whose request is submitted (or queued) and not yet reaped.
        inflight: Vec<bool>,
    },
    /// Linux native AIO: asynchronous with O_DIRECT only (see `aio.rs`).
    Aio(Aio),
    /// POSIX AIO: glibc's threads (see `posixaio.rs`).
    Posix(PosixAio),
    /// Synchronous pread/pwrite: `submit` does the I/O, `complete` hands over its result.
    Psync { done: Option<Completion> },
    /// Copies to and from the mapped file, one at a time as psync (see `mmap.rs`).
    Mmap { map: Mapped, done: Option<Completion> },
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
                inflight: vec![false; depth],
            },
            IoEngine::Posixaio => Engine::Posix(PosixAio::new(depth)),
            IoEngine::Mmap => Engine::Mmap {
                map: Mapped::new(fd.as_raw_fd(), opts.file_len, opts.random, opts.direct)?,
                done: None,
            },
            IoEngine::Libaio => Engine::Aio(Aio::new(depth).map_err(|e| {
                OpError::new(
                    e.kind,
                    format!("Linux AIO is not available here ({}): use --ioengine psync", e.message),
                )
            })?),
            // The runner probes the engines for `auto` where the backend offers a choice;
            // what reaches here unprobed takes io_uring where the kernel has it.
            IoEngine::Auto | IoEngine::Requests => match new_ring(depth) {
                Ok(ring) => Engine::Uring {
                    ring,
                    inflight: vec![false; depth],
                },
                Err(_) => Engine::Psync { done: None },
            },
        };
        let slots = match engine {
            Engine::Uring { .. } | Engine::Aio(_) | Engine::Posix(_) => depth,
            Engine::Psync { .. } | Engine::Mmap { .. } => PSYNC_DEPTH,
        };
        let bufs = (0..slots).map(|_| AlignedBuf::new(opts.block_size)).collect();
        Ok(PosixBlock {
            engine,
            bufs,
            prio: vec![0; slots],
            fd,
        })
    }

    /// Cancel every request in flight and wait for all their completions. Returns how many
    /// are still in flight: 0, unless the ring failed.
    fn cancel_and_reap(&mut self) -> usize {
        if matches!(&self.engine, Engine::Aio(aio) if aio.inflight == 0) {
            // Nothing to reap: the context serves this thread's next file.
            if let Engine::Aio(aio) = std::mem::replace(&mut self.engine, Engine::Psync { done: None }) {
                aio.keep();
            }
            return 0;
        }
        let (ring, inflight) = match &mut self.engine {
            Engine::Uring { ring, inflight } => (ring, inflight),
            // io_destroy cancels what it can and waits for the rest.
            Engine::Aio(aio) => return if aio.destroy() { 0 } else { aio.inflight.max(1) },
            Engine::Posix(aio) => return aio.cancel_all(self.fd.as_raw_fd()),
            Engine::Psync { .. } | Engine::Mmap { .. } => return 0,
        };
        let left = |inflight: &[bool]| inflight.iter().filter(|f| **f).count();
        for slot in (0..inflight.len()).filter(|&s| inflight[s]) {
            let cancel = opcode::AsyncCancel::new(slot as u64).build().user_data(CANCEL);
            // SAFETY: a cancel request refers to no memory. A full queue is submitted and
            // retried once; a request that cannot be cancelled still completes, and is
            // waited for below.
            if unsafe { ring.submission().push(&cancel) }.is_err() {
                let _ = ring.submit();
                let _ = unsafe { ring.submission().push(&cancel) };
            }
        }
        while left(inflight) > 0 {
            match ring.submit_and_wait(1) {
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                Err(_) => break,
            }
            for cqe in ring.completion() {
                if let Some(f) = inflight.get_mut(cqe.user_data() as usize) {
                    *f = false;
                }
            }
        }
        left(inflight)
    }
}

impl PosixBlock {
    /// Wait for at least `min` completions, or until `timeout` passed (then maybe none).
    fn reap(&mut self, min: usize, timeout: Option<Duration>, out: &mut Vec<Completion>) -> OpResult<()> {
        match &mut self.engine {
            Engine::Uring { ring, inflight } => {
                match timeout {
                    // Needs IORING_FEAT_EXT_ARG (Linux 5.11).
                    Some(t) => {
                        let ts = types::Timespec::from(t);
                        let args = types::SubmitArgs::new().timespec(&ts);
                        match ring.submitter().submit_with_args(1, &args) {
                            Ok(_) => {}
                            Err(e) if matches!(e.raw_os_error(), Some(libc::ETIME | libc::EINTR)) => {}
                            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                                return Err(OpError::new(
                                    "EINVAL",
                                    "io_uring's wait with a time limit needs Linux 5.11: pace this job on --ioengine libaio or posixaio",
                                ))
                            }
                            Err(e) => return Err(e.into()),
                        }
                    }
                    None => loop {
                        match ring.submit_and_wait(min) {
                            Ok(_) => break,
                            Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                            Err(e) => return Err(e.into()),
                        }
                    },
                }
                for cqe in ring.completion() {
                    let res = cqe.result();
                    let slot = cqe.user_data() as usize;
                    if let Some(f) = inflight.get_mut(slot) {
                        *f = false;
                    }
                    out.push(Completion {
                        slot,
                        result: if res < 0 {
                            Err(OpError::from_errno(-res))
                        } else {
                            Ok(res as usize)
                        },
                    });
                }
                Ok(())
            }
            Engine::Aio(aio) => {
                let n = aio.complete(min, timeout)?;
                out.extend(aio.events[..n].iter().map(|ev| Completion {
                    slot: ev.data as usize,
                    result: if ev.res < 0 {
                        Err(OpError::from_errno(-ev.res as i32))
                    } else {
                        Ok(ev.res as usize)
                    },
                }));
                Ok(())
            }
            Engine::Posix(aio) => {
                let mut done = Vec::new();
                aio.reap(min, timeout, &mut done)?;
                out.extend(done.into_iter().map(|(slot, result)| Completion { slot, result }));
                Ok(())
            }
            Engine::Psync { done } | Engine::Mmap { done, .. } => {
                out.extend(done.take());
                Ok(())
            }
        }
    }
}

#[cfg(test)]
impl PosixBlock {
    /// Hand queued requests to the kernel without waiting for any.
    fn engine_submit(&mut self) {
        if let Engine::Uring { ring, .. } = &mut self.engine {
            ring.submit().unwrap();
        }
    }
}

impl Drop for PosixBlock {
    fn drop(&mut self) {
        let left = self.cancel_and_reap();
        if left > 0 {
            // The kernel may still write into them: leak rather than free.
            std::mem::forget(std::mem::take(&mut self.bufs));
        }
        #[cfg(test)]
        tests::LEFT_AT_DROP.with(|l| l.set(Some(left)));
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
            Engine::Aio(_) => IoEngine::Libaio,
            Engine::Posix(_) => IoEngine::Posixaio,
            Engine::Psync { .. } => IoEngine::Psync,
            Engine::Mmap { .. } => IoEngine::Mmap,
        }
    }

    fn buffer(&mut self, slot: usize) -> &mut [u8] {
        &mut self.bufs[slot]
    }

    fn set_priority(&mut self, slot: usize, ioprio: u16) -> bool {
        self.prio[slot] = ioprio;
        matches!(self.engine, Engine::Uring { .. } | Engine::Aio(_))
    }

    fn submit(&mut self, slot: usize, op: BlockOp, offset: u64, len: usize) -> OpResult<()> {
        let fd = self.fd.as_raw_fd();
        let buf = &mut self.bufs[slot][..len];
        let prio = self.prio[slot];
        match &mut self.engine {
            Engine::Uring { ring, inflight } => {
                let ptr = buf.as_mut_ptr();
                let entry = match op {
                    BlockOp::Read => opcode::Read::new(types::Fd(fd), ptr, len as u32)
                        .offset(offset)
                        .ioprio(prio)
                        .build(),
                    BlockOp::Write => opcode::Write::new(types::Fd(fd), ptr, len as u32)
                        .offset(offset)
                        .ioprio(prio)
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
                inflight[slot] = true;
                Ok(())
            }
            Engine::Aio(aio) => {
                aio.queue(slot, fd, op == BlockOp::Write, buf.as_mut_ptr(), len, offset, prio);
                Ok(())
            }
            Engine::Posix(aio) => aio.submit(slot, fd, op == BlockOp::Write, buf.as_mut_ptr(), len, offset),
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
            Engine::Mmap { map, done } => {
                debug_assert!(done.is_none(), "mmap has a queue depth of 1");
                *done = Some(Completion {
                    slot,
                    result: map.io(fd, op, buf, offset),
                });
                Ok(())
            }
        }
    }

    async fn complete(&mut self, min: usize, out: &mut Vec<Completion>) -> OpResult<()> {
        self.reap(min, None, out)
    }

    async fn complete_within(&mut self, timeout: Duration, out: &mut Vec<Completion>) -> OpResult<()> {
        self.reap(1, Some(timeout), out)
    }

    async fn sync(&mut self, data_only: bool) -> OpResult<()> {
        if let Engine::Mmap { map, .. } = &self.engine {
            return map.sync();
        }
        let fd = self.fd.as_raw_fd();
        // SAFETY: fsync/fdatasync on an open descriptor; no I/O is in flight when workloads
        // call sync.
        let r = unsafe {
            if data_only {
                libc::fdatasync(fd)
            } else {
                libc::fsync(fd)
            }
        };
        if r < 0 {
            return Err(OpError::last_os_error());
        }
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::cell::Cell;
    use std::os::fd::FromRawFd;

    use super::*;

    thread_local! {
        /// How many requests were still in flight when a `PosixBlock` of this thread dropped.
        pub(crate) static LEFT_AT_DROP: Cell<Option<usize>> = const { Cell::new(None) };
    }

    fn uring(fd: OwnedFd, depth: usize) -> Option<PosixBlock> {
        let opts = BlockOpts {
            block_size: 4096,
            queue_depth: depth,
            direct: false,
            create: false,
            engine: IoEngine::IoUring,
            random: true,
            file_len: 0,
        };
        match PosixBlock::new(fd, opts) {
            Ok(b) => Some(b),
            Err(e) => {
                eprintln!("note: io_uring is not available here ({}): nothing to drop", e.message);
                None
            }
        }
    }

    /// The engines' futures never wait (they block in the system call): one poll ends them.
    fn ready<F: std::future::Future>(f: F) -> F::Output {
        use std::task::{Context, Poll, Waker};
        match std::pin::pin!(f).poll(&mut Context::from_waker(Waker::noop())) {
            Poll::Ready(v) => v,
            Poll::Pending => panic!("a block engine's future waited"),
        }
    }

    fn block(fd: OwnedFd, engine: IoEngine, depth: usize) -> PosixBlock {
        let opts = BlockOpts {
            block_size: 4096,
            queue_depth: depth,
            direct: false,
            create: false,
            engine,
            random: true,
            file_len: 0,
        };
        PosixBlock::new(fd, opts).unwrap()
    }

    /// libaio and POSIX AIO read what psync reads, each block into its own slot, and report
    /// the engine.
    #[test]
    fn libaio_and_posixaio_read_what_psync_reads() {
        for engine in [IoEngine::Libaio, IoEngine::Posixaio] {
            reads_what_psync_reads(engine);
        }
    }

    fn reads_what_psync_reads(engine: IoEngine) {
        let mut file = tempfile::tempfile().unwrap();
        let data: Vec<u8> = (0..16 * 4096).map(|i| (i / 4096 * 7 + i % 251) as u8).collect();
        std::io::Write::write_all(&mut file, &data).unwrap();
        let psync_fd = file.try_clone().unwrap();
        let mut aio = block(OwnedFd::from(file), engine, 4);
        let mut psync = block(OwnedFd::from(psync_fd), IoEngine::Psync, 1);
        assert_eq!((aio.engine(), aio.depth()), (engine, 4));
        let mut out = Vec::new();
        for blocks in [[3u64, 0, 15, 7], [1, 2, 9, 4]] {
            for (slot, b) in blocks.iter().enumerate() {
                aio.submit(slot, BlockOp::Read, b * 4096, 4096).unwrap();
            }
            out.clear();
            while out.len() < 4 {
                ready(aio.complete(1, &mut out)).unwrap();
            }
            for c in &out {
                let offset = blocks[c.slot] * 4096;
                psync.submit(0, BlockOp::Read, offset, 4096).unwrap();
                let mut one = Vec::new();
                ready(psync.complete(1, &mut one)).unwrap();
                assert_eq!(one[0].result.as_ref().ok(), Some(&4096));
                assert_eq!(c.result.as_ref().ok(), Some(&4096));
                assert_eq!(aio.buffer(c.slot), psync.buffer(0), "block at {offset}");
                assert_eq!(aio.buffer(c.slot), &data[offset as usize..][..4096]);
            }
        }
    }

    /// The mmap engine extends a file it writes to its length, writes and reads the blocks
    /// psync sees, and reads short past the file's end instead of touching an unmapped page.
    #[test]
    fn mmap_writes_and_reads_what_psync_sees() {
        let file = tempfile::tempfile().unwrap();
        let psync_fd = file.try_clone().unwrap();
        let opts = BlockOpts {
            block_size: 4096,
            queue_depth: 1,
            direct: false,
            create: true,
            engine: IoEngine::Mmap,
            random: false,
            file_len: 8 * 4096,
        };
        let mut map = PosixBlock::new(OwnedFd::from(file), opts).unwrap();
        let mut psync = block(OwnedFd::from(psync_fd), IoEngine::Psync, 1);
        assert_eq!((map.engine(), map.depth()), (IoEngine::Mmap, 1));
        let mut out = Vec::new();
        for b in [5u64, 0, 7] {
            map.buffer(0).fill(b as u8 + 1);
            map.submit(0, BlockOp::Write, b * 4096, 4096).unwrap();
            out.clear();
            ready(map.complete(1, &mut out)).unwrap();
            assert_eq!(out[0].result.as_ref().ok(), Some(&4096));
        }
        ready(map.sync(false)).unwrap();
        for b in 0..8u64 {
            psync.submit(0, BlockOp::Read, b * 4096, 4096).unwrap();
            out.clear();
            ready(psync.complete(1, &mut out)).unwrap();
            assert_eq!(out[0].result.as_ref().ok(), Some(&4096), "the file is 8 blocks long");
            let want = if [5, 0, 7].contains(&b) { b as u8 + 1 } else { 0 };
            assert!(psync.buffer(0).iter().all(|&x| x == want), "block {b}");
        }
        // Half a block before the end, and past it: what the file holds, then nothing.
        for (offset, moved) in [(8 * 4096 - 2048, 2048), (8 * 4096, 0), (20 * 4096, 0)] {
            map.submit(0, BlockOp::Read, offset, 4096).unwrap();
            out.clear();
            ready(map.complete(1, &mut out)).unwrap();
            assert_eq!(out[0].result.as_ref().ok(), Some(&moved), "read at {offset}");
        }
        // A write past the map's end extends the file.
        map.submit(0, BlockOp::Write, 9 * 4096, 4096).unwrap();
        out.clear();
        ready(map.complete(1, &mut out)).unwrap();
        assert_eq!(out[0].result.as_ref().ok(), Some(&4096));
        psync.submit(0, BlockOp::Read, 9 * 4096, 4096).unwrap();
        out.clear();
        ready(psync.complete(1, &mut out)).unwrap();
        assert_eq!(out[0].result.as_ref().ok(), Some(&4096));
        assert!(
            psync.buffer(0).iter().all(|&x| x == 8),
            "the block written past the end"
        );
    }

    /// Dropping a libaio or POSIX AIO file with reads submitted and never reaped waits for
    /// them.
    #[test]
    fn dropping_libaio_or_posixaio_reaps_what_is_in_flight() {
        for engine in [IoEngine::Libaio, IoEngine::Posixaio] {
            drop_with_reads_in_flight(engine);
        }
    }

    fn drop_with_reads_in_flight(engine: IoEngine) {
        let mut file = tempfile::tempfile().unwrap();
        std::io::Write::write_all(&mut file, &vec![7u8; 8 * 4096]).unwrap();
        let mut aio = block(OwnedFd::from(file), engine, 8);
        for slot in 0..8 {
            aio.submit(slot, BlockOp::Read, slot as u64 * 4096, 4096).unwrap();
        }
        // Submit them all, reap one: seven may still be in flight.
        let mut out = Vec::new();
        ready(aio.complete(1, &mut out)).unwrap();
        LEFT_AT_DROP.with(|l| l.set(None));
        drop(aio);
        assert_eq!(LEFT_AT_DROP.with(Cell::get), Some(0));
    }

    fn aio_id(b: &PosixBlock) -> libc::c_ulong {
        match &b.engine {
            Engine::Aio(aio) => aio.id(),
            _ => panic!("not a libaio file"),
        }
    }

    /// A libaio file dropped with nothing in flight hands its context to the thread's next
    /// file of that depth, which reads with it; another depth gets a context of its own.
    #[test]
    fn a_finished_libaio_file_hands_its_context_on() {
        let mut file = tempfile::tempfile().unwrap();
        std::io::Write::write_all(&mut file, &vec![9u8; 4 * 4096]).unwrap();
        let fd = || OwnedFd::from(file.try_clone().unwrap());
        let first = block(fd(), IoEngine::Libaio, 4);
        let id = aio_id(&first);
        drop(first);
        let mut next = block(fd(), IoEngine::Libaio, 4);
        assert_eq!(aio_id(&next), id, "the same depth takes the spare context");
        let deeper = block(fd(), IoEngine::Libaio, 8);
        assert_ne!(aio_id(&deeper), id, "another depth makes its own");
        for slot in 0..4 {
            next.submit(slot, BlockOp::Read, slot as u64 * 4096, 4096).unwrap();
        }
        let mut out = Vec::new();
        while out.len() < 4 {
            ready(next.complete(1, &mut out)).unwrap();
        }
        assert!(
            out.iter().all(|c| c.result.as_ref().ok() == Some(&4096)),
            "reads on the handed-on context"
        );
        assert!((0..4).all(|slot| next.buffer(slot).iter().all(|b| *b == 9)));
    }

    fn in_flight(b: &PosixBlock) -> usize {
        match &b.engine {
            Engine::Uring { inflight, .. } => inflight.iter().filter(|f| **f).count(),
            Engine::Aio(aio) => aio.inflight,
            Engine::Posix(aio) => aio.inflight(),
            Engine::Psync { .. } | Engine::Mmap { .. } => 0,
        }
    }

    /// Reads of an empty pipe never complete on their own: dropping the file must cancel
    /// them and reap their completions before the buffers go.
    #[test]
    fn dropping_with_reads_in_flight_cancels_and_reaps_them() {
        let mut fds = [0; 2];
        // SAFETY: pipe2 fills two descriptors that this test then owns.
        assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
        let (read_end, write_end) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        let Some(mut block) = uring(read_end, 4) else {
            return;
        };
        for slot in 0..4 {
            block.submit(slot, BlockOp::Read, 0, 4096).unwrap();
        }
        block.engine_submit();
        assert_eq!(in_flight(&block), 4, "four reads wait for data that never comes");
        LEFT_AT_DROP.with(|l| l.set(None));
        drop(block);
        assert_eq!(
            LEFT_AT_DROP.with(Cell::get),
            Some(0),
            "every read was reaped before the buffers went"
        );
        drop(write_end);
    }

    /// A wait with a timeout comes back when the time passes with reads still in flight
    /// (io_uring, POSIX AIO: reads of an empty pipe), and with their completions once data
    /// comes.
    #[test]
    fn a_wait_with_a_timeout_returns_at_the_time_or_at_a_completion() {
        for engine in [IoEngine::IoUring, IoEngine::Posixaio] {
            let mut fds = [0; 2];
            // SAFETY: pipe2 fills two descriptors that this test then owns.
            assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
            let (read_end, write_end) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
            let mut block = match engine {
                IoEngine::IoUring => match uring(read_end, 2) {
                    Some(b) => b,
                    None => continue,
                },
                _ => block(read_end, engine, 2),
            };
            block.submit(0, BlockOp::Read, 0, 4096).unwrap();
            let mut out = Vec::new();
            ready(block.complete_within(Duration::from_millis(20), &mut out)).unwrap();
            assert!(out.is_empty(), "{engine:?}: nothing came, nothing completed");
            assert_eq!(in_flight(&block), 1, "{engine:?}");
            // SAFETY: writes 5 bytes from a valid buffer to the pipe's write end.
            assert_eq!(
                unsafe { libc::write(write_end.as_raw_fd(), b"hello".as_ptr().cast(), 5) },
                5
            );
            while out.is_empty() {
                ready(block.complete_within(Duration::from_secs(5), &mut out)).unwrap();
            }
            assert_eq!((out[0].slot, out[0].result.as_ref().ok()), (0, Some(&5)), "{engine:?}");
            assert_eq!(&block.buffer(0)[..5], b"hello");
        }
    }

    /// Reads of a file that were submitted and never waited for (the io loop broke out after
    /// an error) are reaped at drop too.
    #[test]
    fn dropping_after_an_early_exit_reaps_file_reads() {
        let mut file = tempfile::tempfile().unwrap();
        std::io::Write::write_all(&mut file, &vec![7u8; 64 * 4096]).unwrap();
        let Some(mut block) = uring(OwnedFd::from(file), 16) else {
            return;
        };
        for slot in 0..16 {
            block.submit(slot, BlockOp::Read, slot as u64 * 4096, 4096).unwrap();
        }
        assert_eq!(in_flight(&block), 16);
        LEFT_AT_DROP.with(|l| l.set(None));
        drop(block);
        assert_eq!(LEFT_AT_DROP.with(Cell::get), Some(0));
    }
}
