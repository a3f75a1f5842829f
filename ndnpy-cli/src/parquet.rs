//! pandas DataFrames in Parquet (`ndnpy-parquet`, cargo feature `parquet`,
//! on by default): `info` shows the columns with their pandas types and the
//! index; `convert` goes Parquet ↔ `.npz` with the mapping of
//! `ndnpy_parquet::convert` (one member per column, `NAME.valid` masks,
//! `NAME.tz` zones, `NAME.codes`/`NAME.categories` categoricals, index
//! levels as `__index__.NAME`). Unlike the `.npy`/`.npz` commands these load
//! the whole frame.

use crate::error::{CliError, CliResult};
use crate::settings::{Format, Options};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Whether `path` is a Parquet file: its magic (`PAR1`), or, for a file too
/// short or damaged to tell, its extension (`.parquet`, `.pq`), so that the
/// Parquet reader reports what is wrong.
pub fn is_parquet(path: &Path) -> bool {
    let mut magic = [0u8; 4];
    let read = crate::source::Source::open(path)
        .ok()
        .map(|source| source.read_exact_at(&mut magic, 0));
    if matches!(read, Some(Ok(()))) && &magic == b"PAR1" {
        return true;
    }
    has_parquet_extension(path)
}

pub fn has_parquet_extension(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("parquet" | "pq")
    )
}

#[cfg(not(feature = "parquet"))]
fn unavailable(path: &Path) -> CliError {
    CliError::usage(format!(
        "{}: this ndnpy was built without Parquet support (cargo feature `parquet`)",
        path.display()
    ))
}

#[cfg(not(feature = "parquet"))]
pub fn info(path: &Path) -> CliResult<Value> {
    Err(unavailable(path))
}

#[cfg(not(feature = "parquet"))]
pub fn convert(inputs: &[PathBuf], out: &Path, _: Format, _: &Options) -> CliResult<Vec<String>> {
    Err(unavailable(inputs.first().map_or(out, |p| p.as_path())))
}

#[cfg(not(feature = "parquet"))]
pub fn arrays(path: &Path) -> CliResult<Vec<(String, ndnpy::AnyArray)>> {
    Err(unavailable(path))
}

#[cfg(feature = "parquet")]
pub use imp::{arrays, convert, info};

pub fn render(v: &Value) -> String {
    let s = |v: &Value| v.as_str().unwrap_or("").to_owned();
    let mut out = format!("{}\n", s(&v["path"]));
    let columns = v["columns"].as_array().cloned().unwrap_or_default();
    out.push_str(&format!(
        "  Parquet (pandas DataFrame), {} rows, {} columns\n",
        v["rows"],
        columns.len()
    ));
    let line = |c: &Value| {
        let mut notes = Vec::new();
        if let Some(tz) = c["timezone"].as_str() {
            notes.push(format!("tz={tz}"));
        }
        if let Some(k) = c["categories"].as_u64() {
            let ordered = if c["ordered"] == Value::Bool(true) {
                ", ordered"
            } else {
                ""
            };
            notes.push(format!(
                "{k} categories ({}){ordered}",
                s(&c["categories_dtype"])
            ));
        }
        if c["missing"].as_u64().unwrap_or(0) > 0 {
            notes.push(format!("{} missing", c["missing"]));
        }
        let name = match &c["name"] {
            Value::Null => "(unnamed)".to_owned(),
            n => s(n),
        };
        let text = format!(
            "  {:<20} {:<12} {:<18} {:<10} {}",
            name,
            s(&c["pandas_type"]),
            s(&c["numpy_type"]),
            s(&c["npz_dtype"]),
            notes.join(", ")
        );
        format!("{}\n", text.trim_end())
    };
    out.push_str("  column               pandas_type  numpy_type         npz dtype  notes\n");
    for c in &columns {
        out.push_str(&line(c));
    }
    let index = &v["index"];
    if index["kind"] == "range" {
        let name = match &index["name"] {
            Value::Null => String::new(),
            n => format!(", name={n}"),
        };
        out.push_str(&format!(
            "  index: RangeIndex(start={}, stop={}, step={}{name})\n",
            index["start"], index["stop"], index["step"]
        ));
    } else {
        let levels = index["levels"].as_array().cloned().unwrap_or_default();
        let kind = if levels.len() > 1 {
            "MultiIndex"
        } else {
            "Index"
        };
        out.push_str(&format!("  index: {kind}, {} level(s)\n", levels.len()));
        for l in &levels {
            out.push_str(&line(l));
        }
    }
    out
}

#[cfg(feature = "parquet")]
mod imp {
    use super::*;
    use crate::source::Source;
    use ndnpy_parquet::{ColumnSummary, Error, Frame, IndexSummary, Summary};
    use serde_json::json;

    fn error(path: &Path, e: Error) -> CliError {
        let message = format!("{}: {e}", path.display());
        match e {
            Error::Io(_) => CliError::usage(message),
            _ => CliError::problem(message),
        }
    }

    fn column_json(c: &ColumnSummary) -> Value {
        let mut v = json!({
            "name": c.name,
            "pandas_type": c.pandas_type,
            "numpy_type": c.numpy_type,
            "missing": c.missing,
            "npz_dtype": c.npz_dtype,
        });
        if let Some(ordered) = c.ordered {
            v["categories"] = json!(c.categories);
            v["categories_dtype"] = json!(c.categories_dtype);
            v["ordered"] = json!(ordered);
        }
        if let Some(tz) = &c.timezone {
            v["timezone"] = json!(tz);
        }
        v
    }

    /// The frame's columns, pandas types and index, as JSON: from the
    /// footer only (no page is read).
    pub fn info(path: &Path) -> CliResult<Value> {
        let local = Source::local_path(path)?;
        let summary = Summary::read(local).map_err(|e| error(path, e))?;
        let index = match &summary.index {
            IndexSummary::Range(r) => json!({
                "kind": "range", "start": r.start, "stop": r.stop, "step": r.step, "name": r.name,
            }),
            IndexSummary::Levels(levels) => json!({
                "kind": "levels",
                "levels": levels.iter().map(column_json).collect::<Vec<_>>(),
            }),
        };
        Ok(json!({
            "path": path.display().to_string(),
            "format": "parquet",
            "rows": summary.rows,
            "columns": summary.columns.iter().map(column_json).collect::<Vec<_>>(),
            "index": index,
        }))
    }

    /// The frame as the named arrays `convert` writes to `.npz`.
    pub fn arrays(path: &Path) -> CliResult<Vec<(String, ndnpy::AnyArray)>> {
        let local = Source::local_path(path)?;
        let frame = Frame::read(local).map_err(|e| error(path, e))?;
        ndnpy_parquet::convert::to_arrays(&frame).map_err(|e| error(path, e))
    }

    /// Parquet → `.npz`, `.npz` → Parquet, or Parquet → Parquet (rewritten
    /// as pandas would write it).
    pub fn convert(
        inputs: &[PathBuf],
        out: &Path,
        format: Format,
        opts: &Options,
    ) -> CliResult<Vec<String>> {
        let [input] = inputs else {
            return Err(CliError::usage(
                "Parquet conversions take one input file and one output",
            ));
        };
        if opts.split || opts.order.is_some() || opts.byteorder.is_some() || opts.key.is_some() {
            return Err(CliError::usage(
                "--split, --order, --byteorder and --key do not apply to Parquet conversions",
            ));
        }
        let local = Source::local_path(input)?;
        let frame = if is_parquet(input) {
            Frame::read(&local).map_err(|e| error(input, e))?
        } else {
            if crate::input::container_of(input)? != crate::input::Container::Npz {
                return Err(CliError::usage(format!(
                    "{}: a Parquet file is made from an .npz archive (one member per column)",
                    input.display()
                )));
            }
            ndnpy_parquet::convert::read_npz(&local).map_err(|e| error(input, e))?
        };
        match format {
            Format::Npz => ndnpy_parquet::convert::write_npz_with(&frame, out, opts.compress),
            Format::Parquet => frame.write(out),
            Format::Npy | Format::Csv => {
                return Err(CliError::usage(
                    "a Parquet file converts to .npz (one member per column) or Parquet, not .npy or CSV",
                ))
            }
        }
        .map_err(|e| match e {
            Error::Io(_) | Error::Npy(_) => CliError::usage(format!("{}: {e}", out.display())),
            e => error(input, e),
        })?;
        Ok(vec![out.display().to_string()])
    }
}
