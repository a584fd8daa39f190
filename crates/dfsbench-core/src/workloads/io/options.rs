//! The io workload's own flags and workload-file keys, in fio's names.

use serde::{Deserialize, Serialize};

use crate::data::DataShape;
use crate::error::ConfigError;

use super::Placed;

/// The io workload's own flags and workload-file keys (fio's names).
#[derive(clap::Args, Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[group(id = "io-options")]
pub struct Options {
    /// Access pattern: read, write, randread, randwrite, readwrite, randrw (io).
    #[arg(long, visible_alias = "readwrite", value_name = "PATTERN", help_heading = "io")]
    pub rw: Option<String>,

    /// Patterns to run after rw on the same files, in order: `--rw write --then read` writes
    /// each worker's file and reads it back, as IOR does (io).
    #[arg(long, value_delimiter = ',', value_name = "LIST", help_heading = "io")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub then: Option<Vec<String>>,

    /// Name of the file in the job's directory (fio's filename): one worker's file, or the
    /// shared file (io) [default: w<worker>.dat, shared.dat].
    #[arg(long, value_name = "NAME", help_heading = "io")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,

    /// File size per worker (io) [default: 64m].
    #[arg(long, value_name = "SIZE", help_heading = "io")]
    pub size: Option<String>,

    /// Operations in flight per worker (io) [default: 1].
    #[arg(long, value_name = "N", help_heading = "io")]
    pub iodepth: Option<usize>,

    /// Percentage of reads in readwrite/randrw [default: 50].
    #[arg(long, value_name = "PCT", help_heading = "io")]
    pub rwmixread: Option<u32>,

    /// All workers use one file, each its own region (IOR's shared file) (io).
    #[arg(long, value_name = "0|1", num_args = 0..=1, default_missing_value = "1", value_parser = crate::workloads::shared::parse_flag, help_heading = "io")]
    pub shared_file: Option<bool>,

    /// All workers use one file, each over all of it (fio's numjobs clones of a job with
    /// filename=) (io).
    #[arg(long, value_name = "0|1", num_args = 0..=1, default_missing_value = "1", value_parser = crate::workloads::shared::parse_flag, conflicts_with = "shared_file", help_heading = "io")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub same_file: Option<bool>,

    /// I/O engine: auto, io_uring, libaio, posixaio, psync or mmap (io) [default: auto: the fastest
    /// of io_uring, libaio and psync by a short probe on the run's own file before each
    /// pattern].
    #[arg(long, value_name = "ENGINE", help_heading = "io")]
    pub ioengine: Option<String>,

    /// Read each worker's file once, unmeasured, before every pattern that reads it (fio's
    /// pre_read), so that cached reads start from a warm page cache; needs --invalidate 0 (io).
    #[arg(long, value_name = "0|1", num_args = 0..=1, default_missing_value = "1", value_parser = crate::workloads::shared::parse_flag, help_heading = "io")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pre_read: Option<bool>,

    /// Random offsets drawn independently, each block as likely every time: some repeat and
    /// some are missed in a pass (fio's norandommap) [default: every block once per pass] (io).
    #[arg(long, value_name = "0|1", num_args = 0..=1, default_missing_value = "1", value_parser = crate::workloads::shared::parse_flag, help_heading = "io")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub norandommap: Option<bool>,

    /// fsync the file after every N writes, timed as operations of their own kind, `sync`
    /// (fio's fsync=N) (io).
    #[arg(long, value_name = "N", conflicts_with = "fdatasync_every", help_heading = "io")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fsync_every: Option<u64>,

    /// fdatasync the file after every N writes, timed as `sync` operations (fio's
    /// fdatasync=N; the etcd disk check) (io).
    #[arg(long, value_name = "N", help_heading = "io")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fdatasync_every: Option<u64>,

    /// Block sizes and their shares of the operations, e.g. 4k/50:64k/50, instead of bs; a
    /// pass still moves size bytes (fio's bssplit) (io).
    #[arg(long, value_name = "SPLIT", help_heading = "io")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bssplit: Option<String>,

    /// Block sizes and their shares for writes, when not bssplit's (fio's bssplit=READS,WRITES)
    /// (io).
    #[arg(long, value_name = "SPLIT", help_heading = "io")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bssplit_write: Option<String>,

    /// The I/O priority class of the job's I/Os: 1 realtime, 2 best effort, 3 idle (fio's
    /// prioclass; ioprio_set(2) on each worker's thread) (io).
    #[arg(long, value_name = "CLASS", help_heading = "io")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prioclass: Option<u32>,

    /// The I/O priority level in the class, 0 (highest) to 7 (fio's prio) (io).
    #[arg(long, value_name = "LEVEL", help_heading = "io")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prio: Option<u32>,

    /// The percentage of I/Os issued with the priority of cmdprio_class and cmdprio, one
    /// figure or one for reads and one for writes (fio's cmdprio_percentage; io_uring and
    /// libaio) (io).
    #[arg(long, value_name = "PCT[,PCT]", help_heading = "io")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cmdprio_percentage: Option<String>,

    /// The class of cmdprio_percentage's I/Os [default: 1, realtime] (io).
    #[arg(long, value_name = "CLASS[,CLASS]", help_heading = "io")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cmdprio_class: Option<String>,

    /// The level of cmdprio_percentage's I/Os [default: 0] (io).
    #[arg(long, value_name = "LEVEL[,LEVEL]", help_heading = "io")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cmdprio: Option<String>,

    /// The shares of each block size's I/Os issued with a priority, BS/PCT (cmdprio_class's
    /// and cmdprio's) or BS/PCT/CLASS/LEVEL, joined by `:`, reads then writes after a comma
    /// (fio's cmdprio_bssplit) (io).
    #[arg(long, value_name = "SPLIT", help_heading = "io")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cmdprio_bssplit: Option<String>,

    /// Run each worker on the CPUs of these NUMA nodes, e.g. 0 or 0-1 (fio's
    /// numa_cpu_nodes) (io).
    #[arg(long, value_name = "NODES", help_heading = "io")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub numa_cpu_nodes: Option<String>,

    /// Each worker's memory policy: default, local, prefer:NODE, bind:NODES or
    /// interleave:NODES (fio's numa_mem_policy) (io).
    #[arg(long, value_name = "POLICY", help_heading = "io")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub numa_mem_policy: Option<String>,

    /// Where each worker's I/O starts in its file; the file reaches offset + size (fio's
    /// offset) (io) [default: 0].
    #[arg(long, value_name = "SIZE", help_heading = "io")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<String>,

    /// Each worker starts this much further into its file than the worker before, e.g. one
    /// region each in a same_file (fio's offset_increment) (io) [default: 0].
    #[arg(long, value_name = "SIZE", help_heading = "io")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset_increment: Option<String>,

    /// The least bytes per second each worker must keep over every second of a phase, or it
    /// stops with an error of kind ratemin (fio's ratemin) (io).
    #[arg(long, value_name = "SIZE", help_heading = "io")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_min: Option<String>,

    /// Passes over the file of a phase that is not time-based, each read pass from the
    /// storage (fio's loops) [default: 1] (io).
    #[arg(long, value_name = "N", help_heading = "io")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loops: Option<u64>,
    /// Bytes each worker moves in a pattern that is not time-based, in passes over its file,
    /// in each of its loops (fio's io_size; its filesize with size) [default: size] (io).
    #[arg(long, value_name = "SIZE", help_heading = "io")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_size: Option<String>,

    /// What random offsets are multiples of (fio's blockalign) [default: the smallest block
    /// size] (io).
    #[arg(long, value_name = "SIZE", help_heading = "io")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blockalign: Option<String>,

    /// I/O stays in a zone of this many bytes until it moved that many there, then goes on to
    /// the next zone, zoneskip bytes further, and round again after the last (fio's
    /// zonemode=strided with zonesize) (io).
    #[arg(long, value_name = "SIZE", help_heading = "io")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zonesize: Option<String>,

    /// Bytes between one zone's end and the next zone's start (fio's zoneskip) [default: 0]
    /// (io).
    #[arg(long, value_name = "SIZE", help_heading = "io")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zoneskip: Option<String>,

    /// Bytes added to the offset after every operation of a sequential pattern, which leaves
    /// holes; negative goes backwards, from the end (fio's `rw=read:-8k`) (io).
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true, help_heading = "io")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq_add: Option<String>,

    /// A pause after every thinktime_blocks operations, once they are in (fio's thinktime:
    /// an application's processing between I/Os) (io).
    #[arg(long, value_name = "TIME", help_heading = "io")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinktime: Option<String>,

    /// The first part of thinktime spent spinning on the CPU instead of sleeping (fio's
    /// thinktime_spin) (io).
    #[arg(long, value_name = "TIME", help_heading = "io")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinktime_spin: Option<String>,

    /// Operations between two thinktime pauses (fio's thinktime_blocks) [default: 1] (io).
    #[arg(long, value_name = "N", help_heading = "io")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinktime_blocks: Option<u64>,

    /// The most operations each worker issues in a pattern (fio's number_ios) (io).
    #[arg(long, value_name = "N", help_heading = "io")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number_ios: Option<u64>,

    /// This job's weight in its flow: the jobs of a group with the same flow_id issue their
    /// I/Os in the ratio of their weights, per worker (fio's flow) (io).
    #[arg(long, value_name = "N", help_heading = "io")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow: Option<u64>,

    /// Which flow of the group the job is in (fio's flow_id) [default: 0] (io).
    #[arg(long, value_name = "N", help_heading = "io")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow_id: Option<u64>,

    /// How long a worker ahead of its flow share sleeps before it tries again (fio's
    /// flow_sleep) [default: 0] (io).
    #[arg(long, value_name = "TIME", help_heading = "io")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow_sleep: Option<String>,

    /// Copies of dedupe_percentage's blocks are drawn from the file's first PCT % of blocks as
    /// first written, not one block (fio's dedupe_mode=working_set with
    /// dedupe_working_set_percentage) (io).
    #[arg(long, value_name = "PCT", help_heading = "io")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dedupe_working_set: Option<u32>,

    /// The working set's blocks are shared by every job's copies (fio's dedupe_global) (io).
    #[arg(long, value_name = "0|1", num_args = 0..=1, default_missing_value = "1", value_parser = crate::workloads::shared::parse_flag, help_heading = "io")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dedupe_global: Option<bool>,

    /// Write until the target is full (ENOSPC or EDQUOT), which ends the pattern without an
    /// error; size, when given, is the most to write (fio's fill_device, fill_fs; sequential
    /// writes only) (io).
    #[arg(long, value_name = "0|1", num_args = 0..=1, default_missing_value = "1", value_parser = crate::workloads::shared::parse_flag, help_heading = "io")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fill_device: Option<bool>,

    /// Write a bandwidth log: a line per I/O, in fio's format, in the file PREFIX_bw.N.log
    /// of the working directory, N the worker's number from 1 (fio's write_bw_log) (io).
    #[arg(long, value_name = "PREFIX", help_heading = "io")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_bw_log: Option<String>,

    /// Write latency logs (PREFIX_lat, _clat and _slat.N.log), as write_bw_log (fio's
    /// write_lat_log) (io).
    #[arg(long, value_name = "PREFIX", help_heading = "io")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_lat_log: Option<String>,

    /// Write an IOPS log (PREFIX_iops.N.log), as write_bw_log (fio's write_iops_log) (io).
    #[arg(long, value_name = "PREFIX", help_heading = "io")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_iops_log: Option<String>,

    /// The logs' lines hold each I/O's offset (fio's log_offset) (io).
    #[arg(long, value_name = "0|1", num_args = 0..=1, default_missing_value = "1", value_parser = crate::workloads::shared::parse_flag, help_heading = "io")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_offset: Option<bool>,

    /// The logs' lines hold each I/O's priority value, not whether it was realtime (fio's
    /// log_prio) (io).
    #[arg(long, value_name = "0|1", num_args = 0..=1, default_missing_value = "1", value_parser = crate::workloads::shared::parse_flag, help_heading = "io")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_prio: Option<bool>,

    /// The number of the job's first worker in its logs' names (fio's thread number of the
    /// job's first clone) [default: 1] (io).
    #[arg(long, value_name = "N", help_heading = "io")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_number: Option<usize>,

    /// Find the highest queue depth (up to iodepth) at which I/Os take at most this long,
    /// then measure one latency_window at it (fio's latency_target; microseconds without a
    /// unit) (io).
    #[arg(long, value_name = "TIME", help_heading = "io")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_target: Option<String>,

    /// How long each queue depth of the latency_target search runs before it is judged
    /// (fio's latency_window) [default: 0] (io).
    #[arg(long, value_name = "TIME", help_heading = "io")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_window: Option<String>,

    /// The percentage of a window's I/Os that must be under latency_target (fio's
    /// latency_percentile) [default: 100] (io).
    #[arg(long, value_name = "PCT", help_heading = "io")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_percentile: Option<f64>,

    /// With --verify, read back and check the blocks written after every N of them, and the
    /// last ones at the pattern's end, instead of in a later read (fio's verify_backlog) (io).
    #[arg(long, value_name = "N", help_heading = "io")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify_backlog: Option<u64>,

    /// A block that fails its check is written, as read and as expected, to NAME.OFFSET.received
    /// and NAME.OFFSET.expected in the working directory (fio's verify_dump) (io).
    #[arg(long, value_name = "0|1", num_args = 0..=1, default_missing_value = "1", value_parser = crate::workloads::shared::parse_flag, help_heading = "io")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify_dump: Option<bool>,

    /// In a run that verifies, this job neither writes the verify pattern nor checks what it
    /// reads (fio's job without verify beside jobs with it) (io).
    #[arg(long, value_name = "0|1", num_args = 0..=1, default_missing_value = "1", value_parser = crate::workloads::shared::parse_flag, help_heading = "io")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip_verify: Option<bool>,

    /// Errors that are not counted, by kind (ENOSPC, or errno's number): for reads, writes
    /// and checks, READS,WRITES,CHECKS with kinds joined by `:` (fio's ignore_error; a
    /// failed check is EILSEQ) (io).
    #[arg(long, value_name = "LISTS", help_heading = "io")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignore_error: Option<String>,

    /// The first block that fails its check ends the pattern (fio's verify_fatal) (io).
    #[arg(long, value_name = "0|1", num_args = 0..=1, default_missing_value = "1", value_parser = crate::workloads::shared::parse_flag, help_heading = "io")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify_fatal: Option<bool>,

    /// The path a fio job gave as filename, kept for the record: the file is made in the
    /// job's directory under its base name, `filename` (io).
    #[arg(skip)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fio_filename: Option<String>,

    /// The job's file is this character device that holds no data (/dev/null, /dev/zero,
    /// /dev/full), which --overwrite-device named (fio's filename=/dev/null) (io).
    #[arg(skip)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_file: Option<String>,

    /// Without size, the job's size is its file's when the job starts: a file an earlier job
    /// of the run made (fio's job without size on an existing file) (io).
    #[arg(skip)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_from_file: Option<bool>,
}

impl Options {
    /// The data shape with the working set of dedupe's copies (of a file of `size` bytes in
    /// blocks of `bs`), when given.
    pub(super) fn dedupe_working_set(
        &self,
        mut shape: DataShape,
        size: u64,
        bs: usize,
    ) -> Result<DataShape, ConfigError> {
        if let Some(pct) = self.dedupe_working_set {
            if pct == 0 || pct > 100 {
                return Err(ConfigError::value(
                    "dedupe_working_set",
                    pct,
                    "give a percentage from 1 to 100",
                ));
            }
            if shape.dedupe_percentage.unwrap_or(0) == 0 {
                return Err(
                    "dedupe_working_set is where dedupe_percentage's copies come from: give dedupe_percentage too"
                        .into(),
                );
            }
            let blocks = size / bs as u64 * u64::from(pct) / 100;
            shape.dedupe_working_set_blocks = Some(blocks.max(1));
        }
        shape.dedupe_global = self.dedupe_global.unwrap_or(false);
        if shape.dedupe_global && shape.dedupe_working_set_blocks.is_none() {
            return Err("dedupe_global shares the working set of dedupe's copies: give dedupe_working_set too".into());
        }
        Ok(shape)
    }
}

/// Tell the io jobs with dedupe_global which jobs share their working sets: all such jobs of
/// the run among its first 64 (fio: every job with the option set).
pub(crate) fn share_dedupe(jobs: &mut [Placed<'_>]) {
    let peers = jobs
        .iter()
        .filter(|(index, _, _, io)| *index < 64 && io.data.dedupe_global)
        .fold(0u64, |all, (index, ..)| all | 1 << index);
    for (_, _, _, io) in jobs.iter_mut().filter(|(.., io)| io.data.dedupe_global) {
        io.data.dedupe_peers = peers;
    }
}
