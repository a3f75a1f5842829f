//! The command line: the arguments and commands as clap parses them, and
//! the help texts (examples, then the exit codes).

use crate::{reinterpret, settings};
use clap::{Parser, Subcommand};

/// The text after every command's help: its examples, then this.
macro_rules! exit_codes {
    () => {
        "Exit codes:
  0  success: every file is valid (and, for diff, the arrays are equal)
  1  a problem was found: an invalid or truncated file, a pickled object array (check), differences (diff)
  2  usage error, or a file that cannot be opened, read or written

FILE arguments may be glob patterns ('data/**/*.npy'), expanded by ndnpy when the shell did not.
Members of an .npz archive are named ARCHIVE:MEMBER in the output, and
ARCHIVE.npz:MEMBER is accepted wherever --key is.
A folder written by dask's da.to_npy_stack (0.npy, 1.npy, ... and info) is read as one
array wherever a FILE is; with --stack, so is any folder of .npy shards (natural order,
along axis 0).
FILE arguments may also be URLs (s3://, gs://, az://, https://, file://), read by
ranged GETs; outputs bound for a URL are uploaded once the command succeeds."
    };
}

/// The exit codes, after the top-level help.
const EXIT_CODES: &str = exit_codes!();

/// `--help` of one command: examples, then the exit codes.
macro_rules! help {
    ($($line:literal),+ $(,)?) => {
        concat!("Examples:\n", $("  ", $line, "\n",)+ "\n", exit_codes!())
    };
}

#[derive(Parser)]
#[command(name = "ndnpy", version, about = "Look inside, check, convert and compare NumPy .npy/.npz files (never loads whole files, never runs pickled code)", after_help = EXIT_CODES)]
pub(crate) struct Cli {
    /// Machine-readable output: one JSON document on stdout.
    #[arg(long, global = true)]
    pub(crate) json: bool,
    /// Longest .npy header accepted, in bytes (NumPy's max_header_size; default
    /// 10000, as np.load). Headers of wide record dtypes need more.
    #[arg(long, global = true, value_name = "BYTES")]
    pub(crate) max_header_size: Option<usize>,
    /// Most values of zero size (dtypes such as '|S0', '<U0', '|V0') accepted
    /// from headers: each costs memory although the file holds nothing for
    /// it (default 1048576; NumPy has no limit).
    #[arg(long, global = true, value_name = "COUNT")]
    pub(crate) max_zero_size_elements: Option<u64>,
    /// How Python 2 str values in object arrays are read (np.load's encoding):
    /// latin1 (the default here, what NumPy advises for Python 2 files), ascii
    /// (np.load's default: an error for other bytes) or bytes.
    #[arg(long, global = true, value_enum, default_value_t = EncodingArg::Latin1)]
    pub(crate) pickle_encoding: EncodingArg,
    /// Read objects of classes outside the pickle reader's closed list as inert
    /// data (class name, arguments and state; nothing is called), instead of
    /// refusing them; convert writes them back as equivalent pickles.
    #[arg(long, global = true)]
    pub(crate) opaque: bool,
    /// Read raw items as this ml_dtypes format, giving float32 values (what
    /// JAX sees): np.save writes bfloat16 as '<V2', float8_e4m3fn as '<V1'
    /// and float8_e5m2 as '<f1'. Other arrays are read as they are. Give it
    /// twice (a 2-byte and a 1-byte format) for files holding both.
    #[arg(long = "as", global = true, value_enum, value_name = "TYPE")]
    pub(crate) as_type: Vec<reinterpret::AsType>,
    /// Read a folder argument as one array stacked from its .npy files (natural
    /// order: 2.npy before 10.npy; along axis 0). A dask stack (a folder with
    /// `info`) is read so without it; `check DIR` without it checks each file.
    #[arg(long, global = true)]
    pub(crate) stack: bool,
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// `--pickle-encoding`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum EncodingArg {
    Ascii,
    Latin1,
    Bytes,
}

// The commands (clap takes each variant's doc comment as its help).
#[derive(Subcommand)]
pub(crate) enum Command {
    /// Header facts: version, dtype (records as a tree), shape, order, data offset and
    /// alignment, room to grow in place, pickled or not; for .npz one row per member;
    /// for a Parquet file (pandas DataFrame) its columns with pandas types and the index;
    /// for a stack folder its whole array's, with the shard count and stacking axis.
    #[command(after_help = help!("ndnpy info weights.npy", "ndnpy info dask_stack/", "ndnpy info --stack shards/", "ndnpy info 'runs/**/*.npz'", "ndnpy --json info s3://bucket/ckpt.npz", "ndnpy info frame.parquet"))]
    Info {
        #[arg(required = true)]
        files: Vec<String>,
    },
    /// Print values as NumPy's repr does (summarised with ... beyond 1000 elements),
    /// reading only the bytes it prints (object arrays: the whole pickle, through
    /// ndnpy's own reader, which runs no code).
    #[command(after_help = help!("ndnpy show a.npy", "ndnpy show --slice '0:5, :, -1' a.npy", "ndnpy show suite.npz:smooth_f64", "ndnpy show --key x --full archive.npz", "ndnpy show --slice 1000:1010 dask_stack/"))]
    Show {
        #[arg(required = true)]
        files: Vec<String>,
        /// NumPy indexing, e.g. "0:5, :, -1" or "..., 2".
        #[arg(long, allow_hyphen_values = true)]
        slice: Option<String>,
        /// Only this member of an .npz archive.
        #[arg(long)]
        key: Option<String>,
        /// Print every element, never summarise.
        #[arg(long)]
        full: bool,
    },
    /// Count, min, max, mean, std, NaN/±inf per array and per record field, in one
    /// streaming pass with constant memory. Min/max ignore NaN; mean and std
    /// (population) are over the finite values.
    #[command(after_help = help!("ndnpy stats a.npy", "ndnpy stats suite.npz:random_f64", "ndnpy --json stats https://example.org/data.npz", "ndnpy stats --stack shards/"))]
    Stats {
        #[arg(required = true)]
        files: Vec<String>,
        /// Only this member of an .npz archive.
        #[arg(long)]
        key: Option<String>,
    },
    /// Convert: .npy <-> .npz (stored, or --compress), several .npy into one .npz and
    /// back (--split), C <-> Fortran order, byte order, CSV for 1-D/2-D numbers,
    /// Parquet (pandas DataFrame) <-> .npz (one member per column; see
    /// ndnpy_parquet::convert for the mapping), a stack folder into one file, and one
    /// array into a dask stack (--shard-rows, --shard-size). The last argument is the output.
    #[command(after_help = help!("ndnpy convert --shard-rows 100000 big.npy big_stack/", "ndnpy convert dask_stack/ whole.npy", "ndnpy convert --compress a.npy b.npy both.npz", "ndnpy convert --compress zstd:5 suite.npz suite_zstd.npz", "ndnpy convert --split both.npz out_dir/", "ndnpy convert suite.npz:image_u8 image.npy", "ndnpy convert --order F --byteorder big a.npy a_f.npy", "ndnpy convert frame.parquet frame.npz"))]
    Convert {
        /// Inputs, then the output (a file, or a folder with --split).
        #[arg(required = true, num_args = 2..)]
        paths: Vec<String>,
        /// Output format (default: from the output's extension).
        #[arg(long, value_enum)]
        to: Option<settings::Format>,
        /// Compress the members of an .npz output: deflate (np.savez_compressed, the
        /// default), or --compress zstd[:LEVEL] (Zstandard: smaller and faster; NumPy
        /// reads it with Python 3.14's zipfile or backports.zstd).
        #[arg(long, value_name = "METHOD", num_args = 0..=1, require_equals = true, default_missing_value = "deflate")]
        compress: Option<String>,
        /// Write each array to OUTPUT/NAME.npy.
        #[arg(long)]
        split: bool,
        /// Memory order of the output data.
        #[arg(long, value_enum)]
        order: Option<settings::OrderArg>,
        /// Byte order of the output data.
        #[arg(long, value_enum)]
        byteorder: Option<settings::ByteOrderArg>,
        /// Only this member of an .npz input.
        #[arg(long)]
        key: Option<String>,
        /// Write the output folder as a dask stack (what da.from_npy_stack reads) of
        /// this many rows (of axis 0) per shard, the last one shorter.
        #[arg(long, value_name = "N", conflicts_with = "shard_size")]
        shard_rows: Option<usize>,
        /// As --shard-rows, with as many rows per shard as fit in this many bytes
        /// (at least one).
        #[arg(long, value_name = "BYTES")]
        shard_size: Option<u64>,
    },
    /// Validate files and folders (recursively): headers, sizes, CRCs, decompression,
    /// pickle safety. One line per problem; exit code 1 if any. A dask stack folder
    /// (or any folder, with --stack) is checked as one array: its shards against its
    /// info and each other.
    #[command(after_help = help!("ndnpy check data/", "ndnpy check --stack shards/", "ndnpy check --allow-pickle objects.npy", "ndnpy --json check s3://bucket/a.npz"))]
    Check {
        #[arg(required = true)]
        paths: Vec<String>,
        /// Accept object arrays (pickled Python objects) instead of reporting them.
        #[arg(long)]
        allow_pickle: bool,
    },
    /// Compare two arrays (or two archives member by member): dtype, shape, values,
    /// first differing indices. A stack folder is one array.
    #[command(after_help = help!("ndnpy diff dask_stack/ whole.npy", "ndnpy diff a.npy b.npy", "ndnpy diff --rtol 1e-6 old.npz new.npz", "ndnpy diff old.npz:w new.npz:w"))]
    Diff {
        a: String,
        b: String,
        /// Relative tolerance.
        #[arg(long, default_value_t = 0.0)]
        rtol: f64,
        /// Absolute tolerance.
        #[arg(long, default_value_t = 0.0)]
        atol: f64,
        /// Only this member of .npz inputs.
        #[arg(long)]
        key: Option<String>,
    },
}
