//! The marks every view puts on a phase: what was done about the client's page cache before a
//! read phase, reads that may have come from that cache, and figures too weak to trust.

use dfsbench_core::result::{PhaseResult, RunResult};

/// Mark of a read phase that may have been served from the client's cache.
pub const SUSPECT_MARK: &str = "[cache?]";
/// Mark of a phase whose figures are weak (too short, too few operations, short stonewall).
pub const WEAK_MARK: &str = "[weak]";

/// The marks of a phase, each with a leading space; empty for a clean phase.
pub fn marks(p: &PhaseResult) -> String {
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
pub fn cache(p: &PhaseResult) -> String {
    p.cache.as_ref().map_or("-".into(), |c| c.describe())
}

/// Every reason a phase is marked, in one line; empty for a clean phase.
pub fn reasons(p: &PhaseResult) -> String {
    let mut all: Vec<String> = p.cache_suspect.clone();
    if !p.validity.is_empty() {
        all.push(format!("weak: {}", p.validity.join(", ")));
    }
    all.join("; ")
}

/// Lines under a run's table: each read phase's cache policy and each mark's reasons.
pub fn notes(result: &RunResult) -> String {
    let mut out = String::new();
    for p in result.phases.iter().filter(|p| !p.prepare) {
        if p.cache.is_some() {
            out += &format!("page cache before {}: {}\n", p.label, cache(p));
        }
        for s in &p.cache_suspect {
            out += &format!("{SUSPECT_MARK} {}: {s}\n", p.label);
        }
        if !p.validity.is_empty() {
            out += &format!("{WEAK_MARK} {}: {}\n", p.label, p.validity.join(", "));
        }
    }
    out
}
