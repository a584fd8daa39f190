//! Numbers for people: rates with SI suffixes, sizes in binary units, latencies in ns/µs/ms/s.

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
    crate::table::rate_si(v)
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

/// What happened to the watched server processes during a phase, when anything did:
/// `pid 6977 gone, pid 7012 started` (a restarted daemon: the new one is counted).
pub fn server_pids_note(s: &dfsbench_result::ServerCpu) -> Option<String> {
    let list = |pids: &[u32]| pids.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
    let mut parts = Vec::new();
    if !s.missing_pids.is_empty() {
        parts.push(format!("pid {} gone", list(&s.missing_pids)));
    }
    if !s.started_pids.is_empty() {
        parts.push(format!("pid {} started", list(&s.started_pids)));
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

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
