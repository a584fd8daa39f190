//! The lab's one error type.

/// A lab failure, one line each: what the user asked for is wrong (an unknown system, layout,
/// node or delay: the CLI exits with 2), or the lab could not do it (a command failed, a
/// daemon did not come up: exit 1).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Runtime(String),
}

impl Error {
    pub(crate) fn usage(message: String) -> Error {
        Error::Usage(message)
    }
    pub(crate) fn runtime(message: String) -> Error {
        Error::Runtime(message)
    }
    /// True when the user's input was wrong, not the lab.
    pub fn is_usage(&self) -> bool {
        matches!(self, Error::Usage(_))
    }
}

pub type Result<T> = std::result::Result<T, Error>;
