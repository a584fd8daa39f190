//! How long a point will take, and `--max-point-time`: a study point of count-based I/O with
//! added delay can run for hours (surfnet's randread-8k-20ms at scale 1: 262,144 reads of at
//! least one 20 ms round trip each, 1.5 h); say so before it starts, and let the user cap it.

use std::time::Duration;

use dfsbench_core::config::JobSpec;
use dfsbench_core::units::{parse_duration, parse_size};

use super::model::Point;

/// The least a point takes when every operation of its count-based I/O waits for one added
/// round trip (`2 x one_way_delay_ms`): (operations, time). None without added delay, where
/// the storage alone decides.
pub fn least_time(point: &Point) -> Option<(u64, Duration)> {
    let rtt = Duration::from_millis(2 * point.one_way_delay_ms?);
    // A worker's blocks go one after another (queue depth 1); workers run side by side.
    let ops: u64 = point.jobs.iter().filter_map(serial_blocks).max()?;
    Some((ops, rtt.saturating_mul(u32::try_from(ops).unwrap_or(u32::MAX))))
}

/// Blocks one worker of a count-based io job moves, one after another.
fn serial_blocks(job: &JobSpec) -> Option<u64> {
    let io = &job.workloads.io;
    let count_based = job.settings.duration.is_none() || job.settings.time_based == Some(false);
    if job.settings.workload.as_deref() != Some("io") || !count_based {
        return None;
    }
    let size = parse_size(io.size.as_deref()?).ok()?;
    let bs = parse_size(job.shared.bs.as_deref()?).ok()?.max(1);
    Some(size / bs / io.iodepth.unwrap_or(1).max(1) as u64)
}

/// `--max-point-time`: the point's count-based io and files jobs make one pass cut short at
/// `limit` (fio's runtime without time_based: each write or read phase, while a files job's
/// delete still removes every file written); other jobs keep their own end. Returns whether a
/// job was capped.
pub fn cap(point: &mut Point, limit: &str) -> bool {
    let mut capped = false;
    for job in &mut point.jobs {
        let passes = matches!(job.settings.workload.as_deref(), Some("io" | "files"));
        if passes && job.settings.duration.is_none() {
            job.settings.duration = Some(limit.to_string());
            job.settings.time_based = Some(false);
            capped = true;
        }
    }
    if capped {
        point.params += &format!(", each pass at most {limit} (--max-point-time)");
    }
    capped
}

/// `--max-point-time`'s value, checked: a time of at least a second (clap names the flag).
pub fn parse_limit(text: &str) -> Result<String, String> {
    match parse_duration(text) {
        Ok(d) if d >= Duration::from_secs(1) => Ok(text.to_string()),
        Ok(_) => Err("a point needs at least 1s: give 1s or more".into()),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::study::catalog;
    use crate::study::scale::Scale;

    fn surfnet_point(id: &str) -> Point {
        let s = catalog::build("surfnet", Scale::parse("1").unwrap(), &[]).unwrap();
        s.points.into_iter().find(|p| p.id == id).unwrap()
    }

    #[test]
    fn delayed_points_say_their_least_time_and_can_be_capped() {
        // 2 GiB in 8 KiB reads, each at least a 20 ms round trip: 1 h 27 min.
        let (ops, t) = least_time(&surfnet_point("randread-8k-20ms")).unwrap();
        assert_eq!(ops, 262_144);
        assert_eq!(t.as_secs(), 5242);
        assert!(least_time(&surfnet_point("randread-8k")).is_none(), "no added delay");

        let mut p = surfnet_point("randread-8k-20ms");
        assert!(cap(&mut p, "10m"));
        let job = &p.jobs[0];
        assert_eq!(
            (job.settings.duration.as_deref(), job.settings.time_based),
            (Some("10m"), Some(false))
        );
        dfsbench_core::config::validate(&Default::default(), &p.jobs).unwrap();
        assert!(least_time(&p).is_some(), "still count-based: one pass, cut short");
        assert!(parse_limit("0.5s").is_err() && parse_limit("soon").is_err());
    }

    #[test]
    fn whole_file_jobs_are_capped_and_timed_ones_keep_their_end() {
        // At scale 0.01 clients-sweep's large files run until steady, for at most 3 s.
        let s = catalog::build("clients-sweep", Scale::parse("0.01").unwrap(), &[]).unwrap();
        let mut p = s.points.into_iter().find(|p| p.id == "clients8").unwrap();
        let timed: Vec<_> = p.jobs.iter().map(|j| j.settings.duration.clone()).collect();
        assert!(cap(&mut p, "5s"));
        for (job, before) in p.jobs.iter().zip(timed) {
            match before {
                None => assert_eq!(
                    (job.settings.duration.as_deref(), job.settings.time_based),
                    (Some("5s"), Some(false)),
                    "{}",
                    job.settings.name.as_deref().unwrap_or("")
                ),
                Some(d) => assert_eq!(job.settings.duration, Some(d)),
            }
        }
        assert!(p.params.ends_with("each pass at most 5s (--max-point-time)"));
        dfsbench_core::config::validate(&Default::default(), &p.jobs).unwrap();
    }
}
