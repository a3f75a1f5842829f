//! Differential: archives built from a fuzzed recipe (names with NUL bytes,
//! `.npy` suffixes and repeats, stored or deflated members, directory
//! entries that alias another's bytes, local names that disagree, a wrong
//! entry count in the end record) are read by `NpzReader` and compared with
//! a small model of what Python's `zipfile` and `np.load` make of them:
//! the names (cut at NUL, without `.npy`), which entry a name reads (exact
//! name, then `name.npy`, last entry of a repeated name), and which entries
//! are refused (an alias of another entry's bytes, a local header naming
//! another file). `arrays()` must agree with reading each name.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ndnpy::{AnyArray, Error, NpzReader};
use std::io::{Cursor, Write};

const NAMES: [&[u8]; 8] = [
    b"a",
    b"b",
    b"a.npy",
    b"b.npy",
    b"a\0x",
    b"a.npy\0y",
    b"",
    b".npy",
];

struct Entry {
    name: Vec<u8>,
    offset: u32,
    csize: u32,
    size: u32,
    crc: u32,
    method: u16,
    /// The array this entry holds, or `None` when NumPy-like reading must
    /// refuse it.
    expect: Option<Vec<u8>>,
}

fn npy(values: &[u8]) -> Vec<u8> {
    let text = format!(
        "{{'descr': '|u1', 'fortran_order': False, 'shape': ({},), }}",
        values.len()
    );
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    let total = (10 + text.len() + 1).div_ceil(64) * 64 - 10;
    out.extend_from_slice(&(total as u16).to_le_bytes());
    out.extend_from_slice(text.as_bytes());
    out.resize(10 + total - 1, b' ');
    out.push(b'\n');
    out.extend_from_slice(values);
    out
}

fn deflate(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn cut(name: &[u8]) -> String {
    let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
    String::from_utf8(name[..end].to_vec()).unwrap()
}

fn key(member: &str) -> &str {
    member.strip_suffix(".npy").unwrap_or(member)
}

fuzz_target!(|recipe: &[u8]| {
    let mut bytes = recipe.iter().copied();
    let mut next = || bytes.next().unwrap_or(0);
    let mut out = Vec::new();
    let mut entries: Vec<Entry> = Vec::new();
    let members = 1 + next() % 6;
    for m in 0..members {
        let choice = next();
        let name = NAMES[(choice % 8) as usize].to_vec();
        let deflated = choice & 0x10 != 0;
        let wrong_local = choice & 0x20 != 0 && !name.is_empty();
        let values: Vec<u8> = (0..next() % 5)
            .map(|i| m.wrapping_mul(31).wrapping_add(i))
            .collect();
        let payload = npy(&values);
        let raw = if deflated {
            deflate(&payload)
        } else {
            payload.clone()
        };
        let crc = {
            let mut h = flate2::Crc::new();
            h.update(&payload);
            h.sum()
        };
        let mut local_name = name.clone();
        if wrong_local {
            local_name[0] ^= 0x01;
        }
        let offset = out.len() as u32;
        out.extend_from_slice(b"PK\x03\x04");
        for v in [20u16, 0, if deflated { 8 } else { 0 }, 0, 0x21] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        for v in [crc, raw.len() as u32, payload.len() as u32] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&(local_name.len() as u16).to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        out.extend_from_slice(&local_name);
        out.extend_from_slice(&raw);
        entries.push(Entry {
            name,
            offset,
            csize: raw.len() as u32,
            size: payload.len() as u32,
            crc,
            method: if deflated { 8 } else { 0 },
            expect: (!wrong_local).then_some(values),
        });
        // An alias: a later directory entry for the same bytes, refused as
        // overlapping (the first entry at an offset keeps it).
        if next() % 4 == 0 {
            let e = entries.last().unwrap();
            let alias = Entry {
                name: e.name.clone(),
                expect: None,
                ..*e
            };
            entries.push(alias);
        }
    }
    let start = out.len() as u32;
    for e in &entries {
        out.extend_from_slice(b"PK\x01\x02");
        out.extend_from_slice(&[20, 3, 20, 0]);
        for v in [0u16, e.method, 0, 0x21] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        for v in [e.crc, e.csize, e.size] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&(e.name.len() as u16).to_le_bytes());
        out.extend_from_slice(&[0; 12]);
        out.extend_from_slice(&e.offset.to_le_bytes());
        out.extend_from_slice(&e.name);
    }
    let size = out.len() as u32 - start;
    // The end record's count is ignored (Python reads the directory).
    let count = if next() % 3 == 0 {
        next() as u16
    } else {
        entries.len() as u16
    };
    out.extend_from_slice(b"PK\x05\x06\0\0\0\0");
    out.extend_from_slice(&count.to_le_bytes());
    out.extend_from_slice(&count.to_le_bytes());
    out.extend_from_slice(&size.to_le_bytes());
    out.extend_from_slice(&start.to_le_bytes());
    out.extend_from_slice(&[0, 0]);

    let mut npz = NpzReader::new(Cursor::new(&out[..])).expect("a well-formed directory opens");
    let members: Vec<String> = entries.iter().map(|e| cut(&e.name)).collect();
    let names: Vec<String> = members.iter().map(|m| key(m).to_owned()).collect();
    assert_eq!(npz.names(), names);
    // NumPy's lookup: exact member name, then name.npy; last entry wins.
    let lookup = |k: &str| {
        let last = |m: &str| members.iter().rposition(|x| x == m);
        last(k).or_else(|| last(&format!("{k}.npy")))
    };
    for k in &names {
        let index = lookup(k).expect("every name resolves");
        let got = npz.read_any(k);
        match (&entries[index].expect, got) {
            (Some(values), Ok(AnyArray::U8(a))) => {
                assert_eq!(a.iter().copied().collect::<Vec<u8>>(), *values, "{k:?}")
            }
            (None, Err(Error::Archive(ndnpy::error::ArchiveError::InvalidArchive { .. }))) => {}
            (expect, got) => panic!("{k:?}: expected {expect:?}, got {got:?}"),
        }
    }
    let from_iter: Vec<(String, Result<AnyArray, Error>)> = npz.arrays().collect();
    assert_eq!(from_iter.len(), names.len());
    for (name, result) in from_iter {
        assert_eq!(result.is_ok(), npz.read_any(&name).is_ok(), "{name:?}");
    }
});
