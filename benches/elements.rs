//! Strings and records: ndnpy against the one-copy baseline and `npyz`
//! (NumPy's figures come from `scripts/bench_elements.py`, run alongside).
//!
//! - `strings_read`: 1 M `<U16` strings into `Array1<String>` and into a
//!   `StringArray` (one buffer and offsets); `npyz` reads the same file
//!   into `Vec<String>`.
//! - `strings_write`: the same strings to `.npy` bytes in memory.
//! - `records_read`: 10 M records of 24 bytes (`x: f64, id: i64, y: f32,
//!   n: i32`) whose layout is the struct's own, then packed files into an
//!   aligned struct (`{f64, i32, f64}`: 20 bytes packed, 24 aligned), big
//!   endian and reordered; baseline `one_copy` reads the file's bytes.
//! - `records_view`: a zero-copy view of the 10 M-record file in memory.
//! - `record_field`: `RecordArray::field("x")` of 10 M packed records.
//!
//! `NDNPY_BENCH_RECORDS` (default 10 000 000) and `NDNPY_BENCH_STRINGS`
//! (default 1 000 000) set the sizes.

mod common;

use common::*;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ndarray::{Array1, ArrayView1};
use ndnpy::{AnyArray, ReadNpy, ViewNpy, WriteNpy};
use std::hint::black_box;
use std::path::Path;

ndnpy::record! {
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct Rec24 { x: f64, id: i64, y: f32, n: i32 }
}
ndnpy::record! {
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct Mixed { a: f64, b: i32, c: f64 }
}
ndnpy::record! {
    #[derive(Debug, Clone, Copy, PartialEq)]
    #[repr(C, packed)]
    pub struct PackedMixed { a: f64, b: i32, c: f64 }
}
ndnpy::record! {
    #[derive(Debug, Clone, Copy, PartialEq)]
    #[repr(C, packed)]
    pub struct PackedRev { c: f64, b: i32, a: f64 }
}

fn strings(n: usize) -> Array1<String> {
    Array1::from_shape_fn(n, |i| format!("name_{:0width$}", i, width = 1 + i % 11))
}

fn records(n: usize) -> Array1<Rec24> {
    Array1::from_shape_fn(n, |i| Rec24 {
        x: i as f64 * 0.5,
        id: i as i64,
        y: i as f32,
        n: -(i as i32),
    })
}

fn write_once(path: &Path, bytes: impl FnOnce() -> Vec<u8>) {
    if !path.exists() {
        std::fs::write(path, bytes()).unwrap();
    }
}

fn benches(c: &mut Criterion) {
    let dir = bench_dir();
    let n_str = env_usize("NDNPY_BENCH_STRINGS", 1_000_000);
    let n_rec = env_usize("NDNPY_BENCH_RECORDS", 10_000_000);

    // --- strings
    let names = strings(n_str);
    let str_path = dir.join(format!("strings_U16_{n_str}.npy"));
    write_once(&str_path, || {
        let bytes = names.to_npy_bytes().unwrap();
        assert!(String::from_utf8_lossy(&bytes[..128]).contains("<U16"));
        bytes
    });
    let mut g = c.benchmark_group("strings_read");
    configure_large(&mut g);
    g.throughput(Throughput::Elements(n_str as u64));
    g.bench_function("one_copy", |b| {
        b.iter(|| black_box(read_one_copy(&str_path)))
    });
    g.bench_function("ndnpy", |b| {
        b.iter(|| black_box(Array1::<String>::read_npy(&str_path).unwrap()))
    });
    g.bench_function("ndnpy_string_array", |b| {
        b.iter(|| black_box(ndnpy::types::StringArray::read_npy(&str_path).unwrap()))
    });
    g.bench_function("npyz", |b| {
        b.iter(|| {
            let file = std::io::BufReader::new(std::fs::File::open(&str_path).unwrap());
            black_box(
                npyz::NpyFile::new(file)
                    .unwrap()
                    .into_vec::<String>()
                    .unwrap(),
            )
        })
    });
    g.finish();
    let mut g = c.benchmark_group("strings_write");
    configure_large(&mut g);
    g.throughput(Throughput::Elements(n_str as u64));
    g.bench_function("ndnpy", |b| {
        b.iter(|| black_box(names.to_npy_bytes().unwrap()))
    });
    g.finish();
    drop(names);

    // --- records
    let recs = records(n_rec);
    let same = dir.join(format!("rec24_{n_rec}.npy"));
    write_once(&same, || recs.to_npy_bytes().unwrap());
    let mixed: Array1<Mixed> = recs.mapv(|r| Mixed {
        a: r.x,
        b: r.n,
        c: r.y as f64,
    });
    let packed = dir.join(format!("rec_packed_{n_rec}.npy"));
    let big = dir.join(format!("rec_be_{n_rec}.npy"));
    let reordered = dir.join(format!("rec_reordered_{n_rec}.npy"));
    // NumPy's default (packed) layout, as np.save writes it; the
    // reordered file names the fields in another order; the big-endian one
    // swaps the packed file's bytes and marks.
    let packed_le: Array1<PackedMixed> = mixed.mapv(|m| PackedMixed {
        a: m.a,
        b: m.b,
        c: m.c,
    });
    write_once(&packed, || packed_le.to_npy_bytes().unwrap());
    write_once(&reordered, || {
        mixed
            .mapv(|m| PackedRev {
                c: m.c,
                b: m.b,
                a: m.a,
            })
            .to_npy_bytes()
            .unwrap()
    });
    write_once(&big, || {
        let mut bytes = packed_le.to_npy_bytes().unwrap();
        let start = bytes.len() - n_rec * 20;
        for b in &mut bytes[..start] {
            if *b == b'<' {
                *b = b'>';
            }
        }
        for rec in bytes[start..].chunks_exact_mut(20) {
            rec[..8].reverse();
            rec[8..12].reverse();
            rec[12..].reverse();
        }
        bytes
    });
    drop(packed_le);
    let mut g = c.benchmark_group("records_read");
    configure_large(&mut g);
    g.throughput(Throughput::Bytes((n_rec * 24) as u64));
    g.bench_function("one_copy", |b| b.iter(|| black_box(read_one_copy(&same))));
    g.bench_function("same_layout", |b| {
        b.iter(|| black_box(Array1::<Rec24>::read_npy(&same).unwrap()))
    });
    g.bench_function("packed_into_aligned", |b| {
        b.iter(|| black_box(Array1::<Mixed>::read_npy(&packed).unwrap()))
    });
    g.bench_function("big_endian_packed", |b| {
        b.iter(|| black_box(Array1::<Mixed>::read_npy(&big).unwrap()))
    });
    g.bench_function("reordered_packed", |b| {
        b.iter(|| black_box(Array1::<Mixed>::read_npy(&reordered).unwrap()))
    });
    g.finish();

    let bytes = std::fs::read(&same).unwrap();
    let mut g = c.benchmark_group("records_view");
    g.bench_function("view_npy", |b| {
        b.iter(|| black_box(ArrayView1::<Rec24>::view_npy(&bytes).unwrap().len()))
    });
    g.finish();
    drop(bytes);

    let AnyArray::Record(table) = AnyArray::read_npy(&packed).unwrap() else {
        panic!("not records")
    };
    let mut g = c.benchmark_group("record_field");
    configure_large(&mut g);
    g.throughput(Throughput::Bytes((n_rec * 8) as u64));
    g.bench_function("field_f8", |b| {
        b.iter(|| black_box(table.field("a").unwrap()))
    });
    g.finish();
}

criterion_group!(elements, benches);
criterion_main!(elements);
