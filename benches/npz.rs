//! `.npz` benchmarks: ten 1 MiB `f64` arrays written and read back, stored
//! and compressed (deflate at zlib's default level 6, as
//! `np.savez_compressed`), by ndnpy, `ndarray-npy` and `npyz`.
//!
//! Baselines, in the same group:
//! - `npz_write_stored`: `std::fs::write` of the archive's bytes;
//! - `npz_write_compressed`: deflating the ten `.npy` images with flate2 at
//!   level 6, then `std::fs::write` of the result (no zip framing);
//! - `npz_read_stored`: the archive's bytes read once into a fresh buffer;
//! - `npz_read_compressed`: the same read plus inflating the ten deflate
//!   streams into buffers of known size.
//!
//! The archive sizes are printed and saved to `npz_sizes.json` in the
//! benchmark folder (see `benches/common/mod.rs` for the environment).

mod common;

use common::*;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ndarray::{Array1, Ix1};
use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::Path;
use std::time::Duration;

const MEMBERS: usize = 10;
/// 1 MiB of f64.
const ELEMS: usize = (1 << 20) / 8;

/// The arrays NumPy's script writes too: small integers in f64.
fn arrays() -> Vec<(String, Array1<f64>)> {
    (0..MEMBERS)
        .map(|k| {
            let a = Array1::from_shape_fn(ELEMS, |i| {
                ((i as u64 * 2654435761 + k as u64) % 4096) as f64
            });
            (format!("a{k}"), a)
        })
        .collect()
}

fn write_ndnpy(path: &Path, arrays: &[(String, Array1<f64>)], compressed: bool) {
    let mut w = if compressed {
        ndnpy::NpzWriter::create(path).map(|w| w.codec(ndnpy::npz::Codec::deflate()))
    } else {
        ndnpy::NpzWriter::create(path)
    }
    .unwrap();
    for (name, a) in arrays {
        w.add(name, a).unwrap();
    }
    w.finish().unwrap();
}

fn write_ndarray_npy(path: &Path, arrays: &[(String, Array1<f64>)], compressed: bool) {
    let file = BufWriter::new(File::create(path).unwrap());
    let mut w = if compressed {
        ndarray_npy::NpzWriter::new_compressed(file)
    } else {
        ndarray_npy::NpzWriter::new(file)
    };
    for (name, a) in arrays {
        w.add_array(name.as_str(), a).unwrap();
    }
    w.finish().unwrap().flush().unwrap();
}

fn write_npyz(path: &Path, arrays: &[(String, Array1<f64>)], compressed: bool) {
    use npyz::WriterBuilder;
    let method = if compressed {
        npyz::zip::CompressionMethod::Deflated
    } else {
        npyz::zip::CompressionMethod::Stored
    };
    let options = npyz::zip::write::FileOptions::default().compression_method(method);
    let mut w = npyz::npz::NpzWriter::create(path).unwrap();
    for (name, a) in arrays {
        let mut member = w
            .array::<f64>(name, options)
            .unwrap()
            .default_dtype()
            .shape(&[a.len() as u64])
            .begin_nd()
            .unwrap();
        member.extend(a.iter().copied()).unwrap();
        member.finish().unwrap();
    }
    w.zip_writer().finish().unwrap().flush().unwrap();
}

fn read_ndnpy(path: &Path) -> Vec<Array1<f64>> {
    let mut z = ndnpy::NpzReader::open(path).unwrap();
    (0..MEMBERS)
        .map(|k| z.read::<f64, Ix1>(&format!("a{k}")).unwrap())
        .collect()
}

fn read_ndarray_npy(path: &Path) -> Vec<Array1<f64>> {
    let mut z = ndarray_npy::NpzReader::new(File::open(path).unwrap()).unwrap();
    (0..MEMBERS)
        .map(|k| z.by_name(&format!("a{k}")).unwrap())
        .collect()
}

fn read_npyz(path: &Path) -> Vec<Array1<f64>> {
    let mut z = npyz::npz::NpzArchive::open(path).unwrap();
    (0..MEMBERS)
        .map(|k| {
            let member = z.by_name(&format!("a{k}")).unwrap().unwrap();
            Array1::from(member.into_vec::<f64>().unwrap())
        })
        .collect()
}

/// The `.npy` image of each member, as ndnpy writes it.
fn images(arrays: &[(String, Array1<f64>)]) -> Vec<Vec<u8>> {
    use ndnpy::WriteNpy;
    arrays
        .iter()
        .map(|(_, a)| a.to_npy_bytes().unwrap())
        .collect()
}

fn deflate(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(6));
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

fn inflate(stream: &[u8], len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len);
    flate2::read::DeflateDecoder::new(stream)
        .read_to_end(&mut out)
        .unwrap();
    out
}

fn bench_npz(c: &mut Criterion) {
    let dir = bench_dir();
    let arrays = arrays();
    let images = images(&arrays);
    let image_len: usize = images.iter().map(Vec::len).sum();
    let streams: Vec<Vec<u8>> = images.iter().map(|i| deflate(i)).collect();
    let deflated: Vec<u8> = streams.concat();

    type Writer = fn(&Path, &[(String, Array1<f64>)], bool);
    let writers: [(&str, Writer); 3] = [
        ("ndnpy", write_ndnpy),
        ("ndarray_npy", write_ndarray_npy),
        ("npyz", write_npyz),
    ];
    type Reader = fn(&Path) -> Vec<Array1<f64>>;
    let readers: [(&str, Reader); 3] = [
        ("ndnpy", read_ndnpy),
        ("ndarray_npy", read_ndarray_npy),
        ("npyz", read_npyz),
    ];

    let mut sizes = Vec::new();
    for compressed in [false, true] {
        let kind = if compressed { "compressed" } else { "stored" };
        // Archives of every writer, checked by every reader.
        let archive = |id: &str| dir.join(format!("npz_{kind}_{id}.npz"));
        for (id, write) in writers {
            write(&archive(id), &arrays, compressed);
            let len = std::fs::metadata(archive(id)).unwrap().len();
            sizes.push(format!("\"npz_size_{kind}/{id}\": {len}"));
            eprintln!("npz_size_{kind}/{id}: {len} bytes");
            for (reader_id, read) in readers {
                let back = read(&archive(id));
                assert!(
                    back.iter().zip(&arrays).all(|(b, (_, a))| b == a),
                    "{reader_id} reads {id}'s {kind} archive"
                );
            }
        }
        let ours = std::fs::read(archive("ndnpy")).unwrap();

        let mut g = c.benchmark_group(format!("npz_write_{kind}"));
        g.sample_size(10);
        g.warm_up_time(Duration::from_millis(500));
        g.measurement_time(Duration::from_secs(if compressed { 4 } else { 2 }));
        g.throughput(Throughput::Bytes(image_len as u64));
        let out = dir.join(format!("out_npz_{kind}.npz"));
        if compressed {
            g.bench_function("deflate_then_std_fs_write", |b| {
                b.iter_custom(|n| {
                    time_writes(n, &out, Target::New, |p| {
                        let streams: Vec<Vec<u8>> = images.iter().map(|i| deflate(i)).collect();
                        std::fs::write(p, streams.concat()).unwrap()
                    })
                })
            });
        } else {
            g.bench_function("std_fs_write", |b| {
                b.iter_custom(|n| {
                    time_writes(n, &out, Target::New, |p| std::fs::write(p, &ours).unwrap())
                })
            });
        }
        for (id, write) in writers {
            g.bench_function(id, |b| {
                b.iter_custom(|n| {
                    time_writes(n, &out, Target::New, |p| write(p, &arrays, compressed))
                })
            });
        }
        let _ = std::fs::remove_file(&out);
        g.finish();

        let mut g = c.benchmark_group(format!("npz_read_{kind}"));
        g.sample_size(20);
        g.warm_up_time(Duration::from_millis(500));
        g.measurement_time(Duration::from_secs(2));
        g.throughput(Throughput::Bytes(image_len as u64));
        let path = archive("ndnpy");
        if compressed {
            g.bench_function("one_copy_then_inflate", |b| {
                b.iter_custom(|n| {
                    time_each(n, || {
                        let bytes = read_one_copy(&path);
                        let out: Vec<Vec<u8>> = streams
                            .iter()
                            .zip(&images)
                            .map(|(s, i)| inflate(s, i.len()))
                            .collect();
                        (bytes, out)
                    })
                })
            });
        } else {
            g.bench_function("one_copy", |b| {
                b.iter_custom(|n| time_each(n, || read_one_copy(&path)))
            });
        }
        for (id, read) in readers {
            g.bench_function(id, |b| b.iter_custom(|n| time_each(n, || read(&path))));
        }
        if !compressed {
            // Stored members can be viewed in place.
            g.bench_function("ndnpy_mmap_views", |b| {
                b.iter(|| {
                    // SAFETY: nothing else writes or truncates this file while it is mapped.
                    let m = unsafe { ndnpy::NpzMmap::open(&path) }.unwrap();
                    let total: usize = (0..MEMBERS)
                        .map(|k| m.view::<f64, Ix1>(&format!("a{k}")).unwrap().len())
                        .sum();
                    assert_eq!(total, MEMBERS * ELEMS);
                })
            });
        }
        g.finish();
    }
    sizes.push(format!(
        "\"npz_size_compressed/deflate_only\": {}",
        deflated.len()
    ));
    std::fs::write(
        dir.join("npz_sizes.json"),
        format!("{{{}}}\n", sizes.join(", ")),
    )
    .unwrap();
}

criterion_group!(benches, bench_npz);
criterion_main!(benches);
