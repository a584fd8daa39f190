//! Target URIs and the backends behind them.

use std::path::PathBuf;

use crate::dal::{DalStorage, NetOptions, Spec, SCHEMES};
use crate::mem::{MemOptions, MemStorage};
use crate::posix::PosixStorage;
use crate::{Capabilities, Capability, OpError};

/// A parsed `--target`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A directory of a mounted file system: `file:///path` or a plain path.
    Posix(PathBuf),
    /// The in-process store: `mem://`, with an injected per-call latency (`mem://?latency=2ms`)
    /// and a capacity (`mem://?size=4g`).
    Mem(MemOptions),
    /// An object store, HDFS or HTTP file service: `s3://`, `swift://`, `hdfs://`, ...
    Net(Box<Spec>),
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
        name: crate::posix::DEVICE_BACKEND,
        uri: "/dev/NAME",
        what: "a block device, with --overwrite-device /dev/NAME: io jobs overwrite it (fio's filename=/dev/...)",
        capabilities: crate::posix::DEVICE_CAPABILITIES,
    },
    BackendInfo {
        name: "mem",
        uri: "mem://?size=4g",
        what: "in-process store of a capacity (default half the free memory): the tool's own ceiling, or a slow server with ?latency=2ms",
        capabilities: crate::mem::CAPABILITIES,
    },
    BackendInfo {
        name: "s3",
        uri: "s3://bucket/prefix",
        what: "AWS S3, MinIO, Ceph RGW, SeaweedFS, Swift s3api (?endpoint=&region=)",
        capabilities: OBJECT_STORE,
    },
    BackendInfo {
        name: "swift",
        uri: "swift://container/prefix",
        what: "OpenStack Swift, native API (tempauth or Keystone from ST_*/OS_*)",
        capabilities: OBJECT_STORE,
    },
    BackendInfo {
        name: "hdfs",
        uri: "hdfs://namenode:port/path",
        what: "HDFS over its native RPC protocol (no JVM)",
        capabilities: FILE_SERVICE,
    },
    BackendInfo {
        name: "webhdfs",
        uri: "webhdfs://namenode:port/path",
        what: "HDFS through the NameNode's REST API",
        capabilities: Capabilities {
            rename: false,
            ..FILE_SERVICE
        },
    },
    BackendInfo {
        name: "webdav",
        uri: "webdav[s]://host:port/path",
        what: "WebDAV servers (Apache mod_dav, nginx, ownCloud, ...)",
        capabilities: FILE_SERVICE,
    },
    BackendInfo {
        name: "alluxio",
        uri: "alluxio://proxy:port/path",
        what: "Alluxio through its REST proxy",
        capabilities: FILE_SERVICE,
    },
];

/// Object stores: flat namespaces, whole-object writes, ranged reads.
const OBJECT_STORE: Capabilities = Capabilities {
    directories: false,
    rename: false,
    append: false,
    ranged_read: true,
    positional_write: false,
    fsync: false,
    direct_io: false,
    page_cache: false,
    drive: crate::Drive::PerThread,
};

/// Remote file services with real directories and rename; the capabilities a run reports are
/// read from the service itself when it opens.
const FILE_SERVICE: Capabilities = Capabilities {
    directories: true,
    rename: true,
    ..OBJECT_STORE
};

impl Target {
    /// The target a URI names; an error is one line even when the URI is not.
    pub fn parse(uri: &str) -> Result<Target, OpError> {
        Self::parse_with_endpoints(uri, &[])
    }

    /// The target a URI names, served through the gateways of `--endpoints` (none: the URI's
    /// own way in); only s3:// and swift:// targets take them.
    pub fn parse_with_endpoints(uri: &str, endpoints: &[String]) -> Result<Target, OpError> {
        Self::parse_uri(uri, endpoints).map_err(|e| OpError::new(e.kind, crate::one_line(&e.message)))
    }

    fn parse_uri(uri: &str, endpoints: &[String]) -> Result<Target, OpError> {
        let target = Self::parse_target(uri, endpoints)?;
        if !endpoints.is_empty() && !matches!(target, Target::Net(_)) {
            let scheme = if matches!(target, Target::Mem(_)) { "mem" } else { "" };
            return Err(crate::dal::refuse_endpoints(uri, scheme));
        }
        Ok(target)
    }

    fn parse_target(uri: &str, endpoints: &[String]) -> Result<Target, OpError> {
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
                    format!(
                        "target '{}' is not an absolute file:// URI: write file:///absolute/path",
                        crate::redact::redact(uri)
                    ),
                ));
            }
            return Ok(Target::Posix(PathBuf::from(rest)));
        }
        if uri == "mem://" || uri == "mem:" || uri.starts_with("mem://") {
            return Ok(Target::Mem(crate::mem::parse_mem_uri(uri)?));
        }
        if let Some((scheme, _)) = uri.split_once("://").filter(|(s, _)| SCHEMES.contains(s)) {
            debug_assert!(SCHEMES.contains(&scheme));
            return Ok(Target::Net(Box::new(Spec::parse_with_endpoints(uri, endpoints)?)));
        }
        if let Some((scheme, _)) = uri.split_once("://") {
            let known: Vec<&str> = BACKENDS.iter().map(|b| b.uri).collect();
            return Err(OpError::new(
                "EINVAL",
                format!(
                    "unknown target scheme '{scheme}://' in '{}': this build supports {}",
                    crate::redact::redact(uri),
                    known.join(", ")
                ),
            ));
        }
        Ok(Target::Posix(PathBuf::from(uri)))
    }

    /// Create this run's directory in the target and open it.
    pub fn open_run(&self, uri: &str, run_name: &str, net: NetOptions) -> Result<AnyStorage, OpError> {
        Ok(match self {
            Target::Posix(path) if net.overwrite_device => AnyStorage::Posix(PosixStorage::open_device(uri, path)?),
            Target::Posix(path) => AnyStorage::Posix(PosixStorage::create_run(uri, path, run_name)?),
            Target::Mem(options) => AnyStorage::Mem(MemStorage::with_options(uri, run_name, *options)),
            Target::Net(spec) => AnyStorage::Dal(DalStorage::create_run((**spec).clone(), run_name, net, false)?),
        })
    }

    /// Open the run directory another process of the same run created (multi-process runs).
    pub fn join_run(&self, uri: &str, run_name: &str, net: NetOptions) -> Result<AnyStorage, OpError> {
        Ok(match self {
            Target::Posix(path) if net.overwrite_device => AnyStorage::Posix(PosixStorage::open_device(uri, path)?),
            Target::Posix(path) => AnyStorage::Posix(PosixStorage::join_run(uri, path, run_name)?),
            Target::Mem(_) => {
                return Err(OpError::new(
                    "EINVAL",
                    "mem:// lives inside one process: runs of several processes need a shared target (a directory or an object store)",
                ))
            }
            Target::Net(spec) => AnyStorage::Dal(DalStorage::create_run((**spec).clone(), run_name, net, true)?),
        })
    }
}

impl Capabilities {
    /// Capabilities a backend lacks, among `needs`.
    pub fn missing(&self, needs: &[Capability]) -> Option<Capability> {
        needs.iter().copied().find(|c| !self.has(*c))
    }
}

/// Any backend, dispatched statically with [`with_storage!`](crate::with_storage).
pub enum AnyStorage {
    Posix(PosixStorage),
    Mem(MemStorage),
    Dal(DalStorage),
}

/// Run `$body` with `$s` bound to the concrete storage inside an [`AnyStorage`], so generic
/// code is monomorphised per backend and the hot loop has no dynamic dispatch.
#[macro_export]
macro_rules! with_storage {
    ($any:expr, $s:ident => $body:expr) => {
        match $any {
            $crate::AnyStorage::Posix($s) => $body,
            $crate::AnyStorage::Mem($s) => $body,
            $crate::AnyStorage::Dal($s) => $body,
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
        let mem = |ms, size| {
            Target::Mem(MemOptions {
                latency: std::time::Duration::from_millis(ms),
                size,
            })
        };
        assert_eq!(Target::parse("mem://").unwrap(), mem(0, None));
        assert_eq!(Target::parse("mem://?latency=2ms").unwrap(), mem(2, None));
        assert_eq!(
            Target::parse("mem://?size=4g&latency=1ms").unwrap(),
            mem(1, Some(4 << 30))
        );
        let e = Target::parse("mem://?size=lots").unwrap_err();
        assert!(e.message.contains("mem:// size: invalid size 'lots'"), "{e}");
        assert!(Target::parse("mem://?lag=2ms")
            .unwrap_err()
            .message
            .contains("latency=DURATION"));
        assert_eq!(Target::parse("rel/dir").unwrap(), Target::Posix("rel/dir".into()));
        let e = Target::parse_with_endpoints("mem://", &["h1:9000".into()]).unwrap_err();
        assert!(
            e.message
                .contains("the mem target 'mem://' has one way in: drop --endpoints"),
            "{e}"
        );
        let e = Target::parse_with_endpoints("/tmp/x", &["h1:9000".into()]).unwrap_err();
        assert!(e.message.contains("the posix target '/tmp/x' has one way in"), "{e}");
        let e = Target::parse("gopher://x").unwrap_err();
        assert!(e.message.contains("unknown target scheme 'gopher://'"), "{e}");
        assert!(Target::parse("file://relative").is_err());
    }
}
