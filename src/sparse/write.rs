//! Writing `sprs` matrices as `scipy.sparse.save_npz` does, member for
//! member, so that `scipy.sparse.load_npz` gives an equal matrix.

use super::read::Sparse;
use crate::array::any::AnyArray;
use crate::array::element::LayoutElement;
use crate::error::Result;
use crate::npz::NpzWriter;
use ndarray::{arr0, Array1};
use std::io::{Seek, Write};
use std::path::Path;

/// Writes `matrix` to `path` as `scipy.sparse.save_npz(path, m)` does
/// (compressed, its default), atomically.
///
/// ```
/// let coo = sprs::TriMatI::<f64, usize>::from_triplets((2, 2), vec![0, 1], vec![1, 0], vec![3.0, 4.0]);
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("m.npz");
/// ndnpy::sparse::write_sparse_npz(&path, &coo.into())?;
/// let back = ndnpy::sparse::read_sparse_npz::<f64, _>(&path)?;
/// assert_eq!(back.to_dense(), ndarray::arr2(&[[0.0, 3.0], [4.0, 0.0]]));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_sparse_npz<N: LayoutElement, P: AsRef<Path>>(
    path: P,
    matrix: &Sparse<N>,
) -> Result<()> {
    let mut w = NpzWriter::create(path)?.codec(crate::npz::Codec::deflate());
    w.add_sparse(matrix)?;
    w.finish()
}

impl<W: Write + Seek> NpzWriter<W> {
    /// Adds the members `scipy.sparse.save_npz` writes for `matrix`, in
    /// its order: `indices`, `indptr` (CSR, CSC) or `row`, `col` (COO),
    /// then `format` (`|S3`), `shape` (`int64`) and `data`. Indices are
    /// `int32` when every index and the entry count fit, else `int64`, as
    /// scipy chooses. Compressed or stored as the writer is.
    pub fn add_sparse<N: LayoutElement>(&mut self, matrix: &Sparse<N>) -> Result<()> {
        let (rows, cols) = matrix.shape();
        let wide = [rows, cols, matrix.nnz()]
            .iter()
            .any(|&n| n > i32::MAX as usize);
        match matrix {
            Sparse::Csr(m) | Sparse::Csc(m) => {
                self.add_indices("indices", m.indices(), wide)?;
                let indptr = m.indptr();
                self.add_indices("indptr", &indptr.to_proper(), wide)?;
            }
            Sparse::Coo(m) => {
                self.add_indices("row", m.row_inds(), wide)?;
                self.add_indices("col", m.col_inds(), wide)?;
            }
        }
        let name = matrix.format().name().as_bytes().to_vec();
        self.add_any("format", &AnyArray::Bytes(arr0(name).into_dyn()))?;
        self.add("shape", &Array1::from(vec![rows as i64, cols as i64]))?;
        let data = match matrix {
            Sparse::Csr(m) | Sparse::Csc(m) => m.data(),
            Sparse::Coo(m) => m.data(),
        };
        self.add("data", &ndarray::ArrayView1::from(data))
    }

    fn add_indices(&mut self, name: &str, values: &[usize], wide: bool) -> Result<()> {
        if wide {
            self.add(
                name,
                &values.iter().map(|&v| v as i64).collect::<Array1<_>>(),
            )
        } else {
            self.add(
                name,
                &values.iter().map(|&v| v as i32).collect::<Array1<_>>(),
            )
        }
    }
}
