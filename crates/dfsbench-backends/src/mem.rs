//! An in-process file system, to measure dfsbench's own ceiling and to test workloads.
//!
//! It keeps POSIX semantics (parents must exist, create fails on an existing file, rmdir on a
//! non-empty directory) so a workload that runs here runs on a real file system too. Like one it
//! has a capacity: a write that does not fit fails with ENOSPC instead of eating the machine.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use crate::storage::{
    BlockIo, BlockOp, BlockOpts, Capabilities, Check, Client, Completion, FileOpts, FileRead, IoEngine, OpResult,
    Source, Storage, TargetInfo,
};
use crate::{AlignedBuf, OpError};

/// What one entry costs besides its name and contents (the map's node, the file's header; a
/// million empty files took 194 MB), so that a run of creates is bounded by the capacity too.
const ENTRY_BYTES: u64 = 192;

/// The store's capacity and the bytes charged against it.
struct Space {
    capacity: u64,
    used: AtomicU64,
}

impl Space {
    fn new(capacity: u64) -> Arc<Space> {
        Arc::new(Space {
            capacity,
            used: AtomicU64::new(0),
        })
    }

    /// Charge `bytes` if they fit, else ENOSPC as a full disk gives.
    fn take(&self, bytes: u64) -> OpResult<()> {
        self.used
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |used| {
                used.checked_add(bytes).filter(|&n| n <= self.capacity)
            })
            .map(|_| ())
            .map_err(|used| {
                OpError::new(
                    "ENOSPC",
                    format!(
                        "mem:// is full: {used} of its {} bytes in use, {bytes} more do not fit (set mem://?size=)",
                        self.capacity
                    ),
                )
            })
    }

    fn charge(self: &Arc<Self>, bytes: u64) -> OpResult<Charge> {
        self.take(bytes)?;
        Ok(Charge {
            space: self.clone(),
            bytes,
        })
    }
}

/// Bytes held against the capacity, given back when what holds them is dropped: an entry
/// removed, a file's contents once the last handle on them is gone.
struct Charge {
    space: Arc<Space>,
    bytes: u64,
}

impl Charge {
    fn grow(&mut self, more: u64) -> OpResult<()> {
        self.space.take(more)?;
        self.bytes += more;
        Ok(())
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        self.space.used.fetch_sub(self.bytes, Ordering::Relaxed);
    }
}

/// A file's contents and their charge (`charge.bytes == data.len()`).
struct Contents {
    data: Vec<u8>,
    charge: Charge,
}

impl Contents {
    fn empty(space: &Arc<Space>) -> FileData {
        Arc::new(Mutex::new(Contents {
            data: Vec::new(),
            charge: Charge {
                space: space.clone(),
                bytes: 0,
            },
        }))
    }

    /// Grow to at least `len` bytes, zero-filled, if the store has room.
    fn extend_to(&mut self, len: usize) -> OpResult<()> {
        if len > self.data.len() {
            self.charge.grow((len - self.data.len()) as u64)?;
            self.data.resize(len, 0);
        }
        Ok(())
    }
}

type FileData = Arc<Mutex<Contents>>;

enum Node {
    Dir,
    File(FileData),
}

/// A node and the charge for its entry.
struct Entry {
    node: Node,
    _charge: Charge,
}

struct Tree {
    nodes: RwLock<BTreeMap<String, Entry>>,
    space: Arc<Space>,
}

/// What the in-process store offers: everything but a page cache to bypass. Its calls finish
/// without ever yielding to the executor, so like syscalls they need a thread per worker.
pub(crate) const CAPABILITIES: Capabilities = Capabilities {
    directories: true,
    rename: true,
    append: true,
    ranged_read: true,
    positional_write: true,
    fsync: true,
    direct_io: false,
    page_cache: false,
    drive: crate::Drive::Blocking,
};

/// The options of a `mem://` URI.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MemOptions {
    /// Every file and metadata call takes at least this long (`mem://?latency=2ms`): a slow
    /// server for testing open-loop load.
    pub latency: Duration,
    /// The capacity in bytes (`mem://?size=4g`); none: half the memory available at start.
    pub size: Option<u64>,
}

/// The whole store; a fresh one per run.
pub struct MemStorage {
    uri: String,
    run_name: String,
    tree: Arc<Tree>,
    latency: Duration,
}

impl MemStorage {
    pub fn new(uri: &str, run_name: &str) -> Self {
        Self::with_options(uri, run_name, MemOptions::default())
    }

    /// A store with `options`. The latency sleeps the calling thread; blocking backends run one
    /// thread per worker, so workers are delayed side by side, not in turn.
    pub fn with_options(uri: &str, run_name: &str, options: MemOptions) -> Self {
        let capacity = options.size.unwrap_or_else(default_capacity);
        MemStorage {
            uri: uri.to_string(),
            run_name: run_name.to_string(),
            tree: Arc::new(Tree {
                nodes: RwLock::default(),
                space: Space::new(capacity),
            }),
            latency: options.latency,
        }
    }
}

/// Half the memory available now (`MemAvailable` in /proc/meminfo): the default capacity leaves
/// the machine and the run's own bookkeeping room. Without /proc, 1 GiB.
fn default_capacity() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| mem_available(&text))
        .map_or(1 << 30, |bytes| bytes / 2)
}

/// `MemAvailable` in bytes from the text of /proc/meminfo.
fn mem_available(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find_map(|l| l.strip_prefix("MemAvailable:"))?;
    let kib: u64 = line.trim().strip_suffix("kB")?.trim().parse().ok()?;
    kib.checked_mul(1024)
}

/// Parse the query of a `mem://` URI: `latency=DURATION` and `size=BYTES`.
pub(crate) fn parse_mem_uri(uri: &str) -> Result<MemOptions, OpError> {
    let query = uri.split_once('?').map_or("", |(_, q)| q);
    let mut options = MemOptions::default();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        match pair.split_once('=') {
            Some(("latency", v)) => {
                options.latency = crate::units::parse_duration(v)
                    .map_err(|e| OpError::new("EINVAL", format!("mem:// latency: {e}")))?;
            }
            Some(("size", v)) => {
                let size = crate::units::parse_size(v)
                    .map_err(|e| OpError::new("EINVAL", format!("mem:// size: {e} (e.g. mem://?size=4g)")))?;
                options.size = Some(size);
            }
            _ => {
                return Err(OpError::new(
                    "EINVAL",
                    format!(
                        "unknown mem:// option '{pair}' in '{uri}': only latency=DURATION and size=BYTES (e.g. mem://?latency=2ms&size=4g)"
                    ),
                ))
            }
        }
    }
    Ok(options)
}

impl MemStorage {
    /// The store's capacity, and its latency when there is one.
    fn details(&self) -> BTreeMap<String, String> {
        let mut details = BTreeMap::from([("capacity_bytes".to_string(), self.tree.space.capacity.to_string())]);
        if !self.latency.is_zero() {
            details.insert("latency_ns".to_string(), self.latency.as_nanos().to_string());
        }
        details
    }
}

impl Storage for MemStorage {
    type Client = MemClient;

    fn capabilities(&self) -> Capabilities {
        CAPABILITIES
    }

    fn info(&self) -> TargetInfo {
        TargetInfo {
            uri: self.uri.clone(),
            backend: "mem".into(),
            run_path: format!("mem://{}", self.run_name),
            capabilities: self.capabilities(),
            details: self.details(),
        }
    }

    fn client(&self, _worker: usize, _queue_depth: usize) -> OpResult<MemClient> {
        Ok(MemClient {
            tree: self.tree.clone(),
            latency: self.latency,
        })
    }

    fn remove_run(&self) -> OpResult<()> {
        self.tree.nodes.write().expect("mem lock").clear();
        Ok(())
    }
}

/// One worker's handle on the store.
pub struct MemClient {
    tree: Arc<Tree>,
    latency: Duration,
}

impl MemClient {
    /// The injected service time of one call.
    fn delay(&self) {
        if !self.latency.is_zero() {
            std::thread::sleep(self.latency);
        }
    }
}

fn not_found(path: &str) -> OpError {
    OpError::new("ENOENT", format!("{path}: no such file or directory"))
}

fn parent(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(p, _)| p)
}

type Nodes = BTreeMap<String, Entry>;

/// What an entry at `path` is charged.
fn entry_bytes(path: &str) -> u64 {
    ENTRY_BYTES + path.len() as u64
}

impl Tree {
    /// An entry for `node` at `path`, charged if the store has room for it.
    fn entry(&self, path: &str, node: Node) -> OpResult<Entry> {
        Ok(Entry {
            node,
            _charge: self.space.charge(entry_bytes(path))?,
        })
    }

    fn node<'a>(nodes: &'a Nodes, path: &str) -> Option<&'a Node> {
        nodes.get(path).map(|e| &e.node)
    }

    fn check_parent(&self, nodes: &Nodes, path: &str) -> OpResult<()> {
        let p = parent(path);
        match Self::node(nodes, p) {
            _ if p.is_empty() => Ok(()),
            Some(Node::Dir) => Ok(()),
            Some(Node::File(_)) => Err(OpError::new("ENOTDIR", format!("{p}: not a directory"))),
            None => Err(not_found(p)),
        }
    }

    fn insert_new(&self, path: &str, node: Node) -> OpResult<()> {
        let mut nodes = self.nodes.write().expect("mem lock");
        self.check_parent(&nodes, path)?;
        if nodes.contains_key(path) {
            return Err(OpError::new("EEXIST", format!("{path}: file exists")));
        }
        nodes.insert(path.to_string(), self.entry(path, node)?);
        Ok(())
    }

    /// The file at `path`, made empty if there is none, in one step as O_CREAT without O_EXCL:
    /// workers that open a shared file at once all get the same file.
    fn file_or_new(&self, path: &str) -> OpResult<FileData> {
        let mut nodes = self.nodes.write().expect("mem lock");
        self.check_parent(&nodes, path)?;
        if !nodes.contains_key(path) {
            let entry = self.entry(path, Node::File(Contents::empty(&self.space)))?;
            nodes.insert(path.to_string(), entry);
        }
        match Self::node(&nodes, path) {
            Some(Node::File(f)) => Ok(f.clone()),
            _ => Err(OpError::new("EISDIR", format!("{path}: is a directory"))),
        }
    }

    fn file(&self, path: &str) -> OpResult<FileData> {
        match Self::node(&self.nodes.read().expect("mem lock"), path) {
            Some(Node::File(f)) => Ok(f.clone()),
            Some(Node::Dir) => Err(OpError::new("EISDIR", format!("{path}: is a directory"))),
            None => Err(not_found(path)),
        }
    }

    /// Entries directly below `dir`.
    fn children(nodes: &Nodes, dir: &str) -> usize {
        let prefix = if dir.is_empty() {
            String::new()
        } else {
            format!("{dir}/")
        };
        nodes
            .range(prefix.clone()..)
            .take_while(|(k, _)| k.starts_with(&prefix))
            .filter(|(k, _)| !k[prefix.len()..].contains('/'))
            .count()
    }
}

impl Client for MemClient {
    type Block = MemBlock;

    async fn mkdir(&mut self, path: &str) -> OpResult<()> {
        self.delay();
        self.tree.insert_new(path, Node::Dir)
    }

    async fn rmdir(&mut self, path: &str) -> OpResult<()> {
        self.delay();
        let mut nodes = self.tree.nodes.write().expect("mem lock");
        match Tree::node(&nodes, path) {
            Some(Node::Dir) if Tree::children(&nodes, path) > 0 => {
                Err(OpError::new("ENOTEMPTY", format!("{path}: directory not empty")))
            }
            Some(Node::Dir) => {
                nodes.remove(path);
                Ok(())
            }
            Some(Node::File(_)) => Err(OpError::new("ENOTDIR", format!("{path}: not a directory"))),
            None => Err(not_found(path)),
        }
    }

    async fn create(&mut self, path: &str) -> OpResult<()> {
        self.delay();
        self.tree
            .insert_new(path, Node::File(Contents::empty(&self.tree.space)))
    }

    async fn stat(&mut self, path: &str) -> OpResult<u64> {
        self.delay();
        match Tree::node(&self.tree.nodes.read().expect("mem lock"), path) {
            Some(Node::File(f)) => Ok(f.lock().expect("mem lock").data.len() as u64),
            Some(Node::Dir) => Ok(0),
            None => Err(not_found(path)),
        }
    }

    async fn open_close(&mut self, path: &str) -> OpResult<()> {
        self.delay();
        self.tree.file(path).map(|_| ())
    }

    async fn rename(&mut self, from: &str, to: &str) -> OpResult<()> {
        self.delay();
        let mut nodes = self.tree.nodes.write().expect("mem lock");
        self.tree.check_parent(&nodes, to)?;
        match Tree::node(&nodes, from) {
            Some(Node::File(_)) => {}
            Some(Node::Dir) => return Err(OpError::unsupported("renaming a directory in mem://")),
            None => return Err(not_found(from)),
        }
        // Charged for its new name before anything moves, so a rename that does not fit
        // leaves both names as they were; a file it replaces is freed.
        let charge = self.tree.space.charge(entry_bytes(to))?;
        let node = nodes.remove(from).expect("checked above").node;
        nodes.insert(to.to_string(), Entry { node, _charge: charge });
        Ok(())
    }

    async fn list(&mut self, dir: &str) -> OpResult<u64> {
        self.delay();
        let nodes = self.tree.nodes.read().expect("mem lock");
        match Tree::node(&nodes, dir) {
            Some(Node::Dir) => Ok(Tree::children(&nodes, dir) as u64),
            _ if dir.is_empty() => Ok(Tree::children(&nodes, dir) as u64),
            Some(Node::File(_)) => Err(OpError::new("ENOTDIR", format!("{dir}: not a directory"))),
            None => Err(not_found(dir)),
        }
    }

    async fn delete(&mut self, path: &str) -> OpResult<()> {
        self.delay();
        let mut nodes = self.tree.nodes.write().expect("mem lock");
        match Tree::node(&nodes, path) {
            Some(Node::File(_)) => {
                nodes.remove(path);
                Ok(())
            }
            Some(Node::Dir) => Err(OpError::new("EISDIR", format!("{path}: is a directory"))),
            None => Err(not_found(path)),
        }
    }

    async fn write_file(&mut self, path: &str, size: u64, _opts: FileOpts, mut src: Source<'_>) -> OpResult<()> {
        self.delay();
        {
            let nodes = self.tree.nodes.read().expect("mem lock");
            self.tree.check_parent(&nodes, path)?;
        }
        // Charged before anything is allocated: a write that does not fit fails as on a full disk.
        let charge = self.tree.space.charge(size)?;
        let mut data = Vec::with_capacity(size as usize);
        while (data.len() as u64) < size {
            let len = (size - data.len() as u64).min(src.chunk_len() as u64) as usize;
            data.extend_from_slice(src.chunk(data.len() as u64, len));
        }
        let file = Node::File(Arc::new(Mutex::new(Contents { data, charge })));
        let mut nodes = self.tree.nodes.write().expect("mem lock");
        self.tree.check_parent(&nodes, path)?;
        if let Some(Node::Dir) = Tree::node(&nodes, path) {
            return Err(OpError::new("EISDIR", format!("{path}: is a directory")));
        }
        let entry = self.tree.entry(path, file)?;
        nodes.insert(path.to_string(), entry);
        Ok(())
    }

    async fn read_file(
        &mut self,
        path: &str,
        _opts: FileOpts,
        buf: &mut AlignedBuf,
        mut check: Option<Check<'_>>,
    ) -> OpResult<FileRead> {
        self.delay();
        let file = self.tree.file(path)?;
        let contents = file.lock().expect("mem lock");
        let data = &contents.data;
        let mut off = 0usize;
        let mut first_byte = None;
        while off < data.len() {
            let len = (data.len() - off).min(buf.len());
            buf[..len].copy_from_slice(&data[off..off + len]);
            first_byte.get_or_insert_with(crate::clock::Instant::now);
            if let Some(c) = check.as_deref_mut() {
                c(&buf[..len], off as u64);
            }
            off += len;
        }
        Ok(FileRead {
            bytes: off as u64,
            first_byte,
        })
    }

    async fn open_block(&mut self, path: &str, opts: BlockOpts) -> OpResult<MemBlock> {
        self.delay();
        let file = match self.tree.file(path) {
            Ok(f) => f,
            Err(e) if e.kind == "ENOENT" && opts.create => self.tree.file_or_new(path)?,
            Err(e) => return Err(e),
        };
        Ok(MemBlock {
            file,
            buf: AlignedBuf::new(opts.block_size),
            done: None,
        })
    }
}

/// A mem:// file opened for block I/O; operations finish at once (queue depth 1).
pub struct MemBlock {
    file: FileData,
    buf: AlignedBuf,
    done: Option<Completion>,
}

impl BlockIo for MemBlock {
    fn depth(&self) -> usize {
        1
    }

    fn engine(&self) -> IoEngine {
        IoEngine::Psync
    }

    fn buffer(&mut self, _slot: usize) -> &mut [u8] {
        &mut self.buf
    }

    fn submit(&mut self, slot: usize, op: BlockOp, offset: u64, len: usize) -> OpResult<()> {
        let mut contents = self.file.lock().expect("mem lock");
        let off = offset as usize;
        let result = match op {
            BlockOp::Read => {
                let data = &contents.data;
                let end = (off + len).min(data.len());
                let n = end.saturating_sub(off);
                self.buf[..n].copy_from_slice(&data[off.min(end)..end]);
                Ok(n)
            }
            // A write that extends the file past the capacity fails as pwrite does on a full disk.
            BlockOp::Write => contents.extend_to(off + len).map(|()| {
                contents.data[off..off + len].copy_from_slice(&self.buf[..len]);
                len
            }),
        };
        self.done = Some(Completion { slot, result });
        Ok(())
    }

    async fn complete(&mut self, _min: usize, out: &mut Vec<Completion>) -> OpResult<()> {
        out.extend(self.done.take());
        Ok(())
    }

    async fn complete_within(&mut self, _timeout: std::time::Duration, out: &mut Vec<Completion>) -> OpResult<()> {
        out.extend(self.done.take());
        Ok(())
    }

    async fn sync(&mut self, _data_only: bool) -> OpResult<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::block_on;

    #[test]
    fn keeps_posix_semantics() {
        let s = MemStorage::new("mem://", "r");
        let mut c = s.client(0, 1).unwrap();
        assert_eq!(block_on(c.create("d/f")).unwrap_err().kind, "ENOENT");
        block_on(c.mkdir("d")).unwrap();
        block_on(c.create("d/f")).unwrap();
        assert_eq!(block_on(c.create("d/f")).unwrap_err().kind, "EEXIST");
        assert_eq!(block_on(c.list("d")).unwrap(), 1);
        assert_eq!(block_on(c.rmdir("d")).unwrap_err().kind, "ENOTEMPTY");
        block_on(c.rename("d/f", "d/g")).unwrap();
        assert_eq!(block_on(c.stat("d/f")).unwrap_err().kind, "ENOENT");
        block_on(c.delete("d/g")).unwrap();
        block_on(c.rmdir("d")).unwrap();
        assert_eq!(block_on(c.list("")).unwrap(), 0);
    }

    #[test]
    fn files_round_trip() {
        let s = MemStorage::new("mem://", "r");
        let mut c = s.client(0, 1).unwrap();
        let mut buf = AlignedBuf::new(4096);
        let mut fill = |b: &mut [u8], off: u64| {
            b.iter_mut()
                .enumerate()
                .for_each(|(i, x)| *x = ((off as usize + i) % 251) as u8)
        };
        block_on(c.write_file("f", 10_000, FileOpts::default(), Source::Fill(&mut buf, &mut fill))).unwrap();
        assert_eq!(block_on(c.stat("f")).unwrap(), 10_000);
        let mut ok = true;
        let mut check = |b: &[u8], off: u64| {
            ok &= b
                .iter()
                .enumerate()
                .all(|(i, &x)| x == ((off as usize + i) % 251) as u8)
        };
        let read = block_on(c.read_file("f", FileOpts::default(), &mut buf, Some(&mut check))).unwrap();
        assert_eq!(read.bytes, 10_000);
        assert!(read.first_byte.is_some());
        assert!(ok);
    }

    fn used(s: &MemStorage) -> u64 {
        s.tree.space.used.load(Ordering::Relaxed)
    }

    #[test]
    fn full_store_fails_with_enospc_and_deletes_free_space() {
        let options = parse_mem_uri("mem://?size=64k").unwrap();
        assert_eq!(options.size, Some(64 << 10));
        let s = MemStorage::with_options("mem://?size=64k", "r", options);
        let mut c = s.client(0, 1).unwrap();
        let mut buf = AlignedBuf::new(4096);
        let mut write = |c: &mut MemClient, path: &str, size: u64| {
            let mut fill = |b: &mut [u8], _: u64| b.fill(7);
            block_on(c.write_file(path, size, FileOpts::default(), Source::Fill(&mut buf, &mut fill)))
        };
        write(&mut c, "a", 40 << 10).unwrap();
        let e = write(&mut c, "b", 40 << 10).unwrap_err();
        assert_eq!(e.kind, "ENOSPC");
        assert!(e.is_no_space() && e.message.contains("mem://?size="), "{e}");
        assert_eq!(
            block_on(c.stat("b")).unwrap_err().kind,
            "ENOENT",
            "nothing of it was kept"
        );
        // Overwriting a file frees what it held; deleting it frees everything.
        write(&mut c, "a", 10 << 10).unwrap();
        write(&mut c, "b", 40 << 10).unwrap();
        block_on(c.delete("a")).unwrap();
        block_on(c.delete("b")).unwrap();
        assert_eq!(used(&s), 0);

        // Block writes that extend a file past the capacity fail in their completion.
        let opts = BlockOpts {
            block_size: 32 << 10,
            queue_depth: 1,
            direct: false,
            create: true,
            random: false,
            file_len: 0,
            engine: IoEngine::Psync,
        };
        let mut f = block_on(c.open_block("f", opts)).unwrap();
        let mut done = Vec::new();
        for (offset, ok) in [(0, true), (32 << 10, false), (0, true)] {
            f.submit(0, BlockOp::Write, offset, 32 << 10).unwrap();
            block_on(f.complete(1, &mut done)).unwrap();
            assert_eq!(done.pop().unwrap().result.is_ok(), ok, "write at {offset}");
        }
        assert_eq!(block_on(c.stat("f")).unwrap(), 32 << 10);
        drop(f);
        block_on(c.delete("f")).unwrap();
        assert_eq!(used(&s), 0);

        // Entries are charged too: creates stop when their names fill the store.
        let creates = (0..1000)
            .take_while(|i| block_on(c.create(&format!("e{i}"))).is_ok())
            .count();
        assert!((250..=400).contains(&creates), "{creates} empty files in 64 KiB");
        s.remove_run().unwrap();
        assert_eq!(used(&s), 0);
    }

    #[test]
    fn default_capacity_is_half_the_available_memory() {
        let meminfo = "MemTotal:       24576000 kB\nMemFree:  100 kB\nMemAvailable:   2048 kB\n";
        assert_eq!(mem_available(meminfo), Some(2 << 20));
        assert_eq!(mem_available("MemTotal: 1 kB\n"), None);
        let s = MemStorage::new("mem://", "r");
        assert!(s.tree.space.capacity > 0);
        assert_eq!(s.info().details["capacity_bytes"], s.tree.space.capacity.to_string());
        let e = parse_mem_uri("mem://?size=4x").unwrap_err();
        assert!(e.message.contains("mem:// size: invalid size '4x'"), "{e}");
    }
}
