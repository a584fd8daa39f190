//! Added one-way delay on every node link, in userspace: this kernel has no netem. Each
//! namespace's INPUT chain (the nodes', and the root's for packets from the bridge) sends packets
//! to an NFQUEUE with `--queue-bypass`; a delayer in that namespace holds each packet for the
//! delay and accepts it. When no delayer listens (it died), the kernel lets packets through.

use std::collections::VecDeque;
use std::fs;
use std::time::{Duration, Instant};

use crate::state::State;
use crate::sys::preflight;
use crate::sys::{self, run, run_in, spawn_in};
use crate::{system, Error, Result};

const LIMIT: Duration = Duration::from_secs(20);
/// Packets the kernel holds for one delayer before it lets further ones pass undelayed.
const QUEUE_MAX_LEN: u32 = 65536;

/// Root-namespace queue numbers are per lab (labs share the root namespace).
fn queue_num(state: &State) -> u16 {
    100 + state.subnet as u16
}

fn rule(interface: &str, queue: u16) -> Vec<String> {
    let q = queue.to_string();
    [
        "INPUT",
        "-i",
        interface,
        "-j",
        "NFQUEUE",
        "--queue-num",
        &q,
        "--queue-bypass",
    ]
    .map(String::from)
    .to_vec()
}

fn iptables(netns: Option<&str>, op: &str, rule: &[String]) -> Result<()> {
    let mut args = vec!["-w", "5", op];
    args.extend(rule.iter().map(String::as_str));
    match netns {
        Some(ns) => run_in(ns, "iptables", &args, LIMIT),
        None => run("iptables", &args, LIMIT),
    }
    .map(|_| ())
}

/// Parse `10ms`, `2.5ms`, `500us`, `0`.
pub fn parse_delay(text: &str) -> Result<Duration> {
    let t = text.trim();
    let (num, unit) = if let Some(n) = t.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = t.strip_suffix("us") {
        (n, 1e-6)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else if t == "0" {
        ("0", 0.0)
    } else {
        ("", 0.0)
    };
    match num.trim().parse::<f64>() {
        Ok(v) if v >= 0.0 && v * unit <= 10.0 => Ok(Duration::from_secs_f64(v * unit)),
        _ => Err(Error::usage(format!(
            "bad delay {text:?}: give a one-way delay such as 10ms, 500us or 0 (at most 10s)"
        ))),
    }
}

/// Set the lab's one-way delay on every node link (`delay` zero removes it). `exe` is the
/// program whose `lab delayer QUEUE MICROS` subcommand runs the delay line.
pub fn apply(name: &str, delay: Duration, exe: &std::path::Path) -> Result<()> {
    preflight()?;
    let mut state = State::loaded(system(name)?.name())?;
    remove(&state)?;
    state.delayers.clear();
    state.root_rules.clear();
    state.delay_us = 0;
    state.save()?;
    if delay.is_zero() {
        return Ok(());
    }
    let micros = delay.as_micros().to_string();
    let exe = exe.display().to_string();
    let q = queue_num(&state);
    let log = state.dir().join("delay.log");
    let args = ["lab", "delayer", &q.to_string(), &micros];
    let nodes: Vec<_> = state.all_nodes().cloned().collect();
    for node in &nodes {
        let pid = spawn_in(Some(&node.netns), &exe, &args, &log)?;
        state.delayers.push(pid);
        state.save()?;
        iptables(Some(&node.netns), "-I", &rule("eth0", q))?;
    }
    let pid = spawn_in(None, &exe, &args, &log)?;
    state.delayers.push(pid);
    let root_rule = rule(&state.bridge, q);
    state.root_rules.push(root_rule.clone());
    state.save()?;
    iptables(None, "-I", &root_rule)?;
    state.delay_us = delay.as_micros() as u64;
    state.save()
}

/// Stop the delayers and delete the rules (the node rules go with their namespaces too).
pub(crate) fn remove(state: &State) -> Result<()> {
    for r in &state.root_rules {
        while iptables(None, "-C", r).is_ok() {
            iptables(None, "-D", r)?;
        }
    }
    let q = queue_num(state);
    for node in state.all_nodes().filter(|n| crate::net::netns_exists(&n.netns)) {
        let r = rule("eth0", q);
        while iptables(Some(&node.netns), "-C", &r).is_ok() {
            iptables(Some(&node.netns), "-D", &r)?;
        }
    }
    sys::stop_all(&state.delayers, Duration::from_secs(5))
}

/// The netlink socket `nfq::Queue::open` made: the only socket of the delayer process.
fn netlink_fd() -> Result<i32> {
    fs::read_dir("/proc/self/fd")
        .map_err(|e| Error::runtime(format!("cannot list /proc/self/fd: {e}")))?
        .filter_map(|e| e.ok())
        .find(|e| fs::read_link(e.path()).is_ok_and(|l| l.to_string_lossy().starts_with("socket:")))
        .and_then(|e| e.file_name().to_str()?.parse().ok())
        .ok_or_else(|| Error::runtime("the NFQUEUE socket is not among this process's files".into()))
}

/// Wait until the fd is readable or `timeout` passes (None: forever).
fn wait_readable(fd: i32, timeout: Option<Duration>) {
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    let ts = timeout.map(|t| libc::timespec {
        tv_sec: t.as_secs() as libc::time_t,
        tv_nsec: t.subsec_nanos() as libc::c_long,
    });
    let ts_ptr = ts.as_ref().map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: one valid pollfd, a valid or null timespec, no signal mask change.
    unsafe { libc::ppoll(&mut pfd, 1, ts_ptr, std::ptr::null()) };
}

/// The delay line: hold each queued packet for `delay`, then accept it. Runs until killed.
pub fn run_delayer(queue_num: u16, delay: Duration) -> Result<()> {
    let err = |what: &str, e: std::io::Error| Error::runtime(format!("NFQUEUE {queue_num}: {what}: {e}"));
    let mut queue = nfq::Queue::open().map_err(|e| err("open", e))?;
    queue.bind(queue_num).map_err(|e| err("bind", e))?;
    // Metadata only: the verdict needs the packet id, not its bytes.
    queue.set_copy_range(queue_num, 0).map_err(|e| err("copy range", e))?;
    queue.set_recv_gso(queue_num, true).map_err(|e| err("gso", e))?;
    queue
        .set_queue_max_len(queue_num, QUEUE_MAX_LEN)
        .map_err(|e| err("queue length", e))?;
    queue.set_fail_open(queue_num, true).map_err(|e| err("fail open", e))?;
    queue.set_nonblocking(true);
    let fd = netlink_fd()?;
    let mut held: VecDeque<(Instant, nfq::Message)> = VecDeque::new();
    loop {
        let now = Instant::now();
        while held.front().is_some_and(|(due, _)| *due <= now) {
            let (_, mut msg) = held.pop_front().expect("front exists");
            msg.set_verdict(nfq::Verdict::Accept);
            queue.verdict(msg).map_err(|e| err("verdict", e))?;
        }
        wait_readable(fd, held.front().map(|(due, _)| due.saturating_duration_since(now)));
        loop {
            match queue.recv() {
                Ok(msg) => held.push_back((Instant::now() + delay, msg)),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                // The kernel dropped messages we were too slow for (fail-open let them pass).
                Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) => continue,
                Err(e) => return Err(err("receive", e)),
            }
        }
    }
}

/// Round-trip figures from `ping` between two namespaces (or the root, `None`).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Rtt {
    pub min_ms: f64,
    pub avg_ms: f64,
    pub max_ms: f64,
    pub mdev_ms: f64,
}

/// Ping `addr` from a namespace; parses ping's `rtt min/avg/max/mdev` line.
pub fn ping(from: Option<&str>, addr: &str, count: u32) -> Result<Rtt> {
    let c = count.to_string();
    // -U: time in user space. By default ping stamps a reply when it reaches the machine,
    // before the INPUT hook, so the delay line's hold on the reply would not show.
    let args = ["-U", "-q", "-n", "-c", &c, "-i", "0.05", "-W", "2", addr];
    let out = match from {
        Some(ns) => run_in(ns, "ping", &args, Duration::from_secs(60))?,
        None => run("ping", &args, Duration::from_secs(60))?,
    };
    parse_ping(&out).ok_or_else(|| Error::runtime(format!("ping {addr}: no round-trip summary")))
}

fn parse_ping(out: &str) -> Option<Rtt> {
    let line = out.lines().find(|l| l.contains("min/avg/max"))?;
    let nums: Vec<f64> = line
        .split('=')
        .nth(1)?
        .trim()
        .trim_end_matches(" ms")
        .split('/')
        .filter_map(|n| n.trim().parse().ok())
        .collect();
    match nums[..] {
        [min_ms, avg_ms, max_ms, mdev_ms] => Some(Rtt {
            min_ms,
            avg_ms,
            max_ms,
            mdev_ms,
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_parse_in_ms_us_and_s() {
        assert_eq!(parse_delay("10ms").unwrap(), Duration::from_millis(10));
        assert_eq!(parse_delay("500us").unwrap(), Duration::from_micros(500));
        assert_eq!(parse_delay("0").unwrap(), Duration::ZERO);
        assert_eq!(parse_delay("0.5s").unwrap(), Duration::from_millis(500));
        for bad in ["", "ten", "-1ms", "11s", "10"] {
            let e = parse_delay(bad).unwrap_err();
            assert!(e.is_usage() && e.to_string().contains("10ms"), "{bad}: {e}");
        }
    }

    #[test]
    fn ping_summary_parses() {
        let out = "--- 198.18.1.1 ping statistics ---\n10 packets transmitted, 10 received\n\
                   rtt min/avg/max/mdev = 20.101/20.350/21.002/0.210 ms\n";
        let r = parse_ping(out).unwrap();
        assert_eq!((r.min_ms, r.max_ms, r.mdev_ms), (20.101, 21.002, 0.210));
        assert!(parse_ping("no summary").is_none());
    }
}
