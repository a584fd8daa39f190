//! `--scale F`: the publications' counts, io volumes and durations multiplied by F, with floors
//! that keep every point a real measurement. File, block and record sizes, worker counts and
//! ratios are the studies' independent variables and never scale: a row of files too few to
//! make one file at this scale is left out, not run with smaller files.

/// Shortest time-based phase; a point whose scaled duration is shorter runs by count instead.
const MIN_DURATION_S: f64 = 1.0;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scale(f64);

impl Scale {
    pub fn parse(text: &str) -> Result<Scale, String> {
        let f: f64 = text
            .trim()
            .parse()
            .map_err(|_| format!("--scale {text}: give a number such as 0.01"))?;
        if !(f > 0.0 && f <= 1.0) {
            return Err(format!(
                "--scale {text}: give a factor above 0 and at most 1 (1 is the publication's size)"
            ));
        }
        Ok(Scale(f))
    }

    pub fn factor(self) -> f64 {
        self.0
    }

    /// A file or operation count: at least 1.
    pub fn count(self, n: u64) -> u64 {
        ((n as f64 * self.0).round() as u64).max(1)
    }

    /// The files of a row that are its subject (N files of size S): None when N x F rounds to
    /// no file, so the row is left out.
    pub fn files(self, n: u64) -> Option<u64> {
        let c = (n as f64 * self.0).round() as u64;
        (c >= 1).then_some(c)
    }

    /// The smallest scale at which `n` files make at least one.
    pub fn least_for(n: u64) -> f64 {
        0.5 / n as f64
    }

    /// The bytes an io job covers (a volume, not the size of a row's files): whole `block`s,
    /// at least one.
    pub fn blocks(self, bytes: u64, block: u64) -> u64 {
        ((bytes as f64 * self.0).round() as u64 / block).max(1) * block
    }

    /// A duration in seconds, or None when it would be under a second: the point then runs by
    /// count (one pass over its files) so that tiny scales stay quick.
    pub fn duration(self, secs: f64) -> Option<f64> {
        let d = secs * self.0;
        (d >= MIN_DURATION_S).then_some(d)
    }
}

impl std::fmt::Display for Scale {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floors_keep_points_real() {
        let s = Scale::parse("0.001").unwrap();
        assert_eq!(s.count(10000), 10);
        assert_eq!(s.count(10), 1);
        assert_eq!(s.files(10000), Some(10));
        assert_eq!(s.files(100), None);
        assert!(Scale::parse(&Scale::least_for(100).to_string()).unwrap().files(100) == Some(1));
        assert_eq!(s.blocks(1 << 30, 1 << 20), 1 << 20);
        assert_eq!(s.duration(180.0), None);
        assert_eq!(Scale::parse("1").unwrap().duration(180.0), Some(180.0));
        for bad in ["0", "-1", "1.5", "x", "NaN"] {
            assert!(Scale::parse(bad).is_err(), "{bad}");
        }
    }
}
