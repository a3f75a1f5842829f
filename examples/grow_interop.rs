//! Drives `NpyFile`, `NpyWriter` and `NpyReader` over files NumPy wrote, for
//! `scripts/interop_grow.py` to check with NumPy.
//!
//! ```text
//! cargo run --release -p ndnpy-examples --all-features --example grow_interop -- <dir>
//! ```
//! reads `<dir>/ops.txt`, one operation per line (paths relative to `<dir>`):
//!
//! - `append BASE BLOCK...`: appends each block file to BASE in place;
//! - `stream OUT C|F INNER BLOCK...`: writes the blocks to OUT with
//!   `NpyWriter` (`INNER` is the inner shape, comma-separated, `-` for none);
//! - `range SRC START END OUT`: `read_range(START..END)` of SRC, saved as OUT;
//! - `reader SRC N OUT`: `NpyReader::read_rows(N)` until the end, each block
//!   saved as `OUT.K.npy`;
//! - `make_appendable PATH`.
//!
//! Element types are dispatched on the file's descriptor.

use ndarray::{ArrayD, IxDyn};
use ndnpy::{npy::NpyReader, Element, NpyFile, NpyWriter, Order, ReadNpy, WriteNpy};
use std::path::{Path, PathBuf};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn main() -> Result<()> {
    let dir = PathBuf::from(std::env::args().nth(1).ok_or("usage: grow_interop <dir>")?);
    let ops = std::fs::read_to_string(dir.join("ops.txt"))?;
    for line in ops.lines().filter(|l| !l.trim().is_empty()) {
        let words: Vec<&str> = line.split_whitespace().collect();
        let src = match words[0] {
            "stream" => words[4],
            _ => words[1],
        };
        let descr = ndnpy::dtype::Header::open(dir.join(src))?.dtype.to_string();
        macro_rules! dispatch {
            ($($d:literal => $t:ty),* $(,)?) => {
                match descr.as_str() {
                    $($d => run::<$t>(&dir, &words),)*
                    other => Err(format!("no element type for {other}").into()),
                }
            };
        }
        let result = dispatch!(
            "|b1" => bool, "|i1" => i8, "<i2" => i16, "<i4" => i32, "<i8" => i64,
            "|u1" => u8, "<u2" => u16, "<u4" => u32, "<u8" => u64,
            "<f2" => ndnpy::types::half::f16, "<f4" => f32, "<f8" => f64,
            "<c8" => ndnpy::types::num_complex::Complex<f32>, "<c16" => ndnpy::types::num_complex::Complex<f64>,
        );
        result.map_err(|e| format!("{line}: {e}"))?;
    }
    Ok(())
}

fn run<T: Element>(dir: &Path, words: &[&str]) -> Result<()> {
    let p = |name: &str| dir.join(name);
    match words {
        ["append", base, blocks @ ..] => {
            let mut f = NpyFile::open_append(p(base))?;
            for block in blocks {
                f.append(&ArrayD::<T>::read_npy(p(block))?)?;
            }
        }
        ["stream", out, order, inner, blocks @ ..] => {
            let order = if *order == "F" {
                Order::Fortran
            } else {
                Order::C
            };
            let inner: Vec<usize> = match *inner {
                "-" => vec![],
                s => s
                    .split(',')
                    .map(str::parse::<usize>)
                    .collect::<std::result::Result<_, _>>()?,
            };
            let mut w = NpyWriter::<T>::create(p(out), &inner, order)?;
            for block in blocks {
                w.write(&ArrayD::<T>::read_npy(p(block))?)?;
            }
            w.finish()?;
        }
        ["range", src, start, end, out] => {
            let f = NpyFile::open(p(src))?;
            let rows: ArrayD<T> =
                f.read_range::<T, IxDyn>(start.parse::<usize>()?..end.parse::<usize>()?)?;
            rows.write_npy(p(out))?;
        }
        ["reader", src, n, out] => {
            let mut r = NpyReader::new(std::fs::File::open(p(src))?)?;
            let mut k = 0;
            while let Some(block) = r.read_rows::<T, IxDyn>(n.parse::<usize>()?)? {
                block.write_npy(p(&format!("{out}.{k}.npy")))?;
                k += 1;
            }
        }
        ["make_appendable", path] => {
            NpyFile::make_appendable(p(path))?;
        }
        _ => return Err(format!("unknown operation {words:?}").into()),
    }
    Ok(())
}
