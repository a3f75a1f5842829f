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
    AnyArray, DType, Error, Float8E4M3Fn, Float8E5M2, Header, NpzMmap, NpzReader, NpzWriter,
    ReadNpy, Version,
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

#[test]
fn every_type_goes_both_ways_stored_and_compressed() {
    let dir = tempfile::tempdir().unwrap();
    for compressed in [false, true] {
        let src = dir.path().join("src.npz");
        let mut w = NpzWriter::create(&src).unwrap().compressed(compressed);
        add_all_types(&mut w);
        w.finish().unwrap();
        let out = dir.path().join("model.safetensors");
        npz_to_safetensors(&map(&src), &out).unwrap();

        let file = st(&out);
        let mut names = file.names();
        names.sort();
        let mut expected = NpzReader::open(&src).unwrap().names();
        expected.sort();
        assert_eq!(names, expected);
        assert_eq!(file.dtype("bool").unwrap(), "BOOL");
        assert_eq!(file.dtype("c64").unwrap(), "C64");
        assert_eq!(file.dtype("f16").unwrap(), "F16");
        assert_eq!(file.shape("u8").unwrap(), [] as [usize; 0]);
        assert_eq!(file.data("i16").unwrap(), [0, 0x80, 7, 0]);

        let mut npz = NpzReader::open(&src).unwrap();
        for name in file.names() {
            same(
                &file.read_any(&name).unwrap(),
                &npz.read_any(&name).unwrap(),
            );
        }

        let back = dir.path().join("back.npz");
        safetensors_to_npz_with(
            &file,
            &back,
            &SafetensorsOptions::default().compressed(compressed),
        )
        .unwrap();
        let mut again = NpzReader::open(&back).unwrap();
        assert!(!again.contains(METADATA_MEMBER));
        for name in npz.names() {
            same(
                &again.read_any(&name).unwrap(),
                &npz.read_any(&name).unwrap(),
            );
            // Exactly the header np.save writes for the same array.
            assert_eq!(
                again.header(&name).unwrap(),
                npz.header(&name).unwrap(),
                "{name}"
            );
        }
    }
}

#[test]
fn bfloat16_from_ml_dtypes_keeps_its_bits() {
    let bits = Array1::<u16>::read_npy(fixture("bf16.bits.npy")).unwrap();
    let bytes: Vec<u8> = bits.iter().flat_map(|b| b.to_le_bytes()).collect();
    let dir = tempfile::tempdir().unwrap();
    for archive in ["bf16.npz", "bf16_compressed.npz"] {
        let npz = map(&fixture(archive));
        let out = dir.path().join(format!("{archive}.safetensors"));
        let err = npz_to_safetensors(&npz, &out).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("member 'w'") && text.contains("--as bfloat16"),
            "{text}"
        );
        assert!(!out.exists());

        let options = SafetensorsOptions::default().raw_as(MlDtype::Bfloat16);
        npz_to_safetensors_with(&npz, &out, &options).unwrap();
        let file = st(&out);
        assert_eq!(file.dtype("w").unwrap(), "BF16");
        assert_eq!(file.data("w").unwrap(), bytes, "{archive}");
        assert_eq!(file.dtype("b").unwrap(), "F32");

        // Back: the '<V2' member ml_dtypes' np.save writes, same bits.
        let back = dir.path().join("back.npz");
        safetensors_to_npz(&file, &back).unwrap();
        let mut z = NpzReader::open(&back).unwrap();
        assert!(descr_of(&mut z, "w").contains("'descr': '<V2'"));
        let w = z.read::<bf16, IxDyn>("w").unwrap();
        assert_eq!(w.mapv(bf16::to_bits), bits.clone().into_dyn());
    }
}

#[test]
fn float8_formats_as_said() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("f8.npz");
    let mut w = NpzWriter::create(&src).unwrap();
    w.add(
        "e4",
        &array![Float8E4M3Fn::from_bits(0x38), Float8E4M3Fn::from_bits(0x7E)],
    )
    .unwrap();
    w.finish().unwrap();
    let out = dir.path().join("f8.safetensors");
    let err = npz_to_safetensors(&map(&src), &out)
        .unwrap_err()
        .to_string();
    assert!(err.contains("--as float8_e4m3fn"), "{err}");
    let err = npz_to_safetensors_with(
        &map(&src),
        &out,
        &SafetensorsOptions::default().raw_as(MlDtype::Bfloat16),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("cannot be bfloat16"), "{err}");
    for (format, dtype) in [
        (MlDtype::Float8E4M3Fn, "F8_E4M3"),
        (MlDtype::Float8E5M2, "F8_E5M2"),
    ] {
        let options = SafetensorsOptions::default().raw_as(format);
        npz_to_safetensors_with(&map(&src), &out, &options).unwrap();
        let file = st(&out);
        assert_eq!(file.dtype("e4").unwrap(), dtype);
        assert_eq!(file.data("e4").unwrap(), [0x38, 0x7E]);
        let back = dir.path().join("back.npz");
        safetensors_to_npz(&file, &back).unwrap();
        let descr = descr_of(&mut NpzReader::open(&back).unwrap(), "e4");
        let want = if format == MlDtype::Float8E5M2 {
            "'<f1'"
        } else {
            "'<V1'"
        };
        assert!(descr.contains(want), "{descr}");
        let values = file.read_any("e4").unwrap();
        let values: Vec<f32> = if format == MlDtype::Float8E5M2 {
            values
                .void_as::<Float8E5M2>()
                .unwrap()
                .iter()
                .map(|x| x.to_f32())
                .collect()
        } else {
            values
                .void_as::<Float8E4M3Fn>()
                .unwrap()
                .iter()
                .map(|x| x.to_f32())
                .collect()
        };
        // 0x38 is 1.0 as e4m3fn, 0.5 as e5m2.
        let want = if format == MlDtype::Float8E5M2 {
            0.5
        } else {
            1.0
        };
        assert_eq!(values[0], want);
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

#[test]
fn big_endian_and_fortran_order_become_little_endian_c_order() {
    let dir = tempfile::tempdir().unwrap();
    // [[1, 2, 3], [4, 5, 6]] as big-endian int32, Fortran order: 1 4 2 5 3 6.
    let be_f: Vec<u8> = [1i32, 4, 2, 5, 3, 6]
        .iter()
        .flat_map(|v| v.to_be_bytes())
        .collect();
    let le_c: Vec<u8> = (1i32..=6).flat_map(|v| v.to_le_bytes()).collect();
    // bfloat16 in Fortran order, as bf16_2d_f.npy from ml_dtypes.
    let bf16_f = std::fs::read(fixture("bf16_2d_f.npy")).unwrap();
    let bf16_header = Header::read_from(&bf16_f[..]).unwrap();
    assert!(bf16_header.fortran_order);
    for compressed in [false, true] {
        let src = dir.path().join("src.npz");
        let mut w = NpzWriter::create(&src).unwrap().compressed(compressed);
        add_raw(&mut w, "be_f", ">i4", &[2, 3], true, &be_f);
        add_raw(&mut w, "be", ">f8", &[1], false, &1.5f64.to_be_bytes());
        add_raw(
            &mut w,
            "be_c",
            ">c8",
            &[1],
            false,
            &[0x3f, 0x80, 0, 0, 0xc0, 0, 0, 0],
        );
        // Fortran order with one long dimension: the same bytes as C order.
        add_raw(&mut w, "column", "<i4", &[3, 1], true, &le_c[..12]);
        // `bool` bytes other than 0 and 1 (NumPy reads them as True).
        add_raw(&mut w, "bools", "|b1", &[3], false, &[0, 2, 255]);
        w.add_npy_data("bf16", &bf16_header, |out| {
            out.write_all(&bf16_f[bf16_f.len() - 30..])
        })
        .unwrap();
        w.finish().unwrap();

        let out = dir.path().join("out.safetensors");
        let options = SafetensorsOptions::default().raw_as(MlDtype::Bfloat16);
        npz_to_safetensors_with(&map(&src), &out, &options).unwrap();
        let file = st(&out);
        assert_eq!(file.data("be_f").unwrap(), le_c);
        assert_eq!(file.shape("be_f").unwrap(), [2, 3]);
        assert_eq!(file.data("be").unwrap(), 1.5f64.to_le_bytes());
        assert_eq!(
            file.data("be_c").unwrap(),
            [0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0]
        );
        assert_eq!(file.data("column").unwrap(), &le_c[..12]);
        assert_eq!(file.data("bools").unwrap(), [0, 1, 1]);
        let expected = ndarray::Array2::<bf16>::read_npy(fixture("bf16_2d_f.npy")).unwrap();
        let got = file.read_any("bf16").unwrap().void_as::<bf16>().unwrap();
        assert_eq!(got, expected.into_dyn());
        assert!(got.is_standard_layout());
    }
}

#[test]
fn what_safetensors_cannot_hold_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.safetensors");
    std::fs::write(&out, b"old").unwrap();
    type W = NpzWriter<std::io::BufWriter<std::fs::File>>;
    type Add = Box<dyn Fn(&mut W)>;
    let cases: Vec<(&str, Add)> = vec![
        (
            "unicode",
            Box::new(|w| w.add("s", &array!["a".to_owned()]).unwrap()),
        ),
        (
            "complex128",
            Box::new(|w| {
                w.add("s", &array![num_complex::Complex::new(1.0f64, 0.0)])
                    .unwrap()
            }),
        ),
        (
            "datetimes",
            Box::new(|w| add_raw(w, "s", "<M8[ns]", &[1], false, &[0; 8])),
        ),
        (
            "objects",
            Box::new(|w| w.add("s", &array![ndnpy::PyValue::None]).unwrap()),
        ),
    ];
    for (what, add) in cases {
        let src = dir.path().join("src.npz");
        let mut w = NpzWriter::create(&src).unwrap();
        w.add("fine", &array![1.0f32]).unwrap();
        add(&mut w);
        w.finish().unwrap();
        let err = npz_to_safetensors(&map(&src), &out).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("member 's'"), "{what}: {text}");
        assert!(
            matches!(err, Error::UnsupportedDType { .. }),
            "{what}: {err:?}"
        );
        assert_eq!(std::fs::read(&out).unwrap(), b"old", "{what}");
    }
    // No temporary file is left behind.
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), 2, "{left:?}");
}

#[test]
fn metadata_round_trips_through_the_member() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src.npz");
    let mut w = NpzWriter::create(&src).unwrap();
    w.add("x", &array![1i64]).unwrap();
    w.finish().unwrap();
    let out = dir.path().join("a.safetensors");
    let metadata: HashMap<String, String> = [
        ("format".into(), "pt".into()),
        ("ünïcode".into(), "with \"quotes\"".into()),
    ]
    .into();
    let options = SafetensorsOptions::default().metadata(metadata.clone());
    npz_to_safetensors_with(&map(&src), &out, &options).unwrap();
    assert_eq!(st(&out).metadata(), Some(&metadata));

    let back = dir.path().join("back.npz");
    safetensors_to_npz(&st(&out), &back).unwrap();
    let table = NpzReader::open(&back)
        .unwrap()
        .read::<String, ndarray::Ix2>(METADATA_MEMBER)
        .unwrap();
    assert_eq!(table.dim(), (2, 2));
    assert_eq!(table[[0, 0]], "format");

    // The member becomes the metadata again; options win over it.
    let again = dir.path().join("again.safetensors");
    let options = SafetensorsOptions::default().metadata([("format".into(), "np".into())].into());
    npz_to_safetensors_with(&map(&back), &again, &options).unwrap();
    let file = st(&again);
    assert_eq!(file.metadata().unwrap()["format"], "np");
    assert_eq!(file.metadata().unwrap()["ünïcode"], "with \"quotes\"");
    assert_eq!(file.names(), ["x"]);

    // A metadata member of another form is refused.
    let bad = dir.path().join("bad.npz");
    let mut w = NpzWriter::create(&bad).unwrap();
    w.add(METADATA_MEMBER, &array![1.0f32]).unwrap();
    w.finish().unwrap();
    let err = npz_to_safetensors(&map(&bad), &again)
        .unwrap_err()
        .to_string();
    assert!(err.contains("(n, 2) array of strings"), "{err}");
}

#[test]
fn a_corrupt_member_fails_and_leaves_the_old_file() {
    let dir = tempfile::tempdir().unwrap();
    for compressed in [false, true] {
        let src = dir.path().join("src.npz");
        let mut w = NpzWriter::create(&src).unwrap().compressed(compressed);
        // Values that do not compress, so that both members are long.
        let noise = |k: u32| {
            Array1::from_shape_fn(1000, |i| ((i as u32).wrapping_mul(2654435761) ^ k) as f32)
        };
        w.add("a", &noise(1)).unwrap();
        w.add("b", &noise(2)).unwrap();
        w.finish().unwrap();
        let mut bytes = std::fs::read(&src).unwrap();
        // The middle of the second member's data, whatever its encoding.
        let dir_start = bytes.windows(4).position(|w| w == b"PK\x01\x02").unwrap();
        bytes[dir_start - 200] ^= 0x40;
        std::fs::write(&src, &bytes).unwrap();

        let out = dir.path().join("out.safetensors");
        std::fs::write(&out, b"old").unwrap();
        let err = npz_to_safetensors(&map(&src), &out).unwrap_err();
        assert!(
            matches!(&err, Error::BadCrc { name } | Error::CorruptMember { name, .. } if name == "b"),
            "{err:?}"
        );
        assert_eq!(std::fs::read(&out).unwrap(), b"old");
        let left = std::fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(left, 2);
    }
}

#[test]
fn damaged_safetensors_files_are_errors() {
    let good = {
        let header = br#"{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}"#;
        let mut b = (header.len() as u64).to_le_bytes().to_vec();
        b.extend_from_slice(header);
        b.extend_from_slice(&[0; 8]);
        b
    };
    assert!(SafetensorsFile::new(good.clone()).is_ok());
    let mut cases = vec![
        Vec::new(),
        b"PK\x03\x04".to_vec(),
        good[..good.len() - 1].to_vec(),
    ];
    let mut huge = good.clone();
    huge[..8].copy_from_slice(&u64::MAX.to_le_bytes());
    cases.push(huge);
    let mut longer = good.clone();
    longer[..8].copy_from_slice(&(1u64 << 40).to_le_bytes());
    cases.push(longer);
    let mut bad_json = good.clone();
    bad_json[8] = b'[';
    cases.push(bad_json);
    let shape_overflow =
        br#"{"x":{"dtype":"F32","shape":[4611686018427387904,8],"data_offsets":[0,8]}}"#;
    let mut b = (shape_overflow.len() as u64).to_le_bytes().to_vec();
    b.extend_from_slice(shape_overflow);
    b.extend_from_slice(&[0; 8]);
    cases.push(b);
    for bytes in cases {
        let err = SafetensorsFile::new(bytes).unwrap_err();
        assert!(matches!(err, Error::InvalidSafetensors { .. }), "{err:?}");
        assert_eq!(err.kind(), ndnpy::ErrorKind::Malformed);
    }
    let file = SafetensorsFile::new(good).unwrap();
    assert!(matches!(
        file.read_any("y"),
        Err(Error::MemberNotFound { .. })
    ));
}

#[test]
fn tensor_types_npy_cannot_spell_are_refused_by_name() {
    let header = br#"{"scale":{"dtype":"F8_E8M0","shape":[1],"data_offsets":[0,1]}}"#;
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(header);
    bytes.push(127);
    let file = SafetensorsFile::new(bytes).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.npz");
    let err = safetensors_to_npz(&file, &out).unwrap_err().to_string();
    assert!(err.contains("tensor 'scale'"), "{err}");
    assert!(!out.exists());
    assert!(file.read_any("scale").is_err());
}

#[test]
fn safetensors_bools_are_written_as_numpy_writes_them() {
    let header = br#"{"m":{"dtype":"BOOL","shape":[3],"data_offsets":[0,3]}}"#;
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(header);
    bytes.extend_from_slice(&[0, 7, 1]);
    let file = SafetensorsFile::new(bytes).unwrap();
    assert_eq!(
        file.read_any("m").unwrap(),
        AnyArray::Bool(array![false, true, true].into_dyn())
    );
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.npz");
    safetensors_to_npz(&file, &out).unwrap();
    let mut z = NpzReader::open(&out).unwrap();
    let raw = z.raw("m").unwrap();
    assert_eq!(&raw[raw.len() - 3..], [0, 1, 1]);
}

#[test]
fn mapped_files_give_the_same_tensors() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src.npz");
    let mut w = NpzWriter::create(&src).unwrap();
    add_all_types(&mut w);
    w.finish().unwrap();
    let out = dir.path().join("m.safetensors");
    npz_to_safetensors(&map(&src), &out).unwrap();
    // SAFETY: nothing changes the file while it is mapped.
    let mapped = unsafe { SafetensorsFile::open(&out).unwrap() };
    let read = st(&out);
    assert_eq!(mapped.names(), read.names());
    for name in read.names() {
        assert_eq!(mapped.data(&name).unwrap(), read.data(&name).unwrap());
    }
    // SAFETY: as above.
    let missing = unsafe { SafetensorsFile::open(dir.path().join("none.safetensors")) };
    assert!(missing
        .unwrap_err()
        .to_string()
        .contains("none.safetensors"));
}

#[test]
fn the_index_reads_only_the_header() {
    use ndnpy::safetensors::SafetensorsIndex;
    use std::io::{Read, Seek, SeekFrom};
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src.npz");
    let mut w = NpzWriter::create(&src).unwrap();
    add_all_types(&mut w);
    w.finish().unwrap();
    let out = dir.path().join("m.safetensors");
    npz_to_safetensors(&map(&src), &out).unwrap();
    let whole = st(&out);

    let mut file = std::fs::File::open(&out).unwrap();
    let len = file.metadata().unwrap().len();
    let index = SafetensorsIndex::read_from(&mut file, len).unwrap();
    assert_eq!(index.names(), whole.names());
    for name in index.names() {
        let range = index.data_range(&name).unwrap();
        let mut data = vec![0; (range.end - range.start) as usize];
        file.seek(SeekFrom::Start(range.start)).unwrap();
        file.read_exact(&mut data).unwrap();
        assert_eq!(data, whole.data(&name).unwrap(), "{name}");
        assert_eq!(index.header(&name).unwrap(), whole.header(&name).unwrap());
    }
    // A file cut short, or one the header does not account for.
    let bytes = std::fs::read(&out).unwrap();
    for cut in [0, 7, 8, 20, bytes.len() - 1] {
        let err = SafetensorsIndex::read_from(&bytes[..cut], cut as u64).unwrap_err();
        assert!(
            matches!(err, Error::InvalidSafetensors { .. }),
            "{cut}: {err:?}"
        );
    }
    let err = SafetensorsIndex::read_from(&bytes[..], bytes.len() as u64 + 1).unwrap_err();
    assert!(matches!(err, Error::InvalidSafetensors { .. }), "{err:?}");
}

#[test]
fn readers_give_the_same_files_as_maps() {
    use ndnpy::safetensors::SafetensorsReader;
    let dir = tempfile::tempdir().unwrap();
    for compressed in [false, true] {
        let src = dir.path().join("src.npz");
        let mut w = NpzWriter::create(&src).unwrap().compressed(compressed);
        add_all_types(&mut w);
        add_raw(
            &mut w,
            "be_f",
            ">i4",
            &[2, 2],
            true,
            &[0, 0, 0, 1, 0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 4],
        );
        add_raw(&mut w, "bools", "|b1", &[2], false, &[0, 9]);
        w.finish().unwrap();
        let mapped = dir.path().join("mapped.safetensors");
        let read = dir.path().join("read.safetensors");
        let options = SafetensorsOptions::default().metadata([("k".into(), "v".into())].into());
        npz_to_safetensors_with(&map(&src), &mapped, &options).unwrap();
        let mut reader = NpzReader::open(&src).unwrap();
        npz_to_safetensors_with(&mut reader, &read, &options).unwrap();
        assert_eq!(
            std::fs::read(&mapped).unwrap(),
            std::fs::read(&read).unwrap()
        );
        assert_eq!(st(&read).data("bools").unwrap(), [0, 1]);

        // And back: through a reader of the file, the same archive.
        let from_file = dir.path().join("from_file.npz");
        let from_reader = dir.path().join("from_reader.npz");
        safetensors_to_npz(&st(&read), &from_file).unwrap();
        let file = std::fs::File::open(&read).unwrap();
        let mut tensors = SafetensorsReader::new(file).unwrap();
        assert_eq!(tensors.index().metadata().unwrap()["k"], "v");
        assert_eq!(
            tensors.read_any("be_f").unwrap(),
            st(&read).read_any("be_f").unwrap()
        );
        safetensors_to_npz(&mut tensors, &from_reader).unwrap();
        assert_eq!(
            std::fs::read(&from_file).unwrap(),
            std::fs::read(&from_reader).unwrap()
        );
    }
}
