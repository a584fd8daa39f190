//! The SVG chart primitives, drawn with plotters' SVG backend: line charts, horizontal bar
//! charts and per-worker bars. Every chart has a title, axis descriptions with units, ticks
//! in units people read (ops/s with k/M, µs/ms, KiB/MiB, p99.9) and a legend below the
//! plot, so it never covers data. Log scales are drawn by transforming the data (log10 or
//! log2) onto a linear axis, which puts ticks on whole decades or powers of two.
//!
//! Chart primitives take plain data and return the SVG text; what to draw, from the results,
//! is decided in `figures`, `sweep` and `study_page`.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

mod axis;
mod bar;
mod line;

pub(crate) use axis::{rate_axis, rate_axis_for_lines, Axis, Scale, Ticks};
pub(crate) use bar::{bar_chart, worker_bars, BarChart, BarGroup, WorkerBars};
pub(crate) use line::{line_chart, marker, Band, LineChart, Marker, Series, Swatch};

/// Colours of runs (and of lines in single-run charts): Tableau 20 without its reds (red marks
/// errors and slow workers), strong colours first, then their light partners.
pub const PALETTE: [RGBColor; 18] = [
    RGBColor(0x4e, 0x79, 0xa7),
    RGBColor(0xf2, 0x8e, 0x2b),
    RGBColor(0x59, 0xa1, 0x4f),
    RGBColor(0xb0, 0x7a, 0xa1),
    RGBColor(0x49, 0x98, 0x94),
    RGBColor(0xb6, 0x99, 0x2d),
    RGBColor(0x9d, 0x76, 0x60),
    RGBColor(0xd3, 0x72, 0x95),
    RGBColor(0x79, 0x70, 0x6e),
    RGBColor(0x6b, 0x6e, 0xcf),
    RGBColor(0xa0, 0xcb, 0xe8),
    RGBColor(0xff, 0xbe, 0x7d),
    RGBColor(0x8c, 0xd1, 0x7d),
    RGBColor(0xd4, 0xa6, 0xc8),
    RGBColor(0x86, 0xbc, 0xb6),
    RGBColor(0xf1, 0xce, 0x63),
    RGBColor(0xd7, 0xb5, 0xa6),
    RGBColor(0x17, 0xbe, 0xcf),
];
/// Errors, slow workers.
pub const ALERT: RGBColor = RGBColor(0xd6, 0x27, 0x28);
/// Reference lines (median, ideal speedup).
pub(crate) const REFERENCE: RGBColor = RGBColor(0x55, 0x55, 0x55);
pub(super) const GRID_BOLD: RGBColor = RGBColor(0xd9, 0xd9, 0xd9);
pub(super) const GRID_LIGHT: RGBColor = RGBColor(0xf0, 0xf0, 0xf0);
pub(super) const TEXT: RGBColor = RGBColor(0x22, 0x22, 0x22);
pub(super) const FONT: &str = "sans-serif";
// plotters' SVG backend writes font-size = size / 1.24: these give 12 px ticks and legend,
// 13 px axis descriptions and 15 px titles.
pub(super) const TICK_SIZE: f64 = 15.0;
pub(super) const DESC_SIZE: f64 = 16.0;
pub(super) const TITLE_SIZE: f64 = 19.0;
/// Width of one character of 12 px text, for layout.
pub(super) const CHAR_W: f64 = 7.0;

/// The colour of run (or line) `i`.
pub(crate) fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// `#rrggbb` for HTML.
pub fn hex(c: RGBColor) -> String {
    format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2)
}

/// Full-width and half-width chart sizes (pixels, before the legend).
pub(crate) const WIDE: (u32, u32) = (1000, 380);
pub(crate) const HALF: (u32, u32) = (490, 330);

/// Why a figure of the HTML report could not be made.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// A result's latency histogram that does not decode (a result file the user gave).
    #[error("phase '{phase}': {reason}")]
    Histogram { phase: String, reason: String },
    /// The chart library refused to draw.
    #[error("chart drawing failed: {0}")]
    Drawing(String),
}

pub(super) type Result<T> = std::result::Result<T, RenderError>;

pub(super) fn err<E: std::fmt::Debug>(e: E) -> RenderError {
    RenderError::Drawing(format!("{e:?}"))
}

pub(super) fn font(size: f64) -> TextStyle<'static> {
    TextStyle::from((FONT, size).into_font()).color(&TEXT)
}

/// Legend entries and their layout in rows below the plot.
pub(super) enum Key {
    Line(RGBColor, bool, Marker),
    Swatch(RGBAColor),
}

pub(super) fn legend_rows(entries: &[(String, Key)], width: u32) -> Vec<Vec<usize>> {
    let mut rows: Vec<Vec<usize>> = Vec::new();
    let mut x = 0.0;
    let avail = width as f64 - 40.0;
    for (i, (name, _)) in entries.iter().enumerate() {
        let w = entry_width(name);
        if rows.is_empty() || (x + w > avail && x > 0.0) {
            rows.push(Vec::new());
            x = 0.0;
        }
        rows.last_mut().expect("a row").push(i);
        x += w;
    }
    rows
}

pub(super) fn entry_width(name: &str) -> f64 {
    36.0 + name.chars().count() as f64 * CHAR_W + 18.0
}

pub(super) const LEGEND_ROW: u32 = 20;

pub(super) fn legend_height(entries: &[(String, Key)], width: u32) -> u32 {
    if entries.is_empty() {
        0
    } else {
        legend_rows(entries, width).len() as u32 * LEGEND_ROW + 10
    }
}

pub(super) fn draw_marker<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    m: Marker,
    at: (i32, i32),
    c: RGBColor,
) -> Result<()> {
    match m {
        Marker::None => Ok(()),
        Marker::Circle => area.draw(&Circle::new(at, 3, c.filled())).map_err(err),
        Marker::Triangle => area.draw(&TriangleMarker::new(at, 4, c.filled())).map_err(err),
        Marker::Cross => area.draw(&Cross::new(at, 4, c.stroke_width(2))).map_err(err),
    }
}

pub(super) fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[(String, Key)],
    width: u32,
) -> Result<()> {
    let rows = legend_rows(entries, width);
    for (r, row) in rows.iter().enumerate() {
        let total: f64 = row.iter().map(|&i| entry_width(&entries[i].0)).sum();
        let mut x = ((width as f64 - total) / 2.0).max(8.0);
        let y = 4 + r as i32 * LEGEND_ROW as i32 + LEGEND_ROW as i32 / 2;
        for &i in row {
            let (name, key) = &entries[i];
            let x0 = x as i32;
            match key {
                Key::Line(c, dashed, m) => {
                    let style = c.stroke_width(2);
                    if *dashed {
                        for k in 0..3 {
                            area.draw(&PathElement::new(vec![(x0 + k * 10, y), (x0 + k * 10 + 6, y)], style))
                                .map_err(err)?;
                        }
                    } else {
                        area.draw(&PathElement::new(vec![(x0, y), (x0 + 26, y)], style))
                            .map_err(err)?;
                    }
                    draw_marker(area, *m, (x0 + 13, y), *c)?;
                }
                Key::Swatch(c) => {
                    area.draw(&Rectangle::new([(x0 + 4, y - 6), (x0 + 22, y + 6)], c.filled()))
                        .map_err(err)?;
                }
            }
            let label: String = name.clone();
            area.draw(&Text::new(
                label,
                (x0 + 32, y),
                font(TICK_SIZE).pos(Pos::new(HPos::Left, VPos::Center)),
            ))
            .map_err(err)?;
            x += entry_width(name);
        }
    }
    Ok(())
}

pub(super) fn title_size(title: &str, width: u32) -> f64 {
    let est = title.chars().count() as f64 * 8.6;
    if est > width as f64 - 20.0 {
        TITLE_SIZE * ((width as f64 - 20.0) / est).max(0.72)
    } else {
        TITLE_SIZE
    }
}

#[cfg(test)]
mod tests {
    use super::line::thin;
    use super::*;
    use crate::fmt;

    #[test]
    fn line_chart_has_title_axes_legend_and_data() {
        let mut c = LineChart::new(
            "latency by percentile",
            Axis::linear("percentile", Ticks::Nines).with_range(0.0, 3.0),
            Axis::log10("latency", Ticks::Latency),
            HALF,
        );
        c.series.push(Series::line(
            "write",
            colour(0),
            vec![(0.0, 1e3), (1.0, 2e4), (3.0, 5e6)],
        ));
        let svg = line_chart(&c).unwrap();
        assert!(svg.contains("latency by percentile"));
        assert!(svg.contains("percentile") && svg.contains("p99.9"));
        assert!(svg.contains("1 µs") && svg.contains("10 ms"), "{svg}");
        assert!(svg.contains(">\nwrite\n") || svg.contains("write"));
        assert!(svg.contains("<polyline") && svg.contains("#4E79A7"));
    }

    #[test]
    fn bars_and_workers_draw() {
        let c = BarChart {
            title: "ops/s per phase".into(),
            categories: vec!["create".into(), "stat".into()],
            groups: vec![BarGroup {
                name: "run".into(),
                colour: colour(0),
                values: vec![Some(1200.0), Some(250_000.0)],
            }],
            axis: Axis::log10("ops/s (log scale)", Ticks::Si),
            value_text: fmt::si,
            width: WIDE.0,
        };
        let svg = bar_chart(&c).unwrap();
        assert!(svg.contains("create") && svg.contains("250k"));
        let wb = WorkerBars {
            title: "write: ops/s per worker".into(),
            item: "worker",
            values: vec![100.0, 100.0, 40.0, 101.0],
            colour: colour(1),
            y: Axis::linear("ops/s", Ticks::Si),
            unit: "ops/s".into(),
            slow: 0.8,
            size: HALF,
        };
        let svg = worker_bars(&wb).unwrap();
        assert!(svg.contains("1 worker)"), "one straggler flagged");
        assert!(svg.contains(&hex(ALERT).to_uppercase()[1..]));
    }

    #[test]
    fn thinning_keeps_extremes() {
        let pts: Vec<(f64, f64)> = (0..10_000)
            .map(|i| (i as f64, if i == 5_555 { 99.0 } else { 1.0 }))
            .collect();
        let t = thin(&pts, 100);
        assert!(t.len() <= 202);
        assert!(t.iter().any(|p| p.1 == 99.0));
    }
}
