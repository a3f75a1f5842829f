//! `ndnpy info`: what a header says, and for archives what each member is
//! and how it is stored. Reads headers only; object arrays are reported as
//! pickled and never unpickled.

use crate::error::{CliError, CliResult};
use crate::input::{open_npy, Npz};
use ndnpy::{dtype::DType, dtype::Header, dtype::Version, npz::Compression};
use serde_json::{json, Value};
use std::path::Path;

fn version(v: Version) -> String {
    let (a, b) = v.as_pair();
    format!("{a}.{b}")
}

/// The dtype as a tree: one row per field with offset and size; padding
/// entries shown as such.
fn dtype_tree(dtype: &DType, base: usize, depth: usize, rows: &mut Vec<Value>) {
    if let DType::Record(fields) = dtype {
        let mut offset = base;
        for f in fields {
            let size = f.dtype.itemsize().unwrap_or(0);
            let type_text = match &f.dtype {
                DType::Record(_) => "record".to_owned(),
                other => other.to_string(),
            };
            rows.push(json!({
                "depth": depth,
                "name": if f.name.is_empty() { Value::Null } else { json!(f.name) },
                "title": f.title,
                "offset": offset,
                "size": size,
                "dtype": type_text,
                "padding": f.name.is_empty(),
            }));
            dtype_tree(&f.dtype, offset, depth + 1, rows);
            offset += size;
        }
    }
}

/// Spare header bytes beyond what the dictionary needs: each lets the
/// growth axis's length gain a digit in place.
fn spare_header_bytes(header: &Header, data_offset: u64) -> u64 {
    let shape = crate::repr::shape_repr(&header.shape);
    let text = format!(
        "{{'descr': {}, 'fortran_order': {}, 'shape': {}, }}",
        header.dtype.descr(),
        if header.fortran_order {
            "True"
        } else {
            "False"
        },
        if header.shape.is_empty() {
            "()".to_owned()
        } else {
            shape
        },
    );
    let preamble = if header.version == Version::V1 {
        10
    } else {
        12
    };
    data_offset.saturating_sub(preamble + text.len() as u64 + 1)
}

fn header_json(header: &Header, data_offset: u64, available: u64) -> Value {
    let declared = header.data_len().map(|n| n as u64).ok();
    let mut tree = Vec::new();
    dtype_tree(&header.dtype, 0, 0, &mut tree);
    let growth = if header.fortran_order {
        header.shape.last()
    } else {
        header.shape.first()
    };
    let spare = spare_header_bytes(header, data_offset);
    json!({
        "version": version(header.version),
        "dtype": header.dtype.to_string(),
        "dtype_name": crate::repr::dtype_repr(&header.dtype),
        "itemsize": header.dtype.itemsize(),
        "fields": tree,
        "shape": header.shape,
        "elements": header.num_elements().ok(),
        "order": if header.fortran_order { "F" } else { "C" },
        "data_offset": data_offset,
        "aligned_64": data_offset.is_multiple_of(64),
        "data_bytes": declared,
        "present_bytes": available,
        "truncated": !header.dtype.has_object() && declared.is_some_and(|d| available < d),
        "header_spare_bytes": spare,
        "growth_axis_max_digits": growth.map(|n| n.to_string().len() as u64 + spare),
        "pickled": header.dtype.has_object(),
        "probably": probably(&header.dtype),
    })
}

/// What raw items probably hold: `ml_dtypes` saves its number formats
/// as void (`np.save` of bfloat16 writes `<V2`) or as `<f1`.
fn probably(dtype: &DType) -> Option<&'static str> {
    use crate::reinterpret::raw_items;
    if raw_items(dtype, 2) {
        Some("bfloat16 (ml_dtypes saves it as 2-byte void): read with --as bfloat16")
    } else if matches!(dtype, DType::Scalar(s) if s.kind == ndnpy::dtype::Kind::Float && s.size == 1)
    {
        Some("float8_e5m2 (ml_dtypes writes it as '<f1', which NumPy cannot load): read with --as float8_e5m2")
    } else if raw_items(dtype, 1) {
        Some("an ml_dtypes 8-bit format such as float8_e4m3fn (saved as 1-byte void): read with --as float8_e4m3fn")
    } else {
        None
    }
}

/// The facts of one file. An archive's members go to `member` one by one
/// as they are read (so that 65 536 of them are never held together), and
/// the result lists them only when `member` is `None`.
pub fn info(path: &Path, mut member: Option<&mut dyn FnMut(&Value)>) -> CliResult<Value> {
    if crate::parquet::is_parquet(path) {
        return crate::parquet::info(path);
    }
    if crate::safetensors::is_safetensors(path) {
        return crate::safetensors::info(path);
    }
    match crate::input::container_of(path)? {
        crate::input::Container::Npy => {
            let opened = open_npy(path)?;
            let mut v = header_json(&opened.header, opened.data_offset, opened.available);
            v["path"] = json!(path.display().to_string());
            v["format"] = json!("npy");
            if crate::stack::is_stack(path) {
                v["stack"] = crate::stack::facts(path, &crate::input::read_options())?;
            }
            Ok(v)
        }
        crate::input::Container::Npz => {
            let mut npz = Npz::open(path)?;
            let mut members = Vec::new();
            let names = npz.names();
            read_most(path, names.len());
            let sparse = sparse_json(&mut npz);
            if let Some(f) = member.as_mut() {
                f(
                    &json!({"path": path.display().to_string(), "count": names.len(), "sparse": sparse}),
                );
            }
            for name in names {
                let meta = npz
                    .reader
                    .member_info(&name)
                    .map_err(|e| CliError::lib(path, Some(&name), e))?;
                let method = match meta.compression {
                    Compression::Stored => "stored",
                    Compression::Deflated => "deflate",
                    Compression::Bzip2 => "bzip2",
                    Compression::Lzma => "lzma",
                    Compression::Zstd => "zstd",
                    _ => "other",
                };
                let mut m = json!({
                    "name": name,
                    "compression": method,
                    "compressed_size": meta.compressed_size,
                    "size": meta.size,
                    "ratio": if meta.size == 0 { 1.0 } else { meta.compressed_size as f64 / meta.size as f64 },
                    "encrypted": meta.encrypted,
                });
                match npz.member_head(&name) {
                    Ok(opened) => {
                        let h = header_json(&opened.header, opened.data_offset, opened.available);
                        let in_place = meta.compression == Compression::Stored
                            && !meta.encrypted
                            && (meta.data_start + opened.data_offset).is_multiple_of(64);
                        for key in [
                            "dtype",
                            "dtype_name",
                            "shape",
                            "order",
                            "pickled",
                            "version",
                            "fields",
                            "truncated",
                            "probably",
                        ] {
                            m[key] = h[key].clone();
                        }
                        m["mmap_in_place"] = json!(in_place);
                    }
                    Err(e) => m["error"] = json!(e.message),
                }
                match member.as_mut() {
                    Some(f) => f(&m),
                    None => members.push(m),
                }
            }
            Ok(json!({
                "path": path.display().to_string(),
                "format": "npz",
                "members": members,
                "sparse": sparse,
            }))
        }
    }
}

/// Fetches from a store: the bytes each member's headers take (a local
/// header, a `.npy` header) are read below; a read that needs a request
/// fetches 64 KiB at least. When the members are that dense (many small
/// ones), their headers are all of the object: it is fetched as one span,
/// not window by window (and nothing twice). Few large members keep their
/// small reads, so that only their headers are fetched.
fn read_most(path: &Path, members: usize) {
    if !crate::source::is_remote(path) {
        return;
    }
    // The object is open already (the archive's reader shares it).
    let Ok(source) = crate::source::Source::open(path) else {
        return;
    };
    let len = source.len().unwrap_or(0);
    if (members as u64).saturating_mul(64 << 10) >= len {
        source.will_read(0..len);
    }
}

/// A `scipy.sparse.save_npz` archive's format, shape and stored entries
/// (from the small members and the headers); why not, when it names a
/// sparse format but its members disagree; `null` for other archives.
fn sparse_json(npz: &mut Npz) -> Value {
    match npz.reader.sparse_info() {
        Ok(Some(info)) => json!({
            "format": info.format.name(),
            "shape": info.shape,
            "nnz": info.nnz,
        }),
        Ok(None) => Value::Null,
        Err(e) => json!({"error": e.to_string()}),
    }
}

fn human(n: u64) -> String {
    if n < 1024 {
        format!("{n} B")
    } else if n < 1 << 20 {
        format!("{:.1} KiB", n as f64 / 1024.0)
    } else if n < 1 << 30 {
        format!("{:.1} MiB", n as f64 / (1u64 << 20) as f64)
    } else {
        format!("{:.1} GiB", n as f64 / (1u64 << 30) as f64)
    }
}

fn shape_text(v: &Value) -> String {
    let shape: Vec<usize> = serde_json::from_value(v.clone()).unwrap_or_default();
    crate::repr::shape_repr(&shape)
}

fn fields_text(fields: &Value, out: &mut String) {
    let rows = fields.as_array().cloned().unwrap_or_default();
    if rows.is_empty() {
        return;
    }
    out.push_str("  fields:     offset  size  name: type\n");
    for r in rows {
        let indent = "  ".repeat(r["depth"].as_u64().unwrap_or(0) as usize);
        let name = if r["padding"] == json!(true) {
            "(padding)".to_owned()
        } else {
            let n = r["name"].as_str().unwrap_or("").to_owned();
            match r["title"].as_str() {
                Some(t) => format!("{n} (title {t:?})"),
                None => n,
            }
        };
        out.push_str(&format!(
            "              {:>6}  {:>4}  {indent}{name}: {}\n",
            r["offset"].as_u64().unwrap_or(0),
            r["size"].as_u64().unwrap_or(0),
            r["dtype"].as_str().unwrap_or("")
        ));
    }
}

pub fn render(v: &Value) -> String {
    if v["format"] == json!("parquet") {
        return crate::parquet::render(v);
    }
    if v["format"] == json!("safetensors") {
        return crate::safetensors::render(v);
    }
    let mut out = format!("{}\n", v["path"].as_str().unwrap_or(""));
    if v["format"] == json!("npz") {
        let members = v["members"].as_array().cloned().unwrap_or_default();
        out.push_str(&render_npz_head(members.len(), &v["sparse"]));
        for m in &members {
            out.push_str(&render_member(m));
        }
        return out;
    }
    render_npy(v, out)
}

/// The lines above an archive's members (saying so when it holds a
/// `scipy.sparse` matrix).
pub fn render_npz_head(count: usize, sparse: &Value) -> String {
    let what = match (sparse["format"].as_str(), sparse["error"].as_str()) {
        (Some(format), _) => format!(
            "  scipy.sparse {format} matrix, shape {}, {} stored entries\n",
            shape_text(&sparse["shape"]),
            sparse["nnz"]
        ),
        (None, Some(e)) => format!("  scipy.sparse archive, but {e}\n"),
        _ => String::new(),
    };
    format!("  .npz archive, {count} members\n{what}  name                 dtype      shape            method   stored      size        ratio  in place\n")
}

/// One archive member's line.
pub fn render_member(m: &Value) -> String {
    {
        {
            let shape = shape_text(&m["shape"]);
            let mut line = format!(
                "  {:<20} {:<10} {:<16} {:<8} {:>10}  {:>10}  {:>5.2}  {}",
                m["name"].as_str().unwrap_or(""),
                m["dtype"].as_str().unwrap_or("?"),
                shape,
                m["compression"].as_str().unwrap_or(""),
                human(m["compressed_size"].as_u64().unwrap_or(0)),
                human(m["size"].as_u64().unwrap_or(0)),
                m["ratio"].as_f64().unwrap_or(1.0),
                if m["mmap_in_place"] == json!(true) {
                    "yes"
                } else {
                    "no"
                },
            );
            if m["pickled"] == json!(true) {
                line.push_str("  (pickled objects: never unpickled)");
            }
            if let Some(p) = m["probably"].as_str() {
                line.push_str(&format!("  (probably {p})"));
            }
            if let Some(e) = m["error"].as_str() {
                line.push_str(&format!("  ERROR: {e}"));
            }
            format!("{}\n", line.trim_end())
        }
    }
}

/// The facts of a `.npy` file, below its path line `out`.
fn render_npy(v: &Value, mut out: String) -> String {
    let dtype = v["dtype"].as_str().unwrap_or("");
    let name = match v["dtype_name"].as_str() {
        Some(n) if v["fields"].as_array().is_none_or(Vec::is_empty) => {
            format!(" ({})", n.trim_matches('\''))
        }
        _ => String::new(),
    };
    out.push_str(&format!(
        "  version:    {}\n",
        v["version"].as_str().unwrap_or("")
    ));
    out.push_str(&format!(
        "  dtype:      {dtype}{name}, {} bytes per element\n",
        v["itemsize"]
    ));
    fields_text(&v["fields"], &mut out);
    if let Some(p) = v["probably"].as_str() {
        out.push_str(&format!("  probably:   {p}\n"));
    }
    out.push_str(&format!(
        "  shape:      {} ({} elements)\n",
        shape_text(&v["shape"]),
        v["elements"]
    ));
    out.push_str(&format!(
        "  order:      {}\n",
        if v["order"] == json!("F") {
            "Fortran (column-major)"
        } else {
            "C (row-major)"
        }
    ));
    out.push_str(&format!(
        "  data:       offset {}{}, {} bytes\n",
        v["data_offset"],
        if v["aligned_64"] == json!(true) {
            " (64-byte aligned)"
        } else {
            " (not 64-byte aligned)"
        },
        v["data_bytes"]
    ));
    if v["truncated"] == json!(true) {
        out.push_str(&format!(
            "  TRUNCATED:  only {} data bytes are present\n",
            v["present_bytes"]
        ));
    }
    if let Some(d) = v["growth_axis_max_digits"].as_u64() {
        out.push_str(&format!(
            "  growth:     {} spare header bytes: the growth axis can reach {d} digits in place\n",
            v["header_spare_bytes"]
        ));
    }
    if let Some(stack) = v.get("stack") {
        out.push_str(&format!(
            "  stack:      {} {}, stacked along axis {}\n",
            stack["shards"],
            if stack["shards"] == json!(1) {
                "shard"
            } else {
                "shards"
            },
            stack["axis"],
        ));
        out.push_str(&format!(
            "              ({})\n",
            if stack["kind"] == json!("dask") {
                "a dask stack: da.from_npy_stack reads it"
            } else {
                "a folder of .npy files, in natural order"
            }
        ));
    }
    out.push_str(&format!(
        "  pickled:    {}\n",
        if v["pickled"] == json!(true) {
            "yes: an object array of pickled Python objects (not unpickled; loading it with NumPy runs code)"
        } else {
            "no"
        }
    ));
    out
}
