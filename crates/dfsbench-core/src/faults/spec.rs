//! What the user asks for: `--fault 'AT: COMMAND'`, the recovery probe, and their bounds,
//! validated into a [`FaultPlan`] against the run's phases.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::ConfigError;
use crate::job::Job;
use crate::plan::phases;
use crate::units::parse_duration;

/// How long a fault command may run when `--fault-timeout` is not given.
pub(super) const DEFAULT_FAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// How long probing may go on when `--recovery-timeout` is not given.
pub(super) const DEFAULT_RECOVERY_TIMEOUT: Duration = Duration::from_secs(600);
/// Time between the starts of two probes when `--probe-interval` is not given.
pub(super) const DEFAULT_PROBE_INTERVAL: Duration = Duration::from_secs(1);
/// Gaps without a completed operation this long count as stalls by default.
pub(crate) const DEFAULT_STALL_THRESHOLD: Duration = Duration::from_secs(1);

/// One `--fault` as written: `30s: ssh node3 systemctl stop ceph-osd@2`, or in a workload file
/// the same string or a table `{ at = "30s", command = "..." }`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaultEntry {
    pub at: String,
    pub command: String,
}

impl std::str::FromStr for FaultEntry {
    type Err = String;

    fn from_str(text: &str) -> Result<FaultEntry, String> {
        let Some((at, command)) = text.split_once(':') else {
            return Err(format!(
                "fault '{text}' has no time: write 'AT: COMMAND', e.g. '30s: systemctl stop minio'"
            ));
        };
        let entry = FaultEntry {
            at: at.trim().to_string(),
            command: command.trim().to_string(),
        };
        entry.check()?;
        Ok(entry)
    }
}

impl FaultEntry {
    fn check(&self) -> Result<At, String> {
        if self.command.is_empty() {
            return Err(format!(
                "fault at '{}' has no command: write 'AT: COMMAND', e.g. '30s: systemctl stop minio'",
                self.at
            ));
        }
        At::parse(&self.at)
    }
}

impl std::fmt::Display for FaultEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.at, self.command)
    }
}

impl Serialize for FaultEntry {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for FaultEntry {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<FaultEntry, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Written {
            Line(String),
            Table { at: String, command: String },
        }
        let entry = match Written::deserialize(d)
            .map_err(|_| serde::de::Error::custom("a fault is 'AT: COMMAND' or a table with `at` and `command`"))?
        {
            Written::Line(line) => return line.parse().map_err(serde::de::Error::custom),
            Written::Table { at, command } => FaultEntry { at, command },
        };
        entry.check().map_err(serde::de::Error::custom)?;
        Ok(entry)
    }
}

/// When a fault is due: `offset` after the start of the first measured phase (of the run, or
/// of the job for `[[job.fault]]`), or after the start of the named phase.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct At {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    #[serde(with = "crate::job::secs")]
    pub offset: Duration,
}

impl At {
    pub fn parse(text: &str) -> Result<At, String> {
        let (phase, offset) = match text.rsplit_once('+') {
            Some((p, o)) => (Some(p.trim()), o),
            None => (None, text),
        };
        if phase == Some("") {
            return Err(format!("fault time '{text}': name a phase before '+', e.g. read+10s"));
        }
        let offset = parse_duration(offset).map_err(|e| {
            format!("fault time '{text}': {e}; give a time after the start of the measured phase (30s) or of a named phase (read+10s)")
        })?;
        Ok(At {
            phase: phase.map(str::to_string),
            offset,
        })
    }
}

/// When probing starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProbeFrom {
    /// Once the last fault command has ended (the workload may still run).
    LastFault,
    /// Once the workload has ended.
    End,
}

impl ProbeFrom {
    pub fn name(self) -> &'static str {
        match self {
            ProbeFrom::LastFault => "last-fault",
            ProbeFrom::End => "end",
        }
    }
}

/// A fault of the plan: what to run, when, and anchored to which job.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fault {
    pub entry: FaultEntry,
    pub at: At,
    /// The job whose phases `at` counts from; None: the run's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProbeSpec {
    pub command: String,
    pub from: ProbeFrom,
    #[serde(with = "crate::job::secs")]
    pub interval: Duration,
    #[serde(with = "crate::job::secs")]
    pub timeout: Duration,
}

/// The validated faults and probe of a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct FaultPlan {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<Fault>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub must_succeed: bool,
    #[serde(with = "crate::job::secs")]
    pub command_timeout: Duration,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub probe: Option<ProbeSpec>,
}

impl FaultPlan {
    /// Nothing to run beside the workload.
    pub fn is_empty(&self) -> bool {
        self.faults.is_empty() && self.probe.is_none()
    }
}

/// The run's fault settings as given (flags or top-level workload-file keys).
pub(crate) struct FaultSettings<'a> {
    pub faults: &'a [FaultEntry],
    pub must_succeed: bool,
    pub command_timeout: Option<&'a str>,
    pub probe: Option<&'a str>,
    pub probe_from: Option<&'a str>,
    pub probe_interval: Option<&'a str>,
    pub recovery_timeout: Option<&'a str>,
}

fn positive(key: &'static str, text: Option<&str>, default: Duration) -> Result<Duration, ConfigError> {
    let d = text
        .map(parse_duration)
        .transpose()
        .map_err(|e| ConfigError::unreadable(key, e))?;
    match d {
        Some(Duration::ZERO) => Err(ConfigError::value(key, 0, "give a positive time such as 30s")),
        d => Ok(d.unwrap_or(default)),
    }
}

/// Validate the faults of the run (`settings.faults`) and of each job against the jobs'
/// phases: a named phase must exist, and a time must fall within the phases when they are all
/// time-based.
pub(crate) fn validate(
    settings: &FaultSettings<'_>,
    jobs: &[(Job, Vec<FaultEntry>)],
) -> Result<FaultPlan, ConfigError> {
    let mut faults = Vec::new();
    let run_wide = settings.faults.iter().map(|e| (None, e));
    let per_job = jobs
        .iter()
        .enumerate()
        .flat_map(|(i, (_, entries))| entries.iter().map(move |e| (Some(i), e)));
    for (job, entry) in run_wide.chain(per_job) {
        let at = entry.check()?;
        let considered: Vec<&Job> = match job {
            Some(i) => vec![&jobs[i].0],
            None => jobs.iter().map(|(j, _)| j).collect(),
        };
        check_within(entry, &at, &considered)?;
        faults.push(Fault {
            entry: entry.clone(),
            at,
            job,
        });
    }
    let probe = settings
        .probe
        .map(|command| -> Result<ProbeSpec, ConfigError> {
            if command.trim().is_empty() {
                return Err(
                    "recovery_probe is empty: give a command that exits 0 once the storage has recovered".into(),
                );
            }
            let from =
                match settings.probe_from.unwrap_or("last-fault") {
                    "last-fault" => ProbeFrom::LastFault,
                    "end" => ProbeFrom::End,
                    other => return Err(ConfigError::value(
                        "probe_from",
                        format!("'{other}'"),
                        "give last-fault (probe once the last fault command ended) or end (once the workload ended)",
                    )),
                };
            Ok(ProbeSpec {
                command: command.trim().to_string(),
                from,
                interval: positive("probe_interval", settings.probe_interval, DEFAULT_PROBE_INTERVAL)?,
                timeout: positive("recovery_timeout", settings.recovery_timeout, DEFAULT_RECOVERY_TIMEOUT)?,
            })
        })
        .transpose()?;
    let unused = [
        ("probe_from", settings.probe_from.is_some()),
        ("probe_interval", settings.probe_interval.is_some()),
        ("recovery_timeout", settings.recovery_timeout.is_some()),
    ];
    if let Some((key, _)) = unused.iter().find(|(_, set)| *set && probe.is_none()) {
        return Err(format!("{key} applies to the recovery probe: add --recovery-probe COMMAND or remove it").into());
    }
    if probe.as_ref().is_some_and(|p| p.from == ProbeFrom::LastFault) && faults.is_empty() {
        return Err("the recovery probe starts after the last fault, and there is none: add --fault 'AT: COMMAND' or --probe-from end".into());
    }
    Ok(FaultPlan {
        faults,
        must_succeed: settings.must_succeed,
        command_timeout: positive("fault_timeout", settings.command_timeout, DEFAULT_FAULT_TIMEOUT)?,
        probe,
    })
}

/// A fault's phase must be one the jobs run, and when every phase from its anchor on is
/// time-based, its time must come before they end.
fn check_within(entry: &FaultEntry, at: &At, jobs: &[&Job]) -> Result<(), ConfigError> {
    let all: Vec<_> = jobs
        .iter()
        .enumerate()
        .flat_map(|(i, j)| phases(i, j))
        .filter(|p| !p.prepare)
        .collect();
    let from = match &at.phase {
        Some(name) => all
            .iter()
            .position(|p| p.name == name || p.label == *name)
            .ok_or_else(|| {
                let mut names: Vec<&str> = all.iter().map(|p| p.name).collect();
                names.dedup();
                ConfigError::from(format!(
                    "fault '{entry}': no phase '{name}' in this run: use one of {}",
                    names.join(", ")
                ))
            })?,
        None => 0,
    };
    let rest = &all[from..];
    let planned: Option<Duration> = rest
        .iter()
        .map(|p| p.duration.filter(|_| p.stable.is_none()).map(|d| d + p.ramp))
        .sum();
    if let Some(total) = planned.filter(|t| at.offset >= *t) {
        return Err(format!(
            "fault '{entry}' is due {} s after its start, past the end of the phases ({} s): give an earlier time or a longer --duration",
            at.offset.as_secs_f64(),
            total.as_secs_f64()
        )
        .into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fault_line_is_a_time_and_a_command() {
        let f: FaultEntry = "30s: ssh node3 systemctl stop ceph-osd@2".parse().unwrap();
        assert_eq!(f.at, "30s");
        assert_eq!(f.command, "ssh node3 systemctl stop ceph-osd@2");
        assert_eq!(
            At::parse("read+1.5s").unwrap(),
            At {
                phase: Some("read".into()),
                offset: Duration::from_millis(1500)
            }
        );
        let commands_keep_their_colons: FaultEntry = "2s: echo a:b".parse().unwrap();
        assert_eq!(commands_keep_their_colons.command, "echo a:b");
        for bad in ["30s", "30s:", "soon: kill 1", "+3s: x", "read+: x", "-3s: x"] {
            let e = bad.parse::<FaultEntry>().unwrap_err();
            assert!(!e.contains('\n') && e.contains("fault"), "{bad}: {e}");
        }
    }

    #[test]
    fn faults_read_from_strings_and_tables() {
        #[derive(Deserialize)]
        struct F {
            fault: Vec<FaultEntry>,
        }
        let f: F = toml::from_str("fault = ['1s: true', { at = 'write+2s', command = 'false' }]").unwrap();
        assert_eq!(f.fault[1].at, "write+2s");
        assert_eq!(f.fault[0].to_string(), "1s: true");
        let e = toml::from_str::<F>("fault = [{ at = 'x', command = 'true' }]")
            .err()
            .unwrap();
        assert!(e.message().contains("fault time 'x'"), "{}", e.message());
    }
}
