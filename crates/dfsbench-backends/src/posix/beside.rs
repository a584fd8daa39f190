//! The directory that holds a posix run directory: [`Beside`] there, without following links.

use std::io::ErrorKind;
use std::path::PathBuf;

use crate::{Beside, Found, OpError, OpResult};

pub(super) struct PosixBeside {
    /// The run directory's parent, canonical, so that messages name it from anywhere.
    pub(super) parent: PathBuf,
}

fn io_error(path: &std::path::Path, e: std::io::Error) -> OpError {
    let e = OpError::from(e);
    OpError::new(e.kind, format!("{}: {}", path.display(), e.message))
}

impl Beside for PosixBeside {
    fn find(&self, name: &str) -> OpResult<Found> {
        let path = self.parent.join(name);
        match std::fs::symlink_metadata(&path) {
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(Found::Nothing),
            Err(e) => Err(io_error(&path, e)),
            Ok(m) if m.is_dir() => Ok(Found::Dir),
            Ok(_) => Ok(Found::Other),
        }
    }

    fn read(&self, path: &str) -> OpResult<Option<Vec<u8>>> {
        let path = self.parent.join(path);
        match std::fs::read(&path) {
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io_error(&path, e)),
            Ok(bytes) => Ok(Some(bytes)),
        }
    }

    fn size(&self, path: &str) -> OpResult<Option<u64>> {
        let path = self.parent.join(path);
        match std::fs::symlink_metadata(&path) {
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io_error(&path, e)),
            Ok(m) => Ok(m.is_file().then_some(m.len())),
        }
    }

    fn make_dir(&self, dir: &str, files: &[(&str, &str)]) -> OpResult<()> {
        let dir = self.parent.join(dir);
        std::fs::create_dir(&dir).map_err(|e| io_error(&dir, e))?;
        for (name, text) in files {
            let path = dir.join(name);
            std::fs::write(&path, text).map_err(|e| io_error(&path, e))?;
        }
        Ok(())
    }

    fn locate(&self, path: &str) -> String {
        self.parent.join(path).display().to_string()
    }
}
