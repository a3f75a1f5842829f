//! Records (structured dtypes): the [`crate::record!`] macro that declares a
//! Rust struct as a layout element, and [`RecordArray`] for records whose
//! type is known only at run time.

use crate::array::any::AnyArray;
use crate::array::element::LayoutElement;
use crate::error::{Error, Result};
use crate::format::dtype::{ByteOrder, DType, Field, Scalar};
use crate::format::header::{Header, Version};
use crate::io::source::Source;
use crate::plan::Plan;
use ndarray::{Array, ArrayBase, Data, Dimension, IxDyn, ShapeBuilder};

/// Declares a `#[repr(C)]` struct whose values are NumPy records, and
/// implements [`crate::types::LayoutElement`] (so [`crate::Element`]) for it.
///
/// Every field must itself be a layout element: a numeric scalar, `bool`,
/// [`crate::types::FixedBytes`], [`crate::types::FixedUnicode`], [`crate::types::Datetime64`],
/// [`crate::types::Timedelta64`], an array `[T; N]` (a sub-array; `[[T; N]; M]` is
/// NumPy's shape `(M, N)`) or another record. The struct must derive `Clone`
/// and `Copy`.
///
/// Without a `repr` attribute the struct gets `#[repr(C)]`, whose layout is
/// NumPy's `align=True` one; `#[repr(C, packed)]` gives NumPy's default
/// (unaligned) layout. The dtype is computed from the struct's real
/// offsets, padding included, so it is exactly what `np.save` writes for
/// the equivalent dtype.
///
/// Reading by copy matches fields by name, so a file whose records order
/// their fields differently, use the other byte order, carry padding,
/// titles or extra fields reads too; views need the struct's exact layout.
///
/// ```
/// use ndarray::{array, Array1, ArrayView1};
/// use ndnpy::{ReadNpy, ViewNpy, WriteNpy};
///
/// ndnpy::record! {
///     #[derive(Debug, Clone, Copy, PartialEq)]
///     pub struct Particle { pub pos: [f32; 3], pub id: i64, pub alive: bool }
/// }
///
/// assert_eq!(
///     <Particle as ndnpy::Element>::dtype().descr(),
///     "[('pos', '<f4', (3,)), ('', '|V4'), ('id', '<i8'), ('alive', '|b1'), ('', '|V7')]"
/// );
/// let a = array![Particle { pos: [1.0, 2.0, 3.0], id: 7, alive: true }];
/// let bytes = a.to_npy_bytes()?;
/// assert_eq!(Array1::<Particle>::from_npy_bytes(&bytes)?, a);
/// # Ok::<(), ndnpy::Error>(())
/// ```
#[macro_export]
macro_rules! record {
    // Attributes are sorted one at a time: a `repr` is kept aside.
    (@attrs [$($attrs:tt)*] [$($repr:tt)*] #[repr($($r:tt)*)] $($rest:tt)*) => {
        $crate::record!(@attrs [$($attrs)*] [#[repr($($r)*)]] $($rest)*);
    };
    (@attrs [$($attrs:tt)*] [$($repr:tt)*] #[$($a:tt)*] $($rest:tt)*) => {
        $crate::record!(@attrs [$($attrs)* #[$($a)*]] [$($repr)*] $($rest)*);
    };
    (@attrs [$($attrs:tt)*] [] $($rest:tt)*) => {
        $crate::record!(@emit [$($attrs)*] [#[repr(C)]] $($rest)*);
    };
    (@attrs [$($attrs:tt)*] [$($repr:tt)+] $($rest:tt)*) => {
        $crate::record!(@emit [$($attrs)*] [$($repr)+] $($rest)*);
    };
    (@emit [$($attrs:tt)*] [$($repr:tt)*]
        $vis:vis struct $name:ident {
            $( $(#[$fattr:meta])* $fvis:vis $field:ident : $fty:ty ),* $(,)?
        }
    ) => {
        $($attrs)*
        $($repr)*
        $vis struct $name {
            $( $(#[$fattr])* $fvis $field : $fty ),*
        }

        // SAFETY: the dtype is built from the struct's real size and field
        // offsets (`size_of`, `offset_of!`), every field is a layout element
        // whose own dtype describes it, and every byte outside the fields
        // becomes a padding entry; the `LayoutElement: Copy` bound rules out
        // interior mutability and drop glue.
        unsafe impl $crate::__macro::LayoutElement for $name {
            fn layout_dtype() -> $crate::__macro::DType {
                $crate::__macro::__record_dtype(
                    ::core::mem::size_of::<$name>(),
                    ::std::vec![$((
                        ::core::stringify!($field),
                        ::core::mem::offset_of!($name, $field),
                        <$fty as $crate::__macro::LayoutElement>::layout_dtype(),
                    )),*],
                )
            }
        }
    };
    ($($body:tt)*) => {
        $crate::record!(@attrs [] [] $($body)*);
    };
}

/// Builds a record dtype from `(name, offset, dtype)` fields and the
/// struct's size, with `('', '|Vn')` entries for the gaps. Used by
/// [`record!`].
#[doc(hidden)]
pub fn __record_dtype(size: usize, mut fields: Vec<(&str, usize, DType)>) -> DType {
    fields.sort_by_key(|f| f.1);
    let mut out = Vec::with_capacity(fields.len() * 2 + 1);
    let mut at = 0;
    for (name, offset, dtype) in fields {
        if offset > at {
            out.push(Field::padding(offset - at));
        }
        at = offset + dtype.itemsize().unwrap_or(0);
        out.push(Field {
            name: name.to_owned(),
            title: None,
            dtype,
        });
    }
    if size > at {
        out.push(Field::padding(size - at));
    }
    DType::Record(out)
}

/// `dtype` with every byte order made native.
pub(crate) fn to_native(dtype: &DType) -> DType {
    match dtype {
        DType::Scalar(s) => DType::Scalar(Scalar {
            order: if s.order == ByteOrder::NotApplicable {
                s.order
            } else {
                ByteOrder::NATIVE
            },
            ..s.clone()
        }),
        DType::Record(fields) => DType::Record(
            fields
                .iter()
                .map(|f| Field {
                    dtype: to_native(&f.dtype),
                    ..f.clone()
                })
                .collect(),
        ),
        DType::SubArray(inner, shape) => DType::SubArray(Box::new(to_native(inner)), shape.clone()),
    }
}

/// Owned records of any record dtype: native-order bytes in C order, with
/// their dtype and shape.
///
/// [`crate::AnyArray::Record`] holds one; [`RecordArray::field`] takes a
/// column out as an [`AnyArray`], and [`RecordArray::to_array`] converts the
/// records to a type declared with [`crate::record!`].
///
/// ```
/// use ndnpy::{AnyArray, WriteNpy};
///
/// ndnpy::record! {
///     #[derive(Clone, Copy)]
///     struct Point { x: f64, y: i32 }
/// }
/// let bytes = ndarray::arr1(&[Point { x: 1.5, y: 2 }, Point { x: 3.0, y: 4 }]).to_npy_bytes()?;
/// let AnyArray::Record(records) = AnyArray::from_npy_bytes(&bytes)? else { panic!() };
/// assert_eq!(records.names(), ["x", "y"]);
/// assert_eq!(records.field("x")?.cast::<f64>()?, ndarray::arr1(&[1.5, 3.0]).into_dyn());
/// # Ok::<(), ndnpy::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct RecordArray {
    dtype: DType,
    shape: Vec<usize>,
    data: Vec<u8>,
    /// The values of the object (`O`) fields, by field name, C order (a
    /// record read from a pickle); their bytes in `data` are zeros.
    objects: Vec<(String, ndarray::ArrayD<crate::array::pyvalue::PyValue>)>,
}

impl RecordArray {
    /// Reads records (or void items) following `header`.
    pub(crate) fn read(header: &Header, source: &mut Source<'_>) -> Result<Self> {
        let native = to_native(&header.dtype);
        let plan = Plan::compile(&header.dtype, &native, "RecordArray")?;
        let len = header.data_len()?;
        let mut data = source.read_bytes(len)?;
        plan.fix_in_place(&mut data);
        let size = native.itemsize().unwrap_or(0);
        if header.fortran_order && header.shape.len() > 1 && size > 0 {
            data = fortran_to_c(&data, &header.shape, size);
        }
        Ok(RecordArray {
            dtype: native,
            shape: header.shape.clone(),
            data,
            objects: Vec::new(),
        })
    }

    /// Records of a layout element type.
    pub fn from_array<T: LayoutElement, S: Data<Elem = T>, D: Dimension>(
        array: &ArrayBase<S, D>,
    ) -> Self {
        let standard = array.as_standard_layout();
        let mut data = Vec::new();
        crate::array::encode::write_layout(
            standard.as_slice().expect("standard layout"),
            &mut data,
        )
        .expect("writing to memory cannot fail");
        RecordArray {
            dtype: T::layout_dtype(),
            shape: array.shape().to_vec(),
            data,
            objects: Vec::new(),
        }
    }

    /// Records whose object fields' values are `objects` (by field name),
    /// the other fields' native-order bytes `data`.
    pub(crate) fn with_objects(
        dtype: DType,
        shape: Vec<usize>,
        data: Vec<u8>,
        objects: Vec<(String, ndarray::ArrayD<crate::array::pyvalue::PyValue>)>,
    ) -> Self {
        RecordArray {
            dtype,
            shape,
            data,
            objects,
        }
    }

    /// Whether some field holds Python objects (a record array read from a
    /// pickled `.npy` file, such as `np.save` writes for
    /// `dtype=[('i', '<i4'), ('o', 'O')]`).
    pub fn has_objects(&self) -> bool {
        !self.objects.is_empty()
    }

    /// The values of the fields that hold objects, for costing them.
    pub(crate) fn object_columns(
        &self,
    ) -> impl Iterator<Item = &ndarray::ArrayD<crate::array::pyvalue::PyValue>> {
        self.objects.iter().map(|(_, column)| column)
    }

    /// The records' dtype (native byte order).
    pub fn dtype(&self) -> &DType {
        &self.dtype
    }

    /// The shape.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The records' bytes, C order, native byte order (the bytes of an
    /// object field are zeros: its values are in [`RecordArray::field`]).
    pub fn as_bytes(&self) -> &[u8] {
        &self.data
    }

    /// The names of the fields, in dtype order (padding entries left out).
    pub fn names(&self) -> Vec<&str> {
        match &self.dtype {
            DType::Record(fields) => fields
                .iter()
                .filter(|f| !f.name.is_empty())
                .map(|f| f.name.as_str())
                .collect(),
            _ => Vec::new(),
        }
    }

    /// A copy of field `name` (or of the field with that title) for every
    /// record. A sub-array field adds its dimensions after the records'; a
    /// nested record field is an [`AnyArray::Record`]; an object (`O`) field
    /// is an [`AnyArray::Object`].
    ///
    /// ```
    /// use ndnpy::{pickle::PyValue, AnyArray};
    ///
    /// // np.save("r.npy", np.array([(1, "a"), (2, None)], dtype=[("i", "<i4"), ("o", "O")]))
    /// let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/pickle/record_with_object_p3.npy")).unwrap();
    /// let AnyArray::Record(r) = AnyArray::from_npy_bytes(&bytes)? else { panic!() };
    /// assert_eq!(r.names(), ["a", "b", "c"]);
    /// assert_eq!(r.field("a")?.cast::<i64>()?.into_raw_vec_and_offset().0, [1, 2]);
    /// let AnyArray::Object(b) = r.field("b")? else { panic!() };
    /// assert_eq!(b.into_raw_vec_and_offset().0, [PyValue::Str("x".into()), PyValue::None]);
    /// # Ok::<(), ndnpy::Error>(())
    /// ```
    pub fn field(&self, name: &str) -> Result<AnyArray> {
        let DType::Record(fields) = &self.dtype else {
            return Err(self.no_field(name));
        };
        let mut offset = 0;
        let mut found = None;
        for f in fields {
            let size = f.dtype.itemsize().unwrap_or(0);
            if !f.name.is_empty() && (f.name == name || f.title.as_deref() == Some(name)) {
                found = Some((offset, size, &f.dtype, f.name.as_str()));
                break;
            }
            offset += size;
        }
        let (offset, size, dtype, name) = found.ok_or_else(|| self.no_field(name))?;
        if dtype.has_object() {
            return match self.objects.iter().find(|(n, _)| n == name) {
                Some((_, column)) => Ok(AnyArray::Object(column.clone())),
                None => Err(Error::UnsupportedDType {
                    dtype: dtype.to_string(),
                    reason: format!("field {name:?} holds objects that were not read"),
                }),
            };
        }
        let itemsize = self.dtype.itemsize().unwrap_or(0);
        let (dtype, shape) = match dtype {
            DType::SubArray(inner, sub) => {
                let mut shape = self.shape.clone();
                shape.extend_from_slice(sub);
                ((**inner).clone(), shape)
            }
            other => (other.clone(), self.shape.clone()),
        };
        let header = Header {
            dtype,
            shape,
            fortran_order: false,
            version: Version::V1,
        };
        // The column is gathered straight into the new array's buffer.
        AnyArray::read_data(
            &header,
            &mut Source::Gather {
                records: &self.data,
                itemsize,
                offset,
                size,
                pos: 0,
            },
        )
    }

    fn no_field(&self, name: &str) -> Error {
        Error::DTypeMismatch {
            expected: format!(
                "a record with a field `{name}` (the fields are {:?})",
                self.names()
            ),
            found: self.dtype.to_string(),
        }
    }

    /// Number of records.
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// Whether there are no records.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The records converted to `T` (fields matched by name, as when
    /// reading a file).
    pub fn to_array<T: LayoutElement, D: Dimension>(&self) -> Result<Array<T, D>> {
        crate::array::decode::read_array(&self.header(), &mut Source::slice(&self.data))
    }

    pub(crate) fn header(&self) -> Header {
        Header {
            dtype: self.dtype.clone(),
            shape: self.shape.clone(),
            fortran_order: false,
            version: Version::V1,
        }
    }
}

/// Reorders Fortran-order items into C order.
fn fortran_to_c(data: &[u8], shape: &[usize], size: usize) -> Vec<u8> {
    // No items, nothing to move (and a zero dimension makes the strides
    // below zero, which `from_shape` rejects).
    if shape.contains(&0) || size == 0 {
        return Vec::new();
    }
    let mut dims = shape.to_vec();
    dims.push(size);
    let mut strides = Vec::with_capacity(dims.len());
    let mut step = size;
    for &d in shape {
        strides.push(step);
        step *= d;
    }
    strides.push(1);
    let view = ndarray::ArrayView::from_shape(IxDyn(&dims).strides(IxDyn(&strides)), data)
        .expect("the data holds every item");
    view.as_standard_layout().iter().copied().collect()
}
