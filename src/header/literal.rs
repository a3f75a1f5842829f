//! A small, bounded parser for the Python-literal subset that `.npy` headers use.
//!
//! (Interface fixed; implementation in progress.)

use crate::error::{Error, Result};

/// Deepest nesting of brackets the parser accepts.
pub(crate) const MAX_DEPTH: usize = 64;

/// A parsed literal with the character offset where it starts.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Value {
    /// Character offset (not byte offset) into the header text.
    pub pos: usize,
    /// What the literal is.
    pub kind: ValueKind,
}

/// The literal forms a header can contain.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ValueKind {
    /// `{k: v, ...}` in source order, duplicates kept.
    Dict(Vec<(Value, Value)>),
    /// `(a, b)`, `(a,)`, `()`.
    Tuple(Vec<Value>),
    /// `[a, b]`.
    List(Vec<Value>),
    /// A string literal, escapes resolved, adjacent literals concatenated.
    Str(String),
    /// An integer literal with an optional sign.
    Int(i128),
    /// `True` / `False`.
    Bool(bool),
    /// `None`.
    None,
}

/// Parses `text` as exactly one literal followed only by whitespace and
/// comments. `allow_long_suffix` accepts Python 2's `L` suffix on integers.
pub(crate) fn parse(text: &str, allow_long_suffix: bool) -> Result<Value> {
    let _ = (text, allow_long_suffix);
    Err(Error::MalformedHeader {
        pos: 0,
        expected: "implementation".into(),
        found: "stub".into(),
    })
}
