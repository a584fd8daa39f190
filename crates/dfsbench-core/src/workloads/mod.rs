//! The operation loops of each workload, as methods of [`Worker`](crate::worker::Worker).

mod files;
mod io;
mod meta;

pub(crate) use files::files_dir;
pub(crate) use io::io_dir;
pub(crate) use meta::meta_setup_dirs;
