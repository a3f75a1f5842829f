//! `ndnpy show`: NumPy's `repr` of an array or a slice of it, reading only
//! the elements it prints.

use crate::input::Opened;
use crate::repr::{array_repr, array_repr_with, format_values, shown_indices, THRESHOLD};
use crate::slice::View;
use crate::values::{decode, Values};
use ndnpy::pickle::PyValue;
use ndnpy::{dtype::DType, dtype::Kind, AnyArray};
use std::collections::BTreeMap;

/// `$f` of the elements numbered `$order` of an `ArrayD` read from a file,
/// which is contiguous in the file's order (its memory order); only those
/// elements are formatted.
macro_rules! in_file_order {
    ($array:expr, $order:expr, $f:expr) => {{
        let f = $f;
        let flat = $array
            .as_slice_memory_order()
            .ok_or("internal: an array read from a file is contiguous")?;
        $order
            .iter()
            .map(|&e| flat.get(e as usize).map(&f).unwrap_or_default())
            .collect::<Vec<String>>()
    }};
}

/// An object array's elements `order` (element numbers in file order),
/// each as Python's `repr` (NumPy writes a list as `list([...])`), and the
/// dtype's repr when the header's `|O` hides another (NumPy 2's
/// `StringDType`).
///
/// A pickle can only be read from its start, so this reads the whole data
/// (bounded by the file's size), through ndnpy's own pickle reader: a
/// closed list of constructors, nothing executed.
fn read_objects(
    opened: &mut Opened<'_>,
    order: &[u64],
) -> Result<(Values, Option<String>), String> {
    let any = crate::input::read_any(opened).map_err(|e| e.to_string())?;
    let (words, dtype): (Vec<String>, Option<String>) = match any {
        AnyArray::Object(array) => (
            in_file_order!(array, order, |v: &PyValue| match v {
                PyValue::List(_) => format!("list({v})"),
                v => v.to_string(),
            }),
            None,
        ),
        AnyArray::StringDType(a) => {
            let na = a.na_object.clone().unwrap_or(PyValue::None);
            let mut args = Vec::new();
            if let Some(na) = &a.na_object {
                args.push(format!("na_object={na}"));
            }
            if !a.coerce {
                args.push("coerce=False".to_owned());
            }
            (
                in_file_order!(a.values, order, |v: &Option<String>| match v {
                    Some(s) => PyValue::Str(s.clone()).to_string(),
                    None => na.to_string(),
                }),
                Some(format!("StringDType({})", args.join(", "))),
            )
        }
        _ => return Err("not an object array".into()),
    };
    Ok((Values::Object(words), dtype))
}

/// The repr of `opened[slice]` and the shape it has.
pub fn show(
    opened: &mut Opened<'_>,
    slice: Option<&str>,
    full: bool,
) -> Result<(String, Vec<usize>), String> {
    let header = &opened.header;
    let objects = matches!(&header.dtype, DType::Scalar(s) if s.kind == Kind::Object);
    if let (Some(why), false) = (crate::values::unsupported(&header.dtype), objects) {
        return Err(why);
    }
    opened.check_complete().map_err(|e| e.to_string())?;
    let itemsize = header.dtype.itemsize().unwrap_or(0) as u64;
    let mut view = View::whole(&header.shape, header.fortran_order);
    if let Some(spec) = slice {
        view = view.slice(spec)?;
    }
    let summarize = !full && view.size() > THRESHOLD;
    let axes: Vec<Vec<Option<usize>>> = view
        .shape
        .iter()
        // An empty view shows no element: no index of any axis is listed
        // (an axis of 2**40 beside a 0 would otherwise be listed whole).
        .map(|&n| match view.size() {
            0 => Vec::new(),
            _ => shown_indices(n, summarize),
        })
        .collect();
    // Element numbers of the shown elements, in C order of the view.
    let mut order: Vec<u64> = Vec::new();
    if view.size() > 0 {
        let picks: Vec<Vec<usize>> = axes
            .iter()
            .map(|a| a.iter().flatten().copied().collect())
            .collect();
        let mut index = vec![0usize; picks.len()];
        loop {
            let real: Vec<usize> = index.iter().zip(&picks).map(|(&i, p)| p[i]).collect();
            order.push(view.element(&real));
            // Odometer increment over the shown indices.
            let mut k = picks.len();
            loop {
                if k == 0 {
                    break;
                }
                k -= 1;
                index[k] += 1;
                if index[k] < picks[k].len() {
                    break;
                }
                index[k] = 0;
            }
            if index.iter().all(|&i| i == 0) {
                break;
            }
        }
    }
    if objects {
        let (values, dtype) = read_objects(opened, &order)?;
        let words = format_values(&values, view.shape.is_empty());
        return Ok((
            array_repr_with(&view.shape, &axes, words, &opened.header.dtype, dtype),
            view.shape,
        ));
    }
    // Read each distinct element once, in ascending file order, merging
    // neighbours into one read.
    let mut bytes: BTreeMap<u64, Vec<u8>> = order.iter().map(|&e| (e, Vec::new())).collect();
    let wanted: Vec<u64> = bytes.keys().copied().collect();
    let mut i = 0;
    while i < wanted.len() {
        let mut j = i + 1;
        while j < wanted.len() && wanted[j] == wanted[j - 1] + 1 && j - i < 1 << 16 {
            j += 1;
        }
        let mut buf = vec![0u8; ((j - i) as u64 * itemsize) as usize];
        opened
            .data
            .read_at(wanted[i] * itemsize, &mut buf)
            .map_err(|e| format!("reading the data: {e}"))?;
        for (k, e) in wanted[i..j].iter().enumerate() {
            let s = k * itemsize as usize;
            *bytes.get_mut(e).expect("wanted") = buf[s..s + itemsize as usize].to_vec();
        }
        i = j;
    }
    let elements: Vec<&[u8]> = order.iter().map(|e| bytes[e].as_slice()).collect();
    let values = decode(&opened.header.dtype, &elements)?;
    let words = format_values(&values, view.shape.is_empty());
    Ok((
        array_repr(&view.shape, &axes, words, &opened.header.dtype),
        view.shape,
    ))
}
