//! `.npz` archives: every fixture NumPy wrote reads to its recorded values,
//! every damaged one gives its recorded error (never a panic), our archives
//! round-trip, views of aligned archives point into the map, and NumPy
//! loads what we write.

use ndarray::{array, s, Array, Array0, Array1, Array2, Array3, ArrayD, Ix1, Ix2, IxDyn};
use ndnpy::{npz::Codec, AnyArray, Error, NpzMmap, NpzReader, NpzWriter, WriteNpy};
use serde_json::Value;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io::{Cursor, Write};
use std::path::{Path, PathBuf};

/// Records the largest single allocation request per thread, so a test can
/// show that a claimed size was never allocated (even a refused request
/// counts).
struct Counting;

thread_local! {
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

fn note(size: usize) {
    let _ = LARGEST.try_with(|l| l.set(l.get().max(size)));
}

// SAFETY: every method forwards to `System` unchanged; the counter is a
// const-initialised thread-local `Cell`, which never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: forwarded with the caller's layout.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded with the caller's pointer and layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: forwarded with the caller's layout.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        // SAFETY: forwarded with the caller's arguments.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The largest allocation `f` requested on this thread.
fn largest_allocation<R>(f: impl FnOnce() -> R) -> (R, usize) {
    LARGEST.with(|l| l.set(0));
    let r = f();
    (r, LARGEST.with(|l| l.get()))
}

fn fixtures(kind: &str) -> Vec<(PathBuf, Value)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/npz")
        .join(kind);
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "npz") {
            let sidecar = path.with_extension("json");
            let json = serde_json::from_str(&std::fs::read_to_string(&sidecar).unwrap()).unwrap();
            out.push((path, json));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(!out.is_empty(), "no fixtures in {}", dir.display());
    out
}

/// The name of an error's variant, as the sidecars spell it.
fn variant(err: &Error) -> String {
    let debug = format!("{err:?}");
    debug
        .split(|c: char| !c.is_alphanumeric())
        .next()
        .unwrap()
        .to_owned()
}

/// A JSON number, or "nan"/"inf"/"-inf".
fn float_of(v: &Value) -> f64 {
    match v {
        Value::String(s) => match s.as_str() {
            "nan" => f64::NAN,
            "inf" => f64::INFINITY,
            "-inf" => f64::NEG_INFINITY,
            other => panic!("unexpected float {other}"),
        },
        other => other.as_f64().unwrap(),
    }
}

/// Equal, or (for finite values) within 2 ulp: serde_json without its
/// `float_roundtrip` feature may parse a shortest-repr float 1 ulp off.
fn same_float(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan())
        || a == b
        || (a - b).abs() <= 2.0 * f64::EPSILON * a.abs().max(b.abs())
}

/// Checks `any` against a member entry of a valid sidecar.
fn check_values(context: &str, any: &AnyArray, member: &Value) {
    let shape: Vec<usize> = member["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap() as usize)
        .collect();
    assert_eq!(any.shape(), &shape[..], "{context}: shape");
    let values = member["values"].as_array().unwrap();
    let element = member["element"].as_str().unwrap();
    macro_rules! ints {
        ($a:expr) => {{
            let got: Vec<i128> = $a.iter().map(|&x| x as i128).collect();
            let want: Vec<i128> = values
                .iter()
                .map(|v| {
                    v.as_i64()
                        .map(i128::from)
                        .unwrap_or_else(|| v.as_u64().unwrap() as i128)
                })
                .collect();
            assert_eq!(got, want, "{context}: values");
        }};
    }
    macro_rules! floats {
        ($a:expr) => {{
            let got: Vec<f64> = $a.iter().map(|&x| x as f64).collect();
            assert_eq!(got.len(), values.len(), "{context}: length");
            for (g, w) in got.iter().zip(values) {
                assert!(same_float(*g, float_of(w)), "{context}: {g} != {w}");
            }
        }};
    }
    match (element, any) {
        ("bool", AnyArray::Bool(a)) => {
            let got: Vec<bool> = a.iter().copied().collect();
            let want: Vec<bool> = values.iter().map(|v| v.as_bool().unwrap()).collect();
            assert_eq!(got, want, "{context}: values");
        }
        ("i8", AnyArray::I8(a)) => ints!(a),
        ("i16", AnyArray::I16(a)) => ints!(a),
        ("i32", AnyArray::I32(a)) => ints!(a),
        ("i64", AnyArray::I64(a)) => ints!(a),
        ("u8", AnyArray::U8(a)) => ints!(a),
        ("u16", AnyArray::U16(a)) => ints!(a),
        ("u32", AnyArray::U32(a)) => ints!(a),
        ("u64", AnyArray::U64(a)) => ints!(a),
        ("f32", AnyArray::F32(a)) => floats!(a),
        ("f64", AnyArray::F64(a)) => floats!(a),
        #[cfg(feature = "complex")]
        ("c8", AnyArray::C64(a)) | ("complex64", AnyArray::C64(a)) => {
            for (g, w) in a.iter().zip(values) {
                assert!(same_float(g.re as f64, float_of(&w[0])), "{context}");
                assert!(same_float(g.im as f64, float_of(&w[1])), "{context}");
            }
        }
        #[cfg(feature = "complex")]
        ("c16", AnyArray::C128(a)) | ("complex128", AnyArray::C128(a)) => {
            for (g, w) in a.iter().zip(values) {
                assert!(same_float(g.re, float_of(&w[0])), "{context}");
                assert!(same_float(g.im, float_of(&w[1])), "{context}");
            }
        }
        (element, any) => panic!("{context}: expected {element}, read {:?}", any.dtype()),
    }
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn valid_fixtures_read_to_recorded_values() {
    for (path, json) in fixtures("valid") {
        let context = path.file_name().unwrap().to_string_lossy().into_owned();
        let mut npz = NpzReader::open(&path).unwrap_or_else(|e| panic!("{context}: {e}"));
        let members = json["members"].as_array().unwrap();
        let names: Vec<&str> = members
            .iter()
            .map(|m| m["name"].as_str().unwrap())
            .collect();
        let zip_names: Vec<&str> = members
            .iter()
            .map(|m| m["zip_name"].as_str().unwrap())
            .collect();
        assert_eq!(npz.names(), names, "{context}: names");
        assert_eq!(npz.member_names(), zip_names, "{context}: member names");
        assert_eq!(npz.len(), members.len());
        assert_eq!(npz.is_empty(), members.is_empty());
        if let Some(comment) = json["comment"].as_str() {
            assert_eq!(npz.comment(), comment.as_bytes(), "{context}: comment");
        }
        for member in members {
            let name = member["name"].as_str().unwrap();
            let zip_name = member["zip_name"].as_str().unwrap();
            let context = format!("{context}/{name}");
            match member["kind"].as_str().unwrap() {
                "array" => {
                    let any = npz
                        .read_any(name)
                        .unwrap_or_else(|e| panic!("{context}: {e}"));
                    check_values(&context, &any, member);
                    let again = npz.read_any(zip_name).unwrap();
                    assert_eq!(any, again, "{context}: by member name");
                    let header = npz.header(name).unwrap();
                    assert_eq!(header.shape, any.shape(), "{context}: header");
                    assert_eq!(
                        header.fortran_order,
                        member["fortran_order"].as_bool().unwrap(),
                        "{context}: fortran_order"
                    );
                    assert_eq!(
                        format!("'{}'", header.dtype),
                        member["descr"].as_str().unwrap(),
                        "{context}: descr"
                    );
                }
                "raw" => {
                    let want = hex(member["bytes_hex"].as_str().unwrap());
                    assert_eq!(npz.raw(name).unwrap(), want, "{context}: raw bytes");
                    let err = npz.read_any(name).unwrap_err();
                    assert!(
                        matches!(&err, Error::Archive(ndnpy::error::ArchiveError::NotNpy { name: n, .. }) if n == name),
                        "{context}: {err:?}"
                    );
                    assert!(err.to_string().contains(name), "{context}: {err}");
                }
                other => panic!("{context}: unknown kind {other}"),
            }
        }
        // The iterator agrees with the one-by-one reads.
        let listed: Vec<String> = npz.arrays().map(|(name, _)| name).collect();
        assert_eq!(listed, names, "{context}: arrays()");

        // The map sees the same members; stored ones can be viewed or give
        // a clean error (NumPy's member data lie at arbitrary offsets).
        // SAFETY: nothing else writes or truncates this file while it is mapped.
        let map = unsafe { NpzMmap::open(&path) }.unwrap();
        assert_eq!(map.names(), names, "{context}: map names");
        for member in members {
            let name = member["name"].as_str().unwrap();
            let stored = map.is_stored(name).unwrap();
            assert_eq!(
                stored,
                !json["compressed"].as_bool().unwrap(),
                "{context}/{name}"
            );
            if member["kind"] == "array" && stored {
                map.header(name).unwrap();
            }
        }
    }
}

#[test]
fn invalid_fixtures_give_their_errors() {
    for (path, json) in fixtures("invalid") {
        let context = path.file_name().unwrap().to_string_lossy().into_owned();
        let expected = json["error"].as_str().unwrap();
        // NumPy dispatches on the magic: a member without it is raw bytes,
        // so reading it as an array is `NotNpy` here.
        let accepted: &[&str] = match expected {
            "BadMagic" => &["NotNpy"],
            other => &[other],
        };
        let err = match NpzReader::open(&path) {
            Err(e) => e,
            Ok(mut npz) => {
                let member = json["member"]
                    .as_str()
                    .unwrap_or_else(|| panic!("{context}: opened, and no member to read"));
                // Every way in fails the same way, without panicking.
                let _ = npz.arrays().count();
                let _ = npz.raw(member);
                let _ = npz.header(member);
                npz.read_any(member)
                    .map(|a| panic!("{context}: read {a:?}"))
                    .unwrap_err()
            }
        };
        eprintln!("{context}: {err}");
        assert!(
            accepted.contains(&variant(&err).as_str()),
            "{context}: expected {expected}, got {err:?}"
        );
        // The message is for people: it names the member when there is one.
        if let Some(member) = json["member"].as_str() {
            if !matches!(
                err,
                Error::Header(ndnpy::error::HeaderError::MalformedHeader { .. })
                    | Error::Data(ndnpy::error::DataError::TruncatedData { .. })
            ) {
                assert!(err.to_string().contains(member), "{context}: {err}");
            }
        }
        // The map refuses or views cleanly, never panics.
        // SAFETY: nothing else writes or truncates this file while it is mapped.
        if let Ok(map) = unsafe { NpzMmap::open(&path) } {
            for name in map.names() {
                let _ = map.view::<f64, IxDyn>(&name);
                let _ = map.view::<i64, IxDyn>(&name);
            }
        }
    }
}

fn reader_of(bytes: Vec<u8>) -> NpzReader<Cursor<Vec<u8>>> {
    NpzReader::new(Cursor::new(bytes)).unwrap()
}

/// A set of arrays of several types and layouts.
fn sample_arrays(w: &mut NpzWriter<impl Write + std::io::Seek>) {
    let f = Array2::from_shape_fn((7, 5), |(i, j)| (i * 10 + j) as f64 - 0.5);
    w.add("c_order", &f).unwrap();
    w.add("fortran", &f.t()).unwrap();
    w.add("strided", &f.slice(s![..;2, 1..;2])).unwrap();
    w.add("zero_d", &Array0::from_elem((), 42i32)).unwrap();
    w.add("empty", &Array3::<f32>::zeros((2, 0, 3))).unwrap();
    w.add("bools", &array![true, false, true]).unwrap();
    w.add("bytes", &Array1::from_iter(0u8..=255)).unwrap();
    w.add("dir/with.dots", &array![-1i16, 2, -3]).unwrap();
    w.add("a.npy", &array![1u64]).unwrap();
    #[cfg(feature = "complex")]
    w.add(
        "complex",
        &array![
            num_complex::Complex::new(1.0f64, -2.0),
            num_complex::Complex::new(0.5, 0.25)
        ],
    )
    .unwrap();
}

fn check_sample(npz: &mut NpzReader<impl std::io::Read + std::io::Seek>) {
    let f = Array2::from_shape_fn((7, 5), |(i, j)| (i * 10 + j) as f64 - 0.5);
    assert_eq!(npz.read::<f64, Ix2>("c_order").unwrap(), f);
    let fortran = npz.read::<f64, Ix2>("fortran").unwrap();
    assert_eq!(fortran, f.t());
    assert!(
        fortran.t().is_standard_layout(),
        "Fortran member became F layout"
    );
    assert!(npz.header("fortran").unwrap().fortran_order);
    assert_eq!(
        npz.read::<f64, Ix2>("strided.npy").unwrap(),
        f.slice(s![..;2, 1..;2])
    );
    assert_eq!(npz.read::<i32, ndarray::Ix0>("zero_d").unwrap()[()], 42);
    assert_eq!(npz.read::<f32, IxDyn>("empty").unwrap().shape(), &[2, 0, 3]);
    assert_eq!(
        npz.read::<bool, Ix1>("bools").unwrap(),
        array![true, false, true]
    );
    assert_eq!(
        npz.read::<u8, Ix1>("bytes").unwrap(),
        Array1::from_iter(0u8..=255)
    );
    assert_eq!(
        npz.read::<i16, Ix1>("dir/with.dots").unwrap(),
        array![-1, 2, -3]
    );
    assert_eq!(npz.read::<u64, Ix1>("a.npy").unwrap(), array![1]);
    assert_eq!(npz.member_names()[8], "a.npy.npy");
    // Each member is byte-for-byte what `.npy` writing gives.
    assert_eq!(npz.raw("c_order").unwrap(), f.to_npy_bytes().unwrap());
    assert_eq!(npz.raw("fortran").unwrap(), f.t().to_npy_bytes().unwrap());
    // Wrong type and dimension requests name what was expected.
    assert!(matches!(
        npz.read::<f32, Ix2>("c_order"),
        Err(Error::DTypeMismatch { .. })
    ));
    assert!(matches!(
        npz.read::<f64, Ix1>("c_order"),
        Err(Error::NdimMismatch { .. })
    ));
    assert!(matches!(
        npz.read::<f64, Ix1>("missing"),
        Err(Error::MemberNotFound { name }) if name == "missing"
    ));
}

#[test]
fn round_trip_stored_compressed_aligned_unaligned() {
    type Make = fn(Cursor<Vec<u8>>) -> NpzWriter<Cursor<Vec<u8>>>;
    let makers: [(&str, Make); 4] = [
        ("stored", NpzWriter::new),
        ("unaligned", |c| NpzWriter::new(c).aligned(false)),
        ("compressed", |c| NpzWriter::new(c).codec(Codec::deflate())),
        ("level 1", |c| {
            NpzWriter::new(c).codec(Codec::Deflate { level: 1 })
        }),
    ];
    for (what, make) in makers {
        let mut w = make(Cursor::new(Vec::new()));
        sample_arrays(&mut w);
        let bytes = w.finish_into_inner().unwrap().into_inner();
        let mut npz = reader_of(bytes);
        assert_eq!(npz.names()[0], "c_order", "{what}");
        check_sample(&mut npz);
        let all: Vec<_> = npz.arrays().collect();
        assert!(all.iter().all(|(_, r)| r.is_ok()), "{what}");
    }
}

#[test]
fn path_round_trip_and_views_point_into_the_map() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("aligned.npz");
    let mut w = NpzWriter::create(&path).unwrap();
    sample_arrays(&mut w);
    w.finish().unwrap();
    check_sample(&mut NpzReader::open(&path).unwrap());

    // SAFETY: nothing else writes or truncates this file while it is mapped.
    let map = unsafe { NpzMmap::open(&path) }.unwrap();
    let range = map.as_bytes().as_ptr_range();
    let f = Array2::from_shape_fn((7, 5), |(i, j)| (i * 10 + j) as f64 - 0.5);
    let c = map.view::<f64, Ix2>("c_order").unwrap();
    let fo = map.view::<f64, Ix2>("fortran").unwrap();
    let b = map.view::<u8, Ix1>("bytes").unwrap();
    let z = map.view::<i32, ndarray::Ix0>("zero_d").unwrap();
    assert_eq!(c, f);
    assert_eq!(fo, f.t());
    assert_eq!(z[()], 42);
    for ptr in [
        c.as_ptr().cast::<u8>(),
        fo.as_ptr().cast(),
        b.as_ptr(),
        z.as_ptr().cast(),
    ] {
        assert!(range.contains(&ptr), "view does not point into the map");
        assert_eq!(
            (ptr as usize - range.start as usize) % 64,
            0,
            "data not 64-aligned"
        );
    }
    let stride_view = map.view::<f64, Ix2>("strided").unwrap();
    assert_eq!(stride_view, f.slice(s![..;2, 1..;2]));
    // Compressed members point to `read`.
    let cpath = dir.path().join("compressed.npz");
    let mut w = NpzWriter::create(&cpath)
        .unwrap()
        .codec(ndnpy::npz::Codec::deflate());
    w.add("x", &f).unwrap();
    w.finish().unwrap();
    // SAFETY: nothing else writes or truncates this file while it is mapped.
    let cmap = unsafe { NpzMmap::open(&cpath) }.unwrap();
    let err = cmap.view::<f64, Ix2>("x").unwrap_err();
    assert!(
        matches!(&err, Error::View(ndnpy::error::ViewError::CompressedMember { name }) if name == "x")
    );
    assert!(err.to_string().contains("read"), "{err}");
    assert_eq!(cmap.reader().unwrap().read::<f64, Ix2>("x").unwrap(), f);

    numpy_loads_unchanged(&path, &map);
}

/// `np.load` reads every member of the archive at `path` to the values the
/// views show.
fn numpy_loads_unchanged(path: &Path, map: &NpzMmap) {
    let script = r#"
import json, sys
import numpy as np
out = {}
with np.load(sys.argv[1]) as z:
    for k in z.files:
        a = z[k]
        flat = a.ravel(order="C")
        if a.dtype.kind == "c":
            vals = [[float(v.real), float(v.imag)] for v in flat]
        elif a.dtype.kind == "b":
            vals = [bool(v) for v in flat]
        elif a.dtype.kind == "f":
            vals = [float(v) for v in flat]
        else:
            vals = [int(v) for v in flat]
        out[k] = {"descr": a.dtype.str, "shape": list(a.shape),
                  "fortran": bool(a.flags.f_contiguous and not a.flags.c_contiguous),
                  "values": vals}
print(json.dumps(out))
"#;
    let output = std::process::Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(path)
        .output();
    let output = match output {
        Ok(o) if o.status.success() => o,
        other => {
            let why = match other {
                Ok(o) => String::from_utf8_lossy(&o.stderr).into_owned(),
                Err(e) => e.to_string(),
            };
            if std::env::var_os("CI").is_some() {
                panic!("python3 with numpy is required in CI: {why}");
            }
            eprintln!("skipping the np.load check (python3 with numpy unavailable): {why}");
            return;
        }
    };
    let loaded: Value = serde_json::from_slice(&output.stdout).unwrap();
    let loaded = loaded.as_object().unwrap();
    let mut npz = NpzReader::open(path).unwrap();
    assert_eq!(
        loaded.keys().collect::<std::collections::BTreeSet<_>>(),
        npz.names().iter().collect(),
        "np.load sees other keys"
    );
    for name in npz.names() {
        let got = &loaded[&name];
        let header = map.header(&name).unwrap();
        assert_eq!(
            got["descr"].as_str().unwrap(),
            header.dtype.to_string(),
            "{name}"
        );
        let any = npz.read_any(&name).unwrap();
        let element = match &any {
            AnyArray::Bool(_) => "bool",
            AnyArray::I16(_) => "i16",
            AnyArray::I32(_) => "i32",
            AnyArray::I64(_) => "i64",
            AnyArray::U8(_) => "u8",
            AnyArray::U64(_) => "u64",
            AnyArray::F32(_) => "f32",
            AnyArray::F64(_) => "f64",
            #[cfg(feature = "complex")]
            AnyArray::C128(_) => "c16",
            other => panic!("unexpected {:?}", other.dtype()),
        };
        let mut entry = got.clone();
        entry["element"] = Value::from(element);
        check_values(&format!("np.load {name}"), &any, &entry);
        assert_eq!(
            got["fortran"].as_bool().unwrap(),
            header.fortran_order && any.shape().iter().filter(|&&d| d > 1).count() > 1,
            "{name}"
        );
    }
}

#[test]
fn duplicate_names_and_failed_adds_poison_finish() {
    let mut w = NpzWriter::new(Cursor::new(Vec::new()));
    w.add("x", &array![1.0]).unwrap();
    let err = w.add("x", &array![2.0]).unwrap_err();
    assert!(
        matches!(&err, Error::Write(ndnpy::error::WriteError::DuplicateMember { name }) if name == "x")
    );
    let err = w.add("y", &array![3.0]).unwrap_err();
    assert!(
        matches!(&err, Error::Write(ndnpy::error::WriteError::IncompleteArchive { name }) if name == "x")
    );
    let err = w.finish().unwrap_err();
    assert!(
        matches!(
            err,
            Error::Write(ndnpy::error::WriteError::IncompleteArchive { .. })
        ),
        "{err:?}"
    );
}

#[test]
fn path_target_is_untouched_unless_finished() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("target.npz");
    std::fs::write(&path, b"old contents").unwrap();

    // Dropped unfinished.
    let mut w = NpzWriter::create(&path).unwrap();
    w.add("x", &Array1::<f64>::zeros(1000)).unwrap();
    drop(w);
    assert_eq!(std::fs::read(&path).unwrap(), b"old contents");

    // Failed add, then finish.
    let mut w = NpzWriter::create(&path)
        .unwrap()
        .codec(ndnpy::npz::Codec::deflate());
    w.add("x", &array![1u8]).unwrap();
    assert!(w.add("x", &array![2u8]).is_err());
    assert!(w.finish().is_err());
    assert_eq!(std::fs::read(&path).unwrap(), b"old contents");

    // No temporary files are left behind.
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers, [std::ffi::OsString::from("target.npz")]);

    // Finished: replaced.
    let mut w = NpzWriter::create(&path).unwrap();
    w.add("x", &array![7i64]).unwrap();
    w.finish().unwrap();
    let mut npz = NpzReader::open(&path).unwrap();
    assert_eq!(npz.read::<i64, Ix1>("x").unwrap(), array![7]);
}

/// The drop rule (crate docs, "Writers"; tests/drop_rule.rs): a writer
/// to the caller's stream, dropped unfinished, finishes the archive.
#[test]
fn dropped_writer_finishes_the_archive_in_a_stream() {
    let mut buffer = Vec::new();
    {
        let mut w = NpzWriter::new(Cursor::new(&mut buffer));
        w.add("x", &array![1u8, 2, 3]).unwrap();
    }
    let mut npz = NpzReader::new(Cursor::new(buffer)).unwrap();
    assert_eq!(npz.read::<u8, Ix1>("x").unwrap(), array![1, 2, 3]);
}

/// Deflates `data` as a single member `name` of a fresh archive.
fn archive_with_member(name: &str, data: &[u8], compressed: bool) -> Vec<u8> {
    let method = if compressed {
        zip::CompressionMethod::Deflated
    } else {
        zip::CompressionMethod::Stored
    };
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    zip.start_file(
        name,
        zip::write::SimpleFileOptions::default().compression_method(method),
    )
    .unwrap();
    zip.write_all(data).unwrap();
    zip.finish().unwrap().into_inner()
}

#[test]
fn zip_bomb_reads_only_what_the_header_declares() {
    // A header declaring 10 f64 values, followed by 16 MiB of zeros that
    // deflate to almost nothing.
    let mut member = array![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0]
        .to_npy_bytes()
        .unwrap();
    member.resize(member.len() + (16 << 20), 0);
    let bytes = archive_with_member("x.npy", &member, true);
    assert!(bytes.len() < 200_000);
    let mut npz = reader_of(bytes);
    let x = npz.read::<f64, Ix1>("x").unwrap();
    assert_eq!(x.len(), 10);

    // A header claiming 2^31 f64 values (16 GiB) over 1 KiB of data: the
    // error comes before any allocation of the claimed size.
    let header = ndnpy::dtype::Header {
        dtype: ndnpy::dtype::DType::parse("<f8").unwrap(),
        shape: vec![1 << 31],
        fortran_order: false,
        version: ndnpy::dtype::Version::V1,
    };
    let mut member = header.to_bytes().unwrap();
    member.resize(member.len() + 1024, 0);
    let mut npz = reader_of(archive_with_member("big.npy", &member, true));
    let err = npz.read::<f64, Ix1>("big").unwrap_err();
    assert!(
        matches!(
            err,
            Error::Data(ndnpy::error::DataError::TruncatedData { .. })
        ),
        "{err:?}"
    );
    let err = npz.read_any("big").unwrap_err();
    assert!(
        matches!(
            err,
            Error::Data(ndnpy::error::DataError::TruncatedData { .. })
        ),
        "{err:?}"
    );
}

#[test]
fn lying_sizes_cost_only_the_bytes_that_decompress() {
    // The header claims 2^27 f64 values (1 GiB), the deflated data holds
    // 1 MiB, and both size fields of the archive claim 1 GiB too.
    let claimed = 1u64 << 27;
    let header = ndnpy::dtype::Header {
        dtype: ndnpy::dtype::DType::parse("<f8").unwrap(),
        shape: vec![claimed as usize],
        fortran_order: false,
        version: ndnpy::dtype::Version::V1,
    };
    let mut member = header.to_bytes().unwrap();
    member.resize(member.len() + (1 << 20), 1);
    let mut bytes = archive_with_member("x.npy", &member, true);
    let lie = (claimed * 8 + member.len() as u64 - (1 << 20)) as u32;
    // Local header: uncompressed size at offset 22.
    bytes[22..26].copy_from_slice(&lie.to_le_bytes());
    // Central directory entry: uncompressed size at offset 24.
    let central = bytes.windows(4).position(|w| w == b"PK\x01\x02").unwrap();
    bytes[central + 24..central + 28].copy_from_slice(&lie.to_le_bytes());

    let mut npz = reader_of(bytes);
    assert_eq!(npz.header("x").unwrap().shape, vec![claimed as usize]);
    let (result, largest) = largest_allocation(|| npz.read::<f64, Ix1>("x"));
    let err = result.unwrap_err();
    assert!(
        matches!(
            err,
            Error::Archive(ndnpy::error::ArchiveError::BadCrc { .. })
                | Error::Data(ndnpy::error::DataError::TruncatedData { .. })
        ),
        "{err:?}"
    );
    assert!(
        largest <= 64 << 20,
        "allocated {largest} bytes for 1 MiB of data"
    );
    let (result, largest) = largest_allocation(|| npz.raw("x"));
    let err = result.unwrap_err();
    assert!(
        matches!(&err, Error::Archive(ndnpy::error::ArchiveError::CorruptMember { name, .. }) if name == "x"),
        "{err:?}"
    );
    assert!(
        largest <= 64 << 20,
        "raw allocated {largest} bytes for 1 MiB of data"
    );
}

#[test]
fn streamed_archives_with_data_descriptors_read() {
    // `ZipWriter::new_stream` writes data descriptors, as a zip writer on a
    // pipe must.
    let mut zip = zip::ZipWriter::new_stream(Vec::new());
    for (name, compressed) in [("s.npy", false), ("d.npy", true)] {
        let method = if compressed {
            zip::CompressionMethod::Deflated
        } else {
            zip::CompressionMethod::Stored
        };
        zip.start_file(
            name,
            zip::write::SimpleFileOptions::default().compression_method(method),
        )
        .unwrap();
        zip.write_all(&array![[1i32, 2], [3, 4]].to_npy_bytes().unwrap())
            .unwrap();
    }
    let bytes = zip.finish().unwrap().into_inner();
    let mut npz = reader_of(bytes);
    assert_eq!(npz.names(), ["s", "d"]);
    assert_eq!(npz.read::<i32, Ix2>("s").unwrap(), array![[1, 2], [3, 4]]);
    assert_eq!(npz.read::<i32, Ix2>("d").unwrap(), array![[1, 2], [3, 4]]);
}

#[test]
fn crc_is_checked_on_read_and_raw() {
    let data = array![1u32, 2, 3, 4].to_npy_bytes().unwrap();
    let mut bytes = archive_with_member("x.npy", &data, false);
    // Flip the last data byte (the archive is: local header, member, central
    // directory; find the member by content).
    let at = bytes.windows(data.len()).position(|w| w == data).unwrap() + data.len() - 1;
    bytes[at] ^= 0xff;
    let mut npz = reader_of(bytes);
    for err in [
        npz.read::<u32, Ix1>("x").unwrap_err(),
        npz.raw("x").unwrap_err(),
        npz.read_any("x").unwrap_err(),
    ] {
        assert!(
            matches!(&err, Error::Archive(ndnpy::error::ArchiveError::BadCrc { name }) if name == "x"),
            "{err:?}"
        );
    }
    // The header alone is still readable.
    assert_eq!(npz.header("x").unwrap().shape, vec![4]);
}

#[test]
fn large_typed_round_trip_through_a_file() {
    // Big enough to cross the bounded read steps of compressed members
    // (16 MiB); the compressed one is constant so that debug-build deflate
    // stays quick.
    let dir = tempfile::tempdir().unwrap();
    let varied = ArrayD::from_shape_fn(IxDyn(&[3, 1 << 21]), |ix| (ix[0] * 7 + ix[1]) as f32);
    let constant = ArrayD::from_elem(IxDyn(&[5, 1 << 20]), 1.5f32);
    for (compressed, a) in [(false, &varied), (true, &constant)] {
        let path = dir.path().join(format!("big{compressed}.npz"));
        let mut w = NpzWriter::create(&path).unwrap().codec(if compressed {
            Codec::Deflate { level: 1 }
        } else {
            Codec::Stored
        });
        w.add("a", a).unwrap();
        w.finish().unwrap();
        let back: Array<f32, IxDyn> = NpzReader::open(&path).unwrap().read("a").unwrap();
        assert_eq!(&back, a);
    }
}

/// A stored member over 4 GiB needs zip64; written from a broadcast view
/// (no 4 GiB buffer) and checked through a view of the map. Slow and
/// disk-hungry, so run on request: `cargo test --release -- --ignored`.
#[test]
#[ignore]
fn zip64_member_over_4_gib() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.npz");
    let n: usize = (4 << 30) + 4096;
    let one = array![7u8];
    let big = one.broadcast(n).unwrap();
    let mut w = NpzWriter::create(&path).unwrap();
    w.add("small", &array![1u8, 2]).unwrap();
    w.add("big", &big).unwrap();
    w.add("after", &array![3u8]).unwrap();
    w.finish().unwrap();
    // SAFETY: nothing else writes or truncates this file while it is mapped.
    let map = unsafe { NpzMmap::open(&path) }.unwrap();
    let v = map.view::<u8, Ix1>("big").unwrap();
    assert_eq!(v.len(), n);
    assert_eq!((v[0], v[n - 1]), (7, 7));
    assert_eq!(map.view::<u8, Ix1>("after").unwrap(), array![3]);
    let mut npz = NpzReader::open(&path).unwrap();
    assert_eq!(npz.header("big").unwrap().shape, vec![n]);
    assert_eq!(npz.read::<u8, Ix1>("after").unwrap(), array![3]);
}

#[test]
fn writer_refuses_names_numpy_cannot_give_back() {
    let mut w = NpzWriter::new(Cursor::new(Vec::new()));
    for bad in ["a\0b", "\0"] {
        let err = w.add(bad, &ndarray::array![1u8]).unwrap_err();
        assert!(
            matches!(
                err,
                Error::Write(ndnpy::error::WriteError::InvalidName { .. })
            ),
            "{err:?}"
        );
    }
    // A refused name writes nothing, so the writer stays usable.
    w.add("x", &ndarray::array![1u8]).unwrap();
    let err = w.add("x.npy", &ndarray::array![2u8]).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Write(ndnpy::error::WriteError::InvalidName { .. })
        ),
        "{err:?}"
    );
    let long = "n".repeat(70_000);
    let err = w.add(&long, &ndarray::array![2u8]).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Write(ndnpy::error::WriteError::InvalidName { .. })
        ),
        "{err:?}"
    );
    assert!(err.to_string().len() < 1_000, "{}", err.to_string().len());
    let bytes = w.finish_into_inner().unwrap().into_inner();
    assert_eq!(reader_of(bytes).names(), ["x"]);
}

/// Members deflated in several pieces carry ndnpy's piece table and are
/// inflated on every core; damage in the data is an error, and a table that
/// does not describe the member is ignored (the member is inflated as one
/// stream).
#[test]
fn piece_tables_are_used_and_checked() {
    use ndnpy::{NpzReader, NpzWriter};
    let a = ndarray::Array1::from_shape_fn(450_000, |i| ((i * 7919) % 1000) as f64);
    let mut w =
        NpzWriter::new(std::io::Cursor::new(Vec::new())).codec(ndnpy::npz::Codec::deflate());
    w.add("big", &a).unwrap();
    let bytes = w.finish_into_inner().unwrap().into_inner();
    let read = |bytes: &[u8]| {
        NpzReader::new(std::io::Cursor::new(bytes.to_vec()))
            .and_then(|mut z| z.read::<f64, ndarray::Ix1>("big"))
    };
    assert_eq!(read(&bytes).unwrap(), a);
    // The table: id "nd", then the block size and one length per piece.
    let at = bytes
        .windows(2)
        .rposition(|w| w == b"nd")
        .expect("a piece table");
    let len = u16::from_le_bytes([bytes[at + 2], bytes[at + 3]]) as usize;
    assert_eq!(&bytes[at + 4..at + 8], &(1u32 << 20).to_le_bytes());
    assert_eq!(len, 4 + 4 * 4, "3.6 MB in four pieces");
    // A lying table (one piece one byte longer): ignored, still read.
    let mut lying = bytes.clone();
    lying[at + 8] = lying[at + 8].wrapping_add(1);
    assert_eq!(read(&lying).unwrap(), a);
    // Damaged data in a middle piece: an error, never garbage.
    let mut damaged = bytes.clone();
    let middle = bytes.len() / 2;
    damaged[middle] ^= 0x5A;
    damaged[middle + 1] ^= 0xA5;
    assert!(read(&damaged).is_err());
    // Every way in reads the same values: into an existing array (the
    // pieces inflated straight into it), in the other byte order (fixed
    // after), and as a stream of bytes (pieces into a buffer of their own).
    let mut z = NpzReader::new(std::io::Cursor::new(bytes.clone())).unwrap();
    let mut out = ndarray::Array1::<f64>::zeros(a.len());
    z.read_into("big", &mut out.view_mut()).unwrap();
    assert_eq!(out, a);
    let mut streamed = Vec::new();
    std::io::Read::read_to_end(&mut z.member_reader("big").unwrap(), &mut streamed).unwrap();
    assert_eq!(streamed.len(), 128 + 8 * a.len());
    assert_eq!(&streamed[..6], b"\x93NUMPY");
    let mask = ndarray::Array1::from_shape_fn(3_000_000, |i| (i * 7919) % 1000 < 300);
    let mut w =
        NpzWriter::new(std::io::Cursor::new(Vec::new())).codec(ndnpy::npz::Codec::deflate());
    w.add("mask", &mask).unwrap();
    let bools = w.finish_into_inner().unwrap().into_inner();
    let mut z = NpzReader::new(std::io::Cursor::new(bools)).unwrap();
    assert_eq!(z.read::<bool, ndarray::Ix1>("mask").unwrap(), mask);
    // A damaged piece read into an existing array: an error, and the
    // array holds no half-written garbage from the damaged piece on.
    let mut z = NpzReader::new(std::io::Cursor::new(damaged.clone())).unwrap();
    out.fill(7.0);
    assert!(z.read_into("big", &mut out.view_mut()).is_err());
    assert!(
        out.iter().all(|&x| x == 0.0),
        "the array keeps no unchecked bytes"
    );
    // Streamed: the failed read is not followed by unchecked bytes.
    let mut member = z.member_reader("big").unwrap();
    let mut sink = vec![0u8; 1 << 22];
    let mut failed = false;
    for _ in 0..8 {
        match std::io::Read::read(&mut member, &mut sink) {
            Err(_) => failed = true,
            Ok(0) => break,
            Ok(_) => assert!(!failed, "bytes after a failed read"),
        }
    }
    assert!(failed);
}
