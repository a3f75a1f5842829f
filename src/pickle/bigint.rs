//! Integers beyond `i64`: pickle's little-endian two's complement bytes to
//! decimal text and back. Sizes are capped by the callers (about 4300
//! digits), so the quadratic schoolbook conversion stays cheap.

/// Decimal text of a little-endian two's complement integer.
pub(crate) fn le_twos_complement_to_decimal(bytes: &[u8]) -> String {
    let neg = bytes.last().is_some_and(|&b| b & 0x80 != 0);
    // Magnitude as little-endian bytes.
    let mut mag: Vec<u8> = bytes.to_vec();
    if neg {
        // Two's complement negation: invert and add one.
        let mut carry = true;
        for b in mag.iter_mut() {
            let (v, c) = (!*b).overflowing_add(carry as u8);
            *b = v;
            carry = c;
        }
    }
    // Big-endian base-2^32 limbs, divided repeatedly by 10^9.
    let mut limbs: Vec<u32> = mag
        .chunks(4)
        .rev()
        .map(|c| {
            let mut buf = [0u8; 4];
            buf[..c.len()].copy_from_slice(c);
            u32::from_le_bytes(buf)
        })
        .collect();
    let mut chunks: Vec<u32> = Vec::new();
    while limbs.iter().any(|&l| l != 0) {
        let mut rem: u64 = 0;
        for l in limbs.iter_mut() {
            let cur = (rem << 32) | *l as u64;
            *l = (cur / 1_000_000_000) as u32;
            rem = cur % 1_000_000_000;
        }
        chunks.push(rem as u32);
        while limbs.first() == Some(&0) {
            limbs.remove(0);
        }
    }
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    match chunks.split_last() {
        None => return "0".into(),
        Some((first, rest)) => {
            out.push_str(&first.to_string());
            for c in rest.iter().rev() {
                out.push_str(&format!("{c:09}"));
            }
        }
    }
    out
}

/// Little-endian two's complement bytes (the shortest form, as Python's
/// `encode_long`) of decimal text `[-]digits`, or `None` if it is not one.
pub(crate) fn decimal_to_le_twos_complement(text: &str) -> Option<Vec<u8>> {
    let (neg, digits) = match text.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, text),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // Magnitude as little-endian bytes: multiply-add by 10 per digit.
    let mut mag: Vec<u8> = Vec::new();
    for d in digits.bytes() {
        let mut carry = (d - b'0') as u32;
        for b in mag.iter_mut() {
            let v = *b as u32 * 10 + carry;
            *b = v as u8;
            carry = v >> 8;
        }
        while carry > 0 {
            mag.push(carry as u8);
            carry >>= 8;
        }
    }
    while mag.last() == Some(&0) {
        mag.pop();
    }
    if mag.is_empty() {
        return Some(Vec::new());
    }
    if neg {
        let mut carry = true;
        for b in mag.iter_mut() {
            let (v, c) = (!*b).overflowing_add(carry as u8);
            *b = v;
            carry = c;
        }
        // The sign bit must be set; -128 fits in one byte, -129 does not.
        if mag.last().is_some_and(|&b| b & 0x80 == 0) {
            mag.push(0xff);
        }
        while mag.len() > 1 && mag[mag.len() - 1] == 0xff && mag[mag.len() - 2] & 0x80 != 0 {
            mag.pop();
        }
    } else if mag.last().is_some_and(|&b| b & 0x80 != 0) {
        mag.push(0);
    }
    Some(mag)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        for text in [
            "0",
            "1",
            "-1",
            "127",
            "128",
            "-128",
            "-129",
            "255",
            "9223372036854775808",
            "-9223372036854775809",
            "1000000000000000000000000000000",
            "-340282366920938463463374607431768211456",
        ] {
            let bytes = decimal_to_le_twos_complement(text).unwrap();
            let back = if bytes.is_empty() {
                "0".to_string()
            } else {
                le_twos_complement_to_decimal(&bytes)
            };
            assert_eq!(back, text, "{bytes:?}");
        }
        // Python: pickle.encode_long(-128) == b'\x80', (128) == b'\x80\x00'.
        assert_eq!(decimal_to_le_twos_complement("-128").unwrap(), vec![0x80]);
        assert_eq!(decimal_to_le_twos_complement("128").unwrap(), vec![0x80, 0]);
        assert_eq!(
            decimal_to_le_twos_complement("-129").unwrap(),
            vec![0x7f, 0xff]
        );
    }
}
