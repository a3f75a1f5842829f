//! Nothing to link: this crate exists so that its examples (`tour`, `npz`)
//! compile against the library alone, without the library's test and
//! benchmark dependencies.
