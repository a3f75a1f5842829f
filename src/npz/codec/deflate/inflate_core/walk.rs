//! A walk over a whole stream's blocks that decodes every symbol (so that
//! every code and distance is checked) but writes no output: where the
//! last block starts and ends, which the writer's `unfinalize`
//! (`compress.rs`) needs to turn a stream into a piece that another
//! continues.

use super::decode::{Inflater, Stop};
use super::{Bad, Tables};

/// Where the complete deflate stream `stream`'s last block starts and
/// where it ends (bit positions from its start).
pub(crate) fn last_block(stream: &[u8]) -> Result<(u64, u64), Bad> {
    // Output symbols of no size: as many as any stream can give, in no
    // memory.
    let mut out = [(); usize::MAX];
    let mut pos = 0;
    let mut inflater = Inflater::at_header(stream, 0, Tables::new());
    let mut start = 0;
    loop {
        if inflater.at_boundary() {
            start = inflater.bits.position();
            inflater.begin_block()?;
        }
        match inflater.run(&mut out[..], &mut pos, usize::MAX)? {
            Stop::Boundary => {}
            Stop::End => return Ok((start, inflater.bits.position())),
            // Only at `usize::MAX` symbols, which no input reaches.
            Stop::Full => return Err(Bad::TooLong),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn zlib(data: &[u8], level: u32) -> Vec<u8> {
        let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(level));
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn the_last_block_is_found_in_every_stream() {
        let data: Vec<u8> = (0..300_000u32)
            .map(|i| ((i / 7) % 23) as u8 ^ (i.wrapping_mul(2_654_435_761) >> 29) as u8)
            .collect();
        for level in [0, 1, 6, 9] {
            let stream = zlib(&data, level);
            let (start, end) = last_block(&stream).unwrap();
            assert_eq!(end.div_ceil(8), stream.len() as u64, "level {level}");
            // The last block's header has BFINAL set.
            assert_eq!(stream[(start / 8) as usize] >> (start % 8) & 1, 1);
            assert!(last_block(&stream[..stream.len() / 2]).is_err());
            assert_eq!(last_block(&zlib(&[], level)).unwrap().0, 0);
        }
        assert!(last_block(&[]).is_err());
        // A distance before the stream's start is refused, as in every
        // other use of the decoder: a fixed block, length 3 at distance 1.
        assert!(last_block(&[0x03, 0x02, 0x00]).is_err());
    }
}
