//! Faults during a run (`--fault`, `--recovery-probe`, `--op-timeout`): the schedule that runs
//! the user's commands on rank 0, the stalls measured from every operation's completion time,
//! and what the measurements show around each fault.

mod command;
mod impact;
mod spec;
pub(crate) mod stalls;
mod timeline;

pub(crate) use impact::analyse;
pub use spec::FaultEntry;
pub(crate) use spec::{validate, FaultPlan, FaultSettings, DEFAULT_STALL_THRESHOLD};
pub(crate) use timeline::{Record, Timeline};
