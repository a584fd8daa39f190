//! mdtest-style metadata phases: mkdir, create, stat, open, list, rename, delete, rmdir.

use dfsbench_backends::clock::Instant;

use dfsbench_backends::{Client, OpError};

use crate::config::{DirLayout, MetaJob, MetaPhase, Workload};
use crate::stats::Recorder;
use crate::worker::{push_num, JobContext, Worker};

/// The job's directory.
fn meta_dir(job: usize) -> String {
    format!("j{job}-meta")
}

/// Directories the job needs before its phases: the shared or per-worker file directories and
/// one tree root per worker.
pub(crate) fn meta_setup_dirs(job: usize, m: &MetaJob, workers: usize) -> impl Iterator<Item = String> {
    let base = meta_dir(job);
    let (shared, per_worker) = match m.layout {
        DirLayout::Shared => (Some(format!("{base}/shared")), 0),
        DirLayout::PerWorker => (None, workers),
    };
    let trees = if m.dirs > 0 { workers } else { 0 };
    let (b1, b2) = (base.clone(), base.clone());
    std::iter::once(base)
        .chain(shared)
        .chain((0..per_worker).map(move |w| format!("{b1}/w{w}")))
        .chain((0..trees).map(move |w| format!("{b2}/t{w}")))
}

/// The directory a worker lists and keeps its files in.
fn file_dir(s: &mut String, job: usize, layout: DirLayout, worker: usize) {
    s.clear();
    s.push('j');
    push_num(s, job as u64);
    s.push_str("-meta/");
    match layout {
        DirLayout::Shared => s.push_str("shared"),
        DirLayout::PerWorker => {
            s.push('w');
            push_num(s, worker as u64);
        }
    }
}

/// What the paths of a worker's files start with: `j0-meta/w3/w3.f`.
fn file_prefix(s: &mut String, job: usize, layout: DirLayout, worker: usize) {
    file_dir(s, job, layout, worker);
    s.push_str("/w");
    push_num(s, worker as u64);
    s.push_str(".f");
}

/// Turn `s`, which holds a [`file_prefix`] of length `prefix`, into the path of file `i`.
#[inline]
fn file_index(s: &mut String, prefix: usize, i: u64, renamed: bool) {
    s.truncate(prefix);
    push_num(s, i);
    if renamed {
        s.push_str(".r");
    }
}

#[cfg(test)]
fn file_path(s: &mut String, job: usize, layout: DirLayout, worker: usize, i: u64, renamed: bool) {
    file_prefix(s, job, layout, worker);
    let prefix = s.len();
    file_index(s, prefix, i, renamed);
}

/// Path of directory `i` of a worker's tree. With fan-out `branch`, the children of the root
/// are 0..branch and those of node k are branch*(k+1)..branch*(k+2), so every parent is made
/// before its children when nodes are made in index order.
fn tree_path(s: &mut String, job: usize, worker: usize, branch: u64, i: u64) {
    s.clear();
    s.push('j');
    push_num(s, job as u64);
    s.push_str("-meta/t");
    push_num(s, worker as u64);
    let mut chain = [0u64; 64];
    let mut depth = 0;
    let mut node = i;
    loop {
        chain[depth] = node;
        depth += 1;
        if branch == 0 || node < branch {
            break;
        }
        node = node / branch - 1;
    }
    for &n in chain[..depth].iter().rev() {
        s.push_str("/d");
        push_num(s, n);
    }
}

impl<C: Client> Worker<C> {
    /// `until`: a wear-out step: create files from the existing count up to `until`.
    pub(crate) async fn run_meta(
        &mut self,
        ctx: &JobContext<'_>,
        phase: MetaPhase,
        until: Option<u64>,
        rec: &mut Recorder<'_>,
    ) {
        let Workload::Meta(m) = &ctx.job.workload else {
            unreachable!("meta phase of a meta job")
        };
        // Stat, open and list look at `src`'s files: another rank's with --shuffle.
        let reads = matches!(phase, MetaPhase::Stat | MetaPhase::Open | MetaPhase::List);
        let w = if reads { self.src } else { self.id };
        let (job, layout) = (ctx.job_index, m.layout);
        if self.existing.is_empty() {
            self.existing.push(0);
        }
        let count = match phase {
            MetaPhase::Mkdir | MetaPhase::Rmdir => m.dirs,
            MetaPhase::Create => {
                // A wear-out step creates the files up to `until` this worker still lacks.
                if let Some(n) = until {
                    n.saturating_sub(self.existing[0])
                } else if ctx.job.duration.is_some() && !m.explicit_files {
                    u64::MAX
                } else {
                    m.files
                }
            }
            MetaPhase::List => 1,
            _ if reads => self.src_existing.first().copied().unwrap_or(0),
            _ => self.existing[0],
        };
        // The files of a phase differ only in their index: the common prefix is built once.
        file_prefix(&mut self.path, job, layout, w);
        let prefix = self.path.len();
        if phase == MetaPhase::Rename {
            file_prefix(&mut self.path2, job, layout, w);
        }
        let delete_renamed = m.phases.contains(&MetaPhase::Rename);
        // A create phase run again (one run per step of a rate sweep) makes new files.
        let first = if phase == MetaPhase::Create {
            self.existing[0]
        } else {
            0
        };
        let mut done = 0u64;
        while done < count {
            let i = first + done;
            // Directories are removed deepest first.
            let node = if phase == MetaPhase::Rmdir { count - 1 - i } else { i };
            match phase {
                MetaPhase::Mkdir | MetaPhase::Rmdir => tree_path(&mut self.path, job, w, m.branch, node),
                MetaPhase::List => file_dir(&mut self.path, job, layout, w),
                MetaPhase::Delete => file_index(&mut self.path, prefix, i, delete_renamed),
                _ => file_index(&mut self.path, prefix, i, false),
            }
            if phase == MetaPhase::Rename {
                file_index(&mut self.path2, prefix, i, true);
            }
            // One clock read serves the stop check and the operation's start: at ~30 ns each
            // in a VM, a third read per operation costs 1-2 % of a tmpfs stat.
            let Some((intended, start)) = self.begin(rec.ctl()).await else {
                break;
            };
            let result: Result<u64, OpError> = match phase {
                MetaPhase::Mkdir => self.client.mkdir(&self.path).await.map(|_| 0),
                MetaPhase::Create => self.client.create(&self.path).await.map(|_| 0),
                MetaPhase::Stat => self.client.stat(&self.path).await.map(|_| 0),
                MetaPhase::Open => self.client.open_close(&self.path).await.map(|_| 0),
                MetaPhase::List => self.client.list(&self.path).await,
                MetaPhase::Rename => self.client.rename(&self.path, &self.path2).await.map(|_| 0),
                MetaPhase::Delete => self.client.delete(&self.path).await.map(|_| 0),
                MetaPhase::Rmdir => self.client.rmdir(&self.path).await.map(|_| 0),
            };
            let end = Instant::now();
            rec.add_retries(self.client.take_retries());
            match result {
                Ok(items) => {
                    rec.record_op(0, intended, start, end, 0);
                    rec.add_items(items);
                }
                Err(e) => rec.error(0, end, &e, &self.path, None),
            }
            done += 1;
        }
        if phase == MetaPhase::Create {
            self.existing[0] = first + done;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tree_parents_come_first() {
        let mut s = String::new();
        tree_path(&mut s, 0, 1, 0, 7);
        assert_eq!(s, "j0-meta/t1/d7");
        tree_path(&mut s, 0, 1, 2, 1);
        assert_eq!(s, "j0-meta/t1/d1");
        tree_path(&mut s, 0, 1, 2, 2);
        assert_eq!(s, "j0-meta/t1/d0/d2");
        tree_path(&mut s, 0, 1, 2, 9);
        assert_eq!(s, "j0-meta/t1/d0/d3/d9");
    }

    #[test]
    fn file_paths_are_unique_per_worker() {
        let mut a = String::new();
        let mut b = String::new();
        file_path(&mut a, 2, DirLayout::Shared, 3, 10, false);
        file_path(&mut b, 2, DirLayout::Shared, 4, 10, false);
        assert_eq!(a, "j2-meta/shared/w3.f10");
        assert_ne!(a, b);
        file_path(&mut a, 2, DirLayout::PerWorker, 3, 10, true);
        assert_eq!(a, "j2-meta/w3/w3.f10.r");
    }
}
