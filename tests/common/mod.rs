//! Hand-built `.npy` files shared by the hostile-input tests.
#![allow(dead_code)]

/// A file of format `major`.0 with this header text (a newline is appended)
/// and data; the length field is 2 bytes for 1.0 and 4 bytes otherwise.
pub fn npy(major: u8, text: &str, data: &[u8]) -> Vec<u8> {
    let text = format!("{text}\n");
    let mut out = b"\x93NUMPY".to_vec();
    out.extend_from_slice(&[major, 0]);
    if major == 1 {
        out.extend_from_slice(&u16::try_from(text.len()).unwrap().to_le_bytes());
    } else {
        out.extend_from_slice(&u32::try_from(text.len()).unwrap().to_le_bytes());
    }
    out.extend_from_slice(text.as_bytes());
    out.extend_from_slice(data);
    out
}

/// A version 1.0 file.
pub fn npy_v1(text: &str, data: &[u8]) -> Vec<u8> {
    npy(1, text, data)
}

/// A version 2.0 file.
pub fn npy_v2(text: &str, data: &[u8]) -> Vec<u8> {
    npy(2, text, data)
}
