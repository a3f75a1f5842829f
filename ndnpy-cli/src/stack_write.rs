//! `convert IN DIR --shard-rows N` (or `--shard-size BYTES`): one array
//! written as a dask stack, through the library's [`StackWriter`] (shards
//! as `np.save` writes them, `info` as `da.to_npy_stack` writes it, the
//! folder appearing only when complete).
//!
//! A C-order input is streamed a block of rows at a time (memory: one
//! block, about [`BLOCK_BYTES`]); a Fortran-order one is read whole first,
//! as its rows are not runs of bytes.

use crate::error::{CliError, CliResult};
use crate::input::{container_of, open_npy, read_options, Container, Npz, Opened};
use ndnpy::stack::StackWriter;
use ndnpy::{dtype::Header, AnyArray};
use std::io;
use std::path::{Path, PathBuf};

/// About how many bytes of rows are decoded and written at a time.
const BLOCK_BYTES: u64 = 4 << 20;

/// How shards are cut: rows each, or at most bytes each.
#[derive(Debug, Clone, Copy)]
pub enum Cut {
    Rows(usize),
    Bytes(u64),
}

/// Writes the one array of `inputs` (a `.npy` file, a stack, or the
/// `key` member of an archive) as a dask stack in the new folder `out`.
pub fn convert(
    inputs: &[PathBuf],
    out: &Path,
    key: Option<&str>,
    cut: Cut,
) -> CliResult<Vec<String>> {
    let [input] = inputs else {
        return Err(CliError::usage(
            "a stack is written from one array: name one input",
        ));
    };
    let at_in = |e: ndnpy::Error| CliError::lib(input, None, e);
    let mut npz;
    let mut opened = crate::reinterpret::apply(match container_of(input)? {
        Container::Npy => open_npy(input)?,
        Container::Npz => {
            npz = Npz::open(input)?;
            let name = match key {
                Some(k) => k.to_owned(),
                None => match &npz.names()[..] {
                    [one] => one.clone(),
                    _ => {
                        return Err(CliError::usage(format!(
                            "{}: several members; name one with --key (or ARCHIVE.npz:MEMBER)",
                            input.display()
                        )))
                    }
                },
            };
            npz.member(&name)?
        }
    });
    let opened = &mut opened;
    opened.check_complete().map_err(at_in)?;
    let header = opened.header.clone();
    if header.shape.is_empty() {
        return Err(CliError::usage(format!(
            "{}: a 0-dimensional array has no rows to cut into shards",
            input.display()
        )));
    }
    let inner = header.shape[1..].to_vec();
    let itemsize = header.dtype.itemsize().unwrap_or(0) as u64;
    let row_bytes = inner
        .iter()
        .try_fold(itemsize, |a, &n| a.checked_mul(n as u64))
        .unwrap_or(u64::MAX);
    let rows = header.shape[0];
    let per_shard = match cut {
        Cut::Rows(0) => {
            return Err(CliError::usage(
                "--shard-rows: a shard needs at least one row",
            ))
        }
        Cut::Rows(n) => n,
        Cut::Bytes(b) if row_bytes == 0 => (b as usize).max(1),
        Cut::Bytes(b) => usize::try_from(b / row_bytes).unwrap_or(usize::MAX).max(1),
    };
    let mut blocks = Blocks {
        opened,
        header,
        row_bytes,
        next: 0,
        rows,
        per_block: usize::try_from(BLOCK_BYTES / row_bytes.max(1))
            .unwrap_or(usize::MAX)
            .max(1),
        whole: false,
    };
    let first = blocks
        .next_block()
        .map_err(at_in)?
        .expect("the first block");
    let at_out = |e: ndnpy::Error| CliError::lib(out, None, e);
    /// The arms of the element types a stack writer takes: each streams
    /// the first block and the blocks after it (all of the same type).
    macro_rules! dispatch {
        ($($v:ident),* $(,)?) => {
            match first {
                $(AnyArray::$v(a) => {
                    let mut w = StackWriter::create(out, &inner, per_shard).map_err(at_out)?;
                    w.write(&a).map_err(at_out)?;
                    while let Some(block) = blocks.next_block().map_err(at_in)? {
                        let AnyArray::$v(b) = block else {
                            return Err(CliError::usage("internal: a block read as another type"));
                        };
                        w.write(&b).map_err(at_out)?;
                    }
                    w.finish().map_err(at_out)?
                })*
                other => {
                    return Err(CliError::usage(format!(
                        "{}: arrays of dtype {} cannot be written as a stack yet (numbers and bool can: the library's stack writer sizes each string shard by its own longest string, so a fixed width would not survive)",
                        input.display(),
                        other.dtype()
                    )))
                }
            }
        };
    }
    let stack = dispatch!(
        Bool,
        I8,
        I16,
        I32,
        I64,
        U8,
        U16,
        U32,
        U64,
        F16,
        F32,
        F64,
        C64,
        C128,
        LongDouble,
        ComplexLongDouble
    );
    Ok(stack
        .shards()
        .iter()
        .map(|s| s.path().display().to_string())
        .chain([out.join("info").display().to_string()])
        .collect())
}

/// The input's rows, a block at a time, decoded by the library.
struct Blocks<'o, 'a> {
    opened: &'o mut Opened<'a>,
    header: Header,
    row_bytes: u64,
    next: usize,
    rows: usize,
    per_block: usize,
    /// A Fortran-order input was read whole.
    whole: bool,
}

impl Blocks<'_, '_> {
    /// The next block of rows; the first call always gives one (perhaps
    /// of no rows), later ones `None` at the end.
    fn next_block(&mut self) -> ndnpy::Result<Option<AnyArray>> {
        if self.whole || (self.next >= self.rows && self.next > 0) {
            return Ok(None);
        }
        if self.header.fortran_order && self.header.shape.len() > 1 {
            self.whole = true;
            return crate::input::read_any(self.opened).map(Some);
        }
        let n = self.per_block.min(self.rows - self.next);
        let mut header = self.header.clone();
        header.shape[0] = n;
        let len = header.data_len()?;
        let start = self.next as u64 * self.row_bytes;
        let mut bytes = header.to_bytes()?;
        let data_at = bytes.len();
        bytes.resize(data_at + len, 0);
        self.opened.data.read_at(start, &mut bytes[data_at..])?;
        self.next += n.max(1);
        let block = AnyArray::read_npy_from_with(io::Cursor::new(bytes), &read_options())?;
        Ok(Some(block))
    }
}
