//! Records the commit the binary is built from and its features, for `dfsbench --version`.

use std::path::{Path, PathBuf};

#[path = "src/build_info.rs"]
mod build_info;

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let root = manifest.join("../..");
    let commit = build_info::describe_commit(&root);
    let mut features = vec!["io_uring"];
    if std::env::var_os("CARGO_FEATURE_MPI").is_some() {
        features.push("mpi");
    }
    println!(
        "cargo:rustc-env=DFSBENCH_VERSION={} (commit {commit}, features: {})",
        std::env::var("CARGO_PKG_VERSION").expect("cargo sets it"),
        features.join(", ")
    );
    // Run again when the commit or the sources may have changed (whether the tree is dirty).
    for p in ["crates", "Cargo.toml", "Cargo.lock"] {
        println!("cargo:rerun-if-changed={}", root.join(p).display());
    }
    for p in git_files(&root) {
        println!("cargo:rerun-if-changed={}", p.display());
    }
}

/// HEAD, the index and the branch HEAD points to: they change with a commit or checkout.
fn git_files(root: &Path) -> Vec<PathBuf> {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .arg("-C")
            .arg(root)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let mut files = Vec::new();
    if let Some(dir) = git(&["rev-parse", "--git-dir"]).map(|d| root.join(d)) {
        files.extend([dir.join("HEAD"), dir.join("index")]);
    }
    if let Some(common) = git(&["rev-parse", "--git-common-dir"]).map(|d| root.join(d)) {
        files.push(common.join("packed-refs"));
        files.extend(git(&["symbolic-ref", "-q", "HEAD"]).map(|r| common.join(r)));
    }
    files.into_iter().filter(|p| p.exists()).collect()
}
