//! A stack apart from where its shards live: the checks that make headers
//! one array (against dask's `info`, or against the first shard), and
//! which shards, rows and bytes a range needs. [`NpyStack`](super::NpyStack)
//! runs it on files; `ndnpy-store`'s remote stack on objects, so the two
//! read the same stacks the same way and refuse the same ones.
//!
//! Hidden from the documentation: a hook for `ndnpy-store`, not an API of
//! its own (its shape may change with the stack's).

use super::info::Info;
use crate::error::{Error, Result};
use crate::format::dtype::DType;
use crate::format::header::{Header, Version};
use std::ops::Range;

mod bytes;

pub use super::folder::natural_cmp;
pub use super::info::INFO;

/// The name of dask's shard `i` in its folder.
///
/// ```
/// assert_eq!(ndnpy::stack::plan::dask_shard_name(3), "3.npy");
/// ```
pub fn dask_shard_name(i: usize) -> String {
    format!("{i}.npy")
}

/// The checks of a stack's shard headers, one shard at a time, in order:
/// what is kept is a start and length per shard seen, so memory follows
/// what is present, never what an `info` claims.
///
/// ```
/// use ndnpy::stack::plan::StackCheck;
/// # fn header<T: ndnpy::Element + Default + Clone>(shape: &[usize]) -> ndnpy::dtype::Header {
/// #     use ndnpy::WriteNpy;
/// #     let bytes = ndarray::ArrayD::<T>::default(shape).to_npy_bytes().unwrap();
/// #     ndnpy::dtype::Header::read_from(&bytes[..]).unwrap()
/// # }
///
/// let mut check = StackCheck::plain();
/// check.push("a.npy", &header::<u8>(&[2, 2]))?;
/// check.push("b.npy", &header::<u8>(&[1, 2]))?;
/// assert!(check.push("c.npy", &header::<u8>(&[1, 3])).is_err());
/// let plan = check.finish()?;
/// assert_eq!(plan.shape(), [3, 2]);
/// # Ok::<(), ndnpy::Error>(())
/// ```
#[derive(Debug)]
pub struct StackCheck {
    info: Option<Info>,
    first: Option<(Header, String)>,
    spans: Vec<(usize, usize)>,
    start: usize,
}

/// The error for a shard whose dtype is not the stack's.
pub(crate) fn dtype_differs(name: &str, expected: &DType, from: &str, found: &DType) -> Error {
    Error::DTypeMismatch {
        expected: format!("`{expected}` ({from}) in {name}"),
        found: found.to_string(),
    }
}

impl StackCheck {
    /// The checks of a plain folder or list: the shards continue the first
    /// along axis 0.
    ///
    /// ```
    /// let check = ndnpy::stack::plan::StackCheck::plain();
    /// assert_eq!(check.shard_count(), None);
    /// ```
    pub fn plain() -> StackCheck {
        StackCheck {
            info: None,
            first: None,
            spans: Vec::new(),
            start: 0,
        }
    }

    /// The checks of a dask stack whose `info` holds `pickle` (read by the
    /// crate's pickle reader, which runs nothing); `name` names it in
    /// errors.
    ///
    /// ```
    /// use ndnpy::stack::{plan::StackCheck, NpyStack};
    ///
    /// let dir = tempfile::tempdir()?;
    /// NpyStack::create(dir.path().join("x"), &ndarray::Array1::<u8>::zeros(5), 2)?;
    /// let info = std::fs::read(dir.path().join("x/info"))?;
    /// assert_eq!(StackCheck::dask(&info, "x/info")?.shard_count(), Some(3));
    /// assert!(StackCheck::dask(b"not a pickle", "x/info").is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn dask(pickle: &[u8], name: &str) -> Result<StackCheck> {
        let info = Info::from_pickle(pickle).map_err(|e| match e {
            Error::Pickle(crate::error::PickleError::MalformedPickle { pos, reason }) => {
                Error::Pickle(crate::error::PickleError::MalformedPickle {
                    pos,
                    reason: format!("{name}: {reason}"),
                })
            }
            other => other,
        })?;
        Ok(Self::from_info(info))
    }

    /// The checks of a dask stack whose `info` has been read.
    pub(crate) fn from_info(info: Info) -> StackCheck {
        StackCheck {
            info: Some(info),
            ..Self::plain()
        }
    }

    /// How many shards `info` says there are (dask's `0.npy` ... `n-1.npy`);
    /// `None` for a plain folder, whose shards are listed.
    ///
    /// ```
    /// assert_eq!(ndnpy::stack::plan::StackCheck::plain().shard_count(), None);
    /// ```
    pub fn shard_count(&self) -> Option<usize> {
        self.info.as_ref().map(|i| i.chunks[i.axis].len())
    }

    /// Checks the header of the next shard, `name` in errors: against
    /// `info` (dtype, and the shape of its chunk), or against the first
    /// shard (dtype, shape after axis 0).
    ///
    /// ```
    /// use ndnpy::stack::plan::StackCheck;
    /// # fn header<T: ndnpy::Element + Default + Clone>(shape: &[usize]) -> ndnpy::dtype::Header {
    /// #     use ndnpy::WriteNpy;
    /// #     let bytes = ndarray::ArrayD::<T>::default(shape).to_npy_bytes().unwrap();
    /// #     ndnpy::dtype::Header::read_from(&bytes[..]).unwrap()
    /// # }
    ///
    /// let mut check = StackCheck::plain();
    /// check.push("0.npy", &header::<f32>(&[4]))?;
    /// let err = check.push("1.npy", &header::<f64>(&[4])).unwrap_err();
    /// assert!(err.to_string().contains("1.npy"));
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn push(&mut self, name: &str, header: &Header) -> Result<()> {
        let len = match &self.info {
            Some(info) => {
                let i = self.spans.len();
                if i >= info.chunks[info.axis].len() {
                    return Err(Error::Header(crate::error::HeaderError::BadShape(format!(
                        "{name}: the stack's info has {} chunks, this is one more",
                        info.chunks[info.axis].len()
                    ))));
                }
                let expected = info.shard_shape(i);
                if header.dtype != info.dtype {
                    return Err(dtype_differs(
                        name,
                        &info.dtype,
                        "the stack's info",
                        &header.dtype,
                    ));
                }
                if header.shape != expected {
                    return Err(Error::Header(crate::error::HeaderError::BadShape(format!(
                        "{name}: the shard has shape {:?}, the stack's info says {:?} (chunk {i} along axis {})",
                        &header.shape, &expected, info.axis
                    ))));
                }
                expected[info.axis]
            }
            None => {
                if header.shape.is_empty() {
                    return Err(Error::Header(crate::error::HeaderError::BadShape(format!(
                        "{name}: a 0-dimensional array has no axis to stack along"
                    ))));
                }
                if let Some((h, first_name)) = &self.first {
                    let from = format!("the dtype of {first_name}");
                    if header.dtype != h.dtype {
                        return Err(dtype_differs(name, &h.dtype, &from, &header.dtype));
                    }
                    if header.shape[1..] != h.shape[1..] {
                        return Err(Error::Header(crate::error::HeaderError::BadShape(format!(
                            "{name}: the shard has shape {:?}, which does not continue {:?} of {first_name} along axis 0",
                            &header.shape, &h.shape
                        ))));
                    }
                } else {
                    self.first = Some((header.clone(), name.to_owned()));
                }
                header.shape[0]
            }
        };
        self.spans.push((self.start, len));
        self.start = self.start.checked_add(len).ok_or_else(|| {
            Error::Header(crate::error::HeaderError::BadShape(format!(
                "{name}: the shards' lengths sum beyond usize (the stack's info: its chunks sum beyond usize)"
            )))
        })?;
        Ok(())
    }

    /// The stack, once every shard has been pushed: a dask stack needs all
    /// the shards its `info` names, a plain one at least one.
    ///
    /// ```
    /// use ndnpy::stack::plan::StackCheck;
    /// assert!(StackCheck::plain().finish().is_err()); // no shard
    /// ```
    pub fn finish(self) -> Result<StackPlan> {
        let (shape, dtype, axis, dask) = match self.info {
            Some(info) => {
                let count = info.chunks[info.axis].len();
                if self.spans.len() != count {
                    return Err(Error::Header(crate::error::HeaderError::BadShape(format!(
                        "the stack's info names {count} shards, {} were checked",
                        self.spans.len()
                    ))));
                }
                let mut shape = info.shard_shape(0);
                shape[info.axis] = self.start;
                (shape, info.dtype, info.axis, true)
            }
            None => {
                let Some((header, _)) = self.first else {
                    return Err(Error::Io(std::io::Error::new(
                        std::io::ErrorKind::InvalidInput,
                        "a stack needs at least one .npy file",
                    )));
                };
                let mut shape = header.shape;
                shape[0] = self.start;
                (shape, header.dtype, 0, false)
            }
        };
        Ok(StackPlan {
            shape,
            dtype,
            axis,
            dask,
            spans: self.spans,
        })
    }
}

/// A checked stack: its shape, dtype, stacking axis, and each shard's
/// start and length along that axis.
///
/// ```
/// use ndnpy::stack::plan::StackCheck;
/// # fn header<T: ndnpy::Element + Default + Clone>(shape: &[usize]) -> ndnpy::dtype::Header {
/// #     use ndnpy::WriteNpy;
/// #     let bytes = ndarray::ArrayD::<T>::default(shape).to_npy_bytes().unwrap();
/// #     ndnpy::dtype::Header::read_from(&bytes[..]).unwrap()
/// # }
///
/// let mut check = StackCheck::plain();
/// for rows in [4, 4, 2] {
///     check.push("shard", &header::<u16>(&[rows, 3]))?;
/// }
/// let plan = check.finish()?;
/// let pieces = plan.pieces(&(3..5));
/// assert_eq!((pieces[0].shard, pieces[0].rows.clone(), pieces[0].at), (0, 3..4, 0));
/// assert_eq!((pieces[1].shard, pieces[1].rows.clone(), pieces[1].at), (1, 0..1, 1));
/// # Ok::<(), ndnpy::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct StackPlan {
    shape: Vec<usize>,
    dtype: DType,
    axis: usize,
    dask: bool,
    spans: Vec<(usize, usize)>,
}

/// The part of one shard a range needs: the shard, its rows (in the
/// shard's numbering), and where they go in the output (in its rows).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece {
    /// The shard's index.
    pub shard: usize,
    /// Its rows the range needs, along the stacking axis.
    pub rows: Range<usize>,
    /// Where the first of them goes in the output.
    pub at: usize,
}

/// The bytes of a shard's data a piece reads, counted from the start of
/// its data, and whether they are exactly the piece's rows (else the whole
/// data, cut after reading).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PieceBytes {
    /// The byte range, from the start of the shard's data.
    pub range: Range<u64>,
    /// Whether the range holds just the piece's rows.
    pub exact: bool,
}

impl StackPlan {
    /// The shape of the whole array.
    ///
    /// ```
    /// # fn header<T: ndnpy::Element + Default + Clone>(shape: &[usize]) -> ndnpy::dtype::Header {
    /// #     use ndnpy::WriteNpy;
    /// #     let bytes = ndarray::ArrayD::<T>::default(shape).to_npy_bytes().unwrap();
    /// #     ndnpy::dtype::Header::read_from(&bytes[..]).unwrap()
    /// # }
    /// # let mut check = ndnpy::stack::plan::StackCheck::plain();
    /// # for rows in [4, 0, 2] {
    /// #     check.push("shard", &header::<u16>(&[rows, 3]))?;
    /// # }
    /// # let plan = check.finish()?; // rows 4 + 0 + 2 of 3 u16s
    /// assert_eq!(plan.shape(), [6, 3]);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The dtype of every shard.
    ///
    /// ```
    /// # fn header<T: ndnpy::Element + Default + Clone>(shape: &[usize]) -> ndnpy::dtype::Header {
    /// #     use ndnpy::WriteNpy;
    /// #     let bytes = ndarray::ArrayD::<T>::default(shape).to_npy_bytes().unwrap();
    /// #     ndnpy::dtype::Header::read_from(&bytes[..]).unwrap()
    /// # }
    /// # let mut check = ndnpy::stack::plan::StackCheck::plain();
    /// # for rows in [4, 0, 2] {
    /// #     check.push("shard", &header::<u16>(&[rows, 3]))?;
    /// # }
    /// # let plan = check.finish()?; // rows 4 + 0 + 2 of 3 u16s
    /// assert_eq!(plan.dtype().to_string(), "<u2");
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn dtype(&self) -> &DType {
        &self.dtype
    }

    /// The stacking axis.
    ///
    /// ```
    /// # fn header<T: ndnpy::Element + Default + Clone>(shape: &[usize]) -> ndnpy::dtype::Header {
    /// #     use ndnpy::WriteNpy;
    /// #     let bytes = ndarray::ArrayD::<T>::default(shape).to_npy_bytes().unwrap();
    /// #     ndnpy::dtype::Header::read_from(&bytes[..]).unwrap()
    /// # }
    /// # let mut check = ndnpy::stack::plan::StackCheck::plain();
    /// # for rows in [4, 0, 2] {
    /// #     check.push("shard", &header::<u16>(&[rows, 3]))?;
    /// # }
    /// # let plan = check.finish()?; // rows 4 + 0 + 2 of 3 u16s
    /// assert_eq!(plan.axis(), 0);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn axis(&self) -> usize {
        self.axis
    }

    /// Whether it is a dask stack.
    ///
    /// ```
    /// # fn header<T: ndnpy::Element + Default + Clone>(shape: &[usize]) -> ndnpy::dtype::Header {
    /// #     use ndnpy::WriteNpy;
    /// #     let bytes = ndarray::ArrayD::<T>::default(shape).to_npy_bytes().unwrap();
    /// #     ndnpy::dtype::Header::read_from(&bytes[..]).unwrap()
    /// # }
    /// # let mut check = ndnpy::stack::plan::StackCheck::plain();
    /// # for rows in [4, 0, 2] {
    /// #     check.push("shard", &header::<u16>(&[rows, 3]))?;
    /// # }
    /// # let plan = check.finish()?; // rows 4 + 0 + 2 of 3 u16s
    /// assert!(!plan.is_dask());
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn is_dask(&self) -> bool {
        self.dask
    }

    /// The length of the stacking axis.
    ///
    /// ```
    /// # fn header<T: ndnpy::Element + Default + Clone>(shape: &[usize]) -> ndnpy::dtype::Header {
    /// #     use ndnpy::WriteNpy;
    /// #     let bytes = ndarray::ArrayD::<T>::default(shape).to_npy_bytes().unwrap();
    /// #     ndnpy::dtype::Header::read_from(&bytes[..]).unwrap()
    /// # }
    /// # let mut check = ndnpy::stack::plan::StackCheck::plain();
    /// # for rows in [4, 0, 2] {
    /// #     check.push("shard", &header::<u16>(&[rows, 3]))?;
    /// # }
    /// # let plan = check.finish()?; // rows 4 + 0 + 2 of 3 u16s
    /// assert_eq!(plan.len(), 6);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.shape[self.axis]
    }

    /// Whether the stacking axis is empty.
    ///
    /// ```
    /// # fn header<T: ndnpy::Element + Default + Clone>(shape: &[usize]) -> ndnpy::dtype::Header {
    /// #     use ndnpy::WriteNpy;
    /// #     let bytes = ndarray::ArrayD::<T>::default(shape).to_npy_bytes().unwrap();
    /// #     ndnpy::dtype::Header::read_from(&bytes[..]).unwrap()
    /// # }
    /// # let mut check = ndnpy::stack::plan::StackCheck::plain();
    /// # for rows in [4, 0, 2] {
    /// #     check.push("shard", &header::<u16>(&[rows, 3]))?;
    /// # }
    /// # let plan = check.finish()?; // rows 4 + 0 + 2 of 3 u16s
    /// assert!(!plan.is_empty());
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Each shard's start and length along the stacking axis.
    ///
    /// ```
    /// # fn header<T: ndnpy::Element + Default + Clone>(shape: &[usize]) -> ndnpy::dtype::Header {
    /// #     use ndnpy::WriteNpy;
    /// #     let bytes = ndarray::ArrayD::<T>::default(shape).to_npy_bytes().unwrap();
    /// #     ndnpy::dtype::Header::read_from(&bytes[..]).unwrap()
    /// # }
    /// # let mut check = ndnpy::stack::plan::StackCheck::plain();
    /// # for rows in [4, 0, 2] {
    /// #     check.push("shard", &header::<u16>(&[rows, 3]))?;
    /// # }
    /// # let plan = check.finish()?; // rows 4 + 0 + 2 of 3 u16s
    /// assert_eq!(plan.spans(), [(0, 4), (4, 0), (4, 2)]);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn spans(&self) -> &[(usize, usize)] {
        &self.spans
    }

    /// The shape shard `i` has.
    ///
    /// ```
    /// # fn header<T: ndnpy::Element + Default + Clone>(shape: &[usize]) -> ndnpy::dtype::Header {
    /// #     use ndnpy::WriteNpy;
    /// #     let bytes = ndarray::ArrayD::<T>::default(shape).to_npy_bytes().unwrap();
    /// #     ndnpy::dtype::Header::read_from(&bytes[..]).unwrap()
    /// # }
    /// # let mut check = ndnpy::stack::plan::StackCheck::plain();
    /// # for rows in [4, 0, 2] {
    /// #     check.push("shard", &header::<u16>(&[rows, 3]))?;
    /// # }
    /// # let plan = check.finish()?; // rows 4 + 0 + 2 of 3 u16s
    /// assert_eq!(plan.shard_shape(2), [2, 3]);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn shard_shape(&self, i: usize) -> Vec<usize> {
        let mut shape = self.shape.clone();
        shape[self.axis] = self.spans[i].1;
        shape
    }

    /// Checks that shard `i`'s header, read again (`name` in errors), is
    /// still what the stack was opened with.
    ///
    /// ```
    /// # fn header<T: ndnpy::Element + Default + Clone>(shape: &[usize]) -> ndnpy::dtype::Header {
    /// #     use ndnpy::WriteNpy;
    /// #     let bytes = ndarray::ArrayD::<T>::default(shape).to_npy_bytes().unwrap();
    /// #     ndnpy::dtype::Header::read_from(&bytes[..]).unwrap()
    /// # }
    /// # let mut check = ndnpy::stack::plan::StackCheck::plain();
    /// # for rows in [4, 0, 2] {
    /// #     check.push("shard", &header::<u16>(&[rows, 3]))?;
    /// # }
    /// # let plan = check.finish()?; // rows 4 + 0 + 2 of 3 u16s
    /// assert!(plan.check_again(2, "2.npy", &header::<u16>(&[2, 3])).is_ok());
    /// assert!(plan.check_again(2, "2.npy", &header::<u16>(&[3, 3])).is_err());
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn check_again(&self, i: usize, name: &str, header: &Header) -> Result<()> {
        if header.dtype != self.dtype {
            return Err(dtype_differs(
                name,
                &self.dtype,
                "the stack's, when it was opened",
                &header.dtype,
            ));
        }
        let expected = self.shard_shape(i);
        if header.shape != expected {
            return Err(Error::Header(crate::error::HeaderError::BadShape(format!(
                "{name}: the shard now has shape {:?}, {:?} when the stack was opened",
                &header.shape, &expected
            ))));
        }
        Ok(())
    }

    /// The header of rows `rows` as one C-order array; a range past the
    /// end is [`crate::error::RowsError::RangeOutOfBounds`].
    ///
    /// ```
    /// # fn header<T: ndnpy::Element + Default + Clone>(shape: &[usize]) -> ndnpy::dtype::Header {
    /// #     use ndnpy::WriteNpy;
    /// #     let bytes = ndarray::ArrayD::<T>::default(shape).to_npy_bytes().unwrap();
    /// #     ndnpy::dtype::Header::read_from(&bytes[..]).unwrap()
    /// # }
    /// # let mut check = ndnpy::stack::plan::StackCheck::plain();
    /// # for rows in [4, 0, 2] {
    /// #     check.push("shard", &header::<u16>(&[rows, 3]))?;
    /// # }
    /// # let plan = check.finish()?; // rows 4 + 0 + 2 of 3 u16s
    /// assert_eq!(plan.range_header(&(3..5))?.shape, [2, 3]);
    /// assert!(plan.range_header(&(3..7)).is_err());
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn range_header(&self, rows: &Range<usize>) -> Result<Header> {
        if rows.start > rows.end || rows.end > self.len() {
            return Err(Error::Rows(crate::error::RowsError::RangeOutOfBounds {
                start: rows.start,
                end: rows.end,
                len: self.len(),
            }));
        }
        let mut shape = self.shape.clone();
        shape[self.axis] = rows.len();
        Ok(Header {
            dtype: self.dtype.clone(),
            shape,
            fortran_order: false,
            version: Version::V1,
        })
    }

    /// The shards `rows` touches (empty ones left out), with their parts
    /// of it.
    ///
    /// ```
    /// # fn header<T: ndnpy::Element + Default + Clone>(shape: &[usize]) -> ndnpy::dtype::Header {
    /// #     use ndnpy::WriteNpy;
    /// #     let bytes = ndarray::ArrayD::<T>::default(shape).to_npy_bytes().unwrap();
    /// #     ndnpy::dtype::Header::read_from(&bytes[..]).unwrap()
    /// # }
    /// # let mut check = ndnpy::stack::plan::StackCheck::plain();
    /// # for rows in [4, 0, 2] {
    /// #     check.push("shard", &header::<u16>(&[rows, 3]))?;
    /// # }
    /// # let plan = check.finish()?; // rows 4 + 0 + 2 of 3 u16s
    /// let pieces = plan.pieces(&(3..6));
    /// assert_eq!(pieces.iter().map(|p| p.shard).collect::<Vec<_>>(), [0, 2]);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn pieces(&self, rows: &Range<usize>) -> Vec<Piece> {
        let first = self.spans.partition_point(|&(s, n)| s + n <= rows.start);
        self.spans[first..]
            .iter()
            .enumerate()
            .take_while(|(_, &(s, _))| s < rows.end)
            .filter(|(_, &(_, n))| n > 0)
            .map(|(k, &(s, n))| {
                let from = rows.start.max(s);
                let to = rows.end.min(s + n);
                Piece {
                    shard: first + k,
                    rows: from - s..to - s,
                    at: from - rows.start,
                }
            })
            .collect()
    }
}
