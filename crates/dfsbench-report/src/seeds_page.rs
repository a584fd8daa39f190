//! The page of `dfsbench study all`: a contents table (each study, its systems, how many of its
//! cells are filled, not applicable, not run or failed), then each study's figures and tables
//! as its own page draws them, with the publication's own figures beside them. A system has
//! one colour on the whole page, in every study's charts.

use std::fmt::Write as _;

use crate::html::{self, esc};
use crate::published::{self, Published};
use crate::study_page::{self, CellDoc, Place, StudyTables};
use crate::svg::RenderError;

/// One study of the page.
pub struct Section {
    pub doc: StudyTables,
    /// The study's folder, as a link from the page.
    pub folder: String,
    pub published: Published,
}

/// How a study's cells ended, over every table, column and system.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    /// A number, or a word that is the result (a failure matrix's `continued`).
    pub filled: usize,
    /// Does not apply to the system (`n/a: ...`).
    pub not_applicable: usize,
    /// Not run (left out with --points, or the study stopped before it).
    pub not_run: usize,
    /// The run failed or was interrupted.
    pub failed: usize,
}

impl Counts {
    pub fn total(&self) -> usize {
        self.filled + self.not_applicable + self.not_run + self.failed
    }
}

fn count(c: &CellDoc, n: &mut Counts) {
    let t = c.text.as_str();
    if c.value.is_some() {
        n.filled += 1;
    } else if t == "not run" {
        n.not_run += 1;
    } else if t.starts_with("n/a") {
        n.not_applicable += 1;
    } else if ["error", "failed", "interrupted", "timed out"]
        .iter()
        .any(|k| t.starts_with(k))
    {
        n.failed += 1;
    } else {
        n.filled += 1;
    }
}

/// The counts of `doc`'s cells.
pub fn counts(doc: &StudyTables) -> Counts {
    let mut n = Counts::default();
    for c in doc.tables.iter().flat_map(|t| &t.rows).flat_map(|r| &r.cells).flatten() {
        count(c, &mut n);
    }
    n
}

/// Every system of the page, in the order the studies name them: a system's index is its
/// colour.
pub fn systems(sections: &[Section]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in sections.iter().flat_map(|s| &s.doc.systems) {
        if !out.contains(&s.label) {
            out.push(s.label.clone());
        }
    }
    out
}

const CSS: &str = r#"
table.contents td, table.contents th { text-align: right; }
table.contents td.l, table.contents th.l { text-align: left; white-space: normal; }
table.contents td.l:first-child { white-space: nowrap; }
table.contents span.sys { white-space: nowrap; margin-right: 6px; }
section.seed { margin-top: 56px; }
section.seed > h2 { font-size: 23px; border-bottom-width: 3px; }
"#;

fn swatches(labels: &[String], all: &[String]) -> String {
    labels
        .iter()
        .map(|l| {
            let k = all.iter().position(|a| a == l).unwrap_or(0);
            format!(
                r#"<span class="sys"><span class="swatch" style="background:{}"></span>{}</span>"#,
                study_page::system_colour(k),
                esc(l)
            )
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn contents(sections: &[Section], all: &[String]) -> String {
    let mut out = String::from(
        "<section id=\"contents\"><h2>Contents</h2>\n<div class=\"scroll\"><table class=\"contents\"><thead><tr><th class=\"l\">study</th><th class=\"l\">publication</th><th class=\"l\">systems</th><th>cells</th><th>filled</th><th>n/a</th><th>not run</th><th>failed</th><th class=\"l\">status</th><th class=\"l\">published figures</th></tr></thead><tbody>\n",
    );
    for s in sections {
        let d = &s.doc;
        let n = counts(d);
        let labels: Vec<String> = d.systems.iter().map(|s| s.label.clone()).collect();
        let published = match (&s.published.none, s.published.figures.len()) {
            (_, k) if k > 0 => format!("{k} numbers"),
            (Some(_), _) => "none in text form".to_string(),
            (None, _) => "none".to_string(),
        };
        let _ = writeln!(
            out,
            "<tr class=\"study-row\" data-study=\"{study}\" data-filled=\"{}\" data-na=\"{}\" data-not-run=\"{}\" data-failed=\"{}\"><td class=\"l\"><a href=\"#{study}\"><b>{study}</b></a></td><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td></tr>",
            n.filled,
            n.not_applicable,
            n.not_run,
            n.failed,
            esc(&d.title),
            swatches(&labels, all),
            n.total(),
            n.filled,
            n.not_applicable,
            n.not_run,
            n.failed,
            esc(&d.status),
            esc(&published),
            study = esc(&d.study),
        );
    }
    out.push_str("</tbody></table></div>\n<p class=\"note\">Cells: every table cell of the study, one per system. Filled: a number (or the outcome a failure matrix records); n/a: the point does not apply to the system (the footnotes say why); not run: left out with --points or not reached; failed: the run failed or was interrupted. Published figures: the numbers the publication prints in its text, shown beside dfsbench's tables with the paper's hardware.</p>\n</section>\n");
    out
}

/// The section headings one level down: a study's Figures and Tables sit under its own heading.
fn demote(html: &str) -> String {
    html.replace("<h3", "<h4")
        .replace("</h3>", "</h4>")
        .replace("<h2", "<h3")
        .replace("</h2>", "</h3>")
}

fn section(s: &Section, all: &[String]) -> Result<String, RenderError> {
    let d = &s.doc;
    let colours: Vec<usize> = d
        .systems
        .iter()
        .map(|sys| all.iter().position(|a| *a == sys.label).unwrap_or(0))
        .collect();
    let prefix = format!("{}-", d.study);
    let at = Place {
        prefix: &prefix,
        colours: &colours,
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<section class=\"seed\" id=\"{study}\"><h2>{study}: {}</h2>\n<p class=\"sub\">Reproduces {} · study <code>{}</code> ({}) at scale {} · folder <a href=\"{folder}/tables.md\"><code>{folder}/</code></a> (its per-run page: <code>dfsbench report {folder}</code>)</p>",
        esc(&d.title),
        esc(&d.publication),
        esc(&d.study_id),
        esc(&d.status),
        d.scale,
        study = esc(&d.study),
        folder = esc(&s.folder),
    );
    let p = &s.published;
    out.push_str(&published::none(p));
    let mut body = study_page::figures(d, &at)?;
    let titles = study_page::titles(d);
    body.push_str(&study_page::tables(d, &at, &|i| published::block(p, &titles, Some(i))));
    out.push_str(&demote(&body));
    out.push_str(&published::block(p, &titles, None));
    if !p.notes.is_empty() {
        out.push_str("<ul class=\"note\">");
        for n in &p.notes {
            let _ = write!(out, "<li>Published figures: {}</li>", esc(n));
        }
        out.push_str("</ul>\n");
    }
    out.push_str("</section>\n");
    Ok(out)
}

/// The whole page.
pub fn render(sections: &[Section], page: &html::Page) -> Result<String, RenderError> {
    let all = systems(sections);
    let title = page
        .title
        .clone()
        .unwrap_or_else(|| "dfsbench seed studies".to_string());
    let mut out = String::with_capacity(256 * 1024);
    let _ = writeln!(
        out,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{}</title><style>{}{}{}{CSS}</style></head><body><main>",
        esc(&title),
        html::CSS,
        study_page::CSS,
        published::CSS
    );
    let scales: Vec<String> = {
        let mut v: Vec<String> = sections.iter().map(|s| s.doc.scale.to_string()).collect();
        v.dedup();
        v
    };
    let _ = writeln!(
        out,
        "<header><h1>{}</h1>\n<p class=\"sub\" id=\"provenance\">{} seed studies on {} systems at scale {} · report made {} by dfsbench {}</p>",
        esc(&title),
        sections.len(),
        all.len(),
        esc(&scales.join(", ")),
        esc(&page.generated_at),
        env!("CARGO_PKG_VERSION")
    );
    out.push_str("<div class=\"legend\" id=\"systems\">");
    for (k, l) in all.iter().enumerate() {
        let _ = write!(
            out,
            r#"<span class="system" data-colour="{}"><span class="swatch" style="background:{}"></span><b>{}</b></span>"#,
            study_page::system_colour(k),
            study_page::system_colour(k),
            esc(l)
        );
    }
    out.push_str("</div>\n<nav>");
    for s in sections {
        let _ = write!(out, "<a href=\"#{0}\">{0}</a>", esc(&s.doc.study));
    }
    out.push_str("</nav></header>\n");
    out.push_str(&contents(sections, &all));
    for s in sections {
        out.push_str(&section(s, &all)?);
    }
    let _ = writeln!(
        out,
        "<footer>Made with <code>{}</code></footer></main></body></html>",
        esc(&page.command)
    );
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(value: Option<f64>, text: &str) -> CellDoc {
        CellDoc {
            value,
            text: text.into(),
            ..Default::default()
        }
    }

    #[test]
    fn cells_are_counted_by_how_they_ended() {
        let mut n = Counts::default();
        for c in [
            cell(Some(1.0), "1"),
            cell(None, "continued"),
            cell(None, "n/a: no rename on s3"),
            cell(None, "not run"),
            cell(None, "error: 3 failed ops"),
            cell(None, "interrupted while probing"),
        ] {
            count(&c, &mut n);
        }
        assert_eq!(
            n,
            Counts {
                filled: 2,
                not_applicable: 1,
                not_run: 1,
                failed: 2
            }
        );
        assert_eq!(n.total(), 6);
    }
}
