//! Joining a group: every rank sends rank 0 its member record (host, pid, build) and syncs
//! its clock; rank 0 refuses a rank of another build and tells every rank why at once.

use dfsbench_backends::clock::Instant as Clock;
use std::time::{Duration, Instant};

use super::{describe, this_host, Member, Transport, TAG_SYNC};

/// What this rank runs, in its member record: the program's version line (with its commit and
/// features, `0.1.0 (commit 2a5e485f61d2, features: io_uring, mpi)`) once [`set_build`] named
/// it, else the library's version. Ranks of two builds of one version differ here too.
static BUILD: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();

/// Name the build every rank must run the same of (the CLI's `--version` line).
pub fn set_build(build: &'static str) {
    let _ = BUILD.set(build);
}

/// See [`BUILD`].
pub fn build() -> &'static str {
    BUILD.get().copied().unwrap_or(env!("CARGO_PKG_VERSION"))
}

/// Clock exchanges with each rank at join; the shortest round trip sets its offset.
const SYNC_ROUNDS: usize = 16;

/// The handshake of [`Group::join`]: every rank's member record, and the local instant of the
/// common clock's origin.
pub(super) fn handshake(transport: &mut dyn Transport, timeout: Duration) -> Result<(Vec<Member>, Clock), String> {
    let (rank, size) = (transport.rank(), transport.size());
    let me = Member {
        rank,
        host: this_host(),
        pid: std::process::id(),
        version: build().into(),
        clock_rtt_s: None,
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
            let mut member = member_record(r, &m).inspect_err(|why| refuse_all(transport, size, why))?;
            // From an answer sent to the next request received: a round trip as rank 0 sees it.
            let mut answered: Option<Clock> = None;
            for _ in 0..SYNC_ROUNDS {
                transport
                    .recv(r, TAG_SYNC, deadline)
                    .map_err(|e| describe(e, r, "did not answer"))?;
                if let Some(trip) = answered.map(|t| t.elapsed().as_secs_f64()) {
                    member.clock_rtt_s = Some(member.clock_rtt_s.map_or(trip, |b| b.min(trip)));
                }
                let now = origin.elapsed().as_secs_f64();
                transport.send(r, TAG_SYNC, &now.to_le_bytes())?;
                answered = Some(Clock::now());
            }
            members.push(member);
        }
        let list = serde_json::to_vec(&members).expect("members serialize");
        for r in 1..size {
            transport.send(r, TAG_SYNC, &list)?;
        }
        members
    } else {
        let go = transport
            .recv(0, TAG_SYNC, deadline)
            .map_err(|e| describe(e, 0, "did not start"))?;
        refused(&go)?;
        transport.send(0, TAG_SYNC, &serde_json::to_vec(&me).expect("member serializes"))?;
        let mut best: Option<(Duration, Clock, f64)> = None;
        for _ in 0..SYNC_ROUNDS {
            let t0 = Clock::now();
            transport.send(0, TAG_SYNC, &[])?;
            let reply = transport
                .recv(0, TAG_SYNC, deadline)
                .map_err(|e| describe(e, 0, "did not answer"))?;
            let t1 = Clock::now();
            refused(&reply)?;
            let root_s = f64::from_le_bytes(reply.as_slice().try_into().map_err(|_| "bad clock reply".to_string())?);
            let trip = t1 - t0;
            if best.is_none_or(|(b, _, _)| trip < b) {
                best = Some((trip, t0 + trip / 2, root_s));
            }
        }
        let (_, mid, root_s) = best.expect("SYNC_ROUNDS > 0");
        let offset = Duration::try_from_secs_f64(root_s)
            .map_err(|_| format!("rank 0 sent a clock reading of {root_s} s: not from this program"))?;
        origin = mid.checked_sub(offset).unwrap_or(mid);
        let list = transport
            .recv(0, TAG_SYNC, deadline)
            .map_err(|e| describe(e, 0, "did not answer"))?;
        refused(&list)?;
        let members: Vec<Member> = serde_json::from_slice(&list)
            .map_err(|e| format!("rank 0 sent a member list that this dfsbench {} cannot read ({e}): run the same dfsbench on every rank", build()))?;
        if members.len() != size || members.get(rank).is_none_or(|m| m.rank != rank) {
            return Err(format!(
                "rank 0 sent a list of {} members without rank {rank} for a run of {size}: it is not from this run",
                members.len()
            ));
        }
        if members.first().is_none_or(|m| m.version != build()) {
            let theirs = members.first().map_or("", |m| m.version.as_str());
            return Err(format!(
                "rank 0 runs dfsbench {}, rank {rank} runs {}: run the same dfsbench on every rank",
                if theirs.is_empty() {
                    "of an unknown version"
                } else {
                    theirs
                },
                build()
            ));
        }
        members
    };
    Ok((members, origin))
}

/// Rank 0's reading of rank `r`'s member record: a rank of another version is named with its
/// version.
pub(super) fn member_record(r: usize, bytes: &[u8]) -> Result<Member, String> {
    let other = |theirs: &str| {
        format!(
            "rank {r} runs dfsbench {theirs}, rank 0 runs {}: run the same dfsbench on every rank",
            build()
        )
    };
    match serde_json::from_slice::<Member>(bytes) {
        Ok(m) if m.version == build() && m.rank == r => Ok(m),
        Ok(m) if m.version != build() => Err(other(if m.version.is_empty() {
            "of an unknown version"
        } else {
            &m.version
        })),
        Ok(m) => Err(format!("rank {r} says it is rank {}: not a rank of this run", m.rank)),
        Err(e) => {
            let version = serde_json::from_slice::<serde_json::Value>(bytes)
                .ok()
                .and_then(|v| v["version"].as_str().map(String::from));
            match version {
                Some(v) if v != build() => Err(other(&v)),
                _ => Err(format!(
                    "rank {r} sent a member record that dfsbench {} cannot read ({e}): run the same dfsbench on every rank",
                    build()
                )),
            }
        }
    }
}

/// What starts rank 0's refusal of a run at join: the reason follows.
pub(super) const REFUSED: &[u8] = b"dfsbench refused: ";

/// Rank 0 cannot run with these ranks (one runs another version): tell every rank why, at
/// once, so that none waits for --rank-timeout to learn it.
pub(super) fn refuse_all(t: &mut dyn Transport, size: usize, why: &str) {
    let message = [REFUSED, why.as_bytes()].concat();
    for r in 1..size {
        // A rank that cannot be told ends at its timeout, as before.
        let _ = t.send(r, TAG_SYNC, &message);
    }
}

/// Rank 0's refusal, when `message` is one: its reason, as an error.
pub(super) fn refused(message: &[u8]) -> Result<(), String> {
    match message.strip_prefix(REFUSED) {
        Some(why) => Err(String::from_utf8_lossy(why).into_owned()),
        None => Ok(()),
    }
}

/// A rank could not join its group: why, and the transport, which the caller ends as its
/// launcher wants (an MPI job is aborted: a peer that is not dfsbench may never finalize).
pub struct JoinError {
    pub message: String,
    pub transport: Box<dyn Transport>,
}
