//! `scipy.sparse.save_npz` archives (`fixtures/sparse`, written by SciPy:
//! `scripts/gen_sparse_fixtures.py`): every format read equal to SciPy's
//! `toarray()`, written back so that reading gives the same matrix (CI
//! also has `scipy.sparse.load_npz` read our writes:
//! `scripts/interop_sparse.py`), and lying archives refused with their
//! exact message.
#![cfg(feature = "sprs")]

use ndarray::{Array2, Ix2};
use ndnpy::sparse::{read_sparse_npz, Sparse, SparseFormat};
use ndnpy::{NpzReader, NpzWriter, ReadNpy};
use num_complex::Complex64;
use std::path::PathBuf;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/sparse")
        .join(name)
}

fn dense<N: ndnpy::Element>(name: &str) -> Array2<N> {
    Array2::<N>::read_npy(fixture(&format!("{name}.dense.npy"))).unwrap()
}

/// Reads, compares with SciPy's dense matrix, writes back (stored and
/// compressed) and reads again.
fn check<N>(name: &str, format: SparseFormat)
where
    N: ndnpy::types::LayoutElement
        + num_traits::Zero
        + std::ops::Add<Output = N>
        + PartialEq
        + std::fmt::Debug,
{
    let m = read_sparse_npz::<N, _>(fixture(&format!("{name}.npz"))).unwrap();
    assert_eq!(m.format(), format, "{name}");
    assert_eq!(m.to_dense(), dense::<N>(name), "{name}");
    let mut z = NpzReader::open(fixture(&format!("{name}.npz"))).unwrap();
    let info = z.sparse_info().unwrap().expect("a sparse archive");
    assert_eq!(info.shape, [m.shape().0, m.shape().1], "{name}");
    for compressed in [false, true] {
        let mut w = NpzWriter::new(std::io::Cursor::new(Vec::new())).codec(if compressed {
            ndnpy::npz::Codec::deflate()
        } else {
            ndnpy::npz::Codec::Stored
        });
        w.add_sparse(&m).unwrap();
        let mut z = NpzReader::new(w.finish_into_inner().unwrap()).unwrap();
        let names = z.names();
        let back = z.read_sparse::<N>().unwrap();
        assert_eq!(back.to_dense(), m.to_dense(), "{name}");
        let expected: &[&str] = match m.format() {
            SparseFormat::Coo => &["row", "col", "format", "shape", "data"],
            _ => &["indices", "indptr", "format", "shape", "data"],
        };
        assert_eq!(names, expected, "{name}");
        assert_eq!(
            z.read_any("indices")
                .or(z.read_any("row"))
                .unwrap()
                .dtype()
                .to_string(),
            "<i4"
        );
    }
}

#[test]
fn every_format_reads_as_scipy_sees_it() {
    check::<f64>("csr", SparseFormat::Csr);
    check::<f64>("csc", SparseFormat::Csc);
    check::<f64>("coo", SparseFormat::Coo);
    // Read into the nearest sprs type: BSR as CSR, DIA as triplets.
    check::<f64>("bsr", SparseFormat::Csr);
    check::<f64>("dia", SparseFormat::Coo);
    check::<f64>("csr_stored", SparseFormat::Csr);
    check::<f32>("csr_f32_i64", SparseFormat::Csr);
    check::<Complex64>("csr_c128", SparseFormat::Csr);
    check::<f64>("csr_empty", SparseFormat::Csr);
    check::<f64>("coo_dup", SparseFormat::Coo);
    check::<f64>("csr_unsorted", SparseFormat::Csr);
    check::<f64>("csr_array", SparseFormat::Csr);
}

#[test]
fn sparse_info_names_the_archive() {
    for (name, format, shape, nnz) in [
        ("csr", "csr", [4, 6], 7),
        ("bsr", "bsr", [4, 6], 0),
        ("dia", "dia", [4, 6], 0),
        ("coo_dup", "coo", [0, 0], 0),
    ] {
        let mut z = NpzReader::open(fixture(&format!("{name}.npz"))).unwrap();
        let info = z.sparse_info().unwrap().unwrap();
        assert_eq!(info.format.name(), format);
        if nnz > 0 {
            assert_eq!((info.shape, info.nnz), (shape, nnz), "{name}");
        }
    }
    let mut z = NpzReader::open(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/ml_dtypes/bf16.npz"),
    )
    .unwrap();
    assert_eq!(z.sparse_info().unwrap(), None);
}

#[test]
fn lying_archives_are_refused_with_what_is_wrong() {
    let cases: &[(&str, &str)] = &[
        (
            "index_out_of_range",
            "`indices` holds index 6, out of range for 6",
        ),
        (
            "negative_index",
            "`indices` holds -1, a negative index or size",
        ),
        (
            "indptr_not_monotone",
            "`indptr` decreases at entry 2: 5 then 4",
        ),
        (
            "indptr_last_lt_nnz",
            "`indptr` ends at 6, `indices` holds 7 and `data` 7 entries",
        ),
        (
            "indptr_last_not_nnz",
            "`indptr` ends at 8, `indices` holds 7 and `data` 7 entries",
        ),
        (
            "indptr_wrong_length",
            "`indptr` has 4 entries where the shape needs 5",
        ),
        (
            "data_indices_len_mismatch",
            "`indptr` ends at 7, `indices` holds 7 and `data` 6 entries",
        ),
        (
            "coo_row_out_of_range",
            "`row` holds index 4, out of range for 4",
        ),
        (
            "bad_format",
            "the `format` member does not name csr, csc, bsr, coo or dia",
        ),
        ("missing_indptr", "the `indptr` member is missing"),
        (
            "shape_negative",
            "`shape` holds -4, a negative index or size",
        ),
        ("bsr_bad_blocks", "blocks of 3x4 do not tile a 4x6 matrix"),
        ("dia_offsets_len_mismatch", "3 offsets for 4 diagonals"),
    ];
    let mut wrong = Vec::new();
    for (name, reason) in cases {
        let err = read_sparse_npz::<f64, _>(fixture(&format!("bad/{name}.npz"))).unwrap_err();
        let want = format!("not a valid scipy.sparse archive: {reason}");
        if err.to_string() != want {
            wrong.push(format!("{name}: got {err}\n  want {want}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // An n-dimensional COO (scipy's coo_array) is not a matrix.
    let err = read_sparse_npz::<f64, _>(fixture("coo_3d.npz")).unwrap_err();
    assert!(
        err.to_string().contains("not a valid scipy.sparse archive"),
        "{err}"
    );
    // The data member's dtype must be the one asked for.
    let err = read_sparse_npz::<f32, _>(fixture("csr.npz")).unwrap_err();
    assert!(matches!(err, ndnpy::Error::DTypeMismatch { .. }), "{err}");
}

#[test]
fn sprs_matrices_round_trip() {
    let csr = sprs::CsMatI::new(
        (3, 4),
        vec![0, 2, 2, 3],
        vec![0, 3, 1],
        vec![1.0f64, 2.0, -3.0],
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.npz");
    for m in [
        Sparse::from(csr.clone()),
        Sparse::from(csr.to_csc()),
        Sparse::from(sprs::TriMatI::from_triplets(
            (3, 4),
            vec![0, 0, 2],
            vec![0, 3, 1],
            vec![1.0, 2.0, -3.0],
        )),
    ] {
        ndnpy::sparse::write_sparse_npz(&path, &m).unwrap();
        let back = read_sparse_npz::<f64, _>(&path).unwrap();
        assert_eq!(back.format(), m.format());
        assert_eq!(back.to_dense(), csr.to_dense());
        let _: Ix2 = back.to_dense().raw_dim();
    }
}

/// With `NDNPY_INTEROP_OUT` (CI), writes every fixture's matrix back there
/// (as read: BSR as CSR, DIA as COO) for `scripts/interop_formats.py` to
/// load with `scipy.sparse.load_npz` and compare with SciPy's dense matrix.
#[test]
fn writes_for_scipy() {
    let Some(out) = std::env::var_os("NDNPY_INTEROP_OUT") else {
        return;
    };
    let out = PathBuf::from(out);
    std::fs::create_dir_all(&out).unwrap();
    fn write<N>(name: &str, out: &std::path::Path)
    where
        N: ndnpy::types::LayoutElement + num_traits::Zero + std::ops::Add<Output = N>,
    {
        let m = read_sparse_npz::<N, _>(fixture(&format!("{name}.npz"))).unwrap();
        ndnpy::sparse::write_sparse_npz(out.join(format!("{name}.npz")), &m).unwrap();
    }
    for name in [
        "csr",
        "csc",
        "coo",
        "bsr",
        "dia",
        "csr_stored",
        "csr_empty",
        "coo_dup",
        "csr_unsorted",
        "csr_array",
    ] {
        write::<f64>(name, &out);
    }
    write::<f32>("csr_f32_i64", &out);
    write::<Complex64>("csr_c128", &out);
}

/// Claimed sizes that stored data does not back: an error, never an
/// allocation of the claim (BSR rows of empty blocks), nor an overflowing
/// count (DIA diagonals in `sparse_info`).
#[test]
fn claimed_sizes_are_not_allocated() {
    let bytes = |data: ndnpy::AnyArray,
                 extra: &[(&str, ndarray::ArrayD<i64>)],
                 format: &[u8],
                 shape: [i64; 2]| {
        let mut w = NpzWriter::new(std::io::Cursor::new(Vec::new()));
        for (name, a) in extra {
            w.add(name, a).unwrap();
        }
        w.add_any(
            "format",
            &ndnpy::AnyArray::Bytes(ndarray::arr0(format.to_vec()).into_dyn()),
        )
        .unwrap();
        w.add("shape", &ndarray::arr1(&shape)).unwrap();
        w.add_any("data", &data).unwrap();
        w.finish_into_inner().unwrap()
    };
    let rows = 1i64 << 44;
    let bsr = bytes(
        ndnpy::AnyArray::F64(ndarray::ArrayD::zeros(vec![0, rows as usize, 1])),
        &[
            ("indices", ndarray::ArrayD::zeros(vec![0])),
            ("indptr", ndarray::arr1(&[0i64, 0]).into_dyn()),
        ],
        b"bsr",
        [rows, 1],
    );
    let err = NpzReader::new(bsr)
        .unwrap()
        .read_sparse::<f64>()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "not a valid scipy.sparse archive: a BSR matrix of {rows} rows from 2 stored \
             values: its CSR form would need a pointer per row, more than 16 per stored value \
             plus 1048576"
        )
    );
    let dia = bytes(
        ndnpy::AnyArray::F64(ndarray::ArrayD::zeros(vec![3, 0])),
        &[("offsets", ndarray::arr1(&[0i64, 1]).into_dyn())],
        b"dia",
        [4, 4],
    );
    let err = NpzReader::new(dia).unwrap().sparse_info().unwrap_err();
    assert_eq!(
        err.to_string(),
        "not a valid scipy.sparse archive: 2 offsets for 3 diagonals"
    );
}
