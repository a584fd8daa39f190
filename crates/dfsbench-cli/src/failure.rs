//! How a command fails: a one-line message and its exit code, and with `--verbose` the full
//! text of the error behind it.

use dfsbench_backends::redact::redact;

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

/// Why the command failed, with the exit code it gets.
pub struct Failure {
    pub message: String,
    pub code: u8,
}

impl Failure {
    /// Bad input: exit code 2.
    pub fn usage(message: String) -> Self {
        Failure { message, code: 2 }
    }
    /// The run could not start, or failed: exit code 1.
    pub fn runtime(message: String) -> Self {
        Failure { message, code: 1 }
    }
    /// Ctrl-C: exit code 130, as shells report SIGINT.
    pub fn interrupted() -> Self {
        Failure {
            message: "interrupted: partial results written".into(),
            code: 130,
        }
    }
}
