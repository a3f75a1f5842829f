//! The shards of a plain folder: its `.npy` files in natural order.

use crate::error::{Error, Result};
use std::cmp::Ordering;
use std::io;
use std::path::{Path, PathBuf};

/// The `.npy` files directly in `dir`, in natural order (`2.npy` before
/// `10.npy`). Hidden files (a leading `.`, such as the temporary files of an
/// interrupted write) and folders are left out; a name that is a broken
/// link or a link loop is an error naming it, not a shard silently missing.
pub(crate) fn npy_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let at_dir = |e: io::Error| Error::Io(e).at_path(dir);
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(at_dir)? {
        let entry = entry.map_err(at_dir)?;
        let name = entry.file_name();
        let Some(text) = name.to_str() else {
            continue;
        };
        if text.starts_with('.') || !text.ends_with(".npy") {
            continue;
        }
        let path = entry.path();
        // Follows links: a loop or a dangling link is reported here.
        let meta = std::fs::metadata(&path).map_err(|e| Error::Io(e).at_path(&path))?;
        if meta.is_file() {
            names.push(text.to_owned());
        }
    }
    if names.is_empty() {
        return Err(Error::Io(io::Error::new(
            io::ErrorKind::NotFound,
            "the folder holds no .npy file and no dask `info`, so it is not a stack",
        ))
        .at_path(dir));
    }
    names.sort_by(|a, b| natural_cmp(a, b));
    Ok(names.into_iter().map(|n| dir.join(n)).collect())
}

/// Natural order: runs of ASCII digits compare as numbers (`shard_2` before
/// `shard_10`, `00002` before `00010`), the rest byte by byte; names equal
/// that way (`01` and `1`) fall back to plain byte order, so the order is
/// total and the same on every machine.
///
/// ```
/// use ndnpy::stack::plan::natural_cmp;
/// assert!(natural_cmp("shard_2.npy", "shard_10.npy").is_lt());
/// ```
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    let (mut x, mut y) = (a.as_bytes(), b.as_bytes());
    loop {
        match (x.first(), y.first()) {
            (None, None) => return a.cmp(b),
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(c), Some(d)) if c.is_ascii_digit() && d.is_ascii_digit() => {
                let (m, rest_x) = digits(x);
                let (n, rest_y) = digits(y);
                let (m, n) = (trim_zeros(m), trim_zeros(n));
                let by_number = m.len().cmp(&n.len()).then_with(|| m.cmp(n));
                if by_number != Ordering::Equal {
                    return by_number;
                }
                (x, y) = (rest_x, rest_y);
            }
            (Some(c), Some(d)) => {
                if c != d {
                    return c.cmp(d);
                }
                (x, y) = (&x[1..], &y[1..]);
            }
        }
    }
}

/// The leading run of digits and the rest.
fn digits(s: &[u8]) -> (&[u8], &[u8]) {
    let n = s.iter().take_while(|c| c.is_ascii_digit()).count();
    s.split_at(n)
}

/// A run of digits without its leading zeros.
fn trim_zeros(s: &[u8]) -> &[u8] {
    let n = s.iter().take_while(|&&c| c == b'0').count();
    &s[n..]
}

#[cfg(test)]
mod tests {
    use super::natural_cmp;

    #[test]
    fn natural_order() {
        let mut names = vec![
            "10.npy",
            "2.npy",
            "shard_00010.npy",
            "1.npy",
            "shard_00002.npy",
            "a.npy",
            "01.npy",
        ];
        names.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(
            names,
            [
                "01.npy",
                "1.npy",
                "2.npy",
                "10.npy",
                "a.npy",
                "shard_00002.npy",
                "shard_00010.npy"
            ]
        );
        // A number longer than any integer type still compares.
        assert!(natural_cmp(
            "99999999999999999999999.npy",
            "100000000000000000000000.npy"
        )
        .is_lt());
    }
}
