//! Reading `scipy.sparse` archives into `sprs` matrices, every index and
//! length checked first.

use super::{
    diagonal_len, in_sparse, invalid, read_format, read_indices, read_shape, SparseFormat,
};
use crate::array::element::LayoutElement;
use crate::error::Result;
use crate::npz::NpzReader;
use ndarray::{Array2, IxDyn};
use num_traits::Zero;
use sprs::{CsMatI, TriMatI};
use std::io::{Read, Seek};
use std::ops::Add;
use std::path::Path;

/// A sparse matrix as `scipy.sparse` stores it, in `sprs`'s types: CSR
/// and CSC as [`sprs::CsMatI`] (BSR is read as CSR, its blocks' entries
/// kept), COO as [`sprs::TriMatI`] (DIA is read as COO, its zeros dropped,
/// as scipy's `tocoo` does).
///
/// ```
/// use ndnpy::sparse::Sparse;
///
/// let csr = sprs::CsMatI::new((2, 3), vec![0, 1, 2], vec![2, 0], vec![1.5f64, -1.0]);
/// let mut w = ndnpy::NpzWriter::new(std::io::Cursor::new(Vec::new()));
/// w.add_sparse(&Sparse::from(csr.clone()))?;
/// let mut z = ndnpy::NpzReader::new(w.finish_into_inner()?)?;
/// let back = z.read_sparse::<f64>()?;
/// assert_eq!(back, Sparse::Csr(csr));
/// assert_eq!(back.to_dense(), ndarray::arr2(&[[0.0, 0.0, 1.5], [-1.0, 0.0, 0.0]]));
/// # Ok::<(), ndnpy::Error>(())
/// ```
#[derive(Debug, PartialEq)]
pub enum Sparse<N> {
    /// Compressed rows.
    Csr(CsMatI<N, usize>),
    /// Compressed columns.
    Csc(CsMatI<N, usize>),
    /// Triplets (duplicates add up, as in scipy).
    Coo(TriMatI<N, usize>),
}

// By hand: `sprs` does not make triplet matrices `Clone`.
impl<N: Clone> Clone for Sparse<N> {
    fn clone(&self) -> Self {
        match self {
            Sparse::Csr(m) => Sparse::Csr(m.clone()),
            Sparse::Csc(m) => Sparse::Csc(m.clone()),
            Sparse::Coo(m) => Sparse::Coo(TriMatI::from_triplets(
                m.shape(),
                m.row_inds().to_vec(),
                m.col_inds().to_vec(),
                m.data().to_vec(),
            )),
        }
    }
}

impl<N> From<CsMatI<N, usize>> for Sparse<N> {
    fn from(m: CsMatI<N, usize>) -> Self {
        if m.is_csr() {
            Sparse::Csr(m)
        } else {
            Sparse::Csc(m)
        }
    }
}

impl<N> From<TriMatI<N, usize>> for Sparse<N> {
    fn from(m: TriMatI<N, usize>) -> Self {
        Sparse::Coo(m)
    }
}

impl<N> Sparse<N> {
    /// The format the matrix is held in (and written as).
    pub fn format(&self) -> SparseFormat {
        match self {
            Sparse::Csr(_) => SparseFormat::Csr,
            Sparse::Csc(_) => SparseFormat::Csc,
            Sparse::Coo(_) => SparseFormat::Coo,
        }
    }

    /// Rows and columns.
    pub fn shape(&self) -> (usize, usize) {
        match self {
            Sparse::Csr(m) | Sparse::Csc(m) => (m.rows(), m.cols()),
            Sparse::Coo(m) => (m.rows(), m.cols()),
        }
    }

    /// Stored entries.
    pub fn nnz(&self) -> usize {
        match self {
            Sparse::Csr(m) | Sparse::Csc(m) => m.nnz(),
            Sparse::Coo(m) => m.nnz(),
        }
    }

    /// The dense matrix (duplicate triplets added up).
    pub fn to_dense(&self) -> Array2<N>
    where
        N: Copy + Zero + Add<Output = N>,
    {
        let (rows, cols) = self.shape();
        let mut out = Array2::zeros((rows, cols));
        match self {
            Sparse::Csr(m) | Sparse::Csc(m) => {
                for (&v, (r, c)) in m.iter() {
                    out[[r, c]] = out[[r, c]] + v;
                }
            }
            Sparse::Coo(m) => {
                for (&v, (r, c)) in m.triplet_iter() {
                    out[[r, c]] = out[[r, c]] + v;
                }
            }
        }
        out
    }
}

/// Reads the `scipy.sparse.save_npz` archive at `path`
/// ([`NpzReader::read_sparse`]).
pub fn read_sparse_npz<N, P>(path: P) -> Result<Sparse<N>>
where
    N: LayoutElement + Zero + Add<Output = N>,
    P: AsRef<Path>,
{
    NpzReader::open(path)?.read_sparse()
}

impl<R: Read + Seek> NpzReader<R> {
    /// Reads the matrix a `scipy.sparse.save_npz` archive holds, its data
    /// as `N` (which must be the `data` member's dtype, as for
    /// [`NpzReader::read`]). CSR and CSC become compressed matrices with
    /// each row's (column's) indices sorted and duplicates added up (scipy
    /// allows both; `sprs` needs them sorted and unique); BSR becomes CSR;
    /// COO stays triplets; DIA becomes triplets of its nonzero entries.
    /// Indices out of range, a decreasing `indptr`, and members whose
    /// lengths disagree are an [`crate::Error::InvalidSparse`] naming the problem.
    ///
    /// Memory and time follow the archive's bytes: a BSR matrix whose rows
    /// outnumber 16 per stored value (`indptr`, `indices` and `data`
    /// entries) by more than 2^20 is an [`crate::Error::InvalidSparse`] too
    /// (its CSR form has a pointer per row, and empty block rows of a
    /// claimed height are free to declare; scipy reads such archives).
    pub fn read_sparse<N>(&mut self) -> Result<Sparse<N>>
    where
        N: LayoutElement + Zero + Add<Output = N>,
    {
        let format = read_format(self)?.ok_or_else(|| {
            invalid("the `format` member does not name csr, csc, bsr, coo or dia".to_owned())
        })?;
        let shape = read_shape(self)?;
        let data = self
            .read::<N, IxDyn>("data")
            .map_err(|e| in_sparse("data", e))?;
        let dims = data.shape().to_vec();
        let data: Vec<N> = data.into_iter().collect();
        match format {
            SparseFormat::Csr | SparseFormat::Csc => {
                let csr = format == SparseFormat::Csr;
                let indices = checked(read_indices(self, "indices", false)?, "indices")?;
                let indptr = checked(read_indices(self, "indptr", false)?, "indptr")?;
                if dims.len() != 1 {
                    return Err(invalid(format!(
                        "`data` has shape {dims:?}, not one dimension"
                    )));
                }
                let (major, minor) = if csr {
                    (shape[0], shape[1])
                } else {
                    (shape[1], shape[0])
                };
                let (indptr, indices, data) = compress(major, minor, &indptr, indices, data)?;
                let shape = (shape[0], shape[1]);
                let made = if csr {
                    CsMatI::try_new(shape, indptr, indices, data)
                } else {
                    CsMatI::try_new_csc(shape, indptr, indices, data)
                };
                made.map(Sparse::from)
                    .map_err(|(_, _, _, e)| invalid(format!("not a valid matrix: {e}")))
            }
            SparseFormat::Bsr => {
                let indices = checked(read_indices(self, "indices", false)?, "indices")?;
                let indptr = checked(read_indices(self, "indptr", false)?, "indptr")?;
                let [blocks, r, c] = dims[..] else {
                    return Err(invalid(format!(
                        "BSR `data` has shape {dims:?}, not (blocks, R, C)"
                    )));
                };
                if r == 0 || c == 0 || shape[0] % r != 0 || shape[1] % c != 0 {
                    return Err(invalid(format!(
                        "blocks of {r}x{c} do not tile a {}x{} matrix",
                        shape[0], shape[1]
                    )));
                }
                let (block_rows, block_cols) = (shape[0] / r, shape[1] / c);
                check_compressed(block_rows, block_cols, &indptr, &indices, blocks)?;
                check_rows(shape[0], indptr.len() + indices.len() + data.len())?;
                // Each block row's blocks, entry by entry, into rows. Within
                // the bound above, still an error, not an abort, if memory
                // cannot hold the row pointers.
                let mut ptr: Vec<usize> = Vec::new();
                ptr.try_reserve_exact(shape[0] + 1).map_err(|_| {
                    invalid(format!(
                        "a matrix of {} rows is too large to hold",
                        shape[0]
                    ))
                })?;
                ptr.push(0);
                let (mut idx, mut values) = (Vec::new(), Vec::new());
                for br in 0..block_rows {
                    for i in 0..r {
                        for k in indptr[br]..indptr[br + 1] {
                            for j in 0..c {
                                idx.push(indices[k] * c + j);
                                values.push(data[(k * r + i) * c + j]);
                            }
                        }
                        ptr.push(idx.len());
                    }
                }
                let (indptr, indices, data) = compress(shape[0], shape[1], &ptr, idx, values)?;
                CsMatI::try_new((shape[0], shape[1]), indptr, indices, data)
                    .map(Sparse::Csr)
                    .map_err(|(_, _, _, e)| invalid(format!("not a valid matrix: {e}")))
            }
            SparseFormat::Coo => {
                let row = checked(read_indices(self, "row", false)?, "row")?;
                let col = checked(read_indices(self, "col", false)?, "col")?;
                if row.len() != data.len() || col.len() != data.len() || dims.len() != 1 {
                    return Err(invalid(format!(
                        "`row`, `col` and `data` hold {}, {} and {} values",
                        row.len(),
                        col.len(),
                        data.len()
                    )));
                }
                in_range(&row, shape[0], "row")?;
                in_range(&col, shape[1], "col")?;
                Ok(Sparse::Coo(TriMatI::from_triplets(
                    (shape[0], shape[1]),
                    row,
                    col,
                    data,
                )))
            }
            SparseFormat::Dia => {
                let offsets = read_indices(self, "offsets", true)?;
                let [diagonals, len] = dims[..] else {
                    return Err(invalid(format!(
                        "DIA `data` has shape {dims:?}, not (diagonals, L)"
                    )));
                };
                if offsets.len() != diagonals {
                    return Err(invalid(format!(
                        "{} offsets for {diagonals} diagonals",
                        offsets.len()
                    )));
                }
                let (mut rows, mut cols, mut values) = (Vec::new(), Vec::new(), Vec::new());
                for (d, &offset) in offsets.iter().enumerate() {
                    let count = diagonal_len(shape, len, offset);
                    let first = offset.max(0) as usize;
                    for j in first..first + count {
                        let v = data[d * len + j];
                        if !v.is_zero() {
                            rows.push((j as i64 - offset) as usize);
                            cols.push(j);
                            values.push(v);
                        }
                    }
                }
                Ok(Sparse::Coo(TriMatI::from_triplets(
                    (shape[0], shape[1]),
                    rows,
                    cols,
                    values,
                )))
            }
        }
    }
}

/// Rows a BSR matrix may have beyond [`ROWS_PER_VALUE`] per value its
/// archive stores.
const FREE_ROWS: usize = 1 << 20;

/// Rows a BSR matrix may have per value its archive stores (`indptr`,
/// `indices` and `data` entries): ample for blocks up to 16 rows high,
/// however many block rows are empty.
const ROWS_PER_VALUE: usize = 16;

/// Refuses a BSR matrix of more `rows` than its `present` stored values
/// can vouch for. Its CSR form has a pointer per row, `R` for every block
/// row whether it holds blocks or not, and only `data`'s header says what
/// `R` is: with no blocks stored, a 1 KiB archive may claim blocks of 2^28
/// rows, and 4 GB of pointers. Rows are bounded by the bytes present
/// instead: at most [`ROWS_PER_VALUE`] per stored value plus [`FREE_ROWS`]
/// (scipy's `load_npz` builds such matrices; `tocsr` then takes the
/// memory).
fn check_rows(rows: usize, present: usize) -> Result<()> {
    let most = present
        .saturating_mul(ROWS_PER_VALUE)
        .saturating_add(FREE_ROWS);
    if rows > most {
        return Err(invalid(format!(
            "a BSR matrix of {rows} rows from {present} stored values: its CSR form would \
             need a pointer per row, more than {ROWS_PER_VALUE} per stored value plus {FREE_ROWS}"
        )));
    }
    Ok(())
}

/// Non-negative indices (checked by `read_indices`) as `usize`.
fn checked(values: Vec<i64>, name: &str) -> Result<Vec<usize>> {
    values
        .into_iter()
        .map(|v| usize::try_from(v).map_err(|_| invalid(format!("`{name}` holds {v}"))))
        .collect()
}

fn in_range(values: &[usize], bound: usize, name: &str) -> Result<()> {
    match values.iter().find(|&&v| v >= bound) {
        Some(v) => Err(invalid(format!(
            "`{name}` holds index {v}, out of range for {bound}"
        ))),
        None => Ok(()),
    }
}

/// Checks a compressed structure: `indptr` of `major + 1` entries from 0,
/// never decreasing, ending at the entry count `nnz`, which `indices`
/// holds, each below `minor`.
fn check_compressed(
    major: usize,
    minor: usize,
    indptr: &[usize],
    indices: &[usize],
    nnz: usize,
) -> Result<()> {
    if indptr.len() != major + 1 {
        return Err(invalid(format!(
            "`indptr` has {} entries where the shape needs {}",
            indptr.len(),
            major + 1
        )));
    }
    if indptr[0] != 0 {
        return Err(invalid(format!("`indptr` starts at {}, not 0", indptr[0])));
    }
    if let Some(i) = indptr.windows(2).position(|w| w[1] < w[0]) {
        return Err(invalid(format!(
            "`indptr` decreases at entry {}: {} then {}",
            i + 1,
            indptr[i],
            indptr[i + 1]
        )));
    }
    if indptr[major] != nnz || indices.len() != nnz {
        return Err(invalid(format!(
            "`indptr` ends at {}, `indices` holds {} and `data` {} entries",
            indptr[major],
            indices.len(),
            nnz
        )));
    }
    in_range(indices, minor, "indices")
}

/// Checks a compressed structure, then sorts each row's (column's) entries
/// by index and adds up duplicates, as scipy's `sum_duplicates` does.
#[allow(clippy::type_complexity)]
fn compress<N: Copy + Add<Output = N>>(
    major: usize,
    minor: usize,
    indptr: &[usize],
    indices: Vec<usize>,
    data: Vec<N>,
) -> Result<(Vec<usize>, Vec<usize>, Vec<N>)> {
    check_compressed(major, minor, indptr, &indices, data.len())?;
    let mut out_ptr = Vec::with_capacity(major + 1);
    out_ptr.push(0);
    let mut out_idx = Vec::with_capacity(indices.len());
    let mut out_data = Vec::with_capacity(data.len());
    let mut row: Vec<(usize, N)> = Vec::new();
    for w in indptr.windows(2) {
        row.clear();
        row.extend((w[0]..w[1]).map(|k| (indices[k], data[k])));
        if !row.windows(2).all(|p| p[0].0 < p[1].0) {
            row.sort_by_key(|&(i, _)| i);
        }
        for &(i, v) in &row {
            if out_idx.len() > *out_ptr.last().expect("one entry") && out_idx.last() == Some(&i) {
                let last = out_data.len() - 1;
                out_data[last] = out_data[last] + v;
            } else {
                out_idx.push(i);
                out_data.push(v);
            }
        }
        out_ptr.push(out_idx.len());
    }
    Ok((out_ptr, out_idx, out_data))
}
