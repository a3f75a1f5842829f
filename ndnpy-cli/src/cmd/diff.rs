//! `ndnpy diff A B`: dtype, shape and value differences, with the first
//! differing indices. Values are compared as `np.isclose` does
//! (`|a - b| <= atol + rtol * |b|`), except that NaN equals NaN.

use crate::error::{CliError, CliResult, EXIT_PROBLEM};
use crate::gather::Gather;
use crate::input::Opened;
use crate::output::Outcome;
use crate::slice::View;
use ndnpy::{dtype::DType, dtype::Kind, dtype::Scalar};
use serde_json::{json, Value};
use std::path::Path;

/// How many differing elements are listed.
const FIRST: usize = 10;

fn numeric(d: &DType) -> Option<(Scalar, Option<Scalar>)> {
    match d {
        DType::Scalar(s) => match s.kind {
            Kind::Bool | Kind::Int | Kind::UInt | Kind::Float if s.size <= 8 => {
                Some((s.clone(), None))
            }
            Kind::Complex if s.size <= 16 => {
                let part = Scalar {
                    order: s.order,
                    kind: Kind::Float,
                    size: s.size / 2,
                    unit: None,
                };
                Some((part.clone(), Some(part)))
            }
            _ => None,
        },
        _ => None,
    }
}

fn values(s: &(Scalar, Option<Scalar>), e: &[u8]) -> (f64, f64) {
    let re = crate::values::scalar_f64(&s.0, e).unwrap_or(f64::NAN);
    let im = match &s.1 {
        Some(p) => crate::values::scalar_f64(p, &e[p.size..]).unwrap_or(f64::NAN),
        None => 0.0,
    };
    (re, im)
}

/// Two differing elements as the report shows them: numbers (`[re, im]`
/// for complex ones), or the bytes of anything else.
fn shown(
    na: &Option<(Scalar, Option<Scalar>)>,
    nb: &Option<(Scalar, Option<Scalar>)>,
    ea: &[u8],
    eb: &[u8],
) -> (Value, Value) {
    match (na, nb) {
        (Some(sa), Some(sb)) => {
            let show = |s: &(Scalar, Option<Scalar>), e: &[u8]| {
                let v = values(s, e);
                if s.1.is_some() {
                    json!([v.0, v.1])
                } else {
                    json!(v.0)
                }
            };
            (show(sa, ea), show(sb, eb))
        }
        _ => (json!(format!("{ea:02x?}")), json!(format!("{eb:02x?}"))),
    }
}

fn close(a: f64, b: f64, rtol: f64, atol: f64) -> bool {
    if a.is_nan() || b.is_nan() {
        return a.is_nan() && b.is_nan();
    }
    if a.is_infinite() || b.is_infinite() {
        return a == b;
    }
    (a - b).abs() <= atol + rtol * b.abs()
}

fn unravel(mut k: u64, shape: &[usize], fortran: bool) -> Vec<usize> {
    let mut index = vec![0usize; shape.len()];
    let axes: Vec<usize> = if fortran {
        (0..shape.len()).collect()
    } else {
        (0..shape.len()).rev().collect()
    };
    for ax in axes {
        let n = shape[ax].max(1) as u64;
        index[ax] = (k % n) as usize;
        k /= n;
    }
    index
}

/// Compares two arrays; the JSON says what differs.
pub fn diff(a: &mut Opened<'_>, b: &mut Opened<'_>, rtol: f64, atol: f64) -> CliResult<Value> {
    let (ha, hb) = (a.header.clone(), b.header.clone());
    let mut out = json!({
        "dtype": [ha.dtype.to_string(), hb.dtype.to_string()],
        "shape": [ha.shape, hb.shape],
    });
    let na = numeric(&ha.dtype);
    let nb = numeric(&hb.dtype);
    let comparable = match (&na, &nb) {
        (Some(x), Some(y)) => x.1.is_some() == y.1.is_some(),
        _ => ha.dtype == hb.dtype,
    };
    out["dtype_differs"] = json!(ha.dtype != hb.dtype);
    out["shape_differs"] = json!(ha.shape != hb.shape);
    if ha.shape != hb.shape || !comparable {
        out["equal"] = json!(false);
        out["values_compared"] = json!(false);
        return Ok(out);
    }
    if ha.dtype.has_object() {
        return objects(a, b, out);
    }
    a.check_complete()
        .map_err(|e| CliError::problem(format!("first file: {e}")))?;
    b.check_complete()
        .map_err(|e| CliError::problem(format!("second file: {e}")))?;
    let (ia, ib) = (
        ha.dtype.itemsize().unwrap_or(0),
        hb.dtype.itemsize().unwrap_or(0),
    );
    let count = ha.num_elements().unwrap_or(0) as u64;
    let same_order =
        ha.fortran_order == hb.fortran_order || ha.shape.iter().filter(|&&n| n > 1).count() <= 1;
    let view_b = View::whole(&hb.shape, hb.fortran_order);
    let total_b = hb.data_len().unwrap_or(0) as u64;
    let batch = ((1u64 << 20) / ia.max(ib).max(1) as u64).max(1);
    let mut differing = 0u64;
    let mut max_abs: f64 = 0.0;
    let mut first = Vec::new();
    let mut bufa = Vec::new();
    let mut bufb = Vec::new();
    // `b` is read in `a`'s order, whose fastest axis is its first or last.
    let fast = match (ha.fortran_order, hb.shape.first(), hb.shape.last()) {
        (true, Some(&n), _) | (false, _, Some(&n)) => n,
        _ => 1,
    };
    let mut gather = Gather::new(b, total_b, fast);
    let mut k = 0u64;
    let io = |e: std::io::Error| CliError::problem(format!("reading the data: {e}"));
    while k < count {
        let n = batch.min(count - k);
        bufa.resize(n as usize * ia, 0);
        bufb.resize(n as usize * ib, 0);
        a.data.read_at(k * ia as u64, &mut bufa).map_err(io)?;
        if same_order {
            gather
                .data()
                .read_at(k * ib as u64, &mut bufb)
                .map_err(io)?;
        } else {
            for j in 0..n {
                let index = unravel(k + j, &ha.shape, ha.fortran_order);
                let e = view_b.element(&index);
                let s = j as usize * ib;
                gather
                    .get(e * ib as u64, &mut bufb[s..s + ib])
                    .map_err(io)?;
            }
        }
        // Identical bytes of one dtype are identical values, equal under
        // any finite tolerance that is not negative (NaN equals NaN here;
        // an infinite one can make 0 * inf a NaN): a batch of them needs
        // no element-by-element look.
        let tolerant = (0.0..f64::INFINITY).contains(&rtol) && (0.0..f64::INFINITY).contains(&atol);
        if ha.dtype == hb.dtype && tolerant && bufa == bufb {
            k += n;
            continue;
        }
        for j in 0..n as usize {
            let (ea, eb) = (&bufa[j * ia..(j + 1) * ia], &bufb[j * ib..(j + 1) * ib]);
            let same = match (&na, &nb) {
                (Some(sa), Some(sb)) => {
                    let (x, y) = (values(sa, ea), values(sb, eb));
                    let same = close(x.0, y.0, rtol, atol) && close(x.1, y.1, rtol, atol);
                    if !same {
                        let d = ((x.0 - y.0).powi(2) + (x.1 - y.1).powi(2)).sqrt();
                        if d.is_finite() {
                            max_abs = max_abs.max(d);
                        }
                    }
                    same
                }
                _ => ea == eb,
            };
            if same {
                continue;
            }
            differing += 1;
            if first.len() < FIRST {
                let (sa, sb) = shown(&na, &nb, ea, eb);
                first.push(json!({
                    "index": unravel(k + j as u64, &ha.shape, ha.fortran_order),
                    "a": sa,
                    "b": sb,
                }));
            }
        }
        k += n;
    }
    out["values_compared"] = json!(true);
    out["elements"] = json!(count);
    out["differing"] = json!(differing);
    out["max_abs_diff"] = json!(max_abs);
    out["first_differences"] = json!(first);
    out["equal"] = json!(differing == 0 && ha.dtype == hb.dtype);
    Ok(out)
}

/// Object arrays compared by value: each pickle read by the library's
/// reader (nothing runs), elements compared as Python values (two pickles
/// of equal values may differ in bytes: protocols, memo use).
fn objects(a: &mut Opened<'_>, b: &mut Opened<'_>, mut out: Value) -> CliResult<Value> {
    let read = |o: &mut Opened<'_>, which: &str| {
        crate::input::read_any(o).map_err(|e| CliError::problem(format!("{which} file: {e}")))
    };
    let (va, vb) = (read(a, "first")?, read(b, "second")?);
    let (differing, first, count) = match (&va, &vb) {
        (ndnpy::AnyArray::Object(x), ndnpy::AnyArray::Object(y)) => {
            let mut differing = 0u64;
            let mut first = Vec::new();
            let shape = x.shape().to_vec();
            for (k, (ea, eb)) in x.iter().zip(y.iter()).enumerate() {
                if py_eq(ea, eb) {
                    continue;
                }
                differing += 1;
                if first.len() < FIRST {
                    first.push(json!({
                        "index": unravel(k as u64, &shape, false),
                        "a": ea.to_string(),
                        "b": eb.to_string(),
                    }));
                }
            }
            (json!(differing), first, x.len())
        }
        // Records with object fields: compared whole.
        _ => (
            if va == vb { json!(0) } else { Value::Null },
            Vec::new(),
            a.header.num_elements().unwrap_or(0),
        ),
    };
    out["values_compared"] = json!(true);
    out["elements"] = json!(count);
    out["equal"] = json!(differing == json!(0));
    out["differing"] = differing;
    // Not numbers: no distance.
    out["max_abs_diff"] = Value::Null;
    out["first_differences"] = json!(first);
    Ok(out)
}

/// Python's `==` on two values, except that NaN equals NaN (as in the
/// numeric comparison above): numbers compare across `bool`, `int` and
/// `float`; dicts and sets whatever their order; a list never equals a
/// tuple.
fn py_eq(a: &ndnpy::pickle::PyValue, b: &ndnpy::pickle::PyValue) -> bool {
    use ndnpy::pickle::PyValue as P;
    let number = |v: &P| match v {
        P::Bool(x) => Some(*x as i64 as f64),
        P::Int(x) => Some(*x as f64),
        P::Float(x) => Some(*x),
        _ => None,
    };
    let all = |x: &[P], y: &[P]| x.len() == y.len() && x.iter().zip(y).all(|(p, q)| py_eq(p, q));
    let members = |x: &[P], y: &[P]| {
        x.len() == y.len()
            && x.iter().all(|p| y.iter().any(|q| py_eq(p, q)))
            && y.iter().all(|q| x.iter().any(|p| py_eq(p, q)))
    };
    match (a, b) {
        (P::Int(x), P::Int(y)) => x == y,
        (P::Float(x), P::Float(y)) => x == y || (x.is_nan() && y.is_nan()),
        (P::Complex(x0, x1), P::Complex(y0, y1)) => {
            py_eq(&P::Float(*x0), &P::Float(*y0)) && py_eq(&P::Float(*x1), &P::Float(*y1))
        }
        (P::List(x), P::List(y)) | (P::Tuple(x), P::Tuple(y)) => all(x, y),
        (P::Set(x) | P::FrozenSet(x), P::Set(y) | P::FrozenSet(y)) => members(x, y),
        (P::Dict(x), P::Dict(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.iter().any(|(k2, v2)| py_eq(k, k2) && py_eq(v, v2)))
        }
        _ => match (number(a), number(b)) {
            // 1 == 1.0 == True; an int beyond 2**53 compares exactly only
            // with another int (above).
            (Some(x), Some(y)) => x == y,
            _ => a == b,
        },
    }
}

pub fn render(label: &str, v: &Value) -> String {
    let mut out = String::new();
    if v["equal"] == json!(true) {
        return format!("{label}: equal\n");
    }
    out.push_str(&format!("{label}: differ\n"));
    if v["dtype_differs"] == json!(true) {
        out.push_str(&format!(
            "  dtype: {} vs {}\n",
            v["dtype"][0], v["dtype"][1]
        ));
    }
    if v["shape_differs"] == json!(true) {
        out.push_str(&format!(
            "  shape: {} vs {}\n",
            v["shape"][0], v["shape"][1]
        ));
    }
    if v["values_compared"] == json!(false) {
        out.push_str("  values not compared (shapes or kinds differ)\n");
        return out;
    }
    if v["differing"].is_null() {
        out.push_str("  values differ\n");
    } else if v["differing"] != json!(0) {
        let largest = match v["max_abs_diff"].as_f64() {
            Some(d) => format!(
                " (largest absolute difference {})",
                crate::repr::py_float(d)
            ),
            None => String::new(),
        };
        out.push_str(&format!(
            "  {} of {} elements differ{largest}\n",
            v["differing"], v["elements"],
        ));
        for d in v["first_differences"].as_array().into_iter().flatten() {
            // Text as it is (a Python repr, or raw bytes), numbers as JSON.
            let shown = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_owned);
            out.push_str(&format!(
                "  at {}: {} vs {}\n",
                d["index"],
                shown(&d["a"]),
                shown(&d["b"])
            ));
        }
    }
    out
}

/// `diff` when a side is a Parquet frame: arrays paired by name (a frame's
/// columns against an archive's members, as `convert` names them).
pub fn tables(
    pa: &Path,
    pb: &Path,
    key: Option<&str>,
    (rtol, atol): (f64, f64),
    o: &mut Outcome,
) -> CliResult<()> {
    let pairs = crate::tables::pairs(
        crate::tables::load_all(pa)?,
        crate::tables::load_all(pb)?,
        key,
    );
    if pairs.is_empty() {
        return Err(CliError::problem(format!(
            "{} vs {}: no array to compare",
            pa.display(),
            pb.display()
        )));
    }
    for (label, x, y) in pairs {
        let (Some(x), Some(y)) = (x, y) else {
            o.code = o.code.max(EXIT_PROBLEM);
            o.text(&format!("{label}: only in one of the two\n"));
            o.item(json!({"name": label, "equal": false}));
            continue;
        };
        let lib = |e| CliError::lib(pa, Some(&label), e);
        let mut oa = crate::reinterpret::apply(crate::tables::opened(&x).map_err(lib)?);
        let mut ob = crate::reinterpret::apply(crate::tables::opened(&y).map_err(lib)?);
        report(o, &label, &mut oa, &mut ob, (rtol, atol))?;
    }
    Ok(())
}

/// Compares two opened arrays and reports the result under `label`.
pub fn report(
    o: &mut Outcome,
    label: &str,
    a: &mut crate::input::Opened<'_>,
    b: &mut crate::input::Opened<'_>,
    (rtol, atol): (f64, f64),
) -> CliResult<()> {
    let mut v = diff(a, b, rtol, atol)?;
    if v["equal"] != json!(true) {
        o.code = o.code.max(EXIT_PROBLEM);
    }
    o.text(&render(label, &v));
    v["name"] = json!(label);
    o.item(v);
    Ok(())
}
