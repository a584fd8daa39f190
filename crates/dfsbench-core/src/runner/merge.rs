//! The ranks' parts of a phase merged up the rank tree into its result.

use std::time::Duration;

use dfsbench_backends::Storage;

use crate::cluster::tree::Tree;
use crate::cluster::{decode, Group, Member, TAG_STONEWALL};
use crate::gather::GatherClock;
use crate::part::{combine, Merger, RankPart, Subtotal};
use crate::plan::Phase;
use crate::stats::{Rereads, BATCH};
use dfsbench_result::{LostRank, PhaseCache, PhaseResult};

use super::phase::{marks, phase_end, PhaseEnd};
use super::{JobRun, Observer, Status};

impl<S: Storage> JobRun<'_, S> {
    /// The ranks merge their parts up the tree (cluster/tree.rs): each adds its children's
    /// subtotals to its own part and sends the sum to its parent; rank 0 turns the sum into the
    /// phase's result and tells every rank whether the job goes on. A rank that is lost or
    /// garbled ends the run with what arrived.
    pub(super) fn merge(
        &self,
        phase: &Phase,
        part: RankPart,
        cache: Option<PhaseCache>,
        observer: &mut dyn Observer,
        group: &mut Group,
        results: &mut Vec<PhaseResult>,
    ) -> Result<PhaseEnd, Status> {
        let (job, ranks, me) = (self.job, group.size(), group.rank());
        let members = group.members().to_vec();
        let tree = group.tree();
        let lost_before = group.lost().len();
        let what = format!("phase '{}'", phase.label);
        let mut merged = None;
        let mut clock = GatherClock::start();
        let round = group.reduce(&what, |children| {
            clock.arrived(&children);
            let mut merger = Merger::default();
            merger.add_part(part, &members);
            add_children(&mut merger, children, &members, me, tree, &what);
            if me != 0 {
                return serde_json::to_vec(&merger.subtotal()).expect("a subtotal serializes");
            }
            // A part that cannot be read ends the run for every rank, with what the others
            // measured.
            let bad = merger.unreadable.first().cloned();
            let threshold = stall_threshold(self.config.stall_threshold, phase.rate);
            let mut result = combine(phase, job, &mut merger, ranks, &members, self.run_start, threshold);
            let parts: Vec<&RankPart> = merger.ranks.iter().map(|l| &l.part).collect();
            let rereads = Rereads::sum(parts.iter().map(|p| &p.rereads));
            result.cache = cache.clone().map(|c| crate::cache::with_rereads(c, rereads));
            result.validity = marks(&result, self.caps);
            let stuck: u64 = parts.iter().map(|p| p.stuck).sum();
            if stuck > 0 {
                result.validity.push(format!(
                    "{stuck} worker{} stuck inside the storage at the end: {} last operations (less than {BATCH} each) and per-second series are left out",
                    if stuck == 1 { " was" } else { "s were" },
                    if stuck == 1 { "its" } else { "their" },
                ));
            }
            let end = match bad {
                None => phase_end(
                    &parts,
                    (&result, &self.job.workload),
                    phase,
                    self.config,
                    self.total_workers,
                    &self.run_path,
                ),
                Some(e) => PhaseEnd::failed(e),
            };
            let reply = serde_json::to_vec(&end).expect("a phase end serializes");
            clock.merged(parts.iter().map(|p| p.start_s), reply.len(), tree);
            merged = (!parts.is_empty()).then_some(result);
            reply
        });
        group.measuring(None);
        if let Some(result) = merged.as_mut() {
            result
                .validity
                .extend(group.lost()[lost_before..].iter().map(lost_mark));
        }
        // Stonewall notices that crossed the end of the phase.
        for r in 0..ranks {
            if r != group.rank() && (group.is_root() || r == 0) {
                group.drain(r, TAG_STONEWALL);
            }
        }
        let end = match round.map(|reply| group.decode::<PhaseEnd>(0, &format!("the end of {what}"), &reply)) {
            Ok(Ok(end)) => end,
            Ok(Err(e)) => {
                // Rank 0 cannot be understood: this rank leaves the group.
                group.break_off();
                return Err(Status::Failed(e.to_string()));
            }
            Err(lost) => {
                // Rank 0 keeps what the ranks that arrived measured.
                if let Some(result) = merged {
                    observer.phase_finished(&result);
                    results.push(result);
                }
                return Err(Status::Failed(lost.message));
            }
        };
        if let Some(mut result) = merged {
            if ranks > 1 {
                result.gather = clock.finish();
            }
            observer.phase_finished(&result);
            results.push(result);
        }
        Ok(end)
    }
}

/// What a phase's figures miss of a rank lost in it.
fn lost_mark(l: &LostRank) -> String {
    format!(
        "rank {} (host {}, pid {}) was lost at {:.1} s ({}): the others went on; its {} operations, {} and {} errors of this phase until its last report are not in these figures",
        l.rank,
        l.host,
        l.pid,
        l.at_s,
        l.why,
        l.ops,
        dfsbench_result::units::bytes(l.bytes as f64),
        l.errors
    )
}

/// Add the subtotals rank `me`'s tree children sent; one that cannot be read, or that holds
/// a rank not below its sender, is named in `merger.unreadable` and left out.
pub(super) fn add_children(
    merger: &mut Merger,
    children: Vec<(usize, Vec<u8>)>,
    members: &[Member],
    me: usize,
    tree: Tree,
    what: &str,
) {
    for (c, bytes) in children {
        match decode::<Subtotal>(members, me, c, &format!("its merged part of {what}"), &bytes) {
            Ok(sub) if sub.ranks.iter().all(|l| tree.is_below(l.part.rank, c)) => merger.add_subtotal(sub),
            Ok(_) => merger.unreadable.push(format!(
                "rank {c} sent a merged part of {what} with ranks that are not below it"
            )),
            Err(e) => merger.unreadable.push(e.to_string()),
        }
    }
}

/// The gap that counts as a stall in a phase. A paced phase completes an operation every
/// 1/rate seconds by design, so there it is also at least two of those intervals: a gap that
/// long means operations were due and none completed.
pub(super) fn stall_threshold(given: Duration, rate: Option<f64>) -> f64 {
    let paced = rate.filter(|r| *r > 0.0).map_or(0.0, |r| 2.0 / r);
    given.as_secs_f64().max(paced)
}
