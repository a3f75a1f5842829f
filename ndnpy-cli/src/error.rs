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
        let text = match (&e, member) {
            (ndnpy::Error::IoPath { .. }, None) => e.to_string(),
            (_, Some(m)) => format!("{}: member '{m}': {e}", path.display()),
            (_, None) => format!("{}: {e}", path.display()),
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
