//! The commit `--version` names. build.rs includes this file to compute it; the binary
//! includes it only for its tests, so the rule is tested like any code.

use std::path::Path;
use std::process::Command;

/// The commit of the git checkout whose top level is `root`, with `-dirty` when tracked files
/// differ from it; `unknown` when `root` is not the top of a checkout (a source tarball, even
/// one unpacked inside another repository) or git is missing.
pub fn describe_commit(root: &Path) -> String {
    let git = |args: &[&str]| {
        Command::new("git")
            .arg("-C")
            .arg(root)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let top = git(&["rev-parse", "--show-toplevel"]).map(std::path::PathBuf::from);
    let same = |t: &Path| match (t.canonicalize(), root.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if !top.as_deref().is_some_and(same) {
        return "unknown".into();
    }
    let Some(hash) = git(&["rev-parse", "--short=12", "HEAD"]) else {
        return "unknown".into();
    };
    match git(&["status", "--porcelain", "--untracked-files=no"]) {
        Some(s) if s.is_empty() => hash,
        Some(_) => format!("{hash}-dirty"),
        None => "unknown".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "commit.gpgsign=false",
            ])
            .args(args)
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    }

    #[test]
    fn commit_clean_dirty_and_outside_git() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("repo");
        std::fs::create_dir(&repo).unwrap();
        assert_eq!(describe_commit(&repo), "unknown", "no checkout");
        git(&repo, &["init", "-q"]);
        std::fs::write(repo.join("a"), "1").unwrap();
        git(&repo, &["add", "a"]);
        assert_eq!(describe_commit(&repo), "unknown", "no commit yet");
        git(&repo, &["commit", "-q", "-m", "a"]);
        let clean = describe_commit(&repo);
        assert_eq!(clean.len(), 12, "{clean}");
        assert!(clean.chars().all(|c| c.is_ascii_hexdigit()), "{clean}");
        std::fs::write(repo.join("b"), "untracked files do not count").unwrap();
        assert_eq!(describe_commit(&repo), clean);
        std::fs::write(repo.join("a"), "2").unwrap();
        assert_eq!(describe_commit(&repo), format!("{clean}-dirty"));
        // A tarball unpacked inside another checkout is not that checkout.
        let inner = repo.join("unpacked");
        std::fs::create_dir(&inner).unwrap();
        assert_eq!(describe_commit(&inner), "unknown");
    }
}
