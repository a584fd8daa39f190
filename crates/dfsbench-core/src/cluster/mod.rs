//! The processes of one run: rank, size, host, barriers with a timeout, a common clock and the
//! gathering of each rank's measurements to rank 0.
//!
//! A run is one process (solo), `--procs N` local processes (the parent re-executes itself and
//! coordinates over Unix sockets it created), or the ranks of an MPI job (mpirun, srun). All
//! three share [`Group`]: rank 0 is the hub of every collective step, so a rank that never
//! arrives is named, and the run ends with what rank 0 has instead of hanging.

pub mod procs;

#[cfg(feature = "mpi")]
pub mod mpi;

use std::time::{Duration, Instant};

use dfsbench_backends::clock::Instant as Clock;
use serde::{Deserialize, Serialize};

/// Message kinds: collective rounds and the stonewall notices sent while a phase runs.
pub const TAG_ROUND: u8 = 1;
pub const TAG_STONEWALL: u8 = 2;
const TAG_SYNC: u8 = 3;
/// Clock exchanges with each rank at join; the shortest round trip sets its offset.
const SYNC_ROUNDS: usize = 16;

/// Why a message did not come.
#[derive(Debug)]
pub enum RecvError {
    Timeout,
    /// The peer is gone (its process exited); says how, when known.
    Gone(String),
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
}

/// One process of the run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Member {
    pub rank: usize,
    pub host: String,
    pub pid: u32,
}

/// A collective step failed: a rank did not arrive in time or exited.
#[derive(Debug)]
pub struct Lost {
    pub message: String,
    /// What rank 0 received, by rank (rank 0's own included); empty elsewhere.
    pub parts: Vec<Option<Vec<u8>>>,
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
}

/// Extra wait of the other ranks for rank 0, so that rank 0 always times out first and writes
/// the partial result before anyone gives up on it.
const ROOT_GRACE: Duration = Duration::from_secs(5);

fn this_host() -> String {
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
            }],
            origin: Clock::now(),
            timeout: Duration::from_secs(300),
            broken: false,
        }
    }

    /// Join the ranks of `transport`: learn who they are and align the clocks on rank 0's.
    pub fn join(mut transport: Box<dyn Transport>, timeout: Duration) -> Result<Group, String> {
        let (rank, size) = (transport.rank(), transport.size());
        let me = Member {
            rank,
            host: this_host(),
            pid: std::process::id(),
        };
        let deadline = Instant::now() + timeout;
        let mut origin = Clock::now();
        let members = if rank == 0 {
            let mut members = vec![me];
            // One rank at a time: a go, the rank's member record, then SYNC_ROUNDS requests
            // each answered with rank 0's clock. The rank keeps the answer of its shortest
            // round trip and puts it at that trip's middle (Cristian's algorithm): a busy
            // machine delays some messages by milliseconds, the shortest trip least.
            for r in 1..size {
                transport.send(r, TAG_SYNC, &[])?;
                let m = transport
                    .recv(r, TAG_SYNC, deadline)
                    .map_err(|e| describe(e, r, "did not start"))?;
                let member: Member = serde_json::from_slice(&m).map_err(|e| format!("rank {r}: {e}"))?;
                for _ in 0..SYNC_ROUNDS {
                    transport
                        .recv(r, TAG_SYNC, deadline)
                        .map_err(|e| describe(e, r, "did not answer"))?;
                    let now = origin.elapsed().as_secs_f64();
                    transport.send(r, TAG_SYNC, &now.to_le_bytes())?;
                }
                members.push(member);
            }
            let list = serde_json::to_vec(&members).expect("members serialize");
            for r in 1..size {
                transport.send(r, TAG_SYNC, &list)?;
            }
            members
        } else {
            transport
                .recv(0, TAG_SYNC, deadline)
                .map_err(|e| describe(e, 0, "did not start"))?;
            transport.send(0, TAG_SYNC, &serde_json::to_vec(&me).expect("member serializes"))?;
            let mut best: Option<(Duration, Clock, f64)> = None;
            for _ in 0..SYNC_ROUNDS {
                let t0 = Clock::now();
                transport.send(0, TAG_SYNC, &[])?;
                let reply = transport
                    .recv(0, TAG_SYNC, deadline)
                    .map_err(|e| describe(e, 0, "did not answer"))?;
                let t1 = Clock::now();
                let root_s =
                    f64::from_le_bytes(reply.as_slice().try_into().map_err(|_| "bad clock reply".to_string())?);
                let trip = t1 - t0;
                if best.is_none_or(|(b, _, _)| trip < b) {
                    best = Some((trip, t0 + trip / 2, root_s));
                }
            }
            let (_, mid, root_s) = best.expect("SYNC_ROUNDS > 0");
            origin = mid.checked_sub(Duration::from_secs_f64(root_s)).unwrap_or(mid);
            let list = transport
                .recv(0, TAG_SYNC, deadline)
                .map_err(|e| describe(e, 0, "did not answer"))?;
            serde_json::from_slice(&list).map_err(|e| format!("member list: {e}"))?
        };
        Ok(Group {
            transport: Some(transport),
            rank,
            size,
            members,
            origin,
            timeout,
            broken: false,
        })
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

    /// The rank whose data rank `rank` reads with `--shuffle` (IOR -C, mdtest -N): the rank
    /// `shift` places ahead, with the smallest shift that puts every rank's source on another
    /// host (ranks per node when ranks are placed by slot, 1 when round-robin over nodes); on
    /// one host, the next rank.
    pub fn shuffle_source(&self, rank: usize) -> usize {
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
    pub fn instant(&self, s: f64) -> Clock {
        if s >= 0.0 {
            self.origin + Duration::from_secs_f64(s)
        } else {
            self.origin
                .checked_sub(Duration::from_secs_f64(-s))
                .unwrap_or(self.origin)
        }
    }

    /// A collective step: every rank hands `mine` to rank 0, rank 0 turns all of them into one
    /// answer, and every rank returns that answer. Nobody leaves before everybody arrived, so
    /// it is also a barrier. `what` names the step in the timeout message.
    pub fn round(
        &mut self,
        mine: Vec<u8>,
        what: &str,
        answer: impl FnOnce(Vec<Vec<u8>>) -> Vec<u8>,
    ) -> Result<Vec<u8>, Lost> {
        let timeout = self.timeout;
        let Some(t) = self.transport.as_mut() else {
            return Ok(answer(vec![mine]));
        };
        if self.rank != 0 {
            let lost = |message: String| Lost {
                message,
                parts: Vec::new(),
            };
            t.send(0, TAG_ROUND, &mine).map_err(lost)?;
            let r = t.recv(0, TAG_ROUND, Instant::now() + timeout + ROOT_GRACE);
            return r.map_err(|e| {
                self.broken = true;
                lost(format!(
                    "{} {what} within {} (--rank-timeout)",
                    describe_short(e, 0, "did not finish"),
                    humantime::format_duration(timeout + ROOT_GRACE)
                ))
            });
        }
        let deadline = Instant::now() + timeout;
        let mut parts = vec![Some(mine)];
        let mut missing = Vec::new();
        let mut late = false;
        for r in 1..self.size {
            match t.recv(r, TAG_ROUND, deadline) {
                Ok(p) => parts.push(Some(p)),
                Err(e) => {
                    late |= matches!(e, RecvError::Timeout);
                    parts.push(None);
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
                parts,
            });
        }
        let reply = answer(parts.into_iter().map(|p| p.expect("every part arrived")).collect());
        for r in 1..self.size {
            if let Err(e) = t.send(r, TAG_ROUND, &reply) {
                self.broken = true;
                return Err(Lost {
                    message: format!("rank {r}: {e}"),
                    parts: Vec::new(),
                });
            }
        }
        Ok(reply)
    }

    /// A barrier: every rank waits for every other.
    pub fn barrier(&mut self, what: &str) -> Result<(), Lost> {
        self.round(Vec::new(), what, |_| Vec::new()).map(drop)
    }

    /// Send a small message outside the rounds (stonewall notices).
    pub fn notify(&mut self, to: usize, tag: u8, data: &[u8]) {
        if let Some(t) = self.transport.as_mut() {
            // A lost peer shows up at the next round, with a better message.
            let _ = t.send(to, tag, data);
        }
    }

    /// Every message with `tag` from `from` that has arrived.
    pub fn drain(&mut self, from: usize, tag: u8) -> Vec<Vec<u8>> {
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

fn describe(e: RecvError, rank: usize, what: &str) -> String {
    match e {
        RecvError::Timeout => format!("rank {rank} {what} in time (--rank-timeout)"),
        RecvError::Gone(how) => format!("rank {rank} {how}"),
    }
}

fn describe_short(e: RecvError, rank: usize, what: &str) -> String {
    match e {
        RecvError::Timeout => format!("rank {rank} {what}"),
        RecvError::Gone(how) => format!("rank {rank} {how} before it finished"),
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
mod tests {
    use super::*;

    fn group(hosts: &[&str]) -> Group {
        let mut g = Group::solo();
        g.size = hosts.len();
        g.members = hosts
            .iter()
            .enumerate()
            .map(|(rank, h)| Member {
                rank,
                host: h.to_string(),
                pid: 1,
            })
            .collect();
        g
    }

    #[test]
    fn shuffled_reads_come_from_another_node() {
        let by_slot = group(&["a", "a", "b", "b", "c", "c"]);
        assert_eq!(
            (0..6).map(|r| by_slot.shuffle_source(r)).collect::<Vec<_>>(),
            [2, 3, 4, 5, 0, 1]
        );
        let round_robin = group(&["a", "b", "a", "b"]);
        assert_eq!(
            (0..4).map(|r| round_robin.shuffle_source(r)).collect::<Vec<_>>(),
            [1, 2, 3, 0]
        );
        let one_node = group(&["a", "a", "a"]);
        assert_eq!(
            (0..3).map(|r| one_node.shuffle_source(r)).collect::<Vec<_>>(),
            [1, 2, 0]
        );
    }
}
