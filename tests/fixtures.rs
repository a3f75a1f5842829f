//! Every file in `fixtures/` (written by NumPy with `scripts/gen_fixtures.py`)
//! reads as its JSON sidecar says, or fails with the error variant it names.

use ndarray::{ArrayD, ArrayViewD};
use ndnpy::{dtype::Header, AnyArray, Error, NpyMmap, ReadNpy, ReadOptions, ViewNpy, WriteNpy};
use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};

fn fixtures(group: &str, ext: &str) -> Vec<(PathBuf, Value)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(group);
    let mut out: Vec<(PathBuf, Value)> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .map(|p| {
            let sidecar = p.with_extension("json");
            let text = fs::read_to_string(&sidecar)
                .unwrap_or_else(|e| panic!("{}: {e}", sidecar.display()));
            (p, serde_json::from_str(&text).unwrap())
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(!out.is_empty(), "no fixtures in {}", dir.display());
    out
}

/// The name of an error's variant, as the sidecars spell it.
fn variant(e: &Error) -> String {
    let debug = format!("{e:?}");
    debug
        .split(|c: char| !c.is_alphanumeric())
        .next()
        .unwrap()
        .to_owned()
}

/// Conversion of a sidecar value to an element, compared bit for bit.
trait Expected: Sized + Copy + std::fmt::Debug {
    fn from_json(v: &Value) -> Self;
    fn same(self, other: Self) -> bool;
}

macro_rules! int_expected {
    ($($t:ty),*) => {$(
        impl Expected for $t {
            fn from_json(v: &Value) -> Self {
                if let Some(x) = v.as_i64() {
                    <$t>::try_from(x).unwrap()
                } else {
                    <$t>::try_from(v.as_u64().unwrap()).unwrap()
                }
            }
            fn same(self, other: Self) -> bool {
                self == other
            }
        }
    )*};
}
int_expected!(i8, i16, i32, i64, u8, u16, u32, u64);

impl Expected for bool {
    fn from_json(v: &Value) -> Self {
        v.as_bool().unwrap()
    }
    fn same(self, other: Self) -> bool {
        self == other
    }
}

fn float_json(v: &Value) -> f64 {
    match v {
        Value::String(s) if s == "nan" => f64::NAN,
        Value::String(s) if s == "inf" => f64::INFINITY,
        Value::String(s) if s == "-inf" => f64::NEG_INFINITY,
        _ => v.as_f64().unwrap(),
    }
}

impl Expected for f64 {
    fn from_json(v: &Value) -> Self {
        float_json(v)
    }
    fn same(self, other: Self) -> bool {
        (self.is_nan() && other.is_nan()) || self.to_bits() == other.to_bits()
    }
}

impl Expected for f32 {
    fn from_json(v: &Value) -> Self {
        float_json(v) as f32
    }
    fn same(self, other: Self) -> bool {
        (self.is_nan() && other.is_nan()) || self.to_bits() == other.to_bits()
    }
}

#[cfg(feature = "half")]
impl Expected for half::f16 {
    fn from_json(v: &Value) -> Self {
        half::f16::from_f64(float_json(v))
    }
    fn same(self, other: Self) -> bool {
        (self.is_nan() && other.is_nan()) || self.to_bits() == other.to_bits()
    }
}

impl<T: Expected> Expected for num_complex::Complex<T> {
    fn from_json(v: &Value) -> Self {
        let pair = v.as_array().unwrap();
        num_complex::Complex::new(T::from_json(&pair[0]), T::from_json(&pair[1]))
    }
    fn same(self, other: Self) -> bool {
        self.re.same(other.re) && self.im.same(other.im)
    }
}

fn shape_of(v: &Value) -> Vec<usize> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap() as usize)
        .collect()
}

fn check_values<T: Expected>(path: &Path, got: impl IntoIterator<Item = T>, meta: &Value) {
    let expected: Vec<T> = meta["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(T::from_json)
        .collect();
    let got: Vec<T> = got.into_iter().collect();
    assert_eq!(
        got.len(),
        expected.len(),
        "{}: element count",
        path.display()
    );
    for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
        assert!(
            g.same(*e),
            "{}: element {i}: got {g:?}, expected {e:?}",
            path.display()
        );
    }
}

/// Reads one valid fixture as `T` in every way the crate offers.
fn check_valid<T>(path: &Path, meta: &Value)
where
    T: ndnpy::types::LayoutElement + Expected,
{
    let bytes = fs::read(path).unwrap();
    let shape = shape_of(&meta["shape"]);
    let fortran = meta["fortran_order"].as_bool().unwrap();

    let from_path =
        ArrayD::<T>::read_npy(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let from_bytes = ArrayD::<T>::from_npy_bytes(&bytes).unwrap();
    let from_reader = ArrayD::<T>::read_npy_from(&bytes[..]).unwrap();
    for a in [&from_path, &from_bytes, &from_reader] {
        assert_eq!(a.shape(), &shape[..], "{}", path.display());
        check_values(path, a.iter().copied(), meta);
        if fortran && shape.iter().filter(|&&d| d > 1).count() > 1 {
            assert!(
                !a.is_standard_layout(),
                "{}: should be F layout",
                path.display()
            );
            assert!(
                a.t().is_standard_layout(),
                "{}: should be F layout",
                path.display()
            );
        }
    }

    let any = AnyArray::read_npy(path).unwrap();
    let typed = any.into_array::<T, ndarray::IxDyn>().unwrap();
    check_values(path, typed.iter().copied(), meta);

    let header = ndnpy::dtype::Header::open(path).unwrap();
    assert_eq!(header.shape, shape, "{}", path.display());
    assert_eq!(header.fortran_order, fortran, "{}", path.display());
    let version = meta["version"].as_array().unwrap();
    let (major, minor) = header.version.as_pair();
    assert_eq!(
        (major as u64, minor as u64),
        (version[0].as_u64().unwrap(), version[1].as_u64().unwrap())
    );

    if meta["np_save_identical"].as_bool().unwrap() {
        assert_eq!(
            from_path.to_npy_bytes().unwrap(),
            bytes,
            "{}: not what np.save wrote",
            path.display()
        );
        assert_eq!(
            header.dtype.descr(),
            meta["descr"].as_str().unwrap(),
            "{}",
            path.display()
        );
    }

    // Views need native byte order and valid bools.
    match ArrayViewD::<T>::view_npy(&bytes) {
        Ok(view) => {
            assert_eq!(view.shape(), &shape[..]);
            check_values(path, view.iter().copied(), meta);
        }
        Err(Error::View(ndnpy::error::ViewError::NonNativeByteOrder { .. })) => {
            assert!(
                header.dtype.to_string().starts_with('>'),
                "{}: only big-endian data may refuse a view",
                path.display()
            );
        }
        Err(Error::Data(ndnpy::error::DataError::InvalidBool { .. })) => {
            assert!(bytes[bytes.len() - from_path.len()..]
                .iter()
                .any(|&b| b > 1));
        }
        // Hand-made headers without padding leave the data unaligned.
        Err(Error::View(ndnpy::error::ViewError::Misaligned { align, address, .. })) => {
            assert_ne!(address % align, 0)
        }
        Err(e) => panic!("{}: view failed: {e}", path.display()),
    }
    // SAFETY: nothing else writes or truncates this file while it is mapped.
    match unsafe { NpyMmap::open(path) } {
        Ok(map) => match map.view::<T, ndarray::IxDyn>() {
            Ok(view) => check_values(path, view.iter().copied(), meta),
            Err(Error::View(ndnpy::error::ViewError::NonNativeByteOrder { .. }))
            | Err(Error::Data(ndnpy::error::DataError::InvalidBool { .. }))
            | Err(Error::View(ndnpy::error::ViewError::Misaligned { .. })) => {}
            Err(e) => panic!("{}: mapped view failed: {e}", path.display()),
        },
        Err(e) => panic!("{}: map failed: {e}", path.display()),
    }
}

#[test]
fn valid_fixtures_read_to_recorded_values() {
    let mut count = 0;
    for (path, meta) in fixtures("npy/valid", "npy") {
        match meta["element"].as_str().unwrap() {
            "bool" => check_valid::<bool>(&path, &meta),
            "i8" => check_valid::<i8>(&path, &meta),
            "i16" => check_valid::<i16>(&path, &meta),
            "i32" => check_valid::<i32>(&path, &meta),
            "i64" => check_valid::<i64>(&path, &meta),
            "u8" => check_valid::<u8>(&path, &meta),
            "u16" => check_valid::<u16>(&path, &meta),
            "u32" => check_valid::<u32>(&path, &meta),
            "u64" => check_valid::<u64>(&path, &meta),
            "f32" => check_valid::<f32>(&path, &meta),
            "f64" => check_valid::<f64>(&path, &meta),
            "c64" => check_valid::<num_complex::Complex<f32>>(&path, &meta),
            "c128" => check_valid::<num_complex::Complex<f64>>(&path, &meta),
            #[cfg(feature = "half")]
            "f16" => check_valid::<half::f16>(&path, &meta),
            #[cfg(not(feature = "half"))]
            "f16" => {
                let err = AnyArray::read_npy(&path).unwrap_err();
                assert!(matches!(err, Error::UnsupportedDType { .. }), "{err}");
            }
            other => panic!("{}: unknown element {other}", path.display()),
        }
        count += 1;
    }
    assert!(count >= 40, "only {count} valid fixtures");
}

#[test]
fn a_wrong_type_or_rank_names_both() {
    for (path, meta) in fixtures("npy/valid", "npy") {
        let element = meta["element"].as_str().unwrap();
        let shape = shape_of(&meta["shape"]);
        if element == "f16" && !cfg!(feature = "half") {
            // Without the feature no type can hold it: that error wins.
            let err = ArrayD::<f64>::read_npy(&path).unwrap_err();
            assert!(matches!(err, Error::UnsupportedDType { .. }), "{err}");
            continue;
        }
        if element != "f64" && element != "f32" {
            let err = ArrayD::<f64>::read_npy(&path).unwrap_err();
            assert!(
                matches!(err, Error::DTypeMismatch { .. }),
                "{}: {err}",
                path.display()
            );
            assert!(err.to_string().contains("f64"), "{err}");
        }
        if element == "f64" && shape.len() != 2 {
            let err = ndarray::Array2::<f64>::read_npy(&path).unwrap_err();
            assert!(
                matches!(err, Error::NdimMismatch { expected: 2, .. }),
                "{err}"
            );
        }
    }
}

#[test]
fn unsupported_dtypes_are_parsed_and_named() {
    for (path, meta) in fixtures("npy/unsupported", "npy") {
        let bytes = fs::read(&path).unwrap();
        let options = match meta["max_header_len"].as_u64() {
            Some(n) => {
                let err = Header::read_from(&bytes[..]).unwrap_err();
                assert!(
                    matches!(
                        err,
                        Error::Limit(ndnpy::error::LimitError::HeaderTooLarge { .. })
                    ),
                    "{err}"
                );
                ReadOptions::default().max_header_len(n as usize)
            }
            None => ReadOptions::default(),
        };
        let header = Header::read_from_with(&bytes[..], &options)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(
            header.dtype.descr(),
            meta["descr"].as_str().unwrap(),
            "{}",
            path.display()
        );
        assert_eq!(header.shape, shape_of(&meta["shape"]), "{}", path.display());
        let any = AnyArray::from_npy_bytes_with(&bytes, &options);
        if meta["descr"] == "'|O'" {
            // Object arrays are read by the pickle reader (tests/pickle.rs);
            // this one holds `[1, "two", None]`.
            match any {
                Ok(AnyArray::Object(a)) => assert_eq!(
                    a.iter().map(|v| v.to_string()).collect::<Vec<_>>(),
                    ["1", "'two'", "None"]
                ),
                other => panic!("{}: {other:?}", path.display()),
            }
        } else if header.dtype.to_string().contains("f16")
            || header.dtype.to_string().contains("c32")
        {
            // x86-64 long doubles, read exactly since round 3
            // (tests/wild.rs checks their values against NumPy).
            assert!(any.is_ok(), "{}: {any:?}", path.display());
        } else {
            let err = any.unwrap_err();
            assert!(
                matches!(err, Error::UnsupportedDType { .. }),
                "{}: {err}",
                path.display()
            );
        }
        // None of them reads as f64 (a long double does not silently
        // lose its precision).
        let err = ArrayD::<f64>::from_npy_bytes_with(&bytes, &options).unwrap_err();
        assert!(
            matches!(
                err,
                Error::UnsupportedDType { .. } | Error::DTypeMismatch { .. }
            ),
            "{}: {err}",
            path.display()
        );
        // What np.save wrote, we write back for the same header.
        if meta["np_save_identical"].as_bool().unwrap_or(false) {
            let ours = header.to_bytes().unwrap();
            assert_eq!(
                &bytes[..ours.len()],
                &ours[..],
                "{}: header differs from np.save",
                path.display()
            );
        }
    }
}

#[test]
fn invalid_fixtures_give_their_error() {
    for (path, meta) in fixtures("npy/invalid", "npy") {
        let mut accepted = vec![meta["error"].as_str().unwrap().to_owned()];
        if let Some(more) = meta["also_acceptable"].as_array() {
            accepted.extend(more.iter().map(|v| v.as_str().unwrap().to_owned()));
        }
        let options = match meta["max_header_len"].as_u64() {
            Some(n) => ReadOptions::default().max_header_len(n as usize),
            None => ReadOptions::default(),
        };
        let bytes = fs::read(&path).unwrap();
        let results: Vec<(&str, Error)> = vec![
            (
                "read_npy",
                AnyArray::read_npy_with(&path, &options).unwrap_err(),
            ),
            (
                "from_npy_bytes",
                AnyArray::from_npy_bytes_with(&bytes, &options).unwrap_err(),
            ),
            (
                "read_npy_from",
                AnyArray::read_npy_from_with(&bytes[..], &options).unwrap_err(),
            ),
            (
                "typed",
                ArrayD::<u8>::from_npy_bytes_with(&bytes, &options).unwrap_err(),
            ),
            (
                "mmap",
                // SAFETY: nothing else writes or truncates this file while it is mapped.
                unsafe { NpyMmap::open(&path) }.expect_err("mapping must fail"),
            ),
        ];
        for (how, err) in results {
            let name = variant(&err);
            // A typed read may refuse the dtype before it sees the data.
            if how == "typed" && name == "DTypeMismatch" {
                continue;
            }
            // A stream whose header claims more than ReadOptions'
            // max_stream_len is refused before its missing data is noticed.
            if how == "read_npy_from" && name == "StreamLimit" && accepted[0] == "TruncatedData" {
                continue;
            }
            assert!(
                accepted.contains(&name),
                "{} via {how}: got {name} ({err}), expected one of {accepted:?}",
                path.display()
            );
        }
        if !matches!(accepted[0].as_str(), "TruncatedData") {
            if let Err(err) = Header::read_from_with(&bytes[..], &options) {
                assert!(
                    accepted.contains(&variant(&err)),
                    "{} via Header: {err}",
                    path.display()
                );
            } else {
                panic!("{}: Header::read_from accepted it", path.display());
            }
        }
    }
}
