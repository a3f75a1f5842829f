//! Memory maps with options and sparse files:
//!
//! - a file `NpyMmap::create_with_header` made with a header over the
//!   default 10 000-byte limit opens read-write and copy-on-write with
//!   `open_rw_with` / `open_cow_with` (the bug: `open_rw` and `open_cow`
//!   took no options, so such a file could only be opened read-only);
//! - `NpyMmap::create_sparse` makes a sparse file, as NumPy's
//!   `open_memmap` does, beside the reserving `NpyMmap::create`.

use ndarray::{Array1, Array2, Ix1, Ix2};
use ndnpy::{
    dtype::DType, dtype::Field, dtype::Header, dtype::Version, Error, NpyMmap, Order, ReadNpy,
    ReadOptions,
};

/// A record of 600 `<f8` fields: its header is about 13 000 bytes.
fn wide_header(rows: usize) -> Header {
    let fields = (0..600)
        .map(|i| Field {
            name: format!("field_{i:04}"),
            title: None,
            dtype: DType::parse("<f8").unwrap(),
        })
        .collect();
    Header {
        dtype: DType::Record(fields),
        shape: vec![rows],
        fortran_order: false,
        version: Version::V1,
    }
}

#[test]
fn long_headers_made_by_create_open_for_writing_with_options() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("wide.npy");
    let header = wide_header(3);
    let data_start = {
        // SAFETY: a new file in a private folder, mapped once.
        let map = unsafe { NpyMmap::create_with_header(&path, &header).unwrap() };
        map.as_bytes().len() - map.data().len()
    };
    assert!(data_start > 10_000, "{data_start}");

    // The default limit refuses the header, read-write and copy-on-write
    // alike, as NumPy's max_header_size does.
    // SAFETY: nothing else maps or changes the file during the test.
    let rw = unsafe { NpyMmap::open_rw(&path) };
    assert!(
        matches!(
            rw,
            Err(Error::Limit(
                ndnpy::error::LimitError::HeaderTooLarge { .. }
            ))
        ),
        "{rw:?}"
    );
    // SAFETY: as above.
    let cow = unsafe { NpyMmap::open_cow(&path) };
    assert!(
        matches!(
            cow,
            Err(Error::Limit(
                ndnpy::error::LimitError::HeaderTooLarge { .. }
            ))
        ),
        "{cow:?}"
    );

    let options = ReadOptions::default().max_header_len(1 << 16);
    {
        // SAFETY: as above.
        let mut map = unsafe { NpyMmap::open_rw_with(&path, &options).unwrap() };
        assert_eq!(map.header(), &header);
        map.data_mut().unwrap()[..8].copy_from_slice(&2.5f64.to_le_bytes());
        map.flush().unwrap();
    }
    {
        // SAFETY: as above.
        let mut map = unsafe { NpyMmap::open_cow_with(&path, &options).unwrap() };
        assert_eq!(map.data()[..8], 2.5f64.to_le_bytes());
        map.data_mut().unwrap()[..8].copy_from_slice(&9.0f64.to_le_bytes());
    }
    // The read-write change reached the file; the copy-on-write one did not.
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(bytes[data_start..data_start + 8], 2.5f64.to_le_bytes());
}

#[cfg(unix)]
fn allocated(path: &std::path::Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).unwrap().blocks() * 512
}

#[test]
fn create_sparse_reserves_nothing_and_reads_as_zeros() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("scratch.npy");
    let rows = 8192;
    {
        // SAFETY: a new file in a private folder; one page is written.
        let mut map =
            unsafe { NpyMmap::create_sparse::<f32, _>(&path, &[rows, 2048], Order::C).unwrap() };
        map.view_mut::<f32, Ix2>().unwrap()[[100, 7]] = 3.0;
        map.flush().unwrap();
    }
    let len = std::fs::metadata(&path).unwrap().len();
    assert_eq!(len, 128 + (64 << 20));
    #[cfg(unix)]
    assert!(allocated(&path) < len / 8, "{} of {len}", allocated(&path));
    // The same bytes as np.save's (and the reserving create's) header.
    let a = Array2::<f32>::read_npy(&path).unwrap();
    assert_eq!(a.dim(), (rows, 2048));
    assert_eq!(a[[100, 7]], 3.0);
    assert_eq!(a.sum(), 3.0);

    let reserved = dir.path().join("reserved.npy");
    {
        // SAFETY: a new file in a private folder.
        let map = unsafe { NpyMmap::create::<f32, _>(&reserved, &[rows, 2048], Order::C).unwrap() };
        map.flush().unwrap();
    }
    assert_eq!(
        std::fs::read(&reserved).unwrap()[..128],
        std::fs::read(&path).unwrap()[..128]
    );
    #[cfg(target_os = "linux")]
    assert!(allocated(&reserved) >= len, "{}", allocated(&reserved));
}

#[test]
fn the_old_map_name_still_compiles() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.npy");
    // SAFETY: a new file in a private folder.
    let mut map = unsafe { NpyMmap::create::<u8, _>(&path, &[3], Order::C).unwrap() };
    map.view_mut::<u8, Ix1>().unwrap().fill(4);
    map.flush().unwrap();
    drop(map);
    assert_eq!(
        Array1::<u8>::read_npy(&path).unwrap(),
        Array1::from_elem(3, 4)
    );
}

#[test]
fn archives_with_long_member_headers_open_with_options() {
    use ndnpy::{NpzMmap, NpzReader, NpzWriter};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("wide.npz");
    let header = wide_header(2);
    let data_len = header.data_len().unwrap();
    let mut w = NpzWriter::create(&path).unwrap();
    w.add_npy_data("wide", &header, |out| out.write_all(&vec![0u8; data_len]))
        .unwrap();
    w.finish().unwrap();
    let options = ReadOptions::default().max_header_len(1 << 16);

    let mut npz = NpzReader::open(&path).unwrap();
    assert!(matches!(
        npz.header("wide"),
        Err(Error::Limit(
            ndnpy::error::LimitError::HeaderTooLarge { .. }
        ))
    ));
    let mut npz = NpzReader::open_with(&path, &options).unwrap();
    assert_eq!(npz.header("wide").unwrap(), header);
    let bytes = std::fs::read(&path).unwrap();
    let mut npz = NpzReader::new_with(std::io::Cursor::new(bytes), &options).unwrap();
    assert_eq!(npz.header("wide").unwrap(), header);

    // SAFETY: nothing else changes the archive during the test.
    let map = unsafe { NpzMmap::open(&path).unwrap() };
    assert!(matches!(
        map.header("wide"),
        Err(Error::Limit(
            ndnpy::error::LimitError::HeaderTooLarge { .. }
        ))
    ));
    // SAFETY: as above.
    let map = unsafe { NpzMmap::open_with(&path, &options).unwrap() };
    assert_eq!(map.header("wide").unwrap(), header);
    assert_eq!(map.reader().unwrap().header("wide").unwrap(), header);
}
