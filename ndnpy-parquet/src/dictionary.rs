//! Column chunks of categoricals written page by page, so the Parquet
//! dictionary is exactly the categories, in their order, unused ones
//! included.
//!
//! The Arrow Rust writer re-encodes every dictionary in order of first
//! appearance and drops unused entries (apache/arrow-rs#10465), which would
//! change a categorical's categories. pyarrow, like our reader, takes a
//! dictionary-encoded column's categories from its dictionary page, so a
//! chunk made of one PLAIN dictionary page (the categories) and one
//! RLE_DICTIONARY data page (the codes) reads back as the same categorical.
//! Pages are written uncompressed: the dictionary is small and the codes are
//! bit-packed at the width the category count needs.

use crate::error::{Error, Result};
use crate::model::values::Categorical;
use bytes::Bytes;
use ndnpy::AnyArray;
use parquet::basic::{Compression, Encoding};
use parquet::column::page::{CompressedPage, Page, PageWriter};
use parquet::column::writer::ColumnCloseResult;
use parquet::file::metadata::ColumnChunkMetaData;
use parquet::file::writer::{SerializedPageWriter, TrackedWrite};
use parquet::schema::types::ColumnDescPtr;

/// Whether `c` is written by [`chunk`]: categories of strings or bytes
/// (pyarrow reads other dictionaries as plain values anyway).
pub(crate) fn handles(c: &Categorical) -> bool {
    matches!(c.categories, AnyArray::Str(_) | AnyArray::Bytes(_))
}

/// `value` as an unsigned LEB128 varint.
fn varint(mut value: u64, out: &mut Vec<u8>) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Definition levels (0 or 1) as RLE runs of the RLE/bit-packing hybrid, bit
/// width 1.
fn rle_levels(levels: impl Iterator<Item = bool>, out: &mut Vec<u8>) {
    let mut run: Option<(bool, u64)> = None;
    let flush = |run: (bool, u64), out: &mut Vec<u8>| {
        varint(run.1 << 1, out);
        out.push(run.0 as u8);
    };
    for l in levels {
        run = match run {
            Some((v, n)) if v == l => Some((v, n + 1)),
            Some(r) => {
                flush(r, out);
                Some((l, 1))
            }
            None => Some((l, 1)),
        };
    }
    if let Some(r) = run {
        flush(r, out);
    }
}

/// `values` as one bit-packed run of the hybrid encoding (LSB first, the
/// last group of 8 padded with zeros, which readers ignore).
fn bit_packed(values: &[u32], bit_width: u32, out: &mut Vec<u8>) {
    if values.is_empty() {
        return;
    }
    let groups = values.len().div_ceil(8);
    varint(((groups as u64) << 1) | 1, out);
    let mut acc: u64 = 0;
    let mut bits = 0u32;
    let padding = groups * 8 - values.len();
    for &v in values.iter().chain(std::iter::repeat_n(&0, padding)) {
        acc |= (v as u64) << bits;
        bits += bit_width;
        while bits >= 8 {
            out.push(acc as u8);
            acc >>= 8;
            bits -= 8;
        }
    }
}

/// A categorical column's dictionary page body and codes, made once for
/// all its row groups (each chunk repeats the dictionary and takes a slice
/// of the codes).
pub(crate) struct Prepared {
    dictionary: Bytes,
    codes: Vec<i64>,
    categories: usize,
}

/// Prepares `c` (one of the categoricals [`handles`] accepts) for [`chunk`].
pub(crate) fn prepare(c: &Categorical) -> Result<Prepared> {
    let mut dictionary = Vec::new();
    let mut plain = |item: &[u8]| -> Result<()> {
        let len = u32::try_from(item.len())
            .map_err(|_| Error::Invalid("a category longer than 4 GiB".into()))?;
        dictionary.extend_from_slice(&len.to_le_bytes());
        dictionary.extend_from_slice(item);
        Ok(())
    };
    match &c.categories {
        AnyArray::Str(a) => a.iter().try_for_each(|s| plain(s.as_bytes()))?,
        AnyArray::Bytes(a) => a.iter().try_for_each(|b| plain(b))?,
        _ => unreachable!("checked by handles()"),
    }
    Ok(Prepared {
        dictionary: dictionary.into(),
        codes: c.codes_i64()?,
        categories: c.num_categories(),
    })
}

/// The column chunk of rows `start..end` of a prepared categorical (see
/// the module documentation), with the metadata `append_column` needs.
pub(crate) fn chunk(
    descr: ColumnDescPtr,
    prepared: &Prepared,
    start: usize,
    end: usize,
) -> Result<(Bytes, ColumnCloseResult)> {
    let k = prepared.categories;
    let dictionary = prepared.dictionary.clone();
    let codes = &prepared.codes[start..end];
    let n = codes.len();
    let max = k.saturating_sub(1).max(1) as u64;
    let bit_width = 64 - max.leading_zeros();
    let mut levels = Vec::new();
    rle_levels(codes.iter().map(|&x| x >= 0), &mut levels);
    let mut data = Vec::with_capacity(5 + levels.len() + n * bit_width as usize / 8 + 8);
    data.extend_from_slice(&(levels.len() as u32).to_le_bytes());
    data.extend_from_slice(&levels);
    data.push(bit_width as u8);
    let indices: Vec<u32> = codes
        .iter()
        .filter(|&&x| x >= 0)
        .map(|&x| x as u32)
        .collect();
    bit_packed(&indices, bit_width, &mut data);

    let too_many = || Error::Invalid("more than 2**32 categories or rows in a row group".into());
    // A page header records its sizes as i32: a larger page would be
    // written with a wrapped size, a corrupt file.
    for (what, len) in [("categories", dictionary.len()), ("codes", data.len())] {
        if len > i32::MAX as usize {
            return Err(Error::Invalid(format!(
                "the {what} of a categorical take {len} bytes in one row group, more than a Parquet page holds (2**31 - 1); write smaller row groups"
            )));
        }
    }
    let mut sink = TrackedWrite::new(Vec::new());
    let dictionary_len = {
        let mut pages = SerializedPageWriter::new(&mut sink);
        let size = dictionary.len();
        let spec = pages.write_page(CompressedPage::new(
            Page::DictionaryPage {
                buf: dictionary,
                num_values: u32::try_from(k).map_err(|_| too_many())?,
                encoding: Encoding::PLAIN,
                is_sorted: false,
            },
            size,
        ))?;
        let size = data.len();
        pages.write_page(CompressedPage::new(
            Page::DataPage {
                buf: data.into(),
                num_values: u32::try_from(n).map_err(|_| too_many())?,
                encoding: Encoding::RLE_DICTIONARY,
                def_level_encoding: Encoding::RLE,
                rep_level_encoding: Encoding::RLE,
                statistics: None,
            },
            size,
        ))?;
        pages.close()?;
        spec.bytes_written
    };
    let bytes = Bytes::from(sink.into_inner()?);
    let metadata = ColumnChunkMetaData::builder(descr)
        .set_compression(Compression::UNCOMPRESSED)
        .set_encodings(vec![
            Encoding::PLAIN,
            Encoding::RLE,
            Encoding::RLE_DICTIONARY,
        ])
        .set_num_values(n as i64)
        .set_total_compressed_size(bytes.len() as i64)
        .set_total_uncompressed_size(bytes.len() as i64)
        .set_dictionary_page_offset(Some(0))
        .set_data_page_offset(dictionary_len as i64)
        .build()?;
    let close = ColumnCloseResult {
        bytes_written: bytes.len() as u64,
        rows_written: n as u64,
        metadata,
        bloom_filter: None,
        column_index: None,
        offset_index: None,
    };
    Ok((bytes, close))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hybrid_encodings_match_the_parquet_spec() {
        // The spec's example: 0..8 at bit width 3 is one group of three
        // bytes, 0b10001000, 0b11000110, 0b11111010.
        let mut out = Vec::new();
        bit_packed(&[0, 1, 2, 3, 4, 5, 6, 7], 3, &mut out);
        assert_eq!(out, [0b11, 0b1000_1000, 0b1100_0110, 0b1111_1010]);
        // Padded to a group of 8.
        let mut out = Vec::new();
        bit_packed(&[1, 1], 1, &mut out);
        assert_eq!(out, [0b11, 0b11]);
        // Runs: 300 ones then one zero.
        let mut out = Vec::new();
        rle_levels(std::iter::repeat_n(true, 300).chain([false]), &mut out);
        assert_eq!(out, [0xd8, 0x04, 1, 2, 0]);
    }
}
