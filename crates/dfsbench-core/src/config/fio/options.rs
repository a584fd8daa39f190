//! The fio options the job-file reader knows, and what each sets in the io job it builds.

use crate::dist::Access;
use crate::units::parse_duration;

use super::super::{RunSpec, WorkloadFile};
use super::job::{Job, Rate};
use super::values::{bssplit, bytes_pair, bytes_range, cmdprio_bssplit, flag, one_rate, percentage, size_bytes};
use super::{Opt, Refused};

/// The fio options this reader knows: it reads them (or takes them as fio's default and
/// dfsbench's), and refuses every other one by name. A test checks each against the reader.
pub const KEYS: &[&str] = &[
    "name",
    "description",
    "group_reporting",
    "new_group",
    "thread",
    "stonewall",
    "wait_for_previous",
    "rw",
    "readwrite",
    "bs",
    "blocksize",
    "bsrange",
    "blocksize_range",
    "size",
    "numjobs",
    "iodepth",
    "rwmixread",
    "rwmixwrite",
    "direct",
    "buffered",
    "pre_read",
    "end_fsync",
    "fsync_on_close",
    "ioengine",
    "time_based",
    "runtime",
    "timeout",
    "ramp_time",
    "filename",
    "directory",
    "buffer_compress_percentage",
    "buffer_compress_chunk",
    "dedupe_percentage",
    "refill_buffers",
    "scramble_buffers",
    "random_distribution",
    "invalidate",
    "norandommap",
    "randrepeat",
    "randseed",
    "fsync",
    "fdatasync",
    "rate",
    "rate_iops",
    "rate_process",
    "io_submit_mode",
    "gtod_reduce",
    "unified_rw_reporting",
    "loops",
    "verify",
    "do_verify",
    "kb_base",
    "startdelay",
    "offset",
    "offset_increment",
    "bssplit",
    "ratemin",
    "ratecycle",
    "filesize",
    "io_size",
    "io_limit",
    "nrfiles",
    "nr_files",
    "wait_for",
    "blockalign",
    "ba",
    "fallocate",
    "number_ios",
    "thinktime",
    "thinktime_spin",
    "thinktime_blocks",
    "flow",
    "flow_id",
    "flow_sleep",
    "dedupe_mode",
    "dedupe_working_set_percentage",
    "dedupe_global",
    "exitall",
    "exitall_on_error",
    "exit_what",
    "verify_interval",
    "verify_pattern",
    "create_serialize",
    "error_dump",
    "continue_on_error",
    "fill_device",
    "fill_fs",
    "write_bw_log",
    "write_lat_log",
    "write_iops_log",
    "log_offset",
    "log_prio",
    "per_job_logs",
    "zonemode",
    "zonesize",
    "zoneskip",
    "zonerange",
    "allow_file_create",
    "latency_target",
    "latency_window",
    "latency_percentile",
    "latency_run",
    "random_generator",
    "verify_backlog",
    "verify_dump",
    "verify_fatal",
    "verify_async",
    "create_on_open",
    "prioclass",
    "prio",
    "cmdprio_percentage",
    "cmdprio_class",
    "cmdprio",
    "cmdprio_bssplit",
    "numa_cpu_nodes",
    "numa_mem_policy",
    "ignore_error",
    "ss",
    "steadystate",
    "ss_dur",
    "steadystate_duration",
    "ss_ramp",
    "steadystate_ramp_time",
];

/// Why a job of a zoned block device is refused: a device reason.
pub(super) const ZONED_DEVICE: &str = "the target must be a zoned block device (host-managed or host-aware, zones with write pointers), and dfsbench does not drive zones: a device dfsbench cannot run on";

/// Why a job of another engine is refused.
pub(super) const FOREIGN_ENGINE: &str = "dfsbench's engines are psync/sync, io_uring, libaio, posixaio and mmap";

/// fio's checksum kinds (and `meta`): dfsbench's check of every byte against its own data
/// finds whatever they find.
const VERIFY_KINDS: &[&str] = &[
    "md5",
    "crc64",
    "crc32c",
    "crc32c-intel",
    "crc32",
    "crc16",
    "crc7",
    "xxhash",
    "sha1",
    "sha256",
    "sha512",
    "sha3-224",
    "sha3-256",
    "sha3-384",
    "sha3-512",
    "meta",
];

impl<'a> Job<'a> {
    /// Apply option `o`, or say in `refused` why it cannot be.
    pub(super) fn apply(&mut self, o: &'a Opt, file: &mut WorkloadFile, refused: &mut Vec<Refused>) {
        if let Some(why) = &o.unset {
            // Its value is unknown: whatever the option, this is all there is to say.
            refused.push(Refused::of(o, Some(why.clone())));
            return;
        }
        let mut refuse = |why: Option<String>| refused.push(Refused::of(o, why));
        let v = o.value.as_deref();
        match (o.key.as_str(), v) {
            ("name", Some(n)) => self.spec.settings.name = Some(n.to_string()),
            ("group_reporting", _) => self.group_reporting = flag(v) != Some(false),
            ("description" | "new_group" | "thread", _) => {}
            // fio's jobs as threads: dfsbench's workers are threads already. Not in KEYS: on a
            // command line `--threads` stays dfsbench's own flag (OS threads).
            ("threads", _) => match flag(v) {
                Some(true) => {}
                _ => refuse(Some("dfsbench's workers are threads: give 1 or leave it out".into())),
            },
            ("stonewall" | "wait_for_previous", _) => match flag(v) {
                Some(b) => self.stonewall = b,
                None => refuse(Some("give 0 or 1".into())),
            },
            ("rw" | "readwrite", Some(text)) => {
                let (rw, modifier) = text.split_once(':').map_or((text, None), |(r, m)| (r, Some(m.trim())));
                let io = &mut self.spec.workloads.io;
                match (rw, modifier) {
                    ("trim" | "randtrim" | "trimwrite" | "randtrimwrite", _) => refuse(Some(
                        "trims are for a device (fio: Linux block devices and SCSI character devices only)".into(),
                    )),
                    ("read" | "write" | "randread" | "randwrite" | "randrw" | "rw" | "readwrite", None) => {
                        io.rw = Some(if rw == "rw" { "readwrite" } else { rw }.into());
                        io.seq_add = None;
                    }
                    // An offset added after every I/O of a sequential pattern, negative going
                    // backwards (fio's rw modifier).
                    ("read" | "write" | "rw" | "readwrite", Some(m)) => {
                        let (back, bytes) = m.strip_prefix('-').map_or((false, m), |b| (true, b));
                        match size_bytes(bytes, self.kb_base) {
                            Ok(b) => {
                                io.rw = Some(if rw == "rw" { "readwrite" } else { rw }.into());
                                io.seq_add = (b > 0).then(|| format!("{}{b}", if back { "-" } else { "" }));
                            }
                            Err(why) => refuse(Some(why)),
                        }
                    }
                    _ => refuse(Some(
                        "dfsbench has read, write, randread, randwrite, rw and randrw, with an offset modifier on the sequential ones only (a new random offset every N I/Os is not dfsbench's)".into(),
                    )),
                }
            }
            ("bs" | "blocksize", Some(bs)) => match bytes_pair(bs, self.kb_base) {
                Ok(b) => self.spec.shared.bs = Some(b.to_string()),
                Err(why) => refuse(Some(why)),
            },
            ("bsrange" | "blocksize_range", Some(r)) => match bytes_range(r, self.kb_base) {
                Ok(b) => self.spec.shared.bs = Some(b.to_string()),
                Err(why) => refuse(Some(why)),
            },
            ("size", Some(t)) => match size_bytes(t, self.kb_base) {
                Ok(b) => {
                    self.spec.workloads.io.size = Some(b.to_string());
                    self.size = Some(o);
                }
                Err(why) => refuse(Some(why)),
            },
            ("numjobs", Some(n)) => match n.parse::<usize>() {
                Ok(n) if n > 0 => {
                    self.spec.settings.workers = Some(n);
                    self.workers = n;
                }
                _ => refuse(Some("give a number of clones, 1 or more".into())),
            },
            ("iodepth", Some(n)) => match n.parse() {
                Ok(n) => self.spec.workloads.io.iodepth = Some(n),
                Err(_) => refuse(Some("give a queue depth".into())),
            },
            ("rwmixread" | "rwmixwrite", Some(p)) => match percentage(p) {
                Some(p) => {
                    let read = if o.key == "rwmixread" { p } else { 100 - p };
                    self.spec.workloads.io.rwmixread = Some(read);
                }
                None => refuse(Some("give a percentage".into())),
            },
            ("direct" | "buffered", _) => match flag(v) {
                Some(b) => self.spec.shared.direct = Some(b == (o.key == "direct")),
                None => refuse(Some("give 0 or 1".into())),
            },
            ("pre_read", _) => match flag(v) {
                Some(b) => self.spec.workloads.io.pre_read = Some(b),
                None => refuse(Some("give 0 or 1".into())),
            },
            ("end_fsync" | "fsync_on_close", _) => match flag(v) {
                Some(b) => self.spec.shared.fsync = Some(b),
                None => refuse(Some("give 0 or 1".into())),
            },
            ("ioengine", Some(e)) => {
                self.foreign_engine = false;
                match e {
                    "psync" | "sync" | "pvsync" => self.spec.workloads.io.ioengine = Some("psync".into()),
                    "io_uring" | "libaio" | "posixaio" | "mmap" => self.spec.workloads.io.ioengine = Some(e.to_string()),
                    _ => {
                        self.foreign_engine = true;
                        refused.push(Refused {
                            whole: true,
                            ..Refused::of(o, Some(FOREIGN_ENGINE.into()))
                        });
                    }
                }
            }
            ("time_based", _) => match flag(v) {
                Some(true) => self.time_based = Some(o),
                Some(false) => self.time_based = None,
                None => refuse(Some("give 0 or 1".into())),
            },
            ("runtime" | "timeout", Some(t)) => match parse_duration(t) {
                // fio's 0 is no limit, as if it were not given (an earlier one is undone).
                Ok(d) if d.is_zero() => {
                    self.spec.settings.duration = None;
                    self.runtime = None;
                }
                Ok(_) => {
                    self.spec.settings.duration = Some(t.to_string());
                    self.runtime = Some(o);
                }
                Err(e) => refuse(Some(e)),
            },
            ("ramp_time", Some(t)) => match parse_duration(t) {
                Ok(_) => self.spec.settings.ramp = Some(t.to_string()),
                Err(e) => refuse(Some(e)),
            },
            ("filename", Some(f)) => {
                self.names_device = false;
                self.spec.workloads.io.device_file = None;
                let path = std::path::Path::new(f);
                let char_device = dfsbench_backends::is_dataless_char_device(path);
                if f.starts_with("/dev/") || dfsbench_backends::is_block_device(path) || char_device {
                    self.names_device = true;
                    let named = self.devices.iter().any(|d| std::path::Path::new(d) == path);
                    if !named {
                        refuse(Some(format!(
                            "a device: dfsbench overwrites a device only when --overwrite-device {f} names it"
                        )));
                    } else if char_device {
                        // A device that holds no data: the job's file, beside the run's.
                        let io = &mut self.spec.workloads.io;
                        (io.filename, io.fio_filename) = (None, None);
                        io.device_file = Some(f.to_string());
                        self.filename = Some(o);
                    } else if file.target.as_deref().is_some_and(|t| t != f) {
                        refuse(Some("another target than an earlier job's: dfsbench runs in one target".into()));
                    } else {
                        file.target = Some(f.to_string());
                        self.on_device = true;
                        let io = &mut self.spec.workloads.io;
                        (io.filename, io.fio_filename) = (None, None);
                    }
                } else if f.contains(':') {
                    refuse(Some("several files: dfsbench's io job has one file (shared by numjobs clones)".into()));
                } else {
                    // A path: the file is made in the run's directory under its base name, as
                    // dfsbench writes nowhere else, and shared by the jobs that name it (as
                    // fio's); the path is kept in the result.
                    let base = f.rsplit('/').next().unwrap_or_default();
                    if base.is_empty() || base == "." || base == ".." {
                        refuse(Some("a directory: name a file".into()));
                    } else {
                        let io = &mut self.spec.workloads.io;
                        io.filename = Some(base.to_string());
                        io.fio_filename = (base != f).then(|| f.to_string());
                        self.filename = Some(o);
                    }
                }
            }
            ("directory", Some(d)) => {
                if d.contains(':') {
                    refuse(Some("one directory only".into()));
                } else if file.target.as_deref().is_some_and(|t| t != d) {
                    refuse(Some(
                        "another directory than an earlier job's: dfsbench runs in one target".into(),
                    ));
                } else {
                    file.target = Some(d.to_string());
                }
            }
            ("buffer_compress_percentage", Some(p)) => match percentage(p) {
                Some(p) => self.spec.shared.compress_percentage = Some(p),
                None => refuse(Some("give a percentage, 0-100".into())),
            },
            ("buffer_compress_chunk", Some(c)) => {
                if size_bytes(c, self.kb_base) != Ok(512) {
                    refuse(Some("dfsbench makes data compressible in segments of 512 bytes, fio's default chunk: give 512 or leave it out".into()));
                }
            }
            ("dedupe_percentage", Some(p)) => match percentage(p) {
                Some(p) => self.spec.shared.dedupe_percentage = Some(p),
                None => refuse(Some("give a percentage, 0-100".into())),
            },
            // New random bytes for every block: dfsbench's generated data, with no zeros and
            // no copies unless the job asks for them.
            ("refill_buffers", _) => match flag(v) {
                Some(true) => {
                    self.spec.shared.dedupe_percentage.get_or_insert(0);
                }
                Some(false) => {}
                None => refuse(Some("give 0 or 1".into())),
            },
            // 0 is dfsbench's default: one buffer of random bytes, repeated.
            ("scramble_buffers", _) => match flag(v) {
                Some(false) => {}
                Some(true) => refuse(Some(
                    "dfsbench does not scramble a repeated buffer: set 0 (one random buffer, repeated) or use refill_buffers (new random bytes every block)".into(),
                )),
                None => refuse(Some("give 0 or 1".into())),
            },
            ("random_distribution", Some(d)) => match Access::parse(d) {
                Ok(_) => self.spec.shared.random_distribution = Some(d.to_string()),
                Err(e) => refuse(Some(e.to_string())),
            },
            ("invalidate", _) => match (flag(v), file.run.invalidate) {
                (Some(b), Some(was)) if b != was => refuse(Some(
                    "differs from an earlier job's: dfsbench invalidates for the whole run".into(),
                )),
                (Some(b), _) => {
                    file.run = RunSpec {
                        invalidate: Some(b),
                        ..std::mem::take(&mut file.run)
                    }
                }
                (None, _) => refuse(Some("give 0 or 1".into())),
            },
            // Each block once per pass is fio's random map and dfsbench's default.
            ("verify", Some(kind)) => match kind {
                "0" | "null" => self.verify = None,
                k if VERIFY_KINDS.contains(&k) => self.verify = Some(o),
                _ => refuse(Some(format!(
                    "dfsbench checks every byte read against its own data, which keeps fio's checksum kinds ({}) and meta; not a pattern of yours",
                    VERIFY_KINDS[..VERIFY_KINDS.len() - 1].join(", ")
                ))),
            },
            ("do_verify", _) => match flag(v) {
                Some(b) => self.do_verify = b,
                None => refuse(Some("give 0 or 1".into())),
            },
            ("loops", Some(n)) => match n.parse::<u64>() {
                Ok(n) if n > 0 => self.spec.workloads.io.loops = Some(n),
                _ => refuse(Some("give a number of passes, 1 or more".into())),
            },
            ("norandommap", _) => match flag(v) {
                Some(b) => self.spec.workloads.io.norandommap = Some(b),
                None => refuse(Some("give 0 or 1".into())),
            },
            // fio's randrepeat=1 (its default) repeats the random sequence run after run, as
            // dfsbench's fixed default seed does; randrepeat=0 takes a new seed each run.
            ("randrepeat", _) => match flag(v) {
                Some(true) => {}
                Some(false) => {
                    file.run.seed.get_or_insert_with(rand::random);
                }
                None => refuse(Some("give 0 or 1".into())),
            },
            ("randseed", Some(n)) => match n.parse::<u64>() {
                Ok(seed) => file.run.seed = Some(seed),
                Err(_) => refuse(Some("give a number".into())),
            },
            ("fsync" | "fdatasync", Some(n)) => match n.parse::<u64>() {
                Ok(0) => {}
                Ok(n) if o.key == "fsync" => self.spec.workloads.io.fsync_every = Some(n),
                Ok(n) => self.spec.workloads.io.fdatasync_every = Some(n),
                Err(_) => refuse(Some("give a number of writes".into())),
            },
            ("rate_iops", Some(r)) => match one_rate(r).and_then(|r| r.parse::<f64>().ok()).filter(|r| *r > 0.0) {
                Some(iops) => self.rate = Some((Rate::Iops(iops), o)),
                None => refuse(Some("give one operations-per-second figure for reads and writes alike".into())),
            },
            ("rate", Some(r)) => match one_rate(r).map(|r| size_bytes(r, self.kb_base)) {
                Some(Ok(b)) if b > 0 => self.rate = Some((Rate::BytesPerSec(b), o)),
                _ => refuse(Some("give one bytes-per-second figure for reads and writes alike, such as 10m".into())),
            },
            // dfsbench's open loop submits each block at its intended start whatever is in
            // flight at any queue depth, as fio's offload; without a rate both are fio's inline.
            ("io_submit_mode", Some("inline" | "offload")) => {}
            ("io_submit_mode", Some(_)) => refuse(Some("fio's io_submit_mode is inline or offload".into())),
            ("rate_process", Some(p)) => match p {
                "linear" => self.spec.settings.arrival = Some("uniform".into()),
                "poisson" => self.spec.settings.arrival = Some("poisson".into()),
                _ => refuse(Some("fio's rate_process is linear or poisson".into())),
            },
            // fio then keeps fewer clock readings and reports no latencies; dfsbench's clock is
            // cheap, and it still times every operation. One report of reads and writes:
            // dfsbench's phase totals are that, beside its per-kind figures.
            ("gtod_reduce" | "unified_rw_reporting", _) => {
                if flag(v).is_none() {
                    refuse(Some("give 0 or 1".into()));
                }
            }
            // fio paces and checks each clone: dfsbench's floor is per worker too.
            ("ratemin", Some(r)) => match one_rate(r).map(|r| size_bytes(r, self.kb_base)) {
                Some(Ok(b)) => self.spec.workloads.io.rate_min = Some(b.to_string()),
                _ => refuse(Some("give one bytes-per-second figure for reads and writes alike, such as 1m".into())),
            },
            ("ratecycle", Some(ms)) => {
                if ms.trim() != "1000" {
                    refuse(Some("dfsbench checks ratemin over every second: give 1000 or leave it out".into()));
                }
            }
            ("kb_base", Some(b)) => match b {
                "1024" => self.kb_base = 1024,
                "1000" => self.kb_base = 1000,
                _ => refuse(Some("fio's kb_base is 1024 or 1000".into())),
            },
            ("startdelay", Some(t)) => match parse_duration(t) {
                Ok(_) => self.spec.settings.start_delay = Some(t.to_string()),
                Err(_) if t.contains('-') => refuse(Some("a random delay from a range: give one time".into())),
                Err(e) => refuse(Some(e)),
            },
            ("offset" | "offset_increment", Some(t)) => match size_bytes(t, self.kb_base) {
                Ok(b) if o.key == "offset" => self.spec.workloads.io.offset = Some(b.to_string()),
                Ok(b) => self.spec.workloads.io.offset_increment = Some(b.to_string()),
                Err(_) if t.ends_with('%') => refuse(Some("a share of the file: give a byte count".into())),
                Err(why) => refuse(Some(why)),
            },
            ("bssplit", Some(t)) => match bssplit(t, self.kb_base) {
                Ok((reads, writes)) => {
                    self.spec.workloads.io.bssplit = Some(reads);
                    self.spec.workloads.io.bssplit_write = writes;
                    self.bssplit = true;
                }
                Err(why) => refuse(Some(why)),
            },
            // I/O priorities: the job's, and per I/O on io_uring and libaio.
            ("prioclass" | "prio", Some(n)) => match n.trim().parse::<u32>() {
                Ok(n) if o.key == "prioclass" => self.spec.workloads.io.prioclass = Some(n),
                Ok(n) => self.spec.workloads.io.prio = Some(n),
                Err(_) => refuse(Some("give a number".into())),
            },
            ("cmdprio_percentage" | "cmdprio_class" | "cmdprio", Some(t)) => {
                let io = &mut self.spec.workloads.io;
                let slot = match o.key.as_str() {
                    "cmdprio_percentage" => &mut io.cmdprio_percentage,
                    "cmdprio_class" => &mut io.cmdprio_class,
                    _ => &mut io.cmdprio,
                };
                *slot = Some(t.trim().to_string());
            }
            // fio's steady state: dfsbench's until_stable with fio's measure and ramp.
            ("ss" | "steadystate", Some(t)) => {
                let (measure, limit) = t.split_once(':').unwrap_or((t, ""));
                let measure = measure.trim().to_ascii_lowercase();
                match limit.trim().strip_suffix('%') {
                    Some(pct) if pct.trim().parse::<f64>().is_ok_and(|p| p > 0.0 && p < 100.0) => {
                        let settings = &mut self.spec.settings;
                        settings.until_stable = Some(true);
                        settings.stable_measure = Some(measure);
                        settings.stable_band = Some(format!("{}%", pct.trim()));
                        self.steady = Some(o);
                    }
                    _ => refuse(Some(
                        "give the measure and its limit as a percentage, such as iops:10% or bw_slope:1% (an absolute limit is not dfsbench's)".into(),
                    )),
                }
            }
            ("ss_dur" | "steadystate_duration" | "ss_ramp" | "steadystate_ramp_time", Some(t)) => match parse_duration(t) {
                Ok(_) if o.key.ends_with("dur") || o.key.ends_with("duration") => {
                    self.spec.settings.stable_window = Some(t.to_string());
                    self.steady_dur = true;
                }
                Ok(_) => self.spec.settings.stable_ramp = Some(t.to_string()),
                Err(e) => refuse(Some(e)),
            },
            // Errors that are not errors: with dfsbench's way of going on after one (fio's
            // continue_on_error), they are not counted either.
            ("ignore_error", Some(t)) => self.spec.workloads.io.ignore_error = Some(t.trim().to_string()),
            ("numa_cpu_nodes" | "numa_mem_policy", Some(t)) => {
                if let Some(why) = crate::workloads::io::numa_refused(&o.key, t.trim()) {
                    return refuse(Some(why));
                }
                let io = &mut self.spec.workloads.io;
                let slot = if o.key == "numa_cpu_nodes" {
                    &mut io.numa_cpu_nodes
                } else {
                    &mut io.numa_mem_policy
                };
                *slot = Some(t.trim().to_string());
            }
            ("cmdprio_bssplit", Some(t)) => match cmdprio_bssplit(t, self.kb_base) {
                Ok(split) => self.spec.workloads.io.cmdprio_bssplit = Some(split),
                Err(why) => refuse(Some(why)),
            },
            ("filesize", Some(t)) => {
                let bytes = if t.contains(['-', ':']) {
                    bytes_range(t, self.kb_base).map_err(|_| "a range of file sizes: dfsbench's files are one size".to_string())
                } else {
                    size_bytes(t, self.kb_base)
                };
                match bytes {
                    Ok(b) => self.filesize = Some((b, o)),
                    Err(why) => refuse(Some(why)),
                }
            }
            ("io_size" | "io_limit", Some(t)) => match size_bytes(t, self.kb_base) {
                Ok(b) => {
                    self.spec.workloads.io.io_size = Some(b.to_string());
                    self.io_size = true;
                }
                Err(why) => refuse(Some(why)),
            },
            ("nrfiles" | "nr_files", Some(n)) => {
                if n.trim() != "1" {
                    refuse(Some("several files per clone: dfsbench's io job has one (give 1, or more numjobs)".into()));
                }
            }
            ("wait_for", Some(_)) => self.wait_for = Some(o),
            ("blockalign" | "ba", Some(t)) => match bytes_pair(t, self.kb_base) {
                Ok(b) => self.blockalign = Some((b, o)),
                Err(why) => refuse(Some(why)),
            },
            // dfsbench makes its files by writing them, never preallocating.
            ("fallocate", Some(m)) => {
                if !matches!(m, "none" | "0") {
                    refuse(Some("dfsbench does not preallocate files: give none or leave it out".into()));
                }
            }
            ("number_ios", Some(n)) => match n.parse::<u64>() {
                Ok(0) => {}
                Ok(n) => self.spec.workloads.io.number_ios = Some(n),
                Err(_) => refuse(Some("give a number of I/Os".into())),
            },
            // fio's times without a unit are microseconds here.
            ("thinktime" | "thinktime_spin", Some(t)) => {
                let time = if t.bytes().all(|b| b.is_ascii_digit()) {
                    format!("{t}us")
                } else {
                    t.to_string()
                };
                match parse_duration(&time) {
                    Ok(_) if o.key == "thinktime" => self.spec.workloads.io.thinktime = Some(time),
                    Ok(_) => self.spec.workloads.io.thinktime_spin = Some(time),
                    Err(e) => refuse(Some(e)),
                }
            }
            // fio's flow weights are relative shares of a flow's I/Os, per clone.
            ("flow" | "flow_id", Some(n)) => match n.parse::<u64>() {
                Ok(n) if o.key == "flow" => self.spec.workloads.io.flow = Some(n),
                Ok(n) => self.spec.workloads.io.flow_id = Some(n),
                Err(_) => refuse(Some("give a whole number, 0 or more".into())),
            },
            ("flow_sleep", Some(n)) => match n.parse::<u64>() {
                Ok(us) => self.spec.workloads.io.flow_sleep = Some(format!("{us}us")),
                Err(_) => refuse(Some("give microseconds".into())),
            },
            // repeat, fio's default, is what dedupe_percentage gives; working_set draws the
            // copies from the first blocks written (dedupe_working_set_percentage of them).
            ("dedupe_mode", Some(m)) => match m {
                "repeat" => self.working_set = false,
                "working_set" => self.working_set = true,
                _ => refuse(Some("fio's dedupe_mode is repeat or working_set".into())),
            },
            ("dedupe_working_set_percentage", Some(p)) => match percentage(p).filter(|p| *p > 0) {
                Some(p) => self.working_set_percentage = p,
                None => refuse(Some("give a percentage, 1-100".into())),
            },
            ("dedupe_global", _) => match flag(v) {
                Some(b) => self.spec.workloads.io.dedupe_global = Some(b),
                None => refuse(Some("give 0 or 1".into())),
            },
            // When a job ends (or fails), the others of its group stop.
            ("exitall" | "exitall_on_error", _) => match flag(v) {
                Some(b) if o.key == "exitall" => self.spec.settings.exitall = Some(b),
                Some(b) => self.spec.settings.exitall_on_error = Some(b),
                None => refuse(Some("give 0 or 1".into())),
            },
            // group, fio's default, and stonewall (the running jobs: one group in dfsbench) stop
            // the job's group; all also the groups after it, which read() checks.
            ("exit_what", Some(w)) => match w {
                "group" | "stonewall" => self.exit_all = None,
                "all" => self.exit_all = Some(o),
                _ => refuse(Some("fio's exit_what is group, stonewall or all".into())),
            },
            // dfsbench's verified data has its header (file, offset) in every 512-byte sector.
            ("verify_interval", Some(n)) => {
                if size_bytes(n, self.kb_base) != Ok(512) {
                    refuse(Some("dfsbench's verify header is in every 512-byte sector: give 512 or leave it out".into()));
                }
            }
            // The data is dfsbench's own (a header naming the file and offset, then random
            // words, in every sector): checking every byte of it finds what a check of the
            // pattern finds (README: Coming from fio).
            ("verify_pattern", Some(_)) => {}
            // The files are laid out before the measured phases: how is not measured.
            ("create_serialize", _) => {
                if flag(v).is_none() {
                    refuse(Some("give 0 or 1".into()));
                }
            }
            // dfsbench records every error in the result (kind, first message, count).
            ("error_dump", _) => {
                if flag(v).is_none() {
                    refuse(Some("give 0 or 1".into()));
                }
            }
            // dfsbench records an error and goes on, until --max-errors (default 1000).
            ("continue_on_error", Some(c)) => match c {
                "read" | "write" | "io" | "verify" | "all" | "1" => {}
                "none" | "0" => refuse(Some(
                    "dfsbench records an error and goes on until --max-errors: leave it out, or give --max-errors 1".into(),
                )),
                _ => refuse(Some("fio's continue_on_error is none, read, write, io, verify or all".into())),
            },
            ("fill_device" | "fill_fs", _) => match flag(v) {
                Some(b) => {
                    self.spec.workloads.io.fill_device = Some(b);
                    self.fill = b;
                }
                None => refuse(Some("give 0 or 1".into())),
            },
            // Per-I/O logs in fio's format and names; without a prefix, the job's name.
            ("write_bw_log" | "write_lat_log" | "write_iops_log", _) => {
                let prefix = v.filter(|p| !p.is_empty()).map(str::to_string);
                let io = &mut self.spec.workloads.io;
                let slot = match o.key.as_str() {
                    "write_bw_log" => &mut io.write_bw_log,
                    "write_lat_log" => &mut io.write_lat_log,
                    _ => &mut io.write_iops_log,
                };
                *slot = Some(prefix.unwrap_or_default());
            }
            ("log_offset" | "log_prio", _) => match flag(v) {
                Some(b) if o.key == "log_offset" => self.spec.workloads.io.log_offset = Some(b),
                Some(b) => self.spec.workloads.io.log_prio = Some(b),
                None => refuse(Some("give 0 or 1".into())),
            },
            ("per_job_logs", _) => match flag(v) {
                Some(true) => {}
                Some(false) => refuse(Some(
                    "dfsbench writes a log per clone, fio's default: give 1 or leave it out".into(),
                )),
                None => refuse(Some("give 0 or 1".into())),
            },
            // Zones: strided ones are io's; a zoned block device's (zbd) are not dfsbench's.
            ("zonemode", Some(m)) => match m {
                "none" | "strided" => {
                    self.zonemode = Some(m == "strided");
                    self.zoned = false;
                }
                "zbd" => {
                    self.zoned = true;
                    refused.push(Refused {
                        whole: true,
                        ..Refused::of(o, Some(ZONED_DEVICE.into()))
                    });
                }
                _ => refuse(Some("fio's zonemode is none, strided or zbd".into())),
            },
            ("zonesize" | "zoneskip" | "zonerange", Some(t)) => match size_bytes(t, self.kb_base) {
                Ok(b) => {
                    let slot = match o.key.as_str() {
                        "zonesize" => &mut self.zonesize,
                        "zoneskip" => &mut self.zoneskip,
                        _ => &mut self.zonerange,
                    };
                    *slot = Some((b, o));
                }
                Err(_) if t.ends_with('%') => refuse(Some("a share of the file: give a byte count".into())),
                Err(why) => refuse(Some(why)),
            },
            (
                "max_open_zones" | "job_max_open_zones" | "read_beyond_wp" | "zonecapacity" | "zone_reset_threshold"
                | "zone_reset_frequency" | "ignore_zone_limits",
                _,
            ) => refuse(Some(format!("zonemode=zbd's: {ZONED_DEVICE}"))),
            // fio refuses to create a file: the file must exist, which dfsbench's (its run's
            // own) never do before the run; a device does (read() checks).
            ("allow_file_create", _) => match flag(v) {
                Some(b) => self.allow_file_create = Some((b, o)),
                None => refuse(Some("give 0 or 1".into())),
            },
            // fio's latency-target search of the queue depth.
            ("latency_target" | "latency_window", Some(t)) => {
                let t = t.trim();
                let time = if t.bytes().all(|b| b.is_ascii_digit()) { format!("{t}us") } else { t.to_string() };
                match parse_duration(&time) {
                    Ok(_) if o.key == "latency_target" => self.spec.workloads.io.latency_target = Some(time),
                    Ok(_) => self.spec.workloads.io.latency_window = Some(time),
                    Err(e) => refuse(Some(e)),
                }
            }
            ("latency_percentile", Some(p)) => match p.trim().parse::<f64>() {
                Ok(p) if p > 0.0 && p <= 100.0 => self.spec.workloads.io.latency_percentile = Some(p),
                _ => refuse(Some("give a percentage above 0 and at most 100".into())),
            },
            ("latency_run", _) => match flag(v) {
                Some(false) => {}
                Some(true) => refuse(Some(
                    "dfsbench ends the search at the depth found and measures a window there, fio's default: give 0 or leave it out".into(),
                )),
                None => refuse(Some("give 0 or 1".into())),
            },
            // Each generator makes random offsets; dfsbench's visit every block once per pass
            // (as lfsr's and the random map's do) or, with norandommap, draw each anew.
            ("random_generator", Some(g)) => {
                if !matches!(g, "tausworthe" | "lfsr" | "tausworthe64") {
                    refuse(Some("fio's random_generator is tausworthe, lfsr or tausworthe64".into()));
                }
            }
            // Checks of written blocks as fio's verify options make them.
            ("verify_backlog", Some(n)) => match n.parse::<u64>() {
                Ok(0) => {}
                Ok(n) => self.spec.workloads.io.verify_backlog = Some(n),
                Err(_) => refuse(Some("give a number of blocks".into())),
            },
            ("verify_dump" | "verify_fatal", _) => match flag(v) {
                Some(b) if o.key == "verify_dump" => self.spec.workloads.io.verify_dump = Some(b),
                Some(b) => self.spec.workloads.io.verify_fatal = Some(b),
                None => refuse(Some("give 0 or 1".into())),
            },
            // fio checks in N threads of its own: the same checks, of the same blocks; dfsbench
            // checks each block in its worker as it completes.
            ("verify_async", Some(n)) => {
                if n.parse::<u32>().is_err() {
                    refuse(Some("give a number of threads".into()));
                }
            }
            // fio creates a job's file when it opens it for I/O, not at setup: dfsbench's jobs
            // make theirs when they first open them too.
            ("create_on_open", _) => {
                if flag(v).is_none() {
                    refuse(Some("give 0 or 1".into()));
                }
            }
            ("thinktime_blocks", Some(n)) => match n.parse::<u64>() {
                Ok(n) if n > 0 => self.spec.workloads.io.thinktime_blocks = Some(n),
                _ => refuse(Some("give a number of I/Os, 1 or more".into())),
            },
            _ => refuse(None),
        }
    }
}
