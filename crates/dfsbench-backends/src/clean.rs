//! `dfsbench clean`: remove a run directory a killed or `--keep` run left, on any backend,
//! only when its name and marker say dfsbench made it.

use std::path::Path;

use crate::dal::DalStorage;
use crate::posix::{check_run_dir, remove_run_dir, RUN_PREFIX};
use crate::{OpError, Target};

/// What `clean` removed: the run (path or redacted URI) and how many files it held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cleaned {
    pub run: String,
    pub files: u64,
}

/// Remove the run directory `arg` names: a path, or a target URI ending in the run's name.
pub fn clean_run(arg: &str) -> Result<Cleaned, OpError> {
    match Target::parse(arg)? {
        Target::Posix(path) => {
            check_run_dir(&path)?;
            let files = count_files(&path);
            remove_run_dir(&path)?;
            Ok(Cleaned {
                run: path.display().to_string(),
                files,
            })
        }
        Target::Mem(_) => Err(OpError::new(
            "EINVAL",
            "mem:// lives inside the process that ran: nothing of it is left to clean",
        )),
        Target::Net(mut spec) => {
            let run = spec.redacted.clone();
            let (parent, name) = spec.prefix.rsplit_once('/').unwrap_or(("", spec.prefix.as_str()));
            if !name.starts_with(RUN_PREFIX) {
                return Err(OpError::new(
                    "refused",
                    format!(
                        "refusing to remove {run}: its last path part does not start with 'dfsbench-': name the run directory itself"
                    ),
                ));
            }
            let name = name.to_string();
            spec.prefix = parent.to_string();
            let files = DalStorage::clean_run(*spec, &name)?;
            Ok(Cleaned { run, files })
        }
    }
}

/// Files under `dir` (its marker included), not following links.
fn count_files(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    entries
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => count_files(&e.path()),
            _ => 1,
        })
        .sum()
}
