//! Files: metadata, damaged input on either side, maps, indexes and
//! readers.

use super::*;

#[test]
fn metadata_round_trips_through_the_member() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src.npz");
    let mut w = NpzWriter::create(&src).unwrap();
    w.add("x", &array![1i64]).unwrap();
    w.finish().unwrap();
    let out = dir.path().join("a.safetensors");
    let metadata: HashMap<String, String> = [
        ("format".into(), "pt".into()),
        ("ünïcode".into(), "with \"quotes\"".into()),
    ]
    .into();
    let options = SafetensorsOptions::default().metadata(metadata.clone());
    npz_to_safetensors_with(&map(&src), &out, &options).unwrap();
    assert_eq!(st(&out).metadata(), Some(&metadata));

    let back = dir.path().join("back.npz");
    safetensors_to_npz(&st(&out), &back).unwrap();
    let table = NpzReader::open(&back)
        .unwrap()
        .read::<String, ndarray::Ix2>(METADATA_MEMBER)
        .unwrap();
    assert_eq!(table.dim(), (2, 2));
    assert_eq!(table[[0, 0]], "format");

    // The member becomes the metadata again; options win over it.
    let again = dir.path().join("again.safetensors");
    let options = SafetensorsOptions::default().metadata([("format".into(), "np".into())].into());
    npz_to_safetensors_with(&map(&back), &again, &options).unwrap();
    let file = st(&again);
    assert_eq!(file.metadata().unwrap()["format"], "np");
    assert_eq!(file.metadata().unwrap()["ünïcode"], "with \"quotes\"");
    assert_eq!(file.names(), ["x"]);

    // A metadata member of another form is refused.
    let bad = dir.path().join("bad.npz");
    let mut w = NpzWriter::create(&bad).unwrap();
    w.add(METADATA_MEMBER, &array![1.0f32]).unwrap();
    w.finish().unwrap();
    let err = npz_to_safetensors(&map(&bad), &again)
        .unwrap_err()
        .to_string();
    assert!(err.contains("(n, 2) array of strings"), "{err}");
}

#[test]
fn a_corrupt_member_fails_and_leaves_the_old_file() {
    let dir = tempfile::tempdir().unwrap();
    for compressed in [false, true] {
        let src = dir.path().join("src.npz");
        let mut w = NpzWriter::create(&src).unwrap().codec(if compressed {
            ndnpy::npz::Codec::deflate()
        } else {
            ndnpy::npz::Codec::Stored
        });
        // Values that do not compress, so that both members are long.
        let noise = |k: u32| {
            Array1::from_shape_fn(1000, |i| ((i as u32).wrapping_mul(2654435761) ^ k) as f32)
        };
        w.add("a", &noise(1)).unwrap();
        w.add("b", &noise(2)).unwrap();
        w.finish().unwrap();
        let mut bytes = std::fs::read(&src).unwrap();
        // The middle of the second member's data, whatever its encoding.
        let dir_start = bytes.windows(4).position(|w| w == b"PK\x01\x02").unwrap();
        bytes[dir_start - 200] ^= 0x40;
        std::fs::write(&src, &bytes).unwrap();

        let out = dir.path().join("out.safetensors");
        std::fs::write(&out, b"old").unwrap();
        // From the map (stored: written from it, checked on the way) and
        // from a reader (streamed a chunk at a time).
        for mapped in [true, false] {
            let err = match mapped {
                true => npz_to_safetensors(&map(&src), &out),
                false => npz_to_safetensors(&mut NpzReader::open(&src).unwrap(), &out),
            }
            .unwrap_err();
            match compressed {
                false => assert!(
                    matches!(&err, Error::Archive(ndnpy::error::ArchiveError::BadCrc { name }) if name == "b"),
                    "{err:?}"
                ),
                true => assert!(
                    matches!(&err, Error::Archive(ndnpy::error::ArchiveError::BadCrc { name }) | Error::Archive(ndnpy::error::ArchiveError::CorruptMember { name, .. }) if name == "b"),
                    "{err:?}"
                ),
            }
            assert_eq!(std::fs::read(&out).unwrap(), b"old");
            let left = std::fs::read_dir(dir.path()).unwrap().count();
            assert_eq!(left, 2);
        }
    }
}

#[test]
fn damaged_safetensors_files_are_errors() {
    let good = {
        let header = br#"{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}"#;
        let mut b = (header.len() as u64).to_le_bytes().to_vec();
        b.extend_from_slice(header);
        b.extend_from_slice(&[0; 8]);
        b
    };
    assert!(SafetensorsFile::new(good.clone()).is_ok());
    let mut cases = vec![
        Vec::new(),
        b"PK\x03\x04".to_vec(),
        good[..good.len() - 1].to_vec(),
    ];
    let mut huge = good.clone();
    huge[..8].copy_from_slice(&u64::MAX.to_le_bytes());
    cases.push(huge);
    let mut longer = good.clone();
    longer[..8].copy_from_slice(&(1u64 << 40).to_le_bytes());
    cases.push(longer);
    let mut bad_json = good.clone();
    bad_json[8] = b'[';
    cases.push(bad_json);
    let shape_overflow =
        br#"{"x":{"dtype":"F32","shape":[4611686018427387904,8],"data_offsets":[0,8]}}"#;
    let mut b = (shape_overflow.len() as u64).to_le_bytes().to_vec();
    b.extend_from_slice(shape_overflow);
    b.extend_from_slice(&[0; 8]);
    cases.push(b);
    for bytes in cases {
        let err = SafetensorsFile::new(bytes).unwrap_err();
        assert!(matches!(err, Error::InvalidSafetensors { .. }), "{err:?}");
        assert_eq!(err.kind(), ndnpy::ErrorKind::Malformed);
    }
    let file = SafetensorsFile::new(good).unwrap();
    assert!(matches!(
        file.read_any("y"),
        Err(Error::MemberNotFound { .. })
    ));
}

#[test]
fn tensor_types_npy_cannot_spell_are_refused_by_name() {
    let header = br#"{"scale":{"dtype":"F8_E8M0","shape":[1],"data_offsets":[0,1]}}"#;
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(header);
    bytes.push(127);
    let file = SafetensorsFile::new(bytes).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.npz");
    let err = safetensors_to_npz(&file, &out).unwrap_err().to_string();
    assert!(err.contains("tensor 'scale'"), "{err}");
    assert!(!out.exists());
    assert!(file.read_any("scale").is_err());
}

#[test]
fn safetensors_bools_are_written_as_numpy_writes_them() {
    let header = br#"{"m":{"dtype":"BOOL","shape":[3],"data_offsets":[0,3]}}"#;
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(header);
    bytes.extend_from_slice(&[0, 7, 1]);
    let file = SafetensorsFile::new(bytes).unwrap();
    assert_eq!(
        file.read_any("m").unwrap(),
        AnyArray::Bool(array![false, true, true].into_dyn())
    );
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.npz");
    safetensors_to_npz(&file, &out).unwrap();
    let mut z = NpzReader::open(&out).unwrap();
    let raw = z.raw("m").unwrap();
    assert_eq!(&raw[raw.len() - 3..], [0, 1, 1]);
}

#[test]
fn mapped_files_give_the_same_tensors() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src.npz");
    let mut w = NpzWriter::create(&src).unwrap();
    add_all_types(&mut w);
    w.finish().unwrap();
    let out = dir.path().join("m.safetensors");
    npz_to_safetensors(&map(&src), &out).unwrap();
    // SAFETY: nothing changes the file while it is mapped.
    let mapped = unsafe { SafetensorsFile::open(&out).unwrap() };
    let read = st(&out);
    assert_eq!(mapped.names(), read.names());
    for name in read.names() {
        assert_eq!(mapped.data(&name).unwrap(), read.data(&name).unwrap());
    }
    // SAFETY: as above.
    let missing = unsafe { SafetensorsFile::open(dir.path().join("none.safetensors")) };
    assert!(missing
        .unwrap_err()
        .to_string()
        .contains("none.safetensors"));
}

#[test]
fn the_index_reads_only_the_header() {
    use ndnpy::safetensors::SafetensorsIndex;
    use std::io::{Read, Seek, SeekFrom};
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src.npz");
    let mut w = NpzWriter::create(&src).unwrap();
    add_all_types(&mut w);
    w.finish().unwrap();
    let out = dir.path().join("m.safetensors");
    npz_to_safetensors(&map(&src), &out).unwrap();
    let whole = st(&out);

    let mut file = std::fs::File::open(&out).unwrap();
    let len = file.metadata().unwrap().len();
    let index = SafetensorsIndex::read_from(&mut file, len).unwrap();
    assert_eq!(index.names(), whole.names());
    for name in index.names() {
        let range = index.data_range(&name).unwrap();
        let mut data = vec![0; (range.end - range.start) as usize];
        file.seek(SeekFrom::Start(range.start)).unwrap();
        file.read_exact(&mut data).unwrap();
        assert_eq!(data, whole.data(&name).unwrap(), "{name}");
        assert_eq!(index.header(&name).unwrap(), whole.header(&name).unwrap());
    }
    // A file cut short, or one the header does not account for.
    let bytes = std::fs::read(&out).unwrap();
    for cut in [0, 7, 8, 20, bytes.len() - 1] {
        let err = SafetensorsIndex::read_from(&bytes[..cut], cut as u64).unwrap_err();
        assert!(
            matches!(err, Error::InvalidSafetensors { .. }),
            "{cut}: {err:?}"
        );
    }
    let err = SafetensorsIndex::read_from(&bytes[..], bytes.len() as u64 + 1).unwrap_err();
    assert!(matches!(err, Error::InvalidSafetensors { .. }), "{err:?}");
}

#[test]
fn readers_give_the_same_files_as_maps() {
    use ndnpy::safetensors::SafetensorsReader;
    let dir = tempfile::tempdir().unwrap();
    for compressed in [false, true] {
        let src = dir.path().join("src.npz");
        let mut w = NpzWriter::create(&src).unwrap().codec(if compressed {
            ndnpy::npz::Codec::deflate()
        } else {
            ndnpy::npz::Codec::Stored
        });
        add_all_types(&mut w);
        add_raw(
            &mut w,
            "be_f",
            ">i4",
            &[2, 2],
            true,
            &[0, 0, 0, 1, 0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 4],
        );
        add_raw(&mut w, "bools", "|b1", &[2], false, &[0, 9]);
        w.finish().unwrap();
        let mapped = dir.path().join("mapped.safetensors");
        let read = dir.path().join("read.safetensors");
        let options = SafetensorsOptions::default().metadata([("k".into(), "v".into())].into());
        npz_to_safetensors_with(&map(&src), &mapped, &options).unwrap();
        let mut reader = NpzReader::open(&src).unwrap();
        npz_to_safetensors_with(&mut reader, &read, &options).unwrap();
        assert_eq!(
            std::fs::read(&mapped).unwrap(),
            std::fs::read(&read).unwrap()
        );
        assert_eq!(st(&read).data("bools").unwrap(), [0, 1]);

        // And back: through a reader of the file, the same archive.
        let from_file = dir.path().join("from_file.npz");
        let from_reader = dir.path().join("from_reader.npz");
        safetensors_to_npz(&st(&read), &from_file).unwrap();
        let file = std::fs::File::open(&read).unwrap();
        let mut tensors = SafetensorsReader::new(file).unwrap();
        assert_eq!(tensors.index().metadata().unwrap()["k"], "v");
        assert_eq!(
            tensors.read_any("be_f").unwrap(),
            st(&read).read_any("be_f").unwrap()
        );
        safetensors_to_npz(&mut tensors, &from_reader).unwrap();
        assert_eq!(
            std::fs::read(&from_file).unwrap(),
            std::fs::read(&from_reader).unwrap()
        );
    }
}

#[test]
fn empty_archives_and_unicode_names() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("empty.npz");
    NpzWriter::create(&src).unwrap().finish().unwrap();
    let out = dir.path().join("empty.safetensors");
    npz_to_safetensors(&map(&src), &out).unwrap();
    let file = st(&out);
    assert!(file.is_empty() && file.metadata().is_none());
    let back = dir.path().join("back.npz");
    safetensors_to_npz(&file, &back).unwrap();
    assert!(NpzReader::open(&back).unwrap().is_empty());

    let src = dir.path().join("names.npz");
    let mut w = NpzWriter::create(&src).unwrap();
    w.add("params/ünï/κernel", &array![1.0f32]).unwrap();
    w.add("with space/and.dots", &array![2.0f32]).unwrap();
    w.finish().unwrap();
    npz_to_safetensors(&map(&src), &out).unwrap();
    let mut names = st(&out).names();
    names.sort();
    assert_eq!(names, ["params/ünï/κernel", "with space/and.dots"]);
    safetensors_to_npz(&st(&out), &back).unwrap();
    let mut z = NpzReader::open(&back).unwrap();
    assert_eq!(
        z.read::<f32, ndarray::Ix1>("params/ünï/κernel").unwrap(),
        array![1.0]
    );
}

/// A small archive to convert, mapped.
fn small_npz(dir: &Path) -> NpzMmap {
    let src = dir.join("small.npz");
    let mut w = NpzWriter::create(&src).unwrap();
    w.add("x", &array![1.0f32, 2.0]).unwrap();
    w.finish().unwrap();
    map(&src)
}

#[cfg(unix)]
#[test]
fn the_target_path_is_written_as_write_npy_writes_it() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = tempfile::tempdir().unwrap();
    let npz = small_npz(dir.path());

    // A symbolic link: its file gets the tensors, the link stays a link.
    let real = dir.path().join("real.safetensors");
    std::fs::write(&real, b"old").unwrap();
    let link = dir.path().join("link.safetensors");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    npz_to_safetensors(&npz, &link).unwrap();
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(st(&real).names(), ["x"]);

    // The mode of the file replaced is kept.
    let plain = dir.path().join("plain.safetensors");
    std::fs::write(&plain, b"old").unwrap();
    std::fs::set_permissions(&plain, std::fs::Permissions::from_mode(0o644)).unwrap();
    npz_to_safetensors(&npz, &plain).unwrap();
    assert_eq!(std::fs::metadata(&plain).unwrap().mode() & 0o777, 0o644);

    // A hard-linked file is written in place: both names see the tensors.
    let a = dir.path().join("a.safetensors");
    let b = dir.path().join("b.safetensors");
    std::fs::write(&a, b"old").unwrap();
    std::fs::hard_link(&a, &b).unwrap();
    let options =
        SafetensorsOptions::default().write_options(ndnpy::WriteOptions::default().durable(true));
    npz_to_safetensors_with(&npz, &a, &options).unwrap();
    assert_eq!(std::fs::metadata(&a).unwrap().nlink(), 2);
    assert_eq!(st(&b).names(), ["x"]);

    // Nothing is left beside the targets.
    let mut names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "a.safetensors",
            "b.safetensors",
            "link.safetensors",
            "plain.safetensors",
            "real.safetensors",
            "small.npz"
        ]
    );
}

#[test]
fn metadata_is_written_in_one_order() {
    let dir = tempfile::tempdir().unwrap();
    let npz = small_npz(dir.path());
    let metadata: HashMap<String, String> = (0..32)
        .map(|k| (format!("k{k}"), format!("v{k}")))
        .collect();
    let mut files = Vec::new();
    for k in 0..4 {
        let out = dir.path().join(format!("{k}.safetensors"));
        // Each map iterates in an order of its own.
        let options =
            SafetensorsOptions::default().metadata(metadata.clone().into_iter().collect());
        npz_to_safetensors_with(&npz, &out, &options).unwrap();
        assert_eq!(st(&out).metadata(), Some(&metadata));
        files.push(std::fs::read(&out).unwrap());
    }
    assert!(files.windows(2).all(|w| w[0] == w[1]));
}

#[test]
fn zero_size_tensors_whose_other_axes_overflow_are_errors() {
    use ndnpy::safetensors::SafetensorsReader;
    let header = br#"{"t":{"dtype":"U8","shape":[0,4611686018427387904,4611686018427387904],"data_offsets":[0,0]}}"#;
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(header);
    let file = SafetensorsFile::new(bytes.clone()).unwrap();
    assert!(matches!(
        file.read_any("t"),
        Err(Error::Limit(
            ndnpy::error::LimitError::LengthOverflow { .. }
        ))
    ));
    let mut reader = SafetensorsReader::new(std::io::Cursor::new(bytes)).unwrap();
    assert!(matches!(
        reader.read_any("t"),
        Err(Error::Limit(
            ndnpy::error::LimitError::LengthOverflow { .. }
        ))
    ));
}
