//! Target URIs and the backends behind them.

use std::path::PathBuf;

use crate::mem::MemStorage;
use crate::posix::PosixStorage;
use crate::{Capabilities, OpError};

/// A parsed `--target`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A directory of a mounted file system: `file:///path` or a plain path.
    Posix(PathBuf),
    /// The in-process store: `mem://`.
    Mem,
}

/// A backend this build knows, for `dfsbench targets` and error messages.
pub struct BackendInfo {
    pub name: &'static str,
    pub uri: &'static str,
    pub what: &'static str,
    pub capabilities: Capabilities,
}

pub const BACKENDS: &[BackendInfo] = &[
    BackendInfo {
        name: "posix",
        uri: "file:///path or /path",
        what: "local disk, tmpfs, NFS, CephFS, GlusterFS, Lustre, any FUSE mount",
        capabilities: crate::posix::CAPABILITIES,
    },
    BackendInfo {
        name: "mem",
        uri: "mem://",
        what: "in-process store: the tool's own ceiling",
        capabilities: crate::mem::CAPABILITIES,
    },
];

impl Target {
    pub fn parse(uri: &str) -> Result<Target, OpError> {
        if uri.is_empty() {
            return Err(OpError::new(
                "EINVAL",
                "empty --target: give a directory, file:///path or mem://",
            ));
        }
        if let Some(rest) = uri.strip_prefix("file://") {
            if !rest.starts_with('/') {
                return Err(OpError::new(
                    "EINVAL",
                    format!("target '{uri}' is not an absolute file:// URI: write file:///absolute/path"),
                ));
            }
            return Ok(Target::Posix(PathBuf::from(rest)));
        }
        if uri == "mem://" || uri == "mem:" || uri.starts_with("mem://") {
            return Ok(Target::Mem);
        }
        if let Some((scheme, _)) = uri.split_once("://") {
            let known: Vec<&str> = BACKENDS.iter().map(|b| b.uri).collect();
            return Err(OpError::new(
                "EINVAL",
                format!(
                    "unknown target scheme '{scheme}://' in '{uri}': this build supports {}",
                    known.join(", ")
                ),
            ));
        }
        Ok(Target::Posix(PathBuf::from(uri)))
    }

    /// Create this run's directory in the target and open it.
    pub fn open_run(&self, uri: &str, run_name: &str) -> Result<AnyStorage, OpError> {
        Ok(match self {
            Target::Posix(path) => AnyStorage::Posix(PosixStorage::create_run(uri, path, run_name)?),
            Target::Mem => AnyStorage::Mem(MemStorage::new(uri, run_name)),
        })
    }
}

/// Any backend, dispatched statically with [`with_storage!`](crate::with_storage).
pub enum AnyStorage {
    Posix(PosixStorage),
    Mem(MemStorage),
}

/// Run `$body` with `$s` bound to the concrete storage inside an [`AnyStorage`], so generic
/// code is monomorphised per backend and the hot loop has no dynamic dispatch.
#[macro_export]
macro_rules! with_storage {
    ($any:expr, $s:ident => $body:expr) => {
        match $any {
            $crate::AnyStorage::Posix($s) => $body,
            $crate::AnyStorage::Mem($s) => $body,
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_targets() {
        assert_eq!(Target::parse("/tmp/x").unwrap(), Target::Posix("/tmp/x".into()));
        assert_eq!(Target::parse("file:///mnt/a").unwrap(), Target::Posix("/mnt/a".into()));
        assert_eq!(Target::parse("mem://").unwrap(), Target::Mem);
        assert_eq!(Target::parse("rel/dir").unwrap(), Target::Posix("rel/dir".into()));
        let e = Target::parse("gopher://x").unwrap_err();
        assert!(e.message.contains("unknown target scheme 'gopher://'"), "{e}");
        assert!(Target::parse("file://relative").is_err());
    }
}
