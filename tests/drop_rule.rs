//! The one drop rule of the writers (crate docs, "Writers"), for each
//! writer:
//!
//! - to a path (`NpzWriter::create*`, `NpyWriter::create*`,
//!   `NpyWriter::append`): dropped without `finish`, the path is left as it
//!   was (no file, or the old one) and no temporary file remains;
//! - an archive of whole arrays to the caller's writer (`NpzWriter::new*`):
//!   dropped without `finish`, it is finished best-effort and reads back
//!   whole (every member it holds is complete); while panicking or after a
//!   failed call it is left so that no reader takes it for complete;
//! - rows streamed to the caller's writer (`NpyWriter::new`,
//!   `NpzMemberWriter`): dropped unfinished, never a readable array, since
//!   the rows may stop short on the source's error (`NpyWriter::new` keeps
//!   its header without the magic string; `NpzMemberWriter` poisons its
//!   archive, which then gets no central directory);
//! - `NpyWriter::new_sized`: flushed; whole only with every declared row,
//!   short output refused as truncated.

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
            let mut w = NpzWriter::new(&mut out).codec(if compressed {
                ndnpy::npz::Codec::deflate()
            } else {
                ndnpy::npz::Codec::Stored
            });
            w.add("a", &array![1.0f64, 2.0, 3.0]).unwrap();
            w.add("b", &Array2::<u8>::ones((4, 5))).unwrap();
        } // dropped: no finish
        let mut npz = NpzReader::new(Cursor::new(out.into_inner())).unwrap();
        assert_eq!(npz.names(), ["a", "b"]);
        assert_eq!(npz.read::<f64, Ix1>("a").unwrap(), array![1.0, 2.0, 3.0]);
        assert_eq!(
            npz.read::<u8, Ix2>("b").unwrap(),
            Array2::<u8>::ones((4, 5))
        );
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
        Err(Error::Archive(
            ndnpy::error::ArchiveError::InvalidArchive { .. }
        ))
    ));
}

#[test]
fn npz_to_a_path_dropped_leaves_the_path_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.npz");
    {
        let mut w = NpzWriter::create(&path)
            .unwrap()
            .codec(ndnpy::npz::Codec::deflate());
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
fn a_member_dropped_poisons_its_archive() {
    // Archive to a writer: the member is not ended with the rows written
    // (they may be short); later adds fail and the archive's drop writes no
    // central directory. Failed before: the member was ended with 2 rows
    // and the archive read back whole.
    let mut out = Cursor::new(Vec::new());
    {
        let mut w = NpzWriter::new(&mut out).codec(ndnpy::npz::Codec::deflate());
        w.add("before", &array![5u8]).unwrap();
        let mut m = w.add_streaming::<f32>("rows", &[2], Order::C).unwrap();
        m.write(&array![[1.0, 2.0], [3.0, 4.0]]).unwrap();
        drop(m);
        assert!(matches!(
            w.add("after", &array![5u8]),
            Err(Error::Write(ndnpy::error::WriteError::IncompleteArchive { name })) if name == "rows"
        ));
    }
    let bytes = out.into_inner();
    assert!(!bytes.is_empty());
    assert!(matches!(
        NpzReader::new(Cursor::new(bytes)),
        Err(Error::Archive(
            ndnpy::error::ArchiveError::InvalidArchive { .. }
        ))
    ));

    // Archive to a path: the archive is poisoned, the path left alone.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.npz");
    let mut w = NpzWriter::create(&path).unwrap();
    let mut m = w.add_streaming::<f32>("rows", &[2], Order::C).unwrap();
    m.write(&array![[1.0, 2.0]]).unwrap();
    drop(m);
    assert!(matches!(
        w.finish(),
        Err(Error::Write(ndnpy::error::WriteError::IncompleteArchive { name })) if name == "rows"
    ));
    assert!(entries(dir.path()).is_empty());
}

/// Three blocks of rows, the third an error of the source (a failed read,
/// a closed socket): what a streaming caller copies from.
fn failing_source() -> impl Iterator<Item = io::Result<Array2<f32>>> {
    [
        Ok(array![[1.0, 2.0]]),
        Ok(array![[3.0, 4.0]]),
        Err(io::Error::other("the source failed")),
    ]
    .into_iter()
}

/// The review's loop: it stops with `?` on the source's error, dropping
/// the writer unfinished.
fn copy_npy<W: Write>(
    src: impl Iterator<Item = io::Result<Array2<f32>>>,
    mut w: NpyWriter<f32, W>,
) -> Result<(), Error> {
    for b in src {
        w.write(&b?)?;
    }
    w.finish()?;
    Ok(())
}

#[test]
fn a_loop_stopped_by_its_source_leaves_output_no_reader_accepts() {
    // `NpyWriter::new`: failed before, the dropped writer patched its
    // header and left a valid 2-row `.npy` file.
    let mut out = Cursor::new(Vec::new());
    let w = NpyWriter::<f32, _>::new(&mut out, &[2], Order::C).unwrap();
    assert!(matches!(copy_npy(failing_source(), w), Err(Error::Io(_))));
    let bytes = out.into_inner();
    assert!(!bytes.is_empty());
    assert!(matches!(
        Array2::<f32>::from_npy_bytes(&bytes),
        Err(Error::Header(ndnpy::error::HeaderError::BadMagic { .. }))
    ));

    // `NpyWriter::new_sized` (3 rows declared): short, refused.
    let mut out = Vec::new();
    let w = NpyWriter::<f32, _>::new_sized(&mut out, &[3, 2], Order::C).unwrap();
    assert!(matches!(copy_npy(failing_source(), w), Err(Error::Io(_))));
    assert!(matches!(
        Array2::<f32>::from_npy_bytes(&out),
        Err(Error::Data(ndnpy::error::DataError::TruncatedData { .. }))
    ));

    // `NpzMemberWriter` in an archive to the caller's writer, stored and
    // compressed: failed before, the archive read back with a 2-row
    // member.
    for compressed in [false, true] {
        let mut out = Cursor::new(Vec::new());
        let copy = |out: &mut Cursor<Vec<u8>>| -> Result<(), Error> {
            let mut npz = NpzWriter::new(out).codec(if compressed {
                ndnpy::npz::Codec::deflate()
            } else {
                ndnpy::npz::Codec::Stored
            });
            npz.add("whole", &array![1u8, 2, 3])?;
            let mut m = npz.add_streaming::<f32>("rows", &[2], Order::C)?;
            for b in failing_source() {
                m.write(&b?)?;
            }
            m.finish()?;
            npz.finish()?;
            Ok(())
        };
        assert!(matches!(copy(&mut out), Err(Error::Io(_))));
        assert!(matches!(
            NpzReader::new(Cursor::new(out.into_inner())),
            Err(Error::Archive(
                ndnpy::error::ArchiveError::InvalidArchive { .. }
            ))
        ));
    }
}

#[test]
fn npy_streamed_writer_to_a_writer_dropped_is_no_npy_file() {
    // Failed before: the dropped writer patched its header, and these
    // bytes read back as a whole 2-row array.
    let mut out = Cursor::new(Vec::new());
    {
        let mut w = NpyWriter::<i32, _>::new(&mut out, &[3], Order::C).unwrap();
        w.write(&array![[1, 2, 3], [4, 5, 6]]).unwrap();
    }
    let bytes = out.into_inner();
    let whole = array![[1, 2, 3], [4, 5, 6]].to_npy_bytes().unwrap();
    // The rows are there (flushed), after a header without the magic.
    assert_eq!(bytes.len(), whole.len());
    assert_eq!(bytes[bytes.len() - 24..], whole[whole.len() - 24..]);
    assert!(matches!(
        Array2::<i32>::from_npy_bytes(&bytes),
        Err(Error::Header(ndnpy::error::HeaderError::BadMagic { .. }))
    ));
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
            Err(Error::Write(ndnpy::error::WriteError::IncompleteWrite))
        ));
    }
    let bytes = sink.out.into_inner();
    assert!(!bytes.is_empty());
    assert!(matches!(
        Array2::<f64>::from_npy_bytes(&bytes),
        Err(Error::Header(ndnpy::error::HeaderError::BadMagic { .. }))
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
        Err(Error::Header(ndnpy::error::HeaderError::BadMagic { .. }))
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
        Err(Error::Data(ndnpy::error::DataError::TruncatedData {
            expected: 12,
            found: 4
        }))
    ));
}

/// A file opened with `append(true)`: every write lands at its end, so a
/// header patched by seeking back would go after the data.
fn append_mode(path: &Path) -> std::fs::File {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap()
}

#[test]
fn finish_fails_on_a_file_in_append_mode() {
    // Failed before: `finish` returned Ok and the file had no magic at its
    // start (the header was appended after the data).
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.npy");
    let mut w = NpyWriter::<u8, _>::new(append_mode(&path), &[], Order::C).unwrap();
    w.write(&array![1u8, 2, 3]).unwrap();
    assert!(matches!(w.finish(), Err(Error::Io(_))));
    assert!(Array1::<u8>::read_npy(&path).is_err());

    // An archive: the member's sizes are patched into its local header,
    // for a whole-array add (stored, and compressed at `finish`) and a
    // streamed member.
    for compressed in [false, true] {
        let path = dir.path().join(format!("a{compressed}.npz"));
        let mut npz = NpzWriter::new(append_mode(&path)).codec(if compressed {
            ndnpy::npz::Codec::deflate()
        } else {
            ndnpy::npz::Codec::Stored
        });
        let added = npz.add("x", &array![1i64, 2, 3]);
        let finished = npz.finish();
        assert!(added.is_err() || finished.is_err());
        assert!(NpzReader::open(&path).is_err());
    }
    let path = dir.path().join("b.npz");
    let mut npz = NpzWriter::new(append_mode(&path));
    let mut m = npz.add_streaming::<u8>("rows", &[], Order::C).unwrap();
    m.write(&array![1u8, 2]).unwrap();
    assert!(matches!(m.finish(), Err(Error::Io(_))));
    assert!(npz.finish().is_err());
    assert!(NpzReader::open(&path).is_err());
}
