//! Errors of storage operations, classified into stable kinds that results count by.

use std::fmt;

/// A failed storage operation. `kind` is a short stable name (`ENOENT`, `ENOSPC`,
/// `unsupported`, ...) that results are grouped by; `message` is for people.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpError {
    pub kind: &'static str,
    pub message: String,
}

impl OpError {
    pub fn new(kind: &'static str, message: impl Into<String>) -> Self {
        OpError {
            kind,
            message: message.into(),
        }
    }

    /// An error from an OS error number.
    pub fn from_errno(errno: i32) -> Self {
        let io = std::io::Error::from_raw_os_error(errno);
        OpError::new(errno_name(errno), io.to_string())
    }

    /// The error of the last failed libc call on this thread.
    pub fn last_os_error() -> Self {
        Self::from_errno(std::io::Error::last_os_error().raw_os_error().unwrap_or(0))
    }

    pub fn unsupported(what: &str) -> Self {
        OpError::new("unsupported", format!("{what} is not supported by this backend"))
    }

    /// True for errors that mean the storage is full.
    pub fn is_no_space(&self) -> bool {
        matches!(self.kind, "ENOSPC" | "EDQUOT")
    }
}

impl fmt::Display for OpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.kind)
    }
}

impl std::error::Error for OpError {}

impl From<std::io::Error> for OpError {
    fn from(e: std::io::Error) -> Self {
        match e.raw_os_error() {
            Some(errno) => OpError::from_errno(errno),
            None => OpError::new("io", e.to_string()),
        }
    }
}

/// The symbolic name of the errno values a storage benchmark meets.
pub fn errno_name(errno: i32) -> &'static str {
    match errno {
        libc::EPERM => "EPERM",
        libc::ENOENT => "ENOENT",
        libc::EIO => "EIO",
        libc::ENXIO => "ENXIO",
        libc::EBADF => "EBADF",
        libc::EAGAIN => "EAGAIN",
        libc::ENOMEM => "ENOMEM",
        libc::EACCES => "EACCES",
        libc::EBUSY => "EBUSY",
        libc::EEXIST => "EEXIST",
        libc::EXDEV => "EXDEV",
        libc::ENOTDIR => "ENOTDIR",
        libc::EISDIR => "EISDIR",
        libc::EINVAL => "EINVAL",
        libc::EMFILE => "EMFILE",
        libc::ENFILE => "ENFILE",
        libc::EFBIG => "EFBIG",
        libc::ENOSPC => "ENOSPC",
        libc::EROFS => "EROFS",
        libc::EMLINK => "EMLINK",
        libc::ENAMETOOLONG => "ENAMETOOLONG",
        libc::ENOSYS => "ENOSYS",
        libc::ENOTEMPTY => "ENOTEMPTY",
        libc::ELOOP => "ELOOP",
        libc::ENODATA => "ENODATA",
        libc::ETIME => "ETIME",
        libc::ENOLINK => "ENOLINK",
        libc::EOPNOTSUPP => "EOPNOTSUPP",
        libc::ENOTCONN => "ENOTCONN",
        libc::ETIMEDOUT => "ETIMEDOUT",
        libc::ECONNREFUSED => "ECONNREFUSED",
        libc::EHOSTDOWN => "EHOSTDOWN",
        libc::EHOSTUNREACH => "EHOSTUNREACH",
        libc::ESTALE => "ESTALE",
        libc::EDQUOT => "EDQUOT",
        libc::ECANCELED => "ECANCELED",
        libc::EINTR => "EINTR",
        _ => "errno",
    }
}
