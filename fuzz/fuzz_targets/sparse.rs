//! scipy.sparse archives built from a fuzzed recipe (a format, a shape,
//! index arrays that may be out of range, negative, decreasing or of the
//! wrong length, data of any shape, indices of several integer dtypes):
//! `NpzReader::sparse_info` and `read_sparse` never panic, and what reads
//! is consistent: its shape is the archive's, every stored index lies
//! inside it, and a COO recipe reads exactly when the model (scipy's
//! rules: equal lengths, indices in range) says it should.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ndnpy::sparse::Sparse;
use ndnpy::{AnyArray, NpzReader, NpzWriter};
use std::io::Cursor;

const FORMATS: [&[u8]; 6] = [b"csr", b"csc", b"bsr", b"coo", b"dia", b"xyz"];

struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn byte(&mut self) -> u8 {
        let Some((&b, rest)) = self.0.split_first() else {
            return 0;
        };
        self.0 = rest;
        b
    }

    /// Small signed values, mostly in range for the small shapes.
    fn list(&mut self) -> Vec<i64> {
        let n = (self.byte() % 12) as usize;
        (0..n).map(|_| self.byte() as i8 as i64 % 9).collect()
    }
}

fn d<T>(v: Vec<T>) -> ndarray::ArrayD<T> {
    ndarray::Array1::from(v).into_dyn()
}

fn ints(values: &[i64], kind: u8) -> AnyArray {
    match kind % 3 {
        0 => AnyArray::I32(d(values.iter().map(|&v| v as i32).collect())),
        1 => AnyArray::I64(d(values.to_vec())),
        _ => AnyArray::U8(d(values.iter().map(|&v| v as u8).collect())),
    }
}

fuzz_target!(|data: &[u8]| {
    let mut b = Bytes(data);
    let format = FORMATS[(b.byte() % 6) as usize];
    let (rows, cols) = ((b.byte() % 7) as i64, (b.byte() % 7) as i64);
    let kind = b.byte();
    let (first, second) = (b.list(), b.list());
    let dims = b.byte();
    let n = (b.byte() % 12) as usize;
    let values: Vec<f64> = (0..n).map(|i| i as f64 + 1.0).collect();
    let data = match dims % 3 {
        0 => ndarray::Array1::from(values.clone()).into_dyn(),
        1 if n > 0 => ndarray::Array::from_shape_vec(vec![n, 1, 1], values.clone()).unwrap().into_dyn(),
        _ => ndarray::Array::from_shape_vec(vec![1, n], values.clone()).unwrap().into_dyn(),
    };
    let mut w = NpzWriter::new(Cursor::new(Vec::new()));
    let (a, bname) = match format {
        b"coo" => ("row", "col"),
        b"dia" => ("offsets", "unused"),
        _ => ("indices", "indptr"),
    };
    w.add_any(a, &ints(&first, kind)).unwrap();
    w.add_any(bname, &ints(&second, kind)).unwrap();
    w.add_any("format", &AnyArray::Bytes(ndarray::arr0(format.to_vec()).into_dyn())).unwrap();
    w.add("shape", &ndarray::arr1(&[rows, cols])).unwrap();
    w.add("data", &data).unwrap();
    let bytes = w.finish_into_inner().unwrap().into_inner();
    let mut z = NpzReader::new(Cursor::new(bytes)).unwrap();
    let info = z.sparse_info();
    let read = z.read_sparse::<f64>();
    let Ok(m) = read else {
        // The model: a plain COO recipe with equal lengths and indices in
        // range must read.
        if format == b"coo" && dims % 3 == 0 && kind % 3 != 2 {
            let ok = first.len() == n
                && second.len() == n
                && first.iter().all(|&r| (0..rows).contains(&r))
                && second.iter().all(|&c| (0..cols).contains(&c));
            assert!(!ok, "a valid COO archive was refused");
        }
        return;
    };
    let info = info.expect("readable means describable").expect("a sparse archive");
    assert_eq!(info.shape, [rows as usize, cols as usize]);
    assert_eq!(m.shape(), (rows as usize, cols as usize));
    let inside = |r: usize, c: usize| r < rows as usize && c < cols as usize;
    match &m {
        Sparse::Csr(x) | Sparse::Csc(x) => assert!(x.iter().all(|(_, (r, c))| inside(r, c))),
        Sparse::Coo(x) => assert!(x.triplet_iter().all(|(_, (r, c))| inside(r, c))),
    }
    let dense = m.to_dense();
    assert_eq!(dense.dim(), (rows as usize, cols as usize));
});
