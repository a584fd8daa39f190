//! Storage backends of dfsbench behind one trait.

mod buf;
pub mod clean;
pub mod clock;
pub mod dal;
mod error;
pub mod mem;
pub mod posix;
pub mod redact;
pub mod runtime;
mod storage;
mod target;
pub use dfsbench_result::units;

pub use buf::{AlignedBuf, SharedData, ALIGN};
pub use error::{errno_name, one_line, take_detail, OpError};
pub use storage::{
    BlockIo, BlockOp, BlockOpts, Capabilities, Capability, Check, Client, Completion, Drive, FileOpts, FileRead, Fill,
    IoEngine, OpResult, Source, Storage, TargetInfo,
};
pub use target::{AnyStorage, BackendInfo, Target, BACKENDS};
