//! The io workload's engine: the file laid out, pre-read or opened at its queue depth, and
//! the hot loop that keeps that many blocks in flight over it.

use dfsbench_backends::clock::Instant;

use rand::{Rng, RngCore};

use dfsbench_backends::{AlignedBuf, BlockIo, BlockOp, BlockOpts, Client, FileOpts, IoEngine, OpError, Source};

use crate::cache::drop_again;
use crate::dist::Picker;
use crate::load::sleep_until;
use crate::pattern::FileKey;
use crate::stats::{Recorder, Reread};
use crate::worker::{JobContext, Worker};
use crate::workloads::shared::{READ, SYNC, WRITE};
use crate::workloads::Kind;

use super::floor::Floor;
use super::latency::Search;
use super::log::IoLog;
use super::span::{Holes, ZoneCursor};
use super::{file_and_region, file_key, io_file, IoJob, Rw, Stint};

/// A worker's file opened for an io run, its write buffers filled: what is set up before the
/// first block.
pub(super) struct OpenedIo<B> {
    path: String,
    /// Where the worker's region of the file starts.
    region: u64,
    /// The verify key of the file's data.
    key: FileKey,
    file: Result<B, OpError>,
}

/// Block order of one pass over a file: in order, or a random permutation that touches every
/// block once per pass (fio's random map) without a map in memory: a full-period LCG modulo
/// the next power of two, skipping indices past the end.
struct BlockOrder {
    blocks: u64,
    mask: u64,
    state: u64,
    increment: u64,
    random: bool,
    next_seq: u64,
}

impl BlockOrder {
    fn new(blocks: u64, random: bool, seed: u64) -> Self {
        let m = blocks.next_power_of_two();
        BlockOrder {
            blocks,
            mask: m - 1,
            state: seed & (m - 1),
            increment: (seed >> 17) | 1,
            random,
            next_seq: 0,
        }
    }

    #[inline]
    fn next(&mut self) -> u64 {
        if !self.random {
            let b = self.next_seq;
            self.next_seq = (b + 1) % self.blocks;
            return b;
        }
        loop {
            // a = 1 (mod 4) and an odd increment give a full period modulo a power of two.
            self.state = self
                .state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(self.increment)
                & self.mask;
            if self.state < self.blocks {
                return self.state;
            }
        }
    }
}

/// Held while a named file is laid out (see [`run_layout`]).
static NAMED_LAYOUT: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Bytes per write call when laying a file out.
pub(super) const LAYOUT_CHUNK: usize = 1 << 20;

/// Lay the file out before reads: write it whole, as one file write (a PUT on object
/// stores). Worker 0 writes a shared (or same) file for everyone.
pub(super) async fn run_layout<C: Client>(w: &mut Worker<C>, ctx: &JobContext, io: &IoJob, rec: &mut Recorder<'_>) {
    if io.one_file() && w.id != 0 {
        // Worker 0 lays the one file out: the others take no part.
        rec.sit_out();
        return;
    }
    let (path, _) = file_and_region(ctx, io, w.id);
    let size = io.file_len(w.id, ctx.total_workers);
    // A named file is the run's: laid out only when missing or short, as fio lays out a file
    // an earlier job left (its data, keyed by the file, is what the job then reads). Jobs at
    // the same time lay theirs out one at a time, so that one lays a shared file out and the
    // others find it (only worker 0 of a job lays a named file out, and each job has threads
    // of its own: the lock is never waited for on the thread that holds it).
    let _one_at_a_time = io
        .filename
        .as_ref()
        .map(|_| NAMED_LAYOUT.lock().unwrap_or_else(|e| e.into_inner()));
    if io.filename.is_some() && w.client.stat(&path).await.is_ok_and(|len| len >= size) {
        rec.sit_out();
        return;
    }
    let key = file_key(ctx, io, w.id);
    let content = w.content;
    let mut buf = AlignedBuf::new(if content.is_some() { LAYOUT_CHUNK } else { 0 });
    let mut fill = |b: &mut [u8], off: u64| content.expect("content").fill(key, off, b);
    let src = match content {
        Some(_) => Source::Fill(&mut buf, &mut fill),
        None => Source::Repeat(ctx.data.as_ref().expect("a job with a layout has its shared data")),
    };
    let opts = FileOpts {
        direct: io.direct,
        fsync: false,
    };
    let start = Instant::now();
    let result = w.client.write_file(&path, size, opts, src).await;
    let end = Instant::now();
    rec.add_retries(w.client.take_retries());
    match result {
        Ok(()) => rec.record(WRITE, start, end, size),
        Err(e) => rec.error(WRITE, end, &e, &path, None),
    }
}

/// Read the file (or region) that pattern `rw` reads once, whole, as fio's pre_read does:
/// its pages are then cached before the measured reads. Worker 0 reads a shared (or same)
/// file.
pub(super) async fn pre_read<C: Client>(
    w: &mut Worker<C>,
    ctx: &JobContext,
    io: &IoJob,
    rw: Rw,
    rec: &mut Recorder<'_>,
) {
    if io.one_file() && w.id != 0 {
        return;
    }
    let owner = if rw.writes() { w.id } else { w.src };
    let path = io_file(ctx.job_index, io, owner);
    let mut buf = AlignedBuf::new(LAYOUT_CHUNK);
    let opts = FileOpts {
        direct: false,
        fsync: false,
    };
    let start = Instant::now();
    let result = w.client.read_file(&path, opts, &mut buf, None).await;
    let end = Instant::now();
    match result {
        Ok(read) => rec.record(READ, start, end, read.bytes),
        Err(e) => rec.error(READ, end, &e, &path, None),
    }
}

/// Open the file (or region) pattern `rw` works on, with the job's queue depth in flight on
/// `engine`, and fill its write buffers when writes come from the worker's random bytes.
pub(super) async fn open_io<C: Client>(
    w: &mut Worker<C>,
    ctx: &JobContext,
    io: &IoJob,
    rw: Rw,
    engine: IoEngine,
) -> OpenedIo<C::Block> {
    // Pure reads read `src`'s file or region: another rank's with --shuffle.
    let owner = if rw.writes() { w.id } else { w.src };
    let (path, region) = file_and_region(ctx, io, owner);
    let opts = BlockOpts {
        block_size: io.bs,
        queue_depth: io.queue_depth(),
        direct: io.direct,
        create: true,
        random: rw.random(),
        engine,
        file_len: if rw.writes() {
            io.file_len(owner, ctx.total_workers)
        } else {
            0
        },
    };
    let mut file = w.client.open_block(&path, opts).await;
    if let Ok(f) = &mut file {
        if rw.writes() && w.content.is_none() {
            for slot in 0..f.depth() {
                w.rng.fill_bytes(f.buffer(slot));
            }
        }
    }
    OpenedIo {
        path,
        region,
        key: file_key(ctx, io, owner),
        file,
    }
}

/// Run an io phase: `rw` at the job's queue depth over the file `open_io` opened, for the
/// `stint`.
/// One function on purpose (about 120 lines): the submit and the completion halves share
/// the per-slot arrays and the in-flight count as locals of the hot loop.
#[allow(clippy::too_many_arguments)]
pub(super) async fn run_io<C: Client>(
    w: &mut Worker<C>,
    ctx: &JobContext,
    io: &IoJob,
    rw: Rw,
    opened: OpenedIo<C::Block>,
    stint: Stint,
    x: Extras<'_>,
    rec: &mut Recorder<'_>,
) -> u64 {
    let Extras {
        mut log,
        mut search,
        budget,
        until,
        depth: cap,
    } = x;
    if let Some(l) = &mut log {
        l.begin();
    }
    // Offsets are in units of the smallest operation; every count below is in bytes, as a
    // pass of bssplit's mixed sizes moves the region's bytes, not a number of blocks.
    let unit = io.unit();
    let region_len = io.region_len();
    let blocks = region_len / unit;
    // Random offsets are multiples of the block alignment (fio's blockalign; by default the
    // smallest block), each with room for the smallest block before the region's end; in
    // order, blocks follow each other.
    let (slots, step) = if rw.random() {
        let grain = io.grain();
        ((region_len - unit) / grain + 1, grain)
    } else {
        (blocks, unit)
    };
    let OpenedIo {
        path,
        region,
        key,
        file,
    } = opened;
    let mut file = match file {
        Ok(f) => f,
        Err(e) => {
            rec.error(0, Instant::now(), &e, &path, None);
            return 0;
        }
    };
    rec.note_engine(file.engine(), file.depth());
    let depth = file.depth();
    let time_based = matches!(stint, Stint::Timed);
    let mut total = if time_based { u64::MAX } else { io.bytes_per_pattern() }.min(budget.unwrap_or(u64::MAX));
    // number_ios: the most operations, whichever ends first.
    let max_ops = io.number_ios.unwrap_or(u64::MAX);
    let mut ops = 0u64;
    // thinktime: after every thinktime_blocks operations, once they are in, a pause.
    let think = io.think.as_deref().copied();
    let mut since_think = 0u64;
    // flow: this worker's share of its flow's I/Os, held to its share of the weights.
    let mut member = io.flow.as_ref().map(|f| f.join());
    let mut held_back = false;
    // The rw modifier: holes (or steps back) between sequential operations.
    let mut holes = (io.seq_add != 0 && !rw.random()).then(|| Holes::new(io.seq_add));
    let mut order = BlockOrder::new(slots, rw.random(), w.rng.next_u64());
    // norandommap: each random offset drawn on its own, not from the pass's permutation; so
    // are bssplit's, whose operations of mixed sizes cover no permutation of blocks.
    let mixed_sizes = !io.bssplit.is_empty();
    let independent = (io.norandommap || mixed_sizes) && rw.random();
    // Where the next sequential operation of mixed sizes starts in the region.
    let mut cursor = 0u64;
    // A hot set instead of every block once per pass (fio drops its random map too).
    let picker = io
        .random_distribution
        .as_ref()
        .filter(|a| rw.random() && !a.is_random())
        .map(|a| Picker::new(a.clone(), slots, w.rng.next_u64()));
    // A time-based read phase (or one of several loops) reads its blocks again once every
    // block was read (the order is a permutation): drop the cached pages at each such pass,
    // as fio does when it loops, or every pass after the first reads the client's memory.
    // Each later pass is a re-read of the file (see cache.rs); a failed drop ends the attempts.
    let passes = time_based || io.loops > 1;
    let rereads = passes && !rw.writes() && ctx.page_cache && !io.direct && blocks > 0 && io.device_file.is_none();
    let mut evict_each_pass = rereads && ctx.invalidate;
    // fio's strided zones: a pass is one round over them.
    let mut zones = io.zones.map(|z| ZoneCursor::new(z, region_len));
    let pass_len = zones.as_ref().map_or(region_len, ZoneCursor::round);
    // Bytes left in this pass: a countdown, not a division per block.
    let mut pass_left = pass_len;
    let mut free: Vec<usize> = (0..depth).rev().collect();
    let mut slot_start = vec![Instant::now(); depth];
    let mut slot_intended = slot_start.clone();
    let mut slot_offset = vec![0u64; depth];
    let mut slot_len = vec![0usize; depth];
    let mut slot_op = vec![BlockOp::Read; depth];
    // With a log: when each submission call returned, and each I/O's priority.
    let mut slot_submitted = vec![slot_start[0]; if log.is_some() { depth } else { 0 }];
    let mut slot_prio = vec![0u16; depth];
    // verify_backlog: the blocks written since the last check are read back and checked once
    // there are N of them (and at the pattern's end), as fio's; those reads are the job's
    // too, and not the pattern's bytes.
    let backlog = io.verify_backlog.filter(|_| w.pattern.is_some() && rw.writes());
    let mut written: Vec<(u64, usize)> = Vec::with_capacity(backlog.map_or(0, |n| n.min(1 << 20) as usize + depth));
    let (mut checking, mut checks_inflight, mut check_due) = (0usize, 0usize, false);
    let mut slot_check = vec![false; if backlog.is_some() { depth } else { 0 }];
    let (mut issued, mut inflight) = (0u64, 0usize);
    let ctl = rec.ctl();
    let mut now = Instant::now();
    let mut stopping = false;
    // fsync=N: after every N completed writes no block is submitted until those in flight
    // are in; then the sync, timed as an operation of its own.
    let sync_every = io.sync_every.filter(|_| rw.writes());
    let mut floor = io.rate_min.map(|b| Floor::new(b, now));
    let (mut unsynced, mut sync_due) = (0u64, false);
    loop {
        if let Some(sync) = sync_every.filter(|_| sync_due && inflight == 0) {
            let start = Instant::now();
            let result = file.sync(sync.data_only).await;
            now = Instant::now();
            match result {
                Ok(()) => rec.record_op(SYNC, start, start, now, 0),
                Err(e) => {
                    rec.error(SYNC, now, &e, &path, None);
                    stopping = true;
                }
            }
            (unsynced, sync_due) = (0, false);
        }
        let more = |issued: u64, ops: u64| issued < total && ops < max_ops;
        let due = |since: u64| think.is_some_and(|t| since >= t.thinktime_blocks);
        if let Some(t) = think.filter(|_| due(since_think) && inflight == 0 && more(issued, ops) && !stopping) {
            stopping |= !t.pause(ctl, w.alone).await;
            since_think = 0;
            now = Instant::now();
        }
        // Held back by the flow: once the I/Os in flight are in, a sleep, then another try.
        if let Some(m) = member.as_ref().filter(|_| held_back && inflight == 0 && !stopping) {
            let until = Instant::now() + std::time::Duration::from_micros(m.sleep_us());
            stopping |= !sleep_until(until, ctl, w.alone).await;
            held_back = false;
            now = Instant::now();
        }
        // The latency target's search: the depth it allows now, and nothing new while the
        // I/Os of a higher depth complete; once it found the depth, the search run ends.
        let allowed = match &mut search {
            Some(s) if s.quiesce && inflight > 0 => 0,
            Some(s) => {
                s.quiesce = false;
                if s.found {
                    break;
                }
                s.qd.min(depth)
            }
            None => cap.unwrap_or(depth).min(depth),
        };
        if until.is_some_and(|u| now >= u) {
            stopping = true;
        }
        // The backlog's reads back, before any new write.
        while check_due && inflight < allowed && checking < written.len() && !stopping {
            let slot = free.pop().expect("a free slot when fewer than depth are in flight");
            let (offset, len) = written[checking];
            checking += 1;
            if let Err(e) = file.submit(slot, BlockOp::Read, offset, len) {
                free.push(slot);
                rec.error(READ, now, &e, &path, Some(offset));
                stopping = true;
                break;
            }
            slot_start[slot] = now;
            if let Some(t) = slot_submitted.get_mut(slot) {
                *t = Instant::now();
            }
            slot_intended[slot] = now;
            (slot_offset[slot], slot_len[slot], slot_op[slot]) = (offset, len, BlockOp::Read);
            slot_check[slot] = true;
            inflight += 1;
            checks_inflight += 1;
        }
        while inflight < allowed
            && more(issued, ops)
            && !stopping
            && !sync_due
            && !due(since_think)
            && !held_back
            && !check_due
        {
            if let Some(m) = &mut member {
                if !m.admit() {
                    held_back = true;
                    break;
                }
            }
            // Before the first block of every pass after the first, whose clock starts after
            // the drop (at depth 1 the previous pass's last block is in by then).
            if pass_left == 0 {
                pass_left = pass_len;
                cursor = 0;
                if let Some(h) = &mut holes {
                    h.restart();
                }
                if rereads {
                    // Read-only: nothing to write back.
                    let r = drop_again(&mut w.client, &path, evict_each_pass, false).await;
                    evict_each_pass &= !matches!(r, Reread::Failed(..));
                    rec.note_reread(r);
                    now = Instant::now();
                }
            }
            // Paced phases: each block waits for its intended start, as fio's
            // io_submit_mode=offload submits at the rate whatever completes; with blocks in
            // flight the wait is for the start or a completion, whichever comes first (below).
            // Closed loops reuse the completion time as the start.
            if inflight > 0 && w.pacer.as_ref().is_some_and(|p| p.peek() > Instant::now()) {
                break;
            }
            let intended = if w.pacer.is_some() {
                let Some((at, start)) = w.begin(ctl).await else {
                    stopping = true;
                    break;
                };
                now = start;
                at
            } else if ctl.should_stop(now) {
                // `now` may be later than the last completion (recording took long and the
                // clock was read again): the phase lasted until this decision.
                rec.busy_until(now);
                stopping = true;
                break;
            } else {
                now
            };
            let slot = free.pop().expect("a free slot when fewer than depth are in flight");
            // The direction first: reads and writes may have block sizes of their own.
            let op = match rw {
                Rw::Read | Rw::Randread => BlockOp::Read,
                Rw::Write | Rw::Randwrite => BlockOp::Write,
                Rw::Readwrite | Rw::Randrw => {
                    if w.rng.gen_range(0..100) < io.rwmixread {
                        BlockOp::Read
                    } else {
                        BlockOp::Write
                    }
                }
            };
            let write = op == BlockOp::Write;
            // The size first when the rw modifier places the operation after the last one;
            // the end of the file ends the pattern, or its pass when it goes round.
            let held = holes.is_some().then(|| io.pick_len(write, &mut w.rng));
            let hole = match (&mut holes, held) {
                (Some(h), Some(len)) => match h.next(len, region_len, io.size) {
                    Some(at) => Some(at),
                    None if time_based || io.loops > 1 => {
                        h.restart();
                        h.next(len, region_len, io.size)
                    }
                    None => None,
                },
                _ => None,
            };
            if held.is_some() && hole.is_none() {
                free.push(slot);
                total = issued;
                break;
            }
            // Strided zones: the zone gives the place, and cuts the length to its end.
            let zoned = zones.as_mut().map(|z| {
                let want = if mixed_sizes {
                    io.pick_len(write, &mut w.rng)
                } else {
                    unit
                };
                z.next(want, rw.random().then_some((step, unit)), &mut w.rng)
            });
            let at = match (&picker, hole, zoned) {
                (_, _, Some((at, _))) => at,
                (Some(p), _, _) => p.pick(&mut w.rng) * step,
                (None, Some(at), _) => at,
                (None, None, _) if independent => w.rng.gen_range(0..slots) * step,
                (None, None, _) if mixed_sizes => cursor,
                (None, None, _) => order.next() * step,
            };
            // The last operation of a sequential pass (or of the region) is cut to what is
            // left of it, so that a pass moves the region's bytes, as fio's passes move size;
            // a random one only fits in the region, and the last may pass size, as fio's
            // (io_u_fits: it stops once the bytes issued reach size).
            let len = match (held, zoned) {
                (_, Some((_, len))) => len,
                (Some(len), _) => len,
                (None, _) if mixed_sizes && rw.random() => io.pick_len(write, &mut w.rng).min(region_len - at),
                (None, _) if mixed_sizes => io.pick_len(write, &mut w.rng).min(region_len - at).min(pass_left),
                (None, _) => unit,
            };
            if mixed_sizes {
                // len never passes the region's end: wrap there without a division per block.
                cursor = if at + len == region_len { 0 } else { at + len };
            }
            let offset = region + at;
            if op == BlockOp::Write {
                if let Some(c) = &w.content {
                    c.fill(key, offset, file.buffer(slot));
                }
            }
            // fio's priorities: the job's, or cmdprio's for this I/O.
            if let Some(p) = &io.prio {
                let value = p.pick(write, len, &mut w.rng);
                if p.per_io() || p.job.is_some() {
                    file.set_priority(slot, value);
                }
                slot_prio[slot] = value;
            }
            if let Err(e) = file.submit(slot, op, offset, len as usize) {
                free.push(slot);
                if io.fill_device && e.is_no_space() {
                    stopping = true;
                    break;
                }
                if io.ignores(usize::from(write), e.kind) {
                    // As done, not counted as an error (fio's ignore_error).
                    issued += len;
                    pass_left = pass_left.saturating_sub(len);
                    ops += 1;
                    continue;
                }
                rec.error(class(op), now, &e, &path, Some(offset));
                stopping = true;
                break;
            }
            slot_start[slot] = now;
            if let Some(t) = slot_submitted.get_mut(slot) {
                *t = Instant::now();
            }
            slot_intended[slot] = intended;
            slot_offset[slot] = offset;
            slot_len[slot] = len as usize;
            slot_op[slot] = op;
            inflight += 1;
            issued += len;
            pass_left = pass_left.saturating_sub(len);
            ops += 1;
            since_think += u64::from(think.is_some());
        }
        if inflight == 0 {
            if held_back && !stopping {
                continue;
            }
            // The pattern's last writes, checked before it ends.
            if !written.is_empty() && !stopping && !check_due {
                check_due = true;
                continue;
            }
            break;
        }
        w.completions.clear();
        let more = inflight < allowed && issued < total && !stopping && !sync_due;
        let reaped = match w.pacer.as_ref().filter(|_| more) {
            Some(p) => {
                let wait = p.peek().saturating_duration_since(Instant::now());
                file.complete_within(wait, &mut w.completions).await
            }
            None => file.complete(1, &mut w.completions).await,
        };
        if let Err(e) = reaped {
            rec.error(0, Instant::now(), &e, &path, None);
            break;
        }
        now = Instant::now();
        for c in w.completions.drain(..) {
            inflight -= 1;
            free.push(c.slot);
            let (op, offset, len) = (slot_op[c.slot], slot_offset[c.slot], slot_len[c.slot]);
            if let Some(check) = slot_check.get_mut(c.slot) {
                if std::mem::take(check) {
                    checks_inflight -= 1;
                } else if op == BlockOp::Write && matches!(c.result, Ok(n) if n == len) {
                    written.push((offset, len));
                    check_due |= written.len() as u64 >= backlog.unwrap_or(u64::MAX);
                }
            }
            match c.result {
                Ok(n) if n == len => {
                    if op == BlockOp::Read {
                        if let Some(p) = &w.pattern {
                            if let Err(m) = p.check(key, offset, &file.buffer(c.slot)[..n]) {
                                let mut message = format!("wrong data at offset {}: found {}", m.offset, m.found);
                                // verify_dump: the block read and the one expected, in files
                                // beside the job's logs (fio's NAME.OFFSET.received/.expected).
                                if io.verify_dump {
                                    let got = &file.buffer(c.slot)[..n];
                                    match dump_block(&path, offset, got, |b| p.fill(key, offset, b)) {
                                        Ok(names) => message += &format!(" (dumped as {names})"),
                                        Err(e) => message += &format!(" (not dumped: {e})"),
                                    }
                                }
                                let e = OpError::new("verify", message);
                                // fio's failed check is EILSEQ in its ignore_error lists.
                                if io.ignores(2, "EILSEQ") {
                                    continue;
                                }
                                rec.error(READ, now, &e, &path, Some(m.offset));
                                // verify_fatal: the first wrong block ends the job's pattern.
                                stopping |= io.verify_fatal;
                                continue;
                            }
                            rec.add_verified(n as u64);
                        }
                    }
                    rec.record_op(class(op), slot_intended[c.slot], slot_start[c.slot], now, n as u64);
                    if let Some(s) = &mut search {
                        s.completed(now.saturating_duration_since(slot_start[c.slot]).as_nanos() as u64, now);
                    }
                    if let Some(l) = &mut log {
                        let (start, sub) = (slot_start[c.slot], slot_submitted[c.slot]);
                        l.add(start, sub, now, offset, n, op == BlockOp::Write, slot_prio[c.slot]);
                    }
                    if let Some(e) = floor.as_mut().and_then(|f| f.add(n as u64, now)) {
                        rec.error(class(op), now, &e, &path, None);
                        stopping = true;
                    }
                    if op == BlockOp::Write {
                        if let Some(sync) = sync_every {
                            unsynced += 1;
                            sync_due |= unsynced >= sync.writes;
                        }
                    }
                }
                // fill_device: the target is full, the pattern's end (a short write is the
                // last one that fitted).
                Ok(n) if io.fill_device => {
                    rec.record_op(class(op), slot_intended[c.slot], slot_start[c.slot], now, n as u64);
                    stopping = true;
                }
                Err(e) if io.fill_device && e.is_no_space() => stopping = true,
                Ok(n) => {
                    let e = OpError::new("short_io", format!("moved {n} of {len} bytes"));
                    rec.error(class(op), now, &e, &path, Some(offset));
                }
                // fio's ignore_error: not an error (nor moved bytes).
                Err(e) if io.ignores(usize::from(op == BlockOp::Write), e.kind) => {}
                Err(e) => rec.error(class(op), now, &e, &path, Some(offset)),
            }
        }
        // The backlog is checked once all its reads are in.
        if check_due && checking == written.len() && checks_inflight == 0 {
            (check_due, checking) = (false, 0);
            written.clear();
        }
        if let Some(s) = &mut search {
            s.check(now);
            if s.fatal && !stopping {
                let e = OpError::new(
                    "ETIMEDOUT",
                    "max latency exceeded: an I/O took longer than latency_target at a queue depth of 1 (fio ends the job so)",
                );
                rec.error(READ, now, &e, &path, None);
                stopping = true;
            }
        }
        // The next block starts at this completion time unless recording took long.
        if rec.took_long() {
            now = Instant::now();
        }
    }
    if io.fsync && rw.writes() {
        if let Err(e) = file.sync(false).await {
            rec.error(WRITE, Instant::now(), &e, &path, None);
        }
    }
    issued
}

/// Write the block of `file` at `offset` that was read (`got`) and the one expected (which
/// `expected` fills) to `NAME.OFFSET.received` and `.expected` in the working directory, as
/// fio's verify_dump; the files' names.
fn dump_block(file: &str, offset: u64, got: &[u8], expected: impl FnOnce(&mut [u8])) -> std::io::Result<String> {
    let base = file.rsplit('/').next().unwrap_or("io");
    let mut want = vec![0u8; got.len()];
    expected(&mut want);
    let received = format!("{base}.{offset}.received");
    let wanted = format!("{base}.{offset}.expected");
    std::fs::write(&received, got)?;
    std::fs::write(&wanted, &want)?;
    Ok(format!("{received} and {wanted}"))
}

/// What a run of [`run_io`] has besides the pattern: its log, the latency target's search,
/// the most bytes it may issue (what a search left of the pattern) and when it stops.
#[derive(Default)]
pub(super) struct Extras<'l> {
    pub(super) log: Option<&'l mut IoLog>,
    pub(super) search: Option<&'l mut Search>,
    pub(super) budget: Option<u64>,
    pub(super) until: Option<Instant>,
    /// The most in flight, below the job's queue depth (the depth a search found).
    pub(super) depth: Option<usize>,
}

fn class(op: BlockOp) -> usize {
    match op {
        BlockOp::Read => READ,
        BlockOp::Write => WRITE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_order_is_a_permutation() {
        for blocks in [1u64, 2, 7, 64, 1000] {
            let mut o = BlockOrder::new(blocks, true, 0xdead_beef);
            let mut seen: Vec<u64> = (0..blocks).map(|_| o.next()).collect();
            seen.sort();
            assert_eq!(seen, (0..blocks).collect::<Vec<_>>(), "blocks = {blocks}");
        }
    }

    #[test]
    fn sequential_order_wraps() {
        let mut o = BlockOrder::new(3, false, 1);
        let got: Vec<u64> = (0..7).map(|_| o.next()).collect();
        assert_eq!(got, vec![0, 1, 2, 0, 1, 2, 0]);
    }
}
