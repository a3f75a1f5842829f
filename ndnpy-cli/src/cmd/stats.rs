//! `ndnpy stats`: count, min, max, mean, standard deviation and NaN/±inf
//! counts per array and per record field, in one streaming pass over the
//! data with constant memory.
//!
//! Min and max ignore NaN (as `np.nanmin`/`np.nanmax`); mean and standard
//! deviation (population, `ddof=0`) are over the finite values.

use crate::input::{fold_chunks, Opened};
use crate::values::{datetime_str, scalar_f64, scalar_i128};
use ndnpy::{ByteOrder, DType, Kind, Scalar};
use serde_json::{json, Value};

/// One scalar column of the elements: a whole scalar array, a record
/// field, or each element of a sub-array field.
struct Leaf {
    name: String,
    scalar: Scalar,
    offsets: Vec<usize>,
    acc: Acc,
    scratch: Vec<f64>,
}

#[derive(Default)]
struct Acc {
    count: u64,
    nan: u64,
    pos_inf: u64,
    neg_inf: u64,
    finite: u64,
    mean: f64,
    m2: f64,
    min: Option<f64>,
    max: Option<f64>,
    imin: Option<i128>,
    imax: Option<i128>,
}

fn leaves(dtype: &DType, name: &str, base: usize, out: &mut Vec<Leaf>) {
    match dtype {
        DType::Scalar(s) => out.push(Leaf {
            name: name.to_owned(),
            scalar: s.clone(),
            offsets: vec![base],
            acc: Acc::default(),
            scratch: Vec::new(),
        }),
        DType::Record(fields) => {
            let mut offset = base;
            for f in fields {
                if !f.name.is_empty() {
                    let n = if name.is_empty() {
                        f.name.clone()
                    } else {
                        format!("{name}.{}", f.name)
                    };
                    leaves(&f.dtype, &n, offset, out);
                }
                offset += f.dtype.itemsize().unwrap_or(0);
            }
        }
        DType::SubArray(inner, shape) => {
            // A zero dimension empties the sub-array, whatever the others.
            let count: usize = if shape.contains(&0) {
                0
            } else {
                shape.iter().product()
            };
            let size = inner.itemsize().unwrap_or(0);
            let mut sub = Vec::new();
            leaves(inner, name, 0, &mut sub);
            for mut leaf in sub {
                leaf.offsets = (0..count)
                    .flat_map(|i| leaf.offsets.iter().map(move |o| base + i * size + o))
                    .collect();
                out.push(leaf);
            }
        }
    }
}

impl Leaf {
    fn add_chunk(&mut self, chunk: &[u8], itemsize: usize) {
        let s = &self.scalar;
        let n = chunk.len() / itemsize;
        match s.kind {
            Kind::Float | Kind::Int | Kind::UInt | Kind::Bool if s.size <= 8 => {
                let size = s.size;
                if size == 1 && itemsize == 1 && self.offsets == [0] && s.kind != Kind::Float {
                    add_bytes(&mut self.acc, chunk, s.kind);
                    return;
                }
                // The common case, native float64 elements, straight from
                // the bytes; everything else is decoded to f64 first.
                if s.kind == Kind::Float
                    && s.size == 8
                    && s.order == ByteOrder::NATIVE
                    && itemsize == 8
                    && self.offsets == [0]
                {
                    let (items, _) = chunk.as_chunks::<8>();
                    if !add_finite(&mut self.acc, items, f64::from_ne_bytes) {
                        self.scratch.clear();
                        self.scratch
                            .extend(items.iter().map(|&b| f64::from_ne_bytes(b)));
                        add_floats(&mut self.acc, &self.scratch);
                    }
                    return;
                }
                // Native integers of one field: exact sums, no f64 detour.
                if matches!(s.kind, Kind::Int | Kind::UInt)
                    && s.order == ByteOrder::NATIVE
                    && itemsize == s.size
                    && self.offsets == [0]
                {
                    macro_rules! ints {
                        ($t:ty, $n:literal) => {{
                            let (items, _) = chunk.as_chunks::<$n>();
                            add_ints(&mut self.acc, items, <$t>::from_ne_bytes);
                            return;
                        }};
                    }
                    match (s.kind, s.size) {
                        (Kind::Int, 2) => ints!(i16, 2),
                        (Kind::Int, 4) => ints!(i32, 4),
                        (Kind::Int, 8) => ints!(i64, 8),
                        (Kind::UInt, 2) => ints!(u16, 2),
                        (Kind::UInt, 4) => ints!(u32, 4),
                        (Kind::UInt, 8) => ints!(u64, 8),
                        _ => {}
                    }
                }
                self.scratch.clear();
                decode_floats(s, chunk, itemsize, &self.offsets, &mut self.scratch);
                if s.kind != Kind::Float {
                    for e in chunk.chunks_exact(itemsize) {
                        for &o in &self.offsets {
                            if let Some(v) = scalar_i128(s, &e[o..o + size]) {
                                self.acc.imin = Some(self.acc.imin.map_or(v, |m| m.min(v)));
                                self.acc.imax = Some(self.acc.imax.map_or(v, |m| m.max(v)));
                            }
                        }
                    }
                }
                add_floats(&mut self.acc, &self.scratch);
            }
            Kind::Datetime | Kind::Timedelta => {
                for e in chunk.chunks_exact(itemsize) {
                    for &o in &self.offsets {
                        let v = scalar_i128(s, &e[o..o + 8]).unwrap_or(0);
                        self.acc.count += 1;
                        if v == i64::MIN as i128 {
                            self.acc.nan += 1;
                        } else {
                            self.acc.imin = Some(self.acc.imin.map_or(v, |m| m.min(v)));
                            self.acc.imax = Some(self.acc.imax.map_or(v, |m| m.max(v)));
                        }
                    }
                }
            }
            _ => self.acc.count += (n * self.offsets.len()) as u64,
        }
    }

    fn report(&self) -> Value {
        let a = &self.acc;
        let float = |x: Option<f64>| match x {
            Some(v) if v.is_finite() => json!(v),
            Some(v) => json!(crate::repr::py_float(v)),
            None => Value::Null,
        };
        let mut out = json!({
            "field": if self.name.is_empty() { Value::Null } else { json!(self.name) },
            "dtype": self.scalar.type_str(),
            "count": a.count,
        });
        let o = out.as_object_mut().expect("object");
        match self.scalar.kind {
            Kind::Float | Kind::Int | Kind::UInt | Kind::Bool if self.scalar.size <= 8 => {
                if self.scalar.kind == Kind::Float {
                    o.insert("min".into(), float(a.min));
                    o.insert("max".into(), float(a.max));
                    o.insert("nan".into(), json!(a.nan));
                    o.insert("pos_inf".into(), json!(a.pos_inf));
                    o.insert("neg_inf".into(), json!(a.neg_inf));
                } else {
                    o.insert("min".into(), a.imin.map_or(Value::Null, int_json));
                    o.insert("max".into(), a.imax.map_or(Value::Null, int_json));
                }
                let some = a.finite > 0;
                o.insert("mean".into(), float(some.then_some(a.mean)));
                o.insert(
                    "std".into(),
                    float(some.then(|| (a.m2 / a.finite as f64).sqrt())),
                );
            }
            Kind::Datetime => {
                let unit = self.scalar.unit.clone().unwrap_or_default();
                let d = |v: Option<i128>| {
                    v.map_or(Value::Null, |v| json!(datetime_str(v as i64, &unit)))
                };
                o.insert("min".into(), d(a.imin));
                o.insert("max".into(), d(a.imax));
                o.insert("nat".into(), json!(a.nan));
            }
            Kind::Timedelta => {
                o.insert("min".into(), a.imin.map_or(Value::Null, int_json));
                o.insert("max".into(), a.imax.map_or(Value::Null, int_json));
                o.insert("nat".into(), json!(a.nan));
            }
            _ => {}
        }
        out
    }
}

/// Appends the values at `offsets` of each element of `chunk` as `f64`,
/// with one loop per scalar type (the conversion inlined, no per-element
/// dispatch).
fn decode_floats(s: &Scalar, chunk: &[u8], itemsize: usize, offsets: &[usize], out: &mut Vec<f64>) {
    fn fill<const N: usize>(
        chunk: &[u8],
        itemsize: usize,
        offsets: &[usize],
        out: &mut Vec<f64>,
        conv: impl Fn([u8; N]) -> f64,
    ) {
        if offsets == [0] && itemsize == N {
            out.extend(
                chunk
                    .chunks_exact(N)
                    .map(|b| conv(b.try_into().expect("N bytes"))),
            );
            return;
        }
        for e in chunk.chunks_exact(itemsize) {
            for &o in offsets {
                out.push(conv(e[o..o + N].try_into().expect("N bytes")));
            }
        }
    }
    let big = s.order == ByteOrder::Big;
    macro_rules! num {
        ($t:ty, $n:literal) => {
            if big {
                fill::<$n>(chunk, itemsize, offsets, out, |b| {
                    <$t>::from_be_bytes(b) as f64
                })
            } else {
                fill::<$n>(chunk, itemsize, offsets, out, |b| {
                    <$t>::from_le_bytes(b) as f64
                })
            }
        };
    }
    match (s.kind, s.size) {
        (Kind::Float, 8) => num!(f64, 8),
        (Kind::Float, 4) => num!(f32, 4),
        (Kind::Int, 8) => num!(i64, 8),
        (Kind::Int, 4) => num!(i32, 4),
        (Kind::Int, 2) => num!(i16, 2),
        (Kind::UInt, 8) => num!(u64, 8),
        (Kind::UInt, 4) => num!(u32, 4),
        (Kind::UInt, 2) => num!(u16, 2),
        _ => {
            for e in chunk.chunks_exact(itemsize) {
                for &o in offsets {
                    out.push(scalar_f64(s, &e[o..o + s.size]).unwrap_or(f64::NAN));
                }
            }
        }
    }
}

fn int_json(v: i128) -> Value {
    if let Ok(i) = i64::try_from(v) {
        json!(i)
    } else {
        json!(v as u64)
    }
}

impl Acc {
    /// Adds the statistics of other data (another stripe of chunks).
    fn absorb(&mut self, other: &Acc) {
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
fn add_bytes(acc: &mut Acc, bytes: &[u8], kind: Kind) {
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
fn add_ints<const N: usize, T: Copy + Into<i128>>(
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
fn add_finite<T: Copy>(acc: &mut Acc, values: &[T], get: impl Fn(T) -> f64) -> bool {
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
fn add_floats(acc: &mut Acc, values: &[f64]) {
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

/// The statistics of one array, as JSON: one entry per leaf column.
pub fn stats(opened: &mut Opened<'_>, progress: &indicatif::ProgressBar) -> ndnpy::Result<Value> {
    let header = opened.header.clone();
    if let DType::Scalar(s) = &header.dtype {
        if s.kind == Kind::Object {
            return Ok(json!({
                "dtype": header.dtype.to_string(),
                "shape": header.shape,
                "pickled": true,
                "columns": [],
            }));
        }
    }
    let itemsize = header.dtype.itemsize().unwrap_or(1).max(1);
    progress.set_length(header.data_len()? as u64);
    progress.set_position(0);
    let new_leaves = || {
        let mut cols = Vec::new();
        leaves(&header.dtype, "", 0, &mut cols);
        cols
    };
    let stripes = fold_chunks(opened, &|n| progress.inc(n), new_leaves, &|cols, chunk| {
        for c in cols.iter_mut() {
            c.add_chunk(chunk, itemsize);
        }
    })?;
    let mut stripes = stripes.into_iter();
    let mut cols = stripes.next().unwrap_or_else(new_leaves);
    for other in stripes {
        for (c, o) in cols.iter_mut().zip(&other) {
            c.acc.absorb(&o.acc);
        }
    }
    Ok(json!({
        "dtype": header.dtype.to_string(),
        "shape": header.shape,
        "columns": cols.iter().map(Leaf::report).collect::<Vec<_>>(),
    }))
}

/// [`stats`]' JSON of an array handed without its missing entries: the
/// array's own shape, and how many entries which mask left out.
pub fn with_missing(mut v: Value, masked: Option<crate::tables::Masked>) -> Value {
    if let Some(m) = masked {
        v["shape"] = json!(m.shape);
        v["missing"] = json!(m.missing);
        v["mask"] = json!(m.mask);
    }
    v
}

/// The text rendering of [`stats`]' JSON.
pub fn render(label: &str, v: &Value) -> String {
    let shape: Vec<usize> = serde_json::from_value(v["shape"].clone()).unwrap_or_default();
    let mut out = format!(
        "{label}: {} {}\n",
        v["dtype"].as_str().unwrap_or(""),
        crate::repr::shape_repr(&shape)
    );
    if v["pickled"] == json!(true) {
        out.push_str("  object array (pickled Python objects): no statistics, never unpickled\n");
    }
    if let (Some(n), Some(mask)) = (v["missing"].as_u64(), v["mask"].as_str()) {
        out.push_str(&format!(
            "  missing={n} (by {mask}; left out of the figures)\n"
        ));
    }
    for c in v["columns"].as_array().into_iter().flatten() {
        let name = c["field"]
            .as_str()
            .map_or(String::new(), |f| format!("{f} "));
        out.push_str(&format!("  {name}count={}", c["count"]));
        for key in [
            "min", "max", "mean", "std", "nan", "pos_inf", "neg_inf", "nat",
        ] {
            let Some(x) = c.get(key) else { continue };
            let text = match x {
                Value::Number(n) if n.is_f64() => crate::repr::py_float(n.as_f64().unwrap_or(0.0)),
                Value::String(s) => s.clone(),
                Value::Null => "-".to_owned(),
                other => other.to_string(),
            };
            let key = match key {
                "pos_inf" => "+inf",
                "neg_inf" => "-inf",
                k => k,
            };
            out.push_str(&format!(" {key}={text}"));
        }
        out.push('\n');
    }
    out
}
