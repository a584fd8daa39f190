//! Faults during a run (`--fault`, `--recovery-probe`, `--op-timeout`): the schedule that runs
//! the user's commands on rank 0, the stalls measured from every operation's completion time,
//! and what the measurements show around each fault.

mod command;
mod impact;
mod spec;
pub mod stalls;
mod timeline;

pub use impact::analyse;
pub use spec::{
    validate, At, Fault, FaultEntry, FaultPlan, FaultSettings, ProbeFrom, ProbeSpec, DEFAULT_STALL_THRESHOLD,
};
pub use timeline::{Record, Timeline};
