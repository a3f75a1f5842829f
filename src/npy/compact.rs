//! The `.npy` entry points of the compact string arrays
//! ([`StringArray`], [`BytesArray`]): paths, readers and bytes, each with a
//! `_with` twin, as typed arrays have them through `ReadNpy` and
//! `WriteNpy` (which these types implement too).

use crate::array::compact::{BytesArray, StringArray};
use crate::error::Result;
use crate::format::header;
use crate::io::checked::{CheckedRead, CheckedWrite};
use crate::io::source::Source;
use crate::npy::read::{read_path, ReadNpy};
use crate::options::{ReadOptions, WriteOptions};
use std::io::{Read, Write};
use std::path::Path;

macro_rules! entry_points {
    ($t:ty) => {
        impl $t {
            /// Reads the `.npy` file at `path`.
            pub fn read_npy<P: AsRef<Path>>(path: P) -> Result<Self> {
                Self::read_npy_with(path, &ReadOptions::default())
            }

            /// Reads a `.npy` stream.
            pub fn read_npy_from<R: Read>(reader: R) -> Result<Self> {
                Self::read_npy_from_with(reader, &ReadOptions::default())
            }

            /// Reads `.npy` data held in memory.
            pub fn from_npy_bytes(bytes: &[u8]) -> Result<Self> {
                Self::from_npy_bytes_with(bytes, &ReadOptions::default())
            }

            /// [`Self::read_npy`] with explicit limits.
            pub fn read_npy_with<P: AsRef<Path>>(path: P, options: &ReadOptions) -> Result<Self> {
                read_path(path.as_ref(), options, |header, source| {
                    <$t>::decode(header, source)
                })
            }

            /// [`Self::read_npy_from`] with explicit limits (the stream
            /// limit included).
            pub fn read_npy_from_with<R: Read>(reader: R, options: &ReadOptions) -> Result<Self> {
                let mut reader = CheckedRead(reader);
                let (header, _) = header::read_preamble(&mut reader, options)?;
                <$t>::decode(&header, &mut Source::stream_with(&mut reader, options))
            }

            /// [`Self::from_npy_bytes`] with explicit limits.
            pub fn from_npy_bytes_with(bytes: &[u8], options: &ReadOptions) -> Result<Self> {
                let (header, offset) = header::parse_slice(bytes, options)?;
                <$t>::decode(&header, &mut Source::slice(&bytes[offset..]))
            }

            /// Writes the `.npy` file at `path`, as `np.save` writes these
            /// elements, replacing it atomically as
            /// [`crate::WriteNpy::write_npy`] does.
            pub fn write_npy<P: AsRef<Path>>(&self, path: P) -> Result<()> {
                self.write_npy_with(path, &WriteOptions::default())
            }

            /// [`Self::write_npy`] with options (such as
            /// [`WriteOptions::durable`]).
            pub fn write_npy_with<P: AsRef<Path>>(
                &self,
                path: P,
                options: &WriteOptions,
            ) -> Result<()> {
                let bytes = self.header().to_bytes()?;
                let len = bytes.len() as u64 + self.header().data_len()? as u64;
                let path = path.as_ref();
                crate::io::atomic::write_file_with(path, len, options, |file| {
                    file.write_all(&bytes)?;
                    self.encode_to(file)
                })
                .map_err(|e| e.at_path(path))
            }

            /// Writes the `.npy` file to `writer`.
            pub fn write_npy_to<W: Write>(&self, writer: W) -> Result<()> {
                let mut writer = CheckedWrite(writer);
                writer.write_all(&self.header().to_bytes()?)?;
                self.encode_to(&mut writer)?;
                writer.flush()?;
                Ok(())
            }

            /// The bytes of the `.npy` file.
            pub fn to_npy_bytes(&self) -> Result<Vec<u8>> {
                let mut out = self.header().to_bytes()?;
                self.encode_to(&mut out)?;
                Ok(out)
            }
        }

        /// The trait's entry points are the type's own methods.
        impl ReadNpy for $t {
            fn read_npy_with<P: AsRef<Path>>(path: P, options: &ReadOptions) -> Result<Self> {
                <$t>::read_npy_with(path, options)
            }

            fn read_npy_from_with<R: Read>(reader: R, options: &ReadOptions) -> Result<Self> {
                <$t>::read_npy_from_with(reader, options)
            }

            fn from_npy_bytes_with(bytes: &[u8], options: &ReadOptions) -> Result<Self> {
                <$t>::from_npy_bytes_with(bytes, options)
            }
        }
    };
}

entry_points!(StringArray);
entry_points!(BytesArray);
