//! Why a run's settings cannot be used ([`ConfigError`]): the one place that words every
//! validation message, from the flags and workload-file keys of `config/`, the workloads'
//! `Kind::validate` and the fault plan. All of them are the user's input to fix (the CLI exits
//! with code 2); a run that could not start is `session::StartError`.

use std::fmt;

use dfsbench_backends::one_line;

/// A validation error: one line naming the key (or flag), what is wrong and the fix. The
/// constructors write the user's text with [`one_line`], so a message never spans lines.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// Neither `--workload` nor `[[job]]` tables.
    #[error("no job to run: give --workload {choices} or a workload file with [[job]] tables")]
    NoJob { choices: String },
    /// A `[[job]]` without its `workload` key (`job` counts from 1).
    #[error("job {job}: missing 'workload': set it to {choices}")]
    MissingWorkload { job: usize, choices: String },
    /// A workload name the registry does not hold.
    #[error("job {job}: unknown workload '{name}': use {choices}")]
    UnknownWorkload { job: usize, name: String, choices: String },
    /// A key the job's workload does not read.
    #[error("'{key}' does not apply to the {workload} workload: remove it")]
    NotApplicable { key: String, workload: String },
    /// A key's value out of range or not one of its choices: `workers = 0: give between ...`.
    #[error("{key} = {value}: {fix}")]
    Value {
        key: &'static str,
        value: String,
        fix: String,
    },
    /// A key's text that does not read as its type (a size, a time): `ramp: ...`.
    #[error("{key}: {reason}")]
    Unreadable { key: &'static str, reason: String },
    /// Keys that need or exclude each other, or a rule a workload words itself.
    #[error("{0}")]
    Rule(String),
    /// A workload file that is no TOML, or names a key no struct declares.
    #[error("{file}:{} {message}", line.map(|l| format!(" line {l}:")).unwrap_or_default())]
    File {
        file: String,
        line: Option<usize>,
        message: String,
    },
    /// An error in one job's keys, with the job it is in.
    #[error("{job}: {source}")]
    Job { job: JobLabel, source: Box<ConfigError> },
}

impl ConfigError {
    /// `key = value: fix`.
    pub fn value(key: &'static str, value: impl fmt::Display, fix: impl Into<String>) -> Self {
        ConfigError::Value {
            key,
            value: one_line(&value.to_string()),
            fix: one_line(&fix.into()),
        }
    }

    /// `key: reason`, the reason a parser gave.
    pub fn unreadable(key: &'static str, reason: impl fmt::Display) -> Self {
        ConfigError::Unreadable {
            key,
            reason: one_line(&reason.to_string()),
        }
    }

    /// The error inside job `job`.
    pub fn in_job(self, job: JobLabel) -> Self {
        ConfigError::Job {
            job,
            source: Box::new(self),
        }
    }
}

impl From<String> for ConfigError {
    fn from(rule: String) -> Self {
        ConfigError::Rule(one_line(&rule))
    }
}

impl From<&str> for ConfigError {
    fn from(rule: &str) -> Self {
        ConfigError::Rule(one_line(rule))
    }
}

impl From<crate::dist::DistError> for ConfigError {
    fn from(e: crate::dist::DistError) -> Self {
        ConfigError::Rule(one_line(&e.to_string()))
    }
}

/// Which job an error is in: by its name when it has one, else by its place and workload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobLabel {
    /// `job 'fill'`.
    Named(String),
    /// `job 2 (meta)`, counting from 1.
    Numbered { job: usize, workload: String },
}

impl JobLabel {
    /// The label of the job at `index` (from 0) named `name`, of workload `workload`.
    pub fn new(index: usize, name: Option<&str>, workload: &str) -> Self {
        match name {
            Some(n) => JobLabel::Named(one_line(n)),
            None => JobLabel::Numbered {
                job: index + 1,
                workload: one_line(workload),
            },
        }
    }
}

impl fmt::Display for JobLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JobLabel::Named(n) => write!(f, "job '{n}'"),
            JobLabel::Numbered { job, workload } => write!(f, "job {job} ({workload})"),
        }
    }
}
