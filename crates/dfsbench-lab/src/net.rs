//! Nodes as network namespaces on one bridge, addresses from 198.18.0.0/15 (set aside for
//! network benchmarks). The client stays in the root namespace on the bridge's own address;
//! no namespace has a default route, so nothing leaves the machine.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use crate::state::{NodeState, State};
use crate::sys::run;
use crate::{Error, Result};

/// Every namespace, bridge and veth of a lab starts with this, then the id of its lab directory.
pub(crate) const PREFIX: &str = "dfsb";

const LIMIT: Duration = Duration::from_secs(20);

/// Linux interface names hold 15 bytes (IFNAMSIZ 16 with the NUL).
#[cfg(test)]
const IFNAME_MAX: usize = 15;

fn ip(args: &[&str]) -> Result<String> {
    run("ip", args, LIMIT)
}

pub(crate) fn client_addr(subnet: u8) -> String {
    format!("198.18.{subnet}.254")
}

pub(crate) fn node_addr(subnet: u8, index: usize) -> String {
    format!("198.18.{subnet}.{index}")
}

/// The id of a lab directory: 4 hex digits of an FNV-1a hash of its canonical path. FNV, not
/// std's hasher, because the id must stay the same across builds: names made by one build are
/// found by the next.
pub fn lab_id(labs_dir: &Path) -> String {
    let hash = labs_dir
        .as_os_str()
        .as_encoded_bytes()
        .iter()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ *b as u64).wrapping_mul(0x100_0000_01b3)
        });
    format!("{:04x}", (hash ^ (hash >> 32)) as u16)
}

/// Names for a lab's bridge and a node's namespace and veth, each with the id of the lab
/// directory so that labs of two directories never share a name (interface names: 15 bytes at
/// most; the veth's peer adds a `p`).
pub(crate) fn bridge_name(id: &str, code: &str) -> String {
    format!("{PREFIX}-{id}{code}")
}

pub(crate) fn netns_name(id: &str, lab: &str, node: &str) -> String {
    format!("{PREFIX}-{id}-{lab}-{node}")
}

pub(crate) fn veth_name(id: &str, code: &str, index: usize) -> String {
    format!("{PREFIX}{id}{code}{index}")
}

/// Client node `k`'s veth: `c` and one base-36 digit, so that the longest code still fits.
pub(crate) fn client_veth_name(id: &str, code: &str, k: usize) -> String {
    let digit = char::from_digit(k as u32, 36).expect("client numbers stay below 36");
    format!("{PREFIX}{id}{code}c{digit}")
}

/// The third octets older dfsbench versions gave their labs without looking (1 gluster ... 9
/// alluxio): tried last, because such a lab may still come up beside ours and cannot avoid us.
const OLD_FIXED: std::ops::RangeInclusive<u8> = 1..=9;

/// The first /24 of 198.18.0.0/16 (third octet 10..=253, then 1..=9) that `used` does not hold;
/// None when every one is taken. A pure function so that uniqueness is testable without a
/// machine.
pub(crate) fn pick_subnet(used: &BTreeSet<u8>) -> Option<u8> {
    (*OLD_FIXED.end() + 1..=253u8)
        .chain(OLD_FIXED)
        .find(|s| !used.contains(s))
}

/// The third octets of the 198.18.X.0/24 that an IPv4 network `addr/len` overlaps (a network
/// wider than /24 covers several; one in 198.19.0.0/16 or elsewhere covers none).
pub(crate) fn subnets_overlapped(addr: [u8; 4], len: u8) -> Vec<u8> {
    let net = u32::from_be_bytes(addr);
    let len = len.min(32);
    let mask = if len == 0 { 0 } else { u32::MAX << (32 - len) };
    let (lo, hi) = (net & mask, net | !mask);
    let (ours_lo, ours_hi) = (
        u32::from_be_bytes([198, 18, 0, 0]),
        u32::from_be_bytes([198, 18, 255, 255]),
    );
    if hi < ours_lo || lo > ours_hi {
        return Vec::new();
    }
    let third = |a: u32| (a.max(ours_lo).min(ours_hi) >> 8) as u8;
    (third(lo)..=third(hi)).collect()
}

/// The /24s of 198.18.0.0/16 in use on this machine: any address or route of the root
/// namespace in them (another lab directory's bridge has 198.18.X.254, and anything else that
/// uses the range counts the same).
pub(crate) fn used_subnets() -> Result<BTreeSet<u8>> {
    let addrs = ip(&["-o", "-4", "addr", "show"])?;
    let routes = ip(&["-4", "route", "show", "table", "all"])?;
    let cidrs = addrs
        .lines()
        .filter_map(|l| l.split_whitespace().skip_while(|w| *w != "inet").nth(1))
        .chain(
            routes
                .lines()
                .filter_map(|l| l.split_whitespace().find(|w| w.contains('.'))),
        );
    Ok(cidrs
        .filter_map(parse_cidr)
        .flat_map(|(a, l)| subnets_overlapped(a, l))
        .collect())
}

/// A machine-wide lock (flock, released when the file closes) held from picking a subnet until
/// the bridge has its address: two `lab up` of different lab directories cannot pick the same.
pub(crate) fn subnet_lock() -> Result<std::fs::File> {
    let dir = if Path::new("/run/lock").is_dir() {
        "/run/lock"
    } else {
        "/run"
    };
    let path = Path::new(dir).join("dfsbench-lab-subnets.lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(|e| Error::runtime(format!("cannot open {}: {e}", path.display())))?;
    // SAFETY: flock on a descriptor we own.
    if unsafe { libc::flock(std::os::fd::AsRawFd::as_raw_fd(&file), libc::LOCK_EX) } != 0 {
        let e = std::io::Error::last_os_error();
        return Err(Error::runtime(format!("cannot lock {}: {e}", path.display())));
    }
    Ok(file)
}

/// `198.18.4.0/24` or `198.18.4.7` (a /32).
fn parse_cidr(text: &str) -> Option<([u8; 4], u8)> {
    let (addr, len) = text.split_once('/').unwrap_or((text, "32"));
    let addr: std::net::Ipv4Addr = addr.parse().ok()?;
    Some((addr.octets(), len.parse().ok()?))
}

pub(crate) fn netns_exists(name: &str) -> bool {
    Path::new("/run/netns").join(name).exists()
}

pub(crate) fn link_exists(name: &str) -> bool {
    Path::new("/sys/class/net").join(name).exists()
}

/// The bridge with the client's address; idempotent.
pub(crate) fn make_bridge(state: &State) -> Result<()> {
    let br = state.bridge.as_str();
    if !link_exists(br) {
        ip(&["link", "add", br, "type", "bridge"])?;
    }
    let cidr = format!("{}/24", client_addr(state.subnet));
    if !ip(&["-4", "addr", "show", "dev", br])?.contains(&cidr) {
        ip(&["addr", "add", &cidr, "dev", br])?;
    }
    ip(&["link", "set", br, "up"]).map(|_| ())
}

/// The node's namespace, its veth pair (inside end renamed eth0) and addresses; idempotent.
pub(crate) fn make_node(state: &State, node: &NodeState) -> Result<()> {
    let ns = node.netns.as_str();
    if !netns_exists(ns) {
        ip(&["netns", "add", ns])?;
    }
    let peer = format!("{}p", node.veth);
    let inside = format!("--net=/run/netns/{ns}");
    let has_eth0 = run("nsenter", &[&inside, "ip", "link", "show", "eth0"], LIMIT).is_ok();
    if !has_eth0 {
        if link_exists(&node.veth) {
            ip(&["link", "del", &node.veth])?;
        }
        ip(&["link", "add", &node.veth, "type", "veth", "peer", "name", &peer])?;
        ip(&["link", "set", &peer, "netns", ns])?;
        ip(&["-n", ns, "link", "set", &peer, "name", "eth0"])?;
        ip(&["-n", ns, "addr", "add", &format!("{}/24", node.addr), "dev", "eth0"])?;
    }
    ip(&["link", "set", &node.veth, "master", &state.bridge])?;
    ip(&["link", "set", &node.veth, "up"])?;
    ip(&["-n", ns, "link", "set", "lo", "up"])?;
    ip(&["-n", ns, "link", "set", "eth0", "up"]).map(|_| ())
}

/// Cut or heal a node's link: its veth on the bridge goes down or up.
pub(crate) fn set_link(node: &NodeState, up: bool) -> Result<()> {
    ip(&["link", "set", &node.veth, if up { "up" } else { "down" }]).map(|_| ())
}

/// A one-sided partition (`on`) or its end: everything the node sends to the other nodes and
/// to the client is dropped by blackhole routes in its namespace, while what they send still
/// arrives. The routes go with the namespace, so `down` needs no record of them.
pub(crate) fn blackhole(state: &State, node: &NodeState, on: bool) -> Result<()> {
    let peers = state
        .all_nodes()
        .filter(|n| n.name != node.name)
        .map(|n| n.addr.clone());
    let existing = ip(&["-n", &node.netns, "route", "show", "type", "blackhole"])?;
    for addr in peers.chain([client_addr(state.subnet)]) {
        let there = existing
            .lines()
            .any(|l| l.split_whitespace().nth(1) == Some(addr.as_str()));
        match (on, there) {
            (true, _) => ip(&[
                "-n",
                &node.netns,
                "route",
                "replace",
                "blackhole",
                &format!("{addr}/32"),
            ])?,
            (false, true) => ip(&["-n", &node.netns, "route", "del", "blackhole", &format!("{addr}/32")])?,
            (false, false) => continue,
        };
    }
    Ok(())
}

/// Limit the bandwidth of every node link to `rate` (tc's units: 100mbit, 1gbit) each way with
/// a token bucket, or remove the limit (`None`): on the node's end (what it sends) and on the
/// bridge's end (what it receives).
pub(crate) fn limit(state: &State, rate: Option<&str>) -> Result<()> {
    for node in state.all_nodes() {
        for (netns, dev) in [(Some(node.netns.as_str()), "eth0"), (None, node.veth.as_str())] {
            let mut args: Vec<&str> = Vec::new();
            if let Some(ns) = netns {
                args.extend(["-n", ns]);
            }
            match rate {
                Some(r) => {
                    args.extend(["qdisc", "replace", "dev", dev, "root", "tbf", "rate", r]);
                    args.extend(["burst", "256kb", "latency", "50ms"]);
                }
                None if has_root_qdisc(netns, dev, "tbf") => args.extend(["qdisc", "del", "dev", dev, "root"]),
                None => continue,
            }
            tc(&args)?;
        }
    }
    Ok(())
}

fn has_root_qdisc(netns: Option<&str>, dev: &str, kind: &str) -> bool {
    let mut args = Vec::new();
    if let Some(ns) = netns {
        args.extend(["-n", ns]);
    }
    args.extend(["qdisc", "show", "dev", dev, "root"]);
    tc(&args).is_ok_and(|out| out.split_whitespace().nth(1) == Some(kind))
}

fn tc(args: &[&str]) -> Result<String> {
    run("tc", args, LIMIT)
}

pub(crate) fn link_up(veth: &str) -> bool {
    std::fs::read_to_string(format!("/sys/class/net/{veth}/operstate")).is_ok_and(|s| s.trim() == "up")
}

/// Delete a node's veth (both ends go) and namespace; quiet when already gone.
pub(crate) fn remove_node(node: &NodeState) -> Result<()> {
    if link_exists(&node.veth) {
        ip(&["link", "del", &node.veth])?;
    }
    remove_netns(&node.netns)
}

pub(crate) fn remove_netns(name: &str) -> Result<()> {
    if netns_exists(name) {
        ip(&["netns", "del", name])?;
    }
    Ok(())
}

pub(crate) fn remove_link(name: &str) -> Result<()> {
    if link_exists(name) {
        ip(&["link", "del", name])?;
    }
    Ok(())
}

/// Namespaces and interfaces with the lab prefix that are on the machine now, sorted.
pub(crate) fn prefixed_netns() -> Vec<String> {
    ip(&["netns", "list"])
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| n.starts_with(PREFIX))
        .map(String::from)
        .collect::<BTreeSet<String>>()
        .into_iter()
        .collect()
}

pub(crate) fn prefixed_links() -> Vec<String> {
    std::fs::read_dir("/sys/class/net")
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|n| n.starts_with(PREFIX))
                .collect::<BTreeSet<String>>()
                .into_iter()
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_differ_by_directory_and_names_fit_interfaces() {
        let dirs = [
            "/var/lib/dfsbench/labs",
            "/var/tmp/dfsbench-labs-a",
            "/var/tmp/dfsbench-labs-b",
            "/",
        ];
        let ids: BTreeSet<String> = dirs.iter().map(|d| lab_id(Path::new(d))).collect();
        assert_eq!(ids.len(), dirs.len(), "{ids:?}");
        assert_eq!(lab_id(Path::new(dirs[0])), lab_id(Path::new(dirs[0])), "stable");
        for id in &ids {
            assert_eq!(id.len(), 4);
            for code in crate::systems().iter().map(|s| s.code()) {
                assert!(bridge_name(id, code).len() <= IFNAME_MAX, "{}", bridge_name(id, code));
                // The peer end is the veth's name plus `p`; 99 nodes at most.
                let peer = veth_name(id, code, 99) + "p";
                assert!(peer.len() <= IFNAME_MAX, "{peer}");
                let client = client_veth_name(id, code, crate::clients::MAX_CLIENTS) + "p";
                assert!(client.len() <= IFNAME_MAX, "{client}");
                assert_ne!(client_veth_name(id, code, 1), veth_name(id, code, 1));
                assert!(netns_name(id, "gluster", "node1").starts_with(&format!("{PREFIX}-{id}-")));
            }
        }
        // 1000 directories: ids collide rarely (4 hex digits), never for names of one lab.
        let many: BTreeSet<String> = (0..1000).map(|i| lab_id(Path::new(&format!("/tmp/labs{i}")))).collect();
        assert!(many.len() > 980, "{} distinct ids of 1000", many.len());
    }

    #[test]
    fn picked_subnets_are_unique_and_skip_used_ones() {
        let mut used = BTreeSet::new();
        let mut picked = Vec::new();
        while let Some(s) = pick_subnet(&used) {
            assert!(used.insert(s), "{s} picked twice");
            picked.push(s);
        }
        assert_eq!(picked.len(), 253);
        assert!(!picked.contains(&0) && !picked.contains(&255) && !picked.contains(&254));
        assert_eq!(pick_subnet(&BTreeSet::new()), Some(10), "older versions' subnets last");
        let used: BTreeSet<u8> = [10, 11, 13].into();
        assert_eq!(pick_subnet(&used), Some(12));
        let used: BTreeSet<u8> = (10..=253).chain([1, 2, 4]).collect();
        assert_eq!(pick_subnet(&used), Some(3));
    }

    #[test]
    fn used_ranges_mark_every_overlapped_subnet() {
        assert_eq!(subnets_overlapped([198, 18, 4, 254], 24), vec![4]);
        assert_eq!(subnets_overlapped([198, 18, 7, 1], 32), vec![7]);
        assert_eq!(subnets_overlapped([198, 18, 8, 0], 22), vec![8, 9, 10, 11]);
        assert_eq!(subnets_overlapped([198, 18, 0, 0], 15).len(), 256);
        assert_eq!(subnets_overlapped([0, 0, 0, 0], 0).len(), 256, "a default route");
        assert!(subnets_overlapped([198, 19, 1, 1], 24).is_empty());
        assert!(subnets_overlapped([10, 0, 0, 1], 8).is_empty());
        assert_eq!(parse_cidr("198.18.3.254/24"), Some(([198, 18, 3, 254], 24)));
        assert_eq!(parse_cidr("198.18.3.1"), Some(([198, 18, 3, 1], 32)));
        assert_eq!(parse_cidr("default"), None);
    }
}
