//! Jobs expanded into the phases that run, in order.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{json, Value};

use crate::config::{FilePhase, Job, MetaPhase, Rw, Workload};
use crate::units::format_size;

/// What the workers do in one phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PhaseOp {
    Meta(MetaPhase),
    Files {
        phase: FilePhase,
        set: usize,
    },
    /// Write every worker's file region once, unmeasured, so reads find data (fio's layout).
    IoLayout,
    Io(Rw),
}

/// One phase of a job.
#[derive(Debug, Clone)]
pub struct Phase {
    pub job: usize,
    pub op: PhaseOp,
    pub name: &'static str,
    pub label: String,
    /// Names of the operation kinds measured separately (index = recorder class).
    pub classes: &'static [&'static str],
    pub duration: Option<Duration>,
    pub ramp: Duration,
    pub prepare: bool,
    pub params: BTreeMap<String, Value>,
    /// A wear-out step (IOR's stoneWallingWearOut): every worker creates or writes files up
    /// to this count, so that later phases find the same number everywhere.
    pub until: Option<u64>,
}

impl Phase {
    /// Phases that only read what earlier phases made: with `--shuffle` they read another
    /// rank's data.
    pub fn reads_only(&self) -> bool {
        match self.op {
            PhaseOp::Meta(p) => matches!(p, MetaPhase::Stat | MetaPhase::Open | MetaPhase::List),
            PhaseOp::Files { phase, .. } => phase == FilePhase::Read,
            PhaseOp::IoLayout => false,
            PhaseOp::Io(rw) => !rw.writes(),
        }
    }

    /// After this time-limited create or write phase, the unmeasured step that brings every
    /// worker to `most` files, the count the busiest one reached; None when nothing is left.
    pub fn wear_out(&self, existing: &[Vec<u64>]) -> Option<Phase> {
        let set = match self.op {
            PhaseOp::Meta(MetaPhase::Create) => 0,
            PhaseOp::Files {
                phase: FilePhase::Write,
                set,
            } => set,
            _ => return None,
        };
        self.duration?;
        let counts = existing.iter().map(|e| e.get(set).copied().unwrap_or(0));
        let most = counts.clone().max()?;
        if counts.clone().all(|c| c == most) {
            return None;
        }
        Some(Phase {
            label: format!("wear-out {}", self.label),
            duration: None,
            ramp: Duration::ZERO,
            prepare: true,
            until: Some(most),
            ..self.clone()
        })
    }
}

/// The phases of job `index`.
pub fn phases(index: usize, job: &Job) -> Vec<Phase> {
    let base = |op, name: &'static str, label: String, classes, params: Vec<(&str, Value)>| Phase {
        job: index,
        op,
        name,
        label,
        classes,
        duration: job.duration,
        ramp: job.ramp,
        prepare: false,
        params: params.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
        until: None,
    };
    match &job.workload {
        Workload::Meta(m) => m
            .phases
            .iter()
            .map(|&p| {
                let count = if matches!(p, MetaPhase::Mkdir | MetaPhase::Rmdir) {
                    m.dirs
                } else {
                    m.files
                };
                let mut phase = base(
                    PhaseOp::Meta(p),
                    p.name(),
                    p.name().to_string(),
                    meta_class(p),
                    vec![("items_per_worker", json!(count)), ("layout", json!(m.layout))],
                );
                // Only create is time-limited, as in mdtest's stonewall option: later phases
                // work on the files that exist.
                if p != MetaPhase::Create {
                    phase.duration = None;
                    phase.ramp = Duration::ZERO;
                }
                phase
            })
            .collect(),
        Workload::Files(f) => f
            .sets
            .iter()
            .enumerate()
            .flat_map(|(set, s)| f.phases.iter().map(move |&p| (set, s, p)))
            .map(|(set, s, p)| {
                let mut phase = base(
                    PhaseOp::Files { phase: p, set },
                    p.name(),
                    format!("{} {}", p.name(), format_size(s.size)),
                    files_class(p),
                    vec![
                        ("file_size", json!(s.size)),
                        ("files_per_worker", json!(s.count)),
                        ("bs", json!(f.bs)),
                    ],
                );
                if p == FilePhase::Delete {
                    phase.duration = None;
                    phase.ramp = Duration::ZERO;
                }
                phase
            })
            .collect(),
        Workload::Io(io) => {
            let params = vec![
                ("rw", json!(io.rw.name())),
                ("bs", json!(io.bs)),
                ("size", json!(io.size)),
                ("iodepth", json!(io.iodepth)),
                ("direct", json!(io.direct)),
                ("shared_file", json!(io.shared_file)),
            ];
            let mut out = Vec::new();
            if io.rw.reads() {
                let mut layout = base(
                    PhaseOp::IoLayout,
                    "layout",
                    format!("layout {}", format_size(io.size)),
                    IO_CLASSES,
                    params.clone(),
                );
                layout.prepare = true;
                layout.duration = None;
                layout.ramp = Duration::ZERO;
                out.push(layout);
            }
            let mut params = params;
            if matches!(io.rw, Rw::Readwrite | Rw::Randrw) {
                params.push(("rwmixread", json!(io.rwmixread)));
            }
            out.push(base(
                PhaseOp::Io(io.rw),
                io.rw.name(),
                format!("{} {} qd{}", io.rw.name(), format_size(io.bs as u64), io.iodepth),
                IO_CLASSES,
                params,
            ));
            out
        }
    }
}

fn meta_class(p: MetaPhase) -> &'static [&'static str] {
    match p {
        MetaPhase::Mkdir => &["mkdir"],
        MetaPhase::Create => &["create"],
        MetaPhase::Stat => &["stat"],
        MetaPhase::Open => &["open"],
        MetaPhase::List => &["list"],
        MetaPhase::Rename => &["rename"],
        MetaPhase::Delete => &["delete"],
        MetaPhase::Rmdir => &["rmdir"],
    }
}

fn files_class(p: FilePhase) -> &'static [&'static str] {
    match p {
        FilePhase::Write => &["write"],
        FilePhase::Read => &["read"],
        FilePhase::Delete => &["delete"],
    }
}

/// Recorder classes of io phases.
pub const READ: usize = 0;
pub const WRITE: usize = 1;

/// Every io phase measures reads and writes apart; results list the kinds that occurred.
const IO_CLASSES: &[&str] = &["read", "write"];
