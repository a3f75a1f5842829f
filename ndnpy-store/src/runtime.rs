//! The runtime the blocking wrappers (`blocking.rs`) and the readers they
//! hand out wait on, and on which a dropped writer's abort runs outside any
//! runtime (`upload.rs`): one per process, started by the first use.

use std::sync::OnceLock;

/// The runtime the blocking calls (and the readers they hand out) wait
/// on, started by the first of them.
pub(crate) fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .thread_name("ndnpy-store")
            .build()
            .expect("a tokio runtime")
    })
}
