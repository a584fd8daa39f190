//! I/O priorities as fio sets them: a job's (`prioclass`, `prio`: ioprio_set(2) on the
//! worker's thread, and each I/O's priority unless another is given), and per I/O on the
//! io_uring and libaio engines (`cmdprio_percentage` with `cmdprio_class` and `cmdprio`, or
//! `cmdprio_bssplit`: that share of the I/Os, of each direction or block size, carries that
//! priority; fio's engines/cmdprio.c). A priority is ioprio_set's value, class << 13 | level
//! (class 1 realtime, 2 best effort, 3 idle).

use rand::Rng;
use serde::Serialize;

use crate::error::ConfigError;
use crate::workloads::shared::size_key;

use super::Options;

/// For a block size (0: any), the shares of its I/Os, in percent, that carry each priority.
type BySize = Vec<(u64, Vec<(u32, u16)>)>;

/// The priorities of a job's I/Os.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Prio {
    /// The job's own (prioclass, prio), as ioprio_set's value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job: Option<u16>,
    /// Per direction (reads, writes).
    #[serde(skip_serializing_if = "is_none_given")]
    pub cmd: [BySize; 2],
}

fn is_none_given(cmd: &[BySize; 2]) -> bool {
    cmd.iter().all(Vec::is_empty)
}

/// ioprio_set's value of `class` and `level`.
pub(super) fn ioprio(class: u16, level: u16) -> u16 {
    class << 13 | level
}

/// The realtime class, which only root may give (CAP_SYS_ADMIN).
const CLASS_RT: u16 = 1;

impl Prio {
    /// Read the priority options; None when the job gives none.
    pub(super) fn validate(own: &Options) -> Result<Option<Prio>, ConfigError> {
        let level = |key: &'static str, v: u32| {
            if v > 7 {
                return Err(ConfigError::value(key, v, "give a level from 0 (the highest) to 7"));
            }
            Ok(v as u16)
        };
        let class = |key: &'static str, v: u32| {
            if !(1..=3).contains(&v) {
                return Err(ConfigError::value(
                    key,
                    v,
                    "give a class: 1 realtime, 2 best effort, 3 idle",
                ));
            }
            Ok(v as u16)
        };
        let job = match (own.prioclass, own.prio) {
            (None, None) => None,
            // fio's class without one given: best effort (the kernel's default).
            (c, l) => Some(ioprio(
                c.map(|c| class("prioclass", c)).transpose()?.unwrap_or(2),
                l.map(|l| level("prio", l)).transpose()?.unwrap_or(0),
            )),
        };
        // Two values for reads and writes, or one for both.
        let pair = |key: &'static str, v: &Option<String>| -> Result<Option<[u32; 2]>, ConfigError> {
            let Some(v) = v else { return Ok(None) };
            let nums: Vec<u32> = v
                .split(',')
                .map(|p| p.trim().parse::<u32>())
                .collect::<Result<_, _>>()
                .map_err(|_| {
                    ConfigError::value(
                        key,
                        format!("'{v}'"),
                        "give a number, or one for reads and one for writes: 20,10",
                    )
                })?;
            match nums.as_slice() {
                [one] => Ok(Some([*one, *one])),
                [r, w] => Ok(Some([*r, *w])),
                _ => Err(ConfigError::value(
                    key,
                    format!("'{v}'"),
                    "give one value, or one for reads and one for writes",
                )),
            }
        };
        let perc = pair("cmdprio_percentage", &own.cmdprio_percentage)?;
        let classes = pair("cmdprio_class", &own.cmdprio_class)?.unwrap_or([CLASS_RT as u32; 2]);
        let levels = pair("cmdprio", &own.cmdprio)?.unwrap_or([0; 2]);
        let mut cmd: [BySize; 2] = [Vec::new(), Vec::new()];
        for d in 0..2 {
            let implicit = ioprio(class("cmdprio_class", classes[d])?, level("cmdprio", levels[d])?);
            match (perc, &own.cmdprio_bssplit) {
                (Some(_), Some(_)) => {
                    return Err(
                        "cmdprio_percentage and cmdprio_bssplit both give the shares of prioritized I/Os: give one"
                            .into(),
                    )
                }
                (Some(p), None) => {
                    if p[d] > 100 {
                        return Err(ConfigError::value(
                            "cmdprio_percentage",
                            p[d],
                            "give a percentage from 0 to 100",
                        ));
                    }
                    if p[d] > 0 {
                        cmd[d].push((0, vec![(p[d], implicit)]));
                    }
                }
                (None, Some(split)) => {
                    let sides: Vec<&str> = split.split(',').collect();
                    let side = sides.get(d).or(sides.first()).copied().unwrap_or_default();
                    cmd[d] = bssplit(side, implicit)?;
                }
                (None, None) => {}
            }
        }
        if job.is_none() && is_none_given(&cmd) {
            if own.cmdprio_class.is_some() || own.cmdprio.is_some() {
                return Err("cmdprio_class and cmdprio are the priority of cmdprio_percentage's or cmdprio_bssplit's I/Os: give one of those too".into());
            }
            return Ok(None);
        }
        Ok(Some(Prio { job, cmd }))
    }

    /// Whether it gives I/Os priorities of their own (the engine must carry them).
    pub(super) fn per_io(&self) -> bool {
        !is_none_given(&self.cmd)
    }

    /// The priority of the next I/O, a write or not, of `len` bytes (0: none).
    #[inline]
    pub(super) fn pick(&self, write: bool, len: u64, rng: &mut impl Rng) -> u16 {
        let default = self.job.unwrap_or(0);
        let entries = &self.cmd[usize::from(write)];
        let Some((_, shares)) = entries.iter().find(|(bs, _)| *bs == 0 || *bs == len) else {
            return default;
        };
        let roll = rng.gen_range(0..100u32);
        let mut upto = 0;
        for (share, prio) in shares {
            upto += share;
            if roll < upto {
                return *prio;
            }
        }
        default
    }
}

/// One side of cmdprio_bssplit: `64k/25:1m/0`, each entry's priority the `implicit` one, or
/// `64k/25/1/1:64k/75/3/2` with a class and a level per entry.
fn bssplit(text: &str, implicit: u16) -> Result<BySize, ConfigError> {
    let bad = |why: &str| ConfigError::value("cmdprio_bssplit", format!("'{text}'"), why.to_string());
    let mut out: BySize = Vec::new();
    for entry in text.split(':').map(str::trim).filter(|e| !e.is_empty()) {
        let parts: Vec<&str> = entry.split('/').collect();
        let num = |p: &str| {
            p.trim()
                .parse::<u32>()
                .map_err(|_| bad("write SIZE/PCT or SIZE/PCT/CLASS/LEVEL"))
        };
        let (bs, perc, prio) = match parts.as_slice() {
            [bs, p] => (size_key("cmdprio_bssplit", bs)?, num(p)?, implicit),
            [bs, p, c, l] => {
                let (c, l) = (num(c)?, num(l)?);
                if !(1..=3).contains(&c) || l > 7 {
                    return Err(bad("a class is 1-3 and a level 0-7"));
                }
                (size_key("cmdprio_bssplit", bs)?, num(p)?, ioprio(c as u16, l as u16))
            }
            _ => return Err(bad("write SIZE/PCT or SIZE/PCT/CLASS/LEVEL")),
        };
        match out.iter_mut().find(|(b, _)| *b == bs) {
            Some((_, shares)) => shares.push((perc, prio)),
            None => out.push((bs, vec![(perc, prio)])),
        }
    }
    for (_, shares) in &mut out {
        if shares.iter().map(|(p, _)| p).sum::<u32>() > 100 {
            return Err(bad("a block size's shares make more than 100%"));
        }
        shares.retain(|(p, _)| *p > 0);
    }
    out.retain(|(_, s)| !s.is_empty());
    Ok(out)
}

/// Give the calling thread the I/O priority `value` (ioprio_set(2), IOPRIO_WHO_PROCESS of
/// thread 0: itself), as fio does for a job with prio or prioclass.
pub(super) fn set_thread(value: u16) -> std::io::Result<()> {
    const IOPRIO_WHO_PROCESS: libc::c_long = 1;
    // SAFETY: ioprio_set takes three integers and touches no memory of ours.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_ioprio_set,
            IOPRIO_WHO_PROCESS,
            0 as libc::c_long,
            libc::c_long::from(value),
        )
    };
    if ret < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn fios_examples_read() {
        // cmdprio-percentage.fio: the job idle, 20 % of the I/Os realtime.
        let own = Options {
            prioclass: Some(3),
            cmdprio_percentage: Some("20".into()),
            cmdprio_class: Some("1".into()),
            ..Options::default()
        };
        let p = Prio::validate(&own).unwrap().unwrap();
        assert_eq!(p.job, Some(0x6000));
        assert_eq!(p.cmd[0], vec![(0, vec![(20, 0x2000)])]);
        let mut rng = rand::rngs::SmallRng::seed_from_u64(1);
        let rt = (0..10_000).filter(|_| p.pick(false, 4096, &mut rng) == 0x2000).count();
        assert!((1700..2300).contains(&rt), "{rt}");
        // cmdprio-bssplit.fio's advanced split, with the job's own priority for the rest.
        let own = Options {
            prioclass: Some(2),
            prio: Some(7),
            cmdprio_bssplit: Some("65536/25/1/1:65536/75/3/2:1048576/0,1048576/0".into()),
            ..Options::default()
        };
        let p = Prio::validate(&own).unwrap().unwrap();
        assert_eq!(p.cmd[0], vec![(65536, vec![(25, 0x2001), (75, 0x6002)])]);
        assert!(p.cmd[1].is_empty());
        assert_eq!(p.pick(false, 1 << 20, &mut rng), ioprio(2, 7));
        assert_eq!(p.pick(true, 1 << 20, &mut rng), ioprio(2, 7));
        let small: Vec<u16> = (0..1000).map(|_| p.pick(false, 65536, &mut rng)).collect();
        assert!(small.iter().all(|v| *v == 0x2001 || *v == 0x6002));
        assert!(Prio::validate(&Options {
            cmdprio: Some("1".into()),
            ..Options::default()
        })
        .is_err());
    }
}
