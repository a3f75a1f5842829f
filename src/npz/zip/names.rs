//! Which array names survive a round trip through an archive and
//! `np.load`, checked before [`crate::NpzWriter`] writes a member.

use crate::error::{Error, Result};

/// The longest name a zip entry can carry is 65 535 bytes, `.npy` included.
const MAX_NAME_LEN: usize = u16::MAX as usize - ".npy".len();

/// Refuses array names that NumPy (or a zip file) could not give back:
/// names with a NUL byte (Python's `zipfile` cuts names there), names too
/// long for a zip entry, and a name `n.npy` beside `n` (NumPy's `z["n.npy"]`
/// would find the member of `n`). `added` tells whether a name was added
/// before.
pub(crate) fn check_array_name(name: &str, added: impl Fn(&str) -> bool) -> Result<()> {
    let invalid = |reason: String| {
        Error::Write(crate::error::WriteError::InvalidName {
            name: name.to_owned(),
            reason,
        })
    };
    if name.contains('\0') {
        return Err(invalid(
            "it contains a NUL byte, where NumPy's zipfile would cut it".into(),
        ));
    }
    if name.len() > MAX_NAME_LEN {
        return Err(invalid(format!(
            "it is {} bytes long; a zip entry name holds at most {MAX_NAME_LEN} bytes plus `.npy`",
            name.len()
        )));
    }
    if let Some(base) = name.strip_suffix(".npy") {
        if added(base) {
            return Err(invalid(format!(
                "the archive has an array '{base}', whose member is named '{name}', so NumPy would read this name as that array"
            )));
        }
    }
    let with_suffix = format!("{name}.npy");
    if added(&with_suffix) {
        return Err(invalid(format!(
            "the archive has an array '{with_suffix}', and NumPy would read that name as this array's member"
        )));
    }
    Ok(())
}

/// NumPy's key for a member: its name without one trailing `.npy`.
pub(crate) fn key_of(member: &str) -> &str {
    member.strip_suffix(".npy").unwrap_or(member)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_what_numpy_cannot_give_back() {
        let none = |_: &str| false;
        assert!(check_array_name("a", none).is_ok());
        assert!(check_array_name("", none).is_ok());
        assert!(check_array_name("dir/a.b", none).is_ok());
        for bad in ["a\0b", "\0"] {
            let err = check_array_name(bad, none).unwrap_err();
            assert!(
                matches!(
                    err,
                    Error::Write(crate::error::WriteError::InvalidName { .. })
                ),
                "{err:?}"
            );
        }
        let long = "x".repeat(MAX_NAME_LEN + 1);
        assert!(matches!(
            check_array_name(&long, none),
            Err(Error::Write(crate::error::WriteError::InvalidName { .. }))
        ));
        assert!(check_array_name(&long[1..], none).is_ok());
        let has_x = |n: &str| n == "x";
        assert!(check_array_name("x.npy", has_x).is_err());
        let has_x_npy = |n: &str| n == "x.npy";
        assert!(check_array_name("x", has_x_npy).is_err());
        assert!(check_array_name("y", has_x).is_ok());
    }
}
