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
    pub split: bool,
    pub order: Option<OrderArg>,
    pub byteorder: Option<ByteOrderArg>,
    pub key: Option<String>,
}
