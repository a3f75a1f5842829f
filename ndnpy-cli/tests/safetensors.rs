//! safetensors files in the CLI (feature `safetensors`): `convert` both
//! ways, and the reading commands on a file's tensors as members, on the
//! bfloat16 archive ml_dtypes + np.savez wrote (`fixtures/ml_dtypes`).
#![cfg(feature = "safetensors")]

mod common;

use common::{code, json, ndnpy, stderr, stdout};
use ndnpy::{npz::Compression, NpzReader};
use serde_json::Value;

const NPZ: &str = "fixtures/ml_dtypes/bf16.npz";

fn path(dir: &tempfile::TempDir, name: &str) -> String {
    dir.path().join(name).to_str().unwrap().to_owned()
}

#[test]
fn convert_both_ways_and_read_tensors_as_members() {
    let dir = tempfile::tempdir().unwrap();
    let st = path(&dir, "model.safetensors");

    // Raw '<V2' members need --as.
    let out = ndnpy(&["convert", NPZ, &st]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(stderr(&out).contains("--as bfloat16"), "{}", stderr(&out));
    let out = ndnpy(&["--as", "bfloat16", "convert", NPZ, &st]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));

    // info: the safetensors types beside the members' dtypes.
    let v = json(&ndnpy(&["--json", "info", &st]))[0].clone();
    assert_eq!(v["format"], "safetensors");
    let w = tensor(&v, "w");
    assert_eq!(w["safetensors_dtype"], "BF16");
    assert_eq!(w["dtype"], "<V2");
    assert!(w["probably"].as_str().unwrap().contains("--as bfloat16"));
    assert_eq!(tensor(&v, "b")["safetensors_dtype"], "F32");
    let text = stdout(&ndnpy(&["info", &st]));
    assert!(text.contains("safetensors, 2 tensors"), "{text}");

    // show, stats, check, diff: as on the archive.
    // Labelled as an archive's member is, then the same values.
    let shown = stdout(&ndnpy(&["--as", "bfloat16", "show", &st, "--key", "w"]));
    let want = stdout(&ndnpy(&["--as", "bfloat16", "show", NPZ, "--key", "w"]));
    assert_eq!(shown.split_once('\n').unwrap().0, format!("{st}:w:"));
    assert_eq!(
        shown.split_once('\n').unwrap().1,
        want.split_once('\n').unwrap().1
    );
    let out = ndnpy(&["show", &format!("{st}:b")]);
    assert!(
        stdout(&out).ends_with(":b:\narray([ 0.5 , -1.  ,  3.25], dtype=float32)\n"),
        "{}",
        stdout(&out)
    );
    let out = ndnpy(&["stats", &st]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stdout(&out).contains(":b: <f4 (3,)"), "{}", stdout(&out));
    let out = ndnpy(&["check", &st]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    let out = ndnpy(&["diff", NPZ, &st]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let out = ndnpy(&["--as", "bfloat16", "diff", NPZ, &st]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));

    // And back, compressed: the members np.savez wrote, bit for bit.
    let back = path(&dir, "back.npz");
    let out = ndnpy(&["convert", "--compress", &st, &back]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let mut a = NpzReader::open(root(NPZ)).unwrap();
    let mut b = NpzReader::open(&back).unwrap();
    assert_eq!(
        b.member_info("w").unwrap().compression,
        Compression::Deflated
    );
    for name in ["w", "b"] {
        assert_eq!(a.raw(name).unwrap(), b.raw(name).unwrap(), "{name}");
    }
}

#[test]
fn damaged_files_and_wrong_requests_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let st = path(&dir, "model.safetensors");
    assert_eq!(code(&ndnpy(&["--as", "bfloat16", "convert", NPZ, &st])), 0);
    let bytes = std::fs::read(&st).unwrap();
    let cut = path(&dir, "cut.safetensors");
    std::fs::write(&cut, &bytes[..bytes.len() - 1]).unwrap();
    let out = ndnpy(&["check", &cut]);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    assert!(
        stdout(&out).contains("not a valid safetensors file"),
        "{}",
        stdout(&out)
    );
    let out = ndnpy(&["info", &cut]);
    assert_ne!(code(&out), 0);
    assert!(
        stderr(&out).contains("not a valid safetensors file"),
        "{}",
        stderr(&out)
    );

    // Options safetensors cannot honour, and outputs it cannot be.
    let out = ndnpy(&["convert", "--order", "F", NPZ, &st]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    let out = ndnpy(&["convert", &st, &path(&dir, "x.npy")]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("converts to an .npz"),
        "{}",
        stderr(&out)
    );
    let out = ndnpy(&["show", &st, "--key", "nope"]);
    assert_ne!(code(&out), 0);
}

/// The tensor named `name` of `info`'s list.
fn tensor(v: &Value, name: &str) -> Value {
    let all = v["tensors"].as_array().unwrap();
    all.iter().find(|t| t["name"] == name).unwrap().clone()
}

fn root(p: &str) -> std::path::PathBuf {
    common::root().join(p)
}
