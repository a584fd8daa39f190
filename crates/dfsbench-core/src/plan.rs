//! Jobs expanded into the phases that run, in order.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{json, Value};

use crate::config::{FilePhase, Job, MetaPhase, Rw, Workload};
use crate::dist::MixOp;
use crate::load::{Arrival, Stable};
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
    /// Write each worker's pool of files before the mix, unmeasured.
    MixFill,
    Mix,
    /// Iteration `n`: the first writes, later ones read the previous iteration's files and
    /// write their own.
    Iterate(u64),
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
    /// Open-loop rate of the phase: total operations per second (None: closed loop).
    pub rate: Option<f64>,
    pub arrival: Arrival,
    /// End the phase once throughput is steady (time-based phases only).
    pub stable: Option<Stable>,
    /// A wear-out step (IOR's stoneWallingWearOut): every worker creates or writes files up
    /// to this count, so that later phases find the same number everywhere.
    pub until: Option<u64>,
}

impl Phase {
    /// Phases that read what earlier phases made: with `--shuffle` they read another worker's
    /// data (the same worker of another rank, or the next worker in a single process).
    pub fn reads_shuffled(&self) -> bool {
        match self.op {
            PhaseOp::Meta(p) => matches!(p, MetaPhase::Stat | MetaPhase::Open | MetaPhase::List),
            PhaseOp::Files { phase, .. } => phase == FilePhase::Read,
            PhaseOp::IoLayout | PhaseOp::MixFill | PhaseOp::Mix => false,
            PhaseOp::Io(rw) => !rw.writes(),
            // An iteration reads the previous one's output: another worker's with shuffle.
            PhaseOp::Iterate(n) => n > 0,
        }
    }

    /// Measured phases that read file data, whose files must leave the client's page cache
    /// first so the reads reach the storage.
    pub fn reads_data(&self) -> bool {
        if self.prepare {
            return false;
        }
        match self.op {
            PhaseOp::Files { phase, .. } => phase == FilePhase::Read,
            PhaseOp::Io(rw) => rw.reads(),
            PhaseOp::Mix => true,
            PhaseOp::Iterate(n) => n > 0,
            PhaseOp::Meta(_) | PhaseOp::IoLayout | PhaseOp::MixFill => false,
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

/// The phases of job `index`, with the job's open-loop rate and steady-state rule applied:
/// measured phases run at `rate`, and with rate steps every time-based phase runs once per step.
pub fn phases(index: usize, job: &Job) -> Vec<Phase> {
    let mut out = Vec::new();
    for mut p in workload_phases(index, job) {
        let timed = p.duration.is_some();
        if timed {
            p.stable = job.until_stable;
        }
        if p.prepare {
            out.push(p);
        } else if !job.rate_steps.is_empty() && timed {
            for &r in &job.rate_steps {
                let mut step = p.clone();
                step.rate = Some(r);
                step.label = format!("{} @{}/s", p.label, r);
                step.params.insert("rate".into(), json!(r));
                out.push(step);
            }
        } else {
            p.rate = job.rate;
            out.push(p);
        }
    }
    out
}

fn workload_phases(index: usize, job: &Job) -> Vec<Phase> {
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
        rate: None,
        arrival: job.arrival.unwrap_or(Arrival::Uniform),
        stable: None,
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
        Workload::Mix(m) => {
            let mut fill = base(
                PhaseOp::MixFill,
                "fill",
                format!("fill {} files", m.files),
                &["write"],
                vec![
                    ("files_per_worker", json!(m.files)),
                    ("sizes", json!(m.sizes)),
                    ("bs", json!(m.bs)),
                ],
            );
            fill.prepare = true;
            fill.duration = None;
            fill.ramp = Duration::ZERO;
            let mix: Vec<String> = m.mix.0.iter().map(|(op, w)| format!("{}={w}", op.name())).collect();
            let mut params = vec![
                (
                    "mix",
                    json!(m.mix.0.iter().map(|(op, w)| (op.name(), w)).collect::<BTreeMap<_, _>>()),
                ),
                ("sizes", json!(m.sizes)),
                ("files_per_worker", json!(m.files)),
                ("bs", json!(m.bs)),
            ];
            if job.duration.is_none() {
                params.push(("ops_per_worker", json!(m.ops)));
            }
            vec![
                fill,
                base(
                    PhaseOp::Mix,
                    "mix",
                    format!("mix {}", mix.join(",")),
                    MIX_CLASSES,
                    params,
                ),
            ]
        }
        Workload::Iterate(it) => (0..it.iterations)
            .map(|n| {
                let params = vec![
                    ("iteration", json!(n)),
                    ("shuffle", json!(it.shuffle)),
                    ("files_per_worker", json!(it.files)),
                    ("file_size", json!(it.file_size)),
                    ("bs", json!(it.bs)),
                ];
                let label = match n {
                    0 => format!("iterate 0 write {}", format_size(it.file_size)),
                    _ if it.shuffle => format!("iterate {n} shuffle"),
                    _ => format!("iterate {n}"),
                };
                base(PhaseOp::Iterate(n), "iterate", label, IO_CLASSES, params)
            })
            .collect(),
    }
}

/// Recorder classes of the mix phase, in [`MixOp::ALL`] order.
const MIX_CLASSES: &[&str] = &{
    let mut names = [""; 5];
    let mut i = 0;
    while i < MixOp::ALL.len() {
        names[i] = MixOp::ALL[i].name();
        i += 1;
    }
    names
};

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
