//! Zip's compression method numbers and which of them this build decodes
//! (cargo features). Imports nothing, so that the directory, which checks
//! each entry's method, and the codecs can both use it.

/// Compression methods.
pub(crate) const STORED: u16 = 0;
pub(crate) const DEFLATED: u16 = 8;

/// Zip's method numbers for the codecs beyond stored and deflate.
pub(crate) const BZIP2: u16 = 12;
pub(crate) const LZMA: u16 = 14;
pub(crate) const ZSTD: u16 = 93;

/// Refuses methods this build cannot decode, naming the cargo feature
/// that would, or `None` when it can.
pub(crate) fn check_method(method: u16) -> Option<String> {
    let (name, feature, enabled) = match method {
        STORED | DEFLATED => return None,
        BZIP2 => ("bzip2", "bzip2", cfg!(feature = "bzip2")),
        LZMA => ("LZMA", "lzma", cfg!(feature = "lzma")),
        ZSTD => ("Zstandard", "zstd", cfg!(feature = "zstd")),
        99 => {
            return Some(format!(
                "compression method {method} (AES encryption) is not supported"
            ))
        }
        _ => return Some(format!("compression method {method} is not supported")),
    };
    (!enabled).then(|| {
        format!("compression method {method} ({name}) needs ndnpy's `{feature}` cargo feature")
    })
}
