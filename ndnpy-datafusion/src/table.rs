//! `NpyTable`: the table `register_npy` and `STORED AS NPY`/`NPZ` make, a
//! NumPy listing table under a type of its own.
//!
//! Why a type of its own: DataFusion's protobuf form of a `ListingTable`
//! knows only its built-in formats and refuses any other before asking an
//! extension codec, so a NumPy listing table could not travel from a client
//! to a Ballista scheduler as it is. Wrapped in `NpyTable` (which does
//! nothing but delegate) it is a custom table, which the logical codec
//! (`ballista/logical.rs`) writes and rebuilds. Every context gets the same
//! table, so that there is one way to register one, local or remote.

use crate::format::NpyFormat;
use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::{ScanArgs, ScanResult, Session, TableProvider, TableProviderFactory};
use datafusion::common::{Constraints, Statistics};
use datafusion::datasource::listing::ListingTable;
use datafusion::datasource::TableType;
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::dml::InsertOp;
use datafusion::logical_expr::{
    CreateExternalTable, Expr, LogicalPlan, TableProviderFilterPushDown,
};
use datafusion::physical_plan::ExecutionPlan;
use std::borrow::Cow;
use std::sync::Arc;

/// A NumPy table: a `ListingTable` of an [`NpyFormat`], which it behaves
/// exactly as, under a type of its own so that Ballista can send it to a
/// scheduler.
///
/// [`SessionContextExt::register_npy`](crate::SessionContextExt::register_npy)
/// and `CREATE EXTERNAL TABLE … STORED AS NPY` (after
/// [`register_formats`](crate::register_formats)) make these.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use ndnpy::WriteNpy;
/// use ndnpy_datafusion::{NpyReadOptions, NpyTable, SessionContextExt};
///
/// let dir = tempfile::tempdir()?;
/// ndarray::array![1u8, 2].write_npy(dir.path().join("a.npy"))?;
/// let ctx = datafusion::prelude::SessionContext::new();
/// ctx.register_npy("t", dir.path().to_str().unwrap(), NpyReadOptions::default()).await?;
/// let table = ctx.table_provider("t").await?;
/// let table = table.downcast_ref::<NpyTable>().unwrap();
/// assert_eq!(table.listing().table_paths().len(), 1);
/// assert_eq!(ctx.sql("SELECT * FROM t").await?.count().await?, 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Debug, Clone)]
pub struct NpyTable {
    listing: Arc<ListingTable>,
}

impl NpyTable {
    /// Wraps `listing`, which must read an [`NpyFormat`].
    ///
    /// ```
    /// use datafusion::datasource::listing::{ListingOptions, ListingTable, ListingTableConfig, ListingTableUrl};
    /// use datafusion::datasource::file_format::csv::CsvFormat;
    /// use std::sync::Arc;
    ///
    /// let schema = Arc::new(datafusion::arrow::datatypes::Schema::empty());
    /// let config = ListingTableConfig::new(ListingTableUrl::parse("/tmp/").unwrap())
    ///     .with_listing_options(ListingOptions::new(Arc::new(CsvFormat::default())))
    ///     .with_schema(schema);
    /// let csv = ListingTable::try_new(config).unwrap();
    /// assert!(ndnpy_datafusion::NpyTable::new(csv).is_err());
    /// ```
    pub fn new(listing: ListingTable) -> Result<Self> {
        if !listing.options().format.is::<NpyFormat>() {
            return Err(DataFusionError::Plan(format!(
                "NpyTable wraps tables of NumPy files, not {:?}",
                listing.options().format
            )));
        }
        Ok(NpyTable {
            listing: Arc::new(listing),
        })
    }

    /// The listing table it wraps (the example of [`NpyTable`] uses it).
    pub fn listing(&self) -> &ListingTable {
        &self.listing
    }

    /// Wraps `table` if it is a NumPy listing table, else returns it.
    pub(crate) fn wrap(table: Arc<dyn TableProvider>) -> Result<Arc<dyn TableProvider>> {
        match table.downcast_ref::<ListingTable>() {
            Some(l) if l.options().format.is::<NpyFormat>() => {
                Ok(Arc::new(NpyTable::new(l.clone())?))
            }
            _ => Ok(table),
        }
    }
}

#[async_trait]
impl TableProvider for NpyTable {
    fn schema(&self) -> SchemaRef {
        self.listing.schema()
    }

    fn constraints(&self) -> Option<&Constraints> {
        self.listing.constraints()
    }

    fn table_type(&self) -> TableType {
        self.listing.table_type()
    }

    fn get_table_definition(&self) -> Option<&str> {
        self.listing.get_table_definition()
    }

    fn get_logical_plan(&'_ self) -> Option<Cow<'_, LogicalPlan>> {
        self.listing.get_logical_plan()
    }

    fn get_column_default(&self, column: &str) -> Option<&Expr> {
        self.listing.get_column_default(column)
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        self.listing.scan(state, projection, filters, limit).await
    }

    async fn scan_with_args<'a>(
        &self,
        state: &dyn Session,
        args: ScanArgs<'a>,
    ) -> Result<ScanResult> {
        self.listing.scan_with_args(state, args).await
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> Result<Vec<TableProviderFilterPushDown>> {
        self.listing.supports_filters_pushdown(filters)
    }

    fn statistics(&self) -> Option<Statistics> {
        self.listing.statistics()
    }

    async fn insert_into(
        &self,
        state: &dyn Session,
        input: Arc<dyn ExecutionPlan>,
        insert_op: InsertOp,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        self.listing.insert_into(state, input, insert_op).await
    }
}

/// `CREATE EXTERNAL TABLE … STORED AS NPY`: the listing table DataFusion's
/// factory makes, as an [`NpyTable`].
#[derive(Debug, Default)]
pub(crate) struct NpyTableFactory {
    inner: datafusion::datasource::listing_table_factory::ListingTableFactory,
}

#[async_trait]
impl TableProviderFactory for NpyTableFactory {
    async fn create(
        &self,
        state: &dyn Session,
        cmd: &CreateExternalTable,
    ) -> Result<Arc<dyn TableProvider>> {
        NpyTable::wrap(self.inner.create(state, cmd).await?)
    }
}
