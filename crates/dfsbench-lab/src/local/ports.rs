//! Free TCP ports on 127.0.0.1 for single-host servers: random ones from 20000-32767, below
//! Linux's ephemeral range, so a benchmark's client connections never take a server's port
//! while it restarts; or LAB_PORT_BASE, LAB_PORT_BASE+1, ... when that is set.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::net::TcpListener;

use crate::{Error, Result};

const LOW: u16 = 20000;
const HIGH: u16 = 32768;

fn free(port: u16) -> bool {
    TcpListener::bind(("127.0.0.1", port)).is_ok()
}

/// A random number (std's hasher keys are random per process and per call).
fn random() -> u64 {
    RandomState::new().build_hasher().finish()
}

pub(super) fn free_ports(n: usize) -> Result<Vec<u16>> {
    if let Some(base) = std::env::var("LAB_PORT_BASE").ok().filter(|b| !b.is_empty()) {
        let base: u16 = base
            .parse()
            .map_err(|_| Error::usage(format!("LAB_PORT_BASE={base} is not a port number")))?;
        let ports: Vec<u16> = (0..n).map(|i| base.saturating_add(i as u16)).collect();
        return match ports.iter().find(|p| !free(**p)) {
            Some(p) => Err(Error::runtime(format!(
                "port {p} (from LAB_PORT_BASE={base}) is in use"
            ))),
            None => Ok(ports),
        };
    }
    let mut out = Vec::with_capacity(n);
    for _ in 0..5000 {
        if out.len() == n {
            break;
        }
        let p = LOW + (random() % u64::from(HIGH - LOW)) as u16;
        if !out.contains(&p) && free(p) {
            out.push(p);
        }
    }
    if out.len() < n {
        return Err(Error::runtime(format!("could not find {n} free ports on 127.0.0.1")));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn ports_are_distinct_free_and_in_range() {
        let ports = super::free_ports(8).unwrap();
        assert_eq!(ports.len(), 8);
        let mut sorted = ports.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), 8);
        assert!(ports.iter().all(|p| (super::LOW..super::HIGH).contains(p)));
    }
}
