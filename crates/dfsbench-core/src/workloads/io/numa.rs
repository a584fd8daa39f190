//! fio's NUMA placement of a job's workers (`numa_cpu_nodes`, `numa_mem_policy`): each
//! worker's thread runs on the CPUs of the nodes given (sched_setaffinity), and its memory,
//! the I/O buffers it allocates after, comes from the nodes of the policy (set_mempolicy:
//! bind, interleave, prefer, local or default), set before the worker opens its file. Nodes
//! this machine does not have are refused, as fio refuses them (numa_parse_nodestring).

use serde::Serialize;

use crate::error::ConfigError;

use super::Options;

/// Where a job's workers run and take their memory.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Numa {
    /// The nodes whose CPUs the workers run on (none: any).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cpu_nodes: Vec<u32>,
    /// The memory policy (`bind`, `interleave`, `prefer`, `local`, `default`) and its nodes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mem_policy: Option<(String, Vec<u32>)>,
}

/// Where the machine lists its NUMA nodes.
const NODES: &str = "/sys/devices/system/node";

/// `0`, `0-1`, `0,2-3`: the nodes of a list.
fn node_list(key: &'static str, text: &str) -> Result<Vec<u32>, ConfigError> {
    let bad = || ConfigError::value(key, format!("'{text}'"), "give NUMA nodes such as 0, 0-1 or 0,2");
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim) {
        let (lo, hi) = part.split_once('-').unwrap_or((part, part));
        let (lo, hi) = (
            lo.trim().parse::<u32>().map_err(|_| bad())?,
            hi.trim().parse::<u32>().map_err(|_| bad())?,
        );
        if lo > hi || hi > 1023 {
            return Err(bad());
        }
        out.extend(lo..=hi);
    }
    out.dedup();
    // Refused as fio refuses them: a node the machine lacks.
    if let Some(n) = out
        .iter()
        .find(|n| !std::path::Path::new(&format!("{NODES}/node{n}")).exists())
    {
        let have = std::fs::read_to_string(format!("{NODES}/online")).unwrap_or_default();
        return Err(ConfigError::value(
            key,
            format!("'{text}'"),
            format!(
                "this machine has no NUMA node {n} (its nodes: {}); fio refuses it too",
                have.trim()
            ),
        ));
    }
    Ok(out)
}

impl Numa {
    /// Read numa_cpu_nodes and numa_mem_policy; None without them.
    pub(super) fn validate(own: &Options) -> Result<Option<Numa>, ConfigError> {
        let cpu_nodes = own
            .numa_cpu_nodes
            .as_deref()
            .map(|t| node_list("numa_cpu_nodes", t))
            .transpose()?
            .unwrap_or_default();
        let mem_policy = match own.numa_mem_policy.as_deref().map(str::trim) {
            None => None,
            Some(p) => {
                let (mode, nodes) = p.split_once(':').map_or((p, None), |(m, n)| (m, Some(n)));
                let nodes = nodes.map(|n| node_list("numa_mem_policy", n)).transpose()?;
                match (mode, nodes) {
                    ("default" | "local", None) => Some((mode.to_string(), Vec::new())),
                    ("prefer", Some(n)) if n.len() == 1 => Some((mode.to_string(), n)),
                    ("bind" | "interleave", Some(n)) => Some((mode.to_string(), n)),
                    _ => {
                        return Err(ConfigError::value(
                            "numa_mem_policy",
                            format!("'{p}'"),
                            "give default, local, prefer:NODE, bind:NODES or interleave:NODES",
                        ))
                    }
                }
            }
        };
        if cpu_nodes.is_empty() && mem_policy.is_none() {
            return Ok(None);
        }
        Ok(Some(Numa { cpu_nodes, mem_policy }))
    }

    /// Place the calling thread: its CPUs, then its memory policy.
    pub(super) fn place(&self) -> std::io::Result<()> {
        if !self.cpu_nodes.is_empty() {
            // SAFETY: a zeroed cpu_set_t is an empty set.
            let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
            for n in &self.cpu_nodes {
                for cpu in cpus(&std::fs::read_to_string(format!("{NODES}/node{n}/cpulist"))?) {
                    // SAFETY: CPU_SET bounds-checks the index against the set's size.
                    unsafe { libc::CPU_SET(cpu, &mut set) };
                }
            }
            // SAFETY: set is a valid cpu_set_t of the size given; 0 is this thread.
            if unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        if let Some((mode, nodes)) = &self.mem_policy {
            let mode = match mode.as_str() {
                "default" => 0,
                "prefer" => 1,
                "bind" => 2,
                "interleave" => 3,
                _ => 4, // MPOL_LOCAL
            };
            let mut mask = [0u64; 16];
            for &n in nodes {
                mask[n as usize / 64] |= 1 << (n % 64);
            }
            let (ptr, max) = if nodes.is_empty() {
                (std::ptr::null(), 0)
            } else {
                (mask.as_ptr(), 1024 + 1)
            };
            // SAFETY: the mask holds 1024 bits, which maxnode (bits + 1, as the kernel counts
            // them) does not pass.
            if unsafe { libc::syscall(libc::SYS_set_mempolicy, mode as libc::c_long, ptr, max as libc::c_ulong) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(())
    }
}

/// The CPUs of a kernel CPU list (`0-3,8`).
fn cpus(list: &str) -> Vec<usize> {
    list.trim()
        .split(',')
        .filter(|p| !p.is_empty())
        .flat_map(|p| {
            let (lo, hi) = p.split_once('-').unwrap_or((p, p));
            let (lo, hi) = (lo.parse::<usize>().unwrap_or(0), hi.parse::<usize>().unwrap_or(0));
            lo..=hi
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_read_and_the_thread_placed() {
        assert_eq!(cpus("0-2,5\n"), vec![0, 1, 2, 5]);
        let own = Options {
            numa_cpu_nodes: Some("0".into()),
            numa_mem_policy: Some("bind:0".into()),
            ..Options::default()
        };
        // Every Linux machine has node 0.
        let numa = Numa::validate(&own).unwrap().unwrap();
        assert_eq!(numa.mem_policy, Some(("bind".into(), vec![0])));
        std::thread::spawn(move || numa.place().unwrap()).join().unwrap();
        let e = Numa::validate(&Options {
            numa_cpu_nodes: Some("0-1000".into()),
            ..Options::default()
        })
        .unwrap_err()
        .to_string();
        assert!(e.contains("this machine has no NUMA node"), "{e}");
    }
}
