//! Variables in workload files and fio job files (expanded a line or a value at a time): `${NAME}` and `${NAME:-default}` take the
//! environment's value, so one file serves a laptop and a cluster (`SIZE=1t dfsbench run f.toml`).
//! An unset variable without a default is an error that names it: fio would put an empty
//! string there and fail later on a value that no longer says why.

/// Why a text's variables could not be expanded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum VarError {
    /// `${NAME}` with NAME unset and no default.
    Unset { name: String },
    /// A `${` without its `}` on the same line.
    Unclosed,
    /// `${}` or a name that is not `[A-Za-z_][A-Za-z0-9_]*`.
    BadName { text: String },
    /// The expanded text would be longer than a workload file may be.
    TooLong,
}

impl std::fmt::Display for VarError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            VarError::Unset { name, .. } => write!(
                f,
                "variable {name} is not set: export {name}=VALUE, or give a default as ${{{name}:-VALUE}}"
            ),
            VarError::Unclosed => f.write_str("`${` without its closing `}`: write ${NAME} or ${NAME:-default}"),
            VarError::BadName { text, .. } => write!(
                f,
                "`${{{text}}}` is no variable name: use letters, digits and _ (${{SIZE}}, ${{SIZE:-1g}})"
            ),
            VarError::TooLong => write!(
                f,
                "with its variables expanded the file is longer than {MAX_EXPANDED} bytes, the most a workload file may hold: shorten their values"
            ),
        }
    }
}

/// The most a whole file may expand to: what a file may hold, so that variables do not make a
/// small file a huge one.
pub(super) const MAX_EXPANDED: usize = super::MAX_WORKLOAD_FILE as usize;

/// `text` with every `${NAME}` and `${NAME:-default}` replaced by `lookup(NAME)` (or the
/// default when it is unset or empty, as the shell's `:-`). With `dollar_escape`, `$$` stands
/// for one `$` (workload files, where a fault command may hold shell variables); fio job files
/// have no escape, as in fio. A `$` before anything else is kept as it is. The result is at most
/// `room` bytes (what is left of [`MAX_EXPANDED`] for the file), checked before it grows.
pub(super) fn expand(
    text: &str,
    dollar_escape: bool,
    room: usize,
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<String, VarError> {
    let mut out = String::with_capacity(text.len().min(room));
    let push = |out: &mut String, piece: &str| {
        if out.len() + piece.len() > room {
            return Err(VarError::TooLong);
        }
        out.push_str(piece);
        Ok(())
    };
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        push(&mut out, &rest[..at])?;
        let after = &rest[at + 1..];
        if dollar_escape && after.starts_with('$') {
            push(&mut out, "$")?;
            rest = &after[1..];
        } else if let Some(inner) = after.strip_prefix('{') {
            let end = inner
                .find(['}', '\n'])
                .filter(|&e| inner.as_bytes()[e] == b'}')
                .ok_or(VarError::Unclosed)?;
            let body = &inner[..end];
            let (name, default) = match body.split_once(":-") {
                Some((n, d)) => (n, Some(d)),
                None => (body, None),
            };
            let valid = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !valid {
                return Err(VarError::BadName {
                    text: dfsbench_backends::one_line(body),
                });
            }
            let value = lookup(name).filter(|v| !v.is_empty() || default.is_none());
            match (value, default) {
                (Some(v), _) => push(&mut out, &v)?,
                (None, Some(d)) => push(&mut out, d)?,
                (None, None) => return Err(VarError::Unset { name: name.to_string() }),
            }
            rest = &inner[end + 1..];
        } else {
            push(&mut out, "$")?;
            rest = after;
        }
    }
    push(&mut out, rest)?;
    Ok(out)
}

/// The environment's value of `name`, when it is set and valid Unicode.
pub(super) fn env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |n| vars.iter().find(|(k, _)| *k == n).map(|(_, v)| v.to_string())
    }

    #[test]
    fn set_unset_and_defaults() {
        let vars = [("SIZE", "4g"), ("EMPTY", "")];
        let e = |t: &str| expand(t, true, MAX_EXPANDED, with(&vars));
        assert_eq!(e("size = \"${SIZE}\"").unwrap(), "size = \"4g\"");
        assert_eq!(e("${SIZE:-1g} ${N:-8} ${EMPTY:-x}").unwrap(), "4g 8 x");
        assert_eq!(e("${EMPTY}").unwrap(), "");
        assert_eq!(e("b = ${NOPE}").unwrap_err(), VarError::Unset { name: "NOPE".into() });
        assert!(e("${NOPE}").unwrap_err().to_string().contains("export NOPE=VALUE"));
    }

    #[test]
    fn dollars_outside_braces_stay() {
        let none = |_: &str| None;
        assert_eq!(
            expand("kill $PID; echo $$x $${A}", true, MAX_EXPANDED, none).unwrap(),
            "kill $PID; echo $x ${A}"
        );
        assert_eq!(expand("a$$b", false, MAX_EXPANDED, none).unwrap(), "a$$b");
        assert_eq!(
            expand("${A", false, MAX_EXPANDED, none).unwrap_err(),
            VarError::Unclosed
        );
        assert!(matches!(
            expand("${1x}", false, MAX_EXPANDED, none).unwrap_err(),
            VarError::BadName { .. }
        ));
    }

    #[test]
    fn expansion_stops_at_its_room() {
        let big = "x".repeat(1000);
        let vars = [("BIG", big.as_str())];
        assert_eq!(expand("${BIG}", false, 1000, with(&vars)).unwrap(), big);
        assert_eq!(
            expand("a${BIG}", false, 1000, with(&vars)).unwrap_err(),
            VarError::TooLong
        );
        assert_eq!(
            expand("${A:-12}", false, 1, with(&vars)).unwrap_err(),
            VarError::TooLong
        );
        assert!(VarError::TooLong.to_string().contains("1048576 bytes"));
    }
}
