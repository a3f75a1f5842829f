//! Differential tests: odd and hostile archives built with Python's
//! `zipfile`/`struct` (scripts/gen_npz_differential.py) must mean the same
//! thing here as in `np.load`: the same names, the same arrays, an error
//! where NumPy raises one. The JSON beside each archive records NumPy's
//! view and the few places where ndnpy refuses on purpose what NumPy reads
//! (overlapping entries, compression methods other than stored/deflate).
//!
//! `committed_archives_match_numpy` checks fixtures/npz/differential/;
//! `fresh_archives_match_numpy` regenerates them with the NumPy installed
//! here and checks those (skipped, with a message, without python3/numpy).

use ndnpy::{AnyArray, Error, NpzMmap, NpzReader};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn variant(err: &Error) -> String {
    format!("{err:?}")
        .split(|c: char| !c.is_alphanumeric())
        .next()
        .unwrap()
        .to_owned()
}

/// The values of an array as little-endian bytes in C order.
fn le_bytes(a: &AnyArray) -> Vec<u8> {
    macro_rules! flat {
        ($x:expr) => {
            $x.iter().flat_map(|v| v.to_le_bytes()).collect()
        };
    }
    match a {
        AnyArray::Bool(x) => x.iter().map(|&v| v as u8).collect(),
        AnyArray::I8(x) => flat!(x),
        AnyArray::I16(x) => flat!(x),
        AnyArray::I32(x) => flat!(x),
        AnyArray::I64(x) => flat!(x),
        AnyArray::U8(x) => flat!(x),
        AnyArray::U16(x) => flat!(x),
        AnyArray::U32(x) => flat!(x),
        AnyArray::U64(x) => flat!(x),
        AnyArray::F32(x) => flat!(x),
        AnyArray::F64(x) => flat!(x),
        other => panic!("no comparison for {:?}", other.dtype()),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Checks one archive against NumPy's view of it; returns what was checked.
fn check(path: &Path) -> String {
    let context = path.file_name().unwrap().to_string_lossy().into_owned();
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(path.with_extension("json")).unwrap())
            .unwrap();
    let numpy = &json["numpy"];
    let ours = &json["ours"];
    let opened = NpzReader::open(path);
    // SAFETY: the archive is a test file nobody else writes.
    let mapped = unsafe { NpzMmap::open(path) };
    if let Some(reason) = numpy["open_error"].as_str() {
        let err = opened
            .err()
            .unwrap_or_else(|| panic!("{context}: NumPy refuses ({reason}), we opened it"));
        let map_err = mapped
            .err()
            .unwrap_or_else(|| panic!("{context}: NpzMmap opened it"));
        assert_eq!(variant(&err), variant(&map_err), "{context}");
        if let Some(expected) = ours["open_error"].as_str() {
            assert_eq!(variant(&err), expected, "{context}: {err}");
        }
        return format!("{context}: refused like NumPy ({err})");
    }
    assert!(ours["open_error"].is_null(), "{context}: NumPy opens it");
    let mut npz = opened.unwrap_or_else(|e| panic!("{context}: NumPy opens it, we fail: {e}"));
    let map = mapped.unwrap_or_else(|e| panic!("{context}: NpzMmap fails: {e}"));
    let files: Vec<String> = numpy["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(npz.names(), files, "{context}: names");
    assert_eq!(map.names(), files, "{context}: mapped names");
    for (key, expected) in numpy["arrays"].as_object().unwrap() {
        let got = npz.read_any(key);
        // An error of ours on purpose; or one for a method whose codec is a
        // cargo feature, only when the feature is off.
        let deliberate = ours["member_errors"][key].as_str().or_else(|| {
            let [feature, variant] = ours["member_errors_without"][key].as_array()?.as_slice()
            else {
                return None;
            };
            let on = match feature.as_str()? {
                "bzip2" => cfg!(feature = "bzip2"),
                "lzma" => cfg!(feature = "lzma"),
                "zstd" => cfg!(feature = "zstd"),
                other => panic!("unknown feature {other}"),
            };
            (!on).then(|| variant.as_str()).flatten()
        });
        match (got, expected["error"].as_str(), deliberate) {
            (Err(err), _, Some(variant_name)) => {
                assert_eq!(variant(&err), variant_name, "{context}/{key}: {err}");
                if variant_name == "InvalidArchive" || variant_name == "UnsupportedMember" {
                    let map_err = map.header(key).unwrap_err();
                    assert_eq!(variant(&map_err), variant_name, "{context}/{key} mapped");
                }
            }
            (Ok(_), _, Some(variant_name)) => {
                panic!("{context}/{key}: expected our deliberate {variant_name}")
            }
            (Err(_), Some(_), None) => {}
            (Ok(a), Some(reason), None) => {
                panic!("{context}/{key}: NumPy raises {reason}, we read {a:?}")
            }
            (Err(err), None, None) => panic!("{context}/{key}: NumPy reads it, we fail: {err}"),
            (Ok(a), None, None) => {
                let descr = expected["descr"].as_str().unwrap().replace('>', "<");
                assert_eq!(a.dtype().to_string(), descr, "{context}/{key}: dtype");
                let shape: Vec<usize> = expected["shape"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|d| d.as_u64().unwrap() as usize)
                    .collect();
                assert_eq!(a.shape(), &shape[..], "{context}/{key}: shape");
                assert_eq!(
                    hex(&le_bytes(&a)),
                    expected["le_hex"].as_str().unwrap(),
                    "{context}/{key}: values"
                );
            }
        }
    }
    // Iterating gives, for each name, what reading that name gives.
    let from_iter: Vec<(String, Result<AnyArray, Error>)> = npz.arrays().collect();
    assert_eq!(from_iter.len(), files.len(), "{context}");
    for (name, result) in from_iter {
        match (result, npz.read_any(&name)) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "{context}/{name}"),
            (Err(a), Err(b)) => assert_eq!(variant(&a), variant(&b), "{context}/{name}"),
            _ => panic!("{context}/{name}: arrays() and read_any disagree"),
        }
    }
    format!("{context}: {} names agree", files.len())
}

/// Checks every archive, then fails listing each one that disagrees.
fn check_all(paths: &[PathBuf]) {
    let failures: Vec<String> = paths
        .iter()
        .filter_map(|path| match std::panic::catch_unwind(|| check(path)) {
            Ok(line) => {
                eprintln!("{line}");
                None
            }
            Err(panic) => Some(
                panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default(),
            ),
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} archives disagree with NumPy:\n{}",
        failures.len(),
        paths.len(),
        failures.join("\n")
    );
}

fn archives_in(dir: &Path) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "npz"))
        .collect();
    paths.sort();
    paths
}

#[test]
fn committed_archives_match_numpy() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/npz/differential");
    let paths = archives_in(&dir);
    assert!(paths.len() >= 20, "{} archives", paths.len());
    check_all(&paths);
}

#[test]
fn fresh_archives_match_numpy() {
    let has_numpy = Command::new("python3")
        .args(["-c", "import numpy"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_numpy {
        eprintln!("SKIPPED fresh_archives_match_numpy: python3 with numpy is not available");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/gen_npz_differential.py");
    let status = Command::new("python3")
        .arg(script)
        .arg("--out")
        .arg(dir.path())
        .status()
        .unwrap();
    assert!(status.success());
    let paths = archives_in(dir.path());
    assert!(paths.len() >= 20);
    check_all(&paths);
}
