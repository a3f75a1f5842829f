//! The compression suite's Rust side: `NpzWriter::create(..)?.codec(Codec::deflate())` on
//! each `.npy` file of a folder (written by `scripts/bench_compress.py`,
//! which runs this program and `np.savez_compressed` in the same run and
//! compares them; see BENCHMARKS.md, "Compression suite").
//!
//! ```text
//! compress_suite DIR THREADS...
//! ```
//!
//! For each `DIR/KIND.npy` and each thread count, writes `DIR/ndnpy_KIND.npz`
//! (left for the caller to check) with the array as its only member and prints a JSON line
//! `{"kind", "threads", "seconds", "bytes"}`. The time covers creating the
//! archive through `finish` (the array is already in memory); the file is
//! removed and all dirty data flushed before each write, as the Python
//! side does.
//!
//! With `NDNPY_CODEC=zstd:LEVEL` (feature `zip-methods`) the members are
//! Zstandard at that level (`scripts/bench_zstd.py`).
//!
//! `<U` arrays are written as `u32` arrays of shape `(n, width)`: the same
//! data bytes behind a header of the same length, so the same work for the
//! compressor (an `Array<String>` would be written at the width of its
//! longest string, which can be narrower than NumPy's, and compress less
//! data than `np.savez_compressed` does).

use ndnpy::{AnyArray, NpzWriter};
use std::path::Path;
use std::time::Instant;

fn load(path: &Path) -> AnyArray {
    let header = ndnpy::dtype::Header::open(path).expect("a .npy header");
    let unicode = matches!(&header.dtype, ndnpy::dtype::DType::Scalar(s) if s.kind == ndnpy::dtype::Kind::Unicode);
    if !unicode {
        return AnyArray::read_npy(path).expect("a readable .npy file");
    }
    let bytes = std::fs::read(path).unwrap();
    let descr = header.dtype.to_string();
    let width: usize = descr
        .trim_start_matches(['<', '|', '=', '\''])
        .trim_start_matches('U')
        .trim_end_matches('\'')
        .parse()
        .unwrap_or_else(|_| panic!("unsupported dtype {descr}"));
    let n: usize = header.shape.iter().product();
    let data = &bytes[bytes.len() - n * width * 4..];
    let words: Vec<u32> = data
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    AnyArray::U32(ndarray::ArrayD::from_shape_vec(vec![n, width], words).unwrap())
}

/// The codec NDNPY_CODEC names (`zstd:LEVEL`, with the feature
/// `zip-methods`), else deflate at its default level.
fn codec() -> Option<ndnpy::npz::Codec> {
    let spec = std::env::var("NDNPY_CODEC").ok()?;
    let level = spec.strip_prefix("zstd:").expect("NDNPY_CODEC=zstd:LEVEL");
    #[cfg(feature = "zip-methods")]
    return Some(ndnpy::npz::Codec::Zstd {
        level: level.parse().expect("a level"),
    });
    #[cfg(not(feature = "zip-methods"))]
    panic!("NDNPY_CODEC={level}: build with --features zip-methods");
}

fn sync() {
    // SAFETY: sync(2) takes no arguments and cannot fail.
    unsafe { libc::sync() };
}

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = args.next().expect("usage: compress_suite DIR THREADS...");
    let threads: Vec<usize> = args.map(|a| a.parse().expect("a thread count")).collect();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "npy"))
        .collect();
    files.sort();
    for file in files {
        let kind = file.file_stem().unwrap().to_string_lossy().into_owned();
        let out = Path::new(&dir).join(format!("ndnpy_{kind}.npz"));
        let array = load(&file);
        for &t in &threads {
            let _ = std::fs::remove_file(&out);
            sync();
            let start = Instant::now();
            let mut w = NpzWriter::create(&out)
                .unwrap()
                .codec(ndnpy::npz::Codec::deflate())
                .threads(t);
            if let Some(codec) = codec() {
                w = w.codec(codec);
            }
            w.add_any(&kind, &array).unwrap();
            w.finish().unwrap();
            let seconds = start.elapsed().as_secs_f64();
            let bytes = std::fs::metadata(&out).unwrap().len();
            println!(
                "{{\"kind\": \"{kind}\", \"threads\": {t}, \"seconds\": {seconds:.6}, \"bytes\": {bytes}}}"
            );
        }
    }
}
