//! A fault or probe command: `sh -c COMMAND` in a process group of its own, bounded in time,
//! killed with its whole group when it overstays or the run is stopped.

use std::io::{Read, Seek, SeekFrom};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::Duration;

use dfsbench_backends::clock::Instant;

/// What is kept of a command's output: its first lines, at most this many bytes.
const OUTPUT_HEAD: usize = 2048;
const OUTPUT_LINES: usize = 10;
/// How often a running command is checked for its end, its timeout and a stop.
const POLL: Duration = Duration::from_millis(20);

/// How a command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Ending {
    Exited(i32),
    /// Ended by a signal it did not get from us.
    Signalled(i32),
    /// Killed at its time limit.
    TimedOut,
    /// Killed because the run was stopped.
    Stopped,
    /// It could not be started (no `sh`, no memory for a process).
    NotStarted(String),
}

/// A command that ran.
#[derive(Debug, Clone)]
pub(super) struct Outcome {
    pub started: Instant,
    pub ended: Instant,
    pub ending: Ending,
    /// Its first lines of stdout and stderr together.
    pub output: String,
}

impl Outcome {
    pub(super) fn succeeded(&self) -> bool {
        self.ending == Ending::Exited(0)
    }

    pub(super) fn exit_code(&self) -> Option<i32> {
        match self.ending {
            Ending::Exited(c) => Some(c),
            _ => None,
        }
    }

    /// For events and messages: `exit 0 after 1.20 s`.
    pub(super) fn describe(&self, limit: Duration) -> String {
        let took = self.ended.duration_since(self.started).as_secs_f64();
        match &self.ending {
            Ending::Exited(c) => format!("exit {c} after {took:.2} s"),
            Ending::Signalled(s) => format!("killed by signal {s} after {took:.2} s"),
            Ending::TimedOut => format!("killed at its time limit of {} s", limit.as_secs_f64()),
            Ending::Stopped => format!("killed after {took:.2} s: the run was stopped"),
            Ending::NotStarted(why) => format!("could not start: {why}"),
        }
    }
}

/// Run `command` with `sh -c`, stdin from /dev/null, until it ends, `limit` passes, or `stop`
/// is set; a command still running then is killed with its process group. Its output goes to
/// an unlinked temporary file, so a daemon it leaves behind cannot block us on a pipe.
pub(super) fn run(command: &str, limit: Duration, stop: &AtomicBool) -> Outcome {
    let started = Instant::now();
    let not_started = |why: String| Outcome {
        started,
        ended: Instant::now(),
        ending: Ending::NotStarted(why),
        output: String::new(),
    };
    let out = match tempfile::tempfile() {
        Ok(f) => f,
        Err(e) => return not_started(format!("no temporary file for its output: {e}")),
    };
    let (Ok(stdout), Ok(stderr)) = (out.try_clone(), out.try_clone()) else {
        return not_started("cannot share its output file".into());
    };
    let child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .process_group(0)
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => return not_started(format!("sh: {e}")),
    };
    let pgid = child.id() as libc::pid_t;
    let ending = loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                break match (status.code(), status.signal()) {
                    (Some(c), _) => Ending::Exited(c),
                    (None, Some(s)) => Ending::Signalled(s),
                    (None, None) => Ending::Exited(-1),
                }
            }
            Ok(None) => {}
            Err(e) => break Ending::NotStarted(format!("cannot wait for it: {e}")),
        }
        let why = if started.elapsed() >= limit {
            Ending::TimedOut
        } else if stop.load(Relaxed) {
            Ending::Stopped
        } else {
            std::thread::sleep(POLL);
            continue;
        };
        // SAFETY: killpg has no memory preconditions; the group is the child's own.
        unsafe { libc::killpg(pgid, libc::SIGKILL) };
        let _ = child.wait();
        break why;
    };
    Outcome {
        started,
        ended: Instant::now(),
        ending,
        output: head(out),
    }
}

/// The first lines of what a command wrote.
fn head(mut file: std::fs::File) -> String {
    let mut buf = Vec::with_capacity(OUTPUT_HEAD);
    let _ = file.seek(SeekFrom::Start(0));
    let _ = file.take(OUTPUT_HEAD as u64).read_to_end(&mut buf);
    let text = String::from_utf8_lossy(&buf);
    text.lines().take(OUTPUT_LINES).collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    static NO: AtomicBool = AtomicBool::new(false);

    #[test]
    fn exit_codes_and_output_are_kept() {
        let ok = run("echo hello; echo oops >&2", Duration::from_secs(30), &NO);
        assert!(ok.succeeded(), "{ok:?}");
        assert_eq!(ok.output, "hello\noops");
        let failed = run("exit 3", Duration::from_secs(30), &NO);
        assert_eq!(failed.exit_code(), Some(3));
        let missing = run("/no/such/probe", Duration::from_secs(30), &NO);
        assert_eq!(missing.exit_code(), Some(127));
        assert!(missing.output.contains("not found"), "{}", missing.output);
    }

    #[test]
    fn a_command_past_its_limit_is_killed_with_its_children() {
        // The child of sh writes its pid, then both would sleep for an hour.
        let pidfile = tempfile::NamedTempFile::new().unwrap();
        let cmd = format!("sh -c 'echo $$ > {}; sleep 3600'; sleep 3600", pidfile.path().display());
        let o = run(&cmd, Duration::from_secs(2), &NO);
        assert_eq!(o.ending, Ending::TimedOut);
        let pid: i32 = std::fs::read_to_string(pidfile.path()).unwrap().trim().parse().unwrap();
        // The grandchild goes (or is a zombie of init, never running again). SIGKILL is sent
        // by then, but a loaded machine may take a while to run the exit: wait for it, bounded.
        let state = || std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let gone = |s: &str| s.is_empty() || s.contains(") Z");
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while !gone(&state()) && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        let last = state();
        assert!(gone(&last), "{last}");
    }

    #[test]
    fn a_stop_kills_a_running_command() {
        static STOP: AtomicBool = AtomicBool::new(false);
        let t = std::thread::spawn(|| run("sleep 3600", Duration::from_secs(3600), &STOP));
        std::thread::sleep(Duration::from_millis(100));
        STOP.store(true, Relaxed);
        assert_eq!(t.join().unwrap().ending, Ending::Stopped);
    }
}
