//! Numbers as people write and read them, in one place for every crate: sizes and durations
//! parsed (`4k`, `1m`, `30s`), and counts, rates, sizes, latencies and percentiles formatted
//! for tables, charts and messages.

use std::time::Duration;

/// Parse a byte count. Suffixes follow fio (`kb_base=1024`): `k`, `K`, `KB`, `KiB` all mean
/// 1024; `m`, `g`, `t` likewise. A plain number is an exact byte count.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let digits_end = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, suffix) = t.split_at(digits_end);
    let bad = || format!("invalid size '{text}': write a byte count like 4096, 4k, 1m, 10g");
    if num.is_empty() {
        return Err(bad());
    }
    let shift = match suffix.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => return Err(bad()),
    };
    if num.contains('.') {
        let v: f64 = num.parse().map_err(|_| bad())?;
        let bytes = v * (1u64 << shift) as f64;
        if bytes >= u64::MAX as f64 {
            return Err(format!("size '{text}' is too large"));
        }
        if bytes.fract() != 0.0 {
            return Err(format!("size '{text}' is not a whole number of bytes"));
        }
        return Ok(bytes as u64);
    }
    let v: u64 = num.parse().map_err(|_| bad())?;
    v.checked_mul(1u64 << shift)
        .ok_or_else(|| format!("size '{text}' is too large"))
}

/// The longest duration anything accepts: a year. The run's clock counts nanoseconds in 64 bits
/// from boot (about 584 years), so a start plus a ramp, a duration and a steady-state window
/// can never overflow it; no benchmark phase needs longer.
pub const MAX_DURATION: Duration = Duration::from_secs(365 * 24 * 3600);

/// Parse a duration: `30s`, `2m`, `1h`, `500ms`, or a plain number of seconds as in fio; at
/// most [`MAX_DURATION`].
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let bad = || format!("invalid duration '{text}': write e.g. 30s, 2m, 500ms or 1h");
    let d = match t.parse::<f64>() {
        // `NaN`, `inf` and negative numbers parse as floats but are no durations.
        Ok(secs) if !(secs.is_finite() && secs >= 0.0) => return Err(bad()),
        Ok(secs) => Duration::try_from_secs_f64(secs).unwrap_or(Duration::MAX),
        Err(_) => humantime::parse_duration(t).map_err(|_| bad())?,
    };
    if d > MAX_DURATION {
        return Err(format!("duration '{text}' is longer than a year: give at most 365d"));
    }
    Ok(d)
}

/// A byte count for people: exact for round binary sizes (`4 KiB`), else plain bytes.
pub fn format_size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut unit = 0;
    let mut v = bytes;
    while unit < UNITS.len() - 1 && v >= 1024 && v.is_multiple_of(1024) {
        v /= 1024;
        unit += 1;
    }
    format!("{v} {}", UNITS[unit])
}

/// A duration for tables: `850 ns`, `12.3 us`, `4.56 ms`, `1.23 s`.
pub fn format_ns(ns: u64) -> String {
    let v = ns as f64;
    if ns < 1_000 {
        format!("{ns} ns")
    } else if ns < 1_000_000 {
        format!("{:.1} us", v / 1e3)
    } else if ns < 1_000_000_000 {
        format!("{:.2} ms", v / 1e6)
    } else {
        format!("{:.2} s", v / 1e9)
    }
}

/// A count per second with an SI suffix: `950`, `12.3k`, `1.20M`.
pub fn rate_si(v: f64) -> String {
    if v >= 1e9 {
        format!("{:.2}G", v / 1e9)
    } else if v >= 1e6 {
        format!("{:.2}M", v / 1e6)
    } else if v >= 1e4 {
        format!("{:.1}k", v / 1e3)
    } else if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// Up to `digits` significant digits, without trailing zeros: `1.5`, `12`, `0.25`.
fn sig(v: f64, digits: i32) -> String {
    if v == 0.0 || !v.is_finite() {
        return "0".into();
    }
    let mag = v.abs().log10().floor() as i32;
    let decimals = (digits - 1 - mag).max(0) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// A count or rate with an SI suffix for axis ticks: `0`, `500`, `1.5k`, `12k`, `3M`.
pub fn si(v: f64) -> String {
    let a = v.abs();
    if a >= 1e9 {
        format!("{}G", sig(v / 1e9, 3))
    } else if a >= 1e6 {
        format!("{}M", sig(v / 1e6, 3))
    } else if a >= 1e3 {
        format!("{}k", sig(v / 1e3, 3))
    } else {
        sig(v, 3)
    }
}

/// A plain number for ticks (seconds, counts): `7210`, `0.5`, and SI only from a million.
pub fn plain(v: f64) -> String {
    if v.abs() >= 1e6 {
        si(v)
    } else if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else {
        sig(v, 3)
    }
}

/// A rate for tables: `950`, `12.3k`, `1.20M` (as the run's own table prints it).
pub fn rate(v: f64) -> String {
    rate_si(v)
}

/// Bytes per second as MiB/s for tables: `0.02`, `41.6`, `16975.0`.
pub fn mib_s(bytes_per_sec: f64) -> String {
    let v = bytes_per_sec / MIB;
    if v == 0.0 {
        "0".into()
    } else if v < 0.1 {
        format!("{v:.3}")
    } else {
        format!("{v:.1}")
    }
}

pub const MIB: f64 = 1024.0 * 1024.0;

/// A byte count in binary units for ticks and labels: `0 B`, `512 B`, `4 KiB`, `1.5 MiB`
/// (humansize with two decimals; the zeros it keeps after a fraction, `1.50`, are dropped).
pub fn bytes(v: f64) -> String {
    let s = humansize::format_size(v.max(0.0).round() as u64, humansize::BINARY);
    match s.split_once(' ') {
        Some((n, unit)) if n.contains('.') => format!("{} {unit}", n.trim_end_matches('0').trim_end_matches('.')),
        _ => s,
    }
}

/// A latency in ns for ticks and tables: `850 ns`, `1 µs`, `12.5 µs`, `4.56 ms`, `1.2 s`.
pub fn latency(ns: f64) -> String {
    let a = ns.abs();
    if a < 1e3 {
        format!("{} ns", sig(ns, 3))
    } else if a < 1e6 {
        format!("{} µs", sig(ns / 1e3, 3))
    } else if a < 1e9 {
        format!("{} ms", sig(ns / 1e6, 3))
    } else {
        format!("{} s", sig(ns / 1e9, 3))
    }
}

/// A percentile from its number of nines: 0 -> `p0`, 1 -> `p90`, 2 -> `p99`, 3 -> `p99.9`.
pub fn nines(x: f64) -> String {
    let q = 100.0 * (1.0 - 10f64.powf(-x));
    if x <= 0.0 {
        "p0".into()
    } else {
        let digits = (x.ceil() as usize).saturating_sub(2);
        format!("p{q:.digits$}")
    }
}

/// A signed percentage change: `+12.3%`, `-0.4%`.
pub fn change(pct: f64) -> String {
    if !pct.is_finite() {
        "n/a".into()
    } else {
        format!("{pct:+.1}%")
    }
}

/// Seconds for the run table: `4.2 ms`, `0.42 s`, `12.3 s`, `1 h 02 min`.
pub fn seconds(s: f64) -> String {
    if s < 0.1 {
        format!("{:.1} ms", s * 1e3)
    } else if s < 10.0 {
        format!("{s:.2} s")
    } else if s < 600.0 {
        format!("{s:.1} s")
    } else if s < 3600.0 {
        format!("{} min {:02} s", (s / 60.0) as u64, (s % 60.0) as u64)
    } else {
        format!("{} h {:02} min", (s / 3600.0) as u64, ((s % 3600.0) / 60.0) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("0").unwrap(), 0);
        assert_eq!(parse_size("1024000").unwrap(), 1_024_000);
        assert_eq!(parse_size("4k").unwrap(), 4096);
        assert_eq!(parse_size("4KiB").unwrap(), 4096);
        assert_eq!(parse_size("1m").unwrap(), 1 << 20);
        assert_eq!(parse_size("10G").unwrap(), 10 << 30);
        assert_eq!(parse_size("1.5k").unwrap(), 1536);
        assert!(parse_size("abc").is_err());
        assert!(parse_size("4q").is_err());
        assert!(parse_size("99999999999t").is_err());
        assert!(parse_size("0.3k").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("-1").is_err());
        assert_eq!(parse_duration("365d").unwrap(), MAX_DURATION);
        for huge in ["1e20", "1e11", "366d", "NaN", "inf", "1e400", "100000000000000000000y"] {
            assert!(parse_duration(huge).is_err(), "{huge}");
        }
        assert!(parse_size("1e20").is_err());
        assert!(parse_size("99999999999999999999.5").unwrap_err().contains("too large"));
    }

    #[test]
    fn sizes_for_people() {
        assert_eq!(format_size(4096), "4 KiB");
        assert_eq!(format_size(1_024_000), "1000 KiB");
        assert_eq!(format_size(10_240), "10 KiB");
        assert_eq!(format_size(1000), "1000 B");
    }

    #[test]
    fn latencies_for_tables() {
        assert_eq!(format_ns(850), "850 ns");
        assert_eq!(format_ns(1_500), "1.5 us");
        assert_eq!(format_ns(4_560_000), "4.56 ms");
        assert_eq!(format_ns(1_230_000_000), "1.23 s");
    }

    #[test]
    fn formats() {
        assert_eq!(si(0.0), "0");
        assert_eq!(si(500.0), "500");
        assert_eq!(si(1500.0), "1.5k");
        assert_eq!(si(120_000.0), "120k");
        assert_eq!(si(3_000_000.0), "3M");
        assert_eq!(bytes(4096.0), "4 KiB");
        assert_eq!(bytes(1.5 * MIB), "1.5 MiB");
        assert_eq!(bytes(100.0), "100 B");
        assert_eq!(bytes(0.0), "0 B");
        assert_eq!(bytes(2.0 * 1024.0 * MIB), "2 GiB");
        assert_eq!(bytes(1.25 * MIB), "1.25 MiB");
        assert_eq!(latency(850.0), "850 ns");
        assert_eq!(latency(1000.0), "1 µs");
        assert_eq!(latency(12_500.0), "12.5 µs");
        assert_eq!(latency(4_560_000.0), "4.56 ms");
        assert_eq!(latency(1.2e9), "1.2 s");
        assert_eq!(nines(0.0), "p0");
        assert_eq!(nines(1.0), "p90");
        assert_eq!(nines(2.0), "p99");
        assert_eq!(nines(3.0), "p99.9");
        assert_eq!(nines(5.0), "p99.999");
        assert_eq!(change(12.34), "+12.3%");
        assert_eq!(change(-0.04), "-0.0%");
        assert_eq!(mib_s(43_620_761.6), "41.6");
    }
}
