//! The training dataset: its files, the samples packed in each, their sizes (fixed, or drawn
//! from a normal distribution as DLIO's `record_length_bytes_stdev`), and each epoch's
//! shuffled order. Everything is computed from the seed, so that every worker of every rank,
//! and a read long after the write, agree on it without storing a list: a sample's size is a
//! hash of its index, and the shuffle is a keyed permutation.

/// A dataset of `files` files of `samples_per_file` samples each.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Dataset {
    pub files: u64,
    pub samples_per_file: u64,
    /// Mean and standard deviation of a sample's size in bytes.
    pub mean: u64,
    pub stdev: u64,
    pub seed: u64,
}

/// Where a sample is: its file, and its bytes in that file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Place {
    pub file: u64,
    pub offset: u64,
    pub size: u64,
}

/// SplitMix64's finalizer: a well-mixed 64-bit hash of `x`.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// A uniform draw in (0, 1] from a hash.
fn unit(h: u64) -> f64 {
    ((h >> 11) + 1) as f64 / (1u64 << 53) as f64
}

impl Dataset {
    pub(crate) fn samples(&self) -> u64 {
        self.files * self.samples_per_file
    }

    /// The largest size a sample can have: drawn sizes are capped at the mean plus four
    /// standard deviations (and are at least one byte).
    pub(crate) fn largest_sample(&self) -> u64 {
        self.mean + 4 * self.stdev
    }

    /// The size of sample `i` in bytes.
    pub(crate) fn sample_size(&self, i: u64) -> u64 {
        if self.stdev == 0 {
            return self.mean;
        }
        // Box-Muller from two hashes of the sample's index.
        let h = mix(self.seed ^ mix(i));
        let z = (-2.0 * unit(h).ln()).sqrt() * (std::f64::consts::TAU * unit(mix(h))).cos();
        let size = self.mean as f64 + self.stdev as f64 * z;
        (size.round().max(1.0) as u64).min(self.largest_sample())
    }

    /// The bytes of file `f`.
    pub(crate) fn file_size(&self, f: u64) -> u64 {
        let first = f * self.samples_per_file;
        (first..first + self.samples_per_file)
            .map(|i| self.sample_size(i))
            .sum()
    }

    /// Where sample `i` is: the samples of a file are stored one after another.
    pub(crate) fn place(&self, i: u64) -> Place {
        let file = i / self.samples_per_file;
        let first = file * self.samples_per_file;
        Place {
            file,
            offset: (first..i).map(|k| self.sample_size(k)).sum(),
            size: self.sample_size(i),
        }
    }

    /// The bytes of the whole dataset.
    #[cfg(test)]
    pub(crate) fn bytes(&self) -> u64 {
        (0..self.files).map(|f| self.file_size(f)).sum()
    }
}

/// A seeded permutation of `0..n`: a four-round Feistel network on the smallest even number of
/// bits that holds `n`, walking the cycle until it lands below `n` (on average under four steps).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Shuffle {
    n: u64,
    half: u32,
    keys: [u64; 4],
}

impl Shuffle {
    pub(crate) fn new(n: u64, seed: u64) -> Shuffle {
        let bits = (64 - n.saturating_sub(1).leading_zeros()).max(2);
        let half = bits.div_ceil(2);
        let mut k = mix(seed);
        let keys = std::array::from_fn(|_| {
            k = mix(k);
            k
        });
        Shuffle { n, half, keys }
    }

    fn round(&self, x: u64) -> u64 {
        let mask = (1u64 << self.half) - 1;
        let (mut l, mut r) = (x >> self.half, x & mask);
        for key in self.keys {
            (l, r) = (r, l ^ (mix(r ^ key) & mask));
        }
        (l << self.half) | r
    }

    /// The sample at position `i` of the order (`i < n`).
    pub(crate) fn at(&self, i: u64) -> u64 {
        let mut x = self.round(i);
        while x >= self.n {
            x = self.round(x);
        }
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_sample_comes_once_per_order_and_orders_differ_by_seed() {
        for n in [1, 2, 3, 7, 64, 1000, 4097] {
            let order: Vec<u64> = (0..n).map(|i| Shuffle::new(n, 9).at(i)).collect();
            let mut sorted = order.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..n).collect::<Vec<_>>(), "n = {n}");
            if n >= 64 {
                let other: Vec<u64> = (0..n).map(|i| Shuffle::new(n, 10).at(i)).collect();
                assert_ne!(order, other, "n = {n}");
                assert_ne!(order, (0..n).collect::<Vec<_>>(), "n = {n}");
            }
        }
    }

    #[test]
    fn drawn_sizes_have_the_asked_mean_and_spread_and_places_tile_each_file() {
        let d = Dataset {
            files: 100,
            samples_per_file: 50,
            mean: 100_000,
            stdev: 20_000,
            seed: 3,
        };
        let sizes: Vec<f64> = (0..d.samples()).map(|i| d.sample_size(i) as f64).collect();
        let mean = sizes.iter().sum::<f64>() / sizes.len() as f64;
        let sd = (sizes.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / sizes.len() as f64).sqrt();
        assert!((mean - 100_000.0).abs() < 2_000.0, "mean {mean}");
        assert!((sd - 20_000.0).abs() < 2_000.0, "stdev {sd}");
        assert!(sizes.iter().all(|&s| s >= 1.0 && s <= d.largest_sample() as f64));
        for f in [0, 37, 99] {
            let places: Vec<Place> = (f * 50..f * 50 + 50).map(|i| d.place(i)).collect();
            assert!(places.iter().all(|p| p.file == f));
            let mut end = 0;
            for p in &places {
                assert_eq!(p.offset, end);
                end += p.size;
            }
            assert_eq!(end, d.file_size(f));
        }
        assert_eq!(d.bytes(), sizes.iter().sum::<f64>() as u64);
        let fixed = Dataset { stdev: 0, ..d };
        assert_eq!(fixed.sample_size(12345), 100_000);
    }
}
