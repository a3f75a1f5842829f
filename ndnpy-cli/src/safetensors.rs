//! safetensors files (cargo feature `safetensors`): the reading commands
//! see a file's tensors as the members of an archive, each the `.npy`
//! member `ndnpy::safetensors::safetensors_to_npz` would write (bfloat16 and
//! float8 as `ml_dtypes`' raw `<V2`/`<V1`/`<f1`, read as numbers with
//! `--as`), read by positioned reads of the file or object; `info` shows
//! the safetensors types beside; `convert` goes `.npz` <-> `.safetensors`
//! through the library's readers (nothing mapped). A leaf: it uses only the
//! shared helpers.

use crate::error::{CliError, CliResult};
use crate::input::Opened;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Whether `path` is a safetensors file: its extension, or its first bytes
/// (a little-endian header length the file can hold, then `{`).
pub fn is_safetensors(path: &Path) -> bool {
    if has_extension(path) {
        return true;
    }
    let Ok(source) = crate::source::Source::open(path) else {
        return false;
    };
    let mut start = [0u8; 9];
    if source.read_exact_at(&mut start, 0).is_err() {
        return false;
    }
    let len = u64::from_le_bytes(start[..8].try_into().expect("8 bytes"));
    let file_len = source.len().unwrap_or(0);
    start[8] == b'{' && len >= 2 && len <= file_len.saturating_sub(8)
}

/// Whether `path` is named as a safetensors file.
pub fn has_extension(path: &Path) -> bool {
    path.extension().and_then(|e| e.to_str()) == Some("safetensors")
}

/// Whether `convert` is to or from safetensors.
pub fn involved(inputs: &[PathBuf], out: &Path) -> bool {
    has_extension(out) || inputs.iter().any(|p| is_safetensors(p))
}

#[cfg(not(feature = "safetensors"))]
fn unavailable(path: &Path) -> CliError {
    CliError::usage(format!(
        "{}: this ndnpy was built without safetensors support (cargo feature `safetensors`)",
        path.display()
    ))
}

#[cfg(not(feature = "safetensors"))]
pub fn info(path: &Path) -> CliResult<Value> {
    Err(unavailable(path))
}

#[cfg(not(feature = "safetensors"))]
pub fn for_each(
    path: &Path,
    _: Option<&str>,
    _: impl FnMut(&str, CliResult<Opened<'_>>) -> CliResult<()>,
) -> CliResult<()> {
    Err(unavailable(path))
}

#[cfg(not(feature = "safetensors"))]
pub fn arrays(path: &Path) -> CliResult<Vec<(String, ndnpy::AnyArray)>> {
    Err(unavailable(path))
}

#[cfg(not(feature = "safetensors"))]
pub fn convert(
    inputs: &[PathBuf],
    out: &Path,
    _: &crate::settings::Options,
) -> CliResult<Vec<String>> {
    Err(unavailable(inputs.first().map_or(out, |p| p.as_path())))
}

#[cfg(feature = "safetensors")]
pub use imp::{arrays, convert, for_each, info};

/// `info`'s text for a safetensors file.
pub fn render(v: &Value) -> String {
    let s = |v: &Value| v.as_str().unwrap_or("").to_owned();
    let tensors = v["tensors"].as_array().cloned().unwrap_or_default();
    let mut out = format!(
        "{}\n  safetensors, {} tensors, data from byte {}\n",
        s(&v["path"]),
        tensors.len(),
        v["data_offset"]
    );
    if let Some(metadata) = v["metadata"].as_object() {
        for (k, value) in metadata {
            out.push_str(&format!("  metadata {k}: {}\n", s(value)));
        }
    }
    out.push_str("  tensor                          type     npz dtype  shape\n");
    for t in &tensors {
        let shape = t["shape"].to_string();
        let mut line = format!(
            "  {:<31} {:<8} {:<10} {shape}",
            s(&t["name"]),
            s(&t["safetensors_dtype"]),
            s(&t["dtype"]),
        );
        for note in ["probably", "error"] {
            if let Some(text) = t[note].as_str() {
                line.push_str(&format!("  ({text})"));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(feature = "safetensors")]
mod imp {
    use super::*;
    use crate::input::Positioned;
    use crate::settings::Options;
    use crate::source::Source;
    use clap::ValueEnum;
    use ndnpy::safetensors::{
        npz_to_safetensors_with, safetensors_to_npz_with, MlDtype, SafetensorsIndex,
        SafetensorsOptions, SafetensorsReader,
    };
    use serde_json::json;

    /// The file's source and header.
    fn open(path: &Path) -> CliResult<(Source, SafetensorsIndex)> {
        let source = Source::open(path)?;
        let len = source.len().map_err(|e| CliError::io(path, e))?;
        let index = SafetensorsIndex::read_from(source.reader(), len)
            .map_err(|e| CliError::lib(path, None, e))?;
        Ok((source, index))
    }

    /// Tensor `name` opened as an archive member is.
    fn opened(
        path: &Path,
        source: &Source,
        index: &SafetensorsIndex,
        name: &str,
    ) -> CliResult<Opened<'static>> {
        let lib = |e| CliError::lib(path, Some(name), e);
        let header = index.header(name).map_err(lib)?;
        let range = index.data_range(name).map_err(lib)?;
        Ok(Opened {
            swapped_raw: false,
            header,
            data_offset: range.start,
            available: range.end - range.start,
            data: Box::new(Positioned {
                source: source.clone(),
                base: range.start,
            }),
        })
    }

    pub fn info(path: &Path) -> CliResult<Value> {
        let (_, index) = open(path)?;
        let mut tensors = Vec::new();
        let mut data_offset = None;
        for name in index.names() {
            let lib = |e| CliError::lib(path, Some(&name), e);
            let range = index.data_range(&name).map_err(lib)?;
            data_offset.get_or_insert(range.start);
            let st_dtype = index.dtype(&name).map_err(lib)?;
            let mut t = json!({
                "name": name,
                "safetensors_dtype": st_dtype,
                "shape": index.shape(&name).map_err(lib)?,
                "offset": range.start,
                "size": range.end - range.start,
            });
            match index.header(&name) {
                Ok(h) => t["dtype"] = json!(h.dtype.to_string()),
                Err(e) => t["error"] = json!(e.to_string()),
            }
            let hint = match st_dtype.as_str() {
                "BF16" => Some("bfloat16: read with --as bfloat16"),
                "F8_E4M3" => Some("float8_e4m3fn: read with --as float8_e4m3fn"),
                "F8_E5M2" => Some("float8_e5m2: read with --as float8_e5m2"),
                _ => None,
            };
            t["probably"] = json!(hint);
            tensors.push(t);
        }
        Ok(json!({
            "path": path.display().to_string(),
            "format": "safetensors",
            "metadata": index.metadata(),
            "data_offset": data_offset,
            "tensors": tensors,
        }))
    }

    /// Runs `f` on each tensor of the file (only `key` when given): its
    /// name and the tensor opened as an archive member is.
    pub fn for_each(
        path: &Path,
        key: Option<&str>,
        mut f: impl FnMut(&str, CliResult<Opened<'_>>) -> CliResult<()>,
    ) -> CliResult<()> {
        let (source, index) = open(path)?;
        if let Some(k) = key {
            if !index.contains(k) {
                return Err(CliError::problem(format!(
                    "{}: no tensor named {k:?}",
                    path.display()
                )));
            }
        }
        for name in index.names() {
            if key.is_some_and(|k| k != name) {
                continue;
            }
            f(&name, opened(path, &source, &index, &name))?;
        }
        Ok(())
    }

    /// Every tensor, read whole, by name (as an archive's members are).
    pub fn arrays(path: &Path) -> CliResult<Vec<(String, ndnpy::AnyArray)>> {
        let (source, index) = open(path)?;
        let mut out = Vec::new();
        for name in index.names() {
            let mut o = opened(path, &source, &index, &name)?;
            let array =
                crate::input::read_any(&mut o).map_err(|e| CliError::lib(path, Some(&name), e))?;
            out.push((name, array));
        }
        Ok(out)
    }

    /// `convert IN.npz OUT.safetensors` and `convert IN.safetensors
    /// OUT.npz`, through the library; `--as` names the format of raw
    /// members, `--compress` deflates the archive's.
    pub fn convert(inputs: &[PathBuf], out: &Path, opts: &Options) -> CliResult<Vec<String>> {
        let [input] = inputs else {
            return Err(CliError::usage(
                "convert to or from safetensors takes one input file",
            ));
        };
        if opts.split || opts.order.is_some() || opts.byteorder.is_some() || opts.key.is_some() {
            return Err(CliError::usage(
                "convert to or from safetensors takes no --split, --order, --byteorder or --key \
                 (safetensors holds little-endian C-order data)",
            ));
        }
        if crate::source::is_remote(out) {
            return Err(CliError::usage(format!(
                "{}: convert to or from safetensors writes local files",
                out.display()
            )));
        }
        let mut options = SafetensorsOptions::default().compressed(opts.compress);
        for &as_type in crate::reinterpret::current() {
            let name = as_type.to_possible_value().map(|v| v.get_name().to_owned());
            let format: MlDtype = name
                .unwrap_or_default()
                .parse()
                .map_err(|e| CliError::lib(input, None, e))?;
            options = options.raw_as(format);
        }
        let lib = |e| CliError::lib(input, None, e);
        if super::is_safetensors(input) {
            if !(has_npz_extension(out) || opts.to == Some(crate::settings::Format::Npz)) {
                return Err(CliError::usage(format!(
                    "{}: a safetensors file converts to an .npz archive",
                    out.display()
                )));
            }
            // Positioned reads, a tensor at a time: bounded memory, no map.
            let source = Source::open(input)?;
            let mut tensors = SafetensorsReader::new(source.reader()).map_err(lib)?;
            safetensors_to_npz_with(&mut tensors, out, &options).map_err(lib)?;
            return Ok(vec![out.display().to_string()]);
        }
        if !has_extension(out) {
            return Err(CliError::usage(format!(
                "{}: convert writes safetensors to a file named .safetensors",
                out.display()
            )));
        }
        if crate::input::container_of(input)? != crate::input::Container::Npz {
            return Err(CliError::usage(format!(
                "{}: safetensors are made from an .npz archive (put .npy files in one first)",
                input.display()
            )));
        }
        // Each member read into memory in turn (the CLI maps nothing).
        let mut npz = crate::input::Npz::open(input)?;
        npz_to_safetensors_with(&mut npz.reader, out, &options).map_err(lib)?;
        Ok(vec![out.display().to_string()])
    }

    fn has_npz_extension(path: &Path) -> bool {
        path.extension().and_then(|e| e.to_str()) == Some("npz")
    }
}
