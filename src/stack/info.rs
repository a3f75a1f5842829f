//! Dask's `info` file: the pickle of `{'chunks': ..., 'dtype': ..., 'axis':
//! ...}` that `da.to_npy_stack` writes and `da.from_npy_stack` reads, read
//! through the crate's safe pickle reader (nothing is imported or run) and
//! written with its pickler.

use crate::array::pyvalue::{NumpyScalar, PyValue};
use crate::error::{Error, Result};
use crate::format::dtype::{DType, Kind};
use std::path::Path;

/// The name of the file that marks a folder as a dask stack.
///
/// ```
/// assert_eq!(ndnpy::stack::plan::INFO, "info");
/// ```
pub const INFO: &str = "info";

/// Largest `info` file read: its chunk lengths cost a few bytes each in the
/// pickle, so a million shards fit many times over; anything bigger is not
/// a stack's `info`, and is refused before it is read into memory.
const MAX_INFO_LEN: u64 = 64 << 20;

/// What `info` says: the chunks of every axis, the dtype and the stacking
/// axis (normalised to `0..ndim`, as Python indexes `chunks[axis]`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Info {
    pub(crate) chunks: Vec<Vec<usize>>,
    pub(crate) dtype: DType,
    pub(crate) axis: usize,
}

/// The error for an `info` that is a pickle, but not of a stack's dict.
fn malformed(reason: impl Into<String>) -> Error {
    Error::Pickle(crate::error::PickleError::MalformedPickle {
        pos: 0,
        reason: format!(
            "dask's npy_stack `info` must be {{'chunks': tuple of tuples of int, 'dtype': numpy.dtype, 'axis': int}}: {}",
            reason.into()
        ),
    })
}

/// An `int`, or a NumPy integer scalar (`np.int64(3)`, which a chunk tuple
/// built from NumPy sums may hold).
fn int_of(v: &PyValue) -> Option<i64> {
    match v {
        PyValue::Int(n) => Some(*n),
        PyValue::Scalar(NumpyScalar { dtype, data }) => match dtype {
            DType::Scalar(s)
                if matches!(s.kind, Kind::Int | Kind::UInt)
                    && s.size == data.len()
                    && s.size <= 8 =>
            {
                let mut bytes = [0u8; 8];
                let big = s.order == crate::format::dtype::ByteOrder::Big;
                for (i, b) in data.iter().enumerate() {
                    bytes[if big { data.len() - 1 - i } else { i }] = *b;
                }
                let unsigned = u64::from_le_bytes(bytes);
                let shift = 64 - 8 * s.size as u32;
                if s.kind == Kind::Int && shift < 64 {
                    // Sign-extend from the scalar's width.
                    Some(((unsigned << shift) as i64) >> shift)
                } else {
                    i64::try_from(unsigned).ok()
                }
            }
            _ => None,
        },
        _ => None,
    }
}

/// A value named in an error: short ones as Python shows them, others by
/// their type (an `info` may hold a value of any size).
fn brief(v: &PyValue) -> String {
    let text = v.to_string();
    if text.len() <= 40 {
        text
    } else {
        format!("a {}", crate::array::pyvalue::convert::value_type_name(v))
    }
}

/// A non-negative length.
fn len_of(v: &PyValue, what: &str) -> Result<usize> {
    int_of(v)
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| malformed(format!("{what} is {}, not a non-negative int", brief(v))))
}

impl Info {
    /// Reads and checks the `info` file at `path`; a pickle that is not a
    /// stack's dict is named by its path.
    pub(crate) fn read(path: &Path) -> Result<Info> {
        use std::io::Read;
        let at_path = |e: std::io::Error| Error::Io(e).at_path(path);
        let file = crate::error::open_file(path)?;
        // Read from the handle opened, at most one byte past the limit.
        let mut bytes = Vec::new();
        file.take(MAX_INFO_LEN + 1)
            .read_to_end(&mut bytes)
            .map_err(at_path)?;
        if bytes.len() as u64 > MAX_INFO_LEN {
            return Err(malformed(format!(
                "{}: more than the {MAX_INFO_LEN} bytes any stack's info needs",
                path.display()
            )));
        }
        Info::from_pickle(&bytes).map_err(|e| match e {
            Error::Pickle(crate::error::PickleError::MalformedPickle { pos, reason }) => {
                Error::Pickle(crate::error::PickleError::MalformedPickle {
                    pos,
                    reason: format!("{}: {reason}", path.display()),
                })
            }
            other => other,
        })
    }

    /// Parses the pickled dict.
    pub(crate) fn from_pickle(bytes: &[u8]) -> Result<Info> {
        // Four times the usual budget: a chunk length is 2 bytes in the
        // pickle and about 140 as a value, so 100 000 shards of under 256
        // rows (as dask pickles them) would pass the usual one no more.
        let value = crate::pickle::loads_with_budget_factor(bytes, 4)?;
        let PyValue::Dict(pairs) = &value else {
            return Err(malformed(format!(
                "the pickle holds a {}",
                crate::array::pyvalue::convert::value_type_name(&value)
            )));
        };
        let get = |key: &str| {
            pairs
                .iter()
                .find(|(k, _)| matches!(k, PyValue::Str(s) if s == key))
                .map(|(_, v)| v)
                .ok_or_else(|| malformed(format!("no key '{key}'")))
        };
        let chunks = match get("chunks")? {
            PyValue::Tuple(axes) | PyValue::List(axes) => axes
                .iter()
                .enumerate()
                .map(|(i, c)| match c {
                    PyValue::Tuple(lens) | PyValue::List(lens) => lens
                        .iter()
                        .map(|n| len_of(n, &format!("a chunk length of axis {i}")))
                        .collect::<Result<Vec<usize>>>(),
                    other => Err(malformed(format!(
                        "chunks[{i}] is {}, not a tuple",
                        brief(other)
                    ))),
                })
                .collect::<Result<Vec<_>>>()?,
            other => {
                return Err(malformed(format!(
                    "'chunks' is {}, not a tuple",
                    brief(other)
                )))
            }
        };
        let dtype = match get("dtype")? {
            PyValue::DType(d) => d.clone(),
            other => {
                return Err(malformed(format!(
                    "'dtype' is {}, not a numpy.dtype",
                    brief(other)
                )))
            }
        };
        let axis_value = get("axis")?;
        let axis = int_of(axis_value)
            .ok_or_else(|| malformed(format!("'axis' is {}, not an int", brief(axis_value))))?;
        let info = Info {
            axis: normalise_axis(axis, chunks.len())?,
            chunks,
            dtype,
        };
        info.check()?;
        Ok(info)
    }

    /// What `da.from_npy_stack` needs to build a consistent array: one
    /// chunk on every axis but the stacking one (its keys are the product
    /// of the chunk counts, its files one per chunk of the stacking axis).
    fn check(&self) -> Result<()> {
        for (i, c) in self.chunks.iter().enumerate() {
            if i != self.axis && c.len() != 1 {
                return Err(malformed(format!(
                    "axis {i} is not the stacking axis ({}) but has {} chunks, not 1",
                    self.axis,
                    c.len()
                )));
            }
        }
        if self.chunks[self.axis].is_empty() {
            return Err(malformed("the stacking axis has no chunks (no shard)"));
        }
        Ok(())
    }

    /// The shape of shard `i`.
    pub(crate) fn shard_shape(&self, i: usize) -> Vec<usize> {
        self.chunks
            .iter()
            .enumerate()
            .map(|(a, c)| if a == self.axis { c[i] } else { c[0] })
            .collect()
    }

    /// The pickle `da.from_npy_stack` loads back as this dict (protocol 3;
    /// dask's own `pickle.dump` writes the default protocol, which any
    /// Python 3 reads the same way).
    pub(crate) fn to_pickle(&self) -> Result<Vec<u8>> {
        let ints =
            |lens: &[usize]| PyValue::Tuple(lens.iter().map(|&n| PyValue::Int(n as i64)).collect());
        let dict = PyValue::Dict(vec![
            (
                PyValue::Str("chunks".into()),
                PyValue::Tuple(self.chunks.iter().map(|c| ints(c)).collect()),
            ),
            (
                PyValue::Str("dtype".into()),
                PyValue::DType(self.dtype.clone()),
            ),
            (PyValue::Str("axis".into()), PyValue::Int(self.axis as i64)),
        ]);
        crate::pickle::dumps(&dict)
    }
}

/// Python's reading of `axis` as an index of `chunks` (negative counts
/// from the end), refused outside the array's dimensions.
pub(crate) fn normalise_axis(axis: i64, ndim: usize) -> Result<usize> {
    let n = ndim as i64;
    if ndim == 0 || axis >= n || axis < -n {
        return Err(malformed(format!(
            "'axis' is {axis}, out of range for an array of {ndim} dimensions"
        )));
    }
    Ok(if axis < 0 { axis + n } else { axis } as usize)
}
