//! `ndnpy convert`: `.npy` ↔ `.npz` (stored or deflated), several `.npy`
//! into one `.npz` and back (`--split`), C ↔ Fortran order, byte order, and
//! CSV for 1-D/2-D numeric arrays. Everything streams: memory does not
//! depend on the array's size. Outputs appear atomically (written to a
//! temporary file, then renamed).

use crate::error::{CliError, CliResult};
use crate::gather::Gather;
use crate::input::{container_of, open_npy, Container, Npz, Opened};
use crate::settings::{ByteOrderArg, Format, Options, OrderArg};
use crate::slice::View;
use ndnpy::{dtype::ByteOrder, dtype::DType, dtype::Header, dtype::Kind, dtype::Scalar, AnyArray};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Sets `order` on every multi-byte scalar of `dtype`.
fn with_order(dtype: &DType, order: ByteOrder) -> DType {
    match dtype {
        DType::Scalar(s) => {
            let mut s = s.clone();
            let one_byte = matches!(s.kind, Kind::Bytes | Kind::Void | Kind::Object | Kind::Bool)
                || (s.size == 1 && s.kind != Kind::Unicode);
            if !one_byte {
                s.order = order;
            }
            DType::Scalar(s)
        }
        DType::Record(fields) => DType::Record(
            fields
                .iter()
                .map(|f| {
                    let mut f = f.clone();
                    f.dtype = with_order(&f.dtype, order);
                    f
                })
                .collect(),
        ),
        DType::SubArray(inner, shape) => {
            DType::SubArray(Box::new(with_order(inner, order)), shape.clone())
        }
    }
}

/// Byte ranges to reverse in each element to go from `from` to `to`.
fn swaps(from: &DType, to: &DType, base: usize, out: &mut Vec<(usize, usize)>) {
    match (from, to) {
        (DType::Scalar(a), DType::Scalar(b))
            if a.order != b.order && a.order != ByteOrder::NotApplicable =>
        {
            let unit = unit_size(a);
            for k in 0..a.size / unit.max(1) {
                out.push((base + k * unit, unit));
            }
        }
        (DType::Record(fa), DType::Record(fb)) => {
            let mut offset = base;
            for (a, b) in fa.iter().zip(fb) {
                swaps(&a.dtype, &b.dtype, offset, out);
                offset += a.dtype.itemsize().unwrap_or(0);
            }
        }
        (DType::SubArray(a, shape), DType::SubArray(b, _)) => {
            let size = a.itemsize().unwrap_or(0);
            for i in 0..shape.iter().product::<usize>() {
                swaps(a, b, base + i * size, out);
            }
        }
        _ => {}
    }
}

fn unit_size(s: &Scalar) -> usize {
    match s.kind {
        Kind::Complex => s.size / 2,
        Kind::Unicode => 4,
        _ => s.size,
    }
}

/// Calls `f` with batches of whole elements in logical order `fortran`
/// (the file's order when `None`).
fn stream(
    opened: &mut Opened<'_>,
    fortran: bool,
    mut f: impl FnMut(&[u8]) -> std::io::Result<()>,
) -> CliResult<()> {
    let header = opened.header.clone();
    let itemsize = header.dtype.itemsize().unwrap_or(0);
    let nontrivial = header.shape.iter().filter(|&&n| n > 1).count();
    let err = |e: std::io::Error| CliError::problem(format!("reading the data: {e}"));
    if fortran == header.fortran_order || nontrivial <= 1 {
        let mut result = Ok(());
        crate::input::for_each_chunk(
            opened,
            |_| {},
            |chunk| {
                if result.is_ok() {
                    result = f(chunk);
                }
            },
        )
        .map_err(|e| CliError::problem(e.to_string()))?;
        return result.map_err(|e| CliError::usage(format!("writing: {e}")));
    }
    opened
        .check_complete()
        .map_err(|e| CliError::problem(e.to_string()))?;
    if itemsize == 0 {
        return Ok(());
    }
    let view = View::whole(&header.shape, header.fortran_order);
    let total = header.data_len().unwrap_or(0) as u64;
    let ndim = view.shape.len();
    let fast = if fortran {
        view.shape.first()
    } else {
        view.shape.last()
    };
    let mut gather = Gather::new(opened, total, fast.copied().unwrap_or(1));
    let axes: Vec<usize> = if fortran {
        (0..ndim).collect()
    } else {
        (0..ndim).rev().collect()
    };
    let mut index = vec![0usize; ndim];
    let batch = ((1usize << 20) / itemsize).max(1);
    let mut buf = Vec::with_capacity(batch * itemsize);
    let mut elem = vec![0u8; itemsize];
    for _ in 0..view.size() {
        gather
            .get(view.element(&index) * itemsize as u64, &mut elem)
            .map_err(err)?;
        buf.extend_from_slice(&elem);
        if buf.len() >= batch * itemsize {
            f(&buf).map_err(|e| CliError::usage(format!("writing: {e}")))?;
            buf.clear();
        }
        for &k in &axes {
            index[k] += 1;
            if index[k] < view.shape[k] {
                break;
            }
            index[k] = 0;
        }
    }
    f(&buf).map_err(|e| CliError::usage(format!("writing: {e}")))
}

/// The header written for `header` under the options, and the swaps.
fn target(header: &Header, opts: &Options) -> (Header, Vec<(usize, usize)>) {
    let mut out = header.clone();
    if let Some(o) = opts.order {
        out.fortran_order = o == OrderArg::F && header.shape.len() > 1;
    }
    if let Some(b) = opts.byteorder {
        let order = match b {
            ByteOrderArg::Little => ByteOrder::Little,
            ByteOrderArg::Big => ByteOrder::Big,
            ByteOrderArg::Native => ByteOrder::NATIVE,
        };
        out.dtype = with_order(&header.dtype, order);
    }
    let mut sw = Vec::new();
    swaps(&header.dtype, &out.dtype, 0, &mut sw);
    (out, sw)
}

/// Writes one array's `.npy` bytes (header then data) to `w`.
fn write_npy_to(opened: &mut Opened<'_>, opts: &Options, w: &mut dyn Write) -> CliResult<()> {
    if opened.header.dtype.has_object() {
        return write_objects_to(opened, opts, w);
    }
    let (header, sw) = target(&opened.header, opts);
    let bytes = header
        .to_bytes()
        .map_err(|e| CliError::problem(e.to_string()))?;
    w.write_all(&bytes)
        .map_err(|e| CliError::usage(format!("writing: {e}")))?;
    copy_data(opened, &header, &sw, w)
}

/// Writes the data of `opened` in the order and byte order of `header`
/// (`sw`: the byte ranges to reverse in each element).
fn copy_data(
    opened: &mut Opened<'_>,
    header: &Header,
    sw: &[(usize, usize)],
    w: &mut dyn Write,
) -> CliResult<()> {
    let itemsize = header.dtype.itemsize().unwrap_or(1).max(1);
    let mut scratch = Vec::new();
    stream(opened, header.fortran_order, |chunk| {
        if sw.is_empty() {
            return w.write_all(chunk);
        }
        scratch.clear();
        scratch.extend_from_slice(chunk);
        for e in scratch.chunks_exact_mut(itemsize) {
            for &(o, n) in sw {
                e[o..o + n].reverse();
            }
        }
        w.write_all(&scratch)
    })
}

/// An array that holds Python objects, as it is written. Its data is one
/// pickle whose length the header does not give (the header's `itemsize ×
/// count` is the size of the pointers, not of the pickle), so it cannot be
/// copied as bytes: it is read through the library's pickle reader, and
/// the library's writer pickles it again, which NumPy loads equal to the
/// input.
fn objects_for_output(opened: &mut Opened<'_>, opts: &Options) -> CliResult<AnyArray> {
    let (target, _) = target(&opened.header, opts);
    let any = crate::input::read_any(opened).map_err(|e| CliError::problem(e.to_string()))?;
    Ok(match any {
        AnyArray::Object(a) => AnyArray::Object(if target.fortran_order {
            a.reversed_axes()
                .as_standard_layout()
                .into_owned()
                .reversed_axes()
        } else {
            a.as_standard_layout().into_owned()
        }),
        AnyArray::StringDType(mut s) => {
            s.values = if target.fortran_order {
                s.values
                    .reversed_axes()
                    .as_standard_layout()
                    .into_owned()
                    .reversed_axes()
            } else {
                s.values.as_standard_layout().into_owned()
            };
            AnyArray::StringDType(s)
        }
        AnyArray::Record(r) => {
            // Records with object fields are pickled one tuple per record
            // in C order, with the other fields in native byte order.
            // (A Fortran-order input is written in C order: the same values.)
            if opts.order == Some(OrderArg::F) && target.fortran_order {
                return Err(CliError::usage(
                    "records with object fields are written in C order only",
                ));
            }
            if opts.byteorder.is_some()
                && with_order(&target.dtype, ByteOrder::NATIVE) != target.dtype
            {
                return Err(CliError::usage(
                    "records with object fields are written in native byte order only",
                ));
            }
            AnyArray::Record(r)
        }
        other => other,
    })
}

/// Writes an array that holds Python objects ([`objects_for_output`]).
fn write_objects_to(opened: &mut Opened<'_>, opts: &Options, w: &mut dyn Write) -> CliResult<()> {
    let bytes = objects_for_output(opened, opts)?
        .to_npy_bytes()
        .map_err(|e| CliError::problem(e.to_string()))?;
    w.write_all(&bytes)
        .map_err(|e| CliError::usage(format!("writing: {e}")))
}

/// Adds one array to an archive being written: data copied (reordered,
/// byte-swapped) in bounded memory, or an object array re-pickled.
fn add_member<W: Write + std::io::Seek>(
    zip: &mut ndnpy::NpzWriter<W>,
    name: &str,
    opened: &mut Opened<'_>,
    opts: &Options,
) -> CliResult<()> {
    if opened.header.dtype.has_object() {
        let any = objects_for_output(opened, opts)?;
        return zip
            .add_any(name, &any)
            .map_err(|e| CliError::problem(e.to_string()));
    }
    let (header, sw) = target(&opened.header, opts);
    // The copy's own error, kept whole (the writer sees an `io::Error`).
    let mut failure = None;
    let result = zip.add_npy_data(name, &header, |w| {
        copy_data(opened, &header, &sw, w).map_err(|e| {
            let io = std::io::Error::other(e.message.clone());
            failure = Some(e);
            io
        })
    });
    match (result, failure) {
        (_, Some(e)) => Err(e),
        (Err(e), None) => Err(CliError::problem(e.to_string())),
        (Ok(()), None) => Ok(()),
    }
}

/// `path:name: message`, unless the message names the output already.
fn prefix_output(path: &Path, name: &str, e: CliError) -> CliError {
    if e.message.starts_with(&path.display().to_string()) {
        return e;
    }
    CliError {
        message: format!("{}:{name}: {}", path.display(), e.message),
        code: e.code,
    }
}

/// A file that appears at `path` only when `commit` is called.
struct Atomic {
    temp: PathBuf,
    path: PathBuf,
}

impl Atomic {
    fn new(path: &Path) -> CliResult<(Atomic, File)> {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let temp = path.with_file_name(format!(".{name}.ndnpy-{}.tmp", std::process::id()));
        let file = File::create(&temp).map_err(|e| CliError::io(path, e))?;
        Ok((
            Atomic {
                temp,
                path: path.to_owned(),
            },
            file,
        ))
    }

    fn commit(self) -> CliResult<()> {
        std::fs::rename(&self.temp, &self.path).map_err(|e| CliError::io(&self.path, e))?;
        std::mem::forget(self);
        Ok(())
    }
}

impl Drop for Atomic {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.temp);
    }
}

fn out_format(out: &Path, opts: &Options) -> CliResult<Format> {
    if let Some(f) = opts.to {
        return Ok(f);
    }
    if opts.split {
        return Ok(Format::Npy);
    }
    match out.extension().and_then(|e| e.to_str()) {
        Some("npy") => Ok(Format::Npy),
        Some("npz") => Ok(Format::Npz),
        Some("csv") => Ok(Format::Csv),
        Some("parquet" | "pq") => Ok(Format::Parquet),
        _ => Err(CliError::usage(format!(
            "{}: cannot tell the output format from the name; use --to npy|npz|csv|parquet",
            out.display()
        ))),
    }
}

/// Runs `f` on every array of the inputs: `(name, opened)`, where the name
/// is a member's name or a `.npy` file's stem.
fn each_input(
    inputs: &[PathBuf],
    key: Option<&str>,
    mut f: impl FnMut(&str, &mut Opened<'_>) -> CliResult<()>,
) -> CliResult<()> {
    for path in inputs {
        match container_of(path)? {
            Container::Npy => {
                let mut opened = crate::reinterpret::apply(open_npy(path)?);
                let stem = path
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default();
                f(&stem, &mut opened).map_err(|e| prefix(path, e))?;
            }
            Container::Npz => {
                let mut npz = Npz::open(path)?;
                let names = match key {
                    Some(k) => vec![k.to_owned()],
                    None => npz.names(),
                };
                for name in names {
                    let mut opened = crate::reinterpret::apply(npz.member(&name)?);
                    f(&name, &mut opened).map_err(|e| prefix(path, e))?;
                }
            }
        }
    }
    Ok(())
}

fn prefix(path: &Path, e: CliError) -> CliError {
    let p = path.display().to_string();
    if e.message.starts_with(&p) {
        e
    } else {
        CliError {
            message: format!("{p}: {}", e.message),
            code: e.code,
        }
    }
}

/// Member names must not climb out of the output folder.
fn safe_name(name: &str) -> CliResult<&str> {
    if name.is_empty()
        || name.split('/').any(|c| c == ".." || c.is_empty())
        || name.starts_with('/')
    {
        return Err(CliError::problem(format!(
            "refusing to write a member named {name:?} outside the output folder"
        )));
    }
    Ok(name)
}

pub fn convert(inputs: &[PathBuf], out: &Path, opts: &Options) -> CliResult<Vec<String>> {
    if crate::safetensors::involved(inputs, out) {
        return crate::safetensors::convert(inputs, out, opts);
    }
    let format = out_format(out, opts)?;
    if format == Format::Parquet || inputs.iter().any(|p| crate::parquet::is_parquet(p)) {
        return crate::parquet::convert(inputs, out, format, opts);
    }
    let mut written = Vec::new();
    match format {
        Format::Parquet => unreachable!("handled above"),
        Format::Npz => {
            // The library's zip writer: stored members 64-byte aligned (so
            // that they can be mapped), deflated ones compressed on every
            // core; the archive appears at `out` only when finished.
            let created = if opts.compress {
                ndnpy::NpzWriter::create(out).map(|w| w.codec(opts.codec))
            } else {
                ndnpy::NpzWriter::create(out)
            };
            let mut zip = created.map_err(|e| CliError::lib(out, None, e))?;
            let mut seen = std::collections::HashSet::new();
            each_input(inputs, opts.key.as_deref(), |name, opened| {
                if !seen.insert(name.to_owned()) {
                    return Err(CliError::usage(format!(
                        "two arrays are named '{name}'; an archive holds each name once"
                    )));
                }
                add_member(&mut zip, name, opened, opts)
                    .map_err(|e| prefix_output(out, name, e))?;
                written.push(format!("{}:{name}", out.display()));
                Ok(())
            })?;
            zip.finish().map_err(|e| CliError::lib(out, None, e))?;
        }
        Format::Npy if opts.split => {
            std::fs::create_dir_all(out).map_err(|e| CliError::io(out, e))?;
            each_input(inputs, opts.key.as_deref(), |name, opened| {
                let target = out.join(format!("{}.npy", safe_name(name)?));
                if let Some(parent) = target.parent() {
                    std::fs::create_dir_all(parent).map_err(|e| CliError::io(parent, e))?;
                }
                let (atomic, file) = Atomic::new(&target)?;
                let mut w = BufWriter::with_capacity(1 << 20, file);
                write_npy_to(opened, opts, &mut w)?;
                w.flush().map_err(|e| CliError::io(&target, e))?;
                atomic.commit()?;
                written.push(target.display().to_string());
                Ok(())
            })?;
        }
        Format::Npy | Format::Csv => {
            let (atomic, file) = Atomic::new(out)?;
            let mut w = BufWriter::with_capacity(1 << 20, file);
            let mut count = 0;
            each_input(inputs, opts.key.as_deref(), |_, opened| {
                count += 1;
                if count > 1 {
                    return Err(CliError::usage(
                        "several arrays in the input: name one with --key, or use --split or an .npz output",
                    ));
                }
                if format == Format::Npy {
                    write_npy_to(opened, opts, &mut w)
                } else {
                    write_csv(opened, &mut w)
                }
            })?;
            if count == 0 {
                return Err(CliError::usage("no array in the input"));
            }
            w.flush().map_err(|e| CliError::io(out, e))?;
            atomic.commit()?;
            written.push(out.display().to_string());
        }
    }
    Ok(written)
}

/// One line per element (1-D) or per row (2-D), values separated by
/// commas, floats in their shortest round-trip form (`np.loadtxt(path,
/// delimiter=",")` reads it back exactly).
fn write_csv(opened: &mut Opened<'_>, w: &mut dyn Write) -> CliResult<()> {
    let header = opened.header.clone();
    let s = match &header.dtype {
        DType::Scalar(s)
            if matches!(s.kind, Kind::Bool | Kind::Int | Kind::UInt | Kind::Float)
                && s.size <= 8 =>
        {
            s.clone()
        }
        other => {
            return Err(CliError::usage(format!(
                "CSV holds 1-D or 2-D arrays of numbers; this array is `{other}`"
            )))
        }
    };
    let cols = match header.shape.len() {
        1 => 1,
        2 => header.shape[1],
        n => {
            return Err(CliError::usage(format!(
                "CSV holds 1-D or 2-D arrays; this one has {n} dimensions"
            )))
        }
    };
    let size = s.size;
    let mut col = 0;
    let mut line = String::new();
    stream(opened, false, |chunk| {
        for e in chunk.chunks_exact(size) {
            if col > 0 {
                line.push(',');
            }
            match s.kind {
                Kind::Float => {
                    let v = crate::values::scalar_f64(&s, e).unwrap_or(f64::NAN);
                    line.push_str(&csv_float(v, size));
                }
                _ => line.push_str(&crate::values::scalar_i128(&s, e).unwrap_or(0).to_string()),
            }
            col += 1;
            if col == cols {
                line.push('\n');
                w.write_all(line.as_bytes())?;
                line.clear();
                col = 0;
            }
        }
        Ok(())
    })
}

fn csv_float(v: f64, size: usize) -> String {
    if size == 4 && v.is_finite() {
        // float32: the shortest digits of the float32 value.
        return format!("{}", v as f32);
    }
    crate::repr::py_float(v)
}
