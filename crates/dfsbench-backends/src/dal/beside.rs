//! The prefix that holds a network run: [`Beside`] through an operator rooted there.

use opendal::{Buffer, ErrorKind, Operator};

use super::{explain, op_error, DalStorage};
use crate::{Beside, Found, OpResult};

pub(super) struct DalBeside<'a> {
    pub(super) storage: &'a DalStorage,
    /// Rooted at the target's prefix, where the run directory is.
    pub(super) op: Operator,
}

impl DalBeside<'_> {
    /// Run `f` as a setup step (bounded in time, stopped by Ctrl-C), naming `path` on failure.
    fn run<T>(&self, path: &str, f: impl std::future::Future<Output = opendal::Result<T>>) -> OpResult<T> {
        let what = self.locate(path);
        self.storage.setup.run(&format!("looking at {what}"), async {
            f.await.map_err(|e| explain(op_error(e), &what))
        })
    }
}

/// `Ok(None)` for what is not there.
fn found<T>(r: opendal::Result<T>) -> opendal::Result<Option<T>> {
    match r {
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        r => r.map(Some),
    }
}

impl Beside for DalBeside<'_> {
    fn find(&self, name: &str) -> OpResult<Found> {
        let dir = format!("{name}/");
        self.run(name, async {
            // Anything under the prefix makes it a directory; objects have no directories.
            let listed = found(self.op.list_with(&dir).limit(2).await)?.unwrap_or_default();
            if listed.iter().any(|e| e.path() != dir) || found(self.op.stat(&dir).await)?.is_some() {
                return Ok(Found::Dir);
            }
            Ok(match found(self.op.stat(name).await)? {
                Some(_) => Found::Other,
                None => Found::Nothing,
            })
        })
    }

    fn read(&self, path: &str) -> OpResult<Option<Vec<u8>>> {
        self.run(path, async { Ok(found(self.op.read(path).await)?.map(|b| b.to_vec())) })
    }

    fn size(&self, path: &str) -> OpResult<Option<u64>> {
        self.run(path, async {
            let meta = found(self.op.stat(path).await)?;
            Ok(meta.filter(|m| m.is_file()).map(|m| m.content_length()))
        })
    }

    fn make_dir(&self, dir: &str, files: &[(&str, &str)]) -> OpResult<()> {
        self.run(dir, async {
            if self.storage.real_dirs() {
                self.op.create_dir(&format!("{dir}/")).await?;
            }
            for (name, text) in files {
                self.op
                    .write(&format!("{dir}/{name}"), Buffer::from(text.to_string()))
                    .await?;
            }
            Ok(())
        })
    }

    fn locate(&self, path: &str) -> String {
        let uri = &self.storage.spec.redacted;
        let (base, query) = uri.split_once('?').map_or((uri.as_str(), None), |(b, q)| (b, Some(q)));
        let at = format!("{}/{path}", base.trim_end_matches('/'));
        query.map_or(at.clone(), |q| format!("{at}?{q}"))
    }
}
