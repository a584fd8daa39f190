//! `--procs N` on one machine without MPI: the parent (rank 0) re-executes its own binary N - 1
//! times with the same arguments; the children connect back over a Unix socket the parent
//! made in a fresh private directory. Frames are `[tag u8][length u64 LE][bytes]`; a reader
//! thread per peer turns them (and a closed connection) into channel messages, so a waiting
//! rank sees a dead peer at once and a hung one at its deadline.

use std::io::{Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::{RecvError, Transport};

/// Names the child's place in the group: `rank:size:socket path`.
pub const ENV: &str = "DFSBENCH_PROCS_CHILD";

enum Event {
    Msg(u8, Vec<u8>),
    Closed,
}

pub struct Procs {
    rank: usize,
    size: usize,
    /// Write ends by peer rank (a child has only rank 0's).
    peers: Vec<Option<UnixStream>>,
    rx: mpsc::Receiver<(usize, Event)>,
    pending: Vec<(usize, u8, Vec<u8>)>,
    closed: Vec<bool>,
    children: Vec<Child>,
    /// The private directory of the socket, removed when the group is complete.
    dir: Option<tempdir::Dir>,
}

mod tempdir {
    /// A directory only this user can enter, removed on drop.
    pub struct Dir(pub std::path::PathBuf);
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

fn reader(rank: usize, mut stream: UnixStream, tx: mpsc::Sender<(usize, Event)>) {
    std::thread::Builder::new()
        .name(format!("dfsbench-peer{rank}"))
        .spawn(move || loop {
            let mut head = [0u8; 9];
            if stream.read_exact(&mut head).is_err() {
                let _ = tx.send((rank, Event::Closed));
                return;
            }
            let len = u64::from_le_bytes(head[1..].try_into().expect("8 bytes")) as usize;
            let mut data = vec![0u8; len];
            if stream.read_exact(&mut data).is_err() {
                let _ = tx.send((rank, Event::Closed));
                return;
            }
            if tx.send((rank, Event::Msg(head[0], data))).is_err() {
                return;
            }
        })
        .expect("spawning a socket reader");
}

impl Procs {
    /// Rank 0: start `size - 1` copies of this program with the same arguments and wait until
    /// each connected.
    pub fn spawn(size: usize, timeout: Duration) -> Result<Procs, String> {
        let dir = std::env::temp_dir().join(format!(
            "dfsbench-procs-{}-{:08x}",
            std::process::id(),
            rand::random::<u32>()
        ));
        std::fs::create_dir(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let dir = tempdir::Dir(dir);
        let path = dir.0.join("group.sock");
        let listener = UnixListener::bind(&path).map_err(|e| format!("cannot listen on {}: {e}", path.display()))?;
        let exe = std::env::current_exe().map_err(|e| format!("cannot find this program to start --procs: {e}"))?;
        let (tx, rx) = mpsc::channel();
        let mut children = Vec::with_capacity(size - 1);
        for r in 1..size {
            let child = Command::new(&exe)
                .args(std::env::args_os().skip(1))
                .env(ENV, format!("{r}:{size}:{}", path.display()))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .spawn()
                .map_err(|e| format!("cannot start process {r} of --procs: {e}"))?;
            children.push(child);
        }
        let mut peers: Vec<Option<UnixStream>> = (0..size).map(|_| None).collect();
        listener.set_nonblocking(true).map_err(|e| e.to_string())?;
        let deadline = Instant::now() + timeout;
        let mut joined = 1;
        while joined < size {
            match listener.accept() {
                Ok((mut s, _)) => {
                    s.set_nonblocking(false).map_err(|e| e.to_string())?;
                    let mut rank = [0u8; 8];
                    s.read_exact(&mut rank)
                        .map_err(|e| format!("a child did not say its rank: {e}"))?;
                    let rank = u64::from_le_bytes(rank) as usize;
                    if rank == 0 || rank >= size || peers[rank].is_some() {
                        return Err(format!("a child claimed rank {rank}"));
                    }
                    reader(rank, s.try_clone().map_err(|e| e.to_string())?, tx.clone());
                    peers[rank] = Some(s);
                    joined += 1;
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    for (i, c) in children.iter_mut().enumerate() {
                        if let Ok(Some(status)) = c.try_wait() {
                            return Err(format!("process {} of --procs exited at start ({status})", i + 1));
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
            peers,
            rx,
            pending: Vec::new(),
            closed: vec![false; size],
            children,
            dir: Some(dir),
        })
    }

    /// A child: join the parent named by [`ENV`], if this process is one.
    pub fn child_from_env() -> Option<Result<Procs, String>> {
        let spec = std::env::var(ENV).ok()?;
        Some(Self::child(&spec))
    }

    fn child(spec: &str) -> Result<Procs, String> {
        let bad = || format!("{ENV}={spec}: expected rank:size:socket");
        let mut it = spec.splitn(3, ':');
        let rank: usize = it.next().and_then(|r| r.parse().ok()).ok_or_else(bad)?;
        let size: usize = it.next().and_then(|s| s.parse().ok()).ok_or_else(bad)?;
        let path = it.next().ok_or_else(bad)?;
        let mut s = UnixStream::connect(path).map_err(|e| format!("cannot reach the parent at {path}: {e}"))?;
        s.write_all(&(rank as u64).to_le_bytes()).map_err(|e| e.to_string())?;
        let (tx, rx) = mpsc::channel();
        reader(0, s.try_clone().map_err(|e| e.to_string())?, tx);
        let mut peers: Vec<Option<UnixStream>> = (0..size).map(|_| None).collect();
        peers[0] = Some(s);
        Ok(Procs {
            rank,
            size,
            peers,
            rx,
            pending: Vec::new(),
            closed: vec![false; size],
            children: Vec::new(),
            dir: None,
        })
    }

    /// How peer `rank` ended, for the message.
    fn how_gone(&mut self, rank: usize) -> String {
        if self.rank == 0 {
            if let Some(c) = self.children.get_mut(rank - 1) {
                let pid = c.id();
                // The connection closes as the process exits; give the exit a moment to land.
                for _ in 0..50 {
                    if let Ok(Some(status)) = c.try_wait() {
                        return format!("exited ({status})");
                    }
                    std::thread::sleep(Duration::from_millis(2));
                }
                return format!("(pid {pid}) closed its connection");
            }
        }
        "exited".into()
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
        let mut head = [0u8; 9];
        head[0] = tag;
        head[1..].copy_from_slice(&(data.len() as u64).to_le_bytes());
        s.write_all(&head)
            .and_then(|_| s.write_all(data))
            .map_err(|e| format!("cannot send to rank {to}: {e}"))
    }

    fn recv(&mut self, from: usize, tag: u8, deadline: Instant) -> Result<Vec<u8>, RecvError> {
        if let Some(i) = self.pending.iter().position(|(f, t, _)| *f == from && *t == tag) {
            return Ok(self.pending.remove(i).2);
        }
        loop {
            if self.closed[from] {
                return Err(RecvError::Gone(self.how_gone(from)));
            }
            let wait = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(wait) {
                Ok((f, Event::Msg(t, data))) if f == from && t == tag => return Ok(data),
                Ok((f, Event::Msg(t, data))) => self.pending.push((f, t, data)),
                Ok((f, Event::Closed)) => self.closed[f] = true,
                Err(_) => return Err(RecvError::Timeout),
            }
        }
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
        // that still waits for a round that will not come (rank 0 failed before it).
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
