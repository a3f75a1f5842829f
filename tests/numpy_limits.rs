//! NumPy's limits on read and write (issue 8 §5): at most 64 dimensions,
//! sizes NumPy can create, header nesting as deep as NumPy parses, error
//! messages that quote bounded text, and a cap on stream reads.

mod common;

use common::{npy_v1, npy_v2};
use ndarray::{ArrayD, IxDyn};
use ndnpy::{dtype::Header, AnyArray, Error, ReadNpy, ReadOptions, WriteNpy};
use std::io::{self, Read};

fn shape_text(shape: &[u64]) -> String {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    if dims.len() == 1 {
        format!("({},)", dims[0])
    } else {
        format!("({})", dims.join(", "))
    }
}

fn header_text(descr: &str, shape: &[u64]) -> String {
    format!(
        "{{'descr': {descr}, 'fortran_order': False, 'shape': {}, }}",
        shape_text(shape)
    )
}

#[test]
fn more_than_64_dimensions_are_refused_unless_asked() {
    let relaxed = ReadOptions::default().allow_beyond_numpy_limits(true);
    let ok = npy_v1(&header_text("'|u1'", &[1; 64]), &[7]);
    assert_eq!(AnyArray::from_npy_bytes(&ok).unwrap().shape().len(), 64);
    let over = npy_v1(&header_text("'|u1'", &[1; 65]), &[7]);
    let err = AnyArray::from_npy_bytes(&over).unwrap_err();
    assert!(
        matches!(err, Error::Header(ndnpy::error::HeaderError::BadShape(_))),
        "{err:?}"
    );
    assert!(err.to_string().contains("at most 64"), "{err}");
    let a = AnyArray::from_npy_bytes_with(&over, &relaxed).unwrap();
    assert_eq!(a.shape().len(), 65);

    // Writing: NumPy could not load it, so it is refused.
    let a = ArrayD::<u8>::zeros(IxDyn(&[1; 65]));
    assert!(matches!(
        a.to_npy_bytes(),
        Err(Error::Header(ndnpy::error::HeaderError::BadShape(_)))
    ));
    let a = ArrayD::<u8>::zeros(IxDyn(&[1; 64]));
    assert!(a.to_npy_bytes().is_ok());
}

#[test]
fn sizes_numpy_cannot_create_are_refused_unless_asked() {
    // NumPy: itemsize × the product of the non-zero dimensions must fit in
    // isize (checked with np.empty: (0, 2**59) f8 works, (0, 2**60) f8 and
    // (2**40, 2**30, 0) u1 are "too big", (0, 2**62) u1 works).
    let relaxed = ReadOptions::default().allow_beyond_numpy_limits(true);
    let cases: &[(&str, &[u64], bool)] = &[
        ("'<f8'", &[0, 1 << 62], false),
        ("'<f8'", &[0, 1 << 60], false),
        ("'<f8'", &[0, 1 << 59], true),
        ("'|u1'", &[0, 1 << 62], true),
        ("'|u1'", &[1 << 40, 1 << 30, 0], false),
        ("'<f8'", &[(1 << 63) - 1, 0], false),
    ];
    for &(descr, shape, numpy_ok) in cases {
        let bytes = npy_v1(&header_text(descr, shape), &[]);
        let got = AnyArray::from_npy_bytes(&bytes);
        assert_eq!(got.is_ok(), numpy_ok, "{descr} {shape:?}: {got:?}");
        if !numpy_ok {
            assert!(
                matches!(
                    got,
                    Err(Error::Limit(
                        ndnpy::error::LimitError::LengthOverflow { .. }
                    ))
                ),
                "{got:?}"
            );
            match AnyArray::from_npy_bytes_with(&bytes, &relaxed) {
                Ok(a) => {
                    assert_eq!(
                        a.shape().iter().map(|&d| d as u64).collect::<Vec<_>>(),
                        shape
                    )
                }
                // ndarray cannot hold a shape whose non-zero dimensions
                // multiply past isize::MAX elements, even when empty.
                Err(Error::Limit(ndnpy::error::LimitError::LengthOverflow { .. })) => {
                    assert!(
                        shape
                            .iter()
                            .filter(|&&d| d != 0)
                            .map(|&d| d as u128)
                            .product::<u128>()
                            > 1 << 62
                    )
                }
                Err(e) => panic!("{descr} {shape:?}: {e:?}"),
            }
        }
    }
    // The writer refuses what NumPy would refuse to load.
    let a = ArrayD::<f64>::zeros(IxDyn(&[0, 1 << 62]));
    let err = a.to_npy_bytes().unwrap_err();
    assert!(
        matches!(
            err,
            Error::Limit(ndnpy::error::LimitError::LengthOverflow { .. })
        ),
        "{err:?}"
    );
    let a = ArrayD::<f64>::zeros(IxDyn(&[0, 1 << 59]));
    assert!(a.to_npy_bytes().is_ok());
}

fn nested_descr(depth: usize) -> String {
    format!("{}'<i4'{}", "[('f', ".repeat(depth), ")]".repeat(depth))
}

#[test]
fn records_nest_as_deep_as_numpy_loads() {
    // np.load reads a record dtype nested 99 deep and fails at 100 (Python's
    // tokenizer allows 200 levels of brackets); see src/header/literal.rs.
    let options = ReadOptions::default().max_header_len(1 << 20);
    let ok = npy_v1(&header_text(&nested_descr(99), &[2]), &[0; 8]);
    let header = Header::read_from_with(&ok[..], &options).unwrap();
    assert_eq!(header.dtype.itemsize(), Some(4));
    let deep = npy_v1(&header_text(&nested_descr(100), &[2]), &[0; 8]);
    let err = Header::read_from_with(&deep[..], &options).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Limit(ndnpy::error::LimitError::NestingTooDeep { max: 200 })
        ),
        "{err:?}"
    );
    // The 40-deep case of the issue.
    let forty = npy_v1(&header_text(&nested_descr(40), &[2]), &[0; 8]);
    Header::read_from_with(&forty[..], &options).unwrap();
}

#[test]
fn error_messages_quote_bounded_text() {
    // A record of 100 000 object fields: its descr is ~2 MB.
    let fields: Vec<String> = (0..100_000).map(|i| format!("('f{i}', '|O')")).collect();
    let descr = format!("[{}]", fields.join(", "));
    let bytes = npy_v2(&header_text(&descr, &[1]), &[0; 8]);
    let options = ReadOptions::default().max_header_len(1 << 24);
    let err = AnyArray::from_npy_bytes_with(&bytes, &options).unwrap_err();
    let message = err.to_string();
    assert!(descr.len() > 1_000_000);
    assert!(message.len() < 2_000, "{} bytes: {err:?}", message.len());
    // A long member name in an archive error, likewise.
    let err = Error::MemberNotFound {
        name: "x".repeat(1 << 20),
    };
    assert!(err.to_string().len() < 1_000);
    assert!(err.to_string().contains("1048576 bytes in all"));
}

/// Endless data after a header.
struct Endless {
    header: Vec<u8>,
    pos: usize,
    served: u64,
}

impl Read for Endless {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.pos < self.header.len() {
            let n = buf.len().min(self.header.len() - self.pos);
            buf[..n].copy_from_slice(&self.header[self.pos..self.pos + n]);
            self.pos += n;
            return Ok(n);
        }
        buf.fill(1);
        self.served += buf.len() as u64;
        Ok(buf.len())
    }
}

#[test]
fn streams_stop_at_the_limit() {
    // A header claiming 10^15 bytes, then endless data: refused before any
    // data is read.
    let claim = npy_v1(&header_text("'|u1'", &[1_000_000_000_000_000]), &[]);
    let mut endless = Endless {
        header: claim,
        pos: 0,
        served: 0,
    };
    let err = ArrayD::<u8>::read_npy_from(&mut endless).unwrap_err();
    assert!(
        matches!(err, Error::Limit(ndnpy::error::LimitError::StreamLimit { claimed: 1_000_000_000_000_000, max }) if max == ndnpy::npy::DEFAULT_MAX_STREAM_LEN),
        "{err:?}"
    );
    assert_eq!(endless.served, 0);
    let err = AnyArray::read_npy_from(&mut Endless {
        header: npy_v1(&header_text("'<f8'", &[1 << 40]), &[]),
        pos: 0,
        served: 0,
    })
    .unwrap_err();
    assert!(
        matches!(
            err,
            Error::Limit(ndnpy::error::LimitError::StreamLimit { .. })
        ),
        "{err:?}"
    );

    // Under a smaller limit, a claim above it fails and one below reads.
    let options = ReadOptions::default().max_stream_len(1 << 20);
    let two_mib = npy_v1(&header_text("'|u1'", &[2 << 20]), &vec![5; 2 << 20]);
    let err = ArrayD::<u8>::read_npy_from_with(&two_mib[..], &options).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Limit(ndnpy::error::LimitError::StreamLimit { .. })
        ),
        "{err:?}"
    );
    let one_mib = npy_v1(&header_text("'|u1'", &[1 << 20]), &vec![5; 1 << 20]);
    let a = ArrayD::<u8>::read_npy_from_with(&one_mib[..], &options).unwrap();
    assert_eq!(a.len(), 1 << 20);
    // Files and byte slices have a known length: no stream limit.
    let a = ArrayD::<u8>::from_npy_bytes_with(&two_mib, &options).unwrap();
    assert_eq!(a.len(), 2 << 20);
}

#[cfg(unix)]
#[test]
fn a_fifo_fed_endless_data_ends_with_an_error() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("endless.npy");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(status.success());
    let writer_path = fifo.clone();
    let writer = std::thread::spawn(move || {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .open(&writer_path)
            .unwrap();
        let header = npy_v1(&header_text("'|u1'", &[1_000_000_000_000_000]), &[]);
        f.write_all(&header).unwrap();
        let block = vec![1u8; 1 << 16];
        // Ends when the reader closes the FIFO (EPIPE), or after 1 GiB.
        for _ in 0..(1 << 14) {
            if f.write_all(&block).is_err() {
                break;
            }
        }
    });
    let err = ArrayD::<u8>::read_npy(&fifo).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Limit(ndnpy::error::LimitError::StreamLimit { .. })
        ),
        "{err:?}"
    );
    writer.join().unwrap();
}

/// Zero-size items: NumPy loads `np.empty((0, 2**62, 2**62, 2**62), 'V0')`,
/// and the size rule's product (which ignores zero dimensions but not the
/// others) must not overflow on the way.
#[test]
fn zero_size_items_with_huge_dimensions_read_as_numpy_does() {
    let big = 1u64 << 62;
    let npy = npy_v1(&header_text("'|V0'", &[0, big, big, big]), b"");
    let any = AnyArray::from_npy_bytes(&npy).unwrap();
    assert_eq!(any.shape(), &[0, 1 << 62, 1 << 62, 1 << 62]);
}

/// Rows of zero size grow the growth axis without growing the file: the
/// streaming writers still refuse a length NumPy could not load.
#[test]
fn streaming_writers_keep_to_numpy_limits() {
    use ndnpy::{NpyWriter, NpzWriter, Order};
    let dir = tempfile::tempdir().unwrap();
    let rows = ndarray::Array2::<f64>::zeros((1 << 62, 0));
    let mut w = NpyWriter::<f64>::create(dir.path().join("a.npy"), &[0], Order::C).unwrap();
    let err = w.write(&rows).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Limit(ndnpy::error::LimitError::LengthOverflow { .. })
        ),
        "{err:?}"
    );

    let mut npz = NpzWriter::new(std::io::Cursor::new(Vec::new()));
    let mut m = npz.add_streaming::<f64>("a", &[0], Order::C).unwrap();
    let err = m.write(&rows).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Limit(ndnpy::error::LimitError::LengthOverflow { .. })
        ),
        "{err:?}"
    );
}
