//! Storage backends of dfsbench behind one trait.

mod buf;
mod error;
pub mod mem;
pub mod posix;
mod storage;
mod target;

pub use buf::{AlignedBuf, ALIGN};
pub use error::{errno_name, OpError};
pub use storage::{
    BlockIo, BlockOp, BlockOpts, Capabilities, Capability, Client, Completion, FileOpts, IoEngine, OpResult, Storage,
    TargetInfo,
};
pub use target::{AnyStorage, BackendInfo, Target, BACKENDS};
