//! The mix workload: operations drawn by weight over a pool of files per worker.
//!
//! Writes overwrite (or recreate) a random slot of the pool with a new size from the
//! distribution, deletes empty a slot, and reads, stats and deletes pick a slot that holds a
//! file, so the pool stays consistent however the operations interleave.

use dfsbench_backends::clock::Instant;

use rand::{Rng, RngCore};

use dfsbench_backends::{Capability, Client, FileOpts};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::cache::Seen;
use crate::data::{DataShape, Written};
use crate::dist::{Access, Mix, MixOp, Picker, SizeDist};
use crate::error::ConfigError;
use crate::pattern::FileKey;
use crate::stats::{Recorder, Reread};
use crate::worker::{push_num, JobContext, Worker};
use crate::workloads::shared::size_or;
use crate::workloads::whole::{chunk_for, read_whole, whole_file_needs, write_whole};
use crate::workloads::Phase;
use crate::workloads::{Kind, SharedOptions, Step};
use crate::workloads::{RunSettings, Timing};

/// Most files in a mix job's pool per worker: the pool's sizes are kept in memory (16 bytes
/// a file).
pub(crate) const MAX_MIX_FILES: u64 = 1 << 24;

/// The mix workload's own flags and workload-file keys.
#[derive(clap::Args, Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[group(id = "mix-options")]
pub struct Options {
    /// Operation mix by weight: read=80,write=20 or get=45,put=15,stat=30,delete=5,list=5 (mix).
    #[arg(long, value_delimiter = ',', value_name = "LIST", help_heading = "mix and iterate")]
    pub mix: Option<Vec<String>>,

    /// Operations per worker when not time-based (mix) [default: 1000].
    #[arg(long, value_name = "N", help_heading = "mix and iterate")]
    pub ops: Option<u64>,
}

/// One phase of operations drawn by weight (DFS-Perf's mixture, warp's mixed) over a pool of
/// files per worker whose sizes follow a distribution.
#[derive(Debug, Clone, Serialize)]
pub struct MixJob {
    pub mix: Mix,
    pub sizes: SizeDist,
    /// Files in each worker's pool, written before the mix starts.
    pub files: u64,
    /// Operations per worker when the job is not time-based.
    pub ops: u64,
    pub bs: usize,
    pub direct: bool,
    pub fsync: bool,
    #[serde(flatten)]
    pub data: DataShape,
    /// Which slot of the pool each operation picks; None: any, equally likely.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub random_distribution: Option<Access>,
}

/// The unmeasured fill of the pools, then the mix.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MixStep {
    Fill,
    Mix,
}

impl Step for MixStep {
    fn reads_data(self) -> bool {
        self == MixStep::Mix
    }
}

/// Recorder classes of the mix phase, in [`MixOp::ALL`] order.
const MIX_CLASSES: &[&str] = &{
    let mut names = [""; 5];
    let mut i = 0;
    while i < MixOp::ALL.len() {
        names[i] = MixOp::ALL[i].name();
        i += 1;
    }
    names
};

impl Kind for MixJob {
    const NAME: &'static str = "mix";
    const SHARED: &'static [&'static str] = &[
        "files",
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
    type Step = MixStep;

    fn validate(own: &Options, s: &SharedOptions, run: &RunSettings) -> Result<MixJob, ConfigError> {
        let mix = Mix::parse(
            own.mix
                .as_deref()
                .unwrap_or(&["read=80".to_string(), "write=20".to_string()]),
        )?;
        let sizes = match (&s.sizes, &s.file_size) {
            (Some(_), Some(_)) => return Err("give either sizes or file_size, not both".into()),
            (Some(list), None) => SizeDist::parse(list)?,
            (None, fs) => SizeDist::Fixed {
                size: size_or("file_size", fs.as_deref(), 64 << 10)?,
            },
        };
        let files = s.files.unwrap_or(100);
        if files == 0 || files > MAX_MIX_FILES {
            return Err(ConfigError::value(
                "files",
                files,
                format!("the mix needs a pool of 1 to {MAX_MIX_FILES} files per worker (e.g. files = 100)"),
            ));
        }
        let ops = own.ops.unwrap_or(1000);
        if ops == 0 {
            return Err(ConfigError::value(
                "ops",
                0,
                "give the operations per worker, or a duration",
            ));
        }
        Ok(MixJob {
            mix,
            sizes,
            files,
            ops,
            bs: s.block_size(1 << 20)?,
            direct: s.direct.unwrap_or(false),
            fsync: s.fsync.unwrap_or(false),
            data: s.data_shape(run)?,
            random_distribution: s.access()?,
        })
    }

    fn phases(&self, index: usize, job: &Timing) -> Vec<Phase> {
        let fill_params = vec![
            ("files_per_worker", json!(self.files)),
            ("sizes", json!(self.sizes)),
            ("bs", json!(self.bs)),
        ];
        let label = format!("fill {} files", self.files);
        let fill = Phase::new(index, job, MixStep::Fill, "fill", label, &["write"], fill_params)
            .preparation()
            .counted(self.files);
        let weights = self.mix.0.iter().map(|(op, w)| (op.name(), w));
        let mut params = vec![
            (
                "mix",
                json!(weights.clone().collect::<std::collections::BTreeMap<_, _>>()),
            ),
            ("sizes", json!(self.sizes)),
            ("files_per_worker", json!(self.files)),
            ("bs", json!(self.bs)),
        ];
        if job.duration.is_none() {
            params.push(("ops_per_worker", json!(self.ops)));
        }
        let label = format!(
            "mix {}",
            weights.map(|(op, w)| format!("{op}={w}")).collect::<Vec<_>>().join(",")
        );
        vec![
            fill,
            Phase::new(index, job, MixStep::Mix, "mix", label, MIX_CLASSES, params).counted(self.ops),
        ]
    }

    fn needs(&self) -> Vec<Capability> {
        whole_file_needs(self.direct, self.fsync)
    }

    fn setup_dirs(&self, index: usize, workers: usize) -> Box<dyn Iterator<Item = String> + '_> {
        let base = mix_dir(index);
        Box::new(std::iter::once(base.clone()).chain((0..workers).map(move |w| format!("{base}/w{w}"))))
    }

    fn files_read(&self, index: usize, step: MixStep, owner: usize, _: &[u64]) -> Vec<String> {
        if step != MixStep::Mix {
            return Vec::new();
        }
        let mut path = String::new();
        (0..self.files)
            .map(|slot| {
                slot_path(&mut path, index, owner, slot);
                path.clone()
            })
            .collect()
    }

    async fn run<C: Client>(
        &self,
        worker: &mut Worker<C>,
        ctx: &JobContext,
        step: MixStep,
        _: Option<u64>,
        rec: &mut Recorder<'_>,
    ) {
        let mut pool: Pool = worker.take_state();
        match step {
            MixStep::Fill => worker.run_mix_fill(ctx, self, &mut pool.0, rec).await,
            MixStep::Mix => worker.run_mix(ctx, self, &mut pool.0, rec).await,
        }
        worker.keep_state(pool);
    }

    fn file_bs(&self) -> usize {
        chunk_for(self.bs, self.sizes.max())
    }

    fn written(&self) -> Written {
        Written {
            shape: self.data,
            block: self.bs,
            chunk: self.file_bs(),
        }
    }
}

/// What a worker keeps of the mix between phases: the sizes of its pool's files by slot; None
/// where a delete removed the file.
#[derive(Default)]
struct Pool(Vec<Option<u64>>);

/// The job's directory; worker `w` keeps its pool in `<dir>/w<w>`.
fn mix_dir(job: usize) -> String {
    format!("j{job}-mix")
}

fn pool_dir(s: &mut String, job: usize, worker: usize) {
    s.clear();
    s.push('j');
    push_num(s, job as u64);
    s.push_str("-mix/w");
    push_num(s, worker as u64);
}

fn slot_path(s: &mut String, job: usize, worker: usize, slot: u64) {
    pool_dir(s, job, worker);
    s.push_str("/f");
    push_num(s, slot);
}

/// A slot that holds a file, probing from one `picker` picks; None when the pool is empty.
fn live_slot(pool: &[Option<u64>], picker: &Picker, rng: &mut impl Rng) -> Option<(usize, u64)> {
    let n = pool.len();
    if n == 0 {
        return None;
    }
    let from = picker.pick(rng) as usize % n;
    (0..n)
        .map(|k| (from + k) % n)
        .find_map(|i| pool[i].map(|size| (i, size)))
}

impl<C: Client> Worker<C> {
    /// Write the worker's pool before the mix.
    async fn run_mix_fill(
        &mut self,
        ctx: &JobContext,
        m: &MixJob,
        pool: &mut Vec<Option<u64>>,
        rec: &mut Recorder<'_>,
    ) {
        let opts = FileOpts {
            direct: m.direct,
            fsync: m.fsync,
        };
        // The pool grows with the files written, not with the count asked for: a huge
        // `files` costs memory only as fast as the storage takes files.
        pool.clear();
        for slot in 0..m.files {
            let Some((intended, start)) = self.begin(rec.ctl()).await else {
                break;
            };
            let size = m.sizes.sample(&mut self.rng);
            slot_path(&mut self.path, ctx.job_index, self.id, slot);
            let key = self.mix_key(ctx, slot);
            let r = write_whole(
                &mut self.client,
                &self.path,
                size,
                opts,
                &mut self.buf,
                self.content,
                ctx.data.as_ref(),
                key,
            )
            .await;
            let end = Instant::now();
            rec.add_retries(self.client.take_retries());
            match r {
                Ok(bytes) => {
                    pool.push(Some(size));
                    rec.record_op(0, intended, start, end, bytes);
                }
                Err(e) => {
                    pool.push(None);
                    rec.error(0, end, &e, &self.path, None)
                }
            }
        }
    }

    /// The slot `op` works on and the size it writes; None when the pool has nothing for it.
    fn mix_target(&mut self, m: &MixJob, pool: &[Option<u64>], op: MixOp, picker: &Picker) -> Option<(usize, u64)> {
        match op {
            // Writes overwrite or refill a slot of the pool the fill phase made.
            MixOp::Write if pool.is_empty() => None,
            MixOp::Write => Some((
                picker.pick(&mut self.rng) as usize % pool.len(),
                m.sizes.sample(&mut self.rng),
            )),
            MixOp::List => Some((0, 0)),
            // None once deletes emptied the pool: nothing to read until a write refills it.
            MixOp::Read | MixOp::Stat | MixOp::Delete => live_slot(pool, picker, &mut self.rng),
        }
    }

    fn mix_key(&self, ctx: &JobContext, slot: u64) -> FileKey {
        FileKey {
            job: ctx.job_index as u16,
            set: 0,
            worker: self.id as u32,
            index: slot,
        }
    }

    async fn run_mix(&mut self, ctx: &JobContext, m: &MixJob, pool: &mut [Option<u64>], rec: &mut Recorder<'_>) {
        let opts = FileOpts {
            direct: m.direct,
            fsync: m.fsync,
        };
        let count = if ctx.duration.is_some() { u64::MAX } else { m.ops };
        let mut done = 0u64;
        let access = m.random_distribution.clone().unwrap_or(Access::Random);
        let picker = Picker::new(access, pool.len() as u64, self.rng.next_u64());
        let mut seen = Seen::new(ctx, m.direct);
        while done < count {
            let op = m.mix.pick(&mut self.rng);
            let target = self.mix_target(m, pool, op, &picker);
            // Before the operation's clock starts: a file read again, or read after a write of
            // this phase, is dropped again.
            let reread = match (op, target) {
                (MixOp::Read, Some((slot, _))) => {
                    slot_path(&mut self.path, ctx.job_index, self.id, slot as u64);
                    seen.ready(&mut self.client, &self.path, slot as u64).await
                }
                _ => Reread::First,
            };
            let Some((intended, start)) = self.begin(rec.ctl()).await else {
                break;
            };
            done += 1;
            let Some((slot, size)) = target else {
                continue;
            };
            rec.note_reread(reread);
            if op == MixOp::Write {
                seen.wrote(slot as u64);
            }
            match op {
                MixOp::List => pool_dir(&mut self.path, ctx.job_index, self.id),
                _ => slot_path(&mut self.path, ctx.job_index, self.id, slot as u64),
            }
            let key = self.mix_key(ctx, slot as u64);
            let (pattern, content) = (self.pattern, self.content);
            let r = match op {
                MixOp::Read => {
                    let r = read_whole(&mut self.client, &self.path, size, opts, &mut self.buf, pattern, key).await;
                    r.map(|(bytes, first_byte)| {
                        rec.note_read(start, bytes, first_byte, pattern.is_some());
                        bytes
                    })
                }
                MixOp::Write => {
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
                MixOp::Stat => self.client.stat(&self.path).await.map(|_| 0).map_err(|e| (e, None)),
                MixOp::Delete => self.client.delete(&self.path).await.map(|_| 0).map_err(|e| (e, None)),
                MixOp::List => match self.client.list(&self.path).await {
                    Ok(n) => {
                        rec.add_items(n);
                        Ok(0)
                    }
                    Err(e) => Err((e, None)),
                },
            };
            let end = Instant::now();
            rec.add_retries(self.client.take_retries());
            match r {
                Ok(bytes) => {
                    match op {
                        MixOp::Write => pool[slot] = Some(size),
                        MixOp::Delete => pool[slot] = None,
                        _ => {}
                    }
                    rec.record_op(op.class(), intended, start, end, bytes);
                }
                Err((e, offset)) => rec.error(op.class(), end, &e, &self.path, offset),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::SeedableRng;

    #[test]
    fn live_slots_skip_deleted_files() {
        let mut rng = SmallRng::seed_from_u64(1);
        let pool = [None, Some(10), None, Some(30)];
        let picker = Picker::new(Access::Random, 4, 0);
        for _ in 0..100 {
            let (slot, size) = live_slot(&pool, &picker, &mut rng).unwrap();
            assert_eq!(pool[slot], Some(size));
        }
        assert_eq!(live_slot(&[None, None], &picker, &mut rng), None);
        let mut s = String::new();
        slot_path(&mut s, 1, 2, 3);
        assert_eq!(s, "j1-mix/w2/f3");
    }
}
