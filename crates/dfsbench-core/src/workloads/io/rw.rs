//! The io workload's access patterns (fio's `rw`) and the steps of its phases.

use serde::Serialize;

use crate::error::ConfigError;
use crate::workloads::Step;

/// Access pattern, named as fio's `rw`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Rw {
    Read,
    Write,
    Randread,
    Randwrite,
    Readwrite,
    Randrw,
}

impl Rw {
    const ALL: [Rw; 6] = [
        Rw::Read,
        Rw::Write,
        Rw::Randread,
        Rw::Randwrite,
        Rw::Readwrite,
        Rw::Randrw,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Rw::Read => "read",
            Rw::Write => "write",
            Rw::Randread => "randread",
            Rw::Randwrite => "randwrite",
            Rw::Readwrite => "readwrite",
            Rw::Randrw => "randrw",
        }
    }
    /// The pattern named `name` (fio's `rw` is `readwrite`), for key `key`.
    pub(super) fn parse(key: &'static str, name: &str) -> Result<Rw, ConfigError> {
        match name {
            "rw" => Ok(Rw::Readwrite),
            name => Rw::ALL.into_iter().find(|rw| rw.name() == name).ok_or_else(|| {
                ConfigError::value(
                    key,
                    format!("'{name}'"),
                    "use read, write, randread, randwrite, readwrite or randrw",
                )
            }),
        }
    }
    pub fn random(self) -> bool {
        matches!(self, Rw::Randread | Rw::Randwrite | Rw::Randrw)
    }
    pub fn reads(self) -> bool {
        !matches!(self, Rw::Write | Rw::Randwrite)
    }
    pub fn writes(self) -> bool {
        !matches!(self, Rw::Read | Rw::Randread)
    }
}

/// The unmeasured layout of the files (before reads), the unmeasured pre-read (`pre_read`) and
/// engine probe (`auto`), then the pattern.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum IoStep {
    Layout,
    PreRead(Rw),
    Probe(Rw),
    Run(Rw),
}

impl Step for IoStep {
    /// The pre-read reads the file its pattern will read: another rank's with --shuffle.
    fn reads_shuffled(self) -> bool {
        matches!(self, IoStep::Run(rw) | IoStep::PreRead(rw) if !rw.writes())
    }
    fn reads_data(self) -> bool {
        matches!(self, IoStep::Run(rw) if rw.reads())
    }
}
