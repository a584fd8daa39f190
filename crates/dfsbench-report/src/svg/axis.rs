//! Axes: linear or log scales, ticks where people read them (sizes measured, percentiles), and
//! the x range that puts ticks at given values.

use crate::fmt;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, LightPoints, Ranged};
use plotters::coord::types::RangedCoordf64;

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Scale {
    Linear,
    /// Values are drawn at log10(v); ticks on decades.
    Log10,
    /// Values are drawn at log2(v); ticks on powers of two.
    Log2,
}

/// How tick values are written.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Ticks {
    /// 500, 1.5k, 12k, 3M.
    Si,
    /// ns in: 850 ns, 10 µs, 1 ms.
    Latency,
    /// bytes in: 4 KiB, 1 MiB.
    Bytes,
    /// number of nines in: p0, p90, p99, p99.9.
    Nines,
    /// fraction in: 0%, 50%, 100%.
    Percent,
    /// plain numbers: 7210, 0.5 (seconds, factors).
    Plain,
    /// whole numbers only (worker index, workers).
    Integer,
}

impl Ticks {
    pub(super) fn format(self, v: f64) -> String {
        match self {
            Ticks::Si => fmt::si(v),
            Ticks::Latency => fmt::latency(v),
            Ticks::Bytes => fmt::bytes(v),
            // Whole nines only (p90, p99, p99.9): p68 or p97 read as noise.
            Ticks::Nines if (v - v.round()).abs() < 1e-6 => fmt::nines(v.round()),
            Ticks::Nines => String::new(),
            Ticks::Percent => format!("{:.0}%", v * 100.0),
            Ticks::Plain => fmt::plain(v),
            Ticks::Integer => {
                if (v - v.round()).abs() < 1e-6 {
                    format!("{}", v.round() as i64)
                } else {
                    String::new()
                }
            }
        }
    }
}

/// One axis: its description (with the unit), scale and tick style.
#[derive(Clone, Debug)]
pub(crate) struct Axis {
    pub label: String,
    pub scale: Scale,
    pub ticks: Ticks,
    /// Start a linear axis at 0.
    pub from_zero: bool,
    /// Fixed range (in data units), else from the data.
    pub range: Option<(f64, f64)>,
    /// Ticks at these values (data units), else where the scale puts them.
    pub at: Vec<f64>,
}

impl Axis {
    pub(crate) fn linear(label: impl Into<String>, ticks: Ticks) -> Axis {
        Axis {
            label: label.into(),
            scale: Scale::Linear,
            ticks,
            from_zero: true,
            range: None,
            at: Vec::new(),
        }
    }

    pub(crate) fn log10(label: impl Into<String>, ticks: Ticks) -> Axis {
        Axis {
            label: label.into(),
            scale: Scale::Log10,
            ticks,
            from_zero: false,
            range: None,
            at: Vec::new(),
        }
    }

    pub(crate) fn log2(label: impl Into<String>, ticks: Ticks) -> Axis {
        Axis {
            label: label.into(),
            scale: Scale::Log2,
            ticks,
            from_zero: false,
            range: None,
            at: Vec::new(),
        }
    }

    pub(crate) fn with_range(mut self, lo: f64, hi: f64) -> Axis {
        self.range = Some((lo, hi));
        self
    }

    /// Ticks at `values` only (the sizes a study measured), not at the scale's own steps.
    pub(crate) fn ticks_at(mut self, mut values: Vec<f64>) -> Axis {
        values.sort_by(f64::total_cmp);
        values.dedup();
        self.at = values;
        self
    }

    pub(crate) fn not_from_zero(mut self) -> Axis {
        self.from_zero = false;
        self
    }

    /// Data value to drawing position; None for values a log scale cannot show.
    pub(super) fn to_pos(&self, v: f64) -> Option<f64> {
        if !v.is_finite() {
            return None;
        }
        match self.scale {
            Scale::Linear => Some(v),
            Scale::Log10 => (v > 0.0).then(|| v.log10()),
            Scale::Log2 => (v > 0.0).then(|| v.log2()),
        }
    }

    pub(super) fn value_at(&self, p: f64) -> f64 {
        match self.scale {
            Scale::Linear => p,
            Scale::Log10 => 10f64.powf(p),
            Scale::Log2 => 2f64.powf(p),
        }
    }

    /// The drawing range for data positions `lo..hi`, and how many ticks to ask for on an axis
    /// of `px` pixels.
    pub(super) fn layout(&self, lo: f64, hi: f64, headroom: f64, px: u32) -> (f64, f64, usize) {
        let max_ticks = ((px / 50) as usize).clamp(4, 12);
        let (mut lo, mut hi) = match self.range {
            Some((a, b)) => (self.to_pos(a).unwrap_or(lo), self.to_pos(b).unwrap_or(hi)),
            None => (lo, hi),
        };
        if !lo.is_finite() || !hi.is_finite() {
            lo = 0.0;
            hi = 1.0;
        }
        match self.scale {
            Scale::Linear => {
                if self.range.is_none() {
                    if self.from_zero {
                        lo = lo.min(0.0);
                    }
                    let span = (hi - lo).abs();
                    if span == 0.0 {
                        let pad = if hi == 0.0 { 1.0 } else { hi.abs() * 0.1 };
                        lo -= if self.from_zero && lo == 0.0 { 0.0 } else { pad };
                        hi += pad;
                    } else {
                        hi += span * headroom;
                    }
                }
                (lo, hi, max_ticks.min(8))
            }
            Scale::Log10 | Scale::Log2 => {
                if self.range.is_none() {
                    lo = lo.floor();
                    hi = hi.ceil();
                    if hi - lo < 1.0 {
                        hi = lo + 1.0;
                    }
                    hi += (hi - lo) * headroom;
                }
                // Every decade (or power of two, up to what fits) gets its tick.
                let steps = (hi - lo).round() as usize + 1;
                let cap = if self.scale == Scale::Log10 { 12 } else { max_ticks };
                (lo, hi, steps.clamp(2, cap))
            }
        }
    }
}

/// A throughput axis: linear from 0 with a little room above the largest value, so bar lengths
/// and line heights compare as the rates do (log axes are kept for latency and sizes).
pub(crate) fn rate_axis(unit: &str, values: impl IntoIterator<Item = f64>) -> Axis {
    let hi = values.into_iter().filter(|v| v.is_finite()).fold(0.0f64, f64::max);
    let axis = Axis::linear(unit, Ticks::Si);
    if hi > 0.0 {
        axis.with_range(0.0, hi * 1.08)
    } else {
        axis
    }
}

/// A throughput axis for lines: as [`rate_axis`], but log10 (and labelled so) when the values
/// span more than a factor of 10, where a linear axis would lay the small ones within a tenth of
/// its height, unreadable (surfnet's 20 ms lines, 2.9 MiB/s under 106 on GlusterFS).
pub(crate) fn rate_axis_for_lines(unit: &str, values: impl IntoIterator<Item = f64>) -> Axis {
    let positive: Vec<f64> = values.into_iter().filter(|v| v.is_finite() && *v > 0.0).collect();
    let lo = positive.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = positive.iter().copied().fold(0.0f64, f64::max);
    if hi > 10.0 * lo {
        Axis::log10(format!("{unit} (log scale)"), Ticks::Si)
    } else {
        rate_axis(unit, positive)
    }
}

/// An x range whose ticks are chosen here: the values the axis names, or plotters' own.
pub(super) struct XRange {
    pub(super) inner: RangedCoordf64,
    pub(super) bold: Vec<f64>,
    pub(super) light: Vec<f64>,
}

impl XRange {
    /// Ticks on `x0..x1`: the axis's own values when it names them, else what plotters picks
    /// for `ticks` labels (and `light_lines` between them).
    pub(super) fn new(axis: &Axis, x0: f64, x1: f64, ticks: usize, light_lines: usize) -> XRange {
        let inner = RangedCoordf64::from(x0..x1);
        if axis.at.is_empty() {
            return XRange {
                bold: inner.key_points(ticks),
                light: inner.key_points(LightPoints::new(ticks, ticks * (light_lines + 1))),
                inner,
            };
        }
        let bold = axis
            .at
            .iter()
            .filter_map(|&v| axis.to_pos(v))
            .filter(|p| (x0..=x1).contains(p))
            .collect();
        XRange {
            inner,
            bold,
            light: Vec::new(),
        }
    }
}

impl Ranged for XRange {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.inner.map(value, limit)
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            self.light.clone()
        } else {
            self.bold.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.inner.range()
    }
}
