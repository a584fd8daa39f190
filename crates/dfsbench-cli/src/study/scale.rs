//! `--scale F`: the publications' counts, sizes and durations multiplied by F, with floors that
//! keep every point a real measurement. Block and record sizes, worker counts and ratios are the
//! studies' independent variables and never scale.

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

    /// A file size: 0 stays 0 (a create), anything else at least 1 byte.
    pub fn size(self, bytes: u64) -> u64 {
        if bytes == 0 {
            0
        } else {
            ((bytes as f64 * self.0).round() as u64).max(1)
        }
    }

    /// A file of whole `block`s: at least one block.
    pub fn blocks(self, bytes: u64, block: u64) -> u64 {
        (self.size(bytes) / block).max(1) * block
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
        assert_eq!(s.size(0), 0);
        assert_eq!(s.size(1024), 1);
        assert_eq!(s.size(10_240_000_000), 10_240_000);
        assert_eq!(s.blocks(1 << 30, 1 << 20), 1 << 20);
        assert_eq!(s.duration(180.0), None);
        assert_eq!(Scale::parse("1").unwrap().duration(180.0), Some(180.0));
        for bad in ["0", "-1", "1.5", "x", "NaN"] {
            assert!(Scale::parse(bad).is_err(), "{bad}");
        }
    }
}
