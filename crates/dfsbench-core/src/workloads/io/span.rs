//! Where a worker's I/O goes in its file, and how much each operation moves: the worker's
//! region (fio's offset and offset_increment, IOR's shared-file segments) and the sizes of
//! its operations (bs, or bssplit's weighted sizes).

use rand::Rng;

use crate::error::ConfigError;
use crate::workloads::shared::size_key;

use super::{IoJob, Options};

/// The region and size options of an io job, read.
pub(super) struct Span {
    pub(super) offset: u64,
    pub(super) offset_increment: u64,
    pub(super) bssplit: Vec<(usize, u32)>,
    /// Writes' sizes, when not bssplit's.
    pub(super) bssplit_write: Vec<(usize, u32)>,
    /// Bytes added to the offset after every sequential operation (fio's rw modifier).
    pub(super) seq_add: i64,
    /// What random offsets are multiples of, when not the smallest block (fio's blockalign).
    pub(super) blockalign: u64,
}

impl Span {
    /// Read `offset`, `offset_increment` and `bssplit`; `bs_given`: whether the job set bs
    /// too, which bssplit replaces.
    pub(super) fn validate(own: &Options, bs_given: bool) -> Result<Span, ConfigError> {
        let size = |key: &'static str, v: &Option<String>| v.as_deref().map(|t| size_key(key, t)).transpose();
        let bssplit = own
            .bssplit
            .as_deref()
            .map(parse_bssplit)
            .transpose()?
            .unwrap_or_default();
        let bssplit_write = own
            .bssplit_write
            .as_deref()
            .map(parse_bssplit)
            .transpose()?
            .unwrap_or_default();
        if !bssplit_write.is_empty() && bssplit.is_empty() {
            return Err("bssplit_write gives the writes' block sizes beside bssplit's: give bssplit too".into());
        }
        if !bssplit.is_empty() && bs_given {
            return Err("bssplit gives the block sizes, and so does bs: leave one of them out".into());
        }
        let seq_add = match own.seq_add.as_deref().map(str::trim) {
            None => 0,
            Some(t) => match t.strip_prefix('-') {
                Some(back) => -(size_key("seq_add", back)?.min(i64::MAX as u64) as i64),
                None => size_key("seq_add", t)?.min(i64::MAX as u64) as i64,
            },
        };
        let blockalign = size("blockalign", &own.blockalign)?.unwrap_or(0);
        Ok(Span {
            blockalign,
            seq_add,
            offset: size("offset", &own.offset)?.unwrap_or(0),
            offset_increment: size("offset_increment", &own.offset_increment)?.unwrap_or(0),
            bssplit,
            bssplit_write,
        })
    }
}

/// `4k/50:64k/50`: sizes and their shares of the operations, which make 100.
fn parse_bssplit(text: &str) -> Result<Vec<(usize, u32)>, ConfigError> {
    let bad = |why: String| ConfigError::value("bssplit", format!("'{text}'"), why);
    let mut out = Vec::new();
    for part in text.split(':') {
        let Some((bs, share)) = part.split_once('/') else {
            return Err(bad("write each size with its share: 4k/50:64k/50".into()));
        };
        let bs = size_key("bssplit", bs.trim())?;
        if bs == 0 || bs > 1 << 30 {
            return Err(bad("give block sizes between 1 byte and 1g".into()));
        }
        let share: u32 = share
            .trim()
            .parse()
            .ok()
            .filter(|p| *p <= 100)
            .ok_or_else(|| bad(format!("'{share}' is no percentage")))?;
        out.push((bs as usize, share));
    }
    let total: u32 = out.iter().map(|(_, p)| p).sum();
    if total != 100 {
        return Err(bad(format!("the shares make {total}%: make them 100%")));
    }
    out.retain(|(_, p)| *p > 0);
    Ok(out)
}

impl IoJob {
    /// The smallest operation: offsets are multiples of it.
    pub(super) fn unit(&self) -> u64 {
        self.bssplit
            .iter()
            .chain(&self.bssplit_write)
            .map(|(bs, _)| *bs)
            .min()
            .unwrap_or(self.bs) as u64
    }

    /// What random offsets are multiples of: blockalign, or the smallest operation (fio's
    /// default).
    pub(super) fn grain(&self) -> u64 {
        if self.blockalign > 0 {
            self.blockalign
        } else {
            self.unit()
        }
    }

    /// The bytes of a worker's region: its size in whole units.
    pub(super) fn region_len(&self) -> u64 {
        let unit = self.unit();
        self.size.checked_div(unit).unwrap_or(0) * unit
    }

    /// Where the region of `worker` starts in its file.
    pub(super) fn region_start(&self, worker: usize) -> u64 {
        let w = worker as u64;
        let segment = if self.shared_file { w * self.region_len() } else { 0 };
        self.offset + w * self.offset_increment + segment
    }

    /// How long the layout makes the file of `worker` (of `workers`): to the end of the last
    /// region in it, as fio extends a file to offset + size.
    pub(super) fn file_len(&self, worker: usize, workers: usize) -> u64 {
        let last = if self.one_file() { workers.max(1) - 1 } else { worker };
        self.region_start(last) + self.region_len()
    }

    /// The size of the next operation, a write or not: bs, or one of bssplit's (or
    /// bssplit_write's) by its share.
    pub(super) fn pick_len(&self, write: bool, rng: &mut impl Rng) -> u64 {
        let split = if write && !self.bssplit_write.is_empty() {
            &self.bssplit_write
        } else {
            &self.bssplit
        };
        let mut roll = rng.gen_range(0..100u32);
        for (bs, share) in split {
            if roll < *share {
                return *bs as u64;
            }
            roll -= share;
        }
        self.bs as u64
    }

    /// Operations per pass over a region, when every one is the same size.
    pub(super) fn ops_per_pass(&self) -> Option<u64> {
        let blocks = self.region_len().checked_div(self.unit()).unwrap_or(0);
        self.bssplit.is_empty().then_some(blocks)
    }

    /// Operations of a pattern that is not time-based, when every one is the same size:
    /// io_size's (or loops passes'), at most number_ios.
    pub(super) fn ops_per_pattern(&self) -> Option<u64> {
        let per_pass = self.ops_per_pass()?;
        let ops = match self.io_size {
            // fio's loops repeat the job, io_size bytes each time.
            Some(bytes) => (bytes / self.unit()).saturating_mul(self.loops),
            None => per_pass.saturating_mul(self.loops),
        };
        Some(self.number_ios.map_or(ops, |n| n.min(ops)))
    }

    /// Bytes a worker moves in a pattern that is not time-based: with the rw modifier, as fio,
    /// until size bytes are done (the last operation may pass it) or the file ends.
    pub(super) fn bytes_per_pattern(&self) -> u64 {
        let pass = if self.seq_add != 0 {
            self.size
        } else {
            self.region_len()
        };
        self.io_size.unwrap_or(pass).saturating_mul(self.loops)
    }
}

/// Sequential offsets with fio's rw modifier: after every operation the next starts `add`
/// bytes past the end of the last (before it when negative). As fio's (io_u.c,
/// get_next_seq_offset and fill_io_u): the first starts at 0, or at the region's end plus
/// `add` when going backwards, whence a start before 0 goes back there; forwards, a start at
/// or past the file's `size` wraps to 0, and an operation that would pass the region's end,
/// or one after the last reached the file's end, ends the pass (fio's end of file).
pub(super) struct Holes {
    add: i64,
    /// Where the last operation ended in the region (0: none yet this pass).
    last_end: u64,
}

impl Holes {
    pub(super) fn new(add: i64) -> Holes {
        Holes { add, last_end: 0 }
    }

    /// A new pass starts from the beginning again (fio resets its file's position).
    pub(super) fn restart(&mut self) {
        self.last_end = 0;
    }

    /// Where the next operation of `len` bytes starts in a region of `region_len` bytes of a
    /// file of `size`, or None at the end of the pass.
    pub(super) fn next(&mut self, len: u64, region_len: u64, size: u64) -> Option<u64> {
        let back_start = region_len.saturating_sub(self.add.unsigned_abs());
        let pos = match (self.last_end, self.add < 0) {
            (0, true) => back_start,
            (0, false) => 0,
            // The last operation reached the end of the file: fio's end of file.
            (last, _) if last >= size => return None,
            (last, back) => match u64::try_from(last as i64 + self.add) {
                Ok(p) if p < size => p,
                _ if back => back_start,
                _ => 0,
            },
        };
        // A backwards start nearer to the end than one operation starts one before it.
        let pos = if self.add < 0 {
            pos.min(region_len.saturating_sub(len))
        } else {
            pos
        };
        if pos + len > region_len {
            return None;
        }
        self.last_end = pos + len;
        Some(pos)
    }
}

/// fio's strided zones (`zonemode=strided`): I/O stays in a zone of `size` bytes until that
/// many bytes are moved in it, then goes on to the next zone, `skip` bytes after its end; after
/// the last zone that starts in the region it goes round to the first. In a zone, sequential
/// I/O goes in order from its start, random I/O anywhere in it (fio: io_u.c, the zone
/// handling of get_next_offset).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Zones {
    /// Bytes moved in a zone before the next (fio's zonesize).
    pub size: u64,
    /// Bytes between a zone's end and the next zone's start (fio's zoneskip).
    pub skip: u64,
}

/// Where a worker is in its zones.
pub(super) struct ZoneCursor {
    zones: Zones,
    region_len: u64,
    /// The current zone's start, and the bytes moved in it.
    start: u64,
    done: u64,
}

impl ZoneCursor {
    pub(super) fn new(zones: Zones, region_len: u64) -> ZoneCursor {
        ZoneCursor {
            zones,
            region_len,
            start: 0,
            done: 0,
        }
    }

    /// The bytes of the zone starting at `start`: its size, or what is left of the region.
    fn len_at(&self, start: u64) -> u64 {
        self.zones.size.min(self.region_len - start)
    }

    /// The bytes of one round over every zone.
    pub(super) fn round(&self) -> u64 {
        let stride = self.zones.size + self.zones.skip;
        let full = self.region_len / stride;
        let last = self.region_len % stride;
        full * self.zones.size + last.min(self.zones.size)
    }

    /// Where the next operation of (at most) `len` bytes goes, and its length (cut to its
    /// zone's end): in order in the zone, or at a random multiple of `step` in it that leaves
    /// room for `unit` bytes.
    pub(super) fn next(&mut self, len: u64, random: Option<(u64, u64)>, rng: &mut impl Rng) -> (u64, u64) {
        if self.done >= self.len_at(self.start) {
            let next = self.start + self.zones.size + self.zones.skip;
            self.start = if next < self.region_len { next } else { 0 };
            self.done = 0;
        }
        let zone = self.len_at(self.start);
        let at = match random {
            Some((step, unit)) if zone >= unit => self.start + rng.gen_range(0..(zone - unit) / step + 1) * step,
            _ => self.start + self.done.min(zone.saturating_sub(1)),
        };
        let len = len.min(self.start + zone - at);
        self.done += len;
        (at, len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{validate, JobSpec, RunSpec};
    use crate::workloads::Workload;
    use rand::SeedableRng;

    #[test]
    fn bssplit_reads_sizes_and_shares() {
        assert_eq!(parse_bssplit("4k/50:64k/50").unwrap(), vec![(4096, 50), (65536, 50)]);
        assert_eq!(parse_bssplit("4096/100:8k/0").unwrap(), vec![(4096, 100)]);
        for bad in ["4k", "4k/50", "4k/60:8k/60", "0/100", "4k/x"] {
            assert!(parse_bssplit(bad).is_err(), "{bad}");
        }
    }

    /// An io job as validation makes it from `set`'s keys.
    fn io(set: impl FnOnce(&mut JobSpec)) -> IoJob {
        let mut spec = JobSpec::new("io", "io");
        set(&mut spec);
        let config = validate(&RunSpec::default(), &[spec]).unwrap();
        let Workload::Io(io) = config.jobs[0].workload.clone() else {
            unreachable!("an io job")
        };
        io
    }

    #[test]
    fn sizes_come_in_their_shares() {
        let io = io(|s| s.workloads.io.bssplit = Some("4k/75:64k/25".into()));
        let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
        let small = (0..10_000).filter(|_| io.pick_len(false, &mut rng) == 4096).count();
        assert!((7_000..8_000).contains(&small), "{small} of 10000 were 4 KiB");
        assert_eq!(
            (io.unit(), io.bs),
            (4096, 65536),
            "offsets in the smallest, buffers of the largest"
        );
        assert_eq!(io.ops_per_pass(), None);
    }

    #[test]
    fn regions_follow_offset_and_increment() {
        let io = io(|s| {
            s.workloads.io.size = Some("1m".into());
            s.workloads.io.offset = Some("8k".into());
            s.workloads.io.offset_increment = Some("1m".into());
        });
        assert_eq!(io.region_start(0), 8192);
        assert_eq!(io.region_start(2), 8192 + (2 << 20));
        assert_eq!(
            io.file_len(2, 3),
            8192 + (3 << 20),
            "a file per worker: its own region's end"
        );
        let shared = IoJob {
            shared_file: true,
            offset_increment: 0,
            ..io
        };
        assert_eq!(shared.region_start(1), 8192 + (1 << 20));
        assert_eq!(
            shared.file_len(0, 3),
            8192 + (3 << 20),
            "one file: the last region's end"
        );
    }

    #[test]
    fn holes_follow_fio_forwards_and_backwards() {
        // fio's backwards-read.fio: bs=4k, rw=read:-8k over 32k: from 24k down to 0, then
        // from 24k again (the last block is never read, as in fio).
        let mut back = Holes::new(-8192);
        let got: Vec<u64> = (0..9).map(|_| back.next(4096, 32768, 32768).unwrap() / 4096).collect();
        assert_eq!(got, [6, 5, 4, 3, 2, 1, 0, 6, 5]);
        // rw=write:4k: every other block; a start at the file's size wraps to 0.
        let mut skip = Holes::new(4096);
        let got: Vec<Option<u64>> = (0..3).map(|_| skip.next(4096, 16384, 16384)).collect();
        assert_eq!(got, [Some(0), Some(8192), Some(0)]);
        // An operation that reached the end ends the pass (fio's end of file); the next pass
        // starts from 0 again.
        let mut end = Holes::new(8192);
        let got: Vec<Option<u64>> = (0..3).map(|_| end.next(4096, 16384, 16384)).collect();
        assert_eq!(got, [Some(0), Some(12288), None]);
        end.restart();
        assert_eq!(end.next(4096, 16384, 16384), Some(0));
        // fio's 1 MiB (10^6 bytes) with rw=write:4k: the operation at 999,424 would pass the
        // end of the file's whole blocks.
        let mut million = Holes::new(4096);
        let region = 1_000_000 / 4096 * 4096;
        let n = std::iter::from_fn(|| million.next(4096, region, 1_000_000)).count();
        assert_eq!(n, 122, "as many writes as fio's");
    }

    #[test]
    fn bssplit_replaces_bs() {
        let mut spec = JobSpec::new("io", "io");
        spec.shared.bs = Some("4k".into());
        spec.workloads.io.bssplit = Some("4k/50:8k/50".into());
        let e = validate(&RunSpec::default(), &[spec]).unwrap_err().to_string();
        assert!(e.contains("leave one of them out"), "{e}");
    }
}

#[cfg(test)]
mod zone_tests {
    use super::*;
    use rand::SeedableRng;

    /// fio's strided zones: in order in each zone, the next zone a skip further, round again.
    #[test]
    fn zones_go_round() {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(1);
        let mut z = ZoneCursor::new(Zones { size: 2, skip: 3 }, 12);
        assert_eq!(z.round(), 2 + 2 + 2);
        let starts: Vec<u64> = (0..8).map(|_| z.next(1, None, &mut rng).0).collect();
        assert_eq!(starts, [0, 1, 5, 6, 10, 11, 0, 1]);
        // The last zone cut by the region's end; random offsets stay in their zone.
        let mut z = ZoneCursor::new(Zones { size: 4, skip: 4 }, 10);
        assert_eq!(z.round(), 4 + 2);
        for _ in 0..4 {
            assert!(z.next(1, Some((1, 1)), &mut rng).0 < 4);
        }
        let (at, len) = z.next(4, Some((1, 1)), &mut rng);
        assert!((8..10).contains(&at) && at + len <= 10, "{at} {len}");
    }
}
