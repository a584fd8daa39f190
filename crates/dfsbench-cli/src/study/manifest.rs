//! `study.json`: which study ran at which scale on which systems, and where each point's result
//! file is (or why there is none). Tables are rendered from it and the result files alone.

use std::path::Path;

use serde::{Deserialize, Serialize};

pub const SCHEMA: &str = "dfsbench.study/1";

fn masked<S: serde::Serializer>(target: &str, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&dfsbench_backends::redact::redact(target))
}
pub const FILE: &str = "study.json";

#[derive(Serialize, Deserialize)]
pub struct Manifest {
    pub schema: String,
    pub study: String,
    pub study_id: String,
    pub scale: f64,
    /// `--nodes`: the client node counts of the node points (empty: this machine only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<usize>,
    /// `--launcher`, as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launcher: Option<String>,
    pub started_at: String,
    /// `running`, `complete` or `interrupted`.
    pub status: String,
    pub systems: Vec<System>,
    pub points: Vec<PointRecord>,
}

#[derive(Serialize, Deserialize, Clone)]
pub struct System {
    pub label: String,
    /// The target as given (the study runs it); study.json keeps it masked.
    #[serde(serialize_with = "masked")]
    pub target: String,
    /// The LocalFS column the study added: a directory of this machine, so a single-node
    /// baseline that points over nodes skip.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub local_baseline: bool,
    /// The lab behind a `lab:` target, whose nodes the points with faults take out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lab: Option<String>,
    /// A lab target's credentials, set for its points and never written down.
    #[serde(skip)]
    pub env: Vec<(&'static str, String)>,
    /// `lab:SPEC` as given: the target of points run as child processes, which resolve it
    /// again and so watch the lab's daemons as this process does.
    #[serde(skip)]
    pub lab_target: Option<String>,
}

#[derive(Serialize, Deserialize)]
pub struct PointRecord {
    pub id: String,
    pub params: String,
    pub runs: Vec<RunRecord>,
}

/// One point on one system: its result file (relative to the study directory), or why it has
/// none.
#[derive(Serialize, Deserialize, Default)]
pub struct RunRecord {
    pub system: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Not run because the backend lacks what the point needs (e.g. positional writes on S3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    /// The `dfsbench run` command of a point of several processes, which ran as a child.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Something to know when reading its numbers, e.g. that the launcher put every process on
    /// one host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

impl Manifest {
    /// Write atomically, so a killed study leaves the last complete manifest.
    pub fn save(&self, dir: &Path) -> std::io::Result<()> {
        let text = serde_json::to_string_pretty(self).expect("manifest serializes");
        dfsbench_result::files::write_output(&dir.join(FILE), text.as_bytes())
    }

    pub fn load(dir: &Path) -> Result<Manifest, String> {
        let path = dir.join(FILE);
        let text = dfsbench_result::files::read_bounded(&path, dfsbench_result::files::MAX_RESULT_FILE)
            .map_err(|e| format!("{e}: give a directory written by `dfsbench study`"))?;
        let m: Manifest =
            serde_json::from_slice(&text).map_err(|e| format!("{} is not a study manifest: {e}", path.display()))?;
        if m.schema != SCHEMA {
            return Err(format!(
                "{} has schema {}, this dfsbench reads {SCHEMA}",
                path.display(),
                m.schema
            ));
        }
        Ok(m)
    }
}
