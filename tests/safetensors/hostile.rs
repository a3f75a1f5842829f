//! Damaged input on either side, at random: never a panic; each error is
//! one of the crate's, and what reads at all reads consistently.

use super::*;
use ndnpy::safetensors::{SafetensorsIndex, SafetensorsReader};
use proptest::prelude::*;
use std::io::Cursor;

/// A small safetensors file and the archive it came from.
fn originals() -> (Vec<u8>, Vec<u8>) {
    let mut w = NpzWriter::new(Cursor::new(Vec::new()));
    w.add("w", &array![[1.0f32, 2.0], [3.0, 4.0]]).unwrap();
    w.add("m", &array![true, false]).unwrap();
    w.add("b", &array![bf16::ONE, bf16::NEG_ONE]).unwrap();
    add_raw(
        &mut w,
        "be",
        ">i2",
        &[2, 2],
        true,
        &[0, 1, 0, 2, 0, 3, 0, 4],
    );
    let npz = w.finish_into_inner().unwrap().into_inner();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o.safetensors");
    let options = SafetensorsOptions::default()
        .raw_as(MlDtype::Bfloat16)
        .metadata([("k".into(), "v".into())].into());
    let mut reader = NpzReader::new(Cursor::new(npz.clone())).unwrap();
    npz_to_safetensors_with(&mut reader, &out, &options).unwrap();
    (std::fs::read(&out).unwrap(), npz)
}

/// `bytes` with `edits` applied (position, xor) and cut to `keep` of its
/// length.
fn damaged(bytes: &[u8], edits: &[(usize, u8)], keep: f64) -> Vec<u8> {
    let mut out = bytes.to_vec();
    for &(at, x) in edits {
        let n = out.len();
        out[at % n] ^= x;
    }
    out.truncate(((bytes.len() as f64) * keep) as usize);
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn damaged_safetensors_files(edits in prop::collection::vec((any::<usize>(), 1u8..), 0..4), keep in prop_oneof![Just(1.0), 0.0..1.0f64]) {
        let (st_bytes, _) = originals();
        let bytes = damaged(&st_bytes, &edits, keep);
        let from_index = SafetensorsIndex::read_from(&bytes[..], bytes.len() as u64);
        match SafetensorsFile::new(bytes.clone()) {
            Ok(file) => {
                prop_assert!(from_index.is_ok());
                let mut reader = SafetensorsReader::new(Cursor::new(bytes)).unwrap();
                for name in file.names() {
                    let a = file.read_any(&name);
                    let b = reader.read_any(&name);
                    prop_assert_eq!(a.is_ok(), b.is_ok());
                    if let (Ok(a), Ok(b)) = (a, b) {
                        prop_assert_eq!(a, b);
                    }
                }
                let dir = tempfile::tempdir().unwrap();
                let _ = safetensors_to_npz(&file, dir.path().join("x.npz"));
            }
            Err(e) => {
                prop_assert!(matches!(e, Error::InvalidSafetensors { .. }), "{:?}", e);
                prop_assert!(from_index.is_err());
            }
        }
    }

    #[test]
    fn damaged_archives(edits in prop::collection::vec((any::<usize>(), 1u8..), 1..4), keep in prop_oneof![Just(1.0), 0.5..1.0f64]) {
        let (_, npz) = originals();
        let bytes = damaged(&npz, &edits, keep);
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("x.safetensors");
        let options = SafetensorsOptions::default().raw_as(MlDtype::Bfloat16);
        if let Ok(mut reader) = NpzReader::new(Cursor::new(bytes)) {
            match npz_to_safetensors_with(&mut reader, &out, &options) {
                // What was written is a file the safetensors crate reads.
                Ok(()) => prop_assert!(SafetensorsFile::new(std::fs::read(&out).unwrap()).is_ok()),
                Err(_) => prop_assert!(!out.exists()),
            }
        }
        // Nothing but the output is ever left in the folder.
        prop_assert!(std::fs::read_dir(dir.path()).unwrap().count() <= 1);
    }
}
