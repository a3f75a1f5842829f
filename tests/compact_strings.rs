//! `StringArray` and `BytesArray` against NumPy's own files (the element
//! fixtures, written by `np.save`): the same values and errors as
//! `Array<String>` / `Array<Vec<u8>>`, and byte-identical write-back.

use ndarray::{ArrayD, IxDyn};
use ndnpy::{types::BytesArray, types::StringArray, NpzReader, NpzWriter, ReadNpy, WriteNpy};
use std::io::Cursor;
use std::path::{Path, PathBuf};

fn fixtures(prefix: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in ["fixtures/npy/elements", "fixtures/npy/invalid_data"] {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if name.starts_with(prefix) && name.ends_with(".npy") {
                out.push(path);
            }
        }
    }
    out.sort();
    assert!(!out.is_empty());
    out
}

fn np_save_identical(path: &Path) -> bool {
    let json = std::fs::read_to_string(path.with_extension("json")).unwrap_or_default();
    json.contains("\"np_save_identical\": true") && json.contains("\"fortran_order\": false")
}

#[test]
fn unicode_fixtures_read_as_string_arrays_do() {
    for path in fixtures("unicode_") {
        let compact = StringArray::read_npy(&path);
        let strings = ArrayD::<String>::read_npy(&path);
        match (compact, strings) {
            (Ok(c), Ok(s)) => {
                assert_eq!(c.to_array(), s, "{}", path.display());
                assert_eq!(c.shape(), s.shape());
                assert_eq!(c.view(), s.map(String::as_str), "{}", path.display());
                let bytes = std::fs::read(&path).unwrap();
                assert_eq!(StringArray::from_npy_bytes(&bytes).unwrap(), c);
                assert_eq!(StringArray::read_npy_from(&bytes[..]).unwrap(), c);
                if np_save_identical(&path) && !path.to_string_lossy().contains("_be") {
                    assert_eq!(c.to_npy_bytes().unwrap(), bytes, "{}", path.display());
                }
            }
            (Err(c), Err(s)) => assert_eq!(c.to_string(), s.to_string(), "{}", path.display()),
            (c, s) => panic!("{}: {c:?} against {s:?}", path.display()),
        }
    }
}

#[test]
fn bytes_fixtures_read_as_vec_arrays_do() {
    for path in fixtures("bytes_") {
        let c = BytesArray::read_npy(&path).unwrap();
        let s = ArrayD::<Vec<u8>>::read_npy(&path).unwrap();
        assert_eq!(c.to_array(), s, "{}", path.display());
        let bytes = std::fs::read(&path).unwrap();
        if np_save_identical(&path) {
            assert_eq!(c.to_npy_bytes().unwrap(), bytes, "{}", path.display());
        }
    }
}

#[test]
fn wrong_kinds_give_the_string_readers_errors() {
    let numbers = ndarray::array![1.0f64, 2.0].to_npy_bytes().unwrap();
    let err = StringArray::from_npy_bytes(&numbers)
        .unwrap_err()
        .to_string();
    assert!(err.contains("StringArray"), "{err}");
    let text = ndarray::array!["a".to_string()].to_npy_bytes().unwrap();
    let err = BytesArray::from_npy_bytes(&text).unwrap_err().to_string();
    assert!(err.contains("holds text"), "{err}");
}

#[test]
fn built_arrays_write_as_np_save_would() {
    let words = ["alpha", "", "γδ", "𝄞x"];
    let c = StringArray::from_strs(&[2, 2], words).unwrap();
    let s = ArrayD::from_shape_vec(
        IxDyn(&[2, 2]),
        words.iter().map(|w| w.to_string()).collect(),
    )
    .unwrap();
    assert_eq!(c.to_npy_bytes().unwrap(), s.to_npy_bytes().unwrap());
    assert_eq!(c.width(), 5);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.npy");
    c.write_npy(&path).unwrap();
    assert_eq!(StringArray::read_npy(&path).unwrap(), c);
    assert!(StringArray::from_strs(&[3], words).is_err());

    let b = BytesArray::from_bytes(&[3], [&b"a\0b"[..], b"", b"\xff"]).unwrap();
    let v = ndarray::array![b"a\0b".to_vec(), vec![], vec![0xff]].into_dyn();
    assert_eq!(b.to_npy_bytes().unwrap(), v.to_npy_bytes().unwrap());
}

#[test]
fn archive_members_read_compact() {
    let mut w = NpzWriter::new(Cursor::new(Vec::new())).codec(ndnpy::npz::Codec::deflate());
    let words = ndarray::Array1::from_shape_fn(1000, |i| format!("word {i}"));
    w.add("words", &words).unwrap();
    w.add("codes", &ndarray::array![b"ab".to_vec(), b"c".to_vec()])
        .unwrap();
    let mut npz = NpzReader::new(w.finish_into_inner().unwrap()).unwrap();
    let c = npz.read_strings("words").unwrap();
    assert_eq!(c.len(), 1000);
    assert_eq!(c.get(999), Some("word 999"));
    assert_eq!(c.iter().count(), 1000);
    assert_eq!(
        npz.read_byte_strings("codes").unwrap().get(1),
        Some(&b"c"[..])
    );
    assert!(npz.read_strings("codes").is_err());
}

/// A `.npy` file of `strings` as `<U{width}` (or `>U`) written by hand,
/// so the test does not rest on our own writer.
fn ucs4_file(strings: &[Vec<char>], width: usize, big_endian: bool) -> Vec<u8> {
    let order = if big_endian { '>' } else { '<' };
    let dict = format!(
        "{{'descr': '{order}U{width}', 'fortran_order': False, 'shape': ({},), }}",
        strings.len()
    );
    let mut header = dict.into_bytes();
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(b' ');
    }
    header.push(b'\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(&header);
    for s in strings {
        for i in 0..width {
            let unit = s.get(i).map_or(0, |&c| c as u32);
            out.extend_from_slice(&if big_endian {
                unit.to_be_bytes()
            } else {
                unit.to_le_bytes()
            });
        }
    }
    out
}

#[test]
fn chunks_of_mixed_text_read_as_each_element_does() {
    // Text that lengthens along the file (the buffer's first estimate is
    // outgrown), chunks all ASCII beside chunks with other characters,
    // NULs inside (kept) and at the end (stripped), widths that are and
    // are not multiples of the 16-unit blocks, both byte orders.
    let pool = [
        'a', 'Z', '0', ' ', '\0', 'é', '漢', '😀', '\u{7f}', '\u{80}',
    ];
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for (width, n) in [
        (1, 70_000),
        (3, 40_000),
        (16, 30_000),
        (37, 9_000),
        (64, 3_000),
    ] {
        for big_endian in [false, true] {
            let strings: Vec<Vec<char>> = (0..n)
                .map(|i| {
                    let len = (next() as usize % (width + 1)).min(1 + i * width / n);
                    // Most of the file ASCII; a few stretches of anything.
                    let wild = (i / 500) % 7 == 3;
                    (0..len)
                        .map(|_| {
                            let k = next() as usize;
                            if wild {
                                pool[k % pool.len()]
                            } else {
                                pool[k % 4]
                            }
                        })
                        .collect()
                })
                .collect();
            let bytes = ucs4_file(&strings, width, big_endian);
            let compact = StringArray::from_npy_bytes(&bytes).unwrap();
            assert_eq!(compact.len(), n);
            // From a reader of unknown length the buffers grow as text arrives.
            assert_eq!(StringArray::read_npy_from(&bytes[..]).unwrap(), compact);
            let each = ArrayD::<String>::read_npy_from(&bytes[..]).unwrap();
            for (i, (got, s)) in compact.iter().zip(&strings).enumerate() {
                let text: String = s.iter().collect();
                let want = text.trim_end_matches('\0');
                assert_eq!(
                    got, want,
                    "width {width}, element {i}, big endian {big_endian}"
                );
                assert_eq!(each[[i]], want);
            }
        }
    }
}
