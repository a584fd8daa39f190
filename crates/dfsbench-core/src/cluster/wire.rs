//! The connections of `--procs`: a Unix socket when every process is on this machine, TCP when
//! `--hosts` puts some on other hosts. A process that connects first says who it is: the
//! group's token (a random 128-bit value rank 0 hands its children, so a stranger who finds
//! the port cannot join) and its rank.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// One connection between two ranks.
pub(crate) enum Conn {
    Unix(UnixStream),
    Tcp(TcpStream),
}

impl Conn {
    pub(crate) fn try_clone(&self) -> std::io::Result<Conn> {
        Ok(match self {
            Conn::Unix(s) => Conn::Unix(s.try_clone()?),
            Conn::Tcp(s) => Conn::Tcp(s.try_clone()?),
        })
    }
    pub(crate) fn shutdown(&self) {
        let _ = match self {
            Conn::Unix(s) => s.shutdown(Shutdown::Both),
            Conn::Tcp(s) => s.shutdown(Shutdown::Both),
        };
    }
    pub(crate) fn set_read_timeout(&self, t: Option<Duration>) -> std::io::Result<()> {
        match self {
            Conn::Unix(s) => s.set_read_timeout(t),
            Conn::Tcp(s) => s.set_read_timeout(t),
        }
    }
    fn set_blocking(&self) -> std::io::Result<()> {
        match self {
            Conn::Unix(s) => s.set_nonblocking(false),
            Conn::Tcp(s) => s.set_nonblocking(false),
        }
    }
}

impl Read for Conn {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Conn::Unix(s) => s.read(buf),
            Conn::Tcp(s) => s.read(buf),
        }
    }
}

impl Write for Conn {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Conn::Unix(s) => s.write(buf),
            Conn::Tcp(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Conn::Unix(s) => s.flush(),
            Conn::Tcp(s) => s.flush(),
        }
    }
}

/// Where a rank listens, non-blocking.
pub(crate) enum Listener {
    Unix(UnixListener),
    Tcp(TcpListener),
}

impl Listener {
    pub(crate) fn unix(path: &std::path::Path) -> Result<Listener, String> {
        let l = UnixListener::bind(path).map_err(|e| format!("cannot listen on {}: {e}", path.display()))?;
        l.set_nonblocking(true).map_err(|e| e.to_string())?;
        Ok(Listener::Unix(l))
    }

    /// A TCP port on every IPv4 address of this host, and the addresses the other hosts may
    /// reach it at (loopback last).
    pub(crate) fn tcp() -> Result<(Listener, Address), String> {
        let l =
            TcpListener::bind((Ipv4Addr::UNSPECIFIED, 0)).map_err(|e| format!("cannot listen on a TCP port: {e}"))?;
        l.set_nonblocking(true).map_err(|e| e.to_string())?;
        let port = l.local_addr().map_err(|e| e.to_string())?.port();
        let mut ips = local_ipv4s();
        ips.push(Ipv4Addr::LOCALHOST);
        let addrs = ips.into_iter().map(|ip| SocketAddr::from((ip, port))).collect();
        Ok((Listener::Tcp(l), Address::Tcp(addrs)))
    }

    /// The next waiting connection, blocking from here on; WouldBlock when none waits.
    pub(crate) fn accept(&self) -> std::io::Result<Conn> {
        let conn = match self {
            Listener::Unix(l) => Conn::Unix(l.accept()?.0),
            Listener::Tcp(l) => {
                let s = l.accept()?.0;
                // Rounds are small messages that someone waits for.
                s.set_nodelay(true)?;
                Conn::Tcp(s)
            }
        };
        conn.set_blocking()?;
        Ok(conn)
    }
}

/// Where rank 0 listens, as its children are told.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Address {
    Unix(PathBuf),
    Tcp(Vec<SocketAddr>),
}

impl std::fmt::Display for Address {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Address::Unix(p) => write!(f, "unix:{}", p.display()),
            Address::Tcp(addrs) => {
                let list: Vec<String> = addrs.iter().map(SocketAddr::to_string).collect();
                write!(f, "tcp:{}", list.join(","))
            }
        }
    }
}

impl std::str::FromStr for Address {
    type Err = ();
    fn from_str(s: &str) -> Result<Address, ()> {
        if let Some(path) = s.strip_prefix("unix:") {
            return Ok(Address::Unix(PathBuf::from(path)));
        }
        let list = s.strip_prefix("tcp:").ok_or(())?;
        let addrs: Vec<SocketAddr> = list
            .split(',')
            .map(str::parse)
            .collect::<Result<_, _>>()
            .map_err(|_| ())?;
        if addrs.is_empty() {
            return Err(());
        }
        Ok(Address::Tcp(addrs))
    }
}

impl Address {
    /// Connect, trying each address in turn until `deadline`.
    pub(crate) fn connect(&self, deadline: Instant) -> Result<Conn, String> {
        match self {
            Address::Unix(p) => UnixStream::connect(p)
                .map(Conn::Unix)
                .map_err(|e| format!("cannot reach rank 0 at {}: {e}", p.display())),
            Address::Tcp(addrs) => {
                let mut errors = Vec::new();
                for a in addrs {
                    let left = deadline
                        .saturating_duration_since(Instant::now())
                        .clamp(Duration::from_millis(100), Duration::from_secs(5));
                    match TcpStream::connect_timeout(a, left) {
                        Ok(s) => {
                            s.set_nodelay(true).map_err(|e| e.to_string())?;
                            return Ok(Conn::Tcp(s));
                        }
                        Err(e) => errors.push(format!("{a}: {e}")),
                    }
                }
                Err(format!(
                    "cannot reach rank 0 at any of its addresses ({})",
                    errors.join("; ")
                ))
            }
        }
    }
}

/// The group's secret, rank 0's choice; sent big-endian, as its hex is written.
pub(crate) type Token = u128;

/// Say who this process is to the rank it connected to.
pub(crate) fn write_hello(c: &mut Conn, token: &Token, rank: usize) -> Result<(), String> {
    let mut hello = token.to_be_bytes().to_vec();
    hello.extend_from_slice(&(rank as u64).to_le_bytes());
    c.write_all(&hello).map_err(|e| e.to_string())
}

/// The rank a process that just connected says it is: it must say so, with the group's token,
/// before `deadline`.
pub(crate) fn read_hello(c: &mut Conn, token: &Token, deadline: Instant) -> Result<usize, String> {
    let left = deadline
        .saturating_duration_since(Instant::now())
        .max(Duration::from_millis(1));
    c.set_read_timeout(Some(left)).map_err(|e| e.to_string())?;
    let mut hello = [0u8; 24];
    c.read_exact(&mut hello).map_err(|e| e.to_string())?;
    let (theirs, rank) = hello.split_at(16);
    if theirs != token.to_be_bytes() {
        return Err("it did not give this run's token (not a process of this run)".into());
    }
    c.set_read_timeout(None).map_err(|e| e.to_string())?;
    Ok(u64::from_le_bytes(rank.try_into().expect("8 bytes")) as usize)
}

pub(crate) fn token_hex(t: &Token) -> String {
    format!("{t:032x}")
}

pub(crate) fn token_from_hex(s: &str) -> Option<Token> {
    // from_str_radix takes a sign too: exactly 32 hex digits, as token_hex writes them.
    let digits = s.len() == 32 && s.bytes().all(|b| b.is_ascii_hexdigit());
    digits.then(|| u128::from_str_radix(s, 16).ok()).flatten()
}

/// This host's IPv4 addresses on interfaces that are up, loopback left out.
fn local_ipv4s() -> Vec<Ipv4Addr> {
    let mut out = Vec::new();
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `head` with a list freed below with freeifaddrs; each entry's
    // ifa_addr is null or points at a sockaddr of the family it names.
    unsafe {
        if libc::getifaddrs(&mut head) != 0 {
            return out;
        }
        let mut cur = head;
        while !cur.is_null() {
            let ifa = &*cur;
            let up = ifa.ifa_flags & libc::IFF_UP as u32 != 0;
            let lo = ifa.ifa_flags & libc::IFF_LOOPBACK as u32 != 0;
            if up && !lo && !ifa.ifa_addr.is_null() && i32::from((*ifa.ifa_addr).sa_family) == libc::AF_INET {
                let sin = &*(ifa.ifa_addr as *const libc::sockaddr_in);
                let ip = Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr));
                if !out.contains(&ip) {
                    out.push(ip);
                }
            }
            cur = ifa.ifa_next;
        }
        libc::freeifaddrs(head);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_and_tokens_read_back_as_written() {
        for a in [
            Address::Unix(PathBuf::from("/tmp/d:x/group.sock")),
            Address::Tcp(vec![
                "198.18.3.101:4000".parse().unwrap(),
                "127.0.0.1:4000".parse().unwrap(),
            ]),
        ] {
            assert_eq!(a.to_string().parse::<Address>(), Ok(a));
        }
        for bad in ["", "tcp:", "tcp:host:1", "udp:1.2.3.4:5"] {
            assert!(bad.parse::<Address>().is_err(), "{bad}");
        }
        let t: Token = rand::random();
        assert_eq!(token_from_hex(&token_hex(&t)), Some(t));
        assert_eq!(token_from_hex("zz"), None);
    }

    #[test]
    fn a_stranger_without_the_token_is_refused() {
        let (listener, addr) = Listener::tcp().unwrap();
        let token: Token = rand::random();
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut stranger = addr.connect(deadline).unwrap();
        write_hello(&mut stranger, &0, 1).unwrap();
        let mut friend = addr.connect(deadline).unwrap();
        write_hello(&mut friend, &token, 3).unwrap();
        let mut seen = Vec::new();
        while seen.len() < 2 {
            match listener.accept() {
                Ok(mut c) => seen.push(read_hello(&mut c, &token, deadline)),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => std::thread::sleep(Duration::from_millis(2)),
                Err(e) => panic!("{e}"),
            }
        }
        assert!(seen[0].as_ref().is_err_and(|e| e.contains("token")), "{seen:?}");
        assert_eq!(seen[1], Ok(3));
    }
}
