//! The `dfsbench` command.

mod cli;
mod failure;
#[cfg(test)]
mod fuzz;
mod group;
mod interrupt;
mod lab;
mod output;
mod progress;
mod report;
mod run;
mod study;

use std::process::ExitCode;

use clap::Parser;

use dfsbench_backends::posix::remove_run_dir;
use dfsbench_backends::redact::redact;
use dfsbench_backends::{Capability, BACKENDS};

use cli::{Cli, Command};
use failure::Failure;

/// clap's errors in one line: the error, and a tip when clap has one.
fn one_line(err: &clap::Error) -> String {
    let text = err.render().to_string();
    let parts: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("Usage:") && !l.starts_with("For more information"))
        .map(|l| l.strip_prefix("error: ").unwrap_or(l))
        .collect();
    format!("{} (see dfsbench --help)", parts.join("; "))
}

fn targets() {
    println!("{:<8} {:<24} what", "backend", "target");
    for b in BACKENDS {
        println!("{:<8} {:<24} {}", b.name, b.uri, b.what);
    }
    let row = |label: &str, has: &dyn Fn(&dfsbench_backends::Capabilities) -> bool| {
        let cells: Vec<String> = BACKENDS
            .iter()
            .map(|b| format!("{:<6}", if has(&b.capabilities) { "yes" } else { "no" }))
            .collect();
        println!("{label:<18} {}", cells.join(" ").trim_end());
    };
    println!();
    let names: Vec<String> = BACKENDS.iter().map(|b| format!("{:<6}", b.name)).collect();
    println!("{:<18} {}", "capability", names.join(" ").trim_end());
    for cap in Capability::ALL {
        row(cap.name(), &|c| c.has(cap));
    }
    row("blocking calls", &|c| c.drive == dfsbench_backends::Drive::Blocking);
}

fn clean(paths: &[std::path::PathBuf]) -> Result<(), Failure> {
    let mut refused = Vec::new();
    for p in paths {
        match remove_run_dir(p) {
            Ok(()) => println!("removed {}", p.display()),
            Err(e) => refused.push(e.message),
        }
    }
    // Every refusal but the last goes out here; the last is the command's error line.
    let last = refused.pop();
    for r in &refused {
        eprintln!("dfsbench: {r}");
    }
    last.map_or(Ok(()), |r| Err(Failure::runtime(r)))
}

fn dispatch(command: &Command) -> anyhow::Result<()> {
    match command {
        Command::Run(args) => run::run(args)?,
        Command::Targets => targets(),
        Command::Report(args) => report::report(args)?,
        Command::Compare(args) => report::compare(args)?,
        Command::Study(args) => study::study(args)?,
        Command::Lab(args) => lab::lab(args)?,
        Command::Clean { paths } => clean(paths)?,
    }
    Ok(())
}

/// The exit code of a command's error: the [`Failure`] it is says; anything else is a
/// runtime error.
fn exit_code(e: &anyhow::Error) -> u8 {
    e.downcast_ref::<Failure>().map_or(1, Failure::code)
}

fn main() -> ExitCode {
    dfsbench_core::panics::install_panic_hook();
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e)
            if matches!(
                e.kind(),
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion
            ) =>
        {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            return ExitCode::from(2);
        }
        Err(e) => {
            eprintln!("dfsbench: {}", redact(&one_line(&e)));
            return ExitCode::from(2);
        }
    };
    // A panic is a bug: one line that says so (the hook kept its place), not a backtrace.
    let result = std::panic::catch_unwind(|| dispatch(&cli.command)).unwrap_or_else(|payload| {
        Err(Failure::runtime(dfsbench_core::panics::internal_error(Some(payload.as_ref()))).into())
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // The error's own line (`{}`, not anyhow's chain or backtrace). Messages quote
            // arguments; a URI's password must not reach the terminal.
            eprintln!("dfsbench: {}", redact(&dfsbench_backends::one_line(&e.to_string())));
            ExitCode::from(exit_code(&e))
        }
    }
}
