//! Runs the `ndnpy` binary on NumPy-made fixtures and compares its output
//! with what NumPy computed (`tests/expected.json`, written by
//! `scripts/gen_cli_expected.py`), and, after `convert`, with what
//! `np.load` reads back.

mod common;

use common::{code, json, ndnpy, ndnpy_env, root, stdout};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn expected() -> Value {
    let text = std::fs::read_to_string(root().join("ndnpy-cli/tests/expected.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Dtypes `show` does not print: long double, whose layout depends on
/// the machine that wrote it.
const KNOWN_UNSUPPORTED: &[&str] = &[
    "fixtures/npy/unsupported/clongdouble_c32.npy",
    "fixtures/npy/unsupported/longdouble_f16.npy",
    "fixtures/npy/unsupported/struct_longdouble_field.npy",
];

#[test]
fn show_prints_numpy_repr() {
    let exp = expected();
    let mut failures = Vec::new();
    let cases = exp["show"].as_object().unwrap();
    assert!(cases.len() > 100);
    for (path, repr) in cases {
        let out = ndnpy(&["show", path]);
        if KNOWN_UNSUPPORTED.contains(&path.as_str()) {
            // Not printed yet: a clear message and exit code 1, no guess.
            assert_eq!(code(&out), 1, "{path}");
            assert!(String::from_utf8_lossy(&out.stderr).contains(path.as_str()));
            continue;
        }
        let want = format!("{}\n", repr.as_str().unwrap());
        if code(&out) != 0 || stdout(&out) != want {
            failures.push(format!(
                "{path}:\nnumpy:\n{want}ndnpy ({}):\n{}{}",
                code(&out),
                stdout(&out),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} differ:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn show_slices_as_numpy_indexing() {
    for case in expected()["slices"].as_array().unwrap() {
        let (path, spec) = (
            case["path"].as_str().unwrap(),
            case["slice"].as_str().unwrap(),
        );
        let out = ndnpy(&["show", path, "--slice", spec]);
        assert_eq!(
            code(&out),
            0,
            "{path} [{spec}]: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            stdout(&out),
            format!("{}\n", case["repr"].as_str().unwrap()),
            "{path} [{spec}]"
        );
    }
    let out = ndnpy(&["show", "fixtures/cli/big_2d_i32.npy", "--slice", "50"]);
    assert_eq!(code(&out), 1);
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("index 50 is out of bounds for axis 0 with size 50"));
}

#[test]
fn show_npz_members_and_json() {
    let out = ndnpy(&["show", "fixtures/cli/pair_compressed.npz", "--key", "a"]);
    assert_eq!(
        stdout(&out),
        "fixtures/cli/pair_compressed.npz:a:\narray([[0., 1., 2.],\n       [3., 4., 5.]])\n"
    );
    let out = ndnpy(&["--json", "show", "fixtures/cli/pair.npz"]);
    let v = json(&out);
    assert_eq!(v[1]["name"], "fixtures/cli/pair.npz:b");
    assert_eq!(v[1]["repr"], "array([0, 1, 2, 3], dtype=int16)");
    // np.load(..., allow_pickle=True) gives array([1, 'two', None], dtype=object).
    let out = ndnpy(&["show", "fixtures/npy/unsupported/object_O.npy"]);
    assert_eq!(stdout(&out), "array([1, 'two', None], dtype=object)\n");
}

fn close(a: &Value, b: &Value, rtol: f64) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            (x - y).abs() <= rtol * y.abs().max(1e-300) || x == y
        }
        _ => a == b,
    }
}

#[test]
fn stats_match_numpy() {
    stats_match_numpy_in_chunks(&[]);
}

/// Chunks of 24 bytes: every fixture of more than a few elements is then
/// folded over several stripes on several threads and merged, the path a
/// file of more than 256 KiB takes.
#[test]
fn stats_match_numpy_over_many_chunks() {
    stats_match_numpy_in_chunks(&[("NDNPY_CHUNK_BYTES", "24")]);
}

/// Chunks are folded into stripes fixed by their position, so the output is
/// the same, to the last bit, whatever the number of threads.
#[test]
fn stats_do_not_depend_on_the_thread_count() {
    let files = [
        "fixtures/cli/big_f64.npy",
        "fixtures/cli/big_2d_i32.npy",
        "fixtures/cli/mixed_f64.npy",
        "fixtures/npy/valid/f64_special_2d.npy",
        "fixtures/npy/elements/struct_simple.npy",
        "fixtures/cli/dates_D.npy",
    ];
    let run = |threads: &str| {
        let mut args = vec!["--json", "stats"];
        args.extend(files);
        let out = ndnpy_env(
            &args,
            &[("NDNPY_CHUNK_BYTES", "24"), ("NDNPY_THREADS", threads)],
        );
        assert_eq!(code(&out), 0, "{}", String::from_utf8_lossy(&out.stderr));
        stdout(&out)
    };
    let one = run("1");
    for threads in ["2", "4", "8"] {
        assert_eq!(run(threads), one, "{threads} threads");
    }
}

fn stats_match_numpy_in_chunks(env: &[(&str, &str)]) {
    let exp = expected();
    let mut failures = Vec::new();
    let cases = exp["stats"].as_object().unwrap();
    for (path, want) in cases {
        let out = ndnpy_env(&["--json", "stats", path], env);
        if code(&out) != 0 {
            failures.push(format!("{path}: exit {}", code(&out)));
            continue;
        }
        let got = &json(&out)[0]["columns"][0];
        for (key, w) in want.as_object().unwrap() {
            let rtol = if key == "mean" || key == "std" {
                1e-9
            } else {
                0.0
            };
            if !close(&got[key], w, rtol) {
                failures.push(format!("{path}: {key}: ndnpy {} numpy {w}", got[key]));
            }
        }
    }
    assert!(cases.len() > 80);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn stats_per_record_field() {
    // One element per chunk: each goes to its own stripe.
    for env in [&[][..], &[("NDNPY_CHUNK_BYTES", "1")][..]] {
        let v = json(&ndnpy_env(
            &["--json", "stats", "fixtures/npy/elements/struct_simple.npy"],
            env,
        ));
        let cols = v[0]["columns"].as_array().unwrap();
        let names: Vec<&str> = cols.iter().map(|c| c["field"].as_str().unwrap()).collect();
        assert_eq!(names, ["x", "y", "flag"]);
        // NumPy: a['x'] = [1.5, -1.0, inf], a['y'] = [2, 7, -3].
        assert_eq!(cols[0]["min"], -1.0);
        assert_eq!(cols[0]["pos_inf"], 1);
        assert_eq!(cols[1]["min"], -3);
        assert_eq!(cols[1]["max"], 7);
        assert_eq!(cols[1]["mean"], 2.0);
    }
}

#[test]
fn stats_of_datetimes() {
    for env in [&[][..], &[("NDNPY_CHUNK_BYTES", "1")][..]] {
        let v = json(&ndnpy_env(
            &[
                "--json",
                "stats",
                "fixtures/cli/dates_D.npy",
                "fixtures/cli/timedelta.npy",
            ],
            env,
        ));
        // NumPy: np.nanmin / np.nanmax / np.isnat(a).sum() of
        // ['2020-02-29', '1969-12-31', 'NaT'], and [1, -20, 300] seconds.
        let dates = &v[0]["columns"][0];
        assert_eq!(dates["min"], "1969-12-31");
        assert_eq!(dates["max"], "2020-02-29");
        assert_eq!(dates["nat"], 1);
        assert_eq!(dates["count"], 3);
        let deltas = &v[1]["columns"][0];
        assert_eq!(deltas["min"], -20);
        assert_eq!(deltas["max"], 300);
        assert_eq!(deltas["nat"], 0);
    }
}

#[test]
fn info_text_and_json() {
    let out = ndnpy(&["info", "fixtures/npy/unsupported/object_O.npy"]);
    assert_eq!(code(&out), 0);
    assert!(stdout(&out).contains("pickled:    yes"), "{}", stdout(&out));
    let v = json(&ndnpy(&[
        "--json",
        "info",
        "fixtures/npy/valid/fortran_2d.npy",
        "fixtures/cli/pair.npz",
        "fixtures/cli/pair_compressed.npz",
    ]));
    assert_eq!(v[0]["order"], "F");
    assert_eq!(v[0]["data_offset"], 128);
    assert_eq!(v[0]["pickled"], false);
    let m = &v[1]["members"][0];
    assert_eq!(m["name"], "a");
    assert_eq!(m["compression"], "stored");
    assert_eq!(m["shape"], serde_json::json!([2, 3]));
    assert_eq!(m["dtype"], "<f8");
    let c = &v[2]["members"][1];
    assert_eq!(c["compression"], "deflate");
    assert_eq!(c["mmap_in_place"], false);
    assert!(c["compressed_size"].as_u64() < c["size"].as_u64());
    let v = json(&ndnpy(&[
        "--json",
        "info",
        "fixtures/npy/elements/struct_aligned_padding.npy",
    ]));
    let f = &v[0]["fields"];
    assert_eq!(f[1]["padding"], true);
    assert_eq!(f[2]["offset"], 4);
}

#[test]
fn check_reports_every_hostile_file() {
    let out = ndnpy(&[
        "--json",
        "check",
        "fixtures/npy/invalid",
        "fixtures/npz/invalid",
    ]);
    assert_eq!(code(&out), 1);
    let v = json(&out);
    let files: Vec<&Value> = v.as_array().unwrap().iter().collect();
    let on_disk = std::fs::read_dir(root().join("fixtures/npy/invalid"))
        .unwrap()
        .count()
        + std::fs::read_dir(root().join("fixtures/npz/invalid"))
            .unwrap()
            .count();
    // Every .npy/.npz (the other half are the .json notes).
    assert_eq!(files.len() * 2, on_disk);
    for f in files {
        assert_eq!(f["ok"], false, "{f}");
    }
    let text = stdout(&ndnpy(&["check", "fixtures/npz/invalid/bad_crc.npz"]));
    assert_eq!(text, "fixtures/npz/invalid/bad_crc.npz:x: corrupt: its data does not match its CRC-32 checksum\n");
}

#[test]
fn check_accepts_valid_files() {
    let out = ndnpy(&[
        "check",
        "--allow-pickle",
        "fixtures/npy/valid",
        "fixtures/npz/valid",
        "fixtures/cli",
    ]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    let out = ndnpy(&["check", "fixtures/npy/unsupported/object_O.npy"]);
    assert_eq!(code(&out), 1);
}

#[test]
fn exit_codes() {
    assert_eq!(code(&ndnpy(&["info", "fixtures/no/such.npy"])), 2);
    assert!(
        String::from_utf8_lossy(&ndnpy(&["info", "fixtures/no/such.npy"]).stderr)
            .contains("fixtures/no/such.npy")
    );
    assert_eq!(code(&ndnpy(&["info", "fixtures/*.nothing"])), 2);
    assert_eq!(code(&ndnpy(&["frobnicate"])), 2);
    assert_eq!(
        code(&ndnpy(&["info", "fixtures/npy/invalid/truncated_data.npy"])),
        1
    );
    assert_eq!(
        code(&ndnpy(&["info", "fixtures/npy/invalid/bad_magic_text.npy"])),
        1
    );
    let help = stdout(&ndnpy(&["--help"]));
    assert!(help.contains("Exit codes:"), "{help}");
    // Globs the shell did not expand.
    let v = json(&ndnpy(&["--json", "info", "fixtures/cli/pair*.npz"]));
    assert_eq!(v.as_array().unwrap().len(), 2);
}

#[test]
fn diff_reports_first_differences() {
    let out = ndnpy(&[
        "--json",
        "diff",
        "fixtures/cli/diff_a.npy",
        "fixtures/cli/diff_b.npy",
    ]);
    assert_eq!(code(&out), 1);
    let v = &json(&out)[0];
    assert_eq!(v["differing"], 2);
    assert_eq!(
        v["first_differences"][0]["index"],
        serde_json::json!([1, 2])
    );
    assert_eq!(
        v["first_differences"][1]["index"],
        serde_json::json!([4, 0])
    );
    let loose = ndnpy(&[
        "diff",
        "fixtures/cli/diff_a.npy",
        "fixtures/cli/diff_b.npy",
        "--atol",
        "10",
    ]);
    assert_eq!(code(&loose), 0);
    // Same values in Fortran order: equal.
    let f = ndnpy(&[
        "diff",
        "fixtures/cli/diff_a.npy",
        "fixtures/cli/diff_a_fortran.npy",
    ]);
    assert_eq!(code(&f), 0, "{}", stdout(&f));
    let z = ndnpy(&[
        "diff",
        "fixtures/cli/pair.npz",
        "fixtures/cli/pair_compressed.npz",
    ]);
    assert_eq!(code(&z), 0, "{}", stdout(&z));
}

#[test]
fn diff_skips_identical_batches_but_finds_one_element_past_them() {
    // Three batches of 1 MiB; NaNs equal NaNs; one difference in the last
    // batch, the rest byte-identical.
    use ndnpy::WriteNpy;
    let dir = tempfile::tempdir().unwrap();
    let mut a = ndarray::Array1::from_iter((0..400_000).map(|i| i as f64));
    a[3] = f64::NAN;
    let mut b = a.clone();
    b[300_001] = -1.0;
    let (pa, pb) = (dir.path().join("a.npy"), dir.path().join("b.npy"));
    a.write_npy(&pa).unwrap();
    b.write_npy(&pb).unwrap();
    let same = ndnpy(&["diff".as_ref(), pa.as_os_str(), pa.as_os_str()]);
    assert_eq!(code(&same), 0, "{}", stdout(&same));
    let out = ndnpy(&[
        "--json".as_ref(),
        "diff".as_ref(),
        pa.as_os_str(),
        pb.as_os_str(),
    ]);
    assert_eq!(code(&out), 1);
    let v = &json(&out)[0];
    assert_eq!(v["differing"], 1);
    assert_eq!(
        v["first_differences"][0]["index"],
        serde_json::json!([300_001])
    );
    assert_eq!(v["first_differences"][0]["b"], -1.0);
    assert_eq!(v["max_abs_diff"], 300_002.0);
}

/// Runs Python with NumPy and returns its stdout; `None` where there is no
/// NumPy and `CI` is unset (see [`common::numpy_python`]).
fn python(test: &str, code: &str) -> Option<String> {
    let python = common::numpy_python(test)?;
    let out = Command::new(python)
        .args(["-c", code])
        .current_dir(root())
        .output()
        .expect("run python");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8(out.stdout).unwrap())
}

#[test]
fn convert_round_trips_through_numpy() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display().to_string();
    let run = |args: &[&str]| {
        let out = ndnpy(args);
        assert_eq!(
            code(&out),
            0,
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    run(&[
        "convert",
        "fixtures/cli/big_2d_i32.npy",
        "fixtures/cli/fortran_f64.npy",
        &format!("{d}/both.npz"),
    ]);
    run(&[
        "convert",
        "--compress",
        "fixtures/cli/big_3d_f32.npy",
        &format!("{d}/z.npz"),
    ]);
    run(&[
        "convert",
        "--split",
        &format!("{d}/both.npz"),
        &format!("{d}/split"),
    ]);
    run(&[
        "convert",
        "--order",
        "f",
        "fixtures/cli/big_2d_i32.npy",
        &format!("{d}/f.npy"),
    ]);
    run(&[
        "convert",
        "--order",
        "c",
        "fixtures/cli/fortran_f64.npy",
        &format!("{d}/c.npy"),
    ]);
    run(&[
        "convert",
        "--byteorder",
        "big",
        "fixtures/cli/c64.npy",
        &format!("{d}/be.npy"),
    ]);
    run(&[
        "convert",
        "fixtures/cli/fortran_f64.npy",
        &format!("{d}/t.csv"),
    ]);
    run(&[
        "convert",
        "--key",
        "b",
        "fixtures/cli/pair_compressed.npz",
        &format!("{d}/b.npy"),
    ]);
    let script = format!(
        r#"
import numpy as np
d = "{d}"
z = np.load(d + "/both.npz")
assert z.files == ["big_2d_i32", "fortran_f64"], z.files
assert (z["big_2d_i32"] == np.load("fixtures/cli/big_2d_i32.npy")).all()
assert (z["fortran_f64"] == np.load("fixtures/cli/fortran_f64.npy")).all()
import zipfile
assert all(i.compress_type == zipfile.ZIP_STORED for i in zipfile.ZipFile(d + "/both.npz").infolist())
assert zipfile.ZipFile(d + "/z.npz").infolist()[0].compress_type == zipfile.ZIP_DEFLATED
assert (np.load(d + "/z.npz")["big_3d_f32"] == np.load("fixtures/cli/big_3d_f32.npy")).all()
assert (np.load(d + "/split/big_2d_i32.npy") == np.load("fixtures/cli/big_2d_i32.npy")).all()
f = np.load(d + "/f.npy")
assert f.flags.f_contiguous and not f.flags.c_contiguous
assert (f == np.load("fixtures/cli/big_2d_i32.npy")).all()
c = np.load(d + "/c.npy")
assert c.flags.c_contiguous and (c == np.load("fixtures/cli/fortran_f64.npy")).all()
be = np.load(d + "/be.npy")
assert be.dtype == np.dtype(">c8"), be.dtype
assert (be == np.load("fixtures/cli/c64.npy")).all()
t = np.loadtxt(d + "/t.csv", delimiter=",")
assert (t == np.load("fixtures/cli/fortran_f64.npy")).all()
assert (np.load(d + "/b.npy") == np.arange(4, dtype=np.int16)).all()
print("ok")
"#
    );
    if let Some(out) = python("convert_round_trips_through_numpy", &script) {
        assert_eq!(out, "ok\n");
    }
    // Our stored members are 64-byte aligned: viewable in place. NumPy's
    // own archives place members anywhere.
    let v = json(&ndnpy(&[
        "--json",
        "info",
        &format!("{d}/both.npz"),
        "fixtures/cli/pair.npz",
    ]));
    assert_eq!(v[0]["members"][0]["mmap_in_place"], true);
    assert_eq!(v[0]["members"][1]["mmap_in_place"], true);
    assert_eq!(v[1]["members"][0]["mmap_in_place"], false);
    // Text output names what was written; a bad request is a usage error.
    let out = ndnpy(&["convert", "fixtures/cli/c64.npy", &format!("{d}/x.csv")]);
    assert_eq!(code(&out), 2);
    assert!(
        !Path::new(&format!("{d}/x.csv")).exists(),
        "no partial output"
    );
}

#[test]
fn show_reads_only_what_it_prints() {
    // A 48 GB array in a sparse file: show and info read a few blocks.
    use std::os::unix::fs::FileExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.npy");
    let header = ndnpy::dtype::Header {
        dtype: ndnpy::dtype::DType::parse("<f8").unwrap(),
        shape: vec![6_000_000_000],
        fortran_order: false,
        version: ndnpy::dtype::Version::V1,
    };
    let bytes = header.to_bytes().unwrap();
    let file = std::fs::File::create(&path).unwrap();
    file.write_all_at(&bytes, 0).unwrap();
    file.set_len(bytes.len() as u64 + 48_000_000_000).unwrap();
    file.write_all_at(&1.5f64.to_le_bytes(), bytes.len() as u64)
        .unwrap();
    file.write_all_at(
        &(-2.0f64).to_le_bytes(),
        bytes.len() as u64 + 48_000_000_000 - 8,
    )
    .unwrap();
    let p = path.to_str().unwrap();
    let out = ndnpy(&["show", p]);
    assert_eq!(code(&out), 0);
    // np.asarray of a memory map is a view: repr reads what it prints.
    if let Some(numpy) = python(
        "show_reads_only_what_it_prints",
        &format!("import numpy as np; print(repr(np.asarray(np.load({p:?}, mmap_mode='r'))))"),
    ) {
        assert_eq!(stdout(&out), numpy);
    }
    let out = ndnpy(&["show", p, "--slice", "-2:"]);
    assert_eq!(stdout(&out), "array([ 0., -2.])\n");
    // A truncated file is reported, not read past its end.
    file.set_len(bytes.len() as u64 + 1000).unwrap();
    let out = ndnpy(&["stats", p]);
    assert_eq!(code(&out), 1);
    assert!(String::from_utf8_lossy(&out.stderr).contains("truncated data"));
}

#[test]
fn show_object_arrays_as_numpy() {
    // Read by ndnpy's own pickle reader, which runs no code.
    let exp = expected();
    let cases = exp["show_objects"].as_object().unwrap();
    assert!(cases.len() > 100);
    let mut failures = Vec::new();
    for (path, repr) in cases {
        let out = ndnpy(&["show", path]);
        let want = format!("{}\n", repr.as_str().unwrap());
        if stdout(&out) != want {
            failures.push(format!("{path}:\n{want}{}", stdout(&out)));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn check_reads_pickles_without_running_them() {
    // A pickle that would call os.system under np.load(allow_pickle=True).
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("evil.npy");
    let header = ndnpy::dtype::Header {
        dtype: ndnpy::dtype::DType::parse("|O").unwrap(),
        shape: vec![1],
        fortran_order: false,
        version: ndnpy::dtype::Version::V1,
    };
    let mut bytes = header.to_bytes().unwrap();
    bytes.extend_from_slice(b"cos\nsystem\n(S'touch /tmp/ndnpy-pwned'\ntR.");
    std::fs::write(&path, bytes).unwrap();
    let p = path.to_str().unwrap();
    let out = ndnpy(&["check", "--allow-pickle", p]);
    assert_eq!(code(&out), 1);
    assert!(
        stdout(&out).contains("cannot be read safely"),
        "{}",
        stdout(&out)
    );
    let out = ndnpy(&["show", p]);
    assert_eq!(code(&out), 1);
    assert!(!Path::new("/tmp/ndnpy-pwned").exists());
    // The library's pickle fixtures (written by NumPy) all pass.
    let out = ndnpy(&["check", "--allow-pickle", "fixtures/pickle"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
}

#[test]
fn stats_ignore_masks_that_do_not_fit() {
    // A `.valid` member that is not a boolean array of the member's 1-D
    // shape is not a mask: the member's figures count every entry.
    use ndarray::array;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.npz");
    let mut w = ndnpy::NpzWriter::create(&path).unwrap();
    w.add("short", &array![1.0f64, 2.0, 3.0]).unwrap();
    w.add("short.valid", &array![true, false]).unwrap();
    w.add("ints", &array![5i64, 6]).unwrap();
    w.add("ints.valid", &array![1u8, 0]).unwrap();
    w.add("fits", &array![5i64, 7]).unwrap();
    w.add("fits.valid", &array![false, true]).unwrap();
    w.finish().unwrap();
    let out = ndnpy(&["--json".as_ref(), "stats".as_ref(), path.as_os_str()]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    let all = json(&out);
    let by = |n: &str| common::named(&all, n);
    assert_eq!(by("short")["columns"][0]["count"], 3);
    assert!(by("short").get("missing").is_none());
    assert_eq!(by("ints")["columns"][0]["count"], 2);
    assert_eq!(by("fits")["columns"][0]["count"], 1);
    assert_eq!(by("fits")["columns"][0]["min"].as_f64(), Some(7.0));
    assert_eq!(by("fits")["missing"], 1);
}
