//! The marks every view puts on a phase: what was done about the client's page cache before a
//! read phase, reads that may have come from that cache, and figures too weak to trust.

use dfsbench_result::{PhaseResult, RunResult};

use crate::runs;

/// Mark of a read phase that may have been served from the client's cache.
pub const SUSPECT_MARK: &str = "[cache?]";
/// Mark of a phase whose figures are weak (too short, too few operations, short stonewall).
pub(crate) const WEAK_MARK: &str = "[weak]";

/// The marks of a phase, each with a leading space; empty for a clean phase.
pub(crate) fn marks(p: &PhaseResult) -> String {
    let mut out = String::new();
    if !p.cache_suspect.is_empty() {
        out += " ";
        out += SUSPECT_MARK;
    }
    if !p.validity.is_empty() {
        out += " ";
        out += WEAK_MARK;
    }
    out
}

/// The page cache policy of a read phase for people; `-` for phases that read nothing.
pub(crate) fn cache(p: &PhaseResult) -> String {
    p.cache.as_ref().map_or("-".into(), |c| c.describe())
}

/// Every reason a phase is marked, in one line; empty for a clean phase.
pub(crate) fn reasons(p: &PhaseResult) -> String {
    let mut all: Vec<String> = p.cache_suspect.clone();
    if !p.validity.is_empty() {
        all.push(format!("weak: {}", p.validity.join(", ")));
    }
    all.join("; ")
}

/// Lines under a run's table: each read phase's cache policy, each suspect read, the weak
/// phases grouped by the rule they break, so a run of many small phases stays readable
/// (`[weak] shorter than 1 s: stat (0.010 s), open (0.014 s)`), phases whose stonewall and
/// phase rates differ by more than 10% (`[stonewall]`), and errors by kind with their first
/// samples (`[errors]`).
pub fn notes(result: &RunResult) -> String {
    let mut out = String::new();
    let mut weak: Vec<(String, Vec<String>)> = Vec::new();
    for p in result.phases.iter().filter(|p| !p.prepare) {
        if p.cache.is_some() {
            out += &format!("page cache before {}: {}\n", runs::label(p), cache(p));
        }
        for s in &p.cache_suspect {
            out += &format!("{SUSPECT_MARK} {}: {s}\n", runs::label(p));
        }
        for reason in &p.validity {
            let (rule, detail) = split_reason(reason);
            let item = match detail {
                Some(d) => format!("{} ({d})", runs::label(p)),
                None => runs::label(p),
            };
            match weak.iter_mut().find(|(r, _)| *r == rule) {
                Some((_, items)) => items.push(item),
                None => weak.push((rule, vec![item])),
            }
        }
    }
    for (rule, items) in weak {
        out += &format!("{WEAK_MARK} {rule}: {}\n", items.join(", "));
    }
    for p in result.phases.iter().filter(|p| !p.prepare) {
        if let Some(n) = crate::stonewall::explain(p, &runs::label(p)) {
            out += &format!("[stonewall] {n}\n");
        }
        for line in crate::errors::lines(p, &runs::label(p)) {
            out += &format!("[errors] {line}\n");
        }
    }
    out
}

/// A validity reason as its rule and this phase's figure: `shorter than 1 s (0.010 s)` is
/// (`shorter than 1 s`, `0.010 s`); the stonewall rule carries two figures.
fn split_reason(reason: &str) -> (String, Option<String>) {
    if let Some(rest) = reason.strip_prefix("stonewall window ") {
        if let Some((window, phase)) = rest.split_once(" is under half of the phase ") {
            let phase = phase.trim_start_matches('(').trim_end_matches(')');
            return (
                "stonewall window under half of the phase".into(),
                Some(format!("{window} of {phase}")),
            );
        }
    }
    match reason.rsplit_once(" (") {
        Some((rule, figure)) if figure.ends_with(')') && figure.starts_with(|c: char| c.is_ascii_digit()) => {
            (rule.to_string(), Some(figure[..figure.len() - 1].to_string()))
        }
        _ => (reason.to_string(), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_list_stonewall_gaps_and_errors_with_samples() {
        let mut r = crate::synthetic::long_run(30, 8);
        let p = &mut r.phases[0];
        p.stonewall.ops_per_sec = p.ops_per_sec * 1.5;
        let label = p.label.clone();
        let text = notes(&r);
        assert!(text.contains(&format!("[stonewall] {label}: stonewall")), "{text}");
        let failed = r
            .phases
            .iter()
            .find(|p| !p.prepare && p.errors.total > 0)
            .expect("a phase with errors");
        let (label, kinds) = (failed.label.clone(), failed.errors.by_kind.clone());
        assert!(!kinds.is_empty());
        for (kind, n) in kinds {
            assert!(
                text.contains(&format!("[errors] errors in {label}: {n} {kind}")),
                "{text}"
            );
        }
        assert!(
            text.lines()
                .any(|l| l.starts_with("[errors]   ") && l.contains("worker")),
            "{text}"
        );
    }

    #[test]
    fn reasons_split_into_rule_and_figure() {
        let cases = [
            ("shorter than 1 s (0.010 s)", "shorter than 1 s", Some("0.010 s")),
            (
                "fewer than 1000 operations (4)",
                "fewer than 1000 operations",
                Some("4"),
            ),
            (
                "stonewall window 0.005 s is under half of the phase (0.010 s)",
                "stonewall window under half of the phase",
                Some("0.005 s of 0.010 s"),
            ),
            ("something else", "something else", None),
            (
                "check the server (Ceph RGW: tcp_nodelay=1)",
                "check the server (Ceph RGW: tcp_nodelay=1)",
                None,
            ),
        ];
        for (reason, rule, figure) in cases {
            assert_eq!(
                split_reason(reason),
                (rule.to_string(), figure.map(String::from)),
                "{reason}"
            );
        }
    }
}
