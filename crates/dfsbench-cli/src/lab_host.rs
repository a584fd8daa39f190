//! `dfsbench lab` for single-host servers on 127.0.0.1 (`up --dir`, `env`, `status --dir`,
//! `down --dir`, `selftest`) and the list of systems (`lab systems`).

use std::path::Path;

use dfsbench_lab::host;

use crate::Failure;

pub fn up(system: &str, layout: Option<&str>, dir: Option<&Path>) -> Result<(), Failure> {
    let started = host::up(system, layout, dir)?;
    let pids: Vec<String> = started.pids.iter().map(|p| p.to_string()).collect();
    crate::stdout::print(
        format!(
            "{system} ready in {:.3} s (state: {}; pids: {})\n",
            started.elapsed.as_secs_f64(),
            started.dir.display(),
            pids.join(" ")
        ),
        "the lab status",
    )
}

pub fn down(system: &str, dir: Option<&Path>) -> Result<(), Failure> {
    let line = if host::down(system, dir)? {
        format!("{system}: stopped\n")
    } else {
        format!("{system}: not running\n")
    };
    crate::stdout::print(line, "the lab status")
}

pub fn env(system: &str, dir: Option<&Path>) -> Result<(), Failure> {
    crate::stdout::print(host::env(system, dir)?, "the lab environment")
}

pub fn status(system: &str, dir: Option<&Path>) -> Result<(), Failure> {
    let Some((lines, ok)) = host::status(system, dir)? else {
        crate::stdout::print(format!("{system}: not running\n"), "the lab status")?;
        return Err(Failure::runtime(format!("{system} is not running")));
    };
    let head = if ok { "serving" } else { "NOT serving" };
    crate::stdout::print(format!("{system}: {head}\n{}\n", lines.join("\n")), "the lab status")?;
    if ok {
        Ok(())
    } else {
        Err(Failure::runtime(format!("{system} is not serving")))
    }
}

/// `lab install all`: what every single-host server needs (the tests' servers).
pub fn install_all() -> Result<(), Failure> {
    let mut text = String::new();
    for name in host::instances() {
        let installed = host::install(name)?;
        text += &if installed.is_empty() {
            format!("{name}: everything is installed\n")
        } else {
            format!("{name}: installed {}\n", installed.join(" "))
        };
    }
    crate::stdout::print(text, "the installs")
}

pub fn selftest(systems: &[String]) -> Result<(), Failure> {
    let outcomes = dfsbench_lab::selftest(systems)?;
    let mut text = String::new();
    let failed = outcomes.iter().filter(|(_, o)| o.is_err()).count();
    for (name, outcome) in &outcomes {
        match outcome {
            Ok(what) => text += &format!("PASS {name:<10} {what}\n"),
            Err(why) => text += &format!("FAIL {name:<10} {why}\n"),
        }
    }
    text += &format!("{} passed, {failed} failed\n", outcomes.len() - failed);
    crate::stdout::print(text, "the selftest")?;
    if failed == 0 {
        Ok(())
    } else {
        Err(Failure::runtime(format!("lab selftest: {failed} failed")))
    }
}

pub fn systems(packages: bool) -> Result<(), Failure> {
    let text = if packages {
        host::packages().iter().map(|p| format!("{p}\n")).collect()
    } else {
        dfsbench_lab::systems_table()
    };
    crate::stdout::print(text, "the lab systems")
}
