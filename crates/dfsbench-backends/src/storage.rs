//! The contract between workloads and storage systems.
//!
//! A workload never knows which backend it drives: it talks to a per-worker [`Client`] through
//! paths relative to the run directory, and to block files through the fio-style queue of
//! [`BlockIo`]. Backends declare what they can do in [`Capabilities`] so a workload that needs a
//! missing capability is refused before it starts.
//!
//! The traits use `async fn` without `Send` bounds on purpose: every worker runs on a
//! thread-local executor, so futures never cross threads, and static dispatch keeps the hot loop
//! free of boxing.
#![allow(async_fn_in_trait)]

use serde::Serialize;
use std::collections::BTreeMap;

use crate::{AlignedBuf, OpError, SharedData};

/// Result of one storage operation.
pub type OpResult<T> = Result<T, OpError>;

/// What a backend supports. Workloads check these before they start.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
pub struct Capabilities {
    /// Real directories (mkdir/rmdir/readdir); object stores only have prefixes.
    pub directories: bool,
    /// Atomic rename of a file.
    pub rename: bool,
    /// Append to an existing file.
    pub append: bool,
    /// Read at an offset without reading from the start (pread, ranged GET).
    pub ranged_read: bool,
    /// Write at an arbitrary offset of an existing file (pwrite).
    pub positional_write: bool,
    /// Force data to stable storage (fsync).
    pub fsync: bool,
    /// Bypass the client page cache (O_DIRECT).
    pub direct_io: bool,
    /// The client keeps file data in the kernel's page cache, so a read phase must drop the
    /// cached pages of its files first ([`Client::invalidate`]) to reach the storage.
    #[serde(default)]
    pub page_cache: bool,
    /// How the runner drives the client's futures; results record whether calls block.
    #[serde(rename = "blocking", serialize_with = "serialize_blocking")]
    pub drive: Drive,
}

fn serialize_blocking<S: serde::Serializer>(drive: &Drive, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_bool(*drive == Drive::Blocking)
}

/// How a backend's client futures must be driven.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Drive {
    /// Operations finish on the calling OS thread without yielding (syscalls, in-process calls),
    /// so every worker needs a thread of its own to run concurrently.
    #[default]
    Blocking,
    /// Asynchronous clients whose work all happens inside the futures a worker awaits (HTTP):
    /// each worker thread runs its workers on a current-thread runtime of its own, so a request
    /// costs no wake-up of another thread.
    PerThread,
    /// Asynchronous clients with background tasks that must run while no operation is in flight
    /// and across threads (hdfs-native's RPC readers and lease renewals): the shared runtime.
    Shared,
}

/// One capability, for error messages and checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Capability {
    Directories,
    Rename,
    Append,
    RangedRead,
    PositionalWrite,
    Fsync,
    DirectIo,
}

impl Capability {
    pub const ALL: [Capability; 7] = [
        Capability::Directories,
        Capability::Rename,
        Capability::Append,
        Capability::RangedRead,
        Capability::PositionalWrite,
        Capability::Fsync,
        Capability::DirectIo,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Capability::Directories => "directories",
            Capability::Rename => "rename",
            Capability::Append => "append",
            Capability::RangedRead => "ranged read",
            Capability::PositionalWrite => "positional write",
            Capability::Fsync => "fsync",
            Capability::DirectIo => "O_DIRECT",
        }
    }
}

impl Capabilities {
    pub fn has(&self, cap: Capability) -> bool {
        match cap {
            Capability::Directories => self.directories,
            Capability::Rename => self.rename,
            Capability::Append => self.append,
            Capability::RangedRead => self.ranged_read,
            Capability::PositionalWrite => self.positional_write,
            Capability::Fsync => self.fsync,
            Capability::DirectIo => self.direct_io,
        }
    }
}

/// A description of the target for result files. Never holds credentials.
#[derive(Debug, Clone, Serialize)]
pub struct TargetInfo {
    /// The target URI as the user gave it, with any secret removed.
    pub uri: String,
    /// Backend name, e.g. `posix` or `mem`.
    pub backend: String,
    /// Where this run's files live (the run prefix inside the target).
    pub run_path: String,
    pub capabilities: Capabilities,
    /// Backend-specific facts (file system type, I/O engine, ...).
    pub details: BTreeMap<String, String>,
}

/// Options of whole-file reads and writes.
#[derive(Debug, Clone, Copy, Default)]
pub struct FileOpts {
    /// Bypass the page cache.
    pub direct: bool,
    /// fsync before close after writing.
    pub fsync: bool,
}

/// Options of a block file opened for fio-style I/O.
#[derive(Debug, Clone, Copy)]
pub struct BlockOpts {
    pub block_size: usize,
    pub queue_depth: usize,
    pub direct: bool,
    /// Create the file if it does not exist.
    pub create: bool,
    /// Offsets are random: the backend tells the kernel (fio's default `fadvise_hint`), so
    /// readahead does not fetch blocks nobody asked for into the page cache.
    pub random: bool,
    pub engine: IoEngine,
    /// The file's length when the pattern's writes end (0 when it only reads): the mmap
    /// engine extends the file to it before mapping, as fio's does.
    pub file_len: u64,
}

/// How block I/O is issued, named as in fio.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IoEngine {
    /// The fastest of the file engines by a short probe on the run's own file, where the
    /// backend offers a choice; unprobed: io_uring where the kernel has it, else psync.
    Auto,
    /// Linux io_uring with a real queue depth.
    IoUring,
    /// Linux native AIO with a real queue depth; truly asynchronous only with O_DIRECT.
    Libaio,
    /// pread/pwrite, one operation at a time (queue depth 1).
    Psync,
    /// POSIX AIO (aio_read/aio_write): the queue depth in flight on the C library's threads.
    Posixaio,
    /// The file mapped shared, each block a copy to or from the map (queue depth 1).
    Mmap,
    /// The backend's own asynchronous requests (ranged GETs, RPCs), the queue depth in flight.
    Requests,
}

impl IoEngine {
    pub fn name(self) -> &'static str {
        match self {
            IoEngine::Auto => "auto",
            IoEngine::IoUring => "io_uring",
            IoEngine::Libaio => "libaio",
            IoEngine::Psync => "psync",
            IoEngine::Posixaio => "posixaio",
            IoEngine::Mmap => "mmap",
            IoEngine::Requests => "requests",
        }
    }
}

/// Direction of one block operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockOp {
    Read,
    Write,
}

/// What a whole-file read saw.
#[derive(Debug, Clone, Copy, Default)]
pub struct FileRead {
    pub bytes: u64,
    /// When the first byte arrived (time to first byte), if any did.
    pub first_byte: Option<crate::clock::Instant>,
}

/// A finished block operation: the slot it used and the bytes moved or the error.
#[derive(Debug)]
pub struct Completion {
    pub slot: usize,
    pub result: OpResult<usize>,
}

/// A storage system opened at the run directory of one run.
pub trait Storage: Sync {
    type Client: Client;

    fn capabilities(&self) -> Capabilities;
    fn info(&self) -> TargetInfo;
    /// A client for worker `worker` (its index in the whole run), called on the worker's own
    /// thread; `queue_depth` is how many requests it may have in flight (to size connection
    /// pools).
    fn client(&self, worker: usize, queue_depth: usize) -> OpResult<Self::Client>;
    /// The gateways of a target served by several (S3 endpoints, Swift proxies): worker `w`
    /// talks to `endpoints[w % len]`. Empty for a target with one way in.
    fn endpoints(&self) -> Vec<String> {
        Vec::new()
    }
    /// Remove the run directory and everything in it. Only the run directory this storage
    /// created is ever removed.
    fn remove_run(&self) -> OpResult<()>;
    /// Write back the dirty cached pages of the whole run in one call, so that dropping each
    /// file's cache needs no write-back of its own ([`Client::invalidate_clean`]): an fsync,
    /// even of a clean file, flushes the disk's write cache (ext4: ~1 ms on a virtio disk,
    /// 30 s for 28,000 small files), where one syncfs of them all took 0.4 s. Whether it
    /// did; false where the backend cannot (each file is then written back on its own).
    fn write_back(&self) -> bool {
        false
    }
    /// The target beside the run directory, where a dataset kept for later runs lives; None
    /// where nothing outlives the run (mem://) or there is no such place (a device).
    fn beside(&self) -> Option<Box<dyn crate::Beside + '_>> {
        None
    }
}

/// Sets the content of a chunk about to be written at a file offset.
pub type Fill<'a> = &'a mut dyn FnMut(&mut [u8], u64);
/// Sees every chunk read, with its file offset.
pub type Check<'a> = &'a mut dyn FnMut(&[u8], u64);

/// What a whole-file write writes.
pub enum Source<'a> {
    /// This data again and again, in chunks of its length; read-only and shared, so nothing
    /// is copied per worker.
    Repeat(&'a SharedData),
    /// Chunks of the buffer, each set by `fill(chunk, offset)` first (the verify pattern,
    /// generated data).
    Fill(&'a mut AlignedBuf, Fill<'a>),
}

impl Source<'_> {
    /// Bytes per chunk (at least 1).
    pub fn chunk_len(&self) -> usize {
        match self {
            Source::Repeat(d) => d.len(),
            Source::Fill(b, _) => b.len(),
        }
        .max(1)
    }

    /// The `len` bytes (at most [`chunk_len`](Self::chunk_len)) to write at file offset `offset`.
    pub fn chunk(&mut self, offset: u64, len: usize) -> &[u8] {
        match self {
            Source::Repeat(d) => &d[..len],
            Source::Fill(b, f) => {
                f(&mut b[..len], offset);
                &b[..len]
            }
        }
    }
}

/// The operations of one worker. All paths are relative to the run directory and use `/`.
pub trait Client {
    /// An open file for block I/O; it owns what it holds (a worker keeps one between phases).
    type Block: BlockIo + 'static;

    async fn mkdir(&mut self, path: &str) -> OpResult<()>;
    async fn rmdir(&mut self, path: &str) -> OpResult<()>;
    /// Create an empty file (fails if it exists).
    async fn create(&mut self, path: &str) -> OpResult<()>;
    /// The size of a file.
    async fn stat(&mut self, path: &str) -> OpResult<u64>;
    /// Open a file for reading and close it again (a 0-byte read).
    async fn open_close(&mut self, path: &str) -> OpResult<()>;
    async fn rename(&mut self, from: &str, to: &str) -> OpResult<()>;
    /// List a directory; returns the number of entries.
    async fn list(&mut self, dir: &str) -> OpResult<u64>;
    async fn delete(&mut self, path: &str) -> OpResult<()>;
    /// Write a whole file of `size` bytes (open, write, close), a chunk of `src` at a time.
    async fn write_file(&mut self, path: &str, size: u64, opts: FileOpts, src: Source<'_>) -> OpResult<()>;
    /// Read a whole file (open, read, close), `buf` at a time; `check(chunk, offset)` sees every
    /// chunk when given.
    async fn read_file(
        &mut self,
        path: &str,
        opts: FileOpts,
        buf: &mut AlignedBuf,
        check: Option<Check<'_>>,
    ) -> OpResult<FileRead>;
    /// Open a file for fio-style block I/O.
    async fn open_block(&mut self, path: &str, opts: BlockOpts) -> OpResult<Self::Block>;
    /// Write back and drop the client's cached pages of a file (fsync, then
    /// posix_fadvise(DONTNEED), as fio's `invalidate=1`), so the next read reaches the storage.
    /// Only backends whose capabilities have `page_cache` implement it.
    async fn invalidate(&mut self, path: &str) -> OpResult<()> {
        Err(OpError::new(
            "unsupported",
            format!("{path}: this backend keeps no client page cache to invalidate"),
        ))
    }
    /// Drop the client's cached pages of a file that has none dirty (it was only read since it
    /// was last invalidated): [`Client::invalidate`] without the write-back, which on a FUSE
    /// mount costs a round trip to the daemon and a sync of the file there.
    async fn invalidate_clean(&mut self, path: &str) -> OpResult<()> {
        self.invalidate(path).await
    }
    /// Retries of failed requests since the last call (backends that retry count them).
    fn take_retries(&mut self) -> u64 {
        0
    }
}

/// A file opened for block I/O with a submission queue, in the manner of fio's I/O engines:
/// fill a slot's buffer, `submit` it, and collect finished slots with `complete`.
pub trait BlockIo {
    /// Operations that can be in flight at once (1 for synchronous engines).
    fn depth(&self) -> usize;
    /// The engine actually used.
    fn engine(&self) -> IoEngine;
    /// The buffer of one slot (`block_size` bytes, aligned for O_DIRECT).
    fn buffer(&mut self, slot: usize) -> &mut [u8];
    /// Queue an operation on `len` bytes of the slot's buffer at `offset`.
    fn submit(&mut self, slot: usize, op: BlockOp, offset: u64, len: usize) -> OpResult<()>;
    /// Give the operations `submit` queues next on `slot` the I/O priority `ioprio` (the
    /// value of ioprio_set(2): class << 13 | level; 0 is none): fio's cmdprio and prio of
    /// the async engines. False where the engine has no priority per operation.
    fn set_priority(&mut self, _slot: usize, _ioprio: u16) -> bool {
        false
    }
    /// Send queued operations and wait until at least `min` have finished; appends every
    /// finished one to `out`.
    async fn complete(&mut self, min: usize, out: &mut Vec<Completion>) -> OpResult<()>;
    /// Reap what completes until one has or `timeout` passed (then perhaps none): a paced
    /// run at a queue depth above 1 waits for the next start or a completion, whichever first.
    async fn complete_within(&mut self, timeout: std::time::Duration, out: &mut Vec<Completion>) -> OpResult<()>;
    /// Flush written data to stable storage: fdatasync(2) when `data_only`, else fsync(2).
    async fn sync(&mut self, data_only: bool) -> OpResult<()>;
}
