//! Errors as the user sees them: each names the file (and member), and
//! knows its exit code.

use std::fmt;
use std::path::Path;

/// Exit code: everything went well.
pub const EXIT_OK: i32 = 0;
/// Exit code: a problem was found in the data (invalid file, differences).
pub const EXIT_PROBLEM: i32 = 1;
/// Exit code: wrong usage, or a file could not be opened, read or written.
pub const EXIT_USAGE: i32 = 2;

#[derive(Debug)]
pub struct CliError {
    pub message: String,
    pub code: i32,
}

pub type CliResult<T> = Result<T, CliError>;

impl CliError {
    pub fn usage(message: impl Into<String>) -> CliError {
        CliError {
            message: message.into(),
            code: EXIT_USAGE,
        }
    }

    pub fn problem(message: impl Into<String>) -> CliError {
        CliError {
            message: message.into(),
            code: EXIT_PROBLEM,
        }
    }

    pub fn io(path: &Path, e: std::io::Error) -> CliError {
        CliError::usage(format!("{}: {e}", path.display()))
    }

    /// A library error about `path` (and `member`): I/O failures are exit
    /// code 2, anything wrong with the data is a problem found (1).
    pub fn lib(path: &Path, member: Option<&str>, e: ndnpy::Error) -> CliError {
        let code = match &e {
            ndnpy::Error::Io(io) | ndnpy::Error::IoPath { error: io, .. }
                if io.kind() != std::io::ErrorKind::UnexpectedEof
                    && io.kind() != std::io::ErrorKind::InvalidData =>
            {
                EXIT_USAGE
            }
            _ => EXIT_PROBLEM,
        };
        // The library's path errors already start with the path.
        let said = in_cli_words(&e.to_string());
        let text = match (&e, member) {
            (ndnpy::Error::IoPath { .. }, None) => said,
            (_, Some(m)) => format!("{}: member '{m}': {said}", path.display()),
            (_, None) => format!("{}: {said}", path.display()),
        };
        CliError {
            message: text,
            code,
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// The library's hints name `ReadOptions` methods; a user of the command
/// needs its flags (or to know that there is none).
const HINTS: &[(&str, &str)] = &[
    ("ReadOptions::max_header_len", "--max-header-size"),
    ("ReadOptions::max_zero_size_elements", "--max-zero-size-elements"),
    (
        "ReadOptions::pickle_encoding(PickleEncoding::Latin1) or Bytes (np.load's encoding='latin1' or 'bytes'; the ndnpy command: --pickle-encoding)",
        "--pickle-encoding latin1 or bytes (np.load's encoding='latin1' or 'bytes')",
    ),
    (
        "; ReadOptions::allow_beyond_numpy_limits reads such headers",
        "",
    ),
    ("ReadOptions::opaque_objects", "--opaque"),
    (
        " (raise ReadOptions::max_stream_len if the stream is trusted)",
        "",
    ),
];

fn in_cli_words(text: &str) -> String {
    HINTS
        .iter()
        .fold(text.to_owned(), |t, (lib, cli)| t.replace(lib, cli))
}

#[cfg(test)]
mod tests {
    #[test]
    fn hints_name_flags() {
        let e = ndnpy::Error::Limit(ndnpy::error::LimitError::HeaderTooLarge {
            len: 20_000,
            max: 10_000,
        });
        let said = super::CliError::lib(std::path::Path::new("a.npy"), None, e).message;
        assert!(said.contains("--max-header-size"), "{said}");
        assert!(!said.contains("ReadOptions"), "{said}");
    }
}
