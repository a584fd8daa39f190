//! Sizes and durations as people write them: `4k`, `1m`, `10g`, `1024000`, `30s`, `2m`.

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
    fn formats() {
        assert_eq!(format_size(4096), "4 KiB");
        assert_eq!(format_size(1_024_000), "1000 KiB");
        assert_eq!(format_size(10_240), "10 KiB");
        assert_eq!(format_size(1000), "1000 B");
    }
}
