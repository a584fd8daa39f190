//! `dfsbench lab`: multi-node storage clusters on this machine (see docs/lab.md).

use std::io::Write;
use std::time::{Duration, Instant};

use clap::{Args, Subcommand, ValueEnum};

use crate::Failure;

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  dfsbench lab up gluster --layout disperse4+2\n  \
dfsbench lab up s3fs\n  dfsbench lab status --format json\n  dfsbench lab fault gluster kill node2\n  \
dfsbench lab fault gluster restart node2\n  dfsbench lab probe gluster --wait 5m\n  \
dfsbench lab delay gluster 10ms\n  dfsbench lab down --all")]
pub struct LabArgs {
    #[command(subcommand)]
    pub command: LabCommand,
}

#[derive(Subcommand, Debug)]
pub enum LabCommand {
    /// Install what a system needs: the missing Debian packages (and for minio its binary,
    /// built once by lab/install.sh; for hdfs and alluxio their jars from Maven Central).
    Install { system: String },
    /// Start a cluster (gluster, moosefs, minio, s3fs, swift, hdfs, alluxio) and print its
    /// targets; a running one is left as is.
    Up {
        system: String,
        /// gluster: replica3 (default) or disperse4+2; minio: erasure (default) or s3fs (what
        /// `lab up s3fs` starts).
        #[arg(long)]
        layout: Option<String>,
    },
    /// Stop a cluster's processes, unmount, remove its namespaces and data.
    Down {
        #[arg(required_unless_present = "all", conflicts_with = "all")]
        system: Option<String>,
        /// Every lab with a state file, and anything else with the lab's prefix.
        #[arg(long)]
        all: bool,
    },
    /// Nodes, addresses, pids, targets and health of the labs that are up.
    Status {
        system: Option<String>,
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Inject a fault on one node: kill, stop, cont, restart, wipe, cut-link, heal-link.
    Fault {
        system: String,
        fault: String,
        node: String,
    },
    /// Add one-way delay on every node link (e.g. 10ms: 20 ms more round trip); 0 removes it.
    Delay { system: String, delay: String },
    /// Exit 0 when every copy exists again (the system's own view), 1 with what is missing.
    Probe {
        system: String,
        /// Poll until healthy or this time passes (e.g. 5m).
        #[arg(long, value_name = "TIME")]
        wait: Option<String>,
    },
    /// Round trips from the client to each node and from node1 to node2 (ping).
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

fn failure(e: dfsbench_lab::Error) -> Failure {
    if e.usage {
        Failure::usage(e.message)
    } else {
        Failure::runtime(e.message)
    }
}

/// A `lab:NAME[-KIND]` target as the lab's URI, its daemons' PIDs and the credentials it
/// needs, now set in this process's environment (ranks and study points inherit them); any
/// other target as it is.
pub fn resolve_target(target: &str) -> Result<(String, Vec<u32>), Failure> {
    match target.strip_prefix("lab:") {
        Some(spec) => {
            let lab = dfsbench_lab::resolve_target(spec).map_err(failure)?;
            // Over any the user had: they name the lab's own accounts. Called before any
            // thread that reads the environment starts.
            for (k, v) in &lab.env {
                std::env::set_var(k, v);
            }
            Ok((lab.uri, lab.pids))
        }
        None => Ok((target.to_string(), Vec::new())),
    }
}

pub fn lab(args: &LabArgs) -> Result<(), Failure> {
    match &args.command {
        LabCommand::Install { system } => {
            let installed = dfsbench_lab::install(system).map_err(failure)?;
            if installed.is_empty() {
                println!("{system}: every package is installed");
            } else {
                println!("{system}: installed {}", installed.join(" "));
            }
            Ok(())
        }
        LabCommand::Up { system, layout } => {
            let state = dfsbench_lab::up(system, layout.as_deref()).map_err(failure)?;
            print_status(Some(&state.name), Format::Text)
        }
        LabCommand::Down { system, all } => {
            if *all {
                for name in dfsbench_lab::down_all().map_err(failure)? {
                    println!("removed {name}");
                }
                return Ok(());
            }
            let system = system.as_deref().unwrap_or_default();
            let name = dfsbench_lab::system(system).map_err(failure)?.name();
            dfsbench_lab::down(name).map_err(failure)?;
            println!("{name}: down");
            Ok(())
        }
        LabCommand::Status { system, format } => print_status(system.as_deref(), *format),
        LabCommand::Fault { system, fault, node } => {
            dfsbench_lab::fault(system, fault, node).map_err(failure)?;
            println!("{system}: {fault} {node}");
            Ok(())
        }
        LabCommand::Delay { system, delay } => {
            let d = dfsbench_lab::delay::parse_delay(delay).map_err(failure)?;
            let exe = std::env::current_exe()
                .map_err(|e| Failure::runtime(format!("cannot find the dfsbench binary: {e}")))?;
            dfsbench_lab::delay::apply(system, d, &exe).map_err(failure)?;
            println!("{system}: one-way delay {delay} on every node link");
            Ok(())
        }
        LabCommand::Probe { system, wait } => probe(system, wait.as_deref()),
        LabCommand::Rtt { system, count } => rtt(system, *count),
        LabCommand::Delayer { queue, micros } => {
            dfsbench_lab::delay::run_delayer(*queue, Duration::from_micros(*micros)).map_err(failure)
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
                println!("{system}: every copy exists");
                return Ok(());
            }
            Ok(Some(why)) => why,
            Err(e) if e.usage => return Err(failure(e)),
            Err(e) => e.message,
        };
        if Instant::now() >= deadline {
            return Err(Failure::runtime(format!("{system}: not recovered: {pending}")));
        }
        std::thread::sleep(Duration::from_secs(1));
    }
}

fn print_status(only: Option<&str>, format: Format) -> Result<(), Failure> {
    let labs = dfsbench_lab::status(only).map_err(failure)?;
    if format == Format::Json {
        let text = serde_json::to_string_pretty(&labs).expect("status serializes");
        // A closed pipe (`| head`) is not an error of the lab.
        let _ = writeln!(std::io::stdout().lock(), "{text}");
        return Ok(());
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
        if lab.delay_ms > 0.0 {
            text += &format!("  delay   {} ms one-way on every node link\n", lab.delay_ms);
        }
        text += &format!("  client  {} (root namespace)\n", lab.client_addr);
        for n in &lab.nodes {
            let pids: Vec<String> = n.pids.iter().map(|p| p.to_string()).collect();
            text += &format!(
                "  {:<6} {:<12} {:<12} {:<8} link {:<4} pids {}\n",
                n.name,
                n.addr,
                n.role,
                n.state,
                n.link,
                pids.join(",")
            );
        }
    }
    let _ = write!(std::io::stdout().lock(), "{text}");
    Ok(())
}

fn rtt(system: &str, count: u32) -> Result<(), Failure> {
    let state = dfsbench_lab::loaded(dfsbench_lab::system(system).map_err(failure)?.name()).map_err(failure)?;
    println!(
        "{:<18} {:>8} {:>8} {:>8} {:>8}",
        "path", "min ms", "avg ms", "max ms", "mdev ms"
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
    for (label, from, addr) in paths {
        let r = dfsbench_lab::delay::ping(from, addr, count).map_err(failure)?;
        println!(
            "{label:<18} {:>8.3} {:>8.3} {:>8.3} {:>8.3}",
            r.min_ms, r.avg_ms, r.max_ms, r.mdev_ms
        );
    }
    Ok(())
}
