//! Horizontal bar charts and per-worker bars.

use super::{
    draw_legend, err, font, legend_height, title_size, Axis, Key, Marker, Result, Scale, Ticks, ALERT, CHAR_W,
    DESC_SIZE, FONT, GRID_BOLD, GRID_LIGHT, REFERENCE, TEXT, TICK_SIZE,
};
use crate::fmt;
use dfsbench_result::median;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// One run's (or one kind's) values in a bar chart, one per category.
#[derive(Clone, Debug)]
pub(crate) struct BarGroup {
    pub name: String,
    pub colour: RGBColor,
    pub values: Vec<Option<f64>>,
}

/// Horizontal bars: a row per category (phase), a bar per group (run) in each row.
#[derive(Clone, Debug)]
pub(crate) struct BarChart {
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
    pub(crate) fn has_data(&self) -> bool {
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
pub(crate) fn bar_chart(c: &BarChart) -> Result<String> {
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
pub(crate) struct WorkerBars {
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
pub(crate) fn worker_bars(c: &WorkerBars) -> Result<String> {
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
