//! How a command fails: a one-line message and its exit code, and with `--verbose` the full
//! text of the error behind it.
//!
//! The exit code is a property of the error's type: the libraries' errors that are the user's
//! input to fix (settings, workload and result files, a lab's name or layout) give 2, the ones
//! of a run or a lab that could not be done give 1. `main.rs` prints any error as
//! `dfsbench: MESSAGE` and exits with [`Failure::code`].

use dfsbench_backends::redact::redact;
use dfsbench_core::config::ConfigError;
use dfsbench_core::session::StartError;
use dfsbench_report::input::InputError;
use dfsbench_report::svg::RenderError;

/// The longest error line printed, in bytes: a message quoting a huge input (a value, a list of
/// every refused option of a long file) is cut, so the terminal gets a line, not megabytes.
const MAX_LINE: usize = 4096;

/// The line `main` prints for an error: one line, passwords masked, at most [`MAX_LINE`]
/// bytes, cut at a character boundary with a marker that says how much is left out.
pub fn message_line(text: &str) -> String {
    let line = redact(&dfsbench_backends::one_line(text));
    if line.len() <= MAX_LINE {
        return line;
    }
    let cut = (0..=MAX_LINE).rev().find(|&i| line.is_char_boundary(i)).unwrap_or(0);
    format!("{} [... {} more bytes]", &line[..cut], line.len() - cut)
}

/// `--verbose`: errors shortened to one line are also printed in full.
static VERBOSE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

pub fn set_verbose(on: bool) {
    VERBOSE.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// With `--verbose`, the full text of the last error that was shortened for its message.
pub fn print_detail() {
    if !VERBOSE.load(std::sync::atomic::Ordering::Relaxed) {
        return;
    }
    if let Some(detail) = dfsbench_backends::take_detail() {
        eprintln!("dfsbench: detail: {}", redact(&detail));
    }
}

/// Why the command failed. The binary's own messages say whether they are usage or runtime
/// errors; the libraries' errors keep their type.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// Bad input the binary found itself (flags that do not go together): exit code 2.
    #[error("{0}")]
    Usage(String),
    /// The run failed, or a file could not be written: exit code 1.
    #[error("{0}")]
    Runtime(String),
    /// Ctrl-C: exit code 130, as shells report SIGINT.
    #[error("interrupted: partial results written")]
    Interrupted,
    /// Flags or workload-file keys that do not validate: exit code 2.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A run that could not start: exit code 1.
    #[error(transparent)]
    Start(#[from] StartError),
    /// Result files `report` and `compare` cannot read: exit code 2.
    #[error(transparent)]
    Input(#[from] InputError),
    /// A figure of the HTML report that cannot be drawn from the results given: exit code 2.
    #[error("cannot make the report: {0}")]
    Render(#[from] RenderError),
    /// A lab command: 2 for a bad name, layout or value, else 1.
    #[error(transparent)]
    Lab(#[from] dfsbench_lab::Error),
    /// Said already (by this process, or by rank 0 for every rank): this exit code, no line.
    #[error("the failure was reported already")]
    Reported(u8),
}

impl Failure {
    /// Bad input: exit code 2.
    pub fn usage(message: String) -> Self {
        Failure::Usage(message)
    }
    /// The run could not start, or failed: exit code 1.
    pub fn runtime(message: String) -> Self {
        Failure::Runtime(message)
    }
    /// The exit code of the command that failed so.
    pub fn code(&self) -> u8 {
        match self {
            Failure::Usage(_) | Failure::Config(_) | Failure::Input(_) | Failure::Render(_) => 2,
            Failure::Lab(e) if e.is_usage() => 2,
            Failure::Runtime(_) | Failure::Start(_) | Failure::Lab(_) => 1,
            Failure::Interrupted => 130,
            Failure::Reported(code) => *code,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_messages_are_cut_at_a_character() {
        assert_eq!(message_line("short\nline"), "short\\nline");
        let long = "é".repeat(MAX_LINE);
        let line = message_line(&long);
        assert!(
            line.ends_with(&format!("[... {} more bytes]", MAX_LINE)),
            "{}",
            &line[MAX_LINE - 10..]
        );
        assert!(line.len() < MAX_LINE + 32);
    }
}
