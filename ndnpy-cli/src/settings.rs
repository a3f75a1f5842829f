//! What `convert` is asked to do: the output format and layout options,
//! shared by the command and the Parquet bridge.

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Npy,
    Npz,
    Csv,
    /// A pandas DataFrame in Parquet (from an `.npz`, one member per column).
    Parquet,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OrderArg {
    C,
    F,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ByteOrderArg {
    Little,
    Big,
    Native,
}

pub struct Options {
    pub to: Option<Format>,
    pub compress: bool,
    /// How compressed `.npz` members are compressed (`--compress=METHOD`).
    pub codec: ndnpy::npz::Codec,
    pub split: bool,
    pub order: Option<OrderArg>,
    pub byteorder: Option<ByteOrderArg>,
    pub key: Option<String>,
}

/// The compression methods `--compress` names, as `METHOD[:LEVEL]`.
pub const METHODS: &str = "deflate[:1-9], zstd[:1-22]";

/// `--compress`'s `METHOD[:LEVEL]`: `deflate` (the default, what
/// `np.savez_compressed` writes) or `zstd` (Zstandard, which NumPy reads
/// only through a `zipfile` that has it: Python 3.14's, or
/// `backports.zstd`'s), each with an optional level.
pub fn parse_codec(spec: &str) -> Result<ndnpy::npz::Codec, String> {
    let (method, level) = match spec.split_once(':') {
        Some((m, l)) => {
            let level = l
                .parse::<u32>()
                .map_err(|_| format!("--compress {spec}: the level must be a number"))?;
            (m, Some(level))
        }
        None => (spec, None),
    };
    let codec = match method {
        "deflate" => ndnpy::npz::Codec::Deflate {
            level: level.unwrap_or(7),
        },
        #[cfg(feature = "zip-methods")]
        "zstd" => ndnpy::npz::Codec::Zstd {
            level: level.map_or(3, |l| l.min(22) as i32),
        },
        #[cfg(not(feature = "zip-methods"))]
        "zstd" => return Err(
            "--compress zstd: this ndnpy was built without Zstandard (cargo feature zip-methods)"
                .into(),
        ),
        _ => return Err(format!("--compress {spec}: methods are {METHODS}")),
    };
    Ok(codec)
}

/// Whether `arg` names a compression method rather than a path: `--compress
/// zstd a.npy out.npz` then means `--compress=zstd` (a file of that name
/// stays a path).
pub fn is_codec_spec(arg: &str) -> bool {
    parse_codec(arg).is_ok() && !std::path::Path::new(arg).exists()
}
