//! The decoder of `decode.rs` over compressed bytes that come from a
//! `Read` in chunks, with its output in a buffer whose first part is the
//! window: what the seek index (`seek/index.rs`) runs. Neither libdeflate
//! (whole streams only) nor flate2 (no bit positions, no preset window
//! for a raw stream resumed mid-stream) offers that.
//!
//! The input is read [`CHUNK`] bytes at a time. The decoder is held to
//! stop between symbols [`MARGIN`] bytes before the end of what has been
//! read (so that no symbol or block header it starts runs past it), and
//! is moved onto the next chunk from the exact bit where it stopped; once
//! the input has ended, it decodes to the end of what was read, and bits
//! past it are an error, as for a whole stream. Bit positions are counted
//! from the stream's first byte; output positions from its first output
//! byte.

use super::decode::{Inflater, Paused, Stop};
use super::{Bad, WINDOW};
use std::io::{self, Read};

/// Compressed bytes read at a time.
const CHUNK: usize = 256 << 10;

/// Compressed bytes kept unread past where the decoder may stop, while
/// more input may come: more than a dynamic block's header (at most 71
/// bits and 316 code lengths of at most 14 bits each, under 600 bytes) or
/// a symbol (at most 48 bits) needs, with the 8 bytes a refill loads ahead.
/// The parallel inflate keeps it too, in windows read from a file
/// (`pinflate/resolve.rs`).
pub(crate) const MARGIN: usize = 1024;

/// Output a match may write past the mark, plus the room the decoder's
/// fast loop keeps free after it.
const SLACK: usize = 258 + 512;

/// A deflate decoder reading from a `Read`.
pub(crate) struct StreamInflater<R> {
    input: R,
    /// Compressed bytes read and not yet passed: `inbuf[0]` is byte
    /// `in_base` of the stream.
    inbuf: Vec<u8>,
    in_base: u64,
    /// The input has ended: `inbuf` holds the rest of the stream.
    ended: bool,
    /// The decoder between calls, and the bit it stands at (from the
    /// stream's start).
    paused: Option<Paused>,
    bit: u64,
    /// The window (up to 32 KiB of earlier output), then the output not
    /// drained yet: `buf[..len]`; the rest is room to decode into.
    buf: Vec<u8>,
    len: usize,
    /// Output position (bytes from the stream's start) of `buf[0]`.
    out_base: u64,
}

impl<R: Read> StreamInflater<R> {
    /// A decoder at the block header at bit `bit` of the stream, reading
    /// from `input` (standing at byte `bit / 8`), after the output `window`
    /// (the up to 32 KiB before output position `out`, which is at least
    /// as long).
    pub(crate) fn at(input: R, bit: u64, window: &[u8], out: u64) -> StreamInflater<R> {
        let window = &window[window.len().saturating_sub(WINDOW)..];
        StreamInflater {
            input,
            inbuf: Vec::new(),
            in_base: bit / 8,
            ended: false,
            paused: Some(Paused::at_header()),
            bit,
            buf: window.to_vec(),
            len: window.len(),
            out_base: out.saturating_sub(window.len() as u64),
        }
    }

    /// The position of the next bit, from the stream's start: at a
    /// [`Stop::Boundary`], where the next block's header starts.
    pub(crate) fn position(&self) -> u64 {
        self.bit
    }

    /// The window, then the output not yet dropped by [`slide`].
    ///
    /// [`slide`]: StreamInflater::slide
    pub(crate) fn out(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    /// The output position of `out()[0]`.
    pub(crate) fn out_base(&self) -> u64 {
        self.out_base
    }

    /// The output position after the bytes decoded so far.
    pub(crate) fn total_out(&self) -> u64 {
        self.out_base + self.len as u64
    }

    /// Drops the output but the last 32 KiB (the window).
    pub(crate) fn slide(&mut self) {
        let keep = self.len.min(WINDOW);
        let cut = self.len - keep;
        self.buf.copy_within(cut..self.len, 0);
        self.len = keep;
        self.out_base += cut as u64;
    }

    /// Decodes until a block ends ([`Stop::Boundary`]: the next header is
    /// unread), the last block ends ([`Stop::End`]), or `out().len()`
    /// reaches `mark` ([`Stop::Full`], between symbols: a match may pass
    /// it by up to 258 bytes). At a boundary, the next call reads the
    /// next block's header first.
    pub(crate) fn run(&mut self, mark: usize) -> io::Result<Stop> {
        let room = mark.max(self.len) + SLACK;
        if self.buf.len() < room {
            self.buf.resize(room, 0);
        }
        // Taken for the call and always put back: absent only after a
        // call that panicked.
        let mut paused = self
            .paused
            .take()
            .ok_or_else(|| io::Error::other("a deflate decoder used after a panic"))?;
        // The decoder stopped for input without moving: the input held
        // fewer bytes past its stop than `fill` asks for at least (a
        // reader that gives a few bytes a call), so more are read whatever
        // is held.
        let mut stalled = false;
        let result = loop {
            if let Err(e) = self.fill(stalled) {
                break Err(e);
            }
            let bit_before = self.bit;
            let rel = self.bit - self.in_base * 8;
            let mut inflater = Inflater::resume(&self.inbuf, rel, paused);
            if !self.ended {
                inflater.stop_input_at(self.inbuf.len() - MARGIN);
            }
            let before = self.len;
            let mut step = Ok(Stop::Boundary);
            if inflater.at_boundary() {
                step = inflater.begin_block().map(|()| Stop::Full);
            }
            if step.is_ok() {
                step = inflater.run(&mut self.buf[..], &mut self.len, mark);
            }
            self.bit = self.in_base * 8 + inflater.bits.position();
            paused = inflater.pause();
            match step {
                Err(bad) => break Err(bad.into_io()),
                Ok(Stop::Full) if self.len < mark => {
                    // Stopped for input: more is read at the top, unless
                    // there is none, which cannot stop it.
                    if self.ended && self.len == before {
                        break Err(Bad::Truncated.into_io());
                    }
                    stalled = self.len == before && self.bit == bit_before;
                }
                Ok(stop) => break Ok(stop),
            }
        };
        self.paused = Some(paused);
        result
    }

    /// Reads input until [`MARGIN`] bytes past the decoder's position are
    /// held, or the input ends; drops the bytes before that position.
    /// `more`: at least one more byte is read (or the input ends), however
    /// many are held.
    fn fill(&mut self, more: bool) -> io::Result<()> {
        let byte = (self.bit / 8).saturating_sub(self.in_base) as usize;
        let held = self.inbuf.len().saturating_sub(byte);
        if self.ended || (!more && held >= MARGIN + 16) {
            return Ok(());
        }
        let byte = byte.min(self.inbuf.len());
        self.inbuf.drain(..byte);
        self.in_base += byte as u64;
        let mut have = self.inbuf.len();
        let want = if more {
            (have + 1).max(MARGIN + 16)
        } else {
            MARGIN + 16
        };
        self.inbuf.resize(have + CHUNK, 0);
        let mut result = Ok(());
        while !self.ended && have < want {
            let n = match self.input.read(&mut self.inbuf[have..]) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Ok(n) => crate::io::checked::checked_read_count(n, self.inbuf.len() - have),
                Err(e) => Err(e),
            };
            match n {
                Ok(n) => {
                    have += n;
                    self.ended = n == 0;
                }
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        self.inbuf.truncate(have);
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Block boundaries met: bit and output position.
    type Marks = Vec<(u64, u64)>;

    /// Decodes all of `stream` from its start; gives the bytes and the
    /// boundaries met.
    fn decode_all(stream: &[u8]) -> io::Result<(Vec<u8>, Marks)> {
        let mut inf = StreamInflater::at(stream, 0, &[], 0);
        let (mut out, mut marks) = (Vec::new(), Vec::new());
        loop {
            let stop = inf.run(1 << 20)?;
            match stop {
                Stop::Boundary => marks.push((inf.position(), inf.total_out())),
                Stop::Full => {}
                Stop::End => {
                    let from = out.len() - inf.out_base() as usize;
                    out.extend_from_slice(&inf.out()[from..]);
                    return Ok((out, marks));
                }
            }
            let from = out.len() - inf.out_base() as usize;
            out.extend_from_slice(&inf.out()[from..]);
            inf.slide();
        }
    }

    fn data() -> Vec<u8> {
        let mut x = 12345u32;
        (0..3_000_000u32)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                if (i / 50_000) % 3 == 0 {
                    (x >> 24) as u8
                } else {
                    ((i / 7) % 23) as u8
                }
            })
            .collect()
    }

    fn zlib(data: &[u8], level: u32) -> Vec<u8> {
        use std::io::Write;
        let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(level));
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn every_level_decodes_exactly_and_resumes_at_every_boundary() {
        let data = data();
        for level in [0, 1, 6, 9] {
            let stream = zlib(&data, level);
            let (out, marks) = decode_all(&stream).unwrap();
            assert!(out == data, "level {level}");
            // zlib-rs's level 1 may write one block for everything.
            assert!(
                level == 1 || marks.len() > 3,
                "level {level}: {} boundaries",
                marks.len()
            );
            // From any boundary with its window, the rest decodes exactly.
            for &(bit, at) in marks.iter().step_by(marks.len() / 4 + 1) {
                let at = at as usize;
                let window = &data[at.saturating_sub(WINDOW)..at];
                let byte = (bit / 8) as usize;
                let mut inf = StreamInflater::at(&stream[byte..], bit, window, at as u64);
                let mut got = Vec::new();
                loop {
                    let stop = inf.run(1 << 20).unwrap();
                    let from = at + got.len() - inf.out_base() as usize;
                    got.extend_from_slice(&inf.out()[from..]);
                    if stop == Stop::End {
                        break;
                    }
                    inf.slide();
                }
                assert!(got == data[at..], "level {level}, boundary at {at}");
            }
        }
    }

    /// A reader that gives a few bytes a call, to cut the input anywhere.
    struct Stingy<'a>(&'a [u8], usize);

    impl Read for Stingy<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.1 = self.1 * 7 % 13;
            let n = (self.1 + 1).min(buf.len()).min(self.0.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn input_cut_anywhere_decodes_the_same() {
        let data = &data()[..400_000];
        for level in [0, 1, 6, 9] {
            let stream = zlib(data, level);
            let mut inf = StreamInflater::at(Stingy(&stream, 1), 0, &[], 0);
            let mut got = Vec::new();
            let mut boundaries = 0;
            loop {
                let stop = inf.run(WINDOW + 4096).unwrap();
                let from = got.len() - inf.out_base() as usize;
                got.extend_from_slice(&inf.out()[from..]);
                match stop {
                    Stop::End => break,
                    Stop::Boundary => boundaries += 1,
                    Stop::Full => {}
                }
                inf.slide();
            }
            assert!(got == data, "level {level}");
            assert_eq!(inf.position().div_ceil(8), stream.len() as u64);
            assert!(level == 1 || boundaries > 0, "level {level}");
        }
    }

    #[test]
    fn libdeflate_streams_and_fixed_blocks_decode() {
        let data = data();
        for level in [1, 6, 12] {
            let mut c =
                libdeflater::Compressor::new(libdeflater::CompressionLvl::new(level).unwrap());
            let mut stream = vec![0u8; c.deflate_compress_bound(data.len())];
            let n = c.deflate_compress(&data, &mut stream).unwrap();
            stream.truncate(n);
            assert!(decode_all(&stream).unwrap().0 == data, "libdeflate {level}");
        }
        // A short input deflates to one fixed block.
        let small = b"abcabcabcabcabcabc hello hello hello";
        assert_eq!(decode_all(&zlib(small, 6)).unwrap().0, small);
        assert!(decode_all(&zlib(b"", 6)).unwrap().0.is_empty());
    }

    #[test]
    fn broken_streams_are_errors_never_panics() {
        let data = data();
        let stream = zlib(&data[..400_000], 6);
        assert!(decode_all(&stream[..stream.len() / 2]).is_err());
        let mut x = 7u64;
        for _ in 0..300 {
            let mut bad = stream.clone();
            for _ in 0..4 {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let at = (x >> 33) as usize % bad.len();
                bad[at] ^= 1 << ((x >> 29) & 7);
            }
            // Either an error or some output: never a panic or a hang.
            let _ = decode_all(&bad);
        }
        for len in 0..64 {
            let random: Vec<u8> = (0..len).map(|i| (i * 37 + 11) as u8).collect();
            let _ = decode_all(&random);
        }
    }
}
