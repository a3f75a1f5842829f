//! `ndnpy info` and `ndnpy convert` on pandas Parquet files (cargo feature
//! `parquet`): what `info` shows is checked against what pandas read from
//! the fixtures (`fixtures/parquet/expected.json`, written by
//! `scripts/gen_parquet_fixtures.py`); conversions against the library.
#![cfg(feature = "parquet")]

mod common;

use common::{code, json, ndnpy, root, stderr, stdout};
use ndnpy::NpzReader;
use ndnpy_parquet::Frame;
use serde_json::Value;
use std::path::PathBuf;

fn fixture(name: &str) -> PathBuf {
    root().join(format!("fixtures/parquet/valid/{name}.parquet"))
}

/// A column of `info --json` against the pandas dtype pandas reads.
fn check_column(what: &str, got: &Value, want: &Value) {
    assert_eq!(got["name"], want["name"], "{what}: name");
    let dtype = want["dtype"].as_str().unwrap();
    let npz = got["npz_dtype"].as_str().unwrap();
    if let Some(rest) = dtype.strip_prefix("datetime64[") {
        let rest = rest.trim_end_matches(']');
        let (unit, tz) = match rest.split_once(", ") {
            Some((u, tz)) => (u, Some(tz)),
            None => (rest, None),
        };
        assert_eq!(npz, format!("<M8[{unit}]"), "{what}: npz dtype");
        assert_eq!(got["timezone"].as_str(), tz, "{what}: time zone");
        let pt = if tz.is_some() {
            "datetimetz"
        } else {
            "datetime"
        };
        // Files without pandas metadata have no pandas_type: the default.
        assert_eq!(got["pandas_type"], pt, "{what}: pandas_type");
    } else if let Some(unit) = dtype.strip_prefix("timedelta64[") {
        assert_eq!(npz, format!("<m8[{unit}"), "{what}: npz dtype");
    } else if dtype == "category" {
        assert_eq!(got["pandas_type"], "categorical", "{what}");
        assert!(got["categories"].as_u64().unwrap() > 0, "{what}");
        assert!(npz.starts_with("|i1"), "{what}: codes {npz}");
    } else if dtype == "str" || dtype == "string" {
        // numpy_type: str, string, or object for object columns of strings.
        assert!(npz.starts_with("<U"), "{what}: {npz}");
    } else if dtype == "object" {
        assert!(npz.starts_with("|S"), "{what}: {npz}");
        assert_eq!(got["pandas_type"], "bytes", "{what}");
    } else {
        // Numbers: pandas' dtype is the numpy_type (Int64, boolean, ...
        // for the nullable ones), or float64 for NumPy ints with missing
        // values when the file has no pandas metadata.
        let nt = got["numpy_type"].as_str().unwrap();
        assert!(
            nt == dtype || (dtype == "float64" && got["missing"].as_u64().unwrap() > 0),
            "{what}: numpy_type {nt} for pandas dtype {dtype}"
        );
    }
    let missing = want["values"]
        .as_array()
        .map(|v| v.iter().filter(|x| x.is_null()).count());
    if let (Some(m), false) = (missing, dtype.starts_with("float")) {
        assert_eq!(got["missing"].as_u64(), Some(m as u64), "{what}: missing");
    }
}

#[test]
fn info_shows_columns_pandas_types_and_index() {
    let text = std::fs::read_to_string(root().join("fixtures/parquet/expected.json")).unwrap();
    let exp: Value = serde_json::from_str(&text).unwrap();
    let files = exp["files"].as_object().unwrap();
    let paths: Vec<PathBuf> = files.keys().map(|n| fixture(n)).collect();
    let mut args = vec!["--json".into(), "info".into()];
    args.extend(paths.iter().map(|p| p.clone().into_os_string()));
    let out = ndnpy(&args);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let got = json(&out);
    let got = got.as_array().unwrap();
    assert_eq!(got.len(), files.len());
    for ((name, want), g) in files.iter().zip(got) {
        assert_eq!(g["format"], "parquet", "{name}");
        assert_eq!(g["rows"], want["len"], "{name}: rows");
        let cols = g["columns"].as_array().unwrap();
        let want_cols = want["columns"].as_array().unwrap();
        assert_eq!(cols.len(), want_cols.len(), "{name}: columns");
        for (c, w) in cols.iter().zip(want_cols) {
            check_column(name, c, w);
        }
        let (gi, wi) = (&g["index"], &want["index"]);
        assert_eq!(gi["kind"], wi["kind"], "{name}: index kind");
        if wi["kind"] == "range" {
            for k in ["start", "stop", "step", "name"] {
                assert_eq!(gi[k], wi[k], "{name}: index {k}");
            }
        } else {
            let levels = gi["levels"].as_array().unwrap();
            let want_levels = wi["levels"].as_array().unwrap();
            assert_eq!(levels.len(), want_levels.len(), "{name}: levels");
            for (l, w) in levels.iter().zip(want_levels) {
                check_column(name, l, w);
            }
        }
    }
    // The text form names the same things.
    let out = ndnpy(&["info", fixture("datetimes").to_str().unwrap()]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("Parquet (pandas DataFrame), 7 rows, 6 columns"),
        "{text}"
    );
    assert!(text.contains("tz=America/New_York"), "{text}");
    assert!(
        text.contains("index: RangeIndex(start=0, stop=7, step=1)"),
        "{text}"
    );
    let out = ndnpy(&["info", fixture("multiindex").to_str().unwrap()]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("index: MultiIndex, 2 level(s)"), "{text}");
}

/// Columns and index levels as comparable text.
fn parts(f: &Frame) -> Vec<String> {
    f.columns()
        .iter()
        .chain(f.index().levels())
        .map(|c| {
            format!(
                "{:?} {:?} {:?} {:?}",
                c.name(),
                c.values(),
                c.validity(),
                c.timezone()
            )
        })
        .collect()
}

#[test]
fn parquet_to_npz_and_back() {
    let dir = tempfile::tempdir().unwrap();
    for name in [
        "strings",
        "datetimes",
        "nullable",
        "row_groups",
        "multiindex",
        "range_index",
        "numeric",
        "categoricals",
        "categoricals_appearance_order",
    ] {
        let npz = dir.path().join(format!("{name}.npz"));
        let pq = dir.path().join(format!("{name}.parquet"));
        let out = ndnpy(&[
            "convert".as_ref(),
            fixture(name).as_os_str(),
            npz.as_os_str(),
        ]);
        assert_eq!(code(&out), 0, "{name}: {}", stderr(&out));
        let out = ndnpy(&["convert".as_ref(), npz.as_os_str(), pq.as_os_str()]);
        assert_eq!(code(&out), 0, "{name}: {}", stderr(&out));
        let original = Frame::read(fixture(name)).unwrap();
        let back = Frame::read(&pq).unwrap();
        assert_eq!(parts(&back), parts(&original), "{name}");
        assert_eq!(back.index(), original.index(), "{name}: index");
    }
    // The members NumPy users get (widths: the longest value, as pandas
    // counts them: 40, 1 and 3).
    let mut z = NpzReader::open(dir.path().join("strings.npz")).unwrap();
    let dtypes: Vec<String> = z
        .names()
        .iter()
        .map(|n| format!("{n} {}", z.read_any(n).unwrap().dtype()))
        .collect();
    assert_eq!(
        dtypes,
        [
            "s <U40",
            "s.valid |b1",
            "so <U1",
            "so.valid |b1",
            "by |S3",
            "by.valid |b1"
        ]
    );
}

#[test]
fn compress_deflates_members_and_parquet_rewrites() {
    let dir = tempfile::tempdir().unwrap();
    let npz = dir.path().join("c.npz");
    let out = ndnpy(&[
        "convert".as_ref(),
        "--compress".as_ref(),
        fixture("row_groups").as_os_str(),
        npz.as_os_str(),
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let info = json(&ndnpy(&[
        "--json".as_ref(),
        "info".as_ref(),
        npz.as_os_str(),
    ]));
    for m in info[0]["members"].as_array().unwrap() {
        assert_eq!(m["compression"], "deflate", "{m}");
    }
    // Parquet to Parquet: read and written again, the same frame.
    let pq = dir.path().join("again.pq");
    let out = ndnpy(&[
        "convert".as_ref(),
        fixture("categoricals_appearance_order").as_os_str(),
        pq.as_os_str(),
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        parts(&Frame::read(&pq).unwrap()),
        parts(&Frame::read(fixture("categoricals_appearance_order")).unwrap())
    );
}

#[test]
fn bad_parquet_input_and_usage() {
    let dir = tempfile::tempdir().unwrap();
    let npz = dir.path().join("x.npz");
    let bad = root().join("fixtures/parquet/hostile/range_length_mismatch.parquet");
    // Lying metadata: a problem found (1), named.
    let out = ndnpy(&["info".as_ref(), bad.as_os_str()]);
    assert_eq!(code(&out), 1);
    assert!(
        stderr(&out).contains("invalid pandas metadata"),
        "{}",
        stderr(&out)
    );
    let out = ndnpy(&["convert".as_ref(), bad.as_os_str(), npz.as_os_str()]);
    assert_eq!(code(&out), 1);
    assert!(!npz.exists());
    // Truncated: an invalid Parquet file (1).
    let bytes = std::fs::read(fixture("strings")).unwrap();
    let cut = dir.path().join("cut.parquet");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let out = ndnpy(&["info".as_ref(), cut.as_os_str()]);
    assert_eq!(code(&out), 1);
    assert!(
        stderr(&out).contains("invalid Parquet file"),
        "{}",
        stderr(&out)
    );
    // A missing file: 2.
    let out = ndnpy(&["info", "no/such/file.parquet"]);
    assert_eq!(code(&out), 2);
    // Usage: one input, no .npy output, no --split, .npy cannot become Parquet.
    let f = fixture("strings");
    let npy_out = dir.path().join("x.npy");
    for args in [
        vec![f.as_os_str(), f.as_os_str(), npz.as_os_str()],
        vec![f.as_os_str(), npy_out.as_os_str()],
        vec!["--split".as_ref(), f.as_os_str(), npz.as_os_str()],
    ] {
        let mut a = vec!["convert".as_ref()];
        a.extend(args);
        let out = ndnpy(&a);
        assert_eq!(code(&out), 2, "{a:?}: {}", stderr(&out));
    }
    let npy = root().join("fixtures/npy/valid");
    let one = std::fs::read_dir(&npy)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "npy"))
        .unwrap();
    let out = ndnpy(&[
        "convert".as_ref(),
        one.as_os_str(),
        dir.path().join("y.parquet").as_os_str(),
    ]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("made from an .npz archive"),
        "{}",
        stderr(&out)
    );
}

/// `show`, `stats`, `diff` and `check` read a frame as the arrays
/// `convert` writes (columns as members): the same output as on the
/// `.npz` that `convert` made, member for member.
#[test]
fn reading_commands_take_parquet_files() {
    let dir = tempfile::tempdir().unwrap();
    for name in [
        "numeric",
        "strings",
        "datetimes",
        "nullable",
        "categoricals",
        "multiindex",
    ] {
        let pq = fixture(name);
        let pq = pq.to_str().unwrap();
        let npz = dir.path().join(format!("{name}.npz"));
        let npz = npz.to_str().unwrap();
        assert_eq!(code(&ndnpy(&["convert", pq, npz])), 0, "{name}");
        for cmd in ["show", "stats"] {
            let a = ndnpy(&["--json", cmd, pq]);
            let b = ndnpy(&["--json", cmd, npz]);
            assert_eq!(code(&a), 0, "{cmd} {name}: {}", stderr(&a));
            let (mut a, mut b) = (json(&a), json(&b));
            for v in a
                .as_array_mut()
                .unwrap()
                .iter_mut()
                .chain(b.as_array_mut().unwrap())
            {
                let label = v["name"].as_str().unwrap();
                let member = label.rsplit_once(':').unwrap().1.to_owned();
                v["name"] = Value::String(member);
            }
            assert_eq!(a, b, "{cmd} {name}");
        }
        let out = ndnpy(&["diff", pq, npz]);
        assert_eq!(code(&out), 0, "diff {name}: {}", stderr(&out));
        let out = ndnpy(&["check", pq]);
        assert_eq!(code(&out), 0, "check {name}: {}", stderr(&out));
    }
    // --key picks one column; a frame against another differs.
    let out = ndnpy(&["show", "--key", "i8", fixture("numeric").to_str().unwrap()]);
    assert_eq!(code(&out), 0);
    assert!(
        common::stdout(&out).starts_with("array(["),
        "{}",
        common::stdout(&out)
    );
    let out = ndnpy(&[
        "diff",
        fixture("numeric").to_str().unwrap(),
        fixture("strings").to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 1);
    // A damaged frame is a problem for check, with the reader's reason.
    let bad = root().join("fixtures/parquet/hostile/not_json.parquet");
    let out = ndnpy(&["check", bad.to_str().unwrap()]);
    assert_eq!(code(&out), 1);
    assert!(
        common::stdout(&out).contains("invalid pandas metadata: not JSON"),
        "{}",
        common::stdout(&out)
    );
}

/// `info` reads only the footer: a file whose data pages are destroyed
/// describes itself as before (the reading commands then fail on it).
#[test]
fn info_reads_only_the_footer() {
    let path = fixture("row_groups");
    let bytes = std::fs::read(&path).unwrap();
    let footer_len =
        u32::from_le_bytes(bytes[bytes.len() - 8..bytes.len() - 4].try_into().unwrap()) as usize;
    let mut broken = bytes.clone();
    let pages_end = bytes.len() - 8 - footer_len;
    broken[4..pages_end].iter_mut().for_each(|b| *b = 0xA5);
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("pages_destroyed.parquet");
    std::fs::write(&bad, &broken).unwrap();
    let good = json(&ndnpy(&["--json", "info", path.to_str().unwrap()]));
    let out = ndnpy(&["--json", "info", bad.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let mut got = json(&out);
    got[0]["path"] = good[0]["path"].clone();
    assert_eq!(got, good);
    let out = ndnpy(&["check", bad.to_str().unwrap()]);
    assert_eq!(code(&out), 1, "{}", common::stdout(&out));
}

#[test]
fn stats_leave_out_what_the_validity_masks_mark_missing() {
    // pandas' `describe()` of the fixture: I64 [1, <NA>, 3, -4], U32
    // [1, 2, <NA>, 4], F [1.5, <NA>, 2.5, 3.0]: the fillers under the
    // masks are not values.
    let pq = fixture("nullable");
    let out = ndnpy(&["--json", "stats", pq.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let all = json(&out);
    let column = |name: &str| common::named(&all, name);
    for (name, min, max, mean) in [
        ("I64", -4.0, 3.0, 0.0),
        ("U32", 1.0, 4.0, 7.0 / 3.0),
        ("F", 1.5, 3.0, 7.0 / 3.0),
    ] {
        let v = column(name);
        assert_eq!(v["missing"], 1, "{name}");
        assert_eq!(v["mask"], format!("{name}.valid"));
        assert_eq!(v["shape"], serde_json::json!([4]));
        let c = &v["columns"][0];
        assert_eq!(c["count"], 3, "{name}");
        assert_eq!(c["min"].as_f64().unwrap(), min, "{name}");
        assert_eq!(c["max"].as_f64().unwrap(), max, "{name}");
        assert!((c["mean"].as_f64().unwrap() - mean).abs() < 1e-12, "{name}");
    }
    // The text output says so.
    let text = ndnpy(&["stats", pq.to_str().unwrap()]);
    assert!(stdout(&text).contains("missing=1 (by I64.valid; left out of the figures)"));
}
