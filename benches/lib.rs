//! Nothing to link: this crate holds the comparison benchmarks (`npy.rs`,
//! `npz.rs`), so that their dependencies (criterion and the peer crates)
//! stay out of the library's.
