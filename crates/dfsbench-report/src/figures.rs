//! The report's figures, built from result documents: throughput per phase, latency
//! percentiles and CDF from the merged histograms, the per-second time line with error seconds,
//! and per-worker bars. Each returns finished SVG in a [`Figure`].

use dfsbench_result::PhaseResult;
use plotters::style::{Color, RGBColor};

use crate::fmt;
use crate::latency;
use crate::runs::{self, Run};
use crate::svg::{
    self, Axis, Band, BarChart, BarGroup, LineChart, RenderError, Series, Swatch, Ticks, WorkerBars, HALF, WIDE,
};

/// One chart of the page.
pub(crate) struct Figure {
    /// What it shows, for tests and styling: `throughput-ops`, `latency-cdf`, `timeline-ops`...
    pub kind: &'static str,
    pub title: String,
    pub svg: String,
    /// Spans the page's width (else half of it).
    pub wide: bool,
    /// A line under the chart.
    pub note: Option<String>,
}

pub(crate) type Result<T> = std::result::Result<T, RenderError>;

/// Throughput per phase: ops/s for every phase, MiB/s for phases that move data; a bar per
/// run in each phase's row.
pub(crate) fn throughput(runs: &[Run], keys: &[(String, String)], ambiguous: bool) -> Result<Vec<Figure>> {
    let mut out = Vec::new();
    let cats: Vec<String> = keys.iter().map(|k| runs::phase_title(k, ambiguous)).collect();
    let value = |r: &Run, k: &(String, String), f: fn(&PhaseResult) -> Option<f64>| runs::find(r, k).and_then(f);

    type Metric = (
        &'static str,
        &'static str,
        fn(&PhaseResult) -> Option<f64>,
        fn(f64) -> String,
        &'static str,
    );
    let metrics: [Metric; 2] = [
        (
            "throughput-ops",
            "operations per second by phase",
            |p| Some(p.ops_per_sec),
            fmt::si,
            "ops/s",
        ),
        (
            "throughput-mib",
            "data throughput by phase",
            |p| (p.bytes > 0).then_some(p.bytes_per_sec / fmt::MIB),
            |v| format!("{} MiB/s", fmt_mib(v)),
            "MiB/s",
        ),
    ];
    for (kind, title, f, text, unit) in metrics {
        // Only the phases that have this metric in some run.
        let rows: Vec<usize> = (0..keys.len())
            .filter(|&i| runs.iter().any(|r| value(r, &keys[i], f).is_some()))
            .collect();
        if rows.is_empty() {
            continue;
        }
        let groups: Vec<BarGroup> = runs
            .iter()
            .map(|r| BarGroup {
                name: r.label.clone(),
                colour: svg::colour(r.colour),
                values: rows.iter().map(|&i| value(r, &keys[i], f)).collect(),
            })
            .collect();
        // Linear from 0 whatever the spread: bar lengths compare as the rates do.
        let axis = Axis::linear(unit, Ticks::Si);
        let chart = BarChart {
            title: title.to_string(),
            categories: rows.iter().map(|&i| cats[i].clone()).collect(),
            groups,
            axis,
            value_text: text,
            width: WIDE.0,
        };
        if !chart.has_data() {
            continue;
        }
        out.push(Figure {
            kind,
            title: title.to_string(),
            svg: svg::bar_chart(&chart)?,
            wide: true,
            note: Some(format!(
                "{unit} over each phase's measured time (ramp-up excluded); linear axis from 0."
            )),
        });
    }
    Ok(out)
}

pub(crate) fn fmt_mib(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

/// A line of the latency charts: its name, colour and phase.
pub(crate) struct LatencyLine<'a> {
    pub name: String,
    pub colour: RGBColor,
    pub phase: &'a PhaseResult,
}

/// The percentile chart and the CDF of some phases, from their merged histograms.
pub(crate) fn latency_pair(title: &str, lines: &[LatencyLine]) -> Result<Vec<Figure>> {
    let mut pct = LineChart::new(
        format!("{title}: latency by percentile"),
        Axis::linear("percentile", Ticks::Nines),
        Axis::log10("latency (log scale)", Ticks::Latency),
        HALF,
    );
    let mut cdf = LineChart::new(
        format!("{title}: latency CDF"),
        Axis::log10("latency (log scale)", Ticks::Latency),
        Axis::linear("operations at or below", Ticks::Percent).with_range(0.0, 1.0),
        HALF,
    );
    let mut top: f64 = 1.0;
    for l in lines {
        if l.phase.latency.count == 0 {
            continue;
        }
        let h = dfsbench_result::histogram::deserialize(&l.phase.latency.histogram).map_err(|reason| {
            RenderError::Histogram {
                phase: l.phase.label.clone(),
                reason,
            }
        })?;
        let curve = latency::percentile_curve(&h);
        top = top.max(curve.last().map_or(0.0, |p| p.0));
        pct.series.push(Series::line(l.name.clone(), l.colour, curve));
        cdf.series
            .push(Series::line(l.name.clone(), l.colour, latency::cdf(&h, 400)));
    }
    if !pct.has_data() {
        return Ok(Vec::new());
    }
    pct.x = pct.x.with_range(0.0, top.ceil());
    Ok(vec![
        Figure {
            kind: "latency-percentiles",
            title: pct.title.clone(),
            svg: svg::line_chart(&pct)?,
            wide: false,
            note: None,
        },
        Figure {
            kind: "latency-cdf",
            title: cdf.title.clone(),
            svg: svg::line_chart(&cdf)?,
            wide: false,
            note: None,
        },
    ])
}

/// Latency figures: for one run a pair per job (a line per phase); for several, a pair per
/// phase (a line per run).
pub(crate) fn latency(runs: &[Run], keys: &[(String, String)], ambiguous: bool) -> Result<Vec<Figure>> {
    let mut out = Vec::new();
    if runs.len() == 1 {
        let r = &runs[0];
        let mut jobs: Vec<&str> = Vec::new();
        for p in r.phases() {
            if !jobs.contains(&p.job_name.as_str()) {
                jobs.push(&p.job_name);
            }
        }
        for job in jobs {
            let lines: Vec<LatencyLine> = r
                .phases()
                .filter(|p| p.job_name == job)
                .enumerate()
                .map(|(i, p)| LatencyLine {
                    name: runs::label(p),
                    colour: svg::colour(i),
                    phase: p,
                })
                .collect();
            out.extend(latency_pair(&format!("job {job}"), &lines)?);
        }
    } else {
        for k in keys {
            let lines: Vec<LatencyLine> = runs
                .iter()
                .filter_map(|r| {
                    runs::find(r, k).map(|p| LatencyLine {
                        name: r.label.clone(),
                        colour: svg::colour(r.colour),
                        phase: p,
                    })
                })
                .collect();
            out.extend(latency_pair(&runs::phase_title(k, ambiguous), &lines)?);
        }
    }
    Ok(out)
}

/// Seconds to minutes on long time lines.
fn time_unit(span_s: f64) -> (f64, &'static str) {
    if span_s > 1200.0 {
        (60.0, "min")
    } else {
        (1.0, "s")
    }
}

/// One time-line chart of `phases` of a run: `metric` per interval, phases shaded and named,
/// intervals with errors shaded red and marked with a red triangle.
fn timeline_chart(run: &Run, phases: &[&PhaseResult], mib: bool, title: String, size: (u32, u32)) -> LineChart {
    let start = phases.iter().map(|p| p.start_s).fold(f64::INFINITY, f64::min);
    let end = phases
        .iter()
        .map(|p| p.start_s + p.ramp_s + p.duration_s)
        .fold(0.0, f64::max);
    let (div, unit) = time_unit(end - start);
    let (metric, scale) = if mib { ("MiB/s", fmt::MIB) } else { ("ops/s", 1.0) };
    let mut error_intervals = 0u64;
    let mut errors = 0u64;
    let mut segments = Vec::new();
    let mut marks = Vec::new();
    let mut bands = Vec::new();
    let shade = RGBColor(0x9a, 0xa5, 0xb1);
    for (i, p) in phases.iter().enumerate() {
        let s = &p.series;
        let dt = s.interval_s;
        let len = p.ramp_s + p.duration_s;
        if dt <= 0.0 {
            continue;
        }
        let values = if mib { &s.bytes } else { &s.ops };
        let mut seg = Vec::with_capacity(values.len() * 2);
        for (k, &v) in values.iter().enumerate() {
            let t0 = k as f64 * dt;
            let t1 = ((k + 1) as f64 * dt).min(len.max(t0 + 1e-3));
            let rate = v as f64 / (t1 - t0).max(1e-3) / scale;
            let (a, b) = ((p.start_s + t0) / div, (p.start_s + t1) / div);
            seg.push((a, rate));
            seg.push((b, rate));
            let e = s.errors.get(k).copied().unwrap_or(0);
            if e > 0 {
                error_intervals += 1;
                errors += e;
                bands.push(Band {
                    x0: a,
                    x1: b,
                    colour: svg::ALERT.mix(0.28),
                    label: None,
                });
                marks.push(vec![((a + b) / 2.0, rate)]);
            }
        }
        segments.push(seg);
        bands.insert(
            0,
            Band {
                x0: p.start_s / div,
                x1: (p.start_s + len) / div,
                colour: shade.mix(if i % 2 == 0 { 0.12 } else { 0.24 }),
                label: (phases.len() > 1).then(|| runs::label(p)),
            },
        );
    }
    let y = svg::rate_axis(metric, segments.iter().flatten().map(|p| p.1));
    let x = Axis::linear(format!("time since the run started ({unit})"), Ticks::Plain).not_from_zero();
    let mut chart = LineChart::new(title, x, y, size);
    chart.bands = bands;
    chart.series.push(Series {
        name: format!("{metric} per {} s interval", phases[0].series.interval_s),
        colour: svg::colour(run.colour),
        segments,
        dashed: false,
        marker: svg::Marker::None,
        width: if size.0 < WIDE.0 { 1 } else { 2 },
    });
    if phases.len() > 1 {
        chart.swatches.push(Swatch {
            name: "phase (shaded alternately)".into(),
            colour: shade.mix(0.3),
        });
    }
    if error_intervals > 0 {
        chart.series.push(Series {
            name: format!("intervals with errors ({error_intervals}; {errors} errors)"),
            colour: svg::ALERT,
            segments: marks,
            dashed: false,
            marker: svg::Marker::Triangle,
            width: 2,
        });
    }
    chart
}

const TIMELINE_NOTE: &str = "Each interval's count divided by its length; the series includes ramp-up, and a \
phase's last interval may be shorter.";

/// The per-second time line of a run: ops/s and, when data moved, MiB/s over the whole run
/// (phases shaded and named, seconds with errors marked), then each phase of ten intervals or
/// more on its own scale.
pub(crate) fn timeline(run: &Run) -> Result<Vec<Figure>> {
    let phases: Vec<&PhaseResult> = run.phases().collect();
    if phases.is_empty() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    let data: Vec<&PhaseResult> = phases.iter().copied().filter(|p| runs::moves_data(p)).collect();
    for (kind, mib, set) in [("timeline-ops", false, &phases), ("timeline-mib", true, &data)] {
        if set.is_empty() || (mib && set.iter().all(|p| p.bytes == 0)) {
            continue;
        }
        let metric = if mib { "MiB/s" } else { "ops/s" };
        let chart = timeline_chart(run, set, mib, format!("{}: {metric} over the run", run.label), WIDE);
        out.push(Figure {
            kind,
            title: chart.title.clone(),
            svg: svg::line_chart(&chart)?,
            wide: true,
            note: Some(TIMELINE_NOTE.into()),
        });
    }
    if phases.len() > 1 {
        for p in phases.iter().filter(|p| p.series.ops.len() >= 10) {
            let mib = p.bytes > 0;
            let metric = if mib { "MiB/s" } else { "ops/s" };
            let chart = timeline_chart(
                run,
                &[p],
                mib,
                format!("{}: {metric} per interval", runs::label(p)),
                HALF,
            );
            out.push(Figure {
                kind: "timeline-phase",
                title: chart.title.clone(),
                svg: svg::line_chart(&chart)?,
                wide: false,
                note: None,
            });
        }
    }
    Ok(out)
}

const FAULTS_NOTE: &str = "Operations per 100 ms interval over the run, from each operation's completion time; \
red bands are stalls (no operation completed for at least the stall threshold); dashed lines are the faults as \
they started and the recovery probe's first success.";

/// The run around its faults: ops/s in 100 ms intervals, stalls shaded, a dashed line where
/// each fault started and where the recovery probe first succeeded; None without faults.
pub(crate) fn faults(run: &Run) -> Result<Option<Figure>> {
    let res = run.result;
    if res.faults.is_empty() {
        return Ok(None);
    }
    let mut points = Vec::new();
    let mut bands = Vec::new();
    for p in run.phases() {
        let Some(s) = p.fine_series.as_ref().filter(|s| s.interval_s > 0.0) else {
            continue;
        };
        let mut seg: Vec<(f64, f64)> = s
            .ops
            .iter()
            .enumerate()
            .map(|(k, &n)| (p.start_s + (k as f64 + 0.5) * s.interval_s, n as f64 / s.interval_s))
            .collect();
        points.append(&mut seg);
        for st in p.stalls.iter().flat_map(|st| &st.intervals) {
            bands.push(Band {
                x0: st.from_s,
                x1: st.to_s,
                colour: svg::ALERT.mix(0.25),
                label: Some(format!("stall {:.2} s", st.length())),
            });
        }
    }
    let top = points.iter().map(|p| p.1).fold(1.0, f64::max) * 1.05;
    let x = Axis::linear("time since the run started (s)", Ticks::Plain).not_from_zero();
    let y = Axis::linear("ops/s", Ticks::Si).with_range(0.0, top);
    let mut chart = LineChart::new(
        format!("{}: faults and stalls, ops/s per 100 ms", run.label),
        x,
        y,
        WIDE,
    );
    chart.bands = bands;
    chart
        .series
        .push(Series::line("ops/s per 100 ms", svg::colour(run.colour), points));
    for (i, f) in res.faults.iter().enumerate() {
        if let Some(t) = f.run.started_s {
            let name = format!(
                "fault {}: {} ({})",
                i + 1,
                crate::faults::shown(&f.command),
                f.run.status
            );
            chart
                .series
                .push(Series::line(name, svg::colour(i + 1), vec![(t, 0.0), (t, top)]).dashed());
        }
    }
    if let Some(r) = &res.recovery {
        if let Some(t) = r.recovered_s {
            let name = match r.recovery_time_s {
                Some(rt) => format!("probe OK: recovered {rt:.1} s after the last fault"),
                None => "probe OK".to_string(),
            };
            chart
                .series
                .push(Series::line(name, svg::ALERT, vec![(t, 0.0), (t, top)]).dashed());
        }
    }
    if chart.bands.iter().any(|b| b.label.is_some()) {
        chart.swatches.push(Swatch {
            name: "stall".into(),
            colour: svg::ALERT.mix(0.3),
        });
    }
    Ok(Some(Figure {
        kind: "faults",
        title: chart.title.clone(),
        svg: svg::line_chart(&chart)?,
        wide: true,
        note: Some(FAULTS_NOTE.into()),
    }))
}

/// Per-worker bars of every measured phase of a run, and per-process bars in runs of several
/// processes: MiB/s for phases that moved data, else ops/s; bars below 80% of the median are
/// red.
pub(crate) fn workers(run: &Run) -> Result<Vec<Figure>> {
    let mut out = Vec::new();
    for p in run.phases() {
        if p.workers_detail.is_empty() {
            continue;
        }
        let bytes = p.bytes > 0;
        let unit = if bytes { "MiB/s" } else { "ops/s" };
        let rate = |ops: f64, b: f64| if bytes { b / fmt::MIB } else { ops };
        let per_process: Vec<f64> = p
            .processes
            .iter()
            .map(|r| rate(r.ops_per_sec, r.bytes_per_sec))
            .collect();
        let per_worker: Vec<f64> = p
            .workers_detail
            .iter()
            .map(|w| rate(w.ops_per_sec, w.bytes_per_sec))
            .collect();
        for (item, values) in [("process", per_process), ("worker", per_worker)] {
            if values.len() < 2 && item == "process" {
                continue;
            }
            let wide = values.len() > 64;
            let chart = WorkerBars {
                title: format!("{}: {unit} per {item}", runs::label(p)),
                item,
                values,
                colour: svg::colour(run.colour),
                y: Axis::linear(unit, Ticks::Si),
                unit: unit.to_string(),
                slow: 0.8,
                size: if wide { WIDE } else { HALF },
            };
            out.push(Figure {
                kind: "workers",
                title: chart.title.clone(),
                svg: svg::worker_bars(&chart)?,
                wide,
                note: None,
            });
        }
    }
    Ok(out)
}

/// A paced line of the rate-steps charts: one run's phases of one job and operation.
struct Steps<'a> {
    name: String,
    colour: RGBColor,
    phases: Vec<&'a PhaseResult>,
}

/// The `--rate-steps` curve, as SPECsfs draws it: achieved against requested ops/s (with the
/// line where they are equal), and response time (mean and p99, from the intended start)
/// against achieved ops/s. A line per run, job and operation with two steps or more.
pub(crate) fn rate_steps(runs: &[Run]) -> Result<Vec<Figure>> {
    let mut steps: Vec<Steps> = Vec::new();
    for r in runs {
        for p in r.phases().filter(|p| p.rate.is_some()) {
            let name = if runs.len() > 1 {
                format!("{} {}", r.label, p.name)
            } else {
                p.name.clone()
            };
            match steps
                .iter_mut()
                .find(|s| s.name == name && s.phases[0].job_name == p.job_name)
            {
                Some(s) => s.phases.push(p),
                None => steps.push(Steps {
                    name,
                    colour: svg::colour(if runs.len() > 1 { r.colour } else { steps.len() }),
                    phases: vec![p],
                }),
            }
        }
    }
    steps.retain(|s| s.phases.len() >= 2);
    if steps.is_empty() {
        return Ok(Vec::new());
    }
    let requested = |p: &PhaseResult| p.rate.as_ref().map_or(0.0, |r| r.requested_ops_per_sec);
    let achieved = |p: &PhaseResult| p.rate.as_ref().map_or(0.0, |r| r.achieved_ops_per_sec);
    let top = steps
        .iter()
        .flat_map(|s| s.phases.iter().map(|p| requested(p).max(achieved(p))))
        .fold(0.0, f64::max);
    let mut thr = LineChart::new(
        "rate steps: achieved vs requested ops/s",
        svg::rate_axis("requested ops/s", [top]),
        svg::rate_axis("achieved ops/s", [top]),
        HALF,
    );
    let mut resp = LineChart::new(
        "rate steps: response time vs achieved ops/s",
        svg::rate_axis("achieved ops/s", [top]),
        Axis::log10("response time (log scale)", Ticks::Latency),
        HALF,
    );
    thr.series
        .push(Series::line("achieved = requested", svg::REFERENCE, vec![(0.0, 0.0), (top, top)]).dashed());
    for s in &steps {
        let mut ps = s.phases.clone();
        ps.sort_by(|a, b| requested(a).total_cmp(&requested(b)));
        let curve: Vec<(f64, f64)> = ps.iter().map(|p| (requested(p), achieved(p))).collect();
        thr.series
            .push(Series::line(s.name.clone(), s.colour, curve).with_marker(svg::Marker::Circle));
        let timed: Vec<&&PhaseResult> = ps.iter().filter(|p| p.latency.count > 0).collect();
        let mean: Vec<(f64, f64)> = timed.iter().map(|p| (achieved(p), p.latency.mean_ns)).collect();
        let p99: Vec<(f64, f64)> = timed.iter().map(|p| (achieved(p), p.latency.p99_ns as f64)).collect();
        resp.series
            .push(Series::line(format!("{} mean", s.name), s.colour, mean).with_marker(svg::Marker::Circle));
        resp.series.push(
            Series::line(format!("{} p99", s.name), s.colour, p99)
                .with_marker(svg::Marker::Triangle)
                .dashed(),
        );
    }
    let mut out = vec![Figure {
        kind: "rate-steps-throughput",
        title: thr.title.clone(),
        svg: svg::line_chart(&thr)?,
        wide: false,
        note: Some("A point per rate step; below the dashed line the target could not keep up.".into()),
    }];
    if resp.has_data() {
        out.push(Figure {
            kind: "rate-steps-response",
            title: resp.title.clone(),
            svg: svg::line_chart(&resp)?,
            wide: false,
            note: Some(
                "Response time from each operation's intended start, so a backlog shows as latency \
                 (no coordinated omission)."
                    .into(),
            ),
        });
    }
    Ok(out)
}
