//! A member decompressed whole rather than streamed: in one call for
//! archives other writers made (a large single stream, on every core
//! where there are cores: its first bytes, the `.npy` header, decoded
//! apart first, then the whole stream straight into the array's memory
//! with the header moved out of the way), or, with ndnpy's piece table, its first piece at the first
//! read (the `.npy` header and the data's first bytes) and the others on
//! every core, straight into the array when the reader asks for all the
//! data at once. Shared by deflate and Zstandard, which
//! differ only in how a piece or a whole stream decodes ([`WholeCodec`]).

use super::decode::Decode;
use crate::npz::zip::input::FileAt;
use crate::npz::zip::pieces::Pieces;
use std::io::{self, Read};
use std::mem::MaybeUninit;
use std::ops::Range;

/// How one method decodes a whole member, or pieces of one.
///
/// # Safety
///
/// `pieces` must initialise every byte of `out` when it returns `Ok`:
/// `filled` and `Head::fill` then treat `out` as initialised (`set_len`,
/// the `Decode` contract) without checking.
pub(crate) unsafe trait WholeCodec {
    /// Decodes pieces `which` of `pieces` (checked with [`Pieces::fits`]),
    /// read in order from `input`, into `out`, exactly their bytes, on up
    /// to `threads` threads; every byte of `out` initialised on success.
    /// Gives the CRC-32 state of `out`.
    fn pieces(
        &self,
        input: &mut dyn Read,
        pieces: &Pieces,
        which: Range<usize>,
        out: &mut [MaybeUninit<u8>],
        threads: usize,
    ) -> io::Result<crc32fast::Hasher>;

    /// Decodes the whole stream `compressed` into exactly `size` bytes
    /// (more or fewer is an error) and gives their CRC-32.
    fn whole(&self, compressed: &[u8], size: usize) -> io::Result<(Vec<u8>, u32)>;

    /// Whether a stream of `compressed` bytes decoding to `size` is large
    /// enough that its data is best decoded straight into the array
    /// ([`WholeCodec::whole_into`], on several threads where there are
    /// cores), its first bytes (the `.npy` header) decoded apart first
    /// ([`WholeCodec::head`]), rather than decoded into a buffer of its
    /// own and copied (a second buffer of the member's size, and a pass
    /// over it).
    fn straight_into(&self, _compressed: usize, _size: usize) -> bool {
        false
    }

    /// [`WholeCodec::whole`] into exactly `out`; gives the CRC-32. `out`
    /// holds unspecified bytes on an error.
    fn whole_into(&self, compressed: &[u8], out: &mut [u8]) -> io::Result<u32> {
        let (bytes, crc) = self.whole(compressed, out.len())?;
        out.copy_from_slice(&bytes);
        Ok(crc)
    }

    /// Whether [`WholeCodec::whole_into_at`] reads a stream of
    /// `compressed` bytes decoding to `size` from the file a window at a
    /// time as it decodes, so that the member need not be read into
    /// memory first.
    fn reads_windows(&self, _compressed: usize, _size: usize) -> bool {
        false
    }

    /// [`WholeCodec::whole_into`] of the `len` compressed bytes at `at` in
    /// the archive file (fewer where the file ends: then the stream is
    /// cut short).
    fn whole_into_at(&self, at: &FileAt, len: usize, out: &mut [u8]) -> io::Result<u32> {
        self.whole_into(&read_member(at, len)?, out)
    }

    /// The first `len` bytes the stream `compressed` decodes to (fewer if
    /// it ends first), decoded on this thread without the rest. Needed by
    /// every codec whose [`WholeCodec::straight_into`] can say yes.
    fn head(&self, _compressed: &[u8], _len: usize) -> io::Result<Vec<u8>> {
        Err(io::Error::other(
            "internal error: this codec decodes no head apart",
        ))
    }
}

/// Bytes of a stream decoded on several threads that are decoded apart
/// first, for the `.npy` header (NumPy's are 128 bytes; 10 000 is the
/// default limit).
const HEAD: usize = 64 << 10;

/// Compressed bytes read for the head when the rest is read from the file
/// as it is decoded ([`WholeCodec::reads_windows`]): more than deflate
/// needs for [`HEAD`] bytes, stored or not, unless it pads with empty
/// blocks; a shorter head is no error (the header then reads on into the
/// whole member, decoded into a buffer of its own).
const HEAD_INPUT: usize = 256 << 10;

/// The `len` compressed bytes at `at` (fewer only where the file ends),
/// read by position on every core into one allocation of fresh pages: not
/// `read_to_end`, which zeroes its room itself first (a second pass over
/// hundreds of MiB, before any decoding can start). Still an error, not an
/// abort, if memory cannot hold them.
pub(crate) fn read_member(at: &FileAt, len: usize) -> io::Result<Vec<u8>> {
    let mut compressed = crate::npz::compressed::fresh(len)?;
    let got = at.read(&mut compressed)?;
    compressed.truncate(got);
    Ok(compressed)
}

/// [`read_member`] through the member's stream, on this thread.
fn read_stream(raw: &mut impl Read, len: usize) -> io::Result<Vec<u8>> {
    let mut compressed = crate::npz::compressed::fresh(len)?;
    let got = crate::io::checked::read_full(raw, &mut compressed)?;
    compressed.truncate(got);
    Ok(compressed)
}

/// Whether a member of `size` bytes (`compressed` in the archive) is
/// decompressed whole: large enough for it to pay, at most `limit`, and
/// not claiming more than the method can expand `compressed` bytes to
/// (`ratio`), so that the declared size sizes an allocation only when it
/// could be true.
pub(crate) fn decode_whole(size: u64, compressed: u64, limit: u64, ratio: u64) -> bool {
    (1 << 16..=limit).contains(&size) && size <= compressed.saturating_mul(ratio) + (1 << 10)
}

/// A member to decompress whole: its compressed bytes still in the
/// archive, then (with a piece table) its first piece decoded, then its
/// bytes.
pub(crate) enum Whole<T: Read, C: WholeCodec> {
    /// The compressed bytes, the piece table, the declared size, the
    /// compressed size (which lies inside the archive), the codec, and
    /// where the compressed bytes start in the archive file if they can be
    /// read by position.
    Pending(T, Option<Pieces>, u64, u64, C, Option<FileAt>),
    Head(Box<Head<T, C>>),
    /// A large single stream (on several threads where there are cores):
    /// its compressed bytes held or left in the file, its first bytes
    /// decoded apart and being read.
    Stream(Box<Stream<C>>),
    Ready(io::Cursor<Vec<u8>>),
    /// A read failed (corrupt data, a CRC mismatch): every later read
    /// fails too, rather than giving bytes that were not checked.
    Failed,
}

/// A member with a piece table whose first piece is decoded and being
/// read; the other pieces wait, compressed, for a destination: the array
/// itself when the reader asks for all the data at once
/// ([`Decode::fill_whole`]), else a buffer of their own.
pub(crate) struct Head<T: Read, C: WholeCodec> {
    raw: T,
    pieces: Pieces,
    first: io::Cursor<Vec<u8>>,
    crc: crc32fast::Hasher,
    size: u64,
    codec: C,
}

/// A large member that is one stream (no piece table), to be decoded
/// (on several threads where there are cores) straight into the array when the reader asks for the rest at
/// once, with room for the bytes already read ([`Decode::whole_room`]),
/// else into a buffer of its own.
pub(crate) struct Stream<C: WholeCodec> {
    compressed: Held,
    /// The stream's first bytes (up to [`HEAD`]), decoded apart.
    head: io::Cursor<Vec<u8>>,
    size: u64,
    codec: C,
}

/// A large stream's compressed bytes.
enum Held {
    /// Read into memory.
    Bytes(Vec<u8>),
    /// Left in the archive file (this many bytes at it), for the decoder
    /// to read as it goes ([`WholeCodec::reads_windows`]).
    File(FileAt, usize),
}

impl<C: WholeCodec> Stream<C> {
    /// The whole stream decoded into a buffer of its own.
    fn decode(&self) -> io::Result<(Vec<u8>, u32)> {
        let size = self.size as usize;
        match &self.compressed {
            Held::Bytes(bytes) => self.codec.whole(bytes, size),
            Held::File(at, len) => self.codec.whole(&read_member(at, *len)?, size),
        }
    }

    /// The whole stream decoded into `out`, exactly its size.
    fn decode_into(&self, out: &mut [u8]) -> io::Result<u32> {
        match &self.compressed {
            Held::Bytes(bytes) => self.codec.whole_into(bytes, out),
            Held::File(at, len) => self.codec.whole_into_at(at, *len, out),
        }
    }

    /// Bytes read so far, all from the head.
    fn read_so_far(&self) -> usize {
        self.head.position() as usize
    }

    /// Checks that the whole stream's decoding `bytes` begins with the
    /// bytes already handed out from the head (decoded apart, so not
    /// covered by the CRC-32 of the whole).
    fn same_start(&self, bytes: &[u8]) -> io::Result<()> {
        let n = self.read_so_far();
        match bytes.get(..n) == Some(&self.head.get_ref()[..n]) {
            true => Ok(()),
            false => Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "the member's first bytes decode differently apart and in the whole stream",
            )),
        }
    }
}

impl<T: Read, C: WholeCodec> Whole<T, C> {
    /// A member of `size` bytes whose `compressed` bytes `raw` gives, with
    /// its piece table if it has one that fits.
    pub(crate) fn new(
        raw: T,
        pieces: Option<Pieces>,
        size: u64,
        compressed: u64,
        codec: C,
    ) -> Self {
        Whole::Pending(raw, pieces, size, compressed, codec, None)
    }

    /// The same, its compressed bytes read by position from `at` (when
    /// given) rather than from `raw`, on every core.
    pub(crate) fn at(mut self, at: Option<FileAt>) -> Self {
        if let Whole::Pending(.., file) = &mut self {
            *file = at;
        }
        self
    }

    /// Reads on, decoding the member first (its first piece only, when it
    /// has a piece table); gives its CRC-32 once all of it is decoded.
    fn read_on(&mut self, buf: &mut [u8]) -> io::Result<(usize, Option<u32>)> {
        let mut crc = None;
        if let Whole::Pending(raw, pieces, size, compressed_len, codec, at) = self {
            // The compressed bytes lie inside the archive (the directory
            // checked), and the size is at most the method's largest
            // expansion of them (`decode_whole`).
            let size = *size;
            match pieces.take() {
                // More than one piece (the guard); `fits` checked that the
                // pieces add up to the compressed size.
                Some(pieces) if pieces.lengths.len() > 1 => {
                    let (first, crc) = filled(pieces.block as usize, |out| {
                        codec.pieces(raw, &pieces, 0..1, out, 1)
                    })?;
                    let Whole::Pending(raw, _, _, _, codec, _) =
                        std::mem::replace(self, Whole::Failed)
                    else {
                        unreachable!("pending above");
                    };
                    *self = Whole::Head(Box::new(Head {
                        raw,
                        pieces,
                        first: io::Cursor::new(first),
                        crc,
                        size,
                        codec,
                    }));
                }
                _ => {
                    let len = usize::try_from(*compressed_len).unwrap_or(usize::MAX);
                    // The compressed bytes: left in the file for the
                    // decoder to read as it goes (but for the first ones,
                    // for the head), or read whole.
                    let (held, first) = match at.take() {
                        Some(at) if codec.reads_windows(len, size as usize) => {
                            let first = read_member(&at, len.min(HEAD_INPUT))?;
                            (Held::File(at, len), first)
                        }
                        Some(at) => (Held::Bytes(read_member(&at, len)?), Vec::new()),
                        None => (Held::Bytes(read_stream(raw, len)?), Vec::new()),
                    };
                    let straight = match &held {
                        Held::Bytes(compressed) => {
                            codec.straight_into(compressed.len(), size as usize)
                        }
                        Held::File(..) => true,
                    };
                    match held {
                        Held::Bytes(compressed) if !straight => {
                            let (bytes, sum) = codec.whole(&compressed, size as usize)?;
                            crc = Some(sum);
                            *self = Whole::Ready(io::Cursor::new(bytes));
                        }
                        held => {
                            let first = match &held {
                                Held::Bytes(compressed) => &compressed[..],
                                Held::File(..) => &first[..],
                            };
                            let head = codec.head(first, HEAD.min(size as usize))?;
                            let Whole::Pending(_, _, _, _, codec, _) =
                                std::mem::replace(self, Whole::Failed)
                            else {
                                unreachable!("pending above");
                            };
                            *self = Whole::Stream(Box::new(Stream {
                                compressed: held,
                                head: io::Cursor::new(head),
                                size,
                                codec,
                            }));
                        }
                    }
                }
            }
        }
        if let Whole::Stream(stream) = self {
            let left = stream.head.get_ref().len() - stream.read_so_far();
            if left > 0 {
                return Ok((stream.head.read(buf)?, None));
            }
            // Read on past the head, a piece at a time: the rest goes to a
            // buffer of its own, and reading goes on from there.
            let (bytes, sum) = stream.decode()?;
            stream.same_start(&bytes)?;
            crc = Some(sum);
            let mut ready = io::Cursor::new(bytes);
            ready.set_position(stream.read_so_far() as u64);
            *self = Whole::Ready(ready);
        }
        if let Whole::Head(head) = self {
            if head.first_left() > 0 {
                return Ok((head.first.read(buf)?, None));
            }
            // Read on in pieces: the rest goes to a buffer of its own.
            let len = (head.size - head.pieces.block as u64) as usize;
            let (rest, sum) = filled(len, |out| head.decode_rest(out))?;
            crc = Some(sum);
            *self = Whole::Ready(io::Cursor::new(rest));
        }
        match self {
            Whole::Ready(cursor) => Ok((cursor.read(buf)?, crc)),
            Whole::Failed => Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "an earlier read of this member failed",
            )),
            _ => unreachable!("decoded above"),
        }
    }
}

// SAFETY: `fill_whole` returns `Ok` only from `Head::fill`, which zeroes
// the first part before copying into it and returns only after
// `WholeCodec::pieces` initialised every byte of the rest.
unsafe impl<T: Read, C: WholeCodec> Decode for Whole<T, C> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<(usize, Option<u32>)> {
        let result = self.read_on(buf);
        if result.is_err() {
            // Never the bytes of a failed member afterwards.
            *self = Whole::Failed;
        }
        result
    }

    fn checks_crc(&self) -> bool {
        true
    }

    fn whole(&self) -> bool {
        true
    }

    fn fills_whole(&self, _len: u64) -> bool {
        matches!(self, Whole::Head(_))
    }

    fn whole_room(&self, len: u64) -> Option<usize> {
        match self {
            Whole::Stream(s) if s.read_so_far() as u64 + len == s.size => Some(s.read_so_far()),
            _ => None,
        }
    }

    fn fill_whole_in(&mut self, dst: &mut [u8], len: usize) -> io::Result<u32> {
        // Whatever happens, the stream is used up: later reads give
        // nothing, or the error again.
        let Whole::Stream(stream) = std::mem::replace(self, Whole::Failed) else {
            return Err(io::Error::other("internal error: not a stream's head"));
        };
        let done = stream.read_so_far();
        let size = stream.size as usize;
        if done + len != size || dst.len() < size {
            return Err(io::Error::other("internal error: no room for the stream"));
        }
        let crc = stream.decode_into(&mut dst[..size])?;
        stream.same_start(dst)?;
        drop(stream);
        // The bytes read already (the header) are dropped; the data moves
        // to the front, where the array starts.
        dst.copy_within(done..size, 0);
        *self = Whole::Ready(io::Cursor::new(Vec::new()));
        Ok(crc)
    }

    fn fill_whole(&mut self, dst: &mut [MaybeUninit<u8>]) -> io::Result<u32> {
        let Whole::Head(head) = self else {
            return Err(io::Error::other("internal error: not at the first piece"));
        };
        let result = head.fill(dst);
        // Whatever happened, the first piece is used up: later reads give
        // nothing, or the error again.
        *self = match result {
            Ok(_) => Whole::Ready(io::Cursor::new(Vec::new())),
            Err(_) => Whole::Failed,
        };
        result
    }
}

impl<T: Read, C: WholeCodec> Head<T, C> {
    /// Bytes of the first piece not read yet.
    fn first_left(&self) -> usize {
        self.first.get_ref().len() - self.first.position() as usize
    }

    /// Decodes the pieces after the first into `rest` (exactly their
    /// bytes) on every core; gives the member's CRC-32.
    fn decode_rest(&mut self, rest: &mut [MaybeUninit<u8>]) -> io::Result<u32> {
        let threads = crate::exec::cores();
        let count = self.pieces.lengths.len();
        let tail = self
            .codec
            .pieces(&mut self.raw, &self.pieces, 1..count, rest, threads)?;
        let mut crc = self.crc.clone();
        crc.combine(&tail);
        Ok(crc.finalize())
    }

    /// Fills `dst`, exactly the bytes left, with what is left of the first
    /// piece and then the other pieces, decoded straight into it; gives
    /// the member's CRC-32.
    fn fill(&mut self, dst: &mut [MaybeUninit<u8>]) -> io::Result<u32> {
        let (head, rest) = dst.split_at_mut(self.first_left());
        head.fill(MaybeUninit::new(0));
        // SAFETY: every byte of `head` was just initialised to zero;
        // `MaybeUninit<u8>` has the layout of `u8`.
        let head: &mut [u8] =
            unsafe { std::slice::from_raw_parts_mut(head.as_mut_ptr().cast(), head.len()) };
        self.first.read_exact(head)?;
        self.decode_rest(rest)
    }
}

/// A buffer of `len` bytes filled by `fill` (which initialises all of it
/// on success, as [`WholeCodec::pieces`] does), and what `fill` gave.
fn filled<X>(
    len: usize,
    fill: impl FnOnce(&mut [MaybeUninit<u8>]) -> io::Result<X>,
) -> io::Result<(Vec<u8>, X)> {
    let mut out = Vec::new();
    out.try_reserve_exact(len)
        .map_err(|_| io::Error::from(io::ErrorKind::OutOfMemory))?;
    let x = fill(&mut out.spare_capacity_mut()[..len])?;
    // SAFETY: `fill` succeeded, so it initialised all `len` bytes.
    unsafe { out.set_len(len) };
    Ok((out, x))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A codec whose "stream" decodes to `data` (any compressed bytes), on
    /// several threads as far as `Whole` knows; its head decoded apart can
    /// be made to differ from the whole in one byte.
    struct Fake {
        data: Vec<u8>,
        bad_head: bool,
    }

    // SAFETY: `pieces` never succeeds.
    unsafe impl WholeCodec for Fake {
        fn pieces(
            &self,
            _: &mut dyn Read,
            _: &Pieces,
            _: Range<usize>,
            _: &mut [MaybeUninit<u8>],
            _: usize,
        ) -> io::Result<crc32fast::Hasher> {
            Err(io::Error::other("no pieces"))
        }

        fn whole(&self, _: &[u8], size: usize) -> io::Result<(Vec<u8>, u32)> {
            assert_eq!(size, self.data.len());
            Ok((self.data.clone(), crc32fast::hash(&self.data)))
        }

        fn straight_into(&self, _: usize, _: usize) -> bool {
            true
        }

        fn head(&self, _: &[u8], len: usize) -> io::Result<Vec<u8>> {
            let mut head = self.data[..len].to_vec();
            if self.bad_head {
                head[len / 2] ^= 1;
            }
            Ok(head)
        }
    }

    fn data() -> Vec<u8> {
        (0..100_000u32).map(|i| (i * 7 % 251) as u8).collect()
    }

    fn stream(bad_head: bool) -> Whole<io::Cursor<Vec<u8>>, Fake> {
        let data = data();
        let size = data.len() as u64;
        let codec = Fake { data, bad_head };
        Whole::new(io::Cursor::new(vec![0; 16]), None, size, 16, codec)
    }

    /// Reads `n` bytes through `Decode::read`.
    fn read_some(whole: &mut Whole<io::Cursor<Vec<u8>>, Fake>, n: usize) -> io::Result<Vec<u8>> {
        let mut out = vec![0; n];
        let mut filled = 0;
        while filled < n {
            match whole.read(&mut out[filled..])? {
                (0, _) => break,
                (k, _) => filled += k,
            }
        }
        out.truncate(filled);
        Ok(out)
    }

    #[test]
    fn the_rest_is_decoded_into_the_room_after_any_part_of_the_head() {
        let data = data();
        // A reader always reads the header first (at least its magic).
        for read_first in [1, 10, 128, 4096, HEAD - 1, HEAD] {
            let mut whole = stream(false);
            assert_eq!(
                read_some(&mut whole, read_first).unwrap(),
                data[..read_first]
            );
            let len = data.len() - read_first;
            assert_eq!(whole.whole_room(len as u64), Some(read_first));
            assert_eq!(whole.whole_room(len as u64 + 1), None);
            let mut dst = vec![0xAA; data.len() + read_first];
            let crc = whole.fill_whole_in(&mut dst, len).unwrap();
            assert_eq!(crc, crc32fast::hash(&data));
            assert!(dst[..len] == data[read_first..], "after {read_first} bytes");
            assert!(read_some(&mut whole, 1).unwrap().is_empty());
        }
    }

    #[test]
    fn a_head_that_the_whole_contradicts_is_an_error_both_ways() {
        // Straight into the room.
        let mut whole = stream(true);
        read_some(&mut whole, HEAD).unwrap();
        let len = data().len() - HEAD;
        let mut dst = vec![0; data().len() + HEAD];
        let err = whole.fill_whole_in(&mut dst, len).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData, "{err}");
        assert!(whole.read(&mut [0; 8]).is_err(), "failed for good");
        // Read on past the head into a buffer of its own.
        let mut whole = stream(true);
        let err = read_some(&mut whole, data().len()).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData, "{err}");
    }
}
