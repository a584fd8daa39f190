//! Everything dfsbench prints on stdout goes through here. A reader that went away (`| head -1`)
//! is no error of the command: what is left to print is dropped, the command goes on to its
//! end (a run still saves its result) and exits as it would have, as ripgrep does.

use std::io::Write as _;

use crate::failure::Failure;

/// Write `bytes` on stdout; the system's error as it is.
pub fn write(bytes: impl AsRef<[u8]>) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes.as_ref()).and_then(|()| out.flush())
}

/// Print `text` (`what` it is, for the error): a closed pipe is not an error, a failing stdout
/// (`>/dev/full`) is.
pub fn print(text: impl AsRef<[u8]>, what: &str) -> Result<(), Failure> {
    match write(text) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(Failure::runtime(format!("cannot print {what}: {e}")))
        }
        _ => Ok(()),
    }
}
