//! One reader of an emulated accelerator in an epoch: each accelerator is `read_threads`
//! workers (a DataLoader's workers, DLIO's read_threads), reader `r` loading the accelerator's
//! batches `r`, `r + readers` ... one sample after another, side by side with the others. They
//! meet on the accelerator's shared time line once per batch; reader 0 reports the
//! accelerator's figures when all are done.

use std::time::Duration;

use dfsbench_backends::clock::Instant;
use dfsbench_backends::{Client, FileOpts};

use crate::load::sleep_until;
use crate::pattern::FileKey;
use crate::stats::Recorder;
use crate::worker::{JobContext, Worker};
use crate::workloads::shared::READ;
use crate::workloads::whole::read_whole;

use super::dataset::{Dataset, Shuffle};
use super::lines::Shared;
use super::run::{accelerator_of, batch_samples, dataset_seed, epoch_seed, read_range, share};
use super::timeline::Timeline;
use super::TrainJob;

/// How often a reader looks again at a line it waits on: for an earlier batch another reader
/// still loads (to know when its own next one may start), or for the others to finish.
const POLL: Duration = Duration::from_micros(200);

impl<C: Client> Worker<C> {
    /// Be reader `id % read_threads` of accelerator `id / read_threads` for epoch `e`. In a
    /// search step with `active` accelerators per rank, the others' readers sit it out.
    pub(super) async fn epoch(
        &mut self,
        ctx: &JobContext,
        t: &TrainJob,
        e: u64,
        active: Option<u64>,
        rec: &mut Recorder<'_>,
    ) {
        let readers = t.read_threads.max(1);
        let (unit, reader) = (self.id as u64 / readers, self.id as u64 % readers);
        let units = ctx.total_workers as u64 / readers;
        let Some((accelerators, me)) = accelerator_of(unit, units, t.accelerators, active) else {
            return rec.sit_out();
        };
        let d = t.dataset(dataset_seed(ctx, t));
        let order = Shuffle::new(d.samples(), epoch_seed(ctx, e));
        let s = share(d.samples(), t.batch_size, accelerators, me);
        let ctl = rec.ctl();
        let line = t.lines.get(unit, (e, active), || {
            Timeline::new(Instant::now(), t.compute(), t.depth())
        });
        let mut done = Vec::new();
        let mut k = reader;
        let finished = 'batches: loop {
            if k >= s.steps {
                break true;
            }
            // The batch may load once the one `depth` before it went to compute.
            let at = loop {
                let seen = {
                    let l = line.lock();
                    (!l.stopped).then(|| l.timeline.load_at(k, Instant::now()))
                };
                match seen {
                    None => break 'batches false,
                    Some(Some(at)) => break at,
                    Some(None) => {}
                }
                if !sleep_until(Instant::now() + POLL, ctl, self.alone).await {
                    break 'batches false;
                }
            };
            if !sleep_until(at, ctl, self.alone).await {
                break false;
            }
            let (mut loaded, mut bytes) = (0, 0);
            for sample in batch_samples(order, s, t.batch_size, k) {
                let Some(n) = self.read_sample(ctx, t, &d, sample, &mut done, rec).await else {
                    break 'batches false;
                };
                loaded += n.min(1);
                bytes += n;
            }
            let ready = Instant::now();
            line.lock().timeline.loaded(k, ready, loaded, bytes, &mut |s| {
                rec.record_step(s.idle_from, s.start, s.compute)
            });
            k += readers;
        };
        self.end_epoch(&line, finished, readers, reader, rec).await;
    }

    /// Read one sample: Some(bytes read, 0 after an error, which is recorded), None when the
    /// phase stops.
    async fn read_sample(
        &mut self,
        ctx: &JobContext,
        t: &TrainJob,
        d: &Dataset,
        sample: u64,
        done: &mut Vec<dfsbench_backends::Completion>,
        rec: &mut Recorder<'_>,
    ) -> Option<u64> {
        let (intended, start) = self.begin(rec.ctl()).await?;
        let place = d.place(sample);
        t.file_path(&mut self.path, ctx.job_index, place.file);
        let r = if d.samples_per_file == 1 {
            let key = FileKey {
                job: ctx.job_index as u16,
                set: 0,
                worker: 0,
                index: place.file,
            };
            let opts = FileOpts::default();
            let r = read_whole(&mut self.client, &self.path, place.size, opts, &mut self.buf, None, key).await;
            r.map(|(n, first_byte)| {
                rec.note_read(start, n, first_byte, false);
                n
            })
        } else {
            read_range(&mut self.client, &self.path, place, t.bs, done).await
        };
        let end = Instant::now();
        rec.add_retries(self.client.take_retries());
        match r {
            Ok(n) => {
                rec.record_op(READ, intended, start, end, n);
                Some(n)
            }
            Err((err, offset)) => {
                rec.error(READ, end, &err, &self.path, offset);
                Some(0)
            }
        }
    }

    /// After its last batch (or a stop), wait for the accelerator's other readers; the epoch
    /// ends for all of them when the accelerator has computed its last batch, and reader 0
    /// reports its figures.
    async fn end_epoch(&mut self, line: &Shared, finished: bool, readers: u64, reader: u64, rec: &mut Recorder<'_>) {
        let ctl = rec.ctl();
        {
            let mut l = line.lock();
            l.done += 1;
            l.stopped |= !finished;
        }
        let all = loop {
            let (stopped, done) = {
                let l = line.lock();
                (l.stopped, l.done as u64)
            };
            if stopped || done >= readers {
                break !stopped;
            }
            if !sleep_until(Instant::now() + POLL, ctl, self.alone).await {
                line.lock().stopped = true;
                break false;
            }
        };
        let (end, figures) = {
            let l = line.lock();
            (l.timeline.end(), l.timeline.figures())
        };
        let computed = all && sleep_until(end, ctl, self.alone).await;
        rec.busy_until(if computed { end } else { Instant::now() });
        if reader == 0 {
            rec.note_accelerator(figures);
        }
    }
}
