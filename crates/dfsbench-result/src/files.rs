//! Files the user names: read only regular files of a bounded size, and write results so that
//! a crash leaves the old file or the new one, never touching a file of another name.

use std::io::{Read as _, Write as _};
use std::os::unix::fs::PermissionsExt as _;
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

/// Write `bytes` to `path` through a uniquely named temporary file in the same directory,
/// renamed over `path` when complete: readers see the old file or the new one, and no other
/// file is ever touched. Missing parent directories are made.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
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
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_data()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
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
        write_atomically(&target, b"one").unwrap();
        write_atomically(&target, b"two").unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "two");
        assert_eq!(std::fs::read_to_string(&bystander).unwrap(), "mine");
        let names: Vec<_> = std::fs::read_dir(dir.path().join("sub"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["user.txt"], "no temporary file left");
    }
}
