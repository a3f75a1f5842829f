//! `ndnpy::stack`: dask stacks (with `info` exactly as dask pickles it) and
//! plain folders of shards read as one array, by ranges across shard
//! boundaries; stacks written and read back; hostile stacks refused with
//! their error. `scripts/interop_stack.py` checks the same against dask.

use ndarray::{s, Array1, Array2, Array3, ArrayD, Axis, Ix1, Ix2, Ix3, ShapeBuilder};
use ndnpy::stack::NpyStack;
use ndnpy::{AnyArray, Error, WriteNpy};
use std::path::Path;

/// `pickle.dumps({'chunks': ((2, 3, 1), (4,)), 'dtype': np.dtype('float64'),
/// 'axis': 0}, protocol=4)`: what `da.to_npy_stack` wrote for a (6, 4)
/// array in chunks of 2, 3, 1 rows (Python 3.11, dask 2026.8).
const INFO_AXIS0: &[u8] = b"\x80\x04\x95c\x00\x00\x00\x00\x00\x00\x00}\x94(\x8c\x06chunks\x94K\x02K\x03K\x01\x87\x94K\x04\x85\x94\x86\x94\x8c\x05dtype\x94\x8c\x05numpy\x94\x8c\x05dtype\x94\x93\x94\x8c\x02f8\x94\x89\x88\x87\x94R\x94(K\x03\x8c\x01<\x94NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00t\x94b\x8c\x04axis\x94K\x00u.";

/// `{'chunks': ((3,), (2, 2, 1)), 'dtype': np.dtype('<i4'), 'axis': 1}`,
/// protocol 5 (Python 3.14's default, dask's `pickle.dump` there).
const INFO_AXIS1_P5: &[u8] = b"\x80\x05\x95c\x00\x00\x00\x00\x00\x00\x00}\x94(\x8c\x06chunks\x94K\x03\x85\x94K\x02K\x02K\x01\x87\x94\x86\x94\x8c\x05dtype\x94\x8c\x05numpy\x94\x8c\x05dtype\x94\x93\x94\x8c\x02i4\x94\x89\x88\x87\x94R\x94(K\x03\x8c\x01<\x94NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00t\x94b\x8c\x04axis\x94K\x01u.";

/// The same dict, protocol 2 (Python 2's highest).
const INFO_AXIS1_P2: &[u8] = b"\x80\x02}q\x00(X\x06\x00\x00\x00chunksq\x01K\x03\x85q\x02K\x02K\x02K\x01\x87q\x03\x86q\x04X\x05\x00\x00\x00dtypeq\x05cnumpy\ndtype\nq\x06X\x02\x00\x00\x00i4q\x07\x89\x88\x87q\x08Rq\t(K\x03X\x01\x00\x00\x00<q\nNNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00tq\x0bbX\x04\x00\x00\x00axisq\x0cK\x01u.";

/// Writes `a` cut along `axis` at `lens` as `0.npy`, `1.npy`, ... and
/// `info` (bytes as given), as `da.to_npy_stack` lays a stack out.
fn dask_layout<T: ndnpy::Element>(
    dir: &Path,
    a: &ArrayD<T>,
    axis: usize,
    lens: &[usize],
    info: &[u8],
) {
    std::fs::create_dir_all(dir).unwrap();
    let mut start = 0;
    for (i, &n) in lens.iter().enumerate() {
        a.slice_axis(Axis(axis), (start..start + n).into())
            .write_npy(dir.join(format!("{i}.npy")))
            .unwrap();
        start += n;
    }
    std::fs::write(dir.join("info"), info).unwrap();
}

fn axis0_array() -> Array2<f64> {
    Array2::from_shape_fn((6, 4), |(i, j)| (i * 4 + j) as f64)
}

fn axis1_array() -> Array2<i32> {
    Array2::from_shape_fn((3, 5), |(i, j)| (i * 5 + j) as i32 - 7)
}

#[test]
fn dask_stack_axis0_reads_equal() {
    let dir = tempfile::tempdir().unwrap();
    let a = axis0_array();
    dask_layout(dir.path(), &a.clone().into_dyn(), 0, &[2, 3, 1], INFO_AXIS0);
    let stack = NpyStack::open(dir.path()).unwrap();
    assert!(stack.is_dask());
    assert_eq!((stack.shape(), stack.axis()), (&[6, 4][..], 0));
    assert_eq!(stack.dtype().to_string(), "<f8");
    let lens: Vec<_> = stack
        .shards()
        .iter()
        .map(|s| (s.start(), s.len()))
        .collect();
    assert_eq!(lens, [(0, 2), (2, 3), (5, 1)]);
    assert_eq!(stack.read::<f64, Ix2>().unwrap(), a);
    // Every range, across every boundary, and empty ones.
    for start in 0..=6 {
        for end in start..=6 {
            let r: Array2<f64> = stack.read_range(start..end).unwrap();
            assert_eq!(r, a.slice(s![start..end, ..]), "{start}..{end}");
        }
    }
    let AnyArray::F64(any) = stack.read_any().unwrap() else {
        panic!("not f64")
    };
    assert_eq!(any, a.clone().into_dyn());
    // Converted on the way, as one file would be.
    assert_eq!(
        stack.read_range::<f64, ndarray::IxDyn>(1..4).unwrap(),
        a.slice(s![1..4, ..]).into_dyn()
    );
}

#[test]
fn dask_stack_axis1_reads_equal_every_protocol() {
    for info in [INFO_AXIS1_P5, INFO_AXIS1_P2] {
        let dir = tempfile::tempdir().unwrap();
        let a = axis1_array();
        dask_layout(dir.path(), &a.clone().into_dyn(), 1, &[2, 2, 1], info);
        let stack = NpyStack::open(dir.path()).unwrap();
        assert_eq!(
            (stack.shape(), stack.axis(), stack.len()),
            (&[3, 5][..], 1, 5)
        );
        assert_eq!(stack.read::<i32, Ix2>().unwrap(), a);
        for start in 0..=5 {
            for end in start..=5 {
                let r: Array2<i32> = stack.read_range(start..end).unwrap();
                assert_eq!(r, a.slice(s![.., start..end]), "{start}..{end}");
            }
        }
        let AnyArray::I32(any) = stack.read_range_any(1..4).unwrap() else {
            panic!("not i32")
        };
        assert_eq!(any, a.slice(s![.., 1..4]).into_dyn());
    }
}

#[test]
fn written_stacks_read_back_along_every_axis() {
    let dir = tempfile::tempdir().unwrap();
    let a = Array3::from_shape_fn((4, 7, 3), |(i, j, k)| (i * 100 + j * 10 + k) as u16);
    for axis in 0..3 {
        for per in [1, 2, 3, 7, 100] {
            let path = dir.path().join(format!("s{axis}-{per}"));
            let stack = NpyStack::create_along(&path, &a, axis, per).unwrap();
            let n = a.len_of(Axis(axis));
            assert_eq!(stack.shards().len(), n.div_ceil(per));
            let again = NpyStack::open(&path).unwrap();
            assert_eq!(again.shards(), stack.shards());
            assert_eq!(again.read::<u16, Ix3>().unwrap(), a);
            for start in 0..=n {
                let r: Array3<u16> = again.read_range(start..n).unwrap();
                assert_eq!(r, a.slice_axis(Axis(axis), (start..n).into()));
            }
        }
    }
    // Nothing left behind but the stacks.
    let hidden = std::fs::read_dir(dir.path())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with('.')
        })
        .count();
    assert_eq!(hidden, 0);
}

#[test]
fn written_info_is_the_dict_dask_writes() {
    let dir = tempfile::tempdir().unwrap();
    NpyStack::create(dir.path().join("x"), &axis0_array(), 3).unwrap();
    let info = std::fs::read(dir.path().join("x/info")).unwrap();
    let v = ndnpy::pickle::loads(&info).unwrap();
    assert_eq!(
        v.to_string(),
        "{'chunks': ((3, 3), (4,)), 'dtype': dtype('float64'), 'axis': 0}"
    );
}

#[test]
fn plain_folder_in_natural_order() {
    let dir = tempfile::tempdir().unwrap();
    for (name, v) in [
        ("shard_00010.npy", 10),
        ("shard_00002.npy", 2),
        ("shard_00001.npy", 1),
    ] {
        Array2::from_elem((v, 2), v as i64)
            .write_npy(dir.path().join(name))
            .unwrap();
    }
    // Not shards: hidden files, other extensions, folders.
    std::fs::write(dir.path().join(".tmp.npy"), b"junk").unwrap();
    std::fs::write(dir.path().join("notes.txt"), b"junk").unwrap();
    std::fs::create_dir(dir.path().join("sub.npy")).unwrap();
    let stack = NpyStack::open(dir.path()).unwrap();
    assert!(!stack.is_dask());
    let names: Vec<_> = stack
        .shards()
        .iter()
        .map(|s| s.path().file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        ["shard_00001.npy", "shard_00002.npy", "shard_00010.npy"]
    );
    let all: Array2<i64> = stack.read().unwrap();
    assert_eq!(
        all.column(0).to_vec(),
        [vec![1, 2, 2], vec![10; 10]].concat()
    );

    let dir = tempfile::tempdir().unwrap();
    for i in [10, 2, 1, 0] {
        Array1::from_elem(1, i as u8)
            .write_npy(dir.path().join(format!("{i}.npy")))
            .unwrap();
    }
    let stack = NpyStack::open(dir.path()).unwrap();
    assert_eq!(stack.read::<u8, Ix1>().unwrap().to_vec(), [0, 1, 2, 10]);
}

#[test]
fn fortran_order_shards_read_by_range() {
    // Shards as np.save writes Fortran-ordered arrays; axis 0 is not their
    // run axis, so each needed shard is read whole and cut.
    let dir = tempfile::tempdir().unwrap();
    let a = Array2::from_shape_fn((9, 4), |(i, j)| (i * 4 + j) as f32);
    let mut paths = Vec::new();
    for (i, r) in [0..4, 4..5, 5..9].into_iter().enumerate() {
        let mut f = Array2::<f32>::zeros((r.len(), 4).f());
        f.assign(&a.slice(s![r, ..]));
        let p = dir.path().join(format!("{i}.npy"));
        f.write_npy(&p).unwrap();
        paths.push(p);
    }
    assert!(ndnpy::dtype::Header::open(&paths[0]).unwrap().fortran_order);
    let stack = NpyStack::from_files(&paths).unwrap();
    for start in 0..=9 {
        for end in start..=9 {
            let r: Array2<f32> = stack.read_range(start..end).unwrap();
            assert_eq!(r, a.slice(s![start..end, ..]));
        }
    }
}

#[test]
fn a_range_opens_only_its_shards() {
    let dir = tempfile::tempdir().unwrap();
    let a = Array1::from_iter(0..30u32);
    let stack = NpyStack::create(dir.path().join("x"), &a, 10).unwrap();
    // Shard 2 goes away: ranges in shards 0 and 1 still read.
    std::fs::remove_file(dir.path().join("x/2.npy")).unwrap();
    let r: Array1<u32> = stack.read_range(5..20).unwrap();
    assert_eq!(r, a.slice(s![5..20]));
    let err = stack.read_range::<u32, Ix1>(15..25).unwrap_err();
    assert!(
        matches!(&err, Error::IoPath { error, .. } if error.kind() == std::io::ErrorKind::NotFound),
        "{err}"
    );
}

/// Bytes this thread has read through system calls so far (Linux's
/// per-thread I/O accounting: `rchar` counts `read` and `pread` alike).
/// `None` where the kernel keeps no such count (no task I/O accounting).
#[cfg(target_os = "linux")]
fn thread_rchar() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/io").ok()?;
    let line = text.lines().find(|l| l.starts_with("rchar:"))?;
    line[6..].trim().parse().ok()
}

/// A range reads the rows it needs of each shard, not the shards whole:
/// 20 rows of 8 bytes across a boundary between two shards of 800 000
/// bytes read about 8 KiB (two headers, read through a 4 KiB buffer) and
/// the 160 bytes of rows. Along an axis that is not the shards' row axis
/// the shards it touches are read whole.
#[cfg(target_os = "linux")]
#[test]
fn a_range_reads_only_its_rows() {
    let dir = tempfile::tempdir().unwrap();
    let a = Array1::from_iter(0..300_000u64);
    let stack = NpyStack::create(dir.path().join("x"), &a, 100_000).unwrap();
    let Some(before) = thread_rchar() else {
        eprintln!("skipped: /proc/thread-self/io has no rchar here");
        return;
    };
    let r: Array1<u64> = stack.read_range(99_990..100_010).unwrap();
    let read = thread_rchar().unwrap() - before;
    assert_eq!(r, a.slice(s![99_990..100_010]));
    eprintln!("a 20-row range across two shards read {read} bytes");
    assert!(read < 16 << 10, "read {read} bytes for 160 bytes of rows");
    // Along axis 1 of (2, n) C-order shards: whole shards.
    let b = Array2::from_shape_fn((2, 300_000), |(i, j)| (i * 300_000 + j) as u64);
    let stack = NpyStack::create_along(dir.path().join("y"), &b, 1, 100_000).unwrap();
    let before = thread_rchar().unwrap();
    let r: Array2<u64> = stack.read_range(99_990..100_010).unwrap();
    let read = thread_rchar().unwrap() - before;
    eprintln!("along axis 1 of C-order shards: {read} bytes");
    assert_eq!(r, b.slice(s![.., 99_990..100_010]));
    assert!(read >= 2 * 1_600_000, "read {read} bytes");
}

#[test]
fn shards_can_be_mapped() {
    let dir = tempfile::tempdir().unwrap();
    let a = axis0_array();
    let stack = NpyStack::create(dir.path().join("x"), &a, 4).unwrap();
    // SAFETY: nothing writes the shards while they are mapped.
    let map = unsafe { stack.shard_mmap(1).unwrap() };
    assert_eq!(map.view::<f64, Ix2>().unwrap(), a.slice(s![4..6, ..]));
    // SAFETY: as above.
    assert!(matches!(
        unsafe { stack.shard_mmap(2) },
        Err(Error::Rows(
            ndnpy::error::RowsError::RangeOutOfBounds { .. }
        ))
    ));
}

#[test]
fn typed_reads_refuse_the_wrong_type_before_reading() {
    let dir = tempfile::tempdir().unwrap();
    let stack = NpyStack::create(dir.path().join("x"), &axis0_array(), 4).unwrap();
    assert!(matches!(
        stack.read::<f64, Ix1>(),
        Err(Error::NdimMismatch { .. })
    ));
    assert!(matches!(
        stack.read::<i8, Ix2>(),
        Err(Error::DTypeMismatch { .. })
    ));
    assert!(matches!(
        stack.read_range::<f64, Ix2>(5..7),
        Err(Error::Rows(ndnpy::error::RowsError::RangeOutOfBounds {
            start: 5,
            end: 7,
            len: 6
        }))
    ));
}

#[test]
fn object_stacks_read_whole_shards() {
    use ndnpy::pickle::PyValue;
    let dir = tempfile::tempdir().unwrap();
    let a = Array1::from_iter((0..5).map(|i| PyValue::Str(format!("s{i}"))));
    let stack = NpyStack::create(dir.path().join("x"), &a, 2).unwrap();
    let r: Array1<String> = stack.read_range(1..4).unwrap();
    assert_eq!(r.to_vec(), ["s1", "s2", "s3"]);
    let AnyArray::Object(o) = stack.read_any().unwrap() else {
        panic!("not objects")
    };
    assert_eq!(o.into_raw_vec_and_offset().0, a.to_vec());
}

// ---- writing: the target is whole or absent ----

#[test]
fn create_refuses_a_non_empty_target_and_leaves_it() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("x");
    std::fs::create_dir(&target).unwrap();
    std::fs::write(target.join("keep"), b"mine").unwrap();
    let err = NpyStack::create(&target, &axis0_array(), 2).unwrap_err();
    assert!(
        matches!(&err, Error::IoPath { error, .. } if error.kind() == std::io::ErrorKind::AlreadyExists),
        "{err}"
    );
    assert_eq!(std::fs::read(target.join("keep")).unwrap(), b"mine");
    // An empty folder is replaced.
    std::fs::remove_file(target.join("keep")).unwrap();
    NpyStack::create(&target, &axis0_array(), 2).unwrap();
    assert_eq!(
        NpyStack::open(&target).unwrap().read::<f64, Ix2>().unwrap(),
        axis0_array()
    );
    for (axis, per) in [(2, 1), (0, 0)] {
        let err =
            NpyStack::create_along(dir.path().join("y"), &axis0_array(), axis, per).unwrap_err();
        assert!(
            matches!(&err, Error::Io(e) if e.kind() == std::io::ErrorKind::InvalidInput),
            "{err}"
        );
    }
}

#[test]
fn a_failed_create_leaves_nothing() {
    // Strings are written as wide as their shard's longest: `<U1` then
    // `<U3`, which no stack can hold under one dtype.
    let dir = tempfile::tempdir().unwrap();
    let a = ndarray::array!["a".to_string(), "b".into(), "ccc".into()];
    let err = NpyStack::create(dir.path().join("x"), &a, 2).unwrap_err();
    assert!(matches!(err, Error::DTypeMismatch { .. }), "{err}");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "no target, no temporary folder"
    );
}

// ---- hostile stacks ----

/// A valid axis-0 dask stack of `axis0_array` in a fresh folder.
fn good_stack() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    dask_layout(
        dir.path(),
        &axis0_array().into_dyn(),
        0,
        &[2, 3, 1],
        INFO_AXIS0,
    );
    dir
}

/// `info` as dask would pickle this dict (our pickler: protocol 3).
fn info_of(chunks: &str, dtype: &str, axis: i64) -> Vec<u8> {
    use ndnpy::pickle::PyValue;
    let tuple = |s: &str| {
        PyValue::Tuple(
            s.split(',')
                .filter(|t| !t.is_empty())
                .map(|t| PyValue::Int(t.trim().parse().unwrap()))
                .collect(),
        )
    };
    let chunks = PyValue::Tuple(chunks.split(';').map(tuple).collect());
    ndnpy::pickle::dumps(&PyValue::Dict(vec![
        (PyValue::Str("chunks".into()), chunks),
        (
            PyValue::Str("dtype".into()),
            PyValue::DType(ndnpy::dtype::DType::parse(dtype).unwrap()),
        ),
        (PyValue::Str("axis".into()), PyValue::Int(axis)),
    ]))
    .unwrap()
}

fn open_err(dir: &Path) -> Error {
    NpyStack::open(dir).unwrap_err()
}

#[test]
fn an_info_that_lies_is_refused() {
    let dir = good_stack();
    let info = dir.path().join("info");
    // Our pickler's info for the true stack reads.
    std::fs::write(&info, info_of("2,3,1;4", "<f8", 0)).unwrap();
    NpyStack::open(dir.path()).unwrap();
    // Chunks that disagree with the shards' shapes.
    std::fs::write(&info, info_of("3,2,1;4", "<f8", 0)).unwrap();
    let err = open_err(dir.path());
    assert!(
        matches!(&err, Error::Header(ndnpy::error::HeaderError::BadShape(t)) if t.contains("0.npy") && t.contains("[2, 4]") && t.contains("[3, 4]")),
        "{err}"
    );
    std::fs::write(&info, info_of("2,3,1;5", "<f8", 0)).unwrap();
    assert!(matches!(
        open_err(dir.path()),
        Error::Header(ndnpy::error::HeaderError::BadShape(_))
    ));
    // A dtype that differs (even by byte order only).
    for d in ["<f4", ">f8", "<i8"] {
        std::fs::write(&info, info_of("2,3,1;4", d, 0)).unwrap();
        let err = open_err(dir.path());
        assert!(
            matches!(&err, Error::DTypeMismatch { expected, found } if expected.contains(d) && found == "<f8"),
            "{err}"
        );
    }
    // Axis out of range, and -1 read as Python reads it.
    for axis in [2, -3, 99] {
        std::fs::write(&info, info_of("2,3,1;4", "<f8", axis)).unwrap();
        let err = open_err(dir.path());
        assert!(
            matches!(&err, Error::Pickle(ndnpy::error::PickleError::MalformedPickle { reason, .. }) if reason.contains("out of range")),
            "{err}"
        );
    }
    std::fs::write(&info, info_of("4;2,3,1", "<f8", -1)).unwrap();
    assert!(matches!(
        open_err(dir.path()),
        Error::Header(ndnpy::error::HeaderError::BadShape(_))
    ));
    // Several chunks on an axis that is not the stacking one (dask could
    // not load it either), or none on the stacking axis.
    std::fs::write(&info, info_of("2,3,1;2,2", "<f8", 0)).unwrap();
    assert!(matches!(
        open_err(dir.path()),
        Error::Pickle(ndnpy::error::PickleError::MalformedPickle { .. })
    ));
    std::fs::write(&info, info_of(";4", "<f8", 0)).unwrap();
    assert!(matches!(
        open_err(dir.path()),
        Error::Pickle(ndnpy::error::PickleError::MalformedPickle { .. })
    ));
    // More chunks than shards: the first missing one is named.
    std::fs::write(&info, info_of("2,3,1,1;4", "<f8", 0)).unwrap();
    let err = open_err(dir.path());
    assert!(
        matches!(&err, Error::IoPath { path, error } if path.ends_with("3.npy") && error.kind() == std::io::ErrorKind::NotFound),
        "{err}"
    );
    // Chunk lengths that overflow when summed.
    let big = format!("2,{},1;4", i64::MAX);
    std::fs::write(&info, info_of(&big, "<f8", 0)).unwrap();
    assert!(matches!(
        open_err(dir.path()),
        Error::Header(ndnpy::error::HeaderError::BadShape(_))
    ));
}

#[test]
fn an_info_that_is_not_a_stack_dict_is_refused() {
    let dir = good_stack();
    let info = dir.path().join("info");
    let cases: &[(&[u8], &str)] = &[
        (b"\x80\x02]q\x00(K\x01e.", "list"),     // [1]
        (b"\x80\x02}q\x00.", "no key 'chunks'"), // {}
        (b"not a pickle at all", ""),            // garbage
        (b"", ""),                               // empty
        (
            b"\x80\x02cos\nsystem\nX\x02\x00\x00\x00ls\x85R.",
            "os system",
        ), // code: refused, not run
    ];
    for (bytes, needle) in cases {
        std::fs::write(&info, bytes).unwrap();
        let err = open_err(dir.path());
        assert!(err.to_string().contains(needle), "{err}");
        assert!(
            matches!(
                err,
                Error::Pickle(ndnpy::error::PickleError::MalformedPickle { .. })
                    | Error::Pickle(ndnpy::error::PickleError::UnsupportedPickle { .. })
            ),
            "{err}"
        );
    }
    // Keys of the wrong type.
    use ndnpy::pickle::PyValue;
    let dict = |k: &str, v: PyValue| {
        let mut pairs = vec![
            (
                PyValue::Str("chunks".into()),
                PyValue::Tuple(vec![
                    PyValue::Tuple(vec![PyValue::Int(6)]),
                    PyValue::Tuple(vec![PyValue::Int(4)]),
                ]),
            ),
            (
                PyValue::Str("dtype".into()),
                PyValue::DType(ndnpy::dtype::DType::parse("<f8").unwrap()),
            ),
            (PyValue::Str("axis".into()), PyValue::Int(0)),
        ];
        for p in &mut pairs {
            if p.0 == PyValue::Str(k.into()) {
                p.1 = v.clone();
            }
        }
        ndnpy::pickle::dumps(&PyValue::Dict(pairs)).unwrap()
    };
    for (k, v) in [
        ("chunks", PyValue::Int(3)),
        ("chunks", PyValue::Tuple(vec![PyValue::Int(6)])),
        (
            "chunks",
            PyValue::Tuple(vec![PyValue::Tuple(vec![PyValue::Int(-6)])]),
        ),
        ("dtype", PyValue::Str("f8".into())),
        ("axis", PyValue::Str("0".into())),
    ] {
        std::fs::write(&info, dict(k, v)).unwrap();
        let err = open_err(dir.path());
        assert!(
            matches!(&err, Error::Pickle(ndnpy::error::PickleError::MalformedPickle { reason, .. }) if reason.contains(k) || reason.contains("chunk")),
            "{err}"
        );
    }
}

#[test]
fn shards_that_disagree_are_refused() {
    // Plain folder: another trailing shape, another dtype, 0-d.
    let dir = tempfile::tempdir().unwrap();
    Array2::<f64>::zeros((2, 3))
        .write_npy(dir.path().join("0.npy"))
        .unwrap();
    Array2::<f64>::zeros((2, 4))
        .write_npy(dir.path().join("1.npy"))
        .unwrap();
    let err = open_err(dir.path());
    assert!(
        matches!(&err, Error::Header(ndnpy::error::HeaderError::BadShape(t)) if t.contains("1.npy")),
        "{err}"
    );
    Array2::<f32>::zeros((2, 3))
        .write_npy(dir.path().join("1.npy"))
        .unwrap();
    let err = open_err(dir.path());
    assert!(
        matches!(&err, Error::DTypeMismatch { expected, found } if expected.contains("<f8") && found == "<f4"),
        "{err}"
    );
    Array2::<f64>::zeros((2, 3).f())
        .write_npy(dir.path().join("1.npy"))
        .unwrap();
    NpyStack::open(dir.path()).unwrap(); // Fortran order is fine
    ndarray::arr0(1.0f64)
        .write_npy(dir.path().join("2.npy"))
        .unwrap();
    assert!(
        matches!(open_err(dir.path()), Error::Header(ndnpy::error::HeaderError::BadShape(t)) if t.contains("0-dimensional"))
    );
    // Dask stack: a shard of the wrong shape or dtype.
    let dir = good_stack();
    Array2::<f64>::zeros((3, 4))
        .write_npy(dir.path().join("2.npy"))
        .unwrap();
    assert!(
        matches!(open_err(dir.path()), Error::Header(ndnpy::error::HeaderError::BadShape(t)) if t.contains("2.npy"))
    );
    Array2::<f32>::zeros((1, 4))
        .write_npy(dir.path().join("2.npy"))
        .unwrap();
    assert!(matches!(open_err(dir.path()), Error::DTypeMismatch { .. }));
    // A missing shard.
    std::fs::remove_file(dir.path().join("1.npy")).unwrap();
    assert!(matches!(open_err(dir.path()), Error::IoPath { path, .. } if path.ends_with("1.npy")));
    // Not a .npy file, and one shorter than its header says.
    std::fs::write(dir.path().join("1.npy"), b"garbage").unwrap();
    assert!(matches!(
        open_err(dir.path()),
        Error::Header(ndnpy::error::HeaderError::BadMagic { .. })
    ));
    let mut bytes = Array2::<f64>::zeros((3, 4)).to_npy_bytes().unwrap();
    bytes.truncate(bytes.len() - 1);
    std::fs::write(dir.path().join("1.npy"), bytes).unwrap();
    assert!(matches!(
        open_err(dir.path()),
        Error::Data(ndnpy::error::DataError::TruncatedData { .. })
    ));
}

#[test]
fn a_shard_changed_after_open_is_an_error_not_other_values() {
    let dir = tempfile::tempdir().unwrap();
    let stack = NpyStack::create(dir.path().join("x"), &axis0_array(), 3).unwrap();
    Array2::<f64>::zeros((2, 4))
        .write_npy(dir.path().join("x/1.npy"))
        .unwrap();
    assert!(matches!(
        stack.read::<f64, Ix2>(),
        Err(Error::Header(ndnpy::error::HeaderError::BadShape(_)))
    ));
    Array2::<f32>::zeros((3, 4))
        .write_npy(dir.path().join("x/1.npy"))
        .unwrap();
    assert!(matches!(stack.read_any(), Err(Error::DTypeMismatch { .. })));
    // SAFETY: nothing writes the shard while it is mapped.
    assert!(matches!(
        unsafe { stack.shard_mmap(1) },
        Err(Error::Header(ndnpy::error::HeaderError::BadShape(_)))
    ));
    // Rows of the untouched shard still read.
    assert_eq!(
        stack.read_range::<f64, Ix2>(0..3).unwrap(),
        axis0_array().slice(s![0..3, ..])
    );
}

#[cfg(unix)]
#[test]
fn symlink_loops_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    std::os::unix::fs::symlink(&a, &b).unwrap();
    std::os::unix::fs::symlink(&b, &a).unwrap();
    assert!(matches!(open_err(&a), Error::IoPath { .. }));
    // A shard that is a link loop, in a plain folder and in a dask stack.
    let plain = dir.path().join("plain");
    std::fs::create_dir(&plain).unwrap();
    ndarray::array![1u8].write_npy(plain.join("0.npy")).unwrap();
    std::os::unix::fs::symlink(plain.join("1.npy"), plain.join("1.npy")).unwrap();
    let err = open_err(&plain);
    assert!(
        matches!(&err, Error::IoPath { path, .. } if path.ends_with("1.npy")),
        "{err}"
    );
    let dask = good_stack();
    std::fs::remove_file(dask.path().join("1.npy")).unwrap();
    std::os::unix::fs::symlink(dask.path().join("1.npy"), dask.path().join("1.npy")).unwrap();
    assert!(matches!(open_err(dask.path()), Error::IoPath { .. }));
    // A folder that links to itself through a shard name is no shard.
    std::fs::remove_file(plain.join("1.npy")).unwrap();
    std::os::unix::fs::symlink(&plain, plain.join("1.npy")).unwrap();
    assert_eq!(NpyStack::open(&plain).unwrap().shards().len(), 1);
}

#[test]
fn empty_folders_and_lists_are_not_stacks() {
    let dir = tempfile::tempdir().unwrap();
    let err = open_err(dir.path());
    assert!(
        matches!(&err, Error::IoPath { error, .. } if error.kind() == std::io::ErrorKind::NotFound),
        "{err}"
    );
    assert!(NpyStack::from_files(Vec::<&Path>::new()).is_err());
    assert!(matches!(
        open_err(&dir.path().join("nope")),
        Error::IoPath { .. }
    ));
}

/// Many tiny shards: 20 000 in a plain folder by default, to keep the test
/// short (the cost is linear in the shards; `NDNPY_STACK_SHARDS=100000`
/// runs the 100 000). The stack holds a path and two lengths per
/// shard, nothing per shard's data.
#[test]
fn many_tiny_shards() {
    let n_shards = std::env::var("NDNPY_STACK_SHARDS")
        .ok()
        .and_then(|v| v.parse().ok());
    let n: usize = n_shards.unwrap_or(20_000);
    let dir = tempfile::tempdir().unwrap();
    let bytes = ndarray::array![7u8].to_npy_bytes().unwrap();
    for i in 0..n {
        std::fs::write(dir.path().join(format!("{i}.npy")), &bytes).unwrap();
    }
    let stack = NpyStack::open(dir.path()).unwrap();
    assert_eq!((stack.len(), stack.shards().len()), (n, n));
    assert_eq!(
        stack.shards()[n / 2].path().file_name().unwrap().to_str(),
        Some(&*format!("{}.npy", n / 2))
    );
    let r: Array1<u8> = stack.read_range(n - 3..n).unwrap();
    assert_eq!(r.to_vec(), [7, 7, 7]);
    assert_eq!(stack.read::<u8, Ix1>().unwrap().len(), n);
    // A dask info claiming 1 000 000 shards of 2^40 rows, with 20 000 of
    // one row present: refused at the first, before anything is allocated
    // for the claim.
    let claim = vec![1u64 << 40; 1_000_000]
        .iter()
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join(",");
    std::fs::write(dir.path().join("info"), info_of(&claim, "|u1", 0)).unwrap();
    assert!(
        matches!(open_err(dir.path()), Error::Header(ndnpy::error::HeaderError::BadShape(t)) if t.contains("0.npy"))
    );
}

// ---- StackWriter ----

#[test]
fn stack_writer_matches_create() {
    use ndnpy::stack::StackWriter;
    let dir = tempfile::tempdir().unwrap();
    let a = Array2::from_shape_fn((23, 3), |(i, j)| (i * 3 + j) as i32);
    for per in [1, 4, 23, 50] {
        let made = NpyStack::create(dir.path().join(format!("c{per}")), &a, per).unwrap();
        let mut w =
            StackWriter::<i32>::create(dir.path().join(format!("w{per}")), &[3], per).unwrap();
        // Blocks of 0, 1, 2, ... rows, one single row, strided views.
        let (mut start, mut size) = (0, 0);
        while start < 23 {
            let end = (start + size).min(23);
            if size == 3 {
                for r in start..end {
                    w.write(&a.row(r)).unwrap();
                }
            } else {
                w.write(&a.slice(s![start..end, ..])).unwrap();
            }
            start = end;
            size += 1;
        }
        assert_eq!(w.rows(), 23);
        let streamed = w.finish().unwrap();
        let lens = |s: &NpyStack| s.shards().iter().map(|s| s.len()).collect::<Vec<_>>();
        assert_eq!(lens(&streamed), lens(&made));
        assert_eq!(streamed.read::<i32, Ix2>().unwrap(), a);
        assert_eq!(
            std::fs::read(dir.path().join(format!("w{per}/info"))).unwrap(),
            std::fs::read(dir.path().join(format!("c{per}/info"))).unwrap()
        );
    }
    let hidden = std::fs::read_dir(dir.path())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with('.')
        })
        .count();
    assert_eq!(hidden, 0);
}

#[test]
fn stack_writer_refuses_and_leaves_nothing_when_dropped() {
    use ndnpy::stack::StackWriter;
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("x");
    let mut w = StackWriter::<f64>::create(&target, &[2], 2).unwrap();
    w.write(&Array2::<f64>::zeros((5, 2))).unwrap();
    let err = w.write(&Array2::<f64>::zeros((1, 3))).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Rows(ndnpy::error::RowsError::AppendMismatch { .. })
        ),
        "{err}"
    );
    assert_eq!(w.rows(), 5, "a refused block writes nothing");
    drop(w);
    assert!(!target.exists());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    assert!(StackWriter::<f64>::create(&target, &[2], 0).is_err());
    std::fs::create_dir(&target).unwrap();
    std::fs::write(target.join("keep"), b"x").unwrap();
    assert!(StackWriter::<f64>::create(&target, &[2], 2).is_err());
}

#[test]
fn fortran_order_shards_along_their_last_axis_read_only_their_rows() {
    // A dask stack along axis 1 of Fortran-order shards: axis 1 is their
    // run axis, so a range reads one run of each shard.
    let dir = tempfile::tempdir().unwrap();
    let a = axis1_array();
    for (i, r) in [0..2, 2..4, 4..5].into_iter().enumerate() {
        let mut f = Array2::<i32>::zeros((3, r.len()).f());
        f.assign(&a.slice(s![.., r]));
        f.write_npy(dir.path().join(format!("{i}.npy"))).unwrap();
    }
    assert!(
        ndnpy::dtype::Header::open(dir.path().join("0.npy"))
            .unwrap()
            .fortran_order
    );
    std::fs::write(dir.path().join("info"), INFO_AXIS1_P5).unwrap();
    let stack = NpyStack::open(dir.path()).unwrap();
    for start in 0..=5 {
        for end in start..=5 {
            let r: Array2<i32> = stack.read_range(start..end).unwrap();
            assert_eq!(r, a.slice(s![.., start..end]), "{start}..{end}");
        }
    }
}

#[test]
fn an_info_of_100_000_short_chunks_reads() {
    // One-byte chunk lengths, as Python pickles `(1,) * 100_000` (2 bytes
    // each): more values per pickle byte than the pickle reader's usual
    // budget allows, which `info` raises (still in proportion to its size).
    let claim = vec!["1"; 100_000].join(",");
    let check =
        ndnpy::stack::plan::StackCheck::dask(&info_of(&format!("{claim};4"), "<f8", 0), "info")
            .unwrap();
    assert_eq!(check.shard_count(), Some(100_000));
    // On a folder with the first shard present: the first missing one named.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("info"),
        info_of(&format!("{claim};4"), "<f8", 0),
    )
    .unwrap();
    Array2::<f64>::zeros((1, 4))
        .write_npy(dir.path().join("0.npy"))
        .unwrap();
    let err = open_err(dir.path());
    assert!(
        matches!(&err, Error::IoPath { path, .. } if path.ends_with("1.npy")),
        "{err}"
    );
}
