//! Result files: where a run's result goes, and writing it so that it is never lost.

use std::path::{Path, PathBuf};

use dfsbench_result::files::{output_path, write_output};
use dfsbench_result::RunResult;

use crate::failure::Failure;

/// Where the result JSON goes.
pub fn result_path(out: Option<&Path>, run_id: &str) -> PathBuf {
    let name = format!("{run_id}.json");
    match out {
        Some(p) if p.is_dir() || p.as_os_str().to_string_lossy().ends_with('/') => p.join(name),
        Some(p) => p.to_path_buf(),
        None => PathBuf::from("dfsbench-results").join(name),
    }
}

/// Refuse, before a run starts, an output path that its result could not be written to (a
/// socket, a block device): one line, not a fallback file after the run.
pub fn check(out: Option<&Path>) -> Result<(), Failure> {
    match out {
        Some(p) if p != Path::new("-") => {
            let path = result_path(Some(p), "RUN_ID");
            output_path(&path)
                .map(drop)
                .map_err(|e| Failure::usage(format!("-o {}: {e}", p.display())))
        }
        _ => Ok(()),
    }
}

/// Where a result was written: `fallback` when not where it was asked to go.
pub struct Saved {
    pub path: PathBuf,
    pub fallback: bool,
}

/// Write the result; if the chosen place fails, keep it in the temp directory instead of
/// losing it.
pub fn save(result: &RunResult, path: &Path) -> Result<Saved, Failure> {
    let json = serde_json::to_string_pretty(result).expect("results serialize");
    let write = |p: &Path| write_output(p, json.as_bytes());
    match write(path) {
        Ok(()) => Ok(Saved {
            path: path.to_path_buf(),
            fallback: false,
        }),
        Err(e) => {
            let fallback = std::env::temp_dir().join(format!("dfsbench-result-{}.json", result.run_id));
            write(&fallback).map_err(|e2| {
                Failure::runtime(format!(
                    "cannot write the result to {} ({e}) nor to {} ({e2})",
                    path.display(),
                    fallback.display()
                ))
            })?;
            eprintln!(
                "warning: cannot write the result to {} ({e}); saved it to {} instead",
                path.display(),
                fallback.display()
            );
            Ok(Saved {
                path: fallback,
                fallback: true,
            })
        }
    }
}
