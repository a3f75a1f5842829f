//! The tag our codecs' bytes begin with, so they tell their own bytes from
//! those of the codecs they wrap.

/// What our codecs' bytes begin with. `N` (0x4E) is field 9 of protobuf
/// wire type 6, which does not exist, so no protobuf message of Ballista's
/// codecs starts this way and the two never mistake each other's bytes.
pub(super) const TAG: &[u8] = b"NDNPY1";

/// The bytes after [`TAG`], if `buf` starts with it.
pub(super) fn strip_tag(buf: &[u8]) -> Option<&[u8]> {
    buf.strip_prefix(TAG)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tag_is_no_protobuf_start() {
        // Wire type 6 does not exist: prost refuses the tag's first byte.
        assert_eq!(TAG[0] & 7, 6);
        assert_eq!(strip_tag(b"NDNPY1ab"), Some(&b"ab"[..]));
        assert_eq!(strip_tag(b"\x0a\x01"), None);
    }
}
