//! The running statistics of one column ([`Acc`]) and how a chunk of
//! values is added to them: one-byte values through a histogram, native
//! integers exactly, floats through compensated sums in lanes, each
//! chunk's count, mean and M2 merged with Chan's formula.

use ndnpy::dtype::Kind;

/// The running statistics of one leaf column, merged chunk by chunk.
#[derive(Default)]
pub(super) struct Acc {
    pub(super) count: u64,
    pub(super) nan: u64,
    pub(super) pos_inf: u64,
    pub(super) neg_inf: u64,
    pub(super) finite: u64,
    pub(super) mean: f64,
    pub(super) m2: f64,
    pub(super) min: Option<f64>,
    pub(super) max: Option<f64>,
    pub(super) imin: Option<i128>,
    pub(super) imax: Option<i128>,
}

impl Acc {
    /// Adds the statistics of other data (another stripe of chunks).
    pub(super) fn absorb(&mut self, other: &Acc) {
        self.count += other.count;
        self.nan += other.nan;
        self.pos_inf += other.pos_inf;
        self.neg_inf += other.neg_inf;
        if other.finite > 0 {
            merge(self, other.finite, other.mean, other.m2);
        }
        let pick = |a: Option<f64>, b: Option<f64>, f: fn(f64, f64) -> f64| match (a, b) {
            (Some(x), Some(y)) => Some(f(x, y)),
            (x, y) => x.or(y),
        };
        self.min = pick(self.min, other.min, f64::min);
        self.max = pick(self.max, other.max, f64::max);
        let pick = |a: Option<i128>, b: Option<i128>, f: fn(i128, i128) -> i128| match (a, b) {
            (Some(x), Some(y)) => Some(f(x, y)),
            (x, y) => x.or(y),
        };
        self.imin = pick(self.imin, other.imin, i128::min);
        self.imax = pick(self.imax, other.imax, i128::max);
    }
}

/// One-byte integers and booleans (masks, images) through a histogram of
/// the 256 byte values: one increment per element, then exact sums over at
/// most 256 values, where the general path converts every element to
/// `f64` twice.
pub(super) fn add_bytes(acc: &mut Acc, bytes: &[u8], kind: Kind) {
    if bytes.is_empty() {
        return;
    }
    // Four histograms, so that runs of one value do not wait on the
    // previous increment of the same counter.
    let mut hist = [[0u64; 256]; 4];
    let (quads, rest) = bytes.as_chunks::<4>();
    for q in quads {
        for (h, &b) in hist.iter_mut().zip(q) {
            h[b as usize] += 1;
        }
    }
    for &b in rest {
        hist[0][b as usize] += 1;
    }
    let value = |b: usize| -> i128 {
        match kind {
            Kind::Int => b as u8 as i8 as i128,
            Kind::Bool => (b != 0) as i128,
            _ => b as i128,
        }
    };
    let counts: Vec<(i128, u64)> = (0..256)
        .map(|b| (value(b), hist.iter().map(|h| h[b]).sum::<u64>()))
        .filter(|&(_, c)| c > 0)
        .collect();
    let n = bytes.len() as u64;
    let sum: i128 = counts.iter().map(|&(v, c)| v * c as i128).sum();
    let lo = counts.iter().map(|&(v, _)| v).min().expect("n > 0");
    let hi = counts.iter().map(|&(v, _)| v).max().expect("n > 0");
    let mean = sum as f64 / n as f64;
    let m2: f64 = counts
        .iter()
        .map(|&(v, c)| {
            let d = v as f64 - mean;
            c as f64 * d * d
        })
        .sum();
    add_range(acc, n, lo, hi);
    merge(acc, n, mean, m2);
}

/// Native integers: the exact sum (in `i128`, which 2^64 values of 64 bits
/// cannot overflow), minimum and maximum in one pass, then the squared
/// deviations from the chunk's mean, merged as floats are.
pub(super) fn add_ints<const N: usize, T: Copy + Into<i128>>(
    acc: &mut Acc,
    items: &[[u8; N]],
    get: impl Fn([u8; N]) -> T,
) {
    if items.is_empty() {
        return;
    }
    let (mut sum, mut lo, mut hi) = (0i128, i128::MAX, i128::MIN);
    for &b in items {
        let v: i128 = get(b).into();
        sum += v;
        lo = lo.min(v);
        hi = hi.max(v);
    }
    let n = items.len() as u64;
    let mean = sum as f64 / n as f64;
    let m2: f64 = items
        .iter()
        .map(|&b| {
            let d = get(b).into() as f64 - mean;
            d * d
        })
        .sum();
    add_range(acc, n, lo, hi);
    merge(acc, n, mean, m2);
}

/// Counts `n` integers between `lo` and `hi` into `acc`.
fn add_range(acc: &mut Acc, n: u64, lo: i128, hi: i128) {
    acc.count += n;
    acc.min = Some(acc.min.map_or(lo as f64, |m| m.min(lo as f64)));
    acc.max = Some(acc.max.map_or(hi as f64, |m| m.max(hi as f64)));
    acc.imin = Some(acc.imin.map_or(lo, |m| m.min(lo)));
    acc.imax = Some(acc.imax.map_or(hi, |m| m.max(hi)));
}

/// Merges a chunk's count, mean and M2 into `acc` (Chan's formula).
fn merge(acc: &mut Acc, n: u64, mean: f64, m2: f64) {
    if acc.finite == 0 {
        // Taken as they are: the formula would compute `mean * n / n`,
        // which can be an ulp off or overflow.
        (acc.finite, acc.mean, acc.m2) = (n, mean, m2);
        return;
    }
    let total = acc.finite + n;
    let delta = mean - acc.mean;
    acc.mean += delta * n as f64 / total as f64;
    acc.m2 += m2 + delta * delta * (acc.finite as f64) * (n as f64) / total as f64;
    acc.finite = total;
}

/// The fast path for a chunk of values that are all finite (the usual
/// case): four independent lanes of compensated sums, minima and maxima,
/// then the squared deviations from the chunk's mean. Returns false,
/// changing nothing, when the chunk holds a NaN or an infinity (or sums
/// past the float range), for [`add_floats`] to handle. Generic over the
/// item so that native `f64` bytes are read where they lie, in blocks of
/// fixed length the compiler keeps in vector registers.
pub(super) fn add_finite<T: Copy>(acc: &mut Acc, values: &[T], get: impl Fn(T) -> f64) -> bool {
    const L: usize = 4;
    let n = values.len();
    if n == 0 {
        return true;
    }
    let (mut sum, mut comp) = ([0.0f64; L], [0.0f64; L]);
    let (mut min, mut max) = ([f64::INFINITY; L], [f64::NEG_INFINITY; L]);
    let mut add = |l: usize, x: f64| {
        let t = sum[l] + x;
        // Neumaier's compensated sum: huge values of opposite signs do not
        // swallow the small ones.
        comp[l] += if sum[l].abs() >= x.abs() {
            (sum[l] - t) + x
        } else {
            (x - t) + sum[l]
        };
        sum[l] = t;
        // Plain comparisons rather than `f64::min`, whose NaN rule costs a
        // blend per value: a NaN makes the sum non-finite, and the chunk
        // is then redone by `add_floats`.
        min[l] = if x < min[l] { x } else { min[l] };
        max[l] = if x > max[l] { x } else { max[l] };
    };
    let blocks = values.chunks_exact(L);
    let rest = blocks.remainder();
    for block in blocks {
        for (l, &x) in block.iter().enumerate() {
            add(l, get(x));
        }
    }
    for &x in rest {
        add(0, get(x));
    }
    // Any NaN or infinity in the chunk makes a sum non-finite.
    let total: f64 = sum.iter().sum::<f64>() + comp.iter().sum::<f64>();
    if !total.is_finite() || sum.iter().chain(&comp).any(|v| !v.is_finite()) {
        return false;
    }
    let mean = total / n as f64;
    // Twice the lanes: this loop's only chain is the one add.
    let mut m2 = [0.0f64; 2 * L];
    let blocks = values.chunks_exact(2 * L);
    let rest = blocks.remainder();
    for block in blocks {
        for (m, &x) in m2.iter_mut().zip(block) {
            let d = get(x) - mean;
            *m += d * d;
        }
    }
    for &x in rest {
        let d = get(x) - mean;
        m2[0] += d * d;
    }
    let lo = min.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = max.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    acc.count += n as u64;
    acc.min = Some(acc.min.map_or(lo, |m| m.min(lo)));
    acc.max = Some(acc.max.map_or(hi, |m| m.max(hi)));
    merge(acc, n as u64, mean, m2.iter().sum());
    true
}

/// Adds a chunk of values: min/max over non-NaN, mean and M2 over the
/// finite ones, merged with Chan's formula so the result is stable.
pub(super) fn add_floats(acc: &mut Acc, values: &[f64]) {
    if add_finite(acc, values, |x| x) {
        return;
    }
    let (mut n, mut sum, mut comp) = (0u64, 0.0f64, 0.0f64);
    let (mut min, mut max) = (f64::INFINITY, f64::NEG_INFINITY);
    let mut any = false;
    for &x in values {
        if x.is_finite() {
            n += 1;
            // Neumaier's compensated sum: huge values of opposite signs
            // do not swallow the small ones.
            let t = sum + x;
            comp += if sum.abs() >= x.abs() {
                (sum - t) + x
            } else {
                (x - t) + sum
            };
            sum = t;
        } else if x.is_nan() {
            acc.nan += 1;
            continue;
        } else if x > 0.0 {
            acc.pos_inf += 1;
        } else {
            acc.neg_inf += 1;
        }
        any = true;
        min = min.min(x);
        max = max.max(x);
    }
    acc.count += values.len() as u64;
    if any {
        acc.min = Some(acc.min.map_or(min, |m| m.min(min)));
        acc.max = Some(acc.max.map_or(max, |m| m.max(max)));
    }
    if n == 0 {
        return;
    }
    let mean = (sum + comp) / n as f64;
    let m2: f64 = values
        .iter()
        .filter(|x| x.is_finite())
        .map(|&x| (x - mean) * (x - mean))
        .sum();
    merge(acc, n, mean, m2);
}
