//! NumPy's float formatting (`FloatingFormat` in `arrayprint.py`): the
//! shortest digits that read back, positional or scientific as the whole
//! array's values decide, padded to a common width.

use crate::values::Width;

/// Digits after the point (NumPy's default `precision`): the float
/// formatting is its only user.
const PRECISION: usize = 8;

/// Shortest decimal digits that read back as the same value of `width`:
/// `(digits, exponent)` with the value `d.ddd × 10^exponent`.
pub(super) fn shortest(v: f64, width: Width) -> (String, i32) {
    let s = match width {
        Width::F64 => format!("{:e}", v.abs()),
        Width::F32 => format!("{:e}", (v as f32).abs()),
        Width::F16 => {
            let a = v.abs();
            (0..6)
                .map(|p| format!("{a:.p$e}"))
                .find(|s| rounds_to_f16(s.parse().unwrap_or(f64::NAN), a))
                .unwrap_or_else(|| format!("{a:e}"))
        }
    };
    split_sci(&s)
}

/// Whether `x` rounds to the float16 value `v` (round half to even).
pub(super) fn rounds_to_f16(x: f64, v: f64) -> bool {
    if v == 0.0 {
        return x < 2f64.powi(-25);
    }
    let e = v.log2().floor().max(-14.0) as i32;
    let ulp = 2f64.powi(e - 10);
    let diff = (x - v).abs();
    let even = (v / ulp).round() as i64 % 2 == 0;
    diff < ulp / 2.0 || (diff == ulp / 2.0 && even)
}

pub(super) fn split_sci(s: &str) -> (String, i32) {
    let (m, e) = s.split_once('e').expect("scientific");
    (m.replace('.', ""), e.parse().expect("exponent"))
}

/// `v` rounded to `digits` fraction digits in scientific notation, as
/// `(mantissa digits, exponent)`.
pub(super) fn sci_rounded(v: f64, digits: usize) -> (String, i32) {
    split_sci(&format!("{:.digits$e}", v.abs()))
}

/// Positional rendering with at most 8 fraction digits, trailing zeros
/// trimmed (NumPy's `dragon4_positional(unique, precision=8, trim='.')`):
/// (integer part with sign, fraction part).
pub(super) fn positional(v: f64, width: Width, sign_plus: bool) -> (String, String) {
    let (digits, exp) = shortest(v, width);
    let frac_needed = (digits.len() as i32 - 1 - exp).max(0) as usize;
    let (int, frac) = if frac_needed > PRECISION {
        let s = format!("{:.PRECISION$}", v.abs());
        let (i, f) = s.split_once('.').expect("point");
        (i.to_owned(), f.trim_end_matches('0').to_owned())
    } else {
        place_point(&digits, exp)
    };
    let int = if int.is_empty() { "0".to_owned() } else { int };
    (with_sign(v, int, sign_plus), frac)
}

/// Integer and fraction parts of `d.ddd × 10^exp`, trailing zeros trimmed.
pub(super) fn place_point(digits: &str, exp: i32) -> (String, String) {
    if exp >= 0 {
        let e = exp as usize;
        let mut int = digits.to_owned();
        if int.len() < e + 1 {
            int.extend(std::iter::repeat_n('0', e + 1 - int.len()));
        }
        let frac = int.split_off(e + 1);
        (int, frac.trim_end_matches('0').to_owned())
    } else {
        let zeros = "0".repeat((-exp - 1) as usize);
        (
            "0".to_owned(),
            format!("{zeros}{digits}").trim_end_matches('0').to_owned(),
        )
    }
}

pub(super) fn with_sign(v: f64, s: String, sign_plus: bool) -> String {
    if v.is_sign_negative() {
        format!("-{s}")
    } else if sign_plus {
        format!("+{s}")
    } else {
        s
    }
}

/// NumPy's `FloatingFormat` with `floatmode='maxprec'`.
pub(super) struct FloatFormat {
    width: Width,
    exp: bool,
    pad_left: usize,
    pad_right: usize,
    precision: usize,
    exp_size: usize,
    sign_plus: bool,
}

impl FloatFormat {
    pub(super) fn new(data: &[f64], width: Width, sign_plus: bool) -> FloatFormat {
        let finite: Vec<f64> = data.iter().copied().filter(|x| x.is_finite()).collect();
        let nonzero: Vec<f64> = finite
            .iter()
            .map(|x| x.abs())
            .filter(|&x| x != 0.0)
            .collect();
        let mut f = FloatFormat {
            width,
            exp: false,
            pad_left: 0,
            pad_right: 0,
            precision: PRECISION,
            exp_size: 0,
            sign_plus,
        };
        if !nonzero.is_empty() {
            let max = nonzero.iter().copied().fold(f64::MIN, f64::max);
            let min = nonzero.iter().copied().fold(f64::MAX, f64::min);
            f.exp = max >= 1e8 || min < 0.0001 || max / min > 1000.0;
        }
        if finite.is_empty() {
            f.precision = 0;
        } else if f.exp {
            let parts: Vec<(String, String, i32)> = finite
                .iter()
                .map(|&x| {
                    let (d, e) = capped_sci(x, width);
                    let sign = if x.is_sign_negative() {
                        "-"
                    } else if sign_plus {
                        "+"
                    } else {
                        ""
                    };
                    (format!("{sign}{}", &d[..1]), d[1..].to_owned(), e)
                })
                .collect();
            f.precision = parts.iter().map(|p| p.1.len()).max().unwrap_or(0);
            f.exp_size = parts
                .iter()
                .map(|p| p.2.unsigned_abs().to_string().len())
                .max()
                .unwrap_or(2)
                .max(2);
            f.pad_left = parts.iter().map(|p| p.0.len()).max().unwrap_or(0);
            f.pad_right = f.exp_size + 2 + f.precision;
        } else {
            let parts: Vec<(String, String)> = finite
                .iter()
                .map(|&x| positional(x, width, sign_plus))
                .collect();
            f.pad_left = parts.iter().map(|p| p.0.len()).max().unwrap_or(0);
            f.pad_right = parts.iter().map(|p| p.1.len()).max().unwrap_or(0);
        }
        if finite.len() != data.len() {
            let neginf = sign_plus || data.contains(&f64::NEG_INFINITY);
            let offset = f.pad_right + 1;
            f.pad_left = f
                .pad_left
                .max(3usize.saturating_sub(offset))
                .max((3 + neginf as usize).saturating_sub(offset));
        }
        f
    }

    pub(super) fn format(&self, x: f64) -> String {
        if !x.is_finite() {
            let ret = if x.is_nan() {
                if self.sign_plus { "+nan" } else { "nan" }.to_owned()
            } else if x < 0.0 {
                "-inf".to_owned()
            } else if self.sign_plus {
                "+inf".to_owned()
            } else {
                "inf".to_owned()
            };
            let width = self.pad_left + self.pad_right + 1;
            return format!("{ret:>width$}");
        }
        if self.exp {
            let (own, _) = capped_sci(x, self.width);
            let (digits, e) = if own.len() - 1 == self.precision {
                capped_sci(x, self.width)
            } else {
                sci_rounded(x, self.precision)
            };
            let mantissa = format!("{}.{}", &digits[..1], &digits[1..]);
            let mantissa = with_sign(x, mantissa, self.sign_plus);
            let (mi, mf) = mantissa.split_once('.').expect("point");
            let sign = if e < 0 { '-' } else { '+' };
            let size = self.exp_size;
            format!(
                "{mi:>w$}.{mf}e{sign}{:0size$}",
                e.unsigned_abs(),
                w = self.pad_left
            )
        } else {
            let (int, frac) = positional(x, self.width, self.sign_plus);
            format!(
                "{int:>l$}.{frac:<r$}",
                l = self.pad_left,
                r = self.pad_right
            )
        }
    }
}

/// Shortest scientific digits, rounded to at most 8 fraction digits.
pub(super) fn capped_sci(x: f64, width: Width) -> (String, i32) {
    let (d, e) = shortest(x, width);
    if d.len() - 1 > PRECISION {
        let (d, e) = sci_rounded(x, PRECISION);
        (trim_digits(d), e)
    } else {
        (d, e)
    }
}

pub(super) fn trim_digits(d: String) -> String {
    let t = d.trim_end_matches('0');
    if t.is_empty() {
        "0".to_owned()
    } else {
        t.to_owned()
    }
}
