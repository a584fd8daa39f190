//! The target's nodes, where a run knows them (a lab target's), and their null tests: TCP
//! connect to a port each node listens on, ICMP echo, and the bandwidth each way between the
//! client and a thread of this process that enters the node's network namespace, over one TCP
//! stream. All of it bounded to a few seconds per node.

use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::os::unix::io::AsRawFd;
use std::sync::mpsc;
use std::time::Duration;

use dfsbench_backends::clock::Instant;
use dfsbench_result::{LinkCapacity, NodeBandwidth, NodeNullTests, RoundTrips};

use super::{connect_times, round_trips, CONNECT_TIMEOUT};

const PINGS: usize = 5;
const PING_TIMEOUT: Duration = Duration::from_secs(1);
/// The bandwidth test sends at most this many bytes, for at most `SEND_TIME`.
const SEND_BYTES: u64 = 32 << 20;
const SEND_TIME: Duration = Duration::from_secs(2);
const SEND_CHUNK: usize = 64 << 10;

/// One node of the target.
#[derive(Debug, Clone, PartialEq)]
pub struct KnownNode {
    pub name: String,
    pub addr: String,
    /// The node's network namespace (`ip netns` name); None when the node is this host's own
    /// network (tests on loopback).
    pub netns: Option<String>,
    /// A TCP port the node listens on.
    pub port: Option<u16>,
    /// The client's reads come from this node (a gateway, or a node that holds data).
    pub serves_data: bool,
}

/// A rate limit on every node link, each way (`dfsbench lab limit`).
#[derive(Debug, Clone, PartialEq)]
pub struct LinkRate {
    /// As the lab wrote it: `100mbit`.
    pub written: String,
    pub bytes_per_sec: f64,
}

impl LinkRate {
    /// A tc rate (`500kbit`, `100mbit`, `1gbit`); None for anything else.
    pub fn parse(rate: &str) -> Option<LinkRate> {
        let (n, unit) = [("gbit", 1e9), ("mbit", 1e6), ("kbit", 1e3)]
            .into_iter()
            .find_map(|(suffix, unit)| Some((rate.strip_suffix(suffix)?, unit)))?;
        let bits = n.parse::<f64>().ok().filter(|v| *v > 0.0)? * unit;
        Some(LinkRate {
            written: rate.to_string(),
            bytes_per_sec: bits / 8.0,
        })
    }
}

/// What a run knows about its target's nodes.
#[derive(Debug, Clone, Default)]
pub struct KnownNodes {
    pub nodes: Vec<KnownNode>,
    pub rate: Option<LinkRate>,
    /// What an earlier run on the same target measured (a study's null-test point), for runs
    /// that measure nothing themselves.
    pub measured_before: Option<LinkCapacity>,
}

impl KnownNodes {
    /// The lab's rate on the link of every node that serves data, summed: a figure the lab
    /// configured, not measured.
    pub fn configured(&self) -> Option<LinkCapacity> {
        let rate = self.rate.as_ref()?;
        let data: Vec<&str> = self
            .nodes
            .iter()
            .filter(|n| n.serves_data)
            .map(|n| n.name.as_str())
            .collect();
        (!data.is_empty()).then(|| LinkCapacity {
            bytes_per_sec: rate.bytes_per_sec * data.len() as f64,
            source: LinkCapacity::CONFIGURED.into(),
            basis: format!("lab limit {} on each of the links of {}", rate.written, data.join(", ")),
        })
    }

    /// The figure a run judges its reads by: the lab's limit, else what this run's null tests
    /// measured, else what an earlier run measured.
    pub fn link(&self, measured_now: &[NodeNullTests]) -> Option<LinkCapacity> {
        self.configured()
            .or_else(|| LinkCapacity::measured(measured_now))
            .or_else(|| self.measured_before.clone())
    }
}

/// The null tests of every node, one after another so that they do not share the client's
/// link; what fails goes to `errors`, named by the node.
pub fn measure(known: &KnownNodes, errors: &mut Vec<String>) -> Vec<NodeNullTests> {
    known
        .nodes
        .iter()
        .map(|node| {
            let mut out = NodeNullTests {
                name: node.name.clone(),
                addr: node.addr.clone(),
                serves_data: node.serves_data,
                port: node.port,
                ..NodeNullTests::default()
            };
            let mut fail = |what: &str, e: io::Error| errors.push(format!("{} ({}) {what}: {e}", node.name, node.addr));
            // Checked first: a name would be resolved, and only addresses are measured.
            if let Err(e) = ipv4(&node.addr) {
                fail("not measured", e);
                return out;
            }
            match node.port {
                Some(port) => match connect_times(&node.addr, port) {
                    Ok(c) => out.connect = Some(c),
                    Err(e) => fail(&format!("TCP connect to port {port}"), e),
                },
                None => fail(
                    "TCP connect",
                    io::Error::other("no TCP port the node listens on was found"),
                ),
            }
            match ping(&node.addr) {
                Ok(p) => out.ping = Some(p),
                Err(e) => fail("ping", e),
            }
            match bandwidth(node, Direction::ToClient) {
                Ok(b) => out.bandwidth = Some(b),
                Err(e) => fail("bandwidth to the client", e),
            }
            match bandwidth(node, Direction::ToNode) {
                Ok(b) => out.bandwidth_to_node = Some(b),
                Err(e) => fail("bandwidth from the client", e),
            }
            out
        })
        .collect()
}

fn ipv4(addr: &str) -> io::Result<Ipv4Addr> {
    addr.parse()
        .map_err(|_| io::Error::other(format!("{addr:?} is no IPv4 address")))
}

fn ping(addr: &str) -> io::Result<RoundTrips> {
    let mut times = super::icmp::echo_times(ipv4(addr)?, PINGS, PING_TIMEOUT)?;
    Ok(round_trips("icmp echo", &mut times))
}

/// Which way the bytes of a bandwidth test go.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Direction {
    /// From the node to the client: the way a read's data goes.
    ToClient,
    /// From the client to the node: the way a write's data goes.
    ToNode,
}

/// Bytes sent over one TCP stream between the client's namespace and a thread in the node's,
/// over the time the receiving end took to receive them.
fn bandwidth(node: &KnownNode, direction: Direction) -> io::Result<NodeBandwidth> {
    let addr = ipv4(&node.addr)?;
    let (port_tx, port_rx) = mpsc::channel();
    let netns = node.netns.clone();
    // A thread of its own: entering the node's namespace changes only the calling thread.
    let node_end = std::thread::spawn(move || -> io::Result<Option<(u64, Duration)>> {
        let listener = netns
            .as_deref()
            .map_or(Ok(()), enter_netns)
            .and_then(|()| TcpListener::bind((addr, 0)));
        let listener = match listener {
            Ok(l) => l,
            Err(e) => {
                let _ = port_tx.send(None);
                return Err(e);
            }
        };
        let _ = port_tx.send(Some(listener.local_addr()?.port()));
        let mut stream = accept_within(&listener, CONNECT_TIMEOUT)?;
        match direction {
            Direction::ToClient => send(&mut stream).map(|()| None),
            Direction::ToNode => receive(&mut stream).map(Some),
        }
    });
    let client_end = match port_rx.recv_timeout(CONNECT_TIMEOUT) {
        Ok(Some(port)) => {
            TcpStream::connect_timeout(&SocketAddr::from((addr, port)), CONNECT_TIMEOUT).and_then(|mut stream| {
                match direction {
                    Direction::ToClient => receive(&mut stream).map(Some),
                    Direction::ToNode => send(&mut stream).map(|()| None),
                }
            })
        }
        Ok(None) | Err(_) => Err(io::Error::other("the node's end did not start")),
    };
    let node_end = node_end
        .join()
        .unwrap_or_else(|_| Err(io::Error::other("the node's end panicked")));
    // The node end's failure (no namespace, no bind) says more than the client's.
    let (bytes, time) = node_end?
        .or(client_end?)
        .ok_or_else(|| io::Error::other("nothing was received"))?;
    Ok(NodeBandwidth {
        bytes,
        bytes_per_sec: bytes as f64 / time.as_secs_f64().max(1e-9),
    })
}

/// Everything the other end sends until it closes, and the time it took.
fn receive(stream: &mut TcpStream) -> io::Result<(u64, Duration)> {
    stream.set_read_timeout(Some(SEND_TIME + CONNECT_TIMEOUT))?;
    let mut buf = vec![0u8; SEND_CHUNK];
    let start = Instant::now();
    let mut bytes = 0u64;
    loop {
        match stream.read(&mut buf)? {
            0 => break,
            n => bytes += n as u64,
        }
    }
    let time = start.elapsed();
    if bytes == 0 {
        return Err(io::Error::other("the other end sent nothing"));
    }
    Ok((bytes, time))
}

/// Up to `SEND_BYTES` in `SEND_TIME`, whichever ends first.
fn send(stream: &mut TcpStream) -> io::Result<()> {
    stream.set_write_timeout(Some(SEND_TIME))?;
    let chunk = vec![0x5au8; SEND_CHUNK];
    let start = Instant::now();
    let mut sent = 0u64;
    while sent < SEND_BYTES && start.elapsed() < SEND_TIME {
        stream.write_all(&chunk)?;
        sent += SEND_CHUNK as u64;
    }
    Ok(())
}

fn accept_within(listener: &TcpListener, timeout: Duration) -> io::Result<TcpStream> {
    listener.set_nonblocking(true)?;
    let start = Instant::now();
    loop {
        match listener.accept() {
            Ok((s, _)) => {
                s.set_nonblocking(false)?;
                return Ok(s);
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock && start.elapsed() < timeout => {
                std::thread::sleep(Duration::from_millis(5))
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                return Err(io::Error::new(io::ErrorKind::TimedOut, "the client did not connect"))
            }
            Err(e) => return Err(e),
        }
    }
}

/// Move this thread into the network namespace `ip netns` calls `name`.
fn enter_netns(name: &str) -> io::Result<()> {
    let path = std::path::Path::new("/run/netns").join(name);
    let ns = std::fs::File::open(&path)
        .map_err(|e| io::Error::new(e.kind(), format!("network namespace {}: {e}", path.display())))?;
    // SAFETY: a valid namespace file descriptor; it changes only this thread's namespace.
    if unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(
            e.kind(),
            format!("cannot enter network namespace {name}: {e}"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loopback(name: &str, port: Option<u16>, serves_data: bool) -> KnownNode {
        KnownNode {
            name: name.into(),
            addr: "127.0.0.1".into(),
            netns: None,
            port,
            serves_data,
        }
    }

    #[test]
    fn rates_parse_as_tc_writes_them() {
        assert_eq!(LinkRate::parse("100mbit").unwrap().bytes_per_sec, 12.5e6);
        assert_eq!(LinkRate::parse("1gbit").unwrap().bytes_per_sec, 125e6);
        assert_eq!(LinkRate::parse("500kbit").unwrap().bytes_per_sec, 62.5e3);
        for bad in ["", "100", "fast", "0mbit", "-1gbit"] {
            assert!(LinkRate::parse(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn the_configured_limit_counts_the_links_of_data_nodes_and_comes_first() {
        let mut known = KnownNodes {
            nodes: vec![
                loopback("node1", None, false),
                loopback("node2", None, true),
                loopback("node3", None, true),
            ],
            rate: LinkRate::parse("100mbit"),
            measured_before: None,
        };
        let c = known.configured().expect("a limit");
        assert_eq!(c.bytes_per_sec, 25e6);
        assert_eq!(c.source, "configured");
        assert_eq!(c.basis, "lab limit 100mbit on each of the links of node2, node3");
        let measured = [NodeNullTests {
            name: "node2".into(),
            serves_data: true,
            bandwidth: Some(NodeBandwidth {
                bytes: 1,
                bytes_per_sec: 1e9,
            }),
            ..NodeNullTests::default()
        }];
        assert_eq!(known.link(&measured).unwrap().source, "configured");
        known.rate = None;
        assert_eq!(known.link(&measured).unwrap().bytes_per_sec, 1e9);
        assert!(known.link(&[]).is_none(), "nothing measured, no limit");
    }

    #[test]
    fn each_loopback_node_is_connected_and_sends_to_the_client() {
        // A port that listens: connects complete in the kernel's backlog.
        let server = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = server.local_addr().unwrap().port();
        let known = KnownNodes {
            nodes: vec![loopback("node1", Some(port), true), loopback("node2", None, false)],
            ..KnownNodes::default()
        };
        let mut errors = Vec::new();
        let nodes = measure(&known, &mut errors);
        assert_eq!(nodes.len(), 2);
        let c = nodes[0].connect.as_ref().expect("node1 connected");
        assert!(
            c.count == 5 && c.min_ns <= c.median_ns && c.median_ns <= c.max_ns,
            "{c:?}"
        );
        let b = nodes[0].bandwidth.as_ref().expect("node1 sent");
        assert!(b.bytes > 0 && b.bytes <= SEND_BYTES && b.bytes_per_sec > 0.0, "{b:?}");
        let up = nodes[0].bandwidth_to_node.as_ref().expect("node1 received");
        assert!(
            up.bytes > 0 && up.bytes <= SEND_BYTES && up.bytes_per_sec > 0.0,
            "{up:?}"
        );
        // The figures the README quotes (`-- --nocapture`).
        eprintln!(
            "loopback: tcp connect median {} ns, ping median {:?} ns, {} bytes at {:.0} MiB/s, back {:.0} MiB/s",
            c.median_ns,
            nodes[0].ping.as_ref().map(|p| p.median_ns),
            b.bytes,
            b.bytes_per_sec / f64::from(1 << 20),
            up.bytes_per_sec / f64::from(1 << 20)
        );
        assert!(nodes[1].connect.is_none() && nodes[1].bandwidth.is_some() && nodes[1].bandwidth_to_node.is_some());
        assert!(
            errors.contains(&"node2 (127.0.0.1) TCP connect: no TCP port the node listens on was found".to_string()),
            "{errors:?}"
        );
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            assert!(nodes
                .iter()
                .all(|n| n.ping.as_ref().is_some_and(|p| p.op == "icmp echo")));
        } else {
            assert!(
                errors.iter().any(|e| e.starts_with("node1 (127.0.0.1) ping: ")),
                "{errors:?}"
            );
        }
    }

    #[test]
    fn what_cannot_be_measured_is_an_error_never_a_number() {
        let known = KnownNodes {
            nodes: vec![KnownNode {
                netns: Some("dfsbench-no-such-namespace".into()),
                addr: "not-an-address".into(),
                ..loopback("node9", Some(1), true)
            }],
            ..KnownNodes::default()
        };
        let mut errors = Vec::new();
        let nodes = measure(&known, &mut errors);
        let n = &nodes[0];
        assert!(
            n.connect.is_none() && n.ping.is_none() && n.bandwidth.is_none() && n.bandwidth_to_node.is_none(),
            "{n:?}"
        );
        assert_eq!(
            errors,
            ["node9 (not-an-address) not measured: \"not-an-address\" is no IPv4 address"]
        );
        let known = KnownNodes {
            nodes: vec![KnownNode {
                netns: Some("dfsbench-no-such-namespace".into()),
                ..loopback("node9", None, true)
            }],
            ..KnownNodes::default()
        };
        let mut errors = Vec::new();
        measure(&known, &mut errors);
        assert!(
            errors.iter().any(|e| e.contains("bandwidth to the client: network namespace /run/netns/dfsbench-no-such-namespace")),
            "{errors:?}"
        );
    }

    /// A network namespace of the test's own, joined to this one by a veth pair with
    /// addresses from TEST-NET-2 (198.51.100.0/24, never routed); removed on drop.
    struct TestNamespace {
        name: String,
        node_addr: String,
    }

    impl TestNamespace {
        fn create() -> Option<TestNamespace> {
            let pid = std::process::id();
            let name = format!("nulltest-{pid}");
            let (host_if, node_if) = (format!("nt{pid}a"), format!("nt{pid}b"));
            let net = 4 * (pid % 60);
            let (host_addr, node_addr) = (format!("198.51.100.{}", net + 1), format!("198.51.100.{}", net + 2));
            let ns = TestNamespace {
                name: name.clone(),
                node_addr,
            };
            let (host_cidr, node_cidr) = (format!("{host_addr}/30"), format!("{}/30", ns.node_addr));
            let steps: [Vec<&str>; 8] = [
                vec!["netns", "add", &name],
                vec!["link", "add", &host_if, "type", "veth", "peer", "name", &node_if],
                vec!["link", "set", &node_if, "netns", &name],
                vec!["addr", "add", &host_cidr, "dev", &host_if],
                vec!["link", "set", &host_if, "up"],
                vec!["-n", &name, "addr", "add", &node_cidr, "dev", &node_if],
                vec!["-n", &name, "link", "set", &node_if, "up"],
                vec!["-n", &name, "link", "set", "lo", "up"],
            ];
            for step in steps {
                let ok = std::process::Command::new("ip")
                    .args(&step)
                    .status()
                    .is_ok_and(|s| s.success());
                if !ok {
                    // The host end goes with the namespace once moved; before that, by itself.
                    let _ = std::process::Command::new("ip")
                        .args(["link", "del", &host_if])
                        .status();
                    return None;
                }
            }
            Some(ns)
        }
    }

    impl Drop for TestNamespace {
        fn drop(&mut self) {
            let _ = std::process::Command::new("ip")
                .args(["netns", "del", &self.name])
                .status();
        }
    }

    #[test]
    fn a_node_in_its_own_namespace_is_measured_through_its_link() {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: network namespaces need root");
            return;
        }
        let Some(ns) = TestNamespace::create() else {
            eprintln!("skipped: could not make a network namespace with a veth pair (ip)");
            return;
        };
        // A daemon's port: a listener made inside the namespace, kept until the test ends.
        let (tx, rx) = mpsc::channel();
        let (name, addr) = (ns.name.clone(), ipv4(&ns.node_addr).unwrap());
        std::thread::spawn(move || {
            let listener = enter_netns(&name).and_then(|()| TcpListener::bind((addr, 0)));
            let _ = tx.send(listener.map(|l| (l.local_addr().unwrap().port(), l)));
            std::thread::park();
        });
        let (port, _listener) = rx.recv().unwrap().expect("a listener in the namespace");
        let known = KnownNodes {
            nodes: vec![KnownNode {
                name: "node1".into(),
                addr: ns.node_addr.clone(),
                netns: Some(ns.name.clone()),
                port: Some(port),
                serves_data: true,
            }],
            ..KnownNodes::default()
        };
        let mut errors = Vec::new();
        let nodes = measure(&known, &mut errors);
        assert!(errors.is_empty(), "{errors:?}");
        let n = &nodes[0];
        assert!(n.connect.as_ref().is_some_and(|c| c.count == super::super::CONNECTS));
        assert!(n.ping.as_ref().is_some_and(|p| p.count == PINGS && p.op == "icmp echo"));
        let b = n.bandwidth.as_ref().expect("the node sent to the client");
        assert!(b.bytes > 0 && b.bytes <= SEND_BYTES, "{b:?}");
        let up = n.bandwidth_to_node.as_ref().expect("the client sent to the node");
        assert!(up.bytes > 0 && up.bytes <= SEND_BYTES, "{up:?}");
        eprintln!(
            "namespace over veth: tcp connect median {} ns, ping median {} ns, {} bytes at {:.0} MiB/s, back {:.0} MiB/s",
            n.connect.as_ref().unwrap().median_ns,
            n.ping.as_ref().unwrap().median_ns,
            b.bytes,
            b.bytes_per_sec / f64::from(1 << 20),
            up.bytes_per_sec / f64::from(1 << 20)
        );
        let link = known.link(&nodes).expect("a measured link");
        assert_eq!(
            (link.source.as_str(), link.bytes_per_sec),
            ("measured", b.bytes_per_sec)
        );
    }
}
