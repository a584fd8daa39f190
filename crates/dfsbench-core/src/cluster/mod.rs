//! The processes of one run: rank, size, host, barriers with a timeout, a common clock and the
//! gathering of each rank's measurements to rank 0.
//!
//! A run is one process (solo), `--procs N` local processes (the parent re-executes itself and
//! coordinates over Unix sockets it created), or the ranks of an MPI job (mpirun, srun). All
//! three share [`Group`]: rank 0 is the hub of every collective step, so a rank that never
//! arrives is named, and the run ends with what rank 0 has instead of hanging.

mod join;
pub mod procs;
pub(crate) mod tree;
mod wire;

#[cfg(feature = "mpi")]
pub mod mpi;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use dfsbench_backends::clock::Instant as Clock;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use dfsbench_result::LostRank;
use join::handshake;
pub use join::{build, set_build, JoinError};

/// Message kinds: collective rounds and the stonewall notices sent while a phase runs.
pub const TAG_ROUND: u8 = 1;
pub(crate) const TAG_STONEWALL: u8 = 2;
const TAG_SYNC: u8 = 3;
/// Rank 0 tells every rank that the user interrupted the run.
const TAG_STOP: u8 = 4;
/// A rank's running totals of the phase, for rank 0's progress line.
pub(crate) const TAG_PROGRESS: u8 = 5;
/// Every kind of message; anything else is not from this program.
pub(crate) const TAGS: [u8; 5] = [TAG_ROUND, TAG_STONEWALL, TAG_SYNC, TAG_STOP, TAG_PROGRESS];

/// Why a message did not come.
#[derive(Debug)]
pub enum RecvError {
    Timeout,
    /// The peer is gone (its process exited); says how, when known.
    Gone(String),
    /// The peer sent bytes that are not a message of this program; says what.
    Garbled(String),
}

/// Point-to-point messages between the ranks of a group; rank 0 talks to every rank, the
/// others only to rank 0.
pub trait Transport {
    fn rank(&self) -> usize;
    fn size(&self) -> usize;
    /// `procs` or `mpi`.
    fn kind(&self) -> &'static str;
    fn send(&mut self, to: usize, tag: u8, data: &[u8]) -> Result<(), String>;
    /// The next message with `tag` from `from`, waiting until `deadline` (a past deadline
    /// polls once).
    fn recv(&mut self, from: usize, tag: u8, deadline: Instant) -> Result<Vec<u8>, RecvError>;
    /// End every process of the group with `code`.
    fn abort(&mut self, code: i32) -> !;
    /// True once the connection to `rank` is gone (its process exited); a transport that
    /// cannot tell says false.
    fn is_gone(&mut self, _rank: usize) -> bool {
        false
    }
    /// When the connection to `rank` was seen to close; None while it is up, or when the
    /// transport cannot tell.
    fn gone_since(&mut self, _rank: usize) -> Option<Instant> {
        None
    }
    /// Children per rank of the merge tree (tree.rs); the group's size when it is flat.
    fn fanout(&self) -> usize {
        tree::FANOUT
    }
}

/// One process of the run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Member {
    pub rank: usize,
    pub host: String,
    pub pid: u32,
    /// The dfsbench version the rank runs; empty from versions before it was sent.
    #[serde(default)]
    pub version: String,
    /// The shortest round trip of the clock exchange with rank 0, as rank 0 timed it: the
    /// rank's clock offset is known to within half of it (None for rank 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_rtt_s: Option<f64>,
}

/// Bytes from another rank that are not the message this program expected.
#[derive(Debug)]
pub struct DecodeError {
    /// What was expected, e.g. `the end of phase 'write 1 KiB'`.
    pub what: String,
    pub from: usize,
    pub from_version: String,
    /// The rank that could not read it.
    pub me: usize,
    pub detail: String,
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let theirs = if self.from_version.is_empty() {
            "an unknown version".to_string()
        } else {
            self.from_version.clone()
        };
        write!(
            f,
            "rank {} (dfsbench {theirs}) sent {} that rank {} (dfsbench {}) cannot read ({}): run the same dfsbench on every rank",
            self.from,
            self.what,
            self.me,
            build(),
            self.detail
        )
    }
}

/// A collective step failed: a rank did not arrive in time or exited.
#[derive(Debug)]
pub struct Lost {
    pub message: String,
}

pub struct Group {
    transport: Option<Box<dyn Transport>>,
    rank: usize,
    size: usize,
    members: Vec<Member>,
    /// The local instant that is time 0 of the common clock (rank 0's start), on the clock
    /// the workers time operations with.
    origin: Clock,
    /// How long a rank waits for the others at a collective step.
    pub timeout: Duration,
    broken: bool,
    /// The run's Ctrl-C flag: rank 0 relays it to every rank, which set theirs.
    interrupt: Option<&'static AtomicBool>,
    stop_sent: bool,
    /// Rank 0 told this rank to stop: it is alive and gathering what the ranks have.
    root_stopping: bool,
    /// Rank 0 goes on without a rank it lost (`--rank-loss continue`).
    go_on: bool,
    /// The ranks rank 0 went on without, in the order they were lost.
    lost: Vec<LostRank>,
    /// The phase being measured, and each rank's totals in it as its last progress report
    /// said (rank 0): what a rank lost in it had done.
    progress: (Option<String>, Vec<(u64, u64, u64)>),
}

/// How long a rank whose send failed waits to learn that the peer exited.
const GONE_GRACE: Duration = Duration::from_millis(500);
/// Extra wait of the other ranks for rank 0, so that rank 0 always times out first and writes
/// the partial result before anyone gives up on it.
const ROOT_GRACE: Duration = Duration::from_secs(5);
/// How often rank 0, waiting for the ranks at a round, checks for a Ctrl-C to pass on.
const RELAY_STEP: Duration = Duration::from_millis(50);
/// How long a stopped rank waits for a sign of life from rank 0 (which relays a stop at once)
/// before it stops without it: a rank 0 that is stopped or hung holds no rank past a signal.
const SILENT_ROOT: Duration = Duration::from_secs(1);

/// This host's name, as the members of a group give theirs.
pub fn this_host() -> String {
    crate::host::host().hostname
}

impl Group {
    /// A run of one process.
    pub fn solo() -> Group {
        Group {
            transport: None,
            rank: 0,
            size: 1,
            members: vec![Member {
                rank: 0,
                host: this_host(),
                pid: std::process::id(),
                version: build().into(),
                clock_rtt_s: None,
            }],
            origin: Clock::now(),
            timeout: Duration::from_secs(300),
            broken: false,
            interrupt: None,
            stop_sent: false,
            root_stopping: false,
            go_on: false,
            lost: Vec::new(),
            progress: (None, Vec::new()),
        }
    }

    /// What makes a group of this process alone, on this group's clock (on any thread): the
    /// collective steps of a job that runs beside others in one process.
    pub(crate) fn alone(&self) -> impl FnOnce() -> Group + Send {
        let (member, origin, timeout) = (self.members[self.rank].clone(), self.origin, self.timeout);
        move || Group {
            members: vec![member],
            origin,
            timeout,
            ..Group::solo()
        }
    }

    /// Join the ranks of `transport`: learn who they are and align the clocks on rank 0's.
    pub fn join(mut transport: Box<dyn Transport>, timeout: Duration) -> Result<Group, JoinError> {
        match handshake(transport.as_mut(), timeout) {
            Ok((members, origin)) => Ok(Group {
                rank: transport.rank(),
                size: transport.size(),
                transport: Some(transport),
                members,
                origin,
                timeout,
                broken: false,
                interrupt: None,
                stop_sent: false,
                root_stopping: false,
                go_on: false,
                lost: Vec::new(),
                progress: (None, Vec::new()),
            }),
            Err(message) => Err(JoinError { message, transport }),
        }
    }

    /// Decode `bytes` that rank `from` sent as `what`: a typed error naming both versions
    /// instead of a panic.
    pub fn decode<T: DeserializeOwned>(&self, from: usize, what: &str, bytes: &[u8]) -> Result<T, DecodeError> {
        decode(&self.members, self.rank, from, what, bytes)
    }

    /// This rank cannot go on with the group (it could not read rank 0): the run ends for it
    /// as for a lost rank.
    pub(crate) fn break_off(&mut self) {
        self.broken = true;
    }

    /// The flag Ctrl-C sets: rank 0 tells every rank when it is set, the other ranks set it
    /// when told (or when rank 0 is gone).
    pub(crate) fn watch_interrupt(&mut self, flag: &'static AtomicBool) {
        self.interrupt = Some(flag);
    }

    /// Pass a Ctrl-C on: from rank 0 to every rank, once; on the others, into their flag.
    /// A rank whose rank 0 is gone stops too: nobody is left to collect what it measures.
    pub(crate) fn relay_interrupt(&mut self) {
        let Some(flag) = self.interrupt else {
            return;
        };
        let Some(t) = self.transport.as_mut() else {
            return;
        };
        if self.rank == 0 {
            send_stop(t.as_mut(), self.size, flag, &mut self.stop_sent);
            return;
        }
        let now = Instant::now();
        let mut told = false;
        while t.recv(0, TAG_STOP, now).is_ok() {
            told = true;
        }
        self.root_stopping |= told;
        if told || t.is_gone(0) {
            flag.store(true, Ordering::Relaxed);
        }
    }

    /// True on a rank other than 0 once rank 0's process is gone: the run directory has no
    /// owner left, and this rank cleans it up.
    pub(crate) fn root_gone(&mut self) -> bool {
        self.rank != 0 && self.transport.as_mut().is_some_and(|t| t.is_gone(0))
    }

    pub fn rank(&self) -> usize {
        self.rank
    }
    pub fn size(&self) -> usize {
        self.size
    }
    pub fn is_root(&self) -> bool {
        self.rank == 0
    }
    pub fn members(&self) -> &[Member] {
        &self.members
    }
    /// `solo`, `procs` or `mpi`.
    pub fn kind(&self) -> &'static str {
        self.transport.as_ref().map_or("solo", |t| t.kind())
    }
    /// True after a collective step failed: the run must end with [`Group::abort`].
    pub fn is_broken(&self) -> bool {
        self.broken
    }

    /// The merge tree of this group (flat when every rank talks to rank 0 alone).
    pub(crate) fn tree(&self) -> tree::Tree {
        tree::Tree {
            size: self.size,
            fanout: self.transport.as_ref().map_or(tree::FANOUT, |t| t.fanout()),
        }
    }

    /// `--rank-loss continue`: a rank that exits or does not answer in time is left out of
    /// every later step instead of ending the run. Only a flat group can: in a tree, a lost
    /// rank takes the parts of the ranks below it along.
    pub fn go_on_without_lost_ranks(&mut self) -> Result<(), String> {
        let t = self.tree();
        if self.size > 1 && t.fanout < self.size {
            return Err(format!(
                "a {} group of {} ranks cannot go on without a lost rank: its ranks merge in a tree (use --procs, whose group is flat then)",
                self.kind(),
                self.size
            ));
        }
        self.go_on = true;
        Ok(())
    }

    /// The ranks rank 0 went on without.
    pub fn lost(&self) -> &[LostRank] {
        &self.lost
    }

    /// Rank 0: the phase `label` is being measured from now on (None: none is), with every
    /// rank's totals at zero.
    pub(crate) fn measuring(&mut self, label: Option<&str>) {
        self.progress = (label.map(str::to_string), vec![(0, 0, 0); self.size]);
    }

    /// Rank 0: rank `r`'s totals in the phase being measured, from its progress report.
    pub(crate) fn note_progress(&mut self, r: usize, totals: (u64, u64, u64)) {
        if let Some(slot) = self.progress.1.get_mut(r) {
            *slot = totals;
        }
    }

    fn is_lost(lost: &[LostRank], r: usize) -> bool {
        lost.iter().any(|l| l.rank == r)
    }

    /// Rank 0 records the ranks it found gone at step `what` and tells each to stop (one that
    /// only did not answer in time may still be running).
    fn record_lost(&mut self, found: Vec<(usize, RecvError, Option<Instant>)>, what: &str) {
        let now = self.clock(Clock::now());
        let timeout = self.timeout;
        for (r, e, since) in found {
            if let Some(t) = self.transport.as_mut() {
                let _ = t.send(r, TAG_STOP, &[]);
            }
            let member = self.members.get(r);
            let (ops, bytes, errors) = self.progress.1.get(r).copied().unwrap_or_default();
            self.lost.push(LostRank {
                rank: r,
                host: member.map(|m| m.host.clone()).unwrap_or_default(),
                pid: member.map_or(0, |m| m.pid),
                at_s: now - since.map_or(0.0, |s| s.elapsed().as_secs_f64()),
                during: what.to_string(),
                why: match e {
                    RecvError::Timeout => format!(
                        "did not answer within {} (--rank-timeout)",
                        humantime::format_duration(timeout)
                    ),
                    RecvError::Gone(how) => how,
                    RecvError::Garbled(what) => what,
                },
                phase: self.progress.0.clone(),
                ops,
                bytes,
                errors,
            });
        }
    }

    /// The rank whose data rank `rank` reads with `--shuffle` (IOR -C, mdtest -N): the rank
    /// `shift` places ahead, with the smallest shift that puts every rank's source on another
    /// host (ranks per node when ranks are placed by slot, 1 when round-robin over nodes); on
    /// one host, the next rank.
    pub(crate) fn shuffle_source(&self, rank: usize) -> usize {
        let n = self.size;
        let host = |r: usize| &self.members[r % n].host;
        let shift = (1..n).find(|&s| (0..n).all(|r| host(r + s) != host(r))).unwrap_or(1);
        (rank + shift) % n
    }

    /// Seconds of the common clock (0 = rank 0's start) at local instant `t`.
    pub fn clock(&self, t: Clock) -> f64 {
        if t >= self.origin {
            (t - self.origin).as_secs_f64()
        } else {
            -(self.origin - t).as_secs_f64()
        }
    }

    /// The local instant at common-clock second `s`.
    /// `s` may come from another rank: a time the clock cannot hold is taken as the origin.
    pub(crate) fn instant(&self, s: f64) -> Clock {
        let Ok(d) = Duration::try_from_secs_f64(s.abs()) else {
            return self.origin;
        };
        if s >= 0.0 {
            self.origin.checked_add(d).unwrap_or(self.origin)
        } else {
            self.origin.checked_sub(d).unwrap_or(self.origin)
        }
    }

    /// A collective step: every rank hands `mine` to rank 0, rank 0 turns all of them (with
    /// their ranks, rank 0's first) into one answer, and every rank returns that answer. Nobody
    /// leaves before everybody arrived, so it is also a barrier. `what` names the step in the
    /// timeout message. A group that goes on without lost ranks leaves out those it lost.
    pub fn round(
        &mut self,
        mine: Vec<u8>,
        what: &str,
        answer: impl FnOnce(Vec<(usize, Vec<u8>)>) -> Vec<u8>,
    ) -> Result<Vec<u8>, Lost> {
        let timeout = self.timeout;
        let Some(t) = self.transport.as_mut() else {
            return Ok(answer(vec![(0, mine)]));
        };
        if self.rank != 0 {
            if let Err(e) = t.send(0, TAG_ROUND, &mine) {
                self.broken = true;
                return Err(Lost {
                    message: send_failure(t.as_mut(), 0, what, e),
                });
            }
            let stop = Stop {
                flag: self.interrupt,
                root_stopping: &mut self.root_stopping,
            };
            return wait_answer(t.as_mut(), what, timeout, stop).inspect_err(|_| self.broken = true);
        }
        let deadline = Instant::now() + timeout;
        let mut parts = vec![(0, mine)];
        let mut missing = Vec::new();
        let mut found = Vec::new();
        let mut late = false;
        for r in 1..self.size {
            if Self::is_lost(&self.lost, r) {
                continue;
            }
            // Waits in short steps, so that a Ctrl-C while rank 0 waits reaches every rank.
            let got = loop {
                let step = deadline.min(Instant::now() + RELAY_STEP);
                match t.recv(r, TAG_ROUND, step) {
                    Err(RecvError::Timeout) if Instant::now() < deadline => {
                        if let Some(flag) = self.interrupt {
                            send_stop(t.as_mut(), self.size, flag, &mut self.stop_sent);
                        }
                    }
                    got => break got,
                }
            };
            match got {
                Ok(p) => parts.push((r, p)),
                Err(e) if self.go_on => found.push((r, e, t.gone_since(r))),
                Err(e) => {
                    late |= matches!(e, RecvError::Timeout);
                    missing.push(describe_member(&self.members, r, e));
                }
            }
        }
        if !missing.is_empty() {
            self.broken = true;
            let within = if late {
                format!(
                    " within {} of rank 0 (--rank-timeout)",
                    humantime::format_duration(timeout)
                )
            } else {
                String::new()
            };
            return Err(Lost {
                message: format!("{} {what}{within}", missing.join(", ")),
            });
        }
        self.record_lost(found, what);
        let reply = answer(parts);
        self.answer_all(&reply, what)?;
        Ok(reply)
    }

    /// Rank 0 sends the answer of step `what` to every rank it has not lost; one it cannot
    /// reach is lost too when the group goes on without lost ranks.
    fn answer_all(&mut self, reply: &[u8], what: &str) -> Result<(), Lost> {
        let Some(t) = self.transport.as_mut() else {
            return Ok(());
        };
        let mut found = Vec::new();
        for r in 1..self.size {
            if Self::is_lost(&self.lost, r) {
                continue;
            }
            if let Err(e) = t.send(r, TAG_ROUND, reply) {
                if !self.go_on {
                    self.broken = true;
                    return Err(Lost {
                        message: format!("rank {r}: {e}"),
                    });
                }
                let since = t.gone_since(r);
                found.push((r, RecvError::Gone(format!("could not be sent the answer ({e})")), since));
            }
        }
        self.record_lost(found, what);
        Ok(())
    }

    /// A collective step merged up a tree (tree.rs): every rank waits for its tree children's
    /// payloads (with their ranks) and `merge`s them with what it has; a rank sends what
    /// `merge` returns to its parent, and rank 0 sends it, the answer, to every rank, which
    /// return it. A child that exits or does not send in time is named (rank, host, pid) by the
    /// rank that waited for it, and the names travel up with the payloads: rank 0 then returns
    /// [`Lost`] (its `merge` ran on what arrived), or, going on without lost ranks, leaves
    /// them out of this step and every later one. A rank at depth `d` waits
    /// `timeout · (1 - d / (2·(height + 1)))` for its children, so that it gives up on a lost
    /// child before its own parent gives up on it.
    pub fn reduce(
        &mut self,
        what: &str,
        merge: impl FnOnce(Vec<(usize, Vec<u8>)>) -> Vec<u8>,
    ) -> Result<Vec<u8>, Lost> {
        let timeout = self.timeout;
        let tree = self.tree();
        let Some(t) = self.transport.as_mut() else {
            return Ok(merge(Vec::new()));
        };
        let depth = tree.depth(self.rank);
        let wait = child_wait(timeout, depth, tree.height());
        let deadline = Instant::now() + wait;
        let mut losses = Vec::new();
        let mut found = Vec::new();
        let mut payloads = Vec::new();
        for c in tree.children(self.rank) {
            if Self::is_lost(&self.lost, c) {
                continue;
            }
            // Waits in short steps, so that a Ctrl-C while rank 0 waits reaches every rank.
            let got = loop {
                let step = deadline.min(Instant::now() + RELAY_STEP);
                match t.recv(c, TAG_ROUND, step) {
                    Err(RecvError::Timeout) if Instant::now() < deadline => {
                        if let (0, Some(flag)) = (self.rank, self.interrupt) {
                            send_stop(t.as_mut(), self.size, flag, &mut self.stop_sent);
                        }
                    }
                    got => break got,
                }
            };
            let envelope =
                got.and_then(|bytes| Envelope::read(&bytes).map_err(|why| RecvError::Garbled(format!("sent {why}"))));
            match envelope {
                Ok(env) => {
                    losses.extend(env.losses);
                    payloads.push((c, env.payload));
                }
                // A flat group's rank 0 (the only parent) goes on without it.
                Err(e) if self.go_on => found.push((c, e, t.gone_since(c))),
                Err(e) => {
                    let within = match e {
                        RecvError::Timeout => format!(
                            " within {} of rank {} (--rank-timeout)",
                            humantime::format_duration(wait),
                            self.rank
                        ),
                        _ => String::new(),
                    };
                    let below = tree.subtree(c);
                    let carried = if below.len() > 1 {
                        format!(" (the parts of ranks {} went with it)", ranks_list(&below[1..]))
                    } else {
                        String::new()
                    };
                    losses.push(format!(
                        "{} {what}{within}{carried}",
                        describe_member(&self.members, c, e)
                    ));
                }
            }
        }
        self.record_lost(found, what);
        let merged = merge(payloads);
        let t = self
            .transport
            .as_mut()
            .expect("a group of several ranks has a transport");
        if let Some(parent) = tree.parent(self.rank) {
            let envelope = Envelope {
                losses,
                payload: merged,
            };
            if let Err(e) = t.send(parent, TAG_ROUND, &envelope.bytes()) {
                self.broken = true;
                let why = format!(
                    "rank {} could not send its part of {what} to rank {parent}: {e}",
                    self.rank
                );
                return Err(Lost {
                    message: send_failure(t.as_mut(), parent, what, why),
                });
            }
            let stop = Stop {
                flag: self.interrupt,
                root_stopping: &mut self.root_stopping,
            };
            return wait_answer(t.as_mut(), what, timeout, stop).inspect_err(|_| self.broken = true);
        }
        if !losses.is_empty() {
            self.broken = true;
            return Err(Lost {
                message: losses.join(", "),
            });
        }
        self.answer_all(&merged, what)?;
        Ok(merged)
    }

    /// A barrier: every rank waits for every other.
    pub fn barrier(&mut self, what: &str) -> Result<(), Lost> {
        self.round(Vec::new(), what, |_| Vec::new()).map(drop)
    }

    /// Send a small message outside the rounds (stonewall notices).
    pub(crate) fn notify(&mut self, to: usize, tag: u8, data: &[u8]) {
        if let Some(t) = self.transport.as_mut() {
            // A lost peer shows up at the next round, with a better message.
            let _ = t.send(to, tag, data);
        }
    }

    /// Every message with `tag` from `from` that has arrived.
    pub(crate) fn drain(&mut self, from: usize, tag: u8) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        if let Some(t) = self.transport.as_mut() {
            let now = Instant::now();
            while let Ok(m) = t.recv(from, tag, now) {
                out.push(m);
            }
        }
        out
    }

    /// End every process of the group (after a failed step, once rank 0 wrote its result).
    pub fn abort(&mut self, code: i32) -> ! {
        match self.transport.as_mut() {
            Some(t) => t.abort(code),
            None => std::process::exit(code),
        }
    }
}

/// How long a rank at `depth` of a tree `height` deep waits for its children: a share of
/// `timeout` less per level, so that a parent outlasts its children's waits (in whole
/// milliseconds, for the message).
fn child_wait(timeout: Duration, depth: usize, height: usize) -> Duration {
    let share = timeout.as_millis() / (2 * (height as u128 + 1));
    let share = Duration::from_millis(u64::try_from(share).unwrap_or(u64::MAX));
    timeout.saturating_sub(share.saturating_mul(u32::try_from(depth).unwrap_or(u32::MAX)))
}

/// Ranks in order as runs: `9-16, 73`.
fn ranks_list(ranks: &[usize]) -> String {
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for &r in ranks {
        match runs.last_mut() {
            Some((_, last)) if *last + 1 == r => *last = r,
            _ => runs.push((r, r)),
        }
    }
    runs.iter()
        .map(|&(a, b)| if a == b { a.to_string() } else { format!("{a}-{b}") })
        .collect::<Vec<_>>()
        .join(", ")
}

/// What a rank sends its tree parent: the ranks below it that were lost (named by whoever
/// waited for them) and its merged payload. Bytes: the length of the JSON list of losses
/// (u32 LE), the list, the payload.
struct Envelope {
    losses: Vec<String>,
    payload: Vec<u8>,
}

impl Envelope {
    fn bytes(&self) -> Vec<u8> {
        let losses = serde_json::to_vec(&self.losses).expect("strings serialize");
        let mut out = Vec::with_capacity(4 + losses.len() + self.payload.len());
        out.extend_from_slice(&(losses.len() as u32).to_le_bytes());
        out.extend_from_slice(&losses);
        out.extend_from_slice(&self.payload);
        out
    }

    fn read(bytes: &[u8]) -> Result<Envelope, String> {
        let head: [u8; 4] = bytes
            .get(..4)
            .and_then(|h| h.try_into().ok())
            .ok_or("a merged part shorter than its header")?;
        let n = u32::from_le_bytes(head) as usize;
        let list = bytes
            .get(4..4 + n)
            .ok_or("a merged part shorter than its header says")?;
        let losses =
            serde_json::from_slice(list).map_err(|e| format!("a list of lost ranks that cannot be read ({e})"))?;
        Ok(Envelope {
            losses,
            payload: bytes[4 + n..].to_vec(),
        })
    }
}

/// Decode `bytes` that rank `from` of `members` sent to rank `me` as `what`.
pub fn decode<T: DeserializeOwned>(
    members: &[Member],
    me: usize,
    from: usize,
    what: &str,
    bytes: &[u8],
) -> Result<T, DecodeError> {
    serde_json::from_slice(bytes).map_err(|e| DecodeError {
        what: what.to_string(),
        from,
        from_version: members.get(from).map(|m| m.version.clone()).unwrap_or_default(),
        me,
        detail: e.to_string(),
    })
}

/// Why a send to `to` failed: its side of the connection says it better (it exited, or sent
/// something else) than the send's own error `e`.
fn send_failure(t: &mut dyn Transport, to: usize, what: &str, e: String) -> String {
    // A send to a rank that just exited can fail (EPIPE) before this rank's reader has seen its
    // connection close: wait a moment for that, so the message says the rank exited.
    match t.recv(to, TAG_ROUND, Instant::now() + GONE_GRACE) {
        Err(RecvError::Garbled(why)) => format!("rank {to} {why}"),
        Err(RecvError::Gone(_)) => format!("rank {to} exited before {what}"),
        _ => e,
    }
}

/// A rank other than 0 waits for rank 0's answer of a collective step: rank 0 waits up to
/// `timeout` for the others, so this waits that and a grace.
/// What a rank other than 0 knows of a stop while it waits for rank 0.
struct Stop<'a> {
    /// The run's stop flag (a signal to this process, or rank 0's relay).
    flag: Option<&'static AtomicBool>,
    /// Rank 0 said it is stopping: it will answer, however long its gathering takes.
    root_stopping: &'a mut bool,
}

/// A rank's wait for rank 0's answer of a step. Once this rank is stopped, a rank 0 that has
/// not said it is stopping too gets [`SILENT_ROOT`] to say so; a silent one (stopped, hung)
/// is given up on then, not at `--rank-timeout`.
fn wait_answer(t: &mut dyn Transport, what: &str, timeout: Duration, stop: Stop) -> Result<Vec<u8>, Lost> {
    let deadline = Instant::now() + timeout + ROOT_GRACE;
    let mut stopped_at: Option<Instant> = None;
    let got = loop {
        match t.recv(0, TAG_ROUND, deadline.min(Instant::now() + RELAY_STEP)) {
            Err(RecvError::Timeout) if Instant::now() < deadline => {
                if !stop.flag.is_some_and(|f| f.load(Ordering::Relaxed)) || *stop.root_stopping {
                    continue;
                }
                let now = Instant::now();
                while t.recv(0, TAG_STOP, now).is_ok() {
                    *stop.root_stopping = true;
                }
                let since = *stopped_at.get_or_insert(now);
                if !*stop.root_stopping && since.elapsed() >= SILENT_ROOT {
                    return Err(Lost {
                        message: format!(
                            "rank 0 did not answer {what} within {} of the stop signal (stopped or hung?): this rank stops",
                            humantime::format_duration(SILENT_ROOT)
                        ),
                    });
                }
            }
            got => break got,
        }
    };
    got.map_err(|e| {
        // Only a wait that ran out is about the timeout.
        let within = match e {
            RecvError::Timeout => format!(
                " within {} (--rank-timeout)",
                humantime::format_duration(timeout + ROOT_GRACE)
            ),
            _ => String::new(),
        };
        Lost {
            message: format!("{} {what}{within}", describe_short(e, 0, "did not finish")),
        }
    })
}

/// Rank 0: once `flag` is set, tell every other rank to stop (once).
fn send_stop(t: &mut dyn Transport, size: usize, flag: &AtomicBool, sent: &mut bool) {
    if *sent || !flag.load(Ordering::Relaxed) {
        return;
    }
    *sent = true;
    for r in 1..size {
        // A lost rank shows up at the next round, with a better message.
        let _ = t.send(r, TAG_STOP, &[]);
    }
}

fn describe(e: RecvError, rank: usize, what: &str) -> String {
    match e {
        RecvError::Timeout => format!("rank {rank} {what} in time (--rank-timeout)"),
        RecvError::Gone(how) => format!("rank {rank} {how}"),
        RecvError::Garbled(what) => format!("rank {rank} {what}"),
    }
}

fn describe_short(e: RecvError, rank: usize, what: &str) -> String {
    match e {
        RecvError::Timeout => format!("rank {rank} {what}"),
        RecvError::Gone(how) => format!("rank {rank} {how} before it finished"),
        RecvError::Garbled(what) => format!("rank {rank} {what} before it finished"),
    }
}

fn describe_member(members: &[Member], rank: usize, e: RecvError) -> String {
    let who = members
        .get(rank)
        .map(|m| format!("rank {rank} (host {}, pid {})", m.host, m.pid))
        .unwrap_or_else(|| format!("rank {rank}"));
    match e {
        RecvError::Timeout => format!("{who} did not finish"),
        RecvError::Gone(how) => format!("{who} {how} before it finished"),
        RecvError::Garbled(what) => format!("{who} {what} before it finished"),
    }
}

/// How this process was started: how many ranks an MPI launcher (mpirun, srun) says the job
/// has, when it was started by one.
pub fn launcher_size() -> Option<usize> {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "SLURM_STEP_NUM_TASKS"]
        .iter()
        .find_map(|v| std::env::var(v).ok()?.parse().ok())
}

#[cfg(test)]
mod tests;
