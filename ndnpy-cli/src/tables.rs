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
    let lib = |e| CliError::lib(path, None, e);
    match crate::input::container_of(path)? {
        crate::input::Container::Npy => {
            let a = AnyArray::read_npy_with(path, &crate::input::read_options()).map_err(lib)?;
            let stem = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            Ok(vec![(stem, a)])
        }
        crate::input::Container::Npz => {
            let mut npz = crate::input::Npz::open(path)?;
            let mut out = Vec::new();
            for name in npz.names() {
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
/// labelled `PATH:NAME`.
fn for_each_column(
    path: &Path,
    key: Option<&str>,
    mut f: impl FnMut(&str, CliResult<Opened<'_>>) -> CliResult<()>,
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
    for (name, array) in arrays {
        if key.is_some_and(|k| k != name) {
            continue;
        }
        let label = format!("{}:{name}", path.display());
        let opened = opened(&array)
            .map(crate::reinterpret::apply)
            .map_err(|e| CliError::lib(path, Some(&name), e));
        f(&label, opened)?;
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
    if crate::parquet::is_parquet(path) {
        return for_each_column(path, key, f);
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
            )
        }
        Container::Npz => {
            let mut npz = Npz::open(path)?;
            let names = match key {
                Some(k) => vec![k.to_owned()],
                None => npz.names(),
            };
            for name in names {
                let label = format!("{}:{name}", path.display());
                f(&label, npz.member(&name).map(crate::reinterpret::apply))?;
            }
            Ok(())
        }
    }
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
