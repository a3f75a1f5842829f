//! Every size a header claims, audited (issue 30): memory and work follow
//! the bytes present, never what a header says is there.
//!
//! The classes: items of size 0 (`|S0`, `<U0`, `|V0`, records without
//! fields, zero-size sub-arrays and fields), which no data byte pays for;
//! empty dimensions beside huge ones; object arrays whose pickles build
//! arrays of such items; archive members of them, stored and deflated;
//! scipy.sparse shapes and block heights; a header read of a large member.
//!
//! Each input (the hostile corpus `fixtures/claimed_sizes/`, written by
//! `scripts/gen_claimed_size_fixtures.py`, and the inputs built here) goes
//! through every reader under a counting global allocator: the peak of
//! live heap bytes and the largest single request (a refused request
//! counts too) stay under 64 MiB, and so does the number of allocations.
//! Work is bounded by construction: the only loops a claim could stretch
//! make a value, or reserve room for values, each, so the allocator sees
//! them (no test here measures time). Tests are serialised by a lock so
//! that their measurements do not mix.

use ndarray::{Array1, ArrayD};
use ndnpy::{
    dtype::Header, types::BytesArray, types::FixedBytes, types::StringArray, AnyArray, Error,
    NpzReader, ReadNpy, ReadOptions,
};
use std::io::{self, Cursor, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::Arc;

mod common;
use common::npy_v1;

#[path = "claimed_sizes/alloc.rs"]
mod alloc;
#[path = "claimed_sizes/readers.rs"]
mod readers;
use alloc::{measure, MIB, SERIAL};
use readers::{archive, npy_readers, npz_readers, saved, sparse_readers};

fn header(descr: &str, shape: &str) -> String {
    format!("{{'descr': {descr}, 'fortran_order': False, 'shape': {shape}, }}")
}

/// The answers (error variants, or `"ok"`) the corpus records for `name`.
fn recorded(expected: &serde_json::Value, name: &str) -> Vec<String> {
    expected[name]["errors"]
        .as_array()
        .unwrap_or_else(|| panic!("{name} is not in expected.json"))
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect()
}

/// Whether `answer`, by the reader `what`, is one `recorded` allows. A
/// header's own error (a claim refused as it is parsed) is every reader's
/// answer; otherwise readers of the header alone may succeed, readers of
/// another element type may refuse the dtype, and `AnyArray` gives the
/// recorded answer. A sparse archive's members read as plain arrays: the
/// recorded answer is its matrix readers'.
fn fits(recorded: &[String], what: &str, answer: &str, sparse: bool) -> bool {
    if what.contains("NpzMmap") && answer == "CompressedMember" {
        // A map views stored members only.
        return true;
    }
    let header_level = recorded
        .iter()
        .any(|a| a == "ZeroSizeLimit" || a == "LengthOverflow");
    if header_level && !recorded.iter().any(|a| a == "ok") {
        return recorded.iter().any(|a| a == answer);
    }
    if sparse && !what.starts_with("sparse") {
        return answer == "ok" || MISMATCH.contains(&answer);
    }
    let lower = what.to_lowercase();
    if lower.contains("header") || lower.contains("inspect") || what == "sparse_info" {
        return answer == "ok";
    }
    let any = what.contains("AnyArray") || what.contains("read_any") || what.contains("arrays");
    recorded.iter().any(|a| a == answer) || (!any && MISMATCH.contains(&answer))
}

/// What a reader of another element type, dimensions or layout than the
/// file's answers (a view takes an object array's pickle for too few
/// pointers).
const MISMATCH: [&str; 10] = [
    "TruncatedData",
    "DTypeMismatch",
    "NdimMismatch",
    "ShapeMismatch",
    "UnsupportedDType",
    "LayoutMismatch",
    "LengthOverflow",
    "CompressedMember",
    "NoGrowthAxis",
    "NotNpy",
];

fn corpus() -> (PathBuf, serde_json::Value) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/claimed_sizes");
    let text = std::fs::read_to_string(dir.join("expected.json")).unwrap();
    (dir, serde_json::from_str(&text).unwrap())
}

#[test]
fn the_hostile_corpus_costs_what_its_bytes_hold() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (dir, expected) = corpus();
    let options = ReadOptions::default();
    let mut files = 0;
    for (name, entry) in expected.as_object().unwrap() {
        let path = dir.join(name);
        let bytes = std::fs::read(&path).unwrap();
        let recorded = recorded(&expected, name);
        let sparse = entry.get("scipy").is_some();
        let mut answers: Vec<(String, String)> = Vec::new();
        if name.ends_with(".npy") {
            answers.extend(
                npy_readers(&bytes, &path, &options)
                    .into_iter()
                    .map(|(what, answer)| (what.to_owned(), answer)),
            );
            // The same file as an archive member, stored and deflated.
            for method in [
                zip::CompressionMethod::Stored,
                zip::CompressionMethod::Deflated,
            ] {
                let npz = archive(&[("x.npy", &bytes)], method);
                let (_dir, npz_path) = saved(&npz);
                answers.extend(npz_readers(&npz, &npz_path, &options));
            }
        } else {
            answers.extend(npz_readers(&bytes, &path, &options));
            if sparse {
                answers.extend(sparse_readers(&bytes));
            }
        }
        assert!(answers.len() > 4, "{name}");
        for (what, answer) in &answers {
            assert!(
                fits(&recorded, what, answer, sparse),
                "{name}: {what} gave {answer}, the corpus records {recorded:?}"
            );
        }
        files += 1;
    }
    assert!(files >= 20, "{files} files in the corpus");
}

/// A version 1.0 `.npy` file of `n` items of `descr`, with no data.
fn zero_size(descr: &str, n: u64) -> Vec<u8> {
    npy_v1(&header(descr, &format!("({n},)")), &[])
}

#[test]
fn zero_size_items_up_to_the_limit_load_as_numpy_loads_them() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let u0 = zero_size("'<U0'", 1000);
    let strings = Array1::<String>::from_npy_bytes(&u0).unwrap();
    assert_eq!(strings.len(), 1000);
    assert!(strings.iter().all(String::is_empty));
    let compact = StringArray::from_npy_bytes(&u0).unwrap();
    assert_eq!((compact.len(), compact.values()), (1000, ""));
    let AnyArray::Str(any) = AnyArray::from_npy_bytes(&u0).unwrap() else {
        panic!("<U0 is strings");
    };
    assert_eq!(any.shape(), [1000]);
    let s0 = zero_size("'|S0'", 1000);
    assert_eq!(BytesArray::from_npy_bytes(&s0).unwrap().len(), 1000);
    let fixed = ArrayD::<FixedBytes<0>>::from_npy_bytes(&s0).unwrap();
    assert_eq!(fixed.shape(), [1000]);
    let AnyArray::Void(void) = AnyArray::from_npy_bytes(&zero_size("'|V0'", 1000)).unwrap() else {
        panic!("|V0 is void");
    };
    assert_eq!((void.shape(), void.as_bytes().len()), (&[1000][..], 0));

    // At the default limit, a read costs what NumPy's would not, but a
    // bounded amount: 2^20 `String`s of 24 bytes.
    let at_limit = zero_size("'<U0'", ndnpy::npy::DEFAULT_MAX_ZERO_SIZE_ELEMENTS);
    let (strings, cost) = measure(|| Array1::<String>::from_npy_bytes(&at_limit).unwrap());
    assert_eq!(strings.len(), 1 << 20);
    drop(strings);
    println!("2^20 <U0 as Array1<String>: peak {} B", cost.peak);
    assert!(cost.peak <= 25 * MIB, "{}", cost.peak);
    let (compact, cost) = measure(|| StringArray::from_npy_bytes(&at_limit).unwrap());
    assert_eq!(compact.len(), 1 << 20);
    drop(compact);
    println!("2^20 <U0 as StringArray: peak {} B", cost.peak);
    assert!(cost.peak <= 9 * MIB, "{}", cost.peak);

    // One more is refused as the header is parsed, whatever reads it; a
    // caller who trusts the file raises the limit.
    let over = zero_size("'<U0'", (1 << 20) + 1);
    let err = AnyArray::from_npy_bytes(&over).unwrap_err();
    assert!(
        matches!(err, Error::Limit(ndnpy::error::LimitError::ZeroSizeLimit { claimed, max }) if claimed == (1 << 20) + 1 && max == 1 << 20),
        "{err:?}"
    );
    assert!(err.to_string().contains("max_zero_size_elements"), "{err}");
    let raised = ReadOptions::default().max_zero_size_elements(1 << 21);
    assert_eq!(
        AnyArray::from_npy_bytes_with(&over, &raised)
            .unwrap()
            .shape(),
        [(1 << 20) + 1]
    );
    let none = ReadOptions::default().max_zero_size_elements(0);
    assert!(matches!(
        Header::read_from_with(&zero_size("'|S0'", 1)[..], &none),
        Err(Error::Limit(ndnpy::error::LimitError::ZeroSizeLimit {
            claimed: 1,
            max: 0
        }))
    ));
    // No elements, no values: a zero dimension makes any other free.
    let empty = npy_v1(&header("'|S0'", "(0, 4611686018427387904)"), &[]);
    assert!(Header::read_from_with(&empty[..], &none).is_ok());
}

#[test]
fn zero_size_fields_and_sub_array_items_count_each() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let limit = ReadOptions::default().max_zero_size_elements(1200);
    let claimed = |descr: &str, n: usize, data: usize| {
        let file = npy_v1(&header(descr, &format!("({n},)")), &vec![0u8; data]);
        match Header::read_from_with(&file[..], &limit) {
            Ok(_) => 0,
            Err(Error::Limit(ndnpy::error::LimitError::ZeroSizeLimit { claimed, .. })) => claimed,
            Err(e) => panic!("{descr}: {e:?}"),
        }
    };
    // Three zero-size fields beside a byte: three values a record.
    let record = "[('a', '|i1'), ('b', '|S0'), ('c', '<U0'), ('d', [('e', '|V0')])]";
    assert_eq!(claimed(record, 400, 400), 0);
    assert_eq!(claimed(record, 401, 401), 1203);
    // A sub-array counts its items; an element of none counts itself.
    assert_eq!(claimed("('|S0', (4, 100))", 3, 0), 0);
    assert_eq!(claimed("('|S0', (4, 100))", 4, 0), 1600);
    assert_eq!(claimed("('<f8', (0,))", 1201, 0), 1201);
    assert_eq!(claimed("[]", 1201, 0), 1201);
    // Fields read out of records are the values counted.
    let file = npy_v1(&header(record, "(400,)"), &[7u8; 400]);
    let AnyArray::Record(r) = AnyArray::from_npy_bytes_with(&file, &limit).unwrap() else {
        panic!("records");
    };
    assert_eq!(r.field("c").unwrap().shape(), [400]);
    // Saturating, never wrapping: 2^40 items of 2^62 empty strings.
    let huge = "('|S0', (2147483647, 2147483647))";
    assert_eq!(claimed(huge, 1 << 40, 0), u64::MAX);
}

#[test]
fn pickled_arrays_of_zero_size_items_are_charged_to_the_pickle() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (dir, _) = corpus();
    let file = std::fs::read(dir.join("object_holding_s0_2e61.npy")).unwrap();
    let pickle = &file[file.iter().position(|&b| b == b'\n').unwrap() + 1..];
    let (r, cost) = measure(|| ndnpy::pickle::loads(pickle));
    assert!(
        matches!(
            r,
            Err(Error::Limit(ndnpy::error::LimitError::PickleLimit { .. }))
        ),
        "{r:?}"
    );
    assert!(cost.peak < MIB && cost.largest < MIB, "{}", cost.peak);
    // The same pickle with other counts: 2^22 empty strings (96 MiB of
    // `String`s) exceed the budget (1 MiB plus 64 bytes per pickle byte),
    // a thousand load.
    let huge = b"\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x1f";
    let at = pickle
        .windows(huge.len())
        .position(|w| w == huge)
        .expect("2**61 - 1 as LONG1");
    let with_count = |count: &[u8]| {
        let mut out = pickle[..at].to_vec();
        out.extend_from_slice(count);
        out.extend_from_slice(&pickle[at + huge.len()..]);
        if out[2] == 0x95 {
            // Protocol 4's FRAME: its length follows the number's.
            let len = u64::from_le_bytes(out[3..11].try_into().unwrap());
            let len = len + count.len() as u64 - huge.len() as u64;
            out[3..11].copy_from_slice(&len.to_le_bytes());
        }
        out
    };
    let (r, cost) = measure(|| ndnpy::pickle::loads(&with_count(b"J\x00\x00\x40\x00")));
    assert!(
        matches!(
            r,
            Err(Error::Limit(ndnpy::error::LimitError::PickleLimit { .. }))
        ),
        "{r:?}"
    );
    assert!(cost.peak < MIB && cost.largest < MIB, "{}", cost.largest);
    let small = with_count(b"M\xe8\x03"); // BININT2 1000
    let value = ndnpy::pickle::loads(&small).unwrap();
    let ndnpy::pickle::PyValue::Array(a) = &value else {
        panic!("{value}")
    };
    let AnyArray::Object(items) = &**a else {
        panic!("an object array")
    };
    let ndnpy::pickle::PyValue::Array(inner) = &items[0] else {
        panic!("an ndarray inside")
    };
    assert_eq!(inner.shape(), [1000]);
}

#[test]
fn empty_dimensions_beside_huge_ones_cost_nothing() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let beyond = ReadOptions::default()
        .allow_beyond_numpy_limits(true)
        .max_zero_size_elements(u64::MAX);
    let huge = 1u64 << 62;
    for (descr, shape) in [
        ("'<f8'", format!("(0, {huge})")),
        ("'<f8'", format!("({huge}, 0)")),
        ("'<U4'", format!("(0, {huge})")),
        ("'|S0'", format!("(0, {huge}, {huge})")),
        ("[('a', '<i4')]", format!("({huge}, 0, 3)")),
    ] {
        let file = npy_v1(&header(descr, &shape), &[]);
        let (_dir, path) = saved(&file);
        for (what, answer) in npy_readers(&file, &path, &beyond) {
            assert!(
                answer == "ok" || MISMATCH.contains(&answer.as_str()),
                "{descr} {shape}: {what} gave {answer}"
            );
        }
        // Without the relaxed options, NumPy's rule (the non-zero
        // dimensions' bytes) refuses a shape only with a huge item count.
        let numpy = AnyArray::from_npy_bytes(&file).map(|a| a.shape().to_vec());
        assert!(
            numpy.is_ok()
                || matches!(
                    numpy,
                    Err(Error::Limit(
                        ndnpy::error::LimitError::LengthOverflow { .. }
                    ))
                ),
            "{numpy:?}"
        );
    }
}

#[test]
fn more_elements_than_ndarray_holds_are_an_error() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // 2^63 empty strings: beyond ndarray's isize::MAX elements, even with
    // every limit lifted.
    let unlimited = ReadOptions::default()
        .allow_beyond_numpy_limits(true)
        .max_zero_size_elements(u64::MAX);
    let file = npy_v1(&header("'|S0'", &format!("({}, 2)", 1u64 << 62)), &[]);
    let (_dir, path) = saved(&file);
    for (what, answer) in npy_readers(&file, &path, &unlimited) {
        // The header alone is fine, and a block of its rows; an array of
        // all of it is not.
        if !what.contains("Header") && !what.contains("inspect") && !what.contains("NpyReader") {
            assert_ne!(answer, "ok", "{what}");
        }
    }
    let err = ArrayD::<FixedBytes<0>>::from_npy_bytes_with(&file, &unlimited).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Limit(ndnpy::error::LimitError::LengthOverflow { .. })
        ),
        "{err:?}"
    );
}

/// A `Read + Seek` that counts the bytes read through it.
struct CountingReader {
    inner: Cursor<Vec<u8>>,
    read: Arc<AtomicU64>,
}

impl Read for CountingReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.fetch_add(n as u64, SeqCst);
        Ok(n)
    }
}

impl Seek for CountingReader {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.inner.seek(pos)
    }
}

#[test]
fn a_member_header_reads_the_header_not_the_member() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // 5.6 MB that ndnpy compresses in 1 MiB pieces: more than the 4 MiB a
    // member needs to be read ahead on other threads when read whole.
    let a = Array1::from_iter((0..700_000u64).map(|i| i * i % 1_000_003));
    let mut w = ndnpy::NpzWriter::new(Cursor::new(Vec::new())).codec(ndnpy::npz::Codec::deflate());
    w.add("a", &a).unwrap();
    let bytes = w.finish_into_inner().unwrap().into_inner();
    let read = Arc::new(AtomicU64::new(0));
    let input = CountingReader {
        inner: Cursor::new(bytes.clone()),
        read: Arc::clone(&read),
    };
    let mut npz = NpzReader::new(input).unwrap();
    read.store(0, SeqCst);
    let (header, cost) = measure(|| npz.header("a").unwrap());
    let header_bytes = read.load(SeqCst);
    println!(
        "header of a {} B member ({} B archive): {header_bytes} B read, peak {} B",
        a.len() * 8,
        bytes.len(),
        cost.peak
    );
    assert_eq!(header.shape, [700_000]);
    // The local header and the archive's 32 KiB input buffer, not pieces.
    assert!(header_bytes <= 64 << 10, "{header_bytes} bytes read");
    assert!(cost.peak < MIB, "{}", cost.peak);
    // The member still reads whole afterwards.
    read.store(0, SeqCst);
    assert_eq!(npz.read::<u64, ndarray::Ix1>("a").unwrap(), a);
    assert!(read.load(SeqCst) >= header_bytes);
}

/// A scipy.sparse archive of these members (`format` and `shape` added).
#[cfg(feature = "sprs")]
fn sparse_archive(format: &[u8], shape: [i64; 2], members: &[(&str, AnyArray)]) -> Vec<u8> {
    let mut w = ndnpy::NpzWriter::new(Cursor::new(Vec::new()));
    let name = AnyArray::Bytes(ndarray::arr0(format.to_vec()).into_dyn());
    w.add_any("format", &name).unwrap();
    w.add("shape", &ndarray::arr1(&shape)).unwrap();
    for (member, values) in members {
        w.add_any(member, values).unwrap();
    }
    w.finish_into_inner().unwrap().into_inner()
}

#[cfg(feature = "sprs")]
#[test]
fn bsr_rows_are_bounded_by_the_values_present() {
    use alloc::BOUND;
    use ndarray::IxDyn;
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let ints = |v: Vec<i32>| AnyArray::I32(Array1::from(v).into_dyn());
    let blocks =
        |b: usize, r: usize, c: usize| AnyArray::F64(ArrayD::from_elem(IxDyn(&[b, r, c]), 1.5));
    let bsr = |rows: usize, r: usize, indptr: Vec<i32>, stored: usize| {
        sparse_archive(
            b"bsr",
            [rows as i64, 2],
            &[
                ("indices", ints(vec![0; stored])),
                ("indptr", ints(indptr)),
                ("data", blocks(stored, r, 2)),
            ],
        )
    };
    let read = |archive: &[u8]| {
        let (r, cost) = measure(|| {
            NpzReader::new(Cursor::new(archive)).and_then(|mut z| z.read_sparse::<f64>())
        });
        assert!(
            cost.peak < BOUND && cost.largest < BOUND,
            "{}",
            cost.largest
        );
        r
    };
    // No block stored, blocks of 2^28 rows (the archive): 2^28
    // row pointers from nothing.
    let err = read(&bsr(1 << 28, 1 << 28, vec![0, 0], 0)).unwrap_err();
    assert!(
        matches!(&err, Error::InvalidSparse { reason } if reason.contains("268435456 rows")),
        "{err}"
    );
    // 1200 block rows of 1200 rows and one block: 1.44 M rows from 3602
    // stored values; within the bound at 500 x 500.
    let mut indptr = vec![0];
    indptr.extend(std::iter::repeat_n(1, 1200));
    let wide = bsr(1_440_000, 1200, indptr, 1);
    assert!(matches!(read(&wide), Err(Error::InvalidSparse { .. })));
    let mut indptr = vec![0];
    indptr.extend(std::iter::repeat_n(1, 500));
    let m = read(&bsr(250_000, 500, indptr, 1)).unwrap();
    assert_eq!((m.shape(), m.nnz()), ((250_000, 2), 1000));
    // Honest matrices with empty block rows read as before: blocks of 4
    // rows, one block row of three stored.
    let m = read(&bsr(12, 4, vec![0, 0, 1, 1], 1)).unwrap();
    let mut dense = ndarray::Array2::<f64>::zeros((12, 2));
    dense.slice_mut(ndarray::s![4..8, ..]).fill(1.5);
    assert_eq!(m.to_dense(), dense);
    // sparse_info reads headers only, whatever the claim.
    let info = NpzReader::new(Cursor::new(&bsr(1 << 28, 1 << 28, vec![0, 0], 0)[..]))
        .unwrap()
        .sparse_info()
        .unwrap()
        .unwrap();
    assert_eq!((info.shape, info.nnz), ([1 << 28, 2], 0));
}

/// Reading every member of an archive (`NpzReader::arrays`, which decodes
/// the next members on other cores) holds one member's values of zero size
/// at a time, not one per core: 16 members of 2**20 `<U0` each, padded
/// past the read-ahead's threshold with bytes after the data (which
/// readers ignore), come from 4 KiB of deflated input.
#[test]
fn reading_every_member_holds_one_members_zero_size_values_at_a_time() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let mut padded = npy_v1(
        "{'descr': '<U0', 'fortran_order': False, 'shape': (1048576,), }",
        &[],
    );
    padded.resize(padded.len() + 70_000, 0);
    let names: Vec<String> = (0..16).map(|i| format!("m{i}.npy")).collect();
    let members: Vec<(&str, &[u8])> = names.iter().map(|n| (n.as_str(), &padded[..])).collect();
    let npz = archive(&members, zip::CompressionMethod::Deflated);
    assert!(npz.len() < 8 << 10, "{} bytes", npz.len());
    let (read, cost) = measure(|| {
        let mut reader = NpzReader::new(Cursor::new(&npz[..])).unwrap();
        let mut read = 0;
        for member in reader.arrays() {
            let array = member.1.unwrap();
            assert_eq!(array.shape(), [1 << 20]);
            read += 1;
        }
        read
    });
    assert_eq!(read, 16);
    // One member's 2**20 empty strings are 24 MiB; two may be alive at a
    // hand-over, never one per core ahead.
    assert!(cost.peak < 56 * MIB, "peak {} MiB", cost.peak / MIB);
}
