//! The untyped part of [`NpyWriter`](super::NpyWriter): the header written
//! first (a placeholder patched at the end, or the final one when the rows
//! are declared), rows counted as they come, and the temporary file that
//! becomes the path; and [`rewrite`], the atomic rewrite of a file with a
//! new header. Knows no other file of `npy/` but `growth`, so that
//! `NpyFile` (`file.rs`) can rewrite through it.

use crate::array::element::Element;
use crate::error::{Error, Result};
use crate::format::header::{Header, MAGIC};
use crate::io::atomic::TempFile;
use crate::io::checked::CheckedWrite;
use crate::npy::growth;
use crate::options::WriteOptions;
use ndarray::{ArrayRef, Dimension};
use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;

/// Small blocks are gathered into writes of this size.
const BUFFER: usize = 256 << 10;

/// Writes `bytes` at `start` and comes back to the end: how a writer that
/// seeks records the final shape. A plain function pointer, made where
/// `W: Seek` is known, so that the writer itself needs only `Write` (and
/// [`NpyWriter::new_sized`] takes writers that cannot seek).
pub(super) type Patch<W> = fn(&mut W, u64, &[u8]) -> io::Result<()>;

pub(super) fn patch<W: Write + Seek>(writer: &mut W, start: u64, bytes: &[u8]) -> io::Result<()> {
    let end = writer.stream_position()?;
    writer.seek(SeekFrom::Start(start))?;
    CheckedWrite(&mut *writer).write_all(bytes)?;
    check_patched(writer, start, bytes.len())?;
    writer.seek(SeekFrom::Start(end))?;
    Ok(())
}

/// Checks that `len` bytes written after seeking to `start` landed there.
/// A file opened with `append(true)` (`O_APPEND`) moves every write to its
/// end whatever the seek said: the patch would go after the data and the
/// output stay unreadable while `finish` returned `Ok`. Only a position
/// past the patch's end tells that: a character device (`/dev/null`, a
/// terminal) has no position and reports 0 whatever was written.
pub(crate) fn check_patched<W: Seek>(writer: &mut W, start: u64, len: usize) -> io::Result<()> {
    let at = writer.stream_position()?;
    if at > start.saturating_add(len as u64) {
        return Err(io::Error::other(format!(
            "a header rewritten at byte {start} landed elsewhere (the writer \
             is at {at}, not {}): a file opened in append mode writes only at \
             its end; open it without `append(true)`",
            start.saturating_add(len as u64)
        )));
    }
    Ok(())
}

/// Where a writer's bytes go, which decides what dropping it unfinished
/// does (the crate docs' drop rule).
pub(super) enum Target {
    /// A temporary file that `finish` renames over the path; dropped, it is
    /// removed and the path is left as it was.
    Path(TempFile),
    /// An existing file continued in place ([`NpyWriter::append`]): its
    /// header records the new rows only at `finish`.
    Append,
    /// The caller's writer. Dropped, its rows are flushed; only a writer
    /// of declared rows ([`NpyWriter::new_sized`]) can be complete then.
    Writer,
}

/// How the header learns the row count.
pub(super) enum Rows<W> {
    /// Patched at `finish`: the header (`header_len` bytes at `start`) is
    /// rewritten with the final shape.
    Patched {
        start: u64,
        header_len: usize,
        patch: Patch<W>,
    },
    /// Written first with the final shape, which declares this many rows.
    Declared(usize),
}

/// The untyped part of a streaming writer: a header template whose growth
/// axis is patched at the end (or declared at the start), rows counted as
/// they are written.
pub(super) struct RawWriter<W: Write> {
    out: BufWriter<CheckedWrite<W>>,
    /// The header with the growth axis at 0 (patched) or at its declared
    /// length.
    pub(super) template: Header,
    pub(super) axis: usize,
    pub(super) rows: usize,
    pub(super) mode: Rows<W>,
    pub(super) target: Target,
    /// A block failed part way: what was written is incomplete.
    pub(super) failed: bool,
}

impl<W: Write> RawWriter<W> {
    /// Writes a placeholder header for `template` (its growth axis is the
    /// one to count), to be patched by `finish`. The placeholder has the
    /// length of the final header (NumPy's padding leaves room for the
    /// digits of any length) and no magic string, so output left unfinished
    /// (a panic, an error, a killed process) is never read as an array.
    pub(super) fn patched(
        mut writer: W,
        template: Header,
        target: Target,
        patch: Patch<W>,
    ) -> Result<Self>
    where
        W: Seek,
    {
        let axis = growth::axis(&template.shape, template.fortran_order)?;
        let start = writer.stream_position()?;
        // Placeholder as if the array will be long, which decides NumPy's
        // `fortran_order` flag in the common case (see `final_header`).
        let mut bytes = final_header(&template, axis, 2).to_bytes()?;
        bytes[..MAGIC.len()].fill(0);
        let mut out = BufWriter::with_capacity(BUFFER, CheckedWrite(writer));
        out.write_all(&bytes)?;
        Ok(RawWriter {
            out,
            template,
            axis,
            rows: 0,
            mode: Rows::Patched {
                start,
                header_len: bytes.len(),
                patch,
            },
            target,
            failed: false,
        })
    }

    /// Writes the final header of `header` (whose growth axis declares the
    /// rows to come) and expects exactly that many rows.
    pub(super) fn sized(writer: W, header: Header) -> Result<Self> {
        let axis = growth::axis(&header.shape, header.fortran_order)?;
        let declared = header.shape[axis];
        let final_header = final_header(&header, axis, declared);
        final_header.data_len()?;
        final_header.check_numpy_limits()?;
        let mut out = BufWriter::with_capacity(BUFFER, CheckedWrite(writer));
        out.write_all(&final_header.to_bytes()?)?;
        Ok(RawWriter {
            out,
            template: header,
            axis,
            rows: 0,
            mode: Rows::Declared(declared),
            target: Target::Writer,
            failed: false,
        })
    }

    /// Checks `block` and writes its rows. A block that does not fit is
    /// refused before anything is written; a failure while writing marks
    /// the writer failed.
    pub(super) fn write<T: Element, D: Dimension>(&mut self, block: &ArrayRef<T, D>) -> Result<()> {
        if self.failed {
            return Err(Error::Write(crate::error::WriteError::IncompleteWrite));
        }
        let block = block.view();
        let rows = growth::check_block(&self.template, self.axis, &block)?;
        let total = self.rows.checked_add(rows.shape()[0]).ok_or_else(|| {
            Error::Limit(crate::error::LimitError::LengthOverflow {
                shape: self.template.shape.iter().map(|&d| d as u64).collect(),
                itemsize: self.template.dtype.itemsize().unwrap_or(0),
            })
        })?;
        match self.mode {
            Rows::Declared(declared) if total > declared => {
                return Err(Error::Rows(crate::error::RowsError::RowCountMismatch {
                    declared,
                    written: total,
                }))
            }
            Rows::Declared(_) => {}
            Rows::Patched { .. } => {
                growth::check_grown(&growth::with_len(&self.template, self.axis, total))?
            }
        }
        if let Err(e) = growth::write_rows(&rows, &mut self.out) {
            self.failed = true;
            return Err(e);
        }
        self.rows = total;
        Ok(())
    }

    /// Records the row count (patches the header, or checks the declared
    /// count) and flushes; gives back the writer, after the data, and the
    /// target.
    pub(super) fn finish(self) -> Result<(W, Target)> {
        if self.failed {
            return Err(Error::Write(crate::error::WriteError::IncompleteWrite));
        }
        let header = match self.mode {
            Rows::Patched { header_len, .. } => {
                let header = final_header(&self.template, self.axis, self.rows);
                header.data_len()?;
                Some(growth::header_at_len(&header, header_len).ok_or_else(|| {
                    Error::Rows(crate::error::RowsError::NoHeaderRoom {
                        needed: growth::min_header_len(&header),
                        available: header_len,
                    })
                })?)
            }
            Rows::Declared(declared) if declared != self.rows => {
                return Err(Error::Rows(crate::error::RowsError::RowCountMismatch {
                    declared,
                    written: self.rows,
                }))
            }
            Rows::Declared(_) => None,
        };
        let mut writer = self.out.into_inner().map_err(|e| e.into_error())?.0;
        if let (Some(bytes), Rows::Patched { start, patch, .. }) = (header, self.mode) {
            patch(&mut writer, start, &bytes)?;
        }
        writer.flush()?;
        Ok((writer, self.target))
    }
}

impl RawWriter<File> {
    /// Continues an array whose header (`header_len` bytes at the file's
    /// start) records `header`: rows go after the data (at `data_end`), and
    /// the header is left as it is until `finish`.
    pub(super) fn resume(
        mut file: File,
        header: Header,
        header_len: usize,
        data_end: u64,
    ) -> Result<Self> {
        let axis = growth::axis(&header.shape, header.fortran_order)?;
        file.seek(SeekFrom::Start(data_end))?;
        Ok(RawWriter {
            out: BufWriter::with_capacity(BUFFER, CheckedWrite(file)),
            rows: header.shape[axis],
            template: header,
            axis,
            mode: Rows::Patched {
                start: 0,
                header_len,
                patch: patch::<File>,
            },
            target: Target::Append,
            failed: false,
        })
    }
}

/// The header for `rows` rows: `np.save` marks Fortran-order data
/// `fortran_order: True` only when it is not also C-contiguous.
pub(super) fn final_header(template: &Header, axis: usize, rows: usize) -> Header {
    let mut header = growth::with_len(template, axis, rows);
    header.fortran_order = template.fortran_order && growth::numpy_fortran_flag(&header.shape);
    header
}

/// Creates the temporary file that becomes `path` at the end, with `len`
/// bytes reserved when known. The one place this module makes temporary
/// files.
pub(super) fn create_temp(
    path: &Path,
    len: u64,
    options: &WriteOptions,
    held: Option<&File>,
) -> Result<(File, TempFile)> {
    // Never in place: `rewrite` reads the old file while writing.
    let temp = TempFile::create_replacing(path, len, options, held)?;
    let file = temp.file().try_clone()?;
    Ok((file, temp))
}

/// Rewrites the file at `path` atomically: `header` as `np.save` pads it,
/// then `data_len` bytes of data from `data`. `held` is the file at `path`,
/// open with its appender lock held by the caller.
pub(crate) fn rewrite(
    path: &Path,
    header: &Header,
    data: &mut dyn Read,
    data_len: u64,
    held: &File,
) -> Result<()> {
    let bytes = header.to_bytes()?;
    let (file, temp) = create_temp(
        path,
        bytes.len() as u64 + data_len,
        &WriteOptions::default(),
        Some(held),
    )?;
    let mut out = BufWriter::with_capacity(BUFFER, file);
    out.write_all(&bytes)?;
    let copied = io::copy(data, &mut out)?;
    if copied != data_len {
        return Err(Error::Data(crate::error::DataError::TruncatedData {
            expected: data_len,
            found: copied,
        }));
    }
    drop(out.into_inner().map_err(|e| e.into_error())?);
    temp.commit()
}
