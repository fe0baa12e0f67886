//! Statistics over a list of numbers: the arithmetic behind `sum`, `mean`,
//! `median`, `stddev`, `p(N, X)` and the bootstrap interval of the median.
//!
//! Every function here is deterministic: the bootstrap draws from a PRNG
//! seeded by the values themselves, so a build gives the same interval on
//! every run and with any number of threads.

use std::collections::BTreeMap;
use std::sync::Mutex;

/// Resamples drawn for `ci_low` / `ci_high`.
pub(crate) const RESAMPLES: usize = 10_000;

pub(crate) fn sum(xs: &[f64]) -> f64 {
    xs.iter().sum()
}

pub(crate) fn mean(xs: &[f64]) -> f64 {
    sum(xs) / xs.len() as f64
}

/// Sample standard deviation (n − 1 in the denominator): the data are a
/// sample of runs, not the whole population.
pub(crate) fn stddev(xs: &[f64]) -> Result<f64, String> {
    if xs.len() < 2 {
        return Err(format!(
            "stddev needs at least two values, found {}",
            xs.len()
        ));
    }
    let m = mean(xs);
    let ss: f64 = xs.iter().map(|x| (x - m) * (x - m)).sum();
    Ok((ss / (xs.len() - 1) as f64).sqrt())
}

fn sorted(xs: &[f64]) -> Vec<f64> {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    v
}

/// Percentile `q` (0–100) of sorted values, linear interpolation between
/// the closest ranks (numpy's default, "type 7" in Hyndman and Fan).
fn percentile_sorted(v: &[f64], q: f64) -> f64 {
    let h = (v.len() - 1) as f64 * q / 100.0;
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(v.len() - 1);
    v[lo] + (h - lo as f64) * (v[hi] - v[lo])
}

pub(crate) fn percentile(xs: &[f64], q: f64) -> Result<f64, String> {
    if !(0.0..=100.0).contains(&q) {
        return Err(format!("p takes a percentile from 0 to 100, found {q}"));
    }
    Ok(percentile_sorted(&sorted(xs), q))
}

pub(crate) fn median(xs: &[f64]) -> f64 {
    percentile_sorted(&sorted(xs), 50.0)
}

/// The median by selection, linear time: the bootstrap takes 10,000.
fn median_in_place(v: &mut [f64]) -> f64 {
    let (mid, odd) = (v.len() / 2, v.len() % 2 == 1);
    let (left, m, _) = v.select_nth_unstable_by(mid, f64::total_cmp);
    let m = *m;
    if odd {
        return m;
    }
    let below = left.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    below + (m - below) * 0.5
}

/// splitmix64 (Steele, Lea and Flood): a tiny, well-mixed generator;
/// statistical quality is ample for resampling indices.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform index below `n` (Lemire's multiply-shift).
    fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next()) * n as u128) >> 64) as usize
    }
}

/// The seed: FNV-1a over the values' bits, in order. The same values give
/// the same interval; other values give an independent stream.
fn seed(xs: &[f64]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for x in xs {
        for b in x.to_bits().to_le_bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// 95% percentile-bootstrap interval of the median: (2.5th, 97.5th)
/// percentile of the medians of [`RESAMPLES`] resamples with replacement.
pub(crate) fn median_ci(xs: &[f64]) -> (f64, f64) {
    // `ci_low` and `ci_high` of one list are one computation: keep it, keyed
    // by the exact values (a pure function, so the cache cannot change
    // output). Bounded: a long preview session meets ever new lists.
    static DONE: Mutex<BTreeMap<Vec<u64>, (f64, f64)>> = Mutex::new(BTreeMap::new());
    let key: Vec<u64> = xs.iter().map(|x| x.to_bits()).collect();
    if let Some(ci) = DONE.lock().ok().and_then(|d| d.get(&key).copied()) {
        return ci;
    }
    let ci = bootstrap(xs);
    if let Ok(mut d) = DONE.lock() {
        if d.len() >= MEMO_LISTS {
            d.clear();
        }
        d.insert(key, ci);
    }
    ci
}

/// Lists whose interval [`median_ci`] remembers at most.
const MEMO_LISTS: usize = 4096;

fn bootstrap(xs: &[f64]) -> (f64, f64) {
    let mut rng = SplitMix(seed(xs));
    let mut sample = vec![0.0; xs.len()];
    let mut medians = Vec::with_capacity(RESAMPLES);
    for _ in 0..RESAMPLES {
        for s in sample.iter_mut() {
            *s = xs[rng.below(xs.len())];
        }
        medians.push(median_in_place(&mut sample));
    }
    medians.sort_by(f64::total_cmp);
    (
        percentile_sorted(&medians, 2.5),
        percentile_sorted(&medians, 97.5),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numpy_percentiles() {
        let xs = [15.0, 20.0, 35.0, 40.0, 50.0];
        // numpy.percentile(xs, 40) == 29.0; 90 -> 46.0
        assert_eq!(percentile(&xs, 40.0).unwrap(), 29.0);
        assert!((percentile(&xs, 90.0).unwrap() - 46.0).abs() < 1e-12);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(percentile(&xs, 101.0).is_err());
    }

    #[test]
    fn sample_stddev() {
        // statistics.stdev([2, 4, 4, 4, 5, 5, 7, 9]) == 2.138089935299395
        let s = stddev(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert!((s - 2.138_089_935_299_395).abs() < 1e-12);
        assert!(stddev(&[1.0]).is_err());
    }

    #[test]
    fn bootstrap_is_repeatable_and_brackets_the_median() {
        let xs = [1.2, 1.4, 1.1, 1.9, 1.3, 1.25, 1.6];
        let a = median_ci(&xs);
        assert_eq!(a, median_ci(&xs));
        assert!(a.0 <= median(&xs) && median(&xs) <= a.1 && a.0 < a.1);
        assert_eq!(median_ci(&[5.0]), (5.0, 5.0));
        for xs in [&[3.0, 1.0, 2.0][..], &[4.0, 1.0, 3.0, 2.0], &[2.0, 2.0]] {
            assert_eq!(median_in_place(&mut xs.to_vec()), median(xs));
        }
    }
}
