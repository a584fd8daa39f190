//! A job section read into a dfsbench io job, and what holds only for its options together.

use super::super::JobSpec;
use super::{Opt, Refused, Section};

/// A job section read into a dfsbench io job: fio's defaults, then its [global] options and its
/// own, one at a time.
#[derive(Clone)]
pub(super) struct Job<'a> {
    pub(super) spec: JobSpec,
    pub(super) stonewall: bool,
    pub(super) workers: usize,
    pub(super) time_based: Option<&'a Opt>,
    pub(super) runtime: Option<&'a Opt>,
    pub(super) filename: Option<&'a Opt>,
    pub(super) size: Option<&'a Opt>,
    /// `rate_iops` or `rate` (bytes/s), per clone, and the option that gave it.
    pub(super) rate: Option<(Rate, &'a Opt)>,
    /// `verify=` of a kind dfsbench keeps, and `do_verify` (fio's default: on).
    pub(super) verify: Option<&'a Opt>,
    pub(super) do_verify: bool,
    /// What `k` means in sizes: 1024 (fio's default) or 1000.
    pub(super) kb_base: u64,
    /// bssplit gives the block sizes: bs is then fio's default, not one to keep.
    pub(super) bssplit: bool,
    /// `filesize`: the file's size, which makes `size` the bytes to move (fio's io_size).
    pub(super) filesize: Option<(u64, &'a Opt)>,
    /// `io_size` given itself.
    pub(super) io_size: bool,
    /// `wait_for=JOB`: the job starts when that one ends.
    pub(super) wait_for: Option<&'a Opt>,
    /// `blockalign`: where random offsets align, which must be dfsbench's (the block size).
    pub(super) blockalign: Option<(u64, &'a Opt)>,
    /// `dedupe_mode=working_set`, and the share of the file that is the working set (fio's
    /// default: 5 %).
    pub(super) working_set: bool,
    pub(super) working_set_percentage: u32,
    /// `exit_what=all`: exitall stops the groups after this one too.
    pub(super) exit_all: Option<&'a Opt>,
    /// `fill_device`: the target's space is the size.
    pub(super) fill: bool,
    /// The block device `--overwrite-device` names, and whether `filename=` is that device.
    pub(super) devices: &'a [String],
    pub(super) on_device: bool,
    /// `filename=` names a device, the one named or another (refused): its size is the job's.
    pub(super) names_device: bool,
    /// `--size` on the command line sizes the job.
    pub(super) sized: bool,
    /// Its engine is not dfsbench's, or its target a zoned device (zonemode=zbd): it is
    /// refused for that alone, its other options being that engine's or that device's.
    pub(super) foreign_engine: bool,
    pub(super) zoned: bool,
    /// `zonemode`: strided (true) or none; and the zone options, applied by strided only.
    pub(super) zonemode: Option<bool>,
    pub(super) zonesize: Option<(u64, &'a Opt)>,
    pub(super) zoneskip: Option<(u64, &'a Opt)>,
    pub(super) zonerange: Option<(u64, &'a Opt)>,
    /// `ss`: steady-state detection, and whether ss_dur gave its window; whether clones are
    /// reported (and judged steady) together.
    pub(super) steady: Option<&'a Opt>,
    pub(super) steady_dur: bool,
    pub(super) group_reporting: bool,
    /// `allow_file_create`: 0 lets fio open only files that exist.
    pub(super) allow_file_create: Option<(bool, &'a Opt)>,
}

/// fio's rate limits, per clone.
#[derive(Clone, Copy)]
pub(super) enum Rate {
    Iops(f64),
    BytesPerSec(u64),
}

impl Default for Job<'_> {
    /// fio's defaults where dfsbench's differ: one clone, the psync engine.
    fn default() -> Self {
        let mut spec = JobSpec::default();
        spec.settings.workload = Some("io".into());
        spec.settings.workers = Some(1);
        spec.workloads.io.ioengine = Some("psync".into());
        Job {
            spec,
            stonewall: false,
            workers: 1,
            time_based: None,
            runtime: None,
            filename: None,
            size: None,
            rate: None,
            verify: None,
            do_verify: true,
            kb_base: 1024,
            bssplit: false,
            filesize: None,
            io_size: false,
            wait_for: None,
            blockalign: None,
            working_set: false,
            working_set_percentage: 5,
            exit_all: None,
            fill: false,
            devices: &[],
            on_device: false,
            names_device: false,
            sized: false,
            foreign_engine: false,
            zoned: false,
            zonemode: None,
            zonesize: None,
            zoneskip: None,
            zonerange: None,
            allow_file_create: None,
            steady: None,
            steady_dur: false,
            group_reporting: false,
        }
    }
}

/// A job read whole.
pub(super) struct ReadJob<'a> {
    pub(super) spec: JobSpec,
    pub(super) stonewall: bool,
    /// Its `verify=` option, when it verifies.
    pub(super) verify: Option<&'a Opt>,
    /// Its `wait_for=` option.
    pub(super) wait_for: Option<&'a Opt>,
    /// Its `exit_what=all`, when it has exitall.
    pub(super) exit_all: Option<&'a Opt>,
    /// The path of its file, when it has no size: the file's is its size.
    pub(super) file_sized: Option<&'a str>,
    /// It is refused for one reason alone (see [`Job::foreign_engine`]).
    pub(super) whole: bool,
}

impl<'a> Job<'a> {
    /// The job once all its options are applied: what holds only for options together.
    /// `names` are the files earlier jobs named.
    pub(super) fn finish(mut self, s: &Section, refused: &mut Vec<Refused>) -> ReadJob<'a> {
        let mut refuse = |o: &Opt, why: &str| refused.push(Refused::of(o, Some(why.into())));
        match (self.time_based, self.runtime) {
            (Some(o), None) => refuse(
                o,
                "time_based needs a runtime above 0: without one fio runs until stopped",
            ),
            // One pass over size, cut short at runtime: also a runtime given on dfsbench's
            // command line (`--runtime`), as fio's own would be.
            (None, _) => self.spec.settings.time_based = Some(false),
            _ => {}
        }
        // numjobs clones of a job with a filename share the file, each over all of it.
        if self.filename.is_some() && self.workers > 1 {
            self.spec.workloads.io.same_file = Some(true);
        }
        // bssplit's sizes replace bs, which fio then ignores.
        if self.bssplit {
            self.spec.shared.bs = None;
        }
        // fio paces each clone; dfsbench's rate is the job's total, split over its workers.
        if let Some((rate, o)) = self.rate {
            let bs = self
                .spec
                .shared
                .bs
                .as_deref()
                .and_then(|b| b.parse::<u64>().ok())
                .unwrap_or(4096);
            let per_clone = match rate {
                Rate::Iops(iops) => iops,
                Rate::BytesPerSec(_) if self.bssplit => {
                    refuse(o, "bytes per second over blocks of several sizes: give rate_iops");
                    0.0
                }
                // Under a block a second is a block every so many seconds, as fio paces it.
                Rate::BytesPerSec(b) => b as f64 / bs as f64,
            };
            self.spec.settings.rate = Some(per_clone * self.workers as f64);
        }
        // filesize is the file's size; size, when it says otherwise, the bytes to move.
        if let Some((bytes, o)) = self.filesize {
            let io = &mut self.spec.workloads.io;
            if !self.io_size && io.size.as_deref().is_some_and(|s| s != bytes.to_string()) {
                io.io_size = io.size.take();
            }
            io.size = Some(bytes.to_string());
            self.size = Some(o);
        }
        // Random offsets align to the (smallest) block size by default, as in fio's; another
        // alignment is io's blockalign.
        if let Some((align, _)) = self.blockalign {
            let io = &self.spec.workloads.io;
            let smallest = match &io.bssplit {
                Some(split) => split
                    .split(':')
                    .filter_map(|p| p.split('/').next()?.parse::<u64>().ok())
                    .min(),
                None => self.spec.shared.bs.as_deref().and_then(|b| b.parse().ok()),
            };
            if align != smallest.unwrap_or(4096) {
                self.spec.workloads.io.blockalign = Some(align.to_string());
            }
        }
        // fio judges a steady state over the job's clones with group_reporting, else each clone
        // alone; dfsbench over the job.
        if let Some(o) = self.steady {
            if !self.steady_dur {
                refuse(o, "a steady state over how long: give ss_dur too");
            } else if self.workers > 1 && !self.group_reporting {
                refuse(o, "without group_reporting fio judges each clone's steady state alone, and dfsbench the job's: add group_reporting");
            }
        }
        // Strided zones: zonesize bytes in each zone, zoneskip between them (zonerange, the
        // zone's size, as zonesize: dfsbench's zones are the bytes moved in them). fio ignores
        // the zone options without zonemode=strided.
        if self.zonemode == Some(true) {
            match (self.zonesize, self.zonerange) {
                (Some((size, _)), Some((range, o))) if range != size => refuse(o, "zones larger than the bytes moved in each (zonerange above zonesize): dfsbench's zone is zonesize; give zonerange=zonesize or leave it out"),
                (None, Some((range, _))) => self.spec.workloads.io.zonesize = Some(range.to_string()),
                (Some((size, _)), _) => self.spec.workloads.io.zonesize = Some(size.to_string()),
                (None, None) => {}
            }
            if let Some((skip, _)) = self.zoneskip.filter(|(b, _)| *b > 0) {
                self.spec.workloads.io.zoneskip = Some(skip.to_string());
            }
        }
        // fio opens only existing files: a device, or a file the run cannot have made. Such
        // a job is for a device: refused for that alone.
        let mut whole = self.foreign_engine || self.zoned;
        if let Some((false, o)) = self.allow_file_create.filter(|_| !self.names_device) {
            whole = true;
            refused.push(Refused {
                whole: true,
                ..Refused::of(o, Some("fio then runs only on files that exist already, and dfsbench's files are new ones of its run: the job is for a device given on fio's command line (--filename=/dev/...); put the device in filename= and pass --overwrite-device".into()))
            });
        }
        // A device's size is the job's without one, as in fio, and so is an existing file's
        // (read() finds which).
        let unsized_file = self.size.is_none() && !self.names_device && !self.fill && !self.sized;
        let file_sized = match self.filename {
            Some(o) if unsized_file => o.value.as_deref(),
            _ => None,
        };
        // A character device (/dev/null) has no size of its own.
        if let Some(o) = self
            .filename
            .filter(|_| self.size.is_none() && !self.sized && self.spec.workloads.io.device_file.is_some())
        {
            refused.push(Refused {
                section: s.name.clone(),
                line: o.line,
                shown: o.shown(),
                why: Some("a character device has no size: give size=".into()),
                whole: false,
            });
        }
        if unsized_file && self.filename.is_none() {
            refused.push(Refused {
                section: s.name.clone(),
                line: s.line,
                shown: format!("[{}]", s.name),
                why: Some("no size: give size= (fio needs it for a regular file too)".into()),
                whole: false,
            });
        }
        // A log without a prefix is named after the job, as fio names it.
        let name = self.spec.settings.name.clone().unwrap_or_else(|| s.name.clone());
        let io = &mut self.spec.workloads.io;
        for log in [&mut io.write_bw_log, &mut io.write_lat_log, &mut io.write_iops_log] {
            if log.as_deref() == Some("") {
                *log = Some(name.clone());
            }
        }
        // The working set of dedupe's copies, in working_set mode only.
        if self.working_set {
            self.spec.workloads.io.dedupe_working_set = Some(self.working_set_percentage);
        }
        // norandommap changes nothing in a sequential job for fio (a [global] one reaches them).
        let io = &mut self.spec.workloads.io;
        if matches!(io.rw.as_deref(), None | Some("read" | "write" | "readwrite")) {
            io.norandommap = None;
        }
        // fio reads back what a write job wrote and checks it (do_verify, on by default),
        // counting those reads as the job's reads: dfsbench's read after the write.
        let io = &mut self.spec.workloads.io;
        let writes_only = matches!(io.rw.as_deref(), Some("write" | "randwrite"));
        // verify_backlog is fio's way of checking, for a job that checks, writing.
        if self.verify.is_none()
            || !self.do_verify
            || !matches!(
                io.rw.as_deref(),
                Some("write" | "randwrite" | "readwrite" | "rw" | "randrw")
            )
        {
            io.verify_backlog = None;
        }
        // With verify_backlog, the checks are among the writes.
        if self.verify.is_some() && self.do_verify && writes_only && io.then.is_none() && io.verify_backlog.is_none() {
            io.then = Some(vec!["read".into()]);
        }
        let exit_all = self.exit_all.filter(|_| self.spec.settings.exitall == Some(true));
        ReadJob {
            spec: self.spec,
            stonewall: self.stonewall,
            verify: self.verify,
            wait_for: self.wait_for,
            exit_all,
            file_sized,
            whole,
        }
    }
}
