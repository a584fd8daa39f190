//! Line charts: series with markers and optional dashes, bands, swatches and a legend below.

use super::axis::XRange;
use super::{
    draw_legend, draw_marker, err, font, legend_height, title_size, Axis, Key, Result, Scale, DESC_SIZE, FONT,
    GRID_BOLD, GRID_LIGHT, REFERENCE, TEXT, TICK_SIZE,
};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Marker {
    None,
    Circle,
    Triangle,
    Cross,
}

/// Markers for the n-th kind of line (e.g. write, read, delete) when colour shows the run.
pub(crate) fn marker(i: usize) -> Marker {
    [Marker::Circle, Marker::Triangle, Marker::Cross][i % 3]
}

/// A line (or several segments drawn alike, with one legend entry).
#[derive(Clone, Debug)]
pub(crate) struct Series {
    pub name: String,
    pub colour: RGBColor,
    pub segments: Vec<Vec<(f64, f64)>>,
    pub dashed: bool,
    pub marker: Marker,
    pub width: u32,
}

impl Series {
    pub(crate) fn line(name: impl Into<String>, colour: RGBColor, points: Vec<(f64, f64)>) -> Series {
        Series {
            name: name.into(),
            colour,
            segments: vec![points],
            dashed: false,
            marker: Marker::None,
            width: 2,
        }
    }

    pub(crate) fn with_marker(mut self, m: Marker) -> Series {
        self.marker = m;
        self
    }

    pub(crate) fn dashed(mut self) -> Series {
        self.dashed = true;
        self
    }
}

/// A shaded stretch of the x axis: a phase of a time line, or a second with errors.
#[derive(Clone, Debug)]
pub(crate) struct Band {
    pub x0: f64,
    pub x1: f64,
    pub colour: RGBAColor,
    /// Written at the top of the band when it is wide enough.
    pub label: Option<String>,
}

/// A legend entry that is not a line: a filled swatch.
#[derive(Clone, Debug)]
pub(crate) struct Swatch {
    pub name: String,
    pub colour: RGBAColor,
}

#[derive(Clone, Debug)]
pub(crate) struct LineChart {
    pub title: String,
    pub x: Axis,
    pub y: Axis,
    pub series: Vec<Series>,
    pub bands: Vec<Band>,
    pub swatches: Vec<Swatch>,
    pub size: (u32, u32),
}

impl LineChart {
    pub(crate) fn new(title: impl Into<String>, x: Axis, y: Axis, size: (u32, u32)) -> LineChart {
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
    pub(crate) fn has_data(&self) -> bool {
        self.series.iter().any(|s| s.segments.iter().any(|p| !p.is_empty()))
    }
}

/// Thin a long line to at most about `2 * buckets` points, keeping each bucket's min and max
/// (so spikes and dips stay visible).
pub(super) fn thin(points: &[(f64, f64)], buckets: usize) -> Vec<(f64, f64)> {
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

/// Draw a line chart to SVG.
pub(crate) fn line_chart(c: &LineChart) -> Result<String> {
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
