//! A publication's own figures, as the repository keeps them (a TSV per seed study), and their
//! tables on the page of every seed study: beside dfsbench's table of the same measure, in the
//! publication's shape, headed with the paper's hardware so that no one reads them as a
//! like-for-like comparison.
//!
//! The file: `# key: value` lines (`seed`, `publication`, `hardware`, `none`, `note`), then a
//! line per figure with the tab-separated columns `seed where beside row column system value
//! unit`: the seed file and the table or figure of it the number is printed in, the title
//! words of the dfsbench table it goes beside, and the number as printed.

use std::fmt::Write as _;

use crate::html::esc;

/// The columns of a figure's line, in order.
pub const COLUMNS: [&str; 8] = ["seed", "where", "beside", "row", "column", "system", "value", "unit"];

/// One number of the publication.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// The seed file it is printed in.
    pub seed: String,
    /// Its table, figure or section there: `Table 12`, `§5.2.2 (Figure 15)`.
    pub place: String,
    /// Words of the title of the dfsbench table it goes beside; empty: after the tables.
    pub beside: String,
    pub row: String,
    pub column: String,
    pub system: String,
    /// As printed (`3,5` stays `3,5`).
    pub text: String,
    pub value: f64,
    pub unit: String,
}

/// The figures of one seed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Published {
    pub seed: String,
    pub publication: String,
    /// The hardware the paper measured on.
    pub hardware: String,
    /// Why there are no figures, when the seed gives none in text form.
    pub none: Option<String>,
    /// What the file leaves out of the seed's numbers, and why.
    pub notes: Vec<String>,
    pub figures: Vec<Figure>,
}

/// A number as a paper prints it: `1,9` is 1.9, `0m14.599s` is not a number.
fn number(text: &str) -> Option<f64> {
    text.trim()
        .replace(',', ".")
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite())
}

/// Parse a published-figures file; Err names the line and what is wrong with it.
pub fn parse(text: &str) -> Result<Published, String> {
    let mut p = Published::default();
    for (n, line) in text.lines().enumerate() {
        let at = |why: String| format!("line {}: {why}", n + 1);
        if line.trim().is_empty() {
            continue;
        }
        if let Some(meta) = line.strip_prefix('#') {
            let Some((key, value)) = meta.split_once(':') else {
                continue;
            };
            let value = value.trim().to_string();
            match key.trim() {
                "seed" => p.seed = value,
                "publication" => p.publication = value,
                "hardware" => p.hardware = value,
                "none" => p.none = Some(value),
                "note" => p.notes.push(value),
                _ => {}
            }
            continue;
        }
        let cells: Vec<&str> = line.split('\t').collect();
        if cells.len() != COLUMNS.len() {
            return Err(at(format!(
                "{} tab-separated columns, not {} ({})",
                cells.len(),
                COLUMNS.len(),
                COLUMNS.join(", ")
            )));
        }
        let value = number(cells[6]).ok_or_else(|| at(format!("value '{}' is not a number", cells[6])))?;
        for (name, cell) in COLUMNS.iter().zip(&cells) {
            if cell.trim().is_empty() && !matches!(*name, "beside" | "row" | "column") {
                return Err(at(format!("no {name}")));
            }
        }
        p.figures.push(Figure {
            seed: cells[0].into(),
            place: cells[1].into(),
            beside: cells[2].into(),
            row: cells[3].into(),
            column: cells[4].into(),
            system: cells[5].into(),
            text: cells[6].into(),
            value,
            unit: cells[7].into(),
        });
    }
    if p.seed.is_empty() || p.hardware.is_empty() {
        return Err("the file needs '# seed:' and '# hardware:' lines".into());
    }
    if p.figures.is_empty() && p.none.is_none() {
        return Err("no figures and no '# none:' line saying why".into());
    }
    Ok(p)
}

/// The style of the blocks of published figures.
pub(crate) const CSS: &str = r#"
div.published { border-left: 4px solid #c9ced4; background: var(--soft); padding: 4px 12px 8px; margin: 10px 0 22px; }
div.published h5 { font-size: 14px; margin: 8px 0 2px; }
p.published-from { font-size: 13px; margin: 10px 0 0; }
.published-grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(420px, 1fr)); gap: 0 18px; }
.published-grid > div.wide { grid-column: 1 / -1; }
.published-grid table.study { min-width: 0; }
.published-grid table.study th { white-space: normal; }
"#;

/// A study whose publication gives no numbers in text form says so (said first: a reader looks
/// for them beside the tables); empty otherwise.
pub(crate) fn none(p: &Published) -> String {
    match &p.none {
        Some(why) => format!(
            "<div class=\"published\"><h5>Published figures</h5><p class=\"note\">None in text form: {}</p></div>\n",
            esc(why)
        ),
        None => String::new(),
    }
}

/// Distinct values in the order they first appear.
fn distinct<'a>(items: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for i in items {
        if !out.contains(&i) {
            out.push(i);
        }
    }
    out
}

/// The table of the publication's figures from one place of it: its rows, and a column per
/// (column, system) as it prints them.
fn table(out: &mut String, figs: &[&Figure]) {
    let rows = distinct(figs.iter().map(|f| f.row.as_str()));
    let columns = distinct(figs.iter().map(|f| f.column.as_str()));
    let systems = distinct(figs.iter().map(|f| f.system.as_str()));
    let units = distinct(figs.iter().map(|f| f.unit.as_str()));
    // One system: named above the table, not under every column.
    let one = (systems.len() == 1).then(|| format!("<b>{}</b>: ", esc(systems[0])));
    let _ = writeln!(
        out,
        "<p class=\"published-from\">{}{} of <code>{}</code>, in {}</p>",
        one.as_deref().unwrap_or(""),
        esc(&figs[0].place),
        esc(&figs[0].seed),
        esc(&units.join(", "))
    );
    out.push_str("<div class=\"scroll\"><table class=\"study published\"><thead><tr><th class=\"l\"></th>");
    for c in &columns {
        let _ = write!(out, "<th colspan=\"{}\">{}</th>", systems.len(), esc(c));
    }
    if one.is_none() {
        out.push_str("</tr><tr><th class=\"l\"></th>");
        for _ in &columns {
            for s in &systems {
                let _ = write!(out, "<th>{}</th>", esc(s));
            }
        }
    }
    out.push_str("</tr></thead><tbody>\n");
    for r in &rows {
        let _ = write!(out, "<tr><td class=\"l\">{}</td>", esc(r));
        for c in &columns {
            for s in &systems {
                let cell = figs
                    .iter()
                    .find(|f| f.row == *r && f.column == *c && f.system == *s)
                    .map_or("", |f| f.text.as_str());
                let _ = write!(out, "<td>{}</td>", esc(cell));
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table></div>\n");
}

/// The index of the dfsbench table each figure goes beside, of the study's table `titles`: the
/// first with its `beside` words (case aside); None: after the tables.
pub fn table_of(titles: &[&str], f: &Figure) -> Option<usize> {
    let words = f.beside.trim().to_lowercase();
    if words.is_empty() {
        return None;
    }
    titles.iter().position(|t| t.to_lowercase().contains(&words))
}

/// The block of the publication's figures that go beside table `table_at` of the study's
/// `titles` (None: after the tables), or nothing when none do.
pub fn block(p: &Published, titles: &[&str], table_at: Option<usize>) -> String {
    let figs: Vec<&Figure> = p.figures.iter().filter(|f| table_of(titles, f) == table_at).collect();
    if figs.is_empty() {
        return String::new();
    }
    let mut out = String::from("<div class=\"published\">\n");
    let _ = writeln!(
        out,
        "<h5>Published (their hardware: {})</h5>\n<p class=\"note\">The paper's own figures, measured on its systems and hardware: a reference for the shape of the results, not a like-for-like comparison with dfsbench's numbers.</p>",
        esc(&p.hardware)
    );
    out.push_str("<div class=\"published-grid\">\n");
    for place in distinct(figs.iter().map(|f| f.place.as_str())) {
        let group: Vec<&Figure> = figs.iter().copied().filter(|f| f.place == place).collect();
        // More value columns than half the page holds: the whole width.
        let cells = distinct(group.iter().map(|f| f.column.as_str())).len()
            * distinct(group.iter().map(|f| f.system.as_str())).len();
        out.push_str(if cells > 7 { "<div class=\"wide\">" } else { "<div>" });
        table(&mut out, &group);
        out.push_str("</div>\n");
    }
    out.push_str("</div></div>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_parses_and_bad_lines_are_named() {
        let text = "# seed: 003.txt\n# hardware: VMware ESXi\n# note: runs left out\n003.txt\tTable 11\tseeks\t\tavg\tLustre\t153\tseeks/s\n003.txt\tTable 12\t\t256\tread\tCoda\t3,5\tKB/s\n";
        let p = parse(text).unwrap();
        assert_eq!(p.figures.len(), 2);
        assert_eq!(p.figures[1].value, 3.5);
        assert_eq!(p.figures[1].text, "3,5");
        assert_eq!(p.notes, ["runs left out"]);
        let e = parse("# seed: x\n# hardware: y\nx\tT\t\tr\tc\tS\t0m1s\tms\n").unwrap_err();
        assert!(e.contains("line 3") && e.contains("not a number"), "{e}");
        let e = parse("# seed: x\n# hardware: y\nx\tT\t\tr\tc\n").unwrap_err();
        assert!(e.contains("5 tab-separated columns"), "{e}");
        let e = parse("# seed: x\n# hardware: y\n").unwrap_err();
        assert!(e.contains("none"), "{e}");
        assert!(parse("# seed: x\n# hardware: y\n# none: figures are images\n").is_ok());
    }
}
