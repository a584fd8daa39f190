//! fio's per-I/O logs (`write_bw_log`, `write_lat_log`, `write_iops_log`): one line per
//! completed I/O, in fio's format (iolog.c, flush_samples), in files named as fio names them
//! (`PREFIX_TYPE.N.log`, N the clone's number among the file's jobs from 1), written in the
//! working directory as fio writes them.
//!
//! A line is `time, value, direction, block size, [offset, ]priority`: the completion's
//! milliseconds since the job's first measured phase started, the value (bw: bytes per
//! millisecond, fio's KiB/s of 1000 over the completion latency; lat, clat and slat:
//! nanoseconds; iops: 1), 0 for a read and 1 for a write, the bytes, the offset with
//! `log_offset`, and the I/O's priority: with `log_prio` fio's ioprio value (`0x2000` is class
//! 1, level 0), else 1 for the realtime class and 0 for any other.
//!
//! The hot loop keeps each sample (40 bytes) in a vector made for the phase's operations when
//! they are known; the lines are written once the phase's I/O is done, outside its timing.

use std::io::Write;

use dfsbench_backends::clock::Instant;
use serde::Serialize;

use crate::error::ConfigError;

use super::Options;

/// The logs a job writes, as given.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Logs {
    /// The prefix of each kind's files, when the job writes it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bw: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lat: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iops: Option<String>,
    /// Each line holds the I/O's offset.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub offset: bool,
    /// Each line holds the I/O's priority value, not whether it was realtime.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub prio: bool,
    /// The number of the job's first worker in the files' names (fio's thread number).
    pub first: usize,
    /// The engine reports submission latencies apart (fio's async engines): there is a slat
    /// file with lines; a synchronous engine's is empty, as fio's.
    #[serde(skip)]
    pub slat: bool,
}

impl Logs {
    /// Read the log options; None when the job writes no log.
    pub(super) fn validate(own: &Options) -> Result<Option<Logs>, ConfigError> {
        let logs = Logs {
            bw: own.write_bw_log.clone(),
            lat: own.write_lat_log.clone(),
            iops: own.write_iops_log.clone(),
            offset: own.log_offset.unwrap_or(false),
            prio: own.log_prio.unwrap_or(false),
            first: own.log_number.unwrap_or(1),
            slat: false,
        };
        if logs.bw.is_none() && logs.lat.is_none() && logs.iops.is_none() {
            if logs.offset || logs.prio {
                return Err("log_offset and log_prio shape the lines of a log: give write_bw_log, write_lat_log or write_iops_log too".into());
            }
            return Ok(None);
        }
        for p in [&logs.bw, &logs.lat, &logs.iops].into_iter().flatten() {
            if p.is_empty() || p.contains(['\0', '/']) {
                return Err(ConfigError::value(
                    "write_bw_log",
                    format!("'{}'", dfsbench_backends::one_line(p)),
                    "give the logs' prefix, a file name without a directory (they are written in the working directory)",
                ));
            }
        }
        Ok(Some(logs))
    }
}

/// One completed I/O.
#[derive(Clone, Copy)]
pub(super) struct Sample {
    /// Nanoseconds since the log's start, at completion.
    pub(super) at_ns: u64,
    /// From the submission call's start to its return, and from then to the completion.
    pub(super) slat_ns: u64,
    pub(super) clat_ns: u64,
    pub(super) offset: u64,
    pub(super) len: u32,
    pub(super) write: bool,
    pub(super) prio: u16,
}

/// A worker's log over the phases of its job.
pub(super) struct IoLog {
    start: Instant,
    pub(super) samples: Vec<Sample>,
    /// Its files were made (later phases append to them).
    made: bool,
}

impl IoLog {
    /// A log that starts now, with room for `ops` samples.
    pub(super) fn new(ops: usize) -> IoLog {
        IoLog {
            start: Instant::now(),
            samples: Vec::with_capacity(ops.clamp(1024, 1 << 24)),
            made: false,
        }
    }

    /// The job's first measured phase starts now: the lines' times count from here.
    pub(super) fn begin(&mut self) {
        if !self.made && self.samples.is_empty() {
            self.start = Instant::now();
        }
    }

    /// When sample `s` started and completed.
    pub(super) fn times(&self, s: &Sample) -> (Instant, Instant) {
        let done = self.start + std::time::Duration::from_nanos(s.at_ns);
        let took = std::time::Duration::from_nanos(s.slat_ns + s.clat_ns);
        (done.checked_sub(took).unwrap_or(done), done)
    }

    /// Keep the samples of `other` too (a latency search's), at their times.
    pub(super) fn absorb(&mut self, other: &IoLog) {
        if !self.made && self.samples.is_empty() {
            self.start = other.start;
        }
        let shift = other.start.saturating_duration_since(self.start).as_nanos() as u64;
        self.samples.extend(other.samples.iter().map(|s| Sample {
            at_ns: s.at_ns + shift,
            ..*s
        }));
    }

    /// Room for `ops` more samples before the phase's clock starts.
    pub(super) fn reserve(&mut self, ops: usize) {
        self.samples.reserve(ops.min(1 << 24));
    }

    /// Keep the I/O that started at `start`, returned from its submission at `submitted` and
    /// completed at `done`.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn add(
        &mut self,
        start: Instant,
        submitted: Instant,
        done: Instant,
        offset: u64,
        len: usize,
        write: bool,
        prio: u16,
    ) {
        let ns = |a: Instant, b: Instant| b.saturating_duration_since(a).as_nanos() as u64;
        self.samples.push(Sample {
            at_ns: ns(self.start, done),
            slat_ns: ns(start, submitted),
            clat_ns: ns(submitted, done),
            offset,
            len: len as u32,
            write,
            prio,
        });
    }

    /// Write the samples kept so far to worker `worker`'s files of `logs`, in `dir`, and
    /// forget them.
    pub(super) fn flush(&mut self, logs: &Logs, worker: usize, dir: &std::path::Path) -> std::io::Result<()> {
        let n = logs.first + worker;
        type Value = fn(&Sample) -> u64;
        let kinds: [(&Option<String>, &str, Value, bool); 5] = [
            (
                &logs.bw,
                "bw",
                |s| u64::from(s.len) * 1_000_000 / s.clat_ns.max(1),
                true,
            ),
            (&logs.iops, "iops", |_| 1, true),
            (&logs.lat, "lat", |s| s.slat_ns + s.clat_ns, true),
            (&logs.lat, "clat", |s| s.clat_ns, true),
            (&logs.lat, "slat", |s| s.slat_ns, logs.slat),
        ];
        for (prefix, kind, value, lines) in kinds {
            let Some(prefix) = prefix else { continue };
            let path = dir.join(format!("{prefix}_{kind}.{n}.log"));
            let file = std::fs::OpenOptions::new()
                .create(true)
                .write(true)
                .append(self.made)
                .truncate(!self.made)
                .open(&path)?;
            let mut out = std::io::BufWriter::new(file);
            for s in self.samples.iter().filter(|_| lines) {
                let prio = if logs.prio {
                    format!("0x{:04x}", s.prio)
                } else {
                    // The realtime class (1) is fio's high priority.
                    u16::from(s.prio >> 13 == 1).to_string()
                };
                let offset = if logs.offset {
                    format!("{}, ", s.offset)
                } else {
                    String::new()
                };
                writeln!(
                    out,
                    "{}, {}, {}, {}, {offset}{prio}",
                    s.at_ns / 1_000_000,
                    value(s),
                    u8::from(s.write),
                    s.len
                )?;
            }
            out.flush()?;
        }
        self.made = true;
        self.samples.clear();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_in_fios_format() {
        let dir = tempfile::tempdir().unwrap();
        let logs = Logs {
            bw: Some("b".into()),
            lat: Some("l".into()),
            offset: true,
            prio: true,
            first: 3,
            ..Logs::default()
        };
        let mut log = IoLog::new(4);
        let t0 = log.start;
        let ms = |m: u64| t0 + std::time::Duration::from_micros(m * 1000);
        // 4096 bytes whose completion took 257604 ns: 15900 (fio's rate).
        log.add(
            ms(2),
            ms(2),
            ms(2) + std::time::Duration::from_nanos(257_604),
            12288,
            4096,
            false,
            0x2000,
        );
        log.flush(&logs, 1, dir.path()).unwrap();
        log.add(ms(5), ms(5), ms(6), 0, 512, true, 0);
        log.flush(&logs, 1, dir.path()).unwrap();
        let read = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap();
        assert_eq!(
            read("b_bw.4.log"),
            "2, 15900, 0, 4096, 12288, 0x2000\n6, 512, 1, 512, 0, 0x0000\n"
        );
        assert_eq!(
            read("l_clat.4.log"),
            "2, 257604, 0, 4096, 12288, 0x2000\n6, 1000000, 1, 512, 0, 0x0000\n"
        );
        assert_eq!(read("l_lat.4.log").lines().count(), 2);
        assert_eq!(
            read("l_slat.4.log"),
            "",
            "a synchronous engine has no submission latencies"
        );
        // Without log_prio: 1 for the realtime class.
        let logs = Logs {
            lat: Some("p".into()),
            first: 1,
            ..Logs::default()
        };
        let mut log = IoLog::new(1);
        let t = log.start;
        log.add(t, t, t, 0, 4096, false, 0x2001);
        log.add(t, t, t, 0, 4096, false, 0x6000);
        log.flush(&logs, 0, dir.path()).unwrap();
        assert_eq!(read("p_lat.1.log"), "0, 0, 0, 4096, 1\n0, 0, 0, 4096, 0\n");
    }
}
