//! The `dfsbench` command.

#[cfg(test)]
mod build_info;
mod clean;
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

use clap::{CommandFactory, Parser};

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

/// The man page on stdout, or every command's page into `dir`.
fn man(dir: Option<&std::path::Path>) -> Result<(), Failure> {
    let written = match dir {
        Some(d) => clap_mangen::generate_to(Cli::command(), d)
            .map_err(|e| format!("cannot write the man pages into {}: {e}", d.display())),
        None => {
            let mut page = Vec::new();
            clap_mangen::Man::new(Cli::command())
                .render(&mut page)
                .expect("rendering into memory does not fail");
            return print_bytes(&page, "the man page");
        }
    };
    written.map_err(Failure::runtime)
}

/// Generated text on stdout; a reader that stops early (`| head`) is no error.
fn print_bytes(bytes: &[u8], what: &str) -> Result<(), Failure> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(Failure::runtime(format!("cannot print {what}: {e}")))
        }
        _ => Ok(()),
    }
}

fn dispatch(command: &Command) -> anyhow::Result<()> {
    match command {
        Command::Run(args) => run::run(args)?,
        Command::Targets => targets(),
        Command::Report(args) => report::report(args)?,
        Command::Compare(args) => report::compare(args)?,
        Command::Study(args) => study::study(args)?,
        Command::Lab(args) => lab::lab(args)?,
        Command::Clean { paths } => clean::clean(paths)?,
        Command::Completions { shell } => {
            let mut script = Vec::new();
            clap_complete::generate(*shell, &mut Cli::command(), "dfsbench", &mut script);
            print_bytes(&script, "the completion script")?
        }
        Command::Man { dir } => man(dir.as_deref())?,
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
            eprintln!("dfsbench: {}", failure::message_line(&one_line(&e)));
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
            eprintln!("dfsbench: {}", failure::message_line(&e.to_string()));
            ExitCode::from(exit_code(&e))
        }
    }
}
