//! Whole-file phases: write N files of size S (open, write, close), read them, delete them.

use dfsbench_backends::clock::Instant;

use dfsbench_backends::{Client, FileOpts};

use crate::config::{FilePhase, Workload};
use crate::pattern::FileKey;
use crate::stats::Recorder;
use crate::worker::{push_num, JobContext, Worker};
use crate::workloads::whole::{read_whole, write_whole};

/// The job's directory; worker `w` writes in `<dir>/w<w>`.
pub(crate) fn files_dir(job: usize) -> String {
    format!("j{job}-files")
}

pub(super) fn file_path(s: &mut String, job: usize, worker: usize, set: usize, i: u64) {
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
    pub(crate) async fn run_files(
        &mut self,
        ctx: &JobContext<'_>,
        phase: FilePhase,
        set: usize,
        until: Option<u64>,
        rec: &mut Recorder<'_>,
    ) {
        let Workload::Files(f) = &ctx.job.workload else {
            unreachable!("files phase of a files job")
        };
        let fs = f.sets[set];
        let opts = FileOpts {
            direct: f.direct,
            fsync: f.fsync,
        };
        if self.existing.len() < f.sets.len() {
            self.existing.resize(f.sets.len(), 0);
        }
        let time_based = ctx.job.duration.is_some() && phase != FilePhase::Delete;
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
        if phase == FilePhase::Read && existing == 0 {
            return;
        }
        let pattern = self.pattern;
        let mut done = if until.is_some() { existing } else { 0 };
        while done < count {
            let Some((intended, start)) = self.begin(rec.ctl()).await else {
                break;
            };
            // Time-based reads go round the written files again and again.
            let i = if phase == FilePhase::Read {
                done % existing
            } else {
                done
            };
            file_path(&mut self.path, ctx.job_index, owner, set, i);
            let key = FileKey {
                job: ctx.job_index as u16,
                set: set as u16,
                worker: owner as u32,
                index: i,
            };
            let result = match phase {
                FilePhase::Write => {
                    write_whole(&mut self.client, &self.path, fs.size, opts, &mut self.buf, pattern, key)
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
                Err((e, offset)) => rec.error(0, end, &e, &self.path, offset),
            }
            done += 1;
        }
        if phase == FilePhase::Write {
            self.existing[set] = done;
        } else if phase == FilePhase::Delete {
            self.existing[set] = 0;
        }
    }
}
