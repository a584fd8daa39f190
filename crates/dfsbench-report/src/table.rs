//! The one table model behind every textual view: columns (a head and an alignment) and rows
//! of cells, built once from the result documents, which the text, Markdown and CSV writers
//! render (as hyperfine's `export/markup.rs` serves Markdown, AsciiDoc and Org from one
//! table). The views decide what a cell says; this module only decides how it is laid out.

/// Where a column's cells sit: words left, numbers right.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Align {
    Left,
    Right,
}

/// A column: its head and how its cells (the head included) are aligned.
pub(crate) struct Column {
    head: String,
    align: Align,
}

/// A column of words.
pub(crate) fn left(head: impl Into<String>) -> Column {
    Column {
        head: head.into(),
        align: Align::Left,
    }
}

/// A column of numbers.
pub(crate) fn right(head: impl Into<String>) -> Column {
    Column {
        head: head.into(),
        align: Align::Right,
    }
}

/// Rows of cells under their columns; every row has a cell per column.
pub(crate) struct Table {
    columns: Vec<Column>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub(crate) fn new(columns: Vec<Column>) -> Self {
        Table {
            columns,
            rows: Vec::new(),
        }
    }

    /// Adds a row; it must have a cell per column.
    pub(crate) fn push(&mut self, row: Vec<String>) {
        debug_assert_eq!(row.len(), self.columns.len(), "a cell per column");
        self.rows.push(row);
    }

    /// True when the table has no row besides its heads.
    pub(crate) fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The column heads, in order.
    pub(crate) fn heads(&self) -> impl Iterator<Item = &str> {
        self.columns.iter().map(|c| c.head.as_str())
    }

    /// The rows, in order (writers of their own, such as the HTML page's, read them here).
    pub(crate) fn rows(&self) -> &[Vec<String>] {
        &self.rows
    }

    /// Aligned text (comfy-table without borders), the heads as the first line: two spaces
    /// between columns, no trailing blanks.
    pub(crate) fn text(&self) -> String {
        let mut t = comfy_table::Table::new();
        t.load_preset(comfy_table::presets::NOTHING);
        t.add_row(self.heads().collect::<Vec<_>>());
        for r in &self.rows {
            t.add_row(r.clone());
        }
        for (i, (col, spec)) in t.column_iter_mut().zip(&self.columns).enumerate() {
            col.set_padding((if i == 0 { 0 } else { 2 }, 0));
            if spec.align == Align::Right {
                col.set_cell_alignment(comfy_table::CellAlignment::Right);
            }
        }
        let mut out = String::new();
        for line in t.lines() {
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }

    /// A Markdown pipe table (`|` escaped, newlines flattened in every cell), then a blank line.
    pub(crate) fn markdown(&self) -> String {
        fn line<'a>(cells: impl Iterator<Item = &'a str>) -> String {
            let cells: Vec<String> = cells.map(|c| c.replace('|', "\\|").replace('\n', " ")).collect();
            format!("| {} |\n", cells.join(" | "))
        }
        let mut out = line(self.heads());
        let rule: Vec<&str> = self
            .columns
            .iter()
            .map(|c| match c.align {
                Align::Left => "---",
                Align::Right => "---:",
            })
            .collect();
        out.push_str(&format!("|{}|\n", rule.join("|")));
        for r in &self.rows {
            out.push_str(&line(r.iter().map(String::as_str)));
        }
        out.push('\n');
        out
    }

    /// CSV, the heads as the header record, written with the `csv` crate (which quotes what
    /// needs it).
    pub(crate) fn csv(&self) -> String {
        let mut w = csv::Writer::from_writer(Vec::new());
        // Writing into a Vec cannot fail, and every record has the header's number of fields.
        w.write_record(self.heads()).expect("a CSV record into memory");
        for r in &self.rows {
            w.write_record(r).expect("a CSV record into memory");
        }
        let bytes = w.into_inner().expect("flushing into memory");
        String::from_utf8(bytes).expect("CSV of UTF-8 strings")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(second: &str) -> Table {
        let mut t = Table::new(vec![left("phase"), right("ops"), right("p99")]);
        t.push(vec!["write 4 KiB".into(), "12".into(), "1.5 µs".into()]);
        t.push(vec![second.into(), "1200".into(), "-".into()]);
        t
    }

    #[test]
    fn columns_align_without_borders() {
        assert_eq!(
            sample("  read").text(),
            "phase         ops     p99\nwrite 4 KiB    12  1.5 µs\n  read       1200       -\n"
        );
    }

    #[test]
    fn markdown_and_csv_render_the_same_table() {
        let t = sample("read | x");
        assert_eq!(
            t.markdown(),
            "| phase | ops | p99 |\n|---|---:|---:|\n| write 4 KiB | 12 | 1.5 µs |\n| read \\| x | 1200 | - |\n\n"
        );
        assert_eq!(t.csv(), "phase,ops,p99\nwrite 4 KiB,12,1.5 µs\nread | x,1200,-\n");
        assert!(!t.is_empty() && Table::new(vec![left("a")]).is_empty());
    }
}
