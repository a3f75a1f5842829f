//! Empty arrays with a huge dimension beside the zero cost nothing: every
//! command answers at once (`show` as NumPy's repr does), and shapes past
//! NumPy's limits are errors, never an abort.

mod common;

use common::{code, ndnpy, stdout};

/// A version 1.0 `.npy` with this header and no data.
fn npy(descr: &str, shape: &str, fortran: bool) -> Vec<u8> {
    let order = if fortran { "True" } else { "False" };
    let mut h =
        format!("{{'descr': {descr}, 'fortran_order': {order}, 'shape': {shape}, }}").into_bytes();
    while (10 + h.len() + 1) % 64 != 0 {
        h.push(b' ');
    }
    h.push(b'\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(h.len() as u16).to_le_bytes());
    bytes.extend_from_slice(&h);
    bytes
}

#[test]
fn empty_arrays_beside_huge_dimensions() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "'<f8'",
            "(1099511627776, 0)",
            false,
            Some("array([], shape=(1099511627776, 0), dtype=float64)"),
        ),
        (
            "'<f8'",
            "(0, 1099511627776)",
            true,
            Some("array([], shape=(0, 1099511627776), dtype=float64)"),
        ),
        ("'|O'", "(1099511627776, 0)", false, None),
        (
            "[('a', '<i4'), ('b', '<f8')]",
            "(0, 1099511627776)",
            false,
            None,
        ),
        (
            "'<f8'",
            "(4611686018427387904, 4611686018427387904, 0)",
            false,
            None,
        ),
    ];
    for (i, (descr, shape, fortran, repr)) in cases.iter().enumerate() {
        let path = dir.path().join(format!("e{i}.npy"));
        std::fs::write(&path, npy(descr, shape, *fortran)).unwrap();
        let p = path.to_str().unwrap();
        for args in [
            vec!["show", p],
            vec!["stats", p],
            vec!["info", p],
            vec!["check", "--allow-pickle", p],
            vec!["diff", p, p],
        ] {
            let out = ndnpy(&args);
            // 0 or 1, never an abort (134) or a panic (101, checked by `ndnpy`).
            assert!(
                matches!(code(&out), 0 | 1),
                "{args:?}: {}",
                common::stderr(&out)
            );
        }
        if let Some(repr) = repr {
            assert_eq!(stdout(&ndnpy(&["show", p])).trim(), *repr);
        }
    }
}

/// Values of no bytes are limited per header, and across an archive where
/// a command holds every member (diff against a frame, Parquet): 24
/// members of 2**20 `<U0` each fit in a few KiB. The limit is a flag.
#[test]
fn zero_size_values_are_limited_and_the_limit_is_a_flag() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("zs.npy");
    std::fs::write(&path, npy("'<U0'", "(2097152,)", false)).unwrap();
    let p = path.to_str().unwrap();
    let out = ndnpy(&["show", p]);
    assert_eq!(code(&out), 1);
    let said = common::stderr(&out);
    assert!(said.contains("--max-zero-size-elements"), "{said}");
    assert!(!said.contains("ReadOptions"), "{said}");
    let out = ndnpy(&["--max-zero-size-elements", "3000000", "info", p]);
    assert_eq!(code(&out), 0, "{}", common::stderr(&out));
}
