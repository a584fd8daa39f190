//! A fio command line is a fio job: `dfsbench run --name=t --rw=randread --bs=4k --size=1g`
//! (fio's own words, with `fio` replaced by `dfsbench run`) runs through the job-file reader,
//! with fio's defaults and fio's meaning of every option. A `run` with `--name` and no
//! `--workload` is one; its options are fio's, except dfsbench's own run, process, fault and
//! output flags (`-t`, `-o`, `--procs`, ...), which keep their meaning. An option that is
//! neither is fio's, and the reader names it.

use std::ffi::OsString;

use clap::CommandFactory;
use dfsbench_core::config::{FioArg, FIO_KEYS};

use crate::cli::Cli;

/// fio options that are flags: a bare `--time_based` sets them, and they never take the next
/// argument as their value.
const FIO_FLAGS: &[&str] = &[
    "stonewall",
    "wait_for_previous",
    "group_reporting",
    "new_group",
    "thread",
    "time_based",
    "direct",
    "buffered",
    "pre_read",
    "end_fsync",
    "fsync_on_close",
    "refill_buffers",
    "scramble_buffers",
    "invalidate",
    "norandommap",
    "randrepeat",
    "gtod_reduce",
    "unified_rw_reporting",
];

/// dfsbench's flags that keep their meaning beside fio's options: the help headings of what
/// is the run's, not the job's.
const OWN_HEADINGS: &[&str] = &["Run", "Processes", "Faults", "Output"];

/// The arguments for clap, and the fio options when the command line is a fio job.
pub struct Split {
    pub dfsbench: Vec<OsString>,
    pub fio: Option<Vec<FioArg>>,
}

/// Split `args` (the whole command line) when it is `run` with fio's options.
pub fn split(args: Vec<OsString>) -> Split {
    let text: Vec<Option<&str>> = args.iter().map(|a| a.to_str()).collect();
    let is_run = text.get(1).copied().flatten() == Some("run");
    let has = |pred: &dyn Fn(&str) -> bool| text.iter().skip(2).flatten().any(|a| pred(a));
    let fio_mode = is_run
        && has(&|a| a == "--name" || a.starts_with("--name="))
        && !has(&|a| a == "-w" || a == "--workload" || a.starts_with("--workload=") || a.starts_with("-w"));
    if !fio_mode {
        return Split {
            dfsbench: args,
            fio: None,
        };
    }
    let own = own_flags();
    let mut dfsbench: Vec<OsString> = args[..2].to_vec();
    let mut fio = Vec::new();
    // Arguments that follow one of dfsbench's options are its values.
    let mut to_dfsbench = false;
    let mut i = 2;
    while i < args.len() {
        let Some(arg) = text[i] else {
            // Not UTF-8: no fio option; clap says what is wrong with it.
            dfsbench.push(args[i].clone());
            i += 1;
            continue;
        };
        let Some(long) = arg.strip_prefix("--") else {
            let short = arg.starts_with('-') && arg.len() > 1;
            if short || to_dfsbench {
                to_dfsbench = short;
                dfsbench.push(args[i].clone());
            } else {
                // A value without an option: fio's reader names it.
                fio.push((i - 1, arg.to_string(), None));
            }
            i += 1;
            continue;
        };
        let (name, value) = match long.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (long, None),
        };
        let key = name.replace('-', "_");
        if name == "output-format" {
            match value.as_deref() {
                Some("json") => dfsbench.extend(["--format".into(), "json".into()]),
                Some("normal") => {}
                _ => fio.push((i - 1, "output-format".into(), value)),
            }
            to_dfsbench = false;
            i += 1;
            continue;
        }
        if !FIO_KEYS.contains(&key.as_str()) && own.iter().any(|o| o == name) {
            dfsbench.push(args[i].clone());
            to_dfsbench = value.is_none();
            i += 1;
            continue;
        }
        to_dfsbench = false;
        let takes_next = value.is_none()
            && !FIO_FLAGS.contains(&key.as_str())
            && text.get(i + 1).copied().flatten().is_some_and(|n| !n.starts_with('-'));
        let value = if takes_next {
            i += 1;
            text[i].map(str::to_string)
        } else {
            value
        };
        fio.push((i - usize::from(takes_next) - 1, key, value));
        i += 1;
    }
    Split {
        dfsbench,
        fio: Some(fio),
    }
}

/// The long names of `dfsbench run`'s own flags (and `--target`).
fn own_flags() -> Vec<String> {
    let cli = Cli::command();
    let Some(run) = cli.find_subcommand("run") else {
        return Vec::new();
    };
    run.get_arguments()
        .filter(|a| a.get_id() == "target" || a.get_help_heading().is_some_and(|h| OWN_HEADINGS.contains(&h)))
        .filter_map(|a| a.get_long().map(str::to_string))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split_of(line: &str) -> (Vec<String>, Option<Vec<FioArg>>) {
        let args: Vec<OsString> = line.split(' ').map(OsString::from).collect();
        let s = split(args);
        let own = s.dfsbench.iter().map(|a| a.to_string_lossy().into_owned()).collect();
        (own, s.fio)
    }

    #[test]
    fn a_run_with_name_and_no_workload_is_a_fio_job() {
        let (own, fio) = split_of(
            "dfsbench run --name=t --ioengine=libaio --iodepth 16 --rw=randread --group_reporting -q -o r.json --output-format=json --gtod_reduce=1 --procs 2",
        );
        assert_eq!(
            own,
            ["dfsbench", "run", "-q", "-o", "r.json", "--format", "json", "--procs", "2"]
        );
        let fio = fio.expect("a fio job");
        let keys: Vec<(&str, Option<&str>)> = fio.iter().map(|(_, k, v)| (k.as_str(), v.as_deref())).collect();
        assert_eq!(
            keys,
            [
                ("name", Some("t")),
                ("ioengine", Some("libaio")),
                ("iodepth", Some("16")),
                ("rw", Some("randread")),
                ("group_reporting", None),
                ("gtod_reduce", Some("1")),
            ]
        );
        // Positions are the arguments' (after `run`), as refusals name them.
        assert_eq!(fio[2].0, 3);
        assert_eq!(fio[3].0, 5);
    }

    #[test]
    fn dfsbench_commands_are_left_alone() {
        for line in [
            "dfsbench run -w io --name x --rw read",
            "dfsbench run --workload=io --name=x",
            "dfsbench run -t /tmp --bs 4k",
            "dfsbench study fio-matrix --name=x",
        ] {
            let (own, fio) = split_of(line);
            assert!(fio.is_none(), "{line}");
            assert_eq!(own.join(" "), line);
        }
    }

    #[test]
    fn fio_spellings_win_over_dfsbench_flags_of_the_same_name() {
        // --invalidate is a run flag of dfsbench and a job option of fio: here it is fio's.
        let (own, fio) = split_of("dfsbench run --name=x --invalidate=0 --directory /tmp/d --keep");
        assert_eq!(own, ["dfsbench", "run", "--keep"]);
        let keys: Vec<String> = fio.unwrap().into_iter().map(|(_, k, _)| k).collect();
        assert_eq!(keys, ["name", "invalidate", "directory"]);
    }
}
