//! `dfsbench study all` (or `seeds`): the five seed studies in turn on the same targets, each
//! into its folder of one directory (`DIR/size-sweep/`, ...), then one page of them all,
//! `DIR/report.html`. `--resume` keeps the studies that are complete and goes on with the others
//! where they stopped, as `dfsbench study NAME --resume` does.

pub(super) mod published;

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use dfsbench_report::seeds_page::{self, Section};

use super::args::StudyArgs;
use super::manifest::{self, Manifest};
use super::model::{Spread, Study};
use super::scale::Scale;
use super::{catalog, exec, preflight};
use crate::failure::Failure;

/// The seed studies, in the order they run and the page shows them.
pub const STUDIES: [&str; 5] = ["size-sweep", "clients-sweep", "dfsperf", "surfnet", "fio-matrix"];

/// The page, in the folder of the studies.
pub const REPORT: &str = "report.html";

/// `all`, or its other name `seeds`.
pub fn is_all(name: &str) -> bool {
    name == "all" || name == "seeds"
}

/// `--points STUDY:LIST` for each study named (the others run all their points).
fn points_of(given: Option<&[String]>) -> Result<Vec<(String, Vec<String>)>, Failure> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for item in given.unwrap_or_default() {
        let Some((study, pat)) = item.split_once(':').filter(|(s, _)| STUDIES.contains(s)) else {
            return Err(Failure::usage(format!(
                "--points '{item}': study all takes STUDY:POINT (`--points clients-sweep:clients2,clients-sweep:iops`), STUDY one of {}",
                STUDIES.join(", ")
            )));
        };
        match out.iter_mut().find(|(s, _)| s == study) {
            Some((_, pats)) => pats.push(pat.to_string()),
            None => out.push((study.to_string(), vec![pat.to_string()])),
        }
    }
    Ok(out)
}

fn over_nodes(s: &Study) -> bool {
    s.points.iter().any(|p| matches!(p.spread, Spread::Nodes { .. }))
}

/// The study `name` of the run `a`: its folder, its points, and the node flags when it has
/// points over nodes.
fn args_of(a: &StudyArgs, name: &str, dir: &Path, points: &[(String, Vec<String>)], scale: Scale) -> StudyArgs {
    let mut s = a.clone();
    s.name = name.to_string();
    s.out = Some(dir.join(name));
    s.points = points.iter().find(|(n, _)| n == name).map(|(_, p)| p.clone());
    let nodes = a.nodes.clone().unwrap_or_default();
    let takes_nodes = catalog::build(name, scale, &nodes).is_some_and(|st| over_nodes(&st));
    if !takes_nodes {
        s.nodes = None;
        s.launcher = None;
    }
    s
}

/// Whether the study in `sub` is complete, at this scale on these systems (a study that
/// differs is refused with one line, as `study NAME --resume` refuses it).
fn complete(a: &StudyArgs, name: &str, scale: Scale) -> Result<bool, Failure> {
    let Some(study) = catalog::build(name, scale, &a.nodes.clone().unwrap_or_default()) else {
        return Ok(false);
    };
    let systems = exec::systems(&a.targets, study.localfs_baseline).map_err(Failure::usage)?;
    Ok(super::resumed(a, &study, scale, &systems)?.is_some_and(|m| m.status == "complete"))
}

/// The page of the seed studies in `dir` (None when it holds none, or is one study's folder),
/// with its links to the studies' folders relative to `page_dir`, the folder the page goes
/// to; and a line per study for stdout.
pub fn page(dir: &Path, page_dir: &Path) -> Result<Option<(String, String)>, Failure> {
    if dir.join(manifest::FILE).exists() {
        return Ok(None);
    }
    let same = |a: &Path, b: &Path| {
        a.canonicalize()
            .ok()
            .zip(b.canonicalize().ok())
            .is_some_and(|(a, b)| a == b)
    };
    let mut sections = Vec::new();
    for name in STUDIES {
        let sub = dir.join(name);
        if Manifest::load(&sub).is_err() {
            continue;
        }
        let Some(doc) = super::tables_of(&sub)? else {
            continue;
        };
        sections.push(Section {
            doc,
            folder: match same(dir, page_dir) {
                true => name.to_string(),
                false => std::path::absolute(&sub).unwrap_or(sub).display().to_string(),
            },
            published: published::of(name)?,
        });
    }
    if sections.is_empty() {
        return Ok(None);
    }
    let page = dfsbench_report::html::Page {
        title: None,
        command: dfsbench_report::html::shell_words(&dfsbench_backends::redact::command_line()),
        generated_at: humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
    };
    let html = seeds_page::render(&sections, &page)?;
    let mut text = String::new();
    for s in &sections {
        let n = seeds_page::counts(&s.doc);
        text.push_str(&format!(
            "{:<14} {:<12} {:>4} cells: {} filled, {} n/a, {} not run, {} failed\n",
            s.doc.study,
            s.doc.status,
            n.total(),
            n.filled,
            n.not_applicable,
            n.not_run,
            n.failed
        ));
    }
    Ok(Some((html, text)))
}

/// Write `DIR/report.html`; returns a line per study and the page's path, for stdout.
fn report(dir: &Path) -> Result<String, Failure> {
    let Some((html, mut text)) = page(dir, dir)? else {
        return Err(Failure::usage(format!(
            "{} holds none of the seed studies ({}): give the --out of a `dfsbench study all`",
            dir.display(),
            STUDIES.join(", ")
        )));
    };
    let path = dir.join(REPORT);
    dfsbench_result::files::write_output(&path, html.as_bytes())
        .map_err(|e| Failure::runtime(format!("cannot write {}: {e}", path.display())))?;
    text.push_str(&format!("report: {}\n", path.display()));
    Ok(text)
}

pub fn all(a: &StudyArgs) -> Result<(), Failure> {
    if let Some(dir) = &a.from {
        return crate::stdout::print(report(dir)?, "the studies");
    }
    let points = points_of(a.points.as_deref())?;
    let scale = Scale::parse(&a.scale).map_err(Failure::usage)?;
    let dir = a
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("dfsbench-seeds-{}", dfsbench_core::session::new_run_id())));
    if !a.resume && STUDIES.iter().any(|s| dir.join(s).join(manifest::FILE).exists()) {
        return Err(Failure::usage(format!(
            "{} already holds seed studies: give --resume to go on with them, or another --out",
            dir.display()
        )));
    }
    let nodes = a.nodes.clone().unwrap_or_default();
    // A pattern that matches no point of its study stops the run before the first study.
    for (name, pats) in &points {
        if let Some(mut study) = catalog::build(name, scale, &nodes) {
            super::select(&mut study, pats)?;
        }
    }
    if !nodes.is_empty() && !a.quiet {
        let without: Vec<&str> = STUDIES
            .iter()
            .copied()
            .filter(|n| !catalog::build(n, scale, &nodes).is_some_and(|s| over_nodes(&s)))
            .collect();
        eprintln!(
            "study all: --nodes applies to the studies with a node axis; {} run on this machine",
            without.join(", ")
        );
    }
    // Every target once, before the first study.
    let systems = exec::systems(&a.targets, false).map_err(Failure::usage)?;
    preflight::check_targets(&systems, a)?;
    let mut failed: Vec<String> = Vec::new();
    let mut interrupted = false;
    for name in STUDIES {
        if a.resume && complete(&args_of(a, name, &dir, &points, scale), name, scale)? {
            if !a.quiet {
                eprintln!("study {name}: complete in {}, kept", dir.join(name).display());
            }
            continue;
        }
        let sa = args_of(a, name, &dir, &points, scale);
        match super::run(&sa, None)? {
            (_, Ok(())) => {}
            (_, Err(Failure::Interrupted)) => {
                interrupted = true;
                break;
            }
            (_, Err(e)) => failed.push(format!("{name}: {e}")),
        }
    }
    let summary = report(&dir)?;
    crate::stdout::print(summary, "the studies")?;
    if interrupted {
        return Err(Failure::Interrupted);
    }
    if !failed.is_empty() {
        return Err(Failure::runtime(format!(
            "{} of {} studies had failed runs ({}); their cells say why in {}",
            failed.len(),
            STUDIES.len(),
            failed.join("; "),
            dir.join(REPORT).display()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_name_their_study() {
        let p = points_of(Some(&[
            "clients-sweep:clients2".into(),
            "clients-sweep:iops".into(),
            "fio-matrix:*-t1".into(),
        ]))
        .unwrap();
        assert_eq!(
            p,
            [
                (
                    "clients-sweep".to_string(),
                    vec!["clients2".to_string(), "iops".to_string()]
                ),
                ("fio-matrix".to_string(), vec!["*-t1".to_string()])
            ]
        );
        for bad in ["clients2", "io500:x", "nope:x"] {
            let e = points_of(Some(&[bad.into()])).unwrap_err().to_string();
            assert!(e.contains("STUDY:POINT"), "{bad}: {e}");
        }
        assert!(is_all("seeds") && is_all("all") && !is_all("io500"));
    }
}
