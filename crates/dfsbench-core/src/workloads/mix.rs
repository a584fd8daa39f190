//! The mix workload: operations drawn by weight over a pool of files per worker.
//!
//! Writes overwrite (or recreate) a random slot of the pool with a new size from the
//! distribution, deletes empty a slot, and reads, stats and deletes pick a slot that holds a
//! file, so the pool stays consistent however the operations interleave.

use dfsbench_backends::clock::Instant;

use rand::Rng;

use dfsbench_backends::{Client, FileOpts};

use crate::config::{MixJob, Workload};
use crate::dist::MixOp;
use crate::pattern::FileKey;
use crate::stats::Recorder;
use crate::worker::{push_num, JobContext, Worker};
use crate::workloads::whole::{read_whole, write_whole};

/// The job's directory; worker `w` keeps its pool in `<dir>/w<w>`.
pub(crate) fn mix_dir(job: usize) -> String {
    format!("j{job}-mix")
}

fn pool_dir(s: &mut String, job: usize, worker: usize) {
    s.clear();
    s.push('j');
    push_num(s, job as u64);
    s.push_str("-mix/w");
    push_num(s, worker as u64);
}

pub(super) fn slot_path(s: &mut String, job: usize, worker: usize, slot: u64) {
    pool_dir(s, job, worker);
    s.push_str("/f");
    push_num(s, slot);
}

fn mix_job<'a>(ctx: &'a JobContext<'_>) -> &'a MixJob {
    match &ctx.job.workload {
        Workload::Mix(m) => m,
        _ => unreachable!("mix phase of a mix job"),
    }
}

/// A slot that holds a file, probing from a random one; None when the pool is empty.
fn live_slot(pool: &[Option<u64>], rng: &mut impl Rng) -> Option<(usize, u64)> {
    let n = pool.len();
    if n == 0 {
        return None;
    }
    let from = rng.gen_range(0..n);
    (0..n)
        .map(|k| (from + k) % n)
        .find_map(|i| pool[i].map(|size| (i, size)))
}

impl<C: Client> Worker<C> {
    /// Write the worker's pool before the mix.
    pub(crate) async fn run_mix_fill(&mut self, ctx: &JobContext<'_>, rec: &mut Recorder<'_>) {
        let m = mix_job(ctx);
        let opts = FileOpts {
            direct: m.direct,
            fsync: m.fsync,
        };
        // The pool grows with the files written, not with the count asked for: a huge
        // `files` costs memory only as fast as the storage takes files.
        self.pool = Vec::new();
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
                self.pattern,
                key,
            )
            .await;
            let end = Instant::now();
            rec.add_retries(self.client.take_retries());
            match r {
                Ok(bytes) => {
                    self.pool.push(Some(size));
                    rec.record_op(0, intended, start, end, bytes);
                }
                Err(e) => {
                    self.pool.push(None);
                    rec.error(0, end, &e, &self.path, None)
                }
            }
        }
    }

    fn mix_key(&self, ctx: &JobContext<'_>, slot: u64) -> FileKey {
        FileKey {
            job: ctx.job_index as u16,
            set: 0,
            worker: self.id as u32,
            index: slot,
        }
    }

    pub(crate) async fn run_mix(&mut self, ctx: &JobContext<'_>, rec: &mut Recorder<'_>) {
        let m = mix_job(ctx);
        let opts = FileOpts {
            direct: m.direct,
            fsync: m.fsync,
        };
        let count = if ctx.job.duration.is_some() { u64::MAX } else { m.ops };
        let mut done = 0u64;
        while done < count {
            let Some((intended, start)) = self.begin(rec.ctl()).await else {
                break;
            };
            done += 1;
            let op = m.mix.pick(&mut self.rng);
            let (slot, size) = match op {
                // Writes overwrite or refill a slot of the pool the fill phase made.
                MixOp::Write if self.pool.is_empty() => continue,
                MixOp::Write => (self.rng.gen_range(0..self.pool.len()), m.sizes.sample(&mut self.rng)),
                MixOp::List => (0, 0),
                MixOp::Read | MixOp::Stat | MixOp::Delete => match live_slot(&self.pool, &mut self.rng) {
                    Some(found) => found,
                    // Deletes emptied the pool: nothing to read until a write refills it.
                    None => continue,
                },
            };
            match op {
                MixOp::List => pool_dir(&mut self.path, ctx.job_index, self.id),
                _ => slot_path(&mut self.path, ctx.job_index, self.id, slot as u64),
            }
            let key = self.mix_key(ctx, slot as u64);
            let pattern = self.pattern;
            let r = match op {
                MixOp::Read => {
                    let r = read_whole(&mut self.client, &self.path, size, opts, &mut self.buf, pattern, key).await;
                    r.map(|(bytes, first_byte)| {
                        rec.note_read(start, bytes, first_byte, pattern.is_some());
                        bytes
                    })
                }
                MixOp::Write => write_whole(&mut self.client, &self.path, size, opts, &mut self.buf, pattern, key)
                    .await
                    .map_err(|e| (e, None)),
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
                        MixOp::Write => self.pool[slot] = Some(size),
                        MixOp::Delete => self.pool[slot] = None,
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
        for _ in 0..100 {
            let (slot, size) = live_slot(&pool, &mut rng).unwrap();
            assert_eq!(pool[slot], Some(size));
        }
        assert_eq!(live_slot(&[None, None], &mut rng), None);
        let mut s = String::new();
        slot_path(&mut s, 1, 2, 3);
        assert_eq!(s, "j1-mix/w2/f3");
    }
}
