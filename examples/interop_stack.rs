//! Reads and writes `.npy` stacks for `scripts/interop_stack.py` to check
//! against dask.
//!
//! ```text
//! cargo run -p ndnpy-examples --example interop_stack -- <dir>
//! ```
//! reads `<dir>/ops.txt`, one operation per line (paths relative to `<dir>`):
//!
//! - `read STACK ANY TYPED`: `NpyStack::open(STACK)`, `read_any()` saved as
//!   ANY and `read::<T, IxDyn>()` as TYPED;
//! - `range STACK START END ANY TYPED`: the same for `read_range(START..END)`;
//! - `create SRC STACK AXIS PER`: the array in SRC written with
//!   `NpyStack::create_along(STACK, .., AXIS, PER)`;
//! - `stream SRC STACK PER BLOCK`: the array in SRC written along axis 0
//!   with a `StackWriter` of PER rows per shard, BLOCK rows at a time;
//! - `files OUT FILE...`: `NpyStack::from_files(FILE...)`, `read_any()`
//!   saved as OUT.
//!
//! Typed reads dispatch on the stack's dtype.

use ndarray::{ArrayD, IxDyn};
use ndnpy::stack::{NpyStack, StackWriter};
use ndnpy::{Element, ReadNpy, WriteNpy};
use std::path::{Path, PathBuf};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn main() -> Result<()> {
    let dir = PathBuf::from(
        std::env::args()
            .nth(1)
            .ok_or("usage: interop_stack <dir>")?,
    );
    let ops = std::fs::read_to_string(dir.join("ops.txt"))?;
    for line in ops.lines().filter(|l| !l.trim().is_empty()) {
        let words: Vec<&str> = line.split_whitespace().collect();
        let descr = match words[0] {
            "create" | "stream" => ndnpy::dtype::Header::open(dir.join(words[1]))?
                .dtype
                .to_string(),
            "files" => String::new(),
            _ => NpyStack::open(dir.join(words[1]))?.dtype().to_string(),
        };
        macro_rules! dispatch {
            ($($d:literal => $t:ty),* $(,)?) => {
                match descr.as_str() {
                    $($d => run::<$t>(&dir, &words),)*
                    _ => run::<u8>(&dir, &words),
                }
            };
        }
        let result = dispatch!(
            "|b1" => bool, "|i1" => i8, "<i2" => i16, "<i4" => i32, "<i8" => i64,
            "|u1" => u8, "<u2" => u16, "<u4" => u32, "<u8" => u64,
            "<f4" => f32, "<f8" => f64, ">f8" => f64, ">i4" => i32,
            "<c8" => ndnpy::types::num_complex::Complex<f32>, "<c16" => ndnpy::types::num_complex::Complex<f64>,
            "<U1" => String, "<U3" => String,
        );
        result.map_err(|e| format!("{line}: {e}"))?;
    }
    Ok(())
}

fn run<T: Element>(dir: &Path, words: &[&str]) -> Result<()> {
    let p = |name: &str| dir.join(name);
    match words {
        ["read", stack, any, typed] => {
            let s = NpyStack::open(p(stack))?;
            s.read_any()?.write_npy(p(any))?;
            if *typed != "-" {
                s.read::<T, IxDyn>()?.write_npy(p(typed))?;
            }
        }
        ["range", stack, start, end, any, typed] => {
            let s = NpyStack::open(p(stack))?;
            let rows = start.parse()?..end.parse()?;
            s.read_range_any(rows.clone())?.write_npy(p(any))?;
            if *typed != "-" {
                s.read_range::<T, IxDyn>(rows)?.write_npy(p(typed))?;
            }
        }
        ["create", src, stack, axis, per] => {
            let a = ArrayD::<T>::read_npy(p(src))?;
            NpyStack::create_along(p(stack), &a, axis.parse()?, per.parse()?)?;
        }
        ["stream", src, stack, per, block] => {
            let a = ArrayD::<T>::read_npy(p(src))?;
            let block: usize = block.parse()?;
            let mut w = StackWriter::<T>::create(p(stack), &a.shape()[1..], per.parse()?)?;
            let mut start = 0;
            while start < a.shape()[0] {
                let end = a.shape()[0].min(start + block);
                w.write(&a.slice_axis(ndarray::Axis(0), (start..end).into()))?;
                start = end;
            }
            w.finish()?;
        }
        ["files", out, files @ ..] => {
            let s = NpyStack::from_files(files.iter().map(|f| p(f)))?;
            s.read_any()?.write_npy(p(out))?;
        }
        _ => return Err(format!("unknown operation {words:?}").into()),
    }
    Ok(())
}
