//! `history --trend`: per target, workload and configuration, each phase's ops/s over the
//! stored runs (first, previous, newest, the range, and the newest's change against the first
//! and the previous run), and with `--html` the report of those runs' result files.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use dfsbench_report::{left, right, Table};
use dfsbench_result::units::rate_si;

use super::Recorded;
use crate::failure::Failure;

/// Runs that measured the same thing: one target, workload and configuration.
fn groups(runs: &[Recorded]) -> BTreeMap<(String, String, String), Vec<&Recorded>> {
    let mut out: BTreeMap<_, Vec<&Recorded>> = BTreeMap::new();
    for r in runs.iter().filter(|r| r.kind == "run") {
        out.entry((r.target.clone(), r.workload.clone(), r.config_hash.clone()))
            .or_default()
            .push(r);
    }
    out
}

fn change(new: f64, old: f64) -> String {
    if old > 0.0 {
        format!("{:+.1}%", (new - old) / old * 100.0)
    } else {
        "-".into()
    }
}

pub fn text(runs: &[Recorded]) -> String {
    let mut out = String::new();
    for ((target, workload, hash), group) in groups(runs) {
        let (first, newest) = (group[0], group[group.len() - 1]);
        let _ = writeln!(
            out,
            "{target}  {workload}  (configuration {}): {} run{} from {} to {}",
            &hash[..hash.len().min(12)],
            group.len(),
            if group.len() == 1 { "" } else { "s" },
            first.started,
            newest.started
        );
        let mut t = Table::new(vec![
            left("phase (ops/s)"),
            right("runs"),
            right("first"),
            right("previous"),
            right("newest"),
            right("min"),
            right("max"),
            right("vs first"),
            right("vs previous"),
        ]);
        let mut labels: Vec<&str> = Vec::new();
        for r in &group {
            for p in &r.phases {
                if !labels.contains(&p.label.as_str()) {
                    labels.push(&p.label);
                }
            }
        }
        for label in labels {
            let values: Vec<f64> = group
                .iter()
                .filter_map(|r| r.phases.iter().find(|p| p.label == label))
                .map(|p| p.ops_per_sec)
                .collect();
            let n = values.len();
            let (first, newest) = (values[0], values[n - 1]);
            let previous = if n > 1 { Some(values[n - 2]) } else { None };
            let min = values.iter().copied().fold(f64::INFINITY, f64::min);
            let max = values.iter().copied().fold(0.0, f64::max);
            t.push(vec![
                label.to_string(),
                n.to_string(),
                rate_si(first),
                previous.map_or_else(|| "-".into(), rate_si),
                rate_si(newest),
                rate_si(min),
                rate_si(max),
                if n > 1 { change(newest, first) } else { "-".into() },
                previous.map_or_else(|| "-".into(), |p| change(newest, p)),
            ]);
        }
        out += &t.text();
        out.push('\n');
    }
    out
}

/// The HTML report of the runs whose result files are still where they were written.
pub fn html(runs: &[Recorded], file: &Path) -> Result<(), Failure> {
    let (present, gone): (Vec<PathBuf>, Vec<PathBuf>) = runs
        .iter()
        .filter(|r| r.kind == "run")
        .map(|r| PathBuf::from(&r.path))
        .partition(|p| p.is_file());
    if !gone.is_empty() {
        eprintln!(
            "note: {} result file{} moved or removed since the run, left out of the report: {}",
            gone.len(),
            if gone.len() == 1 { "" } else { "s" },
            gone[0].display()
        );
    }
    if present.is_empty() {
        return Err(Failure::runtime(
            "no result file of these runs is where it was written: nothing to report".into(),
        ));
    }
    let loaded = dfsbench_report::input::load(&present)?;
    let page = dfsbench_report::html::Page {
        title: Some("dfsbench history".into()),
        command: dfsbench_report::html::shell_words(&dfsbench_backends::redact::command_line()),
        generated_at: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
    };
    let text = dfsbench_report::html::render(&dfsbench_report::runs::runs(&loaded), &page)?;
    dfsbench_result::files::write_output(file, text.as_bytes())
        .map_err(|e| Failure::runtime(format!("cannot write {}: {e}", file.display())))?;
    crate::stdout::print(
        format!("report: {} ({} runs)\n", file.display(), loaded.len()),
        "where the report went",
    )
}
