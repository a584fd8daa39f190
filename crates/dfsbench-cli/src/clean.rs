//! `dfsbench clean`: remove run directories left by `--keep` or a killed run, on any backend,
//! and the datasets train's `--dataset` kept (they carry a run directory's marker).

use dfsbench_backends::clean_run;

use crate::failure::Failure;

/// Remove each run directory and say what went; every refusal is reported, the last one is
/// the command's error (exit code 1).
pub fn clean(runs: &[String]) -> Result<(), Failure> {
    let mut refused = Vec::new();
    for r in runs {
        match clean_run(r) {
            Ok(c) => crate::stdout::print(
                format!(
                    "removed {} ({} file{}, the marker included)\n",
                    c.run,
                    c.files,
                    if c.files == 1 { "" } else { "s" }
                ),
                "what was removed",
            )?,
            Err(e) => refused.push(e.message),
        }
    }
    let last = refused.pop();
    for r in &refused {
        eprintln!("dfsbench: {r}");
    }
    last.map_or(Ok(()), |r| Err(Failure::runtime(r)))
}
