//! Short codes for cells without a number: a table cell holds `n/a: no rename on s3`, the
//! full reason goes into a footnote.

/// Longest reason kept whole in a cell.
const SHORT: usize = 32;

fn between<'a>(s: &'a str, a: &str, b: &str) -> Option<&'a str> {
    let from = s.find(a)? + a.len();
    let len = s[from..].find(b)?;
    Some(&s[from..from + len])
}

/// The code of a full reason (`n/a: ...`, `error: ...`, `not run`, `timed out: ...`).
pub fn short(why: &str) -> String {
    if why.chars().count() <= SHORT {
        return why.to_string();
    }
    let (kind, rest) = why.split_once(": ").unwrap_or(("n/a", why));
    let code = if kind != "n/a" {
        None
    } else if rest.starts_with("left out at scale") {
        Some("left out at this scale".to_string())
    } else if let (Some(what), Some(backend)) = (
        between(rest, "needs ", " but the "),
        between(rest, " but the ", " backend"),
    ) {
        Some(format!("no {what} on {backend}"))
    } else if let (Some(phase), Some(backend)) = (between(rest, "no ", " phase"), between(rest, "not run on ", ")")) {
        Some(format!("no {phase} on {backend}"))
    } else if rest.starts_with("server CPU not measured") {
        Some("no --server-pid".into())
    } else if let Some(local) = rest.split_once(", no server:").map(|(l, _)| l) {
        Some(format!("{local}, no server"))
    } else if let Some((_, what)) = rest.split_once(" lab has no ") {
        Some(format!("no {what}"))
    } else if rest.starts_with("no single endpoint") {
        Some("no single endpoint".into())
    } else if rest.starts_with("no step kept AU") {
        Some("no count held".into())
    } else if rest.starts_with("needs a lab target") {
        Some("needs a lab target".into())
    } else if rest.starts_with("mem:// lives in one process") {
        Some("one process only".into())
    } else if rest.starts_with("LocalFS is the single-node baseline") {
        Some("single node only".into())
    } else {
        between(rest, " on the ", " backend").map(|backend| format!("not on {backend}"))
    };
    match code {
        Some(c) => format!("{kind}: {c}"),
        // The kind and as many words as fit.
        None => {
            let mut out = format!("{kind}:");
            for w in rest.split_whitespace() {
                if out.len() + w.len() + 1 > SHORT - 2 {
                    out.push_str(" …");
                    break;
                }
                out.push(' ');
                out.push_str(w.trim_end_matches([',', ':', ';']));
            }
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::short;

    #[test]
    fn codes_are_short_and_name_the_reason() {
        for (full, code) in [
            ("not run", "not run"),
            ("n/a: no rename phase (not run on s3)", "n/a: no rename on s3"),
            (
                "n/a: job 'write' needs positional writes but the s3 backend does not support it: change the job or the target",
                "n/a: no positional writes on s3",
            ),
            (
                "n/a: server CPU not measured: give --server-pid PID of the server processes on this host",
                "n/a: no --server-pid",
            ),
            (
                "n/a: local ext4, no server: a local file system has no server processes to watch",
                "n/a: local ext4, no server",
            ),
            (
                "n/a: no null_tests.connect.median_ns on the posix backend",
                "n/a: not on posix",
            ),
            (
                "n/a: left out at scale 0.0001: 1000 x 0.0001 is no whole file of 1 MB",
                "n/a: left out at this scale",
            ),
            (
                "n/a: the gluster lab has no metadata server",
                "n/a: no metadata server",
            ),
            (
                "n/a: no single endpoint on the posix backend: each node's TCP connect is in the row below",
                "n/a: no single endpoint",
            ),
            (
                "n/a: needs a lab target (-t lab:NAME): only a lab's nodes are known",
                "n/a: needs a lab target",
            ),
            (
                "n/a: no step kept AU >= 90%, not even 1 accelerator per client (AU 23.4%)",
                "n/a: no count held",
            ),
        ] {
            assert_eq!(short(full), code, "{full}");
        }
        let long = short("error: the run failed because the server answered 503 Slow Down for a long time");
        assert!(
            long.starts_with("error: the run") && long.chars().count() <= 32,
            "{long}"
        );
    }
}
