//! `scipy.sparse` archives: what `scipy.sparse.save_npz` writes and
//! `load_npz` reads. An archive holds `format` (`b'csr'`, `b'csc'`,
//! `b'bsr'`, `b'coo'` or `b'dia'`, a 0-d `|S3`), `shape` (two `int64`) and
//! the format's arrays: `data`, `indices` and `indptr` (CSR, CSC, BSR,
//! whose `data` is `(blocks, R, C)`), `row` and `col` (COO), `offsets`
//! (DIA, whose `data` is `(diagonals, L)`); indices are `int32`, or
//! `int64` when they do not fit.
//!
//! [`NpzReader::sparse_info`] names a sparse archive from its members'
//! headers (always built: the CLI's `info` uses it). With the `sprs`
//! feature (links here need it: its items exist only then),
//! `NpzReader::read_sparse` reads all five formats into `Sparse` (`sprs`
//! matrices) and `NpzWriter::add_sparse` writes CSR, CSC and COO; inconsistent archives (an index out of range, `indptr`
//! not monotone, lengths that disagree) are an [`Error::InvalidSparse`].
//!
//! Layer 7, above the archives: uses `crate::npz` to read and write
//! members and `crate::array` for their values.

#[cfg(feature = "sprs")]
mod read;
#[cfg(feature = "sprs")]
mod write;

#[cfg(feature = "sprs")]
pub use read::{read_sparse_npz, Sparse};
#[cfg(feature = "sprs")]
pub use write::write_sparse_npz;

use crate::array::any::AnyArray;
use crate::error::{Error, Result};
use crate::format::dtype::{DType, Kind};
use crate::npz::NpzReader;
use std::io::{Read, Seek};

/// The storage formats of `scipy.sparse`.
///
/// ```
/// use ndnpy::sparse::SparseFormat;
///
/// // Each format is named as scipy spells it in an archive's `format`.
/// assert_eq!(SparseFormat::Csc.name(), "csc");
/// assert_ne!(SparseFormat::Csr, SparseFormat::Bsr);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SparseFormat {
    /// Compressed sparse rows.
    Csr,
    /// Compressed sparse columns.
    Csc,
    /// Block compressed rows.
    Bsr,
    /// Coordinates (triplets).
    Coo,
    /// Diagonals.
    Dia,
}

impl SparseFormat {
    /// The name scipy writes in the `format` member, e.g. `"csr"`.
    ///
    /// ```
    /// use ndnpy::sparse::SparseFormat;
    ///
    /// assert_eq!(SparseFormat::Csr.name(), "csr");
    /// assert_eq!(SparseFormat::Dia.name(), "dia");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            SparseFormat::Csr => "csr",
            SparseFormat::Csc => "csc",
            SparseFormat::Bsr => "bsr",
            SparseFormat::Coo => "coo",
            SparseFormat::Dia => "dia",
        }
    }

    fn from_name(name: &[u8]) -> Option<SparseFormat> {
        Some(match name {
            b"csr" => SparseFormat::Csr,
            b"csc" => SparseFormat::Csc,
            b"bsr" => SparseFormat::Bsr,
            b"coo" => SparseFormat::Coo,
            b"dia" => SparseFormat::Dia,
            _ => return None,
        })
    }
}

/// What [`NpzReader::sparse_info`] finds: the format, the matrix's shape
/// and its stored entries (scipy's `nnz`: explicit zeros included; for
/// DIA, the diagonal entries that fall inside the matrix).
///
/// ```
/// # use std::io::Cursor;
/// use ndnpy::sparse::{SparseFormat, SparseInfo};
///
/// // A 2×3 CSR matrix with one stored entry, as `save_npz` lays it out.
/// let mut w = ndnpy::NpzWriter::new(Cursor::new(Vec::new()));
/// w.add_any("format", &ndnpy::AnyArray::Bytes(ndarray::arr0(b"csr".to_vec()).into_dyn()))?;
/// w.add("shape", &ndarray::arr1(&[2i64, 3]))?;
/// w.add("indptr", &ndarray::arr1(&[0i32, 1, 1]))?;
/// w.add("indices", &ndarray::arr1(&[2i32]))?;
/// w.add("data", &ndarray::arr1(&[7.0f64]))?;
/// let mut z = ndnpy::NpzReader::new(w.finish_into_inner()?)?;
/// let expected = SparseInfo { format: SparseFormat::Csr, shape: [2, 3], nnz: 1 };
/// assert_eq!(z.sparse_info()?, Some(expected));
/// # Ok::<(), ndnpy::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SparseInfo {
    /// The storage format.
    pub format: SparseFormat,
    /// Rows and columns.
    pub shape: [usize; 2],
    /// Stored entries.
    pub nnz: usize,
}

impl<R: Read + Seek> NpzReader<R> {
    /// Whether the archive is one `scipy.sparse.save_npz` wrote, and if so
    /// its format, shape and number of stored entries, from the small
    /// members and the headers of the others (the data is not read). `None`
    /// when there is no `format` member naming a sparse format, or no
    /// `shape` member; a `format` that names one but whose members disagree
    /// is an [`Error::InvalidSparse`].
    ///
    /// ```
    /// # use std::io::Cursor;
    /// let mut w = ndnpy::NpzWriter::new(Cursor::new(Vec::new()));
    /// w.add_any("format", &ndnpy::AnyArray::Bytes(ndarray::arr0(b"coo".to_vec()).into_dyn()))?;
    /// w.add("shape", &ndarray::arr1(&[3i64, 4]))?;
    /// w.add("row", &ndarray::arr1(&[0i32, 2]))?;
    /// w.add("col", &ndarray::arr1(&[1i32, 3]))?;
    /// w.add("data", &ndarray::arr1(&[1.5f64, -2.0]))?;
    /// let mut z = ndnpy::NpzReader::new(w.finish_into_inner()?)?;
    /// let info = z.sparse_info()?.expect("a sparse archive");
    /// assert_eq!((info.format.name(), info.shape, info.nnz), ("coo", [3, 4], 2));
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn sparse_info(&mut self) -> Result<Option<SparseInfo>> {
        let names = self.names();
        let has = |n: &str| names.iter().any(|m| m == n);
        if !has("format") || !has("shape") {
            return Ok(None);
        }
        let Some(format) = read_format(self)? else {
            return Ok(None);
        };
        let shape = read_shape(self)?;
        let data = self.header("data").map_err(|e| in_sparse("data", e))?;
        let nnz = match format {
            // BSR: every entry of every stored block, zeros included.
            SparseFormat::Csr | SparseFormat::Csc | SparseFormat::Coo | SparseFormat::Bsr => {
                data.num_elements().map_err(|e| in_sparse("data", e))?
            }
            SparseFormat::Dia => {
                let offsets = read_indices(self, "offsets", true)?;
                let [diagonals, len] = data.shape[..] else {
                    return Err(invalid(format!(
                        "DIA `data` has shape {:?}, not (diagonals, L)",
                        data.shape
                    )));
                };
                if offsets.len() != diagonals {
                    return Err(invalid(format!(
                        "{} offsets for {diagonals} diagonals",
                        offsets.len()
                    )));
                }
                offsets
                    .iter()
                    .try_fold(0usize, |n, &k| n.checked_add(diagonal_len(shape, len, k)))
                    .ok_or_else(|| {
                        invalid("the diagonals hold more entries than a count can".to_owned())
                    })?
            }
        };
        Ok(Some(SparseInfo { format, shape, nnz }))
    }
}

/// The `format` member: `Some` when it names a sparse format. Only a
/// short string or bytes scalar is read (its header is looked at first),
/// so an archive with some other `format` array costs nothing.
fn read_format<R: Read + Seek>(z: &mut NpzReader<R>) -> Result<Option<SparseFormat>> {
    let header = z.header("format").map_err(|e| in_sparse("format", e))?;
    let short_text = matches!(
        &header.dtype,
        DType::Scalar(s) if matches!(s.kind, Kind::Bytes | Kind::Unicode) && s.size <= 16
    );
    if !short_text || header.num_elements().ok() != Some(1) {
        return Ok(None);
    }
    let name = match z.read_any("format").map_err(|e| in_sparse("format", e))? {
        AnyArray::Bytes(a) if a.len() == 1 => a.iter().next().cloned().unwrap_or_default(),
        AnyArray::Str(a) if a.len() == 1 => {
            a.iter().next().cloned().unwrap_or_default().into_bytes()
        }
        _ => return Ok(None),
    };
    Ok(SparseFormat::from_name(&name))
}

/// The `shape` member: two non-negative integers.
fn read_shape<R: Read + Seek>(z: &mut NpzReader<R>) -> Result<[usize; 2]> {
    let shape = read_indices(z, "shape", false)?;
    match shape[..] {
        [rows, cols] => Ok([rows as usize, cols as usize]),
        _ => Err(invalid(format!(
            "`shape` has {} values, not 2 (a matrix's rows and columns)",
            shape.len()
        ))),
    }
}

/// An integer member's values as `i64`: refused when not integers, or
/// (unless `signed`) when negative.
fn read_indices<R: Read + Seek>(
    z: &mut NpzReader<R>,
    name: &str,
    signed: bool,
) -> Result<Vec<i64>> {
    let any = z.read_any(name).map_err(|e| in_sparse(name, e))?;
    let values: Vec<i64> = match &any {
        AnyArray::I8(_) | AnyArray::I16(_) | AnyArray::I32(_) | AnyArray::I64(_) => {
            any.cast::<i64>()?.into_iter().collect()
        }
        AnyArray::U8(_) | AnyArray::U16(_) | AnyArray::U32(_) => {
            any.cast::<i64>()?.into_iter().collect()
        }
        AnyArray::U64(a) => a
            .iter()
            .map(|&v| {
                i64::try_from(v)
                    .map_err(|_| invalid(format!("`{name}` holds {v}, too large an index")))
            })
            .collect::<Result<_>>()?,
        other => {
            return Err(invalid(format!(
                "`{name}` holds {}, not integers",
                other.dtype()
            )))
        }
    };
    if !signed {
        if let Some(v) = values.iter().find(|&&v| v < 0) {
            return Err(invalid(format!(
                "`{name}` holds {v}, a negative index or size"
            )));
        }
    }
    Ok(values)
}

/// Entries of diagonal `offset` (of stored length `len`) inside a matrix
/// of `shape`: column `j` holds row `j - offset`, for `j < min(len, cols)`.
fn diagonal_len(shape: [usize; 2], len: usize, offset: i64) -> usize {
    let [rows, cols] = shape.map(|n| n as i64);
    let end = (len as i64).min(cols).min(rows.saturating_add(offset));
    let start = offset.max(0);
    (end - start).max(0) as usize
}

fn invalid(reason: String) -> Error {
    Error::InvalidSparse { reason }
}

/// Names the member in a read error (member errors already do).
fn in_sparse(name: &str, e: Error) -> Error {
    match e {
        Error::MemberNotFound { .. } => invalid(format!("the `{name}` member is missing")),
        other => other,
    }
}
