//! Strings, datetimes, void and records: every fixture in
//! `fixtures/npy/elements` (written by NumPy, see `scripts/gen_fixtures.py`)
//! loads to its recorded values through `AnyArray`, and through the typed
//! path where a Rust type exists; what np.save wrote, we write back.

use ndarray::{ArrayD, ArrayView1, IxDyn};
use ndnpy::{
    types::unit, types::Datetime64, types::FixedBytes, types::FixedUnicode, types::Timedelta64,
    AnyArray, Element, Error, ReadNpy, ReadOptions, ViewNpy, WriteNpy,
};
use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};

ndnpy::record! {
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct Simple { pub x: f64, pub y: i32, pub flag: bool }
}

ndnpy::record! {
    #[derive(Debug, Clone, Copy, PartialEq)]
    #[repr(C, packed)]
    pub struct SimplePacked { pub x: f64, pub y: i32, pub flag: bool }
}

ndnpy::record! {
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct Pos { x: f32, y: f32 }
}
ndnpy::record! {
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct Deep { z: i8 }
}
ndnpy::record! {
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct Inner { deep: Deep }
}
ndnpy::record! {
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct Nested { id: u16, pos: Pos, inner: Inner }
}
ndnpy::record! {
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct Sub { m: [[f64; 3]; 2], v: [i16; 4], s: u8 }
}
ndnpy::record! {
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct SubRec { pts: [Pos; 2], n: i64 }
}
ndnpy::record! {
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct NeedsZ { x: f64, z: i32 }
}

fn fixtures(group: &str) -> Vec<(PathBuf, Value)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(group);
    let mut out: Vec<(PathBuf, Value)> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "npy"))
        .map(|p| {
            let text = fs::read_to_string(p.with_extension("json")).unwrap();
            (p, serde_json::from_str(&text).unwrap())
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(!out.is_empty());
    out
}

fn options(meta: &Value) -> ReadOptions {
    match meta["max_header_len"].as_u64() {
        Some(n) => ReadOptions::default().max_header_len(n as usize),
        None => ReadOptions::default(),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn shape(v: &Value) -> Vec<usize> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap() as usize)
        .collect()
}

/// Checks `any` against a sidecar description (`describe` in the script).
fn check(any: &AnyArray, exp: &Value, what: &str) {
    assert_eq!(any.shape(), &shape(&exp["shape"])[..], "{what}: shape");
    match exp["kind"].as_str().unwrap() {
        "str" => {
            let AnyArray::Str(a) = any else {
                panic!("{what}: {any:?}")
            };
            let want: Vec<&str> = exp["values"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap())
                .collect();
            let got: Vec<&str> = a.iter().map(String::as_str).collect();
            assert_eq!(got, want, "{what}");
        }
        "bytes" => {
            let AnyArray::Bytes(a) = any else {
                panic!("{what}: {any:?}")
            };
            let want: Vec<Vec<u8>> = exp["values"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| {
                    v.as_array()
                        .unwrap()
                        .iter()
                        .map(|b| b.as_u64().unwrap() as u8)
                        .collect()
                })
                .collect();
            assert_eq!(a.iter().cloned().collect::<Vec<_>>(), want, "{what}");
        }
        kind @ ("datetime" | "timedelta") => {
            let (array, unit) = match (kind, any) {
                ("datetime", AnyArray::Datetime64 { array, unit })
                | ("timedelta", AnyArray::Timedelta64 { array, unit }) => (array, unit),
                _ => panic!("{what}: {any:?}"),
            };
            assert_eq!(unit.as_deref(), exp["unit"].as_str(), "{what}: unit");
            let want: Vec<i64> = exp["values"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_i64().unwrap())
                .collect();
            assert_eq!(array.iter().copied().collect::<Vec<_>>(), want, "{what}");
        }
        "void" => {
            let AnyArray::Void(r) = any else {
                panic!("{what}: {any:?}")
            };
            assert_eq!(hex(r.as_bytes()), exp["hex"].as_str().unwrap(), "{what}");
            assert_eq!(
                r.dtype().itemsize(),
                exp["itemsize"].as_u64().map(|n| n as usize)
            );
        }
        "num" => {
            assert_eq!(
                any.dtype().to_string(),
                exp["dtype"].as_str().unwrap(),
                "{what}: dtype"
            );
            let bytes = any.to_npy_bytes().unwrap();
            let header = ndnpy::dtype::Header::read_from(&bytes[..]).unwrap();
            let data = &bytes[header.to_bytes().unwrap().len()..];
            let want = exp["hex"].as_str().unwrap();
            if header.fortran_order {
                panic!("{what}: unexpected Fortran-order column");
            }
            assert_eq!(hex(data), want, "{what}: values");
        }
        "record" => {
            let AnyArray::Record(r) = any else {
                panic!("{what}: {any:?}")
            };
            let names: Vec<&str> = exp["names"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap())
                .collect();
            assert_eq!(r.names(), names, "{what}: names");
            for (name, field) in exp["fields"].as_object().unwrap() {
                let column = r
                    .field(name)
                    .unwrap_or_else(|e| panic!("{what}.{name}: {e}"));
                check(&column, field, &format!("{what}.{name}"));
            }
        }
        other => panic!("{what}: unknown kind {other}"),
    }
}

#[test]
fn every_element_fixture_loads_through_any_array() {
    for (path, meta) in fixtures("npy/elements") {
        let what = path.display().to_string();
        let options = options(&meta);
        let any =
            AnyArray::read_npy_with(&path, &options).unwrap_or_else(|e| panic!("{what}: {e}"));
        check(&any, &meta["expect"], &what);
        let bytes = fs::read(&path).unwrap();
        assert_eq!(
            AnyArray::from_npy_bytes_with(&bytes, &options).unwrap(),
            any,
            "{what}"
        );
        assert_eq!(
            AnyArray::read_npy_from_with(&bytes[..], &options).unwrap(),
            any,
            "{what}"
        );
        // Strings take the width of their data, as np.array(list) would.
        let string = matches!(any, AnyArray::Str(_) | AnyArray::Bytes(_));
        assert_eq!(
            any.dtype().itemsize().filter(|_| !string),
            {
                let h = ndnpy::dtype::Header::read_from_with(&bytes[..], &options).unwrap();
                h.dtype.itemsize().filter(|_| !string)
            },
            "{what}"
        );
    }
}

/// Reads the fixture as `ArrayD<T>`, checks it against the `AnyArray`
/// reading of the same file, and, when NumPy would rewrite the file
/// byte for byte, checks that we do too.
fn typed<T: Element + PartialEq + std::fmt::Debug>(path: &Path, meta: &Value) -> ArrayD<T> {
    let what = path.display().to_string();
    let a =
        ArrayD::<T>::read_npy_with(path, &options(meta)).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(a.shape(), &shape(&meta["shape"])[..], "{what}");
    let bytes = fs::read(path).unwrap();
    // We write native order, so only native files come back byte for byte.
    let ours = T::dtype_of(a.iter()).descr();
    if meta["np_save_identical"].as_bool().unwrap() && ours == meta["descr"].as_str().unwrap() {
        assert_eq!(
            hex(&a.to_npy_bytes().unwrap()),
            hex(&bytes),
            "{what}: we write what np.save wrote"
        );
    }
    let back =
        ArrayD::<T>::from_npy_bytes_with(&a.to_npy_bytes().unwrap(), &options(meta)).unwrap();
    assert_eq!(back, a, "{what}: round trip");
    a
}

fn record_columns<T: ndnpy::types::LayoutElement>(a: &ArrayD<T>, meta: &Value, what: &str) {
    let records = ndnpy::types::RecordArray::from_array(a);
    for (name, field) in meta["expect"]["fields"].as_object().unwrap() {
        if let Ok(column) = records.field(name) {
            check(&column, field, &format!("{what} (typed).{name}"));
        }
    }
}

#[test]
fn typed_reads_match_numpy() {
    for (path, meta) in fixtures("npy/elements") {
        let Some(rust) = meta["rust"].as_str() else {
            continue;
        };
        let what = path.display().to_string();
        let exp = &meta["expect"];
        match rust {
            "String" => check(&AnyArray::Str(typed::<String>(&path, &meta)), exp, &what),
            "Vec<u8>" => check(&AnyArray::Bytes(typed::<Vec<u8>>(&path, &meta)), exp, &what),
            "Simple" => {
                let a = typed::<Simple>(&path, &meta);
                record_columns(&a, &meta, &what);
            }
            "Nested" => record_columns(&typed::<Nested>(&path, &meta), &meta, &what),
            "Sub" => record_columns(&typed::<Sub>(&path, &meta), &meta, &what),
            "SubRec" => record_columns(&typed::<SubRec>(&path, &meta), &meta, &what),
            t if t.starts_with("Datetime64<") || t.starts_with("Timedelta64<") => {
                macro_rules! unit_case {
                    ($($u:ident => $s:literal),*) => {{
                        let unit = t.split(['<', '>']).nth(1).unwrap();
                        let dt = t.starts_with("Datetime64");
                        $(if unit == $s {
                            let any = if dt {
                                ndnpy::Element::into_any(typed::<Datetime64<unit::$u>>(&path, &meta))
                            } else {
                                ndnpy::Element::into_any(typed::<Timedelta64<unit::$u>>(&path, &meta))
                            };
                            check(&any, exp, &what);
                            continue;
                        })*
                        panic!("{what}: unit {unit}");
                    }};
                }
                unit_case!(Y => "Y", M => "M", W => "W", D => "D", h => "h", m => "m", s => "s",
                    ms => "ms", us => "us", ns => "ns", ps => "ps", fs => "fs", as_ => "as");
            }
            other => panic!("{what}: no typed case for {other}"),
        }
    }
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/npy/elements")
        .join(format!("{name}.npy"))
}

#[test]
fn records_write_what_np_save_writes_for_both_layouts() {
    // `Simple` is #[repr(C)]: NumPy's align=True layout.
    let aligned = fs::read(fixture("struct_simple_aligned")).unwrap();
    let a = ndarray::Array1::<Simple>::from_npy_bytes(&aligned).unwrap();
    assert_eq!(a.to_npy_bytes().unwrap(), aligned);
    // The packed twin writes NumPy's default layout.
    let packed = fs::read(fixture("struct_simple")).unwrap();
    let p = ndarray::Array1::<SimplePacked>::from_npy_bytes(&packed).unwrap();
    assert_eq!(p.to_npy_bytes().unwrap(), packed);
    let x: Vec<f64> = p.iter().map(|r| r.x).collect();
    assert_eq!(x[..2], [1.5, -1.0]);
}

#[test]
fn record_views_need_the_exact_layout() {
    let aligned = fs::read(fixture("struct_simple_aligned")).unwrap();
    let view = ArrayView1::<Simple>::view_npy(&aligned).unwrap();
    let copy = ndarray::Array1::<Simple>::from_npy_bytes(&aligned).unwrap();
    assert_eq!(view, copy);
    // A packed file cannot be viewed as the aligned struct: read by copy,
    // or declare the struct packed.
    let packed = fs::read(fixture("struct_simple")).unwrap();
    let err = ArrayView1::<Simple>::view_npy(&packed).unwrap_err();
    assert!(
        matches!(
            err,
            Error::View(ndnpy::error::ViewError::LayoutMismatch { .. })
        ),
        "{err}"
    );
    assert!(err.to_string().contains("packed"), "{err}");
    let be = fs::read(fixture("struct_simple_be")).unwrap();
    let err = ArrayView1::<SimplePacked>::view_npy(&be).unwrap_err();
    assert!(
        matches!(
            err,
            Error::View(ndnpy::error::ViewError::NonNativeByteOrder { .. })
        ),
        "{err}"
    );
    // A bool byte of 7 reads as true but cannot be viewed.
    let seven = fs::read(fixture("struct_bool_byte_7")).unwrap();
    let err = ArrayView1::<SimplePacked>::view_npy(&seven).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Data(ndnpy::error::DataError::InvalidBool { index: 1, value: 7 })
        ),
        "{err}"
    );
    let read = ndarray::Array1::<SimplePacked>::from_npy_bytes(&seven).unwrap();
    assert!({ read[1].flag });
}

#[test]
fn typed_mismatches_name_what_fits() {
    let bytes = fs::read(fixture("bytes_S5")).unwrap();
    let err = ArrayD::<String>::from_npy_bytes(&bytes).unwrap_err();
    assert!(matches!(err, Error::DTypeMismatch { .. }), "{err}");
    assert!(err.to_string().contains("Vec<u8>"), "{err}");
    let text = fs::read(fixture("unicode_U7")).unwrap();
    let err = ArrayD::<Vec<u8>>::from_npy_bytes(&text).unwrap_err();
    assert!(err.to_string().contains("String"), "{err}");
    let ms10 = fs::read(fixture("datetime_M8_10ms")).unwrap();
    let err = ArrayD::<Datetime64<unit::ms>>::from_npy_bytes(&ms10).unwrap_err();
    assert!(matches!(err, Error::DTypeMismatch { .. }), "{err}");
    let ns = fs::read(fixture("datetime_M8_ns")).unwrap();
    let err = ArrayD::<Datetime64<unit::us>>::from_npy_bytes(&ns).unwrap_err();
    assert!(matches!(err, Error::DTypeMismatch { .. }), "{err}");
    let err = ArrayD::<Timedelta64<unit::ns>>::from_npy_bytes(&ns).unwrap_err();
    assert!(matches!(err, Error::DTypeMismatch { .. }), "{err}");
    let simple = fs::read(fixture("struct_simple")).unwrap();
    let err = ArrayD::<NeedsZ>::from_npy_bytes(&simple).unwrap_err();
    assert!(matches!(err, Error::DTypeMismatch { .. }), "{err}");
    assert!(err.to_string().contains("`z`"), "{err}");
    let nested = fs::read(fixture("struct_nested")).unwrap();
    ndnpy::record! {
        #[derive(Debug, Clone, Copy)]
        struct BadPos { x: f64 }
    }
    ndnpy::record! {
        #[derive(Debug, Clone, Copy)]
        struct WrongNested { pos: BadPos }
    }
    let err = ArrayD::<WrongNested>::from_npy_bytes(&nested).unwrap_err();
    assert!(err.to_string().contains("pos.x"), "{err}");
}

#[test]
fn fixed_width_strings_are_layout_elements() {
    let bytes = fs::read(fixture("bytes_S5")).unwrap();
    let view = ArrayView1::<FixedBytes<5>>::view_npy(&bytes).unwrap();
    assert_eq!(view[1].as_bytes(), b"hello");
    assert_eq!(view[0].to_vec(), b"ab");
    let text = fs::read(fixture("unicode_U7")).unwrap();
    let view = ArrayView1::<FixedUnicode<7>>::view_npy(&text).unwrap();
    assert_eq!(view[2].to_string().unwrap(), "数字");
    let be = fs::read(fixture("unicode_U7_be")).unwrap();
    let copy = ndarray::Array1::<FixedUnicode<7>>::from_npy_bytes(&be).unwrap();
    assert_eq!(copy[2].to_string().unwrap(), "é");
    assert_eq!(copy.to_npy_bytes().unwrap()[..10], text[..10]);
}

#[test]
fn invalid_data_gives_its_error() {
    for (path, meta) in fixtures("npy/invalid_data") {
        let err = AnyArray::read_npy(&path).unwrap_err();
        assert_eq!(
            format!("{err:?}").split(' ').next().unwrap(),
            meta["error"].as_str().unwrap(),
            "{}: {err}",
            path.display()
        );
        let err = ArrayD::<String>::read_npy(&path).unwrap_err();
        assert!(
            matches!(
                err,
                Error::Data(ndnpy::error::DataError::InvalidUnicode { .. })
            ),
            "{err}"
        );
    }
    let surrogate = fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/npy/invalid_data/unicode_surrogate.npy"),
    )
    .unwrap();
    let err = ArrayD::<String>::from_npy_bytes(&surrogate).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Data(ndnpy::error::DataError::InvalidUnicode {
                index: 1,
                value: 0xD800
            })
        ),
        "{err}"
    );
}

#[test]
fn strings_write_like_np_save() {
    let a = ndarray::arr1(&[
        "abc".to_owned(),
        "héllo".to_owned(),
        "数字".to_owned(),
        String::new(),
    ]);
    let ours = a.to_npy_bytes().unwrap();
    let h = ndnpy::dtype::Header::read_from(&ours[..]).unwrap();
    assert_eq!(h.dtype.to_string(), "<U5");
    let empty: ndarray::Array1<String> = ndarray::arr1(&[String::new()]);
    let h = ndnpy::dtype::Header::read_from(&empty.to_npy_bytes().unwrap()[..]).unwrap();
    assert_eq!(h.dtype.to_string(), "<U1");
    let bytes = ndarray::arr1(&[b"ab".to_vec(), b"hello".to_vec(), Vec::new()]);
    assert_eq!(
        bytes.to_npy_bytes().unwrap(),
        fs::read(fixture("bytes_S5")).unwrap()
    );
}

#[test]
fn cast_converts_numeric_variants() {
    let any = AnyArray::I64(ndarray::arr1(&[1i64, -1, 300]).into_dyn());
    assert_eq!(
        any.cast::<u8>().unwrap(),
        ndarray::arr1(&[1u8, 255, 44]).into_dyn()
    );
    let f = AnyArray::F64(ndarray::arr1(&[1.9, -1.9, f64::NAN, 1e300]).into_dyn());
    assert_eq!(
        f.cast::<i32>().unwrap(),
        ndarray::arr1(&[1, -1, 0, i32::MAX]).into_dyn()
    );
    let b = AnyArray::Bool(ndarray::arr1(&[true, false]).into_dyn());
    assert_eq!(
        b.cast::<f32>().unwrap(),
        ndarray::arr1(&[1.0f32, 0.0]).into_dyn()
    );
    let s = AnyArray::Str(ArrayD::from_elem(IxDyn(&[1]), "x".to_owned()));
    assert!(matches!(s.cast::<f64>(), Err(Error::DTypeMismatch { .. })));
}

#[test]
fn npz_views_of_unaligned_members_name_the_member_and_the_fallback() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/npz/valid/many_members.npz");
    let meta: Value =
        serde_json::from_str(&fs::read_to_string(path.with_extension("json")).unwrap()).unwrap();
    // SAFETY: nothing else writes or truncates this file while it is mapped.
    let map = unsafe { ndnpy::NpzMmap::open(&path) }.unwrap();
    let mut misaligned = 0;
    for member in meta["members"].as_array().unwrap() {
        let name = member["name"].as_str().unwrap();
        let want: Vec<i16> = member["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_i64().unwrap() as i16)
            .collect();
        let cow = map.view_or_copy::<i16, IxDyn>(name).unwrap();
        assert_eq!(cow.iter().copied().collect::<Vec<_>>(), want, "{name}");
        match map.view::<i16, IxDyn>(name) {
            Ok(view) => {
                assert!(cow.is_view());
                assert_eq!(view, cow.view());
            }
            Err(err) => {
                misaligned += 1;
                assert!(!cow.is_view());
                assert!(
                    matches!(&err, Error::View(ndnpy::error::ViewError::MisalignedMember { name: n, .. }) if n == name),
                    "{err}"
                );
                assert!(err.to_string().contains("view_or_copy"), "{err}");
            }
        }
    }
    assert!(misaligned > 0, "np.savez leaves some members unaligned");
}

#[test]
fn mmap_view_or_copy_copies_big_endian_data() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("be.npy");
    fs::copy(fixture("datetime_M8ns_be"), &path).unwrap();
    // SAFETY: nothing else writes or truncates this file while it is mapped.
    let map = unsafe { ndnpy::NpyMmap::open(&path) }.unwrap();
    assert!(map.view::<Datetime64<unit::ns>, IxDyn>().is_err());
    let cow = map.view_or_copy::<Datetime64<unit::ns>, IxDyn>().unwrap();
    assert!(!cow.is_view());
    assert_eq!(cow[[0]].get(), 1704164645123456789);
    assert!(cow[[1]].is_nat());
}

#[test]
fn a_huge_claimed_sub_array_of_records_is_cheap_or_refused() {
    // Big-endian records in a sub-array of 2^30 items, shape (0,): no data,
    // so the plan must not be compiled item by item.
    let text = "{'descr': [('a', [('x', '>f8'), ('y', '>i4')], (1073741824,))], 'fortran_order': False, 'shape': (0,), }";
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    let len = (10 + text.len() + 1).div_ceil(64) * 64 - 10;
    bytes.extend_from_slice(&(len as u16).to_le_bytes());
    bytes.extend_from_slice(text.as_bytes());
    bytes.resize(10 + len - 1, b' ');
    bytes.push(b'\n');
    // (Compiled item by item, this would build 2^31 moves: gigabytes.)
    let result = AnyArray::from_npy_bytes(&bytes);
    assert!(
        matches!(result, Err(Error::DTypeMismatch { .. }) | Ok(_)),
        "{result:?}"
    );
}

#[test]
fn archives_hold_every_new_variant() {
    let mut members = Vec::new();
    for name in [
        "struct_nested",
        "unicode_2d",
        "bytes_S5",
        "datetime_M8_10ms",
        "void_V8",
        "timedelta_m8_ns",
    ] {
        members.push((name, AnyArray::read_npy(fixture(name)).unwrap()));
    }
    for compressed in [false, true] {
        let mut npz = if compressed {
            ndnpy::NpzWriter::new(std::io::Cursor::new(Vec::new()))
                .codec(ndnpy::npz::Codec::deflate())
        } else {
            ndnpy::NpzWriter::new(std::io::Cursor::new(Vec::new()))
        };
        for (name, any) in &members {
            npz.add_any(name, any).unwrap();
        }
        let bytes = npz.finish_into_inner().unwrap().into_inner();
        let mut back = ndnpy::NpzReader::new(std::io::Cursor::new(bytes)).unwrap();
        for (name, any) in &members {
            assert_eq!(&back.read_any(name).unwrap(), any, "{name}");
        }
    }
}

#[test]
fn a_stream_claiming_a_huge_string_is_truncated_not_allocated() {
    let text = "{'descr': '|S2000000000', 'fortran_order': False, 'shape': (1,), }";
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    let len = (10 + text.len() + 1).div_ceil(64) * 64 - 10;
    bytes.extend_from_slice(&(len as u16).to_le_bytes());
    bytes.extend_from_slice(text.as_bytes());
    bytes.resize(10 + len - 1, b' ');
    bytes.push(b'\n');
    bytes.extend_from_slice(b"only a few bytes");
    let err = ArrayD::<Vec<u8>>::read_npy_from(&bytes[..]).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Data(ndnpy::error::DataError::TruncatedData { found: 16, .. })
        ),
        "{err}"
    );
    let err = AnyArray::read_npy_from(&bytes[..]).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Data(ndnpy::error::DataError::TruncatedData { .. })
        ),
        "{err}"
    );
}

/// Found by the `record_plan` fuzz target: an empty Fortran-order record
/// array (shape `(0, 3)`, which NumPy loads as an empty array) panicked
/// while its (absent) items were reordered into C order.
#[test]
fn empty_fortran_records_load_empty() {
    let bytes = std::fs::read("fuzz/regressions/record_plan-empty_fortran_records.npy").unwrap();
    match ndnpy::AnyArray::from_npy_bytes(&bytes).unwrap() {
        ndnpy::AnyArray::Record(r) => {
            assert_eq!(r.shape(), &[0, 3]);
            assert_eq!(r.names(), ["x", "y", "flag"]);
        }
        other => panic!("not records: {}", other.dtype()),
    }
}
