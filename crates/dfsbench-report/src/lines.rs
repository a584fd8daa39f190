//! The lines a phase puts in a table: the phase itself and, for a mixed phase (randrw,
//! readwrite, mix, iterate), one per operation kind, each with its own rates and latency.

use dfsbench_result::{Latency, PhaseResult};

use crate::runs;

/// The figures of one line.
pub(crate) struct Line<'a> {
    /// `None` for the phase's own line, the operation (`read`, `write`) for a kind's.
    pub op: Option<&'a str>,
    pub ops: u64,
    pub ops_per_sec: f64,
    /// None when the line moves no data (MiB/s means nothing there).
    pub bytes_per_sec: Option<f64>,
    pub latency: &'a Latency,
}

/// The phase's line, then a line per operation kind when it mixed several.
pub(crate) fn lines(p: &PhaseResult) -> Vec<Line<'_>> {
    let mut out = vec![Line {
        op: None,
        ops: p.ops,
        ops_per_sec: p.ops_per_sec,
        bytes_per_sec: runs::moves_data(p).then_some(p.bytes_per_sec),
        latency: &p.latency,
    }];
    out.extend(p.ops_by_kind.iter().map(|k| Line {
        op: Some(k.op.as_str()),
        ops: k.ops,
        ops_per_sec: k.ops_per_sec,
        bytes_per_sec: (runs::moves_data(p) || k.bytes > 0).then_some(k.bytes_per_sec),
        latency: &k.latency,
    }));
    out
}

/// Latency `v` of a line for tables; `dash` when the line has no successful operation.
pub(crate) fn lat(l: &Latency, v: u64, dash: &str) -> String {
    if l.count == 0 {
        dash.into()
    } else {
        crate::fmt::latency(v as f64)
    }
}
