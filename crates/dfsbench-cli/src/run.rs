//! `dfsbench run`: turn flags and workload files into a run, execute it, write the result.

use std::convert::Infallible;

use dfsbench_core::cluster::Group;
use dfsbench_core::config::{
    load_workload_file, parse_fio_args, validate, FioGiven, JobSettings, JobSpec, RunConfig, RunSpec, MAX_WORKLOAD_FILE,
};
use dfsbench_core::runner::Status;
use dfsbench_core::session::{execute, new_run_id, Outcome};
use dfsbench_report::{
    accelerators_table, checkpoint_ranks_table, checkpoint_table, cpu_table, endpoints_table, faults_table,
    groups_table, notes, phases_csv, phases_table, rate_table, search_table, stall_lines, train_table,
};
use dfsbench_result::files::read_bounded;
use dfsbench_result::{format_ns, NullTests, RunResult};

use crate::cli::{Format, RunArgs};
use crate::failure::Failure;
use crate::first_run;
use crate::interrupt::{on_interrupt, INTERRUPT};
use crate::output::{result_path, save};
use crate::progress::Progress;

/// The job-level keys given as flags.
fn job_flags(a: &RunArgs) -> JobSpec {
    JobSpec {
        settings: a.job.clone(),
        shared: a.shared.clone(),
        workloads: a.workloads.clone(),
    }
}

/// Build the run from a workload file and/or flags.
pub(crate) fn build_config(a: &RunArgs) -> Result<(RunConfig, Option<String>), Failure> {
    let flags = job_flags(a);
    let first_run = first_run::without_workload(a);
    let file = match (&a.workload_file, &a.fio_args) {
        (Some(_), Some(_)) => {
            return Err(Failure::usage(
                "give either a workload file or a fio command line (--name=... and fio's options), not both"
                    .to_string(),
            ))
        }
        (Some(path), None) => {
            let bytes =
                read_bounded(path, MAX_WORKLOAD_FILE).map_err(|e| Failure::usage(format!("workload file: {e}")))?;
            let text = String::from_utf8(bytes)
                .map_err(|_| Failure::usage(format!("workload file {} is not UTF-8 text", path.display())))?;
            let given = FioGiven {
                devices: &a.overwrite_device,
                sized: flags.workloads.io.size.is_some(),
            };
            Some(load_workload_file(&path.display().to_string(), &text, given)?)
        }
        (None, Some(fio)) => Some(parse_fio_args(fio, &a.overwrite_device)?),
        (None, None) => None,
    };
    let (file_target, run, jobs) = match file {
        Some(file) => {
            if a.job.workload.is_some() {
                return Err(Failure::usage(
                    "give either a workload file or --workload, not both".to_string(),
                ));
            }
            let mut only_common = JobSpec {
                settings: flags.settings.clone(),
                ..Default::default()
            };
            // --size scales a file's io jobs (fio job files included) to the machine at hand.
            only_common.workloads.io.size = flags.workloads.io.size.clone();
            if flags != only_common {
                return Err(Failure::usage(
                    "with a workload file only --workers, --threads, --duration, --ramp, --size (io jobs) and the load flags \
                     (--rate, --rate-steps, --arrival, --until-stable, --stable-band, --stable-window) apply \
                     to its jobs: set the other keys in the file"
                        .to_string(),
                ));
            }
            let jobs: Vec<JobSpec> = file.jobs.iter().map(|j| j.overlay(&only_common)).collect();
            (file.target, file.run, jobs)
        }
        None if a.job.workload.is_some() => (None, RunSpec::default(), vec![flags]),
        None => {
            let workers_only = JobSettings {
                workers: flags.settings.workers,
                threads: flags.settings.threads,
                ..Default::default()
            };
            let specific = JobSpec {
                settings: workers_only,
                ..Default::default()
            };
            if flags != specific {
                return Err(Failure::usage(format!(
                    "workload flags need --workload {} (or a workload file)",
                    dfsbench_core::workloads::names().join("|")
                )));
            }
            (None, first_run::run_spec(a.quick), first_run::jobs(&flags, a.quick))
        }
    };
    if a.quick && !first_run {
        return Err(Failure::usage(
            "--quick is the smoke run of `dfsbench run` without a workload: leave it out, or leave out the workload"
                .to_string(),
        ));
    }
    let run = run.merge(&a.run);
    let mut config = validate(&run, &jobs)?;
    if first_run {
        first_run::mark_optional(&mut config);
    }
    Ok((config, file_target))
}

/// The block device `--overwrite-device` names, when it is the target (a block device as the
/// target without it is refused when the target opens). The other devices it names must be
/// character devices that hold no data, on a directory target (fio jobs' files).
fn checked_device(devices: &[String], target: &str) -> Result<Option<String>, Failure> {
    let posix = match dfsbench_backends::Target::parse(target) {
        Ok(dfsbench_backends::Target::Posix(path)) => Some(path),
        _ => None,
    };
    let mut block = None;
    for device in devices {
        let path = std::path::Path::new(device);
        if dfsbench_backends::is_dataless_char_device(path) {
            if posix.is_none() {
                return Err(Failure::usage(format!(
                    "--overwrite-device {device}: a fio job's file on this machine, and the target {target} is not a directory here"
                )));
            }
            continue;
        }
        if posix.as_deref() != Some(path) {
            return Err(Failure::usage(format!(
                "--overwrite-device names {device}, but the target is {target}: give the device as the target (-t {device}) or leave the flag out"
            )));
        }
        if !dfsbench_backends::is_block_device(path) {
            return Err(Failure::usage(format!(
                "--overwrite-device {device}: not a block device (dfsbench overwrites block devices, and character devices that hold no data: /dev/null, /dev/zero, /dev/full; for a file or a directory leave the flag out)"
            )));
        }
        block = Some(device.clone());
    }
    Ok(block)
}

/// The null tests in a few lines above the table.
fn null_tests_text(n: &NullTests) -> String {
    let mib = |v: f64| format!("{:.0} MiB/s", v / (1024.0 * 1024.0));
    let mut out = String::new();
    if let Some(d) = &n.local_disk {
        out += &format!(
            "null test: local disk write+fsync {}, read {}\n",
            mib(d.write_bytes_per_sec),
            mib(d.read_bytes_per_sec)
        );
    }
    if let Some(c) = &n.connect {
        out += &format!("null test: tcp connect median {}\n", format_ns(c.median_ns));
    }
    for node in &n.nodes {
        let mut figures = Vec::new();
        if let (Some(c), Some(port)) = (&node.connect, node.port) {
            figures.push(format!("tcp connect :{port} median {}", format_ns(c.median_ns)));
        }
        if let Some(p) = &node.ping {
            figures.push(format!("ping median {}", format_ns(p.median_ns)));
        }
        if let Some(b) = &node.bandwidth {
            figures.push(format!("to the client {}", mib(b.bytes_per_sec)));
        }
        if let Some(b) = &node.bandwidth_to_node {
            figures.push(format!("from the client {}", mib(b.bytes_per_sec)));
        }
        if !figures.is_empty() {
            out += &format!("null test: {} {}: {}\n", node.name, node.addr, figures.join(", "));
        }
    }
    if let (Some(r), Some(b)) = (&n.round_trip, &n.bandwidth) {
        let cached = b
            .cached_read_bytes_per_sec
            .map(|c| format!(", read again from the client's cache {}", mib(c)))
            .unwrap_or_default();
        out += &format!(
            "null test: target lookup of a new name median {}, write {}, read {}{cached}\n",
            format_ns(r.median_ns),
            mib(b.write_bytes_per_sec),
            mib(b.read_bytes_per_sec)
        );
    }
    out
}

pub fn run(a: &RunArgs) -> Result<(), Failure> {
    crate::failure::set_verbose(a.verbose);
    let (config, file_target) = build_config(a)?;
    let target = a
        .target
        .clone()
        .or(file_target)
        .unwrap_or_else(|| std::env::temp_dir().display().to_string());
    let resolved = crate::lab::resolve_target(&target)?;
    let mut config = config;
    config.overwrite_device = checked_device(&a.overwrite_device, &resolved.uri)?;
    config.nodes = resolved.nodes;
    let lab = resolved.lab.as_deref();
    if let Some(lab) = lab {
        crate::lab::watch_lab_daemons(&mut config, lab)?;
    }
    for f in &mut config.faults.faults {
        f.entry.command = crate::lab::expand_lab_action(&f.entry.command, lab)?;
    }
    if let Some(p) = &mut config.faults.probe {
        p.command = crate::lab::expand_lab_action(&p.command, lab)?;
    }
    crate::output::check(a.out.as_deref())?;
    let target = resolved.uri;
    let run_id = new_run_id();
    on_interrupt();
    // Told before any process starts, by this one alone.
    let ranks = a
        .procs
        .unwrap_or(1)
        .max(dfsbench_core::cluster::launcher_size().unwrap_or(1));
    if let Some(why) = dfsbench_core::runner::needs_one_process(&config).filter(|_| ranks > 1) {
        return Err(Failure::usage(why));
    }
    let mut group = crate::group::start(&crate::group::Placement {
        procs: a.procs,
        hosts: &a.hosts,
        rsh: a.rsh.as_deref(),
        rank_timeout: a.rank_timeout.as_deref(),
        rank_loss: a.rank_loss,
    })?;
    if let Some(job) = config
        .jobs
        .iter()
        .find(|j| config.shuffle && j.workers == 1 && group.size() == 1)
    {
        return Err(Failure::usage(format!(
            "--shuffle reads another worker's data, but job '{}' has one worker in one process: add --workers 2 or more, or --procs N",
            job.name
        )));
    }
    let (root, rank) = (group.is_root(), group.rank());
    let mut progress = Progress::new(a.quiet || !root, a.progress_interval);
    let clear_progress = progress.clearer();
    // Worker threads stuck in a storage call (a stopped FUSE daemon) cannot be joined: the
    // result is written from inside the run, and the process ends there.
    let deliver = |mut outcome: Outcome| -> Infallible {
        clear_progress();
        outcome.result.tag = a.tag.clone();
        let said = if root {
            save_and_print(a, &outcome, None)
        } else {
            Err(Failure::runtime(format!(
                "rank {rank}: {}",
                outcome.result.status_message.clone().unwrap_or_default()
            )))
        };
        crate::exit_now(said)
    };
    let outcome = execute(
        &config,
        &target,
        &run_id,
        &INTERRUPT,
        &mut progress,
        &mut group,
        Some(&deliver),
    );
    progress.finish();
    let mut outcome = match outcome {
        Ok(o) => o,
        // Rank 0 tells the user; the others would repeat it. They wait until it has: every
        // rank meets a start error at the same step, and mpirun ends the whole job as soon
        // as one rank exits, which ended rank 0 before its line.
        Err(e) if root || group.is_broken() => {
            crate::failure::print_detail();
            let said = crate::say_now(e.into());
            if !group.is_broken() {
                let _ = group.barrier(SAID_WHY);
            }
            return Err(said);
        }
        Err(_) => {
            let _ = group.barrier(SAID_WHY);
            return Err(Failure::Reported(1));
        }
    };
    outcome.result.tag = a.tag.clone();
    if !root {
        if let Status::Failed(m) = &outcome.status {
            if group.is_broken() {
                crate::eprint_line(&format!("dfsbench: rank {}: {m}", group.rank()));
                group.abort(1);
            }
        }
        return Ok(());
    }
    save_and_print(a, &outcome, Some(&mut group))
}

/// The step at which the ranks wait for rank 0 to say why the run could not start.
const SAID_WHY: &str = "rank 0's report of why the run could not start";

/// Rank 0's end of a run: save the result where asked, print it, and turn its status into the
/// command's. A broken `group` (a rank lost) is aborted after the result is safe.
fn save_and_print(a: &RunArgs, outcome: &Outcome, group: Option<&mut Group>) -> Result<(), Failure> {
    let result = &outcome.result;
    let to_stdout = a.out.as_deref() == Some(std::path::Path::new("-"));
    let human = match a.format {
        Format::Table => table_text(result),
        Format::Json => format!("{}\n", serde_json::to_string_pretty(result).expect("results serialize")),
        Format::Csv => phases_csv(result),
    };
    // With `-o -` stdout carries the result JSON alone; what people read goes to stderr.
    let (path, misplaced) = if to_stdout {
        if a.format != Format::Json {
            eprint!("{human}");
        }
        let path = match print_result(result) {
            Ok(()) => "stdout".to_string(),
            // A closed pipe must not lose the result.
            Err(e) => {
                let p = save(result, &result_path(None, &result.run_id))?.path;
                eprintln!("dfsbench: {e}; saved it to {} instead", p.display());
                p.display().to_string()
            }
        };
        (path, false)
    } else {
        let saved = save(result, &result_path(a.out.as_deref(), &result.run_id))?;
        crate::history::record_run(result, &saved.path, result.tag.as_deref());
        crate::stdout::print(&human, "the result table")?;
        let path = saved.path.display().to_string();
        if a.format == Format::Table && first_run::without_workload(a) && !a.quick {
            let target = a
                .target
                .clone()
                .unwrap_or_else(|| std::env::temp_dir().display().to_string());
            crate::stdout::print(first_run::footer(result, &target, &path), "the result table")?;
        }
        (path, saved.fallback)
    };
    if !a.quiet && !to_stdout {
        eprintln!("results: {path}");
    }
    for e in result.null_tests.iter().flat_map(|n| &n.errors) {
        eprintln!("dfsbench: a null test could not run: {e}");
    }
    for w in &outcome.warnings {
        eprintln!("dfsbench: {w}");
    }
    if let Some(group) = group.filter(|g| g.is_broken()) {
        let why = result.status_message.clone().unwrap_or_default();
        eprintln!("dfsbench: {why}; partial results in {path}");
        group.abort(1);
    }
    let errors: u64 = result.phases.iter().map(|p| p.errors.total).sum();
    match &outcome.status {
        // A script must not take the result for where it asked it to be.
        Status::Complete if misplaced => Err(Failure::runtime(format!(
            "the result is not where -o asked but in {path} (see the warning above)"
        ))),
        Status::Complete if errors == 0 => Ok(()),
        Status::Complete => Err(Failure::runtime(format!(
            "{errors} operations failed (see errors in {path})"
        ))),
        Status::Interrupted => Err(Failure::Interrupted),
        Status::Aborted(m) | Status::Failed(m) => Err(Failure::runtime(format!("{m}; partial results in {path}"))),
    }
}

/// The result JSON on stdout (`-o -`).
fn print_result(result: &RunResult) -> Result<(), Failure> {
    let json = serde_json::to_string_pretty(result).expect("results serialize");
    crate::stdout::write(json + "\n").map_err(|e| Failure::runtime(format!("cannot write the result to stdout: {e}")))
}

/// The table and the notes under it (`--format table`).
fn table_text(result: &RunResult) -> String {
    let mut out = String::new();
    let fs = result
        .target
        .details
        .get("fs_type")
        .map(|t| format!(", {t}"))
        .unwrap_or_default();
    out += &format!(
        "dfsbench {}  run {}  target {} ({}{fs})\n",
        result.tool.version, result.run_id, result.target.run_path, result.target.backend
    );
    if let Some(n) = &result.null_tests {
        out += &null_tests_text(n);
    }
    if let Some(l) = &result.target.link {
        out += &format!(
            "link: reads above {:.0} MiB/s are marked [cache?] (1.5x the client's link, {}: {})\n",
            dfsbench_result::LINK_MARGIN * l.bytes_per_sec / (1024.0 * 1024.0),
            l.source,
            l.basis
        );
    }
    out += &phases_table(result);
    out += &notes(result);
    for t in [
        groups_table(result),
        rate_table(result),
        cpu_table(result),
        endpoints_table(result),
        faults_table(result),
        train_table(result),
        accelerators_table(result),
        search_table(result),
        checkpoint_table(result),
        checkpoint_ranks_table(result),
    ]
    .into_iter()
    .flatten()
    {
        out += &format!("\n{t}");
    }
    for line in stall_lines(result) {
        out += &format!("{line}\n");
    }
    for (p, s) in result.phases.iter().filter_map(|p| p.steady.as_ref().map(|s| (p, s))) {
        out += &match s.stable_at_s {
            Some(t) => format!(
                "{}: steady after {t:.1} s (within {:.0}% for {:.0} s)\n",
                p.label,
                s.band * 100.0,
                s.window_s
            ),
            None => format!(
                "{}: not steady within {:.1} s (band {:.0}%, window {:.0} s)\n",
                p.label,
                p.duration_s,
                s.band * 100.0,
                s.window_s
            ),
        };
    }
    out + &stragglers(result)
}

/// Under the table of a multi-process run: who ran it, and per phase the slowest process when
/// it is below 80% of the median process's throughput.
fn stragglers(result: &RunResult) -> String {
    let Some(c) = &result.cluster else {
        return String::new();
    };
    let mut out = format!(
        "{} processes on {} node{} ({}){}\n",
        c.ranks,
        c.nodes.len(),
        if c.nodes.len() == 1 { "" } else { "s" },
        c.mode,
        if c.shuffle { ", shuffled reads" } else { "" }
    );
    for l in &c.lost {
        out += &format!(
            "rank {} on {} lost at {:.1} s during {} ({}); the others went on\n",
            l.rank, l.host, l.at_s, l.during, l.why
        );
    }
    for p in result.phases.iter().filter(|p| !p.prepare && p.processes.len() > 1) {
        let mut rates: Vec<f64> = p.processes.iter().map(|r| r.ops_per_sec).collect();
        rates.sort_by(f64::total_cmp);
        let median = rates[rates.len() / 2];
        let slow = p
            .processes
            .iter()
            .min_by(|a, b| a.ops_per_sec.total_cmp(&b.ops_per_sec))
            .expect("processes");
        if median > 0.0 && slow.ops_per_sec < 0.8 * median {
            out.push_str(&format!(
                "straggler: {} rank {} on {} at {:.0}% of the median process ({:.1} vs {:.1} ops/s, ends {:.2} s after the first)\n",
                p.label,
                slow.rank,
                slow.host,
                100.0 * slow.ops_per_sec / median,
                slow.ops_per_sec,
                median,
                slow.end_s - p.processes.iter().map(|r| r.end_s).fold(f64::INFINITY, f64::min),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use dfsbench_result::{NodeBandwidth, NodeNullTests, RoundTrips};

    #[test]
    fn each_node_gets_a_line_with_what_was_measured_of_it() {
        let trips = |op: &str, median_ns| RoundTrips {
            op: op.into(),
            count: 5,
            min_ns: median_ns,
            median_ns,
            max_ns: median_ns,
        };
        let n = NullTests {
            nodes: vec![
                NodeNullTests {
                    name: "node1".into(),
                    addr: "198.18.2.2".into(),
                    port: Some(9419),
                    connect: Some(trips("tcp connect", 52_000)),
                    ping: Some(trips("icmp echo", 31_000)),
                    bandwidth: Some(NodeBandwidth {
                        bytes: 32 << 20,
                        bytes_per_sec: 1500.0 * 1048576.0,
                    }),
                    bandwidth_to_node: Some(NodeBandwidth {
                        bytes: 32 << 20,
                        bytes_per_sec: 1200.0 * 1048576.0,
                    }),
                    ..NodeNullTests::default()
                },
                // Down: its errors say why, and it has no line of figures.
                NodeNullTests {
                    name: "node2".into(),
                    addr: "198.18.2.3".into(),
                    ..NodeNullTests::default()
                },
            ],
            ..NullTests::default()
        };
        assert_eq!(
            null_tests_text(&n),
            "null test: node1 198.18.2.2: tcp connect :9419 median 52.0 us, ping median 31.0 us, to the client 1500 MiB/s, from the client 1200 MiB/s\n"
        );
    }
}
