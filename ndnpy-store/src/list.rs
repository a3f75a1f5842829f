//! The objects below a location, for tools that take a folder (`ndnpy
//! check`): a store's folder is a prefix of its objects' paths.

use crate::error::Result;
use crate::location::Location;
use futures::TryStreamExt;
use object_store::path::Path;

/// The paths of the objects below `location`, its path taken as a folder
/// (`data` lists `data/a.npy` and `data/x/b.npy`, not `data-2/c.npy` or an
/// object named `data` itself), at any depth, sorted as a walk of a local
/// folder sorts: segment by segment, so `a/b.npy` comes before
/// `a-c.npy`. Empty when nothing is below it.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use ndnpy_store::{list, write_npy, Location};
///
/// let store = Location::parse("memory:///")?.store;
/// for path in ["runs/b.npy", "runs/a/x.npy", "runs-old/c.npy"] {
///     write_npy(&Location::new(store.clone(), path), &ndarray::array![1u8]).await?;
/// }
/// let below = list(&Location::new(store, "runs")).await?;
/// let names: Vec<&str> = below.iter().map(|p| p.as_ref()).collect();
/// assert_eq!(names, ["runs/a/x.npy", "runs/b.npy"]);
/// # Ok::<(), ndnpy_store::StoreError>(())
/// # }).unwrap();
/// ```
pub async fn list(location: &Location) -> Result<Vec<Path>> {
    let prefix = (!location.path.as_ref().is_empty()).then_some(&location.path);
    let mut paths: Vec<Path> = location
        .store
        .list(prefix)
        .map_ok(|meta| meta.location)
        .try_collect()
        .await?;
    paths.sort_by(|a, b| a.parts().cmp(b.parts()));
    Ok(paths)
}
