//! Shapes of pickled arrays that ndarray cannot hold (issue 30, review
//! item 5): a zero dimension beside dimensions whose product exceeds
//! `isize::MAX`. Such an array has no elements, so its list of items (0)
//! matches the shape's product, yet ndarray refuses the shape; the reader
//! must give an error, not panic, for a nested array and a top-level one,
//! of objects, of `StringDType` strings and of records with object fields,
//! in either memory order, with or without
//! `ReadOptions::allow_beyond_numpy_limits`.

use ndnpy::{pickle::PyValue, AnyArray, Error, ReadNpy, ReadOptions};

mod common;
use common::npy_v1;

/// Pickle opcodes pushing NumPy's object dtype (`np.dtype('O')`, as
/// NumPy pickles it, without memo operations).
const OBJECT: &[u8] = b"cnumpy\ndtype\nX\x02\x00\x00\x00O8\x89\x88\x87R\
(K\x03X\x01\x00\x00\x00|NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x3ftb";

/// `np.dtypes.StringDType()`.
const STRING: &[u8] = b"cnumpy._core._internal\n_convert_to_stringdtype_kwargs\nK\x01\x85R";

/// `np.dtype([('a', 'O')])`: a record whose one field holds objects.
fn record() -> Vec<u8> {
    let mut out = b"cnumpy\ndtype\nX\x02\x00\x00\x00V8\x89\x88\x87R\
(K\x03X\x01\x00\x00\x00|NX\x01\x00\x00\x00a\x85}X\x01\x00\x00\x00a"
        .to_vec();
    out.extend_from_slice(OBJECT);
    out.extend_from_slice(b"K\x00\x86sK\x08K\x01K\x1btb");
    out
}

/// Pickle opcodes pushing an ndarray of `dtype` (opcodes) and `shape`
/// whose data `data` pushes (a list of objects, or bytes), as
/// `ndarray.__reduce__` pickles arrays.
fn ndarray_of(dtype: &[u8], shape: &[u64], fortran: bool, data: &[u8]) -> Vec<u8> {
    let mut out =
        b"cnumpy.core.multiarray\n_reconstruct\ncnumpy\nndarray\nK\x00\x85C\x01b\x87R(K\x01("
            .to_vec();
    for &d in shape {
        // LONG1 of 9 bytes: any u64, its sign byte 0.
        out.extend_from_slice(b"\x8a\x09");
        out.extend_from_slice(&d.to_le_bytes());
        out.push(0);
    }
    out.push(b't');
    out.extend_from_slice(dtype);
    out.push(if fortran { 0x88 } else { 0x89 });
    out.extend_from_slice(data);
    out.extend_from_slice(b"tb");
    out
}

/// [`ndarray_of`] an object-style array listing `items` (each opcodes
/// pushing one value).
fn ndarray(dtype: &[u8], shape: &[u64], fortran: bool, items: &[Vec<u8>]) -> Vec<u8> {
    let mut list = b"]".to_vec();
    if !items.is_empty() {
        list.push(b'(');
        for item in items {
            list.extend_from_slice(item);
        }
        list.push(b'e');
    }
    ndarray_of(dtype, shape, fortran, &list)
}

/// `np.dtype(descr)` for a flexible type of no bytes (`U0`, `S0`, `V0`),
/// its byte order `order` and alignment `align`.
fn empty_flexible(code: &str, order: char, align: u8) -> Vec<u8> {
    let mut out = b"cnumpy\ndtype\nX\x02\x00\x00\x00".to_vec();
    out.extend_from_slice(code.as_bytes());
    out.extend_from_slice(b"\x89\x88\x87R(K\x03X\x01\x00\x00\x00");
    out.push(order as u8);
    out.extend_from_slice(b"NNNK\x00K");
    out.push(align);
    out.extend_from_slice(b"K\x08tb");
    out
}

/// A whole pickle (protocol 3) of the value `ops` push.
fn pickle(ops: &[u8]) -> Vec<u8> {
    let mut out = b"\x80\x03".to_vec();
    out.extend_from_slice(ops);
    out.push(b'.');
    out
}

/// An object `.npy` file of `shape` holding `pickle`.
fn object_npy(shape: &str, pickle: &[u8]) -> Vec<u8> {
    npy_v1(
        &format!("{{'descr': '|O', 'fortran_order': False, 'shape': {shape}, }}"),
        pickle,
    )
}

/// 2^62 x 2 x 0: no elements, but 2^63 in its non-zero dimensions, one
/// more than `isize::MAX`.
const HUGE: [u64; 3] = [1 << 62, 2, 0];

fn is_refused(r: &ndnpy::Result<impl std::fmt::Debug>) -> bool {
    matches!(
        r,
        Err(
            Error::Pickle(ndnpy::error::PickleError::MalformedPickle { .. })
                | Error::Limit(ndnpy::error::LimitError::LengthOverflow { .. })
        )
    )
}

/// The review's file, as `np.save(allow_pickle=True)` (NumPy 2.4) wrote
/// it: an object array of one element whose `__reduce__` returns
/// `(_reconstruct, (np.ndarray, (0,), b'b'), (1, (2**62, 2, 0),
/// np.dtype('O'), False, []))`.
const NEST_BIG: [&str; 7] = [
    "934e554d5059010076007b276465736372273a20277c4f272c2027666f727472616e5f6f72646572273a2046616c7365",
    "2c20277368617065273a2028312c292c207d202020202020202020202020202020202020202020202020202020202020",
    "202020202020202020202020202020202020202020202020202020202020200a800495b2000000000000008c166e756d",
    "70792e5f636f72652e6d756c74696172726179948c0c5f7265636f6e7374727563749493948c056e756d7079948c076e",
    "6461727261799493944b0085944301629487945294284b014b01859468038c0564747970659493948c024f3894898887",
    "945294284b038c017c944e4e4e4affffffff4affffffff4b3f749462895d94680268054b008594680787945294284b01",
    "8a0800000000000000404b024b008794680f895d94749462617494622e",
];

fn unhex(lines: &[&str]) -> Vec<u8> {
    let text: String = lines.concat();
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn the_reviewed_file_is_an_error() {
    let file = unhex(&NEST_BIG);
    assert_eq!(file.len(), 317);
    let r = AnyArray::from_npy_bytes(&file);
    assert!(
        matches!(
            r,
            Err(Error::Pickle(
                ndnpy::error::PickleError::MalformedPickle { .. }
            ))
        ),
        "{r:?}"
    );
    let beyond = ReadOptions::default().allow_beyond_numpy_limits(true);
    let r = AnyArray::from_npy_bytes_with(&file, &beyond);
    assert!(
        matches!(
            r,
            Err(Error::Pickle(
                ndnpy::error::PickleError::MalformedPickle { .. }
            ))
        ),
        "{r:?}"
    );
}

#[test]
fn a_nested_object_array_of_an_overflowing_empty_shape_is_an_error() {
    // The review's file: one object whose `__reduce__` gives an empty
    // object array of shape (2**62, 2, 0).
    for fortran in [false, true] {
        for dtype in [OBJECT.to_vec(), STRING.to_vec(), record()] {
            let inner = ndarray(&dtype, &HUGE, fortran, &[]);
            let outer = ndarray(OBJECT, &[1], false, &[inner]);
            let file = object_npy("(1,)", &pickle(&outer));
            let options = ReadOptions::default().allow_objects(true);
            let r = AnyArray::from_npy_bytes_with(&file, &options);
            assert!(is_refused(&r), "{r:?}");
            let r = ndarray::ArrayD::<PyValue>::from_npy_bytes_with(&file, &options);
            assert!(is_refused(&r), "{r:?}");
            assert!(is_refused(&ndnpy::pickle::loads(&pickle(&outer))));
        }
    }
}

#[test]
fn a_top_level_object_array_of_an_overflowing_empty_shape_is_an_error() {
    let shape = format!("({}, 2, 0)", 1u64 << 62);
    let beyond = ReadOptions::default()
        .allow_objects(true)
        .allow_beyond_numpy_limits(true)
        .max_zero_size_elements(u64::MAX);
    for fortran in [false, true] {
        for dtype in [OBJECT.to_vec(), STRING.to_vec(), record()] {
            let p = pickle(&ndarray(&dtype, &HUGE, fortran, &[]));
            // The header agrees with the pickle: only the relaxed options
            // let it past the header check, then the pickle is refused.
            let file = object_npy(&shape, &p);
            let r = AnyArray::from_npy_bytes_with(&file, &beyond);
            assert!(is_refused(&r), "{r:?}");
            let r =
                AnyArray::from_npy_bytes_with(&file, &ReadOptions::default().allow_objects(true));
            assert!(is_refused(&r), "{r:?}");
            // A header of another shape: the pickle is read before the
            // shapes are compared.
            let file = object_npy("(0,)", &p);
            let r = AnyArray::from_npy_bytes_with(&file, &beyond);
            assert!(is_refused(&r), "{r:?}");
        }
    }
}

#[test]
fn raw_arrays_of_zero_size_items_and_an_overflowing_empty_shape_are_an_error() {
    let shape = format!("({}, 2, 0)", 1u64 << 62);
    let beyond = ReadOptions::default()
        .allow_beyond_numpy_limits(true)
        .max_zero_size_elements(u64::MAX);
    for (descr, dtype) in [
        ("'<U0'", empty_flexible("U0", '<', 4)),
        ("'|S0'", empty_flexible("S0", '|', 1)),
        ("'|V0'", empty_flexible("V0", '|', 1)),
    ] {
        for fortran in [false, true] {
            // Nested in an object array, its data an empty bytes object.
            let inner = ndarray_of(&dtype, &HUGE, fortran, b"C\x00");
            let outer = pickle(&ndarray(OBJECT, &[1], false, &[inner]));
            let r = ndnpy::pickle::loads(&outer);
            // Void items are records, which keep their shape apart from
            // ndarray (NumPy makes such an array too): they may load,
            // empty. Strings cannot.
            assert!(descr == "'|V0'" || is_refused(&r), "{descr}: {r:?}");
            // At the top level, within NumPy's limits and beyond them.
            let file = npy_v1(
                &format!(
                    "{{'descr': {descr}, 'fortran_order': {}, 'shape': {shape}, }}",
                    if fortran { "True" } else { "False" }
                ),
                &[],
            );
            // NumPy's size rule lets items of no bytes past the header
            // (it loads `(0, 2**62, 2**62)` of them); the readers that
            // build ndarray arrays of the shape must then refuse it.
            for options in [ReadOptions::default(), beyond] {
                let r = AnyArray::from_npy_bytes_with(&file, &options);
                // Void items: as above.
                if descr == "'|V0'" {
                    if let Ok(a) = r {
                        assert_eq!(a.shape(), [1 << 62, 2, 0]);
                    }
                    continue;
                }
                assert!(r.is_err(), "{descr}: {r:?}");
                if descr == "'<U0'" {
                    let r = ndnpy::types::StringArray::from_npy_bytes_with(&file, &options);
                    assert!(r.is_err(), "{descr}: {:?}", r.map(|a| a.len()));
                    let r = ndarray::ArrayD::<String>::from_npy_bytes_with(&file, &options);
                    assert!(r.is_err(), "{descr}: {r:?}");
                }
                if descr == "'|S0'" {
                    let r = ndnpy::types::BytesArray::from_npy_bytes_with(&file, &options);
                    assert!(r.is_err(), "{descr}: {:?}", r.map(|a| a.len()));
                    let r = ndarray::ArrayD::<Vec<u8>>::from_npy_bytes_with(&file, &options);
                    assert!(r.is_err(), "{descr}: {r:?}");
                }
            }
        }
    }
}

#[test]
fn compact_strings_refuse_shapes_ndarray_cannot_hold() {
    // Their views and owned arrays are ndarray arrays of the shape.
    let shape = [1 << 62, 2, 0];
    let r = ndnpy::types::StringArray::from_strs(&shape, []);
    assert!(
        matches!(
            r,
            Err(Error::Header(ndnpy::error::HeaderError::BadShape(_)))
        ),
        "{:?}",
        r.map(|a| a.len())
    );
    let r = ndnpy::types::BytesArray::from_bytes(&shape, []);
    assert!(
        matches!(
            r,
            Err(Error::Header(ndnpy::error::HeaderError::BadShape(_)))
        ),
        "{:?}",
        r.map(|a| a.len())
    );
    // The same count of elements in a shape it can hold is fine.
    let ok = ndnpy::types::StringArray::from_strs(&[1 << 62, 0], []).unwrap();
    assert_eq!(ok.view().shape(), [1 << 62, 0]);
}
