//! Stack folders through the CLI (issue 40): every command reads a dask
//! stack (or, with `--stack`, a plain folder of shards) as the one `.npy`
//! file of the same array, `convert` writes stacks that dask loads, and
//! hostile stacks give the library's errors, never a panic.

mod common;

use common::{code, json, ndnpy, ndnpy_env, stderr, stdout};
use ndarray::{Array2, Array3, Axis, ShapeBuilder};
use ndnpy::stack::NpyStack;
use ndnpy::WriteNpy;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// The path as an argument.
fn s(p: &Path) -> String {
    p.display().to_string()
}

/// A 2-D float array with a NaN and infinities, so that `stats` has
/// something to count.
fn floats(rows: usize, cols: usize) -> Array2<f64> {
    let mut a = Array2::from_shape_fn((rows, cols), |(i, j)| (i * cols + j) as f64 * 0.5 - 7.0);
    a[[3, 1]] = f64::NAN;
    a[[rows - 1, 0]] = f64::INFINITY;
    a
}

/// `stats --json` without the names (which are the paths).
fn stats_of(args: &[&str], env: &[(&str, &str)]) -> Value {
    let out = ndnpy_env(args, env);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let mut v = json(&out);
    for item in v.as_array_mut().expect("an array") {
        item.as_object_mut().expect("an object").remove("name");
    }
    v
}

/// Asserts that every reading command gives for `stack` what it gives for
/// the `.npy` file `file` of the same array (`extra` before the command,
/// such as `--stack`).
fn same_as_file(stack: &Path, file: &Path, extra: &[&str]) {
    let (st, fi) = (s(stack), s(file));
    let run = |args: &[&str]| {
        let all: Vec<&str> = extra.iter().chain(args).copied().collect();
        let out = ndnpy(&all);
        assert_eq!(code(&out), 0, "{all:?}: {}", stderr(&out));
        stdout(&out)
    };
    for shown in [
        vec!["show"],
        vec!["show", "--full"],
        vec!["show", "--slice", "3:20, 1"],
        vec!["show", "--slice", "-1"],
        vec!["show", "--slice", "..., 1"],
    ] {
        let mut a = shown.clone();
        a.push(&st);
        let mut b = shown.clone();
        b.push(&fi);
        assert_eq!(run(&a), run(&b), "{shown:?}");
    }
    // Stats in chunks far smaller than a shard's block, so that chunks
    // straddle shard boundaries, and in the default chunks.
    for env in [&[("NDNPY_CHUNK_BYTES", "24")][..], &[]] {
        let a: Vec<&str> = extra
            .iter()
            .copied()
            .chain(["--json", "stats", &st])
            .collect();
        let b: Vec<&str> = extra
            .iter()
            .copied()
            .chain(["--json", "stats", &fi])
            .collect();
        assert_eq!(stats_of(&a, env), stats_of(&b, env));
    }
    let d = run(&["diff", &st, &fi]);
    assert!(d.ends_with(": equal\n"), "{d}");
    let out = ndnpy(
        &extra
            .iter()
            .copied()
            .chain(["check", &st])
            .collect::<Vec<_>>(),
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stderr(&out).contains("checked 1 files: 0 with problems"));
    // `info`: the header facts of the whole array.
    let info = |p: &str| {
        let out = ndnpy(
            &extra
                .iter()
                .copied()
                .chain(["--json", "info", p])
                .collect::<Vec<_>>(),
        );
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        json(&out)[0].clone()
    };
    let (a, b) = (info(&st), info(&fi));
    for k in [
        "dtype",
        "shape",
        "order",
        "elements",
        "data_bytes",
        "present_bytes",
        "pickled",
    ] {
        assert_eq!(a[k], b[k], "{k}");
    }
    assert!(b.get("stack").is_none());
}

#[test]
fn a_library_stack_reads_as_its_single_file_in_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let a = floats(37, 5);
    let file = dir.path().join("a.npy");
    a.write_npy(&file).unwrap();
    let rows = dir.path().join("rows");
    NpyStack::create(&rows, &a, 8).unwrap(); // 8 * 4 + 5
    same_as_file(&rows, &file, &[]);
    // Along axis 1: every run of the outer axis crosses every shard.
    let cols = dir.path().join("cols");
    NpyStack::create_along(&cols, &a, 1, 2).unwrap(); // 2 + 2 + 1 columns
    same_as_file(&cols, &file, &[]);
    // A 3-d integer array along its middle axis.
    let b = Array3::from_shape_fn((3, 11, 4), |(i, j, k)| (i * 100 + j * 10 + k) as i32 - 50);
    let file3 = dir.path().join("b.npy");
    b.write_npy(&file3).unwrap();
    let mid = dir.path().join("mid");
    NpyStack::create_along(&mid, &b, 1, 3).unwrap();
    same_as_file(&mid, &file3, &[]);

    // More shards than the reader keeps open, each visited in every row.
    let wide = Array2::from_shape_fn((6, 150), |(i, j)| (i * 1000 + j) as u16);
    let wide_file = dir.path().join("wide.npy");
    wide.write_npy(&wide_file).unwrap();
    let many = dir.path().join("many");
    NpyStack::create_along(&many, &wide, 1, 1).unwrap();
    assert_eq!(NpyStack::open(&many).unwrap().shards().len(), 150);
    same_as_file(&many, &wide_file, &[]);

    // `info` says how it is stored, in text and JSON.
    let out = ndnpy(&["--json", "info", &s(&rows)]);
    let v = &json(&out)[0];
    assert_eq!(v["stack"]["shards"], 5);
    assert_eq!(v["stack"]["axis"], 0);
    assert_eq!(v["stack"]["kind"], "dask");
    assert_eq!(v["shape"], serde_json::json!([37, 5]));
    let out = ndnpy(&["info", &s(&cols)]);
    assert!(
        stdout(&out).contains("  stack:      3 shards, stacked along axis 1\n"),
        "{}",
        stdout(&out)
    );
    assert!(stdout(&out).contains("  shape:      (37, 5) (185 elements)\n"));
}

#[test]
fn a_plain_folder_is_a_stack_only_with_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let a = floats(23, 3);
    let file = dir.path().join("a.npy");
    a.write_npy(&file).unwrap();
    let plain = dir.path().join("shards");
    std::fs::create_dir(&plain).unwrap();
    // Natural order: shard_2 before shard_10, whatever the names sort to.
    let cuts = [(0, 5, "shard_2"), (5, 6, "shard_10"), (6, 23, "shard_11")];
    for (from, to, name) in cuts {
        a.slice_axis(Axis(0), (from..to).into())
            .to_owned()
            .write_npy(plain.join(format!("{name}.npy")))
            .unwrap();
    }
    let p = s(&plain);
    // Without --stack a folder is what it was: refused where a file is
    // wanted, walked by `check`.
    for cmd in ["info", "show", "stats"] {
        let out = ndnpy(&[cmd, &p]);
        assert_eq!(code(&out), 2, "{cmd}");
        assert!(stderr(&out).contains("is a directory"), "{}", stderr(&out));
    }
    let out = ndnpy(&["check", &p]);
    assert_eq!(code(&out), 0);
    assert!(stderr(&out).contains("checked 3 files: 0 with problems"));
    // With it, one array.
    same_as_file(&plain, &file, &["--stack"]);
    let v = json(&ndnpy(&["--stack", "--json", "info", &p]))[0].clone();
    assert_eq!(v["stack"]["kind"], "folder");
    assert_eq!(v["stack"]["shards"], 3);
    // Shards that do not continue each other are the library's error.
    Array2::<f64>::zeros((2, 4))
        .write_npy(plain.join("shard_12.npy"))
        .unwrap();
    for cmd in ["info", "show", "stats"] {
        let out = ndnpy(&["--stack", cmd, &p]);
        assert_eq!(code(&out), 2, "{cmd}");
        assert!(stderr(&out).contains("shard_12.npy"), "{}", stderr(&out));
    }
    let out = ndnpy(&["--stack", "check", &p]);
    assert_eq!(code(&out), 1);
    assert!(stdout(&out).contains("shard_12.npy"), "{}", stdout(&out));
}

#[test]
fn convert_writes_a_stack_and_reads_one_into_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let a = floats(29, 4);
    let file = dir.path().join("a.npy");
    a.write_npy(&file).unwrap();
    let st = dir.path().join("st");
    let out = ndnpy(&["convert", "--shard-rows", "10", &s(&file), &s(&st)]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let stack = NpyStack::open(&st).unwrap();
    assert!(stack.is_dask());
    let lens: Vec<usize> = stack.shards().iter().map(|x| x.len()).collect();
    assert_eq!(lens, [10, 10, 9]);
    let back: Array2<f64> = stack.read().unwrap();
    assert!(back.iter().zip(&a).all(|(x, y)| x.to_bits() == y.to_bits()));
    // Back into one .npy (bytes equal to the original) and an .npz member.
    let whole = dir.path().join("whole.npy");
    let out = ndnpy(&["convert", &s(&st), &s(&whole)]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        std::fs::read(&whole).unwrap(),
        std::fs::read(&file).unwrap()
    );
    let npz = dir.path().join("whole.npz");
    let out = ndnpy(&["convert", &s(&st), &s(&npz)]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = ndnpy(&["diff", &s(&st), &format!("{}:st", npz.display())]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    // --shard-size: as many 32-byte rows as fit in 100 bytes.
    let sized = dir.path().join("sized");
    let out = ndnpy(&[
        "--json",
        "convert",
        "--shard-size",
        "100",
        &s(&file),
        &s(&sized),
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(json(&out)["written"].as_array().unwrap().len(), 11); // 10 shards + info
    assert_eq!(NpyStack::open(&sized).unwrap().shards()[0].len(), 3);
    // Streamed in blocks: a small --shard-rows over many blocks is the same.
    let big = Array2::from_shape_fn((300_000, 3), |(i, j)| (i * 3 + j) as u32);
    let big_file = dir.path().join("big.npy");
    big.write_npy(&big_file).unwrap();
    let big_st = dir.path().join("big_st");
    let out = ndnpy(&[
        "convert",
        "--shard-rows",
        "70000",
        &s(&big_file),
        &s(&big_st),
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        NpyStack::open(&big_st)
            .unwrap()
            .read::<u32, ndarray::Ix2>()
            .unwrap(),
        big
    );
    // Fortran-order input, strings, an archive's member.
    let f = dir.path().join("f.npy");
    let mut fa = Array2::<f64>::zeros((29, 4).f());
    fa.assign(&a);
    fa.write_npy(&f).unwrap();
    assert_eq!(json(&ndnpy(&["--json", "info", &s(&f)]))[0]["order"], "F");
    let fs = dir.path().join("fs");
    assert_eq!(
        code(&ndnpy(&["convert", "--shard-rows", "4", &s(&f), &s(&fs)])),
        0
    );
    assert_eq!(code(&ndnpy(&["diff", &s(&fs), &s(&file)])), 0);
    // Strings are refused (the library writer sizes each shard by its own
    // longest string), saying so; nothing is written.
    let words = ndarray::array!["a".to_owned(), "bcd".into(), "".into(), "x".into()];
    let wf = dir.path().join("w.npy");
    words.write_npy(&wf).unwrap();
    let ws = dir.path().join("ws");
    let out = ndnpy(&["convert", "--shard-rows", "2", &s(&wf), &s(&ws)]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("cannot be written as a stack yet"),
        "{}",
        stderr(&out)
    );
    assert!(!ws.exists());
    let ms = dir.path().join("ms");
    let member = format!("{}:st", npz.display());
    let out = ndnpy(&["convert", "--shard-rows", "5", &member, &s(&ms)]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(code(&ndnpy(&["diff", &s(&ms), &s(&file)])), 0);

    // Refused, with nothing written: an existing target (the library's
    // rule), a 0-d array, other options, a dtype the writer cannot take.
    let out = ndnpy(&["convert", "--shard-rows", "10", &s(&file), &s(&st)]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    let zero = dir.path().join("zero.npy");
    ndarray::arr0(1.5f64).write_npy(&zero).unwrap();
    let out = ndnpy(&[
        "convert",
        "--shard-rows",
        "1",
        &s(&zero),
        &s(&dir.path().join("z")),
    ]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("0-dimensional"), "{}", stderr(&out));
    let out = ndnpy(&[
        "convert",
        "--shard-rows",
        "1",
        "--compress",
        &s(&file),
        &s(&dir.path().join("c")),
    ]);
    assert_eq!(code(&out), 2);
    let out = ndnpy(&[
        "convert",
        "--shard-rows",
        "0",
        &s(&file),
        &s(&dir.path().join("n")),
    ]);
    assert_eq!(code(&out), 2);
    for name in ["z", "c", "n"] {
        assert!(!dir.path().join(name).exists(), "{name}");
    }
    let stray: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with('.'))
        .collect();
    assert!(stray.is_empty(), "{stray:?}");
}

#[test]
fn hostile_stacks_give_the_library_errors() {
    let dir = tempfile::tempdir().unwrap();
    let a = floats(12, 3);
    let make = |name: &str| {
        let p = dir.path().join(name);
        NpyStack::create(&p, &a, 4).unwrap();
        p
    };
    let other = dir.path().join("other.npy");
    a.write_npy(&other).unwrap();
    // Each hostile stack, and words its error must hold.
    let missing = make("missing");
    std::fs::remove_file(missing.join("1.npy")).unwrap();
    let lying_shape = make("lying_shape");
    Array2::<f64>::zeros((5, 3))
        .write_npy(lying_shape.join("2.npy"))
        .unwrap();
    let lying_dtype = make("lying_dtype");
    Array2::<f32>::zeros((4, 3))
        .write_npy(lying_dtype.join("0.npy"))
        .unwrap();
    let garbage = make("garbage");
    std::fs::write(garbage.join("info"), b"not a pickle at all").unwrap();
    let truncated = make("truncated");
    let shard = truncated.join("1.npy");
    let bytes = std::fs::read(&shard).unwrap();
    std::fs::write(&shard, &bytes[..bytes.len() - 9]).unwrap();
    let cases = [
        (&missing, "1.npy"),
        (&lying_shape, "info says"),
        (&lying_dtype, "<f4"),
        (&garbage, "info"),
        (&truncated, "truncated"),
    ];
    for (stack, words) in cases {
        let p = s(stack);
        let o = s(&other);
        let target = dir.path().join("never.npy");
        let t = s(&target);
        for args in [
            vec!["info", &p],
            vec!["show", &p],
            vec!["stats", &p],
            vec!["diff", &p, &o],
            vec!["convert", &p, &t],
        ] {
            let out = ndnpy(&args);
            assert_eq!(code(&out), 2, "{args:?}: {}", stderr(&out));
            let err = stderr(&out).to_lowercase();
            assert!(err.contains(&words.to_lowercase()), "{args:?}: {err}");
            assert!(!target.exists());
        }
        let out = ndnpy(&["check", &p]);
        assert_eq!(code(&out), 1, "{}", stderr(&out));
        assert!(
            stdout(&out).to_lowercase().contains(&words.to_lowercase()),
            "{}",
            stdout(&out)
        );
        let out = ndnpy(&["--json", "check", &p]);
        assert_eq!(json(&out)[0]["ok"], false);
    }
}

/// The `file://` URL of a local path.
fn url(p: &Path) -> std::path::PathBuf {
    std::path::PathBuf::from(format!("file://{}", p.display()))
}

#[test]
fn stacks_at_urls_read_as_their_single_file_in_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let a = floats(37, 5);
    let file = dir.path().join("a.npy");
    a.write_npy(&file).unwrap();
    let rows = dir.path().join("rows");
    NpyStack::create(&rows, &a, 8).unwrap();
    same_as_file(&url(&rows), &file, &[]);
    // With a trailing slash too.
    let slashed = std::path::PathBuf::from(format!("{}/", url(&rows).display()));
    same_as_file(&slashed, &file, &[]);
    let cols = dir.path().join("cols");
    NpyStack::create_along(&cols, &a, 1, 2).unwrap();
    same_as_file(&url(&cols), &file, &[]);
    let v = json(&ndnpy(&["--json", "info", &s(&url(&cols))]))[0].clone();
    assert_eq!(v["stack"]["shards"], 3);
    assert_eq!(v["stack"]["axis"], 1);
    assert_eq!(v["stack"]["kind"], "dask");
    // A plain folder at a URL: a stack with --stack.
    let plain = dir.path().join("plain");
    std::fs::create_dir(&plain).unwrap();
    for (from, to, name) in [(0, 5, "shard_2"), (5, 6, "shard_10"), (6, 37, "shard_11")] {
        a.slice_axis(Axis(0), (from..to).into())
            .to_owned()
            .write_npy(plain.join(format!("{name}.npy")))
            .unwrap();
    }
    same_as_file(&url(&plain), &file, &["--stack"]);
    let v = json(&ndnpy(&["--stack", "--json", "info", &s(&url(&plain))]))[0].clone();
    assert_eq!(v["stack"]["kind"], "folder");
    // `convert` of a stack URL into one file.
    let out_file = dir.path().join("whole.npy");
    let out = ndnpy(&["convert", &s(&url(&rows)), &s(&out_file)]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        std::fs::read(&out_file).unwrap(),
        std::fs::read(&file).unwrap()
    );
    // Hostile stacks at URLs: the library's errors.
    let missing = dir.path().join("missing");
    NpyStack::create(&missing, &a, 8).unwrap();
    std::fs::remove_file(missing.join("2.npy")).unwrap();
    let lying = dir.path().join("lying");
    NpyStack::create(&lying, &a, 8).unwrap();
    Array2::<f32>::zeros((8, 5))
        .write_npy(lying.join("0.npy"))
        .unwrap();
    for (stack, words) in [(&missing, "2.npy"), (&lying, "<f4")] {
        let p = s(&url(stack));
        for args in [vec!["info", &p], vec!["show", &p], vec!["stats", &p]] {
            let out = ndnpy(&args);
            assert_eq!(code(&out), 2, "{args:?}: {}", stderr(&out));
            assert!(stderr(&out).contains(words), "{args:?}: {}", stderr(&out));
        }
        let out = ndnpy(&["check", &p]);
        assert_eq!(code(&out), 1, "{}", stderr(&out));
        assert!(stdout(&out).contains(words), "{}", stdout(&out));
    }
}

/// The Python with dask: `None` (saying why) where it has none, unless
/// `CI` is set, where dask is required.
fn dask_python(test: &str) -> Option<String> {
    let python = common::numpy_python(test)?;
    let probe = Command::new(&python)
        .args(["-c", "import dask.array"])
        .output()
        .expect("run python");
    if probe.status.success() {
        return Some(python);
    }
    let why = String::from_utf8_lossy(&probe.stderr).trim().to_owned();
    if std::env::var_os("CI").is_some() {
        panic!("{test}: dask is required where CI is set: {why}");
    }
    eprintln!("SKIPPED {test}: {python} has no dask ({why})");
    None
}

fn python(py: &str, dir: &Path, script: &str) {
    let out = Command::new(py)
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .output()
        .expect("run python");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn dask_stacks_read_equal_and_dask_reads_what_convert_writes() {
    let Some(py) = dask_python("dask_stacks_read_equal_and_dask_reads_what_convert_writes") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // What dask writes: along axis 0 and 1, uneven chunks, and the same
    // arrays saved whole by NumPy.
    python(
        &py,
        dir.path(),
        r#"
import numpy as np, dask.array as da
x = np.arange(2 * 17 * 5, dtype="<f4").reshape(17, 10) * 0.25 - 3
x[4, 4] = np.nan
np.save("x.npy", x)
da.to_npy_stack("d0", da.from_array(x, chunks=((5, 5, 4, 3), (10,))), axis=0)
da.to_npy_stack("d1", da.from_array(x, chunks=((17,), (3, 3, 4))), axis=1)
y = np.arange(3 * 8 * 2, dtype=">i8").reshape(3, 8, 2)
np.save("y.npy", y)
da.to_npy_stack("dy", da.from_array(y, chunks=(3, (2, 6), 2)), axis=1)
"#,
    );
    for (stack, file) in [("d0", "x.npy"), ("d1", "x.npy"), ("dy", "y.npy")] {
        same_as_file(&dir.path().join(stack), &dir.path().join(file), &[]);
    }
    let v = json(&ndnpy(&["--json", "info", &s(&dir.path().join("d1"))]))[0].clone();
    assert_eq!(
        (v["stack"]["shards"].clone(), v["stack"]["axis"].clone()),
        (3.into(), 1.into())
    );
    assert_eq!(v["dtype"], "<f4");

    // What convert writes, dask reads equal (and its chunks are the cut).
    let x = dir.path().join("x.npy");
    assert_eq!(
        code(&ndnpy(&[
            "convert",
            "--shard-rows",
            "6",
            &s(&x),
            &s(&dir.path().join("w"))
        ])),
        0
    );
    let y = dir.path().join("y.npy");
    assert_eq!(
        code(&ndnpy(&[
            "convert",
            "--shard-size",
            "40",
            &s(&y),
            &s(&dir.path().join("wy"))
        ])),
        0
    );
    let back = dir.path().join("back.npy");
    assert_eq!(
        code(&ndnpy(&["convert", &s(&dir.path().join("d1")), &s(&back)])),
        0
    );
    python(
        &py,
        dir.path(),
        r#"
import numpy as np, dask.array as da
x, y = np.load("x.npy"), np.load("y.npy")
w = da.from_npy_stack("w")
assert w.chunks == ((6, 6, 5), (10,)), w.chunks
assert w.dtype == x.dtype
assert np.array_equal(w.compute(), x, equal_nan=True)
wy = da.from_npy_stack("wy")
assert wy.chunks[0] == (1, 1, 1), wy.chunks
assert np.array_equal(wy.compute(), y)
b = np.load("back.npy")
assert b.dtype == x.dtype and np.array_equal(b, x, equal_nan=True)
"#,
    );
    // A lying info from dask's own pickle: chunks that sum past the shards.
    python(
        &py,
        dir.path(),
        r#"
import pickle, shutil, numpy as np
shutil.copytree("d0", "liar")
with open("liar/info", "wb") as f:
    pickle.dump({"chunks": ((5, 5, 4, 9), (10,)), "dtype": np.dtype("<f4"), "axis": 0}, f)
"#,
    );
    // Object shards: refused as one array (their pickles do not concatenate).
    python(
        &py,
        dir.path(),
        "import numpy as np, os\nos.mkdir('objs')\nnp.save('objs/0.npy', np.array([1, 'a'], dtype=object))",
    );
    let objs = s(&dir.path().join("objs"));
    let out = ndnpy(&["--stack", "show", &objs]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("object arrays"), "{}", stderr(&out));
    assert_eq!(code(&ndnpy(&["--stack", "check", &objs])), 1);
    let out = ndnpy(&["show", &s(&dir.path().join("liar"))]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("info says"), "{}", stderr(&out));
}
