//! `StringArray` and `BytesArray` against NumPy's own files (the element
//! fixtures, written by `np.save`): the same values and errors as
//! `Array<String>` / `Array<Vec<u8>>`, and byte-identical write-back.

use ndarray::{ArrayD, IxDyn};
use ndnpy::{BytesArray, NpzReader, NpzWriter, ReadNpy, StringArray, WriteNpy};
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
    let mut w = NpzWriter::new(Cursor::new(Vec::new())).compressed(true);
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
