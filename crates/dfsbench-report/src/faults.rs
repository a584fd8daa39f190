//! The faults of a run as a table (the text and Markdown views render it), the recovery
//! probe's verdict, and the phases' stalls.

use dfsbench_result::faults::{FaultImpact, Window};
use dfsbench_result::RunResult;

use crate::fmt::rate_si;
use crate::table::{left, right, Table};

fn secs(v: f64) -> String {
    format!("{v:.2} s")
}

fn rate(w: Option<&Window>) -> String {
    w.map_or("-".into(), |w| rate_si(w.ops_per_sec))
}

/// A rate beside its ratio to the level before the fault: `120 (0.05x)`.
fn rate_ratio(w: Option<&Window>, ratio: Option<f64>) -> String {
    match (w, ratio) {
        (Some(w), Some(r)) => format!("{} ({r:.2}x)", rate_si(w.ops_per_sec)),
        _ => rate(w),
    }
}

fn row(i: usize, f: &FaultImpact) -> Vec<String> {
    let at = match (f.run.started_s, f.due_s) {
        (Some(s), _) => format!("{} ({:.1} s)", f.at, s),
        _ => f.at.clone(),
    };
    let errors = if f.errors_by_kind.is_empty() {
        f.during.map_or("-".into(), |d| d.errors.to_string())
    } else {
        f.errors_by_kind
            .iter()
            .map(|(k, n)| format!("{n} {k}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let measured = f.phase.is_some();
    vec![
        format!("{} {}", i + 1, shown(&f.command)),
        at,
        match f.run.exit_code {
            Some(c) if f.run.status == "failed" => format!("failed (exit {c})"),
            _ => f.run.status.clone(),
        },
        if measured { secs(f.stall_s) } else { "-".into() },
        rate(f.before.as_ref()),
        rate_ratio(f.during.as_ref(), f.during_ratio),
        rate_ratio(f.after.as_ref(), f.after_ratio),
        errors,
        f.first_success_after_s.map_or("-".into(), secs),
        match f.throughput_recovered_after_s {
            Some(s) => secs(s),
            None if f.before.is_some() => "not within the phase".into(),
            None => "-".into(),
        },
    ]
}

/// A fault or probe command as the user wrote it: the lab actions a run expands into
/// `'/path/to/dfsbench' 'lab' 'fault' 'moosefs' 'kill' 'node2'` read `lab kill node2` again;
/// any other command is shown as it is.
pub(crate) fn shown(command: &str) -> String {
    let Some(words) = single_quoted_words(command) else {
        return command.to_string();
    };
    let is_dfsbench = words.first().is_some_and(|w| w.rsplit('/').next() == Some("dfsbench"));
    let rest: Vec<&str> = words.iter().skip(2).map(String::as_str).collect();
    match (is_dfsbench, words.get(1).map(String::as_str), rest.as_slice()) {
        (true, Some("lab"), ["fault", _, action, node]) => format!("lab {action} {node}"),
        (true, Some("lab"), [what @ ("delay" | "limit"), _, value]) => format!("lab {what} {value}"),
        (true, Some("lab"), ["probe", _]) => "lab probe".into(),
        _ => command.to_string(),
    }
}

/// The words of a command made of single-quoted words (`'a' 'b'\''c'`), or None.
fn single_quoted_words(command: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut rest = command.trim();
    while !rest.is_empty() {
        let mut word = String::new();
        loop {
            let inner = rest.strip_prefix('\'')?;
            let end = inner.find('\'')?;
            word.push_str(&inner[..end]);
            rest = &inner[end + 1..];
            // `'\''`: a quote inside the word.
            match rest.strip_prefix("\\'") {
                Some(after) => {
                    word.push('\'');
                    rest = after;
                }
                None => break,
            }
        }
        words.push(word);
        rest = rest.strip_prefix(' ').unwrap_or(rest);
        if !rest.is_empty() && !rest.starts_with('\'') {
            return None;
        }
    }
    Some(words)
}

/// A row per fault; None when the run had no faults.
pub(crate) fn table(result: &RunResult) -> Option<Table> {
    if result.faults.is_empty() {
        return None;
    }
    let mut t = Table::new(vec![
        left("fault"),
        right("at"),
        left("status"),
        right("stall"),
        right("ops/s before"),
        right("during"),
        right("after"),
        right("errors"),
        right("ops resumed after"),
        right("throughput back after"),
    ]);
    for (i, f) in result.faults.iter().enumerate() {
        t.push(row(i, f));
    }
    Some(t)
}

/// The recovery probe's verdict in one line.
pub(crate) fn recovery_line(result: &RunResult) -> Option<String> {
    let r = result.recovery.as_ref()?;
    let tries = format!("{} probe{}", r.probes, if r.probes == 1 { "" } else { "s" });
    Some(match (r.recovered_s, r.recovery_time_s) {
        (Some(_), Some(t)) => format!(
            "recovery: '{}' succeeded {t:.1} s after the last fault ({tries})",
            shown(&r.command)
        ),
        (Some(at), None) => format!("recovery: '{}' succeeded at {at:.1} s ({tries})", shown(&r.command)),
        (None, _) if r.timed_out => format!(
            "recovery: '{}' did not succeed within the recovery timeout ({tries}); last output: {}",
            shown(&r.command),
            r.last_output.lines().next().unwrap_or("-")
        ),
        (None, _) if r.interrupted => format!("recovery: '{}' stopped by the user ({tries})", shown(&r.command)),
        (None, _) => format!("recovery: '{}' did not run", shown(&r.command)),
    })
}

/// The table as aligned text: faults, then the recovery line.
pub fn faults_table(result: &RunResult) -> Option<String> {
    let mut out = table(result)?.text();
    if let Some(r) = recovery_line(result) {
        out.push_str(&r);
        out.push('\n');
    }
    Some(out)
}

/// Phases with stalls (gaps without a completed operation of at least the threshold).
pub fn stall_lines(result: &RunResult) -> Vec<String> {
    result
        .phases
        .iter()
        .filter(|p| !p.prepare)
        .filter_map(|p| {
            let s = p.stalls.as_ref().filter(|s| s.count > 0)?;
            Some(format!(
                "{}: {} stall{} of {} s or more, {:.2} s in all; the longest {:.2} s from {:.2} s",
                p.label,
                s.count,
                if s.count == 1 { "" } else { "s" },
                s.threshold_s,
                s.total_s,
                s.longest_s,
                s.longest_from_s.unwrap_or_default()
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::shown;

    #[test]
    fn lab_actions_read_as_the_user_wrote_them() {
        let lab = |args: &str| format!("'/usr/local/bin/dfsbench' 'lab' {args}");
        assert_eq!(shown(&lab("'fault' 'moosefs' 'kill' 'node2'")), "lab kill node2");
        assert_eq!(shown(&lab("'delay' 'gluster' '10ms'")), "lab delay 10ms");
        assert_eq!(shown(&lab("'probe' 'ceph'")), "lab probe");
        // A quote inside a word, as the run quotes it.
        assert_eq!(shown(&lab(r"'fault' 'm' 'kill' 'no'\''de'")), "lab kill no'de");
        for other in [
            "systemctl stop minio",
            "'/bin/other' 'lab' 'fault' 'm' 'kill' 'n'",
            "'unclosed",
            "'a' b",
            "",
        ] {
            assert_eq!(shown(other), other);
        }
    }
}
