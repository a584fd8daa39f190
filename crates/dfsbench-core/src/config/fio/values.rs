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

/// A byte count as fio reads it. With its default `kb_base=1024`, `k`/`kb` are 1024 and `kib`
/// is 1000 (fio swaps them: HOWTO, "kb_base"); with `kb_base=1000` they mean what they say.
/// Likewise m, g, t and p. A trailing `b` is optional, case does not matter.
pub(super) fn size_bytes(text: &str, kb_base: u64) -> Result<u64, String> {
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
    let other = if kb_base == 1000 { 1024 } else { 1000 };
    let base: u64 = match rest {
        "" | "b" => kb_base,
        "ib" => other,
        _ => return Err(bad()),
    };
    n.checked_mul(base.pow(power))
        .ok_or_else(|| format!("'{text}' is too large"))
}

/// `bs=4k`, or `bs=4k,4k` (reads, writes) when both are the same.
pub(super) fn bytes_pair(text: &str, kb_base: u64) -> Result<u64, String> {
    let sizes = text
        .split(',')
        .map(|t| size_bytes(t, kb_base))
        .collect::<Result<Vec<_>, _>>()?;
    match sizes.as_slice() {
        [one] => Ok(*one),
        [first, rest @ ..] if rest.iter().all(|s| s == first) => Ok(*first),
        _ => Err("different block sizes for reads and writes: dfsbench has one bs".into()),
    }
}

/// `bsrange=4k-4k`: a range of one size.
pub(super) fn bytes_range(text: &str, kb_base: u64) -> Result<u64, String> {
    let (lo, hi) = text.split_once(['-', ':']).ok_or("write MIN-MAX")?;
    match (size_bytes(lo, kb_base)?, size_bytes(hi, kb_base)?) {
        (lo, hi) if lo == hi => Ok(lo),
        _ => Err("a range of block sizes: dfsbench has one bs (or bssplit)".into()),
    }
}

/// `bssplit=4k/50:64k/30:1m/`: block sizes and their shares of the operations, in dfsbench's
/// spelling `4096/50:65536/30:1048576/20`. A size without a share gets an equal part of what
/// the others leave, as in fio; the shares make 100. `READS,WRITES` gives writes their own
/// split (the second, when it differs; a third, for trims, is fio's only).
pub(super) fn bssplit(text: &str, kb_base: u64) -> Result<(String, Option<String>), String> {
    let mut sides = text.split(',').map(str::trim).filter(|s| !s.is_empty());
    let first = sides.next().ok_or("give sizes and shares such as 4k/50:64k/50")?;
    let reads = one_split(first, kb_base)?;
    let writes = match sides.next() {
        Some(w) => Some(one_split(w, kb_base)?).filter(|w| *w != reads),
        None => None,
    };
    Ok((reads, writes))
}

/// One direction's split of [`bssplit`].
fn one_split(first: &str, kb_base: u64) -> Result<String, String> {
    let mut sizes = Vec::new();
    for part in first.split(':') {
        let (bs, share) = part.split_once('/').unwrap_or((part, ""));
        let share = match share.trim() {
            "" => None,
            p => Some(percentage(p).ok_or_else(|| format!("'{p}' is no percentage"))?),
        };
        sizes.push((size_bytes(bs, kb_base)?, share));
    }
    let given: u32 = sizes.iter().filter_map(|(_, p)| *p).sum();
    let blank = sizes.iter().filter(|(_, p)| p.is_none()).count() as u32;
    if given > 100 || (blank == 0 && given != 100) {
        return Err(format!("the shares make {given}%, not 100%"));
    }
    let left = 100 - given;
    let (each, extra) = (
        left.checked_div(blank).unwrap_or(0),
        left.checked_rem(blank).unwrap_or(0),
    );
    let mut blanks_seen = 0;
    let parts: Vec<String> = sizes
        .iter()
        .map(|(bs, p)| {
            let share = p.unwrap_or_else(|| {
                blanks_seen += 1;
                // What an equal split leaves over goes to the first blank ones.
                each + u32::from(blanks_seen <= extra)
            });
            format!("{bs}/{share}")
        })
        .collect();
    Ok(parts.join(":"))
}

/// `cmdprio_bssplit`'s sizes in bytes (`64k/25/1/1:1m/0,1m/0` is `65536/25/1/1:1048576/0,...`).
pub(super) fn cmdprio_bssplit(text: &str, kb_base: u64) -> Result<String, String> {
    let sides: Result<Vec<String>, String> = text
        .split(',')
        .map(|side| {
            let entries: Result<Vec<String>, String> = side
                .split(':')
                .map(str::trim)
                .filter(|e| !e.is_empty())
                .map(|e| {
                    let (bs, rest) = e
                        .split_once('/')
                        .ok_or_else(|| format!("'{e}': write SIZE/PCT or SIZE/PCT/CLASS/LEVEL"))?;
                    Ok(format!("{}/{rest}", size_bytes(bs, kb_base)?))
                })
                .collect();
            Ok(entries?.join(":"))
        })
        .collect();
    Ok(sides?.join(","))
}

/// A rate given once, or as the same figure for reads and writes (`500` or `500,500`); a
/// rate for reads alone or writes alone is not dfsbench's (it paces a job as a whole).
pub(super) fn one_rate(text: &str) -> Option<&str> {
    let mut parts = text.split(',').map(str::trim);
    let first = parts.next().filter(|p| !p.is_empty())?;
    parts.all(|p| p == first).then_some(first)
}
