//! The train workload's generate loop (a worker writes its share of the dataset) and what an
//! epoch's readers share: the accelerators' shares of the shuffled order and the ranged read.

use dfsbench_backends::clock::Instant;
use dfsbench_backends::{BlockIo, BlockOp, BlockOpts, Client, Completion, FileOpts, IoEngine, OpError};

use crate::pattern::FileKey;
use crate::stats::Recorder;
use crate::worker::{JobContext, Worker};
use crate::workloads::shared::WRITE;
use crate::workloads::whole::{write_whole, ReadFailure};

use super::dataset::{Place, Shuffle};
use super::TrainJob;

/// The seed of the dataset's sizes: the same in every run with the same `--seed`, or the one
/// a kept dataset was generated with.
pub(super) fn dataset_seed(ctx: &JobContext, t: &TrainJob) -> u64 {
    match &t.kept {
        Some(k) => k.seed,
        None => super::kept::dataset_seed(ctx.seed, ctx.job_index),
    }
}

/// The seed of epoch `e`'s order.
pub(super) fn epoch_seed(ctx: &JobContext, e: u64) -> u64 {
    super::kept::dataset_seed(ctx.seed, ctx.job_index) ^ e.wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// What accelerator `a` of `accelerators` reads in an epoch of `dataset`: its share of the
/// shuffled order, `steps` batches of `batch` samples from position `first`. As DLIO (and a
/// data loader with drop_last), the samples that do not fill a batch of every accelerator are
/// left out of the epoch.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Share {
    pub first: u64,
    pub steps: u64,
}

pub(crate) fn share(samples: u64, batch: u64, accelerators: u64, a: u64) -> Share {
    let steps = samples / (batch * accelerators.max(1));
    Share {
        first: a * steps * batch,
        steps,
    }
}

/// The samples of batch `k` of the share `s` of the epoch's `order`, in order.
pub(crate) fn batch_samples(order: Shuffle, s: Share, batch: u64, k: u64) -> impl Iterator<Item = u64> {
    let first = s.first + k * batch;
    (first..first + batch).map(move |i| order.at(i))
}

/// Which accelerator worker `id` of `workers` over all ranks is, and how many there are: with
/// `active` per rank (of `per_rank`), the first `active` workers of each rank; None when it
/// sits the step out.
pub(crate) fn accelerator_of(
    id: u64,
    workers: u64,
    per_rank: Option<usize>,
    active: Option<u64>,
) -> Option<(u64, u64)> {
    match (active, per_rank) {
        (Some(a), Some(m)) => {
            let m = m as u64;
            let (rank, local) = (id / m, id % m);
            (local < a).then_some((a * (workers / m), rank * a + local))
        }
        _ => Some((workers, id)),
    }
}

impl<C: Client> Worker<C> {
    /// Write files `id`, `id + workers`, ... of the dataset.
    pub(super) async fn generate(&mut self, ctx: &JobContext, t: &TrainJob, rec: &mut Recorder<'_>) {
        let d = t.dataset(dataset_seed(ctx, t));
        let opts = FileOpts::default();
        let workers = ctx.total_workers.max(1) as u64;
        let mut f = self.id as u64;
        while f < d.files {
            let Some((intended, start)) = self.begin(rec.ctl()).await else {
                return;
            };
            t.file_path(&mut self.path, ctx.job_index, f);
            let key = FileKey {
                job: ctx.job_index as u16,
                set: 0,
                worker: 0,
                index: f,
            };
            let size = d.file_size(f);
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
                Ok(bytes) => rec.record_op(WRITE, intended, start, end, bytes),
                Err(e) => rec.error(WRITE, end, &e, &self.path, None),
            }
            f += workers;
        }
    }
}

/// Read a sample stored at `place` of the file `path`, `bs` bytes per request.
pub(super) async fn read_range<C: Client>(
    client: &mut C,
    path: &str,
    place: Place,
    bs: usize,
    done: &mut Vec<Completion>,
) -> Result<u64, ReadFailure> {
    let block = usize::try_from(place.size).unwrap_or(usize::MAX).min(bs).max(1);
    let opts = BlockOpts {
        block_size: block,
        queue_depth: 1,
        direct: false,
        create: false,
        random: true,
        engine: IoEngine::Psync,
        file_len: 0,
    };
    let mut file = client.open_block(path, opts).await.map_err(|e| (e, None))?;
    let mut at = 0;
    while at < place.size {
        let len = (place.size - at).min(block as u64) as usize;
        let offset = place.offset + at;
        file.submit(0, BlockOp::Read, offset, len)
            .map_err(|e| (e, Some(offset)))?;
        done.clear();
        file.complete(1, done).await.map_err(|e| (e, Some(offset)))?;
        for c in done.drain(..) {
            match c.result {
                Ok(n) if n == len => {}
                Ok(n) => {
                    let e = OpError::new("size", format!("read {n} bytes at offset {offset}, expected {len}"));
                    return Err((e, Some(offset)));
                }
                Err(e) => return Err((e, Some(offset))),
            }
        }
        at += len as u64;
    }
    Ok(place.size)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::{Kind, RunSettings, SharedOptions};

    fn job(files: u64, batch: u64) -> TrainJob {
        let own = super::super::Options {
            batch_size: Some(batch),
            samples_per_file: Some(3),
            sample_size: Some("4k".into()),
            sample_size_stdev: Some("1k".into()),
            ..Default::default()
        };
        let shared = SharedOptions {
            files: Some(files),
            ..Default::default()
        };
        TrainJob::validate(&own, &shared, &RunSettings::default()).unwrap()
    }

    #[test]
    fn an_epoch_reads_every_sample_once_over_its_accelerators_in_a_new_order() {
        // 20 files of 3 samples: 60 samples, 3 accelerators of batches of 5 read 4 steps each.
        let t = job(20, 5);
        let d = t.dataset(1);
        let order = |e: u64| Shuffle::new(d.samples(), 77 + e);
        let samples = |e: u64, a: u64| {
            let s = share(d.samples(), t.batch_size, 3, a);
            (0..s.steps).flat_map(move |k| batch_samples(order(e), s, t.batch_size, k))
        };
        let orders: Vec<Vec<u64>> = (0..2u64)
            .map(|e| (0..3u64).flat_map(|a| samples(e, a)).collect())
            .collect();
        for order in &orders {
            let mut sorted = order.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..60).collect::<Vec<_>>());
            let bytes: u64 = order.iter().map(|&i| d.sample_size(i)).sum();
            assert_eq!(bytes, d.bytes());
        }
        assert_ne!(orders[0], orders[1]);
    }

    #[test]
    fn a_search_step_numbers_the_first_workers_of_every_rank() {
        // 2 ranks of 4 workers, 2 active per rank: workers 0, 1, 4 and 5 are accelerators 0-3.
        let of = |id| accelerator_of(id, 8, Some(4), Some(2));
        let got: Vec<Option<(u64, u64)>> = (0..8).map(of).collect();
        assert_eq!(
            got,
            [
                Some((4, 0)),
                Some((4, 1)),
                None,
                None,
                Some((4, 2)),
                Some((4, 3)),
                None,
                None
            ]
        );
        assert_eq!(accelerator_of(5, 8, Some(4), None), Some((8, 5)));
        assert_eq!(super::super::search_steps(6), [1, 2, 4, 6]);
        assert_eq!(super::super::search_steps(4), [1, 2, 4]);
        assert_eq!(super::super::search_steps(1), [1]);
    }

    #[test]
    fn shares_are_disjoint_batches_of_the_order() {
        let s: Vec<Share> = (0..3).map(|a| share(100, 7, 3, a)).collect();
        assert_eq!(s[0], Share { first: 0, steps: 4 });
        assert_eq!(s[1].first, 28);
        assert_eq!(s[2].first, 56);
        // 3 x 4 x 7 = 84 of 100 samples: 16 do not fill a batch of every accelerator.
        assert_eq!(s[2].first + s[2].steps * 7, 84);
    }
}
