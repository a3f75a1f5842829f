//! A JAX/Flax-style checkpoint (np.savez of a parameter tree with
//! ml_dtypes' bfloat16, made by scripts/gen_flax_checkpoint.py) loads
//! through candle's `VarBuilder` with every tensor equal to what NumPy
//! holds, where candle's own `.npz` reader refuses it.

use candle_core::{DType, Device};
use ndarray::{ArrayD, IxDyn};
use ndnpy::NpzReader;
use ndnpy_candle::{npz_var_builder, tensor_to_array, CandleOptions, MlDtype, NpzBackend};
use std::path::PathBuf;

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// Every member as float64 in C order, as NumPy computed it.
fn expected() -> Vec<(String, ArrayD<f64>)> {
    let mut npz = NpzReader::open(data("flax_checkpoint.expected.npz")).unwrap();
    npz.names()
        .into_iter()
        .map(|name| {
            let values = npz.read::<f64, IxDyn>(&name).unwrap();
            (name, values)
        })
        .collect()
}

fn options() -> CandleOptions {
    CandleOptions::default()
        .raw_as(MlDtype::Bfloat16)
        .separator('/')
}

#[test]
fn every_tensor_of_a_flax_checkpoint_loads_equal() {
    let expected = expected();
    assert_eq!(expected.len(), 10);
    for file in ["flax_checkpoint.npz", "flax_checkpoint_compressed.npz"] {
        // SAFETY: the fixtures are not changed while the test runs.
        let vb =
            unsafe { npz_var_builder(data(file), &options(), DType::F64, &Device::Cpu) }.unwrap();
        for (name, want) in &expected {
            // candle joins a VarBuilder's path with dots; the backend maps
            // them to the archive's slashes.
            let mut parts: Vec<&str> = name.split('/').collect();
            let last = parts.pop().unwrap();
            let vb = parts.iter().fold(vb.clone(), |vb, p| vb.pp(*p));
            assert!(vb.contains_tensor(last), "{file}: {name}");
            let tensor = vb.get(want.shape(), last).unwrap();
            assert_eq!(tensor.dtype(), DType::F64);
            let got = tensor_to_array::<f64, IxDyn>(&tensor).unwrap();
            assert_eq!(&got, want, "{file}: {name}");
        }
        assert!(vb.get(4, "params.Dense_0.missing").is_err());
        // The shape the model expects is checked.
        assert!(vb.get((4, 8), "params.Dense_0.kernel").is_err());
    }
}

#[test]
fn tensors_keep_the_members_own_types() {
    // SAFETY: the fixture is not changed while the test runs.
    let backend =
        unsafe { NpzBackend::open_with(data("flax_checkpoint.npz"), &options()) }.unwrap();
    let types = [
        ("params.Embed_0.embedding", DType::BF16),
        ("params.Dense_0.kernel", DType::F32),
        ("params.Dense_0.bias", DType::F32),
        ("params.LayerNorm_0.scale", DType::F16),
        ("params.Conv_0.kernel", DType::F32),
        ("batch_stats.BatchNorm_0.mean", DType::F64),
        ("params.Attention_0.mask", DType::U8),
        ("params.Embed_0.ids", DType::U32),
        ("opt_state.count", DType::I32),
        ("step", DType::I64),
    ];
    for (name, dtype) in types {
        let tensor = backend.load(name, &Device::Cpu).unwrap();
        assert_eq!(tensor.dtype(), dtype, "{name}");
    }
    let kernel = backend.load("params.Dense_0.kernel", &Device::Cpu).unwrap();
    assert!(kernel.is_contiguous());
    assert_eq!(kernel.dims(), [8, 4]);

    // Without saying what '<V2' holds, the bfloat16 member is refused.
    // SAFETY: as above.
    let plain = unsafe { NpzBackend::open(data("flax_checkpoint.npz")) }.unwrap();
    let err = plain
        .load("params/Embed_0/embedding", &Device::Cpu)
        .unwrap_err()
        .to_string();
    assert!(err.contains("raw_as"), "{err}");
    assert!(plain.load("params/Dense_0/bias", &Device::Cpu).is_ok());
}

#[test]
fn candle_alone_refuses_this_checkpoint() {
    // What the backend exists for: candle's own reader fails on bfloat16
    // as '<V2', Fortran order and big-endian data. (If a later candle
    // reads them, this test says so, and the docs should too.)
    let npz = candle_core::npy::NpzTensors::new(data("flax_checkpoint.npz")).unwrap();
    for name in [
        "params/Embed_0/embedding",
        "params/Dense_0/kernel",
        "params/Dense_0/bias",
    ] {
        assert!(npz.get(name).is_err(), "candle now reads {name}");
    }
    assert!(npz.get("params/Conv_0/kernel").unwrap().is_some());
}

#[test]
fn float8_members_load_as_said() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f8.npz");
    let mut w = ndnpy::NpzWriter::create(&path).unwrap();
    let e4 = ndarray::array![
        ndnpy::types::Float8E4M3Fn::from_bits(0x38),
        ndnpy::types::Float8E4M3Fn::from_bits(0xFE)
    ];
    w.add("e4", &e4).unwrap();
    w.finish().unwrap();
    let options = CandleOptions::default().raw_as(MlDtype::Float8E4M3Fn);
    // SAFETY: nothing changes the archive while it is mapped.
    let backend = unsafe { NpzBackend::open_with(&path, &options) }.unwrap();
    let t = backend.load("e4", &Device::Cpu).unwrap();
    assert_eq!(t.dtype(), DType::F8E4M3);
    let values = t.to_dtype(DType::F32).unwrap().to_vec1::<f32>().unwrap();
    assert_eq!(values, [1.0, -448.0]);
}

/// What `np.savez` (and `np.savez_compressed`) write for a byte-swapped
/// ml_dtypes.bfloat16 array: `'>V2'` items, big-endian. The header's mark
/// is the only thing that says so: they are refused rather than read with
/// their bytes swapped (made by `a.astype(a.dtype.newbyteorder('>'))`).
#[test]
fn big_endian_bfloat16_is_refused() {
    for file in ["bf16_big_endian.npz", "bf16_big_endian_compressed.npz"] {
        // SAFETY: the test data is never written while mapped.
        let backend = unsafe { NpzBackend::open_with(data(file), &options()).unwrap() };
        let err = backend.load("be", &Device::Cpu).unwrap_err().to_string();
        assert!(err.contains("big-endian raw items"), "{file}: {err}");
    }
}
