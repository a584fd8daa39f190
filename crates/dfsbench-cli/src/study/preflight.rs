//! Before a study's first point: every target is opened as a run opens it (its run directory
//! made, then removed again), so a missing directory, a refused credential, an unreachable
//! endpoint or a missing bucket stops the study with one line, instead of an error in every
//! cell after hours of the other systems' points. (A `lab:` target that is not up was refused
//! already, when its URI was resolved.)

use std::time::Duration;

use dfsbench_backends::{with_storage, NetOptions, Storage as _, Target, RUN_PREFIX};
use dfsbench_core::session::new_run_id;

use super::args::StudyArgs;
use super::exec::LabEnv;
use super::manifest::System;
use crate::failure::Failure;
use crate::interrupt::INTERRUPT;

/// How long a target may take to answer the check: a point would wait as long to start.
const CHECK_LIMIT: Duration = Duration::from_secs(30);

/// Open and remove a run directory on every system's target; the first that fails ends the
/// study with one line.
pub fn check_targets(systems: &[System], a: &StudyArgs) -> Result<(), Failure> {
    let env = LabEnv::of(systems);
    for sys in systems {
        env.switch_to(sys);
        let unusable = |why: String| {
            let target = dfsbench_backends::redact::redact(&sys.target);
            // Most backends' messages name the target already.
            let named = if why.contains(&target) {
                why
            } else {
                format!("--target {target}: {why}")
            };
            Failure::runtime(format!("{named}; no point of the study was run"))
        };
        let target = Target::parse(&sys.target).map_err(|e| unusable(e.message))?;
        let net = NetOptions {
            create_bucket: a.create_bucket,
            retries: a.retries.unwrap_or(0),
            setup_limit: Some(CHECK_LIMIT),
            stop: Some(&INTERRUPT),
            overwrite_device: false,
        };
        let run_name = format!("{RUN_PREFIX}{}", new_run_id());
        let storage = target
            .open_run(&sys.target, &run_name, net)
            .map_err(|e| unusable(e.message))?;
        with_storage!(&storage, s => s.remove_run()).map_err(|e| {
            unusable(format!(
                "its run directory {run_name} could be made but not removed: {}",
                e.message
            ))
        })?;
    }
    env.restore();
    Ok(())
}
