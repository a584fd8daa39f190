//! A toy workload, added the way docs/architecture.md says a workload is added: this module and
//! one line in the registry (`crates/dfsbench-core/src/workloads/mod.rs`). It is built only with
//! the `toy-workload` feature, which the CLI's tests turn on (tests/toy_workload.rs).
//!
//! Each worker makes one empty file, then stats it `toy_ops` times.

use dfsbench_backends::clock::Instant;
use dfsbench_backends::{Capability, Client};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::error::ConfigError;
use crate::stats::Recorder;
use crate::worker::{JobContext, Worker};
use crate::workloads::Phase;
use crate::workloads::{Kind, SharedOptions, Step};
use crate::workloads::{RunSettings, Timing};

/// The toy's own flag and workload-file key.
#[derive(clap::Args, Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[group(id = "toy-options")]
pub struct Options {
    /// Stats per worker (toy) [default: 10].
    #[arg(long, value_name = "N", help_heading = "toy")]
    pub toy_ops: Option<u64>,
}

/// The validated toy job.
#[derive(Debug, Clone, Serialize)]
pub struct ToyJob {
    pub toy_ops: u64,
}

/// The toy's one phase.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ToyStat;

impl Step for ToyStat {}

impl Kind for ToyJob {
    const NAME: &'static str = "toy";
    const SHARED: &'static [&'static str] = &[];
    type Options = Options;
    type Step = ToyStat;

    fn validate(own: &Options, _: &SharedOptions, _: &RunSettings) -> Result<ToyJob, ConfigError> {
        match own.toy_ops.unwrap_or(10) {
            0 => Err("toy_ops = 0: give the stats per worker (e.g. toy_ops = 10)".into()),
            toy_ops => Ok(ToyJob { toy_ops }),
        }
    }

    fn phases(&self, index: usize, job: &Timing) -> Vec<Phase> {
        let params = vec![("toy_ops", json!(self.toy_ops))];
        vec![Phase::new(index, job, ToyStat, "stat", "toy stat".into(), &["stat"], params).untimed()]
    }

    fn needs(&self) -> Vec<Capability> {
        Vec::new()
    }

    fn setup_dirs(&self, index: usize, _: usize) -> Box<dyn Iterator<Item = String> + '_> {
        Box::new(std::iter::once(format!("j{index}-toy")))
    }

    async fn run<C: Client>(
        &self,
        worker: &mut Worker<C>,
        ctx: &JobContext,
        _: ToyStat,
        _: Option<u64>,
        rec: &mut Recorder<'_>,
    ) {
        let path = format!("j{}-toy/w{}", ctx.job_index, worker.id);
        if let Err(e) = worker.client.create(&path).await {
            return rec.error(0, Instant::now(), &e, &path, None);
        }
        for _ in 0..self.toy_ops {
            let Some((intended, start)) = worker.begin(rec.ctl()).await else {
                break;
            };
            let result = worker.client.stat(&path).await;
            let end = Instant::now();
            match result {
                Ok(_) => rec.record_op(0, intended, start, end, 0),
                Err(e) => rec.error(0, end, &e, &path, None),
            }
        }
    }
}
