//! A tour of ndnpy: write arrays of several memory layouts as `.npy`, read
//! them back, map a large one into memory, inspect headers, read a file whose
//! element type is known only at run time, and bundle arrays into `.npz`.
//!
//! ```text
//! cargo run --release --example tour
//! ```
//!
//! Everything goes to a fresh folder under the system's temporary directory,
//! removed at the end.

use ndarray::{s, Array, Array1, Array2, Array3, ArrayD, Ix2, Ix3, IxDyn, ShapeBuilder};
use ndnpy::{AnyArray, NpyMmap, NpzMmap, NpzReader, NpzWriter, ReadNpy, ViewNpy, WriteNpy};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// The tour's working folder, removed when dropped (also on error).
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> std::io::Result<Self> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let dir =
            std::env::temp_dir().join(format!("ndnpy-tour-{}-{nanos:09}", std::process::id()));
        std::fs::create_dir(&dir)?;
        Ok(TempDir(dir))
    }

    fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// One line of the results table.
struct Table {
    title: &'static str,
    rows: Vec<[String; 7]>,
}

impl Table {
    fn new(title: &'static str) -> Self {
        Table {
            title,
            rows: Vec::new(),
        }
    }

    /// Records an operation on `bytes` bytes that took `time`.
    fn row(
        &mut self,
        what: &str,
        file: &str,
        shape: &dyn std::fmt::Debug,
        detail: &str,
        bytes: usize,
        time: Duration,
    ) {
        let secs = time.as_secs_f64();
        let rate = if secs > 0.0 && bytes > 0 {
            format!("{:.0}", bytes as f64 / 1e6 / secs)
        } else {
            "-".into()
        };
        self.rows.push([
            what.into(),
            file.into(),
            format!("{shape:?}").replace('"', ""),
            detail.into(),
            format!("{:.2}", bytes as f64 / 1e6),
            format!("{:.3}", secs * 1e3),
            rate,
        ]);
    }

    fn print(&self) {
        let headings = [
            "operation",
            "file",
            "shape",
            "layout / dtype",
            "MB",
            "ms",
            "MB/s",
        ];
        let rows = &self.rows;
        let mut widths: Vec<usize> = headings.iter().map(|h| h.len()).collect();
        for r in rows {
            for (w, cell) in widths.iter_mut().zip(r) {
                *w = (*w).max(cell.len());
            }
        }
        println!("\n{}", self.title);
        let line = |cells: &[String]| {
            let mut out = String::from(" ");
            for (i, (cell, w)) in cells.iter().zip(&widths).enumerate() {
                // Text left-aligned, numbers right-aligned.
                if i >= 4 {
                    out.push_str(&format!(" {cell:>w$} "));
                } else {
                    out.push_str(&format!(" {cell:<w$} "));
                }
            }
            println!("{}", out.trim_end());
        };
        line(&headings.map(String::from));
        let total: usize = widths.iter().map(|w| w + 2).sum();
        println!("  {}", "-".repeat(total - 1));
        for r in rows {
            line(r);
        }
    }
}

fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let start = Instant::now();
    let value = f();
    (value, start.elapsed())
}

fn file_len(path: &Path) -> usize {
    std::fs::metadata(path)
        .map(|m| m.len() as usize)
        .unwrap_or(0)
}

fn main() -> Result<()> {
    let dir = TempDir::new()?;
    println!("ndnpy tour: working in {}", dir.0.display());

    // ------------------------------------------------------------------
    // 1. Write arrays of several layouts, read them back.
    // ------------------------------------------------------------------
    let mut table = Table::new("1. .npy files: write any layout, read back (checked equal)");
    let c: Array2<f64> = Array::from_shape_fn((2000, 1000), |(i, j)| (i * 1000 + j) as f64 * 0.5);
    let f: Array2<f64> = Array::from_shape_fn((2000, 1000).f(), |(i, j)| (i + j) as f64);
    let strided = c.slice(s![..;2, ..;3]);
    let cube: Array3<i32> =
        Array::from_shape_fn((64, 128, 256).f(), |(i, j, k)| (i + j * k) as i32);
    let flags: Array1<bool> = (0..1_000_000).map(|i| i % 7 == 0).collect();

    macro_rules! round_trip {
        ($name:expr, $array:expr, $elem:ty, $dim:ty, $layout:expr) => {{
            let array = $array;
            let path = dir.join($name);
            let ((), t_write) = timed(|| array.write_npy(&path).expect("write"));
            let size = file_len(&path);
            let (back, t_read) = timed(|| Array::<$elem, $dim>::read_npy(&path).expect("read"));
            assert_eq!(back, array, "{} read back differently", $name);
            let layout = if back.is_standard_layout() {
                "C"
            } else if back.t().is_standard_layout() {
                "F"
            } else {
                "?"
            };
            let detail = format!(
                "{} -> {} {}",
                $layout,
                layout,
                <$elem as ndnpy::Element>::dtype()
            );
            table.row("write_npy", $name, &array.shape(), &detail, size, t_write);
            table.row("read_npy", $name, &back.shape(), &detail, size, t_read);
        }};
    }
    round_trip!("c_order.npy", &c, f64, Ix2, "C");
    round_trip!("f_order.npy", &f, f64, Ix2, "F");
    round_trip!("strided.npy", &strided, f64, Ix2, "strided");
    round_trip!("cube_f.npy", &cube, i32, Ix3, "F");
    round_trip!("flags.npy", &flags, bool, ndarray::Ix1, "C");
    table.print();
    println!(
        "  F-layout arrays are written with fortran_order: True and read back as F-layout arrays\n  \
         without a transposing copy; the strided slice is written in C order, in chunks."
    );

    // ------------------------------------------------------------------
    // 2. A 64 MiB array through a memory map.
    // ------------------------------------------------------------------
    let mut table = Table::new("2. memory maps: 64 MiB of f64 (open is O(1) in the file size)");
    let big_path = dir.join("big.npy");
    let shape = [4096, 2048]; // 8 Mi f64 = 64 MiB
    let bytes = shape[0] * shape[1] * 8;
    let (map, t_create) =
        // SAFETY: nothing else writes or truncates this file while it is mapped.
        timed(|| unsafe { NpyMmap::create::<f64, _>(&big_path, &shape, ndnpy::Order::C) });
    let mut map = map?;
    table.row("NpyMmap::create", "big.npy", &shape, "C <f8", 0, t_create);
    let ((), t_fill) = timed(|| {
        let mut view = map.view_mut::<f64, Ix2>().expect("view_mut");
        for (i, mut row) in view.rows_mut().into_iter().enumerate() {
            for (j, x) in row.iter_mut().enumerate() {
                *x = (i as f64) + (j as f64) * 1e-4;
            }
        }
    });
    table.row(
        "fill through view_mut",
        "big.npy",
        &shape,
        "C <f8",
        bytes,
        t_fill,
    );
    let (flushed, t_flush) = timed(|| map.flush());
    flushed?;
    table.row("flush", "big.npy", &shape, "C <f8", bytes, t_flush);
    drop(map);

    // SAFETY: nothing else writes or truncates this file while it is mapped.
    let (map, t_open) = timed(|| unsafe { NpyMmap::open(&big_path) });
    let map = map?;
    table.row("NpyMmap::open", "big.npy", &shape, "C <f8", 0, t_open);
    let (view, t_view) = timed(|| map.view::<f64, Ix2>());
    let view = view?;
    table.row("view::<f64, Ix2>", "big.npy", &shape, "C <f8", 0, t_view);
    let (sum, t_sum) = timed(|| view.sum());
    table.row("sum over the map", "big.npy", &shape, "C <f8", bytes, t_sum);
    let (owned, t_read) = timed(|| Array2::<f64>::read_npy(&big_path));
    let owned = owned?;
    table.row("read_npy (copy)", "big.npy", &shape, "C <f8", bytes, t_read);
    assert_eq!(owned, view);
    let file_bytes = std::fs::read(&big_path)?;
    let (v, t_slice_view) = timed(|| ndarray::ArrayView2::<f64>::view_npy(&file_bytes));
    assert_eq!(v?[[4095, 2047]], view[[4095, 2047]]);
    table.row(
        "view_npy of &[u8]",
        "big.npy",
        &shape,
        "C <f8",
        0,
        t_slice_view,
    );
    table.print();
    println!(
        "  sum of all elements: {sum:.6e}; element [4095, 2047] = {}",
        view[[4095, 2047]]
    );
    drop(map);

    // ------------------------------------------------------------------
    // 3. Headers without reading data, and dtype-unknown reading.
    // ------------------------------------------------------------------
    println!("\n3. inspect: headers without reading the data");
    for name in [
        "c_order.npy",
        "f_order.npy",
        "strided.npy",
        "cube_f.npy",
        "flags.npy",
        "big.npy",
    ] {
        let (h, t) = timed(|| ndnpy::dtype::Header::open(dir.join(name)));
        let h = h?;
        println!(
            "  {name:<12} dtype {:<4} shape {:<16} fortran_order {:<5} version {}.{}  ({:.0} µs)",
            h.dtype.to_string(),
            format!("{:?}", h.shape),
            if h.fortran_order { "True" } else { "False" },
            h.version.as_pair().0,
            h.version.as_pair().1,
            t.as_secs_f64() * 1e6
        );
    }

    println!("\n   AnyArray: read files whose element type is known only at run time");
    for name in ["cube_f.npy", "flags.npy", "strided.npy"] {
        let any = AnyArray::read_npy(dir.join(name))?;
        let summary = match &any {
            AnyArray::I32(a) => format!("i32, max {}", a.iter().max().unwrap()),
            AnyArray::Bool(a) => format!("bool, {} true", a.iter().filter(|&&b| b).count()),
            AnyArray::F64(a) => format!("f64, mean {:.3}", a.mean().unwrap()),
            other => format!("{}", other.dtype()),
        };
        println!("  {name:<12} {} {:?}: {summary}", any.dtype(), any.shape());
    }
    let cube_back: Array3<i32> = AnyArray::read_npy(dir.join("cube_f.npy"))?.into_array()?;
    assert_eq!(cube_back, cube);
    let wrong = AnyArray::read_npy(dir.join("flags.npy"))?.into_array::<f32, IxDyn>();
    println!(
        "  asking for the wrong type is an error: {}",
        wrong.unwrap_err()
    );

    // ------------------------------------------------------------------
    // 4. .npz archives.
    // ------------------------------------------------------------------
    let mut table = Table::new("4. .npz archives (np.savez / np.savez_compressed)");
    let payload = (c.len() + f.len() + strided.len()) * 8 + cube.len() * 4 + flags.len();
    for (file, compressed) in [("stored.npz", false), ("compressed.npz", true)] {
        let path = dir.join(file);
        let (written, t) = timed(|| -> ndnpy::Result<()> {
            let mut npz = if compressed {
                NpzWriter::create(&path)?.codec(ndnpy::npz::Codec::deflate())
            } else {
                NpzWriter::create(&path)?
            };
            npz.add("c", &c)?;
            npz.add("f", &f)?;
            npz.add("strided", &strided)?;
            npz.add("cube", &cube)?;
            npz.add("flags", &flags)?;
            npz.finish()
        });
        written?;
        let kind = format!(
            "{}, {:.1} MB file",
            if compressed { "deflate" } else { "stored" },
            file_len(&path) as f64 / 1e6
        );
        table.row("NpzWriter::add x5", file, &"5 arrays", &kind, payload, t);

        let (read, t) = timed(
            || -> ndnpy::Result<(Array2<f64>, Array3<i32>, ArrayD<bool>)> {
                let mut npz = NpzReader::open(&path)?;
                assert_eq!(npz.names().len(), 5);
                Ok((npz.read("f")?, npz.read("cube")?, npz.read("flags.npy")?))
            },
        );
        let (f_back, cube_back, flags_back) = read?;
        assert_eq!(f_back, f);
        assert!(
            f_back.t().is_standard_layout(),
            "F member read back as F layout"
        );
        assert_eq!(cube_back, cube);
        assert_eq!(flags_back, flags.clone().into_dyn());
        let read_bytes = (f.len() + cube.len() / 2) * 8 + flags.len();
        table.row(
            "NpzReader::read x3",
            file,
            &"f, cube, flags",
            &kind,
            read_bytes,
            t,
        );
    }
    // SAFETY: nothing else writes or truncates this file while it is mapped.
    let (map, t) = timed(|| unsafe { NpzMmap::open(dir.join("stored.npz")) });
    let map = map?;
    let (c_view, t_view) = timed(|| map.view::<f64, Ix2>("c"));
    let c_view = c_view?;
    assert_eq!(c_view, c);
    let members = format!("{} arrays", map.names().len());
    table.row("NpzMmap::open", "stored.npz", &members, "stored", 0, t);
    table.row(
        "NpzMmap::view (\"c\")",
        "stored.npz",
        &c_view.shape(),
        "zero-copy",
        0,
        t_view,
    );
    table.print();
    println!(
        "  MB and MB/s count array data; stored members are 64-byte aligned, so NpzMmap views\n  \
         them in place. Compression is libdeflate on every core, no larger than np.savez_compressed."
    );
    drop(map);

    println!("\nAll checks passed; removing {}", dir.0.display());
    Ok(())
}
