//! `dfsbench history`: the runs and studies of this machine, remembered in a local store
//! (store.rs), listed and filtered, with a trend per target and workload; and the baseline of
//! `compare --baseline`. Every run and study records itself when it has written its result.

mod store;

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use dfsbench_result::units::{format_ns, rate_si};
use dfsbench_result::RunResult;

pub use store::{workload_of, Filter, Recorded, Store};

use crate::failure::Failure;
use crate::study::manifest::{Manifest, FILE};

/// Where the store lives: `DFSBENCH_HISTORY` (a file; `off` records nothing), else
/// `$XDG_DATA_HOME/dfsbench/history.sqlite` or `~/.local/share/dfsbench/history.sqlite`.
pub const ENV: &str = "DFSBENCH_HISTORY";

pub fn location() -> Option<PathBuf> {
    match std::env::var_os(ENV) {
        Some(v) if v == "off" => None,
        Some(v) if !v.is_empty() => Some(PathBuf::from(v)),
        _ => {
            let data = std::env::var_os("XDG_DATA_HOME")
                .filter(|d| !d.is_empty())
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))?;
            Some(data.join("dfsbench/history.sqlite"))
        }
    }
}

/// The store, or why there is none: off, or not openable.
fn open() -> Result<Store, Failure> {
    let path = location().ok_or_else(|| {
        Failure::usage(format!(
            "{ENV}=off: no history is kept; unset it (or name a file) to keep one"
        ))
    })?;
    refuse_non_file(&path)?;
    Store::open(&path).map_err(Failure::runtime)
}

/// The store is a regular file the history made: never a device, a FIFO or a folder.
fn refuse_non_file(path: &Path) -> Result<(), Failure> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if !m.file_type().is_file() => Err(Failure::usage(format!(
            "{ENV}={} is not a regular file: name a file for the history store",
            path.display()
        ))),
        _ => Ok(()),
    }
}

/// A result file, if it is one (of any size a result may have).
pub fn read_result(path: &Path) -> Result<RunResult, String> {
    let text = dfsbench_result::files::read_bounded(path, dfsbench_result::files::MAX_RESULT_FILE)
        .map_err(|e| e.to_string())?;
    let r: RunResult = serde_json::from_slice(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    if r.schema != dfsbench_result::SCHEMA {
        return Err(format!("{}: schema {}", path.display(), r.schema));
    }
    Ok(r)
}

/// After a run wrote `file`: record it. A store that cannot take it costs a note, never the
/// run (the result file is what counts).
pub fn record_run(r: &RunResult, file: &Path, tag: Option<&str>) {
    let Some(path) = location() else { return };
    let recorded = refuse_non_file(&path)
        .map_err(|e| e.to_string())
        .and_then(|()| Store::open(&path))
        .and_then(|mut s| s.record_run(r, file, tag, None));
    if let Err(e) = recorded {
        eprintln!("note: not in the history: {e}");
    }
}

/// After a study wrote its manifest in `dir`: record the study and each point's result file,
/// under the study's id.
pub fn record_study(dir: &Path) {
    let Some(path) = location() else { return };
    let recorded = refuse_non_file(&path)
        .map_err(|e| e.to_string())
        .and_then(|()| Store::open(&path))
        .and_then(|mut s| {
            let (row, points) = remembered(dir)?;
            for (r, file) in &points {
                s.record_run(r, file, r.tag.as_deref(), Some(&row.id))?;
            }
            s.record_study(row)
        });
    if let Err(e) = recorded {
        eprintln!("note: study not in the history: {e}");
    }
}

/// The study in `dir` as the history keeps it: a row of its own, and each point's result
/// file (with the result) that is still there.
fn remembered(dir: &Path) -> Result<(Recorded, Vec<(RunResult, PathBuf)>), String> {
    let m = Manifest::load(dir)?;
    let files = m.points.iter().flat_map(|p| &p.runs).filter_map(|r| r.result.as_ref());
    let points = files
        .filter_map(|f| {
            let path = dir.join(f);
            crate::history::read_result(&path).ok().map(|r| (r, path))
        })
        .collect();
    let row = Recorded {
        id: m.study_id.clone(),
        started: m.started_at.clone(),
        kind: "study".into(),
        target: m
            .systems
            .iter()
            .map(|s| s.target.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        workload: m.study.clone(),
        config_hash: format!("scale {}", m.scale),
        status: m.status.clone(),
        tag: None,
        study: None,
        path: std::path::absolute(dir.join(FILE))
            .unwrap_or_else(|_| dir.join(FILE))
            .to_string_lossy()
            .into_owned(),
        phases: Vec::new(),
    };
    Ok((row, points))
}

/// The stored run `compare --baseline` compares `new` with: same target, workload and
/// configuration, the newest before it (with `tag`, the newest so tagged).
pub fn baseline(new: &RunResult, tag: Option<&str>) -> Result<Option<Recorded>, Failure> {
    open()?.baseline(new, tag).map_err(Failure::runtime)
}

#[derive(ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HistoryFormat {
    /// An aligned text table.
    #[default]
    Table,
    Json,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Run,
    Study,
}

#[derive(Args, Debug)]
#[command(
    after_help = "The store: $DFSBENCH_HISTORY, else $XDG_DATA_HOME/dfsbench/history.sqlite \
(~/.local/share/dfsbench/history.sqlite); DFSBENCH_HISTORY=off keeps none.\n\nExamples:\n  \
dfsbench history --last 10\n  dfsbench history --target /mnt/cephfs --workload files --trend\n  \
dfsbench history --trend --html trend.html\n  dfsbench history --rebuild dfsbench-results/ studies/"
)]
pub struct HistoryArgs {
    /// Runs whose target URI contains TEXT.
    #[arg(long, value_name = "TEXT")]
    pub target: Option<String>,
    /// Runs of this workload (`files`, `meta`; `mix+io` for a file of several jobs).
    #[arg(long, value_name = "NAME")]
    pub workload: Option<String>,
    /// Runs given this tag (`dfsbench run --tag`).
    #[arg(long, value_name = "TAG")]
    pub tag: Option<String>,
    /// Runs or studies only.
    #[arg(long, value_enum)]
    pub kind: Option<Kind>,
    /// The newest N.
    #[arg(long, value_name = "N")]
    pub last: Option<usize>,
    /// Per target and workload, each phase's ops/s over the runs, oldest first, with the change
    /// of the newest against the first and the previous.
    #[arg(long)]
    pub trend: bool,
    /// With --trend: also write the HTML report of those runs (their charts side by side).
    #[arg(long, value_name = "FILE", requires = "trend")]
    pub html: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = HistoryFormat::Table)]
    pub format: HistoryFormat,
    /// Make the store again from result files: those it points to, and every result (and
    /// study.json) under each DIR [default: ./dfsbench-results].
    #[arg(long, value_name = "DIR", num_args = 0.., conflicts_with_all = ["trend", "last"])]
    pub rebuild: Option<Vec<PathBuf>>,
}

pub fn history(a: &HistoryArgs) -> Result<(), Failure> {
    if let Some(dirs) = &a.rebuild {
        return rebuild::rebuild(dirs);
    }
    let store = open()?;
    let filter = Filter {
        target: a.target.clone(),
        workload: a.workload.clone(),
        tag: a.tag.clone(),
        kind: a.kind.map(|k| if k == Kind::Run { "run" } else { "study" }.to_string()),
        last: a.last,
    };
    let runs = store.runs(&filter).map_err(Failure::runtime)?;
    let text = match (a.format, a.trend) {
        (HistoryFormat::Json, _) => serde_json::to_string_pretty(&runs).expect("JSON of the history") + "\n",
        (HistoryFormat::Table, false) => list(&runs),
        (HistoryFormat::Table, true) => trend::text(&runs),
    };
    if runs.is_empty() {
        eprintln!("no run in {} matches", store.path().display());
    }
    crate::stdout::print(text, "the history")?;
    if let Some(file) = &a.html {
        trend::html(&runs, file)?;
    }
    Ok(())
}

/// A line per run: when, what, where, and its first measured phase.
fn list(runs: &[Recorded]) -> String {
    let mut t = dfsbench_report::Table::new(vec![
        dfsbench_report::left("run"),
        dfsbench_report::left("started"),
        dfsbench_report::left("target"),
        dfsbench_report::left("workload"),
        dfsbench_report::left("status"),
        dfsbench_report::left("tag"),
        dfsbench_report::left("first phase"),
    ]);
    for r in runs {
        let first = r.phases.first().map_or_else(String::new, |p| {
            let bytes = if p.bytes_per_sec > 0.0 {
                format!(", {:.1} MiB/s", p.bytes_per_sec / (1u64 << 20) as f64)
            } else {
                String::new()
            };
            format!(
                "{}: {} ops/s{bytes}, p99 {}",
                p.label,
                rate_si(p.ops_per_sec),
                format_ns(p.p99_ns)
            )
        });
        t.push(vec![
            r.id.clone(),
            r.started.clone(),
            r.target.clone(),
            if r.kind == "study" {
                format!("study {}", r.workload)
            } else {
                r.workload.clone()
            },
            r.status.clone(),
            r.tag.clone().unwrap_or_default(),
            first,
        ]);
    }
    t.text()
}

mod rebuild;
mod trend;
