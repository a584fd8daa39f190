//! Errors of a phase for people: a count per kind, then the first few samples in full (time,
//! worker, operation, path, offset and the message as the storage gave it).

use dfsbench_result::{ErrorSample, PhaseResult};

/// How many samples per kind the reports show in full.
pub(crate) const SHOWN: usize = 3;

/// The first [`SHOWN`] samples of an error kind.
pub(crate) fn first<'a>(p: &'a PhaseResult, kind: &str) -> Vec<&'a ErrorSample> {
    p.errors.samples.iter().filter(|s| s.kind == kind).take(SHOWN).collect()
}

/// One sample in full: `1.25 s, worker 3, read /f/3 @ 4096: No such file (os error 2)`.
pub(crate) fn sample(s: &ErrorSample) -> String {
    let offset = s.offset.map(|o| format!(" @ {o}")).unwrap_or_default();
    let path = if s.path.is_empty() {
        String::new()
    } else {
        format!(" {}", s.path)
    };
    format!(
        "{:.3} s, worker {}, {}{path}{offset}: {}",
        s.time_s, s.worker, s.op, s.message
    )
}

/// Text lines: a line per kind with its count, each followed by its first samples.
pub(crate) fn lines(p: &PhaseResult, label: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (kind, n) in &p.errors.by_kind {
        out.push(format!("errors in {label}: {n} {kind}"));
        out.extend(first(p, kind).into_iter().map(|s| format!("  {}", sample(s))));
    }
    out
}
