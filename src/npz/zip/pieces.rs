//! The piece table ndnpy's writer records for a member compressed in
//! independent pieces (deflate's 1 MiB blocks, Zstandard's segments): a
//! zip extra field of its own, read by the directory and written by the
//! zip writer, used by every reader of pieces. Apart from the codecs so
//! that they and the container can all import it.

/// The extra field id of the piece table: "nd" in the file.
pub(crate) const BLOCKS_ID: u16 = u16::from_le_bytes(*b"nd");

/// The piece table of a member: uncompressed bytes per piece (all but the
/// last), and each piece's compressed length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pieces {
    pub(crate) block: u32,
    pub(crate) lengths: Vec<u32>,
}

impl Pieces {
    /// The extra field's data (without id and size), or `None` when the
    /// table does not fit in one extra field.
    pub(crate) fn encode(&self) -> Option<Vec<u8>> {
        let len = 4 + 4 * self.lengths.len();
        if len > u16::MAX as usize - 64 {
            return None;
        }
        let mut out = Vec::with_capacity(len);
        out.extend_from_slice(&self.block.to_le_bytes());
        for l in &self.lengths {
            out.extend_from_slice(&l.to_le_bytes());
        }
        Some(out)
    }

    /// Reads a table back; `None` if malformed.
    pub(crate) fn decode(data: &[u8]) -> Option<Pieces> {
        if data.len() < 8 || !data.len().is_multiple_of(4) {
            return None;
        }
        let word = |i: usize| u32::from_le_bytes(data[4 * i..4 * i + 4].try_into().expect("4"));
        Some(Pieces {
            block: word(0),
            lengths: (1..data.len() / 4).map(word).collect(),
        })
    }

    /// Whether the table describes a member of `size` bytes deflated into
    /// `compressed` bytes.
    pub(crate) fn fits(&self, size: u64, compressed: u64) -> bool {
        let total: u64 = self.lengths.iter().map(|&l| l as u64).sum();
        self.block > 0
            && total == compressed
            && size.div_ceil(self.block as u64) == self.lengths.len() as u64
            && self.lengths.iter().all(|&l| l > 0)
    }
}
