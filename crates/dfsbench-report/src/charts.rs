//! SVG charts drawn with plotters' SVG backend: line charts, horizontal bar charts and
//! per-worker bars. Every chart has a title, axis descriptions with units, ticks in units
//! people read (ops/s with k/M, µs/ms, KiB/MiB, p99.9) and a legend below the plot, so it
//! never covers data. Log scales are drawn by transforming the data (log10 or log2) onto a
//! linear axis, which puts ticks on whole decades or powers of two.
//!
//! Charts take plain data and return the SVG text; what to draw is decided in `html` and
//! `sweep`.

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, LightPoints, Ranged};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::fmt;
use dfsbench_result::median;

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
pub const REFERENCE: RGBColor = RGBColor(0x55, 0x55, 0x55);
const GRID_BOLD: RGBColor = RGBColor(0xd9, 0xd9, 0xd9);
const GRID_LIGHT: RGBColor = RGBColor(0xf0, 0xf0, 0xf0);
const TEXT: RGBColor = RGBColor(0x22, 0x22, 0x22);
const FONT: &str = "sans-serif";
// plotters' SVG backend writes font-size = size / 1.24: these give 12 px ticks and legend,
// 13 px axis descriptions and 15 px titles.
const TICK_SIZE: f64 = 15.0;
const DESC_SIZE: f64 = 16.0;
const TITLE_SIZE: f64 = 19.0;
/// Width of one character of 12 px text, for layout.
const CHAR_W: f64 = 7.0;

/// The colour of run (or line) `i`.
pub fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// `#rrggbb` for HTML.
pub fn hex(c: RGBColor) -> String {
    format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2)
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scale {
    Linear,
    /// Values are drawn at log10(v); ticks on decades.
    Log10,
    /// Values are drawn at log2(v); ticks on powers of two.
    Log2,
}

/// How tick values are written.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Ticks {
    /// 500, 1.5k, 12k, 3M.
    Si,
    /// ns in: 850 ns, 10 µs, 1 ms.
    Latency,
    /// bytes in: 4 KiB, 1 MiB.
    Bytes,
    /// number of nines in: p0, p90, p99, p99.9.
    Nines,
    /// fraction in: 0%, 50%, 100%.
    Percent,
    /// plain numbers: 7210, 0.5 (seconds, factors).
    Plain,
    /// whole numbers only (worker index, workers).
    Integer,
}

impl Ticks {
    fn format(self, v: f64) -> String {
        match self {
            Ticks::Si => fmt::si(v),
            Ticks::Latency => fmt::latency(v),
            Ticks::Bytes => fmt::bytes(v),
            // Whole nines only (p90, p99, p99.9): p68 or p97 read as noise.
            Ticks::Nines if (v - v.round()).abs() < 1e-6 => fmt::nines(v.round()),
            Ticks::Nines => String::new(),
            Ticks::Percent => format!("{:.0}%", v * 100.0),
            Ticks::Plain => fmt::plain(v),
            Ticks::Integer => {
                if (v - v.round()).abs() < 1e-6 {
                    format!("{}", v.round() as i64)
                } else {
                    String::new()
                }
            }
        }
    }
}

/// One axis: its description (with the unit), scale and tick style.
#[derive(Clone, Debug)]
pub struct Axis {
    pub label: String,
    pub scale: Scale,
    pub ticks: Ticks,
    /// Start a linear axis at 0.
    pub from_zero: bool,
    /// Fixed range (in data units), else from the data.
    pub range: Option<(f64, f64)>,
    /// Ticks at these values (data units), else where the scale puts them.
    pub at: Vec<f64>,
}

impl Axis {
    pub fn linear(label: impl Into<String>, ticks: Ticks) -> Axis {
        Axis {
            label: label.into(),
            scale: Scale::Linear,
            ticks,
            from_zero: true,
            range: None,
            at: Vec::new(),
        }
    }

    pub fn log10(label: impl Into<String>, ticks: Ticks) -> Axis {
        Axis {
            label: label.into(),
            scale: Scale::Log10,
            ticks,
            from_zero: false,
            range: None,
            at: Vec::new(),
        }
    }

    pub fn log2(label: impl Into<String>, ticks: Ticks) -> Axis {
        Axis {
            label: label.into(),
            scale: Scale::Log2,
            ticks,
            from_zero: false,
            range: None,
            at: Vec::new(),
        }
    }

    pub fn with_range(mut self, lo: f64, hi: f64) -> Axis {
        self.range = Some((lo, hi));
        self
    }

    /// Ticks at `values` only (the sizes a study measured), not at the scale's own steps.
    pub fn ticks_at(mut self, mut values: Vec<f64>) -> Axis {
        values.sort_by(f64::total_cmp);
        values.dedup();
        self.at = values;
        self
    }

    pub fn not_from_zero(mut self) -> Axis {
        self.from_zero = false;
        self
    }

    /// Data value to drawing position; None for values a log scale cannot show.
    fn to_pos(&self, v: f64) -> Option<f64> {
        if !v.is_finite() {
            return None;
        }
        match self.scale {
            Scale::Linear => Some(v),
            Scale::Log10 => (v > 0.0).then(|| v.log10()),
            Scale::Log2 => (v > 0.0).then(|| v.log2()),
        }
    }

    fn value_at(&self, p: f64) -> f64 {
        match self.scale {
            Scale::Linear => p,
            Scale::Log10 => 10f64.powf(p),
            Scale::Log2 => 2f64.powf(p),
        }
    }

    /// The drawing range for data positions `lo..hi`, and how many ticks to ask for on an axis
    /// of `px` pixels.
    fn layout(&self, lo: f64, hi: f64, headroom: f64, px: u32) -> (f64, f64, usize) {
        let max_ticks = ((px / 50) as usize).clamp(4, 12);
        let (mut lo, mut hi) = match self.range {
            Some((a, b)) => (self.to_pos(a).unwrap_or(lo), self.to_pos(b).unwrap_or(hi)),
            None => (lo, hi),
        };
        if !lo.is_finite() || !hi.is_finite() {
            lo = 0.0;
            hi = 1.0;
        }
        match self.scale {
            Scale::Linear => {
                if self.range.is_none() {
                    if self.from_zero {
                        lo = lo.min(0.0);
                    }
                    let span = (hi - lo).abs();
                    if span == 0.0 {
                        let pad = if hi == 0.0 { 1.0 } else { hi.abs() * 0.1 };
                        lo -= if self.from_zero && lo == 0.0 { 0.0 } else { pad };
                        hi += pad;
                    } else {
                        hi += span * headroom;
                    }
                }
                (lo, hi, max_ticks.min(8))
            }
            Scale::Log10 | Scale::Log2 => {
                if self.range.is_none() {
                    lo = lo.floor();
                    hi = hi.ceil();
                    if hi - lo < 1.0 {
                        hi = lo + 1.0;
                    }
                    hi += (hi - lo) * headroom;
                }
                // Every decade (or power of two, up to what fits) gets its tick.
                let steps = (hi - lo).round() as usize + 1;
                let cap = if self.scale == Scale::Log10 { 12 } else { max_ticks };
                (lo, hi, steps.clamp(2, cap))
            }
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Marker {
    None,
    Circle,
    Triangle,
    Cross,
}

/// A throughput axis: linear from 0 with a little room above the largest value, so bar lengths
/// and line heights compare as the rates do (log axes are kept for latency and sizes).
pub fn rate_axis(unit: &str, values: impl IntoIterator<Item = f64>) -> Axis {
    let hi = values.into_iter().filter(|v| v.is_finite()).fold(0.0f64, f64::max);
    let axis = Axis::linear(unit, Ticks::Si);
    if hi > 0.0 {
        axis.with_range(0.0, hi * 1.08)
    } else {
        axis
    }
}

/// A throughput axis for lines: as [`rate_axis`], but log10 (and labelled so) when the values
/// span more than a factor of 10, where a linear axis would lay the small ones within a tenth of
/// its height, unreadable (surfnet's 20 ms lines, 2.9 MiB/s under 106 on GlusterFS).
pub fn rate_axis_for_lines(unit: &str, values: impl IntoIterator<Item = f64>) -> Axis {
    let positive: Vec<f64> = values.into_iter().filter(|v| v.is_finite() && *v > 0.0).collect();
    let lo = positive.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = positive.iter().copied().fold(0.0f64, f64::max);
    if hi > 10.0 * lo {
        Axis::log10(format!("{unit} (log scale)"), Ticks::Si)
    } else {
        rate_axis(unit, positive)
    }
}

/// Markers for the n-th kind of line (e.g. write, read, delete) when colour shows the run.
pub fn marker(i: usize) -> Marker {
    [Marker::Circle, Marker::Triangle, Marker::Cross][i % 3]
}

/// A line (or several segments drawn alike, with one legend entry).
#[derive(Clone, Debug)]
pub struct Series {
    pub name: String,
    pub colour: RGBColor,
    pub segments: Vec<Vec<(f64, f64)>>,
    pub dashed: bool,
    pub marker: Marker,
    pub width: u32,
}

impl Series {
    pub fn line(name: impl Into<String>, colour: RGBColor, points: Vec<(f64, f64)>) -> Series {
        Series {
            name: name.into(),
            colour,
            segments: vec![points],
            dashed: false,
            marker: Marker::None,
            width: 2,
        }
    }

    pub fn with_marker(mut self, m: Marker) -> Series {
        self.marker = m;
        self
    }

    pub fn dashed(mut self) -> Series {
        self.dashed = true;
        self
    }
}

/// A shaded stretch of the x axis: a phase of a time line, or a second with errors.
#[derive(Clone, Debug)]
pub struct Band {
    pub x0: f64,
    pub x1: f64,
    pub colour: RGBAColor,
    /// Written at the top of the band when it is wide enough.
    pub label: Option<String>,
}

/// A legend entry that is not a line: a filled swatch.
#[derive(Clone, Debug)]
pub struct Swatch {
    pub name: String,
    pub colour: RGBAColor,
}

#[derive(Clone, Debug)]
pub struct LineChart {
    pub title: String,
    pub x: Axis,
    pub y: Axis,
    pub series: Vec<Series>,
    pub bands: Vec<Band>,
    pub swatches: Vec<Swatch>,
    pub size: (u32, u32),
}

impl LineChart {
    pub fn new(title: impl Into<String>, x: Axis, y: Axis, size: (u32, u32)) -> LineChart {
        LineChart {
            title: title.into(),
            x,
            y,
            series: Vec::new(),
            bands: Vec::new(),
            swatches: Vec::new(),
            size,
        }
    }

    /// True when there is at least one point to draw.
    pub fn has_data(&self) -> bool {
        self.series.iter().any(|s| s.segments.iter().any(|p| !p.is_empty()))
    }
}

/// Full-width and half-width chart sizes (pixels, before the legend).
pub const WIDE: (u32, u32) = (1000, 380);
pub const HALF: (u32, u32) = (490, 330);

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

type Result<T> = std::result::Result<T, RenderError>;

fn err<E: std::fmt::Debug>(e: E) -> RenderError {
    RenderError::Drawing(format!("{e:?}"))
}

fn font(size: f64) -> TextStyle<'static> {
    TextStyle::from((FONT, size).into_font()).color(&TEXT)
}

/// Legend entries and their layout in rows below the plot.
enum Key {
    Line(RGBColor, bool, Marker),
    Swatch(RGBAColor),
}

fn legend_rows(entries: &[(String, Key)], width: u32) -> Vec<Vec<usize>> {
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

fn entry_width(name: &str) -> f64 {
    36.0 + name.chars().count() as f64 * CHAR_W + 18.0
}

const LEGEND_ROW: u32 = 20;

fn legend_height(entries: &[(String, Key)], width: u32) -> u32 {
    if entries.is_empty() {
        0
    } else {
        legend_rows(entries, width).len() as u32 * LEGEND_ROW + 10
    }
}

fn draw_marker<DB: DrawingBackend>(
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

fn draw_legend<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, entries: &[(String, Key)], width: u32) -> Result<()> {
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

fn title_size(title: &str, width: u32) -> f64 {
    let est = title.chars().count() as f64 * 8.6;
    if est > width as f64 - 20.0 {
        TITLE_SIZE * ((width as f64 - 20.0) / est).max(0.72)
    } else {
        TITLE_SIZE
    }
}

/// Thin a long line to at most about `2 * buckets` points, keeping each bucket's min and max
/// (so spikes and dips stay visible).
fn thin(points: &[(f64, f64)], buckets: usize) -> Vec<(f64, f64)> {
    if points.len() <= buckets * 4 {
        return points.to_vec();
    }
    let per = points.len().div_ceil(buckets);
    let mut out = Vec::with_capacity(buckets * 2 + 2);
    for chunk in points.chunks(per) {
        let (mut lo, mut hi) = (0, 0);
        for (i, p) in chunk.iter().enumerate() {
            if p.1 < chunk[lo].1 {
                lo = i;
            }
            if p.1 > chunk[hi].1 {
                hi = i;
            }
        }
        let (a, b) = if lo <= hi { (lo, hi) } else { (hi, lo) };
        out.push(chunk[a]);
        if b != a {
            out.push(chunk[b]);
        }
    }
    out
}

/// An x range whose ticks are chosen here: the values the axis names, or plotters' own.
struct XRange {
    inner: RangedCoordf64,
    bold: Vec<f64>,
    light: Vec<f64>,
}

impl XRange {
    /// Ticks on `x0..x1`: the axis's own values when it names them, else what plotters picks
    /// for `ticks` labels (and `light_lines` between them).
    fn new(axis: &Axis, x0: f64, x1: f64, ticks: usize, light_lines: usize) -> XRange {
        let inner = RangedCoordf64::from(x0..x1);
        if axis.at.is_empty() {
            return XRange {
                bold: inner.key_points(ticks),
                light: inner.key_points(LightPoints::new(ticks, ticks * (light_lines + 1))),
                inner,
            };
        }
        let bold = axis
            .at
            .iter()
            .filter_map(|&v| axis.to_pos(v))
            .filter(|p| (x0..=x1).contains(p))
            .collect();
        XRange {
            inner,
            bold,
            light: Vec::new(),
        }
    }
}

impl Ranged for XRange {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.inner.map(value, limit)
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            self.light.clone()
        } else {
            self.bold.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.inner.range()
    }
}

/// Draw a line chart to SVG.
pub fn line_chart(c: &LineChart) -> Result<String> {
    let (w, h) = c.size;
    // Data in drawing positions.
    let series: Vec<Vec<Vec<(f64, f64)>>> = c
        .series
        .iter()
        .map(|s| {
            s.segments
                .iter()
                .map(|seg| {
                    let pts: Vec<(f64, f64)> = seg
                        .iter()
                        .filter_map(|&(x, y)| Some((c.x.to_pos(x)?, c.y.to_pos(y)?)))
                        .collect();
                    thin(&pts, w as usize)
                })
                .collect()
        })
        .collect();
    let all = series.iter().flatten().flatten();
    let (mut x_lo, mut x_hi, mut y_lo, mut y_hi) = (f64::INFINITY, f64::NEG_INFINITY, f64::INFINITY, f64::NEG_INFINITY);
    for &(x, y) in all {
        x_lo = x_lo.min(x);
        x_hi = x_hi.max(x);
        y_lo = y_lo.min(y);
        y_hi = y_hi.max(y);
    }
    for b in &c.bands {
        if let (Some(a), Some(z)) = (c.x.to_pos(b.x0), c.x.to_pos(b.x1)) {
            x_lo = x_lo.min(a);
            x_hi = x_hi.max(z);
        }
    }
    let (x0, x1, x_ticks) = c.x.layout(x_lo, x_hi, 0.0, w - 110);
    let (y0, y1, y_ticks) = c.y.layout(y_lo, y_hi, 0.06, h - 100);
    let light_lines = if c.y.scale == Scale::Linear { 1 } else { 0 };

    let mut entries: Vec<(String, Key)> = c
        .series
        .iter()
        .filter(|s| !s.name.is_empty())
        .map(|s| (s.name.clone(), Key::Line(s.colour, s.dashed, s.marker)))
        .collect();
    entries.extend(c.swatches.iter().map(|s| (s.name.clone(), Key::Swatch(s.colour))));
    let lh = legend_height(&entries, w);

    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (w, h + lh)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let (plot, legend) = root.split_vertically(h);
        let mut chart = ChartBuilder::on(&plot)
            .caption(&c.title, (FONT, title_size(&c.title, w)).into_font().color(&TEXT))
            .margin(10)
            .margin_right(26)
            .x_label_area_size(46)
            .y_label_area_size(78)
            .build_cartesian_2d(XRange::new(&c.x, x0, x1, x_ticks, light_lines), y0..y1)
            .map_err(err)?;
        let xf = |v: &f64| c.x.ticks.format(c.x.value_at(*v));
        let yf = |v: &f64| c.y.ticks.format(c.y.value_at(*v));
        chart
            .configure_mesh()
            .x_desc(c.x.label.as_str())
            .y_desc(c.y.label.as_str())
            .x_labels(x_ticks)
            .y_labels(y_ticks)
            .x_label_formatter(&xf)
            .y_label_formatter(&yf)
            .label_style(font(TICK_SIZE))
            .axis_desc_style(font(DESC_SIZE))
            .bold_line_style(GRID_BOLD)
            .light_line_style(GRID_LIGHT)
            .max_light_lines(light_lines)
            .draw()
            .map_err(err)?;

        for b in &c.bands {
            let (Some(a), Some(z)) = (c.x.to_pos(b.x0), c.x.to_pos(b.x1)) else {
                continue;
            };
            chart
                .draw_series(std::iter::once(Rectangle::new([(a, y0), (z, y1)], b.colour.filled())))
                .map_err(err)?;
            if let Some(label) = &b.label {
                let (pa, py) = chart.backend_coord(&(a, y1));
                let (pz, _) = chart.backend_coord(&(z, y1));
                if (pz - pa) as f64 >= label.chars().count() as f64 * 6.2 + 6.0 {
                    plot.draw(&Text::new(
                        label.clone(),
                        ((pa + pz) / 2, py + 3),
                        TextStyle::from((FONT, 14.0).into_font())
                            .color(&REFERENCE)
                            .pos(Pos::new(HPos::Center, VPos::Top)),
                    ))
                    .map_err(err)?;
                }
            }
        }

        for (s, segs) in c.series.iter().zip(&series) {
            let style = ShapeStyle {
                color: s.colour.to_rgba(),
                filled: false,
                stroke_width: s.width,
            };
            for seg in segs {
                if seg.len() > 1 {
                    if s.dashed {
                        chart
                            .draw_series(DashedLineSeries::new(seg.iter().copied(), 7, 5, style))
                            .map_err(err)?;
                    } else {
                        chart
                            .draw_series(LineSeries::new(seg.iter().copied(), style))
                            .map_err(err)?;
                    }
                }
                // Markers on every point of short lines, and always on single points.
                let m = if s.marker == Marker::None && seg.len() == 1 {
                    Marker::Circle
                } else {
                    s.marker
                };
                if m != Marker::None && seg.len() <= 200 {
                    for p in seg {
                        let at = chart.backend_coord(p);
                        draw_marker(&root, m, at, s.colour)?;
                    }
                }
            }
        }
        draw_legend(&legend, &entries, w)?;
        root.present().map_err(err)?;
    }
    Ok(buf)
}

/// One run's (or one kind's) values in a bar chart, one per category.
#[derive(Clone, Debug)]
pub struct BarGroup {
    pub name: String,
    pub colour: RGBColor,
    pub values: Vec<Option<f64>>,
}

/// Horizontal bars: a row per category (phase), a bar per group (run) in each row.
#[derive(Clone, Debug)]
pub struct BarChart {
    pub title: String,
    pub categories: Vec<String>,
    pub groups: Vec<BarGroup>,
    /// The value axis (horizontal): linear from 0 or log10.
    pub axis: Axis,
    /// How a bar's value is written at its end.
    pub value_text: fn(f64) -> String,
    pub width: u32,
}

impl BarChart {
    pub fn has_data(&self) -> bool {
        self.groups
            .iter()
            .any(|g| g.values.iter().any(|v| v.is_some_and(|v| v > 0.0)))
    }
}

fn ellipsize(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// Draw a horizontal bar chart to SVG. A row holds only the groups that have a value in it;
/// with several groups each bar is labelled with its value and group.
pub fn bar_chart(c: &BarChart) -> Result<String> {
    let n = c.categories.len().max(1);
    let several = c.groups.len() > 1;
    let bar_px: u32 = if several { 15 } else { 20 };
    // Bars in each row: the groups with a value there.
    let rows: Vec<Vec<(usize, f64)>> = (0..c.categories.len())
        .map(|i| {
            c.groups
                .iter()
                .enumerate()
                .filter_map(|(k, g)| g.values.get(i).copied().flatten().map(|v| (k, v)))
                .collect()
        })
        .collect();
    let units: Vec<f64> = rows.iter().map(|r| r.len().max(1) as f64 + 0.7).collect();
    let total_units: f64 = units.iter().sum();
    let plot_h = (total_units * bar_px as f64) as u32 + 100;
    let w = c.width;

    let max_label = ((w as f64 * 0.3) / CHAR_W) as usize;
    let labels: Vec<String> = c.categories.iter().map(|l| ellipsize(l, max_label)).collect();
    let label_px = labels.iter().map(|l| l.chars().count()).max().unwrap_or(4) as f64 * CHAR_W + 22.0;
    let text = |k: usize, v: f64| {
        if several {
            format!("{}  {}", (c.value_text)(v), c.groups[k].name)
        } else {
            (c.value_text)(v)
        }
    };
    let longest = rows
        .iter()
        .flatten()
        .map(|&(k, v)| text(k, v).chars().count())
        .max()
        .unwrap_or(4) as f64;

    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in rows.iter().flatten().filter_map(|&(_, v)| c.axis.to_pos(v)) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    // Room for the text at the end of the longest bar.
    let plot_w = (w as f64 - label_px - 40.0).max(100.0);
    let headroom = (longest * 6.6 + 10.0) / (plot_w - longest * 6.6 - 10.0).max(plot_w * 0.3);
    let (x0, x1, ticks) = c.axis.layout(lo, hi, headroom, plot_w as u32);

    let entries: Vec<(String, Key)> = if several {
        c.groups
            .iter()
            .map(|gr| (gr.name.clone(), Key::Swatch(gr.colour.to_rgba())))
            .collect()
    } else {
        Vec::new()
    };
    let lh = legend_height(&entries, w);

    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (w, plot_h + lh)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let (plot, legend) = root.split_vertically(plot_h);
        let mut chart = ChartBuilder::on(&plot)
            .caption(&c.title, (FONT, title_size(&c.title, w)).into_font().color(&TEXT))
            .margin(10)
            .margin_right(26)
            .x_label_area_size(46)
            .y_label_area_size(label_px as u32)
            .build_cartesian_2d(x0..x1, 0.0..total_units)
            .map_err(err)?;
        let xf = |v: &f64| c.axis.ticks.format(c.axis.value_at(*v));
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .x_desc(c.axis.label.as_str())
            .x_labels(ticks)
            .x_label_formatter(&xf)
            .label_style(font(TICK_SIZE))
            .axis_desc_style(font(DESC_SIZE))
            .bold_line_style(GRID_BOLD)
            .light_line_style(GRID_LIGHT)
            .max_light_lines(if c.axis.scale == Scale::Linear { 1 } else { 0 })
            .draw()
            .map_err(err)?;
        // Rows from the top: row i spans [top - units[i], top].
        let mut top = total_units;
        for (i, label) in labels.iter().enumerate().take(n) {
            let row = &rows[i];
            let (px, py) = chart.backend_coord(&(x0, top - units[i] / 2.0));
            root.draw(&Text::new(
                label.clone(),
                (px - 8, py),
                font(TICK_SIZE).pos(Pos::new(HPos::Right, VPos::Center)),
            ))
            .map_err(err)?;
            for (j, &(k, v)) in row.iter().enumerate() {
                let y_top = top - 0.35 - j as f64;
                let y_bot = y_top - 1.0;
                let end = c.axis.to_pos(v).unwrap_or(x0).max(x0);
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(x0, y_bot + 0.1), (end, y_top - 0.1)],
                        c.groups[k].colour.filled(),
                    )))
                    .map_err(err)?;
                let (ex, ey) = chart.backend_coord(&(end, (y_top + y_bot) / 2.0));
                root.draw(&Text::new(
                    text(k, v),
                    (ex + 5, ey),
                    TextStyle::from((FONT, 14.0).into_font())
                        .color(&TEXT)
                        .pos(Pos::new(HPos::Left, VPos::Center)),
                ))
                .map_err(err)?;
            }
            top -= units[i];
        }
        draw_legend(&legend, &entries, w)?;
        root.present().map_err(err)?;
    }
    Ok(buf)
}

/// Per-worker (or per-process) bars of one phase: stragglers (below `slow` times the median)
/// stand out.
#[derive(Clone, Debug)]
pub struct WorkerBars {
    pub title: String,
    /// What a bar is: `worker` or `process`.
    pub item: &'static str,
    pub values: Vec<f64>,
    pub colour: RGBColor,
    pub y: Axis,
    /// Unit for the median's legend entry, e.g. `ops/s`.
    pub unit: String,
    pub slow: f64,
    pub size: (u32, u32),
}

/// Draw per-worker bars to SVG.
pub fn worker_bars(c: &WorkerBars) -> Result<String> {
    let (w, h) = c.size;
    let n = c.values.len();
    let med = median(&c.values);
    let slow: Vec<bool> = c.values.iter().map(|&v| v < c.slow * med).collect();
    let n_slow = slow.iter().filter(|s| **s).count();
    let hi = c.values.iter().copied().fold(0.0, f64::max);
    let (y0, y1, y_ticks) = c.y.layout(0.0, hi, 0.08, h - 100);

    let mut entries: Vec<(String, Key)> = vec![
        (c.item.to_string(), Key::Swatch(c.colour.to_rgba())),
        (
            format!("median {} {}", fmt::si(med), c.unit),
            Key::Line(REFERENCE, true, Marker::None),
        ),
    ];
    if n_slow > 0 {
        entries.push((
            format!(
                "below {:.0}% of the median ({n_slow} {}{})",
                c.slow * 100.0,
                c.item,
                match (n_slow, c.item.ends_with('s')) {
                    (1, _) => "",
                    (_, true) => "es",
                    _ => "s",
                }
            ),
            Key::Swatch(ALERT.to_rgba()),
        ));
    }
    let lh = legend_height(&entries, w);
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (w, h + lh)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let (plot, legend) = root.split_vertically(h);
        let mut chart = ChartBuilder::on(&plot)
            .caption(&c.title, (FONT, title_size(&c.title, w)).into_font().color(&TEXT))
            .margin(10)
            .margin_right(20)
            .x_label_area_size(46)
            .y_label_area_size(70)
            .build_cartesian_2d(-0.5..(n as f64 - 0.5), y0..y1)
            .map_err(err)?;
        let yf = |v: &f64| c.y.ticks.format(*v);
        let xf = |v: &f64| Ticks::Integer.format(*v);
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_desc(c.item)
            .y_desc(c.y.label.as_str())
            .x_labels(n.clamp(1, 10))
            .y_labels(y_ticks)
            .x_label_formatter(&xf)
            .y_label_formatter(&yf)
            .label_style(font(TICK_SIZE))
            .axis_desc_style(font(DESC_SIZE))
            .bold_line_style(GRID_BOLD)
            .light_line_style(GRID_LIGHT)
            .max_light_lines(1)
            .draw()
            .map_err(err)?;
        let half = if n > 100 { 0.5 } else { 0.38 };
        chart
            .draw_series(c.values.iter().enumerate().map(|(i, &v)| {
                let col = if slow[i] { ALERT } else { c.colour };
                Rectangle::new([(i as f64 - half, 0.0), (i as f64 + half, v)], col.filled())
            }))
            .map_err(err)?;
        chart
            .draw_series(DashedLineSeries::new(
                vec![(-0.5, med), (n as f64 - 0.5, med)],
                7,
                5,
                REFERENCE.stroke_width(2),
            ))
            .map_err(err)?;
        draw_legend(&legend, &entries, w)?;
        root.present().map_err(err)?;
    }
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

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
