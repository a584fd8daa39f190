//! Comparison charts in the shape of the published evaluations, chosen from what the results
//! contain: throughput and speedup vs workers (a line per system), throughput vs file size
//! (files workload) and vs block size with a line per worker count (io workload).
//!
//! A line is a *system* (where the runs ran); when the same system has the same point twice
//! (a repeated run), the repeat becomes its own line, `mem:// (repeat 2)`, rather than being
//! averaged away.

use std::collections::{BTreeMap, BTreeSet};

use dfsbench_result::PhaseResult;
use plotters::style::RGBColor;

use crate::figures::{Figure, Result};
use crate::fmt;
use crate::runs::{self, Run};
use crate::svg::{self, Axis, LineChart, Series, Ticks, HALF};

/// One measured phase of one run.
struct Point<'a> {
    system: usize,
    p: &'a PhaseResult,
}

fn param(p: &PhaseResult, name: &str) -> Option<u64> {
    p.params.get(name).and_then(|v| v.as_u64())
}

/// Systems in order of first appearance with their colours: the run's colour when each
/// system has one run (so a system looks the same in every chart), else one per system.
fn systems<'r>(runs: &'r [Run]) -> Vec<(&'r str, RGBColor)> {
    let mut out: Vec<(&str, RGBColor)> = Vec::new();
    for r in runs {
        if !out.iter().any(|s| s.0 == r.system) {
            out.push((&r.system, svg::colour(r.colour)));
        }
    }
    if out.len() < runs.len() {
        for (i, s) in out.iter_mut().enumerate() {
            s.1 = svg::colour(i);
        }
    }
    out
}

fn points<'r>(runs: &'r [Run], systems: &[(&str, RGBColor)]) -> Vec<Point<'r>> {
    let mut out = Vec::new();
    for r in runs {
        let system = systems.iter().position(|s| s.0 == r.system).unwrap_or(0);
        for p in r.phases() {
            out.push(Point { system, p });
        }
    }
    out
}

/// Lines of (x, y) points keyed by name; a point whose x the line already has starts or joins
/// a `(repeat k)` line.
/// A line: its name, style index and points.
type Line = (String, usize, Vec<(f64, f64)>);

#[derive(Default)]
struct Lines {
    lines: Vec<Line>,
}

impl Lines {
    fn add(&mut self, name: &str, style: usize, x: f64, y: f64) {
        for k in 1.. {
            let n = if k == 1 {
                name.to_string()
            } else {
                format!("{name} (repeat {k})")
            };
            match self.lines.iter_mut().find(|l| l.0 == n) {
                Some(l) if l.2.iter().any(|p| p.0 == x) => continue,
                Some(l) => {
                    l.2.push((x, y));
                    return;
                }
                None => {
                    self.lines.push((n, style, vec![(x, y)]));
                    return;
                }
            }
        }
    }

    fn sorted(mut self) -> Vec<Line> {
        for l in &mut self.lines {
            l.2.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
        self.lines
    }
}

/// An x axis over counts or sizes: log2 when they span a factor of 4 or more.
fn count_axis(label: &str, xs: &BTreeSet<u64>, ticks: Ticks) -> Axis {
    let lo = *xs.first().unwrap_or(&1) as f64;
    let hi = *xs.last().unwrap_or(&1) as f64;
    if lo > 0.0 && hi / lo >= 4.0 {
        Axis::log2(format!("{label} (log scale)"), ticks)
    } else {
        Axis::linear(label, ticks).not_from_zero()
    }
}

fn rate(p: &PhaseResult) -> (f64, &'static str) {
    if runs::moves_data(p) && p.bytes > 0 {
        (p.bytes_per_sec / fmt::MIB, "MiB/s")
    } else {
        (p.ops_per_sec, "ops/s")
    }
}

/// Throughput and speedup vs workers, per phase label, a line per system.
fn vs_workers(pts: &[Point], systems: &[(&str, RGBColor)]) -> Result<Vec<Figure>> {
    let mut groups: BTreeMap<(String, String), Vec<&Point>> = BTreeMap::new();
    let mut order: Vec<(String, String)> = Vec::new();
    for pt in pts {
        let key = (pt.p.workload.clone(), runs::label(pt.p));
        if !groups.contains_key(&key) {
            order.push(key.clone());
        }
        groups.entry(key).or_default().push(pt);
    }
    let mut out = Vec::new();
    for key in order {
        let g = &groups[&key];
        let xs: BTreeSet<u64> = g.iter().map(|pt| pt.p.workers as u64).collect();
        if xs.len() < 2 {
            continue;
        }
        let unit = rate(g[0].p).1;
        let mut lines = Lines::default();
        for pt in g {
            let (y, _) = rate(pt.p);
            lines.add(systems[pt.system].0, pt.system, pt.p.workers as f64, y);
        }
        let lines = lines.sorted();
        if !lines.iter().any(|l| l.2.len() >= 2) {
            continue;
        }
        let x = count_axis("workers", &xs, Ticks::Integer);
        let mut thr = LineChart::new(
            format!("{}: {unit} vs workers", key.1),
            x.clone(),
            svg::rate_axis(unit, lines.iter().flat_map(|l| l.2.iter().map(|p| p.1))),
            HALF,
        );
        let mut speed = LineChart::new(
            format!("{}: speedup vs workers", key.1),
            x,
            Axis::linear("speedup over the fewest workers (×)", Ticks::Plain),
            HALF,
        );
        for (name, sys, pts) in &lines {
            let colour = systems[*sys].1;
            thr.series
                .push(Series::line(name.clone(), colour, pts.clone()).with_marker(svg::Marker::Circle));
            if pts.len() >= 2 && pts[0].1 > 0.0 {
                let base = pts[0];
                let sp: Vec<(f64, f64)> = pts.iter().map(|p| (p.0, p.1 / base.1)).collect();
                speed
                    .series
                    .push(Series::line(name.clone(), colour, sp).with_marker(svg::Marker::Circle));
            }
        }
        let lo = *xs.first().unwrap_or(&1) as f64;
        let ideal: Vec<(f64, f64)> = xs.iter().map(|&w| (w as f64, w as f64 / lo)).collect();
        speed
            .series
            .push(Series::line("ideal (linear)", svg::REFERENCE, ideal).dashed());
        out.push(Figure {
            kind: "sweep-workers",
            title: thr.title.clone(),
            svg: svg::line_chart(&thr)?,
            wide: false,
            note: None,
        });
        out.push(Figure {
            kind: "sweep-speedup",
            title: speed.title.clone(),
            svg: svg::line_chart(&speed)?,
            wide: false,
            note: Some("Throughput divided by that of the fewest workers on the same line.".into()),
        });
    }
    Ok(out)
}

/// Throughput vs file size (files workload): MiB/s of writes and reads, ops/s of every
/// operation; colour is the system (or the operation, with one system), the marker the
/// operation.
fn vs_file_size(pts: &[Point], systems: &[(&str, RGBColor)]) -> Result<Vec<Figure>> {
    let files: Vec<&Point> = pts
        .iter()
        .filter(|pt| pt.p.workload == "files" && param(pt.p, "file_size").is_some_and(|s| s > 0))
        .collect();
    let sizes: BTreeSet<u64> = files.iter().filter_map(|pt| param(pt.p, "file_size")).collect();
    if sizes.len() < 2 {
        return Ok(Vec::new());
    }
    let workers: BTreeSet<usize> = files.iter().map(|pt| pt.p.workers).collect();
    let syss: BTreeSet<usize> = files.iter().map(|pt| pt.system).collect();
    let ops = ["write", "read", "delete"];
    let mut out = Vec::new();
    for (kind, unit, which) in [
        ("sweep-file-size-mib", "MiB/s", &ops[..2]),
        ("sweep-file-size-ops", "ops/s", &ops[..]),
    ] {
        let mut lines = Lines::default();
        let mut styles: Vec<(RGBColor, usize)> = Vec::new();
        for pt in &files {
            let Some(op) = which.iter().position(|o| *o == pt.p.name) else {
                continue;
            };
            let mut name = if syss.len() > 1 {
                format!("{} {}", systems[pt.system].0, pt.p.name)
            } else {
                pt.p.name.clone()
            };
            if workers.len() > 1 {
                name = format!(
                    "{name}, {} worker{}",
                    pt.p.workers,
                    if pt.p.workers == 1 { "" } else { "s" }
                );
            }
            let colour = if syss.len() > 1 {
                systems[pt.system].1
            } else if workers.len() > 1 {
                svg::colour(workers.iter().position(|w| *w == pt.p.workers).unwrap_or(0) * 3 + op)
            } else {
                svg::colour(op)
            };
            let style = styles.iter().position(|s| *s == (colour, op)).unwrap_or_else(|| {
                styles.push((colour, op));
                styles.len() - 1
            });
            let y = if unit == "MiB/s" {
                pt.p.bytes_per_sec / fmt::MIB
            } else {
                pt.p.ops_per_sec
            };
            lines.add(&name, style, param(pt.p, "file_size").unwrap_or(0) as f64, y);
        }
        let lines = lines.sorted();
        if lines.is_empty() {
            continue;
        }
        let mut chart = LineChart::new(
            format!("files: {unit} vs file size"),
            count_axis("file size", &sizes, Ticks::Bytes),
            svg::rate_axis(unit, lines.iter().flat_map(|l| l.2.iter().map(|p| p.1))),
            HALF,
        );
        for (name, style, p) in lines {
            let (colour, op) = styles[style];
            let mut s = Series::line(name, colour, p).with_marker(svg::marker(op));
            s.dashed = op == 1 && syss.len() > 1;
            chart.series.push(s);
        }
        out.push(Figure {
            kind,
            title: chart.title.clone(),
            svg: svg::line_chart(&chart)?,
            wide: false,
            note: Some("0-byte files are not on this chart (a log axis has no 0); see the tables.".into()),
        });
    }
    Ok(out)
}

/// Throughput vs block size (io workload), a chart per system and pattern, a line per worker
/// count: the block size x threads matrix of the seeds.
fn vs_block_size(pts: &[Point], systems: &[(&str, RGBColor)]) -> Result<Vec<Figure>> {
    let mut groups: BTreeMap<(usize, String, u64), Vec<&Point>> = BTreeMap::new();
    for pt in pts.iter().filter(|pt| pt.p.workload == "io") {
        let qd = runs::queue_depth(pt.p).unwrap_or(1);
        groups.entry((pt.system, pt.p.name.clone(), qd)).or_default().push(pt);
    }
    let mut out = Vec::new();
    for ((sys, op, qd), g) in groups {
        let bss: BTreeSet<u64> = g.iter().filter_map(|pt| param(pt.p, "bs")).collect();
        if bss.len() < 2 {
            continue;
        }
        let workers: BTreeSet<usize> = g.iter().map(|pt| pt.p.workers).collect();
        let where_ = if systems.len() > 1 {
            format!(" on {}", systems[sys].0)
        } else {
            String::new()
        };
        for (kind, unit) in [("sweep-block-size-mib", "MiB/s"), ("sweep-block-size-ops", "ops/s")] {
            let mut lines = Lines::default();
            for pt in &g {
                let Some(bs) = param(pt.p, "bs") else { continue };
                let w = workers.iter().position(|w| *w == pt.p.workers).unwrap_or(0);
                let y = if unit == "MiB/s" {
                    pt.p.bytes_per_sec / fmt::MIB
                } else {
                    pt.p.ops_per_sec
                };
                let name = format!("{} worker{}", pt.p.workers, if pt.p.workers == 1 { "" } else { "s" });
                lines.add(&name, w, bs as f64, y);
            }
            let lines = lines.sorted();
            let mut chart = LineChart::new(
                format!("{op} qd{qd}{where_}: {unit} vs block size"),
                count_axis("block size", &bss, Ticks::Bytes),
                svg::rate_axis(unit, lines.iter().flat_map(|l| l.2.iter().map(|p| p.1))),
                HALF,
            );
            for (name, w, p) in lines {
                chart
                    .series
                    .push(Series::line(name, svg::colour(w), p).with_marker(svg::marker(w)));
            }
            out.push(Figure {
                kind,
                title: chart.title.clone(),
                svg: svg::line_chart(&chart)?,
                wide: false,
                note: None,
            });
        }
    }
    Ok(out)
}

/// Every comparison chart the results support, in the order: workers, file size, block size.
pub(crate) fn figures(runs: &[Run]) -> Result<Vec<Figure>> {
    let systems = systems(runs);
    let pts = points(runs, &systems);
    let mut out = vs_workers(&pts, &systems)?;
    out.extend(vs_file_size(&pts, &systems)?);
    out.extend(vs_block_size(&pts, &systems)?);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::Loaded;
    use crate::synthetic::long_run;

    fn kinds(loaded: &[Loaded]) -> Vec<&'static str> {
        figures(&runs::runs(loaded)).unwrap().iter().map(|f| f.kind).collect()
    }

    #[test]
    fn charts_follow_what_the_results_contain() {
        // One run: nothing varies, no comparison chart.
        let one = [Loaded {
            path: "a.json".into(),
            result: long_run(12, 4),
        }];
        assert!(kinds(&one).is_empty());
        // Worker counts vary: throughput and speedup vs workers, per phase.
        let sweep: Vec<Loaded> = [2, 4, 8]
            .iter()
            .map(|&w| Loaded {
                path: format!("j{w}.json").into(),
                result: long_run(12, w),
            })
            .collect();
        let k = kinds(&sweep);
        assert!(k.contains(&"sweep-workers") && k.contains(&"sweep-speedup"), "{k:?}");
        assert!(!k.contains(&"sweep-file-size-mib"));
        // File sizes vary (files workload): throughput vs file size.
        let mut big = long_run(12, 4);
        for p in big.phases.iter_mut().filter(|p| p.workload == "files") {
            p.params.insert("file_size".into(), (64u64 << 20).into());
            p.label = p.label.replace("1 MiB", "64 MiB");
        }
        let sizes = [
            Loaded {
                path: "small.json".into(),
                result: long_run(12, 4),
            },
            Loaded {
                path: "big.json".into(),
                result: big,
            },
        ];
        let k = kinds(&sizes);
        assert!(
            k.contains(&"sweep-file-size-mib") && k.contains(&"sweep-file-size-ops"),
            "{k:?}"
        );
        // The same point twice (a repeat) becomes its own line, not an average.
        let mut lines = Lines::default();
        lines.add("mem://", 0, 1.0, 10.0);
        lines.add("mem://", 0, 1.0, 12.0);
        lines.add("mem://", 0, 2.0, 20.0);
        let l = lines.sorted();
        assert_eq!(l.len(), 2);
        assert_eq!(l[1].0, "mem:// (repeat 2)");
    }
}
