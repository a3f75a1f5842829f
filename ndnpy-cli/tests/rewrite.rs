//! Every `ndnpy` command that writes, on every fixture (object arrays,
//! records with object fields, Python 2 pickles and files from other
//! writers included), checked by having NumPy load the output equal to the
//! input: dtype, shape and values, object arrays element by element
//! (`scripts/check_rewrites.py`).
//!
//! A command may refuse an input (exit code 1 or 2, no output), never
//! write something NumPy reads differently.

mod common;

use common::{code, ndnpy, root, stderr};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Folders of fixtures written by NumPy (2.x and 1.x), pandas, Python 2 and
/// `zipfile` by hand.
const FOLDERS: &[&str] = &[
    "fixtures/npy/valid",
    "fixtures/npy/elements",
    "fixtures/npy/unsupported",
    "fixtures/pickle",
    "fixtures/cli",
    "fixtures/npz/valid",
    "fixtures/wild",
];

/// Inputs a command refuses, with the reason; anything else must convert.
const REFUSED: &[(&str, &str)] = &[
    // Members that are not arrays (NumPy returns their bytes).
    ("raw_member.npz", "a member that is not an .npy file"),
    (
        "raw_member_with_npy_name_no_magic.npz",
        "a member that is not an .npy file",
    ),
];

/// The fixtures, and the folder `$NDNPY_EXTRA_FIXTURES` names (CI puts the
/// corpus that `scripts/gen_np1_fixtures.py` writes with NumPy 1.x there).
fn fixtures() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack: Vec<PathBuf> = FOLDERS.iter().map(|f| root().join(f)).collect();
    if let Some(extra) = std::env::var_os("NDNPY_EXTRA_FIXTURES") {
        stack.push(PathBuf::from(extra));
    }
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if matches!(p.extension().and_then(|e| e.to_str()), Some("npy" | "npz")) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn refused(path: &Path) -> bool {
    let name = path.file_name().unwrap().to_str().unwrap();
    REFUSED.iter().any(|(f, _)| *f == name)
}

/// One command: its arguments, and what it writes as (input path, output
/// path, comparison mode) triples.
type Run = (Vec<String>, Vec<(String, String, &'static str)>);

struct Case {
    input: String,
    output: String,
    mode: &'static str,
}

#[test]
fn every_write_loads_in_numpy_equal_to_its_input() {
    let Some(python) = common::numpy_python("every_write_loads_in_numpy_equal_to_its_input") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut cases = Vec::new();
    let mut failures = Vec::new();
    let inputs = fixtures();
    assert!(inputs.len() > 300, "{} fixtures", inputs.len());
    for (n, input) in inputs.iter().enumerate() {
        let is_npz = input.extension().is_some_and(|e| e == "npz");
        let names = if is_npz {
            match ndnpy::NpzReader::open(input) {
                Ok(z) => z.names(),
                Err(_) => continue,
            }
        } else {
            Vec::new()
        };
        let out = dir.path().join(n.to_string());
        std::fs::create_dir(&out).unwrap();
        let i = input.to_str().unwrap();
        let o = |name: &str| out.join(name).to_str().unwrap().to_owned();
        let mut runs: Vec<Run> = Vec::new();
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        if is_npz {
            let members = |archive: &str| {
                names
                    .iter()
                    .map(|m| (format!("{i}::{m}"), format!("{archive}::{m}"), "same"))
                    .collect::<Vec<_>>()
            };
            runs.push((s(&["convert", i, &o("a.npz")]), members(&o("a.npz"))));
            runs.push((
                s(&["convert", "--compress", i, &o("z.npz")]),
                members(&o("z.npz")),
            ));
            runs.push((
                s(&["convert", "--split", i, &o("split")]),
                names
                    .iter()
                    .map(|m| (format!("{i}::{m}"), o(&format!("split/{m}.npy")), "same"))
                    .collect(),
            ));
            if let Some(first) = names.first() {
                runs.push((
                    s(&["convert", "--key", first, i, &o("key.npy")]),
                    vec![(format!("{i}::{first}"), o("key.npy"), "same")],
                ));
            }
        } else {
            let one = |p: String, mode| vec![(i.to_owned(), p, mode)];
            runs.push((s(&["convert", i, &o("a.npy")]), one(o("a.npy"), "same")));
            runs.push((
                s(&["convert", i, &o("a.npz")]),
                one(format!("{}::{}", o("a.npz"), stem(input)), "same"),
            ));
            runs.push((
                s(&["convert", "--compress", i, &o("z.npz")]),
                one(format!("{}::{}", o("z.npz"), stem(input)), "same"),
            ));
            for order in ["c", "f"] {
                let p = o(&format!("{order}.npy"));
                runs.push((s(&["convert", "--order", order, i, &p]), one(p, "same")));
            }
            let p = o("big.npy");
            runs.push((
                s(&["convert", "--byteorder", "big", i, &p]),
                one(p, "byteorder"),
            ));
        }
        for (args, outputs) in runs {
            // struct_wide_v2.npy has a 120 000-byte header, which NumPy
            // reads with max_header_size (as the CLI with this option).
            // --opaque: objects of other classes (fixtures/wild/opaque) are
            // kept as inert data and written back.
            let mut args = args;
            args.insert(0, "--max-header-size=200000".to_owned());
            args.insert(0, "--opaque".to_owned());
            let run = ndnpy(&args);
            if code(&run) == 0 {
                cases.extend(outputs.into_iter().map(|(input, output, mode)| Case {
                    input,
                    output,
                    mode,
                }));
            } else if !refused(input) && !refused_option(&args, &stderr(&run)) {
                failures.push(format!("{args:?} failed: {}", stderr(&run)));
            }
        }
    }
    let manifest = dir.path().join("manifest.json");
    let json: Vec<serde_json::Value> = cases
        .iter()
        .map(|c| serde_json::json!({"input": c.input, "output": c.output, "mode": c.mode}))
        .collect();
    std::fs::write(&manifest, serde_json::to_vec(&json).unwrap()).unwrap();
    let out = Command::new(python)
        .arg(root().join("scripts/check_rewrites.py"))
        .arg(&manifest)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let list = |key: &str| -> Vec<String> {
        report[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_owned())
            .collect()
    };
    failures.extend(list("failures"));
    let skipped = list("skipped");
    if !skipped.is_empty() {
        eprintln!(
            "{} inputs this NumPy cannot load itself (not compared):\n{}",
            skipped.len(),
            skipped.join("\n")
        );
        // CI's NumPy 2 has pandas and SciPy: every input must be compared.
        assert!(
            std::env::var_os("NDNPY_REQUIRE_ALL").is_none(),
            "NDNPY_REQUIRE_ALL is set and {} inputs were not compared",
            skipped.len()
        );
    }
    assert!(
        failures.is_empty(),
        "{} of {} rewrites wrong:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// Options that cannot apply to some dtypes are refused with a usage error
/// (exit code 2) naming why.
fn refused_option(args: &[String], stderr: &str) -> bool {
    let reorders = args.iter().any(|a| a == "--order" || a == "--byteorder");
    reorders && stderr.contains("records with object fields are written in")
}

fn stem(p: &Path) -> String {
    p.file_stem().unwrap().to_str().unwrap().to_owned()
}
