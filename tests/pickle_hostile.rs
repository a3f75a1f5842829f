//! Hostile pickles: each fails with its exact error variant, never a panic,
//! a hang or an allocation sized by a claim.

use ndnpy::pickle::{loads, PyValue};
use ndnpy::{AnyArray, Error, ReadOptions};

mod common;
use common::npy_v1;

/// An object-array `.npy` file around `pickle`.
fn object_npy(shape: &str, pickle: &[u8]) -> Vec<u8> {
    npy_v1(
        &format!("{{'descr': '|O', 'fortran_order': False, 'shape': {shape}, }}"),
        pickle,
    )
}

fn unsupported(r: ndnpy::Result<PyValue>) -> String {
    match r {
        Err(Error::Pickle(ndnpy::error::PickleError::UnsupportedPickle { what })) => what,
        other => panic!("expected UnsupportedPickle, got {other:?}"),
    }
}

fn malformed(r: ndnpy::Result<PyValue>) -> String {
    match r {
        Err(Error::Pickle(ndnpy::error::PickleError::MalformedPickle { reason, .. })) => reason,
        other => panic!("expected MalformedPickle, got {other:?}"),
    }
}

fn limit(r: ndnpy::Result<PyValue>) -> &'static str {
    match r {
        Err(Error::Limit(ndnpy::error::LimitError::PickleLimit { what, .. })) => what,
        other => panic!("expected PickleLimit, got {other:?}"),
    }
}

/// `pickle.dumps(np.array(['a', None], dtype=object), protocol=4)`.
const NUMPY_P4: &[u8] = b"\x80\x04\x95\x8f\x00\x00\x00\x00\x00\x00\x00\x8c\x16numpy._core.multiarray\x94\x8c\x0c_reconstruct\x94\x93\x94\x8c\x05numpy\x94\x8c\x07ndarray\x94\x93\x94K\x00\x85\x94C\x01b\x94\x87\x94R\x94(K\x01K\x02\x85\x94h\x03\x8c\x05dtype\x94\x93\x94\x8c\x02O8\x94\x89\x88\x87\x94R\x94(K\x03\x8c\x01|\x94NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK?t\x94b\x89]\x94(\x8c\x01a\x94Net\x94b.";

#[test]
fn the_reference_pickle_loads() {
    let v = loads(NUMPY_P4).unwrap();
    let PyValue::Array(a) = v else {
        panic!("{v:?}")
    };
    let AnyArray::Object(a) = std::sync::Arc::unwrap_or_clone(a) else {
        panic!()
    };
    assert_eq!(
        a.as_slice().unwrap(),
        &[PyValue::Str("a".into()), PyValue::None]
    );
    let file = object_npy("(2,)", NUMPY_P4);
    assert!(matches!(
        AnyArray::from_npy_bytes(&file),
        Ok(AnyArray::Object(_))
    ));
}

#[test]
fn os_system_via_global() {
    let what = unsupported(loads(b"\x80\x02cos\nsystem\nX\x02\x00\x00\x00ls\x85R."));
    assert_eq!(
        what,
        "global 'os system' (not called: read it as inert data with ReadOptions::opaque_objects)"
    );
    // Also through a whole file.
    let file = object_npy("()", b"\x80\x02cos\nsystem\nX\x02\x00\x00\x00ls\x85R.");
    assert!(matches!(
        AnyArray::from_npy_bytes(&file),
        Err(Error::Pickle(
            ndnpy::error::PickleError::UnsupportedPickle { .. }
        ))
    ));
}

#[test]
fn eval_via_stack_global() {
    let p = b"\x80\x04\x8c\x08builtins\x8c\x04eval\x93\x8c\x04id()\x85R.";
    assert!(unsupported(loads(p)).starts_with("global 'builtins eval'"));
    // Python 2's name for the module is mapped as Python 3 maps it.
    let p = b"\x80\x02c__builtin__\neval\nX\x04\x00\x00\x00id()\x85R.";
    assert!(unsupported(loads(p)).starts_with("global 'builtins eval'"));
}

#[test]
fn subprocess_via_inst_and_obj() {
    let p = b"(X\x02\x00\x00\x00lsisubprocess\ncheck_output\n.";
    assert!(unsupported(loads(p)).starts_with("global 'subprocess check_output'"));
    let p = b"(csubprocess\nPopen\nX\x02\x00\x00\x00lso.";
    assert!(unsupported(loads(p)).starts_with("global 'subprocess Popen'"));
}

#[test]
fn lookalike_globals_are_refused() {
    for (module, name) in [
        ("numpy", "load"),
        ("numpy.core.multiarray", "_reconstruct "),
        ("builtins", "getattr"),
        ("copyreg", "_reconstructor"),
        ("copy_reg", "_reconstructor"),
        ("datetime", "tzinfo"),
        ("numpy", "frombuffer"),
        ("posix", "system"),
    ] {
        // Called: refused by name.
        let p = format!("c{module}\n{name}\n)R.");
        assert!(
            unsupported(loads(p.as_bytes())).contains(name.trim()),
            "{module} {name}"
        );
        // Never called: a reference, which is data.
        let p = format!("c{module}\n{name}\n.");
        let module = if module == "copy_reg" {
            "copyreg"
        } else {
            module
        };
        assert_eq!(
            loads(p.as_bytes()).unwrap(),
            PyValue::Global {
                module: module.into(),
                name: name.into()
            }
        );
    }
}

#[test]
fn reduce_on_something_not_whitelisted_callable() {
    // A str as the callable.
    let r = malformed(loads(b"X\x02\x00\x00\x00ls)R."));
    assert!(r.contains("not callable"), "{r}");
    // numpy.ndarray is whitelisted only as _reconstruct's class argument.
    let r = malformed(loads(b"cnumpy\nndarray\n)R."));
    assert!(r.contains("_reconstruct"), "{r}");
    // _reconstruct of another class is refused by name.
    let p = b"cnumpy.core.multiarray\n_reconstruct\n(cbuiltins\nset\n(K\x00tC\x01btR.";
    let what = unsupported(loads(p));
    assert!(what.contains("builtins.set"), "{what}");
}

#[test]
fn memo_reference_to_a_missing_slot() {
    assert!(malformed(loads(b"\x80\x02h\x05.")).contains("memo slot 5"));
    assert!(malformed(loads(b"\x80\x02j\x00\x00\x00\x01.")).contains("memo slot 16777216"));
    assert!(malformed(loads(b"g7\n.")).contains("memo slot 7"));
    // PUT of an empty stack.
    assert!(malformed(loads(b"q\x00.")).contains("underflow"));
}

#[test]
fn deep_nesting_is_a_limit_not_a_stack_overflow() {
    // 100 000 MARKs and nothing closes them.
    let mut p = vec![b'('; 100_000];
    p.push(b'.');
    assert!(malformed(loads(&p)).contains("underflow"));
    // 100 000 nested lists: ( ( ( ... l l l
    let mut p = vec![b'('; 100_000];
    p.extend(std::iter::repeat_n(b'l', 100_000));
    p.push(b'.');
    assert_eq!(limit(loads(&p)), "nesting depth of values");
    // 100 000 empty lists appended into each other.
    let mut p = vec![b']'; 100_000];
    p.extend(std::iter::repeat_n(b'a', 99_999));
    p.push(b'.');
    assert_eq!(limit(loads(&p)), "nesting depth of values");
    // Nested tuples through TUPLE1.
    let mut p = vec![b'N'];
    p.extend(std::iter::repeat_n(0x85, 100_000));
    p.push(b'.');
    assert_eq!(limit(loads(&p)), "nesting depth of values");
}

#[test]
fn arrays_nested_in_arrays_count_toward_the_depth_limit() {
    // 10 000 object arrays, each the only element of the next.
    let prefix: &[u8] = b"cnumpy.core.multiarray\n_reconstruct\ncnumpy\nndarray\nK\x00\x85C\x01b\x87R(K\x01(K\x01tcnumpy\ndtype\nX\x02\x00\x00\x00O8\x89\x88\x87R(K\x03X\x01\x00\x00\x00|NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK?tb\x89](";
    let mut p = vec![0x80, 2];
    for _ in 0..10_000 {
        p.extend_from_slice(prefix);
    }
    p.push(b'N');
    for _ in 0..10_000 {
        p.extend_from_slice(b"etb");
    }
    p.push(b'.');
    assert_eq!(limit(loads(&p)), "nesting depth of values");
    // 100 levels are fine.
    let mut p = vec![0x80, 2];
    for _ in 0..100 {
        p.extend_from_slice(prefix);
    }
    p.push(b'N');
    for _ in 0..100 {
        p.extend_from_slice(b"etb");
    }
    p.push(b'.');
    let mut v = loads(&p).unwrap();
    let mut levels = 0;
    while let PyValue::Array(a) = v {
        let AnyArray::Object(x) = std::sync::Arc::unwrap_or_clone(a) else {
            panic!()
        };
        v = x.into_iter().next().unwrap();
        levels += 1;
    }
    assert_eq!((levels, v), (100, PyValue::None));
}

#[test]
fn short_pickle_claiming_huge_lengths() {
    // BINUNICODE8 of 4 GiB.
    let mut p = vec![0x80, 4, 0x8d];
    p.extend_from_slice(&(4u64 << 30).to_le_bytes());
    p.extend_from_slice(b"abc.");
    assert!(malformed(loads(&p)).contains("truncated"));
    // BINBYTES of 4 GiB - 1.
    let p = b"B\xff\xff\xff\xffabc.";
    assert!(malformed(loads(p)).contains("truncated"));
    // BYTEARRAY8 of 2^63.
    let mut p = vec![0x80, 5, 0x96];
    p.extend_from_slice(&(1u64 << 63).to_le_bytes());
    p.push(b'.');
    assert!(malformed(loads(&p)).contains("truncated"));
    // FRAME of 2^64 - 1.
    let mut p = vec![0x80, 4, 0x95];
    p.extend_from_slice(&u64::MAX.to_le_bytes());
    p.extend_from_slice(b"N.");
    assert!(malformed(loads(&p)).contains("truncated"));
    // LONG4 beyond the integer size limit.
    let p = b"\x8b\x00\x00\x00\x10\x00.";
    assert_eq!(limit(loads(p)), "bytes of one integer");
}

/// `_reconstruct(ndarray, (0,), b'b')` with state `(1, shape, dtype('O'),
/// False, data)`.
fn object_array_pickle(shape: &[u32], data: &[u8]) -> Vec<u8> {
    let mut p = b"\x80\x02cnumpy.core.multiarray\n_reconstruct\ncnumpy\nndarray\nK\x00\x85C\x01b\x87R(K\x01(".to_vec();
    for d in shape {
        p.push(b'J');
        p.extend_from_slice(&d.to_le_bytes());
    }
    p.extend_from_slice(b"tcnumpy\ndtype\nX\x02\x00\x00\x00O8\x89\x88\x87R(K\x03X\x01\x00\x00\x00|NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK?tb\x89");
    p.extend_from_slice(data);
    p.extend_from_slice(b"tb.");
    p
}

#[test]
fn a_list_claiming_a_billion_elements() {
    // Shape (1_000_000_000,) with a two-item list.
    let p = object_array_pickle(&[1_000_000_000], b"](K\x01K\x02e");
    let r = malformed(loads(&p));
    assert!(
        r.contains("has 2 items") && r.contains("needs 1000000000"),
        "{r}"
    );
    // Shape whose product overflows.
    let p = object_array_pickle(&[i32::MAX as u32; 3], b"]");
    assert!(malformed(loads(&p)).contains("overflows"));
    // A numeric array claiming 10^9 int64 with 8 bytes of data.
    let p = b"\x80\x02cnumpy.core.multiarray\n_reconstruct\ncnumpy\nndarray\nK\x00\x85C\x01b\x87R(K\x01(J\x00\xca\x9a;tcnumpy\ndtype\nX\x02\x00\x00\x00i8\x89\x88\x87R(K\x03X\x01\x00\x00\x00<NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00tb\x89C\x08\x00\x00\x00\x00\x00\x00\x00\x00tb.";
    let r = malformed(loads(p));
    assert!(
        r.contains("8 bytes") && r.contains("need 8000000000"),
        "{r}"
    );
}

#[test]
fn data_length_disagrees_with_shape() {
    let p = object_array_pickle(&[3], b"](K\x01K\x02e");
    assert!(malformed(loads(&p)).contains("has 2 items, its shape [3] needs 3"));
    let p = object_array_pickle(&[1], b"](K\x01K\x02e");
    assert!(malformed(loads(&p)).contains("has 2 items"));
    // The pickle agrees with itself but not with the file header.
    let p = object_array_pickle(&[2], b"](K\x01K\x02e");
    let file = object_npy("(3,)", &p);
    match AnyArray::from_npy_bytes(&file) {
        Err(Error::Pickle(ndnpy::error::PickleError::MalformedPickle { reason, .. })) => {
            assert!(reason.contains("header"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn recursive_structures() {
    // l = []; l.append(l)
    assert!(malformed(loads(b"\x80\x02]q\x00h\x00a.")).contains("recursive"));
    // d = {}; d['k'] = d
    assert!(malformed(loads(b"\x80\x02}q\x00X\x01\x00\x00\x00kh\x00s.")).contains("recursive"));
    // A list inside a tuple inside the list.
    assert!(malformed(loads(b"]q\x00h\x00\x85a.")).contains("recursive"));
    // A list that contains itself as an object array's element.
    let p = object_array_pickle(&[1], b"]q\x07h\x07a");
    assert!(malformed(loads(&p)).contains("recursive"));
}

#[test]
fn sharing_that_explodes_is_a_limit() {
    // x = [1, 1]; then 64 times x = [x, x]: 2^64 leaves from ~400 bytes.
    let mut p = b"\x80\x02(K\x01K\x01lq\x00".to_vec();
    for _ in 0..64 {
        p.extend_from_slice(b"(h\x00h\x00lq\x00");
    }
    p.push(b'.');
    assert_eq!(
        limit(loads(&p)),
        "memory for the values it builds (64 bytes per input byte plus 1 MiB)"
    );
    // The same through strings: one 60 KiB string fetched 100 000 times.
    let mut p = vec![0x80, 2, b'X'];
    p.extend_from_slice(&(60_000u32).to_le_bytes());
    p.extend(std::iter::repeat_n(b'a', 60_000));
    p.extend_from_slice(b"q\x00](");
    for _ in 0..100_000 {
        p.extend_from_slice(b"h\x00");
    }
    p.extend_from_slice(b"e.");
    assert!(matches!(
        loads(&p),
        Err(Error::Limit(ndnpy::error::LimitError::PickleLimit { .. }))
    ));
}

#[test]
fn truncated_pickles() {
    for cut in 0..NUMPY_P4.len() - 1 {
        let r = loads(&NUMPY_P4[..cut]);
        match r {
            Err(Error::Pickle(ndnpy::error::PickleError::MalformedPickle { .. })) => {}
            other => panic!("cut at {cut}: {other:?}"),
        }
        let file = object_npy("(2,)", &NUMPY_P4[..cut]);
        assert!(
            matches!(
                AnyArray::from_npy_bytes(&file),
                Err(Error::Pickle(
                    ndnpy::error::PickleError::MalformedPickle { .. }
                ))
            ),
            "cut at {cut}"
        );
        assert!(
            matches!(
                AnyArray::read_npy_from(&file[..]),
                Err(Error::Pickle(
                    ndnpy::error::PickleError::MalformedPickle { .. }
                ))
            ),
            "cut at {cut}"
        );
    }
}

#[test]
fn bad_dtype_states() {
    let with_state = |state: &[u8]| {
        let mut p = b"\x80\x02cnumpy\ndtype\nX\x02\x00\x00\x00i8\x89\x88\x87R".to_vec();
        p.extend_from_slice(state);
        p.extend_from_slice(b"b.");
        loads(&p)
    };
    // What NumPy writes.
    let good = with_state(b"(K\x03X\x01\x00\x00\x00<NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00t");
    assert_eq!(good.unwrap().to_string(), "dtype('int64')");
    // Byte order 'x': NumPy: "endian is not 1-char string in Numpy dtype unpickling".
    let r = malformed(with_state(
        b"(K\x03X\x01\x00\x00\x00xNNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00t",
    ));
    assert!(r.contains("byte order"), "{r}");
    // Not a tuple.
    assert!(malformed(with_state(b"K\x03")).contains("not a tuple"));
    // Wrong length.
    assert!(malformed(with_state(b"(K\x03X\x01\x00\x00\x00<t")).contains("2 items"));
    // An item size that contradicts the type.
    let r = malformed(with_state(
        b"(K\x03X\x01\x00\x00\x00<NNNK\x05J\xff\xff\xff\xffK\x00t",
    ));
    assert!(r.contains("item size 5"), "{r}");
    // A bad type code.
    let mut p = b"cnumpy\ndtype\nX\x02\x00\x00\x00q9\x85R(K\x03X\x01\x00\x00\x00<NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00tb.".to_vec();
    assert!(malformed(loads(&p)).contains("dtype state refused"));
    // Record fields that overlap.
    p = b"cnumpy\ndtype\nX\x02\x00\x00\x00V8\x85R(K\x03X\x01\x00\x00\x00|N(X\x01\x00\x00\x00aX\x01\x00\x00\x00bt}(X\x01\x00\x00\x00acnumpy\ndtype\nX\x02\x00\x00\x00i8\x85RK\x00\x86X\x01\x00\x00\x00bcnumpy\ndtype\nX\x02\x00\x00\x00i8\x85RK\x04\x86uK\x10K\x01K\x10tb.".to_vec();
    assert!(unsupported(loads(&p)).contains("overlaps"));
}

#[test]
fn tzinfo_is_unsupported() {
    // datetime(state, timezone.utc): the tz global itself is refused.
    let p = b"cdatetime\ndatetime\nC\n\x07\xe4\x01\x02\x03\x04\x05\x00\x00\x06cdatetime\ntimezone\n\x86R.";
    assert!(unsupported(loads(p)).contains("tzinfo"));
    // Any non-None tzinfo value.
    let p = b"cdatetime\ndatetime\nC\n\x07\xe4\x01\x02\x03\x04\x05\x00\x00\x06K\x01\x86R.";
    assert!(unsupported(loads(p)).contains("tzinfo"));
    // None is a naive datetime.
    let p = b"cdatetime\ndatetime\nC\n\x07\xe4\x01\x02\x03\x04\x05\x00\x00\x06N\x86R.";
    assert_eq!(
        loads(p).unwrap().to_string(),
        "datetime.datetime(2020, 1, 2, 3, 4, 5, 6)"
    );
}

#[test]
fn other_refusals() {
    assert!(unsupported(loads(b"\x80\x06N.")).contains("protocol 6"));
    assert!(unsupported(loads(b"\x80\x05\x97.")).contains("out-of-band"));
    assert!(unsupported(loads(b"\x82\x01.")).contains("extension"));
    assert!(unsupported(loads(b"P1\n.")).contains("persistent"));
    assert!(malformed(loads(b"\xff.")).contains("unknown opcode 0xff"));
    assert!(malformed(loads(b"")).contains("truncated"));
    // BUILD on a plain value never sets attributes.
    assert!(unsupported(loads(b"]}b.")).contains("BUILD"));
    // A list as a dict key or set member (Python: unhashable).
    assert!(malformed(loads(b"}]Ns.")).contains("unhashable"));
    // A global handed back as a value is a reference (data).
    assert_eq!(
        loads(b"cbuiltins\nset\n.").unwrap().to_string(),
        "<class 'set'>"
    );
    // Invalid dates.
    assert!(
        malformed(loads(b"cdatetime\ndate\nC\x04\x07\xe5\x02\x1d\x85R.")).contains("invalid date")
    );
}

#[test]
fn objects_can_be_refused_outright() {
    let file = object_npy("(2,)", NUMPY_P4);
    let strict = ReadOptions::default().allow_objects(false);
    assert!(matches!(
        AnyArray::from_npy_bytes_with(&file, &strict),
        Err(Error::Limit(ndnpy::error::LimitError::ObjectsRefused))
    ));
    assert!(matches!(
        AnyArray::read_npy_from_with(&file[..], &strict),
        Err(Error::Limit(ndnpy::error::LimitError::ObjectsRefused))
    ));
    // Even a hostile pickle is never looked at.
    let evil = object_npy("()", b"cos\nsystem\n.");
    assert!(matches!(
        AnyArray::from_npy_bytes_with(&evil, &strict),
        Err(Error::Limit(ndnpy::error::LimitError::ObjectsRefused))
    ));
}

#[test]
fn a_record_with_many_fields_is_read_in_linear_time() {
    // dtype('V{8n}') with n int64 fields f0..f{n-1}; the field dtype is
    // memoised once. Quadratic field lookup would take minutes here.
    let n = 50_000u32;
    let mut p = b"\x80\x02cnumpy\ndtype\nX\x02\x00\x00\x00i8\x85R(K\x03X\x01\x00\x00\x00<NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00tbq\x00cnumpy\ndtype\nX".to_vec();
    let code = format!("V{}", 8 * n);
    p.extend_from_slice(&(code.len() as u32).to_le_bytes());
    p.extend_from_slice(code.as_bytes());
    p.extend_from_slice(b"\x85R(K\x03X\x01\x00\x00\x00|N(");
    for i in 0..n {
        let name = format!("f{i}");
        p.push(b'X');
        p.extend_from_slice(&(name.len() as u32).to_le_bytes());
        p.extend_from_slice(name.as_bytes());
    }
    p.extend_from_slice(b"t}(");
    for i in 0..n {
        let name = format!("f{i}");
        p.push(b'X');
        p.extend_from_slice(&(name.len() as u32).to_le_bytes());
        p.extend_from_slice(name.as_bytes());
        p.extend_from_slice(b"h\x00J");
        p.extend_from_slice(&(8 * i).to_le_bytes());
        p.push(0x86);
    }
    p.push(b'u');
    p.push(b'J');
    p.extend_from_slice(&(8 * n).to_le_bytes());
    p.extend_from_slice(b"K\x01K\x10tb.");
    let PyValue::DType(ndnpy::dtype::DType::Record(fields)) = loads(&p).unwrap() else {
        panic!()
    };
    assert_eq!(fields.len(), n as usize);
    assert_eq!(fields[49_999].name, "f49999");
}

#[test]
fn newobj_of_a_mutable_type_is_empty_as_in_python() {
    // set.__new__(set, [1]) is an empty set; frozenset.__new__ fills it.
    assert_eq!(
        loads(b"cbuiltins\nset\n]K\x01a\x85\x81.")
            .unwrap()
            .to_string(),
        "set()"
    );
    assert_eq!(
        loads(b"cbuiltins\nfrozenset\n]K\x01a\x85\x81.")
            .unwrap()
            .to_string(),
        "frozenset({1})"
    );
}

#[test]
fn subclasses_of_ndarray_are_refused_by_name_or_opaque() {
    // np.matrix pickles as _reconstruct(numpy.matrixlib.defmatrix.matrix, ...).
    let p = b"cnumpy.core.multiarray\n_reconstruct\n(cnumpy.matrixlib.defmatrix\nmatrix\n(K\x00tC\x01btR.";
    let what = unsupported(loads(p));
    assert!(what.contains("numpy.matrixlib.defmatrix.matrix"), "{what}");
    let opaque = ReadOptions::default().opaque_objects(true);
    let v = ndnpy::pickle::loads_with(p, &opaque).unwrap();
    assert!(matches!(v, PyValue::Opaque(_)), "{v:?}");
}

#[test]
fn dotted_names_round_trip_as_names() {
    // Protocol 4 spells an inner class with a dotted STACK_GLOBAL name; the
    // writer (protocol 3) spells it getattr(module.Outer, 'Inner'), which
    // reads back as the same name.
    let p = b"\x80\x04\x8c\x0bcollections\x8c\x14OrderedDict.fromkeys\x93.";
    let v = loads(p).unwrap();
    assert_eq!(
        v,
        PyValue::Global {
            module: "collections".into(),
            name: "OrderedDict.fromkeys".into()
        }
    );
    let bytes = ndnpy::pickle::dumps(&v).unwrap();
    assert!(!bytes.windows(20).any(|w| w == b"OrderedDict.fromkeys"));
    assert_eq!(loads(&bytes).unwrap(), v);
    // Called, it is refused by its whole name.
    let p = b"\x80\x04\x8c\x0bcollections\x8c\x14OrderedDict.fromkeys\x93)R.";
    assert!(unsupported(loads(p)).contains("OrderedDict.fromkeys"));
}

#[test]
fn time_zone_offsets_of_a_day_or_more_are_refused() {
    // datetime.timezone(timedelta(days=1)): Python refuses it too.
    let p = b"cdatetime\ntimezone\n(cdatetime\ntimedelta\n(K\x01K\x00K\x00tRtR.";
    assert!(malformed(loads(p)).contains("24 hours"));
}

#[test]
fn malformed_stringdtype_and_pandas_calls_say_what_is_wrong() {
    let sdt = |shape: &str, items: &str| {
        format!(
            "\u{80}\u{2}cnumpy._core.multiarray\n_reconstruct\ncnumpy\nndarray\nK\u{0}\u{85}C\u{1}b\u{87}R(K\u{1}{shape}cnumpy._core._internal\n_convert_to_stringdtype_kwargs\nK\u{1}\u{85}R\u{89}]({items}etb."
        )
        .chars()
        .map(|c| c as u8)
        .collect::<Vec<u8>>()
    };
    // A non-str element needs an na_object to stand for.
    let r = malformed(loads(&sdt("K\u{1}\u{85}", "K\u{5}")));
    assert!(
        r.contains("element 0 of a StringDType array without na_object is a int"),
        "{r}"
    );
    // Fewer items than the shape needs.
    let r = malformed(loads(&sdt("K\u{2}\u{85}", "X\u{1}\u{0}\u{0}\u{0}a")));
    assert!(r.contains("has 1 items, its shape [2] needs 2"), "{r}");
    // pandas: an unknown resolution, a wrong number of arguments, a value
    // that is not an int.
    let ts = b"cpandas._libs.tslibs.timestamps\n_unpickle_timestamp\n(K\x05NNK\x03tR.";
    assert!(malformed(loads(ts)).contains("unknown pandas resolution 3"));
    let ts = b"cpandas._libs.tslibs.timestamps\n_unpickle_timestamp\nK\x05\x85R.";
    assert!(malformed(loads(ts)).contains("three or four arguments"));
    let td = b"cpandas._libs.tslibs.timedeltas\n_timedelta_unpickle\nX\x01\x00\x00\x00xK\x09\x86R.";
    assert!(malformed(loads(td)).contains("is a str, not an int"));
    // Time zones: a key that is not a str, an offset that is not a timedelta.
    assert!(malformed(loads(b"czoneinfo\nZoneInfo\nK\x01\x85R.")).contains("key is not a str"));
    assert!(malformed(loads(b"cdatetime\ntimezone\nK\x01\x85R.")).contains("not a timedelta"));
}
