//! `--procs N` without MPI: the parent (rank 0) re-executes its own binary N - 1 times with the
//! same arguments, on this machine or, with `--hosts`, through an rsh agent (ssh, or a lab's
//! client-node agent) on other hosts. The children connect back to the parent: over a Unix
//! socket in a fresh private directory when all are here, over TCP when some are elsewhere
//! (wire.rs: each says the group's token and its rank first). For the tree merge of each
//! phase's parts (tree.rs) every local child with tree children of its own also listens on a
//! socket in that directory, and its tree children connect to it before they connect to the
//! parent: when every child has joined rank 0, every tree link is up, and the directory is
//! removed. A group over hosts, or one that goes on without a lost rank (`--rank-loss
//! continue`), is flat: every rank talks to rank 0 alone. Frames are
//! `[tag u8][length u64 LE][bytes]`; a reader thread per peer turns them (and a closed
//! connection, with its time) into channel messages, so a waiting rank sees a dead peer at
//! once and a hung one at its deadline.
//!
//! The bytes come from another process: a frame is checked (known tag, at most [`MAX_FRAME`]
//! bytes) before anything is allocated for it, and one that fails ends that peer's connection
//! with the reason instead of a panic. A child dies with its parent: it gets SIGTERM when
//! the parent exits (PR_SET_PDEATHSIG; a remote one when its connection to the parent
//! closes), which stops it as Ctrl-C does.

use std::io::{Read, Write};
use std::os::unix::fs::DirBuilderExt;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::tree::{Tree, FANOUT};
use super::wire::{self, Address, Conn, Listener, Token};
use super::{RecvError, Transport, TAGS};

/// Names the child's place in the group: `rank:size:fanout:token:address` (wire.rs).
pub const ENV: &str = "DFSBENCH_PROCS_CHILD";

/// Where the children of `--procs` run.
#[derive(Debug, Clone, Default)]
pub struct Layout {
    /// `--hosts`: rank r runs on `hosts[r % len]`; rank 0 on the first, which must be this
    /// host. Empty: all here.
    pub hosts: Vec<String>,
    /// `--rsh`: the command that runs a command line on a host (`ssh`), as words.
    pub rsh: Vec<String>,
    /// Every rank talks to rank 0 alone (`--rank-loss continue`): a lost rank takes no other
    /// rank's part with it.
    pub flat: bool,
}

/// The largest message a rank sends is a phase part (histograms, per-second series, one entry
/// per worker): megabytes for days-long phases of thousands of workers. A larger frame is
/// not from this program.
pub(crate) const MAX_FRAME: u64 = 256 << 20;

/// The most processes `--procs` starts on one machine.
pub(crate) const MAX_PROCS: usize = 4096;

/// Why a peer's bytes could not be read as frames.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum FrameError {
    /// The connection closed between frames.
    Closed,
    /// The connection closed (or failed) inside a frame.
    Truncated,
    TooLarge(u64),
    UnknownTag(u8),
}

impl std::fmt::Display for FrameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FrameError::Closed => write!(f, "closed its connection"),
            FrameError::Truncated => write!(f, "closed its connection in the middle of a message"),
            FrameError::TooLarge(n) => write!(
                f,
                "sent a message of {n} bytes, more than the {} MiB limit (not a message of this program)",
                MAX_FRAME >> 20
            ),
            FrameError::UnknownTag(t) => {
                write!(f, "sent a message of unknown kind {t} (not a message of this program)")
            }
        }
    }
}

/// Read one frame. Memory grows with the bytes that arrive, never with the length a header
/// claims.
pub(crate) fn read_frame(r: &mut impl Read) -> Result<(u8, Vec<u8>), FrameError> {
    let mut head = [0u8; 9];
    let mut got = 0;
    while got < head.len() {
        match r.read(&mut head[got..]) {
            Ok(0) if got == 0 => return Err(FrameError::Closed),
            Ok(0) => return Err(FrameError::Truncated),
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) if got == 0 => return Err(FrameError::Closed),
            Err(_) => return Err(FrameError::Truncated),
        }
    }
    let tag = head[0];
    if !TAGS.contains(&tag) {
        return Err(FrameError::UnknownTag(tag));
    }
    let mut len = [0u8; 8];
    len.copy_from_slice(&head[1..]);
    let len = u64::from_le_bytes(len);
    if len > MAX_FRAME {
        return Err(FrameError::TooLarge(len));
    }
    let mut data = Vec::new();
    match r.take(len).read_to_end(&mut data) {
        Ok(n) if n as u64 == len => Ok((tag, data)),
        _ => Err(FrameError::Truncated),
    }
}

/// The bytes of one frame, as [`read_frame`] reads them.
pub(crate) fn frame(tag: u8, data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(9 + data.len());
    out.push(tag);
    out.extend_from_slice(&(data.len() as u64).to_le_bytes());
    out.extend_from_slice(data);
    out
}

enum Event {
    Msg(u8, Vec<u8>),
    Closed(Instant),
    /// The peer sent what is not a frame of this program; its connection is dropped.
    Garbled(String),
}

pub struct Procs {
    rank: usize,
    size: usize,
    fanout: usize,
    /// Write ends by peer rank (a child has only rank 0's and its tree links).
    peers: Vec<Option<Conn>>,
    rx: mpsc::Receiver<(usize, Event)>,
    pending: Vec<(usize, u8, Vec<u8>)>,
    /// When each peer's connection closed, as its reader saw it.
    closed: Vec<Option<Instant>>,
    /// ` on HOST` for each child started on another host (else empty), for messages.
    hosts: Vec<String>,
    /// Why a peer's connection was dropped, when it sent garbage.
    garbled: Vec<Option<String>>,
    children: Vec<Child>,
    /// The private directory of the socket, removed when the group is complete.
    dir: Option<tempdir::Dir>,
}

mod tempdir {
    /// A directory only this user can enter, removed on drop.
    pub(super) struct Dir(pub std::path::PathBuf);
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

fn reader(rank: usize, mut stream: Conn, tx: mpsc::Sender<(usize, Event)>) -> Result<(), String> {
    std::thread::Builder::new()
        .name(format!("dfsbench-peer{rank}"))
        .spawn(move || loop {
            let event = match read_frame(&mut stream) {
                Ok((tag, data)) => Event::Msg(tag, data),
                Err(FrameError::Closed) => Event::Closed(Instant::now()),
                Err(e) => {
                    // The stream is out of step: nothing after this can be trusted.
                    stream.shutdown();
                    Event::Garbled(e.to_string())
                }
            };
            let last = !matches!(event, Event::Msg(..));
            if tx.send((rank, event)).is_err() || last {
                return;
            }
        })
        .map(drop)
        .map_err(|e| format!("cannot start a thread to read from rank {rank}: {e}"))
}

/// Prepare a child of `--procs`: it gets SIGTERM when this process dies, and blocks the
/// signals that stop a run until it has installed its handler for them (an early Ctrl-C then
/// waits for the handler instead of killing the child half started).
fn die_with_parent(cmd: &mut Command) {
    // SAFETY: getpid is async-signal-safe; the pre_exec closure calls only prctl, getppid,
    // sigemptyset, sigaddset and sigprocmask, which are async-signal-safe too.
    let parent = unsafe { libc::getpid() };
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The parent may have died before prctl: then nobody would signal us.
            if libc::getppid() != parent {
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            for s in STOP_SIGNALS {
                libc::sigaddset(&mut set, s);
            }
            libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
            Ok(())
        });
    }
}

/// The signals that stop a run as Ctrl-C does; a `--procs` child starts with them blocked.
pub(crate) const STOP_SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// Unblock [`STOP_SIGNALS`], once their handler is installed.
pub fn unblock_stop_signals() {
    // SAFETY: plain signal mask calls on a zeroed set.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in STOP_SIGNALS {
            libc::sigaddset(&mut set, s);
        }
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
    }
}

/// A fresh directory only this user can enter (0700), and the socket path in it.
fn private_dir() -> Result<(tempdir::Dir, std::path::PathBuf), String> {
    let dir = std::env::temp_dir().join(format!(
        "dfsbench-procs-{}-{:08x}",
        std::process::id(),
        rand::random::<u32>()
    ));
    // create, not create_all: an existing path (a planted symlink) is an error, not reused.
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&dir)
        .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let path = dir.join("group.sock");
    Ok((tempdir::Dir(dir), path))
}

/// Child `spec` of this program on `host` through the rsh agent: in the same working
/// directory, with the same arguments (mpirun's convention: the same paths on every host).
fn remote_command(rsh: &[String], host: &str, exe: &std::path::Path, spec: &str) -> Result<Command, String> {
    let (agent, options) = rsh.split_first().ok_or_else(|| {
        format!("--hosts names {host}, which is not this host: give --rsh (e.g. ssh) to start processes there")
    })?;
    let cwd = std::env::current_dir().map_err(|e| format!("cannot read the working directory: {e}"))?;
    let mut words = vec![
        "exec".to_string(),
        "env".to_string(),
        format!("{ENV}={spec}"),
        exe.display().to_string(),
    ];
    for a in std::env::args_os().skip(1) {
        let a = a
            .into_string()
            .map_err(|a| format!("argument {a:?} is not UTF-8: it cannot be passed to another host"))?;
        words.push(a);
    }
    let line = format!(
        "cd {} && {}",
        shell_words::quote(&cwd.display().to_string()),
        shell_words::join(&words)
    );
    let mut cmd = Command::new(agent);
    cmd.args(options).arg(host).arg(line);
    Ok(cmd)
}

impl Procs {
    /// Rank 0: start `size - 1` copies of this program with the same arguments where `layout`
    /// says, and wait until each connected.
    pub fn spawn(size: usize, timeout: Duration, layout: &Layout) -> Result<Procs, String> {
        let here = super::this_host();
        let host_of = |r: usize| match layout.hosts.len() {
            0 => here.clone(),
            n => layout.hosts[r % n].clone(),
        };
        let remote = (1..size).any(|r| host_of(r) != here);
        let fanout = if remote || layout.flat { size.max(1) } else { FANOUT };
        // The socket directory also holds the tree links of local children.
        let (dir, listener, address) = if remote {
            let (listener, address) = Listener::tcp()?;
            (None, listener, address)
        } else {
            let (dir, path) = private_dir()?;
            let listener = Listener::unix(&path)?;
            (Some(dir), listener, Address::Unix(path))
        };
        let token: Token = rand::random();
        let exe = std::env::current_exe().map_err(|e| format!("cannot find this program to start --procs: {e}"))?;
        let (tx, rx) = mpsc::channel();
        let mut children = Vec::with_capacity(size - 1);
        let mut hosts = vec![String::new(); size];
        for (r, noted) in hosts.iter_mut().enumerate().skip(1) {
            let spec = format!("{r}:{size}:{fanout}:{}:{address}", wire::token_hex(&token));
            let host = host_of(r);
            let mut cmd = if host == here {
                let mut cmd = Command::new(&exe);
                cmd.args(std::env::args_os().skip(1)).env(ENV, spec);
                cmd
            } else {
                remote_command(&layout.rsh, &host, &exe, &spec)?
            };
            cmd.stdin(Stdio::null()).stdout(Stdio::null());
            die_with_parent(&mut cmd);
            let child = cmd
                .spawn()
                .map_err(|e| format!("cannot start process {r} of --procs on {host}: {e}"))?;
            children.push(child);
            if host != here {
                *noted = format!(" on {host}");
            }
        }
        let mut peers: Vec<Option<Conn>> = (0..size).map(|_| None).collect();
        let deadline = Instant::now() + timeout;
        let mut joined = 1;
        while joined < size {
            match listener.accept() {
                Ok(mut s) => {
                    let rank = match wire::read_hello(&mut s, &token, deadline) {
                        Ok(rank) => rank,
                        // A stranger on the TCP port is turned away, not the run.
                        Err(_) if remote => continue,
                        Err(e) => return Err(format!("a child did not say its rank: {e}")),
                    };
                    if rank == 0 || rank >= size || peers[rank].is_some() {
                        return Err(format!("a child claimed rank {rank}"));
                    }
                    reader(rank, s.try_clone().map_err(|e| e.to_string())?, tx.clone())?;
                    peers[rank] = Some(s);
                    joined += 1;
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    for (i, c) in children.iter_mut().enumerate() {
                        if let Ok(Some(status)) = c.try_wait() {
                            return Err(format!(
                                "process {} of --procs exited at start{} ({status})",
                                i + 1,
                                hosts[i + 1]
                            ));
                        }
                    }
                    if Instant::now() > deadline {
                        return Err("the --procs processes did not connect in time".into());
                    }
                    std::thread::sleep(Duration::from_millis(2));
                }
                Err(e) => return Err(format!("cannot accept a --procs process: {e}")),
            }
        }
        Ok(Procs {
            rank: 0,
            size,
            fanout,
            peers,
            rx,
            pending: Vec::new(),
            closed: vec![None; size],
            hosts,
            garbled: vec![None; size],
            children,
            dir,
        })
    }

    /// A child: join the parent named by [`ENV`], if this process is one; `timeout` bounds
    /// the wait for its tree parent and children.
    pub fn child_from_env(timeout: Duration) -> Option<Result<Procs, String>> {
        let spec = std::env::var(ENV).ok()?;
        Some(Self::child(&spec, timeout))
    }

    fn child(spec: &str, timeout: Duration) -> Result<Procs, String> {
        let bad = || format!("{ENV}={spec}: expected rank:size:fanout:token:address");
        let mut it = spec.splitn(5, ':');
        let mut number = || it.next().and_then(|r| r.parse::<usize>().ok()).ok_or_else(bad);
        let (rank, size, fanout) = (number()?, number()?, number()?);
        let token = it.next().and_then(wire::token_from_hex).ok_or_else(bad)?;
        let address: Address = it.next().and_then(|a| a.parse().ok()).ok_or_else(bad)?;
        if rank == 0 || rank >= size || size > MAX_PROCS || fanout == 0 {
            return Err(bad());
        }
        let deadline = Instant::now() + timeout;
        let (tx, rx) = mpsc::channel();
        let mut peers: Vec<Option<Conn>> = (0..size).map(|_| None).collect();
        let tree = Tree { size, fanout };
        if let Address::Unix(path) = &address {
            let dir = path.parent().ok_or_else(bad)?;
            tree_links(rank, tree, dir, (&token, deadline), &mut peers, &tx)?;
        } else if tree.parent(rank) != Some(0) || !tree.children(rank).is_empty() {
            return Err(format!("{ENV}={spec}: a group over TCP is flat"));
        }
        let mut s = address.connect(deadline)?;
        wire::write_hello(&mut s, &token, rank)?;
        reader(0, s.try_clone().map_err(|e| e.to_string())?, tx)?;
        peers[0] = Some(s);
        Ok(Procs {
            rank,
            size,
            fanout,
            peers,
            rx,
            pending: Vec::new(),
            closed: vec![None; size],
            hosts: vec![String::new(); size],
            garbled: vec![None; size],
            children: Vec::new(),
            dir: None,
        })
    }

    /// How peer `rank` ended, for the message.
    fn how_gone(&mut self, rank: usize) -> String {
        if let Some(why) = &self.garbled[rank] {
            return why.clone();
        }
        if self.rank == 0 {
            if let Some(c) = self.children.get_mut(rank - 1) {
                let pid = c.id();
                // The connection closes as the process exits; give the exit a moment to land.
                for _ in 0..50 {
                    if let Ok(Some(status)) = c.try_wait() {
                        return format!("exited{} ({status})", self.hosts[rank]);
                    }
                    std::thread::sleep(Duration::from_millis(2));
                }
                return format!("(pid {pid}) closed its connection");
            }
        }
        "exited".into()
    }
}

/// The socket a child with tree children listens on, in the run's private directory.
fn tree_socket(dir: &std::path::Path, rank: usize) -> std::path::PathBuf {
    dir.join(format!("rank-{rank}.sock"))
}

/// Child `rank`'s links of the merge tree: it listens for its tree children, connects to its
/// tree parent (when that is not rank 0, whose link is the group's) and accepts its children.
/// Connecting does not wait for the other side's accept, so no rank waits for another in a
/// circle; each side says the token and its rank first, as to rank 0.
fn tree_links(
    rank: usize,
    tree: Tree,
    dir: &std::path::Path,
    (token, deadline): (&Token, Instant),
    peers: &mut [Option<Conn>],
    tx: &mpsc::Sender<(usize, Event)>,
) -> Result<(), String> {
    let kids = tree.children(rank);
    let listener = if kids.is_empty() {
        None
    } else {
        Some(Listener::unix(&tree_socket(dir, rank))?)
    };
    if let Some(parent) = tree.parent(rank).filter(|&p| p != 0) {
        let at = Address::Unix(tree_socket(dir, parent));
        // The parent binds its socket when it starts, which may be after this process.
        let mut s = loop {
            match at.connect(deadline) {
                Ok(s) => break s,
                Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
                Err(e) => return Err(format!("cannot reach rank {parent}: {e}")),
            }
        };
        wire::write_hello(&mut s, token, rank)?;
        reader(parent, s.try_clone().map_err(|e| e.to_string())?, tx.clone())?;
        peers[parent] = Some(s);
    }
    let Some(listener) = listener else {
        return Ok(());
    };
    let mut joined = 0;
    while joined < kids.len() {
        match listener.accept() {
            Ok(mut s) => {
                let who = wire::read_hello(&mut s, token, deadline)
                    .map_err(|e| format!("a tree child of rank {rank} did not say its rank: {e}"))?;
                if !kids.contains(&who) || peers[who].is_some() {
                    return Err(format!(
                        "rank {who} connected to rank {rank}, which is not its tree parent"
                    ));
                }
                reader(who, s.try_clone().map_err(|e| e.to_string())?, tx.clone())?;
                peers[who] = Some(s);
                joined += 1;
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(2));
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                return Err(format!(
                    "rank {rank}: {} of its tree children (ranks {}-{}) did not connect in time",
                    kids.len() - joined,
                    kids.start,
                    kids.end - 1
                ))
            }
            Err(e) => return Err(format!("rank {rank} cannot accept its tree children: {e}")),
        }
    }
    Ok(())
}

impl Procs {
    fn note_end(&mut self, rank: usize, event: Event) {
        let at = match event {
            Event::Closed(at) => at,
            Event::Garbled(why) => {
                self.garbled[rank] = Some(why);
                Instant::now()
            }
            Event::Msg(..) => return,
        };
        self.closed[rank].get_or_insert(at);
    }

    /// Take what has arrived off the channel: messages wait in `pending`, ends are noted.
    fn poll(&mut self) {
        while let Ok((f, event)) = self.rx.try_recv() {
            match event {
                Event::Msg(t, data) => self.pending.push((f, t, data)),
                end => self.note_end(f, end),
            }
        }
    }
}

impl Transport for Procs {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.size
    }
    fn kind(&self) -> &'static str {
        "procs"
    }

    fn send(&mut self, to: usize, tag: u8, data: &[u8]) -> Result<(), String> {
        // The socket file is no longer needed once everyone is connected.
        self.dir = None;
        let s = self.peers[to]
            .as_mut()
            .ok_or_else(|| format!("rank {} cannot send to rank {to}", self.rank))?;
        s.write_all(&frame(tag, data))
            .map_err(|e| format!("cannot send to rank {to}: {e}"))
    }

    fn recv(&mut self, from: usize, tag: u8, deadline: Instant) -> Result<Vec<u8>, RecvError> {
        if let Some(i) = self.pending.iter().position(|(f, t, _)| *f == from && *t == tag) {
            return Ok(self.pending.remove(i).2);
        }
        loop {
            if self.closed[from].is_some() {
                return Err(match self.garbled[from].clone() {
                    Some(why) => RecvError::Garbled(why),
                    None => RecvError::Gone(self.how_gone(from)),
                });
            }
            let wait = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(wait) {
                Ok((f, Event::Msg(t, data))) if f == from && t == tag => return Ok(data),
                Ok((f, Event::Msg(t, data))) => self.pending.push((f, t, data)),
                Ok((f, event)) => self.note_end(f, event),
                Err(_) => return Err(RecvError::Timeout),
            }
        }
    }

    fn is_gone(&mut self, rank: usize) -> bool {
        self.gone_since(rank).is_some()
    }

    fn gone_since(&mut self, rank: usize) -> Option<Instant> {
        self.poll();
        self.closed.get(rank).copied().unwrap_or(Some(Instant::now()))
    }

    fn fanout(&self) -> usize {
        self.fanout
    }

    fn abort(&mut self, code: i32) -> ! {
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
        std::process::exit(code)
    }
}

impl Drop for Procs {
    fn drop(&mut self) {
        // Children end after the last round; reap them so none is left behind, and stop any
        // that still waits for a round that will not come (rank 0 failed before it): closing
        // the connections first tells them at once.
        self.peers.clear();
        let deadline = Instant::now() + Duration::from_secs(10);
        for c in &mut self.children {
            while matches!(c.try_wait(), Ok(None)) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
            if matches!(c.try_wait(), Ok(None)) {
                let _ = c.kill();
            }
            let _ = c.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::TAG_ROUND;
    use proptest::prelude::*;

    fn read_all(mut bytes: &[u8]) -> (Vec<(u8, Vec<u8>)>, FrameError) {
        let mut frames = Vec::new();
        loop {
            match read_frame(&mut bytes) {
                Ok(f) => frames.push(f),
                Err(e) => return (frames, e),
            }
        }
    }

    #[test]
    fn a_header_claiming_2_62_bytes_is_refused_before_any_allocation() {
        let mut bytes = vec![TAG_ROUND];
        bytes.extend_from_slice(&(1u64 << 62).to_le_bytes());
        assert_eq!(read_all(&bytes).1, FrameError::TooLarge(1 << 62));
        let e = FrameError::TooLarge(1 << 62).to_string();
        assert!(e.contains("4611686018427387904 bytes") && e.contains("256 MiB"), "{e}");
    }

    #[test]
    fn a_frame_shorter_than_its_header_says_is_truncated() {
        // 200 MiB claimed (under the cap), 3 bytes sent: the reader holds 3 bytes, not 200 MiB.
        let mut bytes = vec![TAG_ROUND];
        bytes.extend_from_slice(&(200u64 << 20).to_le_bytes());
        bytes.extend_from_slice(b"abc");
        assert_eq!(read_all(&bytes).1, FrameError::Truncated);
        assert_eq!(read_all(&bytes[..5]).1, FrameError::Truncated);
        assert_eq!(read_all(&[]).1, FrameError::Closed);
    }

    #[test]
    fn an_unknown_kind_of_message_is_refused() {
        let (frames, e) = read_all(&frame(99, b"{}"));
        assert!(frames.is_empty());
        assert_eq!(e, FrameError::UnknownTag(99));
    }

    #[test]
    fn the_socket_directory_is_private() {
        use std::os::unix::fs::PermissionsExt;
        let (dir, _) = private_dir().unwrap();
        let mode = std::fs::metadata(&dir.0).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700, "{mode:o}");
    }

    #[test]
    fn a_child_refuses_a_place_that_is_not_in_the_group() {
        let token = "00112233445566778899aabbccddeeff";
        for spec in [
            format!("0:2:8:{token}:unix:/nonexistent"),
            format!("2:2:8:{token}:unix:/nonexistent"),
            format!("1:99999:8:{token}:unix:/x"),
            format!("a:2:8:{token}:unix:/x"),
            format!("1:2:0:{token}:unix:/x"),
            "1:2:8:short:unix:/x".to_string(),
            format!("1:2:8:{token}:/x"),
            "1:2".to_string(),
        ] {
            let e = Procs::child(&spec, Duration::from_secs(1)).err().expect(&spec);
            assert!(e.contains("expected rank:size:fanout:token:address"), "{spec}: {e}");
        }
        // Over TCP a group is flat: a child with a tree parent or children is refused.
        let e = Procs::child(&format!("9:20:8:{token}:tcp:127.0.0.1:1"), Duration::from_secs(1))
            .err()
            .unwrap();
        assert!(e.contains("a group over TCP is flat"), "{e}");
    }

    proptest! {
        /// Any bytes a peer sends are frames, or one error: never a panic, never a frame of
        /// an unknown kind or over the limit.
        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
            let (frames, _) = read_all(&bytes);
            for (tag, data) in frames {
                prop_assert!(TAGS.contains(&tag));
                prop_assert!(data.len() as u64 <= MAX_FRAME);
            }
        }

        /// Random headers (any tag, any length) followed by a few bytes.
        #[test]
        fn random_headers_never_allocate_what_they_claim(tag in any::<u8>(), len in any::<u64>(), tail in proptest::collection::vec(any::<u8>(), 0..64)) {
            let mut bytes = vec![tag];
            bytes.extend_from_slice(&len.to_le_bytes());
            bytes.extend_from_slice(&tail);
            let mut r = bytes.as_slice();
            match read_frame(&mut r) {
                Ok((t, data)) => prop_assert!(t == tag && data.len() as u64 == len && len <= tail.len() as u64),
                Err(FrameError::TooLarge(n)) => prop_assert!(n == len && len > MAX_FRAME),
                Err(FrameError::UnknownTag(t)) => prop_assert!(t == tag && !TAGS.contains(&tag)),
                Err(e) => prop_assert_eq!(e, FrameError::Truncated),
            }
        }

        /// What a rank sends is what the other reads.
        #[test]
        fn frames_round_trip(msgs in proptest::collection::vec((proptest::sample::select(TAGS.to_vec()), proptest::collection::vec(any::<u8>(), 0..512)), 0..8)) {
            let bytes: Vec<u8> = msgs.iter().flat_map(|(t, d)| frame(*t, d)).collect();
            let (frames, end) = read_all(&bytes);
            prop_assert_eq!(frames, msgs);
            prop_assert_eq!(end, FrameError::Closed);
        }
    }
}
