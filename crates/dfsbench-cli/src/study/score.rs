//! IO500's score from a study's phase table (the geometric mean of the bandwidths in GiB/s and
//! of the metadata rates in kIOPS, then of the two), whether each run kept IO500's rules, and
//! the published IO500 entries of similar client counts to read it beside.

use dfsbench_report::study_page::{CellDoc, RowDoc, TableDoc};

use super::catalog::io500::{MIN_WRITE_S, PHASES, SCORED};
use super::cells::Loaded;
use super::manifest::Manifest;
use super::model::{Metric, Spread, Study};

/// Public IO500 list entries: `\t`-separated, one a line, `#` lines are comments.
const PUBLISHED: &str = include_str!("catalog/io500_list.tsv");

/// The geometric mean; None for no numbers or one that is not above 0 (IO500 has no score
/// then either).
pub fn geo_mean(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() || xs.iter().any(|&x| !(x > 0.0 && x.is_finite())) {
        return None;
    }
    Some((xs.iter().map(|x| x.ln()).sum::<f64>() / xs.len() as f64).exp())
}

/// IO500's score: (bandwidth GiB/s, metadata kIOPS, score).
pub fn io500_score(bw: &[f64], md: &[f64]) -> Option<(f64, f64, f64)> {
    let (b, m) = (geo_mean(bw)?, geo_mean(md)?);
    Some((b, m, (b * m).sqrt()))
}

fn num(value: f64, unit: &str) -> CellDoc {
    CellDoc {
        value: Some(value),
        text: format!("{value:.3}"),
        unit: unit.into(),
        ..Default::default()
    }
}

fn words(text: String) -> CellDoc {
    CellDoc {
        text,
        ..Default::default()
    }
}

/// Whether the run behind a column kept IO500's rule on write time: every write phase
/// measured for at least `MIN_WRITE_S`.
fn validity(loaded: &Loaded, point: &str, system: &str) -> String {
    let Some(Ok((_, r))) = loaded.get(point, system) else {
        return "no: not run".into();
    };
    let writes: Vec<f64> = r
        .phases
        .iter()
        .filter(|p| !p.prepare && p.name.ends_with("-write"))
        .map(|p| p.duration_s)
        .collect();
    match writes.iter().copied().reduce(f64::min) {
        None => "no: no write phase".into(),
        Some(_) if writes.len() < 4 => format!("no: {} of 4 write phases ran", writes.len()),
        Some(s) if s < MIN_WRITE_S => format!("no: a write phase ran {s:.2} s, under IO500's {MIN_WRITE_S} s"),
        Some(_) => "yes".into(),
    }
}

/// The score table of the phase table `t` (rows in `PHASES` order, a column per client
/// configuration, a cell per system), and the published entries to read it beside.
pub(super) fn tables(study: &Study, m: &Manifest, loaded: &Loaded, t: &TableDoc) -> Vec<TableDoc> {
    let points: Vec<&str> = study.tables[0].rows[0].cells.iter().map(|c| c.point.as_str()).collect();
    let mut rows: Vec<RowDoc> = ["bandwidth", "metadata", "score", "valid IO500 run"]
        .iter()
        .zip(["GiB/s", "kIOPS", "", ""])
        .map(|(l, u)| RowDoc {
            labels: vec![l.to_string(), u.to_string()],
            cells: Vec::new(),
        })
        .collect();
    for (c, point) in points.iter().enumerate() {
        let mut cols: [Vec<CellDoc>; 4] = Default::default();
        for (s, sys) in m.systems.iter().enumerate() {
            let (mut bw, mut md, mut missing) = (Vec::new(), Vec::new(), Vec::new());
            let mut first_gap = None;
            for (row, (phase, metric)) in t.rows.iter().zip(PHASES).take(SCORED) {
                let cell = row.cells.get(c).and_then(|col| col.get(s));
                match cell.and_then(|x| x.value) {
                    Some(v) if metric == Metric::GibPerSec => bw.push(v),
                    Some(v) => md.push(v),
                    None => {
                        missing.push(phase);
                        first_gap = first_gap.or(cell.map(|x| x.text.clone()));
                    }
                }
            }
            match io500_score(&bw, &md).filter(|_| missing.is_empty()) {
                Some((b, m, score)) => {
                    cols[0].push(num(b, "GiB/s"));
                    cols[1].push(num(m, "kIOPS"));
                    cols[2].push(num(score, ""));
                }
                None => {
                    // A run without a figure at all says why once; else the phases it lacks.
                    let why = match first_gap {
                        Some(text) if missing.len() == SCORED => text,
                        _ => format!("n/a: no figure for {}", missing.join(", ")),
                    };
                    for col in cols.iter_mut().take(3) {
                        col.push(words(why.clone()));
                    }
                }
            }
            cols[3].push(words(validity(loaded, point, &sys.label)));
        }
        for (row, col) in rows.iter_mut().zip(cols) {
            row.cells.push(col);
        }
    }
    let mut out = vec![TableDoc {
        title: "IO500 score".into(),
        row_header: vec!["figure".into(), "unit".into()],
        columns: t.columns.clone(),
        rows,
    }];
    let nodes = study
        .points
        .iter()
        .map(|p| match p.spread {
            Spread::Nodes { nodes, .. } => nodes,
            _ => 1,
        })
        .max()
        .unwrap_or(1);
    out.extend(published(nodes));
    out
}

/// The published entries with up to `max(10, 2 x nodes)` client nodes, fewest first.
fn published(nodes: usize) -> Option<TableDoc> {
    let limit = (2 * nodes).max(10);
    let mut rows: Vec<(usize, Vec<String>)> = PUBLISHED
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| {
            let f: Vec<String> = l.split('\t').map(str::to_string).collect();
            let n: usize = f.get(3)?.parse().ok()?;
            (f.len() == 9 && n <= limit).then_some((n, f))
        })
        .collect();
    rows.sort_by_key(|r| r.0);
    (!rows.is_empty()).then(|| TableDoc {
        title: format!("Published IO500 entries with up to {limit} client nodes (IO500 submission data)"),
        row_header: [
            "system",
            "storage",
            "IO500 version",
            "client nodes",
            "ranks",
            "score",
            "bw GiB/s",
            "md kIOPS",
            "source",
        ]
        .map(String::from)
        .into(),
        columns: Vec::new(),
        rows: rows
            .into_iter()
            .map(|(_, labels)| RowDoc {
                labels,
                cells: Vec::new(),
            })
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ACC Cyfronet AGH's Helios (IO500 submission 708, ISC24): its 12 phase figures give the
    /// bandwidth, metadata and total its result_summary.txt prints.
    #[test]
    fn the_score_is_io500s() {
        let bw = [352.803032, 5.996531, 464.646333, 227.682852];
        let md = [
            119.113150,
            66.621419,
            2872.215129,
            415.688686,
            305.227639,
            96.720801,
            114.129044,
            58.712616,
        ];
        let (b, m, s) = io500_score(&bw, &md).unwrap();
        assert!((b - 122.312630).abs() < 1e-5, "{b}");
        assert!((m - 192.355126).abs() < 1e-5, "{m}");
        assert!((s - 153.386640).abs() < 1e-5, "{s}");
        assert_eq!(geo_mean(&[2.0, 8.0]), Some(4.0));
        assert_eq!(geo_mean(&[]), None);
        assert_eq!(geo_mean(&[1.0, 0.0]), None);
    }

    /// Every published entry has its nine fields, figures that agree (score = sqrt(bw x md))
    /// and a source.
    #[test]
    fn published_entries_are_whole() {
        let all = published(usize::MAX / 2).unwrap();
        assert!(all.rows.len() >= 5);
        for r in &all.rows {
            let f = |i: usize| r.labels[i].parse::<f64>().unwrap();
            assert!((f(5) - (f(6) * f(7)).sqrt()).abs() < 1e-3 * f(5), "{:?}", r.labels);
            assert!(r.labels[8].starts_with("https://github.com/IO500/submission-data/"));
        }
        assert!(published(1)
            .unwrap()
            .rows
            .iter()
            .all(|r| r.labels[3].parse::<usize>().unwrap() <= 10));
    }
}
