//! `diff` of object arrays compares values (each pickle read by ndnpy's
//! reader, which runs nothing), not pickle bytes: pickles of equal values
//! differ in bytes across protocols, and the bytes are no elements.

mod common;

use common::{code, ndnpy, stdout};
use ndarray::array;

#[test]
fn object_arrays_are_compared_by_value() {
    // The same values pickled at protocols 2 and 4 (NumPy-made fixtures),
    // and a pickle shorter than 8 bytes per element.
    for (a, b) in [
        ("bytes_p2", "bytes_p4"),
        ("c_3d_p2", "c_3d_p4"),
        ("repeated_np1_p2", "repeated_np1_p2"),
    ] {
        let pa = format!("fixtures/pickle/{a}.npy");
        let pb = format!("fixtures/pickle/{b}.npy");
        let out = ndnpy(&["diff", &pa, &pb]);
        assert_eq!(code(&out), 0, "{a} vs {b}: {}", stdout(&out));
        assert!(stdout(&out).contains("equal"), "{}", stdout(&out));
    }
    let dir = tempfile::tempdir().unwrap();
    let (pa, pb) = (dir.path().join("a.npy"), dir.path().join("b.npy"));
    let a = array![Some("x".to_owned()), None, Some("y".to_owned())];
    let b = array![
        Some("x".to_owned()),
        Some("z".to_owned()),
        Some("y".to_owned())
    ];
    ndnpy::WriteNpy::write_npy(&a, &pa).unwrap();
    ndnpy::WriteNpy::write_npy(&b, &pb).unwrap();
    let out = ndnpy(&["diff", pa.to_str().unwrap(), pb.to_str().unwrap()]);
    assert_eq!(code(&out), 1);
    let text = stdout(&out);
    assert!(text.contains("1 of 3 elements differ\n"), "{text}");
    assert!(text.contains("at [1]:"), "{text}");
}

/// NaN equals NaN (as in numeric diffs), dicts and sets compare whatever
/// their order, `1 == 1.0 == True`; differences print as Python writes them.
#[test]
fn object_values_compare_as_python_does() {
    use ndnpy::pickle::PyValue as P;
    let dir = tempfile::tempdir().unwrap();
    let (pa, pb) = (dir.path().join("a.npy"), dir.path().join("b.npy"));
    let dict = |pairs: &[(&str, i64)]| {
        P::Dict(
            pairs
                .iter()
                .map(|(k, v)| (P::Str(k.to_string()), P::Int(*v)))
                .collect(),
        )
    };
    let a = ndarray::arr1(&[
        P::Float(1.5),
        P::Float(f64::NAN),
        P::Str("x".into()),
        P::None,
        dict(&[("a", 1), ("b", 2)]),
        P::Int(1),
        P::Str("left".into()),
    ]);
    let b = ndarray::arr1(&[
        P::Float(1.5),
        P::Float(f64::NAN),
        P::Str("x".into()),
        P::None,
        dict(&[("b", 2), ("a", 1)]),
        P::Float(1.0),
        P::Str("right".into()),
    ]);
    ndnpy::WriteNpy::write_npy(&a, &pa).unwrap();
    ndnpy::WriteNpy::write_npy(&b, &pb).unwrap();
    let out = ndnpy(&["diff", pa.to_str().unwrap(), pb.to_str().unwrap()]);
    let text = stdout(&out);
    assert_eq!(code(&out), 1, "{text}");
    assert!(text.contains("1 of 7 elements differ\n"), "{text}");
    assert!(text.contains("at [6]: 'left' vs 'right'"), "{text}");
    let same = ndnpy(&["diff", pa.to_str().unwrap(), pa.to_str().unwrap()]);
    assert_eq!(code(&same), 0, "{}", stdout(&same));
}
