//! `dfsbench study NAME`: a seed evaluation run against one or more targets with one command,
//! its tables printed in the publication's shape.

pub mod args;
mod budget;
mod catalog;
mod cells;
mod exec;
mod launch;
pub(crate) mod manifest;
mod model;
mod preflight;
mod reasons;
mod render;
mod run_cells;
mod scale;
mod score;
mod seeds;

use std::path::{Path, PathBuf};

use crate::failure::Failure;
use args::{StudyArgs, StudyFormat};
use manifest::Manifest;
use scale::Scale;

fn list() -> Result<(), Failure> {
    let text: String = catalog::STUDIES
        .iter()
        .map(|(name, what)| format!("{name:<14} {what}\n"))
        .collect();
    crate::stdout::print(text, "the studies")
}

fn unknown(name: &str) -> Failure {
    let names: Vec<&str> = catalog::STUDIES.iter().map(|s| s.0).collect();
    Failure::usage(format!(
        "unknown study '{name}': choose from {} (or `dfsbench study list`)",
        names.join(", ")
    ))
}

/// Render the tables of `dir`, write them there, and print the chosen format (if any).
fn show(m: &Manifest, dir: &Path, format: Option<StudyFormat>, write: bool) -> Result<(), Failure> {
    let scale = Scale::parse(&m.scale.to_string()).map_err(Failure::usage)?;
    let study = catalog::build(&m.study, scale, &m.nodes).ok_or_else(|| unknown(&m.study))?;
    let r = render::render(&study, m, dir);
    if write {
        let put = |name: &str, text: &str| {
            dfsbench_result::files::write_output(&dir.join(name), text.as_bytes())
                .map_err(|e| Failure::runtime(format!("cannot write {}: {e}", dir.join(name).display())))
        };
        put("tables.md", &r.markdown)?;
        put("tables.csv", &r.cells_csv)?;
        let json = serde_json::to_string_pretty(&r.doc).expect("JSON of the tables");
        put(dfsbench_report::study_page::FILE, &(json + "\n"))?;
        for (i, t) in r.tables_csv.iter().enumerate() {
            put(&format!("table-{}.csv", i + 1), t)?;
        }
    }
    match format {
        Some(StudyFormat::Md) => crate::stdout::print(&r.markdown, "the tables"),
        Some(StudyFormat::Csv) => crate::stdout::print(&r.cells_csv, "the tables"),
        None => Ok(()),
    }
}

/// The page of the seed studies in the folder of a `study all` (None for another folder), for
/// `dfsbench report DIR -o FILE`: links to the studies relative to `page_dir`.
pub fn seeds_page(dir: &Path, page_dir: &Path) -> Result<Option<String>, Failure> {
    Ok(seeds::page(dir, page_dir)?.map(|(html, _)| html))
}

/// The publication's own figures of the study `name` (none for a study without a seed text).
pub fn published_of(name: &str) -> Result<dfsbench_report::published::Published, Failure> {
    seeds::published::of(name)
}

/// The tables of the study folder `dir` as data, for `dfsbench report DIR`: its tables.json,
/// or, when it has none (a study still running or from before tables.json), rendered from its
/// manifest and result files. None when `dir` holds no study manifest (a folder of results).
pub fn tables_of(dir: &Path) -> Result<Option<dfsbench_report::study_page::StudyTables>, Failure> {
    use dfsbench_report::study_page::{StudyTables, FILE, SCHEMA};
    let Ok(m) = Manifest::load(dir) else {
        return Ok(None);
    };
    let json = dir.join(FILE);
    if let Ok(text) = std::fs::read(&json) {
        let bad = |e: serde_json::Error| Failure::usage(format!("{} is not a study's tables: {e}", json.display()));
        let v: serde_json::Value = serde_json::from_slice(&text).map_err(bad)?;
        if v["schema"] != SCHEMA {
            return Err(Failure::usage(format!(
                "{} has schema {}, this dfsbench reads {SCHEMA}: remove it to render the tables from the results",
                json.display(),
                v["schema"]
            )));
        }
        return Ok(Some(serde_json::from_value::<StudyTables>(v).map_err(bad)?));
    }
    let scale = Scale::parse(&m.scale.to_string()).map_err(Failure::usage)?;
    let study = catalog::build(&m.study, scale, &m.nodes).ok_or_else(|| unknown(&m.study))?;
    Ok(Some(render::render(&study, &m, dir).doc))
}

/// `*` matches any run of characters: `read-*-t1`.
fn glob(pat: &str, id: &str) -> bool {
    let mut parts = pat.split('*');
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = id.strip_prefix(first) else {
        return false;
    };
    let tail: Vec<&str> = parts.collect();
    for (i, p) in tail.iter().enumerate() {
        if i + 1 == tail.len() {
            return rest.ends_with(p);
        }
        match rest.find(p) {
            Some(at) => rest = &rest[at + p.len()..],
            None => return false,
        }
    }
    rest.is_empty()
}

/// Keep the points matching `only`; a pattern that matches nothing is a usage error.
fn select(study: &mut model::Study, only: &[String]) -> Result<(), Failure> {
    let matches = |pat: &str, id: &str| glob(pat.trim(), id);
    for pat in only {
        if !study.points.iter().any(|p| matches(pat.trim(), &p.id)) {
            let ids: Vec<&str> = study.points.iter().map(|p| p.id.as_str()).collect();
            return Err(Failure::usage(format!(
                "--points: '{pat}' matches no point of {}: choose from {}",
                study.name,
                ids.join(", ")
            )));
        }
    }
    let null_tests = study.points.iter().any(|p| p.null_tests);
    study
        .points
        .retain(|p| only.iter().any(|pat| matches(pat.trim(), &p.id)));
    // The null tests go with the first point that runs, whichever that is.
    if let Some(first) = study.points.first_mut().filter(|_| null_tests) {
        first.null_tests = true;
    }
    Ok(())
}

pub fn study(a: &StudyArgs) -> Result<(), Failure> {
    if let Some(n) = dfsbench_core::cluster::launcher_size().filter(|&n| n > 1) {
        return Err(Failure::usage(format!(
            "dfsbench study starts the processes of its points itself, but an MPI launcher started {n} copies of it: run the study without mpirun, and give --nodes LIST --launcher 'mpirun ... -np {{np}}' for points over nodes"
        )));
    }
    crate::failure::set_verbose(a.verbose);
    if a.name == "list" {
        if let Some(dir) = &a.from {
            return Err(Failure::usage(format!(
                "study list takes no --from: to print the tables of {} again, run `dfsbench study NAME --from {}`",
                dir.display(),
                dir.display()
            )));
        }
        list()?;
        return Ok(());
    }
    if seeds::is_all(&a.name) {
        return seeds::all(a);
    }
    if let Some(dir) = &a.from {
        let m = Manifest::load(dir).map_err(Failure::usage)?;
        if m.study != a.name {
            return Err(Failure::usage(format!(
                "{} holds a {} study, not {}: name that study",
                dir.display(),
                m.study,
                a.name
            )));
        }
        return show(&m, dir, Some(a.format), false);
    }
    let (dir, outcome) = run(a, Some(a.format))?;
    if !a.quiet {
        eprintln!("study: {}", dir.display());
    }
    outcome
}

/// `--resume`: the manifest of the study in --out, when it is this study at this scale on
/// these systems (else one line saying what differs).
fn resumed(
    a: &StudyArgs,
    study: &model::Study,
    scale: Scale,
    systems: &[manifest::System],
) -> Result<Option<Manifest>, Failure> {
    let Some(dir) = a.out.as_ref().filter(|d| a.resume && d.join(manifest::FILE).exists()) else {
        return Ok(None);
    };
    let m = Manifest::load(dir).map_err(Failure::usage)?;
    let labels = |s: &[manifest::System]| s.iter().map(|s| s.label.clone()).collect::<Vec<_>>();
    let differs = if m.study != study.name {
        Some(format!("holds a {} study, not {}", m.study, study.name))
    } else if m.scale != scale.factor() {
        Some(format!("ran at --scale {}, not {}", m.scale, scale.factor()))
    } else if labels(&m.systems) != labels(systems) {
        Some(format!(
            "ran on {}, not {}",
            labels(&m.systems).join(", "),
            labels(systems).join(", ")
        ))
    } else {
        None
    };
    match differs {
        Some(what) => Err(Failure::usage(format!(
            "--resume: {} {what}: give the same study, --scale and --target as before, or another --out",
            dir.display()
        ))),
        None => Ok(Some(m)),
    }
}

/// Run the study `a` names; returns its folder and how it ended (Err: it could not start).
fn run(a: &StudyArgs, print: Option<StudyFormat>) -> Result<(PathBuf, Result<(), Failure>), Failure> {
    let scale = Scale::parse(&a.scale).map_err(Failure::usage)?;
    let nodes = a.nodes.clone().unwrap_or_default();
    if let Some(bad) = nodes.iter().find(|&&n| n == 0) {
        return Err(Failure::usage(format!("--nodes {bad}: give node counts of 1 or more")));
    }
    let launcher = a
        .launcher
        .as_deref()
        .map(launch::Launcher::parse)
        .transpose()
        .map_err(Failure::usage)?;
    if let Some(pid) = a
        .server_pids
        .iter()
        .flatten()
        .find(|&&p| p == 0 || dfsbench_core::process_cpu_times(p).is_none())
    {
        return Err(Failure::usage(format!(
            "--server-pid {pid}: no such process on this host: give the PIDs of the server processes here (pidof minio)"
        )));
    }
    let mut study = catalog::build(&a.name, scale, &nodes).ok_or_else(|| unknown(&a.name))?;
    let over_nodes = |s: &model::Study| s.points.iter().any(|p| matches!(p.spread, model::Spread::Nodes { .. }));
    if !nodes.is_empty() && !over_nodes(&study) {
        return Err(Failure::usage(format!(
            "--nodes {}: {} has no point over these node counts (size-sweep, dfsperf, io500 and mlperf-storage have a node axis, clients-sweep spreads its clients over the largest count; size-sweep's 1 node is its one-client table)",
            nodes.iter().map(usize::to_string).collect::<Vec<_>>().join(","),
            study.name
        )));
    }
    if let Some(only) = &a.points {
        select(&mut study, only)?;
    }
    if let Some(limit) = &a.max_point_time {
        for p in &mut study.points {
            budget::cap(p, limit);
        }
    }
    let systems = exec::systems(&a.targets, study.localfs_baseline).map_err(Failure::usage)?;
    let before = resumed(a, &study, scale, &systems)?;
    preflight::check_targets(&systems, a)?;
    let (manifest, dir, outcome) = exec::execute(&study, scale, systems, a, launcher.as_ref(), before)?;
    crate::history::record_study(&dir);
    show(&manifest, &dir, print, true)?;
    Ok((dir, outcome))
}

#[cfg(test)]
mod tests {
    #[test]
    fn globs() {
        for (pat, id, want) in [
            ("read-*", "read-4k-t1", true),
            ("read-*-t1", "read-4k-t1", true),
            ("read-*-t1", "read-4k-t2", false),
            ("*-4k-*", "randread-4k-t8", true),
            ("clients2", "clients256", false),
            ("*", "x", true),
        ] {
            assert_eq!(super::glob(pat, id), want, "{pat} {id}");
        }
    }
}
