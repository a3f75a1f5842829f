//! The bytes of a plan's pieces: which part of a shard's data a piece
//! reads (just its rows when they are one run of bytes), and how those
//! bytes are put in their place in the range's C-order buffer.

use super::{Piece, PieceBytes, StackPlan};
use crate::error::{Error, Result};
use crate::format::header::Header;
use ndarray::{ArrayD, ArrayViewMutD, Axis, IxDyn, Slice};
use std::ops::Range;

impl StackPlan {
    /// The item size of a fixed-size dtype.
    fn item(&self) -> Result<usize> {
        self.dtype.itemsize().ok_or_else(|| {
            Error::Limit(crate::error::LimitError::LengthOverflow {
                shape: self.shape.iter().map(|&n| n as u64).collect(),
                itemsize: 0,
            })
        })
    }

    /// The bytes of the data of a shard with header `shard` that `piece`
    /// needs: just its rows when they are one run of bytes (the stacking
    /// axis is the shard's first in C order, its last in Fortran order, or
    /// the shard is 1-d), else the whole data.
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
    /// let piece = &plan.pieces(&(3..6))[1]; // rows 0..2 of shard 2
    /// let need = plan.piece_bytes(&header::<u16>(&[2, 3]), piece)?;
    /// assert_eq!((need.range, need.exact), (0..12, true));
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn piece_bytes(&self, shard: &Header, piece: &Piece) -> Result<PieceBytes> {
        let item = self.item()?;
        let ndim = shard.shape.len();
        let run_axis = if shard.fortran_order { ndim - 1 } else { 0 };
        if self.axis == run_axis {
            let row = (shard
                .shape
                .iter()
                .enumerate()
                .filter(|&(a, _)| a != self.axis)
                .map(|(_, &n)| n)
                .product::<usize>()
                * item) as u64;
            return Ok(PieceBytes {
                range: piece.rows.start as u64 * row..piece.rows.end as u64 * row,
                exact: true,
            });
        }
        Ok(PieceBytes {
            range: 0..shard.data_len()? as u64,
            exact: false,
        })
    }

    /// Whether `piece`'s bytes go straight into the output, a run into a
    /// run (C-order rows along axis 0, or a 1-d stack).
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
    /// assert!(plan.direct(&header::<u16>(&[2, 3])));
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn direct(&self, shard: &Header) -> bool {
        (self.axis == 0 && !shard.fortran_order) || self.shape.len() == 1
    }

    /// Puts `bytes`, what [`StackPlan::piece_bytes`] named of a shard with
    /// header `shard`, in its place in `out`: the C-order data of
    /// `out_header` (a [`StackPlan::range_header`]).
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
    /// let out_header = plan.range_header(&(3..6))?;
    /// let mut out = vec![0u8; out_header.data_len()?];
    /// let piece = &plan.pieces(&(3..6))[1];
    /// plan.place(&mut out, &out_header, &header::<u16>(&[2, 3]), piece, &[7u8; 12])?;
    /// assert_eq!(&out[6..], &[7u8; 12][..]);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn place(
        &self,
        out: &mut [u8],
        out_header: &Header,
        shard: &Header,
        piece: &Piece,
        bytes: &[u8],
    ) -> Result<()> {
        let item = self.item()?;
        let out_row = out_header.shape[self.axis + 1..].iter().product::<usize>() * item;
        if self.direct(shard) {
            out[piece.at * out_row..(piece.at + piece.rows.len()) * out_row].copy_from_slice(bytes);
            return Ok(());
        }
        let exact = self.piece_bytes(shard, piece)?.exact;
        let part = part_of(shard, self.axis, item, piece.rows.clone(), exact, bytes)?;
        let mut shape = out_header.shape.clone();
        shape.push(item);
        ArrayViewMutD::from_shape(IxDyn(&shape), out)
            .map_err(|_| {
                Error::Limit(crate::error::LimitError::LengthOverflow {
                    shape: out_header.shape.iter().map(|&n| n as u64).collect(),
                    itemsize: item,
                })
            })?
            .slice_axis_mut(
                Axis(self.axis),
                Slice::from(piece.at..piece.at + piece.rows.len()),
            )
            .assign(&part);
        Ok(())
    }
}

/// Rows `rows` along `axis` of a shard with header `h`, from `bytes` (just
/// those rows when `exact`, else the whole data): an array of the part's
/// shape plus a last axis of `item` bytes per element (any memory layout).
fn part_of(
    h: &Header,
    axis: usize,
    item: usize,
    rows: Range<usize>,
    exact: bool,
    bytes: &[u8],
) -> Result<ArrayD<u8>> {
    let ndim = h.shape.len();
    let mut shape = h.shape.clone();
    if exact {
        shape[axis] = rows.len();
    }
    let bytes = bytes.to_vec();
    let part = if h.fortran_order {
        // Column-major elements of `item` bytes each: C order of the
        // reversed shape, its file axes then turned back.
        let mut reversed: Vec<usize> = shape.iter().rev().copied().collect();
        reversed.push(item);
        let order: Vec<usize> = (0..ndim).rev().chain([ndim]).collect();
        ArrayD::from_shape_vec(IxDyn(&reversed), bytes).map(|a| a.permuted_axes(IxDyn(&order)))
    } else {
        shape.push(item);
        ArrayD::from_shape_vec(IxDyn(&shape), bytes)
    }
    .map_err(|_| {
        Error::Limit(crate::error::LimitError::LengthOverflow {
            shape: h.shape.iter().map(|&n| n as u64).collect(),
            itemsize: item,
        })
    })?;
    Ok(if exact {
        part
    } else {
        part.slice_axis(Axis(axis), Slice::from(rows)).to_owned()
    })
}
