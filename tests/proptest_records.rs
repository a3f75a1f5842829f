//! Property tests over random record layouts: whatever the file's field
//! order, byte order, padding and extra fields, a fixed struct reads the
//! same values by copy, and the runtime-typed path agrees.

use ndarray::Array1;
use ndnpy::{
    dtype::ByteOrder, dtype::DType, dtype::Field, dtype::Header, dtype::Kind, dtype::Scalar,
    dtype::Version, AnyArray, ReadNpy,
};
use proptest::prelude::*;

ndnpy::record! {
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct Inner { c: u8, d: [i16; 2] }
}
ndnpy::record! {
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct Target { a: f64, b: i32, inner: Inner, e: bool }
}

/// One leaf of the file layout: how a field is stored.
#[derive(Debug, Clone)]
struct Layout {
    order: Vec<usize>,       // permutation of the top-level fields
    inner_order: Vec<usize>, // permutation of the inner fields
    big: Vec<bool>,          // byte order per scalar field (a, b, d)
    pads: Vec<usize>,        // padding after each top-level field
    extra: bool,             // an extra field the struct ignores
}

fn layouts() -> impl Strategy<Value = Layout> {
    (
        Just((0..4).collect::<Vec<usize>>()).prop_shuffle(),
        Just(vec![0usize, 1]).prop_shuffle(),
        proptest::collection::vec(any::<bool>(), 3),
        proptest::collection::vec(0usize..9, 5),
        any::<bool>(),
    )
        .prop_map(|(order, inner_order, big, pads, extra)| Layout {
            order,
            inner_order,
            big,
            pads,
            extra,
        })
}

fn scalar(kind: Kind, size: usize, big: bool) -> DType {
    DType::Scalar(Scalar {
        order: if size == 1 {
            ByteOrder::NotApplicable
        } else if big {
            ByteOrder::Big
        } else {
            ByteOrder::Little
        },
        kind,
        size,
        unit: None,
    })
}

fn field(name: &str, dtype: DType) -> Field {
    Field {
        name: name.to_owned(),
        title: None,
        dtype,
    }
}

/// The file's dtype and the bytes of `values` in it.
fn encode(layout: &Layout, values: &[Target]) -> (DType, Vec<u8>) {
    let put = |out: &mut Vec<u8>, bytes: &[u8], big: bool| {
        if big {
            out.extend(bytes.iter().rev());
        } else {
            out.extend_from_slice(bytes);
        }
    };
    let mut fields = Vec::new();
    let inner_fields: Vec<Field> = layout
        .inner_order
        .iter()
        .map(|&i| match i {
            0 => field("c", scalar(Kind::UInt, 1, false)),
            _ => field(
                "d",
                DType::SubArray(Box::new(scalar(Kind::Int, 2, layout.big[2])), vec![2]),
            ),
        })
        .collect();
    for (slot, &i) in layout.order.iter().enumerate() {
        fields.push(match i {
            0 => field("a", scalar(Kind::Float, 8, layout.big[0])),
            1 => field("b", scalar(Kind::Int, 4, layout.big[1])),
            2 => field("inner", DType::Record(inner_fields.clone())),
            _ => field("e", scalar(Kind::Bool, 1, false)),
        });
        if layout.pads[slot] > 0 {
            fields.push(field("", scalar(Kind::Void, layout.pads[slot], false)));
        }
    }
    if layout.extra {
        fields.push(field("zz", scalar(Kind::Float, 4, false)));
    }
    let mut data = Vec::new();
    for v in values {
        for (slot, &i) in layout.order.iter().enumerate() {
            match i {
                0 => put(&mut data, &v.a.to_le_bytes(), layout.big[0]),
                1 => put(&mut data, &v.b.to_le_bytes(), layout.big[1]),
                2 => {
                    for &j in &layout.inner_order {
                        if j == 0 {
                            data.push(v.inner.c);
                        } else {
                            for x in v.inner.d {
                                put(&mut data, &x.to_le_bytes(), layout.big[2]);
                            }
                        }
                    }
                }
                _ => data.push(if v.e { 0x55 } else { 0 }), // nonzero reads as true
            }
            data.extend(std::iter::repeat_n(0xAB, layout.pads[slot]));
        }
        if layout.extra {
            data.extend_from_slice(&1.5f32.to_le_bytes());
        }
    }
    (DType::Record(fields), data)
}

fn targets() -> impl Strategy<Value = Vec<Target>> {
    proptest::collection::vec(
        (
            any::<f64>().prop_filter("no NaN", |x| !x.is_nan()),
            any::<i32>(),
            any::<u8>(),
            any::<[i16; 2]>(),
            any::<bool>(),
        )
            .prop_map(|(a, b, c, d, e)| Target {
                a,
                b,
                inner: Inner { c, d },
                e,
            }),
        0..20,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_layout_reads_into_the_fixed_struct(layout in layouts(), values in targets()) {
        let (dtype, data) = encode(&layout, &values);
        let header = Header {
            dtype,
            shape: vec![values.len()],
            fortran_order: false,
            version: Version::V1,
        };
        let mut bytes = header.to_bytes().unwrap();
        bytes.extend_from_slice(&data);
        let read = Array1::<Target>::from_npy_bytes(&bytes).unwrap();
        prop_assert_eq!(read.to_vec(), values.clone());
        // The runtime-typed path sees the same columns.
        let AnyArray::Record(records) = AnyArray::from_npy_bytes(&bytes).unwrap() else {
            panic!("not a record array")
        };
        let a = records.field("a").unwrap().cast::<f64>().unwrap();
        prop_assert_eq!(a.iter().copied().collect::<Vec<_>>(), values.iter().map(|v| v.a).collect::<Vec<_>>());
        let back = records.to_array::<Target, ndarray::Ix1>().unwrap();
        prop_assert_eq!(back.to_vec(), values);
    }
}
