//! `.npz` archives: write one, read it back, view an aligned one in place.
//!
//! ```text
//! cargo run --example npz                          # the demonstration
//! cargo run --example npz -- rewrite IN.npz OUT    # used by scripts/interop_npz.py
//! cargo run --example npz -- stream OUT            # used by scripts/interop_npz_write.py
//! ```
//!
//! `stream` writes `OUT/threads{1,2,4}.npz` (the same multi-block
//! compressed arrays with 1, 2 and 4 threads) and `OUT/streamed.npz` /
//! `OUT/streamed_stored.npz` (members written in blocks of rows with
//! `NpzWriter::add_streaming`); NumPy checks them.
//!
//! `rewrite` reads every array of `IN.npz` (whatever its type) and writes
//! them to `OUT/stored.npz`, `OUT/compressed.npz`, `OUT/unaligned.npz` and
//! `OUT/level1.npz`, then checks that each stored member of `stored.npz` can
//! be viewed without copying. NumPy then checks that it loads them all.

use ndarray::{array, Array2, Ix1, Ix2};
use ndnpy::{AnyArray, Error, NpzMmap, NpzReader, NpzWriter};
use std::path::Path;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => demo(),
        [cmd, input, out] if cmd == "rewrite" => rewrite(Path::new(input), Path::new(out)),
        [cmd, out] if cmd == "stream" => stream(Path::new(out)),
        _ => Err("usage: npz [rewrite IN.npz OUT_DIR | stream OUT_DIR]".into()),
    }
}

fn demo() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::temp_dir().join(format!("ndnpy-npz-example-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("model.npz");

    // Write: like np.savez(path, weights=..., bias=...). Stored members are
    // aligned to 64 bytes, so they can be viewed in place later.
    let weights = Array2::from_shape_fn((256, 128), |(i, j)| (i as f32 - j as f32) / 100.0);
    let mut npz = NpzWriter::create(&path)?;
    npz.add("weights", &weights)?;
    npz.add("bias", &array![0.1f32, 0.2, 0.3])?;
    npz.add("weights_t", &weights.t())?; // written in Fortran order, no copy
    npz.finish()?;

    // Read: names, headers, typed and run-time-typed arrays.
    let mut npz = NpzReader::open(&path)?;
    println!("{} members: {:?}", npz.len(), npz.names());
    let header = npz.header("weights")?;
    println!("weights: {} {:?}", header.dtype, header.shape);
    let w = npz.read::<f32, Ix2>("weights")?;
    assert_eq!(w, weights);
    for (name, array) in npz.arrays() {
        let array = array?;
        println!("  {name}: {} {:?}", array.dtype(), array.shape());
    }
    match npz.read::<f64, Ix1>("bias") {
        Err(e @ Error::DTypeMismatch { .. }) => println!("asking for the wrong type: {e}"),
        other => panic!("expected a dtype mismatch, got {other:?}"),
    }

    // View: no copy, whatever the size.
    // SAFETY: nothing else writes or truncates this file while it is mapped.
    let map = unsafe { NpzMmap::open(&path)? };
    let view = map.view::<f32, Ix2>("weights")?;
    let inside = map
        .as_bytes()
        .as_ptr_range()
        .contains(&view.as_ptr().cast());
    println!("view of weights points into the mapped file: {inside}");
    assert!(inside);

    // Compressed archives are read, not viewed.
    let cpath = dir.join("model_compressed.npz");
    let mut npz = NpzWriter::create(&cpath)?.codec(ndnpy::npz::Codec::deflate());
    npz.add("weights", &weights)?;
    npz.finish()?;
    println!(
        "compressed: {} bytes instead of {}",
        std::fs::metadata(&cpath)?.len(),
        std::fs::metadata(&path)?.len()
    );
    // SAFETY: nothing else writes or truncates this file while it is mapped.
    let map = unsafe { NpzMmap::open(&cpath)? };
    if let Err(e) = map.view::<f32, Ix2>("weights") {
        println!("viewing a compressed member: {e}");
    }

    std::fs::remove_dir_all(&dir)?;
    Ok(())
}

fn rewrite(input: &Path, out: &Path) -> Result<(), Box<dyn std::error::Error>> {
    std::fs::create_dir_all(out)?;
    let mut npz = NpzReader::open(input)?;
    let arrays: Vec<(String, AnyArray)> = npz
        .arrays()
        .map(|(name, a)| a.map(|a| (name, a)))
        .collect::<Result<_, _>>()?;
    type Create = fn(&Path) -> ndnpy::Result<NpzWriter<std::io::BufWriter<std::fs::File>>>;
    let targets: [(&str, Create); 4] = [
        ("stored.npz", |p| NpzWriter::create(p)),
        ("compressed.npz", |p| {
            NpzWriter::create(p).map(|w| w.codec(ndnpy::npz::Codec::deflate()))
        }),
        (
            "unaligned.npz",
            |p| Ok(NpzWriter::create(p)?.aligned(false)),
        ),
        ("level1.npz", |p| {
            Ok(NpzWriter::create(p)?.codec(ndnpy::npz::Codec::Deflate { level: 1 }))
        }),
    ];
    for (file, create) in targets {
        let mut w = create(&out.join(file))?;
        for (name, array) in &arrays {
            add_any(&mut w, name, array)?;
        }
        w.finish()?;
    }
    // Every member of the aligned archive can be viewed in place.
    // SAFETY: nothing else writes or truncates this file while it is mapped.
    let map = unsafe { NpzMmap::open(out.join("stored.npz"))? };
    let range = map.as_bytes().as_ptr_range();
    for (name, array) in &arrays {
        let ptr = view_ptr(&map, name, array)?;
        if !range.contains(&ptr) && array.shape().iter().product::<usize>() > 0 {
            return Err(format!("view of {name} does not point into the map").into());
        }
    }
    println!("rewrote {} arrays into {}", arrays.len(), out.display());
    Ok(())
}

/// Calls `$body` with `$a` bound to the typed array inside `$any`.
macro_rules! with_any {
    ($any:expr, $a:ident => $body:expr) => {
        match $any {
            AnyArray::Bool($a) => $body,
            AnyArray::I8($a) => $body,
            AnyArray::I16($a) => $body,
            AnyArray::I32($a) => $body,
            AnyArray::I64($a) => $body,
            AnyArray::U8($a) => $body,
            AnyArray::U16($a) => $body,
            AnyArray::U32($a) => $body,
            AnyArray::U64($a) => $body,
            AnyArray::F32($a) => $body,
            AnyArray::F64($a) => $body,
            #[cfg(feature = "complex")]
            AnyArray::C64($a) => $body,
            #[cfg(feature = "complex")]
            AnyArray::C128($a) => $body,
            other => return Err(format!("unexpected dtype {}", other.dtype()).into()),
        }
    };
}

fn add_any<W: std::io::Write + std::io::Seek>(
    w: &mut NpzWriter<W>,
    name: &str,
    array: &AnyArray,
) -> Result<(), Box<dyn std::error::Error>> {
    w.add_any(name, array)?;
    Ok(())
}

fn view_ptr(
    map: &NpzMmap,
    name: &str,
    array: &AnyArray,
) -> Result<*const u8, Box<dyn std::error::Error>> {
    fn ptr<T: ndnpy::types::LayoutElement + bytemuck::NoUninit>(
        map: &NpzMmap,
        name: &str,
        a: &ndarray::ArrayD<T>,
    ) -> Result<*const u8, Box<dyn std::error::Error>> {
        let view = map.view::<T, ndarray::IxDyn>(name)?;
        // Compared bit for bit (NaN != NaN).
        let same = view.shape() == a.shape()
            && view
                .iter()
                .zip(a.iter())
                .all(|(x, y)| bytemuck::bytes_of(x) == bytemuck::bytes_of(y));
        if !same {
            return Err(format!("view of {name} differs from the array read").into());
        }
        Ok(view.as_ptr().cast())
    }
    Ok(with_any!(array, a => ptr(map, name, a)?))
}

/// The archives `scripts/interop_npz_write.py` checks (values as there).
fn stream(out: &Path) -> Result<(), Box<dyn std::error::Error>> {
    use ndarray::{s, Array1, Array3};
    use ndnpy::Order;
    std::fs::create_dir_all(out)?;
    let big = Array1::from_shape_fn(600_000, |i| (i % 1000) as f64 * 0.25);
    let noise = Array2::from_shape_fn((700, 1000), |(i, j)| {
        ((i * 1000 + j) as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40
    });
    let cube = Array3::from_shape_fn((64, 64, 64), |(i, j, k)| (i * j + k) as i32);
    for threads in [1, 2, 4] {
        let mut w = NpzWriter::create(out.join(format!("threads{threads}.npz")))?
            .codec(ndnpy::npz::Codec::deflate())
            .threads(threads);
        w.add("big", &big)?;
        w.add("noise", &noise)?;
        w.add("cube_strided", &cube.slice(s![..;2, .., ..;-1]))?;
        w.add("cube_f", &cube.t())?;
        w.add("small", &array![1u8, 2, 3])?;
        w.finish()?;
    }
    for (file, compressed) in [("streamed.npz", true), ("streamed_stored.npz", false)] {
        let mut w = NpzWriter::create(out.join(file))?.codec(if compressed {
            ndnpy::npz::Codec::deflate()
        } else {
            ndnpy::npz::Codec::Stored
        });
        // rows[r, c] = r * 384 + c, 5000 rows in blocks of every layout.
        let mut m = w.add_streaming::<f32>("rows", &[384], Order::C)?;
        let mut r = 0;
        while r < 5000 {
            let n = (r / 7 % 300 + 1).min(5000 - r);
            let block = Array2::from_shape_fn((n, 384), |(i, c)| ((r + i) * 384 + c) as f32);
            match r % 3 {
                0 => m.write(&block)?,
                1 => m.write(&block.t().as_standard_layout().t())?,
                _ => {
                    let wide = ndarray::concatenate![ndarray::Axis(1), block, block];
                    m.write(&wide.slice(s![.., ..384]))?
                }
            }
            r += n;
        }
        m.finish()?;
        // cols[k, c] = (k + 3 * c) % 30000, Fortran order, 70 000 columns.
        let mut m = w.add_streaming::<i16>("cols", &[3], Order::Fortran)?;
        for start in (0..70_000).step_by(1000) {
            let block =
                Array2::from_shape_fn((3, 1000), |(k, c)| ((k + 3 * (start + c)) % 30000) as i16);
            m.write(&block)?;
        }
        m.finish()?;
        let m = w.add_streaming::<u8>("empty", &[2, 5], Order::C)?;
        m.finish()?;
        let mut m = w.add_streaming::<f64>("one_by_one", &[], Order::C)?;
        for i in 0..10 {
            m.write(&ndarray::arr0(i as f64))?;
        }
        m.finish()?;
        w.add("after", &array![7i64])?;
        w.finish()?;
    }
    println!("wrote {}", out.display());
    Ok(())
}
