//! How errors quote the input: what a file that is not a `.npy` file looks
//! like, and text cut to a bounded length.

use std::fmt;

/// What the first bytes of a file that is not a `.npy` file look like, so
/// that a user learns which tool to use instead of a list of numbers.
pub(super) fn looks_like(found: &[u8]) -> String {
    let start = found.escape_ascii();
    let what = match found {
        [] => return "the data is empty (a .npy file starts with \\x93NUMPY)".to_owned(),
        [b'P', b'K', 3 | 5 | 7, ..] => "this looks like a zip archive (.npz): use NpzReader",
        [0x1f, 0x8b, ..] => "this looks like gzip-compressed data: decompress it first",
        [0x89, b'H', b'D', b'F', ..] => "this looks like an HDF5 file",
        [0x80, 2..=5, ..] => "this looks like a Python pickle, not an array",
        [b'B', b'Z', b'h', ..] => "this looks like bzip2-compressed data: decompress it first",
        [0xfd, b'7', b'z', b'X', b'Z', ..] => {
            "this looks like xz-compressed data: decompress it first"
        }
        [0x28, 0xb5, 0x2f, 0xfd, ..] => "this looks like zstd-compressed data: decompress it first",
        // The magic string, spelled here as in the messages above: the error
        // type is below the format code and imports nothing of it.
        _ if b"\x93NUMPY".starts_with(found) => {
            "the data ends inside the magic string \\x93NUMPY (truncated file)"
        }
        _ if found
            .iter()
            .all(|&b| b.is_ascii_graphic() || b.is_ascii_whitespace()) =>
        {
            "this looks like text (a .npy file is binary; was it saved with np.savetxt?)"
        }
        _ => "expected the magic string \\x93NUMPY",
    };
    format!("{what} (it starts with b\"{start}\")")
}

/// Error messages quote at most this many bytes of any text that came from
/// the input (a descr, a name, a value), so that a hostile 20 MB header
/// cannot make a 20 MB message.
pub(crate) const QUOTE_LIMIT: usize = 256;

/// Displays `text` cut to [`QUOTE_LIMIT`] bytes (at a character boundary),
/// saying how long it was when cut.
pub(crate) fn capped(text: &str) -> Capped<'_> {
    Capped(text)
}

/// The display adapter made by [`capped`].
pub(crate) struct Capped<'a>(&'a str);

impl fmt::Display for Capped<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = self.0;
        if text.len() <= QUOTE_LIMIT {
            return f.write_str(text);
        }
        let mut end = QUOTE_LIMIT;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        write!(f, "{}… ({} bytes in all)", &text[..end], text.len())
    }
}
