//! Local and mounted file systems through direct syscalls.
//!
//! Every path is resolved relative to the run directory's file descriptor with the `*at`
//! calls, and paths are turned into C strings in a per-client buffer, so an operation costs the
//! syscall and nothing else.

mod aio;
mod beside;
mod block;
mod device;
mod mmap;
mod posixaio;

use std::collections::BTreeMap;
use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::storage::{
    BlockOpts, Capabilities, Check, Client, FileOpts, FileRead, OpResult, Source, Storage, TargetInfo,
};
use crate::{AlignedBuf, OpError};

pub(crate) use block::PosixBlock;
use device::Device;
pub(crate) use device::CAPABILITIES as DEVICE_CAPABILITIES;
pub use device::{is_block_device, is_dataless_char_device, BACKEND as DEVICE_BACKEND};

/// Name of the marker file that proves a directory is a run directory made by dfsbench.
pub const RUN_MARKER: &str = ".dfsbench-run";
/// Prefix of every run directory.
pub const RUN_PREFIX: &str = "dfsbench-";

/// What a POSIX file system offers.
pub(crate) const CAPABILITIES: Capabilities = Capabilities {
    directories: true,
    rename: true,
    append: true,
    ranged_read: true,
    positional_write: true,
    fsync: true,
    direct_io: true,
    page_cache: true,
    drive: crate::Drive::Blocking,
};

/// A directory tree of a mounted file system.
pub struct PosixStorage {
    uri: String,
    run_dir: PathBuf,
    run_name: String,
    run_fd: Arc<OwnedFd>,
    fs_type: String,
    /// A block device the user let the run overwrite: the run's one file, and no directory.
    device: Option<Arc<Device>>,
}

impl PosixStorage {
    /// Create the run directory `run_name` inside `target` and open it. Fails if `target` is
    /// not a writable directory or the run directory already exists.
    pub fn create_run(uri: &str, target: &Path, run_name: &str) -> Result<Self, OpError> {
        match std::fs::metadata(target) {
            Ok(m) if m.is_dir() => {}
            Ok(m) if m.file_type().is_block_device() => {
                return Err(OpError::new(
                    "ENOTDIR",
                    format!(
                        "target {} is a block device: dfsbench would overwrite the data on it; pass --overwrite-device {} to accept that, or point --target at a directory",
                        target.display(),
                        target.display()
                    ),
                ))
            }
            Ok(_) => {
                return Err(OpError::new(
                    "ENOTDIR",
                    format!(
                        "target {} is not a directory: point --target at a directory",
                        target.display()
                    ),
                ))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(OpError::new(
                    "ENOENT",
                    format!(
                        "target directory {} does not exist: create it or pick another --target",
                        target.display()
                    ),
                ))
            }
            Err(e) => return Err(explain(OpError::from(e), target, "read")),
        }
        let run_dir = target.join(run_name);
        std::fs::create_dir(&run_dir).map_err(|e| explain(e.into(), target, "create the run directory in"))?;
        let marker = run_dir.join(RUN_MARKER);
        std::fs::write(&marker, format!("{run_name}\n")).map_err(|e| explain(e.into(), target, "write to"))?;
        Self::open(uri, run_dir, run_name)
    }

    /// Open the run directory another process of the same run created (multi-process runs);
    /// its marker must name the run.
    pub fn join_run(uri: &str, target: &Path, run_name: &str) -> Result<Self, OpError> {
        let run_dir = target.join(run_name);
        match std::fs::read_to_string(run_dir.join(RUN_MARKER)) {
            Ok(m) if m.trim() == run_name => {}
            _ => {
                return Err(OpError::new(
                    "ENOENT",
                    format!(
                        "run directory {} is not visible here: every process needs the same shared --target",
                        run_dir.display()
                    ),
                ))
            }
        }
        Self::open(uri, run_dir, run_name)
    }

    /// The storage of an existing run directory.
    fn open(uri: &str, run_dir: PathBuf, run_name: &str) -> Result<Self, OpError> {
        let run_fd = open_dir(&run_dir)?;
        let fs_type = fs_type_name(run_fd.as_raw_fd());
        Ok(PosixStorage {
            uri: uri.to_string(),
            run_dir,
            run_name: run_name.to_string(),
            run_fd: Arc::new(run_fd),
            fs_type,
            device: None,
        })
    }

    /// The block device at `path` as the run's one file (`--overwrite-device`): nothing is
    /// made on it, and the run removes nothing from it.
    pub fn open_device(uri: &str, path: &Path) -> Result<Self, OpError> {
        let (device, fd) = Device::open(path)?;
        Ok(PosixStorage {
            uri: uri.to_string(),
            run_dir: path.to_path_buf(),
            run_name: String::new(),
            run_fd: Arc::new(fd),
            fs_type: "block device".into(),
            device: Some(Arc::new(device)),
        })
    }

    pub fn run_dir(&self) -> &Path {
        &self.run_dir
    }
}

/// Add the fix to the errors a user can act on.
fn explain(err: OpError, target: &Path, action: &str) -> OpError {
    let hint = match err.kind {
        "EACCES" | "EPERM" => "permission denied: pick a --target you may write to",
        "EROFS" => "the file system is read-only: pick a writable --target",
        "ENOSPC" | "EDQUOT" => "no space left: free space or pick another --target",
        _ => "check the --target path",
    };
    OpError::new(err.kind, format!("cannot {action} {}: {hint}", target.display()))
}

fn open_dir(path: &Path) -> Result<OwnedFd, OpError> {
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| OpError::new("EINVAL", format!("path {} contains a NUL byte", path.display())))?;
    // SAFETY: c is a valid C string.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(OpError::last_os_error());
    }
    // SAFETY: fd was just opened and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Remove a run directory after checking that dfsbench made it: its name starts with
/// `dfsbench-` and it holds a marker naming it. Anything else is refused.
pub(crate) fn remove_run_dir(dir: &Path) -> Result<(), OpError> {
    check_run_dir(dir)?;
    // remove_dir_all does not follow symbolic links, so nothing outside the run is touched.
    // The marker goes last: when several ranks remove the run at once (rank 0 died and every
    // rank left cleans up), one that fails on a file another rank made meanwhile leaves the
    // marker for the one that finishes.
    let gone_ok = |r: std::io::Result<()>| match r {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(OpError::from(e)),
        _ => Ok(()),
    };
    for entry in std::fs::read_dir(dir).map_err(OpError::from)? {
        let entry = entry.map_err(OpError::from)?;
        if entry.file_name() == RUN_MARKER {
            continue;
        }
        let is_dir = entry.file_type().map_err(OpError::from)?.is_dir();
        gone_ok(if is_dir {
            std::fs::remove_dir_all(entry.path())
        } else {
            std::fs::remove_file(entry.path())
        })?;
    }
    gone_ok(std::fs::remove_file(dir.join(RUN_MARKER)))?;
    gone_ok(std::fs::remove_dir(dir))
}

/// Whether `dir` is a run directory dfsbench made: its name starts with `dfsbench-`, it is a
/// directory (not a link to one) and it holds a marker naming it.
pub(crate) fn check_run_dir(dir: &Path) -> Result<(), OpError> {
    let name = dir
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| OpError::new("EINVAL", format!("{} is not a run directory", dir.display())))?;
    let refuse = |why: &str| {
        OpError::new(
            "refused",
            format!(
                "refusing to remove {}: {why}; dfsbench only removes run directories it created",
                dir.display()
            ),
        )
    };
    if !name.starts_with(RUN_PREFIX) {
        return Err(refuse("its name does not start with 'dfsbench-'"));
    }
    let meta = std::fs::symlink_metadata(dir).map_err(|e| {
        let e = OpError::from(e);
        OpError::new(e.kind, format!("cannot remove {}: {}", dir.display(), e.message))
    })?;
    if !meta.is_dir() {
        return Err(refuse("it is not a directory"));
    }
    match std::fs::read_to_string(dir.join(RUN_MARKER)) {
        Ok(content) if content.trim() == name => {}
        Ok(_) => return Err(refuse("its marker file names another run")),
        Err(_) => return Err(refuse("it has no .dfsbench-run marker")),
    }
    Ok(())
}

/// The file system type of an open file, for result files.
fn fs_type_name(fd: RawFd) -> String {
    // SAFETY: statfs is plain old data; fstatfs fills it.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstatfs(fd, &mut st) } != 0 {
        return "unknown".into();
    }
    let name = match st.f_type as i64 {
        0xEF53 => "ext4",
        0x0102_1994 => "tmpfs",
        0x5846_5342 => "xfs",
        0x9123_683E => "btrfs",
        0x6969 => "nfs",
        0x6573_5546 => "fuse",
        0x00C3_6400 => "ceph",
        0x0BD0_0BD0 => "lustre",
        0x794C_7630 => "overlayfs",
        0x2FC1_2FC1 => "zfs",
        0xFF53_4D42 | 0xFE53_4D42 => "cifs/smb",
        0x0027_E0EB => "cgroup",
        0x6A65_6A62 => "9p",
        _ => return format!("0x{:x}", st.f_type),
    };
    name.into()
}

impl Storage for PosixStorage {
    type Client = PosixClient;

    fn capabilities(&self) -> Capabilities {
        match self.device {
            Some(_) => device::CAPABILITIES,
            None => CAPABILITIES,
        }
    }

    fn info(&self) -> TargetInfo {
        let mut details = BTreeMap::new();
        details.insert("fs_type".into(), self.fs_type.clone());
        if let Some(d) = &self.device {
            details.insert("device_bytes".into(), d.bytes.to_string());
        }
        TargetInfo {
            uri: self.uri.clone(),
            backend: if self.device.is_some() { DEVICE_BACKEND } else { "posix" }.into(),
            run_path: self.run_dir.display().to_string(),
            capabilities: self.capabilities(),
            details,
        }
    }

    fn client(&self, _worker: usize, _queue_depth: usize) -> OpResult<PosixClient> {
        Ok(PosixClient {
            dir: self.run_fd.clone(),
            device: self.device.clone(),
            path: Vec::with_capacity(256),
            path2: Vec::with_capacity(256),
        })
    }

    fn write_back(&self) -> bool {
        // syncfs writes back and waits for every dirty page of the file system's inodes (the
        // VFS does that part for every file system, FUSE and NFS included). A device's pages
        // are not on the run directory's file system.
        // SAFETY: run_fd is an open directory of the file system the run writes to.
        self.device.is_none() && unsafe { libc::syncfs(self.run_fd.as_raw_fd()) } == 0
    }

    fn beside(&self) -> Option<Box<dyn crate::Beside + '_>> {
        // A device's parent is /dev or like it: nothing is kept there.
        let parent = self.run_dir.parent().filter(|_| self.device.is_none())?;
        let parent = std::fs::canonicalize(parent).unwrap_or_else(|_| parent.to_path_buf());
        Some(Box::new(beside::PosixBeside { parent }))
    }

    fn remove_run(&self) -> OpResult<()> {
        if self.device.is_some() {
            // The run made nothing on the device.
            return Ok(());
        }
        debug_assert!(self.run_dir.ends_with(&self.run_name));
        remove_run_dir(&self.run_dir)
    }
}

/// One worker's view of a [`PosixStorage`].
pub struct PosixClient {
    dir: Arc<OwnedFd>,
    /// The device every path names, on a device target.
    device: Option<Arc<Device>>,
    path: Vec<u8>,
    path2: Vec<u8>,
}

/// Refuse a path outside the run directory: only [`PosixClient::open`] takes one (a device
/// that holds no data); no other call may make, stat, rename or remove anything there.
fn inside(path: &str) -> OpResult<()> {
    if path.starts_with('/') {
        return Err(OpError::new(
            "EPERM",
            format!("{path}: dfsbench makes, renames and removes nothing outside its run directory"),
        ));
    }
    Ok(())
}

/// Write `path` and a terminating NUL into `buf` and return a C string pointer into it.
fn c_path(buf: &mut Vec<u8>, path: &str) -> *const libc::c_char {
    debug_assert!(!path.as_bytes().contains(&0));
    buf.clear();
    buf.extend_from_slice(path.as_bytes());
    buf.push(0);
    buf.as_ptr().cast()
}

fn check(ret: libc::c_int) -> OpResult<libc::c_int> {
    if ret < 0 {
        Err(OpError::last_os_error())
    } else {
        Ok(ret)
    }
}

/// The end of an open file: its length, and a block device's size.
fn end_of(fd: RawFd) -> OpResult<u64> {
    // SAFETY: lseek on an open descriptor; positional I/O does not use the position.
    let end = unsafe { libc::lseek(fd, 0, libc::SEEK_END) };
    if end < 0 {
        return Err(OpError::last_os_error());
    }
    Ok(end as u64)
}

/// A time limit as the C calls take it (aio_suspend, io_getevents).
fn timespec(t: std::time::Duration) -> libc::timespec {
    libc::timespec {
        tv_sec: t.as_secs() as libc::time_t,
        tv_nsec: t.subsec_nanos() as libc::c_long,
    }
}

fn close(fd: RawFd) -> OpResult<()> {
    // SAFETY: fd is open and owned by the caller, which never uses it again.
    check(unsafe { libc::close(fd) }).map(|_| ())
}

impl PosixClient {
    fn dirfd(&self) -> RawFd {
        self.dir.as_raw_fd()
    }

    fn open(&mut self, path: &str, flags: libc::c_int) -> OpResult<RawFd> {
        if let Some(d) = &self.device {
            return d.open_with(flags);
        }
        // Nothing outside the run directory, but a device that holds no data (a fio job's
        // filename=/dev/null, which --overwrite-device named).
        if path.starts_with('/') && !is_dataless_char_device(Path::new(path)) {
            return Err(OpError::new(
                "EPERM",
                format!(
                    "{path}: dfsbench opens nothing outside its run directory but /dev/null, /dev/zero and /dev/full"
                ),
            ));
        }
        let p = c_path(&mut self.path, path);
        // SAFETY: p points at a NUL-terminated string in self.path.
        check(unsafe { libc::openat(self.dirfd(), p, flags | libc::O_CLOEXEC, 0o644) })
    }
}

/// Write all of `data` at the file's current position.
fn write_all(fd: RawFd, mut data: &[u8]) -> OpResult<()> {
    while !data.is_empty() {
        // SAFETY: data is a valid slice.
        let n = unsafe { libc::write(fd, data.as_ptr().cast(), data.len()) };
        if n < 0 {
            let e = OpError::last_os_error();
            if e.kind == "EINTR" {
                continue;
            }
            return Err(e);
        }
        if n == 0 {
            return Err(OpError::new("EIO", "write returned 0 bytes"));
        }
        data = &data[n as usize..];
    }
    Ok(())
}

/// Read into `buf` until it is full or the file ends; returns the bytes read.
fn read_full(fd: RawFd, buf: &mut [u8]) -> OpResult<usize> {
    let mut got = 0;
    while got < buf.len() {
        // SAFETY: the destination is the unfilled tail of buf.
        let n = unsafe { libc::read(fd, buf[got..].as_mut_ptr().cast(), buf.len() - got) };
        if n < 0 {
            let e = OpError::last_os_error();
            if e.kind == "EINTR" {
                continue;
            }
            return Err(e);
        }
        if n == 0 {
            break;
        }
        got += n as usize;
    }
    Ok(got)
}

/// O_DIRECT needs sizes in whole sectors: drop it for a file's unaligned tail, as fio does.
fn clear_direct(fd: RawFd) -> OpResult<()> {
    // SAFETY: fcntl on an open descriptor.
    let flags = check(unsafe { libc::fcntl(fd, libc::F_GETFL) })?;
    check(unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_DIRECT) }).map(|_| ())
}

const SECTOR: usize = 512;

/// Write back a file's dirty pages and drop its clean ones from the page cache: fadvise drops
/// only clean pages, so the fsync must come first (fio's `invalidate=1` does the same).
fn drop_cached_pages(fd: RawFd) -> OpResult<()> {
    // SAFETY: fd is open.
    check(unsafe { libc::fsync(fd) })?;
    drop_clean_pages(fd)
}

/// Drop the clean cached pages of `fd` (dirty ones stay: write them back first).
fn drop_clean_pages(fd: RawFd) -> OpResult<()> {
    // posix_fadvise returns the error number instead of setting errno.
    let err = unsafe { libc::posix_fadvise(fd, 0, 0, libc::POSIX_FADV_DONTNEED) };
    if err != 0 {
        return Err(OpError::from_errno(err));
    }
    Ok(())
}

impl Client for PosixClient {
    type Block = PosixBlock;

    async fn mkdir(&mut self, path: &str) -> OpResult<()> {
        if self.device.is_some() {
            // The job's directory is the device itself: nothing to make.
            return Ok(());
        }
        inside(path)?;
        let p = c_path(&mut self.path, path);
        // SAFETY: p is NUL-terminated.
        check(unsafe { libc::mkdirat(self.dirfd(), p, 0o755) }).map(|_| ())
    }

    async fn rmdir(&mut self, path: &str) -> OpResult<()> {
        if self.device.is_some() {
            return Ok(());
        }
        inside(path)?;
        let p = c_path(&mut self.path, path);
        // SAFETY: p is NUL-terminated.
        check(unsafe { libc::unlinkat(self.dirfd(), p, libc::AT_REMOVEDIR) }).map(|_| ())
    }

    async fn create(&mut self, path: &str) -> OpResult<()> {
        if self.device.is_some() {
            return Err(device::no_names("create"));
        }
        inside(path)?;
        let fd = self.open(path, libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY)?;
        close(fd)
    }

    async fn stat(&mut self, path: &str) -> OpResult<u64> {
        if let Some(d) = &self.device {
            return Ok(d.bytes);
        }
        inside(path)?;
        let p = c_path(&mut self.path, path);
        // SAFETY: st is plain old data filled by fstatat; p is NUL-terminated.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        check(unsafe { libc::fstatat(self.dirfd(), p, &mut st, 0) })?;
        Ok(st.st_size as u64)
    }

    async fn open_close(&mut self, path: &str) -> OpResult<()> {
        let fd = self.open(path, libc::O_RDONLY)?;
        close(fd)
    }

    async fn rename(&mut self, from: &str, to: &str) -> OpResult<()> {
        if self.device.is_some() {
            return Err(device::no_names("rename"));
        }
        inside(from)?;
        inside(to)?;
        let a = c_path(&mut self.path, from);
        let b = c_path(&mut self.path2, to);
        let d = self.dirfd();
        // SAFETY: both paths are NUL-terminated and live in separate buffers.
        check(unsafe { libc::renameat(d, a, d, b) }).map(|_| ())
    }

    async fn list(&mut self, dir: &str) -> OpResult<u64> {
        if self.device.is_some() {
            return Err(device::no_names("list"));
        }
        let fd = self.open(dir, libc::O_RDONLY | libc::O_DIRECTORY)?;
        // SAFETY: fdopendir takes ownership of fd; closedir closes it.
        let d = unsafe { libc::fdopendir(fd) };
        if d.is_null() {
            let e = OpError::last_os_error();
            close(fd)?;
            return Err(e);
        }
        let mut entries = 0u64;
        loop {
            // SAFETY: d is an open DIR stream. errno tells an error from the end.
            unsafe { *libc::__errno_location() = 0 };
            let ent = unsafe { libc::readdir64(d) };
            if ent.is_null() {
                let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
                unsafe { libc::closedir(d) };
                if errno != 0 {
                    return Err(OpError::from_errno(errno));
                }
                return Ok(entries);
            }
            // SAFETY: d_name is NUL-terminated.
            let name = unsafe { std::ffi::CStr::from_ptr((*ent).d_name.as_ptr()) }.to_bytes();
            if name != b"." && name != b".." {
                entries += 1;
            }
        }
    }

    async fn delete(&mut self, path: &str) -> OpResult<()> {
        if self.device.is_some() {
            // Nothing on a device is the run's to remove.
            return Ok(());
        }
        inside(path)?;
        let p = c_path(&mut self.path, path);
        // SAFETY: p is NUL-terminated.
        check(unsafe { libc::unlinkat(self.dirfd(), p, 0) }).map(|_| ())
    }

    async fn write_file(&mut self, path: &str, size: u64, opts: FileOpts, mut src: Source<'_>) -> OpResult<()> {
        let direct = if opts.direct { libc::O_DIRECT } else { 0 };
        let fd = self.open(path, libc::O_CREAT | libc::O_TRUNC | libc::O_WRONLY | direct)?;
        let result = (|| {
            let mut off = 0u64;
            let mut direct_on = opts.direct;
            while off < size {
                let len = (size - off).min(src.chunk_len() as u64) as usize;
                let chunk = src.chunk(off, len);
                if direct_on && !len.is_multiple_of(SECTOR) {
                    clear_direct(fd)?;
                    direct_on = false;
                }
                write_all(fd, chunk)?;
                off += len as u64;
            }
            if opts.fsync {
                // SAFETY: fd is open.
                check(unsafe { libc::fsync(fd) })?;
            }
            Ok(())
        })();
        let closed = close(fd);
        result.and(closed)
    }

    async fn read_file(
        &mut self,
        path: &str,
        opts: FileOpts,
        buf: &mut AlignedBuf,
        mut check: Option<Check<'_>>,
    ) -> OpResult<FileRead> {
        let direct = if opts.direct { libc::O_DIRECT } else { 0 };
        let fd = self.open(path, libc::O_RDONLY | direct)?;
        let result = (|| {
            let mut read = FileRead::default();
            loop {
                let n = read_full(fd, buf)?;
                if n == 0 {
                    return Ok(read);
                }
                if read.first_byte.is_none() {
                    read.first_byte = Some(crate::clock::Instant::now());
                }
                if let Some(c) = check.as_deref_mut() {
                    c(&buf[..n], read.bytes);
                }
                read.bytes += n as u64;
                if n < buf.len() {
                    return Ok(read);
                }
            }
        })();
        let closed = close(fd);
        result.and_then(|r| closed.map(|_| r))
    }

    async fn invalidate(&mut self, path: &str) -> OpResult<()> {
        // Read-only is enough for both calls; a write-only or unreadable file fails here.
        let fd = self.open(path, libc::O_RDONLY)?;
        let result = drop_cached_pages(fd);
        let closed = close(fd);
        result.and(closed)
    }

    async fn invalidate_clean(&mut self, path: &str) -> OpResult<()> {
        let fd = self.open(path, libc::O_RDONLY)?;
        let result = drop_clean_pages(fd);
        let closed = close(fd);
        result.and(closed)
    }

    async fn open_block(&mut self, path: &str, opts: BlockOpts) -> OpResult<PosixBlock> {
        let mut flags = libc::O_RDWR;
        if opts.create {
            flags |= libc::O_CREAT;
        }
        if opts.direct {
            flags |= libc::O_DIRECT;
        }
        let fd = self.open(path, flags)?;
        // SAFETY: fd was just opened and is owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        // As fio's fadvise_hint: without it, every random read that misses the page cache
        // also reads ahead, and later reads find those blocks cached.
        let advice = if opts.random {
            libc::POSIX_FADV_RANDOM
        } else {
            libc::POSIX_FADV_SEQUENTIAL
        };
        // SAFETY: fd is open. The advice only tunes readahead: a refusal changes no result.
        unsafe { libc::posix_fadvise(fd.as_raw_fd(), 0, 0, advice) };
        PosixBlock::new(fd, opts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::block_on;

    #[test]
    fn nothing_outside_the_run_directory_is_made_stated_renamed_or_removed() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("theirs");
        std::fs::write(&outside, b"not the run's").unwrap();
        let theirs = outside.to_str().unwrap();
        let s = PosixStorage::create_run("t", dir.path(), "dfsbench-test").unwrap();
        let mut c = s.client(0, 1).unwrap();
        let gone = dir.path().join("gone");
        let gone = gone.to_str().unwrap();
        let refused = [
            block_on(c.delete(theirs)).unwrap_err(),
            block_on(c.rename(theirs, gone)).unwrap_err(),
            block_on(c.rename("mine", theirs)).unwrap_err(),
            block_on(c.rmdir(dir.path().to_str().unwrap())).unwrap_err(),
            block_on(c.mkdir(gone)).unwrap_err(),
            block_on(c.create(gone)).unwrap_err(),
            block_on(c.stat(theirs)).unwrap_err(),
            block_on(c.open_close(theirs)).unwrap_err(),
        ];
        for e in refused {
            assert_eq!(e.kind, "EPERM", "{}", e.message);
        }
        assert_eq!(std::fs::read(&outside).unwrap(), b"not the run's");
        assert!(!Path::new(gone).exists());
        // Within the run directory the same calls work.
        block_on(c.create("mine")).unwrap();
        block_on(c.rename("mine", "yours")).unwrap();
        assert_eq!(block_on(c.stat("yours")).unwrap(), 0);
        block_on(c.delete("yours")).unwrap();
    }
}
