//! mdtest-style metadata phases: mkdir, create, stat, open, list, rename, delete, rmdir.

use dfsbench_backends::clock::Instant;

use dfsbench_backends::{Capabilities, Capability, Client, OpError};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::error::ConfigError;
use crate::stats::Recorder;
use crate::worker::{push_num, JobContext, Worker};
use crate::workloads::shared::parse_phases;
use crate::workloads::Phase;
use crate::workloads::{Kind, SharedOptions, Step};
use crate::workloads::{RunSettings, Timing};

/// The meta workload's own flags and workload-file keys.
#[derive(clap::Args, Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[group(id = "meta-options")]
pub struct Options {
    /// per-worker (a directory per worker, mdtest -u) or shared (one directory).
    #[arg(long, value_name = "LAYOUT", help_heading = "meta and files")]
    pub layout: Option<String>,

    /// Directories per worker for the mkdir and rmdir phases.
    #[arg(long, value_name = "N", help_heading = "meta and files")]
    pub dirs: Option<u64>,

    /// Fan-out of the directory tree (0: flat).
    #[arg(long, value_name = "N", help_heading = "meta and files")]
    pub branch: Option<u64>,
}

/// mdtest-style metadata phases.
#[derive(Debug, Clone, Serialize)]
pub struct MetaJob {
    /// Files per worker.
    pub files: u64,
    pub layout: DirLayout,
    /// Directories per worker for mkdir/rmdir.
    pub dirs: u64,
    /// Fan-out of the directory tree (0: all directories side by side).
    pub branch: u64,
    pub phases: Vec<MetaPhase>,
    /// Phases named by the user, kept even where the backend lacks them (then it is an error).
    #[serde(skip)]
    pub explicit_phases: bool,
    /// Files given by the user: a time-based create stops there too (mdtest's `-I` with `-W`);
    /// without it, a time-based create goes on until the time is up.
    #[serde(skip)]
    pub explicit_files: bool,
}

/// Where workers put their files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DirLayout {
    /// One directory per worker (mdtest -u).
    PerWorker,
    /// All workers in one directory.
    Shared,
}

/// Metadata phases, in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MetaPhase {
    Mkdir,
    Create,
    Stat,
    Open,
    List,
    Rename,
    Delete,
    Rmdir,
}

impl MetaPhase {
    pub const ALL: [MetaPhase; 8] = [
        MetaPhase::Mkdir,
        MetaPhase::Create,
        MetaPhase::Stat,
        MetaPhase::Open,
        MetaPhase::List,
        MetaPhase::Rename,
        MetaPhase::Delete,
        MetaPhase::Rmdir,
    ];

    pub fn name(self) -> &'static str {
        self.class()[0]
    }

    /// A phase that only looks at the files, so a time-based job repeats it over them until
    /// its duration is over.
    fn loops(self) -> bool {
        matches!(self, MetaPhase::Stat | MetaPhase::Open | MetaPhase::List)
    }

    /// The phase's one recorder class.
    fn class(self) -> &'static [&'static str] {
        match self {
            MetaPhase::Mkdir => &["mkdir"],
            MetaPhase::Create => &["create"],
            MetaPhase::Stat => &["stat"],
            MetaPhase::Open => &["open"],
            MetaPhase::List => &["list"],
            MetaPhase::Rename => &["rename"],
            MetaPhase::Delete => &["delete"],
            MetaPhase::Rmdir => &["rmdir"],
        }
    }

    fn on_dirs(self) -> bool {
        matches!(self, MetaPhase::Mkdir | MetaPhase::Rmdir)
    }
}

impl Step for MetaPhase {
    fn reads_shuffled(self) -> bool {
        matches!(self, MetaPhase::Stat | MetaPhase::Open | MetaPhase::List)
    }
    fn fills_set(self) -> Option<usize> {
        (self == MetaPhase::Create).then_some(0)
    }
}

impl Kind for MetaJob {
    const NAME: &'static str = "meta";
    const SHARED: &'static [&'static str] = &["files", "phases"];
    type Options = Options;
    type Step = MetaPhase;

    fn validate(own: &Options, shared: &SharedOptions, _: &RunSettings) -> Result<MetaJob, ConfigError> {
        let files = shared.files.unwrap_or(1000);
        let dirs = own.dirs.unwrap_or(0);
        let layout = match own.layout.as_deref().unwrap_or("per-worker") {
            "per-worker" | "unique" => DirLayout::PerWorker,
            "shared" => DirLayout::Shared,
            other => {
                return Err(ConfigError::value(
                    "layout",
                    format!("'{other}'"),
                    "use per-worker or shared",
                ))
            }
        };
        let phases = match &shared.phases {
            Some(list) => parse_phases(list, &MetaPhase::ALL, MetaPhase::name)?,
            None => MetaPhase::ALL
                .into_iter()
                .filter(|p| dirs > 0 || !p.on_dirs())
                .collect(),
        };
        if dirs == 0 && phases.iter().any(|p| p.on_dirs()) {
            return Err("mkdir/rmdir phases need dirs: set dirs to the directories per worker".into());
        }
        if files == 0 && phases.iter().any(|p| !p.on_dirs()) {
            return Err(ConfigError::value(
                "files",
                0,
                "give the files per worker (e.g. files = 1000)",
            ));
        }
        Ok(MetaJob {
            files,
            layout,
            dirs,
            branch: own.branch.unwrap_or(0),
            phases,
            explicit_phases: shared.phases.is_some(),
            explicit_files: shared.files.is_some(),
        })
    }

    fn phases(&self, index: usize, job: &Timing) -> Vec<Phase> {
        self.phases
            .iter()
            .map(|&p| {
                let count = if p.on_dirs() { self.dirs } else { self.files };
                let params = vec![("items_per_worker", json!(count)), ("layout", json!(self.layout))];
                let ops = if p == MetaPhase::List { 1 } else { count };
                let phase = Phase::new(index, job, p, p.name(), p.name().to_string(), p.class(), params).counted(ops);
                // Create is time-limited, as in mdtest's stonewall option, and the reads go
                // round the files that exist for as long (as the files workload's reads do);
                // the phases that change the files work on each once.
                if p == MetaPhase::Create || p.loops() {
                    phase
                } else {
                    phase.untimed()
                }
            })
            .collect()
    }

    fn needs(&self) -> Vec<Capability> {
        let mut needs = Vec::new();
        if self.phases.iter().any(|p| p.on_dirs()) {
            needs.push(Capability::Directories);
        }
        if self.phases.contains(&MetaPhase::Rename) {
            needs.push(Capability::Rename);
        }
        needs
    }

    fn setup_dirs(&self, index: usize, workers: usize) -> Box<dyn Iterator<Item = String> + '_> {
        Box::new(meta_setup_dirs(index, self, workers))
    }

    async fn run<C: Client>(
        &self,
        worker: &mut Worker<C>,
        ctx: &JobContext,
        step: MetaPhase,
        until: Option<u64>,
        rec: &mut Recorder<'_>,
    ) {
        worker.run_meta(ctx, self, step, until, rec).await
    }

    /// A meta job that did not name its phases skips rename where the backend has none.
    fn fit(&mut self, caps: Capabilities, backend: &str) -> Option<String> {
        if self.explicit_phases || caps.rename || !self.phases.contains(&MetaPhase::Rename) {
            return None;
        }
        self.phases.retain(|p| *p != MetaPhase::Rename);
        Some(format!(
            "the {backend} backend has no rename: skipping the rename phase"
        ))
    }
}

/// The job's directory.
fn meta_dir(job: usize) -> String {
    format!("j{job}-meta")
}

/// Directories the job needs before its phases: the shared or per-worker file directories and
/// one tree root per worker.
fn meta_setup_dirs(job: usize, m: &MetaJob, workers: usize) -> impl Iterator<Item = String> {
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
    async fn run_meta(
        &mut self,
        ctx: &JobContext,
        m: &MetaJob,
        phase: MetaPhase,
        until: Option<u64>,
        rec: &mut Recorder<'_>,
    ) {
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
                } else if ctx.duration.is_some() && !m.explicit_files {
                    u64::MAX
                } else {
                    m.files
                }
            }
            _ if reads && ctx.duration.is_some() => u64::MAX,
            MetaPhase::List => 1,
            _ if reads => self.src_existing.first().copied().unwrap_or(0),
            _ => self.existing[0],
        };
        // A time-based read goes round the files that exist (none: nothing to look at).
        let looped = reads && phase != MetaPhase::List && count == u64::MAX;
        let files = self.src_existing.first().copied().unwrap_or(0);
        if looped && files == 0 {
            return;
        }
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
            let i = if looped { done % files } else { first + done };
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
