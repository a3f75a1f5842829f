//! Bad input: lying `pandas` metadata, truncated and corrupt files, footers
//! claiming gigabytes, memory limits. Clear errors, never a panic.

use ndnpy_parquet::{Error, Frame, ReadOptions, Values};
use std::path::PathBuf;

fn fixture(dir: &str, name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join(format!("../fixtures/parquet/{dir}/{name}.parquet"))
}

fn metadata_error(name: &str, needle: &str) {
    match Frame::read(fixture("hostile", name)) {
        Err(Error::Metadata(msg)) => assert!(msg.contains(needle), "{name}: {msg}"),
        other => panic!("{name}: expected Error::Metadata, got {other:?}"),
    }
}

#[test]
fn lying_metadata_is_a_metadata_error() {
    metadata_error("unknown_pandas_type", "unknown pandas_type \"quaternion\"");
    metadata_error(
        "missing_index_column",
        "index column \"no_such_column\" is not in the file",
    );
    metadata_error("range_length_mismatch", "the file has 7 rows");
    metadata_error("range_step_zero", "step cannot be 0");
    metadata_error("not_json", "not JSON");
    metadata_error("json_not_object", "not a JSON object");
    metadata_error("ghost_column", "\"ghost\"");
}

#[test]
fn huge_num_categories_is_ignored_not_allocated() {
    // num_categories repeats what the dictionary says; it is never used to
    // size anything, so 2**62 reads as the real 4 categories.
    let f = Frame::read(fixture("hostile", "huge_num_categories")).unwrap();
    let Values::Categorical(c) = f.column("cat").unwrap().values() else {
        panic!()
    };
    assert_eq!(c.num_categories(), 4);
}

#[test]
fn every_truncation_is_an_error() {
    let bytes = std::fs::read(fixture("valid", "strings")).unwrap();
    for len in 0..bytes.len() {
        match Frame::from_bytes(&bytes[..len], &ReadOptions::default()) {
            Err(Error::Parquet(_)) => {}
            other => panic!("truncated to {len}: expected Error::Parquet, got {other:?}"),
        }
    }
}

#[test]
fn corrupt_bytes_never_panic() {
    for name in [
        "datetimes",
        "categoricals",
        "nullable",
        "multiindex",
        "row_groups",
    ] {
        let bytes = std::fs::read(fixture("valid", name)).unwrap();
        let step = (bytes.len() / 120).max(1);
        for pos in (0..bytes.len()).step_by(step) {
            for flip in [0x01u8, 0x80, 0xff] {
                let mut b = bytes.clone();
                b[pos] ^= flip;
                let opts = ReadOptions {
                    max_bytes: Some(64 << 20),
                };
                let _ = Frame::from_bytes(&b, &opts);
            }
        }
    }
}

#[test]
fn footer_claiming_gigabytes_is_refused() {
    let mut bytes = std::fs::read(fixture("valid", "numeric")).unwrap();
    let n = bytes.len();
    bytes[n - 8..n - 4].copy_from_slice(&0x7fff_fff0u32.to_le_bytes());
    match Frame::from_bytes(&bytes, &ReadOptions::default()) {
        Err(Error::Parquet(msg)) => assert!(!msg.is_empty()),
        other => panic!("expected Error::Parquet, got {other:?}"),
    }
}

#[test]
fn memory_limit_is_enforced() {
    let path = fixture("valid", "row_groups");
    let opts = ReadOptions {
        max_bytes: Some(10_000),
    };
    match Frame::read_with(&path, &opts) {
        Err(Error::TooLarge { needed, limit }) => {
            assert_eq!(limit, 10_000);
            assert!(needed > limit);
        }
        other => panic!("expected Error::TooLarge, got {other:?}"),
    }
    assert_eq!(Frame::read(&path).unwrap().len(), 5000);
}

#[test]
fn not_parquet_is_a_parquet_error() {
    assert!(matches!(
        Frame::from_bytes(
            b"PAR1 this is not a parquet file PAR1",
            &ReadOptions::default()
        ),
        Err(Error::Parquet(_))
    ));
    assert!(matches!(
        Frame::read("/nonexistent/x.parquet"),
        Err(Error::Io(_))
    ));
}

#[test]
fn pandas_json_fuzz_hook_reads_a_matching_key() {
    let seeds = concat!(env!("CARGO_MANIFEST_DIR"), "/fuzz/seeds/pandas_json/");
    let json = std::fs::read_to_string(format!("{seeds}matching.json")).unwrap();
    let f = ndnpy_parquet::fuzzing::read_with_pandas_json(&json).unwrap();
    assert_eq!(f.columns().len(), 6);
    assert_eq!(f.column("a").unwrap().numpy_type(), "Int64");
    assert!(matches!(
        ndnpy_parquet::fuzzing::read_with_pandas_json("{\"columns\": 5}"),
        Err(Error::Metadata(_))
    ));
}

#[test]
fn categories_are_written_exactly() {
    use ndarray::array;
    use ndnpy::AnyArray;
    use ndnpy_parquet::{Categorical, Column, WriteOptions};
    let cat = |codes: ndarray::Array1<i8>, categories: AnyArray, ordered| {
        let c = Categorical::new(AnyArray::I8(codes.into_dyn()), categories, ordered).unwrap();
        Frame::new(vec![Column::new("c", Values::Categorical(c))]).unwrap()
    };
    let words = || {
        Values::strings(["lo", "mid", "hi"])
            .as_array()
            .unwrap()
            .clone()
    };
    let bytes = || {
        Values::bytes([b"x".to_vec(), Vec::new()])
            .as_array()
            .unwrap()
            .clone()
    };
    // Categories out of order of appearance, unused, all missing, several
    // row groups: the same categorical comes back, ordered or not.
    for rows in [1, 2, 1 << 20] {
        let opts = WriteOptions {
            row_group_size: rows,
            ..Default::default()
        };
        for f in [
            cat(array![0, -1, 1, 0, 2], words(), true),
            cat(array![0, 2, 1], words(), true),
            cat(array![1, 1, -1], words(), false),
            cat(array![-1, -1], words(), true),
            cat(array![1, -1, 0], bytes(), true),
        ] {
            let back = Frame::from_bytes(&f.to_bytes(&opts).unwrap(), &Default::default()).unwrap();
            assert_eq!(back.columns()[0].values(), f.columns()[0].values(), "{f:?}");
        }
    }
    // Without rows there is no row group, hence no dictionary: the
    // categories of an empty categorical are lost (documented).
    let empty = cat(array![], words(), true);
    let back = Frame::from_bytes(
        &empty.to_bytes(&Default::default()).unwrap(),
        &Default::default(),
    )
    .unwrap();
    let Values::Categorical(c) = back.columns()[0].values() else {
        panic!()
    };
    assert_eq!((c.num_categories(), c.ordered), (0, true));
    // Integer categories go through the Arrow writer, which renumbers them:
    // refused when ordered and the order would change.
    let ints = AnyArray::I64(array![30i64, 10, 20].into_dyn());
    let opts = WriteOptions::default();
    assert!(matches!(
        cat(array![0, 2, 1], ints.clone(), true).to_bytes(&opts),
        Err(Error::Unsupported { .. })
    ));
    assert!(cat(array![0, 2, 1], ints.clone(), false)
        .to_bytes(&opts)
        .is_ok());
    assert!(cat(array![0, 1, 2], ints, true).to_bytes(&opts).is_ok());
}

#[test]
fn decoder_panic_found_by_fuzzing_is_an_error() {
    // parquet 60 panics on this footer ("column start and length should not
    // be negative"); Frame turns the panic into Error::Parquet.
    match Frame::read(fixture("hostile", "fuzz_negative_column_start")) {
        Err(Error::Parquet(msg)) => assert!(msg.contains("negative"), "{msg}"),
        other => panic!("expected Error::Parquet, got {other:?}"),
    }
}

#[test]
fn dictionary_page_claiming_a_billion_entries_is_refused() {
    // Found by fuzzing (parquet_bytes): 40 bytes of dictionary page claiming
    // 1389363199 int64 entries made the Parquet decoder allocate 11 GB.
    match Frame::read(fixture("hostile", "fuzz_dictionary_count")) {
        Err(Error::Parquet(msg)) => assert!(
            msg.contains("a dictionary page claims 1389363199 entries in 40 bytes"),
            "{msg}"
        ),
        other => panic!("expected Error::Parquet, got {other:?}"),
    }
}

/// An `.npz` of only a RangeIndex claiming 2**62 rows (a review finding):
/// converting it once looped over 2**42 empty row groups while their
/// metadata grew; now a frame without columns is one row group.
#[test]
fn a_huge_range_index_without_columns_converts_at_once() {
    use ndnpy_parquet::convert;
    let arrays = vec![(
        "__range_index__".to_owned(),
        ndnpy::AnyArray::I64(ndarray::arr1(&[0i64, 1 << 62, 1]).into_dyn()),
    )];
    let frame = convert::from_arrays(arrays).unwrap();
    assert_eq!(frame.len(), 1 << 62);
    let bytes = frame.to_bytes(&Default::default()).unwrap();
    let reader =
        parquet::file::reader::SerializedFileReader::new(bytes::Bytes::from(bytes)).unwrap();
    use parquet::file::reader::FileReader;
    assert_eq!(reader.metadata().num_row_groups(), 1);
}

#[test]
fn summaries_of_hostile_files_refuse_or_do_not_believe_the_same_lies() {
    use ndnpy_parquet::Summary;
    // What the footer alone shows is refused with the frame reader's error.
    for (name, needle) in [
        ("unknown_pandas_type", "unknown pandas_type \"quaternion\""),
        (
            "missing_index_column",
            "index column \"no_such_column\" is not in the file",
        ),
        ("range_length_mismatch", "the file has 7 rows"),
        ("range_step_zero", "step cannot be 0"),
        ("not_json", "not JSON"),
        ("json_not_object", "not a JSON object"),
        (
            "ghost_column",
            "a column \"ghost\" that the file does not have",
        ),
    ] {
        match Summary::read(fixture("hostile", name)) {
            Err(Error::Metadata(msg)) => assert!(msg.contains(needle), "{name}: {msg}"),
            other => panic!("{name}: expected Error::Metadata, got {other:?}"),
        }
    }
    // num_categories of 2**62 is not believed: the count is unknown.
    let s = Summary::read(fixture("hostile", "huge_num_categories")).unwrap();
    assert!(s.columns.iter().all(|c| c.categories.is_none()), "{s:?}");
    // Lies only the pages show (a dictionary page claiming a billion
    // entries, a column chunk starting at a negative offset) are left to
    // `check`; the footer reads.
    for name in ["fuzz_dictionary_count", "fuzz_negative_column_start"] {
        assert!(Summary::read(fixture("hostile", name)).is_ok(), "{name}");
    }
}
