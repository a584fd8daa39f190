//! A loop device over a file in a temporary directory, reached through a block node made with
//! mknod in that directory (never the real /dev), for the tests of block devices.

use std::path::PathBuf;
use std::process::Command;

pub const MIB: usize = 1 << 20;
/// The loop device's size.
pub const DEVICE: usize = 8 * MIB;

/// A loop device over `back.img`, and a node of it in the same temporary directory.
pub struct Loop {
    pub dir: tempfile::TempDir,
    pub dev: String,
}

impl Loop {
    /// None (and a note) where loop devices cannot be made: not root, or no losetup. Under
    /// DFSBENCH_REQUIRE_LAB=1 (CI, as root) that fails the test.
    pub fn new() -> Option<Loop> {
        let required = std::env::var("DFSBENCH_REQUIRE_LAB").as_deref() == Ok("1");
        if !super::is_root() {
            eprintln!("not root: no loop device, skipping");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let back = dir.path().join("back.img");
        std::fs::write(&back, vec![0u8; DEVICE]).unwrap();
        let out = Command::new("losetup").args(["-f", "--show"]).arg(&back).output();
        let dev = match out {
            Ok(o) if o.status.success() => String::from_utf8(o.stdout).unwrap().trim().to_string(),
            other => {
                assert!(!required, "losetup failed: {other:?}");
                eprintln!("no loop device here ({other:?}): skipping");
                return None;
            }
        };
        let rdev = std::os::unix::fs::MetadataExt::rdev(&std::fs::metadata(&dev).unwrap());
        let node = dir.path().join("blk");
        let c = std::ffi::CString::new(node.to_str().unwrap()).unwrap();
        // SAFETY: c is a valid C string; the node is made in our own temporary directory.
        let made = unsafe { libc::mknod(c.as_ptr(), libc::S_IFBLK | 0o600, rdev as libc::dev_t) };
        assert_eq!(made, 0, "mknod {}", node.display());
        Some(Loop { dir, dev })
    }

    pub fn node(&self) -> PathBuf {
        self.dir.path().join("blk")
    }

    pub fn node_str(&self) -> String {
        self.node().display().to_string()
    }

    /// What the device holds, read through its backing file.
    pub fn contents(&self) -> Vec<u8> {
        // The loop device's writes reach the file through the page cache they share.
        let _ = Command::new("blockdev").arg("--flushbufs").arg(&self.dev).status();
        std::fs::read(self.dir.path().join("back.img")).unwrap()
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").arg("-d").arg(&self.dev).status();
    }
}

/// A node of the character device `major`:`minor` (1:3 null, 1:5 zero) in `dir`.
pub fn char_node(dir: &std::path::Path, name: &str, major: u32, minor: u32) -> PathBuf {
    let node = dir.join(name);
    let c = std::ffi::CString::new(node.to_str().unwrap()).unwrap();
    // SAFETY: c is a valid C string; the node is made in the test's own directory.
    let made = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o600, libc::makedev(major, minor)) };
    assert_eq!(made, 0, "mknod {}", node.display());
    node
}
