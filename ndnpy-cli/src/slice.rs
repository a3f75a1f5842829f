//! `--slice "0:5, :, -1"`: NumPy's basic indexing (integers, slices with
//! steps, `...`) as a strided view of the file's elements.

/// Elements `offset + Σ index[k] * strides[k]`, in the file's element order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct View {
    pub offset: i64,
    pub shape: Vec<usize>,
    pub strides: Vec<i64>,
}

impl View {
    /// The whole array, whose data is in C or Fortran order.
    pub fn whole(shape: &[usize], fortran: bool) -> View {
        let mut strides = vec![0i64; shape.len()];
        let mut acc = 1i64;
        let order: Vec<usize> = if fortran {
            (0..shape.len()).collect()
        } else {
            (0..shape.len()).rev().collect()
        };
        for k in order {
            strides[k] = acc;
            acc = acc.saturating_mul(shape[k].max(1) as i64);
        }
        View {
            offset: 0,
            shape: shape.to_vec(),
            strides,
        }
    }

    pub fn size(&self) -> usize {
        // A zero anywhere makes the size 0 whatever the other lengths (which
        // may multiply past `usize` beside it: `(2**62, 2**62, 0)`).
        if self.shape.contains(&0) {
            return 0;
        }
        self.shape.iter().product()
    }

    /// Element number in the file of the view's index `index`.
    pub fn element(&self, index: &[usize]) -> u64 {
        let mut e = self.offset;
        for (i, s) in index.iter().zip(&self.strides) {
            e += *i as i64 * s;
        }
        e as u64
    }

    /// Applies a slice expression such as `"0:5, :, -1"` or `"..., 2"`.
    pub fn slice(&self, spec: &str) -> Result<View, String> {
        // Empty items (a trailing comma, as Python allows) index nothing.
        let items: Vec<&str> = spec
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect();
        let ellipses = items.iter().filter(|s| **s == "...").count();
        if ellipses > 1 {
            return Err("an index can only have a single ellipsis ('...')".into());
        }
        let explicit = items.len() - ellipses;
        if explicit > self.shape.len() {
            return Err(format!(
                "too many indices for array: array is {}-dimensional, but {explicit} were indexed",
                self.shape.len()
            ));
        }
        let mut expanded: Vec<&str> = Vec::new();
        for item in &items {
            if *item == "..." {
                expanded.extend(std::iter::repeat_n(":", self.shape.len() - explicit));
            } else {
                expanded.push(item);
            }
        }
        expanded.extend(std::iter::repeat_n(":", self.shape.len() - expanded.len()));
        let mut out = View {
            offset: self.offset,
            shape: vec![],
            strides: vec![],
        };
        for (axis, item) in expanded.iter().enumerate() {
            let n = self.shape[axis] as i64;
            let stride = self.strides[axis];
            if item.contains(':') {
                let parts: Vec<&str> = item.split(':').map(str::trim).collect();
                if parts.len() > 3 {
                    return Err(format!("invalid slice '{item}'"));
                }
                let num = |s: &str| -> Result<Option<i64>, String> {
                    if s.is_empty() {
                        Ok(None)
                    } else {
                        s.parse()
                            .map(Some)
                            .map_err(|_| format!("invalid slice '{item}'"))
                    }
                };
                let step = num(parts.get(2).copied().unwrap_or(""))?.unwrap_or(1);
                if step == 0 {
                    return Err("slice step cannot be zero".into());
                }
                let (start, len) = indices(num(parts[0])?, num(parts[1])?, step, n);
                out.offset += start * stride;
                out.shape.push(len as usize);
                // With two or more elements |step| < n, so the product stays
                // within the array; with fewer the stride is never used
                // (and `stride * step` could overflow for a huge step).
                out.strides
                    .push(if len > 1 { stride * step } else { stride });
            } else {
                let i: i64 = item.parse().map_err(|_| {
                    format!("invalid index '{item}' (expected an integer, a slice or ...)")
                })?;
                let j = if i < 0 { i + n } else { i };
                if j < 0 || j >= n {
                    return Err(format!(
                        "index {i} is out of bounds for axis {axis} with size {n}"
                    ));
                }
                out.offset += j * stride;
            }
        }
        Ok(out)
    }
}

/// Python's `slice(start, stop, step).indices(n)`: first index and length.
/// The length is `(distance - 1) / |step| + 1`, which cannot overflow for
/// any step, `i64::MIN` included.
fn indices(start: Option<i64>, stop: Option<i64>, step: i64, n: i64) -> (i64, i64) {
    let clamp = |v: i64, lo: i64, hi: i64| v.max(lo).min(hi);
    let len = |distance: i64| ((distance - 1) as u64 / step.unsigned_abs() + 1) as i64;
    if step > 0 {
        let fix = |v: i64| clamp(if v < 0 { v + n } else { v }, 0, n);
        let a = start.map_or(0, fix);
        let b = stop.map_or(n, fix);
        (a, if b > a { len(b - a) } else { 0 })
    } else {
        let fix = |v: i64| clamp(if v < 0 { v + n } else { v }, -1, n - 1);
        let a = start.map_or(n - 1, fix);
        let b = stop.map_or(-1, fix);
        (a, if a > b { len(a - b) } else { 0 })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_slices() {
        assert_eq!(indices(None, None, 1, 5), (0, 5));
        assert_eq!(indices(Some(-2), None, 1, 5), (3, 2));
        assert_eq!(indices(None, None, -1, 5), (4, 5));
        assert_eq!(indices(Some(10), Some(2), -3, 5), (4, 1));
        assert_eq!(indices(Some(3), Some(1), 1, 5), (3, 0));
        let v = View::whole(&[4, 5], false);
        let s = v.slice("1:3, -1").unwrap();
        assert_eq!(s.shape, vec![2]);
        assert_eq!(s.element(&[1]), 2 * 5 + 4);
        let f = View::whole(&[4, 5], true).slice("..., 2").unwrap();
        assert_eq!(f.shape, vec![4]);
        assert_eq!(f.element(&[3]), 2 * 4 + 3);
        assert!(v.slice("5").is_err());
        assert!(v.slice("1,2,3").is_err());
    }

    /// Steps at the ends of `i64`, as Python takes them:
    /// `np.arange(5)[::2**63-1]` is `[0]`, `[::-2**63]` is `[4]`.
    #[test]
    fn huge_steps() {
        let v = View::whole(&[5], false);
        assert_eq!(indices(None, None, i64::MAX, 5), (0, 1));
        assert_eq!(indices(None, None, i64::MIN, 5), (4, 1));
        assert_eq!(indices(Some(i64::MIN), Some(i64::MAX), i64::MAX, 5), (0, 1));
        assert_eq!(indices(Some(i64::MAX), Some(i64::MIN), i64::MIN, 5), (4, 1));
        let s = v.slice(&format!("::{}", i64::MAX)).unwrap();
        assert_eq!((s.shape.clone(), s.element(&[0])), (vec![1], 0));
        let s = v.slice(&format!("::{}", i64::MIN)).unwrap();
        assert_eq!((s.shape.clone(), s.element(&[0])), (vec![1], 4));
        assert_eq!(v.slice("3:1").unwrap().shape, vec![0]);
    }

    /// Malformed expressions are errors with a message, never a panic.
    #[test]
    fn malformed_slices() {
        let v = View::whole(&[4, 5], false);
        for bad in [
            "::0",
            "1:2:3:4",
            "a:b",
            "1.5",
            "...,...",
            "0, 0, 0",
            "9223372036854775808",
            "::99999999999999999999",
            "-5",
        ] {
            let err = v.slice(bad).unwrap_err();
            assert!(!err.is_empty(), "{bad}");
        }
    }
}
