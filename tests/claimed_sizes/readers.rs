//! Every reader of `tests/claimed_sizes.rs`: of a `.npy` file, of an
//! archive's members, of a scipy.sparse archive, each run under the
//! allocation bound and answering `"ok"` or its error's variant name.

use super::alloc::bounded;
use ndarray::{Array1, ArrayD, ArrayViewD, IxDyn};
use ndnpy::npy::ReadNpyInto;
use ndnpy::{
    dtype::Header, npy::NpyReader, types::BytesArray, types::FixedBytes, types::StringArray,
    AnyArray, NpyFile, NpyMmap, NpzMmap, NpzReader, ReadNpy, ReadOptions, ViewNpy,
};
use std::io::Cursor;
use std::path::{Path, PathBuf};

/// Every reader of a `.npy` file (also saved at `path`), each with its
/// answer.
pub fn npy_readers(
    bytes: &[u8],
    path: &Path,
    options: &ReadOptions,
) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    macro_rules! each {
        ($($name:literal => $read:expr;)*) => {
            $(out.push(($name, bounded($name, || $read)));)*
        };
    }
    each! {
        "Header::read_from_with" => Header::read_from_with(bytes, options);
        "inspect_with" => ndnpy::dtype::Header::open_with(path, options);
        "Array1<Vec<u8>>::from_npy_bytes" => Array1::<Vec<u8>>::from_npy_bytes_with(bytes, options);
        "ArrayD<String>::from_npy_bytes" => ArrayD::<String>::from_npy_bytes_with(bytes, options);
        "ArrayD<[u8; 0]>::from_npy_bytes" => ArrayD::<[u8; 0]>::from_npy_bytes_with(bytes, options);
        "ArrayD<FixedBytes<0>>::from_npy_bytes" => ArrayD::<FixedBytes<0>>::from_npy_bytes_with(bytes, options);
        "ArrayD<f64>::from_npy_bytes" => ArrayD::<f64>::from_npy_bytes_with(bytes, options);
        "ArrayD<String>::read_npy" => ArrayD::<String>::read_npy_with(path, options);
        "ArrayD<Vec<u8>>::read_npy" => ArrayD::<Vec<u8>>::read_npy_with(path, options);
        "ArrayD<String>::read_npy_from" => ArrayD::<String>::read_npy_from_with(bytes, options);
        "ArrayD<Vec<u8>>::read_npy_from" => ArrayD::<Vec<u8>>::read_npy_from_with(bytes, options);
        "ArrayD<[u8; 0]>::read_npy_from" => ArrayD::<[u8; 0]>::read_npy_from_with(bytes, options);
        "AnyArray::from_npy_bytes" => AnyArray::from_npy_bytes_with(bytes, options);
        "AnyArray::read_npy" => AnyArray::read_npy_with(path, options);
        "AnyArray::read_npy_from" => AnyArray::read_npy_from_with(bytes, options);
        "StringArray::from_npy_bytes" => StringArray::from_npy_bytes(bytes);
        "StringArray::read_npy" => StringArray::read_npy(path);
        "StringArray::read_npy_from" => StringArray::read_npy_from(bytes);
        "BytesArray::from_npy_bytes" => BytesArray::from_npy_bytes(bytes);
        "BytesArray::read_npy" => BytesArray::read_npy(path);
        "BytesArray::read_npy_from" => BytesArray::read_npy_from(bytes);
        "ArrayViewD<FixedBytes<0>>::view_npy" => ArrayViewD::<FixedBytes<0>>::view_npy_with(bytes, options);
        "ArrayViewD<[u8; 0]>::view_npy" => ArrayViewD::<[u8; 0]>::view_npy_with(bytes, options);
        "NpyFile::read" => NpyFile::open_with(path, options).and_then(|f| f.read::<Vec<u8>, IxDyn>());
        "NpyFile::read_range" => NpyFile::open_with(path, options).and_then(|f| f.read_range::<String, IxDyn>(..));
        "NpyReader::read_rows" => NpyReader::new_with(bytes, options).and_then(|mut r| r.read_rows::<Vec<u8>, IxDyn>(1 << 10));
        "from_npy_bytes_into" => (Array1::<FixedBytes<0>>::from_elem(3, FixedBytes::new([])).view_mut()).fill_from_npy_bytes(bytes);
    }
    // SAFETY: the file is this test's own and nothing modifies it while
    // it is mapped.
    let mapped = || unsafe { NpyMmap::open_with(path, options) };
    out.push((
        "NpyMmap::view",
        bounded("NpyMmap::view", || {
            mapped().and_then(|m| m.view::<FixedBytes<0>, IxDyn>().map(|v| v.len()))
        }),
    ));
    out
}

/// An archive read from memory.
type Archive<'a> = NpzReader<Cursor<&'a [u8]>>;

/// Every reader of every member of an archive (also saved at `path`).
pub fn npz_readers(bytes: &[u8], path: &Path, options: &ReadOptions) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let open = || NpzReader::new_with(Cursor::new(bytes), options);
    let names = open().map(|z| z.names()).unwrap_or_default();
    for name in &names {
        let n = name.as_str();
        let mut each = |what: &str, f: &dyn Fn(&mut Archive<'_>) -> ndnpy::Result<()>| {
            let label = format!("{n}: NpzReader::{what}");
            let answer = bounded(&label, || open().and_then(|mut z| f(&mut z)));
            out.push((label, answer));
        };
        each("header", &|z| z.header(n).map(drop));
        each("read_any", &|z| z.read_any(n).map(drop));
        each("read::<String>", &|z| z.read::<String, IxDyn>(n).map(drop));
        each("read::<Vec<u8>>", &|z| {
            z.read::<Vec<u8>, IxDyn>(n).map(drop)
        });
        each("read::<[u8; 0]>", &|z| {
            z.read::<[u8; 0], IxDyn>(n).map(drop)
        });
        each("read_strings", &|z| z.read_strings(n).map(drop));
        each("read_byte_strings", &|z| z.read_byte_strings(n).map(drop));
        each("arrays", &|z| z.arrays().try_for_each(|(_, a)| a.map(drop)));
        // SAFETY: the file is this test's own and nothing modifies it
        // while it is mapped.
        let mapped = || unsafe { NpzMmap::open_with(path, options) };
        for (what, answer) in [
            ("header", bounded(n, || mapped().and_then(|m| m.header(n)))),
            (
                "view",
                bounded(n, || {
                    mapped().and_then(|m| m.view::<FixedBytes<0>, IxDyn>(n).map(|v| v.len()))
                }),
            ),
        ] {
            out.push((format!("{n}: NpzMmap::{what}"), answer));
        }
    }
    out
}

/// The archive's readers of its matrix (`read_sparse` with the `sprs`
/// feature).
pub fn sparse_readers(bytes: &[u8]) -> Vec<(String, String)> {
    let open = || NpzReader::new(Cursor::new(bytes));
    let info = bounded("sparse_info", || open().and_then(|mut z| z.sparse_info()));
    #[allow(unused_mut)]
    let mut out = vec![("sparse_info".to_owned(), info)];
    #[cfg(feature = "sprs")]
    out.push((
        "sparse read_sparse::<f64>".to_owned(),
        bounded("read_sparse", || {
            open().and_then(|mut z| z.read_sparse::<f64>())
        }),
    ));
    out
}

/// A zip of `members` made by the `zip` crate (so nothing of ndnpy's
/// writer checks them).
pub fn archive(members: &[(&str, &[u8])], method: zip::CompressionMethod) -> Vec<u8> {
    use std::io::Write;
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default().compression_method(method);
    for (name, data) in members {
        zip.start_file(*name, options).unwrap();
        zip.write_all(data).unwrap();
    }
    zip.finish().unwrap().into_inner()
}

/// `bytes` saved in a temporary folder (kept alive with the path).
pub fn saved(bytes: &[u8]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a");
    std::fs::write(&path, bytes).unwrap();
    (dir, path)
}
