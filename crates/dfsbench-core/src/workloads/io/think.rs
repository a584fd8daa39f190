//! fio's thinktime: an application's processing between I/Os, as a pause after every so many
//! operations (spun on the CPU for its first part, slept for the rest), and fio's number_ios,
//! the most operations a worker issues in a pattern.

use std::time::Duration;

use dfsbench_backends::clock::Instant;
use serde::Serialize;

use crate::error::ConfigError;
use crate::load::sleep_until;
use crate::stats::PhaseControl;
use crate::units::parse_duration;

use super::Options;

/// A pause after every `blocks` operations, once they are in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Think {
    /// The whole pause, in microseconds (fio's unit).
    pub thinktime_us: u64,
    /// Its first part spent spinning.
    #[serde(skip_serializing_if = "is_zero")]
    pub thinktime_spin_us: u64,
    pub thinktime_blocks: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

impl Think {
    /// Read thinktime, thinktime_spin and thinktime_blocks (these two only with thinktime).
    pub(super) fn validate(own: &Options) -> Result<Option<Think>, ConfigError> {
        let micros = |key: &'static str, text: &Option<String>| -> Result<Option<u64>, ConfigError> {
            text.as_deref()
                .map(|t| {
                    parse_duration(t)
                        .map(|d| d.as_micros().min(u128::from(u64::MAX)) as u64)
                        .map_err(|e| ConfigError::value(key, format!("'{t}'"), e))
                })
                .transpose()
        };
        let pause = micros("thinktime", &own.thinktime)?;
        let spin = micros("thinktime_spin", &own.thinktime_spin)?;
        let Some(pause) = pause.filter(|p| *p > 0) else {
            if spin.is_some() || own.thinktime_blocks.is_some() {
                return Err("thinktime_spin and thinktime_blocks shape thinktime's pause: give thinktime too".into());
            }
            return Ok(None);
        };
        let spin = spin.unwrap_or(0);
        if spin > pause {
            return Err(format!(
                "thinktime_spin = {spin} us is longer than thinktime = {pause} us, of which it is the spun part: make it shorter"
            )
            .into());
        }
        let blocks = own.thinktime_blocks.unwrap_or(1);
        if blocks == 0 {
            return Err(ConfigError::value(
                "thinktime_blocks",
                0,
                "give 1 or more operations between pauses",
            ));
        }
        Ok(Some(Think {
            thinktime_us: pause,
            thinktime_spin_us: spin,
            thinktime_blocks: blocks,
        }))
    }

    /// Pause: spin, then sleep the rest. False when the phase must stop meanwhile.
    pub(super) async fn pause(&self, ctl: &PhaseControl, alone: bool) -> bool {
        let start = Instant::now();
        let spun = start + Duration::from_micros(self.thinktime_spin_us);
        while Instant::now() < spun {
            if ctl.should_stop(Instant::now()) {
                return false;
            }
            std::hint::spin_loop();
        }
        sleep_until(start + Duration::from_micros(self.thinktime_us), ctl, alone).await
    }
}
