//! A range read in one pass: when each shard gives its rows as one run of
//! bytes that follows the run before it in the result (a stack along the
//! first axis of C-order shards, or any 1-D stack), the runs are read one
//! after another, straight into the array by the `.npy` decoder, with no
//! buffer of the range's size in between (`read.rs`'s gathering, which
//! handles every other layout, reads the bytes twice and holds them twice).

use super::plan::Piece;
use super::NpyStack;
use crate::error::{Error, Result};
use crate::io::sized::SizedRead;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};

/// The data of a range as one reader: each piece's shard reopened (and
/// checked against the stack) when its turn comes, so that at most one
/// shard file is open at a time, however many the stack has.
pub(super) struct Runs<'s> {
    stack: &'s NpyStack,
    pieces: std::vec::IntoIter<Piece>,
    current: Option<(usize, io::Take<File>)>,
    /// A shard that no longer gives its rows as one run (replaced by one in
    /// Fortran order since the stack was opened): the caller reads the
    /// range again by gathering.
    pub(super) not_a_run: bool,
}

impl<'s> Runs<'s> {
    /// The reader of `pieces` (in result order) of `stack`, or `None` if
    /// the stack's layout does not give its rows as runs in result order.
    pub(super) fn new(stack: &'s NpyStack, pieces: Vec<Piece>) -> Option<Runs<'s>> {
        let ndim = stack.shape().len();
        if !(stack.axis() == 0 || ndim == 1) {
            return None;
        }
        // Each piece starts where the one before it ends.
        let mut at = 0;
        for piece in &pieces {
            if piece.at != at {
                return None;
            }
            at += piece.rows.len();
        }
        Some(Runs {
            stack,
            pieces: pieces.into_iter(),
            current: None,
            not_a_run: false,
        })
    }

    /// Opens the next piece's run; `false` when there is none.
    fn next_run(&mut self) -> Result<bool> {
        let Some(piece) = self.pieces.next() else {
            return Ok(false);
        };
        let path = &self.stack.shards[piece.shard].path;
        let shard = self.stack.reopen(piece.shard)?;
        if !self.stack.plan.direct(&shard.header) {
            self.not_a_run = true;
            return Err(Error::Header(crate::error::HeaderError::BadShape(format!(
                "{}: the shard's order changed since the stack was opened",
                path.display()
            ))));
        }
        let need = self.stack.plan.piece_bytes(&shard.header, &piece)?;
        let mut file = shard.file;
        file.seek(SeekFrom::Start(shard.data_offset + need.range.start))
            .map_err(|e| Error::Io(e).at_path(path))?;
        let len = need.range.end - need.range.start;
        self.current = Some((piece.shard, file.take(len)));
        Ok(true)
    }
}

impl Read for Runs<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            if let Some((shard, run)) = &mut self.current {
                let path = &self.stack.shards[*shard].path;
                let n = run
                    .read(buf)
                    .map_err(|e| typed(Error::Io(e).at_path(path)))?;
                if n > 0 {
                    return Ok(n);
                }
                if run.limit() > 0 {
                    // Reopening checked that the data is all there: the
                    // file was cut since.
                    return Err(typed(
                        Error::Io(io::ErrorKind::UnexpectedEof.into()).at_path(path),
                    ));
                }
                self.current = None;
            }
            if !self.next_run().map_err(typed)? {
                return Ok(0);
            }
        }
    }
}

// SAFETY: no method of `SizedRead` is overridden: its provided methods
// fill memory through `Read::read` alone and count what it returned
// themselves, whatever this reader does.
unsafe impl SizedRead for Runs<'_> {}

/// An error of the crate carried through `io::Read` (`Error::from` gives it
/// back).
fn typed(e: Error) -> io::Error {
    io::Error::other(e)
}
