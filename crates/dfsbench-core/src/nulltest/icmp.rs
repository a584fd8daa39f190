//! ICMP echo (ping) round trips without the `ping` binary: an unprivileged ICMP datagram
//! socket where `net.ipv4.ping_group_range` allows it, else a raw socket (root).

use std::io;
use std::mem::MaybeUninit;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::time::Duration;

use dfsbench_backends::clock::Instant;
use socket2::{Domain, Protocol, SockAddr, Socket, Type};

const ECHO_REQUEST: u8 = 8;
const ECHO_REPLY: u8 = 0;
const PAYLOAD: &[u8; 16] = b"dfsbench-nulltst";

/// The round trips of `count` echo requests to `addr`, each waiting at most `timeout` for
/// its reply; an error when the system allows no ICMP socket or a reply does not come.
pub(super) fn echo_times(addr: Ipv4Addr, count: usize, timeout: Duration) -> io::Result<Vec<Duration>> {
    let (socket, raw) = open()?;
    socket.set_read_timeout(Some(timeout))?;
    socket.connect(&SockAddr::from(SocketAddrV4::new(addr, 0)))?;
    // A datagram socket's identifier is its port, which the kernel picks and checks.
    let id = (std::process::id() & 0xffff) as u16;
    let mut times = Vec::with_capacity(count);
    for seq in 0..count as u16 {
        let start = Instant::now();
        socket.send(&request(id, seq))?;
        loop {
            if start.elapsed() > timeout {
                return Err(io::Error::new(io::ErrorKind::TimedOut, "no echo reply"));
            }
            let mut buf = [MaybeUninit::<u8>::uninit(); 1500];
            let n = socket.recv(&mut buf).map_err(|e| match e.kind() {
                io::ErrorKind::WouldBlock => io::Error::new(io::ErrorKind::TimedOut, "no echo reply"),
                _ => e,
            })?;
            // SAFETY: recv initialized the first n bytes.
            let bytes: Vec<u8> = buf[..n].iter().map(|b| unsafe { b.assume_init() }).collect();
            if is_reply(&bytes, raw, id, seq) {
                times.push(start.elapsed());
                break;
            }
        }
    }
    Ok(times)
}

/// A datagram ICMP socket, else a raw one (true).
fn open() -> io::Result<(Socket, bool)> {
    match Socket::new(Domain::IPV4, Type::DGRAM, Some(Protocol::ICMPV4)) {
        Ok(s) => Ok((s, false)),
        Err(dgram) => Socket::new(Domain::IPV4, Type::RAW, Some(Protocol::ICMPV4))
            .map(|s| (s, true))
            .map_err(|raw| {
                io::Error::new(
                    raw.kind(),
                    format!("no ICMP socket: datagram: {dgram} (net.ipv4.ping_group_range); raw: {raw} (needs root)"),
                )
            }),
    }
}

fn request(id: u16, seq: u16) -> Vec<u8> {
    let mut p = vec![ECHO_REQUEST, 0, 0, 0];
    p.extend_from_slice(&id.to_be_bytes());
    p.extend_from_slice(&seq.to_be_bytes());
    p.extend_from_slice(PAYLOAD);
    let sum = checksum(&p);
    p[2..4].copy_from_slice(&sum.to_be_bytes());
    p
}

/// The Internet checksum (RFC 1071).
fn checksum(data: &[u8]) -> u16 {
    let mut sum: u32 = data
        .chunks(2)
        .map(|c| u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)])))
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Whether `packet` is the reply to request `seq`: a raw socket sees the IP header and every
/// ICMP message of the host (so the identifier must match too), a datagram socket only its
/// own replies without the header.
fn is_reply(packet: &[u8], raw: bool, id: u16, seq: u16) -> bool {
    let icmp = if raw {
        let header = usize::from(packet.first().map_or(0, |b| b & 0x0f)) * 4;
        packet.get(header..).unwrap_or_default()
    } else {
        packet
    };
    if icmp.len() < 8 || icmp[0] != ECHO_REPLY {
        return false;
    }
    let same_id = !raw || icmp[4..6] == id.to_be_bytes();
    same_id && icmp[6..8] == seq.to_be_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_checksums_to_zero() {
        let p = request(0x1234, 7);
        assert_eq!(checksum(&p), 0, "a packet with its checksum sums to 0");
        assert_eq!((p[0], &p[4..8]), (ECHO_REQUEST, &[0x12, 0x34, 0, 7][..]));
    }

    #[test]
    fn replies_match_by_sequence_and_on_raw_sockets_by_identifier() {
        let mut reply = request(0x1234, 7);
        reply[0] = ECHO_REPLY;
        assert!(is_reply(&reply, false, 1, 7), "datagram: the kernel owns the id");
        assert!(!is_reply(&reply, false, 1, 8));
        let mut ip = vec![0x45; 1];
        ip.extend([0u8; 19]);
        ip.extend(&reply);
        assert!(is_reply(&ip, true, 0x1234, 7));
        assert!(!is_reply(&ip, true, 0x4321, 7), "another process's reply");
        assert!(!is_reply(&request(0x1234, 7), false, 0x1234, 7), "our own request");
    }

    #[test]
    fn loopback_answers_where_an_icmp_socket_is_allowed() {
        match echo_times(Ipv4Addr::LOCALHOST, 3, Duration::from_secs(2)) {
            Ok(t) => assert_eq!(t.len(), 3),
            Err(e) => {
                // SAFETY: geteuid has no preconditions.
                assert_ne!(unsafe { libc::geteuid() }, 0, "root may open a raw socket: {e}");
                assert!(e.to_string().starts_with("no ICMP socket"), "{e}");
            }
        }
    }
}
