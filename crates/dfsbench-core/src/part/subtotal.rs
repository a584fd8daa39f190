//! The parts of several ranks merged into one, as a rank of the merge tree sends it to its
//! parent (cluster/tree.rs): histograms and series are added up (exactly), every rank's other
//! figures travel as they are, so that rank 0 computes from the subtotals of its children what
//! it computed from every rank's part. Rank 0 then decodes `k` sets of histograms instead of
//! `N - 1` (docs/scaling.md).

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::{peer_histogram, quantile, ClassPart, EndpointPart, RankPart};
use crate::cluster::Member;
use crate::stats::{add_vec, widen_series};
use dfsbench_result::histogram::{new_histogram, serialize};
use dfsbench_result::Series;

/// One rank's part without its histograms and series (they are in the subtotal's), with the
/// percentiles of every operation it did, for its entry in `processes`.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct RankLine {
    pub part: RankPart,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub max_ns: u64,
}

/// A gateway's sums over the ranks below, and where it first appeared (rank, place in that
/// rank's list): the flat merge lists gateways in that order.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct EndpointSum {
    pub first: (usize, usize),
    pub sums: EndpointPart,
}

/// A host's histogram of every operation of its ranks below, and its first rank.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct HostSum {
    pub host: String,
    pub first_rank: usize,
    pub hist: String,
}

/// What a rank of the merge tree sends its parent.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Subtotal {
    pub classes: Vec<ClassPart>,
    pub ttfb: Option<String>,
    pub service: Option<String>,
    #[serde(default)]
    pub wait: Option<String>,
    pub endpoints: Vec<EndpointSum>,
    pub hosts: Vec<HostSum>,
    pub series: Series,
    /// None when some rank below kept no 100 ms series.
    pub fine_series: Option<Series>,
    pub ranks: Vec<RankLine>,
    /// Why parts below could not be read (rank 0 ends the run with it, as with a lost rank).
    pub unreadable: Vec<String>,
}

/// The merge of some ranks' parts so far, histograms decoded.
pub(crate) struct Merger {
    pub classes: Vec<(Histogram<u64>, u64, u64)>,
    pub ttfb: Option<Histogram<u64>>,
    pub service: Option<Histogram<u64>>,
    pub wait: Option<Histogram<u64>>,
    pub endpoints: Vec<((usize, usize), EndpointPart, Histogram<u64>)>,
    pub hosts: Vec<(String, usize, Histogram<u64>)>,
    pub series: Series,
    pub fine_series: Option<Series>,
    /// Every rank's line, in the order they were added (`combine` sorts them).
    pub ranks: Vec<RankLine>,
    pub unreadable: Vec<String>,
}

impl Default for Merger {
    fn default() -> Merger {
        Merger {
            classes: Vec::new(),
            ttfb: None,
            service: None,
            wait: None,
            endpoints: Vec::new(),
            hosts: Vec::new(),
            series: Series::default(),
            fine_series: Some(Series::default()),
            ranks: Vec::new(),
            unreadable: Vec::new(),
        }
    }
}

fn add_into(into: &mut Option<Histogram<u64>>, hist: &Histogram<u64>) {
    // peer_histogram refuses other bounds than new_histogram's: adding cannot fail.
    into.get_or_insert_with(new_histogram)
        .add(hist)
        .expect("histograms share bounds");
}

/// `from` added interval by interval into `into`, as the flat merge adds every rank's; a rank
/// whose long phase widened its intervals sooner sets the width for both.
fn add_series(into: &mut Series, from: &Series) {
    let ratio = |wide: f64, narrow: f64| (wide / narrow).round().max(1.0) as usize;
    let widened;
    let from = if into.interval_s > from.interval_s && from.interval_s > 0.0 {
        widened = widen_series(from, ratio(into.interval_s, from.interval_s));
        &widened
    } else {
        if into.interval_s > 0.0 && from.interval_s > into.interval_s {
            *into = widen_series(into, ratio(from.interval_s, into.interval_s));
        }
        from
    };
    into.interval_s = from.interval_s;
    add_vec(&mut into.ops, &from.ops);
    add_vec(&mut into.bytes, &from.bytes);
    add_vec(&mut into.errors, &from.errors);
    add_vec(&mut into.compute_ns, &from.compute_ns);
    add_vec(&mut into.wait_ns, &from.wait_ns);
    for (kind, v) in &from.errors_by_kind {
        add_vec(into.errors_by_kind.entry(kind.clone()).or_default(), v);
    }
}

impl Merger {
    /// Add one rank's own part. `members` names its host.
    pub(crate) fn add_part(&mut self, mut part: RankPart, members: &[Member]) {
        // Decoded first: a part with one unreadable histogram adds nothing.
        let (classes, ttfb, service, wait, endpoints) = match decode_part(&part) {
            Ok(d) => d,
            Err(e) => return self.unreadable.push(format!("rank {}: {e}", part.rank)),
        };
        let mut own = new_histogram();
        for (c, (class, hist)) in part.classes.iter_mut().zip(&classes).enumerate() {
            own.add(hist).expect("histograms share bounds");
            self.add_class(c, hist, class.ops, class.bytes);
            class.hist.clear();
        }
        if let Some(h) = &ttfb {
            add_into(&mut self.ttfb, h);
        }
        if let Some(h) = &service {
            add_into(&mut self.service, h);
        }
        if let Some(h) = &wait {
            add_into(&mut self.wait, h);
        }
        for (at, (e, hist)) in std::mem::take(&mut part.endpoints)
            .into_iter()
            .zip(&endpoints)
            .enumerate()
        {
            self.add_endpoint((part.rank, at), e, hist);
        }
        let host = members
            .get(part.rank)
            .map_or_else(|| "?".to_string(), |m| m.host.clone());
        self.add_host(host, part.rank, &own);
        add_series(&mut self.series, &std::mem::take(&mut part.series));
        self.add_fine(part.fine_series.take().as_ref());
        (part.ttfb, part.service, part.wait) = (None, None, None);
        self.ranks.push(RankLine {
            part,
            p50_ns: quantile(&own, 0.5),
            p99_ns: quantile(&own, 0.99),
            max_ns: own.max(),
        });
    }

    /// Add a subtotal a tree child sent.
    pub(crate) fn add_subtotal(&mut self, sub: Subtotal) {
        if let Err(e) = self.fold_subtotal(sub) {
            self.unreadable.push(e);
        }
    }

    fn fold_subtotal(&mut self, sub: Subtotal) -> Result<(), String> {
        let first = sub.ranks.first().map_or(0, |l| l.part.rank);
        let at = |e: String| format!("the subtotal of ranks from {first}: {e}");
        let classes = sub
            .classes
            .iter()
            .map(|c| peer_histogram(&c.hist))
            .collect::<Result<Vec<_>, _>>()
            .map_err(at)?;
        let ttfb = sub.ttfb.as_deref().map(peer_histogram).transpose().map_err(at)?;
        let service = sub.service.as_deref().map(peer_histogram).transpose().map_err(at)?;
        let wait = sub.wait.as_deref().map(peer_histogram).transpose().map_err(at)?;
        let endpoints = sub
            .endpoints
            .iter()
            .map(|e| peer_histogram(&e.sums.hist))
            .collect::<Result<Vec<_>, _>>()
            .map_err(at)?;
        let hosts = sub
            .hosts
            .iter()
            .map(|h| peer_histogram(&h.hist))
            .collect::<Result<Vec<_>, _>>()
            .map_err(at)?;
        for (c, (class, hist)) in sub.classes.iter().zip(&classes).enumerate() {
            self.add_class(c, hist, class.ops, class.bytes);
        }
        if let Some(h) = &ttfb {
            add_into(&mut self.ttfb, h);
        }
        if let Some(h) = &service {
            add_into(&mut self.service, h);
        }
        if let Some(h) = &wait {
            add_into(&mut self.wait, h);
        }
        for (e, hist) in sub.endpoints.into_iter().zip(&endpoints) {
            self.add_endpoint(e.first, e.sums, hist);
        }
        for (h, hist) in sub.hosts.into_iter().zip(&hosts) {
            self.add_host(h.host, h.first_rank, hist);
        }
        add_series(&mut self.series, &sub.series);
        self.add_fine(sub.fine_series.as_ref());
        self.ranks.extend(sub.ranks);
        self.unreadable.extend(sub.unreadable);
        Ok(())
    }

    fn add_class(&mut self, c: usize, hist: &Histogram<u64>, ops: u64, bytes: u64) {
        while self.classes.len() <= c {
            self.classes.push((new_histogram(), 0, 0));
        }
        let (total, o, b) = &mut self.classes[c];
        total.add(hist).expect("histograms share bounds");
        *o += ops;
        *b += bytes;
    }

    fn add_endpoint(&mut self, first: (usize, usize), e: EndpointPart, hist: &Histogram<u64>) {
        match self.endpoints.iter_mut().find(|(_, s, _)| s.endpoint == e.endpoint) {
            Some((at, s, h)) => {
                *at = (*at).min(first);
                s.workers += e.workers;
                s.ops += e.ops;
                s.bytes += e.bytes;
                s.errors += e.errors;
                h.add(hist).expect("histograms share bounds");
            }
            None => {
                let mut h = new_histogram();
                h.add(hist).expect("histograms share bounds");
                let sums = EndpointPart {
                    hist: String::new(),
                    ..e
                };
                self.endpoints.push((first, sums, h));
            }
        }
    }

    fn add_host(&mut self, host: String, first_rank: usize, hist: &Histogram<u64>) {
        match self.hosts.iter_mut().find(|(h, _, _)| *h == host) {
            Some((_, first, h)) => {
                *first = (*first).min(first_rank);
                h.add(hist).expect("histograms share bounds");
            }
            None => {
                let mut h = new_histogram();
                h.add(hist).expect("histograms share bounds");
                self.hosts.push((host, first_rank, h));
            }
        }
    }

    fn add_fine(&mut self, fine: Option<&Series>) {
        match (self.fine_series.as_mut(), fine) {
            (Some(into), Some(from)) => add_series(into, from),
            _ => self.fine_series = None,
        }
    }

    /// The subtotal to send up the tree.
    pub(crate) fn subtotal(self) -> Subtotal {
        Subtotal {
            classes: self
                .classes
                .iter()
                .map(|(h, ops, bytes)| ClassPart {
                    ops: *ops,
                    bytes: *bytes,
                    hist: serialize(h),
                })
                .collect(),
            ttfb: self.ttfb.as_ref().map(serialize),
            service: self.service.as_ref().map(serialize),
            wait: self.wait.as_ref().map(serialize),
            endpoints: self
                .endpoints
                .into_iter()
                .map(|(first, sums, h)| EndpointSum {
                    first,
                    sums: EndpointPart {
                        hist: serialize(&h),
                        ..sums
                    },
                })
                .collect(),
            hosts: self
                .hosts
                .into_iter()
                .map(|(host, first_rank, h)| HostSum {
                    host,
                    first_rank,
                    hist: serialize(&h),
                })
                .collect(),
            series: self.series,
            fine_series: self.fine_series,
            ranks: self.ranks,
            unreadable: self.unreadable,
        }
    }
}

type Decoded = (
    Vec<Histogram<u64>>,
    Option<Histogram<u64>>,
    Option<Histogram<u64>>,
    Option<Histogram<u64>>,
    Vec<Histogram<u64>>,
);

/// A rank's histograms: per class, time to first byte, service time, accelerator waits, per
/// gateway.
fn decode_part(part: &RankPart) -> Result<Decoded, String> {
    let classes = part
        .classes
        .iter()
        .map(|c| peer_histogram(&c.hist))
        .collect::<Result<Vec<_>, _>>()?;
    let ttfb = part.ttfb.as_deref().map(peer_histogram).transpose()?;
    let service = part.service.as_deref().map(peer_histogram).transpose()?;
    let wait = part.wait.as_deref().map(peer_histogram).transpose()?;
    let endpoints = part
        .endpoints
        .iter()
        .map(|e| peer_histogram(&e.hist))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((classes, ttfb, service, wait, endpoints))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(interval_s: f64, ops: &[u64]) -> Series {
        Series {
            interval_s,
            ops: ops.to_vec(),
            bytes: ops.to_vec(),
            errors: vec![0; ops.len()],
            ..Default::default()
        }
    }

    #[test]
    fn ranks_whose_intervals_widened_at_different_times_add_up_at_the_widest() {
        let mut sum = Series::default();
        add_series(&mut sum, &series(1.0, &[1, 2, 3, 4]));
        add_series(&mut sum, &series(2.0, &[10, 20]));
        add_series(&mut sum, &series(1.0, &[100, 0, 0, 0, 5]));
        assert_eq!(sum.interval_s, 2.0);
        assert_eq!(sum.ops, [113, 27, 5]);
        assert_eq!(sum.bytes, sum.ops);
    }
}
