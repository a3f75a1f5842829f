//! bfloat16 and the float8 formats of `ml_dtypes`, against files written
//! by `ml_dtypes` + `np.save` (`scripts/gen_ml_fixtures.py`).

mod common;

use ndnpy::{types::Float8E4M3Fn, types::Float8E5M2, AnyArray, WriteNpy};

#[test]
fn writes_carry_ml_dtypes_descriptors() {
    let f8 = ndarray::arr1(&[Float8E4M3Fn::from_bits(0x38)]);
    let bytes = f8.to_npy_bytes().unwrap();
    let text = String::from_utf8_lossy(&bytes[..64]).into_owned();
    assert!(text.contains("'descr': '<V1'"), "{text}");
    let f8 = ndarray::arr1(&[Float8E5M2::from_bits(0x3C)]);
    let bytes = f8.to_npy_bytes().unwrap();
    let text = String::from_utf8_lossy(&bytes[..64]).into_owned();
    assert!(text.contains("'descr': '<f1'"), "{text}");
    let any = AnyArray::from_npy_bytes(&bytes).unwrap();
    assert_eq!(any.void_as::<Float8E5M2>().unwrap()[[0]].to_f32(), 1.0);
}

#[cfg(feature = "half")]
mod bf16 {
    use half::bf16;
    use ndarray::{ArrayD, Ix1};
    use ndnpy::{types::Float8E4M3Fn, types::Float8E5M2, AnyArray, NpzReader, ReadNpy, WriteNpy};
    use std::path::PathBuf;

    /// The committed fixtures, or (`NDNPY_ML_FIXTURES`, set by
    /// `scripts/interop_formats.py` in CI) ones the current ml_dtypes wrote.
    fn fixture(name: &str) -> PathBuf {
        match std::env::var_os("NDNPY_ML_FIXTURES") {
            Some(dir) => PathBuf::from(dir),
            None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/ml_dtypes"),
        }
        .join(name)
    }

    fn expected(name: &str) -> ArrayD<f32> {
        ArrayD::<f32>::read_npy(fixture(name)).unwrap()
    }

    /// Equal as ml_dtypes sees them: same values, NaN where it has NaN.
    fn same(a: &ArrayD<f32>, b: &ArrayD<f32>) {
        assert_eq!(a.shape(), b.shape());
        for (x, y) in a.iter().zip(b) {
            assert!(
                x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()),
                "{x} vs {y}"
            );
        }
    }

    #[test]
    fn typed_reads_see_what_ml_dtypes_sees() {
        let bits = ndarray::Array1::<u16>::read_npy(fixture("bf16.bits.npy")).unwrap();
        for name in ["bf16.npy", "bf16_named.npy"] {
            let w = ndarray::Array1::<bf16>::read_npy(fixture(name)).unwrap();
            assert_eq!(w.mapv(bf16::to_bits), bits, "{name}");
            same(&w.mapv(bf16::to_f32).into_dyn(), &expected("bf16.f32.npy"));
        }
        // A Fortran-order file arrives in the array's own layout.
        let w = ndarray::Array2::<bf16>::read_npy(fixture("bf16_2d_f.npy")).unwrap();
        same(
            &w.mapv(bf16::to_f32).into_dyn(),
            &expected("bf16_2d_f.f32.npy"),
        );
        let e4 = ndarray::Array1::<Float8E4M3Fn>::read_npy(fixture("f8e4m3fn.npy")).unwrap();
        same(
            &e4.mapv(|x| x.to_f32()).into_dyn(),
            &expected("f8e4m3fn.f32.npy"),
        );
        // `<f1`, which NumPy itself cannot load.
        let e5 = ndarray::Array1::<Float8E5M2>::read_npy(fixture("f8e5m2.npy")).unwrap();
        same(
            &e5.mapv(|x| x.to_f32()).into_dyn(),
            &expected("f8e5m2.f32.npy"),
        );
        for archive in ["bf16.npz", "bf16_compressed.npz"] {
            let mut z = NpzReader::open(fixture(archive)).unwrap();
            let w = z.read::<bf16, Ix1>("w").unwrap();
            assert_eq!(w.mapv(bf16::to_bits), bits, "{archive}");
        }
    }

    #[test]
    fn any_array_keeps_void_and_reinterprets_on_request() {
        for (name, f32s) in [
            ("bf16.npy", "bf16.f32.npy"),
            ("bf16_named.npy", "bf16.f32.npy"),
            ("bf16_2d_f.npy", "bf16_2d_f.f32.npy"),
        ] {
            let any = AnyArray::read_npy(fixture(name)).unwrap();
            assert!(matches!(any, AnyArray::Void(_)), "{name}");
            same(
                &any.void_as::<bf16>().unwrap().mapv(bf16::to_f32),
                &expected(f32s),
            );
            // Not a one-byte format.
            assert!(any.void_as::<Float8E4M3Fn>().is_err());
        }
        let e5 = AnyArray::read_npy(fixture("f8e5m2.npy")).unwrap();
        assert_eq!(e5.dtype().to_string(), "<f1");
        same(
            &e5.void_as::<Float8E5M2>().unwrap().mapv(|x| x.to_f32()),
            &expected("f8e5m2.f32.npy"),
        );
        let err = AnyArray::F32(expected("bf16.f32.npy"))
            .void_as::<bf16>()
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "dtype mismatch: expected bfloat16 (2 raw bytes per item), found `<f4`"
        );
    }

    #[test]
    fn writes_are_byte_identical_to_np_save() {
        for name in ["bf16.npy", "f8e4m3fn.npy", "f8e5m2.npy"] {
            let file = std::fs::read(fixture(name)).unwrap();
            let ours = match name {
                "bf16.npy" => ndarray::Array1::<bf16>::read_npy(fixture(name))
                    .unwrap()
                    .to_npy_bytes(),
                "f8e4m3fn.npy" => ndarray::Array1::<Float8E4M3Fn>::read_npy(fixture(name))
                    .unwrap()
                    .to_npy_bytes(),
                _ => ndarray::Array1::<Float8E5M2>::read_npy(fixture(name))
                    .unwrap()
                    .to_npy_bytes(),
            }
            .unwrap();
            assert_eq!(ours, file, "{name}");
        }
        let w = ndarray::Array2::<bf16>::read_npy(fixture("bf16_2d_f.npy")).unwrap();
        let back = ndarray::Array2::<bf16>::from_npy_bytes(&w.to_npy_bytes().unwrap()).unwrap();
        assert_eq!(back, w);
    }

    /// With `NDNPY_INTEROP_OUT` (CI), writes typed arrays there for
    /// `scripts/interop_formats.py` to load with NumPy + ml_dtypes.
    #[test]
    fn writes_for_ml_dtypes() {
        let Some(out) = std::env::var_os("NDNPY_INTEROP_OUT") else {
            return;
        };
        let out = PathBuf::from(out);
        std::fs::create_dir_all(&out).unwrap();
        let w = ndarray::Array2::<bf16>::read_npy(fixture("bf16_2d_f.npy")).unwrap();
        w.write_npy(out.join("bf16_2d.npy")).unwrap();
        w.t().write_npy(out.join("bf16_2d_t.npy")).unwrap();
        let values = ndarray::Array1::from_iter((0..=255u8).map(Float8E4M3Fn::from_bits));
        values.write_npy(out.join("f8e4m3fn.npy")).unwrap();
        let values = ndarray::Array1::from_iter((0..=255u8).map(Float8E5M2::from_bits));
        values.write_npy(out.join("f8e5m2.npy")).unwrap();
        let mut z = ndnpy::NpzWriter::create(out.join("bf16.npz"))
            .unwrap()
            .codec(ndnpy::npz::Codec::deflate());
        z.add("w", &w).unwrap();
        z.finish().unwrap();
    }
}

/// A record field of `<f1` (which NumPy cannot even make) reads like a
/// top-level one: raw items that `void_as` turns into float8_e5m2.
#[test]
fn f1_record_fields_read() {
    let mut data = vec![0x3Cu8];
    data.extend_from_slice(&1.5f32.to_le_bytes());
    data.push(0xC0);
    data.extend_from_slice(&(-2.0f32).to_le_bytes());
    let bytes = common::npy_v1(
        "{'descr': [('w', '<f1'), ('x', '<f4')], 'fortran_order': False, 'shape': (2,), }",
        &data,
    );
    let AnyArray::Record(r) = AnyArray::from_npy_bytes(&bytes).unwrap() else {
        panic!("records")
    };
    let w = r.field("w").unwrap().void_as::<Float8E5M2>().unwrap();
    assert_eq!(
        w.mapv(|x| x.to_f32()).into_raw_vec_and_offset().0,
        vec![1.0, -2.0]
    );
}
