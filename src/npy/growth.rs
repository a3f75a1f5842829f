//! The growth axis of a `.npy` file: where its rows lie, how a header
//! records a longer axis in place, and positioned I/O on the file.
//!
//! Rows along the growth axis (axis 0 in C order, the last axis in Fortran
//! order) are contiguous runs of bytes in either order, so a row range is
//! one byte range and appending is writing at the end.

use crate::array::element::Element;
use crate::error::{Error, Result};
use crate::format::header::{Header, MAGIC};
use crate::io::fs::{read_at, write_at};
use ndarray::{ArrayBase, ArrayViewD, Axis, Data, Dimension};
use std::fs::File;
use std::io::{self, Read, Write};

/// The index of the growth axis, or [`crate::error::RowsError::NoGrowthAxis`] for 0-d arrays.
pub(crate) fn axis(shape: &[usize], fortran_order: bool) -> Result<usize> {
    match shape.len() {
        0 => Err(Error::Rows(crate::error::RowsError::NoGrowthAxis)),
        n if fortran_order => Ok(n - 1),
        _ => Ok(0),
    }
}

/// Refuses object arrays (`|O`, or records with an object field): their
/// data is one pickle, not fixed-size rows, so it can be neither appended to
/// nor cut at a row (and `open_append` must not cut off "trailing" bytes).
pub(crate) fn check_fixed_rows(header: &Header) -> Result<()> {
    if header.dtype.has_object() {
        return Err(Error::UnsupportedDType {
            dtype: header.dtype.to_string(),
            reason: "an object array's data is one pickle, not rows of fixed size, so it cannot be appended to or read in row ranges".into(),
        });
    }
    Ok(())
}

/// Bytes of one row: the product of the other axes times the item size.
pub(crate) fn row_bytes(header: &Header, axis: usize) -> Result<u64> {
    let itemsize = header.dtype.itemsize().ok_or_else(|| overflow(header))?;
    header
        .shape
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != axis)
        .try_fold(itemsize as u64, |acc, (_, &d)| acc.checked_mul(d as u64))
        .ok_or_else(|| overflow(header))
}

fn overflow(header: &Header) -> Error {
    Error::Limit(crate::error::LimitError::LengthOverflow {
        shape: header.shape.iter().map(|&d| d as u64).collect(),
        itemsize: header.dtype.itemsize().unwrap_or(0),
    })
}

/// Checks that a header grown by appended rows can be written: its data
/// length fits, and NumPy could load it (rows of zero size can grow the
/// axis without growing the file, so the second check still matters).
pub(crate) fn check_grown(grown: &Header) -> Result<()> {
    grown.data_len()?;
    grown.check_numpy_limits()
}

/// `header` with the growth axis set to `len`.
pub(crate) fn with_len(header: &Header, axis: usize, len: usize) -> Header {
    let mut h = header.clone();
    h.shape[axis] = len;
    h
}

/// Whether `np.save` marks an array of this shape `fortran_order: True`
/// when its data is in Fortran order: only when it is not also C-contiguous
/// (at least two axes longer than 1, and not empty).
pub(crate) fn numpy_fortran_flag(shape: &[usize]) -> bool {
    !shape.contains(&0) && shape.iter().filter(|&&d| d > 1).count() >= 2
}

/// The header bytes for `header`, exactly `len` bytes long (the length of
/// the header already in the file, so the data does not move).
///
/// When `np.save` would write a header of that length this is `np.save`'s
/// header, byte for byte: NumPy pads so that the growth axis can reach 21
/// digits without changing the length. Otherwise (a header written by
/// another tool, or one with more spare room) the same dictionary text is
/// padded with spaces to `len`. `None` when the text does not fit.
pub(crate) fn header_at_len(header: &Header, len: usize) -> Option<Vec<u8>> {
    let bytes = header.to_bytes_unchecked().ok()?;
    if bytes.len() == len {
        return Some(bytes);
    }
    let (text, utf8) = dict_text(&bytes);
    let (major, field) = if utf8 {
        (3, 4)
    } else if len.checked_sub(10)? <= u16::MAX as usize {
        (1, 2)
    } else {
        (2, 4)
    };
    let preamble = MAGIC.len() + 2 + field;
    let total = len.checked_sub(preamble)?;
    if text.len() + 1 > total || total > u32::MAX as usize {
        return None;
    }
    let mut out = Vec::with_capacity(len);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[major, 0]);
    if field == 2 {
        out.extend_from_slice(&(total as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&(total as u32).to_le_bytes());
    }
    out.extend_from_slice(text);
    out.resize(len - 1, b' ');
    out.push(b'\n');
    Some(out)
}

/// The smallest header length that can hold `header`'s dictionary text.
pub(crate) fn min_header_len(header: &Header) -> usize {
    match header.to_bytes_unchecked() {
        Ok(bytes) => {
            let (text, utf8) = dict_text(&bytes);
            let field = if utf8 || text.len() + 11 > u16::MAX as usize {
                4
            } else {
                2
            };
            MAGIC.len() + 2 + field + text.len() + 1
        }
        Err(_) => usize::MAX,
    }
}

/// The dictionary text of a header made by [`Header::to_bytes`] (padding
/// and newline removed), and whether it is UTF-8 (version 3.0).
fn dict_text(bytes: &[u8]) -> (&[u8], bool) {
    let major = bytes[6];
    let preamble = if major == 1 { 10 } else { 12 };
    let text = &bytes[preamble..];
    let end = text
        .iter()
        .rposition(|&b| b != b' ' && b != b'\n')
        .map_or(0, |i| i + 1);
    (&text[..end], major == 3)
}

/// Checks that `block` can join an array of `header`'s dtype and shape along
/// `axis`, and returns it as a view with the growth axis first and the
/// file's element order as C order (Fortran files are reversed). A block
/// with one dimension fewer than the file is a single row.
pub(crate) fn check_block<'a, T: Element, S: Data<Elem = T>, D: Dimension>(
    header: &Header,
    axis: usize,
    block: &'a ArrayBase<S, D>,
) -> Result<ArrayViewD<'a, T>> {
    crate::array::element::check_blockwise::<T>()?;
    let dtype = crate::array::encode::npy_header(block).dtype;
    if dtype != header.dtype {
        return Err(Error::Rows(crate::error::RowsError::AppendMismatch {
            what: "dtype",
            expected: format!("`{}`", header.dtype),
            found: format!("`{dtype}`"),
        }));
    }
    let ndim = header.shape.len();
    let mut view = block.view().into_dyn();
    if view.ndim() + 1 == ndim {
        view.insert_axis_inplace(Axis(axis));
    }
    if view.ndim() != ndim {
        return Err(Error::Rows(crate::error::RowsError::AppendMismatch {
            what: "number of dimensions",
            expected: format!("{ndim} (or {} for a single row)", ndim - 1),
            found: view.ndim().to_string(),
        }));
    }
    let same = (0..ndim).all(|i| i == axis || view.shape()[i] == header.shape[i]);
    if !same {
        let mut expected = header
            .shape
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>();
        expected[axis] = "_".into();
        return Err(Error::Rows(crate::error::RowsError::AppendMismatch {
            what: "shape",
            expected: format!("({})", expected.join(", ")),
            found: format!("{:?}", view.shape()),
        }));
    }
    if header.fortran_order {
        view = view.reversed_axes();
    }
    Ok(view)
}

/// Writes the elements of `rows` (growth axis first) in C order, through the
/// crate's one array writer. A block laid out in the opposite order is copied
/// to C order first (memory ∝ the block, which the caller already holds).
pub(crate) fn write_rows<T: Element, W: Write + ?Sized>(
    rows: &ArrayViewD<'_, T>,
    writer: &mut W,
) -> Result<()> {
    if !rows.is_standard_layout() && rows.t().is_standard_layout() {
        crate::array::encode::write_body(&rows.as_standard_layout(), &[], writer)
    } else {
        crate::array::encode::write_body(rows, &[], writer)
    }
}

/// Reads from a file at an explicit position (`pread`), leaving the file's
/// own offset alone, so `&File` suffices and handles can be shared.
pub(crate) struct ReadAt<'a> {
    pub(crate) file: &'a File,
    pub(crate) pos: u64,
}

impl Read for ReadAt<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = read_at(self.file, buf, self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

// SAFETY: the default `fill_whole` (`fill_zeroed`) zeroes each piece
// before reading into it and counts only the bytes the reader gave, checked
// against the piece's length.
unsafe impl crate::io::source::SizedRead for ReadAt<'_> {}

/// Writes to a file at an explicit position (`pwrite`).
pub(crate) struct WriteAt<'a> {
    pub(crate) file: &'a File,
    pub(crate) pos: u64,
}

impl Write for WriteAt<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = write_at(self.file, buf, self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::dtype::DType;
    use crate::format::header::{parse_slice, Version};
    use crate::options::ReadOptions;

    fn header(shape: &[usize]) -> Header {
        Header {
            dtype: DType::parse("<f8").unwrap(),
            shape: shape.to_vec(),
            fortran_order: false,
            version: Version::V1,
        }
    }

    #[test]
    fn header_at_len_keeps_the_length_and_parses_back() {
        let h = header(&[5, 3]);
        let numpy = h.to_bytes().unwrap();
        assert_eq!(header_at_len(&h, numpy.len()).unwrap(), numpy);
        // The growth axis reaches 20 digits at the same length.
        let long = header(&[usize::MAX, 3]);
        assert_eq!(
            header_at_len(&long, numpy.len()).unwrap().len(),
            numpy.len()
        );
        // Longer: padded; a 4-byte length field past 65 535 bytes.
        for len in [256, 70_000] {
            let bytes = header_at_len(&h, len).unwrap();
            assert_eq!(bytes.len(), len);
            assert_eq!(bytes[6], if len > 65_545 { 2 } else { 1 });
            let (parsed, offset) =
                parse_slice(&bytes, &ReadOptions::default().max_header_len(1 << 20)).unwrap();
            assert_eq!((parsed.shape, offset), (h.shape.clone(), len));
        }
        // Too short for the text.
        assert!(header_at_len(&h, 40).is_none());
        assert!(min_header_len(&h) > 40 && min_header_len(&h) < numpy.len());
    }

    #[test]
    fn numpy_marks_fortran_only_when_not_also_c() {
        assert!(numpy_fortran_flag(&[2, 3]));
        assert!(!numpy_fortran_flag(&[1, 3]));
        assert!(!numpy_fortran_flag(&[3]));
        assert!(!numpy_fortran_flag(&[0, 3, 4]));
        assert!(numpy_fortran_flag(&[2, 1, 4]));
    }
}
