//! `ndnpy stats`: count, min, max, mean, standard deviation and NaN/±inf
//! counts per array and per record field, in one streaming pass over the
//! data with constant memory.
//!
//! Min and max ignore NaN (as `np.nanmin`/`np.nanmax`); mean and standard
//! deviation (population, `ddof=0`) are over the finite values.

mod acc;

use crate::input::{fold_chunks, Opened};
use crate::values::{datetime_str, scalar_f64, scalar_i128};
use acc::{add_bytes, add_finite, add_floats, add_ints, Acc};
use ndnpy::{dtype::ByteOrder, dtype::DType, dtype::Kind, dtype::Scalar};
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
