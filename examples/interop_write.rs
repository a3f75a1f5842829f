//! Writes a set of `.npy` files with ndnpy, plus `manifest.json` describing
//! what each one must contain, for `scripts/interop_check.py` to verify with
//! NumPy (dtype, shape, order, exact values, and byte-identity with
//! `np.save`).
//!
//! ```text
//! cargo run --release --example interop_write -- <dir>
//! python3 scripts/interop_check.py <dir>
//! ```
//! (`scripts/interop.sh` does both in a temporary folder.)
//!
//! Covers every element type (f16 with `--features half`), C, Fortran,
//! sliced, stepped, reversed and broadcast layouts, 0-d and empty arrays,
//! 1-D to 5-D and `IxDyn`, special floats and integer extremes, every write
//! method, and files made with `NpyMmap::create`.

use ndarray::{
    s, Array, Array0, Array1, Array2, Array3, Array4, ArrayBase, ArrayD, Data, Dimension, Ix2,
    IxDyn, ShapeBuilder,
};
use ndnpy::{types::LayoutElement, NpyMmap, WriteNpy};
use serde_json::{json, Value};
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

/// Arrays with more elements than this are checked through a raw sidecar
/// file rather than JSON values.
const MAX_JSON_VALUES: usize = 10_000;

/// `<` or `>` as NumPy spells this machine's byte order.
const E: &str = if cfg!(target_endian = "little") {
    "<"
} else {
    ">"
};

/// What the example needs to know about an element type, independently of
/// the crate: NumPy's spelling of it, sample values, and an exact JSON form.
trait Sample: LayoutElement {
    /// The dtype string NumPy reports (`np.dtype(...).str`).
    fn dtype_str() -> String;
    /// `"bool"`, `"int"`, `"float"` or `"complex"`: how the checker compares.
    const CHECK: &'static str;
    /// A deterministic, varied value for position `i`.
    fn sample(i: usize) -> Self;
    /// Values at the edges of the type (extremes, NaN, infinities, -0.0).
    fn specials() -> Vec<Self>;
    /// The value as exact JSON (floats as Rust's shortest round-trip repr).
    fn to_json(&self) -> Value;
    /// Bit patterns of the floats in the value (empty for non-floats).
    fn bits(&self) -> Vec<u64> {
        Vec::new()
    }
    /// The value's bytes in native order, as they lie in memory.
    fn ne_bytes(&self) -> Vec<u8>;
}

impl Sample for bool {
    fn dtype_str() -> String {
        "|b1".into()
    }
    const CHECK: &'static str = "bool";
    fn sample(i: usize) -> Self {
        i.is_multiple_of(3)
    }
    fn specials() -> Vec<Self> {
        vec![true, false, false, true]
    }
    fn to_json(&self) -> Value {
        json!(*self)
    }
    fn ne_bytes(&self) -> Vec<u8> {
        vec![u8::from(*self)]
    }
}

macro_rules! int_sample {
    ($($t:ty),*) => {$(
        impl Sample for $t {
            fn dtype_str() -> String {
                let size = std::mem::size_of::<$t>();
                let kind = if <$t>::MIN == 0 { 'u' } else { 'i' };
                format!("{}{}{}", if size == 1 { "|" } else { E }, kind, size)
            }
            const CHECK: &'static str = "int";
            fn sample(i: usize) -> Self {
                // Wrapping multiplication spreads values over the whole range,
                // negatives included for signed types.
                (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(7) as $t
            }
            fn specials() -> Vec<Self> {
                vec![<$t>::MIN, <$t>::MAX, 0, 1, <$t>::MAX - 1, <$t>::MIN.wrapping_add(1)]
            }
            fn to_json(&self) -> Value {
                json!(*self)
            }
            fn ne_bytes(&self) -> Vec<u8> {
                self.to_ne_bytes().to_vec()
            }
        }
    )*};
}
int_sample!(i8, i16, i32, i64, u8, u16, u32, u64);

macro_rules! float_sample {
    ($t:ty, $bits:ty) => {
        impl Sample for $t {
            fn dtype_str() -> String {
                format!("{E}f{}", std::mem::size_of::<$t>())
            }
            const CHECK: &'static str = "float";
            fn sample(i: usize) -> Self {
                (i as $t) * 0.37 - 5.1
            }
            fn specials() -> Vec<Self> {
                vec![
                    <$t>::NAN,
                    -<$t>::NAN,
                    <$t>::INFINITY,
                    <$t>::NEG_INFINITY,
                    0.0,
                    -0.0,
                    <$t>::MAX,
                    <$t>::MIN,
                    <$t>::MIN_POSITIVE,
                    <$t>::MIN_POSITIVE / 4.0, // subnormal
                    <$t>::EPSILON,
                    0.1,
                    1.0 / 3.0,
                ]
            }
            fn to_json(&self) -> Value {
                float_json(self.is_nan(), self.is_sign_negative(), format!("{self:?}"))
            }
            fn bits(&self) -> Vec<u64> {
                vec![u64::from(<$bits>::from(self.to_bits()))]
            }
            fn ne_bytes(&self) -> Vec<u8> {
                self.to_ne_bytes().to_vec()
            }
        }
    };
}
float_sample!(f32, u32);
float_sample!(f64, u64);

#[cfg(feature = "half")]
impl Sample for half::f16 {
    fn dtype_str() -> String {
        format!("{E}f2")
    }
    const CHECK: &'static str = "float";
    fn sample(i: usize) -> Self {
        half::f16::from_f32((i as f32) * 0.37 - 5.1)
    }
    fn specials() -> Vec<Self> {
        use half::f16;
        vec![
            f16::NAN,
            -f16::NAN,
            f16::INFINITY,
            f16::NEG_INFINITY,
            f16::ZERO,
            f16::NEG_ZERO,
            f16::MAX,
            f16::MIN,
            f16::MIN_POSITIVE,
            f16::MIN_POSITIVE_SUBNORMAL,
            f16::EPSILON,
            f16::from_f32(0.1),
        ]
    }
    fn to_json(&self) -> Value {
        float_json(self.is_nan(), self.is_sign_negative(), format!("{self:?}"))
    }
    fn bits(&self) -> Vec<u64> {
        vec![u64::from(self.to_bits())]
    }
    fn ne_bytes(&self) -> Vec<u8> {
        self.to_ne_bytes().to_vec()
    }
}

#[cfg(feature = "complex")]
macro_rules! complex_sample {
    ($t:ty) => {
        impl Sample for num_complex::Complex<$t> {
            fn dtype_str() -> String {
                format!("{E}c{}", 2 * std::mem::size_of::<$t>())
            }
            const CHECK: &'static str = "complex";
            fn sample(i: usize) -> Self {
                num_complex::Complex::new(<$t>::sample(i), <$t>::sample(i + 1000))
            }
            fn specials() -> Vec<Self> {
                let f = <$t>::specials();
                // Every special as real part and as imaginary part.
                f.iter()
                    .zip(f.iter().rev())
                    .map(|(&re, &im)| num_complex::Complex::new(re, im))
                    .collect()
            }
            fn to_json(&self) -> Value {
                json!([self.re.to_json(), self.im.to_json()])
            }
            fn bits(&self) -> Vec<u64> {
                let mut b = self.re.bits();
                b.extend(self.im.bits());
                b
            }
            fn ne_bytes(&self) -> Vec<u8> {
                [self.re.ne_bytes(), self.im.ne_bytes()].concat()
            }
        }
    };
}
#[cfg(feature = "complex")]
complex_sample!(f32);
#[cfg(feature = "complex")]
complex_sample!(f64);

/// A float as a string Python's `float()` reads back exactly: Rust's
/// shortest round-trip repr, with the sign of a NaN kept (`-nan`).
fn float_json(nan: bool, negative: bool, repr: String) -> Value {
    match (nan, negative) {
        (true, true) => json!("-nan"),
        (true, false) => json!("nan"),
        _ => json!(repr),
    }
}

/// NumPy's `flags.c_contiguous` / `flags.f_contiguous` for a shape and
/// element strides, computed here without asking ndarray or the crate.
fn numpy_contiguity(shape: &[usize], strides: &[isize]) -> (bool, bool) {
    if shape.contains(&0) {
        return (true, true);
    }
    let check = |axes: &mut dyn Iterator<Item = usize>| {
        let mut expected = 1isize;
        for k in axes {
            if shape[k] != 1 {
                if strides[k] != expected {
                    return false;
                }
                expected *= shape[k] as isize;
            }
        }
        true
    };
    let c = check(&mut (0..shape.len()).rev());
    let f = check(&mut (0..shape.len()));
    (c, f)
}

/// How a case is written to disk.
#[derive(Clone, Copy)]
enum Method {
    ToBytes,
    WriteTo,
    Path,
}

struct Writer {
    dir: PathBuf,
    entries: Vec<Value>,
    counter: usize,
}

impl Writer {
    fn next_method(&mut self) -> Method {
        self.counter += 1;
        match self.counter % 3 {
            0 => Method::ToBytes,
            1 => Method::WriteTo,
            _ => Method::Path,
        }
    }

    /// Writes `array` as `<type>_<label>.npy` and records what NumPy must find.
    fn emit<T: Sample, S: Data<Elem = T>, D: Dimension>(
        &mut self,
        label: &str,
        array: &ArrayBase<S, D>,
    ) -> ndnpy::Result<()> {
        let name = format!("{}_{}.npy", type_tag::<T>(), label);
        let path = self.dir.join(&name);
        let method = self.next_method();
        match method {
            Method::ToBytes => std::fs::write(&path, array.to_npy_bytes()?)?,
            Method::WriteTo => array.write_npy_to(BufWriter::new(File::create(&path)?))?,
            Method::Path => array.write_npy(&path)?,
        }
        let (c, f) = numpy_contiguity(array.shape(), array.strides());
        self.record::<T>(&name, array.shape(), f && !c, array.iter().copied(), label)?;
        Ok(())
    }

    fn record<T: Sample>(
        &mut self,
        name: &str,
        shape: &[usize],
        fortran_order: bool,
        values: impl Iterator<Item = T>,
        label: &str,
    ) -> std::io::Result<()> {
        let values: Vec<T> = values.collect();
        let mut entry = json!({
            "file": name,
            "case": label,
            "dtype": T::dtype_str(),
            "kind": T::CHECK,
            "shape": shape,
            "fortran_order": fortran_order,
        });
        if values.len() > MAX_JSON_VALUES {
            // Large arrays: the expected C-order bytes in a sidecar file,
            // taken from ndarray's logical iteration order, not from the crate.
            let raw = format!("{name}.raw");
            let bytes: Vec<u8> = values.iter().flat_map(Sample::ne_bytes).collect();
            std::fs::write(self.dir.join(&raw), bytes)?;
            entry["raw"] = json!(raw);
        } else {
            entry["values"] = json!(values.iter().map(Sample::to_json).collect::<Vec<_>>());
            if T::CHECK == "float" || T::CHECK == "complex" {
                entry["bits"] = json!(values.iter().flat_map(Sample::bits).collect::<Vec<_>>());
            }
        }
        self.entries.push(entry);
        Ok(())
    }

    /// Creates a file with `NpyMmap::create`, fills it through a mutable
    /// view, flushes it and records the values in C order.
    fn emit_mmap<T: Sample>(
        &mut self,
        label: &str,
        shape: [usize; 2],
        fortran: bool,
    ) -> ndnpy::Result<()> {
        let name = format!("{}_{}.npy", type_tag::<T>(), label);
        let path = self.dir.join(&name);
        let mut map =
            // SAFETY: nothing else writes or truncates this file while it is mapped.
            unsafe { NpyMmap::create::<T, _>(&path, &shape, ndnpy::Order::from_fortran(fortran))? };
        {
            let mut view = map.view_mut::<T, Ix2>()?;
            for ((i, j), x) in view.indexed_iter_mut() {
                *x = T::sample(i * 1000 + j);
            }
        }
        map.flush()?;
        let expected = Array2::from_shape_fn(shape, |(i, j)| T::sample(i * 1000 + j));
        let (c, f) = if fortran {
            numpy_contiguity(&shape, &[1, shape[0] as isize])
        } else {
            numpy_contiguity(&shape, &[shape[1] as isize, 1])
        };
        self.record::<T>(&name, &shape, f && !c, expected.iter().copied(), label)?;
        Ok(())
    }
}

/// A file-name tag for the type, from its NumPy spelling (`f8`, `c16`, `b1`).
fn type_tag<T: Sample>() -> String {
    T::dtype_str()[1..].to_string()
}

fn filled<T: Sample, Sh: ShapeBuilder>(shape: Sh) -> Array<T, Sh::Dim> {
    let mut a = Array::from_elem(shape, T::sample(0));
    // Fill in logical C order so values do not depend on the memory layout.
    for (i, x) in a.iter_mut().enumerate() {
        *x = T::sample(i);
    }
    a
}

/// Every layout and dimensionality, for one element type.
fn cases<T: Sample>(w: &mut Writer) -> ndnpy::Result<()> {
    let c2: Array2<T> = filled((3, 4));
    w.emit("c_2d", &c2)?;
    w.emit(
        "f_2d_reversed_axes",
        &filled::<T, _>((4, 3)).reversed_axes(),
    )?;
    w.emit("f_3d_zeros_f", &filled::<T, _>((2, 3, 4).f()))?;
    w.emit("f_4d", &filled::<T, _>((2, 3, 1, 4).f()))?;
    // Degenerate shapes that are both C- and F-contiguous: C order.
    w.emit("f_1x5", &filled::<T, _>((1, 5).f()))?;
    w.emit("f_5x1", &filled::<T, _>((5, 1).f()))?;
    w.emit("f_empty_0x3", &filled::<T, _>((0, 3).f()))?;

    let big: Array2<T> = filled((6, 7));
    w.emit("sliced", &big.slice(s![1..4, 2..6]))?;
    w.emit("stepped_cols", &big.slice(s![.., ..;2]))?;
    w.emit("stepped_rows", &big.slice(s![..;2, ..]))?;
    w.emit("reversed_rows", &big.slice(s![..;-1, ..]))?;
    w.emit("reversed_cols", &big.slice(s![.., ..;-1]))?;
    w.emit("reversed_both_stepped", &big.slice(s![..;-2, ..;-3]))?;
    w.emit(
        "transposed_slice",
        &big.slice(s![1..5, ..;2]).reversed_axes(),
    )?;
    // An F-contiguous slice of an F array (the first axis cut): F order.
    let f3: Array3<T> = filled((4, 3, 5).f());
    w.emit("f_sliced_last_axis", &f3.slice(s![.., .., 1..4]))?;
    let row: Array1<T> = filled(4);
    w.emit("broadcast_2d", &row.broadcast((3, 4)).unwrap())?;
    w.emit(
        "broadcast_3d",
        &filled::<T, _>((3, 1)).broadcast((2, 3, 5)).unwrap(),
    )?;

    w.emit("0d", &Array0::from_elem((), T::sample(7)))?;
    w.emit("empty_1d", &Array1::<T>::from_vec(vec![]))?;
    w.emit("empty_3x0x5", &filled::<T, _>((3, 0, 5)))?;
    w.emit(
        "empty_huge_first_axis",
        &filled::<T, _>((123_456_789_012, 0)),
    )?;

    w.emit("1d", &filled::<T, _>(10))?;
    w.emit("3d", &filled::<T, _>((2, 3, 4)))?;
    w.emit(
        "4d",
        &Array4::<T>::from_shape_fn((2, 1, 3, 2), |(a, b, c, d)| {
            T::sample(a * 100 + b * 10 + c * 3 + d)
        }),
    )?;
    w.emit("5d", &filled::<T, _>((2, 2, 1, 3, 2)))?;
    w.emit("ixdyn_3d", &filled::<T, _>(IxDyn(&[3, 2, 2])))?;
    w.emit(
        "ixdyn_f_2d",
        &filled::<T, _>(IxDyn(&[3, 2]).f())
            .into_dimensionality::<IxDyn>()
            .unwrap(),
    )?;
    w.emit("ixdyn_0d", &ArrayD::from_elem(IxDyn(&[]), T::sample(3)))?;
    w.emit("specials", &Array1::from_vec(T::specials()))?;
    let sp = Array1::from_vec(T::specials());
    let n = sp.len();
    w.emit(
        "specials_f",
        &sp.into_shape_with_order(((n / 2, 2), ndarray::Order::F))
            .unwrap_or_else(|_| Array::from_shape_vec((1, n).f(), T::specials()).unwrap()),
    )?;

    w.emit_mmap::<T>("mmap_c", [5, 3], false)?;
    w.emit_mmap::<T>("mmap_f", [5, 3], true)?;
    Ok(())
}

/// Arrays large enough that the strided writer fills and flushes its
/// 1 MiB buffer several times, and rows long enough to bypass it.
fn large_cases(w: &mut Writer) -> ndnpy::Result<()> {
    let a: Array2<f64> = filled((500, 700));
    w.emit("large_stepped_cols", &a.slice(s![.., ..;2]))?;
    let b: Array2<f32> = filled((6, 300_000));
    w.emit("large_long_rows_stepped", &b.slice(s![..;2, ..]))?;
    let c: Array2<u8> = filled((3000, 1000));
    w.emit("large_reversed", &c.slice(s![..;-1, 1..]))?;
    let d: Array2<f64> = filled((700, 500).f());
    w.emit("large_f", &d)?;
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .ok_or("usage: interop_write <output-dir>")?;
    std::fs::create_dir_all(&dir)?;
    let mut w = Writer {
        dir: dir.clone(),
        entries: Vec::new(),
        counter: 0,
    };
    cases::<bool>(&mut w)?;
    cases::<i8>(&mut w)?;
    cases::<i16>(&mut w)?;
    cases::<i32>(&mut w)?;
    cases::<i64>(&mut w)?;
    cases::<u8>(&mut w)?;
    cases::<u16>(&mut w)?;
    cases::<u32>(&mut w)?;
    cases::<u64>(&mut w)?;
    cases::<f32>(&mut w)?;
    cases::<f64>(&mut w)?;
    #[cfg(feature = "complex")]
    {
        cases::<num_complex::Complex<f32>>(&mut w)?;
        cases::<num_complex::Complex<f64>>(&mut w)?;
    }
    #[cfg(feature = "half")]
    cases::<half::f16>(&mut w)?;
    large_cases(&mut w)?;

    write_manifest(&dir, &w.entries)?;
    println!(
        "interop_write: wrote {} files and manifest.json to {}",
        w.entries.len(),
        dir.display()
    );
    Ok(())
}

fn write_manifest(dir: &Path, entries: &[Value]) -> std::io::Result<()> {
    let file = BufWriter::new(File::create(dir.join("manifest.json"))?);
    serde_json::to_writer(file, &json!({ "byte_order": E, "files": entries }))?;
    Ok(())
}
