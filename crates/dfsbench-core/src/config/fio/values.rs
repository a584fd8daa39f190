//! fio's spellings of values: byte counts with its `kb_base=1024`, block sizes for reads and
//! writes, ranges of one size, percentages and flags.

/// A percentage, 0-100.
pub(super) fn percentage(v: &str) -> Option<u32> {
    v.parse().ok().filter(|p| *p <= 100)
}

/// A fio flag's value: none means set.
pub(super) fn flag(v: Option<&str>) -> Option<bool> {
    match v {
        None | Some("1") => Some(true),
        Some("0") => Some(false),
        Some(_) => None,
    }
}

/// A byte count as fio reads it with its default `kb_base=1024`: `k`/`kb` are 1024, and
/// `kib` is 1000 (fio swaps them: HOWTO, "kb_base"); likewise m, g, t and p. A trailing `b` is
/// optional, case does not matter.
pub(super) fn size_bytes(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, suffix) = t.split_at(end);
    let bad = || format!("'{text}' is no byte count fio and dfsbench read alike: write 4096, 4k, 1m, 10g");
    let n: u64 = num.parse().map_err(|_| bad())?;
    let suffix = suffix.to_ascii_lowercase();
    let mut chars = suffix.chars();
    let Some(unit) = chars.next() else {
        return Ok(n);
    };
    let rest = chars.as_str();
    let power = match unit {
        'b' if rest.is_empty() => return Ok(n),
        'k' => 1,
        'm' => 2,
        'g' => 3,
        't' => 4,
        'p' => 5,
        _ => return Err(bad()),
    };
    let base: u64 = match rest {
        "" | "b" => 1024,
        "ib" => 1000,
        _ => return Err(bad()),
    };
    n.checked_mul(base.pow(power))
        .ok_or_else(|| format!("'{text}' is too large"))
}

/// `bs=4k`, or `bs=4k,4k` (reads, writes) when both are the same.
pub(super) fn bytes_pair(text: &str) -> Result<u64, String> {
    let sizes = text.split(',').map(size_bytes).collect::<Result<Vec<_>, _>>()?;
    match sizes.as_slice() {
        [one] => Ok(*one),
        [first, rest @ ..] if rest.iter().all(|s| s == first) => Ok(*first),
        _ => Err("different block sizes for reads and writes: dfsbench has one bs".into()),
    }
}

/// `bsrange=4k-4k`: a range of one size.
pub(super) fn bytes_range(text: &str) -> Result<u64, String> {
    let (lo, hi) = text.split_once(['-', ':']).ok_or("write MIN-MAX")?;
    match (size_bytes(lo)?, size_bytes(hi)?) {
        (lo, hi) if lo == hi => Ok(lo),
        _ => Err("a range of block sizes: dfsbench has one bs".into()),
    }
}

/// A rate given once, or as the same figure for reads and writes (`500` or `500,500`); a
/// rate for reads alone or writes alone is not dfsbench's (it paces a job as a whole).
pub(super) fn one_rate(text: &str) -> Option<&str> {
    let mut parts = text.split(',').map(str::trim);
    let first = parts.next().filter(|p| !p.is_empty())?;
    parts.all(|p| p == first).then_some(first)
}
