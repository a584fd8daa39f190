//! An in-process file system, to measure dfsbench's own ceiling and to test workloads.
//!
//! It keeps POSIX semantics (parents must exist, create fails on an existing file, rmdir on a
//! non-empty directory) so a workload that runs here runs on a real file system too.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use crate::storage::{
    BlockIo, BlockOp, BlockOpts, Capabilities, Check, Client, Completion, FileOpts, FileRead, IoEngine, OpResult,
    Source, Storage, TargetInfo,
};
use crate::{AlignedBuf, OpError};

type FileData = Arc<Mutex<Vec<u8>>>;

enum Node {
    Dir,
    File(FileData),
}

#[derive(Default)]
struct Tree {
    nodes: RwLock<BTreeMap<String, Node>>,
}

/// What the in-process store offers: everything but a page cache to bypass. Its calls finish
/// without ever yielding to the executor, so like syscalls they need a thread per worker.
pub const CAPABILITIES: Capabilities = Capabilities {
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

/// The whole store; a fresh one per run.
pub struct MemStorage {
    uri: String,
    run_name: String,
    tree: Arc<Tree>,
    latency: Duration,
}

impl MemStorage {
    pub fn new(uri: &str, run_name: &str) -> Self {
        Self::with_latency(uri, run_name, Duration::ZERO)
    }

    /// A store whose every file and metadata call takes at least `latency` (`mem://?latency=2ms`):
    /// a slow server for testing open-loop load. The delay sleeps the calling thread; blocking
    /// backends run one thread per worker, so workers are delayed side by side, not in turn.
    pub fn with_latency(uri: &str, run_name: &str, latency: Duration) -> Self {
        MemStorage {
            uri: uri.to_string(),
            run_name: run_name.to_string(),
            tree: Arc::default(),
            latency,
        }
    }
}

/// Parse the query of a `mem://` URI: only `latency=DURATION` is known.
pub fn parse_mem_uri(uri: &str) -> Result<Duration, OpError> {
    let query = uri.split_once('?').map_or("", |(_, q)| q);
    let mut latency = Duration::ZERO;
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        match pair.split_once('=') {
            Some(("latency", v)) => {
                latency = crate::units::parse_duration(v)
                    .map_err(|e| OpError::new("EINVAL", format!("mem:// latency: {e}")))?;
            }
            _ => {
                return Err(OpError::new(
                    "EINVAL",
                    format!(
                        "unknown mem:// option '{pair}' in '{uri}': only latency=DURATION (e.g. mem://?latency=2ms)"
                    ),
                ))
            }
        }
    }
    Ok(latency)
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
            details: if self.latency.is_zero() {
                BTreeMap::new()
            } else {
                BTreeMap::from([("latency_ns".to_string(), self.latency.as_nanos().to_string())])
            },
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

impl Tree {
    fn check_parent(&self, nodes: &BTreeMap<String, Node>, path: &str) -> OpResult<()> {
        let p = parent(path);
        match nodes.get(p) {
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
        nodes.insert(path.to_string(), node);
        Ok(())
    }

    /// The file at `path`, made empty if there is none, in one step as O_CREAT without O_EXCL:
    /// workers that open a shared file at once all get the same file.
    fn file_or_new(&self, path: &str) -> OpResult<FileData> {
        let mut nodes = self.nodes.write().expect("mem lock");
        self.check_parent(&nodes, path)?;
        match nodes
            .entry(path.to_string())
            .or_insert_with(|| Node::File(FileData::default()))
        {
            Node::File(f) => Ok(f.clone()),
            Node::Dir => Err(OpError::new("EISDIR", format!("{path}: is a directory"))),
        }
    }

    fn file(&self, path: &str) -> OpResult<FileData> {
        match self.nodes.read().expect("mem lock").get(path) {
            Some(Node::File(f)) => Ok(f.clone()),
            Some(Node::Dir) => Err(OpError::new("EISDIR", format!("{path}: is a directory"))),
            None => Err(not_found(path)),
        }
    }

    /// Entries directly below `dir`.
    fn children(nodes: &BTreeMap<String, Node>, dir: &str) -> usize {
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
        match nodes.get(path) {
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
        self.tree.insert_new(path, Node::File(Arc::default()))
    }

    async fn stat(&mut self, path: &str) -> OpResult<u64> {
        self.delay();
        match self.tree.nodes.read().expect("mem lock").get(path) {
            Some(Node::File(f)) => Ok(f.lock().expect("mem lock").len() as u64),
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
        match nodes.get(from) {
            Some(Node::File(_)) => {}
            Some(Node::Dir) => return Err(OpError::unsupported("renaming a directory in mem://")),
            None => return Err(not_found(from)),
        }
        let node = nodes.remove(from).expect("checked above");
        nodes.insert(to.to_string(), node);
        Ok(())
    }

    async fn list(&mut self, dir: &str) -> OpResult<u64> {
        self.delay();
        let nodes = self.tree.nodes.read().expect("mem lock");
        match nodes.get(dir) {
            Some(Node::Dir) => Ok(Tree::children(&nodes, dir) as u64),
            _ if dir.is_empty() => Ok(Tree::children(&nodes, dir) as u64),
            Some(Node::File(_)) => Err(OpError::new("ENOTDIR", format!("{dir}: not a directory"))),
            None => Err(not_found(dir)),
        }
    }

    async fn delete(&mut self, path: &str) -> OpResult<()> {
        self.delay();
        let mut nodes = self.tree.nodes.write().expect("mem lock");
        match nodes.get(path) {
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
        let mut data = Vec::with_capacity(size as usize);
        while (data.len() as u64) < size {
            let len = (size - data.len() as u64).min(src.chunk_len() as u64) as usize;
            data.extend_from_slice(src.chunk(data.len() as u64, len));
        }
        let mut nodes = self.tree.nodes.write().expect("mem lock");
        self.tree.check_parent(&nodes, path)?;
        if let Some(Node::Dir) = nodes.get(path) {
            return Err(OpError::new("EISDIR", format!("{path}: is a directory")));
        }
        nodes.insert(path.to_string(), Node::File(Arc::new(Mutex::new(data))));
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
        let data = file.lock().expect("mem lock");
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
        let mut data = self.file.lock().expect("mem lock");
        let off = offset as usize;
        let moved = match op {
            BlockOp::Read => {
                let end = (off + len).min(data.len());
                let n = end.saturating_sub(off);
                self.buf[..n].copy_from_slice(&data[off.min(end)..end]);
                n
            }
            BlockOp::Write => {
                if data.len() < off + len {
                    data.resize(off + len, 0);
                }
                data[off..off + len].copy_from_slice(&self.buf[..len]);
                len
            }
        };
        self.done = Some(Completion {
            slot,
            result: Ok(moved),
        });
        Ok(())
    }

    async fn complete(&mut self, _min: usize, out: &mut Vec<Completion>) -> OpResult<()> {
        out.extend(self.done.take());
        Ok(())
    }

    async fn sync(&mut self) -> OpResult<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The mem backend never awaits anything, so polling once finishes every future.
    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        use std::task::{Context, Poll, Waker};
        let mut f = std::pin::pin!(f);
        match f.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
            Poll::Ready(v) => v,
            Poll::Pending => panic!("mem backend futures never wait"),
        }
    }

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
}
