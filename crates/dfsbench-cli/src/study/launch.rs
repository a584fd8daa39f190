//! Points of several processes: the point's jobs go to a workload file, and `dfsbench run FILE`
//! runs them in a child process, with `--procs N` on this machine, under the study's
//! `--launcher` (mpirun, srun) across nodes, or as `--procs` over a lab's client nodes. The child writes the result file and its stderr
//! goes to a log beside it. The child has its own process group, so Ctrl-C reaches it once,
//! passed on by the study, and it still writes its partial result.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use dfsbench_backends::redact::redact;

use super::model::Spread;

/// The placeholders of `--launcher`.
const PLACES: [&str; 3] = ["{np}", "{nodes}", "{ppn}"];

/// `--launcher`: the command line that starts dfsbench on the nodes, with `{np}` (all
/// processes), `{nodes}` and `{ppn}` (processes per node) where the launcher takes them; or
/// `lab`: mpirun on the client nodes of the lab the point's target is.
#[derive(Clone, Debug)]
pub enum Launcher {
    Words(Vec<String>),
    Lab,
}

impl Launcher {
    pub fn parse(text: &str) -> Result<Launcher, String> {
        if text == "lab" {
            return Ok(Launcher::Lab);
        }
        let words = shell_words::split(text).map_err(|e| format!("--launcher \"{text}\": {e}"))?;
        if words.is_empty() {
            return Err("--launcher is empty: give e.g. 'mpirun --hostfile HOSTS -np {np}', or lab".into());
        }
        if !words.iter().any(|w| PLACES.iter().any(|p| w.contains(p))) {
            return Err(format!(
                "--launcher \"{text}\" does not say how many processes: put {{np}} (all processes), {{nodes}} or {{ppn}} (processes per node) where the launcher takes them"
            ));
        }
        Ok(Launcher::Words(words))
    }

    /// The launcher's words for a point; `lab` is the lab of the point's target, if any.
    fn argv(&self, nodes: usize, per_node: usize, lab: Option<&str>) -> Result<Vec<String>, String> {
        match self {
            Launcher::Words(words) => Ok(words
                .iter()
                .map(|w| {
                    w.replace("{np}", &(nodes * per_node).to_string())
                        .replace("{nodes}", &nodes.to_string())
                        .replace("{ppn}", &per_node.to_string())
                })
                .collect()),
            Launcher::Lab => {
                let lab = lab.ok_or("--launcher lab needs a lab target (-t lab:NAME)")?;
                let state = dfsbench_lab::State::loaded(lab).map_err(|e| e.to_string())?;
                dfsbench_lab::mpirun(&state, Some(nodes), per_node).map_err(|e| e.to_string())
            }
        }
    }
}

/// How a child run ended.
pub struct Ended {
    /// The command, as a shell takes it.
    pub command: String,
    /// Exit code; None when a signal ended it.
    pub code: Option<i32>,
    /// What the child said went wrong on stderr, when it said anything.
    pub reason: Option<String>,
}

/// Run `workload` on `target` as `spread` says, writing the result to `result` and the child's
/// stderr to `log` (removed when empty). `interrupt` set by Ctrl-C is passed on as SIGINT.
#[allow(clippy::too_many_arguments)]
pub fn run(
    spread: Spread,
    launcher: Option<&Launcher>,
    lab: Option<&str>,
    workload: &Path,
    target: &str,
    result: &Path,
    log: &Path,
    interrupt: &AtomicBool,
) -> Result<Ended, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program to start a point: {e}"))?;
    let mut options = Vec::new();
    let mut argv: Vec<String> = match (spread, launcher) {
        (Spread::Nodes { nodes, per_node }, Some(l)) => l.argv(nodes, per_node, lab)?,
        (Spread::Nodes { .. }, None) => return Err("points over nodes need --launcher".into()),
        (Spread::LabClients(n), _) => {
            let lab = lab.ok_or("needs a lab target (-t lab:NAME) with client nodes")?;
            let state = dfsbench_lab::State::loaded(lab).map_err(|e| e.to_string())?;
            let p = dfsbench_lab::procs(&state, Some(n), 1).map_err(|e| e.to_string())?;
            options = p.options;
            options.extend(["--rank-loss".into(), "continue".into()]);
            p.enter
        }
        _ => Vec::new(),
    };
    argv.push(exe.display().to_string());
    argv.extend([
        "run".into(),
        workload.display().to_string(),
        "--target".into(),
        target.into(),
    ]);
    if let Spread::Procs(n) = spread {
        argv.extend(["--procs".into(), n.to_string()]);
    }
    argv.extend(options);
    argv.extend(["--out".into(), result.display().to_string(), "--quiet".into()]);
    // What the study records and quotes: a password in the target stays out of it.
    let command = redact(&shell_words::join(&argv));
    let log_file = std::fs::File::create(log).map_err(|e| format!("cannot create {}: {e}", log.display()))?;
    let mut child = Command::new(&argv[0])
        .args(&argv[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log_file)
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot start `{}`: {e}", argv[0]))?;
    let mut passed_on = false;
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| format!("waiting for `{command}`: {e}"))? {
            break status;
        }
        if !passed_on && interrupt.load(Ordering::SeqCst) {
            // SAFETY: signalling the child this function started and has not reaped.
            unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
            passed_on = true;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let text = std::fs::read_to_string(log).unwrap_or_default();
    if text.trim().is_empty() {
        let _ = std::fs::remove_file(log);
    }
    Ok(Ended {
        command,
        code: status.code(),
        reason: reason(&text).map(|r| format!("{} (log: {})", redact(&r), log.display())),
    })
}

/// The line of a child's stderr that says what went wrong: dfsbench's own last error line, or
/// else the first line with words (a launcher's headline, e.g. mpirun's "mpirun has detected an
/// attempt to run as root.", framed by rules of dashes).
fn reason(stderr: &str) -> Option<String> {
    let worded = || {
        stderr
            .lines()
            .map(str::trim)
            .filter(|l| l.chars().any(char::is_alphanumeric))
    };
    worded()
        .filter_map(|l| l.strip_prefix("dfsbench: "))
        .next_back()
        .or_else(|| worded().next())
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launcher_places_the_processes() {
        let l = Launcher::parse("mpirun --hostfile 'my hosts' --map-by ppr:{ppn}:node -np {np}").unwrap();
        assert_eq!(
            l.argv(4, 16, None).unwrap(),
            [
                "mpirun",
                "--hostfile",
                "my hosts",
                "--map-by",
                "ppr:16:node",
                "-np",
                "64"
            ]
        );
        let l = Launcher::parse("srun -N {nodes} --ntasks-per-node={ppn}").unwrap();
        assert_eq!(l.argv(2, 1, None).unwrap(), ["srun", "-N", "2", "--ntasks-per-node=1"]);
        // `lab`: the lab of the point's target, which must be one.
        let e = Launcher::parse("lab").unwrap().argv(2, 1, None).unwrap_err();
        assert!(e.contains("-t lab:NAME"), "{e}");
        for (bad, says) in [("", "empty"), ("mpirun -np 4", "{np}"), ("mpirun 'x", "--launcher")] {
            let e = Launcher::parse(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn the_reason_is_dfsbench_s_error_or_the_launcher_s_headline() {
        let mpirun = "-----\nmpirun has detected an attempt to run as root.\n\nRunning as root is discouraged\n-----\n";
        assert_eq!(
            reason(mpirun).as_deref(),
            Some("mpirun has detected an attempt to run as root.")
        );
        let ours = "warning: x\ndfsbench: cannot open /x: No such file\n";
        assert_eq!(reason(ours).as_deref(), Some("cannot open /x: No such file"));
        assert_eq!(reason("\n---\n"), None);
    }
}
