//! Files the user names: read only regular files of a bounded size, and write results so that
//! a crash leaves the old file or the new one, never touching a file of another name.

use std::io::{Read as _, Write as _};
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

/// The largest result file read: a result holds a histogram per phase and kind of operation,
/// a few MiB for thousands of phases.
pub const MAX_RESULT_FILE: u64 = 256 << 20;

/// The content of `path` if it is a regular file of at most `limit` bytes; else one line that
/// says why not. FIFOs and devices are refused before they are opened (a FIFO blocks the
/// open, `/dev/zero` never ends).
pub fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if meta.is_dir() {
        return Err(format!("{} is a directory: give a file", path.display()));
    }
    if !meta.is_file() {
        return Err(format!(
            "{} is not a regular file (a FIFO, socket or device): give a file",
            path.display()
        ));
    }
    let too_big = || {
        format!(
            "{} is larger than {} MiB: this is not a file dfsbench wrote",
            path.display(),
            limit >> 20
        )
    };
    if meta.len() > limit {
        return Err(too_big());
    }
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    // The file may grow after the check: never read past the limit.
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
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
        assert!(read_bounded(&big, 1000).unwrap_err().contains("larger than"));
        assert_eq!(read_bounded(&big, 2000).unwrap().len(), 2000);
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(read_bounded(&fifo, 1000).unwrap_err().contains("not a regular file"));
        assert!(read_bounded(Path::new("/dev/zero"), 1000)
            .unwrap_err()
            .contains("not a regular file"));
        assert!(read_bounded(dir.path(), 1000).unwrap_err().contains("is a directory"));
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
