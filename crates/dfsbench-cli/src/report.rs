//! `dfsbench report` and `dfsbench compare`: views of result files made after the fact.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use clap::{Args, ValueEnum};

use dfsbench_report::input::{self, Loaded};
use dfsbench_report::{compare, html, long_csv, markdown, runs, summary};

use crate::failure::Failure;

#[derive(ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReportFormat {
    /// One self-contained HTML page with SVG charts.
    #[default]
    Html,
    /// Markdown tables.
    Md,
    /// Long-format CSV: a row per run, phase and metric.
    Csv,
    /// A JSON summary of every run and phase.
    Json,
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Result files, or folders: every *.json result inside, recursively (a study's output).
    #[arg(required = true, value_name = "RESULT")]
    pub paths: Vec<PathBuf>,

    /// What to write.
    #[arg(long, value_enum, default_value_t = ReportFormat::Html)]
    pub format: ReportFormat,

    /// Output file ('-': stdout) [default: html to report.html, the others to stdout].
    #[arg(short, long, value_name = "FILE")]
    pub out: Option<PathBuf>,

    /// Title of the HTML page [default: from the runs].
    #[arg(long, value_name = "TEXT")]
    pub title: Option<String>,
}

#[derive(ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CompareFormat {
    /// An aligned text table.
    #[default]
    Table,
    /// A Markdown table.
    Md,
    Json,
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// The baseline result file (with --baseline: the new run's file, B).
    #[arg(value_name = "A")]
    pub a: PathBuf,

    /// The result file compared with it: changes are (B - A) / A.
    #[arg(value_name = "B", required_unless_present = "baseline")]
    pub b: Option<PathBuf>,

    /// Take A from the history (`dfsbench history`): the stored run of the same target,
    /// workload and configuration as the one file given, `last` (the newest before it) or the
    /// newest with this tag (`dfsbench run --tag`).
    #[arg(long, value_name = "last|TAG")]
    pub baseline: Option<String>,

    /// What to write.
    #[arg(long, value_enum, default_value_t = CompareFormat::Table)]
    pub format: CompareFormat,

    /// Output file [default: stdout].
    #[arg(short, long, value_name = "FILE")]
    pub out: Option<PathBuf>,

    /// Exit with code 1 when a phase got worse by more than PCT percent (and beyond the runs'
    /// noise) in ops/s, MiB/s, p50, p99 or errors, naming each on stderr: a CI gate. Without
    /// it compare exits 0 whatever changed.
    #[arg(long, value_name = "PCT", value_parser = parse_threshold)]
    pub threshold: Option<f64>,
}

/// The result file of the stored run `which` (`last` or a tag) names for the run in `new`.
fn baseline(which: &str, new: &Path) -> Result<PathBuf, Failure> {
    let loaded = load(&[new.to_path_buf()])?;
    let [Loaded { result, .. }] = &loaded[..] else {
        return Err(Failure::usage(format!(
            "{} holds {} results; compare --baseline takes one result file",
            new.display(),
            loaded.len()
        )));
    };
    let tag = (which != "last").then_some(which);
    let found = crate::history::baseline(result, tag)?;
    let Some(run) = found else {
        return Err(Failure::runtime(format!(
            "no stored run of {} ({}, the same configuration) {} to compare {} with: `dfsbench history --target {}` lists what there is",
            result.target.uri,
            crate::history::workload_of(result),
            tag.map_or_else(|| "before it".to_string(), |t| format!("tagged {t}")),
            new.display(),
            result.target.uri
        )));
    };
    let path = PathBuf::from(&run.path);
    if !path.is_file() {
        return Err(Failure::runtime(format!(
            "the baseline run {} was stored with {}, which is gone: `dfsbench history --rebuild DIR` finds moved files",
            run.id,
            path.display()
        )));
    }
    eprintln!("baseline: run {} of {} ({})", run.id, run.started, path.display());
    Ok(path)
}

/// `5%` or `5`: a percentage of 0 or more.
pub(crate) fn parse_threshold(s: &str) -> Result<f64, String> {
    // Quoted as one line: the value may hold a newline.
    let shown = dfsbench_backends::one_line(s);
    let v: f64 = s
        .trim()
        .trim_end_matches('%')
        .trim()
        .parse()
        .map_err(|_| format!("'{shown}' is not a percentage; give one such as 5%"))?;
    if v.is_finite() && v >= 0.0 {
        Ok(v)
    } else {
        Err(format!(
            "'{shown}' is not a percentage of 0 or more; give one such as 5%"
        ))
    }
}

fn load(paths: &[PathBuf]) -> Result<Vec<Loaded>, Failure> {
    Ok(input::load(paths)?)
}

fn write_out(out: Option<&Path>, text: &str) -> Result<(), Failure> {
    match out {
        Some(p) if p != Path::new("-") => dfsbench_result::files::write_output(p, text.as_bytes())
            .map_err(|e| Failure::runtime(format!("cannot write {}: {e}", p.display()))),
        _ => crate::stdout::print(text, "the report"),
    }
}

fn command_line() -> String {
    html::shell_words(&dfsbench_backends::redact::command_line())
}

/// The study folder given alone, with its tables: its page opens with the publication's
/// figures.
fn study_folder(paths: &[PathBuf]) -> Result<Option<(PathBuf, dfsbench_report::study_page::StudyTables)>, Failure> {
    match paths {
        [dir] if dir.is_dir() => Ok(crate::study::tables_of(dir)?.map(|doc| (dir.clone(), doc))),
        _ => Ok(None),
    }
}

/// Each run's system in the study: results are at `DIR/LABEL/POINT.json`.
fn systems_of(runs: &[runs::Run], dir: &Path, doc: &dfsbench_report::study_page::StudyTables) -> Vec<usize> {
    runs.iter()
        .enumerate()
        .map(|(i, r)| {
            let label = r.path.strip_prefix(dir).ok().and_then(|p| p.components().next());
            label
                .and_then(|l| doc.systems.iter().position(|s| l.as_os_str() == s.label.as_str()))
                .unwrap_or(doc.systems.len() + i)
        })
        .collect()
}

pub fn report(args: &ReportArgs) -> Result<(), Failure> {
    let loaded = load(&args.paths)?;
    let mut runs = runs::runs(&loaded);
    let out = args.out.as_deref();
    match args.format {
        ReportFormat::Html => {
            let page = html::Page {
                title: args.title.clone(),
                command: command_line(),
                generated_at: humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
            };
            let path = out.unwrap_or(Path::new("report.html"));
            // The folder of `study all`: its page of every seed study.
            if let [dir] = &args.paths[..] {
                let page_dir = path
                    .parent()
                    .filter(|p| !p.as_os_str().is_empty())
                    .unwrap_or(Path::new("."));
                if let Some(text) = crate::study::seeds_page(dir, page_dir)? {
                    write_out(Some(path), &text)?;
                    if path == Path::new("-") {
                        return Ok(());
                    }
                    return crate::stdout::print(
                        format!("report: {} (the seed studies of {})\n", path.display(), dir.display()),
                        "where the report went",
                    );
                }
            }
            let text = match study_folder(&args.paths)? {
                Some((dir, doc)) => {
                    let system_of = systems_of(&runs, &dir, &doc);
                    let published = crate::study::published_of(&doc.study)?;
                    dfsbench_report::study_page::render(&doc, &published, &mut runs, &system_of, &page)?
                }
                None => html::render(&runs, &page)?,
            };
            write_out(Some(path), &text)?;
            if path != Path::new("-") {
                crate::stdout::print(
                    format!(
                        "report: {} ({} run{})\n",
                        path.display(),
                        runs.len(),
                        if runs.len() == 1 { "" } else { "s" }
                    ),
                    "where the report went",
                )?;
            }
            Ok(())
        }
        ReportFormat::Md => write_out(out, &markdown::report(&runs)),
        ReportFormat::Csv => write_out(out, &long_csv(&runs)),
        ReportFormat::Json => {
            let text = serde_json::to_string_pretty(&summary::summary(&runs)).expect("JSON of a summary");
            write_out(out, &(text + "\n"))
        }
    }
}

pub fn compare(args: &CompareArgs) -> Result<(), Failure> {
    let (a_path, b_path) = match (&args.baseline, &args.b) {
        (None, Some(b)) => (args.a.clone(), b.clone()),
        (Some(which), None) => (baseline(which, &args.a)?, args.a.clone()),
        (Some(_), Some(b)) => {
            return Err(Failure::usage(format!(
                "--baseline takes its A from the history: give the new run's file alone, not {} and {}",
                args.a.display(),
                b.display()
            )))
        }
        (None, None) => return Err(Failure::usage("compare takes two result files, A and B".into())),
    };
    let a = load(std::slice::from_ref(&a_path))?;
    let b = load(std::slice::from_ref(&b_path))?;
    for (l, p) in [(&a, &a_path), (&b, &b_path)] {
        if l.len() != 1 {
            return Err(Failure::usage(format!(
                "{} holds {} results; compare takes one result file on each side",
                p.display(),
                l.len()
            )));
        }
    }
    let both: Vec<Loaded> = a.into_iter().chain(b).collect();
    let runs = runs::runs(&both);
    let c = compare::compare(&runs[0], &runs[1]);
    let text = match args.format {
        CompareFormat::Table => compare::text(&c),
        CompareFormat::Md => compare::markdown(&c),
        CompareFormat::Json => serde_json::to_string_pretty(&compare::json(&c)).expect("JSON of a comparison") + "\n",
    };
    write_out(args.out.as_deref(), &text)?;
    let Some(threshold) = args.threshold else {
        return Ok(());
    };
    let worse = compare::regressions(&c, threshold);
    if worse.is_empty() {
        return Ok(());
    }
    Err(Failure::runtime(format!(
        "{} worse in {} than in {} beyond --threshold {threshold}% and the noise: {}",
        if worse.len() == 1 {
            "1 metric".to_string()
        } else {
            format!("{} metrics", worse.len())
        },
        b_path.display(),
        a_path.display(),
        worse
            .iter()
            .map(compare::Regression::describe)
            .collect::<Vec<_>>()
            .join("; ")
    )))
}
