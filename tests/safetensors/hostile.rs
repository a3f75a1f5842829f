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

// From a review: the map's conversion took a stored member's bytes by its
// declared size, past its data, and skipped the checks of the member
// reader (the size past the stored bytes, unsupported flags).

fn le_u16_at(b: &[u8], at: usize) -> usize {
    u16::from_le_bytes([b[at], b[at + 1]]) as usize
}

#[test]
fn stored_member_declared_longer_than_its_data_is_refused_from_the_map() {
    // Two stored members: x (1000 u8) then y.
    let mut w = NpzWriter::new(Cursor::new(Vec::new()));
    w.add("x", &ndarray::Array1::<u8>::from_elem(1000, 7))
        .unwrap();
    w.add("y", &ndarray::Array1::<u8>::from_elem(1000, 9))
        .unwrap();
    let mut zip = w.finish_into_inner().unwrap().into_inner();

    // x's header claims 64 more items ("(1000,)" -> "(1064,)", same length).
    let at = zip.windows(7).position(|s| s == b"(1000,)").unwrap();
    zip[at..at + 7].copy_from_slice(b"(1064,)");

    // x's local header is at 0; its data starts after name and extra.
    assert_eq!(&zip[..4], b"PK\x03\x04");
    let data_start = 30 + le_u16_at(&zip, 26) + le_u16_at(&zip, 28);
    // x's central entry: the first one.
    let cd = zip.windows(4).position(|s| s == b"PK\x01\x02").unwrap();
    let size = u32::from_le_bytes(zip[cd + 24..cd + 28].try_into().unwrap()) as usize;
    assert_ne!(size, 0xFFFF_FFFF);
    // Declared 64 bytes longer than its data (compressed size untouched),
    // with a CRC-32 over those bytes (the next local header's first 64).
    let new_size = size + 64;
    let crc = crc32fast::hash(&zip[data_start..data_start + new_size]);
    zip[cd + 16..cd + 20].copy_from_slice(&crc.to_le_bytes());
    zip[cd + 24..cd + 28].copy_from_slice(&(new_size as u32).to_le_bytes());

    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("a.npz");
    std::fs::write(&src, &zip).unwrap();

    // The plain read refuses it (its data ends early: 1000 + header bytes).
    let mut reader = NpzReader::open(&src).unwrap();
    assert!(reader.read_any("x").is_err(), "plain read must fail");

    // The conversion from the map must refuse it too.
    // SAFETY: the file is not changed while mapped.
    let map = unsafe { NpzMmap::open(&src).unwrap() };
    let out = dir.path().join("o.safetensors");
    let result = npz_to_safetensors(&map, &out);
    if result.is_ok() {
        let st = SafetensorsFile::new(std::fs::read(&out).unwrap()).unwrap();
        if let AnyArray::U8(x) = st.read_any("x").unwrap() {
            let tail: Vec<u8> = x.iter().skip(1000).take(4).copied().collect();
            panic!(
                "converted a member the reader refuses; its last items are zip structure: {tail:?}"
            );
        }
    }
}

#[test]
fn stored_member_flagged_patched_is_refused_from_the_map() {
    let mut w = NpzWriter::new(Cursor::new(Vec::new()));
    w.add("x", &ndarray::Array1::<u8>::from_elem(1000, 7))
        .unwrap();
    let mut zip = w.finish_into_inner().unwrap().into_inner();
    // Flag bit 5 (compressed patched data) on x's central entry: the
    // member reader refuses it (check_supported), as Python's zipfile does.
    let cd = zip.windows(4).position(|s| s == b"PK\x01\x02").unwrap();
    zip[cd + 8] |= 0x20;
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("a.npz");
    std::fs::write(&src, &zip).unwrap();
    assert!(NpzReader::open(&src).unwrap().read_any("x").is_err());
    // SAFETY: the file is not changed while mapped.
    let map = unsafe { NpzMmap::open(&src).unwrap() };
    let out = dir.path().join("o.safetensors");
    assert!(
        npz_to_safetensors(&map, &out).is_err(),
        "converted a member every reader refuses"
    );
}
