//! Two runs side by side: every metric of every phase they share (matched by job name and
//! label), the change in percent, and whether the change is larger than the runs' own noise
//! (see [`crate::noise`]).

use std::fmt::Write as _;

use dfsbench_result::PhaseResult;
use serde_json::{json, Value};

use crate::fmt;
use crate::html::shell_words;
use crate::noise;
use crate::runs::{self, Run};
use crate::table::{left, right, Table};

#[derive(Clone, Copy, PartialEq, Debug)]
pub(crate) enum Unit {
    Rate,
    MibS,
    Latency,
    Count,
}

/// One metric of one phase in both runs.
pub(crate) struct Metric {
    pub(crate) name: &'static str,
    pub(crate) unit: Unit,
    pub(crate) a: f64,
    pub(crate) b: f64,
    /// Higher is better (throughput) or lower is better (latency, errors).
    pub(crate) higher_is_better: bool,
}

impl Metric {
    /// (B - A) / A in percent; None when A is 0.
    pub(crate) fn change_pct(&self) -> Option<f64> {
        if self.a == 0.0 {
            (self.b == 0.0).then_some(0.0)
        } else {
            Some((self.b - self.a) / self.a * 100.0)
        }
    }

    fn show(&self, v: f64) -> String {
        match self.unit {
            Unit::Rate => fmt::rate(v),
            Unit::MibS => fmt::mib_s(v * fmt::MIB),
            Unit::Latency => fmt::latency(v),
            Unit::Count => format!("{v:.0}"),
        }
    }
}

/// A verdict on one metric's change.
#[derive(Clone, Copy, PartialEq, Debug)]
pub(crate) enum Verdict {
    /// Smaller than the noise of the runs.
    WithinNoise,
    Better,
    Worse,
    Same,
    /// No noise estimate (phase too short): the change is shown without a verdict.
    Unknown,
}

impl Verdict {
    /// For JSON.
    pub(crate) fn key(self) -> &'static str {
        match self {
            Verdict::WithinNoise => "within_noise",
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::Same => "same",
            Verdict::Unknown => "unknown",
        }
    }

    pub(crate) fn text(self) -> &'static str {
        match self {
            Verdict::WithinNoise => "~ within noise",
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::Same => "same",
            Verdict::Unknown => "",
        }
    }
}

/// A phase both runs have.
pub(crate) struct PhaseComparison {
    pub(crate) title: String,
    pub(crate) job_name: String,
    pub(crate) label: String,
    /// Per-second noise (coefficient of variation of ops) of each run's phase.
    pub(crate) noise_a: Option<f64>,
    pub(crate) noise_b: Option<f64>,
    pub(crate) metrics: Vec<Metric>,
}

impl PhaseComparison {
    /// The noise the changes are judged against: the larger of the two runs'.
    pub(crate) fn noise(&self) -> Option<f64> {
        Some(self.noise_a?.max(self.noise_b?))
    }

    pub(crate) fn verdict(&self, m: &Metric) -> Verdict {
        let Some(change) = m.change_pct() else {
            return if m.unit == Unit::Count && m.b > m.a {
                Verdict::Worse
            } else {
                Verdict::Unknown
            };
        };
        if m.a == m.b {
            return Verdict::Same;
        }
        let direction = if (change > 0.0) == m.higher_is_better {
            Verdict::Better
        } else {
            Verdict::Worse
        };
        if m.unit == Unit::Count {
            return direction;
        }
        match self.noise() {
            Some(n) if change.abs() < n * 100.0 => Verdict::WithinNoise,
            Some(_) => direction,
            None => Verdict::Unknown,
        }
    }
}

pub struct Comparison<'a> {
    pub(crate) a: &'a Run<'a>,
    pub(crate) b: &'a Run<'a>,
    pub(crate) phases: Vec<PhaseComparison>,
    pub(crate) only_a: Vec<String>,
    pub(crate) only_b: Vec<String>,
}

fn metrics(a: &PhaseResult, b: &PhaseResult) -> Vec<Metric> {
    let m = |name, unit, a: f64, b: f64, higher_is_better| Metric {
        name,
        unit,
        a,
        b,
        higher_is_better,
    };
    let mut v = vec![m("ops/s", Unit::Rate, a.ops_per_sec, b.ops_per_sec, true)];
    if runs::moves_data(a) || runs::moves_data(b) {
        v.push(m(
            "MiB/s",
            Unit::MibS,
            a.bytes_per_sec / fmt::MIB,
            b.bytes_per_sec / fmt::MIB,
            true,
        ));
    }
    if a.latency.count > 0 && b.latency.count > 0 {
        let (x, y) = (&a.latency, &b.latency);
        v.push(m("p50", Unit::Latency, x.p50_ns as f64, y.p50_ns as f64, false));
        v.push(m("p99", Unit::Latency, x.p99_ns as f64, y.p99_ns as f64, false));
        v.push(m("p99.9", Unit::Latency, x.p99_9_ns as f64, y.p99_9_ns as f64, false));
        v.push(m("max", Unit::Latency, x.max_ns as f64, y.max_ns as f64, false));
    }
    v.push(m(
        "errors",
        Unit::Count,
        a.errors.total as f64,
        b.errors.total as f64,
        false,
    ));
    v
}

pub fn compare<'a>(a: &'a Run<'a>, b: &'a Run<'a>) -> Comparison<'a> {
    let (keys_a, amb_a) = runs::phase_keys(std::slice::from_ref(a));
    let (keys_b, amb_b) = runs::phase_keys(std::slice::from_ref(b));
    let ambiguous = amb_a || amb_b;
    let mut phases = Vec::new();
    let mut only_a = Vec::new();
    for k in &keys_a {
        let pa = runs::find(a, k).expect("a key of a");
        match runs::find(b, k) {
            Some(pb) => phases.push(PhaseComparison {
                title: runs::phase_title(k, ambiguous),
                job_name: k.0.clone(),
                label: k.1.clone(),
                noise_a: noise::ops_cv(pa),
                noise_b: noise::ops_cv(pb),
                metrics: metrics(pa, pb),
            }),
            None => only_a.push(runs::phase_title(k, ambiguous)),
        }
    }
    let only_b = keys_b
        .iter()
        .filter(|k| !keys_a.contains(k))
        .map(|k| runs::phase_title(k, ambiguous))
        .collect();
    Comparison {
        a,
        b,
        phases,
        only_a,
        only_b,
    }
}

/// The metrics a `--threshold` gate judges: throughput, the body of the latency distribution and
/// errors. p99.9 and max rest on a handful of operations and move by more than the per-second
/// noise says, so they are shown but do not fail a pipeline.
pub(crate) const GATED: [&str; 5] = ["ops/s", "MiB/s", "p50", "p99", "errors"];

/// One metric of one phase that got worse beyond a threshold.
pub struct Regression {
    pub(crate) phase: String,
    pub(crate) metric: &'static str,
    /// (B - A) / A in percent; None when A was 0 (errors where there were none).
    pub(crate) change_pct: Option<f64>,
    /// False when the phase had no noise estimate: the threshold alone judged it.
    pub(crate) noise_known: bool,
}

impl Regression {
    pub fn describe(&self) -> String {
        let change = self.change_pct.map_or("from 0".into(), fmt::change);
        let noise = if self.noise_known { "" } else { ", no noise estimate" };
        format!("{} {} {change}{noise}", self.phase, self.metric)
    }
}

/// The gated metrics ([`GATED`]) that got worse by more than `threshold_pct` percent and,
/// where the phases have a noise estimate, beyond the noise (verdict `worse`).
pub fn regressions(c: &Comparison, threshold_pct: f64) -> Vec<Regression> {
    let mut out = Vec::new();
    for p in &c.phases {
        for m in p.metrics.iter().filter(|m| GATED.contains(&m.name)) {
            let verdict = p.verdict(m);
            let worse = match (verdict, m.change_pct()) {
                (Verdict::Worse, Some(pct)) => pct.abs() > threshold_pct,
                // Errors where there were none.
                (Verdict::Worse, None) => true,
                // No noise estimate: the threshold alone decides.
                (Verdict::Unknown, Some(pct)) => (pct > 0.0) != m.higher_is_better && pct.abs() > threshold_pct,
                _ => false,
            };
            if worse {
                out.push(Regression {
                    phase: p.title.clone(),
                    metric: m.name,
                    change_pct: m.change_pct(),
                    noise_known: p.noise().is_some(),
                });
            }
        }
    }
    out
}

fn run_line(tag: &str, r: &Run) -> String {
    let res = r.result;
    format!(
        "{tag}: {}  run {}  {}  {} ({} CPUs)  dfsbench {}  {}  {}",
        r.label,
        res.run_id,
        r.system,
        res.host.hostname,
        res.host.cpus,
        res.tool.version,
        res.started_at,
        shell_words(&res.command_line)
    )
}

fn noise_cell(n: Option<f64>) -> String {
    n.map_or("-".into(), |v| format!("±{:.1}%", v * 100.0))
}

/// The comparison table: a row per phase and metric, the verdict last.
fn table(c: &Comparison) -> Table {
    let mut t = Table::new(vec![
        left("phase"),
        left("metric"),
        right("A"),
        right("B"),
        right("change"),
        right("noise"),
        left(""),
    ]);
    for p in &c.phases {
        for (i, m) in p.metrics.iter().enumerate() {
            let change = match m.change_pct() {
                Some(pct) => fmt::change(pct),
                None => "new".into(),
            };
            t.push(vec![
                if i == 0 { p.title.clone() } else { String::new() },
                m.name.to_string(),
                m.show(m.a),
                m.show(m.b),
                change,
                if i == 0 { noise_cell(p.noise()) } else { String::new() },
                p.verdict(m).text().to_string(),
            ]);
        }
    }
    t
}

fn notes(c: &Comparison) -> Vec<String> {
    let mut n = Vec::new();
    if c.a.result.config_hash != c.b.result.config_hash {
        n.push("the runs ran different workloads (their config hashes differ)".to_string());
    }
    if !c.only_a.is_empty() {
        n.push(format!("only in A: {}", c.only_a.join(", ")));
    }
    if !c.only_b.is_empty() {
        n.push(format!("only in B: {}", c.only_b.join(", ")));
    }
    if c.phases.is_empty() {
        n.push("the runs have no phase in common (phases match by job name and label)".to_string());
    }
    if c.phases.iter().any(|p| p.noise().is_none()) {
        n.push(format!(
            "phases with noise '-' had fewer than {} full seconds in a run: no verdict; run with --duration to get one",
            noise::MIN_INTERVALS
        ));
    }
    n.push(format!(
        "change = (B - A) / A; {}; applied to rates and latencies, errors are compared as counts",
        noise::RULE
    ));
    n
}

/// The comparison as an aligned text table.
pub fn text(c: &Comparison) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", run_line("A", c.a));
    let _ = writeln!(out, "{}\n", run_line("B", c.b));
    out.push_str(&table(c).text());
    out.push('\n');
    for n in notes(c) {
        let _ = writeln!(out, "note: {n}");
    }
    out
}

/// The comparison as Markdown.
pub fn markdown(c: &Comparison) -> String {
    let mut out = String::from("# dfsbench compare\n\n");
    let _ = writeln!(out, "- {}", run_line("A", c.a).replace('|', "\\|"));
    let _ = writeln!(out, "- {}\n", run_line("B", c.b).replace('|', "\\|"));
    out.push_str(&table(c).markdown());
    for n in notes(c) {
        let _ = writeln!(out, "- {n}");
    }
    out
}

/// The comparison as JSON.
pub fn json(c: &Comparison) -> Value {
    let run = |r: &Run| {
        json!({"label": r.label, "file": r.path.display().to_string(), "run_id": r.result.run_id,
               "system": r.system, "started_at": r.result.started_at, "config_hash": r.result.config_hash})
    };
    let phases: Vec<Value> = c
        .phases
        .iter()
        .map(|p| {
            let metrics: Vec<Value> = p
                .metrics
                .iter()
                .map(|m| {
                    json!({"metric": m.name, "a": m.a, "b": m.b, "change_pct": m.change_pct(),
                           "verdict": p.verdict(m).key()})
                })
                .collect();
            json!({"job_name": p.job_name, "label": p.label, "noise_a": p.noise_a, "noise_b": p.noise_b,
                   "metrics": metrics})
        })
        .collect();
    json!({"schema": "dfsbench.compare/1", "a": run(c.a), "b": run(c.b), "phases": phases,
           "only_in_a": c.only_a, "only_in_b": c.only_b, "notes": notes(c), "noise_rule": noise::RULE,
           "units": {"ops/s": "operations per second", "MiB/s": "MiB per second", "latency": "ns"}})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::Loaded;
    use crate::synthetic::long_run;

    #[test]
    fn verdicts_follow_the_noise_rule() {
        let a = long_run(30, 8);
        let mut b = a.clone();
        let cv = noise::ops_cv(&a.phases[0]).unwrap();
        b.phases[0].ops_per_sec *= 1.0 + cv / 2.0; // within the noise
        b.phases[0].bytes_per_sec *= 1.0 - cv * 2.0; // beyond it, worse
        b.phases[0].latency.p99_ns /= 2; // beyond it, better (lower)
        b.phases[0].errors.total += 1;
        let loaded = [
            Loaded {
                path: "a.json".into(),
                result: a,
            },
            Loaded {
                path: "b.json".into(),
                result: b,
            },
        ];
        let runs = runs::runs(&loaded);
        let c = compare(&runs[0], &runs[1]);
        assert_eq!(c.phases.len(), 4, "measured phases only (no layout)");
        let p = &c.phases[0];
        let v = |name: &str| p.verdict(p.metrics.iter().find(|m| m.name == name).unwrap());
        assert_eq!(v("ops/s"), Verdict::WithinNoise);
        assert_eq!(v("MiB/s"), Verdict::Worse);
        assert_eq!(v("p99"), Verdict::Better);
        assert_eq!(v("p50"), Verdict::Same);
        assert_eq!(v("errors"), Verdict::Worse);
        let t = text(&c);
        assert!(
            t.contains("~ within noise") && t.contains("coefficient of variation"),
            "{t}"
        );
        // The gate: MiB/s fell by 2x the noise and errors rose by one; ops/s rose within the
        // noise and p99 got better, so neither counts.
        let drop = cv * 200.0;
        let more_errors = 100.0 / c.a.result.phases[0].errors.total as f64;
        let names = |t: f64| -> Vec<&str> { regressions(&c, t).iter().map(|r| r.metric).collect() };
        assert_eq!(names(drop.min(more_errors) / 2.0), ["MiB/s", "errors"]);
        assert_eq!(
            names(drop.max(more_errors) * 2.0),
            Vec::<&str>::new(),
            "beyond the threshold only"
        );
        assert!(regressions(&c, 0.0)[0].describe().starts_with("write 1 MiB MiB/s -"));
    }
}
