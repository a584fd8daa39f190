//! The io job's phases: the unmeasured layout, pre-reads and engine probes, then each
//! pattern, with the parameters its result records.

use serde_json::json;

use crate::units::format_size;
use crate::workloads::shared::{RW_CLASSES, RW_SYNC_CLASSES};
use crate::workloads::{Phase, Timing};

use super::{IoJob, IoStep, Rw};

/// The phases of io job `io`, job `index` of the run.
pub(super) fn of(io: &IoJob, index: usize, job: &Timing) -> Vec<Phase> {
    let params = vec![
        ("rw", json!(io.rw.name())),
        ("bs", json!(io.bs)),
        ("size", json!(io.size)),
        ("iodepth", json!(io.iodepth)),
        ("direct", json!(io.direct)),
        ("shared_file", json!(io.shared_file)),
    ];
    let mut out = Vec::new();
    // Reads need the file laid out, unless an earlier pattern wrote all of it: one pass by
    // count writes every block, a time-limited one may not.
    let later_reads = job.duration.is_some() && io.then.iter().any(|rw| rw.reads());
    // A device is read as it is, as fio reads one; what a run verifies it writes first.
    let lay_out = !io.on_device || io.verify;
    if (io.rw.reads() || later_reads) && lay_out {
        let label = format!("layout {}", format_size(io.size));
        let layout = Phase::new(index, job, IoStep::Layout, "layout", label, RW_CLASSES, params.clone());
        out.push(layout.preparation());
    }
    for rw in std::iter::once(io.rw).chain(io.then.iter().copied()) {
        if io.pre_read && rw.reads() {
            let label = format!("pre-read {}", format_size(io.size));
            let step = IoStep::PreRead(rw);
            let pre_read = Phase::new(index, job, step, "pre-read", label, RW_CLASSES, params.clone());
            out.push(pre_read.preparation());
        }
        if io.probe {
            let label = format!("probe engines: {} {}", rw.name(), format_size(io.bs as u64));
            let probe = Phase::new(
                index,
                job,
                IoStep::Probe(rw),
                "probe",
                label,
                RW_CLASSES,
                params.clone(),
            );
            out.push(probe.preparation());
        }
        let mut params = params.clone();
        if matches!(rw, Rw::Readwrite | Rw::Randrw) {
            params.push(("rwmixread", json!(io.rwmixread)));
        }
        if io.pre_read && rw.reads() {
            params.push(("pre_read", json!(true)));
        }
        if let Some(sync) = io.sync_every.filter(|_| rw.writes()) {
            let call = if sync.data_only {
                "fdatasync_every"
            } else {
                "fsync_every"
            };
            params.push((call, json!(sync.writes)));
        }
        if io.norandommap && rw.random() {
            params.push(("norandommap", json!(true)));
        }
        if io.loops > 1 {
            params.push(("loops", json!(io.loops)));
        }
        if io.same_file {
            params.push(("same_file", json!(true)));
        }
        if !io.bssplit.is_empty() {
            params.push(("bssplit", json!(io.bssplit)));
        }
        if !io.bssplit_write.is_empty() && rw.writes() {
            params.push(("bssplit_write", json!(io.bssplit_write)));
        }
        if let Some(n) = &io.numa {
            params.push(("numa", json!(n)));
        }
        if let Some(p) = &io.prio {
            params.push(("prio", json!(p)));
        }
        if io.offset > 0 || io.offset_increment > 0 {
            params.push(("offset", json!(io.offset)));
            params.push(("offset_increment", json!(io.offset_increment)));
        }
        if io.seq_add != 0 && !rw.random() {
            params.push(("seq_add", json!(io.seq_add)));
        }
        if let Some(z) = io.zones {
            params.push(("zonesize", json!(z.size)));
            params.push(("zoneskip", json!(z.skip)));
        }
        if let Some(n) = io.verify_backlog.filter(|_| rw.writes()) {
            params.push(("verify_backlog", json!(n)));
        }
        if let Some(t) = &io.latency_target {
            params.push(("latency_target_ns", json!(t.target_ns)));
            params.push(("latency_window_s", json!(t.window.as_secs_f64())));
            params.push(("latency_percentile", json!(t.percentile)));
        }
        if io.blockalign > 0 && rw.random() {
            params.push(("blockalign", json!(io.blockalign)));
        }
        if let Some(bytes) = io.io_size {
            params.push(("io_size", json!(bytes)));
        }
        if let Some(t) = &io.think {
            params.push(("thinktime_us", json!(t.thinktime_us)));
            params.push(("thinktime_blocks", json!(t.thinktime_blocks)));
        }
        if let Some(n) = io.number_ios {
            params.push(("number_ios", json!(n)));
        }
        if let Some(f) = &io.flow {
            params.push(("flow", json!(f.flow)));
        }
        if io.fill_device {
            params.push(("fill_device", json!(true)));
        }
        params[0].1 = json!(rw.name());
        let bs = if io.bssplit.is_empty() {
            format_size(io.bs as u64)
        } else {
            let sizes: Vec<String> = io
                .bssplit
                .iter()
                .map(|(b, p)| format!("{}/{p}", format_size(*b as u64)))
                .collect();
            sizes.join(":")
        };
        let name = rw.name();
        let label = format!("{name} {bs} qd{}", io.iodepth);
        let classes = if io.sync_every.is_some() && rw.writes() {
            RW_SYNC_CLASSES
        } else {
            RW_CLASSES
        };
        let phase = Phase::new(index, job, IoStep::Run(rw), name, label, classes, params);
        // One pass over the worker's file (or region) in whole blocks: the progress line's
        // total, when the blocks are all one size.
        // (Filling ends when the target is full: no total.)
        out.push(match io.ops_per_pattern().filter(|_| !io.fill_device) {
            Some(n) => phase.counted(n),
            None => phase,
        });
    }
    out
}
