//! Layer 1, the `.npy` format as pure bytes ⇄ [`header::Header`]: the magic
//! string and versions, the bounded Python-literal parser ([`literal`]), the
//! dtype model with its parser, descr writer and Python repr ([`dtype`]), and
//! the header dictionary ([`header`]).
//!
//! May use: [`crate::error`], [`crate::options`] and [`crate::io`] (to fill a
//! buffer from a reader). Never opens a file: the entry points that do are in
//! [`crate::npy`].

pub(crate) mod dtype;
pub(crate) mod header;
pub(crate) mod literal;
