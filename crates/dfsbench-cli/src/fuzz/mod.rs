//! Generated hostile input (issues 13 and 32): the command line (faults and probes included),
//! target URIs, workload files (`${VAR}` too), fio job files, result files, `compare
//! --threshold`, `lab` arguments and output paths. Every input must end in a value or in an
//! error of one line, never a panic; an output path never changes another file.
//!
//! `cargo test` runs a bounded slice (256 cases a property); `bench/fuzz.sh` the long run
//! (`PROPTEST_CASES=100000`). Everything goes through the library functions, not the binary.

mod output_paths;
use output_paths::{write_to_decoy, Decoys, DECOYS, OUTPUTS};

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use clap::Parser;
use proptest::prelude::*;
use proptest::test_runner::Config;

use crate::cli::{Cli, Command};

/// Cases a property runs: 256 in the normal test run, `PROPTEST_CASES` when set.
fn config() -> Config {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(256);
    Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    }
}

/// Inputs tried and errors seen per property, printed at the end of a long run.
struct Tally {
    name: &'static str,
    cases: AtomicU64,
    errors: AtomicU64,
}

impl Tally {
    const fn new(name: &'static str) -> Tally {
        Tally {
            name,
            cases: AtomicU64::new(0),
            errors: AtomicU64::new(0),
        }
    }

    /// Count one case; an error must be one line that says something.
    fn check(&self, outcome: Result<(), String>) -> Result<(), TestCaseError> {
        self.cases.fetch_add(1, Relaxed);
        if let Err(e) = outcome {
            self.errors.fetch_add(1, Relaxed);
            prop_assert!(!e.contains('\n'), "an error of several lines: {e:?}");
            prop_assert!(e.trim().len() > 10, "an error that says nothing: {e:?}");
        }
        Ok(())
    }

    fn report(&self) {
        eprintln!(
            "fuzz {}: {} inputs, {} refused with one line, 0 panics",
            self.name,
            self.cases.load(Relaxed),
            self.errors.load(Relaxed)
        );
    }
}

/// Values people (and attackers) type: edges of every numeric type, floats that are not
/// numbers, sizes and durations with and without units, text that is no number at all.
fn value() -> impl Strategy<Value = String> {
    let fixed = prop::sample::select(vec![
        "0",
        "1",
        "-1",
        "2",
        "7",
        "1048576",
        "1048577",
        "4294967296",
        "9223372036854775807",
        "18446744073709551615",
        "18446744073709551616",
        "1e20",
        "1e11",
        "1e-300",
        "5e-324",
        "NaN",
        "inf",
        "-inf",
        "0.5",
        "1.5k",
        "4k",
        "1m",
        "10g",
        "99999999999t",
        "0x10",
        "30s",
        "2m",
        "500ms",
        "365d",
        "366d",
        "1h",
        "",
        " ",
        "read",
        "randrw",
        "meta",
        "files",
        "io",
        "mix",
        "iterate",
        "per-worker",
        "shared",
        "uniform",
        "poisson",
        "5%",
        "100%",
        "io_uring",
        "psync",
        "read=80,write=20",
        "get=1,put=0",
        "1000x4k,4x16m",
        "4k~1m",
        "log:4k-1m",
        "4k:70,1m:30",
        "create,stat,delete",
        "mkdir,rmdir",
        // --fault and the recovery probe: schedules and harmless commands, never run here.
        "read+1s: true",
        "write+0s: lab kill node2",
        "+1s: true",
        "read+-1s: true",
        "read+1s:",
        "read+99999999999d: true",
        "nosuchphase+1s: true",
        "test -e /proc/self",
        "-5%",
        "1e309%",
        "\u{0}",
        "é",
        "\u{202e}",
        "a\nb",
    ])
    .prop_map(str::to_string);
    prop_oneof![
        4 => fixed,
        1 => any::<u64>().prop_map(|n| n.to_string()),
        1 => any::<f64>().prop_map(|f| f.to_string()),
        1 => "[0-9a-z.,=:~%x-]{0,12}",
        1 => any::<String>(),
    ]
}

/// The flags of `dfsbench run` as clap declares them: (flags that take a value, switches).
/// Left out: --workload (drawn apart), --out (writes where the test does not clean),
/// --drop-caches (drops the whole machine's caches as root) and --help.
fn run_flags() -> (Vec<String>, Vec<String>) {
    let mut cli = <Cli as clap::CommandFactory>::command();
    cli.build();
    let run = cli.find_subcommand("run").expect("a run subcommand");
    let (mut flags, mut switches) = (Vec::new(), Vec::new());
    for arg in run.get_arguments().filter(|a| !a.is_positional()) {
        let name = match (arg.get_long(), arg.get_short()) {
            (Some(l), _) if ["workload", "out", "drop-caches", "help"].contains(&l) => continue,
            (_, Some(c)) => format!("-{c}"),
            (Some(l), None) => format!("--{l}"),
            (None, None) => continue,
        };
        if arg.get_num_args().is_some_and(|n| n.max_values() == 0) {
            switches.push(name);
        } else {
            flags.push(name);
        }
    }
    (flags, switches)
}

/// `dfsbench run` with flags drawn from the real ones, values from [`value`].
fn run_argv() -> impl Strategy<Value = Vec<String>> {
    let (flags, switches) = run_flags();
    let flag = (prop::sample::select(flags), value()).prop_map(|(f, v)| vec![f, v]);
    let switch = prop::sample::select(switches).prop_map(|s| vec![s]);
    let workload = prop::sample::select(dfsbench_core::workloads::names());
    (
        workload,
        prop::collection::vec(prop_oneof![4 => flag, 1 => switch], 0..6),
    )
        .prop_map(|(w, parts)| {
            let mut argv = vec!["dfsbench".to_string(), "run".into(), "-w".into(), w.into()];
            argv.extend(parts.into_iter().flatten());
            argv
        })
}

static PARSER: Tally = Tally::new("command line");

/// Parse and validate a command line as `dfsbench run` does before it touches any storage.
fn parse_and_validate(argv: &[String]) -> Result<(), String> {
    let cli = Cli::try_parse_from(argv).map_err(|e| crate::one_line(&e))?;
    match cli.command {
        Command::Run(args) => crate::run::build_config(&args).map(drop).map_err(|f| f.to_string()),
        _ => Ok(()),
    }
}

static URIS: Tally = Tally::new("target URI");

/// Target URIs: real schemes with generated hosts, ports, paths, users and options.
fn uri() -> impl Strategy<Value = String> {
    let scheme = prop::sample::select(vec![
        "s3", "swift", "hdfs", "webhdfs", "webdav", "webdavs", "alluxio", "mem", "file", "gopher", "",
    ]);
    let host = prop_oneof![
        Just(String::new()),
        Just("127.0.0.1".to_string()),
        Just("[::1]".to_string()),
        Just("[::1".to_string()),
        "[a-z0-9.-]{1,12}",
        any::<String>(),
    ];
    let port = prop_oneof![Just(String::new()), value().prop_map(|v| format!(":{v}"))];
    let user = prop_oneof![Just(String::new()), "[a-z]{1,4}(:[a-zA-Z0-9%@]{0,6})?@"];
    let key = prop::sample::select(vec![
        "endpoint",
        "region",
        "virtual_host",
        "auth",
        "tls",
        "part_size",
        "part_concurrency",
        "latency",
        "colour",
    ]);
    let query = prop::collection::vec((key, value()), 0..3).prop_map(|kv| {
        if kv.is_empty() {
            String::new()
        } else {
            let pairs: Vec<String> = kv.iter().map(|(k, v)| format!("{k}={v}")).collect();
            format!("?{}", pairs.join("&"))
        }
    });
    let path = "(/[a-zA-Z0-9._%-]{0,8}){0,3}";
    prop_oneof![
        8 => (scheme, user, host, port, path, query)
            .prop_map(|(s, u, h, p, path, q)| format!("{s}://{u}{h}{p}{path}{q}")),
        1 => any::<String>(),
    ]
}

fn parse_target(uri: &str) -> Result<(), String> {
    dfsbench_backends::Target::parse(uri).map(drop).map_err(|e| e.message)
}

static WORKLOADS: Tally = Tally::new("workload file");

/// A TOML value of any type a key could be given.
fn toml_value() -> impl Strategy<Value = String> {
    prop_oneof![
        value().prop_map(|v| format!("{v:?}")),
        value().prop_map(|v| v.to_string()),
        any::<i64>().prop_map(|n| n.to_string()),
        Just("9223372036854775807".to_string()),
        any::<f64>().prop_map(|f| format!("{f:?}")),
        any::<bool>().prop_map(|b| b.to_string()),
        prop::collection::vec(value(), 0..3).prop_map(|v| format!("{v:?}")),
        Just("[1e-300, 100]".to_string()),
        Just("{ a = 1 }".to_string()),
        // Variables: set, unset, defaults that nest, escapes, and an expansion far past the cap.
        prop::sample::select(vec![
            "${HOME}",
            "${NO_SUCH_VAR}",
            "${X:-${X}}",
            "$${HOME}",
            "${",
            "${1}",
            "${A:-"
        ])
        .prop_map(|v| format!("{v:?}")),
        Just(format!("{:?}", "${PATH}".repeat(20_000))),
    ]
}

/// Workload files: run keys, then one or two jobs of generated keys; or text that is no TOML.
fn workload_text() -> impl Strategy<Value = String> {
    let line = |mut keys: Vec<&'static str>| {
        // A key no struct declares must be refused with its name.
        keys.push("bogus");
        (prop::sample::select(keys), toml_value()).prop_map(|(k, v)| format!("{k} = {v}\n"))
    };
    let job = (
        prop::sample::select(dfsbench_core::workloads::names()),
        prop::collection::vec(line(dfsbench_core::config::job_keys()), 0..6),
    )
        .prop_map(|(w, lines)| format!("[[job]]\nworkload = \"{w}\"\n{}", lines.concat()));
    prop_oneof![
        8 => (prop::collection::vec(line(dfsbench_core::config::run_keys()), 0..3), prop::collection::vec(job, 0..3))
            .prop_map(|(run, jobs)| format!("{}{}", run.concat(), jobs.concat())),
        1 => any::<String>(),
    ]
}

fn parse_workload(text: &str) -> Result<(), String> {
    let file = dfsbench_core::config::parse_workload_file("w.toml", text).map_err(|e| e.to_string())?;
    dfsbench_core::config::validate(&file.run, &file.jobs)
        .map(drop)
        .map_err(|e| e.to_string())
}

static FIO_JOBS: Tally = Tally::new("fio job file");

/// A fio job file: sections of options dfsbench reads or refuses, with values that may not fit
/// (`value()`'s edges, fio's own spellings, variables), or any text at all.
fn fio_text() -> impl Strategy<Value = String> {
    // The options the reader knows, and some it refuses by name.
    let mut keys = dfsbench_core::config::FIO_KEYS.to_vec();
    keys.extend(["norandommap", "bssplit", "include", "$include"]);
    let fio_values = prop::sample::select(vec![
        "read",
        "randrw",
        "read:8k",
        "4k",
        "4k,8k",
        "4k-4k",
        "1MiB",
        "10G",
        "50%",
        "libaio",
        "null",
        "${X}",
        "${X:-1m}",
        "${",
        "/dev/sda",
        "a:b",
        "512",
        "101",
        "zipf:1.2",
        "pareto:0",
        "normal:-5",
        "zoned:50/5:50/95",
    ]);
    let value = prop_oneof![
        Just(None),
        value().prop_map(Some),
        fio_values.prop_map(|v| Some(v.to_string())),
    ];
    let line = (prop::sample::select(keys), value).prop_map(|(k, v)| match v {
        Some(v) => format!("{k}={v}\n"),
        None => format!("{k}\n"),
    });
    let section = (
        prop::sample::select(vec!["[global]", "[job]", "[a b]", "[]", "["]),
        prop::collection::vec(line, 0..6),
    )
        // A size first, so that many jobs get as far as validation.
        .prop_map(|(name, lines)| format!("{name}\nsize=64k\n{}", lines.concat()));
    // Many sections: the parser must stay linear (50,000 took 52 s of CPU once).
    let many = prop::sample::select(vec!["[global]\n", "[j]\nsize=4k\n", "[global]\nbs=4k\n[j]\n"])
        .prop_map(|s| s.repeat(20_000));
    prop_oneof![
        8 => prop::collection::vec(section, 0..4).prop_map(|s| s.concat()),
        1 => any::<String>(),
        1 => many,
    ]
}

fn parse_fio(text: &str) -> Result<(), String> {
    let set = |name: &str| (name == "X").then(|| "64k".to_string());
    let file = dfsbench_core::config::parse_fio_job_file("job.fio", text, set).map_err(|e| e.to_string())?;
    dfsbench_core::config::validate(&file.run, &file.jobs)
        .map(drop)
        .map_err(|e| e.to_string())
}

static RESULTS: Tally = Tally::new("result file");

/// A real result document with one generated change: a value replaced, a key removed, or the
/// text cut short.
fn result_text() -> impl Strategy<Value = String> {
    let doc = serde_json::to_value(dfsbench_report::synthetic::long_run(4, 2)).expect("a result as JSON");
    let replacement = prop_oneof![
        Just(serde_json::Value::Null),
        any::<i64>().prop_map(serde_json::Value::from),
        any::<f64>().prop_map(serde_json::Value::from),
        Just(serde_json::json!(-1)),
        Just(serde_json::json!(1e308)),
        Just(serde_json::json!(u64::MAX)),
        any::<String>().prop_map(serde_json::Value::from),
        Just(serde_json::json!([])),
        Just(serde_json::json!({})),
    ];
    (
        any::<prop::sample::Index>(),
        replacement,
        0..4u8,
        any::<prop::sample::Index>(),
    )
        .prop_map(move |(at, new, how, cut)| {
            let mut doc = doc.clone();
            let paths = leaves(&doc, String::new());
            let path = at.get(&paths).clone();
            match how {
                0 | 1 => {
                    if let Some(v) = doc.pointer_mut(&path) {
                        *v = new;
                    }
                }
                2 => remove(&mut doc, &path),
                _ => {}
            }
            let text = doc.to_string();
            if how == 3 {
                let mut end = cut.index(text.len());
                while !text.is_char_boundary(end) {
                    end -= 1;
                }
                return text[..end].to_string();
            }
            text
        })
}

/// JSON pointers of every value in `v`.
fn leaves(v: &serde_json::Value, here: String) -> Vec<String> {
    let mut out = vec![here.clone()];
    match v {
        serde_json::Value::Object(m) => {
            for (k, c) in m {
                out.extend(leaves(c, format!("{here}/{}", k.replace('~', "~0").replace('/', "~1"))));
            }
        }
        serde_json::Value::Array(a) => {
            for (i, c) in a.iter().enumerate() {
                out.extend(leaves(c, format!("{here}/{i}")));
            }
        }
        _ => {}
    }
    out
}

fn remove(doc: &mut serde_json::Value, path: &str) {
    let Some((parent, key)) = path.rsplit_once('/') else {
        return;
    };
    match doc.pointer_mut(parent) {
        Some(serde_json::Value::Object(m)) => {
            m.remove(&key.replace("~1", "/").replace("~0", "~"));
        }
        Some(serde_json::Value::Array(a)) => {
            if let Ok(i) = key.parse::<usize>() {
                if i < a.len() {
                    a.remove(i);
                }
            }
        }
        _ => {}
    }
}

/// Load a result file as `report` and `compare` do, then make their text views of it.
fn load_result(dir: &std::path::Path, text: &str) -> Result<(), String> {
    let path = dir.join("r.json");
    std::fs::write(&path, text).expect("a scratch file");
    let loaded = dfsbench_report::input::load(&[path.clone(), path]).map_err(|e| e.to_string())?;
    let runs = dfsbench_report::runs::runs(&loaded);
    let _ = dfsbench_report::markdown::report(&runs);
    let _ = dfsbench_report::long_csv(&runs);
    if let [a] = runs.as_slice() {
        let _ = dfsbench_report::compare::text(&dfsbench_report::compare::compare(a, a));
    }
    Ok(())
}

static THRESHOLDS: Tally = Tally::new("compare --threshold");
static LAB_ARGS: Tally = Tally::new("lab arguments");

/// `dfsbench lab SUB A B` with generated arguments, as the command checks them before it acts:
/// clap, the system's name, a delay. Nothing is brought up, faulted or torn down here.
fn lab_argv() -> impl Strategy<Value = Vec<String>> {
    let sub = prop::sample::select(vec![
        "install", "up", "down", "status", "fault", "delay", "limit", "probe", "rtt", "bogus",
    ]);
    let arg = prop_oneof![
        2 => prop::sample::select(vec!["gluster", "moosefs", "minio", "s3fs", "ceph", "nosuch", "--all", "--layout", "node2", "kill"])
            .prop_map(str::to_string),
        2 => value(),
    ];
    (sub, prop::collection::vec(arg, 0..4)).prop_map(|(s, args)| {
        let mut argv = vec!["dfsbench".to_string(), "lab".into(), s.into()];
        argv.extend(args);
        argv
    })
}

fn check_lab_args(argv: &[String]) -> Result<(), String> {
    let cli = Cli::try_parse_from(argv).map_err(|e| crate::one_line(&e))?;
    let Command::Lab(lab) = cli.command else {
        return Ok(());
    };
    match lab.command {
        crate::lab::LabCommand::Delay { system, delay } => {
            dfsbench_lab::system(&system).map_err(|e| e.to_string())?;
            dfsbench_lab::delay::parse_delay(&delay)
                .map(drop)
                .map_err(|e| e.to_string())
        }
        crate::lab::LabCommand::Fault { system, .. } | crate::lab::LabCommand::Limit { system, .. } => {
            dfsbench_lab::system(&system).map(drop).map_err(|e| e.to_string())
        }
        _ => Ok(()),
    }
}

#[test]
fn output_paths() {
    let decoys = Decoys::new();
    let name = prop_oneof![
        4 => prop::sample::select(DECOYS.to_vec()).prop_map(str::to_string),
        1 => prop::sample::select(DECOYS.to_vec()).prop_map(|d| format!("{d}/x")),
        1 => "[a-z]{1,8}",
    ];
    proptest!(config(), |(name in name, bytes in prop::collection::vec(any::<u8>(), 0..64))| {
        OUTPUTS.check(write_to_decoy(&decoys, &name, &bytes))?;
    });
    OUTPUTS.report();
}

#[test]
fn compare_thresholds() {
    proptest!(config(), |(v in value())| {
        THRESHOLDS.check(crate::report::parse_threshold(&v).map(drop))?;
    });
    THRESHOLDS.report();
}

#[test]
fn lab_arguments() {
    proptest!(config(), |(argv in lab_argv())| {
        LAB_ARGS.check(check_lab_args(&argv))?;
    });
    LAB_ARGS.report();
}

#[test]
fn command_lines() {
    proptest!(config(), |(argv in run_argv())| {
        PARSER.check(parse_and_validate(&argv))?;
    });
    PARSER.report();
}

#[test]
fn target_uris() {
    proptest!(config(), |(u in uri())| {
        URIS.check(parse_target(&u))?;
    });
    URIS.report();
}

#[test]
fn workload_files() {
    proptest!(config(), |(text in workload_text())| {
        WORKLOADS.check(parse_workload(&text))?;
    });
    WORKLOADS.report();
}

#[test]
fn fio_job_files() {
    proptest!(config(), |(text in fio_text())| {
        FIO_JOBS.check(parse_fio(&text))?;
    });
    FIO_JOBS.report();
}

#[test]
fn result_files() {
    let dir = tempfile::tempdir().expect("a scratch dir");
    proptest!(config(), |(text in result_text())| {
        RESULTS.check(load_result(dir.path(), &text))?;
    });
    RESULTS.report();
}
