//! Whole-file phases: write N files of size S (open, write, close), read them, delete them.

use dfsbench_backends::clock::Instant;

use dfsbench_backends::{Check, Client, FileOpts, FileRead, Fill, OpError};

use crate::config::{FilePhase, Workload};
use crate::pattern::{FileKey, Mismatch};
use crate::stats::Recorder;
use crate::worker::{push_num, JobContext, Worker};

/// The job's directory; worker `w` writes in `<dir>/w<w>`.
pub(crate) fn files_dir(job: usize) -> String {
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
    pub(crate) async fn run_files(
        &mut self,
        ctx: &JobContext<'_>,
        phase: FilePhase,
        set: usize,
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
        let existing = self.existing[set];
        let count = match phase {
            FilePhase::Write if time_based => u64::MAX,
            FilePhase::Write => fs.count,
            FilePhase::Read if time_based => u64::MAX,
            FilePhase::Read | FilePhase::Delete => existing,
        };
        if phase == FilePhase::Read && existing == 0 {
            return;
        }
        let pattern = self.pattern;
        let mut done = 0u64;
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
            file_path(&mut self.path, ctx.job_index, self.id, set, i);
            let key = FileKey {
                job: ctx.job_index as u16,
                set: set as u16,
                worker: self.id as u32,
                index: i,
            };
            let (result, mismatch) = match phase {
                FilePhase::Write => {
                    let mut fill = |b: &mut [u8], off: u64| pattern.expect("verify").fill(key, off, b);
                    let fill: Option<Fill<'_>> = match pattern {
                        Some(_) => Some(&mut fill),
                        None => None,
                    };
                    let r = self
                        .client
                        .write_file(&self.path, fs.size, opts, &mut self.buf, fill)
                        .await;
                    (r.map(|_| fs.size), None)
                }
                FilePhase::Read => {
                    let mut mismatch: Option<Mismatch> = None;
                    let mut check = |b: &[u8], off: u64| {
                        if mismatch.is_none() {
                            mismatch = pattern.expect("verify").check(key, off, b).err();
                        }
                    };
                    let check: Option<Check<'_>> = match pattern {
                        Some(_) => Some(&mut check),
                        None => None,
                    };
                    let r = self.client.read_file(&self.path, opts, &mut self.buf, check).await;
                    if let Ok(FileRead {
                        first_byte: Some(t), ..
                    }) = r
                    {
                        rec.record_ttfb(start, t);
                    }
                    let r = r.and_then(|read| {
                        if read.bytes == fs.size {
                            Ok(read.bytes)
                        } else {
                            Err(OpError::new(
                                "size",
                                format!("read {} bytes, expected {}", read.bytes, fs.size),
                            ))
                        }
                    });
                    (r, mismatch)
                }
                FilePhase::Delete => (self.client.delete(&self.path).await.map(|_| 0), None),
            };
            let end = Instant::now();
            rec.add_retries(self.client.take_retries());
            match (result, mismatch) {
                (Ok(bytes), None) => {
                    rec.record_op(0, intended, start, end, bytes);
                    if pattern.is_some() && phase == FilePhase::Read {
                        rec.add_verified(bytes);
                    }
                }
                (Ok(_), Some(m)) => {
                    let e = OpError::new(
                        "verify",
                        format!("wrong data at offset {}: found {}", m.offset, m.found),
                    );
                    rec.error(0, end, &e, &self.path, Some(m.offset));
                }
                (Err(e), _) => rec.error(0, end, &e, &self.path, None),
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
