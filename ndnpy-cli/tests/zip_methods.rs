//! bzip2, LZMA and Zstandard archives in the CLI (feature `zip-methods`):
//! `info` names each member's method, `check` verifies them (and reports
//! hostile ones), `convert` rewrites them and writes Zstandard with
//! `--compress zstd[:LEVEL]` (fixtures from scripts/interop_zip_methods.py).
#![cfg(feature = "zip-methods")]

mod common;

use common::{code, json, ndnpy, stderr};
use ndnpy::{npz::Compression, AnyArray, NpzReader};

const MIXED: &str = "fixtures/zip_methods/valid/mixed.npz";
const VALID: &str = "fixtures/zip_methods/valid";
const INVALID: &str = "fixtures/zip_methods/invalid";

fn root(path: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(path)
}

fn arrays(path: &std::path::Path) -> Vec<(String, AnyArray)> {
    let mut npz = NpzReader::open(path).unwrap();
    npz.arrays().map(|(n, a)| (n, a.unwrap())).collect()
}

#[test]
fn info_names_every_method() {
    let v = json(&ndnpy(&["--json", "info", MIXED]))[0].clone();
    let methods: Vec<&str> = v["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["compression"].as_str().unwrap())
        .collect();
    for method in ["stored", "deflate", "bzip2", "lzma", "zstd"] {
        assert!(methods.contains(&method), "{method} in {methods:?}");
    }
}

#[test]
fn check_verifies_valid_archives_and_reports_hostile_ones() {
    let out = ndnpy(&["check", "--allow-pickle", VALID]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = ndnpy(&["--json", "check", INVALID]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let v = json(&out);
    let text = v.to_string();
    for name in [
        "bzip2_corrupt",
        "lzma_truncated",
        "zstd_bomb",
        "zstd_window_too_large",
    ] {
        assert!(text.contains(name), "{name} not reported: {text}");
    }
}

#[test]
fn convert_rewrites_them_and_writes_zstandard() {
    let dir = tempfile::tempdir().unwrap();
    let want = arrays(&root(MIXED));
    for (args, method) in [
        (vec!["convert"], Compression::Stored),
        (vec!["convert", "--compress"], Compression::Deflated),
        (vec!["convert", "--compress", "zstd"], Compression::Zstd),
        (vec!["convert", "--compress=zstd:19"], Compression::Zstd),
        (
            vec!["convert", "--compress=deflate:1"],
            Compression::Deflated,
        ),
    ] {
        let out_path = dir.path().join("out.npz");
        let out_str = out_path.to_str().unwrap();
        let mut args = args.clone();
        args.extend([MIXED, out_str]);
        let out = ndnpy(&args);
        assert_eq!(code(&out), 0, "{args:?}: {}", stderr(&out));
        assert_eq!(arrays(&out_path), want, "{args:?}");
        let mut npz = NpzReader::open(&out_path).unwrap();
        assert_eq!(
            npz.member_info("series").unwrap().compression,
            method,
            "{args:?}"
        );
        std::fs::remove_file(&out_path).unwrap();
    }
    let out = ndnpy(&["convert", "--compress=brotli", MIXED, "x.npz"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("zstd"), "{}", stderr(&out));
}
