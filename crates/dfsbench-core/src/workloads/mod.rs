//! The operation loops of each workload, as methods of [`Worker`](crate::worker::Worker).

mod cache;
mod files;
mod io;
mod iterate;
mod meta;
mod mix;
mod whole;

pub(crate) use cache::files_read;
pub(crate) use files::files_dir;
pub(crate) use io::io_dir;
pub(crate) use iterate::iterate_setup_dirs;
pub(crate) use meta::meta_setup_dirs;
pub(crate) use mix::mix_dir;
