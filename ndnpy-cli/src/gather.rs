//! Random-access reads of an input's data through a small cache, for
//! commands that visit elements out of file order (`convert --order`,
//! `diff` of arrays in different orders).

use crate::input::Opened;
use std::collections::HashMap;

/// Reads elements by number through a bounded cache of blocks, for
/// reordering (C ↔ Fortran) with positioned reads.
pub struct Gather<'o, 'a> {
    opened: &'o mut Opened<'a>,
    blocks: HashMap<u64, Vec<u8>>,
    total: u64,
    block: u64,
    max_blocks: usize,
}

/// Bytes the cache of a [`Gather`] may hold.
const CACHE_BYTES: u64 = 64 << 20;

impl<'o, 'a> Gather<'o, 'a> {
    /// A cache over the `total` data bytes of `opened`, read in an order
    /// whose fastest axis has `fast` elements. One pass along that axis
    /// touches `fast` places far apart in the file, each then read forward:
    /// blocks of `CACHE_BYTES / (2 * fast)` bytes (at most 1 MiB, at least
    /// 64) keep two blocks for each of them, so the cache is emptied only
    /// after every place has moved on to a new block, and each byte is read
    /// about twice at most. Fixed 1 MiB blocks re-read a whole block per
    /// element once `fast` passed 64.
    pub fn new(opened: &'o mut Opened<'a>, total: u64, fast: usize) -> Self {
        Self::with_cache(opened, total, fast, CACHE_BYTES)
    }

    fn with_cache(opened: &'o mut Opened<'a>, total: u64, fast: usize, cache: u64) -> Self {
        let block = (cache / (2 * fast.max(1) as u64)).clamp(64, 1 << 20);
        Gather {
            opened,
            blocks: HashMap::new(),
            total,
            block,
            max_blocks: (cache / block).max(1) as usize,
        }
    }

    /// The data read in order, for callers that do not need to reorder.
    pub fn data(&mut self) -> &mut dyn crate::input::DataSource {
        &mut *self.opened.data
    }

    pub fn get(&mut self, offset: u64, out: &mut [u8]) -> std::io::Result<()> {
        let mut done = 0;
        while done < out.len() {
            let pos = offset + done as u64;
            let block = pos / self.block;
            if !self.blocks.contains_key(&block) {
                if self.blocks.len() >= self.max_blocks {
                    self.blocks.clear();
                }
                let start = block * self.block;
                let len = self.block.min(self.total - start) as usize;
                let mut buf = vec![0u8; len];
                self.opened.data.read_at(start, &mut buf)?;
                self.blocks.insert(block, buf);
            }
            let data = &self.blocks[&block];
            let from = (pos - block * self.block) as usize;
            let n = (data.len() - from).min(out.len() - done);
            out[done..done + n].copy_from_slice(&data[from..from + n]);
            done += n;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::DataSource;
    use ndnpy::{dtype::DType, dtype::Header};
    use std::cell::Cell;
    use std::rc::Rc;

    /// Data in memory that counts the bytes read from it.
    struct Counted {
        data: Vec<u8>,
        read: Rc<Cell<u64>>,
    }

    impl DataSource for Counted {
        fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
            let start = offset as usize;
            buf.copy_from_slice(&self.data[start..start + buf.len()]);
            self.read.set(self.read.get() + buf.len() as u64);
            Ok(())
        }
    }

    /// Bytes read to visit a Fortran-order (rows, cols) array of u64 in C
    /// order through a gather whose blocks are sized for `fast` places and
    /// a cache of `cache` bytes; checks every value on the way.
    fn transpose_reads(rows: usize, cols: usize, fast: usize, cache: u64) -> u64 {
        let values: Vec<u64> = (0..(rows * cols) as u64).collect();
        let read = Rc::new(Cell::new(0));
        let total = (values.len() * 8) as u64;
        let mut opened = Opened {
            swapped_raw: false,
            header: Header {
                dtype: DType::parse("<u8").unwrap(),
                shape: vec![rows, cols],
                fortran_order: true,
                version: ndnpy::dtype::Version::V1,
            },
            data_offset: 0,
            available: total,
            data: Box::new(Counted {
                data: values.iter().flat_map(|v| v.to_le_bytes()).collect(),
                read: read.clone(),
            }),
        };
        let mut gather = Gather::with_cache(&mut opened, total, fast, cache);
        let mut out = [0u8; 8];
        for r in 0..rows {
            for c in 0..cols {
                let element = (r + c * rows) as u64;
                gather.get(element * 8, &mut out).unwrap();
                assert_eq!(u64::from_le_bytes(out), element);
            }
        }
        read.get()
    }

    #[test]
    fn reordering_reads_each_byte_about_once() {
        let (rows, cols) = (2048, 100);
        let total = (rows * cols * 8) as u64;
        // Blocks sized for the 100 places one row touches: each byte read
        // about once, twice at most.
        let sized = transpose_reads(rows, cols, cols, 64 << 10);
        assert!(sized <= 2 * total, "{sized} bytes read for {total}");
        // Blocks sized for one place (the old fixed blocks, scaled down)
        // re-read a whole block for most elements.
        let fixed = transpose_reads(rows, cols, 1, 64 << 10);
        assert!(fixed > 20 * total, "{fixed} bytes read for {total}");
    }
}
