//! A block device as the target, for fio's `filename=/dev/...` (`--overwrite-device`).
//!
//! The device is the one file of the run: every path an io job names is the device itself,
//! at the offsets the job gives. dfsbench makes nothing on it and removes nothing from it, and
//! only a run whose user named the device in `--overwrite-device` opens one.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

use crate::storage::{Capabilities, OpResult};
use crate::OpError;

/// What a block device offers: positional I/O on one file, no names.
pub(crate) const CAPABILITIES: Capabilities = Capabilities {
    directories: false,
    rename: false,
    append: false,
    ranged_read: true,
    positional_write: true,
    fsync: true,
    direct_io: true,
    page_cache: true,
    drive: crate::Drive::Blocking,
};

/// The backend name a device target reports.
pub const BACKEND: &str = "device";

/// The open device of a run.
pub(crate) struct Device {
    /// The device's path, for every open.
    pub(crate) path: CString,
    /// Its size in bytes.
    pub(crate) bytes: u64,
}

/// Whether `path` is a block device (following links, as an open does).
pub fn is_block_device(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.file_type().is_block_device())
}

/// Whether `path` is a character device that holds no data, which a write cannot harm: the
/// kernel's null, zero and full devices (major 1, minors 3, 5 and 7), through any node of
/// them (fio's `filename=/dev/null`). Other character devices (SCSI generic, memory, ...) are
/// not: a write to them is a command.
pub fn is_dataless_char_device(path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).is_ok_and(|m| {
        let rdev = m.rdev();
        m.file_type().is_char_device() && libc::major(rdev) == 1 && matches!(libc::minor(rdev), 3 | 5 | 7)
    })
}

impl Device {
    /// Open the block device at `path` and read its size; returns it with a descriptor kept
    /// open for the run.
    pub(crate) fn open(path: &Path) -> Result<(Device, OwnedFd), OpError> {
        if !is_block_device(path) {
            return Err(OpError::new(
                "ENOTBLK",
                format!(
                    "{} is not a block device: --overwrite-device names a block device",
                    path.display()
                ),
            ));
        }
        let c = CString::new(path.as_os_str().as_bytes())
            .map_err(|_| OpError::new("EINVAL", format!("path {} contains a NUL byte", path.display())))?;
        // SAFETY: c is a valid C string.
        let fd = unsafe { libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
        if fd < 0 {
            let e = OpError::last_os_error();
            return Err(OpError::new(
                e.kind,
                format!("cannot open {}: {}", path.display(), e.message),
            ));
        }
        // SAFETY: fd was just opened and is owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let bytes = super::end_of(fd.as_raw_fd())?;
        Ok((Device { path: c, bytes }, fd))
    }

    /// Open the device with `flags`: never created, truncated or made exclusively, whatever
    /// the caller asked for a file.
    pub(crate) fn open_with(&self, flags: libc::c_int) -> OpResult<libc::c_int> {
        let flags = flags & !(libc::O_CREAT | libc::O_EXCL | libc::O_TRUNC | libc::O_DIRECTORY);
        // SAFETY: path is a valid C string.
        super::check(unsafe { libc::open(self.path.as_ptr(), flags | libc::O_CLOEXEC) })
    }
}

/// The error of a call that needs names on a device.
pub(crate) fn no_names(what: &str) -> OpError {
    OpError::new(
        "EOPNOTSUPP",
        format!("a block device holds no files to {what}: only io jobs run on a device"),
    )
}
