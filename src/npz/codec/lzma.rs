//! LZMA (method 14), as Python's `zipfile` writes it (`ZIP_LZMA`): a
//! 4-byte header (the LZMA SDK's version, then the size of the properties,
//! 5), the LZMA1 properties (`lc`/`lp`/`pb` in one byte, the dictionary
//! size), then raw LZMA1 data, with or without an end marker (zip flag
//! bit 1 says which; the declared size ends the member either way).
//! Decoded as it is read by `lzma-rust2` (pure Rust).
//!
//! The decoder allocates its dictionary whole, zeroed: the size the
//! properties claim, capped by the declared size and by the most that the
//! member's compressed bytes can expand to ([`MAX_RATIO`]), so a tiny
//! member claiming a gigabyte dictionary costs memory in proportion to its
//! own bytes. No valid stream is refused by the cap: a match never reaches
//! further back than the bytes already decoded.

use super::decode::{corrupt, Decode, Raw};
use std::io::{self, BufRead, BufReader, Read};

/// LZMA's largest expansion, about 8 400 to 1 (a run of 273-byte repeated
/// matches at the range coder's highest probability costs about a quarter
/// of a bit each), rounded up to a power of two.
const MAX_RATIO: u64 = 1 << 14;

/// zipfile's header: version (2 bytes), properties size (2), properties.
const HEADER: usize = 4;
const PROPERTIES: usize = 5;

/// The compressed bytes are read through a buffer of this size: the
/// decoder takes them a byte at a time.
const BUFFER: usize = 64 << 10;

/// An LZMA member streamed on this thread.
pub(super) struct Lzma<'a, R: BufRead> {
    state: State<'a, R>,
    size: u64,
    compressed: u64,
}

enum State<'a, R: BufRead> {
    /// The header is not read yet.
    Start(Raw<'a, R>),
    Decoding(Box<lzma_rust2::LzmaReader<BufReader<Raw<'a, R>>>>),
    /// Failed to start (the error was given): reads give nothing more.
    Done,
}

impl<'a, R: BufRead> Lzma<'a, R> {
    /// The member of `size` declared bytes, `compressed` in the archive.
    pub(super) fn new(raw: Raw<'a, R>, size: u64, compressed: u64) -> Self {
        Lzma {
            state: State::Start(raw),
            size,
            compressed,
        }
    }

    /// Reads zipfile's header and starts the decoder.
    fn start(
        &self,
        mut raw: Raw<'a, R>,
    ) -> io::Result<lzma_rust2::LzmaReader<BufReader<Raw<'a, R>>>> {
        let mut header = [0u8; HEADER + PROPERTIES];
        raw.read_exact(&mut header[..HEADER])
            .map_err(|_| corrupt("its LZMA header is cut short"))?;
        let len = u16::from_le_bytes([header[2], header[3]]) as usize;
        if len != PROPERTIES {
            return Err(corrupt(format!(
                "its LZMA properties take {len} bytes, not {PROPERTIES}"
            )));
        }
        raw.read_exact(&mut header[HEADER..])
            .map_err(|_| corrupt("its LZMA header is cut short"))?;
        let props = header[HEADER];
        let claimed = u32::from_le_bytes(header[HEADER + 1..].try_into().expect("4 bytes"));
        let data = self.compressed.saturating_sub((HEADER + PROPERTIES) as u64);
        let cap = data.saturating_mul(MAX_RATIO).saturating_add(1 << 12);
        let dict = (claimed as u64).min(cap).min(self.size.max(1 << 12)) as u32;
        // The size is left unknown: the stream then ends at its end marker
        // if it has one (zip flag bit 1), and the member reader stops at
        // the declared size either way, as Python's raw decoder does.
        lzma_rust2::LzmaReader::new_with_props(
            BufReader::with_capacity(BUFFER, raw),
            u64::MAX,
            props,
            dict,
            None,
        )
        .map_err(|e| corrupt(format!("corrupt LZMA properties ({e})")))
    }
}

// SAFETY: `fill_whole` is the trait's own, which never succeeds.
unsafe impl<R: BufRead> Decode for Lzma<'_, R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<(usize, Option<u32>)> {
        if let State::Start(_) = self.state {
            let State::Start(raw) = std::mem::replace(&mut self.state, State::Done) else {
                unreachable!("matched above");
            };
            self.state = State::Decoding(Box::new(self.start(raw)?));
        }
        match &mut self.state {
            State::Decoding(reader) => match reader.read(out) {
                Ok(n) => Ok((n, None)),
                // The archive's own read errors pass as they are; the
                // decoder's are corrupt data.
                Err(e) if e.kind() == io::ErrorKind::Interrupted => Err(e),
                Err(e)
                    if e.get_ref()
                        .is_some_and(|inner| inner.is::<crate::error::Error>()) =>
                {
                    Err(e)
                }
                Err(e) => Err(corrupt(format!("corrupt LZMA data ({e})"))),
            },
            _ => Ok((0, None)),
        }
    }
}
