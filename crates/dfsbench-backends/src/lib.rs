//! Storage backends of dfsbench behind one trait.

#![warn(unreachable_pub)]

mod beside;
mod buf;
mod clean;
pub mod clock;
mod dal;
mod error;
mod mem;
mod posix;
pub mod redact;
pub mod runtime;
mod storage;
mod target;
#[cfg(test)]
mod test_util;
pub use dfsbench_result::units;

pub use beside::{Beside, Found};
pub use buf::{AlignedBuf, SharedData, ALIGN};
pub use error::{one_line, take_detail, OpError};
pub use storage::{
    BlockIo, BlockOp, BlockOpts, Capabilities, Capability, Check, Client, Completion, Drive, FileOpts, FileRead, Fill,
    IoEngine, OpResult, Source, Storage, TargetInfo,
};
pub use target::{AnyStorage, BackendInfo, Target, BACKENDS};

pub use clean::clean_run;
pub use dal::NetOptions;
pub use mem::MemStorage;
pub use posix::{is_block_device, is_dataless_char_device, DEVICE_BACKEND, RUN_MARKER, RUN_PREFIX};
