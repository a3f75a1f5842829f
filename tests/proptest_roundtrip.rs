//! Property tests: for random element types, shapes (zeros included),
//! memory layouts (C, F, sliced, stepped, reversed, permuted, broadcast) and
//! dimension types, writing and reading back gives the same array:
//!
//! - `Array::<T, D>::from_npy_bytes` and `read_npy_from` return the values
//!   and shape that were written (compared bit for bit, so NaNs count);
//! - `ArrayView::<T, D>::view_npy` and `view_npy_mut` see the same;
//! - `AnyArray` reads it and hands back the typed array;
//! - `to_npy_bytes` is byte-identical to `write_npy_to`, and both are a
//!   64-byte-aligned header followed by exactly the data;
//! - the header is Fortran order exactly when the source is F- and not
//!   C-contiguous;
//! - `write_npy(path)` then `read_npy(path)` round-trips too.
//!
//! Each property runs 64 cases (override with `PROPTEST_CASES`).

use ndarray::{
    Array, ArrayD, ArrayView, ArrayViewD, ArrayViewMut, Dimension, Ix0, Ix1, Ix2, Ix3, Ix4, IxDyn,
    ShapeBuilder, Slice,
};
use ndnpy::types::num_complex::Complex;
use ndnpy::{
    dtype::Header, types::LayoutElement, AnyArray, Element, ReadNpy, ViewMutNpy, ViewNpy, WriteNpy,
};
use proptest::prelude::*;
use proptest::test_runner::Config;

/// Builds a value of an element type from 64 random bits (every bit pattern
/// for the numeric types, NaNs and infinities included).
trait FromBits: LayoutElement {
    fn from_bits(bits: u64) -> Self;
    /// The element's bytes, for bit-exact comparison (NaNs included).
    fn bytes(&self) -> Vec<u8>;
}

macro_rules! from_bits_int {
    ($($t:ty),*) => {$(
        impl FromBits for $t {
            fn from_bits(bits: u64) -> Self {
                bits as $t
            }
            fn bytes(&self) -> Vec<u8> {
                self.to_ne_bytes().to_vec()
            }
        }
    )*};
}
from_bits_int!(i8, i16, i32, i64, u8, u16, u32, u64);

impl FromBits for bool {
    fn from_bits(bits: u64) -> Self {
        bits & 1 == 1
    }
    fn bytes(&self) -> Vec<u8> {
        vec![u8::from(*self)]
    }
}
impl FromBits for f32 {
    fn from_bits(bits: u64) -> Self {
        f32::from_bits(bits as u32)
    }
    fn bytes(&self) -> Vec<u8> {
        self.to_ne_bytes().to_vec()
    }
}
impl FromBits for f64 {
    fn from_bits(bits: u64) -> Self {
        f64::from_bits(bits)
    }
    fn bytes(&self) -> Vec<u8> {
        self.to_ne_bytes().to_vec()
    }
}
impl FromBits for Complex<f32> {
    fn from_bits(bits: u64) -> Self {
        Complex::new(
            f32::from_bits(bits as u32),
            f32::from_bits((bits >> 32) as u32),
        )
    }
    fn bytes(&self) -> Vec<u8> {
        [self.re.to_ne_bytes(), self.im.to_ne_bytes()].concat()
    }
}
impl FromBits for Complex<f64> {
    fn from_bits(bits: u64) -> Self {
        Complex::new(f64::from_bits(bits), f64::from_bits(bits.rotate_left(17)))
    }
    fn bytes(&self) -> Vec<u8> {
        [self.re.to_ne_bytes(), self.im.to_ne_bytes()].concat()
    }
}
#[cfg(feature = "half")]
impl FromBits for ndnpy::types::half::f16 {
    fn from_bits(bits: u64) -> Self {
        ndnpy::types::half::f16::from_bits(bits as u16)
    }
    fn bytes(&self) -> Vec<u8> {
        self.to_ne_bytes().to_vec()
    }
}

/// How the array to write lies in memory.
#[derive(Debug, Clone)]
struct Layout {
    /// Start from a Fortran-order owned array.
    fortran: bool,
    /// Take the array as a slice `1..1+n` of a larger one on these axes.
    offset_mask: u8,
    /// Take every second element of a larger array on these axes.
    step_mask: u8,
    /// Reverse these axes.
    reverse_mask: u8,
    /// Permute the axes by this rotation.
    rotate: usize,
    /// Broadcast a new leading axis of this length (stride 0).
    broadcast: Option<usize>,
}

fn layout() -> impl Strategy<Value = Layout> {
    (
        any::<bool>(),
        any::<u8>(),
        any::<u8>(),
        any::<u8>(),
        0usize..4,
        prop::option::weighted(0.2, 0usize..3),
    )
        .prop_map(
            |(fortran, offset_mask, step_mask, reverse_mask, rotate, broadcast)| Layout {
                fortran,
                offset_mask,
                step_mask,
                reverse_mask,
                rotate,
                broadcast,
            },
        )
}

/// Shapes of 0 to 4 axes, each 0 to 4 long.
fn shape() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(0usize..5, 0..=4)
}

/// Bits of each element with a small chance of repeating structure (so
/// that simple values such as 0 and 1 occur).
fn seeds() -> impl Strategy<Value = Vec<u64>> {
    prop::collection::vec(prop_oneof![3 => any::<u64>(), 1 => 0u64..4], 0..=1024)
}

/// An owned base array whose `layout` view has shape `shape` (before the
/// rotation and broadcast), filled with values made from `seeds`.
fn base_array<T: FromBits>(shape: &[usize], layout: &Layout, seeds: &[u64]) -> ArrayD<T> {
    let big: Vec<usize> = shape
        .iter()
        .enumerate()
        .map(|(axis, &n)| {
            let mut n = n;
            if layout.step_mask >> axis & 1 == 1 {
                n *= 2;
            }
            if layout.offset_mask >> axis & 1 == 1 {
                n += 2;
            }
            n
        })
        .collect();
    let len: usize = big.iter().product();
    let data: Vec<T> = (0..len)
        .map(|i| {
            let s = if seeds.is_empty() {
                i as u64
            } else {
                seeds[i % seeds.len()] ^ (i / seeds.len()) as u64
            };
            T::from_bits(s)
        })
        .collect();
    let dim = IxDyn(&big);
    if layout.fortran {
        Array::from_shape_vec(dim.f(), data).unwrap()
    } else {
        Array::from_shape_vec(dim, data).unwrap()
    }
}

/// The `layout` view of `base` (see [`base_array`]), before any broadcast.
fn layout_view<'a, T>(base: &'a ArrayD<T>, shape: &[usize], layout: &Layout) -> ArrayViewD<'a, T> {
    let mut view = base.view();
    for (axis, &n) in shape.iter().enumerate() {
        let start = if layout.offset_mask >> axis & 1 == 1 {
            1
        } else {
            0
        };
        let step = if layout.step_mask >> axis & 1 == 1 {
            2
        } else {
            1
        };
        let end = start + n * step;
        view.slice_axis_inplace(
            ndarray::Axis(axis),
            Slice::new(start as isize, Some(end as isize), step as isize),
        );
        if layout.reverse_mask >> axis & 1 == 1 {
            view.invert_axis(ndarray::Axis(axis));
        }
    }
    assert_eq!(view.shape(), shape);
    let ndim = shape.len();
    if ndim > 1 {
        let perm: Vec<usize> = (0..ndim).map(|i| (i + layout.rotate) % ndim).collect();
        view = view.permuted_axes(perm);
    }
    view
}

/// The bytes of one element (bit-exact comparison, NaNs included).
fn bits<T: FromBits>(x: &T) -> Vec<u8> {
    x.bytes()
}

fn same_values<T: FromBits, D: Dimension, E: Dimension>(
    got: &ArrayView<'_, T, D>,
    want: &ArrayView<'_, T, E>,
) -> Result<(), TestCaseError> {
    prop_assert_eq!(got.shape(), want.shape());
    // `iter` walks logical (C) order whatever the memory layout.
    for (i, (a, b)) in got.iter().zip(want.iter()).enumerate() {
        prop_assert_eq!(bits(a), bits(b), "element {} differs", i);
    }
    Ok(())
}

/// Copies `bytes` into 8-byte-aligned memory (`Vec<u8>` promises only 1).
fn aligned(bytes: &[u8]) -> Vec<u64> {
    let mut words = vec![0u64; bytes.len().div_ceil(8)];
    bytemuck::cast_slice_mut::<u64, u8>(&mut words)[..bytes.len()].copy_from_slice(bytes);
    words
}

fn check_as<T: FromBits, D: Dimension>(source: ArrayViewD<'_, T>) -> Result<(), TestCaseError> {
    let source: ArrayView<'_, T, D> = source.into_dimensionality::<D>().unwrap();

    // to_npy_bytes == write_npy_to.
    let bytes = source.to_npy_bytes().unwrap();
    let mut written = Vec::new();
    source.write_npy_to(&mut written).unwrap();
    prop_assert_eq!(&bytes, &written);

    // Header: aligned, right order flag, exact data length.
    let header = Header::read_from(&bytes[..]).unwrap();
    let data_len = source.len() * std::mem::size_of::<T>();
    prop_assert_eq!(bytes.len() % 64, data_len % 64);
    let header_len = bytes.len() - data_len;
    prop_assert_eq!(header_len % 64, 0);
    prop_assert_eq!(header.shape.as_slice(), source.shape());
    prop_assert_eq!(header.dtype.clone(), T::dtype());
    let f_only = source.t().is_standard_layout() && !source.is_standard_layout();
    let contiguous_f = f_only && source.as_slice_memory_order().is_some();
    prop_assert_eq!(header.fortran_order, contiguous_f);

    // Owned reads.
    let read = Array::<T, D>::from_npy_bytes(&bytes).unwrap();
    same_values(&read.view(), &source)?;
    if header.fortran_order && source.ndim() > 1 && source.len() > 1 {
        prop_assert!(!read.is_standard_layout(), "Fortran data read as F layout");
    }
    let streamed = Array::<T, D>::read_npy_from(&bytes[..]).unwrap();
    same_values(&streamed.view(), &source)?;

    // Views, shared and mutable.
    let mut words = aligned(&bytes);
    {
        let buf: &[u8] = &bytemuck::cast_slice::<u64, u8>(&words)[..bytes.len()];
        let view = ArrayView::<T, D>::view_npy(buf).unwrap();
        same_values(&view, &source)?;
    }
    {
        let buf: &mut [u8] = &mut bytemuck::cast_slice_mut::<u64, u8>(&mut words)[..bytes.len()];
        let view = ArrayViewMut::<T, D>::view_npy_mut(buf).unwrap();
        same_values(&view.view(), &source)?;
    }

    // Runtime-typed read.
    let any = AnyArray::from_npy_bytes(&bytes).unwrap();
    prop_assert_eq!(any.shape(), source.shape());
    prop_assert_eq!(any.dtype(), T::dtype());
    let typed = any.into_array::<T, D>().unwrap();
    same_values(&typed.view(), &source)?;

    // Writing what was read gives the same bytes again.
    prop_assert_eq!(read.to_npy_bytes().unwrap(), bytes);
    Ok(())
}

/// Checks the array as `IxDyn` and as the fixed dimension type of its rank.
fn check<T: FromBits>(
    shape: Vec<usize>,
    layout: Layout,
    seeds: Vec<u64>,
) -> Result<(), TestCaseError> {
    let base = base_array::<T>(&shape, &layout, &seeds);
    let view = layout_view(&base, &shape, &layout);
    let broadcast = match layout.broadcast {
        Some(n) if view.ndim() < 4 => {
            let mut bshape = vec![n];
            bshape.extend_from_slice(view.shape());
            view.broadcast(IxDyn(&bshape))
        }
        _ => None,
    };
    let view = broadcast.unwrap_or_else(|| view.view());
    check_as::<T, IxDyn>(view.clone())?;
    match view.ndim() {
        0 => check_as::<T, Ix0>(view),
        1 => check_as::<T, Ix1>(view),
        2 => check_as::<T, Ix2>(view),
        3 => check_as::<T, Ix3>(view),
        4 => check_as::<T, Ix4>(view),
        5 => check_as::<T, ndarray::Ix5>(view),
        n => panic!("unexpected rank {n}"),
    }
}

fn config() -> Config {
    // A fixed case count keeps the suite fast; PROPTEST_CASES overrides it.
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(64);
    Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    }
}

macro_rules! roundtrip_properties {
    ($($name:ident: $t:ty),* $(,)?) => {
        proptest! {
            #![proptest_config(config())]
            $(
                #[test]
                fn $name(shape in shape(), layout in layout(), seeds in seeds()) {
                    check::<$t>(shape, layout, seeds)?;
                }
            )*
        }
    };
}

roundtrip_properties! {
    roundtrip_bool: bool,
    roundtrip_i8: i8,
    roundtrip_i16: i16,
    roundtrip_i32: i32,
    roundtrip_i64: i64,
    roundtrip_u8: u8,
    roundtrip_u16: u16,
    roundtrip_u32: u32,
    roundtrip_u64: u64,
    roundtrip_f32: f32,
    roundtrip_f64: f64,
    roundtrip_c64: Complex<f32>,
    roundtrip_c128: Complex<f64>,
}

#[cfg(feature = "half")]
roundtrip_properties! {
    roundtrip_f16: ndnpy::types::half::f16,
}

proptest! {
    #![proptest_config(Config { cases: config().cases / 4 + 1, ..config() })]

    /// `write_npy(path)` then `read_npy(path)` (file I/O, so fewer cases).
    #[test]
    fn roundtrip_through_a_file(shape in shape(), layout in layout(), seeds in seeds(), wide in any::<bool>()) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.npy");
        if wide {
            let base = base_array::<f64>(&shape, &layout, &seeds);
            let view = layout_view(&base, &shape, &layout);
            view.write_npy(&path).unwrap();
            prop_assert_eq!(std::fs::read(&path).unwrap(), view.to_npy_bytes().unwrap());
            let read = ArrayD::<f64>::read_npy(&path).unwrap();
            same_values(&read.view(), &view)?;
        } else {
            let base = base_array::<u8>(&shape, &layout, &seeds);
            let view = layout_view(&base, &shape, &layout);
            view.write_npy(&path).unwrap();
            let read = ArrayD::<u8>::read_npy(&path).unwrap();
            same_values(&read.view(), &view)?;
            let any = AnyArray::read_npy(&path).unwrap();
            prop_assert_eq!(any.as_array::<u8>().unwrap().view(), read.view());
        }
        // Nothing but the target is left in the folder.
        prop_assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
