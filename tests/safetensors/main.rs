//! `.npz` <-> safetensors (feature `safetensors`): every type both hold
//! both ways, layouts converted, refusals that name the member, metadata,
//! and damaged input on either side. Python's own safetensors checks the
//! files in CI (`scripts/interop_safetensors.py`).
#![cfg(feature = "safetensors")]

use half::{bf16, f16};
use ndarray::{array, Array1, ArrayD, IxDyn};
use ndnpy::safetensors::{
    npz_to_safetensors, npz_to_safetensors_with, safetensors_to_npz, safetensors_to_npz_with,
    MlDtype, SafetensorsFile, SafetensorsOptions, METADATA_MEMBER,
};
use ndnpy::{
    dtype::DType, dtype::Header, dtype::Version, types::Float8E4M3Fn, types::Float8E5M2, AnyArray,
    Error, NpzMmap, NpzReader, NpzWriter, ReadNpy,
};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/ml_dtypes")
        .join(name)
}

/// Maps `path`: the tests never change a file while it is mapped.
fn map(path: &Path) -> NpzMmap {
    // SAFETY: each test writes its files before mapping them and leaves
    // them alone while the map lives.
    unsafe { NpzMmap::open(path).unwrap() }
}

fn st(path: &Path) -> SafetensorsFile {
    SafetensorsFile::new(std::fs::read(path).unwrap()).unwrap()
}

/// One archive with a member of every NumPy type safetensors holds.
fn add_all_types(w: &mut NpzWriter<impl std::io::Write + std::io::Seek>) {
    w.add("bool", &array![true, false, true]).unwrap();
    w.add("i8", &array![[-128i8, 0], [1, 127]]).unwrap();
    w.add("i16", &array![-32768i16, 7]).unwrap();
    w.add("i32", &array![i32::MIN, 5]).unwrap();
    w.add("i64", &array![[[i64::MIN]], [[i64::MAX]]]).unwrap();
    w.add("u8", &ndarray::arr0(255u8)).unwrap();
    w.add("u16", &array![65535u16]).unwrap();
    w.add("u32", &Array1::<u32>::zeros(0)).unwrap();
    w.add("u64", &array![u64::MAX, 1]).unwrap();
    w.add("f16", &array![f16::from_f32(1.5), f16::NEG_INFINITY])
        .unwrap();
    w.add("f32", &array![[0.5f32, f32::NAN], [-0.0, 1e30]])
        .unwrap();
    w.add("f64", &array![std::f64::consts::PI]).unwrap();
    w.add("c64", &array![num_complex::Complex::new(1.0f32, -2.0)])
        .unwrap();
    w.add("params/encoder/layer_0/kernel", &array![[1.0f32, 2.0]])
        .unwrap();
}

/// The header text of member `name` as written (parsing normalises the
/// byte-order mark of void types).
fn descr_of(z: &mut NpzReader<impl std::io::Read + std::io::Seek>, name: &str) -> String {
    String::from_utf8_lossy(&z.raw(name).unwrap()[..64]).into_owned()
}

/// Equal as values, NaN equal to NaN.
fn same(a: &AnyArray, b: &AnyArray) {
    assert_eq!(a.dtype(), b.dtype());
    assert_eq!(a.shape(), b.shape());
    if let (AnyArray::F32(x), AnyArray::F32(y)) = (a, b) {
        let bits = |v: &ArrayD<f32>| v.mapv(f32::to_bits);
        assert_eq!(bits(x), bits(y));
    } else {
        assert_eq!(a, b);
    }
}

/// A member written from a header and bytes, as other tools write them.
fn add_raw(
    w: &mut NpzWriter<impl std::io::Write + std::io::Seek>,
    name: &str,
    descr: &str,
    shape: &[usize],
    fortran: bool,
    data: &[u8],
) {
    let header = Header {
        dtype: DType::parse(descr).unwrap(),
        shape: shape.to_vec(),
        fortran_order: fortran,
        version: Version::V1,
    };
    w.add_npy_data(name, &header, |out| out.write_all(data))
        .unwrap();
}

mod files;
mod hostile;
mod types;
