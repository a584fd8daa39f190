//! Whole-file phases: write N files of size S (open, write, close), read them, delete them.

use dfsbench_backends::clock::Instant;

use dfsbench_backends::{Capability, Client, FileOpts};
use rand::RngCore;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::cache::Seen;
use crate::data::{DataShape, Written};
use crate::dist::{Access, Picker};
use crate::error::ConfigError;
use crate::pattern::FileKey;
use crate::stats::{Recorder, Reread};
use crate::units::format_size;
use crate::worker::{push_num, JobContext, Worker};
use crate::workloads::shared::{parse_phases, size_key, size_or};
use crate::workloads::whole::{chunk_for, read_whole, whole_file_needs, write_whole};
use crate::workloads::Phase;
use crate::workloads::{Kind, SharedOptions, Step};
use crate::workloads::{RunSettings, Timing};

/// The files workload has no keys of its own: it reads the shared file keys.
#[derive(clap::Args, Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[group(id = "files-options")]
pub struct Options {}

/// Whole-file write/read/delete over one or more (count, size) sets.
#[derive(Debug, Clone, Serialize)]
pub struct FilesJob {
    pub sets: Vec<FileSet>,
    /// Bytes per write/read call.
    pub bs: usize,
    pub direct: bool,
    pub fsync: bool,
    pub phases: Vec<FilePhase>,
    #[serde(flatten)]
    pub data: DataShape,
    /// Which file each read picks; None: every file in turn.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub random_distribution: Option<Access>,
}

/// `count` files of `size` bytes per worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct FileSet {
    pub count: u64,
    pub size: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FilePhase {
    Write,
    Read,
    Delete,
}

impl FilePhase {
    const ALL: [FilePhase; 3] = [FilePhase::Write, FilePhase::Read, FilePhase::Delete];

    pub fn name(self) -> &'static str {
        self.class()[0]
    }

    fn class(self) -> &'static [&'static str] {
        match self {
            FilePhase::Write => &["write"],
            FilePhase::Read => &["read"],
            FilePhase::Delete => &["delete"],
        }
    }
}

/// A phase of one file set.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FilesStep {
    pub phase: FilePhase,
    pub set: usize,
}

impl Step for FilesStep {
    fn reads_shuffled(self) -> bool {
        self.phase == FilePhase::Read
    }
    fn reads_data(self) -> bool {
        self.phase == FilePhase::Read
    }
    fn fills_set(self) -> Option<usize> {
        (self.phase == FilePhase::Write).then_some(self.set)
    }
}

/// Parse `COUNTxSIZE`, e.g. `1000x10k`.
fn parse_set(text: &str) -> Result<FileSet, ConfigError> {
    let (n, size) = text
        .split_once(['x', 'X', '*'])
        .ok_or_else(|| ConfigError::from(format!("sizes entry '{text}': write COUNTxSIZE, e.g. 1000x10k")))?;
    let count = n
        .trim()
        .parse()
        .map_err(|_| ConfigError::from(format!("sizes entry '{text}': '{n}' is not a file count")))?;
    let size = size_key("sizes", size)?;
    Ok(FileSet { count, size })
}

impl Kind for FilesJob {
    const NAME: &'static str = "files";
    const SHARED: &'static [&'static str] = &[
        "files",
        "phases",
        "file_size",
        "sizes",
        "bs",
        "direct",
        "fsync",
        "compress_percentage",
        "dedupe_percentage",
        "random_distribution",
    ];
    type Options = Options;
    type Step = FilesStep;

    fn validate(_: &Options, s: &SharedOptions, run: &RunSettings) -> Result<FilesJob, ConfigError> {
        let sets = match (&s.sizes, &s.file_size) {
            (Some(_), Some(_)) => return Err("give either sizes or file_size/files, not both".into()),
            (Some(list), None) => {
                if s.files.is_some() {
                    return Err("give either sizes or file_size/files, not both".into());
                }
                list.iter().map(|t| parse_set(t)).collect::<Result<Vec<_>, _>>()?
            }
            (None, fs) => vec![FileSet {
                count: s.files.unwrap_or(100),
                size: size_or("file_size", fs.as_deref(), 1 << 20)?,
            }],
        };
        if sets.is_empty() {
            return Err("sizes is empty: give COUNTxSIZE entries such as 1000x10k".into());
        }
        if let Some(bad) = sets.iter().find(|s| s.count == 0) {
            return Err(format!(
                "a set of 0 files of {}: give a file count of at least 1",
                format_size(bad.size)
            )
            .into());
        }
        let bs = s.block_size(1 << 20)?;
        let phases = match &s.phases {
            Some(list) => parse_phases(list, &FilePhase::ALL, FilePhase::name)?,
            None => FilePhase::ALL.to_vec(),
        };
        if phases[0] != FilePhase::Write {
            return Err("the files workload reads and deletes the files it wrote: keep the write phase".into());
        }
        Ok(FilesJob {
            sets,
            bs,
            direct: s.direct.unwrap_or(false),
            fsync: s.fsync.unwrap_or(false),
            phases,
            data: s.data_shape(run)?,
            random_distribution: s.access()?,
        })
    }

    fn phases(&self, index: usize, job: &Timing) -> Vec<Phase> {
        let mut out = Vec::new();
        for (set, s) in self.sets.iter().enumerate() {
            for &p in &self.phases {
                let params = vec![
                    ("file_size", json!(s.size)),
                    ("files_per_worker", json!(s.count)),
                    ("bs", json!(self.bs)),
                ];
                let label = format!("{} {}", p.name(), format_size(s.size));
                let phase = Phase::new(
                    index,
                    job,
                    FilesStep { phase: p, set },
                    p.name(),
                    label,
                    p.class(),
                    params,
                )
                .counted(s.count);
                out.push(if p == FilePhase::Delete { phase.untimed() } else { phase });
            }
        }
        out
    }

    fn needs(&self) -> Vec<Capability> {
        whole_file_needs(self.direct, self.fsync)
    }

    fn setup_dirs(&self, index: usize, workers: usize) -> Box<dyn Iterator<Item = String> + '_> {
        let base = files_dir(index);
        Box::new(std::iter::once(base.clone()).chain((0..workers).map(move |w| format!("{base}/w{w}"))))
    }

    fn files_read(&self, index: usize, step: FilesStep, owner: usize, existing: &[u64]) -> Vec<String> {
        let count = existing.get(step.set).copied().unwrap_or(0);
        let mut path = String::new();
        (0..count)
            .map(|i| {
                file_path(&mut path, index, owner, step.set, i);
                path.clone()
            })
            .collect()
    }

    async fn run<C: Client>(
        &self,
        worker: &mut Worker<C>,
        ctx: &JobContext,
        step: FilesStep,
        until: Option<u64>,
        rec: &mut Recorder<'_>,
    ) {
        worker.run_files(ctx, self, step, until, rec).await
    }

    fn file_bs(&self) -> usize {
        chunk_for(self.bs, self.sets.iter().map(|s| s.size).max().unwrap_or(0))
    }

    fn written(&self) -> Written {
        Written {
            shape: self.data,
            block: self.bs,
            chunk: self.file_bs(),
        }
    }
}

/// The job's directory; worker `w` writes in `<dir>/w<w>`.
fn files_dir(job: usize) -> String {
    format!("j{job}-files")
}

fn file_path(s: &mut String, job: usize, worker: usize, set: usize, i: u64) {
    s.clear();
    s.push('j');
    push_num(s, job as u64);
    s.push_str("-files/w");
    push_num(s, worker as u64);
    s.push_str("/s");
    push_num(s, set as u64);
    s.push_str(".f");
    push_num(s, i);
}

impl<C: Client> Worker<C> {
    async fn run_files(
        &mut self,
        ctx: &JobContext,
        f: &FilesJob,
        FilesStep { phase, set }: FilesStep,
        until: Option<u64>,
        rec: &mut Recorder<'_>,
    ) {
        let fs = f.sets[set];
        let opts = FileOpts {
            direct: f.direct,
            fsync: f.fsync,
        };
        if self.existing.len() < f.sets.len() {
            self.existing.resize(f.sets.len(), 0);
            self.lost.resize(f.sets.len(), Vec::new());
        }
        // Without time_based a write or read makes one pass, cut short at the duration.
        let time_based = ctx.duration.is_some() && ctx.time_based && phase != FilePhase::Delete;
        // Reads read `src`'s files: another rank's with --shuffle.
        let (owner, existing) = if phase == FilePhase::Read {
            (self.src, self.src_existing.get(set).copied().unwrap_or(0))
        } else {
            (self.id, self.existing[set])
        };
        // A wear-out step writes files from the existing count up to `until`.
        let count = match phase {
            FilePhase::Write if until.is_some() => until.unwrap_or(0),
            FilePhase::Write if time_based => u64::MAX,
            FilePhase::Write => fs.count,
            FilePhase::Read if time_based => u64::MAX,
            FilePhase::Read | FilePhase::Delete => existing,
        };
        // Another rank's failed writes are not known here (--shuffle): its reads may miss.
        let own = owner == self.id;
        let lost = if own {
            std::mem::take(&mut self.lost[set])
        } else {
            Vec::new()
        };
        if phase == FilePhase::Read && existing <= lost.len() as u64 {
            if own {
                self.lost[set] = lost;
            }
            return;
        }
        let (pattern, content) = (self.pattern, self.content);
        let mut done = if until.is_some() { existing } else { 0 };
        let mut newly_lost = Vec::new();
        // Reads pick files by the access distribution, when one is given.
        let picker = match (phase, &f.random_distribution) {
            (FilePhase::Read, Some(a)) => Some(Picker::new(a.clone(), existing, self.rng.next_u64())),
            _ => None,
        };
        let mut seen = Seen::new(ctx, f.direct);
        while done < count {
            // Time-based reads go round the written files again and again.
            let i = match (&picker, phase) {
                (Some(p), _) => p.pick(&mut self.rng),
                (None, FilePhase::Read) => done % existing,
                (None, _) => done,
            };
            let was_lost = phase != FilePhase::Write && lost.binary_search(&i).is_ok();
            if was_lost && phase == FilePhase::Read {
                done += 1;
                continue;
            }
            file_path(&mut self.path, ctx.job_index, owner, set, i);
            // Before the operation's clock starts: a file read again is dropped again.
            let reread = match phase {
                FilePhase::Read => seen.ready(&mut self.client, &self.path, i).await,
                _ => Reread::First,
            };
            let Some((intended, start)) = self.begin(rec.ctl()).await else {
                break;
            };
            rec.note_reread(reread);
            let key = FileKey {
                job: ctx.job_index as u16,
                set: set as u16,
                worker: owner as u32,
                index: i,
            };
            let result = match phase {
                FilePhase::Write => {
                    let data = ctx.data.as_ref();
                    write_whole(
                        &mut self.client,
                        &self.path,
                        fs.size,
                        opts,
                        &mut self.buf,
                        content,
                        data,
                        key,
                    )
                    .await
                    .map_err(|e| (e, None))
                }
                FilePhase::Read => {
                    let r = read_whole(&mut self.client, &self.path, fs.size, opts, &mut self.buf, pattern, key).await;
                    r.map(|(bytes, first_byte)| {
                        rec.note_read(start, bytes, first_byte, pattern.is_some());
                        bytes
                    })
                }
                FilePhase::Delete => self.client.delete(&self.path).await.map(|_| 0).map_err(|e| (e, None)),
            };
            let end = Instant::now();
            rec.add_retries(self.client.take_retries());
            match result {
                Ok(bytes) => rec.record_op(0, intended, start, end, bytes),
                // A failed write may have left a partial file, which the delete removes, or
                // nothing, which is no error of the delete.
                Err((e, _)) if was_lost && e.kind == "ENOENT" => {}
                Err((e, offset)) => {
                    rec.error(0, end, &e, &self.path, offset);
                    if phase == FilePhase::Write {
                        newly_lost.push(i);
                    }
                }
            }
            done += 1;
        }
        match phase {
            FilePhase::Write => {
                self.existing[set] = done;
                self.lost[set] = lost;
                self.lost[set].append(&mut newly_lost);
            }
            FilePhase::Delete => self.existing[set] = 0,
            FilePhase::Read if own => self.lost[set] = lost,
            FilePhase::Read => {}
        }
    }
}
