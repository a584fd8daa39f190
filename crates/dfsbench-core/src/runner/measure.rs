//! A running phase seen from the main thread: the sampler (progress, steady state, threads
//! stuck in the storage), stonewall notices and progress totals between ranks, and the
//! rank's part packed at the end.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use dfsbench_backends::clock::Instant;
use dfsbench_backends::Storage;

use crate::cluster::{Group, TAG_PROGRESS, TAG_STONEWALL};
use crate::host::cpu_sample;
use crate::load::Stable;
use crate::part::{rank_part, RankPart};
use crate::plan::Phase;
use crate::stats::{series_of, Latencies, Live, PhaseControl, WorkerPhase, SERIES_INTERVAL};

use super::{Crew, JobRun, Observer};

pub(super) const TICK: Duration = Duration::from_millis(100);
/// How often a rank of a multi-process run checks for stonewall notices.
pub(super) const STONEWALL_POLL: Duration = Duration::from_millis(10);
/// How long after the op timeout a thread still inside an operation at the end of a phase is
/// given before the runner counts that operation as a timeout and stops waiting for it.
pub(super) const STUCK_GRACE: Duration = Duration::from_secs(1);
/// How long after Ctrl-C the runner waits for operations still inside the storage.
pub(super) const STUCK_AFTER_INTERRUPT: Duration = Duration::from_secs(2);

/// Stonewall notices while a phase runs: a rank tells rank 0 when its first worker finished,
/// rank 0 tells everyone the earliest such moment, and every rank's workers stop counting
/// toward the stonewall (within a poll interval, 10 ms).
pub(super) struct StonewallLink {
    pub(super) seq: u64,
    pub(super) told: bool,
    pub(super) heard: bool,
}

impl StonewallLink {
    pub(super) fn encode(&self, t: f64) -> Vec<u8> {
        let mut m = self.seq.to_le_bytes().to_vec();
        m.extend_from_slice(&t.to_le_bytes());
        m
    }

    /// A notice of this phase; anything else (an old phase's, garbage) is ignored.
    pub(super) fn decode(&self, m: &[u8]) -> Option<f64> {
        let (seq, t) = m.split_at_checked(8)?;
        let t = f64::from_le_bytes(t.try_into().ok()?);
        (u64::from_le_bytes(seq.try_into().ok()?) == self.seq && t.is_finite()).then_some(t)
    }

    pub(super) fn poll(&mut self, group: &mut Group, ctl: &PhaseControl) {
        if group.size() == 1 || (self.told && self.heard) {
            return;
        }
        if group.is_root() {
            let mut first = ctl.first_done_at().map(|t| group.clock(t));
            for r in 1..group.size() {
                for m in group.drain(r, TAG_STONEWALL) {
                    if let Some(t) = self.decode(&m) {
                        first = Some(first.map_or(t, |f| f.min(t)));
                    }
                }
            }
            if let Some(t) = first {
                for r in 1..group.size() {
                    group.notify(r, TAG_STONEWALL, &self.encode(t));
                }
                ctl.mark_done(group.instant(t));
                (self.told, self.heard) = (true, true);
            }
            return;
        }
        if !self.told {
            if let Some(t) = ctl.first_done_at() {
                let m = self.encode(group.clock(t));
                group.notify(0, TAG_STONEWALL, &m);
                self.told = true;
            }
        }
        for m in group.drain(0, TAG_STONEWALL) {
            if let Some(t) = self.decode(&m) {
                ctl.mark_done(group.instant(t));
                self.heard = true;
            }
        }
    }
}

/// Rank 0's progress line shows the whole group: every other rank sends its running totals
/// of the phase about ten times a second, and rank 0 adds the latest of each to its own.
pub(super) struct ProgressLink {
    pub(super) seq: u64,
    /// The latest (ops, bytes, errors) of each rank; rank 0 keeps them, the others send theirs.
    pub(super) ranks: Vec<Totals>,
    pub(super) sent: Option<Instant>,
}

pub(super) type Totals = (u64, u64, u64);

impl ProgressLink {
    pub(super) fn new(seq: u64, ranks: usize) -> Self {
        ProgressLink {
            seq,
            ranks: vec![(0, 0, 0); ranks],
            sent: None,
        }
    }

    pub(super) fn encode(&self, t: Totals) -> Vec<u8> {
        [self.seq, t.0, t.1, t.2].iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    /// Totals of this phase; anything else (an old phase's, garbage) is ignored.
    pub(super) fn decode(&self, m: &[u8]) -> Option<Totals> {
        let v: Vec<u64> = m
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect();
        match v[..] {
            [seq, o, b, e] if seq == self.seq && m.len() == 32 => Some((o, b, e)),
            _ => None,
        }
    }

    /// The other ranks' latest totals (rank 0), after sending this rank's own (others).
    pub(super) fn exchange(&mut self, group: &mut Group, local: Totals) -> Totals {
        if group.size() == 1 {
            return (0, 0, 0);
        }
        if !group.is_root() {
            if self.sent.is_none_or(|t| t.elapsed() >= TICK) {
                let m = self.encode(local);
                group.notify(0, TAG_PROGRESS, &m);
                self.sent = Some(Instant::now());
            }
            return (0, 0, 0);
        }
        for r in 1..group.size() {
            for m in group.drain(r, TAG_PROGRESS) {
                if let Some(t) = self.decode(&m) {
                    self.ranks[r] = t;
                    group.note_progress(r, t);
                }
            }
        }
        self.ranks[1..]
            .iter()
            .fold((0, 0, 0), |a, t| (a.0 + t.0, a.1 + t.1, a.2 + t.2))
    }
}

impl<S: Storage> JobRun<'_, S> {
    /// Start the prepared phase, sample it until every thread is done, and pack what this
    /// rank's workers measured.
    pub(super) fn measure(
        &self,
        phase: &Phase,
        seq: u64,
        crew: &Crew,
        done_rx: &mpsc::Receiver<usize>,
        observer: &mut dyn Observer,
        group: &mut Group,
    ) -> RankPart {
        let mut ctl = PhaseControl::new(
            Instant::now(),
            phase.duration,
            phase.ramp,
            self.config.max_errors,
            self.interrupt,
        );
        ctl.fine_series = self.config.fine_series();
        ctl.log_gaps = !phase.prepare;
        ctl.group_ended = self.group_end.cloned();
        let ctl = Arc::new(ctl);
        if let Some(t) = self.timeline {
            t.phase_started(self.index, phase, ctl.start);
        }
        *crew.latencies.lock().expect("lock") = Latencies::new(self.storage.endpoints().len(), phase.classes.len());
        if let Some(cur) = crew.current.lock().expect("lock").as_mut() {
            cur.ctl = Some(ctl.clone());
        }
        observer.phase_started(phase, self.total_workers);
        // Zero the live counters before the phase starts: a worker thread scheduled late
        // would otherwise show the sampler its previous phase's totals, and the series (and
        // the progress rate) would go backwards when it resets them.
        for l in &crew.lives {
            l.reset();
        }
        // Rank 0 watches the server processes: they run on its host. They are looked up again
        // at the start and end, so a daemon restarted during the run is followed.
        let root = group.is_root();
        let watched = || {
            if root {
                self.config.watched_servers()
            } else {
                Vec::new()
            }
        };
        let cpu0 = cpu_sample(&watched());
        crew.barrier.wait();
        let mut link = StonewallLink {
            seq: ((self.index as u64) << 32) | seq,
            told: false,
            heard: false,
        };
        let mut progress = ProgressLink::new(link.seq, group.size());
        group.measuring(Some(&phase.label));
        let others = std::cell::Cell::new((0, 0, 0));
        let poll_every = if group.size() > 1 { STONEWALL_POLL } else { TICK };
        let sampling = Sampling {
            lives: &crew.lives,
            threads: self.threads,
            done_rx,
            stable: phase.stable,
            poll_every,
            others: &others,
            op_timeout: self.config.op_timeout,
        };
        let sampled = sample(&ctl, &sampling, observer, &mut |ctl| {
            if crew.barrier.is_broken() {
                ctl.halt();
            }
            link.poll(group, ctl);
            others.set(progress.exchange(group, live_totals(&crew.lives)));
            group.relay_interrupt();
        });
        if sampled.stuck.is_empty() {
            crew.barrier.wait();
        } else {
            // The stuck threads leave at the broken gate if their call ever returns.
            crew.stuck.store(true, Relaxed);
            crew.barrier.break_open();
        }
        let cpu1 = cpu_sample(&watched());
        let (mut workers, mut series) = std::mem::take(&mut *crew.collected.lock().expect("lock"));
        // A stuck thread's series is out of reach: its intervals count nothing (and the
        // phase is marked), so the series still spans the phase.
        series.extend(sampled.stuck.iter().map(|_| series_of(&ctl)));
        let latencies = std::mem::take(&mut *crew.latencies.lock().expect("lock"));
        let at = Instant::now();
        let mut stuck = 0;
        for &t in &sampled.stuck {
            for local in (t..self.job.workers).step_by(self.threads) {
                let id = self.base + local;
                // A thread whose call returned just now has handed in its own result.
                if !workers.iter().any(|w| w.worker == id) {
                    workers.push(WorkerPhase::stuck(id, phase.classes, &crew.lives[local], &ctl, at));
                    stuck += 1;
                }
            }
        }
        let mut part = rank_part(
            group.rank(),
            self.threads,
            &ctl,
            workers,
            &latencies,
            &series,
            &self.storage.endpoints(),
            sampled.stable_at,
            &cpu0,
            &cpu1,
            &|t| group.clock(t),
        );
        part.stuck = stuck;
        part
    }
}

/// What the sampler of a phase watches.
pub(super) struct Sampling<'a> {
    pub(super) lives: &'a [Live],
    pub(super) threads: usize,
    pub(super) done_rx: &'a mpsc::Receiver<usize>,
    pub(super) stable: Option<Stable>,
    pub(super) poll_every: Duration,
    /// The other ranks' latest totals, which rank 0's progress line adds to its own.
    pub(super) others: &'a std::cell::Cell<Totals>,
    /// How long past the phase's end an operation may still run (`--op-timeout`).
    pub(super) op_timeout: Option<Duration>,
}

/// What the sampler saw of a phase.
pub(super) struct Sampled {
    /// When throughput became steady (seconds after the phase started), with a steady-state rule.
    pub(super) stable_at: Option<f64>,
    /// Threads still inside an operation when the sampler stopped waiting for them: with
    /// `--op-timeout`, that long (and a grace) after the phase had to stop; after Ctrl-C,
    /// [`STUCK_AFTER_INTERRUPT`].
    pub(super) stuck: Vec<usize>,
}

/// The running (ops, bytes, errors) of this rank's workers.
pub(super) fn live_totals(lives: &[Live]) -> Totals {
    lives.iter().fold((0, 0, 0), |(o, b, e), l| {
        (
            o + l.ops.load(Relaxed),
            b + l.bytes.load(Relaxed),
            e + l.errors.load(Relaxed),
        )
    })
}

/// Watch a running phase until every thread reports done (or is stuck: see [`Sampled`]): the
/// progress line, stonewall notices and, with a steady-state rule, when throughput became
/// steady, which also ends the phase. The per-interval series is not sampled here: workers
/// count each operation in the interval it completed in.
pub(super) fn sample(
    ctl: &PhaseControl,
    s: &Sampling<'_>,
    observer: &mut dyn Observer,
    poll: &mut dyn FnMut(&PhaseControl),
) -> Sampled {
    let Sampling {
        lives,
        threads,
        done_rx,
        stable,
        poll_every,
        others,
        op_timeout,
    } = *s;
    let totals = || live_totals(lives);
    // Operations per interval for the steady-state rule, scaled to the time that really passed
    // between two looks, so a late wake-up does not read as a burst.
    let mut rates: Vec<u64> = Vec::new();
    let mut last = (ctl.start, 0u64);
    let mut done = vec![false; threads];
    let mut stuck = Vec::new();
    let mut stable_at = None;
    let mut next_tick = ctl.start + TICK;
    let mut next_sample = ctl.start + SERIES_INTERVAL;
    let mut stopping_since = None;
    while done.contains(&false) {
        let wait = next_tick.saturating_duration_since(Instant::now()).min(poll_every);
        match done_rx.recv_timeout(wait) {
            Ok(t) => done[t] = true,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        poll(ctl);
        let now = Instant::now();
        if ctl.should_stop(now) {
            let since = *stopping_since.get_or_insert(now);
            let patience = if ctl.interrupted() {
                Some(STUCK_AFTER_INTERRUPT)
            } else {
                op_timeout.map(|t| t + STUCK_GRACE)
            };
            if patience.is_some_and(|p| now >= since + p) {
                stuck = (0..threads).filter(|&t| !done[t]).collect();
                break;
            }
        }
        if now >= next_tick {
            let ((o, b, e), (ro, rb, re)) = (totals(), others.get());
            observer.tick(now - ctl.start, o + ro, b + rb, e + re);
            next_tick = now + TICK;
        }
        let Some(rule) = stable.filter(|_| stable_at.is_none() && now >= next_sample) else {
            continue;
        };
        let (ops, bytes) = (totals().0, totals().1);
        let count = if rule.bytes { bytes } else { ops };
        let elapsed = now.saturating_duration_since(last.0).as_secs_f64();
        rates.push((count.saturating_sub(last.1) as f64 * SERIES_INTERVAL.as_secs_f64() / elapsed).round() as u64);
        last = (now, count);
        next_sample = now + SERIES_INTERVAL;
        // Samples of the ramp-up do not count towards a steady state, nor those of the rule's
        // own ramp (and the second after it, as fio's ss_ramp).
        let ramp = ctl.ramp_end.map_or(0, |r| {
            r.saturating_duration_since(ctl.start)
                .as_secs_f64()
                .div_euclid(SERIES_INTERVAL.as_secs_f64()) as usize
                + 1
        });
        let ramp = ramp
            + if rule.ramp.is_zero() {
                0
            } else {
                (rule.ramp.as_secs_f64() / SERIES_INTERVAL.as_secs_f64()).ceil() as usize + 1
            };
        if rates.len() > ramp && rule.holds(&rates[ramp..], SERIES_INTERVAL) {
            stable_at = Some(secs(now - ctl.start));
            ctl.stop_steady();
        }
    }
    // A rank tells the others its stonewall before it reports the phase.
    poll(ctl);
    Sampled { stable_at, stuck }
}

pub(super) fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}
