//! The single-host layout as the CLI and the tests use it: `up`, `env`, `status`, `down` of a
//! system in a state directory, its install, and the Debian packages of every system.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::registry::{instance_name, layout_alias};
use crate::{sys, system, systems, Error, Result, System};

use super::Local;

/// A started single-host instance.
#[derive(Debug)]
pub struct Started {
    pub dir: PathBuf,
    pub pids: Vec<i32>,
    pub elapsed: Duration,
}

/// Whether `lab up NAME [--layout L] [--dir D]` means the single-host layout: a local layout
/// named (or implied by the name, `minio-ec`), a state directory given, or a system that runs
/// on one host only.
pub fn is_local(name: &str, layout: Option<&str>, dir: Option<&Path>) -> Result<bool> {
    let sys = system(name)?;
    let layout = layout.or(layout_alias(name).map(|a| a.1));
    let local_layouts = sys.local().map(Local::layouts).unwrap_or_default();
    Ok(match layout {
        Some(l) => local_layouts.contains(&l),
        None => dir.is_some() || sys.cluster().is_none(),
    })
}

/// The system and local layout `name` and `layout` ask for.
fn resolve(name: &str, layout: Option<&str>) -> Result<(Box<dyn System>, &'static str)> {
    let sys = system(name)?;
    let alias = layout_alias(name).map(|a| a.1);
    if let (Some(a), Some(l)) = (alias, layout) {
        if a != l {
            return Err(Error::usage(format!(
                "{name} is the layout {a} of {}; drop --layout {l}",
                sys.name()
            )));
        }
    }
    let Some(local) = sys.local() else {
        return Err(Error::usage(format!(
            "{} has no single-host layout; its layouts: {}",
            sys.name(),
            sys.all_layouts().join(", ")
        )));
    };
    let layout = match layout.or(alias) {
        None => local.layouts()[0],
        Some(l) => local.layouts().iter().copied().find(|k| *k == l).ok_or_else(|| {
            Error::usage(format!(
                "{} has no layout {l:?}; use one of: {}",
                sys.name(),
                sys.all_layouts().join(", ")
            ))
        })?,
    };
    Ok((sys, layout))
}

fn dir_or_default(name: &str, dir: Option<&Path>) -> PathBuf {
    dir.map_or_else(|| super::default_dir(name), Path::to_path_buf)
}

/// Install what the single-host layout of `name` needs (idempotent); what was installed now.
pub fn install(name: &str) -> Result<Vec<String>> {
    let sys = system(name)?;
    let mut installed = sys::apt_install(sys.packages())?;
    installed.extend(sys.install_other()?);
    Ok(installed)
}

/// Start `name` on 127.0.0.1 in `dir` (default `.cache/lab/NAME`): ready once a real write and
/// read-back worked.
pub fn up(name: &str, layout: Option<&str>, dir: Option<&Path>) -> Result<Started> {
    let (sys, layout) = resolve(name, layout)?;
    let local = sys
        .local()
        .ok_or_else(|| Error::usage(format!("{name} has no single-host layout")))?;
    let dir = dir_or_default(name, dir);
    let t0 = Instant::now();
    let pids = super::up(sys.name(), local, layout, name, &dir)?;
    Ok(Started {
        dir: std::path::absolute(&dir).unwrap_or(dir),
        pids,
        elapsed: t0.elapsed(),
    })
}

/// Stop what `up` started in `dir` and delete it; false when nothing was there.
pub fn down(name: &str, dir: Option<&Path>) -> Result<bool> {
    system(name)?;
    super::down(&dir_or_default(name, dir))
}

/// Stop every instance in the default state directories (`.cache/lab/NAME`) and the
/// selftest's; the names of those it stopped. Folders the lab did not make are left alone.
pub fn down_defaults() -> Result<Vec<String>> {
    let mut stopped = Vec::new();
    for root in [sys::cache_dir().join("lab"), sys::cache_dir().join("lab-selftest")] {
        let Ok(entries) = std::fs::read_dir(&root) else {
            continue;
        };
        let mut dirs: Vec<PathBuf> = entries.filter_map(|e| Some(e.ok()?.path())).collect();
        dirs.sort();
        for dir in dirs.iter().filter(|d| super::made_by_lab(d)) {
            if super::down(dir)? {
                stopped.push(dir.display().to_string());
            }
        }
    }
    Ok(stopped)
}

/// `export NAME=value` lines of a running instance, with DFSBENCH_SERVER_PIDS.
pub fn env(name: &str, dir: Option<&Path>) -> Result<String> {
    system(name)?;
    super::env(name, &dir_or_default(name, dir))
}

/// One line per daemon and whether the system answers; None when nothing runs there.
pub fn status(name: &str, dir: Option<&Path>) -> Result<Option<(Vec<String>, bool)>> {
    system(name)?;
    super::status(&dir_or_default(name, dir))
}

/// Every single-host instance by the name `lab up` takes: `minio`, `minio-ec`, ...
pub fn instances() -> Vec<&'static str> {
    systems()
        .iter()
        .filter_map(|s| Some((s.name(), s.local()?.layouts())))
        .flat_map(|(name, layouts)| layouts.iter().map(move |l| instance_name(name, l)))
        .collect()
}

/// The Debian packages of every system, one each (for a fresh-machine check to purge; the
/// cluster base, iproute2 and the like, is part of any Debian).
pub fn packages() -> Vec<&'static str> {
    let mut all: Vec<&'static str> = Vec::new();
    for s in systems() {
        all.extend(s.packages().iter().map(|p| sys::package_name(p)));
        all.extend_from_slice(s.later_packages());
    }
    // `lab up --slurm` installs these on first use.
    all.extend_from_slice(crate::slurm::PACKAGES);
    let mut seen = std::collections::BTreeSet::new();
    all.retain(|p| seen.insert(*p));
    all
}

#[cfg(test)]
mod tests {
    use super::{is_local, resolve};

    #[test]
    fn a_local_layout_a_state_directory_or_a_one_host_system_means_the_single_host_layout() {
        let dir = std::path::Path::new("/tmp/x");
        assert!(
            !is_local("minio", None, None).unwrap(),
            "minio's default is its cluster"
        );
        assert!(is_local("minio", None, Some(dir)).unwrap());
        assert!(is_local("minio", Some("local-ec"), None).unwrap());
        assert!(
            is_local("minio-ec", None, None).unwrap(),
            "the alias names a local layout"
        );
        assert!(!is_local("minio", Some("s3fs"), None).unwrap());
        assert!(is_local("webdav", None, None).unwrap(), "one host only");
        assert_eq!(resolve("minio-ec", None).unwrap().1, "local-ec");
        assert_eq!(resolve("swift", None).unwrap().1, "local");
        let err = |name, layout| resolve(name, layout).err().expect("an error");
        let clash = err("minio-ec", Some("local")).to_string();
        assert!(clash.contains("drop --layout local"), "{clash}");
        let none = err("ceph", None).to_string();
        assert!(none.contains("has no single-host layout"), "{none}");
        let bad = err("minio", Some("nosuch"));
        assert!(
            bad.is_usage() && bad.to_string().contains("erasure, s3fs, local, local-ec"),
            "{bad}"
        );
    }
}
