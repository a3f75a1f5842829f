//! Inflating one large deflate stream (a member `np.savez_compressed`
//! wrote), for `scripts/bench_pinflate.py`: ndnpy's parallel inflater on
//! 1 and 2 threads (and more if asked), flate2 (zlib-rs) streaming, and
//! libdeflate whole, interleaved, `REPEATS` rounds; then
//! `NpzReader::read_any` of the whole archive. Prints one JSON object per
//! line: the case, wall seconds, CPU seconds (this process, all threads).
//!
//! ```text
//! pinflate RAW_DEFLATE SIZE ARCHIVE.npz REPEATS [THREADS...]
//! ```

use std::io::Read;
use std::time::Instant;

/// CPU seconds used by this process so far (user + system, all threads).
fn cpu() -> f64 {
    // SAFETY: `getrusage` writes one `rusage` into the zeroed struct we
    // own; RUSAGE_SELF is always valid.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

/// Runs `f` and prints its case, wall and CPU time (only the cases whose
/// name starts with `PINFLATE_ONLY`, if set: for profiling one).
fn time<T>(case: &str, f: impl FnOnce() -> T) {
    if std::env::var("PINFLATE_ONLY").is_ok_and(|only| !case.starts_with(&only)) {
        return;
    }
    let (wall, cpu0) = (Instant::now(), cpu());
    let out = f();
    let (wall, cpu) = (wall.elapsed().as_secs_f64(), cpu() - cpu0);
    drop(out);
    println!("{{\"case\": \"{case}\", \"wall\": {wall:.6}, \"cpu\": {cpu:.6}}}");
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let raw = std::fs::read(&args[1]).expect("the raw deflate stream");
    let size: usize = args[2].parse().expect("the inflated size");
    let archive = &args[3];
    let repeats: usize = args[4].parse().expect("repeats");
    let mut threads: Vec<usize> = args[5..]
        .iter()
        .map(|t| t.parse().expect("threads"))
        .collect();
    if threads.is_empty() {
        threads = vec![1, 2];
    }
    let crc = crc_of(&raw, size);
    // Compressed bytes per chunk (0: the library's plan), for tuning.
    let chunk: usize = std::env::var("PINFLATE_CHUNK").map_or(0, |c| c.parse().expect("bytes"));
    for _ in 0..repeats {
        time("ndnpy's decoder alone (1 thread, one chunk)", || {
            let (out, c) =
                ndnpy::npz::__inflate_parallel(&raw, size, 1, raw.len()).expect("inflates");
            assert_eq!(c, crc);
            out
        });
        for &t in &threads {
            time(&format!("ndnpy pinflate, {t} threads"), || {
                let (out, c) =
                    ndnpy::npz::__inflate_parallel(&raw, size, t, chunk).expect("inflates");
                assert_eq!(c, crc);
                out
            });
        }
        time("flate2 (zlib-rs) streaming", || {
            let mut out = Vec::with_capacity(size);
            flate2::read::DeflateDecoder::new(&raw[..])
                .read_to_end(&mut out)
                .expect("inflates");
            assert_eq!(crc32fast::hash(&out), crc);
            out
        });
        time("libdeflate whole", || {
            let mut out = vec![0u8; size];
            let n = libdeflater::Decompressor::new()
                .deflate_decompress(&raw, &mut out)
                .expect("inflates");
            assert_eq!(n, size);
            assert_eq!(crc32fast::hash(&out), crc);
            out
        });
        time("NpzReader::read_any (file to array)", || {
            let mut npz = ndnpy::NpzReader::open(archive).expect("an archive");
            let name = npz.names().into_iter().next().expect("a member");
            npz.read_any(&name).expect("reads")
        });
    }
}

/// The CRC-32 of the stream's bytes (libdeflate), to check the others.
fn crc_of(raw: &[u8], size: usize) -> u32 {
    let mut out = vec![0u8; size];
    libdeflater::Decompressor::new()
        .deflate_decompress(raw, &mut out)
        .expect("inflates");
    crc32fast::hash(&out)
}
