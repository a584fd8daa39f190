//! The `dfsbench` command.

#[cfg(test)]
mod build_info;
mod clean;
mod cli;
mod failure;
mod fio_args;
mod first_run;
#[cfg(test)]
mod fuzz;
mod group;
mod history;
mod interrupt;
mod lab;
mod lab_host;
mod output;
mod progress;
mod report;
mod run;
mod stdout;
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

fn targets() -> Result<(), Failure> {
    let mut text = format!("{:<8} {:<24} what\n", "backend", "target");
    for b in BACKENDS {
        text += &format!("{:<8} {:<24} {}\n", b.name, b.uri, b.what);
    }
    let row = |label: &str, has: &dyn Fn(&dfsbench_backends::Capabilities) -> bool| {
        let cells: Vec<String> = BACKENDS
            .iter()
            .map(|b| format!("{:<6}", if has(&b.capabilities) { "yes" } else { "no" }))
            .collect();
        format!("{label:<18} {}\n", cells.join(" ").trim_end())
    };
    let names: Vec<String> = BACKENDS.iter().map(|b| format!("{:<6}", b.name)).collect();
    text += &format!("\n{:<18} {}\n", "capability", names.join(" ").trim_end());
    for cap in Capability::ALL {
        text += &row(cap.name(), &|c| c.has(cap));
    }
    text += &row("blocking calls", &|c| c.drive == dfsbench_backends::Drive::Blocking);
    stdout::print(text, "the targets")
}

/// The man page on stdout, or every command's page into `dir`.
fn man(dir: Option<&std::path::Path>) -> Result<(), Failure> {
    let Some(dir) = dir else {
        return stdout::print(roff(&clap_mangen::Man::new(Cli::command())), "the man page");
    };
    if !dir.is_dir() {
        return Err(Failure::runtime(format!(
            "cannot write the man pages into {}: not a directory; make it first",
            dir.display()
        )));
    }
    let mut top = Cli::command().disable_help_subcommand(true);
    top.build();
    // Every visible command's page, as clap_mangen::generate_to names them, each written by
    // the rule of every output (it would truncate a FIFO or a device of that name).
    let mut pending = vec![top];
    while let Some(cmd) = pending.pop() {
        pending.extend(cmd.get_subcommands().filter(|s| !s.is_hide_set()).cloned());
        let page = clap_mangen::Man::new(cmd);
        let path = dir.join(page.get_filename());
        dfsbench_result::files::write_output(&path, &roff(&page))
            .map_err(|e| Failure::runtime(format!("cannot write the man page {}: {e}", path.display())))?;
    }
    Ok(())
}

fn roff(page: &clap_mangen::Man) -> Vec<u8> {
    let mut bytes = Vec::new();
    page.render(&mut bytes).expect("rendering into memory does not fail");
    bytes
}

fn dispatch(command: &Command) -> anyhow::Result<()> {
    match command {
        Command::Run(args) => run::run(args)?,
        Command::Targets => targets()?,
        Command::Report(args) => report::report(args)?,
        Command::Compare(args) => report::compare(args)?,
        Command::Study(args) => study::study(args)?,
        Command::Lab(args) => lab::lab(args)?,
        Command::Clean { paths } => clean::clean(paths)?,
        Command::History(args) => history::history(args)?,
        Command::Completions { shell } => {
            let mut script = Vec::new();
            clap_complete::generate(*shell, &mut Cli::command(), "dfsbench", &mut script);
            stdout::print(&script, "the completion script")?
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
    dfsbench_core::install_panic_hook();
    // Ranks of two builds of one version must not run together either.
    dfsbench_core::cluster::set_build(env!("DFSBENCH_VERSION"));
    let split = fio_args::split(std::env::args_os().collect());
    let mut cli = match Cli::try_parse_from(split.dfsbench) {
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
            eprint_line(&format!("dfsbench: {}", failure::message_line(&one_line(&e))));
            return ExitCode::from(2);
        }
    };
    if let Command::Run(args) = &mut cli.command {
        args.fio_args = split.fio;
    }
    // A panic is a bug: one line that says so (the hook kept its place), not a backtrace.
    let result = std::panic::catch_unwind(|| dispatch(&cli.command))
        .unwrap_or_else(|payload| Err(Failure::runtime(dfsbench_core::internal_error(Some(payload.as_ref()))).into()));
    ExitCode::from(status_of(result))
}

/// The exit status of a command's result, once its error (if any) is said.
fn status_of(result: anyhow::Result<()>) -> u8 {
    match result {
        Ok(()) => 0,
        Err(e) => {
            if !matches!(e.downcast_ref::<Failure>(), Some(Failure::Reported(_))) {
                say(&e);
            }
            exit_code(&e)
        }
    }
}

/// The error's own line (`{}`, not anyhow's chain or backtrace). Messages quote arguments; a
/// URI's password must not reach the terminal.
fn say(e: &dyn std::fmt::Display) {
    eprint_line(&format!("dfsbench: {}", failure::message_line(&e.to_string())));
}

/// `line` and a newline on stderr in one write: the ranks of a run share one stderr, and a
/// line written in pieces (as `eprintln!` writes its arguments) interleaves with theirs.
pub(crate) fn eprint_line(line: &str) {
    let text = format!("{line}\n");
    let _ = std::io::Write::write_all(&mut std::io::stderr().lock(), text.as_bytes());
}

/// Say `failure` now, before the caller's process group ends (mpirun ends the whole job as
/// soon as one rank exits), and return what ends the command with its exit code.
pub(crate) fn say_now(failure: Failure) -> Failure {
    say(&failure);
    Failure::Reported(failure.code())
}

/// End the process now, as `main` would with `result`: for a run whose threads cannot be
/// joined (stuck in a storage call), so no destructor waits for them.
pub(crate) fn exit_now(result: Result<(), failure::Failure>) -> ! {
    let code = status_of(result.map_err(Into::into));
    let _ = std::io::Write::flush(&mut std::io::stdout());
    std::process::exit(code.into())
}
