//! The charts of a train run (MLPerf Storage's view): how busy the emulated accelerators
//! were kept over the run, second by second and epoch by epoch;
//! how long a step waited for its data, from each epoch's exact histogram; and an accelerator
//! search's AU over the accelerators per rank, against the profile's threshold.

use dfsbench_result::{PhaseResult, TrainResult};
use plotters::style::Color;

use crate::figures::{Figure, Result};
use crate::latency;
use crate::runs::{self, Run};
use crate::svg::{self, Axis, Band, LineChart, Marker, RenderError, Series, Swatch, Ticks, HALF, WIDE};
use crate::train_table::{accelerator_search, largest_held};

/// Epochs named on the AU time line at most; more are shaded without names.
const NAMED: usize = 8;

fn pct(v: f64) -> String {
    format!("{:.1}%", v * 100.0)
}

/// Every measured train epoch (search steps too) with its figures, in the order they ran.
fn epochs<'r>(run: &'r Run) -> Vec<(&'r PhaseResult, &'r TrainResult)> {
    run.phases().filter_map(|p| Some((p, p.train.as_ref()?))).collect()
}

/// The charts of the run's train epochs; none for a run that trained nothing.
pub(crate) fn train(run: &Run) -> Result<Vec<Figure>> {
    let epochs = epochs(run);
    if epochs.is_empty() {
        return Ok(Vec::new());
    }
    let mut out = vec![au_over_time(run, &epochs)?, waits(run, &epochs)?];
    out.extend(search(run)?);
    Ok(out)
}

/// AU interval by interval, as steps (from the phase series' compute and wait times; absent
/// in results written before they were kept): a segment per stretch of intervals in which
/// the accelerators computed or waited, each clipped to its epoch.
fn au_steps(epochs: &[(&PhaseResult, &TrainResult)]) -> Vec<Vec<(f64, f64)>> {
    let mut out = Vec::new();
    for (p, _) in epochs {
        let (start, end) = (p.start_s, p.start_s + p.ramp_s + p.duration_s);
        let width = p.series.interval_s;
        let mut segment: Vec<(f64, f64)> = Vec::new();
        for (i, au) in p.series.au().into_iter().enumerate() {
            let (x0, x1) = (start + i as f64 * width, (start + (i + 1) as f64 * width).min(end));
            match au {
                Some(a) if x0 < x1 => segment.extend([(x0, a), (x1, a)]),
                _ => out.extend((!segment.is_empty()).then(|| std::mem::take(&mut segment))),
            }
        }
        out.extend((!segment.is_empty()).then_some(segment));
    }
    out
}

/// AU of each epoch over the time it ran: interval by interval as steps, the epoch's average
/// as a flat segment, the least busy accelerator's average as a dashed one, and the threshold.
fn au_over_time(run: &Run, epochs: &[(&PhaseResult, &TrainResult)]) -> Result<Figure> {
    let span = |p: &PhaseResult| (p.start_s, p.start_s + p.ramp_s + p.duration_s);
    let (start, end) = epochs
        .iter()
        .map(|(p, _)| span(p))
        .fold((f64::INFINITY, 0.0f64), |(a, b), (s, e)| (a.min(s), b.max(e)));
    let x = Axis::linear("time since the run started (s)", Ticks::Plain).not_from_zero();
    let y = Axis::linear("accelerator utilization", Ticks::Percent).with_range(0.0, 1.05);
    let steps = au_steps(epochs);
    let interval = epochs[0].0.series.interval_s;
    let title = if steps.is_empty() {
        format!("{}: AU per epoch over the run", run.label)
    } else {
        format!("{}: AU over the run", run.label)
    };
    let mut chart = LineChart::new(title.clone(), x, y, WIDE);
    let segments = |f: fn(&TrainResult) -> f64| -> Vec<Vec<(f64, f64)>> {
        epochs
            .iter()
            .map(|(p, t)| {
                let (s, e) = span(p);
                vec![(s, f(t)), (e, f(t))]
            })
            .collect()
    };
    let shade = svg::REFERENCE;
    for (i, (p, _)) in epochs.iter().enumerate() {
        let (s, e) = span(p);
        chart.bands.push(Band {
            x0: s,
            x1: e,
            colour: shade.mix(if i % 2 == 0 { 0.06 } else { 0.14 }),
            label: (epochs.len() <= NAMED).then(|| runs::label(p)),
        });
    }
    let colour = svg::colour(run.colour);
    let per_interval = !steps.is_empty();
    if per_interval {
        chart.series.push(Series {
            name: format!("AU per {interval} s, all accelerators"),
            colour,
            segments: steps,
            dashed: false,
            marker: Marker::None,
            width: 1,
        });
    }
    chart.series.push(Series {
        name: "AU, all accelerators, epoch average".into(),
        colour,
        segments: segments(|t| t.au),
        dashed: false,
        marker: Marker::Circle,
        width: 3,
    });
    chart.series.push(Series {
        name: "least busy accelerator".into(),
        colour,
        segments: segments(|t| t.au_min),
        dashed: true,
        marker: Marker::None,
        width: 1,
    });
    let threshold = epochs[0].1.au_threshold;
    chart.series.push(
        Series::line(
            format!("threshold {}", pct(threshold)),
            svg::ALERT,
            vec![(start, threshold), (end, threshold)],
        )
        .dashed(),
    );
    chart.swatches.push(Swatch {
        name: "epoch (shaded alternately)".into(),
        colour: shade.mix(0.2),
    });
    let held = epochs.iter().filter(|(_, t)| t.meets_threshold).count();
    Ok(Figure {
        kind: "train-au-time",
        title,
        svg: svg::line_chart(&chart)?,
        wide: true,
        note: Some(format!(
            "AU = compute / (compute + wait) of every accelerator{}; {held} of {} epochs reached the threshold.",
            if per_interval {
                format!(
                    ", in each {interval} s of the run (a batch computed across an interval's end counts in both) and over each epoch"
                )
            } else {
                " over each epoch, drawn across the epoch's time".to_string()
            },
            epochs.len()
        )),
    })
}

/// Each epoch's wait for data before a step, by percentile, from its merged histogram.
fn waits(run: &Run, epochs: &[(&PhaseResult, &TrainResult)]) -> Result<Figure> {
    let title = format!("{}: wait for data per step, by percentile", run.label);
    let mut chart = LineChart::new(
        title.clone(),
        Axis::linear("percentile", Ticks::Nines),
        Axis::linear("wait before the step", Ticks::Latency),
        if epochs.len() > 4 { WIDE } else { HALF },
    );
    let mut top: f64 = 1.0;
    let mut steps = 0;
    for (i, (p, t)) in epochs.iter().enumerate() {
        if t.wait.count == 0 {
            continue;
        }
        let h =
            dfsbench_result::histogram::deserialize(&t.wait.histogram).map_err(|reason| RenderError::Histogram {
                phase: p.label.clone(),
                reason,
            })?;
        let curve = latency::percentile_curve(&h);
        top = top.max(curve.last().map_or(0.0, |c| c.0));
        steps += t.wait.count;
        let name = format!("{} (p50 {})", runs::label(p), crate::fmt::format_ns(t.wait.p50_ns));
        chart.series.push(Series::line(name, svg::colour(i), curve));
    }
    chart.x = chart.x.with_range(0.0, top.ceil());
    Ok(Figure {
        kind: "train-wait",
        title,
        svg: svg::line_chart(&chart)?,
        wide: epochs.len() > 4,
        note: Some(format!(
            "The time each accelerator sat idle before each of its {steps} steps, from each epoch's exact histogram (0: the batch was loaded before the accelerator was free); the first step's wait counts."
        )),
    })
}

/// The search's AU over accelerators per rank, with the threshold and the answer marked;
/// None when the run searched nothing.
fn search(run: &Run) -> Result<Option<Figure>> {
    let steps = accelerator_search(run.result);
    let Some(first) = steps.first() else {
        return Ok(None);
    };
    let counts: Vec<f64> = steps.iter().map(|s| s.per_rank as f64).collect();
    let (lo, hi) = (counts[0], counts[counts.len() - 1]);
    let x = Axis::log2("emulated accelerators per rank", Ticks::Integer)
        .ticks_at(counts.clone())
        .with_range(lo / 1.25, hi.max(lo * 2.0) * 1.25);
    let y = Axis::linear("accelerator utilization", Ticks::Percent).with_range(0.0, 1.05);
    let title = format!("{}: accelerator search, AU per step", run.label);
    let mut chart = LineChart::new(title.clone(), x, y, HALF);
    let colour = svg::colour(run.colour);
    let curve = |f: fn(&TrainResult) -> f64| steps.iter().map(|s| (s.per_rank as f64, f(s.train))).collect();
    chart
        .series
        .push(Series::line("AU", colour, curve(|t| t.au)).with_marker(Marker::Circle));
    chart.series.push(
        Series::line("least busy accelerator", colour, curve(|t| t.au_min))
            .with_marker(Marker::Triangle)
            .dashed(),
    );
    let threshold = first.train.au_threshold;
    chart.series.push(
        Series::line(
            format!("threshold {}", pct(threshold)),
            svg::ALERT,
            vec![(lo / 1.25, threshold), (hi.max(lo * 2.0) * 1.25, threshold)],
        )
        .dashed(),
    );
    let held = largest_held(&steps);
    if let Some(h) = held {
        let at = h.per_rank as f64;
        chart.series.push(
            Series::line(
                format!("largest held: {}", h.per_rank),
                svg::REFERENCE,
                vec![(at, 0.0), (at, 1.05)],
            )
            .dashed(),
        );
    }
    let tried: Vec<String> = steps.iter().map(|s| s.per_rank.to_string()).collect();
    let answer = match held {
        Some(h) => format!(
            "Largest held: {} accelerator{} per rank (AU {}).",
            h.per_rank,
            if h.per_rank == 1 { "" } else { "s" },
            pct(h.train.au)
        ),
        None => format!(
            "No step held: 1 accelerator per rank reached AU {}.",
            pct(first.train.au)
        ),
    };
    Ok(Some(Figure {
        kind: "train-search",
        title,
        svg: svg::line_chart(&chart)?,
        wide: false,
        note: Some(format!(
            "{answer} An epoch per step with {} accelerators per rank; a count holds when it and every smaller one reach the threshold ({}).",
            tried.join(", "),
            pct(threshold)
        )),
    }))
}
