//! The `.npy` entry points of the compact string arrays
//! ([`StringArray`], [`BytesArray`]): paths, readers and bytes.

use crate::array::compact::{BytesArray, StringArray};
use crate::error::Result;
use crate::format::header;
use crate::io::checked::CheckedRead;
use crate::io::source::Source;
use crate::npy::read::read_path;
use crate::options::ReadOptions;
use std::io::{Read, Write};
use std::path::Path;

macro_rules! entry_points {
    ($t:ty) => {
        impl $t {
            /// Reads the `.npy` file at `path`.
            pub fn read_npy<P: AsRef<Path>>(path: P) -> Result<Self> {
                read_path(path.as_ref(), &ReadOptions::default(), |header, source| {
                    <$t>::decode(header, source)
                })
            }

            /// Reads a `.npy` stream.
            pub fn read_npy_from<R: Read>(reader: R) -> Result<Self> {
                let options = ReadOptions::default();
                let mut reader = CheckedRead(reader);
                let (header, _) = header::read_preamble(&mut reader, &options)?;
                <$t>::decode(&header, &mut Source::stream_with(&mut reader, &options))
            }

            /// Reads `.npy` data held in memory.
            pub fn from_npy_bytes(bytes: &[u8]) -> Result<Self> {
                let (header, offset) = header::parse_slice(bytes, &ReadOptions::default())?;
                <$t>::decode(&header, &mut Source::slice(&bytes[offset..]))
            }

            /// Writes the `.npy` file at `path`, as `np.save` writes these
            /// elements, replacing it atomically as
            /// [`crate::WriteNpy::write_npy`] does.
            pub fn write_npy<P: AsRef<Path>>(&self, path: P) -> Result<()> {
                let bytes = self.header().to_bytes()?;
                let len = bytes.len() as u64 + self.header().data_len()? as u64;
                let path = path.as_ref();
                crate::io::atomic::write_file(path, len, |file| {
                    file.write_all(&bytes)?;
                    self.encode_to(file)
                })
                .map_err(|e| e.at_path(path))
            }

            /// Writes the `.npy` file to `writer`.
            pub fn write_npy_to<W: Write>(&self, mut writer: W) -> Result<()> {
                writer.write_all(&self.header().to_bytes()?)?;
                self.encode_to(&mut writer)
            }

            /// The bytes of the `.npy` file.
            pub fn to_npy_bytes(&self) -> Result<Vec<u8>> {
                let mut out = self.header().to_bytes()?;
                self.encode_to(&mut out)?;
                Ok(out)
            }
        }
    };
}

entry_points!(StringArray);
entry_points!(BytesArray);
