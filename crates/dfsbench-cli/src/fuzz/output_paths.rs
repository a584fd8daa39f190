//! Output paths under fire: `write_output` to generated names among decoys (files, links,
//! a directory, a socket, devices as root) changes only the path named, never another file.

use super::*;

/// What is at a path, to compare before and after a write: the kind and, for files, the bytes.
fn fingerprint(p: &std::path::Path) -> String {
    use std::os::unix::fs::FileTypeExt as _;
    match std::fs::symlink_metadata(p) {
        Err(_) => "absent".into(),
        Ok(m) if m.is_file() => format!("file {:?}", std::fs::read(p).unwrap_or_default()),
        Ok(m) if m.file_type().is_symlink() => format!("link {:?}", std::fs::read_link(p).ok()),
        Ok(m) if m.is_dir() => "dir".into(),
        Ok(m) if m.file_type().is_socket() => "socket".into(),
        Ok(m) => format!("device {:?}", std::os::unix::fs::MetadataExt::rdev(&m)),
    }
}

/// A scratch tree of decoys: files, a link to a file, a dangling link, a directory, a socket
/// and (as root) a character and a block device. No FIFO: an open for writing waits for a
/// reader (tests/output_paths.rs covers them with one).
pub(super) struct Decoys {
    dir: tempfile::TempDir,
    _socket: std::os::unix::net::UnixListener,
}

pub(super) const DECOYS: [&str; 8] = ["file", "other", "link", "dangling", "dir", "socket", "null", "block"];

impl Decoys {
    pub(super) fn new() -> Decoys {
        let dir = tempfile::tempdir().expect("a scratch dir");
        let at = |n: &str| dir.path().join(n);
        std::fs::write(at("file"), "decoy").expect("a decoy");
        std::fs::write(at("other"), "another decoy").expect("a decoy");
        std::os::unix::fs::symlink("other", at("link")).expect("a link");
        std::os::unix::fs::symlink("nowhere/x", at("dangling")).expect("a link");
        std::fs::create_dir(at("dir")).expect("a dir");
        let socket = std::os::unix::net::UnixListener::bind(at("socket")).expect("a socket");
        for (name, kind, major, minor) in [("null", libc::S_IFCHR, 1, 3), ("block", libc::S_IFBLK, 240, 0)] {
            let c = std::ffi::CString::new(at(name).to_str().expect("UTF-8")).expect("a path");
            // SAFETY: a NUL-terminated path in the scratch dir; fails harmlessly without root.
            unsafe { libc::mknod(c.as_ptr(), kind | 0o600, libc::makedev(major, minor)) };
        }
        Decoys { dir, _socket: socket }
    }

    fn state(&self) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = std::fs::read_dir(self.dir.path())
            .expect("the scratch dir")
            .map(|e| {
                let e = e.expect("an entry");
                (e.file_name().to_string_lossy().into_owned(), fingerprint(&e.path()))
            })
            .collect();
        out.sort();
        out
    }
}

pub(super) static OUTPUTS: Tally = Tally::new("output path");

/// Write through `write_output` to a decoy (or a new name, or one under a decoy) and check the
/// rule: only the path named (or a link's target) changed, and never its kind unless it was a
/// regular file or nothing.
pub(super) fn write_to_decoy(decoys: &Decoys, name: &str, bytes: &[u8]) -> Result<(), String> {
    let before = decoys.state();
    let path = decoys.dir.path().join(name);
    let written = dfsbench_result::files::write_output(&path, bytes).map_err(|e| format!("cannot write {name}: {e}"));
    let after = decoys.state();
    // What the write may change: the name itself, and what a link names.
    let top = name.split('/').next().unwrap_or(name);
    let mut allowed = vec![top.to_string()];
    allowed.extend(match top {
        "link" => Some("other".to_string()),
        "dangling" => Some("nowhere".to_string()),
        _ => None,
    });
    for (n, fp) in &before {
        let now = after.iter().find(|(m, _)| m == n).map(|(_, f)| f.as_str());
        if !allowed.contains(n) {
            assert_eq!(now, Some(fp.as_str()), "{n} changed by a write to {name}");
        } else if !fp.starts_with("file") {
            // Links stay links, devices devices, directories and sockets as they were.
            let kind = |f: &str| f.split(' ').next().unwrap_or_default().to_string();
            assert_eq!(now.map(kind), Some(kind(fp)), "{n} changed kind by a write to {name}");
        }
    }
    let stray: Vec<&String> = after
        .iter()
        .map(|(n, _)| n)
        .filter(|n| !before.iter().any(|(m, _)| m == *n) && !allowed.contains(n))
        .collect();
    assert!(stray.is_empty(), "a write to {name} left {stray:?}");
    // A new name goes again, so the tree checked stays the decoys (not 100,000 files).
    if !DECOYS.contains(&top) {
        let _ = std::fs::remove_file(decoys.dir.path().join(top));
    }
    written
}
