//! IO500's phases in IO500's order over one set of files: ior-easy, ior-hard, mdtest-easy and
//! mdtest-hard write, find, then the reads, stats and deletes, and last the unscored
//! ior-rnd4K-easy-read (IO500's rules: the write phases and the random reads time-bounded
//! with stonewalling, the rest over everything that was written).
//!
//! One workload, not jobs of io, files and meta: a job's phases run together and its files
//! are its own, and IO500 interleaves the phases of its four data sets (ior-easy's reads come
//! after mdtest-hard's writes and the find). Each phase makes the same calls as the workload
//! it corresponds to: whole-file writes and reads as files does, block writes as io does, and
//! create, stat, list and delete as meta does. This file holds the options, the phases and
//! the paths; `run.rs` the worker's loops.

use dfsbench_backends::{Capabilities, Capability, Client};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::data::{DataShape, Written};
use crate::error::ConfigError;
use crate::stats::Recorder;
use crate::units::format_size;
use crate::worker::{push_num, JobContext, Worker};
use crate::workloads::shared::size_or;
use crate::workloads::whole::chunk_for;
use crate::workloads::{Kind, Phase, RunSettings, SharedOptions, Step, Timing};

mod run;

/// The io500 workload's own flags and workload-file keys; IO500's values by default.
#[derive(clap::Args, Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[group(id = "io500-options")]
pub struct Options {
    /// ior-easy: bytes per write and read call (IOR's -t) (io500) [default: 2m].
    #[arg(long, value_name = "SIZE", help_heading = "io500")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub easy_xfer: Option<String>,

    /// ior-easy on backends without positional writes: size of each file a worker writes, one
    /// after another, until the time is up (io500) [default: 1g].
    #[arg(long, value_name = "SIZE", help_heading = "io500")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub easy_file_size: Option<String>,

    /// ior-hard: bytes of each record, interleaved by worker in one shared file (IOR's -t and
    /// -b) (io500) [default: 47008].
    #[arg(long, value_name = "SIZE", help_heading = "io500")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hard_record: Option<String>,

    /// mdtest-hard: bytes written into and read from each file (mdtest's -w and -e) (io500)
    /// [default: 3901].
    #[arg(long, value_name = "SIZE", help_heading = "io500")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub md_hard_size: Option<String>,
}

/// IO500's phases over one set of files.
#[derive(Debug, Clone, Serialize)]
pub struct Io500Job {
    pub easy_xfer: usize,
    /// ior-easy writes one file per worker, transfer after transfer, as IOR does; false on
    /// backends without positional writes, which write whole files of `easy_file_size`.
    pub easy_one_file: bool,
    pub easy_file_size: u64,
    pub hard_record: usize,
    /// ior-hard writes its records into one shared file, as IOR does; false on backends
    /// without positional writes, which write each record as an object of its own, named as
    /// IOR's S3 backend names them (`hard_object`).
    pub hard_one_file: bool,
    pub md_hard_size: u64,
    /// Files (ior-easy, mdtest) or records (ior-hard) per worker of a write phase when the
    /// job has no duration.
    pub items: u64,
    /// ior's writes end with an fsync of the file, timed (IO500 runs IOR with -e); off on
    /// backends without one (object stores write whole objects).
    pub fsync: bool,
    pub phases: Vec<Io500Step>,
    #[serde(flatten)]
    pub data: DataShape,
}

/// IO500's phases, in the order IO500 runs them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Io500Step {
    IorEasyWrite,
    MdtestEasyWrite,
    IorHardWrite,
    MdtestHardWrite,
    Find,
    IorEasyRead,
    MdtestEasyStat,
    IorHardRead,
    MdtestHardStat,
    MdtestEasyDelete,
    MdtestHardRead,
    MdtestHardDelete,
    /// IO500's unscored last phase: 4 KiB reads at random offsets of ior-easy's files.
    #[serde(rename = "ior-rnd4K-easy-read")]
    IorRnd4kEasyRead,
}

/// ior-rnd4K-easy-read's transfer (IOR's -t 4096).
pub(crate) const RND_XFER: usize = 4096;

/// The four data sets, by their index in a worker's `existing` counts.
pub(crate) const IOR_EASY: usize = 0;
pub(crate) const MD_EASY: usize = 1;
pub(crate) const IOR_HARD: usize = 2;
pub(crate) const MD_HARD: usize = 3;

impl Io500Step {
    pub const ALL: [Io500Step; 13] = [
        Io500Step::IorEasyWrite,
        Io500Step::MdtestEasyWrite,
        Io500Step::IorHardWrite,
        Io500Step::MdtestHardWrite,
        Io500Step::Find,
        Io500Step::IorEasyRead,
        Io500Step::MdtestEasyStat,
        Io500Step::IorHardRead,
        Io500Step::MdtestHardStat,
        Io500Step::MdtestEasyDelete,
        Io500Step::MdtestHardRead,
        Io500Step::MdtestHardDelete,
        Io500Step::IorRnd4kEasyRead,
    ];

    /// IO500's name of the phase.
    pub fn name(self) -> &'static str {
        match self {
            Io500Step::IorEasyWrite => "ior-easy-write",
            Io500Step::MdtestEasyWrite => "mdtest-easy-write",
            Io500Step::IorHardWrite => "ior-hard-write",
            Io500Step::MdtestHardWrite => "mdtest-hard-write",
            Io500Step::Find => "find",
            Io500Step::IorEasyRead => "ior-easy-read",
            Io500Step::MdtestEasyStat => "mdtest-easy-stat",
            Io500Step::IorHardRead => "ior-hard-read",
            Io500Step::MdtestHardStat => "mdtest-hard-stat",
            Io500Step::MdtestEasyDelete => "mdtest-easy-delete",
            Io500Step::MdtestHardRead => "mdtest-hard-read",
            Io500Step::MdtestHardDelete => "mdtest-hard-delete",
            Io500Step::IorRnd4kEasyRead => "ior-rnd4K-easy-read",
        }
    }

    /// The data set the phase works on; None for the find, which lists them all.
    pub(crate) fn set(self) -> Option<usize> {
        use Io500Step::*;
        match self {
            IorEasyWrite | IorEasyRead | IorRnd4kEasyRead => Some(IOR_EASY),
            MdtestEasyWrite | MdtestEasyStat | MdtestEasyDelete => Some(MD_EASY),
            IorHardWrite | IorHardRead => Some(IOR_HARD),
            MdtestHardWrite | MdtestHardStat | MdtestHardRead | MdtestHardDelete => Some(MD_HARD),
            Find => None,
        }
    }

    /// The phase's one recorder class: what each of its operations is.
    fn class(self) -> &'static [&'static str] {
        use Io500Step::*;
        match self {
            IorEasyWrite | IorHardWrite | MdtestHardWrite => &["write"],
            MdtestEasyWrite => &["create"],
            Find => &["list"],
            IorEasyRead | IorHardRead | MdtestHardRead | IorRnd4kEasyRead => &["read"],
            MdtestEasyStat | MdtestHardStat => &["stat"],
            MdtestEasyDelete | MdtestHardDelete => &["delete"],
        }
    }

    pub(crate) fn writes(self) -> bool {
        matches!(
            self,
            Io500Step::IorEasyWrite | Io500Step::MdtestEasyWrite | Io500Step::IorHardWrite | Io500Step::MdtestHardWrite
        )
    }

    fn ior_hard(self) -> bool {
        matches!(self, Io500Step::IorHardWrite | Io500Step::IorHardRead)
    }

    /// Time-bounded by the job's duration (IO500's stonewall): the writes and the random reads.
    pub(crate) fn timed(self) -> bool {
        self.writes() || self == Io500Step::IorRnd4kEasyRead
    }
}

impl Step for Io500Step {
    /// Reads and stats look at another rank's files with --shuffle (IOR's -C, mdtest's -N).
    fn reads_shuffled(self) -> bool {
        use Io500Step::*;
        matches!(
            self,
            IorEasyRead | MdtestEasyStat | IorHardRead | MdtestHardStat | MdtestHardRead | IorRnd4kEasyRead
        )
    }
    fn reads_data(self) -> bool {
        matches!(
            self,
            Io500Step::IorEasyRead | Io500Step::IorHardRead | Io500Step::MdtestHardRead | Io500Step::IorRnd4kEasyRead
        )
    }
    /// The write phases are time-bounded: a wear-out step evens their sets out.
    fn fills_set(self) -> Option<usize> {
        self.set().filter(|_| self.writes())
    }
}

impl Kind for Io500Job {
    const NAME: &'static str = "io500";
    const SHARED: &'static [&'static str] = &["files", "compress_percentage", "dedupe_percentage"];
    type Options = Options;
    type Step = Io500Step;

    fn validate(own: &Options, s: &SharedOptions, run: &RunSettings) -> Result<Io500Job, ConfigError> {
        let positive = |key: &'static str, text: Option<&str>, default: u64| -> Result<u64, ConfigError> {
            match size_or(key, text, default)? {
                0 => Err(ConfigError::value(key, 0, "give a size of 1 byte or more")),
                n => Ok(n),
            }
        };
        let easy_xfer = positive("easy_xfer", own.easy_xfer.as_deref(), 2 << 20)?;
        let easy_file_size = positive("easy_file_size", own.easy_file_size.as_deref(), 1 << 30)?;
        if easy_file_size < easy_xfer {
            return Err(ConfigError::value(
                "easy_file_size",
                format!(
                    "{} is smaller than easy_xfer = {}",
                    format_size(easy_file_size),
                    format_size(easy_xfer)
                ),
                "make each ior-easy file at least one transfer",
            ));
        }
        let hard_record = positive("hard_record", own.hard_record.as_deref(), 47008)?;
        if hard_record > 1 << 30 || easy_xfer > 1 << 30 {
            return Err("easy_xfer and hard_record are sizes of one call: give at most 1g".into());
        }
        let items = s.files.unwrap_or(100);
        if items == 0 {
            return Err(ConfigError::value(
                "files",
                0,
                "give the files (records) per worker of a write phase without a duration",
            ));
        }
        Ok(Io500Job {
            easy_xfer: easy_xfer as usize,
            easy_one_file: true,
            easy_file_size,
            hard_record: hard_record as usize,
            hard_one_file: true,
            md_hard_size: size_or("md_hard_size", own.md_hard_size.as_deref(), 3901)?,
            items,
            fsync: true,
            phases: Io500Step::ALL.to_vec(),
            data: s.data_shape(run)?,
        })
    }

    fn phases(&self, index: usize, job: &Timing) -> Vec<Phase> {
        self.phases
            .iter()
            .map(|&step| {
                let mut params = vec![("io500_set", json!(step.set().map_or("find", set_name)))];
                params.extend(match step.set() {
                    _ if step == Io500Step::IorRnd4kEasyRead => vec![("xfer", json!(RND_XFER))],
                    Some(IOR_EASY) if self.easy_one_file => vec![("xfer", json!(self.easy_xfer))],
                    Some(IOR_EASY) => vec![
                        ("xfer", json!(self.easy_xfer)),
                        ("file_size", json!(self.easy_file_size)),
                    ],
                    Some(IOR_HARD) => vec![("record", json!(self.hard_record))],
                    Some(MD_HARD) => vec![("file_size", json!(self.md_hard_size))],
                    _ => Vec::new(),
                });
                let phase = Phase::new(
                    index,
                    job,
                    step,
                    step.name(),
                    step.name().to_string(),
                    step.class(),
                    params,
                );
                // Only the writes and the random reads are time-bounded (IO500's stonewall):
                // the other phases work on everything the writes made.
                if step.timed() {
                    phase.counted(self.items)
                } else {
                    phase.untimed()
                }
            })
            .collect()
    }

    /// ior-hard's one shared file needs writes and reads at offsets; the random reads need
    /// reads at offsets of ior-easy's files, whichever way they were written.
    fn needs(&self) -> Vec<Capability> {
        let one_file_hard = self.hard_one_file && self.phases.iter().any(|p| p.ior_hard());
        let mut needs = Vec::new();
        if one_file_hard || self.phases.contains(&Io500Step::IorRnd4kEasyRead) {
            needs.push(Capability::RangedRead);
        }
        if one_file_hard {
            needs.push(Capability::PositionalWrite);
        }
        needs
    }

    fn setup_dirs(&self, index: usize, workers: usize) -> Box<dyn Iterator<Item = String> + '_> {
        let base = dir(index);
        let per_worker = move |set: &'static str| (0..workers).map(move |w| format!("{}/{set}/w{w}", dir(index)));
        Box::new(
            std::iter::once(base.clone())
                .chain(["ior-easy", "ior-hard", "mdtest-easy", "mdtest-hard"].map(|s| format!("{base}/{s}")))
                .chain(per_worker("ior-easy"))
                .chain(per_worker("mdtest-easy")),
        )
    }

    fn files_read(&self, index: usize, step: Io500Step, owner: usize, existing: &[u64]) -> Vec<String> {
        let count = |set: usize| existing.get(set).copied().unwrap_or(0);
        let mut path = String::new();
        match step {
            Io500Step::IorEasyRead | Io500Step::IorRnd4kEasyRead if self.easy_one_file => {
                vec![easy_file(index, owner)]
            }
            Io500Step::IorEasyRead => (0..count(IOR_EASY))
                .map(|i| {
                    file_path(&mut path, index, IOR_EASY, owner, i);
                    path.clone()
                })
                .collect(),
            Io500Step::IorHardRead if self.hard_one_file => vec![hard_file(index)],
            // Records as objects are only written where there is no page cache to invalidate
            // (every backend with one writes at offsets).
            Io500Step::IorHardRead => Vec::new(),
            Io500Step::MdtestHardRead => (0..count(MD_HARD))
                .map(|i| {
                    file_path(&mut path, index, MD_HARD, owner, i);
                    path.clone()
                })
                .collect(),
            _ => Vec::new(),
        }
    }

    async fn run<C: Client>(
        &self,
        worker: &mut Worker<C>,
        ctx: &JobContext,
        step: Io500Step,
        until: Option<u64>,
        rec: &mut Recorder<'_>,
    ) {
        worker.run_io500(ctx, self, step, until, rec).await
    }

    fn file_bs(&self) -> usize {
        chunk_for(self.easy_xfer, self.easy_file_size.max(self.md_hard_size))
    }

    fn written(&self) -> Written {
        Written {
            shape: self.data,
            block: self.easy_xfer,
            chunk: self.file_bs().max(self.hard_record),
        }
    }

    /// ior-hard writes records at offsets of one shared file and ior-easy grows one file per
    /// worker: a backend without positional writes (object stores, HDFS) writes whole files
    /// for ior-easy and an object per record for ior-hard, as IOR's S3 backend does.
    fn fit(&mut self, caps: Capabilities, backend: &str) -> Option<String> {
        self.fsync &= caps.fsync;
        if caps.positional_write && caps.ranged_read {
            return None;
        }
        self.easy_one_file = false;
        self.hard_one_file = false;
        let random_reads = if caps.ranged_read {
            "ior-rnd4K-easy-read reads 4 KiB at random offsets of random ior-easy files"
        } else {
            self.phases.retain(|p| *p != Io500Step::IorRnd4kEasyRead);
            "ior-rnd4K-easy-read is left out (no ranged reads)"
        };
        Some(format!(
            "the {backend} backend has no positional writes: ior-easy writes whole files of {} one after another instead of one growing file per worker, ior-hard writes each {}-byte record as an object of its own (named file-OFFSET-LENGTH, as IOR's S3 backend names them) instead of at its offset of one shared file, and {random_reads}",
            format_size(self.easy_file_size),
            self.hard_record
        ))
    }
}

/// The name of data set `set` in phase parameters and paths.
fn set_name(set: usize) -> &'static str {
    match set {
        IOR_EASY => "ior-easy",
        MD_EASY => "mdtest-easy",
        IOR_HARD => "ior-hard",
        _ => "mdtest-hard",
    }
}

/// The job's directory.
fn dir(job: usize) -> String {
    format!("j{job}-io500")
}

/// Worker `w`'s one ior-easy file (IOR's file per process).
pub(crate) fn easy_file(job: usize, w: usize) -> String {
    format!("{}/ior-easy/w{w}/file", dir(job))
}

/// IO500's one shared ior-hard file.
pub(crate) fn hard_file(job: usize) -> String {
    format!("{}/ior-hard/file", dir(job))
}

/// The object that holds ior-hard's record at `offset` where there are no positional writes:
/// the shared file's own name for the first record, `file-OFFSET-LENGTH` for the others
/// (IOR's S3-libs3 backend, one object per transfer).
pub(crate) fn hard_object(s: &mut String, job: usize, offset: u64, record: usize) {
    s.clear();
    s.push_str(&hard_file(job));
    if offset != 0 {
        s.push('-');
        push_num(s, offset);
        s.push('-');
        push_num(s, record as u64);
    }
}

/// File `i` of worker `w` in data set `set`: ior-easy and mdtest-easy in a directory per
/// worker (`j0-io500/ior-easy/w3/f7`), mdtest-hard in one shared directory
/// (`j0-io500/mdtest-hard/w3.f7`).
pub(crate) fn file_path(s: &mut String, job: usize, set: usize, w: usize, i: u64) {
    s.clear();
    s.push('j');
    push_num(s, job as u64);
    s.push_str(match set {
        IOR_EASY => "-io500/ior-easy/w",
        MD_EASY => "-io500/mdtest-easy/w",
        _ => "-io500/mdtest-hard/w",
    });
    push_num(s, w as u64);
    s.push_str(if set == MD_HARD { ".f" } else { "/f" });
    push_num(s, i);
}

/// The directories the find lists on behalf of worker `w`: its own ior-easy and mdtest-easy
/// directories; worker 0 also the shared ones.
pub(crate) fn find_dirs(job: usize, w: usize) -> Vec<String> {
    let base = dir(job);
    let mut out = vec![format!("{base}/ior-easy/w{w}"), format!("{base}/mdtest-easy/w{w}")];
    if w == 0 {
        out.push(format!("{base}/ior-hard"));
        out.push(format!("{base}/mdtest-hard"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_keep_the_sets_apart() {
        let mut s = String::new();
        file_path(&mut s, 0, IOR_EASY, 3, 7);
        assert_eq!(s, "j0-io500/ior-easy/w3/f7");
        file_path(&mut s, 1, MD_EASY, 3, 7);
        assert_eq!(s, "j1-io500/mdtest-easy/w3/f7");
        file_path(&mut s, 0, MD_HARD, 3, 7);
        assert_eq!(s, "j0-io500/mdtest-hard/w3.f7");
        assert_eq!(hard_file(2), "j2-io500/ior-hard/file");
        assert_eq!(easy_file(0, 3), "j0-io500/ior-easy/w3/file");
    }

    /// An object store (no positional writes, no fsync) runs every phase, ior-hard's with a
    /// record an object, and writes ior-easy's files without the fsync it cannot make.
    #[test]
    fn object_stores_write_ior_hard_records_as_objects() {
        let mut job =
            Io500Job::validate(&Options::default(), &SharedOptions::default(), &RunSettings::default()).unwrap();
        assert_eq!(job.needs(), [Capability::RangedRead, Capability::PositionalWrite]);
        let caps = Capabilities {
            directories: false,
            rename: false,
            append: false,
            ranged_read: true,
            positional_write: false,
            fsync: false,
            direct_io: false,
            page_cache: false,
            drive: dfsbench_backends::Drive::PerThread,
        };
        let note = job.fit(caps, "s3").unwrap();
        assert!(
            note.contains("ior-hard writes each 47008-byte record as an object"),
            "{note}"
        );
        assert_eq!(job.phases, Io500Step::ALL);
        assert!(!job.fsync && !job.easy_one_file && !job.hard_one_file);
        assert_eq!(job.needs(), [Capability::RangedRead]);
        let mut s = String::new();
        hard_object(&mut s, 0, 0, 47008);
        assert_eq!(s, "j0-io500/ior-hard/file");
        hard_object(&mut s, 1, 3 * 47008, 47008);
        assert_eq!(s, "j1-io500/ior-hard/file-141024-47008");

        // Without ranged reads only the random reads are left out.
        let mut job =
            Io500Job::validate(&Options::default(), &SharedOptions::default(), &RunSettings::default()).unwrap();
        let note = job
            .fit(
                Capabilities {
                    ranged_read: false,
                    ..caps
                },
                "x",
            )
            .unwrap();
        assert!(note.contains("ior-rnd4K-easy-read is left out"), "{note}");
        assert_eq!(job.phases, &Io500Step::ALL[..12]);
        assert!(job.needs().is_empty());
    }

    #[test]
    fn phases_run_in_io500_order_and_only_writes_and_random_reads_are_timed() {
        let job = crate::config::JobSpec::new("io500", "io500");
        let cfg = crate::config::validate(&Default::default(), &[job]).unwrap();
        let crate::workloads::Workload::Io500(j) = &cfg.jobs[0].workload else {
            panic!("an io500 job")
        };
        let timing = Timing {
            duration: Some(std::time::Duration::from_secs(3)),
            ..Default::default()
        };
        let phases = j.phases(0, &timing);
        let names: Vec<_> = phases.iter().map(|p| p.name).collect();
        assert_eq!(names, Io500Step::ALL.map(Io500Step::name));
        for p in &phases {
            let random_reads = p.name == "ior-rnd4K-easy-read";
            assert_eq!(
                p.duration.is_some(),
                p.op.fills_set().is_some() || random_reads,
                "{}",
                p.name
            );
        }
    }
}
