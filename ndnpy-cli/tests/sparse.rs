//! `info` names `scipy.sparse.save_npz` archives (`fixtures/sparse`).

mod common;

use common::{code, json, ndnpy, stdout};

#[test]
fn info_names_sparse_archives() {
    let out = ndnpy(&["info", "fixtures/sparse/csr.npz"]);
    assert_eq!(code(&out), 0);
    assert!(
        stdout(&out).contains("  scipy.sparse csr matrix, shape (4, 6), 7 stored entries\n"),
        "{}",
        stdout(&out)
    );
    // nnz as scipy counts it: DIA's in-range diagonal entries, BSR's
    // whole blocks.
    for (name, nnz) in [("dia", 15), ("bsr", 18), ("coo", 7), ("csc", 7)] {
        let v = json(&ndnpy(&[
            "--json",
            "info",
            &format!("fixtures/sparse/{name}.npz"),
        ]));
        assert_eq!(v[0]["sparse"]["format"], name);
        assert_eq!(v[0]["sparse"]["nnz"], nnz, "{name}");
        assert_eq!(v[0]["sparse"]["shape"], serde_json::json!([4, 6]));
    }
    let v = json(&ndnpy(&["--json", "info", "fixtures/ml_dtypes/bf16.npz"]));
    assert!(v[0]["sparse"].is_null());
    let out = ndnpy(&["info", "fixtures/sparse/bad/shape_negative.npz"]);
    assert!(
        stdout(&out).contains("  scipy.sparse archive, but not a valid scipy.sparse archive: `shape` holds -4, a negative index or size\n"),
        "{}",
        stdout(&out)
    );
}
