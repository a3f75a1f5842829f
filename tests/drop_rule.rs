//! The one drop rule of the writers (crate docs, "Writers"), for each
//! writer:
//!
//! - to a path (`NpzWriter::create*`, `NpyWriter::create*`,
//!   `NpyWriter::append`): dropped without `finish`, the path is left as it
//!   was (no file, or the old one) and no temporary file remains;
//! - to the caller's writer (`NpzWriter::new*`, `NpyWriter::new`,
//!   `NpyWriter::new_sized`): dropped without `finish`, the output is
//!   finished best-effort and reads back whole; while panicking or after a
//!   failed call it is left so that no reader takes it for complete;
//! - `NpzMemberWriter` follows its archive.

use ndarray::{array, Array1, Array2, Ix1, Ix2};
use ndnpy::{Error, NpyWriter, NpzReader, NpzWriter, Order, ReadNpy, WriteNpy};
use std::io::{self, Cursor, Seek, SeekFrom, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

/// The names in `dir`, so that a test sees a temporary file left behind.
fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn npz_to_a_vec_dropped_is_a_complete_archive() {
    for compressed in [false, true] {
        let mut out = Cursor::new(Vec::new());
        {
            let mut w = NpzWriter::new(&mut out).compressed(compressed);
            w.add("a", &array![1.0f64, 2.0, 3.0]).unwrap();
            w.add("b", &Array2::<u8>::ones((4, 5))).unwrap();
        } // dropped: no finish
        let mut npz = NpzReader::new(Cursor::new(out.into_inner())).unwrap();
        assert_eq!(npz.names(), ["a", "b"]);
        assert_eq!(npz.read::<f64, Ix1>("a").unwrap(), array![1.0, 2.0, 3.0]);
        assert_eq!(npz.read::<u8, Ix2>("b").unwrap(), Array2::<u8>::ones((4, 5)));
    }
}

#[test]
fn npz_to_a_file_dropped_is_an_archive_numpy_opens() {
    // The case: `NpzWriter::new(file)` dropped left 208 bytes that
    // no reader opened.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.npz");
    {
        let mut w = NpzWriter::new(std::fs::File::create(&path).unwrap());
        w.add("x", &array![1i64, 2, 3]).unwrap();
    }
    let mut npz = NpzReader::open(&path).unwrap();
    assert_eq!(npz.read::<i64, Ix1>("x").unwrap(), array![1, 2, 3]);
}

#[test]
fn npz_to_a_writer_is_left_incomplete_after_a_failed_add_or_a_panic() {
    // A failed add (a duplicate name poisons the writer).
    let mut out = Cursor::new(Vec::new());
    {
        let mut w = NpzWriter::new(&mut out);
        w.add("x", &array![1u8]).unwrap();
        assert!(w.add("x", &array![2u8]).is_err());
    }
    assert!(NpzReader::new(Cursor::new(out.into_inner())).is_err());

    // A panic while the writer is alive.
    let mut out = Cursor::new(Vec::new());
    let result = catch_unwind(AssertUnwindSafe(|| {
        let mut w = NpzWriter::new(&mut out);
        w.add("x", &array![1u8]).unwrap();
        panic!("the caller's code failed");
    }));
    assert!(result.is_err());
    let bytes = out.into_inner();
    assert!(!bytes.is_empty());
    assert!(matches!(
        NpzReader::new(Cursor::new(bytes)),
        Err(Error::InvalidArchive { .. })
    ));
}

#[test]
fn npz_to_a_path_dropped_leaves_the_path_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.npz");
    {
        let mut w = NpzWriter::create_compressed(&path).unwrap();
        w.add("x", &array![1u8]).unwrap();
    }
    assert!(entries(dir.path()).is_empty(), "{:?}", entries(dir.path()));

    // An old archive stays, byte for byte.
    let mut w = NpzWriter::create(&path).unwrap();
    w.add("old", &array![1u8]).unwrap();
    w.finish().unwrap();
    let before = std::fs::read(&path).unwrap();
    {
        let mut w = NpzWriter::create(&path).unwrap();
        w.add("new", &Array1::<f64>::zeros(100_000)).unwrap();
    }
    assert_eq!(std::fs::read(&path).unwrap(), before);
    assert_eq!(entries(dir.path()), ["a.npz"]);
}

#[test]
fn a_member_dropped_follows_its_archive() {
    // Archive to a writer: the member is ended with the rows written, and
    // the archive finished by its own drop.
    let mut out = Cursor::new(Vec::new());
    {
        let mut w = NpzWriter::new_compressed(&mut out);
        let mut m = w.add_streaming::<f32>("rows", &[2], Order::C).unwrap();
        m.write(&array![[1.0, 2.0], [3.0, 4.0]]).unwrap();
        drop(m);
        w.add("after", &array![5u8]).unwrap();
    }
    let mut npz = NpzReader::new(Cursor::new(out.into_inner())).unwrap();
    assert_eq!(
        npz.read::<f32, Ix2>("rows").unwrap(),
        array![[1.0, 2.0], [3.0, 4.0]]
    );
    assert_eq!(npz.read::<u8, Ix1>("after").unwrap(), array![5]);

    // Archive to a path: the archive is poisoned, the path left alone.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.npz");
    let mut w = NpzWriter::create(&path).unwrap();
    let mut m = w.add_streaming::<f32>("rows", &[2], Order::C).unwrap();
    m.write(&array![[1.0, 2.0]]).unwrap();
    drop(m);
    assert!(matches!(
        w.finish(),
        Err(Error::IncompleteArchive { name }) if name == "rows"
    ));
    assert!(entries(dir.path()).is_empty());
}

#[test]
fn npy_writer_to_a_writer_dropped_is_a_complete_file() {
    let mut out = Cursor::new(Vec::new());
    {
        let mut w = NpyWriter::<i32, _>::new(&mut out, &[3], Order::C).unwrap();
        w.write(&array![[1, 2, 3], [4, 5, 6]]).unwrap();
    }
    let back = Array2::<i32>::from_npy_bytes(out.get_ref()).unwrap();
    assert_eq!(back, array![[1, 2, 3], [4, 5, 6]]);
    assert_eq!(
        out.into_inner(),
        array![[1, 2, 3], [4, 5, 6]].to_npy_bytes().unwrap()
    );
}

/// Accepts `budget` bytes, then fails every write; seeks within what it
/// holds.
struct FailAfter {
    out: Cursor<Vec<u8>>,
    budget: usize,
}

impl Write for FailAfter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.out.get_ref().len() + buf.len() > self.budget {
            return Err(io::Error::new(io::ErrorKind::StorageFull, "simulated"));
        }
        self.out.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Seek for FailAfter {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.out.seek(pos)
    }
}

#[test]
fn npy_writer_to_a_writer_is_no_npy_file_after_a_failed_write_or_a_panic() {
    // A block larger than the buffer goes straight to the failing writer.
    let big = Array2::<f64>::zeros((100_000, 1));
    let mut sink = FailAfter {
        out: Cursor::new(Vec::new()),
        budget: 1000,
    };
    {
        let mut w = NpyWriter::<f64, _>::new(&mut sink, &[1], Order::C).unwrap();
        assert!(w.write(&array![[1.0]]).is_ok());
        assert!(matches!(w.write(&big), Err(Error::Io(_))));
        // Poisoned: later calls are refused.
        assert!(matches!(
            w.write(&array![[1.0]]),
            Err(Error::IncompleteWrite)
        ));
    }
    let bytes = sink.out.into_inner();
    assert!(!bytes.is_empty());
    assert!(matches!(
        Array2::<f64>::from_npy_bytes(&bytes),
        Err(Error::BadMagic { .. })
    ));

    let mut out = Cursor::new(Vec::new());
    let result = catch_unwind(AssertUnwindSafe(|| {
        let mut w = NpyWriter::<u8, _>::new(&mut out, &[], Order::C).unwrap();
        w.write(&array![1u8, 2]).unwrap();
        panic!("the caller's code failed");
    }));
    assert!(result.is_err());
    assert!(matches!(
        Array1::<u8>::from_npy_bytes(out.get_ref()),
        Err(Error::BadMagic { .. })
    ));
}

#[test]
fn npy_writer_to_a_path_dropped_leaves_the_path_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.npy");
    {
        let mut w = NpyWriter::<u8>::create(&path, &[], Order::C).unwrap();
        w.write(&array![1u8, 2]).unwrap();
    }
    assert!(entries(dir.path()).is_empty());

    // `append`: the file reads as before; the next append continues it.
    array![[1u16, 2]].write_npy(&path).unwrap();
    {
        let mut w = NpyWriter::<u16>::append(&path).unwrap();
        w.write(&array![[3u16, 4]]).unwrap();
    }
    assert_eq!(Array2::<u16>::read_npy(&path).unwrap(), array![[1, 2]]);
    let mut w = NpyWriter::<u16>::append(&path).unwrap();
    w.write(&array![[5u16, 6]]).unwrap();
    w.finish().unwrap();
    assert_eq!(
        Array2::<u16>::read_npy(&path).unwrap(),
        array![[1, 2], [5, 6]]
    );
    assert_eq!(entries(dir.path()), ["a.npy"]);
}

#[test]
fn sized_npy_writer_dropped_flushes_and_a_short_output_is_refused() {
    // All declared rows: complete.
    let mut out = Vec::new();
    {
        let mut w = NpyWriter::<i16, _>::new_sized(&mut out, &[2, 2], Order::C).unwrap();
        w.write(&array![[1, 2], [3, 4]]).unwrap();
    }
    assert_eq!(out, array![[1i16, 2], [3, 4]].to_npy_bytes().unwrap());

    // Fewer: flushed, and refused as truncated.
    let mut out = Vec::new();
    {
        let mut w = NpyWriter::<i16, _>::new_sized(&mut out, &[3, 2], Order::C).unwrap();
        w.write(&array![[1, 2]]).unwrap();
    }
    assert!(matches!(
        Array2::<i16>::from_npy_bytes(&out),
        Err(Error::TruncatedData {
            expected: 12,
            found: 4
        })
    ));
}
