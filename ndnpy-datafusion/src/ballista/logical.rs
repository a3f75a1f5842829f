//! The logical codec: an [`NpyTable`] as bytes (its paths and extensions;
//! the schema travels beside it in DataFusion's own message), so a client's
//! plan reaches the scheduler; every other node goes to Ballista's codec.

use super::tag::{strip_tag, TAG};
use crate::format::NpyFormat;
use crate::table::NpyTable;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::TableProvider;
use datafusion::common::TableReference;
use datafusion::datasource::file_format::FileFormatFactory;
use datafusion::datasource::listing::{
    ListingOptions, ListingTable, ListingTableConfig, ListingTableUrl,
};
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{Extension, LogicalPlan};
use datafusion_proto::logical_plan::LogicalExtensionCodec;
use std::sync::Arc;

/// Ballista's logical codec that also carries NumPy tables ([`NpyTable`])
/// from a client to the scheduler, which lists the files and reads their
/// headers again as it plans (so it must see the same paths: a shared
/// folder, or object storage).
///
/// ```
/// use std::sync::Arc;
/// use ballista_core::extension::SessionConfigExt;
/// use datafusion::prelude::SessionConfig;
/// use ndnpy_datafusion::ballista::NpyLogicalCodec;
///
/// let config = SessionConfig::new_with_ballista()
///     .with_ballista_logical_extension_codec(Arc::new(NpyLogicalCodec::default()));
/// assert!(format!("{:?}", config.ballista_logical_extension_codec()).contains("NpyLogicalCodec"));
/// ```
#[derive(Debug)]
pub struct NpyLogicalCodec {
    inner: Arc<dyn LogicalExtensionCodec>,
}

impl Default for NpyLogicalCodec {
    fn default() -> Self {
        NpyLogicalCodec::wrapping(Arc::new(
            ballista_core::serde::BallistaLogicalExtensionCodec::default(),
        ))
    }
}

impl NpyLogicalCodec {
    /// Our tables, and `inner` for everything else (a codec of the
    /// application's own nodes, itself delegating to Ballista's).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ballista_core::serde::BallistaLogicalExtensionCodec;
    /// let codec = ndnpy_datafusion::ballista::NpyLogicalCodec::wrapping(
    ///     Arc::new(BallistaLogicalExtensionCodec::default()),
    /// );
    /// # let _ = codec;
    /// ```
    pub fn wrapping(inner: Arc<dyn LogicalExtensionCodec>) -> Self {
        NpyLogicalCodec { inner }
    }
}

impl LogicalExtensionCodec for NpyLogicalCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[LogicalPlan],
        ctx: &TaskContext,
    ) -> Result<Extension> {
        self.inner.try_decode(buf, inputs, ctx)
    }

    fn try_encode(&self, node: &Extension, buf: &mut Vec<u8>) -> Result<()> {
        self.inner.try_encode(node, buf)
    }

    fn try_decode_table_provider(
        &self,
        buf: &[u8],
        table_ref: &TableReference,
        schema: SchemaRef,
        ctx: &TaskContext,
    ) -> Result<Arc<dyn TableProvider>> {
        let Some(body) = strip_tag(buf) else {
            return self
                .inner
                .try_decode_table_provider(buf, table_ref, schema, ctx);
        };
        let mut fields = Fields { rest: body };
        let format_ext = fields.next()?;
        let file_ext = fields.next()?;
        let mut paths = Vec::new();
        while !fields.rest.is_empty() {
            paths.push(ListingTableUrl::parse(fields.next()?)?);
        }
        let options = ListingOptions::new(Arc::new(NpyFormat::with_extension(format_ext)))
            .with_file_extension(file_ext);
        let config = ListingTableConfig::new_with_multi_paths(paths)
            .with_listing_options(options)
            .with_schema(schema);
        Ok(Arc::new(NpyTable::new(ListingTable::try_new(config)?)?))
    }

    fn try_encode_table_provider(
        &self,
        table_ref: &TableReference,
        node: Arc<dyn TableProvider>,
        buf: &mut Vec<u8>,
    ) -> Result<()> {
        let Some(table) = node.downcast_ref::<NpyTable>() else {
            return self.inner.try_encode_table_provider(table_ref, node, buf);
        };
        let listing = table.listing();
        if !listing.options().table_partition_cols.is_empty() {
            return Err(DataFusionError::NotImplemented(format!(
                "{table_ref}: NumPy tables with partition columns do not travel to Ballista"
            )));
        }
        buf.extend_from_slice(TAG);
        put(buf, &listing.options().format.get_ext());
        put(buf, &listing.options().file_extension);
        for path in listing.table_paths() {
            put(buf, path.as_str());
        }
        Ok(())
    }

    fn try_decode_file_format(
        &self,
        buf: &[u8],
        ctx: &TaskContext,
    ) -> Result<Arc<dyn FileFormatFactory>> {
        self.inner.try_decode_file_format(buf, ctx)
    }

    fn try_encode_file_format(
        &self,
        buf: &mut Vec<u8>,
        node: Arc<dyn FileFormatFactory>,
    ) -> Result<()> {
        self.inner.try_encode_file_format(buf, node)
    }
}

/// Appends `s`, its length first (4 bytes, little-endian).
fn put(buf: &mut Vec<u8>, s: &str) {
    buf.extend_from_slice(&(s.len() as u32).to_le_bytes());
    buf.extend_from_slice(s.as_bytes());
}

/// The strings `put` wrote, read back with errors (never panics) on bytes
/// that are short or not UTF-8.
struct Fields<'a> {
    rest: &'a [u8],
}

impl<'a> Fields<'a> {
    fn next(&mut self) -> Result<&'a str> {
        let bad = || DataFusionError::Internal("a NumPy table in the plan is cut short".into());
        let (len, rest) = self.rest.split_first_chunk::<4>().ok_or_else(bad)?;
        let len = u32::from_le_bytes(*len) as usize;
        if rest.len() < len {
            return Err(bad());
        }
        let (s, rest) = rest.split_at(len);
        self.rest = rest;
        std::str::from_utf8(s).map_err(|_| {
            DataFusionError::Internal("a NumPy table in the plan names a path not in UTF-8".into())
        })
    }
}
