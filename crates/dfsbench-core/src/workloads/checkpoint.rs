//! MLPerf Storage's checkpoint workload: every rank (a worker here) writes its shard of a
//! model's checkpoint, fsync-ed, as one or several files; the cached pages are dropped, and
//! every rank reads its shard back. Repeated K times; a checkpoint's duration is its slowest
//! rank's (the phase's), as MLPerf reports it. On object stores a shard's file is one upload,
//! multipart in the target's `part_size` parts (`s3://...?part_size=16m`).

use dfsbench_backends::clock::Instant;
use dfsbench_backends::{Capability, Client, FileOpts};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::data::{DataShape, Written};
use crate::error::ConfigError;
use crate::pattern::FileKey;
use crate::stats::Recorder;
use crate::units::bytes;
use crate::worker::{push_num, JobContext, Worker};
use crate::workloads::shared::{size_key, RW_CLASSES};
use crate::workloads::whole::{chunk_for, read_whole, whole_file_needs, write_whole};
use crate::workloads::Phase;
use crate::workloads::{Kind, SharedOptions, Step};
use crate::workloads::{RunSettings, Timing};

/// Most checkpoints of a job: each is three phases.
const MAX_REPEATS: u64 = 1_000;

/// A model's checkpoint as MLPerf Storage sizes it: its total bytes and the ranks (GPUs,
/// TP x PP x DP) that write it. mlcommons/storage, Submission_guidelines.md, "Table 2 LLM
/// models" (commit caa90c9): 105 GB on 8, 912 GB on 64, 5.29 TB on 512 and 18 TB on 1024;
/// its workload files (configs/dlio/workload/llama3_*.yaml) write and read 10 checkpoints,
/// fsync-ed.
struct Model {
    name: &'static str,
    bytes: u64,
    ranks: u64,
}

const MODELS: [Model; 4] = [
    Model {
        name: "llama3-8b",
        bytes: 105_000_000_000,
        ranks: 8,
    },
    Model {
        name: "llama3-70b",
        bytes: 912_000_000_000,
        ranks: 64,
    },
    Model {
        name: "llama3-405b",
        bytes: 5_290_000_000_000,
        ranks: 512,
    },
    Model {
        name: "llama3-1t",
        bytes: 18_000_000_000_000,
        ranks: 1024,
    },
];

/// The ranks that write a preset's whole checkpoint; None for an unknown preset.
pub fn preset_ranks(name: &str) -> Option<u64> {
    MODELS.iter().find(|m| m.name == name).map(|m| m.ranks)
}

/// Checkpoints written and read by the presets (num_checkpoints_write/read).
const MODEL_REPEATS: u64 = 10;

/// The checkpoint workload's own flags and workload-file keys.
#[derive(clap::Args, Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[group(id = "checkpoint-options")]
pub struct Options {
    /// Bytes of each rank's (worker's) shard, instead of a preset's.
    #[arg(long, value_name = "SIZE", help_heading = "train and checkpoint")]
    pub checkpoint_size: Option<String>,

    /// Files each rank writes its shard as [default: 1].
    #[arg(long, value_name = "N", help_heading = "train and checkpoint")]
    pub checkpoint_files: Option<u64>,

    /// Checkpoints written and read back, one after another [default: 10 with a preset, else 3].
    #[arg(long, value_name = "K", help_heading = "train and checkpoint")]
    pub checkpoints: Option<u64>,
}

/// Each worker writes its shard, fsync-ed, then reads it back, K times.
#[derive(Debug, Clone, Serialize)]
pub struct CheckpointJob {
    /// The model whose shard size this is, when a preset gave it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preset: Option<&'static str>,
    /// The ranks that write the preset's whole checkpoint.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preset_ranks: Option<u64>,
    /// Bytes of each worker's shard.
    pub shard_size: u64,
    pub files: u64,
    pub checkpoints: u64,
    pub bs: usize,
}

/// Checkpoint `n`: written, read back, or removed (unmeasured) to make room for the next.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CheckpointStep {
    Write(u64),
    Read(u64),
    Remove(u64),
}

impl Step for CheckpointStep {
    fn reads_data(self) -> bool {
        matches!(self, CheckpointStep::Read(_))
    }
}

impl Kind for CheckpointJob {
    const NAME: &'static str = "checkpoint";
    const SHARED: &'static [&'static str] = &["preset", "scale", "bs"];
    const TIMED: bool = false;
    type Options = Options;
    type Step = CheckpointStep;

    fn validate(own: &Options, s: &SharedOptions, _: &RunSettings) -> Result<CheckpointJob, ConfigError> {
        let model = match s.preset.as_deref() {
            Some(name) => Some(MODELS.iter().find(|m| m.name == name).ok_or_else(|| {
                let names: Vec<&str> = MODELS.iter().map(|m| m.name).collect();
                ConfigError::value("preset", format!("'{name}'"), format!("choose {}", names.join(", ")))
            })?),
            None => None,
        };
        let shard_size = match (model, own.checkpoint_size.as_deref()) {
            (Some(_), Some(_)) => return Err("give either preset or checkpoint_size, not both".into()),
            (None, None) => {
                return Err(
                    "give the shard size per rank: --checkpoint-size SIZE, or --preset llama3-8b (with --scale)".into(),
                )
            }
            (Some(m), None) => ((m.bytes / m.ranks) as f64 * s.scale()?).round() as u64,
            (None, Some(t)) if s.scale.is_some() => {
                return Err(format!("scale applies to a preset: give checkpoint_size {t} alone, or a preset").into())
            }
            (None, Some(t)) => size_key("checkpoint_size", t)?,
        };
        if shard_size == 0 {
            return Err(ConfigError::value(
                "checkpoint_size",
                0,
                "give a shard of at least 1 byte",
            ));
        }
        let files = own.checkpoint_files.unwrap_or(1);
        if files == 0 || files > shard_size {
            return Err(ConfigError::value(
                "checkpoint_files",
                files,
                format!("give between 1 and the shard's bytes ({shard_size})"),
            ));
        }
        let checkpoints = own
            .checkpoints
            .unwrap_or(if model.is_some() { MODEL_REPEATS } else { 3 });
        if !(1..=MAX_REPEATS).contains(&checkpoints) {
            return Err(ConfigError::value(
                "checkpoints",
                checkpoints,
                format!("give between 1 and {MAX_REPEATS}"),
            ));
        }
        Ok(CheckpointJob {
            preset: model.map(|m| m.name),
            preset_ranks: model.map(|m| m.ranks),
            shard_size,
            files,
            checkpoints,
            bs: s.block_size(1 << 20)?,
        })
    }

    fn phases(&self, index: usize, job: &Timing) -> Vec<Phase> {
        let mut out = Vec::new();
        for n in 0..self.checkpoints {
            let params = || {
                vec![
                    ("checkpoint", json!(n)),
                    ("shard_size", json!(self.shard_size)),
                    ("files_per_worker", json!(self.files)),
                    ("bs", json!(self.bs)),
                ]
            };
            let size = bytes(self.shard_size as f64);
            let steps = [
                (CheckpointStep::Write(n), "write", &RW_CLASSES[1..]),
                (CheckpointStep::Read(n), "read", &RW_CLASSES[..1]),
            ];
            for (step, name, classes) in steps {
                let label = format!("checkpoint {n} {name} {size}");
                out.push(Phase::new(index, job, step, name, label, classes, params()).counted(self.files));
            }
            let label = format!("checkpoint {n} remove");
            let remove = Phase::new(
                index,
                job,
                CheckpointStep::Remove(n),
                "delete",
                label,
                &["delete"],
                params(),
            );
            out.push(remove.preparation());
        }
        out
    }

    fn needs(&self) -> Vec<Capability> {
        whole_file_needs(false, true)
    }

    fn setup_dirs(&self, index: usize, _: usize) -> Box<dyn Iterator<Item = String> + '_> {
        let base = format!("j{index}-ckpt");
        Box::new(std::iter::once(base.clone()).chain((0..self.checkpoints).map(move |n| format!("{base}/c{n}"))))
    }

    fn files_read(&self, index: usize, step: CheckpointStep, owner: usize, _: &[u64]) -> Vec<String> {
        let CheckpointStep::Read(n) = step else {
            return Vec::new();
        };
        let mut path = String::new();
        (0..self.files)
            .map(|i| {
                file_path(&mut path, index, n, owner, i);
                path.clone()
            })
            .collect()
    }

    async fn run<C: Client>(
        &self,
        worker: &mut Worker<C>,
        ctx: &JobContext,
        step: CheckpointStep,
        _: Option<u64>,
        rec: &mut Recorder<'_>,
    ) {
        worker.run_checkpoint(ctx, self, step, rec).await
    }

    fn file_bs(&self) -> usize {
        chunk_for(self.bs, self.file_size(self.files - 1))
    }

    fn written(&self) -> Written {
        Written {
            shape: DataShape::default(),
            block: self.bs,
            chunk: self.file_bs(),
        }
    }
}

impl CheckpointJob {
    /// Bytes of file `i` of a shard: equal parts, the last one with the remainder.
    pub(crate) fn file_size(&self, i: u64) -> u64 {
        let part = self.shard_size / self.files;
        if i + 1 == self.files {
            self.shard_size - part * (self.files - 1)
        } else {
            part
        }
    }
}

/// `j<job>-ckpt/c<n>/w<worker>.f<i>`.
fn file_path(s: &mut String, job: usize, n: u64, worker: usize, i: u64) {
    s.clear();
    s.push('j');
    push_num(s, job as u64);
    s.push_str("-ckpt/c");
    push_num(s, n);
    s.push_str("/w");
    push_num(s, worker as u64);
    s.push_str(".f");
    push_num(s, i);
}

impl<C: Client> Worker<C> {
    async fn run_checkpoint(
        &mut self,
        ctx: &JobContext,
        c: &CheckpointJob,
        step: CheckpointStep,
        rec: &mut Recorder<'_>,
    ) {
        let opts = FileOpts {
            direct: false,
            fsync: true,
        };
        let (pattern, content) = (self.pattern, self.content);
        for i in 0..c.files {
            let (CheckpointStep::Write(n) | CheckpointStep::Read(n) | CheckpointStep::Remove(n)) = step;
            file_path(&mut self.path, ctx.job_index, n, self.id, i);
            let key = FileKey {
                job: ctx.job_index as u16,
                set: n as u16,
                worker: self.id as u32,
                index: i,
            };
            let size = c.file_size(i);
            let Some((intended, start)) = self.begin(rec.ctl()).await else {
                return;
            };
            let r = match step {
                CheckpointStep::Write(_) => {
                    let data = ctx.data.as_ref();
                    write_whole(
                        &mut self.client,
                        &self.path,
                        size,
                        opts,
                        &mut self.buf,
                        content,
                        data,
                        key,
                    )
                    .await
                    .map_err(|e| (e, None))
                }
                CheckpointStep::Read(_) => {
                    let r = read_whole(&mut self.client, &self.path, size, opts, &mut self.buf, pattern, key).await;
                    r.map(|(bytes, first_byte)| {
                        rec.note_read(start, bytes, first_byte, pattern.is_some());
                        bytes
                    })
                }
                CheckpointStep::Remove(_) => self.client.delete(&self.path).await.map(|_| 0).map_err(|e| (e, None)),
            };
            let end = Instant::now();
            rec.add_retries(self.client.take_retries());
            match r {
                Ok(bytes) => rec.record_op(0, intended, start, end, bytes),
                Err((e, offset)) => rec.error(0, end, &e, &self.path, offset),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(own: Options, preset: Option<&str>, scale: Option<f64>) -> Result<CheckpointJob, ConfigError> {
        let s = SharedOptions {
            preset: preset.map(str::to_string),
            scale,
            ..Default::default()
        };
        CheckpointJob::validate(&own, &s, &RunSettings::default())
    }

    #[test]
    fn presets_give_a_rank_its_share_of_the_model_scaled() {
        let j = job(Options::default(), Some("llama3-8b"), Some(0.001)).unwrap();
        // 105 GB over 8 ranks, a thousandth of it.
        assert_eq!(j.shard_size, 13_125_000);
        assert_eq!((j.checkpoints, j.preset_ranks), (10, Some(8)));
        let j = job(Options::default(), Some("llama3-1t"), None).unwrap();
        assert_eq!(j.shard_size, 18_000_000_000_000 / 1024);
        assert!(job(Options::default(), None, None).is_err());
        assert!(job(Options::default(), Some("gpt-4"), None).is_err());
    }

    #[test]
    fn a_shard_is_split_into_files_that_add_up_to_it() {
        let own = Options {
            checkpoint_size: Some("10001".into()),
            checkpoint_files: Some(4),
            ..Default::default()
        };
        let j = job(own, None, None).unwrap();
        let sizes: Vec<u64> = (0..4).map(|i| j.file_size(i)).collect();
        assert_eq!(sizes, [2500, 2500, 2500, 2501]);
        let mut s = String::new();
        file_path(&mut s, 0, 2, 5, 3);
        assert_eq!(s, "j0-ckpt/c2/w5.f3");
    }
}
