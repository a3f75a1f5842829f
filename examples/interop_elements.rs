//! Writes `.npy` files of strings, datetimes and records with ndnpy, plus
//! `manifest.json` giving, for each, a Python expression that builds the
//! equivalent NumPy array; `scripts/interop_elements.py` checks that NumPy
//! loads our files with equal dtype, shape and values, that `np.save` of
//! the equivalent array writes our header, and that re-saving our file
//! gives our bytes.
//!
//! ```text
//! cargo run --release --example interop_elements -- <dir>
//! python3 scripts/interop_elements.py <dir>
//! ```

use ndarray::{arr1, Array1, Array2, ShapeBuilder};
use ndnpy::{
    types::unit, types::Datetime64, types::FixedBytes, types::FixedUnicode, types::Timedelta64,
    WriteNpy,
};
use serde_json::json;
use std::path::Path;

ndnpy::record! {
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct Particle { pub pos: [f32; 3], pub id: i64, pub alive: bool }
}
ndnpy::record! {
    #[derive(Debug, Clone, Copy, PartialEq)]
    #[repr(C, packed)]
    pub struct PackedParticle { pub pos: [f32; 3], pub id: i64, pub alive: bool }
}
ndnpy::record! {
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct Pos { x: f32, y: f64 }
}
ndnpy::record! {
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct Inner { c: u8, d: [[i16; 2]; 2] }
}
ndnpy::record! {
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct Outer {
        t: Datetime64<unit::ns>,
        dt: Timedelta64<unit::s>,
        name: FixedUnicode<4>,
        tag: FixedBytes<3>,
        pts: [Pos; 2],
        inner: Inner,
        ok: bool,
    }
}

fn u4(s: &str) -> FixedUnicode<4> {
    let mut units = [0u32; 4];
    for (u, c) in units.iter_mut().zip(s.chars()) {
        *u = c as u32;
    }
    FixedUnicode::new(units)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args()
        .nth(1)
        .ok_or("usage: interop_elements <dir>")?;
    let dir = Path::new(&dir);
    std::fs::create_dir_all(dir)?;
    let mut manifest = Vec::new();
    let mut add = |name: &str, expr: String| manifest.push(json!({"file": name, "expect": expr}));

    let strings = ["", "a", "héllo", "😀 wide", "数字", "x\0y"];
    arr1(&strings.map(String::from)).write_npy(dir.join("strings.npy"))?;
    add("strings.npy", format!("np.array({strings:?})"));
    let grid = Array2::from_shape_vec((2, 3).f(), strings.map(String::from).to_vec())?;
    grid.write_npy(dir.join("strings_fortran.npy"))?;
    add(
        "strings_fortran.npy",
        format!("np.asfortranarray(np.array({strings:?}).reshape((2, 3), order='F'))"),
    );
    let bytes: Vec<Vec<u8>> = vec![b"".to_vec(), b"ab".to_vec(), b"\xff\x00x".to_vec()];
    Array1::from(bytes).write_npy(dir.join("bytes.npy"))?;
    add(
        "bytes.npy",
        "np.array([b'', b'ab', b'\\xff\\x00x'])".to_owned(),
    );

    let counts = [0i64, 1, -1, 123_456_789, i64::MIN];
    macro_rules! times {
        ($($u:ident => $s:literal),*) => {$(
            let file = format!("datetime_{}.npy", $s);
            Array1::from_iter(counts.map(Datetime64::<unit::$u>::new)).write_npy(dir.join(&file))?;
            add(&file, format!("np.array({counts:?}, dtype='<i8').view('<M8[{}]')", $s));
            let file = format!("timedelta_{}.npy", $s);
            Array1::from_iter(counts.map(Timedelta64::<unit::$u>::new)).write_npy(dir.join(&file))?;
            add(&file, format!("np.array({counts:?}, dtype='<i8').view('<m8[{}]')", $s));
        )*};
    }
    times!(Y => "Y", M => "M", W => "W", D => "D", h => "h", m => "m", s => "s", ms => "ms",
        us => "us", ns => "ns", ps => "ps", fs => "fs", as_ => "as");

    let particles = [
        Particle {
            pos: [1.0, 2.0, 3.0],
            id: 7,
            alive: true,
        },
        Particle {
            pos: [-0.5, 0.0, 1e30],
            id: -1,
            alive: false,
        },
    ];
    arr1(&particles).write_npy(dir.join("particles_aligned.npy"))?;
    let values = "[((1.0, 2.0, 3.0), 7, True), ((-0.5, 0.0, 1e30), -1, False)]";
    let fields = "[('pos', '<f4', (3,)), ('id', '<i8'), ('alive', '?')]";
    add(
        "particles_aligned.npy",
        format!("np.array({values}, dtype=np.dtype({fields}, align=True))"),
    );
    let packed = particles.map(|p| PackedParticle {
        pos: p.pos,
        id: p.id,
        alive: p.alive,
    });
    arr1(&packed).write_npy(dir.join("particles_packed.npy"))?;
    add(
        "particles_packed.npy",
        format!("np.array({values}, dtype=np.dtype({fields}))"),
    );
    let grid = Array2::from_shape_vec((2, 2).f(), [particles, particles].concat())?;
    grid.write_npy(dir.join("particles_fortran.npy"))?;
    add(
        "particles_fortran.npy",
        format!("np.asfortranarray(np.array({values} * 2, dtype=np.dtype({fields}, align=True)).reshape((2, 2), order='F'))"),
    );

    let outer = Outer {
        t: Datetime64::new(1_700_000_000_000_000_000),
        dt: Timedelta64::NAT,
        name: u4("héé"),
        tag: FixedBytes::new(*b"ab\0"),
        pts: [Pos { x: 1.5, y: -2.0 }, Pos { x: 0.0, y: 1e-300 }],
        inner: Inner {
            c: 200,
            d: [[1, -2], [3, -4]],
        },
        ok: true,
    };
    ndarray::arr0(outer).write_npy(dir.join("nested_0d.npy"))?;
    add(
        "nested_0d.npy",
        "np.array((1700000000000000000, np.timedelta64('NaT'), 'héé', b'ab', [(1.5, -2.0), (0.0, 1e-300)], \
         (200, [[1, -2], [3, -4]]), True), dtype=np.dtype([('t', '<M8[ns]'), ('dt', '<m8[s]'), ('name', '<U4'), \
         ('tag', 'S3'), ('pts', np.dtype([('x', '<f4'), ('y', '<f8')], align=True), (2,)), \
         ('inner', np.dtype([('c', 'u1'), ('d', '<i2', (2, 2))], align=True)), ('ok', '?')], align=True))"
            .to_owned(),
    );

    std::fs::write(
        dir.join("manifest.json"),
        serde_json::to_string_pretty(&manifest)?,
    )?;
    println!("interop_elements: wrote {} files", manifest.len());
    Ok(())
}
