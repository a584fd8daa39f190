//! Reading result files: files and directories (every `*.json` result inside, recursively).
//! Anything that is not a readable `dfsbench.result/1` document gets one line naming the file
//! and what is wrong with it.

use std::path::{Path, PathBuf};

use dfsbench_result::files::{read_bounded, ReadError, MAX_RESULT_FILE};

use dfsbench_result::{RunResult, SCHEMA};

/// One result file and where it came from.
pub struct Loaded {
    pub path: PathBuf,
    pub result: RunResult,
}

/// What is wrong with a result file or one of the arguments: all of them are the user's to
/// fix (the CLI exits with 2).
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// A path given, or a folder or file below one, that cannot be read.
    #[error(transparent)]
    Read(#[from] ReadError),
    #[error("{} is not a JSON file: {source}", path.display())]
    NotJson { path: PathBuf, source: serde_json::Error },
    /// A result of another version of the schema.
    #[error("{} has schema {schema}, this dfsbench reads {SCHEMA}: use the dfsbench version that wrote it", path.display())]
    OtherSchema { path: PathBuf, schema: String },
    /// JSON without the result schema (e.g. a study's manifest).
    #[error("{} is not a dfsbench result file (no \"schema\": \"{SCHEMA}\")", path.display())]
    NotResult { path: PathBuf },
    /// The result schema, but a document that does not follow it.
    #[error("{} is not a valid {SCHEMA} document: {source}", path.display())]
    Invalid { path: PathBuf, source: serde_json::Error },
    #[error("{} holds more than {MAX_ENTRIES} files and folders: give the folder of a study or of some results", path.display())]
    TooManyFiles { path: PathBuf },
    #[error("{} holds no dfsbench result files (*.json with \"schema\": \"{SCHEMA}\")", path.display())]
    NoResults { path: PathBuf },
    #[error("no result files given")]
    NoFiles,
}

enum Kind {
    Result(Box<RunResult>),
    /// Valid JSON, but not a dfsbench result (e.g. a study's manifest): skipped inside folders.
    Other(InputError),
}

/// The one key read before deciding whether a file is a result; serde skips the rest without
/// building it, so a large JSON file of something else costs one scan.
#[derive(serde::Deserialize)]
struct Head {
    schema: Option<String>,
}

fn parse(path: &Path) -> Result<Kind, InputError> {
    let text = read_bounded(path, MAX_RESULT_FILE)?;
    let schema = match serde_json::from_slice::<Head>(&text) {
        Ok(head) => head.schema,
        Err(e) if e.is_syntax() || e.is_eof() => {
            return Err(InputError::NotJson {
                path: path.into(),
                source: e,
            })
        }
        // JSON, but not an object with a string schema.
        Err(_) => None,
    };
    match schema.as_deref() {
        Some(SCHEMA) => {}
        Some(s) if s.starts_with("dfsbench.result/") => {
            return Err(InputError::OtherSchema {
                path: path.into(),
                schema: s.to_string(),
            })
        }
        _ => return Ok(Kind::Other(InputError::NotResult { path: path.into() })),
    }
    let result: RunResult = serde_json::from_slice(&text).map_err(|e| InputError::Invalid {
        path: path.into(),
        source: e,
    })?;
    Ok(Kind::Result(Box::new(result)))
}

/// Deepest folder below a folder given that is searched: a study's results are three deep.
const MAX_DEPTH: usize = 32;
/// Most directory entries looked at below one folder given: a study of thousands of points
/// holds tens of thousands; far more means the folder is not a set of results (`report /`).
const MAX_ENTRIES: usize = 200_000;

/// Every `*.json` file below `dir`, sorted by path. Symbolic links to folders are not followed
/// (a cycle would never end); the walk is bounded in depth and in entries.
fn json_files(dir: &Path) -> Result<Vec<PathBuf>, InputError> {
    let mut out = Vec::new();
    let mut stack = vec![(dir.to_path_buf(), 0)];
    let mut entries_seen = 0usize;
    while let Some((d, depth)) = stack.pop() {
        let entries = std::fs::read_dir(&d).map_err(|e| ReadError::io(&d, e))?;
        for e in entries {
            let e = e.map_err(|e| ReadError::io(&d, e))?;
            entries_seen += 1;
            if entries_seen > MAX_ENTRIES {
                return Err(InputError::TooManyFiles { path: dir.into() });
            }
            let p = e.path();
            // The entry's own type: a link to a folder is a link, not a folder.
            let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
            if is_dir && depth < MAX_DEPTH {
                stack.push((p, depth + 1));
            } else if !is_dir && p.extension().is_some_and(|x| x.eq_ignore_ascii_case("json")) {
                out.push(p);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Load the results named by `paths` (files, or folders searched recursively for `*.json`
/// results) in the order given; a file named twice counts once.
pub fn load(paths: &[PathBuf]) -> Result<Vec<Loaded>, InputError> {
    let mut out: Vec<Loaded> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut push = |path: PathBuf, result: RunResult, out: &mut Vec<Loaded>| {
        let key = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
        if seen.insert(key) {
            out.push(Loaded { path, result });
        }
    };
    for p in paths {
        let meta = std::fs::metadata(p).map_err(|e| ReadError::io(p, e))?;
        if meta.is_dir() {
            let before = out.len();
            for f in json_files(p)? {
                if let Kind::Result(r) = parse(&f)? {
                    push(f, *r, &mut out);
                }
            }
            if out.len() == before {
                return Err(InputError::NoResults { path: p.clone() });
            }
        } else {
            match parse(p)? {
                Kind::Result(r) => push(p.clone(), *r, &mut out),
                Kind::Other(why) => return Err(why),
            }
        }
    }
    if out.is_empty() {
        return Err(InputError::NoFiles);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_files_get_one_clear_message() {
        let dir = std::env::temp_dir().join(format!("dfsbench-input-test-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        let write = |name: &str, text: &str| {
            let p = dir.join(name);
            std::fs::write(&p, text).unwrap();
            p
        };
        let good = crate::synthetic::long_run(5, 2);
        write("sub/run.json", &serde_json::to_string(&good).unwrap());
        write("notes.json", r#"{"not": "a result"}"#);
        let err = |p: PathBuf| load(&[p]).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err(dir.join("missing.json")).starts_with("cannot read"));
        assert!(err(write("text.json", "hello")).contains("is not a JSON file"));
        assert!(err(dir.join("notes.json")).contains("is not a dfsbench result file"));
        let mut v = serde_json::to_value(&good).unwrap();
        v["schema"] = "dfsbench.result/2".into();
        assert!(err(write("v2.json", &v.to_string())).contains("has schema dfsbench.result/2"));
        // A folder: results found recursively, other JSON skipped, each file once.
        std::fs::remove_file(dir.join("v2.json")).unwrap();
        std::fs::remove_file(dir.join("text.json")).unwrap();
        let found = load(&[dir.clone(), dir.join("sub/run.json")]).unwrap();
        assert_eq!(found.len(), 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
