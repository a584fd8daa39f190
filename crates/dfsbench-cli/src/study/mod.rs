//! `dfsbench study NAME`: a seed evaluation run against one or more targets with one command,
//! its tables printed in the publication's shape.

mod catalog;
mod exec;
mod launch;
mod manifest;
mod model;
mod render;
mod scale;

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};

use crate::Failure;
use manifest::Manifest;
use scale::Scale;

#[cfg(test)]
mod tests {
    #[test]
    fn globs() {
        for (pat, id, want) in [
            ("read-*", "read-4k-t1", true),
            ("read-*-t1", "read-4k-t1", true),
            ("read-*-t1", "read-4k-t2", false),
            ("*-4k-*", "randread-4k-t8", true),
            ("clients2", "clients256", false),
            ("*", "x", true),
        ] {
            assert_eq!(super::glob(pat, id), want, "{pat} {id}");
        }
    }
}

#[derive(ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StudyFormat {
    /// Markdown tables in the publication's shape.
    #[default]
    Md,
    /// Long CSV: a line per cell and system, with the result file and field it comes from.
    Csv,
}

#[derive(Args, Debug)]
#[command(
    after_help = "Studies: size-sweep, clients-sweep, dfsperf, surfnet, fio-matrix (`dfsbench study list`).\n\
Examples:\n  dfsbench study size-sweep --target /mnt/cephfs/bench --scale 0.01\n  \
dfsbench study fio-matrix --target plain=/mnt/plain --target ec=/mnt/ec42\n  \
dfsbench study size-sweep -t /mnt/cephfs/bench --nodes 4,16,64 --launcher 'mpirun --hostfile hosts --map-by ppr:{ppn}:node -np {np}'\n  \
dfsbench study size-sweep --from dfsbench-study-size-sweep-20261122-050000-1a2b3c"
)]
pub struct StudyArgs {
    /// The study to run, or `list`.
    #[arg(value_name = "NAME")]
    pub name: String,

    /// Where to run; repeat for a column per system. LABEL= names the column (default: the
    /// backend's name).
    #[arg(short, long = "target", value_name = "[LABEL=]URI")]
    pub targets: Vec<String>,

    /// Multiply the publication's file counts, file sizes and durations by F (0 < F <= 1).
    #[arg(long, value_name = "F", default_value = "1")]
    pub scale: String,

    /// Study directory: a result file per point and system, study.json, tables.md and CSV
    /// [default: ./dfsbench-study-NAME-<id>].
    #[arg(short, long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// Print the tables of an earlier study directory again, from its files alone.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["targets", "out"])]
    pub from: Option<PathBuf>,

    /// Run only these points (ids as in tables.md, `*` matches anything: `clients2,read-*-t1`); the
    /// other cells say "not run".
    #[arg(long, value_delimiter = ',', value_name = "LIST", conflicts_with = "from")]
    pub points: Option<Vec<String>>,

    /// Client node counts of the studies with a node axis (size-sweep: 4,16,64; dfsperf:
    /// 1,2,4,8,16); needs --launcher.
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "LIST",
        requires = "launcher",
        conflicts_with = "from"
    )]
    pub nodes: Option<Vec<usize>>,

    /// How to start dfsbench on the nodes, with {np} (all processes), {nodes} and {ppn}
    /// (processes per node): 'mpirun --hostfile hosts --map-by ppr:{ppn}:node -np {np}' or
    /// 'srun -N {nodes} --ntasks-per-node {ppn}'.
    #[arg(long, value_name = "COMMAND", requires = "nodes", conflicts_with = "from")]
    pub launcher: Option<String>,

    /// What to print on stdout.
    #[arg(long, value_enum, default_value_t = StudyFormat::Md)]
    pub format: StudyFormat,

    /// Create the S3 bucket of a target when it does not exist.
    #[arg(long)]
    pub create_bucket: bool,

    /// Retry requests that failed temporarily up to N times, counting every retry.
    #[arg(long, value_name = "N")]
    pub retries: Option<u32>,

    /// Record the CPU of these server processes on this host in every point (clients-sweep's
    /// server CPU tables): `--server-pid $(pidof minio)`.
    #[arg(long = "server-pid", value_delimiter = ',', value_name = "PID,...")]
    pub server_pids: Option<Vec<u32>>,

    /// No line per point on stderr.
    #[arg(short, long)]
    pub quiet: bool,

    /// For a point that fails to start, print the full text of the error under its one-line
    /// message (HTTP responses, the chain of causes).
    #[arg(short, long)]
    pub verbose: bool,
}

fn list() {
    for (name, what) in catalog::STUDIES {
        println!("{name:<14} {what}");
    }
}

fn unknown(name: &str) -> Failure {
    let names: Vec<&str> = catalog::STUDIES.iter().map(|s| s.0).collect();
    Failure::usage(format!(
        "unknown study '{name}': choose from {} (or `dfsbench study list`)",
        names.join(", ")
    ))
}

/// Render the tables of `dir`, write them there, and print the chosen format.
fn show(m: &Manifest, dir: &Path, format: StudyFormat, write: bool) -> Result<(), Failure> {
    let scale = Scale::parse(&m.scale.to_string()).map_err(Failure::usage)?;
    let study = catalog::build(&m.study, scale, &m.nodes).ok_or_else(|| unknown(&m.study))?;
    let r = render::render(&study, m, dir);
    if write {
        let put = |name: &str, text: &str| {
            std::fs::write(dir.join(name), text)
                .map_err(|e| Failure::runtime(format!("cannot write {}: {e}", dir.join(name).display())))
        };
        put("tables.md", &r.markdown)?;
        put("tables.csv", &r.cells_csv)?;
        for (i, t) in r.tables_csv.iter().enumerate() {
            put(&format!("table-{}.csv", i + 1), t)?;
        }
    }
    match format {
        StudyFormat::Md => print!("{}", r.markdown),
        StudyFormat::Csv => print!("{}", r.cells_csv),
    }
    Ok(())
}

/// `*` matches any run of characters: `read-*-t1`.
fn glob(pat: &str, id: &str) -> bool {
    let mut parts = pat.split('*');
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = id.strip_prefix(first) else {
        return false;
    };
    let tail: Vec<&str> = parts.collect();
    for (i, p) in tail.iter().enumerate() {
        if i + 1 == tail.len() {
            return rest.ends_with(p);
        }
        match rest.find(p) {
            Some(at) => rest = &rest[at + p.len()..],
            None => return false,
        }
    }
    rest.is_empty()
}

/// Keep the points matching `only`; a pattern that matches nothing is a usage error.
fn select(study: &mut model::Study, only: &[String]) -> Result<(), Failure> {
    let matches = |pat: &str, id: &str| glob(pat.trim(), id);
    for pat in only {
        if !study.points.iter().any(|p| matches(pat.trim(), &p.id)) {
            let ids: Vec<&str> = study.points.iter().map(|p| p.id.as_str()).collect();
            return Err(Failure::usage(format!(
                "--points: '{pat}' matches no point of {}: choose from {}",
                study.name,
                ids.join(", ")
            )));
        }
    }
    study
        .points
        .retain(|p| only.iter().any(|pat| matches(pat.trim(), &p.id)));
    Ok(())
}

pub fn study(a: &StudyArgs) -> Result<(), Failure> {
    if let Some(n) = dfsbench_core::cluster::launcher_size().filter(|&n| n > 1) {
        return Err(Failure::usage(format!(
            "dfsbench study starts the processes of its points itself, but an MPI launcher started {n} copies of it: run the study without mpirun, and give --nodes LIST --launcher 'mpirun ... -np {{np}}' for points over nodes"
        )));
    }
    crate::set_verbose(a.verbose);
    if a.name == "list" {
        if let Some(dir) = &a.from {
            return Err(Failure::usage(format!(
                "study list takes no --from: to print the tables of {} again, run `dfsbench study NAME --from {}`",
                dir.display(),
                dir.display()
            )));
        }
        list();
        return Ok(());
    }
    if let Some(dir) = &a.from {
        let m = Manifest::load(dir).map_err(Failure::usage)?;
        if m.study != a.name {
            return Err(Failure::usage(format!(
                "{} holds a {} study, not {}: name that study",
                dir.display(),
                m.study,
                a.name
            )));
        }
        return show(&m, dir, a.format, false);
    }
    let scale = Scale::parse(&a.scale).map_err(Failure::usage)?;
    let nodes = a.nodes.clone().unwrap_or_default();
    if let Some(bad) = nodes.iter().find(|&&n| n == 0) {
        return Err(Failure::usage(format!("--nodes {bad}: give node counts of 1 or more")));
    }
    let launcher = a
        .launcher
        .as_deref()
        .map(launch::Launcher::parse)
        .transpose()
        .map_err(Failure::usage)?;
    if let Some(pid) = a
        .server_pids
        .iter()
        .flatten()
        .find(|&&p| p == 0 || dfsbench_core::host::process_cpu_times(p).is_none())
    {
        return Err(Failure::usage(format!(
            "--server-pid {pid}: no such process on this host: give the PIDs of the server processes here (pidof minio)"
        )));
    }
    let mut study = catalog::build(&a.name, scale, &nodes).ok_or_else(|| unknown(&a.name))?;
    let over_nodes = |s: &model::Study| s.points.iter().any(|p| matches!(p.spread, model::Spread::Nodes { .. }));
    if !nodes.is_empty() && !over_nodes(&study) {
        return Err(Failure::usage(format!(
            "--nodes {}: {} has no point over these node counts (size-sweep and dfsperf have a node axis; size-sweep's 1 node is its one-client table)",
            nodes.iter().map(usize::to_string).collect::<Vec<_>>().join(","),
            study.name
        )));
    }
    if let Some(only) = &a.points {
        select(&mut study, only)?;
    }
    let systems = exec::systems(&a.targets, study.localfs_baseline).map_err(Failure::usage)?;
    let (manifest, dir, outcome) = exec::execute(&study, scale, systems, a, launcher.as_ref())?;
    show(&manifest, &dir, a.format, true)?;
    if !a.quiet {
        eprintln!("study: {}", dir.display());
    }
    outcome
}
