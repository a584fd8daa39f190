//! Workload files: TOML with `${VAR:-default}` variables, or fio job files.

use crate::error::ConfigError;

use super::{fio, vars, WorkloadFile};

/// Read a workload file: a fio job file (see [`fio`]) or TOML; `given` is what the command
/// line gives a fio job file (the device `--overwrite-device` names, which its `filename=` may
/// then name, and whether `--size` sizes its jobs).
pub fn load_workload_file(name: &str, text: &str, given: fio::Given<'_>) -> Result<WorkloadFile, ConfigError> {
    if fio::is_job_file(name, text) {
        fio::parse_on_device(name, text, vars::env, given)
    } else {
        parse_workload_file(name, text)
    }
}

/// Parse a workload file's text after expanding its `${VAR:-default}` variables; errors name
/// the file's line.
pub fn parse_workload_file(name: &str, text: &str) -> Result<WorkloadFile, ConfigError> {
    let text = &expand_toml(text).map_err(|(line, e)| ConfigError::File {
        file: dfsbench_backends::one_line(name),
        line: Some(line),
        message: e.to_string(),
    })?;
    toml::from_str(text).map_err(|e| {
        // TOML's messages can span lines ("invalid array\nexpected `]`"): errors are one line.
        let msg = e
            .message()
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join(": ");
        ConfigError::File {
            file: dfsbench_backends::one_line(name),
            line: e.span().map(|sp| key_line(text, sp.start.min(text.len()), &msg)),
            message: dfsbench_backends::one_line(&msg),
        }
    })
}

/// A TOML text with the variables of its values expanded, leaving comments as written (they
/// may well show `${SIZE}`); an error comes with its line.
fn expand_toml(text: &str) -> Result<String, (usize, vars::VarError)> {
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let (code, comment) = line.split_at(comment_start(line));
        let room = vars::MAX_EXPANDED.saturating_sub(out.len());
        out += &vars::expand(code, true, room, vars::env).map_err(|e| (i + 1, e))?;
        out += comment;
    }
    Ok(out)
}

/// Where a TOML line's comment starts: the first `#` outside a quoted string (or the end).
fn comment_start(line: &str) -> usize {
    let mut quote = None;
    let mut escaped = false;
    for (at, c) in line.char_indices() {
        match (quote, c) {
            (Some('"'), '\\') if !escaped => {
                escaped = true;
                continue;
            }
            (Some(q), c) if c == q && !escaped => quote = None,
            (None, '"' | '\'') => quote = Some(c),
            (None, '#') => return at,
            _ => {}
        }
        escaped = false;
    }
    line.len()
}

/// The line of an error at byte `start`: a job's error names its key (`` `workers`: ... ``) and
/// TOML points at the job's table, so the line is the key's first line in that table.
fn key_line(text: &str, start: usize, msg: &str) -> usize {
    let line_of = |at: usize| text[..at].matches('\n').count() + 1;
    let key = msg.split('`').nth(1).filter(|k| !k.is_empty());
    let found = key.and_then(|key| {
        let mut at = start;
        text[start..].split_inclusive('\n').find_map(|l| {
            let here = at;
            at += l.len();
            let (k, _) = l.split_once('=')?;
            (k.trim() == key).then_some(here)
        })
    });
    line_of(found.unwrap_or(start))
}

impl WorkloadFile {
    /// The file as `dfsbench run FILE` reads it back: every `$` doubled, so no value is taken
    /// for a variable.
    pub fn to_toml(&self) -> String {
        toml::to_string(self)
            .expect("a workload file serializes to TOML")
            .replace('$', "$$")
    }
}
