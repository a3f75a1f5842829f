//! Round trips through every write and read path, for every element type ×
//! layout × dimension type, and the errors of the read and view paths.
//!
//! For each case the array is written with `to_npy_bytes`, `write_npy_to` and
//! `write_npy` (all three must give the same bytes), then read back with
//! `from_npy_bytes`, `read_npy_from`, `read_npy`, viewed with `ViewNpy`,
//! `ViewMutNpy` and `NpyMmap` (`open`, `open_cow`, `open_rw`, `create`), and
//! read as an `AnyArray`. Values, shape and memory layout (Fortran-order files
//! give Fortran-layout arrays) are checked each time.

use ndarray::{
    s, Array, Array0, Array1, Array2, Array3, ArrayBase, ArrayD, ArrayView, ArrayView1, ArrayView2,
    ArrayViewMut, ArrayViewMut1, Data, Dimension, Ix0, Ix1, Ix2, Ix3, IxDyn, ShapeBuilder,
};
use ndnpy::{
    dtype::Header, AnyArray, Element, Error, NpyMmap, ReadNpy, ViewMutNpy, ViewNpy, WriteNpy,
};
use std::fmt::Debug;

/// Element types with deterministic sample values (no NaN, so `==` works).
trait Gen: ndnpy::types::LayoutElement + Copy + PartialEq + Debug {
    fn sample(i: usize) -> Self;
}

impl Gen for bool {
    fn sample(i: usize) -> Self {
        i % 3 != 1
    }
}

macro_rules! gen_int {
    ($($t:ty),*) => {$(
        impl Gen for $t {
            fn sample(i: usize) -> Self {
                (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(11) as $t
            }
        }
    )*};
}
gen_int!(i8, i16, i32, i64, u8, u16, u32, u64);

macro_rules! gen_float {
    ($($t:ty),*) => {$(
        impl Gen for $t {
            fn sample(i: usize) -> Self {
                (i as $t) * 0.75 - 3.5
            }
        }
    )*};
}
gen_float!(f32, f64);

#[cfg(feature = "half")]
impl Gen for half::f16 {
    fn sample(i: usize) -> Self {
        half::f16::from_f32((i % 512) as f32 * 0.5 - 7.0)
    }
}

#[cfg(feature = "complex")]
macro_rules! gen_complex {
    ($($t:ty),*) => {$(
        impl Gen for num_complex::Complex<$t> {
            fn sample(i: usize) -> Self {
                num_complex::Complex::new(<$t>::sample(i), <$t>::sample(i + 17))
            }
        }
    )*};
}
#[cfg(feature = "complex")]
gen_complex!(f32, f64);

/// An array of shape `shape` (C or F layout per the builder) whose values, in
/// logical C order, are `T::sample(0..)`.
fn filled<T: Gen, Sh: ShapeBuilder>(shape: Sh) -> Array<T, Sh::Dim> {
    let mut a = Array::from_elem(shape, T::sample(0));
    a.iter_mut()
        .enumerate()
        .for_each(|(i, x)| *x = T::sample(i));
    a
}

/// Bytes copied into 16-byte-aligned storage, so views can be taken.
struct Aligned {
    storage: Vec<u128>,
    len: usize,
    offset: usize,
}

impl Aligned {
    fn new(bytes: &[u8]) -> Self {
        Self::with_offset(bytes, 0)
    }

    /// The bytes start `offset` bytes after an aligned address.
    fn with_offset(bytes: &[u8], offset: usize) -> Self {
        let mut storage = vec![0u128; (bytes.len() + offset).div_ceil(16) + 1];
        let raw: &mut [u8] = bytemuck_bytes_mut(&mut storage);
        raw[offset..offset + bytes.len()].copy_from_slice(bytes);
        Aligned {
            storage,
            len: bytes.len(),
            offset,
        }
    }

    fn bytes(&self) -> &[u8] {
        let raw = bytemuck_bytes(&self.storage);
        &raw[self.offset..self.offset + self.len]
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        let (offset, len) = (self.offset, self.len);
        &mut bytemuck_bytes_mut(&mut self.storage)[offset..offset + len]
    }
}

fn bytemuck_bytes(words: &[u128]) -> &[u8] {
    // SAFETY: u128 has no padding; any byte of it may be read as u8.
    unsafe { std::slice::from_raw_parts(words.as_ptr().cast::<u8>(), words.len() * 16) }
}

fn bytemuck_bytes_mut(words: &mut [u128]) -> &mut [u8] {
    // SAFETY: as above, and every byte pattern is a valid u128.
    unsafe { std::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<u8>(), words.len() * 16) }
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Order {
    C,
    F,
}

/// Whether `a`'s memory layout is what a file of `order` must give.
fn assert_layout<T, S: Data<Elem = T>, D: Dimension>(
    a: &ArrayBase<S, D>,
    order: Order,
    what: &str,
) {
    match order {
        Order::C => assert!(
            a.is_standard_layout(),
            "{what}: expected C layout, strides {:?}",
            a.strides()
        ),
        Order::F => {
            assert!(
                a.t().is_standard_layout(),
                "{what}: expected F layout, strides {:?}",
                a.strides()
            );
            assert!(
                !a.is_standard_layout(),
                "{what}: F case is also C-contiguous (bad test case)"
            );
        }
    }
}

/// Writes `a` every way, reads it back every way, and checks values, shape,
/// layout and the header's order. `order` is the order the file must have.
fn check<T: Gen, S: Data<Elem = T>, D: Dimension>(a: &ArrayBase<S, D>, order: Order) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.npy");

    // Writing: three paths, one byte sequence.
    let bytes = a.to_npy_bytes().unwrap();
    let mut streamed = Vec::new();
    a.write_npy_to(&mut streamed).unwrap();
    assert_eq!(bytes, streamed, "write_npy_to differs from to_npy_bytes");
    a.write_npy(&path).unwrap();
    assert_eq!(
        bytes,
        std::fs::read(&path).unwrap(),
        "write_npy differs from to_npy_bytes"
    );

    let header = Header::read_from(&bytes[..]).unwrap();
    assert_eq!(header.dtype, T::dtype());
    assert_eq!(header.shape, a.shape());
    assert_eq!(
        header.fortran_order,
        order == Order::F,
        "header fortran_order"
    );
    assert_eq!(ndnpy::dtype::Header::open(&path).unwrap(), header);
    let data_start = bytes.len() - a.len() * std::mem::size_of::<T>();
    assert_eq!(
        data_start % 64,
        0,
        "data is not 64-byte aligned in the file"
    );

    // Reading by copy.
    let owned: Vec<(&str, Array<T, D>)> = vec![
        (
            "from_npy_bytes",
            Array::<T, D>::from_npy_bytes(&bytes).unwrap(),
        ),
        (
            "read_npy_from",
            Array::<T, D>::read_npy_from(&bytes[..]).unwrap(),
        ),
        ("read_npy", Array::<T, D>::read_npy(&path).unwrap()),
    ];
    for (what, b) in &owned {
        assert_eq!(b, a, "{what}: values");
        assert_layout(b, order, what);
    }
    let dynamic = ArrayD::<T>::from_npy_bytes(&bytes).unwrap();
    assert_eq!(dynamic, a.view().into_dyn(), "IxDyn read");
    assert_layout(&dynamic, order, "IxDyn read");

    // Reading a stream leaves it after the data, even with trailing bytes.
    let mut with_tail = bytes.clone();
    with_tail.extend_from_slice(b"tail");
    let mut cursor = &with_tail[..];
    assert_eq!(Array::<T, D>::read_npy_from(&mut cursor).unwrap(), *a);
    assert_eq!(cursor, b"tail");
    assert_eq!(Array::<T, D>::from_npy_bytes(&with_tail).unwrap(), *a);

    // Views.
    let mut buf = Aligned::new(&bytes);
    {
        let v = ArrayView::<T, D>::view_npy(buf.bytes()).unwrap();
        assert_eq!(v, a);
        assert_layout(&v, order, "view_npy");
    }
    let changed = T::sample(1000);
    {
        let mut v = ArrayViewMut::<T, D>::view_npy_mut(buf.bytes_mut()).unwrap();
        assert_eq!(v, a);
        assert_layout(&v, order, "view_npy_mut");
        if let Some(x) = v.iter_mut().next() {
            *x = changed;
        }
    }
    let mut expected_changed = a.to_owned();
    if let Some(x) = expected_changed.iter_mut().next() {
        *x = changed;
    }
    let reread = Array::<T, D>::from_npy_bytes(buf.bytes()).unwrap();
    assert_eq!(reread, expected_changed, "change through view_npy_mut");

    // Memory maps.
    {
        // SAFETY: nothing else writes or truncates this file while it is mapped.
        let map = unsafe { NpyMmap::open(&path) }.unwrap();
        assert_eq!(map.header(), &header);
        let v = map.view::<T, D>().unwrap();
        assert_eq!(v, a);
        assert_layout(&v, order, "NpyMmap::open");
    }
    {
        // SAFETY: nothing else writes or truncates this file while it is mapped.
        let mut map = unsafe { NpyMmap::open_cow(&path) }.unwrap();
        if let Some(x) = map.view_mut::<T, D>().unwrap().iter_mut().next() {
            *x = changed;
        }
        assert_eq!(
            map.view::<T, D>().unwrap(),
            expected_changed,
            "open_cow view"
        );
        drop(map);
        assert_eq!(
            std::fs::read(&path).unwrap(),
            bytes,
            "open_cow changed the file"
        );
    }
    {
        // SAFETY: nothing else writes or truncates this file while it is mapped.
        let mut map = unsafe { NpyMmap::open_rw(&path) }.unwrap();
        let mut v = map.view_mut::<T, D>().unwrap();
        assert_layout(&v, order, "NpyMmap::open_rw");
        if let Some(x) = v.iter_mut().next() {
            *x = changed;
        }
        map.flush().unwrap();
        drop(map);
        assert_eq!(
            Array::<T, D>::read_npy(&path).unwrap(),
            expected_changed,
            "open_rw"
        );
    }
    // Put the original back (overwriting a file that was mapped).
    a.write_npy(&path).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    {
        let created = dir.path().join("created.npy");
        let mut map = unsafe {
            NpyMmap::create::<T, _>(
                &created,
                a.shape(),
                ndnpy::Order::from_fortran(order == Order::F),
            )
        }
        .unwrap();
        {
            let mut v = map.view_mut::<T, D>().unwrap();
            assert_layout(&v, order, "NpyMmap::create");
            v.assign(a);
        }
        map.flush().unwrap();
        drop(map);
        assert_eq!(
            std::fs::read(&created).unwrap(),
            bytes,
            "NpyMmap::create + fill differs from write_npy"
        );
    }

    // Runtime-typed reading.
    for any in [
        AnyArray::from_npy_bytes(&bytes).unwrap(),
        AnyArray::read_npy_from(&bytes[..]).unwrap(),
        AnyArray::read_npy(&path).unwrap(),
    ] {
        assert_eq!(any.dtype(), T::dtype());
        assert_eq!(any.shape(), a.shape());
        assert_eq!(any.as_array::<T>().unwrap(), &a.view().into_dyn());
        let typed = any.into_array::<T, D>().unwrap();
        assert_eq!(typed, a);
        assert_layout(&typed, order, "AnyArray::into_array");
    }
}

/// Every layout and dimension type, for one element type.
fn all_cases<T: Gen>() {
    // C order, Ix1..Ix6.
    check(&filled::<T, _>(7), Order::C);
    check(&filled::<T, _>((3, 4)), Order::C);
    check(&filled::<T, _>((2, 3, 4)), Order::C);
    check(&filled::<T, _>((2, 1, 3, 2)), Order::C);
    check(&filled::<T, _>((2, 3, 1, 2, 2)), Order::C);
    check(&filled::<T, _>((1, 2, 3, 2, 1, 2)), Order::C);
    // F order: reversed axes of a C array, and zeros(shape.f()).
    check(&filled::<T, _>((4, 3)).reversed_axes(), Order::F);
    check(&filled::<T, _>((3, 5).f()), Order::F);
    check(&filled::<T, _>((2, 3, 4).f()), Order::F);
    check(&filled::<T, _>((2, 1, 3, 2).f()), Order::F);
    check(&filled::<T, _>((2, 3, 1, 2, 2).f()), Order::F);
    check(&filled::<T, _>((2, 2, 3, 1, 2, 2).f()), Order::F);
    // F layouts that are also C-contiguous are written as C.
    check(&filled::<T, _>((1, 5).f()), Order::C);
    check(&filled::<T, _>((5, 1).f()), Order::C);
    // Strided sources: written in C order.
    let big = filled::<T, _>((6, 7));
    check(&big.slice(s![1..4, 2..6]), Order::C);
    check(&big.slice(s![.., ..;2]), Order::C);
    check(&big.slice(s![..;2, ..]), Order::C);
    check(&big.slice(s![..;-1, ..]), Order::C);
    check(&big.slice(s![.., ..;-1]), Order::C);
    check(&big.slice(s![..;-2, ..;-3]), Order::C);
    check(&big.slice(s![.., 3]), Order::C);
    check(&big.slice(s![1..5, ..;2]).reversed_axes(), Order::C);
    check(&filled::<T, _>(4).broadcast((3, 4)).unwrap(), Order::C);
    // A Fortran-contiguous slice of an F array stays F.
    check(
        &filled::<T, _>((4, 3, 5).f()).slice(s![.., .., 1..4]),
        Order::F,
    );
    // 0-d and empty.
    check(&Array0::from_elem((), T::sample(5)), Order::C);
    check(&Array1::<T>::from_vec(vec![]), Order::C);
    check(&filled::<T, _>((3, 0, 5)), Order::C);
    check(&filled::<T, _>((0, 3).f()), Order::C);
    check(&filled::<T, _>((3, 4)).slice(s![.., 4..]), Order::C);
    // IxDyn: C, F, 0-d, empty.
    check(&filled::<T, _>(IxDyn(&[3, 2, 2])), Order::C);
    check(&filled::<T, _>(IxDyn(&[3, 2]).f()), Order::F);
    check(&ArrayD::from_elem(IxDyn(&[]), T::sample(9)), Order::C);
    check(&filled::<T, _>(IxDyn(&[2, 0])), Order::C);
    check(
        &filled::<T, _>(IxDyn(&[4, 6])).slice(s![..;-1, ..;2]),
        Order::C,
    );
}

macro_rules! roundtrip_tests {
    ($($name:ident: $t:ty,)*) => {$(
        #[test]
        fn $name() {
            all_cases::<$t>();
        }
    )*};
}

roundtrip_tests! {
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
}

#[cfg(feature = "complex")]
roundtrip_tests! {
    roundtrip_complex_f32: num_complex::Complex<f32>,
    roundtrip_complex_f64: num_complex::Complex<f64>,
}

#[cfg(feature = "half")]
roundtrip_tests! {
    roundtrip_f16: half::f16,
}

/// Large strided arrays exercise the chunked writer (buffer flushes and
/// rows long enough to bypass the buffer).
#[test]
fn roundtrip_large_strided() {
    let a = filled::<f64, _>((400, 700));
    check(&a.slice(s![.., ..;2]), Order::C);
    let b = filled::<f32, _>((4, 300_000));
    check(&b.slice(s![..;2, ..]), Order::C);
    let c = filled::<u8, _>((2000, 700));
    check(&c.slice(s![..;-1, 1..]), Order::C);
    check(&filled::<i64, _>((300, 500).f()), Order::F);
}

/// NaN payloads and signs, infinities and -0.0 survive bit for bit.
#[test]
fn special_floats_bitwise() {
    let f64s = [
        f64::NAN,
        -f64::NAN,
        f64::from_bits(0x7ff0_0000_0000_0001),
        f64::INFINITY,
        f64::NEG_INFINITY,
        -0.0,
        0.0,
        f64::MIN_POSITIVE / 8.0,
        f64::MAX,
        f64::MIN,
    ];
    let a = Array1::from_vec(f64s.to_vec());
    let bytes = a.to_npy_bytes().unwrap();
    let b = Array1::<f64>::from_npy_bytes(&bytes).unwrap();
    let buf = Aligned::new(&bytes);
    let v = ArrayView1::<f64>::view_npy(buf.bytes()).unwrap();
    for (i, x) in f64s.iter().enumerate() {
        assert_eq!(b[i].to_bits(), x.to_bits(), "read element {i}");
        assert_eq!(v[i].to_bits(), x.to_bits(), "view element {i}");
    }
    let f32s = [
        f32::NAN,
        -f32::NAN,
        f32::INFINITY,
        -0.0,
        f32::MIN_POSITIVE / 8.0,
    ];
    let a = Array2::from_shape_vec((1, 5).f(), f32s.to_vec()).unwrap();
    let b = Array2::<f32>::from_npy_bytes(&a.to_npy_bytes().unwrap()).unwrap();
    for (x, y) in a.iter().zip(b.iter()) {
        assert_eq!(x.to_bits(), y.to_bits());
    }
}

/// Integer extremes of every width.
#[test]
fn integer_extremes() {
    macro_rules! extremes {
        ($($t:ty),*) => {$(
            let a = Array1::from_vec(vec![<$t>::MIN, <$t>::MAX, 0, 1, <$t>::MAX - 1]);
            check(&a, Order::C);
            check(&a.slice(s![..;-1]), Order::C);
        )*};
    }
    extremes!(i8, i16, i32, i64, u8, u16, u32, u64);
}

// ---------------------------------------------------------------- errors

#[test]
fn wrong_dtype_is_dtype_mismatch() {
    let bytes = filled::<f64, _>((2, 3)).to_npy_bytes().unwrap();
    let buf = Aligned::new(&bytes);
    macro_rules! mismatch {
        ($($t:ty),*) => {$(
            let e = Array2::<$t>::from_npy_bytes(&bytes).unwrap_err();
            assert!(matches!(e, Error::DTypeMismatch { .. }), "{}: {e:?}", stringify!($t));
            let e = ArrayView2::<$t>::view_npy(buf.bytes()).unwrap_err();
            assert!(matches!(e, Error::DTypeMismatch { .. }), "{}: {e:?}", stringify!($t));
        )*};
    }
    mismatch!(bool, i8, i16, i32, i64, u8, u16, u32, u64, f32);
    let e = Array2::<f32>::from_npy_bytes(&bytes).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("f32") && msg.contains("<f8"),
        "message names both types: {msg}"
    );
    // Signed and unsigned of the same width are different types.
    let bytes = filled::<u32, _>(4).to_npy_bytes().unwrap();
    let e = Array1::<i32>::from_npy_bytes(&bytes).unwrap_err();
    assert!(matches!(e, Error::DTypeMismatch { .. }), "{e:?}");
    // AnyArray hands back the typed array only for the right type.
    let any = AnyArray::from_npy_bytes(&bytes).unwrap();
    let e = any.into_array::<i32, Ix1>().unwrap_err();
    assert!(matches!(e, Error::DTypeMismatch { .. }), "{e:?}");
}

#[test]
fn wrong_ndim_is_ndim_mismatch() {
    let bytes = filled::<i32, _>((2, 3)).to_npy_bytes().unwrap();
    let buf = Aligned::new(&bytes);
    let e = Array3::<i32>::from_npy_bytes(&bytes).unwrap_err();
    assert!(
        matches!(
            e,
            Error::NdimMismatch {
                expected: 3,
                found: 2,
                ..
            }
        ),
        "{e:?}"
    );
    let e = Array1::<i32>::read_npy_from(&bytes[..]).unwrap_err();
    assert!(
        matches!(
            e,
            Error::NdimMismatch {
                expected: 1,
                found: 2,
                ..
            }
        ),
        "{e:?}"
    );
    let e = ArrayView::<i32, Ix0>::view_npy(buf.bytes()).unwrap_err();
    assert!(
        matches!(
            e,
            Error::NdimMismatch {
                expected: 0,
                found: 2,
                ..
            }
        ),
        "{e:?}"
    );
    let any = AnyArray::from_npy_bytes(&bytes).unwrap();
    let e = any.into_array::<i32, Ix3>().unwrap_err();
    assert!(matches!(e, Error::NdimMismatch { .. }), "{e:?}");
    // 0-d data is not a 1-element 1-D array.
    let bytes = Array0::from_elem((), 1.5f32).to_npy_bytes().unwrap();
    let e = Array1::<f32>::from_npy_bytes(&bytes).unwrap_err();
    assert!(
        matches!(
            e,
            Error::NdimMismatch {
                expected: 1,
                found: 0,
                ..
            }
        ),
        "{e:?}"
    );
}

/// The same file with its descr changed to big-endian (same length).
fn big_endian<T: Gen, D: Dimension>(a: &Array<T, D>, little: &str, big: &str) -> Vec<u8> {
    let mut bytes = a.to_npy_bytes().unwrap();
    let header_len = bytes.len() - a.len() * std::mem::size_of::<T>();
    let header = &mut bytes[..header_len];
    let pos = header
        .windows(little.len())
        .position(|w| w == little.as_bytes())
        .expect("descr in header");
    header[pos..pos + big.len()].copy_from_slice(big.as_bytes());
    // Swap each scalar unit of the data.
    let unit = if big.contains('c') {
        std::mem::size_of::<T>() / 2
    } else {
        std::mem::size_of::<T>()
    };
    for chunk in bytes[header_len..].chunks_mut(unit) {
        chunk.reverse();
    }
    bytes
}

#[cfg(target_endian = "little")]
#[test]
fn big_endian_data_reads_swapped_but_does_not_view() {
    macro_rules! swapped {
        ($t:ty, $little:expr, $big:expr) => {{
            let a = filled::<$t, _>((3, 4));
            let bytes = big_endian(&a, $little, $big);
            assert_eq!(Array2::<$t>::from_npy_bytes(&bytes).unwrap(), a);
            assert_eq!(Array2::<$t>::read_npy_from(&bytes[..]).unwrap(), a);
            assert_eq!(
                AnyArray::from_npy_bytes(&bytes)
                    .unwrap()
                    .into_array::<$t, Ix2>()
                    .unwrap(),
                a
            );
            let buf = Aligned::new(&bytes);
            let e = ArrayView2::<$t>::view_npy(buf.bytes()).unwrap_err();
            assert!(
                matches!(
                    e,
                    Error::View(ndnpy::error::ViewError::NonNativeByteOrder { .. })
                ),
                "{e:?}"
            );
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("be.npy");
            std::fs::write(&path, &bytes).unwrap();
            assert_eq!(Array2::<$t>::read_npy(&path).unwrap(), a);
            // SAFETY: nothing else writes or truncates this file while it is mapped.
            let map = unsafe { NpyMmap::open(&path) }.unwrap();
            let e = map.view::<$t, Ix2>().unwrap_err();
            assert!(
                matches!(
                    e,
                    Error::View(ndnpy::error::ViewError::NonNativeByteOrder { .. })
                ),
                "{e:?}"
            );
        }};
    }
    swapped!(i16, "'<i2'", "'>i2'");
    swapped!(u32, "'<u4'", "'>u4'");
    swapped!(i64, "'<i8'", "'>i8'");
    swapped!(f32, "'<f4'", "'>f4'");
    swapped!(f64, "'<f8'", "'>f8'");
    #[cfg(feature = "complex")]
    swapped!(num_complex::Complex<f64>, "'<c16'", "'>c16'");
    #[cfg(feature = "complex")]
    swapped!(num_complex::Complex<f32>, "'<c8'", "'>c8'");
    #[cfg(feature = "half")]
    swapped!(half::f16, "'<f2'", "'>f2'");
    // One-byte types have no byte order: a view of them always works.
    let a = filled::<i8, _>(5);
    let bytes = a.to_npy_bytes().unwrap();
    assert_eq!(ArrayView1::<i8>::view_npy(&bytes).unwrap(), a);
}

#[test]
fn misaligned_view_is_an_error() {
    macro_rules! misaligned {
        ($($t:ty),*) => {$(
            let a = filled::<$t, _>((3, 4));
            let bytes = a.to_npy_bytes().unwrap();
            let mut buf = Aligned::with_offset(&bytes, 1);
            let e = ArrayView2::<$t>::view_npy(buf.bytes()).unwrap_err();
            assert!(matches!(e, Error::View(ndnpy::error::ViewError::Misaligned { .. })), "{}: {e:?}", stringify!($t));
            let e = ArrayViewMut::<$t, Ix2>::view_npy_mut(buf.bytes_mut()).unwrap_err();
            assert!(matches!(e, Error::View(ndnpy::error::ViewError::Misaligned { .. })), "{}: {e:?}", stringify!($t));
            // Reading by copy does not care about alignment.
            assert_eq!(Array2::<$t>::from_npy_bytes(buf.bytes()).unwrap(), a);
        )*};
    }
    misaligned!(i16, i32, i64, u16, u32, u64, f32, f64);
    #[cfg(feature = "complex")]
    misaligned!(num_complex::Complex<f32>, num_complex::Complex<f64>);
    // One-byte elements are never misaligned.
    let a = filled::<u8, _>((3, 4));
    let buf = Aligned::with_offset(&a.to_npy_bytes().unwrap(), 1);
    assert_eq!(ArrayView2::<u8>::view_npy(buf.bytes()).unwrap(), a);
}

#[test]
fn short_data_is_truncated_data() {
    let a = filled::<f64, _>((3, 4));
    let bytes = a.to_npy_bytes().unwrap();
    let dir = tempfile::tempdir().unwrap();
    for cut in [1, 8, 95] {
        let short = &bytes[..bytes.len() - cut];
        let is_truncated = |e: &Error| matches!(e, Error::Data(ndnpy::error::DataError::TruncatedData { expected: 96, found }) if *found == 96 - cut as u64);
        let e = Array2::<f64>::from_npy_bytes(short).unwrap_err();
        assert!(is_truncated(&e), "from_npy_bytes: {e:?}");
        let e = Array2::<f64>::read_npy_from(short).unwrap_err();
        assert!(
            matches!(
                e,
                Error::Data(ndnpy::error::DataError::TruncatedData { .. })
            ),
            "read_npy_from: {e:?}"
        );
        let buf = Aligned::new(short);
        let e = ArrayView2::<f64>::view_npy(buf.bytes()).unwrap_err();
        assert!(is_truncated(&e), "view_npy: {e:?}");
        let e = AnyArray::from_npy_bytes(short).unwrap_err();
        assert!(
            matches!(
                e,
                Error::Data(ndnpy::error::DataError::TruncatedData { .. })
            ),
            "AnyArray: {e:?}"
        );
        let path = dir.path().join("short.npy");
        std::fs::write(&path, short).unwrap();
        let e = Array2::<f64>::read_npy(&path).unwrap_err();
        assert!(is_truncated(&e), "read_npy: {e:?}");
        // SAFETY: nothing else writes or truncates this file while it is mapped.
        let e = unsafe { NpyMmap::open(&path) }.err().unwrap();
        assert!(
            matches!(
                e,
                Error::Data(ndnpy::error::DataError::TruncatedData { .. })
            ),
            "NpyMmap::open: {e:?}"
        );
    }
}

#[test]
fn bool_bytes_other_than_0_1() {
    let a = Array1::from_vec(vec![true, false, true, false]);
    let mut bytes = a.to_npy_bytes().unwrap();
    let n = bytes.len();
    bytes[n - 3] = 2; // element 1
    bytes[n - 1] = 255; // element 3
                        // By copy: nonzero means true, as NumPy reads it.
    let read = Array1::<bool>::from_npy_bytes(&bytes).unwrap();
    assert_eq!(read, Array1::from_vec(vec![true, true, true, true]));
    assert_eq!(Array1::<bool>::read_npy_from(&bytes[..]).unwrap(), read);
    let any = AnyArray::from_npy_bytes(&bytes).unwrap();
    assert_eq!(any.into_array::<bool, Ix1>().unwrap(), read);
    // Every bool read back is a valid 0/1 byte.
    let rewritten = read.to_npy_bytes().unwrap();
    assert!(rewritten[n - 4..].iter().all(|&b| b == 1));
    // A view cannot fix the bytes: an error naming the first bad one.
    let e = ArrayView1::<bool>::view_npy(&bytes).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Data(ndnpy::error::DataError::InvalidBool { index: 1, value: 2 })
        ),
        "{e:?}"
    );
    let mut copy = bytes.clone();
    let e = ArrayViewMut1::<bool>::view_npy_mut(&mut copy).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Data(ndnpy::error::DataError::InvalidBool { index: 1, value: 2 })
        ),
        "{e:?}"
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("b.npy");
    std::fs::write(&path, &bytes).unwrap();
    assert_eq!(Array1::<bool>::read_npy(&path).unwrap(), read);
    // SAFETY: nothing else writes or truncates this file while it is mapped.
    let map = unsafe { NpyMmap::open(&path) }.unwrap();
    let e = map.view::<bool, Ix1>().unwrap_err();
    assert!(
        matches!(e, Error::Data(ndnpy::error::DataError::InvalidBool { .. })),
        "{e:?}"
    );
}

#[test]
fn read_only_map_refuses_view_mut() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.npy");
    filled::<f32, _>((4, 4)).write_npy(&path).unwrap();
    // SAFETY: nothing else writes or truncates this file while it is mapped.
    let mut map = unsafe { NpyMmap::open(&path) }.unwrap();
    let e = map.view_mut::<f32, Ix2>().unwrap_err();
    assert!(
        matches!(e, Error::View(ndnpy::error::ViewError::ReadOnly)),
        "{e:?}"
    );
    assert!(map.view::<f32, Ix2>().is_ok());
    // A wrong type or ndim on a writable map is still the type error.
    // SAFETY: nothing else writes or truncates this file while it is mapped.
    let mut map = unsafe { NpyMmap::open_rw(&path) }.unwrap();
    let e = map.view_mut::<f64, Ix2>().unwrap_err();
    assert!(matches!(e, Error::DTypeMismatch { .. }), "{e:?}");
    let e = map.view_mut::<f32, Ix1>().unwrap_err();
    assert!(matches!(e, Error::NdimMismatch { .. }), "{e:?}");
}

/// Overwriting a file through `write_npy` keeps a map of the old file valid
/// (the new file replaces it by rename).
#[test]
fn write_npy_replaces_atomically() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.npy");
    let old = filled::<i32, _>((5, 5));
    old.write_npy(&path).unwrap();
    // SAFETY: nothing else writes or truncates this file while it is mapped.
    let map = unsafe { NpyMmap::open(&path) }.unwrap();
    let new = Array2::<i32>::zeros((2, 2));
    new.write_npy(&path).unwrap();
    assert_eq!(map.view::<i32, Ix2>().unwrap(), old);
    assert_eq!(Array2::<i32>::read_npy(&path).unwrap(), new);
    let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(
        leftovers.len(),
        1,
        "temporary files left behind: {leftovers:?}"
    );
}
