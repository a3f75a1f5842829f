//! `.npy` benchmarks: ndnpy against the cost of moving the bytes once, and
//! against `ndarray-npy` and `npyz` doing the same thing.
//!
//! One criterion group per operation, each with its baseline:
//! - `read_c`, `read_f`, `read_big_endian`: a large `f64` file into an owned
//!   array; baseline `one_copy` reads the same bytes into a fresh buffer
//!   given huge pages.
//! - `write_{new,existing}_{c,f,strided}`: a large array (or every other
//!   column of it) to a new file or over an existing one; baseline
//!   `std_fs_write` writes a file of the same length with `std::fs::write`.
//! - `mmap_open_view`: map a file and build a view, at two sizes; baseline
//!   `memmap2` maps it without looking at it.
//! - `mmap_sum`: open, view and sum every element; baseline `memmap2` sums
//!   the mapped bytes directly with the same summation.
//!
//! Sizes and folder come from `NDNPY_BENCH_MIB` (default 256),
//! `NDNPY_BENCH_DIR` and `NDNPY_BENCH_SAMPLES`: see `benches/common/mod.rs`
//! and BENCHMARKS.md.

mod common;

use common::{Target, *};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use ndarray::{s, Array2, ArrayView2, Ix2, ShapeBuilder};
use ndnpy::npy::ReadNpyInto;
use ndnpy::{NpyMmap, ReadNpy, WriteNpy};
use std::fs::File;
use std::hint::black_box;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

/// Columns of every large array; rows follow from the size.
const COLS: usize = 4096;

/// The arrays and input files every group uses.
struct Data {
    dir: PathBuf,
    mib: usize,
    rows: usize,
    /// C-order array.
    c: Array2<f64>,
    /// The same values in Fortran layout.
    f: Array2<f64>,
    c_path: PathBuf,
    f_path: PathBuf,
    be_path: PathBuf,
    small_path: PathBuf,
    /// File images for the `std::fs::write` baselines: C/F (same length) and
    /// strided.
    image_full: Vec<u8>,
    image_strided: Vec<u8>,
}

fn values(rows: usize) -> Array2<f64> {
    Array2::from_shape_fn((rows, COLS), |(i, j)| (i * COLS + j) as f64 * 0.5)
}

fn le_bytes(a: &[f64]) -> &[u8] {
    bytemuck::cast_slice(a)
}

impl Data {
    fn new() -> Data {
        let mib = big_mib();
        let dir = bench_dir();
        // 1 MiB of f64 is 32 rows of 4096.
        let rows = mib * 32;
        let shape = [rows, COLS];
        let c = values(rows);
        let mut f = Array2::zeros((rows, COLS).f());
        f.assign(&c);

        let c_path = dir.join(format!("in_c_{mib}.npy"));
        let f_path = dir.join(format!("in_f_{mib}.npy"));
        let be_path = dir.join(format!("in_be_{mib}.npy"));
        let small_path = dir.join("in_c_1.npy");
        let c_data = le_bytes(c.as_slice().unwrap());
        ensure_file(&c_path, &[&preamble("<f8", false, &shape), c_data]);
        ensure_file(
            &f_path,
            &[
                &preamble("<f8", true, &shape),
                le_bytes(f.as_slice_memory_order().unwrap()),
            ],
        );
        if std::fs::metadata(&be_path).ok().map(|m| m.len())
            != std::fs::metadata(&c_path).ok().map(|m| m.len())
        {
            let be: Vec<u8> = c.iter().flat_map(|x| x.to_be_bytes()).collect();
            ensure_file(&be_path, &[&preamble(">f8", false, &shape), &be]);
        }
        let small = values(32);
        ensure_file(
            &small_path,
            &[
                &preamble("<f8", false, &[32, COLS]),
                le_bytes(small.as_slice().unwrap()),
            ],
        );

        let mut image_full = preamble("<f8", false, &shape);
        image_full.extend_from_slice(c_data);
        let strided = c.slice(s![.., ..;2]);
        let mut image_strided = preamble("<f8", false, strided.shape());
        image_strided.extend(strided.iter().flat_map(|x| x.to_ne_bytes()));

        let data = Data {
            dir,
            mib,
            rows,
            c,
            f,
            c_path,
            f_path,
            be_path,
            small_path,
            image_full,
            image_strided,
        };
        data.check();
        data
    }

    /// Every reader gets the right values before anything is timed.
    fn check(&self) {
        for path in [&self.c_path, &self.f_path, &self.be_path] {
            let a = Array2::<f64>::read_npy(path).expect("ndnpy reads the input");
            assert_eq!(a, self.c, "ndnpy read of {}", path.display());
            let b: Array2<f64> = ndarray_npy::read_npy(path).expect("ndarray-npy reads");
            assert_eq!(b, self.c, "ndarray-npy read of {}", path.display());
            assert_eq!(npyz_read(path), self.c, "npyz read of {}", path.display());
        }
        assert!(
            !Array2::<f64>::read_npy(&self.f_path)
                .unwrap()
                .is_standard_layout(),
            "a Fortran-order file becomes an F-layout array"
        );
        // The writers produce files that read back as the array written.
        let out = self.dir.join("check_out.npy");
        let strided = self.c.slice(s![.., ..;2]);
        for a in [self.c.view(), self.f.view(), strided] {
            a.write_npy(&out).unwrap();
            assert_eq!(Array2::<f64>::read_npy(&out).unwrap(), a);
            ndarray_npy::write_npy(&out, &a).unwrap();
            assert_eq!(Array2::<f64>::read_npy(&out).unwrap(), a);
            npyz_write(&out, a);
            assert_eq!(Array2::<f64>::read_npy(&out).unwrap(), a);
        }
        let _ = std::fs::remove_file(out);
    }

    fn bytes(&self) -> u64 {
        (self.rows * COLS * 8) as u64
    }
}

/// npyz reads into a `Vec` in file order; the array is built from it.
fn npyz_read(path: &Path) -> Array2<f64> {
    let file = npyz::NpyFile::new(std::io::BufReader::new(File::open(path).unwrap())).unwrap();
    let shape = (file.shape()[0] as usize, file.shape()[1] as usize);
    let fortran = file.order() == npyz::Order::Fortran;
    let data = file.into_vec::<f64>().unwrap();
    Array2::from_shape_vec(shape.set_f(fortran), data).unwrap()
}

/// npyz writes elements from an iterator: memory order for C and F arrays,
/// logical order otherwise.
fn npyz_write(path: &Path, a: ArrayView2<'_, f64>) {
    use npyz::WriterBuilder;
    let shape = [a.nrows() as u64, a.ncols() as u64];
    let fortran = !a.is_standard_layout() && a.t().is_standard_layout();
    let order = if fortran {
        npyz::Order::Fortran
    } else {
        npyz::Order::C
    };
    let mut w = npyz::WriteOptions::new()
        .default_dtype()
        .shape(&shape)
        .order(order)
        .writer(BufWriter::new(File::create(path).unwrap()))
        .begin_nd()
        .unwrap();
    if fortran {
        w.extend(a.t().iter().copied()).unwrap();
    } else {
        w.extend(a.iter().copied()).unwrap();
    }
    w.finish().unwrap();
}

fn read_group(c: &mut Criterion, d: &Data, name: &str, path: &Path) {
    let mut g = c.benchmark_group(name);
    configure_large(&mut g);
    g.throughput(Throughput::Bytes(d.bytes()));
    g.bench_function("one_copy", |b| {
        b.iter_custom(|n| time_each(n, || read_one_copy(path)))
    });
    if name == "read_big_endian" {
        // The native file, for the big-endian target (≤ 1.30× this).
        g.bench_function("ndnpy_native_c", |b| {
            b.iter_custom(|n| time_each(n, || Array2::<f64>::read_npy(&d.c_path).unwrap()))
        });
    }
    g.bench_function("ndnpy", |b| {
        b.iter_custom(|n| time_each(n, || Array2::<f64>::read_npy(path).unwrap()))
    });
    // Into an array allocated (and faulted in) once, outside the timing:
    // `read_npy_into` against read(2) of the data into the same memory.
    let mut into = Array2::<f64>::ones(d.c.dim());
    let data_len = into.len() * 8;
    let offset = std::fs::metadata(path).unwrap().len() - data_len as u64;
    g.bench_function("into_read2", |b| {
        b.iter_custom(|n| {
            time_each(n, || {
                use std::io::{Read, Seek, SeekFrom};
                let mut f = std::fs::File::open(path).unwrap();
                f.seek(SeekFrom::Start(offset)).unwrap();
                let bytes = bytemuck_bytes(into.as_slice_memory_order_mut().unwrap());
                f.read_exact(bytes).unwrap();
            })
        })
    });
    g.bench_function("ndnpy_into", |b| {
        b.iter_custom(|n| time_each(n, || into.view_mut().fill_from_npy(path).unwrap()))
    });
    g.bench_function("ndarray_npy", |b| {
        b.iter_custom(|n| time_each(n, || ndarray_npy::read_npy::<_, Array2<f64>>(path).unwrap()))
    });
    g.bench_function("npyz", |b| {
        b.iter_custom(|n| time_each(n, || npyz_read(path)))
    });
    g.finish();
}

/// The bytes of an `f64` slice, to read(2) into.
fn bytemuck_bytes(v: &mut [f64]) -> &mut [u8] {
    // SAFETY: any bytes are a valid `f64`, `u8` has no alignment, and the
    // result borrows `v` exclusively for its whole length in bytes.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast(), std::mem::size_of_val(v)) }
}

fn bench_read(c: &mut Criterion) {
    let d = data();
    read_group(c, d, "read_c", &d.c_path);
    read_group(c, d, "read_f", &d.f_path);
    read_group(c, d, "read_big_endian", &d.be_path);
}

fn write_group(c: &mut Criterion, d: &Data, layout: &str, target: Target) {
    let strided = d.c.slice(s![.., ..;2]);
    let (array, image) = match layout {
        "c" => (d.c.view(), &d.image_full),
        "f" => (d.f.view(), &d.image_full),
        _ => (strided, &d.image_strided),
    };
    let name = format!("write_{}_{layout}", target.name());
    let mut g = c.benchmark_group(&name);
    configure_large(&mut g);
    g.throughput(Throughput::Bytes((array.len() * 8) as u64));
    let out = |id: &str| d.dir.join(format!("out_{name}_{id}.npy"));
    let run = |g: &mut criterion::BenchmarkGroup<'_, _>, id: &str, write: &dyn Fn(&Path)| {
        let path = out(id);
        let _ = std::fs::remove_file(&path);
        g.bench_function(id, |b| {
            b.iter_custom(|n| time_writes(n, &path, target, write))
        });
        let _ = std::fs::remove_file(&path);
    };
    run(&mut g, "std_fs_write", &|p| {
        std::fs::write(p, image).unwrap()
    });
    run(&mut g, "ndnpy", &|p| array.write_npy(p).unwrap());
    run(&mut g, "ndarray_npy", &|p| {
        ndarray_npy::write_npy(p, &array).unwrap()
    });
    run(&mut g, "npyz", &|p| npyz_write(p, array));
    g.finish();
}

fn bench_write(c: &mut Criterion) {
    let d = data();
    for target in [Target::New, Target::Existing] {
        for layout in ["c", "f", "strided"] {
            write_group(c, d, layout, target);
        }
    }
}

/// Maps `path` with memmap2 (the baseline and ndarray-npy's way).
fn map(path: &Path) -> memmap2::Mmap {
    let file = File::open(path).unwrap();
    // SAFETY: the benchmark's files are not modified while mapped.
    unsafe { memmap2::Mmap::map(&file).unwrap() }
}

fn bench_mmap(c: &mut Criterion) {
    let d = data();
    let sizes = [(1, &d.small_path), (d.mib, &d.c_path)];

    let mut g = c.benchmark_group("mmap_open_view");
    g.sample_size(50);
    for (mib, path) in sizes {
        let label = mib_label(mib);
        g.bench_with_input(BenchmarkId::new("memmap2", &label), path, |b, p| {
            b.iter(|| map(p).len())
        });
        // Mapping and reading the first byte: the page fault that any
        // header parse pays.
        g.bench_with_input(BenchmarkId::new("memmap2_touch", &label), path, |b, p| {
            b.iter(|| map(p)[0])
        });
        g.bench_with_input(BenchmarkId::new("ndnpy", &label), path, |b, p| {
            b.iter(|| {
                // SAFETY: nothing else writes or truncates this file while it is mapped.
                let m = unsafe { NpyMmap::open(p) }.unwrap();
                let v = m.view::<f64, Ix2>().unwrap();
                black_box(v.dim());
            })
        });
        g.bench_with_input(BenchmarkId::new("ndarray_npy", &label), path, |b, p| {
            b.iter(|| {
                use ndarray_npy::ViewNpyExt;
                let m = map(p);
                let v = ArrayView2::<f64>::view_npy(&m).unwrap();
                black_box(v.dim());
            })
        });
        g.bench_with_input(BenchmarkId::new("npyz", &label), path, |b, p| {
            b.iter(|| {
                let m = map(p);
                #[allow(deprecated)]
                let v = npyz::NpyData::<f64>::from_bytes(&m).unwrap();
                black_box(v.len());
            })
        });
    }
    g.finish();

    let mut g = c.benchmark_group("mmap_sum");
    configure_large(&mut g);
    g.throughput(Throughput::Bytes(d.bytes()));
    let path = &d.c_path;
    let expected = d.c.sum();
    g.bench_function("memmap2", |b| {
        b.iter(|| {
            let m = map(path);
            let offset = m.len() - d.bytes() as usize;
            let data: &[f64] = bytemuck::cast_slice(&m[offset..]);
            let sum = ndarray::aview1(data).sum();
            assert_eq!(sum, expected);
        })
    });
    g.bench_function("ndnpy", |b| {
        b.iter(|| {
            // SAFETY: nothing else writes or truncates this file while it is mapped.
            let m = unsafe { NpyMmap::open(path) }.unwrap();
            let sum = m.view::<f64, Ix2>().unwrap().sum();
            assert_eq!(sum, expected);
        })
    });
    g.bench_function("ndarray_npy", |b| {
        b.iter(|| {
            use ndarray_npy::ViewNpyExt;
            let m = map(path);
            let sum = ArrayView2::<f64>::view_npy(&m).unwrap().sum();
            assert_eq!(sum, expected);
        })
    });
    g.bench_function("npyz", |b| {
        b.iter(|| {
            let m = map(path);
            #[allow(deprecated)]
            let v = npyz::NpyData::<f64>::from_bytes(&m).unwrap();
            let sum: f64 = (0..v.len()).map(|i| v.get_unchecked(i)).sum();
            black_box(sum);
        })
    });
    g.bench_function("in_memory_array", |b| b.iter(|| black_box(d.c.sum())));
    g.finish();
}

static DATA: std::sync::OnceLock<Data> = std::sync::OnceLock::new();

fn data() -> &'static Data {
    DATA.get_or_init(Data::new)
}

criterion_group!(benches, bench_read, bench_write, bench_mmap);
criterion_main!(benches);
