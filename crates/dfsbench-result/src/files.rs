//! Files the user names: read only regular files of a bounded size; write outputs so that a
//! crash leaves the old file or the new one, and nothing the run did not create is replaced.

use std::io::{Read as _, Write as _};
use std::os::unix::fs::{FileTypeExt as _, MetadataExt as _, OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

/// The largest result file read: a result holds a histogram per phase and kind of operation,
/// a few MiB for thousands of phases.
pub const MAX_RESULT_FILE: u64 = 256 << 20;

/// Why a file the user named cannot be read: one line naming the file.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// It does not exist, or the system refused to read it.
    #[error("cannot read {}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{} is a directory: give a file", path.display())]
    Directory { path: PathBuf },
    #[error("{} is not a regular file (a FIFO, socket or device): give a file", path.display())]
    NotRegular { path: PathBuf },
    #[error("{} is larger than {} MiB: this is not a file dfsbench wrote", path.display(), limit >> 20)]
    TooLarge { path: PathBuf, limit: u64 },
}

impl ReadError {
    /// The system's error reading `path`.
    pub fn io(path: &Path, source: std::io::Error) -> Self {
        ReadError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// The content of `path` if it is a regular file of at most `limit` bytes; else why not.
/// FIFOs and devices are refused before they are opened (a FIFO blocks the open, `/dev/zero`
/// never ends).
pub fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    let meta = std::fs::metadata(path).map_err(|e| ReadError::io(path, e))?;
    if meta.is_dir() {
        return Err(ReadError::Directory { path: path.into() });
    }
    if !meta.is_file() {
        return Err(ReadError::NotRegular { path: path.into() });
    }
    let too_big = || ReadError::TooLarge {
        path: path.into(),
        limit,
    };
    if meta.len() > limit {
        return Err(too_big());
    }
    let file = std::fs::File::open(path).map_err(|e| ReadError::io(path, e))?;
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    // The file may grow after the check: never read past the limit.
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| ReadError::io(path, e))?;
    if bytes.len() as u64 > limit {
        return Err(too_big());
    }
    Ok(bytes)
}

/// How an output path is written (see [`write_output`]).
#[derive(Debug)]
pub enum OutputPath {
    /// Nothing is there yet (`old` is `None`) or a regular file: written to a temporary file
    /// beside it and renamed over it.
    Replace {
        path: PathBuf,
        old: Option<std::fs::Metadata>,
    },
    /// A FIFO or a character device, or a file behind a descriptor (`/dev/stdout`): written
    /// through, never renamed over or truncated.
    Through { path: PathBuf },
}

/// Why [`write_output`] refuses a path: one line naming what is there and what to give.
fn refused(what: &str) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!("it is {what}: give a regular file, a new path, a FIFO or a character device"),
    )
}

/// How `path` would be written, or why it cannot be: a run checks its output path with this
/// before it starts, not after an hour of measuring.
pub fn output_path(path: &Path) -> std::io::Result<OutputPath> {
    let (real, behind_descriptor) = resolve_links(path)?;
    let meta = match std::fs::metadata(&real) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(OutputPath::Replace { path: real, old: None }),
        Err(e) => return Err(e),
    };
    let kind = meta.file_type();
    if kind.is_fifo() || kind.is_char_device() || (behind_descriptor && kind.is_file()) {
        Ok(OutputPath::Through { path: real })
    } else if kind.is_file() {
        Ok(OutputPath::Replace {
            path: real,
            old: Some(meta),
        })
    } else if kind.is_dir() {
        Err(refused("a directory"))
    } else if kind.is_block_device() {
        Err(refused("a block device"))
    } else if kind.is_socket() {
        Err(refused("a socket"))
    } else {
        Err(refused("neither a file nor a device"))
    }
}

/// Write `bytes` to the file the user named, by the one rule every output follows:
/// - a new path or a regular file is written atomically: a uniquely named temporary file in
///   the same directory, synced, then renamed over it (keeping the old file's mode and, for
///   root, its owner), so readers see the old file or the new one;
/// - a symbolic link is followed and its target written that way (a dangling one creates its
///   target, as `>` does);
/// - a FIFO or a character device (`/dev/null`, `/dev/stdout`, a pipe) is written through,
///   never renamed over or truncated; a regular file behind `/dev/stdout` is appended to;
/// - a directory, a block device or a socket is refused.
///
/// Nothing else is touched: no file of another name, no device, no link. Missing parent
/// directories are made.
pub fn write_output(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    match output_path(path)? {
        OutputPath::Replace { path, old } => replace_atomically(&path, bytes, old.as_ref()),
        OutputPath::Through { path } => write_through(&path, bytes),
    }
}

/// The path a chain of symbolic links ends at (which may not exist yet), and whether it ends
/// at a descriptor's link in /proc (`/dev/stdout`), whose target may name no path
/// (`pipe:[123]`).
fn resolve_links(path: &Path) -> std::io::Result<(PathBuf, bool)> {
    let mut current = path.to_path_buf();
    // The kernel's own limit on links followed in one lookup.
    for _ in 0..40 {
        match std::fs::symlink_metadata(&current) {
            Ok(m) if m.file_type().is_symlink() => {
                let parent = match current.parent() {
                    Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                    _ => PathBuf::from("."),
                };
                // `/proc/PID/fd/N` (and a task's): the link is the descriptor, not a path.
                if std::fs::canonicalize(&parent).is_ok_and(|p| p.starts_with("/proc") && p.ends_with("fd")) {
                    return Ok((current, true));
                }
                current = parent.join(std::fs::read_link(&current)?);
            }
            _ => return Ok((current, false)),
        }
    }
    Err(std::io::Error::other("too many levels of symbolic links"))
}

/// Write into what is already there, with neither creation nor truncation: a FIFO's reader or
/// a device gets the bytes as from `>`; a file behind a descriptor as from `>>`.
fn write_through(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .custom_flags(libc::O_NOCTTY)
        .open(path)?;
    file.write_all(bytes)?;
    file.flush()
}

/// Write `bytes` to a temporary file beside `path` and rename it over `path`. `old` is what
/// was at `path` when looked at: its mode (and owner, for root) carry over; `None` means
/// nothing was there, and the rename then refuses to replace what appeared since.
fn replace_atomically(path: &Path, bytes: &[u8], old: Option<&std::fs::Metadata>) -> std::io::Result<()> {
    let dir = match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(d) => {
            std::fs::create_dir_all(d)?;
            d
        }
        None => Path::new("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // 0666 before the umask, as for any file a program creates (tempfile's default is 0600).
    let mode = old.map_or(0o666, |m| m.mode() & 0o777);
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .permissions(std::fs::Permissions::from_mode(mode))
        .tempfile_in(dir)?;
    if let Some(m) = old {
        // The mode exactly, whatever the umask; the owner only where we may set it (root).
        tmp.as_file().set_permissions(std::fs::Permissions::from_mode(mode))?;
        let _ = std::os::unix::fs::fchown(tmp.as_file(), Some(m.uid()), Some(m.gid()));
    }
    tmp.write_all(bytes)?;
    tmp.as_file().sync_data()?;
    match old {
        Some(_) => tmp.persist(path).map(drop).map_err(|e| e.error),
        // Something may have appeared at the path since it was looked at: never replace it.
        None => tmp.persist_noclobber(path).map(drop).map_err(|e| e.error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_what_is_not_a_small_regular_file() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big");
        std::fs::write(&big, vec![b'x'; 2000]).unwrap();
        let err = |p: &Path, limit| read_bounded(p, limit).unwrap_err().to_string();
        assert!(err(&big, 1000).contains("larger than"));
        assert_eq!(read_bounded(&big, 2000).unwrap().len(), 2000);
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(err(&fifo, 1000).contains("not a regular file"));
        assert!(err(Path::new("/dev/zero"), 1000).contains("not a regular file"));
        assert!(err(dir.path(), 1000).contains("is a directory"));
    }

    #[test]
    fn writes_leave_other_files_alone() {
        let dir = tempfile::tempdir().unwrap();
        let bystander = dir.path().join("user.json.tmp");
        std::fs::write(&bystander, "mine").unwrap();
        let target = dir.path().join("sub/user.txt");
        write_output(&target, b"one").unwrap();
        write_output(&target, b"two").unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "two");
        assert_eq!(std::fs::read_to_string(&bystander).unwrap(), "mine");
        let names: Vec<_> = std::fs::read_dir(dir.path().join("sub"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["user.txt"], "no temporary file left");
    }

    fn mknod(path: &Path, kind: libc::mode_t, major: u32, minor: u32) -> bool {
        let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path; the node is made in a test's own directory.
        unsafe { libc::mknod(c.as_ptr(), kind | 0o666, libc::makedev(major, minor)) == 0 }
    }

    fn mkfifo(path: &Path) {
        let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    }

    #[test]
    fn regular_files_and_links_are_replaced_atomically() {
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join("old.json");
        std::fs::write(&old, "old").unwrap();
        std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o600)).unwrap();
        write_output(&old, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&old).unwrap(), "new");
        let mode = std::fs::metadata(&old).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "the replaced file keeps its mode");

        let link = dir.path().join("link");
        std::os::unix::fs::symlink("old.json", &link).unwrap();
        write_output(&link, b"through the link").unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read_to_string(&old).unwrap(), "through the link");

        let dangling = dir.path().join("dangling");
        std::os::unix::fs::symlink(dir.path().join("sub/made.json"), &dangling).unwrap();
        write_output(&dangling, b"made").unwrap();
        assert!(std::fs::symlink_metadata(&dangling).unwrap().file_type().is_symlink());
        assert_eq!(
            std::fs::read_to_string(dir.path().join("sub/made.json")).unwrap(),
            "made"
        );
    }

    #[test]
    fn fifos_and_descriptors_are_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        mkfifo(&fifo);
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(fifo).unwrap())
        };
        write_output(&fifo, b"to the reader").unwrap();
        assert_eq!(reader.join().unwrap(), b"to the reader");
        assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());

        // What `-o /dev/stdout` reaches when stdout is a pipe: /proc/self/fd/N -> pipe:[...].
        let mut ends = [0; 2];
        // SAFETY: two ints for pipe(2) to fill.
        assert_eq!(unsafe { libc::pipe(ends.as_mut_ptr()) }, 0);
        let fd_link = PathBuf::from(format!("/proc/self/fd/{}", ends[1]));
        assert!(matches!(output_path(&fd_link).unwrap(), OutputPath::Through { .. }));
        write_output(&fd_link, b"piped").unwrap();
        // SAFETY: the write end is ours to close; the read end becomes a File that closes it.
        unsafe { libc::close(ends[1]) };
        let mut got = Vec::new();
        // SAFETY: the read end is open and owned by nothing else.
        let mut read_end = unsafe { <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(ends[0]) };
        read_end.read_to_end(&mut got).unwrap();
        assert_eq!(got, b"piped");
    }

    #[test]
    fn devices_stay_devices() {
        let dir = tempfile::tempdir().unwrap();
        let null = dir.path().join("null");
        // A copy of /dev/null (1, 3); mknod needs root.
        if !mknod(&null, libc::S_IFCHR, 1, 3) {
            eprintln!("skipped: mknod needs root");
            return;
        }
        write_output(&null, b"into the void").unwrap();
        let meta = std::fs::symlink_metadata(&null).unwrap();
        assert!(meta.file_type().is_char_device(), "the device is still there");
        assert_eq!(meta.rdev(), libc::makedev(1, 3));
        // Major 240 is for local use: no driver, so even a wrong open could reach no disk.
        let block = dir.path().join("block");
        assert!(mknod(&block, libc::S_IFBLK, 240, 0));
        let err = write_output(&block, b"x").unwrap_err().to_string();
        assert!(err.contains("it is a block device"), "{err}");
        assert!(std::fs::symlink_metadata(&block).unwrap().file_type().is_block_device());
    }

    #[test]
    fn directories_and_sockets_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let err = write_output(dir.path(), b"x").unwrap_err().to_string();
        assert!(err.starts_with("it is a directory: give a regular file"), "{err}");
        let socket = dir.path().join("socket");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        let err = write_output(&socket, b"x").unwrap_err().to_string();
        assert!(err.contains("it is a socket"), "{err}");
        assert!(std::fs::symlink_metadata(&socket).unwrap().file_type().is_socket());
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["socket"], "no temporary file left");
    }
}
