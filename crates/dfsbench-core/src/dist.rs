//! Random choices: operation kinds by weight and file sizes of the mix workload, and the
//! hot-set access of `--random-distribution` (which block or file a random pick lands on), all
//! drawn from a worker's seeded generator so a run can be repeated.

use rand::Rng;
use rand_distr::{Distribution, Normal, Zipf};
use serde::Serialize;

use crate::units::parse_size;

/// Why a `mix` or `sizes` list cannot be read: one line naming the entry and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct DistError(String);

impl From<String> for DistError {
    fn from(message: String) -> Self {
        DistError(message)
    }
}

impl From<&str> for DistError {
    fn from(message: &str) -> Self {
        DistError(message.to_string())
    }
}

/// Operations of the mix workload (warp/COSBench names are accepted as aliases).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MixOp {
    Read,
    Write,
    Stat,
    Delete,
    List,
}

impl MixOp {
    pub const ALL: [MixOp; 5] = [MixOp::Read, MixOp::Write, MixOp::Stat, MixOp::Delete, MixOp::List];

    pub const fn name(self) -> &'static str {
        match self {
            MixOp::Read => "read",
            MixOp::Write => "write",
            MixOp::Stat => "stat",
            MixOp::Delete => "delete",
            MixOp::List => "list",
        }
    }

    /// Recorder class of the operation: its index in [`MixOp::ALL`].
    pub fn class(self) -> usize {
        self as usize
    }

    fn parse(name: &str) -> Option<MixOp> {
        Some(match name {
            "read" | "get" => MixOp::Read,
            "write" | "put" => MixOp::Write,
            "stat" | "head" => MixOp::Stat,
            "delete" | "del" => MixOp::Delete,
            "list" => MixOp::List,
            _ => return None,
        })
    }
}

/// An operation mix: kinds with integer weights (percentages or any ratio).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Mix(pub Vec<(MixOp, u32)>);

impl Mix {
    /// Parse `read=80`, `write=20` entries.
    pub fn parse(entries: &[String]) -> Result<Mix, DistError> {
        let mut out: Vec<(MixOp, u32)> = Vec::new();
        for e in entries {
            let bad = || {
                format!("mix entry '{e}': write OP=WEIGHT with OP one of read, write, stat, delete, list (or get, put, head), e.g. read=80")
            };
            let (op, w) = e.split_once('=').ok_or_else(bad)?;
            let op = MixOp::parse(op.trim()).ok_or_else(bad)?;
            let w: u32 = w.trim().trim_end_matches('%').parse().map_err(|_| bad())?;
            if out.iter().any(|(o, _)| *o == op) {
                return Err(format!("mix names {} twice: give each operation once", op.name()).into());
            }
            if w > 0 {
                out.push((op, w));
            }
        }
        if out.is_empty() {
            return Err("mix has no operation with a weight above 0: e.g. --mix read=80,write=20".into());
        }
        let has = |op: MixOp| out.iter().any(|(o, _)| *o == op);
        if has(MixOp::Delete) && !has(MixOp::Write) {
            return Err("a mix that deletes needs writes to refill the pool: add e.g. write=10".into());
        }
        Ok(Mix(out))
    }

    fn total(&self) -> u32 {
        self.0.iter().map(|(_, w)| w).sum()
    }

    /// Draw an operation with probability weight / total.
    pub fn pick(&self, rng: &mut impl Rng) -> MixOp {
        let mut x = rng.gen_range(0..self.total());
        for &(op, w) in &self.0 {
            if x < w {
                return op;
            }
            x -= w;
        }
        unreachable!("x < total")
    }
}

/// File sizes of the mix workload.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum SizeDist {
    Fixed {
        size: u64,
    },
    /// Every size in [min, max] equally likely.
    Uniform {
        min: u64,
        max: u64,
    },
    /// log(size) uniform in [log min, log max]: as many files of 4-40 KiB as of 4-40 MiB.
    LogUniform {
        min: u64,
        max: u64,
    },
    /// Sizes with integer weights.
    Buckets {
        buckets: Vec<(u64, u32)>,
    },
}

impl SizeDist {
    /// Parse `4k` (fixed), `4k-1m` (uniform), `4k~1m` or `log:4k-1m` (log-uniform), or
    /// `4k:70`, `1m:30` (weighted buckets).
    pub fn parse(entries: &[String]) -> Result<SizeDist, DistError> {
        let size = |t: &str| parse_size(t).map_err(|e| format!("sizes: {e}"));
        if entries.iter().any(|e| e.contains(':') && !e.starts_with("log:")) {
            let buckets = entries
                .iter()
                .map(|e| {
                    let (s, w) = e.split_once(':').ok_or_else(|| {
                        format!("sizes entry '{e}': write SIZE:WEIGHT for every bucket, e.g. 4k:70,1m:30")
                    })?;
                    let w: u32 = w
                        .trim()
                        .trim_end_matches('%')
                        .parse()
                        .map_err(|_| format!("sizes entry '{e}': '{w}' is not a whole-number weight"))?;
                    Ok((size(s)?, w))
                })
                .collect::<Result<Vec<_>, String>>()?;
            if buckets.iter().all(|(_, w)| *w == 0) {
                return Err("sizes: every bucket has weight 0: give at least one a positive weight".into());
            }
            return Ok(SizeDist::Buckets { buckets });
        }
        let [one] = entries else {
            return Err(format!(
                "sizes {entries:?}: give one size (4k), a range (4k-1m uniform, 4k~1m or log:4k-1m log-uniform) or SIZE:WEIGHT buckets (4k:70,1m:30)"
            ).into());
        };
        let (log, text) = match one.strip_prefix("log:") {
            Some(rest) => (true, rest),
            None => (one.contains('~'), one.as_str()),
        };
        let Some((a, b)) = text.split_once(['-', '~']) else {
            return Ok(SizeDist::Fixed { size: size(text)? });
        };
        let (min, max) = (size(a)?, size(b)?);
        if min > max {
            return Err(format!("sizes '{one}': the range goes down: write the smaller size first").into());
        }
        if log && min == 0 {
            return Err(format!("sizes '{one}': a log-uniform range cannot start at 0: start at 1 or more").into());
        }
        Ok(if log {
            SizeDist::LogUniform { min, max }
        } else {
            SizeDist::Uniform { min, max }
        })
    }

    /// The largest size the distribution can draw.
    pub fn max(&self) -> u64 {
        match self {
            SizeDist::Fixed { size } => *size,
            SizeDist::Uniform { max, .. } | SizeDist::LogUniform { max, .. } => *max,
            SizeDist::Buckets { buckets } => buckets.iter().map(|b| b.0).max().unwrap_or(0),
        }
    }

    pub fn sample(&self, rng: &mut impl Rng) -> u64 {
        match *self {
            SizeDist::Fixed { size } => size,
            SizeDist::Uniform { min, max } => rng.gen_range(min..=max),
            SizeDist::LogUniform { min, max } => {
                let (lo, hi) = ((min as f64).ln(), (max as f64 + 1.0).ln());
                ((rng.gen_range(lo..hi)).exp() as u64).clamp(min, max)
            }
            SizeDist::Buckets { ref buckets } => {
                let total: u32 = buckets.iter().map(|b| b.1).sum();
                let mut x = rng.gen_range(0..total);
                for &(size, w) in buckets {
                    if x < w {
                        return size;
                    }
                    x -= w;
                }
                unreachable!("x < total")
            }
        }
    }
}

/// How random picks of blocks (io) and files (reads of files and mix) spread over their range,
/// as fio's `random_distribution`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Access {
    /// Every item equally likely (io: each block once per pass, fio's random map).
    Random,
    /// Zipf with exponent `theta`: item k is picked in proportion to 1 / k^theta.
    Zipf { theta: f64 },
    /// fio's Pareto: (n - 1) * u^(ln h / ln(1 - h)) for a uniform u; h = 0.2 puts ~80 % of the
    /// picks on ~20 % of the items.
    Pareto { h: f64 },
    /// Normal around the middle of the range with a standard deviation of `dev` percent of it.
    Normal { dev: f64 },
    /// fio's zoned: the range cut into zones in order, each taking its share of the picks,
    /// uniform within it.
    Zoned { zones: Vec<Zone> },
}

/// One zone of [`Access::Zoned`]: percentages of the picks and of the range.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Zone {
    pub access: u32,
    pub range: u32,
}

/// Standard deviation of `normal` without one, in percent of the range.
const NORMAL_DEV: f64 = 10.0;

impl Access {
    /// Parse `random`, `zipf:1.2`, `pareto:0.9`, `normal[:DEV]` or `zoned:60/10:30/20:10/`.
    pub fn parse(text: &str) -> Result<Access, DistError> {
        let bad = |why: &str| -> DistError {
            format!("random_distribution '{text}': {why}; give random, zipf:THETA (e.g. zipf:1.2), pareto:H (e.g. pareto:0.9), normal[:DEV%] or zoned:ACCESS%/RANGE%:... (e.g. zoned:60/10:40/90)").into()
        };
        if let Some(zones) = text.trim().strip_prefix("zoned:") {
            return parse_zones(zones).map_err(|why| bad(&why));
        }
        let (kind, value) = match text.split_once(':') {
            Some((k, v)) => (k.trim(), Some(v.trim().trim_end_matches('%'))),
            None => (text.trim(), None),
        };
        let number = |what: &str| -> Result<f64, DistError> {
            let v = value.ok_or_else(|| bad(&format!("{kind} needs its {what}")))?;
            v.parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| bad(&format!("'{v}' is not a number")))
        };
        match kind {
            "random" | "uniform" if value.is_none() => Ok(Access::Random),
            "zipf" => match number("exponent")? {
                t if t > 0.0 && t != 1.0 => Ok(Access::Zipf { theta: t }),
                _ => Err(bad("the zipf exponent must be above 0 and not 1 (as fio's)")),
            },
            "pareto" => match number("power")? {
                h if h > 0.0 && h < 1.0 => Ok(Access::Pareto { h }),
                _ => Err(bad("the pareto power must be between 0 and 1")),
            },
            "normal" | "gauss" => {
                let dev = if value.is_some() {
                    number("deviation")?
                } else {
                    NORMAL_DEV
                };
                if dev > 0.0 && dev <= 100.0 {
                    Ok(Access::Normal { dev })
                } else {
                    Err(bad(
                        "the normal deviation is a percentage of the range above 0 and at most 100",
                    ))
                }
            }
            _ => Err(bad("unknown distribution")),
        }
    }

    pub fn is_random(&self) -> bool {
        *self == Access::Random
    }
}

/// `60/10:30/20:10/`: each zone's share of the picks and of the range, in order; the last
/// zone's range may be left out (the rest of it), as in fio. Both make 100.
fn parse_zones(text: &str) -> Result<Access, String> {
    if text.contains(',') {
        return Err("zones for reads and writes apart: dfsbench has one set".into());
    }
    let parts: Vec<&str> = text.split(':').map(str::trim).collect();
    let mut zones = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        let (access, range) = part.split_once('/').ok_or("write each zone as ACCESS%/RANGE%")?;
        let pct = |v: &str| v.trim_end_matches('%').parse::<u32>().ok().filter(|p| *p <= 100);
        let access = pct(access).ok_or_else(|| format!("'{access}' is no percentage"))?;
        let range = match range.trim() {
            "" if i + 1 == parts.len() => {
                let given: u32 = zones.iter().map(|z: &Zone| z.range).sum();
                100u32
                    .checked_sub(given)
                    .ok_or("the zones' ranges make more than 100%")?
            }
            r => pct(r).ok_or_else(|| format!("'{r}' is no percentage"))?,
        };
        zones.push(Zone { access, range });
    }
    let (access, range): (u32, u32) = (
        zones.iter().map(|z| z.access).sum(),
        zones.iter().map(|z| z.range).sum(),
    );
    if access != 100 || range != 100 {
        return Err(format!(
            "the zones take {access}% of the picks and {range}% of the range: make both 100%"
        ));
    }
    if zones.iter().any(|z| z.access > 0 && z.range == 0) {
        return Err("a zone that takes picks needs some of the range".into());
    }
    Ok(Access::Zoned { zones })
}

/// Picks items of `0..n` by an [`Access`] distribution. The ranks it draws are scattered over
/// the range by a fixed permutation (as fio hashes them), so the hot items are not all at the
/// start of a file.
#[derive(Debug, Clone)]
pub(crate) struct Picker {
    n: u64,
    how: How,
    /// rank -> item: (rank * mul + add) mod n, mul coprime to n.
    mul: u64,
    add: u64,
}

#[derive(Debug, Clone)]
enum How {
    Random,
    Zipf(Zipf<f64>),
    Pareto(f64),
    Normal(Normal<f64>),
    /// Each zone's cumulative share of the picks (of 100) and its items, in order.
    Zoned(Vec<(u32, std::ops::Range<u64>)>),
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl Picker {
    /// A picker over `n` (at least 1) items; `seed` places the permutation.
    pub(crate) fn new(access: Access, n: u64, seed: u64) -> Picker {
        let n = n.max(1);
        let how = match access {
            Access::Random => How::Random,
            Access::Zipf { theta } => How::Zipf(Zipf::new(n, theta).expect("n >= 1, theta > 0")),
            Access::Pareto { h } => How::Pareto(h.ln() / (1.0 - h).ln()),
            Access::Normal { dev } => {
                How::Normal(Normal::new(n as f64 / 2.0, n as f64 * dev / 100.0).expect("finite deviation"))
            }
            Access::Zoned { zones } => How::Zoned(zone_ranges(&zones, n)),
        };
        // A multiplier near n / phi that shares no factor with n makes the map a permutation.
        let mut mul = ((n as f64 * 0.618_033_988_7) as u64).max(1);
        while gcd(mul, n) != 1 {
            mul += 1;
        }
        Picker {
            n,
            how,
            mul,
            add: seed % n,
        }
    }

    /// The next item.
    #[inline]
    pub(crate) fn pick(&self, rng: &mut impl Rng) -> u64 {
        let rank = match &self.how {
            How::Random => return rng.gen_range(0..self.n),
            // Zones are where fio puts them, in order from the start: not scattered.
            How::Zoned(zones) => {
                let roll = rng.gen_range(0..100);
                let (_, items) = zones
                    .iter()
                    .find(|(upto, _)| roll < *upto)
                    .unwrap_or(&zones[zones.len() - 1]);
                return rng.gen_range(items.clone());
            }
            How::Zipf(z) => z.sample(rng) as u64 - 1,
            How::Pareto(power) => ((self.n - 1) as f64 * rng.gen::<f64>().powf(*power)) as u64,
            How::Normal(d) => d.sample(rng).clamp(0.0, (self.n - 1) as f64) as u64,
        };
        ((u128::from(rank.min(self.n - 1)) * u128::from(self.mul) + u128::from(self.add)) % u128::from(self.n)) as u64
    }
}

/// The items of each zone of `0..n` (at least one each, the last up to n) with the picks'
/// cumulative share up to it.
fn zone_ranges(zones: &[Zone], n: u64) -> Vec<(u32, std::ops::Range<u64>)> {
    let (mut upto, mut range_upto, mut start) = (0, 0, 0);
    let mut out = Vec::with_capacity(zones.len());
    for (i, z) in zones.iter().enumerate() {
        upto += z.access;
        range_upto += u64::from(z.range);
        let end = if i + 1 == zones.len() {
            n
        } else {
            (n * range_upto / 100).max(start + 1).min(n)
        };
        let from = start.min(n - 1);
        out.push((upto, from..end.max(from + 1)));
        start = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::SeedableRng;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn mix_ratios_follow_the_weights() {
        let mix = Mix::parse(&strings(&["get=45", "put=15", "stat=30", "delete=5", "list=5"])).unwrap();
        let mut rng = SmallRng::seed_from_u64(7);
        let mut counts = [0u32; 5];
        let n = 100_000;
        for _ in 0..n {
            counts[mix.pick(&mut rng).class()] += 1;
        }
        for (op, w) in &mix.0 {
            let share = counts[op.class()] as f64 / n as f64 * 100.0;
            assert!(
                (share - *w as f64).abs() < 1.0,
                "{}: {share:.2}% for weight {w}",
                op.name()
            );
        }
        assert!(Mix::parse(&strings(&["read=80", "read=20"]))
            .unwrap_err()
            .to_string()
            .contains("twice"));
        assert!(Mix::parse(&strings(&["copy=1"]))
            .unwrap_err()
            .to_string()
            .contains("OP=WEIGHT"));
        assert!(Mix::parse(&strings(&["delete=100"])).is_err());
    }

    #[test]
    fn sizes_stay_in_their_distribution() {
        let mut rng = SmallRng::seed_from_u64(1);
        assert_eq!(
            SizeDist::parse(&strings(&["4k"])).unwrap(),
            SizeDist::Fixed { size: 4096 }
        );
        let u = SizeDist::parse(&strings(&["4k-1m"])).unwrap();
        assert_eq!(
            u,
            SizeDist::Uniform {
                min: 4096,
                max: 1 << 20
            }
        );
        let l = SizeDist::parse(&strings(&["4k~1m"])).unwrap();
        assert_eq!(l, SizeDist::parse(&strings(&["log:4k-1m"])).unwrap());
        let (mut below_64k_u, mut below_64k_l) = (0, 0);
        for _ in 0..10_000 {
            let (a, b) = (u.sample(&mut rng), l.sample(&mut rng));
            assert!((4096..=1 << 20).contains(&a) && (4096..=1 << 20).contains(&b));
            below_64k_u += (a < 65536) as u32;
            below_64k_l += (b < 65536) as u32;
        }
        // Uniform: ~6 % below 64 KiB; log-uniform: half (4k..64k is half the log range).
        assert!(below_64k_u < 1000, "{below_64k_u}");
        assert!((4500..5500).contains(&below_64k_l), "{below_64k_l}");
        let b = SizeDist::parse(&strings(&["4k:70", "1m:30"])).unwrap();
        let small = (0..10_000).filter(|_| b.sample(&mut rng) == 4096).count();
        assert!((6700..7300).contains(&small), "{small}");
        assert!(SizeDist::parse(&strings(&["1m-4k"]))
            .unwrap_err()
            .to_string()
            .contains("goes down"));
        assert!(SizeDist::parse(&strings(&["4k", "1m"])).is_err());
    }

    #[test]
    fn zoned_puts_each_share_of_the_picks_in_its_zone() {
        let zoned = Access::parse("zoned:50/5:30/15:20/").unwrap();
        let zones = |z: &[(u32, u32)]| Access::Zoned {
            zones: z.iter().map(|&(access, range)| Zone { access, range }).collect(),
        };
        assert_eq!(zoned, zones(&[(50, 5), (30, 15), (20, 80)]));
        let picker = Picker::new(zoned, 1000, 7);
        let mut rng = SmallRng::seed_from_u64(3);
        let mut counts = [0u32; 3];
        for _ in 0..100_000 {
            let i = picker.pick(&mut rng);
            counts[usize::from(i >= 50) + usize::from(i >= 200)] += 1;
        }
        for (got, want) in counts.iter().zip([50_000, 30_000, 20_000]) {
            assert!(got.abs_diff(want) < 1_500, "{counts:?}");
        }
        // A zone with no picks keeps its place in the range.
        let gap = Picker::new(Access::parse("zoned:50/10:0/80:50/10").unwrap(), 100, 0);
        assert!((0..10_000).map(|_| gap.pick(&mut rng)).all(|i| !(10..90).contains(&i)));
        for bad in [
            "zoned:50/5:30/15",
            "zoned:60/5:60/95",
            "zoned:100/0:0/100",
            "zoned:50/5,50/5",
            "zoned:x/5",
        ] {
            assert!(Access::parse(bad).is_err(), "{bad}");
        }
        // Fewer items than zones: every pick is still an item.
        let tiny = Picker::new(Access::parse("zoned:10/10:10/10:10/10:70/70").unwrap(), 2, 0);
        assert!((0..1000).all(|_| tiny.pick(&mut rng) < 2));
    }

    #[test]
    fn access_distributions_concentrate_on_a_hot_set() {
        let n = 10_000;
        let distinct = |a: Access| {
            let p = Picker::new(a, n, 99);
            let mut rng = SmallRng::seed_from_u64(3);
            let mut seen = std::collections::HashSet::new();
            for _ in 0..n {
                let x = p.pick(&mut rng);
                assert!(x < n);
                seen.insert(x);
            }
            seen.len()
        };
        let uniform = distinct(Access::Random);
        // n draws of n items touch 1 - 1/e of them, 63 %.
        assert!((6000..6600).contains(&uniform), "{uniform}");
        // Share of the uniform's distinct items each may reach at most.
        for (text, share) in [
            ("zipf:1.2", 0.5),
            ("pareto:0.9", 0.5),
            ("pareto:0.2", 0.5),
            ("normal", 0.75),
            ("normal:5", 0.5),
        ] {
            let d = distinct(Access::parse(text).unwrap());
            assert!(
                (d as f64) < uniform as f64 * share,
                "{text}: {d} distinct of {n} picks, uniform {uniform}"
            );
        }
        assert_eq!(Access::parse("random").unwrap(), Access::Random);
        assert_eq!(Access::parse("normal").unwrap(), Access::Normal { dev: 10.0 });
        for bad in ["zipf", "zipf:1", "zipf:x", "pareto:1.5", "normal:0", "lognormal:2"] {
            let e = Access::parse(bad).unwrap_err().to_string();
            assert!(e.starts_with(&format!("random_distribution '{bad}'")), "{e}");
        }
    }

    #[test]
    fn the_scatter_is_a_permutation() {
        for n in [1u64, 2, 6, 64, 1000] {
            let p = Picker::new(Access::Zipf { theta: 1.2 }, n, 7);
            let mut items: Vec<u64> = (0..n)
                .map(|r| ((u128::from(r) * u128::from(p.mul) + u128::from(p.add)) % u128::from(n)) as u64)
                .collect();
            items.sort();
            assert_eq!(items, (0..n).collect::<Vec<_>>(), "n = {n}");
        }
    }
}
