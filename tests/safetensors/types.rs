//! Types and layouts: every type both formats hold, both ways; raw
//! ml_dtypes items as said; byte order and memory order; refusals.

use super::*;

#[test]
fn every_type_goes_both_ways_stored_and_compressed() {
    let dir = tempfile::tempdir().unwrap();
    for compressed in [false, true] {
        let src = dir.path().join("src.npz");
        let mut w = NpzWriter::create(&src).unwrap().codec(if compressed {
            ndnpy::npz::Codec::deflate()
        } else {
            ndnpy::npz::Codec::Stored
        });
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
        let mut w = NpzWriter::create(&src).unwrap().codec(if compressed {
            ndnpy::npz::Codec::deflate()
        } else {
            ndnpy::npz::Codec::Stored
        });
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
            Box::new(|w| w.add("s", &array![ndnpy::pickle::PyValue::None]).unwrap()),
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
fn f1_members_are_float8_e5m2_whatever_raw_as_says() {
    let mut w = NpzWriter::new(std::io::Cursor::new(Vec::new()));
    // 0x3C is 1.0 in float8_e5m2 (in float8_e4m3fn it would be 1.5).
    add_raw(&mut w, "e5m2", "<f1", &[2], false, &[0x3C, 0xBC]);
    let npz = w.finish_into_inner().unwrap().into_inner();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o.safetensors");
    for raw_as in [None, Some(MlDtype::Float8E4M3Fn), Some(MlDtype::Float8E5M2)] {
        let mut options = SafetensorsOptions::default();
        if let Some(format) = raw_as {
            options = options.raw_as(format);
        }
        let mut reader = NpzReader::new(std::io::Cursor::new(npz.clone())).unwrap();
        npz_to_safetensors_with(&mut reader, &out, &options).unwrap();
        assert_eq!(st(&out).dtype("e5m2").unwrap(), "F8_E5M2", "{raw_as:?}");
    }
    // ml_dtypes' '<f1' is e5m2: reading it as e4m3fn is refused.
    let mut reader = NpzReader::new(std::io::Cursor::new(npz)).unwrap();
    let any = reader.read_any("e5m2").unwrap();
    assert!(any.void_as::<Float8E4M3Fn>().is_err());
    assert_eq!(any.void_as::<Float8E5M2>().unwrap()[[0]].to_f32(), 1.0);
}

#[test]
fn the_v1_hint_names_float8_e4m3fn_alone() {
    let mut w = NpzWriter::new(std::io::Cursor::new(Vec::new()));
    add_raw(&mut w, "e4m3", "<V1", &[1], false, &[0x38]);
    let npz = w.finish_into_inner().unwrap().into_inner();
    let dir = tempfile::tempdir().unwrap();
    let mut reader = NpzReader::new(std::io::Cursor::new(npz)).unwrap();
    let err = npz_to_safetensors(&mut reader, dir.path().join("o.safetensors"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("--as float8_e4m3fn"), "{err}");
    assert!(!err.contains("float8_e5m2"), "{err}");
}

/// A `.npy` file with the header text `dict` (not normalised by ndnpy's
/// dtype parser) and `data`.
fn npy_with_header(dict: &str, data: &[u8]) -> Vec<u8> {
    let mut text = dict.to_owned();
    while !(10 + text.len() + 1).is_multiple_of(64) {
        text.push(' ');
    }
    text.push('\n');
    let mut npy = b"\x93NUMPY\x01\x00".to_vec();
    npy.extend_from_slice(&(text.len() as u16).to_le_bytes());
    npy.extend_from_slice(text.as_bytes());
    npy.extend_from_slice(data);
    npy
}

#[test]
fn big_endian_raw_pairs_are_swapped() {
    use std::io::Write as _;
    // What np.save writes for a byte-swapped ml_dtypes.bfloat16 array:
    // '>V2' with each item's bytes swapped (1.5 is 0x3FC0).
    let npy = npy_with_header(
        "{'descr': '>V2', 'fortran_order': False, 'shape': (2,), }",
        &[0x3F, 0xC0, 0xC0, 0x00],
    );
    for method in [
        zip::CompressionMethod::Stored,
        zip::CompressionMethod::Deflated,
    ] {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("be.npz");
        let mut zip = zip::ZipWriter::new(std::fs::File::create(&src).unwrap());
        let options = zip::write::SimpleFileOptions::default().compression_method(method);
        zip.start_file("be.npy", options).unwrap();
        zip.write_all(&npy).unwrap();
        zip.finish().unwrap();
        let out = dir.path().join("o.safetensors");
        let options = SafetensorsOptions::default().raw_as(MlDtype::Bfloat16);
        npz_to_safetensors_with(&map(&src), &out, &options).unwrap();
        assert_eq!(
            st(&out).data("be").unwrap(),
            [0xC0, 0x3F, 0x00, 0xC0],
            "{method:?}"
        );
        let mut reader = NpzReader::open(&src).unwrap();
        npz_to_safetensors_with(&mut reader, &out, &options).unwrap();
        assert_eq!(
            st(&out).data("be").unwrap(),
            [0xC0, 0x3F, 0x00, 0xC0],
            "{method:?}"
        );
    }
}

/// An archive of deflated members `name.npy` with the `.npy` files given.
fn deflated_npz(path: &Path, members: &[(&str, Vec<u8>)]) {
    use std::io::Write as _;
    let mut zip = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, npy) in members {
        zip.start_file(format!("{name}.npy"), options).unwrap();
        zip.write_all(npy).unwrap();
    }
    zip.finish().unwrap();
}

#[test]
fn header_claims_are_checked_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o.safetensors");
    // Three members of 2**63 - 8 bytes each: their sum overflows.
    let huge = npy_with_header(
        "{'descr': '<f8', 'fortran_order': False, 'shape': (1152921504606846975,), }",
        &[0; 8],
    );
    let src = dir.path().join("huge.npz");
    deflated_npz(
        &src,
        &[("a", huge.clone()), ("b", huge.clone()), ("c", huge)],
    );
    let err = npz_to_safetensors(&map(&src), &out).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Archive(ndnpy::error::ArchiveError::CorruptMember { .. })
        ),
        "{err:?}"
    );
    // 8 TiB claimed by a few compressed bytes: refused before the output
    // file is sized.
    let big = npy_with_header(
        "{'descr': '|u1', 'fortran_order': False, 'shape': (8796093022208,), }",
        &[0; 64],
    );
    let src = dir.path().join("big.npz");
    deflated_npz(&src, &[("big", big)]);
    let err = npz_to_safetensors(&map(&src), &out).unwrap_err();
    assert!(
        matches!(&err, Error::Archive(ndnpy::error::ArchiveError::CorruptMember { name, .. }) if name == "big"),
        "{err:?}"
    );
    let mut reader = NpzReader::open(&src).unwrap();
    let err = npz_to_safetensors(&mut reader, &out).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Archive(ndnpy::error::ArchiveError::CorruptMember { .. })
        ),
        "{err:?}"
    );
    assert!(!out.exists());
}

/// Zstandard turns zeros into far fewer bytes than deflate can: such a
/// member is valid, bounded by the directory's size, not deflate's ratio.
#[cfg(feature = "zstd")]
#[test]
fn zstd_members_beyond_deflate_ratio_convert() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("z.npz");
    let mut w = NpzWriter::create(&src)
        .unwrap()
        .codec(ndnpy::npz::Codec::zstd());
    w.add("zeros", &Array1::<f64>::zeros(1 << 20)).unwrap();
    w.finish().unwrap();
    let info = NpzReader::open(&src).unwrap().member_info("zeros").unwrap();
    assert!(info.size / info.compressed_size > 1032, "{info:?}");
    let out = dir.path().join("o.safetensors");
    npz_to_safetensors(&map(&src), &out).unwrap();
    assert_eq!(st(&out).data("zeros").unwrap().len(), 8 << 20);
}

#[test]
fn bfloat16_and_float8_members_in_one_archive() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("mixed.npz");
    let mut w = NpzWriter::create(&src).unwrap();
    w.add("bf", &array![bf16::from_f32(1.5)]).unwrap();
    w.add("f8", &array![Float8E4M3Fn::from_bits(0x38)]).unwrap();
    w.finish().unwrap();
    let out = dir.path().join("o.safetensors");
    for options in [
        SafetensorsOptions::default()
            .raw_as(MlDtype::Bfloat16)
            .raw_as(MlDtype::Float8E4M3Fn),
        SafetensorsOptions::default()
            .raw_as(MlDtype::Float8E4M3Fn)
            .raw_as(MlDtype::Bfloat16),
    ] {
        npz_to_safetensors_with(&map(&src), &out, &options).unwrap();
        let file = st(&out);
        assert_eq!(file.dtype("bf").unwrap(), "BF16");
        assert_eq!(file.dtype("f8").unwrap(), "F8_E4M3");
        assert_eq!(file.data("f8").unwrap(), [0x38]);
        // And back: the archive converts again to the same file.
        let back = dir.path().join("back.npz");
        safetensors_to_npz(&file, &back).unwrap();
        let again = dir.path().join("again.safetensors");
        npz_to_safetensors_with(&map(&back), &again, &options).unwrap();
        assert_eq!(std::fs::read(&again).unwrap(), std::fs::read(&out).unwrap());
    }
}
