//! A study's tables, from its manifest and result files only: Markdown in the publication's
//! shape (a column per metric and system), a wide CSV per table, and one long CSV with every
//! cell's provenance (result file, phase, field, raw number and factor).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use dfsbench_backends::redact::redact;
use dfsbench_result::RunResult;

use dfsbench_report::flags::SUSPECT_MARK;
use dfsbench_report::study_page::{self as page, CellDoc, PointDoc, RowDoc, StudyTables, SystemColumn, TableDoc};

use super::cells::{load, value, Value};
use super::manifest::Manifest;
use super::model::Study;
use super::reasons;

/// Numbers for people: three significant digits, whole numbers from 100 up.
fn short(v: f64, ratio: bool) -> String {
    if ratio {
        return format!("{v:.2}");
    }
    if v >= 100.0 || v == 0.0 {
        return format!("{v:.0}");
    }
    let decimals = (2 - v.abs().log10().floor() as i32).clamp(0, 9) as usize;
    format!("{v:.decimals$}")
}

fn md_escape(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn csv_line(fields: &[String]) -> String {
    let mut l = fields.iter().map(|f| csv_field(f)).collect::<Vec<_>>().join(",");
    l.push('\n');
    l
}

pub struct Rendered {
    pub markdown: String,
    /// Long format: a line per cell and system, with its provenance.
    pub cells_csv: String,
    /// Wide format, a file per table in the publication's shape.
    pub tables_csv: Vec<String>,
    /// The tables as data, with the publication's figures: `tables.json`.
    pub doc: StudyTables,
}

/// Header of the long CSV.
pub const CELLS_HEADER: &str =
    "table,row,column,system,value,unit,result,phase,field,raw,factor,baseline_result,baseline_raw,note";

/// Footnotes numbered in order of first use, one per distinct reason.
#[derive(Default)]
struct Footnotes(Vec<String>);

impl Footnotes {
    fn number(&mut self, why: &str) -> usize {
        match self.0.iter().position(|f| f == why) {
            Some(i) => i + 1,
            None => {
                self.0.push(why.to_string());
                self.0.len()
            }
        }
    }
}

/// A cell for people and its line of the long CSV; `whole`: a count, shown without decimals.
fn cell_doc(v: &Value, ratio: bool, whole: bool, unit: &str, notes: &mut Footnotes) -> (CellDoc, Vec<String>) {
    let mut doc = CellDoc {
        unit: unit.to_string(),
        ..Default::default()
    };
    let long = match v {
        Value::Num {
            value,
            src,
            factor,
            baseline,
        } => {
            doc.value = Some(*value);
            doc.text = if whole {
                format!("{value:.0}")
            } else {
                short(*value, ratio)
            };
            doc.result = Some(src.file.clone());
            // A number its own phase doubts (or its baseline's) keeps the run report's mark.
            let suspect = src
                .suspect
                .as_ref()
                .or(baseline.as_ref().and_then(|b| b.suspect.as_ref()));
            if let Some(why) = suspect {
                doc.text = format!("{} {SUSPECT_MARK}", doc.text);
                doc.footnote = Some(notes.number(&format!("{SUSPECT_MARK} {why}")));
            }
            vec![
                value.to_string(),
                unit.into(),
                src.file.clone(),
                src.phase.clone(),
                String::new(),
                src.raw.to_string(),
                factor.to_string(),
                baseline.as_ref().map(|b| b.file.clone()).unwrap_or_default(),
                baseline.as_ref().map(|b| b.raw.to_string()).unwrap_or_default(),
                suspect.cloned().unwrap_or_default(),
            ]
        }
        Value::Text { text, src } => {
            doc.text = text.clone();
            doc.result = Some(src.file.clone());
            vec![
                text.clone(),
                unit.into(),
                src.file.clone(),
                src.phase.clone(),
                String::new(),
                src.raw.to_string(),
                "1".into(),
                String::new(),
                String::new(),
                String::new(),
            ]
        }
        Value::Missing(why) => {
            doc.text = reasons::short(why);
            if doc.text != *why {
                doc.footnote = Some(notes.number(why));
            }
            let mut long = vec![String::new(), unit.into()];
            long.extend(std::iter::repeat_n(String::new(), 7));
            long.push(why.clone());
            long
        }
    };
    (doc, long)
}

/// The tables of the study from its files: as data, and the long CSV of their cells.
/// The warning under the tables for points whose figures rest on less than a second.
const SHORT_POINT: &str = "a phase measured for under a second: too short to trust; run a larger --scale";

/// Whether a measured phase of `r` ran for under a second (a timer's jitter and one slow
/// operation then decide its figure).
fn measured_under_a_second(r: &RunResult) -> bool {
    r.phases.iter().any(|p| !p.prepare && p.ops > 0 && p.duration_s < 1.0)
}

fn tables(study: &Study, m: &Manifest, dir: &Path) -> (StudyTables, String) {
    let loaded = load(study, m, dir);
    let mut notes = Footnotes::default();
    let mut cells_csv = format!("{CELLS_HEADER}\n");
    let mut tables = Vec::new();
    for (ti, t) in study.tables.iter().enumerate() {
        let mut rows = Vec::new();
        for r in &t.rows {
            let mut cells = Vec::new();
            for (c, cell) in t.columns.iter().zip(&r.cells) {
                let ratio = cell.baseline.is_some();
                let unit = if ratio { "x" } else { cell.metric.unit() };
                let mut per_system = Vec::new();
                for s in &m.systems {
                    let v = value(&loaded, &s.label, cell);
                    let (doc, mut long) = cell_doc(&v, ratio, cell.metric.is_count(), unit, &mut notes);
                    if !long[2].is_empty() {
                        long[4] = cell.metric.field();
                    }
                    let mut line = vec![(ti + 1).to_string(), r.labels.join(" / "), c.clone(), s.label.clone()];
                    line.extend(long);
                    cells_csv.push_str(&csv_line(&line));
                    per_system.push(doc);
                }
                cells.push(per_system);
            }
            rows.push(RowDoc {
                labels: r.labels.clone(),
                cells,
            });
        }
        tables.push(TableDoc {
            title: t.title.clone(),
            row_header: t.row_header.clone(),
            columns: t.columns.clone(),
            rows,
        });
    }
    if let Some(t) = study.score.and_then(|i| tables.get(i)) {
        let score = super::score::tables(study, m, &loaded, t);
        // The score's cells in the long CSV too: figures of the table's own cells.
        for (ti, t) in score.iter().enumerate().map(|(i, t)| (tables.len() + i, t)) {
            for r in &t.rows {
                for (c, col) in t.columns.iter().zip(&r.cells) {
                    for (s, cell) in m.systems.iter().zip(col) {
                        let mut line = vec![(ti + 1).to_string(), r.labels.join(" / "), c.clone(), s.label.clone()];
                        line.push(cell.value.map(|v| v.to_string()).unwrap_or_default());
                        line.push(cell.unit.clone());
                        line.extend(["", "", "io500 score"].map(String::from));
                        line.extend(std::iter::repeat_n(String::new(), 4));
                        line.push(if cell.value.is_none() {
                            cell.text.clone()
                        } else {
                            String::new()
                        });
                        cells_csv.push_str(&csv_line(&line));
                    }
                }
            }
        }
        tables.extend(score);
    }
    let mut warnings: BTreeMap<(&str, &str), Vec<&str>> = BTreeMap::new();
    for p in &m.points {
        for r in &p.runs {
            if let Some(w) = &r.warning {
                warnings.entry((&r.system, w)).or_default().push(&p.id);
            }
            if let Some(Ok((_, result))) = loaded.get(&p.id, &r.system) {
                if measured_under_a_second(result) {
                    warnings.entry((&r.system, SHORT_POINT)).or_default().push(&p.id);
                }
            }
        }
    }
    let doc = StudyTables {
        schema: page::SCHEMA.into(),
        study: study.name.into(),
        title: study.title.into(),
        publication: study.publication.into(),
        study_id: m.study_id.clone(),
        status: m.status.clone(),
        scale: m.scale,
        systems: m
            .systems
            .iter()
            .map(|s| SystemColumn {
                label: s.label.clone(),
                target: redact(&s.target),
            })
            .collect(),
        tables,
        figures: study.figures.clone(),
        footnotes: notes.0,
        notes: study.notes.clone(),
        warnings: warnings
            .iter()
            .map(|((system, w), ids)| format!("`{system}`, {}: {w}", ids.join(", ")))
            .collect(),
        points: m
            .points
            .iter()
            .map(|p| PointDoc {
                id: p.id.clone(),
                params: p.params.clone(),
            })
            .collect(),
    };
    (doc, cells_csv)
}

pub fn render(study: &Study, m: &Manifest, dir: &Path) -> Rendered {
    let (doc, cells_csv) = tables(study, m, dir);
    let several = doc.systems.len() > 1;
    let mut md = String::new();
    let _ = writeln!(md, "# {}: {}\n", study.name, study.title);
    let _ = writeln!(
        md,
        "Study {} ({}), scale {}, reproducing {}. Systems: {}.\n",
        doc.study_id,
        doc.status,
        doc.scale,
        doc.publication,
        doc.systems
            .iter()
            .map(|s| format!("`{}` = `{}`", s.label, s.target))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut tables_csv = Vec::new();
    for t in &doc.tables {
        let _ = writeln!(md, "## {}\n", t.title);
        let mut header: Vec<String> = t.row_header.clone();
        for c in &t.columns {
            for s in &doc.systems {
                header.push(if several {
                    format!("{c} ({})", s.label)
                } else {
                    c.clone()
                });
            }
        }
        let _ = writeln!(
            md,
            "| {} |",
            header.iter().map(|h| md_escape(h)).collect::<Vec<_>>().join(" | ")
        );
        let align: Vec<&str> = (0..header.len())
            .map(|i| if i < t.row_header.len() { "---" } else { "---:" })
            .collect();
        let _ = writeln!(md, "|{}|", align.join("|"));
        let mut wide = csv_line(&header);
        for r in &t.rows {
            let mut line = r.labels.clone();
            line.extend(r.cells.iter().flatten().map(page::with_mark));
            let _ = writeln!(
                md,
                "| {} |",
                line.iter().map(|x| md_escape(x)).collect::<Vec<_>>().join(" | ")
            );
            wide.push_str(&csv_line(&line));
        }
        md.push('\n');
        tables_csv.push(wide);
    }
    for (title, lines) in [
        (
            "Notes on cells",
            doc.footnotes
                .iter()
                .enumerate()
                .map(|(i, f)| format!("- [{}] {f}", i + 1))
                .collect::<Vec<_>>(),
        ),
        ("Notes", doc.notes.iter().map(|n| format!("- {n}")).collect()),
        ("Warnings", doc.warnings.iter().map(|w| format!("- {w}")).collect()),
    ] {
        if !lines.is_empty() {
            let _ = writeln!(md, "{title}:\n");
            for l in lines {
                let _ = writeln!(md, "{}", md_escape(&l));
            }
            md.push('\n');
        }
    }
    let _ = writeln!(md, "Points (effective parameters at scale {}):\n", doc.scale);
    for p in &doc.points {
        let _ = writeln!(md, "- `{}`: {}", p.id, p.params);
    }
    Rendered {
        markdown: md,
        cells_csv,
        tables_csv,
        doc,
    }
}
