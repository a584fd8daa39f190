//! What to run: workload files and command-line flags, validated into [`RunConfig`].
//!
//! Both sources fill the same flat [`JobSpec`] (fio's flag names where the concept is the same),
//! so a flag and a workload-file key always mean one thing. Validation turns specs into typed
//! [`Job`]s and names the offending key and its fix on error.
//!
//! [`spec`]: what is written (flags and workload-file keys, every key optional); [`run`]: the
//! validated run and its jobs; [`file`]: workload files (TOML with `${VAR}`, or fio job files).

mod file;
mod fio;
mod run;
mod spec;
mod vars;

use serde::{Deserialize, Serialize};

pub use crate::error::{ConfigError, JobLabel};
pub use crate::job::Job;
pub use file::{load_workload_file, parse_workload_file};
pub use fio::{
    parse as parse_fio_job_file, parse_args as parse_fio_args, Arg as FioArg, Given as FioGiven,
    COMMAND_LINE as FIO_COMMAND_LINE, KEYS as FIO_KEYS,
};
pub use run::{validate, RunConfig, ServerPids};
pub use spec::{job_keys, run_keys, JobSettings, JobSpec, RunSpec};

/// The largest workload file read: real ones are a few hundred bytes.
pub const MAX_WORKLOAD_FILE: u64 = 1 << 20;

/// A workload file: run settings and `[[job]]` tables. It serializes back to TOML (keys that are
/// `None` are left out), which is how a study hands a point to `dfsbench run` in other processes.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadFile {
    pub target: Option<String>,
    #[serde(flatten)]
    pub run: RunSpec,
    #[serde(default, rename = "job")]
    pub jobs: Vec<JobSpec>,
}

/// Workers when neither flag nor file says.
pub(crate) const DEFAULT_WORKERS: usize = 4;
/// The lowest open-loop rate: one operation per 1000 s over all workers. Lower rates would
/// schedule the first operation beyond any phase (and, split over a million workers, beyond
/// what the clock can count).
pub(crate) const MIN_RATE: f64 = 0.001;
/// Errors after which a run stops, unless `max_errors` says otherwise.
pub(crate) const DEFAULT_MAX_ERRORS: u64 = 1000;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::{FileSet, MetaPhase, Rw, Workload};

    #[test]
    fn workload_file_round_trips_through_toml() {
        let file = WorkloadFile {
            target: None,
            run: RunSpec {
                null_tests: Some(true),
                retries: Some(3),
                ..Default::default()
            },
            jobs: vec![
                {
                    // `$` in a value comes back as written, not as a variable.
                    let mut job = JobSpec::new("mixture ${NOT_A_VARIABLE} $$1", "mix");
                    job.settings.workers = Some(1);
                    job.settings.duration = Some("1500ms".into());
                    job.workloads.mix.mix = Some(vec!["read=80".into(), "write=20".into()]);
                    job
                },
                {
                    let mut job = spec("iterate");
                    job.workloads.iterate.shuffle = Some(true);
                    job.workloads.iterate.iterations = Some(2);
                    job
                },
            ],
        };
        let text = file.to_toml();
        let back = parse_workload_file("w.toml", &text).unwrap();
        assert_eq!(format!("{:?}", back), format!("{:?}", file), "{text}");
        let config = |f: &WorkloadFile| serde_json::to_string(&validate(&f.run, &f.jobs).unwrap()).unwrap();
        assert_eq!(config(&back), config(&file));
    }

    #[test]
    fn endpoints_come_from_the_file_unless_the_flag_gives_them() {
        let file = parse_workload_file(
            "w.toml",
            "endpoints = [\"h1:9000\", \"h2:9000\"]\n[[job]]\nworkload = \"meta\"\n",
        )
        .unwrap();
        let from_file = validate(&file.run.merge(&RunSpec::default()), &file.jobs).unwrap();
        assert_eq!(from_file.endpoints, ["h1:9000", "h2:9000"]);
        let flag = RunSpec {
            endpoints: Some(vec!["h3:9000".into()]),
            ..Default::default()
        };
        assert_eq!(
            validate(&file.run.merge(&flag), &file.jobs).unwrap().endpoints,
            ["h3:9000"]
        );
        let none = validate(&RunSpec::default(), &file.jobs).unwrap();
        assert!(serde_json::to_value(&none).unwrap().get("endpoints").is_none());
    }

    fn spec(workload: &str) -> JobSpec {
        let mut job = JobSpec::default();
        job.settings.workload = Some(workload.into());
        job
    }

    #[test]
    fn defaults_are_filled() {
        let c = validate(&RunSpec::default(), &[spec("meta"), spec("files"), spec("io")]).unwrap();
        assert_eq!(c.jobs.len(), 3);
        assert!(
            matches!(&c.jobs[0].workload, Workload::Meta(m) if m.files == 1000 && !m.phases.contains(&MetaPhase::Mkdir))
        );
        assert!(
            matches!(&c.jobs[1].workload, Workload::Files(f) if f.sets == vec![FileSet { count: 100, size: 1 << 20 }])
        );
        assert!(matches!(&c.jobs[2].workload, Workload::Io(io) if io.bs == 4096 && io.rw == Rw::Read));
        assert_eq!(c.jobs[0].workers, DEFAULT_WORKERS);
    }

    #[test]
    fn rejects_keys_of_other_workloads() {
        let mut s = spec("meta");
        s.workloads.io.rw = Some("randread".into());
        let e = validate(&RunSpec::default(), &[s]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "job 1 (meta): 'rw' does not apply to the meta workload: remove it"
        );
    }

    #[test]
    fn parses_size_sets() {
        let mut s = spec("files");
        s.shared.sizes = Some(vec!["10000x0".into(), "1000x1k".into(), "1x10g".into()]);
        let c = validate(&RunSpec::default(), &[s]).unwrap();
        let Workload::Files(f) = &c.jobs[0].workload else {
            panic!()
        };
        assert_eq!(
            f.sets[2],
            FileSet {
                count: 1,
                size: 10 << 30
            }
        );
        let mut bad = spec("files");
        bad.shared.sizes = Some(vec!["1000-1k".into()]);
        assert!(validate(&RunSpec::default(), &[bad])
            .unwrap_err()
            .to_string()
            .contains("COUNTxSIZE"));
    }

    #[test]
    fn phases_run_in_canonical_order() {
        let mut s = spec("meta");
        s.shared.phases = Some(vec!["delete".into(), "create".into(), "stat".into()]);
        let c = validate(&RunSpec::default(), &[s]).unwrap();
        let Workload::Meta(m) = &c.jobs[0].workload else {
            panic!()
        };
        assert_eq!(m.phases, vec![MetaPhase::Create, MetaPhase::Stat, MetaPhase::Delete]);
    }

    #[test]
    fn variables_expand_in_values_not_in_comments() {
        let text = "# size = \"${UNSET_IN_A_COMMENT}\"\n[[job]]\nworkload = \"io\" # ${ALSO_UNSET}\nsize = \"${DFSBENCH_T_SIZE:-2m}\" # 2m\nname = \"a#b$$\"\n";
        let file = parse_workload_file("w.toml", text).unwrap();
        assert_eq!(file.jobs[0].workloads.io.size.as_deref(), Some("2m"));
        assert_eq!(file.jobs[0].settings.name.as_deref(), Some("a#b$"));
        let e = parse_workload_file(
            "w.toml",
            "[[job]]\nworkload = \"io\"\n\nsize = \"${DFSBENCH_T_UNSET}\"\n",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("w.toml: line 4: variable DFSBENCH_T_UNSET is not set"),
            "{e}"
        );
    }

    #[test]
    fn workload_file_errors_name_the_line() {
        let e = parse_workload_file("w.toml", "[[job]]\nworkload = \"meta\"\nwrkers = 3\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("w.toml: line 3:"), "{e}");
        assert!(e.contains("wrkers"), "{e}");
        let e = parse_workload_file("w.toml", "[[job]]\nfiles = [3\n")
            .unwrap_err()
            .to_string();
        assert!(!e.contains('\n'), "one line: {e}");
    }
}
