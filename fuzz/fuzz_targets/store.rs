//! Hostile bytes as an object in a store: the remote readers (ranged GETs,
//! the archive reader over them) must be as safe as the local ones, with
//! memory in proportion to the bytes present.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ndnpy_store::object_store::memory::InMemory;
use ndnpy_store::object_store::{ObjectStore, ObjectStoreExt};
use ndnpy_store::{Config, Location, RemoteNpy, RemoteNpz};
use std::sync::{Arc, OnceLock};

fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .build()
            .unwrap()
    })
}

fuzz_target!(|data: &[u8]| {
    runtime().block_on(async {
        let store = Arc::new(InMemory::new());
        store.put(&"x".into(), data.to_vec().into()).await.unwrap();
        let at = Location::new(store as Arc<dyn ObjectStore>, "x");
        let config = Config::default().chunk_size(1 << 16);
        if let Ok(npy) = RemoteNpy::open_with(&at, config.clone()).await {
            let _ = npy.read_any().await;
            let _ = npy.read::<f64, ndarray::IxDyn>().await;
            let _ = npy.read_range::<u8, ndarray::IxDyn>(0..1).await;
        }
        if let Ok(npz) = RemoteNpz::open_with(&at, config).await {
            for name in npz.names().into_iter().take(16) {
                let _ = npz.read_any(&name).await;
                if let Ok(member) = npz.member_npy(&name).await {
                    let _ = member.read_any().await;
                }
            }
        }
    });
});
