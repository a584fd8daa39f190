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

/// The longest cause quoted in a one-line message; the full text is kept for `--verbose`.
const MAX_CAUSE: usize = 160;

/// The root cause inside a long error text, for a one-line message: client libraries put the
/// operation, its context (URLs, HTTP response headers) and then the causes, innermost last.
pub(crate) fn short_cause(message: &str) -> String {
    let line = message.lines().next().unwrap_or_default();
    let tail = [" source: ", " => "]
        .iter()
        .find_map(|sep| line.rfind(sep).map(|i| &line[i + sep.len()..]))
        .unwrap_or(line)
        .trim();
    if tail.chars().count() <= MAX_CAUSE {
        return tail.to_string();
    }
    // Keep the innermost causes: the end of the chain says what really happened.
    let start = tail.char_indices().rev().nth(MAX_CAUSE - 1).map_or(0, |(i, _)| i);
    let cut = &tail[start..];
    let cut = cut.find(": ").map_or(cut, |i| &cut[i + 2..]);
    format!("...{cut}")
}

/// `text` on one line: newlines and other control characters that a user's input may carry
/// into a message are written as escapes (`\n`), so every error stays one line.
pub fn one_line(text: &str) -> String {
    if !text.chars().any(char::is_control) {
        return text.to_string();
    }
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_debug().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

static DETAIL: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

/// Keep the full text of an error shortened for its message, for `--verbose` to print.
pub(crate) fn keep_detail(full: &str) {
    *DETAIL.lock().unwrap_or_else(|e| e.into_inner()) = Some(full.to_string());
}

/// The full text of the last error shortened for a message, if any.
pub fn take_detail() -> Option<String> {
    DETAIL.lock().unwrap_or_else(|e| e.into_inner()).take()
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
pub(crate) fn errno_name(errno: i32) -> &'static str {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_causes_keep_the_innermost_cause() {
        let refused = "Unexpected (temporary) at stat, context: { url: http://h:1/x/, service: webdav } => send http request, source: error sending request for url (http://h:1/x/): client error (Connect): tcp connect error: Connection refused (os error 111)";
        let c = short_cause(refused);
        assert!(c.ends_with("Connection refused (os error 111)"), "{c}");
        assert!(!c.contains("context"), "{c}");
        assert!(c.chars().count() <= MAX_CAUSE + 3, "{c}");
        let headers = format!(
            "Unexpected at read, context: {{ response: Parts {{ headers: {{{}}} }} }} => S3Error {{ code: \"SlowDown\" }}",
            "\"x-amz-id\": \"abc\", ".repeat(60)
        );
        assert_eq!(short_cause(&headers), "S3Error { code: \"SlowDown\" }");
        assert_eq!(short_cause("plain"), "plain");
    }
}
