//! What is beside the run directory in the target: a train dataset kept for later runs
//! (`--dataset`) lives there, in a directory of its own that carries a run marker. It is looked
//! at and made before the run starts, by names relative to the directory (prefix) that holds
//! the run directory; a run reads and writes it through its clients as `../NAME/...`.

use crate::OpResult;

/// What is at a name beside the run directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    Nothing,
    /// A directory, or on an object store objects under the name as a prefix.
    Dir,
    /// Something else: a file, a link, an object of that very name.
    Other,
}

/// The target's side of the run directory.
pub trait Beside {
    /// What is at `name`.
    fn find(&self, name: &str) -> OpResult<Found>;
    /// The contents of file `path`; None when there is none.
    fn read(&self, path: &str) -> OpResult<Option<Vec<u8>>>;
    /// The size of regular file `path`; None when there is none (or a link, a directory).
    fn size(&self, path: &str) -> OpResult<Option<u64>>;
    /// Make directory `dir`, which is not there, with `files` (name, contents) in it.
    fn make_dir(&self, dir: &str, files: &[(&str, &str)]) -> OpResult<()>;
    /// `path` as a user names it to `dfsbench clean`: an absolute path, or the target's URI
    /// (without secrets) with the path after its prefix.
    fn locate(&self, path: &str) -> String;
}
