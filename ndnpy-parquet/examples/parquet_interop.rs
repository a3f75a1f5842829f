//! Helper of `scripts/interop_parquet.py`:
//! `parquet_interop roundtrip IN_DIR OUT_DIR` reads every `.parquet` of
//! IN_DIR and writes it again under OUT_DIR; `parquet_interop write OUT_DIR`
//! writes frames built here, which the script compares with pandas;
//! `parquet_interop to-npz IN_DIR OUT_DIR` writes every `.parquet` of IN_DIR
//! as `.npz` (the script loads them with NumPy) and `parquet_interop
//! from-npz IN_DIR OUT_DIR` every `.npz` of IN_DIR as `.parquet`.

use ndarray::array;
use ndnpy::AnyArray;
use ndnpy_parquet::{
    Categorical, Column, Compression, Frame, Index, RangeIndex, TimeUnit, Values, WriteOptions, NAT,
};
use std::path::Path;

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn roundtrip(input: &Path, output: &Path) -> Result<()> {
    std::fs::create_dir_all(output)?;
    let mut entries: Vec<_> = std::fs::read_dir(input)?.collect::<std::result::Result<_, _>>()?;
    entries.sort_by_key(|e| e.path());
    for e in entries {
        let p = e.path();
        if p.extension().is_some_and(|x| x == "parquet") {
            let frame = Frame::read(&p).map_err(|err| format!("{}: {err}", p.display()))?;
            // A frame we refuse to write is reported; the script then finds
            // no output for it.
            if let Err(err) = frame.write(output.join(p.file_name().unwrap())) {
                eprintln!("not written: {}: {err}", p.display());
            }
        }
    }
    Ok(())
}

/// Converts every file of `input` with extension `from` by `convert`.
fn each(
    input: &Path,
    output: &Path,
    from: &str,
    to: &str,
    convert: fn(&Path, &Path) -> ndnpy_parquet::Result<()>,
) -> Result<()> {
    std::fs::create_dir_all(output)?;
    let mut entries: Vec<_> = std::fs::read_dir(input)?.collect::<std::result::Result<_, _>>()?;
    entries.sort_by_key(|e| e.path());
    for e in entries {
        let p = e.path();
        if p.extension().is_some_and(|x| x == from) {
            let out = output.join(p.with_extension(to).file_name().unwrap());
            if let Err(err) = convert(&p, &out) {
                eprintln!("not written: {}: {err}", p.display());
            }
        }
    }
    Ok(())
}

fn built(output: &Path) -> Result<()> {
    std::fs::create_dir_all(output)?;
    let any = |a: AnyArray| Values::Array(a);
    // Every column family, with missing values and a named RangeIndex.
    let frame = Frame::with_index(
        vec![
            Column::new("i64", any(AnyArray::I64(array![1i64, -2, 3].into_dyn()))),
            Column::new("u8", any(AnyArray::U8(array![0u8, 255, 7].into_dyn()))),
            Column::new(
                "f32",
                any(AnyArray::F32(array![0.5f32, f32::NAN, -1.0].into_dyn())),
            ),
            Column::new(
                "b",
                any(AnyArray::Bool(array![true, false, true].into_dyn())),
            ),
            Column::new(
                "nullable",
                any(AnyArray::I64(array![10i64, 0, 30].into_dyn())),
            )
            .with_validity(vec![true, false, true])?
            .with_pandas_dtype("Int64"),
            Column::new(
                "boolean",
                any(AnyArray::Bool(array![true, false, false].into_dyn())),
            )
            .with_validity(vec![true, true, false])?
            .with_pandas_dtype("boolean"),
            Column::new("s", Values::strings(["a", "", "ç"]))
                .with_validity(vec![true, false, true])?,
            Column::new(
                "by",
                Values::bytes([b"\x00".to_vec(), b"xy".to_vec(), Vec::new()]),
            ),
            Column::new(
                "cat",
                Categorical::new(
                    AnyArray::I8(array![2i8, -1, 0].into_dyn()),
                    AnyArray::Str(
                        array!["lo".to_string(), "mid".to_string(), "hi".to_string()].into_dyn(),
                    ),
                    true,
                )?,
            ),
            // Bytes categories, the first unused.
            Column::new(
                "bcat",
                Categorical::new(
                    AnyArray::I8(array![1i8, 1, -1].into_dyn()),
                    AnyArray::Bytes(array![b"x".to_vec(), b"y".to_vec()].into_dyn()),
                    false,
                )?,
            ),
            Column::new(
                "t",
                Values::datetime64(vec![0, NAT, 1_700_000_000_000_000], TimeUnit::Microsecond),
            ),
            Column::new(
                "tz",
                Values::datetime64(vec![0, 1, 2], TimeUnit::Nanosecond),
            )
            .with_timezone("Asia/Tokyo")?,
            Column::new(
                "td",
                Values::timedelta64(vec![1, NAT, -5], TimeUnit::Second),
            ),
            // NumPy days: written as seconds (datetime64[s] in pandas).
            Column::new(
                "days",
                AnyArray::Datetime64 {
                    array: array![0i64, 1, NAT].into_dyn(),
                    unit: Some("D".into()),
                },
            ),
        ],
        Index::Range(RangeIndex {
            start: 100,
            stop: 130,
            step: 10,
            name: Some("row".into()),
        }),
    )?;
    frame.write(output.join("all_types.parquet"))?;
    // A MultiIndex with an unnamed level and a level named like a column.
    let frame = Frame::with_index(
        vec![Column::new(
            "k",
            any(AnyArray::F64(array![1.0, 2.0].into_dyn())),
        )],
        Index::Columns(vec![
            Column::new("k", Values::strings(["x", "y"])),
            Column::unnamed(any(AnyArray::I32(array![5, 6].into_dyn()))),
        ]),
    )?;
    let multi = frame;
    // Categories out of order and unused, one row per row group (one group
    // of only missing values).
    let frame = Frame::new(vec![Column::new(
        "c",
        Categorical::new(
            AnyArray::I8(array![2i8, -1, 0, 2].into_dyn()),
            AnyArray::Str(array!["a".to_string(), "b".to_string(), "c".to_string()].into_dyn()),
            true,
        )?,
    )])?;
    frame.write_with(
        output.join("categorical_row_groups.parquet"),
        &WriteOptions {
            compression: Compression::Gzip,
            row_group_size: 1,
        },
    )?;
    multi.write_with(
        output.join("multiindex_zstd.parquet"),
        &WriteOptions {
            compression: Compression::Zstd,
            row_group_size: 1,
        },
    )?;
    Ok(())
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("roundtrip") if args.len() == 4 => roundtrip(Path::new(&args[2]), Path::new(&args[3])),
        Some("write") if args.len() == 3 => built(Path::new(&args[2])),
        Some("to-npz") if args.len() == 4 => {
            each(Path::new(&args[2]), Path::new(&args[3]), "parquet", "npz", |i, o| {
                ndnpy_parquet::convert::write_npz(&Frame::read(i)?, o)
            })
        }
        Some("from-npz") if args.len() == 4 => {
            each(Path::new(&args[2]), Path::new(&args[3]), "npz", "parquet", |i, o| {
                ndnpy_parquet::convert::read_npz(i)?.write(o)
            })
        }
        _ => Err("usage: parquet_interop roundtrip IN_DIR OUT_DIR | write OUT_DIR | to-npz IN_DIR OUT_DIR | from-npz IN_DIR OUT_DIR".into()),
    }
}
