//! `--as` and `info`'s hint on files `ml_dtypes` + `np.save` wrote
//! (`fixtures/ml_dtypes`, from `scripts/gen_ml_fixtures.py`): the values
//! printed, summarised, compared and converted are the ones ml_dtypes gives
//! as float32 (the fixtures' `*.f32.npy`).

mod common;

use common::{code, json, ndnpy, stderr, stdout};

const DIR: &str = "fixtures/ml_dtypes";

#[test]
fn info_says_what_raw_items_probably_are() {
    let out = ndnpy(&["info", &format!("{DIR}/bf16.npy")]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out).contains(
            "  probably:   bfloat16 (ml_dtypes saves it as 2-byte void): read with --as bfloat16\n"
        ),
        "{}",
        stdout(&out)
    );
    let v = json(&ndnpy(&["--json", "info", &format!("{DIR}/f8e5m2.npy")]))[0].clone();
    assert_eq!(v["dtype"], "<f1");
    assert!(v["probably"].as_str().unwrap().starts_with("float8_e5m2"));
    let v = json(&ndnpy(&["--json", "info", &format!("{DIR}/bf16.npz")]))[0].clone();
    let members = v["members"].as_array().unwrap();
    assert!(members[0]["probably"]
        .as_str()
        .unwrap()
        .starts_with("bfloat16"));
    assert!(members[1]["probably"].is_null());
}

#[test]
fn every_reading_command_sees_the_values_jax_sees() {
    for (raw, as_type, f32s) in [
        ("bf16.npy", "bfloat16", "bf16.f32.npy"),
        ("bf16_named.npy", "bfloat16", "bf16_named.f32.npy"),
        ("bf16_2d_f.npy", "bfloat16", "bf16_2d_f.f32.npy"),
        ("f8e4m3fn.npy", "float8_e4m3fn", "f8e4m3fn.f32.npy"),
        ("f8e5m2.npy", "float8_e5m2", "f8e5m2.f32.npy"),
    ] {
        let raw = format!("{DIR}/{raw}");
        let f32s = format!("{DIR}/{f32s}");
        // show: the repr of the float32 values.
        let ours = ndnpy(&["--as", as_type, "show", &raw]);
        let theirs = ndnpy(&["show", &f32s]);
        assert_eq!(code(&ours), 0, "{raw}: {}", stderr(&ours));
        assert_eq!(stdout(&ours), stdout(&theirs), "{raw}");
        // stats and diff.
        let ours = json(&ndnpy(&["--json", "--as", as_type, "stats", &raw]));
        let theirs = json(&ndnpy(&["--json", "stats", &f32s]));
        for key in ["count", "min", "max", "mean", "std", "nan"] {
            let (a, b) = (&ours[0]["columns"][0][key], &theirs[0]["columns"][0][key]);
            assert_eq!(a, b, "{raw} {key}");
        }
        let out = ndnpy(&["--as", as_type, "diff", &raw, &f32s]);
        assert_eq!(code(&out), 0, "{raw}: {}{}", stdout(&out), stderr(&out));
        // convert: a float32 file equal to ml_dtypes's float32 values.
        let dir = tempfile::tempdir().unwrap();
        let out_path = dir.path().join("out.npy");
        let out = ndnpy(&["--as", as_type, "convert", &raw, out_path.to_str().unwrap()]);
        assert_eq!(code(&out), 0, "{raw}: {}", stderr(&out));
        let out = ndnpy(&["diff", out_path.to_str().unwrap(), &f32s]);
        assert_eq!(code(&out), 0, "{raw}: {}", stdout(&out));
    }
    // Without --as the raw items stay raw; other arrays ignore --as.
    let out = ndnpy(&["show", &format!("{DIR}/bf16.npy")]);
    assert!(
        stdout(&out).starts_with("array([b'\\x80\\x3F'"),
        "{}",
        stdout(&out)
    );
    let out = ndnpy(&[
        "--as",
        "bfloat16",
        "show",
        "--key",
        "b",
        &format!("{DIR}/bf16.npz"),
    ]);
    assert_eq!(code(&out), 0);
    let out = ndnpy(&[
        "--as",
        "bfloat16",
        "show",
        "--key",
        "w",
        &format!("{DIR}/bf16_compressed.npz"),
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out).contains(":w:\narray([ 1.0000000e+00, -2.5000000e+00"),
        "{}",
        stdout(&out)
    );
}

/// `<f1` (only ml_dtypes writes it) is float8_e5m2 even without `--as`:
/// two files that differ compare as different, never as NaN = NaN.
#[test]
fn f1_is_read_as_float8_e5m2() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = std::fs::read(common::root().join(DIR).join("f8e5m2.npy")).unwrap();
    let at = bytes.len() - 100;
    bytes[at] ^= 1;
    let other = dir.path().join("other.npy");
    std::fs::write(&other, &bytes).unwrap();
    let out = ndnpy(&[
        "diff",
        &format!("{DIR}/f8e5m2.npy"),
        other.to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    assert!(
        stdout(&out).contains("1 of 256 elements differ"),
        "{}",
        stdout(&out)
    );
}

/// `--as` twice, one format per item size: bfloat16 and float8 files read
/// in one run; `<f1` stays float8_e5m2 whatever 1-byte format is named.
#[test]
fn as_given_twice_reads_each_item_size_as_its_format() {
    let both = ["--as", "bfloat16", "--as", "float8_e4m3fn"];
    for (raw, f32s) in [
        ("bf16.npy", "bf16.f32.npy"),
        ("f8e4m3fn.npy", "f8e4m3fn.f32.npy"),
    ] {
        let raw = format!("{DIR}/{raw}");
        let f32s = format!("{DIR}/{f32s}");
        let ours = ndnpy(&[&both[..], &["show", &raw]].concat());
        let theirs = ndnpy(&["show", &f32s]);
        assert_eq!(code(&ours), 0, "{raw}: {}", stderr(&ours));
        assert_eq!(stdout(&ours), stdout(&theirs), "{raw}");
    }
    // '<f1' is float8_e5m2: --as float8_e4m3fn leaves it as read without
    // --as (not decoded as e4m3fn, whose values differ).
    let f1 = format!("{DIR}/f8e5m2.npy");
    let ours = ndnpy(&[&both[..], &["show", &f1]].concat());
    assert_eq!(stdout(&ours), stdout(&ndnpy(&["show", &f1])));
    // Two formats of one size: which applies is not said, so refused.
    let out = ndnpy(&[
        "--as",
        "float8_e4m3fn",
        "--as",
        "float8_e5m2",
        "show",
        &format!("{DIR}/f8e4m3fn.npy"),
    ]);
    assert_eq!(code(&out), 2, "{}", stdout(&out));
    assert!(
        stderr(&out).contains("one format per item size"),
        "{}",
        stderr(&out)
    );
}

/// bfloat16 saved byte-swapped is `'>V2'` (what `np.save` writes for
/// `a.astype(a.dtype.newbyteorder('>'))`); the parsed dtype cannot say so,
/// so `--as` reads the header's own text and swaps: the same values as the
/// little-endian file, in a `.npy` and in stored and deflated members.
#[test]
fn big_endian_bfloat16_reads_as_its_values() {
    let dir = tempfile::tempdir().unwrap();
    // 1.5, -2, 3.25 as bfloat16 bits.
    let bits: [u16; 3] = [0x3fc0, 0xc000, 0x4050];
    let npy = |order: char| {
        let text = format!("{{'descr': '{order}V2', 'fortran_order': False, 'shape': (3,), }}");
        let mut h = text.into_bytes();
        while (10 + h.len() + 1) % 64 != 0 {
            h.push(b' ');
        }
        h.push(b'\n');
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        bytes.extend_from_slice(&(h.len() as u16).to_le_bytes());
        bytes.extend_from_slice(&h);
        for b in bits {
            bytes.extend_from_slice(&if order == '>' {
                b.to_be_bytes()
            } else {
                b.to_le_bytes()
            });
        }
        bytes
    };
    let (le, be) = (dir.path().join("le.npy"), dir.path().join("be.npy"));
    std::fs::write(&le, npy('<')).unwrap();
    std::fs::write(&be, npy('>')).unwrap();
    let show = |p: &std::path::Path| {
        common::stdout(&common::ndnpy(&[
            "--as",
            "bfloat16",
            "show",
            p.to_str().unwrap(),
        ]))
    };
    assert_eq!(show(&le), "array([ 1.5 , -2.  ,  3.25], dtype=float32)\n");
    assert_eq!(show(&be), show(&le));
    // Members of an archive another tool wrote (ndnpy's convert, as
    // NumPy's np.save, spells the dtype '|V2').
    for method in [
        zip::CompressionMethod::Stored,
        zip::CompressionMethod::Deflated,
    ] {
        let npz = dir.path().join(format!("be{method:?}.npz"));
        let mut w = zip::ZipWriter::new(std::fs::File::create(&npz).unwrap());
        let options = zip::write::SimpleFileOptions::default().compression_method(method);
        w.start_file("be.npy", options).unwrap();
        std::io::Write::write_all(&mut w, &npy('>')).unwrap();
        w.finish().unwrap();
        let out = show(&npz);
        assert!(
            out.ends_with(":be:\narray([ 1.5 , -2.  ,  3.25], dtype=float32)\n"),
            "{method:?}: {out}"
        );
    }
}
