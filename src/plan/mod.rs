//! Conversion plans: how items of a file's dtype become items of a layout
//! element's dtype.
//!
//! A plan is compiled once per array by walking both dtypes side by side,
//! matching record fields by name: a short list of byte moves (source
//! offset, destination offset, length, swap unit) plus the offsets of `bool`
//! bytes to normalise. Adjacent moves merge, so a scalar (or a record whose
//! file layout is its own) is a single move. The *identity* plan (same size,
//! same offsets, no swaps) is the only one a view accepts; an *in-place* plan
//! (same offsets, some swaps) is run over the destination buffer after one
//! read; any other plan copies each item field by field from a cache-sized
//! scratch buffer into zeroed memory.
//!
//! Layer 2. May use: `crate::error` and `crate::format` (the dtype model).
//! Knows nothing of element types, arrays or I/O: `support` says which
//! dtypes some element type holds without naming the types.

pub(crate) mod support;

use crate::error::{Error, Result};
use crate::format::dtype::{ByteOrder, DType, Field, Kind, Scalar};
use std::collections::HashMap;

/// One byte move: `len` bytes from `src` to `dst` (offsets within an item),
/// reversing each `swap`-byte group on the way (0: plain copy).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Move {
    pub(crate) src: usize,
    pub(crate) dst: usize,
    pub(crate) len: usize,
    pub(crate) swap: usize,
}

/// A compiled conversion from one dtype's items to another's.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    src_size: usize,
    dst_size: usize,
    moves: Vec<Move>,
    /// Runs `(offset, len)` of destination bytes that hold `bool`s.
    bools: Vec<(usize, usize)>,
    /// Runs of destination bytes that are the padding of x86-64 long
    /// doubles, zeroed (NumPy writes whatever memory held there).
    pads: Vec<(usize, usize)>,
}

/// Why two dtypes do not match, and where.
struct Mismatch {
    path: String,
    src: String,
    dst: String,
}

impl Plan {
    /// Compiles the plan converting items of `src` (a file's dtype) into
    /// items of `dst` (an element's dtype). `type_name` names the Rust type
    /// in the error.
    pub(crate) fn compile(src: &DType, dst: &DType, type_name: &str) -> Result<Plan> {
        let src_size = src.itemsize().ok_or_else(|| too_big(src))?;
        let dst_size = dst.itemsize().ok_or_else(|| too_big(dst))?;
        let mut plan = Plan {
            src_size,
            dst_size,
            moves: Vec::new(),
            bools: Vec::new(),
            pads: Vec::new(),
        };
        match plan.walk(src, 0, dst, 0, &mut String::new()) {
            Ok(()) => Ok(plan),
            Err(m) if m.path.is_empty() => {
                support::check_supported(src)?;
                Err(Error::DTypeMismatch {
                    expected: format!("{type_name} (`{dst}`){}", support::fits_hint(src)),
                    found: src.to_string(),
                })
            }
            Err(m) => Err(Error::DTypeMismatch {
                expected: format!(
                    "{type_name} (`{}`), whose field `{}` is `{}` (the file has {})",
                    dst.descr(),
                    m.path,
                    m.dst,
                    if m.src.is_empty() {
                        "no such field".to_owned()
                    } else {
                        format!("`{}`", m.src)
                    }
                ),
                found: src.to_string(),
            }),
        }
    }

    /// The plan that writes items of `dtype` from memory laid out as
    /// `dtype`: every field byte once, padding untouched.
    pub(crate) fn mirror(dtype: &DType) -> Result<Plan> {
        Plan::compile(dtype, dtype, "")
    }

    fn walk(
        &mut self,
        src: &DType,
        so: usize,
        dst: &DType,
        dof: usize,
        path: &mut String,
    ) -> std::result::Result<(), Mismatch> {
        let mismatch = |path: &str| Mismatch {
            path: path.to_owned(),
            src: src.to_string(),
            dst: dst.to_string(),
        };
        match (src, dst) {
            (DType::Scalar(s), DType::Scalar(d)) => {
                if !compatible(s, d) {
                    return Err(mismatch(path));
                }
                self.push(so, dof, d.size, swap_unit(s, d));
                if d.kind == Kind::Bool {
                    self.push_bool(dof, d.size);
                }
                // The 80-bit value in each 16 bytes, then 6 padding bytes.
                match (d.kind, d.size) {
                    (Kind::Float, 16) => self.pads.push((dof + 10, 6)),
                    (Kind::Complex, 32) => {
                        self.pads.push((dof + 10, 6));
                        self.pads.push((dof + 26, 6));
                    }
                    _ => {}
                }
                Ok(())
            }
            (DType::Record(sf), DType::Record(df)) => {
                let mut by_name: HashMap<&str, (usize, &DType)> = HashMap::new();
                let mut offset = so;
                for f in sf {
                    if !f.name.is_empty() {
                        by_name.insert(&f.name, (offset, &f.dtype));
                    }
                    offset += f.dtype.itemsize().unwrap_or(0);
                }
                let mut offset = dof;
                for f in df {
                    let size = f.dtype.itemsize().unwrap_or(0);
                    if is_named(f) {
                        let len = path.len();
                        if !path.is_empty() {
                            path.push('.');
                        }
                        path.push_str(&f.name);
                        match by_name.get(f.name.as_str()) {
                            Some(&(at, sd)) => self.walk(sd, at, &f.dtype, offset, path)?,
                            None => {
                                return Err(Mismatch {
                                    path: path.clone(),
                                    src: String::new(),
                                    dst: f.dtype.to_string(),
                                })
                            }
                        }
                        path.truncate(len);
                    }
                    offset += size;
                }
                Ok(())
            }
            (DType::SubArray(si, ss), DType::SubArray(di, ds)) if ss == ds => {
                let count: usize = ds.iter().product();
                let s_size = si.itemsize().unwrap_or(0);
                let d_size = di.itemsize().unwrap_or(0);
                if let (DType::Scalar(s), DType::Scalar(d)) = (&**si, &**di) {
                    // One move for the whole block: no per-item walk, so a
                    // huge claimed sub-array costs nothing here.
                    if !compatible(s, d) {
                        return Err(mismatch(path));
                    }
                    self.push(so, dof, d_size * count, swap_unit(s, d));
                    if d.kind == Kind::Bool {
                        self.push_bool(dof, d_size * count);
                    }
                    if matches!((d.kind, d.size), (Kind::Float, 16) | (Kind::Complex, 32)) {
                        // Long doubles: their padding runs, one per value.
                        let per = d.size / 16;
                        if count.saturating_mul(per).saturating_add(self.pads.len()) > MAX_MOVES {
                            return Err(Mismatch {
                                path: path.clone(),
                                src: format!("{src} (too many long doubles to convert)"),
                                dst: dst.to_string(),
                            });
                        }
                        for i in 0..count * per {
                            self.pads.push((dof + i * 16 + 10, 6));
                        }
                    }
                    return Ok(());
                }
                // Compile one item, then repeat its moves: a huge claimed
                // sub-array of records must not cost a walk per item.
                let mut item = Plan {
                    src_size: s_size,
                    dst_size: d_size,
                    moves: Vec::new(),
                    bools: Vec::new(),
                    pads: Vec::new(),
                };
                item.walk(si, 0, di, 0, path)?;
                if let [m] = item.moves.as_slice() {
                    let whole = m.src == 0 && m.dst == 0 && m.len == s_size && m.len == d_size;
                    let bools_whole = match item.bools.as_slice() {
                        [] => Some(false),
                        [(0, len)] if *len == d_size => Some(true),
                        _ => None,
                    };
                    if let (true, Some(all_bool), true) = (whole, bools_whole, item.pads.is_empty())
                    {
                        // Whole items move as one block.
                        self.push(so, dof, d_size * count, m.swap);
                        if all_bool {
                            self.push_bool(dof, d_size * count);
                        }
                        return Ok(());
                    }
                }
                let total =
                    count.saturating_mul(item.moves.len() + item.bools.len() + item.pads.len());
                if self.moves.len().saturating_add(total) > MAX_MOVES {
                    return Err(Mismatch {
                        path: path.clone(),
                        src: format!(
                            "{src} (too many fields to convert: more than {MAX_MOVES} moves)"
                        ),
                        dst: dst.to_string(),
                    });
                }
                for i in 0..count {
                    for m in &item.moves {
                        self.push(
                            so + i * s_size + m.src,
                            dof + i * d_size + m.dst,
                            m.len,
                            m.swap,
                        );
                    }
                    for &(at, len) in &item.bools {
                        self.push_bool(dof + i * d_size + at, len);
                    }
                    for &(at, len) in &item.pads {
                        self.pads.push((dof + i * d_size + at, len));
                    }
                }
                Ok(())
            }
            _ => Err(mismatch(path)),
        }
    }

    fn push(&mut self, src: usize, dst: usize, len: usize, swap: usize) {
        if len == 0 {
            return;
        }
        if let Some(last) = self.moves.last_mut() {
            if last.src + last.len == src && last.dst + last.len == dst && last.swap == swap {
                last.len += len;
                return;
            }
        }
        self.moves.push(Move {
            src,
            dst,
            len,
            swap,
        });
    }

    fn push_bool(&mut self, offset: usize, len: usize) {
        if len == 0 {
            return;
        }
        if let Some(last) = self.bools.last_mut() {
            if last.0 + last.1 == offset {
                last.1 += len;
                return;
            }
        }
        self.bools.push((offset, len));
    }

    /// Size of a source item in bytes.
    pub(crate) fn src_size(&self) -> usize {
        self.src_size
    }

    /// Size of a destination item in bytes.
    pub(crate) fn dst_size(&self) -> usize {
        self.dst_size
    }

    /// Whether the destination's bytes sit at the source's offsets, so the
    /// data can be read straight into the destination and fixed in place.
    pub(crate) fn in_place(&self) -> bool {
        self.src_size == self.dst_size && self.moves.iter().all(|m| m.src == m.dst)
    }

    /// Whether any move swaps bytes.
    pub(crate) fn swaps(&self) -> bool {
        self.moves.iter().any(|m| m.swap > 1)
    }

    /// Whether the source bytes *are* destination items (a view can use
    /// them), once `bool` bytes are checked.
    pub(crate) fn is_identity(&self) -> bool {
        self.in_place() && !self.swaps()
    }

    /// Whether running the plan in place changes anything.
    pub(crate) fn has_fixups(&self) -> bool {
        self.swaps() || !self.bools.is_empty() || !self.pads.is_empty()
    }

    /// Whether the plan is one plain copy of whole items.
    pub(crate) fn is_memcpy(&self) -> bool {
        self.is_identity()
            && self.bools.is_empty()
            && self.pads.is_empty()
            && (self.dst_size == 0
                || self.moves
                    == [Move {
                        src: 0,
                        dst: 0,
                        len: self.dst_size,
                        swap: 0,
                    }])
    }

    /// Runs an in-place plan over whole items in `bytes`: swaps byte order
    /// and normalises `bool` bytes (nonzero becomes 1, as NumPy reads them).
    pub(crate) fn fix_in_place(&self, bytes: &mut [u8]) {
        debug_assert!(self.in_place());
        let size = self.dst_size;
        if size == 0 {
            return;
        }
        match self.moves.as_slice() {
            // Scalars and whole-item runs: one pass over the buffer.
            [m] if m.len == size => swap_units(bytes, m.swap),
            moves => {
                for m in moves.iter().filter(|m| m.swap > 1) {
                    for item in bytes.chunks_exact_mut(size) {
                        swap_units(&mut item[m.dst..m.dst + m.len], m.swap);
                    }
                }
            }
        }
        self.normalize_bools(bytes);
    }

    fn normalize_bools(&self, bytes: &mut [u8]) {
        let size = self.dst_size;
        if !self.pads.is_empty() && size > 0 {
            for item in bytes.chunks_exact_mut(size) {
                for &(at, len) in &self.pads {
                    item[at..at + len].fill(0);
                }
            }
        }
        match self.bools.as_slice() {
            [] => {}
            [(0, len)] if *len == size => bytes.iter_mut().for_each(|b| *b = (*b != 0) as u8),
            runs => {
                for item in bytes.chunks_exact_mut(size) {
                    for &(at, len) in runs {
                        item[at..at + len]
                            .iter_mut()
                            .for_each(|b| *b = (*b != 0) as u8);
                    }
                }
            }
        }
    }

    /// Checks that the `bool` bytes of the items in `bytes` are 0 or 1 (for
    /// views, which cannot fix them).
    pub(crate) fn validate_bools(&self, bytes: &[u8]) -> Result<()> {
        let size = self.dst_size;
        if self.bools.is_empty() || size == 0 {
            return Ok(());
        }
        let bad = |index: usize, value: u8| {
            Err(Error::Data(crate::error::DataError::InvalidBool {
                index,
                value,
            }))
        };
        if let [(0, len)] = self.bools.as_slice() {
            if *len == size {
                // A fast all-valid check first; the position only on failure.
                if bytes.iter().fold(0u8, |acc, &b| acc | b) <= 1 {
                    return Ok(());
                }
                let at = bytes.iter().position(|&b| b > 1).unwrap_or(0);
                return bad(at / size, bytes[at]);
            }
        }
        for (index, item) in bytes.chunks_exact(size).enumerate() {
            for &(at, len) in &self.bools {
                if let Some(&v) = item[at..at + len].iter().find(|&&b| b > 1) {
                    return bad(index, v);
                }
            }
        }
        Ok(())
    }

    /// Converts `count` items: reads source items from `src` and writes
    /// destination items into `dst`, which must be zeroed (bytes no move
    /// covers are the destination's padding, and stay zero).
    ///
    /// # Safety
    ///
    /// `src` must be valid for reads of `count * src_size` bytes, of which
    /// every byte a move reads is initialised (the others, such as a Rust
    /// struct's padding, are never touched).
    pub(crate) unsafe fn convert(&self, src: *const u8, count: usize, dst: &mut [u8]) {
        assert_eq!(dst.len(), count * self.dst_size);
        assert!(self
            .moves
            .iter()
            .all(|m| m.src + m.len <= self.src_size && m.dst + m.len <= self.dst_size));
        if self.dst_size == 0 {
            return;
        }
        // One move at a time over the whole (cache-sized) chunk: the inner
        // loop then has a fixed length and swap, which the compiler turns
        // into plain loads and stores instead of a dispatch per field.
        for &m in &self.moves {
            // SAFETY: the caller's promise, passed on; every move lies
            // inside an item (asserted above).
            unsafe { self.column(src, count, dst, m) };
        }
        self.normalize_bools(dst);
    }

    /// Runs one move over `count` items.
    ///
    /// # Safety
    ///
    /// As for [`Plan::convert`], and `m` lies inside both item sizes.
    unsafe fn column(&self, src: *const u8, count: usize, dst: &mut [u8], m: Move) {
        let (ss, ds) = (self.src_size, self.dst_size);
        macro_rules! fixed {
            ($n:literal, $swap:expr) => {
                for (i, item) in dst.chunks_exact_mut(ds).enumerate().take(count) {
                    // SAFETY: `i < count` and `m.src + $n <= src_size`, so
                    // the bytes lie inside the readable, initialised source
                    // the caller promised; `[u8; N]` has no alignment.
                    let v: [u8; $n] =
                        unsafe { std::ptr::read_unaligned(src.add(i * ss + m.src).cast()) };
                    let v = $swap(v);
                    item[m.dst..m.dst + $n].copy_from_slice(&v);
                }
            };
        }
        match (m.len, m.swap) {
            (1, _) => fixed!(1, |v: [u8; 1]| v),
            (2, 0) => fixed!(2, |v: [u8; 2]| v),
            (2, 2) => fixed!(2, |v: [u8; 2]| u16::from_ne_bytes(v)
                .swap_bytes()
                .to_ne_bytes()),
            (4, 0) => fixed!(4, |v: [u8; 4]| v),
            (4, 4) => fixed!(4, |v: [u8; 4]| u32::from_ne_bytes(v)
                .swap_bytes()
                .to_ne_bytes()),
            (8, 0) => fixed!(8, |v: [u8; 8]| v),
            (8, 8) => fixed!(8, |v: [u8; 8]| u64::from_ne_bytes(v)
                .swap_bytes()
                .to_ne_bytes()),
            (16, 0) => fixed!(16, |v: [u8; 16]| v),
            _ => {
                for (i, item) in dst.chunks_exact_mut(ds).enumerate().take(count) {
                    let out = &mut item[m.dst..m.dst + m.len];
                    // SAFETY: as in `fixed!`: inside item `i` of the
                    // caller's readable, initialised source; `out` is in a
                    // distinct buffer, so the two do not overlap.
                    let input =
                        unsafe { std::slice::from_raw_parts(src.add(i * ss + m.src), m.len) };
                    move_bytes(input, out, m.swap);
                }
            }
        }
    }

    /// Converts whole items of `src` (initialised bytes) into zeroed `dst`.
    pub(crate) fn convert_slice(&self, src: &[u8], dst: &mut [u8]) {
        let count = src
            .len()
            .checked_div(self.src_size)
            .unwrap_or(dst.len() / self.dst_size.max(1));
        assert!(src.len() >= count * self.src_size);
        // SAFETY: `src` is an initialised slice of at least `count *
        // src_size` bytes.
        unsafe { self.convert(src.as_ptr(), count, dst) }
    }
}

/// Copies `input` into `out`, reversing each `swap`-byte group.
#[inline]
fn move_bytes(input: &[u8], out: &mut [u8], swap: usize) {
    match (input.len(), swap) {
        (8, 0) => out.copy_from_slice(&input[..8]),
        (4, 0) => out.copy_from_slice(&input[..4]),
        (8, 8) => {
            let v = u64::from_ne_bytes(input.try_into().unwrap_or([0; 8]));
            out.copy_from_slice(&v.swap_bytes().to_ne_bytes());
        }
        (4, 4) => {
            let v = u32::from_ne_bytes(input.try_into().unwrap_or([0; 4]));
            out.copy_from_slice(&v.swap_bytes().to_ne_bytes());
        }
        (_, 0 | 1) => out.copy_from_slice(input),
        (_, unit) => {
            for (a, b) in input.chunks_exact(unit).zip(out.chunks_exact_mut(unit)) {
                for (x, y) in a.iter().rev().zip(b.iter_mut()) {
                    *y = *x;
                }
            }
        }
    }
}

/// Byte-swaps each `unit`-byte group of `bytes` in place.
pub(crate) fn swap_units(bytes: &mut [u8], unit: usize) {
    match unit {
        0 | 1 => {}
        2 => match bytemuck::try_cast_slice_mut::<u8, u16>(bytes) {
            Ok(words) => words.iter_mut().for_each(|x| *x = x.swap_bytes()),
            Err(_) => bytes.chunks_exact_mut(2).for_each(|c| c.reverse()),
        },
        4 => match bytemuck::try_cast_slice_mut::<u8, u32>(bytes) {
            Ok(words) => words.iter_mut().for_each(|x| *x = x.swap_bytes()),
            Err(_) => bytes.chunks_exact_mut(4).for_each(|c| c.reverse()),
        },
        8 => match bytemuck::try_cast_slice_mut::<u8, u64>(bytes) {
            Ok(words) => words.iter_mut().for_each(|x| *x = x.swap_bytes()),
            Err(_) => bytes.chunks_exact_mut(8).for_each(|c| c.reverse()),
        },
        n => bytes.chunks_exact_mut(n).for_each(|c| c.reverse()),
    }
}

/// Most byte moves a plan may hold: a hostile descriptor (a huge sub-array
/// of big-endian records) is refused rather than compiled.
const MAX_MOVES: usize = 1 << 18;

/// Whether `field` is a named field (not a `('', '|Vn')` padding entry).
fn is_named(field: &Field) -> bool {
    !field.name.is_empty()
}

/// Whether a file scalar can be read as a destination scalar: the same
/// kind, size and datetime unit (byte order may differ).
fn compatible(s: &Scalar, d: &Scalar) -> bool {
    s.kind == d.kind && s.size == d.size && s.unit == d.unit && s.kind != Kind::Object
}

/// The swap unit turning `s`'s byte order into `d`'s (0: none).
fn swap_unit(s: &Scalar, d: &Scalar) -> usize {
    let differs = s.order != d.order
        && s.order != ByteOrder::NotApplicable
        && d.order != ByteOrder::NotApplicable;
    if !differs {
        return 0;
    }
    match s.kind {
        Kind::Complex => s.size / 2,
        Kind::Unicode => 4,
        Kind::Bool | Kind::Bytes | Kind::Void | Kind::Object => 0,
        _ => s.size,
    }
}

fn too_big(dtype: &DType) -> Error {
    Error::UnsupportedDType {
        dtype: dtype.to_string(),
        reason: "its item size overflows".to_owned(),
    }
}
