//! `history --rebuild`: the store made again from the result files, which are the source of
//! truth: those the old store pointed to, and every result and study under the folders given.
//! A store that no longer opens is kept aside, never removed.

use std::path::{Path, PathBuf};

use super::{location, read_result, refuse_non_file, remembered, Filter, Store, ENV};
use crate::failure::Failure;

pub fn rebuild(dirs: &[PathBuf]) -> Result<(), Failure> {
    let path = location().ok_or_else(|| Failure::usage(format!("{ENV}=off: there is no history store to rebuild")))?;
    refuse_non_file(&path)?;
    if let Some(missing) = dirs.iter().find(|d| !d.is_dir()) {
        return Err(Failure::usage(format!(
            "--rebuild {}: no such folder: name folders that hold result files",
            missing.display()
        )));
    }
    // Without folders: the default place of `dfsbench run`'s results, when there is one.
    let default = [PathBuf::from("dfsbench-results")];
    let dirs = if dirs.is_empty() { &default[..] } else { dirs };
    let mut files: Vec<PathBuf> = Vec::new();
    if path.exists() {
        match Store::open(&path).and_then(|s| s.paths()) {
            Ok(paths) => files.extend(paths),
            Err(e) => {
                let aside = set_aside(&path)?;
                eprintln!("note: {e}; kept it as {}", aside.display());
            }
        }
    }
    for dir in dirs.iter().filter(|d| d.is_dir()) {
        walk(dir, &mut files);
    }
    files.sort();
    files.dedup();

    // A new store beside the old one, then renamed over it: a failure leaves the old one.
    let fresh = path.with_extension("sqlite.rebuild");
    let _ = std::fs::remove_file(&fresh);
    let mut store = Store::open(&fresh).map_err(Failure::runtime)?;
    // Plain results first: a study then records its points again, under its id.
    let is_study = |f: &&PathBuf| f.file_name().is_some_and(|n| n == "study.json");
    for file in files.iter().filter(|f| !is_study(f)) {
        if let Ok(r) = read_result(file) {
            store
                .record_run(&r, file, r.tag.as_deref(), None)
                .map_err(Failure::runtime)?;
        }
    }
    for dir in files.iter().filter(is_study).filter_map(|f| f.parent()) {
        if let Ok((row, points)) = remembered(dir) {
            for (r, f) in &points {
                store
                    .record_run(r, f, r.tag.as_deref(), Some(&row.id))
                    .map_err(Failure::runtime)?;
            }
            store.record_study(row).map_err(Failure::runtime)?;
        }
    }
    let all = store.runs(&Filter::default()).map_err(Failure::runtime)?;
    let studies = all.iter().filter(|r| r.kind == "study").count();
    let runs = all.len() - studies;
    drop(store);
    std::fs::rename(&fresh, &path)
        .map_err(|e| Failure::runtime(format!("cannot put the rebuilt store at {}: {e}", path.display())))?;
    crate::stdout::print(
        format!(
            "history: {} ({runs} run{} and {studies} stud{} from {} file{})\n",
            path.display(),
            if runs == 1 { "" } else { "s" },
            if studies == 1 { "y" } else { "ies" },
            files.len(),
            if files.len() == 1 { "" } else { "s" }
        ),
        "where the history went",
    )?;
    Ok(())
}

/// Rename an unreadable store to a free `NAME.unreadable[.N]`.
fn set_aside(path: &Path) -> Result<PathBuf, Failure> {
    for n in 0..1000 {
        let aside = PathBuf::from(format!(
            "{}.unreadable{}",
            path.display(),
            if n == 0 { String::new() } else { format!(".{n}") }
        ));
        if !aside.exists() {
            std::fs::rename(path, &aside)
                .map_err(|e| Failure::runtime(format!("cannot keep {} aside: {e}", path.display())))?;
            return Ok(aside);
        }
    }
    Err(Failure::runtime(format!(
        "{}.unreadable and 999 more are taken: remove old ones",
        path.display()
    )))
}

/// Every `.json` file under `dir` (links not followed).
fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let Ok(kind) = e.file_type() else { continue };
        let p = e.path();
        if kind.is_dir() {
            walk(&p, out);
        } else if kind.is_file() && p.extension().is_some_and(|x| x == "json") {
            out.push(std::path::absolute(&p).unwrap_or(p));
        }
    }
}
