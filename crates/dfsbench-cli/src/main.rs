//! The `dfsbench` command.

mod cli;
mod progress;
mod run;

use std::process::ExitCode;

use clap::Parser;

use dfsbench_backends::posix::remove_run_dir;
use dfsbench_backends::BACKENDS;

use cli::{Cli, Command};

/// Why the command failed, with the exit code it gets.
pub struct Failure {
    message: String,
    code: u8,
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

/// clap's errors in one line: the error, and a tip when clap has one.
fn one_line(err: &clap::Error) -> String {
    let text = err.render().to_string();
    let parts: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("Usage:") && !l.starts_with("For more information"))
        .collect();
    format!("{} (see dfsbench --help)", parts.join("; "))
}

fn targets() {
    println!("{:<8} {:<24} what", "backend", "target");
    for (name, uri, what) in BACKENDS {
        println!("{name:<8} {uri:<24} {what}");
    }
    println!();
    println!("capabilities       posix  mem");
    let rows = [
        ("directories", true, true),
        ("rename", true, true),
        ("append", true, true),
        ("ranged read", true, true),
        ("positional write", true, true),
        ("fsync", true, true),
        ("O_DIRECT", true, false),
        ("io_uring queue", true, false),
    ];
    for (cap, posix, mem) in rows {
        let yes = |b: bool| if b { "yes" } else { "no" };
        println!("{cap:<18} {:<6} {}", yes(posix), yes(mem));
    }
}

fn clean(paths: &[std::path::PathBuf]) -> Result<(), Failure> {
    let mut failed = 0;
    for p in paths {
        match remove_run_dir(p) {
            Ok(()) => println!("removed {}", p.display()),
            Err(e) => {
                eprintln!("dfsbench: {}", e.message);
                failed += 1;
            }
        }
    }
    if failed > 0 {
        return Err(Failure::runtime(format!(
            "{failed} of {} paths not removed",
            paths.len()
        )));
    }
    Ok(())
}

fn main() -> ExitCode {
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
            eprintln!("dfsbench: {}", one_line(&e));
            return ExitCode::from(2);
        }
    };
    let result = match &cli.command {
        Command::Run(args) => run::run(args),
        Command::Targets => {
            targets();
            Ok(())
        }
        Command::Clean { paths } => clean(paths),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            eprintln!("dfsbench: {}", f.message);
            ExitCode::from(f.code)
        }
    }
}
