//! The page of a study folder: the publication's figures drawn from the study's own tables
//! (`tables.json`, written by `dfsbench study`), then those tables, then the per-run report
//! with its run cards folded at the end. Every chart gives a system the same colour, and its
//! legend has one entry per system.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::fmt;
use crate::html::{self, esc};
use crate::published::Published;
use crate::runs::Run;
use crate::svg::{self, Axis, BarChart, BarGroup, LineChart, RenderError, Series, Ticks, HALF, WIDE};

/// Schema of `tables.json`.
pub const SCHEMA: &str = "dfsbench.study-tables/1";
/// Its name in a study folder.
pub const FILE: &str = "tables.json";

/// A study's tables as data: what `tables.md` shows, with numbers, units, footnotes and the
/// publication's figures.
#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct StudyTables {
    pub schema: String,
    pub study: String,
    pub title: String,
    /// The publication the study reproduces: authors, title, kind.
    pub publication: String,
    pub study_id: String,
    pub status: String,
    pub scale: f64,
    pub systems: Vec<SystemColumn>,
    pub tables: Vec<TableDoc>,
    pub figures: Vec<FigureSpec>,
    /// Footnote n (from 1) is `footnotes[n - 1]`: the full reason behind a cell's short code.
    pub footnotes: Vec<String>,
    pub notes: Vec<String>,
    pub warnings: Vec<String>,
    pub points: Vec<PointDoc>,
}

#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct SystemColumn {
    pub label: String,
    /// The target URI, secrets masked.
    pub target: String,
}

#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct PointDoc {
    pub id: String,
    /// The parameters that ran, at the study's scale.
    pub params: String,
}

#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct TableDoc {
    pub title: String,
    pub row_header: Vec<String>,
    /// Metric columns; each has a cell per system.
    pub columns: Vec<String>,
    pub rows: Vec<RowDoc>,
}

#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct RowDoc {
    pub labels: Vec<String>,
    /// `cells[column][system]`.
    pub cells: Vec<Vec<CellDoc>>,
}

#[derive(Serialize, Deserialize, Debug, Clone, Default)]
pub struct CellDoc {
    /// The number, in `unit`; none for words and gaps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    /// As shown: `123`, `continued`, `n/a: no rename on s3`.
    pub text: String,
    pub unit: String,
    /// The footnote with the full reason of a cell without a number, or of its mark.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub footnote: Option<usize>,
    /// The result file the number comes from, relative to the study folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
}

#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FigureKind {
    /// A line per system over a numeric x.
    Line,
    /// A bar per system in each row of the table.
    Bars,
}

/// How the x values of a line figure are drawn.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum XAxis {
    /// Counts on a log2 axis: threads, clients, nodes.
    Count,
    /// Bytes on a log2 axis: record sizes.
    Bytes,
    /// A linear axis: requested rates.
    Linear,
}

/// One of the publication's figures, drawn from the cells of one table column.
#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct FigureSpec {
    pub kind: FigureKind,
    pub title: String,
    pub x_label: String,
    pub x_axis: XAxis,
    pub y_label: String,
    pub series: Vec<SeriesSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caption: Option<String>,
    /// The bars' row names (bar figures); default: the rows' labels.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub categories: Vec<String>,
}

/// Cells of `tables[table]`, column `column`, in `rows`; `x` holds the x of each row (line
/// figures). A dashed series is drawn in the system's colour; its legend entry is the system
/// and `dashed_label` (what the dashes mean), with the dashes.
#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct SeriesSpec {
    pub table: usize,
    pub column: usize,
    pub rows: Vec<usize>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub x: Vec<f64>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dashed: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dashed_label: Option<String>,
}

impl StudyTables {
    fn cell(&self, s: &SeriesSpec, row: usize, system: usize) -> Option<&CellDoc> {
        self.tables
            .get(s.table)?
            .rows
            .get(row)?
            .cells
            .get(s.column)?
            .get(system)
    }

    fn value(&self, s: &SeriesSpec, row: usize, system: usize) -> Option<f64> {
        self.cell(s, row, system)?.value.filter(|v| v.is_finite())
    }
}

/// The titles of the study's tables, which the publication's figures name to go beside.
pub(crate) fn titles(doc: &StudyTables) -> Vec<&str> {
    doc.tables.iter().map(|t| t.title.as_str()).collect()
}

/// The colour of system `i` in every chart and swatch of the page.
pub(crate) fn system_colour(i: usize) -> String {
    svg::hex(svg::colour(i))
}

/// Where a study's figures and tables go: ids prefixed with `prefix` (so that several studies
/// share one page), and system k drawn in palette colour `colours[k]` (so that a system keeps
/// its colour across the studies of a page).
pub(crate) struct Place<'a> {
    pub(crate) prefix: &'a str,
    pub(crate) colours: &'a [usize],
}

impl Place<'_> {
    fn colour(&self, k: usize) -> usize {
        self.colours.get(k).copied().unwrap_or(k)
    }

    fn id(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }
}

/// One figure as SVG, or None when no system has a number in it.
fn draw(doc: &StudyTables, f: &FigureSpec, at: &Place) -> Result<Option<String>, RenderError> {
    let values = || {
        f.series.iter().flat_map(move |s| {
            s.rows
                .iter()
                .flat_map(move |&r| (0..doc.systems.len()).filter_map(move |k| doc.value(s, r, k)))
        })
    };
    if values().next().is_none() {
        return Ok(None);
    }
    let svg = match f.kind {
        FigureKind::Line => {
            // Ticks at the x values measured (8K, 256K, 8M), not at powers of two between them.
            let measured: Vec<f64> = f.series.iter().flat_map(|s| s.x.iter().copied()).collect();
            let x = match f.x_axis {
                XAxis::Count => Axis::log2(f.x_label.clone(), Ticks::Integer).ticks_at(measured),
                XAxis::Bytes => Axis::log2(f.x_label.clone(), Ticks::Bytes).ticks_at(measured),
                XAxis::Linear => Axis::linear(f.x_label.clone(), Ticks::Si).not_from_zero(),
            };
            let y = svg::rate_axis_for_lines(&f.y_label, values());
            let mut c = LineChart::new(f.title.clone(), x, y, HALF);
            for (k, sys) in doc.systems.iter().enumerate() {
                for s in &f.series {
                    let pts = s
                        .rows
                        .iter()
                        .zip(&s.x)
                        .filter_map(|(&r, &x)| doc.value(s, r, k).map(|v| (x, v)))
                        .collect();
                    let name = match (&s.dashed_label, s.dashed) {
                        (Some(what), true) => format!("{} {what}", sys.label),
                        (None, true) => String::new(),
                        (_, false) => sys.label.clone(),
                    };
                    let line = Series::line(name, svg::colour(at.colour(k)), pts).with_marker(svg::Marker::Circle);
                    c.series.push(if s.dashed { line.dashed() } else { line });
                }
            }
            svg::line_chart(&c)?
        }
        FigureKind::Bars => {
            let s = &f.series[0];
            let table = &doc.tables[s.table];
            let categories = match f.categories.is_empty() {
                true => s.rows.iter().map(|&r| table.rows[r].labels.join(", ")).collect(),
                false => f.categories.clone(),
            };
            let groups = doc
                .systems
                .iter()
                .enumerate()
                .map(|(k, sys)| BarGroup {
                    name: sys.label.clone(),
                    colour: svg::colour(at.colour(k)),
                    values: s.rows.iter().map(|&r| doc.value(s, r, k)).collect(),
                })
                .collect();
            svg::bar_chart(&BarChart {
                title: f.title.clone(),
                categories,
                groups,
                axis: svg::rate_axis(&f.y_label, values()),
                value_text: fmt::si,
                width: WIDE.0,
            })?
        }
    };
    Ok(Some(svg))
}

/// Systems without a number in a figure, with the codes of their cells.
fn gaps(doc: &StudyTables, f: &FigureSpec) -> Vec<String> {
    let mut out = Vec::new();
    for (k, sys) in doc.systems.iter().enumerate() {
        let cells: Vec<&CellDoc> = f
            .series
            .iter()
            .flat_map(|s| s.rows.iter().filter_map(move |&r| doc.cell(s, r, k)))
            .collect();
        if cells.iter().all(|c| c.value.is_none()) {
            let mut codes: Vec<String> = cells.iter().map(|c| with_mark(c)).collect();
            codes.dedup();
            out.push(format!("{}: {}", sys.label, codes.join(", ")));
        }
    }
    out
}

/// A cell's text with its footnote mark, as tables.md writes it.
pub fn with_mark(c: &CellDoc) -> String {
    match c.footnote {
        Some(n) => format!("{} [{n}]", c.text),
        None => c.text.clone(),
    }
}

pub(crate) const CSS: &str = r#"
.legend { display: flex; flex-wrap: wrap; gap: 4px 18px; margin: 10px 0 4px; font-size: 13px; }
.study-figures figure svg { max-width: 100%; }
table.study { width: auto; min-width: 50%; }
table.study th { text-align: center; }
table.study th.l, table.study td.l { text-align: left; }
table.study td.gap { color: var(--muted); font-size: 12.5px; white-space: normal; min-width: 84px; }
table.study sup a { color: var(--muted); text-decoration: none; }
.scroll { max-width: 100%; overflow-x: auto; border: 1px solid var(--line); border-radius: 6px; padding: 0 4px; margin: 8px 0; }
ol.footnotes { font-size: 13px; color: var(--muted); padding-left: 22px; }
ol.footnotes li { overflow-wrap: anywhere; }
"#;

fn swatch(k: usize) -> String {
    format!(
        r#"<span class="swatch" style="background:{}"></span>"#,
        system_colour(k)
    )
}

fn legend(doc: &StudyTables, at: &Place) -> String {
    let mut out = format!("<div class=\"legend\" id=\"{}\">", at.id("systems"));
    for (k, s) in doc.systems.iter().enumerate() {
        let _ = write!(
            out,
            r#"<span class="system" data-colour="{}">{}<b>{}</b> <code>{}</code></span>"#,
            system_colour(at.colour(k)),
            swatch(at.colour(k)),
            esc(&s.label),
            esc(&s.target)
        );
    }
    out.push_str("</div>\n");
    out
}

pub(crate) fn figures(doc: &StudyTables, at: &Place) -> Result<String, RenderError> {
    let mut out = format!(
        "<section id=\"{}\" class=\"study-figures\"><h2>Figures</h2>\n",
        at.id("figures")
    );
    out.push_str(&legend(doc, at));
    let colours: Vec<String> = (0..doc.systems.len()).map(|k| system_colour(at.colour(k))).collect();
    let systems_attr = serde_json::to_string(
        &doc.systems
            .iter()
            .zip(&colours)
            .map(|(s, c)| (s.label.clone(), c.clone()))
            .collect::<std::collections::BTreeMap<_, _>>(),
    )
    .expect("JSON of labels");
    out.push_str("<div class=\"grid\">\n");
    let mut drawn = 0;
    let mut empty = Vec::new();
    for (i, f) in doc.figures.iter().enumerate() {
        let Some(svg) = draw(doc, f, at)? else {
            empty.push(f.title.clone());
            continue;
        };
        drawn += 1;
        let wide = f.kind == FigureKind::Bars;
        let _ = write!(
            out,
            r#"<figure class="chart study{}" id="{}study-figure-{i}" data-kind="study-{}" data-title="{}" data-systems="{}">"#,
            if wide { " wide" } else { "" },
            at.prefix,
            if wide { "bars" } else { "line" },
            esc(&f.title),
            esc(&systems_attr)
        );
        out.push_str(&svg.replacen(
            "<svg ",
            &format!(r#"<svg role="img" aria-label="{}" "#, esc(&f.title)),
            1,
        ));
        let mut caption: Vec<String> = f.caption.iter().cloned().collect();
        let missing = gaps(doc, f);
        if !missing.is_empty() {
            caption.push(format!("No numbers: {}.", missing.join("; ")));
        }
        if !caption.is_empty() {
            let _ = write!(out, "<figcaption>{}</figcaption>", esc(&caption.join(" ")));
        }
        out.push_str("</figure>\n");
    }
    out.push_str("</div>\n");
    if drawn == 0 {
        out.push_str(
            "<p class=\"note\">No figure has a number yet: every cell it draws from is a gap (see the tables).</p>\n",
        );
    } else if !empty.is_empty() {
        let _ = writeln!(
            out,
            "<p class=\"note\">Not drawn, no system has a number in them: {}.</p>",
            esc(&empty.join("; "))
        );
    }
    out.push_str("</section>\n");
    Ok(out)
}

fn table(out: &mut String, doc: &StudyTables, t: &TableDoc, i: usize, at: &Place) {
    let n = doc.systems.len();
    let _ = writeln!(out, "<h3 id=\"{}table-{}\">{}</h3>", at.prefix, i + 1, esc(&t.title));
    out.push_str("<div class=\"scroll\"><table class=\"study\"><thead><tr>");
    let span = if n > 1 { 2 } else { 1 };
    for h in &t.row_header {
        let _ = write!(out, "<th class=\"l\" rowspan=\"{span}\">{}</th>", esc(h));
    }
    for c in &t.columns {
        let _ = write!(out, "<th colspan=\"{n}\">{}</th>", esc(c));
    }
    out.push_str("</tr>");
    if n > 1 {
        out.push_str("<tr>");
        for _ in &t.columns {
            for (k, s) in doc.systems.iter().enumerate() {
                let _ = write!(out, "<th>{}{}</th>", swatch(at.colour(k)), esc(&s.label));
            }
        }
        out.push_str("</tr>");
    }
    out.push_str("</thead><tbody>\n");
    for r in &t.rows {
        out.push_str("<tr>");
        for l in &r.labels {
            let _ = write!(out, "<td class=\"l\">{}</td>", esc(l));
        }
        for col in &r.cells {
            for c in col {
                let class = if c.value.is_none() { " class=\"gap\"" } else { "" };
                let mark = c
                    .footnote
                    .map(|f| format!("<sup><a href=\"#{}note-{f}\">[{f}]</a></sup>", at.prefix))
                    .unwrap_or_default();
                let _ = write!(out, "<td{class}>{}{mark}</td>", esc(&c.text));
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table></div>\n");
}

/// The study's tables; `beside(i)` is what goes after table i (the publication's own figures
/// on a page of several studies).
pub(crate) fn tables(doc: &StudyTables, at: &Place, beside: &dyn Fn(usize) -> String) -> String {
    let mut out = format!("<section id=\"{}\"><h2>Tables</h2>\n", at.id("tables"));
    for (i, t) in doc.tables.iter().enumerate() {
        table(&mut out, doc, t, i, at);
        out.push_str(&beside(i));
    }
    if !doc.footnotes.is_empty() {
        let _ = writeln!(
            out,
            "<h3 id=\"{}\">Notes on cells</h3>\n<ol class=\"footnotes\">",
            at.id("notes")
        );
        for (i, f) in doc.footnotes.iter().enumerate() {
            let _ = writeln!(out, "<li id=\"{}note-{}\">{}</li>", at.prefix, i + 1, esc(f));
        }
        out.push_str("</ol>\n");
    }
    for (title, lines) in [("Notes", &doc.notes), ("Warnings", &doc.warnings)] {
        if !lines.is_empty() {
            let _ = writeln!(out, "<h3>{title}</h3>\n<ul class=\"note\">");
            for l in lines {
                let _ = writeln!(out, "<li>{}</li>", esc(l));
            }
            out.push_str("</ul>\n");
        }
    }
    let _ = writeln!(
        out,
        "<details id=\"{}\"><summary>Points: the parameters that ran at scale {}</summary><ul class=\"note\">",
        at.id("points"),
        doc.scale
    );
    for p in &doc.points {
        let _ = writeln!(out, "<li><code>{}</code>: {}</li>", esc(&p.id), esc(&p.params));
    }
    out.push_str("</ul></details>\n</section>\n");
    out
}

/// Markers of the per-run page this page is built around.
const BODY: &str = "<body><main>";
const HEADER_END: &str = "</header>";
const RUNS: &str = "<h2 id=\"runs\">";
const SUMMARY: &str = "<h2 id=\"summary\">";
const FOOTER: &str = "<footer>";

fn cut<'a>(page: &'a str, marker: &str) -> Result<(&'a str, &'a str), RenderError> {
    page.find(marker)
        .map(|at| page.split_at(at))
        .ok_or_else(|| RenderError::Drawing(format!("the run report has no '{marker}'")))
}

const THROUGHPUT: &str = "<h2 id=\"throughput\">";
const TIMELINE: &str = "<h2 id=\"timeline\">";

/// The run report's charts over all runs (throughput, latency, comparison) have a legend entry
/// per run: on a study page they are folded, the study's figures come first.
fn fold_run_charts(data: &str) -> String {
    let (Some(a), Some(b)) = (data.find(THROUGHPUT), data.find(TIMELINE)) else {
        return data.to_string();
    };
    if a > b {
        return data.to_string();
    }
    format!(
        "{}<details id=\"run-charts\"><summary>Throughput, latency and comparison charts of every run (a legend entry per run)</summary>\n{}</details>\n{}",
        &data[..a],
        &data[a..b],
        &data[b..]
    )
}

/// The study page: the per-run report of `runs` (coloured by system) around the study's
/// figures and tables, with the publication's own figures beside them. `system_of[i]` is the
/// index of run i's system.
pub fn render(
    doc: &StudyTables,
    published: &Published,
    runs: &mut [Run],
    system_of: &[usize],
    page: &html::Page,
) -> Result<String, RenderError> {
    for (r, &k) in runs.iter_mut().zip(system_of) {
        r.colour = k;
    }
    let title = page
        .title
        .clone()
        .unwrap_or_else(|| format!("dfsbench study {}: {}", doc.study, doc.title));
    let inner = html::Page {
        title: Some(title.clone()),
        command: page.command.clone(),
        generated_at: page.generated_at.clone(),
    };
    let report = html::render(runs, &inner)?;
    let (head, rest) = cut(&report, BODY)?;
    let (_, rest) = cut(rest, HEADER_END)?;
    let rest = &rest[HEADER_END.len()..];
    let (warnings, rest) = cut(rest, RUNS)?;
    let (cards, rest) = cut(rest, SUMMARY)?;
    let (data, footer) = cut(rest, FOOTER)?;

    let mut out = String::with_capacity(report.len() + 64 * 1024);
    out.push_str(&head.replacen(
        "</head>",
        &format!("<style>{CSS}{}</style></head>", crate::published::CSS),
        1,
    ));
    out.push_str(BODY);
    let _ = writeln!(out, "<header><h1>{}</h1>", esc(&title));
    let _ = writeln!(
        out,
        "<p class=\"sub\" id=\"provenance\">Reproduces {} · study <code>{}</code> ({}) at scale {} · {} systems, {} runs · report made {} by dfsbench {}</p>",
        esc(&doc.publication),
        esc(&doc.study_id),
        esc(&doc.status),
        doc.scale,
        doc.systems.len(),
        runs.len(),
        esc(&page.generated_at),
        env!("CARGO_PKG_VERSION")
    );
    out.push_str("<nav><a href=\"#figures\">figures</a><a href=\"#tables\">tables</a><a href=\"#summary\">per run</a><a href=\"#run-cards\">run cards</a></nav></header>\n");
    let colours: Vec<usize> = (0..doc.systems.len()).collect();
    let at = Place {
        prefix: "",
        colours: &colours,
    };
    out.push_str(&crate::published::none(published));
    out.push_str(&figures(doc, &at)?);
    out.push_str(&tables(doc, &at, &|i| {
        crate::published::block(published, &titles(doc), Some(i))
    }));
    out.push_str(&crate::published::block(published, &titles(doc), None));
    out.push_str(warnings);
    out.push_str("<section id=\"per-run\"><h2>dfsbench's data per run</h2>\n<p class=\"note\">What the tables are made of: every run's phases, latency and time lines.</p>\n");
    out.push_str(&fold_run_charts(data));
    out.push_str("</section>\n");
    let _ = writeln!(
        out,
        "<details id=\"run-cards\"><summary>Run cards: target, host, command and config of each of the {} runs</summary>",
        runs.len()
    );
    out.push_str(&cards.replacen(RUNS, "<h2 id=\"runs\" hidden>", 1));
    out.push_str("</details>\n");
    out.push_str(footer);
    Ok(out)
}

#[cfg(test)]
mod tests;
