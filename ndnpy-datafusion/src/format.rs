//! The `FileFormat` (and its factory, for `STORED AS NPY`): schemas and
//! row counts from headers alone, scans by `NpySource`.

use crate::layout;
use crate::scan::check_schema;
use crate::source::NpySource;
use async_trait::async_trait;
use datafusion::arrow::datatypes::{Schema, SchemaRef};
use datafusion::catalog::Session;
use datafusion::common::stats::Precision;
use datafusion::common::{GetExt, Statistics};
use datafusion::datasource::file_format::file_compression_type::FileCompressionType;
use datafusion::datasource::file_format::{FileFormat, FileFormatFactory};
use datafusion::datasource::source::DataSourceExec;
use datafusion::error::{DataFusionError, Result};
use datafusion::physical_plan::ExecutionPlan;
use datafusion_datasource::file::FileSource;
use datafusion_datasource::file_scan_config::FileScanConfig;
use datafusion_datasource::TableSchema;
use object_store::{ObjectMeta, ObjectStore};
use std::collections::HashMap;
use std::sync::Arc;

/// NumPy files as a DataFusion format: `.npy` files (rows along the first
/// axis, one column `value`, a column per field of a record dtype, tensor
/// columns for N-d rows) and `.npz` archives (a column per member).
///
/// ```
/// use datafusion::datasource::file_format::FileFormat;
/// let format = ndnpy_datafusion::NpyFormat::default();
/// assert_eq!(format.get_ext(), "npy");
/// ```
#[derive(Debug, Clone, Default)]
pub struct NpyFormat {
    extension: Option<String>,
}

impl NpyFormat {
    /// The format, listing files that end in `extension` (`"npz"` for
    /// archives; `"npy"` by default).
    ///
    /// ```
    /// use datafusion::datasource::file_format::FileFormat;
    /// let format = ndnpy_datafusion::NpyFormat::with_extension("npz");
    /// assert_eq!(format.get_ext(), "npz");
    /// ```
    pub fn with_extension(extension: &str) -> Self {
        NpyFormat {
            extension: Some(extension.trim_start_matches('.').to_owned()),
        }
    }
}

#[async_trait]
impl FileFormat for NpyFormat {
    fn get_ext(&self) -> String {
        self.extension.clone().unwrap_or_else(|| "npy".into())
    }

    fn get_ext_with_compression(&self, compression: &FileCompressionType) -> Result<String> {
        if compression.is_compressed() {
            return Err(DataFusionError::NotImplemented(
                "NumPy files are read as they are: an .npz compresses its members itself".into(),
            ));
        }
        Ok(self.get_ext())
    }

    fn compression_type(&self) -> Option<FileCompressionType> {
        None
    }

    /// The columns of the first NumPy object; every other one must have
    /// the same (checked from its header as statistics are gathered, and
    /// again as it is read).
    async fn infer_schema(
        &self,
        _state: &dyn Session,
        store: &Arc<dyn ObjectStore>,
        objects: &[ObjectMeta],
    ) -> Result<SchemaRef> {
        for object in objects {
            if let Some(found) = layout::fetch(store, object).await? {
                return Ok(Arc::new(Schema::new(found.fields())));
            }
        }
        Err(DataFusionError::Plan(
            "no .npy or .npz file found: a table needs at least one".into(),
        ))
    }

    /// The row count, exact, from the object's headers (which must give
    /// the table's columns).
    async fn infer_stats(
        &self,
        _state: &dyn Session,
        store: &Arc<dyn ObjectStore>,
        table_schema: SchemaRef,
        object: &ObjectMeta,
    ) -> Result<Statistics> {
        let mut stats = Statistics::new_unknown(&table_schema);
        let rows = match layout::fetch(store, object).await? {
            Some(found) => {
                check_schema(&found, &table_schema, object.location.as_ref())?;
                found.rows
            }
            None => 0,
        };
        stats.num_rows = Precision::Exact(rows);
        stats.total_byte_size = Precision::Inexact(object.size as usize);
        Ok(stats)
    }

    /// The scan of `conf`, whose source is already an [`NpySource`] (made
    /// by [`FileFormat::file_source`], projection applied).
    async fn create_physical_plan(
        &self,
        _state: &dyn Session,
        conf: FileScanConfig,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(DataSourceExec::from_data_source(conf))
    }

    fn file_source(&self, table_schema: TableSchema) -> Arc<dyn FileSource> {
        Arc::new(NpySource::new(table_schema))
    }
}

/// Makes [`NpyFormat`]s for `CREATE EXTERNAL TABLE … STORED AS NPY` (and
/// `STORED AS NPZ`, registered by [`crate::register_formats`]).
///
/// ```
/// use datafusion::common::GetExt;
/// assert_eq!(ndnpy_datafusion::NpyFormatFactory::npz().get_ext(), "npz");
/// ```
#[derive(Debug, Clone)]
pub struct NpyFormatFactory {
    extension: String,
}

impl NpyFormatFactory {
    /// The factory of `STORED AS NPY`.
    ///
    /// ```
    /// use datafusion::common::GetExt;
    /// assert_eq!(ndnpy_datafusion::NpyFormatFactory::npy().get_ext(), "npy");
    /// ```
    pub fn npy() -> Self {
        NpyFormatFactory {
            extension: "npy".into(),
        }
    }

    /// The factory of `STORED AS NPZ`.
    ///
    /// ```
    /// use datafusion::common::GetExt;
    /// assert_eq!(ndnpy_datafusion::NpyFormatFactory::npz().get_ext(), "npz");
    /// ```
    pub fn npz() -> Self {
        NpyFormatFactory {
            extension: "npz".into(),
        }
    }
}

impl FileFormatFactory for NpyFormatFactory {
    fn create(
        &self,
        _state: &dyn Session,
        options: &HashMap<String, String>,
    ) -> Result<Arc<dyn FileFormat>> {
        if let Some(key) = options.keys().next() {
            return Err(DataFusionError::Configuration(format!(
                "NPY tables take no options (got `{key}`)"
            )));
        }
        Ok(Arc::new(NpyFormat::with_extension(&self.extension)))
    }

    fn default(&self) -> Arc<dyn FileFormat> {
        Arc::new(NpyFormat::with_extension(&self.extension))
    }
}

impl GetExt for NpyFormatFactory {
    fn get_ext(&self) -> String {
        self.extension.clone()
    }
}
