//! The arrays a path holds, for the reading commands: a `.npy` file's,
//! an archive's members, or a Parquet frame's. `show`, `stats`, `diff` and
//! `check` see a frame (pandas DataFrame) as the named arrays `convert`
//! writes to `.npz` (one per column, with `NAME.valid` masks, `NAME.tz`
//! zones, categorical codes and categories, index levels), held in memory
//! (the Parquet reader decodes whole column chunks) and read through the
//! same code as `.npy` data. `--as` applies to every array handed out.

use crate::error::{CliError, CliResult};
use crate::input::{container_of, open_npy, read_header, Container, DataSource, Npz, Opened};
use ndnpy::AnyArray;
use std::io;
use std::path::Path;

/// An array in memory, as its `.npy` bytes.
struct InMemory {
    bytes: Vec<u8>,
    base: u64,
}

impl DataSource for InMemory {
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let start = usize::try_from(self.base + offset).unwrap_or(usize::MAX);
        let src = self
            .bytes
            .get(start..)
            .and_then(|b| b.get(..buf.len()))
            .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
        buf.copy_from_slice(src);
        Ok(())
    }
}

/// `array` opened as a `.npy` file is.
pub fn opened(array: &AnyArray) -> ndnpy::Result<Opened<'static>> {
    let bytes = array.to_npy_bytes()?;
    let (header, offset) = read_header(&bytes[..])?;
    Ok(Opened {
        swapped_raw: false,
        available: bytes.len() as u64 - offset,
        data_offset: offset,
        header,
        data: Box::new(InMemory {
            bytes,
            base: offset,
        }),
    })
}

/// Every array `path` holds, by name: a Parquet frame's arrays, an
/// archive's members, or a `.npy` file's array (named by its file stem).
pub fn load_all(path: &Path) -> CliResult<Vec<(String, AnyArray)>> {
    if crate::parquet::is_parquet(path) {
        return crate::parquet::arrays(path);
    }
    if crate::safetensors::is_safetensors(path) {
        return crate::safetensors::arrays(path);
    }
    let lib = |e| CliError::lib(path, None, e);
    match crate::input::container_of(path)? {
        crate::input::Container::Npy => {
            // A file is read with its length known; an object as the
            // header and the stream of its data (as object arrays are).
            let a = if crate::source::is_remote(path) {
                crate::input::read_any(&mut open_npy(path)?)
            } else {
                AnyArray::read_npy_with(path, &crate::input::read_options())
            }
            .map_err(lib)?;
            let stem = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            Ok(vec![(stem, a)])
        }
        crate::input::Container::Npz => {
            let mut npz = crate::input::Npz::open(path)?;
            // Every member is held at once: the values of no bytes that
            // headers claim are limited across the archive, not only per
            // header (24 members of 2**20 `<U0` each fit in 4 KiB).
            let max = crate::input::read_options().get_max_zero_size_elements();
            let mut claimed = 0u64;
            for name in npz.names() {
                if let Ok(h) = npz.reader.header(&name) {
                    claimed = claimed.saturating_add(h.zero_size_count());
                }
                if claimed > max {
                    return Err(lib(ndnpy::Error::Limit(
                        ndnpy::error::LimitError::ZeroSizeLimit { claimed, max },
                    )));
                }
            }
            let mut out = Vec::new();
            let names = npz.names();
            // Every member is read: the next ones are inflated on the
            // other cores meanwhile.
            npz.reader.read_ahead(&names).map_err(lib)?;
            for name in names {
                let a = npz
                    .reader
                    .read_any(&name)
                    .map_err(|e| CliError::lib(path, Some(&name), e))?;
                out.push((name, a));
            }
            Ok(out)
        }
    }
}

/// Runs `f` on each array of the frame at `path` (only `key` when given),
/// labelled `PATH:NAME`; with `masks`, a column with a `NAME.valid` mask
/// is handed without its missing entries ([`without_missing`]).
fn for_each_column(
    path: &Path,
    key: Option<&str>,
    masks: bool,
    mut f: impl FnMut(&str, CliResult<Opened<'_>>, Option<Masked>) -> CliResult<()>,
) -> CliResult<()> {
    let arrays = crate::parquet::arrays(path)?;
    if let Some(k) = key {
        if !arrays.iter().any(|(n, _)| n == k) {
            return Err(CliError::problem(format!(
                "{}: no column or array named {k:?}",
                path.display()
            )));
        }
    }
    // Looked up once per column: a map, not the list.
    let by_name: std::collections::HashMap<&str, &AnyArray> =
        arrays.iter().map(|(n, a)| (n.as_str(), a)).collect();
    for (name, array) in &arrays {
        if key.is_some_and(|k| k != name) {
            continue;
        }
        let label = format!("{}:{name}", path.display());
        let mask_name = format!("{name}.valid");
        let mask = masks.then(|| by_name.get(mask_name.as_str())).flatten();
        let (opened, masked) = open_masked(path, name, array, mask.map(|m| (*m, &mask_name[..])));
        f(&label, opened, masked)?;
    }
    Ok(())
}

/// Runs `f` on each array a path holds: the file itself, or the members
/// of an archive (only `key` when given), with a label naming both.
pub fn for_each_array(
    path: &Path,
    key: Option<&str>,
    mut f: impl FnMut(&str, CliResult<Opened<'_>>) -> CliResult<()>,
) -> CliResult<()> {
    each(path, key, false, false, |label, opened, _| f(label, opened))
}

/// [`for_each_array`], but an array that has a validity mask beside it
/// (`NAME.valid`, as `convert` writes for a nullable column of a frame) is
/// handed without its missing entries, with what was left out. `stats`
/// uses it, so that the fillers under the mask (0, "", NaT) do not count.
pub fn for_each_valid_array(
    path: &Path,
    key: Option<&str>,
    f: impl FnMut(&str, CliResult<Opened<'_>>, Option<Masked>) -> CliResult<()>,
) -> CliResult<()> {
    each(path, key, true, true, f)
}

/// The arrays of `path` for `f`; `masks` as [`for_each_valid_array`];
/// `whole` when `f` reads every value (then an archive's next members are
/// inflated on the other cores while `f` takes the current one).
fn each(
    path: &Path,
    key: Option<&str>,
    masks: bool,
    whole: bool,
    mut f: impl FnMut(&str, CliResult<Opened<'_>>, Option<Masked>) -> CliResult<()>,
) -> CliResult<()> {
    if crate::parquet::is_parquet(path) {
        return for_each_column(path, key, masks, f);
    }
    if crate::safetensors::is_safetensors(path) {
        // Tensors as members: positioned reads, never masked.
        return crate::safetensors::for_each(path, key, |name, opened| {
            let label = format!("{}:{name}", path.display());
            f(&label, opened.map(crate::reinterpret::apply), None)
        });
    }
    match container_of(path)? {
        Container::Npy => {
            if key.is_some() {
                return Err(CliError::usage(format!(
                    "{}: --key applies to .npz archives",
                    path.display()
                )));
            }
            f(
                &path.display().to_string(),
                open_npy(path).map(crate::reinterpret::apply),
                None,
            )
        }
        Container::Npz => {
            let mut npz = Npz::open(path)?;
            let all = npz.names();
            // Looked up once per member: a set, not the list.
            let masked: std::collections::HashSet<&str> = match masks {
                true => all
                    .iter()
                    .map(String::as_str)
                    .filter(|n| n.ends_with(".valid"))
                    .collect(),
                false => Default::default(),
            };
            let names = match key {
                Some(k) => vec![k.to_owned()],
                None => all.clone(),
            };
            if whole {
                // Unknown names are reported by the loop, one by one.
                let _ = npz.reader.read_ahead(&names);
            }
            for name in names {
                let label = format!("{}:{name}", path.display());
                let mask_name = format!("{name}.valid");
                // Never an object array (it would be unpickled to mask it;
                // `stats` does not unpickle).
                if masked.contains(mask_name.as_str())
                    && npz
                        .reader
                        .header(&name)
                        .is_ok_and(|h| !h.dtype.has_object())
                {
                    // Both read whole: a masked member is a frame's column,
                    // which `convert` held in memory to write.
                    let array = npz.reader.read_any(&name);
                    let mask = npz.reader.read_any(&mask_name);
                    match (array, mask) {
                        (Ok(a), Ok(m)) => {
                            let (opened, masked) =
                                open_masked(path, &name, &a, Some((&m, &mask_name)));
                            f(&label, opened, masked)?
                        }
                        (Err(e), _) => f(&label, Err(CliError::lib(path, Some(&name), e)), None)?,
                        (_, Err(e)) => {
                            f(&label, Err(CliError::lib(path, Some(&mask_name), e)), None)?
                        }
                    }
                    continue;
                }
                f(
                    &label,
                    npz.member(&name).map(crate::reinterpret::apply),
                    None,
                )?;
            }
            Ok(())
        }
    }
}

/// `array` (member or column `name` of `path`) opened for a command:
/// without its missing entries when `mask` (an array and its name)
/// applies ([`without_missing`]), else whole.
fn open_masked(
    path: &Path,
    name: &str,
    array: &AnyArray,
    mask: Option<(&AnyArray, &str)>,
) -> (CliResult<Opened<'static>>, Option<Masked>) {
    match mask.and_then(|(m, n)| without_missing(array, m, n)) {
        Some((o, m)) => (Ok(crate::reinterpret::apply(o)), Some(m)),
        None => (
            opened(array)
                .map(crate::reinterpret::apply)
                .map_err(|e| CliError::lib(path, Some(name), e)),
            None,
        ),
    }
}

/// What was left out of an array handed by [`for_each_valid_array`].
pub struct Masked {
    /// The mask's name (`NAME.valid`).
    pub mask: String,
    /// Entries the mask marks missing.
    pub missing: u64,
    /// The array's shape with them.
    pub shape: Vec<usize>,
}

/// `array` without the entries `mask` marks missing, opened as a `.npy`
/// file of those that remain; `None` unless `mask` is a boolean array of
/// `array`'s 1-D shape and `array` has fixed-size elements.
fn without_missing(
    array: &AnyArray,
    mask: &AnyArray,
    name: &str,
) -> Option<(Opened<'static>, Masked)> {
    let AnyArray::Bool(valid) = mask else {
        return None;
    };
    let bytes = array.to_npy_bytes().ok()?;
    let (header, offset) = read_header(&bytes[..]).ok()?;
    if header.shape.len() != 1 || valid.shape() != header.shape.as_slice() {
        return None;
    }
    let size = header
        .dtype
        .itemsize()
        .filter(|_| !header.dtype.has_object())?;
    let count = valid.iter().filter(|&&v| v).count();
    let shape = header.shape.clone();
    let header = ndnpy::dtype::Header {
        shape: vec![count],
        ..header
    };
    // The kept elements go straight after the new header: one copy.
    let mut out = header.to_bytes().ok()?;
    let base = out.len() as u64;
    out.reserve(count * size);
    let items = bytes[offset as usize..].chunks_exact(size.max(1));
    for (item, _) in items.zip(valid.iter()).filter(|(_, &v)| v) {
        out.extend_from_slice(item);
    }
    let masked = Masked {
        mask: name.to_owned(),
        missing: (shape[0] - count) as u64,
        shape,
    };
    let opened = Opened {
        swapped_raw: false,
        available: out.len() as u64 - base,
        data_offset: base,
        header,
        data: Box::new(InMemory { bytes: out, base }),
    };
    Some((opened, masked))
}

/// Pairs the arrays of `a` and `b` by name (a single array on both sides
/// pairs whatever its name), in `a`'s order then those only in `b`:
/// `(label, a's array, b's array)`, `None` where one side lacks it.
#[allow(clippy::type_complexity)]
pub fn pairs(
    a: Vec<(String, AnyArray)>,
    b: Vec<(String, AnyArray)>,
    key: Option<&str>,
) -> Vec<(String, Option<AnyArray>, Option<AnyArray>)> {
    let keep = |n: &String| key.is_none_or(|k| k == n);
    let (mut a, mut b): (Vec<_>, Vec<_>) = (
        a.into_iter().filter(|(n, _)| keep(n)).collect(),
        b.into_iter().filter(|(n, _)| keep(n)).collect(),
    );
    if a.len() == 1 && b.len() == 1 {
        let (na, x) = a.remove(0);
        let (_, y) = b.remove(0);
        return vec![(na, Some(x), Some(y))];
    }
    let mut out = Vec::new();
    for (name, x) in a {
        let y = b
            .iter()
            .position(|(n, _)| *n == name)
            .map(|i| b.remove(i).1);
        out.push((name, Some(x), y));
    }
    out.extend(b.into_iter().map(|(n, y)| (n, None, Some(y))));
    out
}
