//! Nodes as network namespaces on one bridge, addresses from 198.18.0.0/15 (set aside for
//! network benchmarks). The client stays in the root namespace on the bridge's own address;
//! no namespace has a default route, so nothing leaves the machine.

use std::path::Path;
use std::time::Duration;

use crate::state::{NodeState, State};
use crate::sys::run;
use crate::Result;

/// Every namespace, bridge and veth of the lab starts with this (what `down --all` sweeps).
pub const PREFIX: &str = "dfsb";

const LIMIT: Duration = Duration::from_secs(20);

fn ip(args: &[&str]) -> Result<String> {
    run("ip", args, LIMIT)
}

pub fn client_addr(subnet: u8) -> String {
    format!("198.18.{subnet}.254")
}

pub fn node_addr(subnet: u8, index: usize) -> String {
    format!("198.18.{subnet}.{index}")
}

/// Names for a lab's bridge and a node's namespace and veth (interface names: 15 bytes at most).
pub fn bridge_name(code: &str) -> String {
    format!("{PREFIX}-{code}")
}

pub fn netns_name(lab: &str, node: &str) -> String {
    format!("{PREFIX}-{lab}-{node}")
}

pub fn veth_name(code: &str, index: usize) -> String {
    format!("{PREFIX}{code}{index}")
}

pub fn netns_exists(name: &str) -> bool {
    Path::new("/run/netns").join(name).exists()
}

pub fn link_exists(name: &str) -> bool {
    Path::new("/sys/class/net").join(name).exists()
}

/// The bridge with the client's address; idempotent.
pub fn make_bridge(state: &State) -> Result<()> {
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
pub fn make_node(state: &State, node: &NodeState) -> Result<()> {
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
pub fn set_link(node: &NodeState, up: bool) -> Result<()> {
    ip(&["link", "set", &node.veth, if up { "up" } else { "down" }]).map(|_| ())
}

/// A one-sided partition (`on`) or its end: everything the node sends to the other nodes and
/// to the client is dropped by blackhole routes in its namespace, while what they send still
/// arrives. The routes go with the namespace, so `down` needs no record of them.
pub fn blackhole(state: &State, node: &NodeState, on: bool) -> Result<()> {
    let peers = state
        .nodes
        .iter()
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
pub fn limit(state: &State, rate: Option<&str>) -> Result<()> {
    for node in &state.nodes {
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

pub fn link_up(veth: &str) -> bool {
    std::fs::read_to_string(format!("/sys/class/net/{veth}/operstate")).is_ok_and(|s| s.trim() == "up")
}

/// Delete a node's veth (both ends go) and namespace; quiet when already gone.
pub fn remove_node(node: &NodeState) -> Result<()> {
    if link_exists(&node.veth) {
        ip(&["link", "del", &node.veth])?;
    }
    remove_netns(&node.netns)
}

pub fn remove_netns(name: &str) -> Result<()> {
    if netns_exists(name) {
        ip(&["netns", "del", name])?;
    }
    Ok(())
}

pub fn remove_link(name: &str) -> Result<()> {
    if link_exists(name) {
        ip(&["link", "del", name])?;
    }
    Ok(())
}

/// Leftovers with our prefix that no state file names (a crash before the state was written).
pub fn stray_netns() -> Vec<String> {
    ip(&["netns", "list"])
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| n.starts_with(PREFIX))
        .map(String::from)
        .collect()
}

pub fn stray_links() -> Vec<String> {
    std::fs::read_dir("/sys/class/net")
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|n| n.starts_with(PREFIX))
                .collect()
        })
        .unwrap_or_default()
}
