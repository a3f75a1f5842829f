//! The physical codec: a scan of NumPy files (`DataSourceExec` over a
//! `FileScanConfig` whose source is an [`NpySource`]) as bytes, so the
//! scheduler can send it to executors; every other node goes to Ballista's
//! codec.

use super::tag::{strip_tag, TAG};
use crate::source::NpySource;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::TaskContext;
use datafusion::physical_plan::ExecutionPlan;
use datafusion_datasource::source::DataSourceExec;
use datafusion_proto::physical_plan::from_proto::{
    parse_protobuf_file_scan_config, parse_table_schema_from_proto,
};
use datafusion_proto::physical_plan::to_proto::serialize_file_scan_config;
use datafusion_proto::physical_plan::{
    PhysicalExtensionCodec, PhysicalPlanDecodeContext, PhysicalProtoConverterExtension,
};
use datafusion_proto::protobuf::FileScanExecConf;
use prost::Message;
use std::sync::Arc;

/// Ballista's physical codec that also carries scans of NumPy files.
///
/// A scan is DataFusion's own protobuf form of its file scan (files and row
/// ranges, schema, projection, limit, statistics) behind a tag that no
/// protobuf message starts with; the executor rebuilds the [`NpySource`]
/// from the table schema in it. Everything else (shuffles, Ballista's own
/// nodes) is handed to the codec this one wraps, Ballista's by default.
///
/// ```
/// use std::sync::Arc;
/// use ballista_core::extension::SessionConfigExt;
/// use datafusion::prelude::SessionConfig;
/// use ndnpy_datafusion::ballista::NpyPhysicalCodec;
///
/// let config = SessionConfig::new_with_ballista()
///     .with_ballista_physical_extension_codec(Arc::new(NpyPhysicalCodec::default()));
/// assert!(format!("{:?}", config.ballista_physical_extension_codec()).contains("NpyPhysicalCodec"));
/// ```
#[derive(Debug)]
pub struct NpyPhysicalCodec {
    inner: Arc<dyn PhysicalExtensionCodec>,
}

impl Default for NpyPhysicalCodec {
    fn default() -> Self {
        NpyPhysicalCodec::wrapping(Arc::new(
            ballista_core::serde::BallistaPhysicalExtensionCodec::default(),
        ))
    }
}

impl NpyPhysicalCodec {
    /// Our scans, and `inner` for every other node (a codec of the
    /// application's own nodes, itself delegating to Ballista's).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ballista_core::serde::BallistaPhysicalExtensionCodec;
    /// let codec = ndnpy_datafusion::ballista::NpyPhysicalCodec::wrapping(
    ///     Arc::new(BallistaPhysicalExtensionCodec::default()),
    /// );
    /// # let _ = codec;
    /// ```
    pub fn wrapping(inner: Arc<dyn PhysicalExtensionCodec>) -> Self {
        NpyPhysicalCodec { inner }
    }
}

impl PhysicalExtensionCodec for NpyPhysicalCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let Some(body) = strip_tag(buf) else {
            return self.inner.try_decode(buf, inputs, ctx, proto_converter);
        };
        let proto = FileScanExecConf::decode(body).map_err(|e| {
            DataFusionError::Internal(format!("a NumPy scan in the plan does not decode: {e}"))
        })?;
        let source = Arc::new(NpySource::new(parse_table_schema_from_proto(&proto)?));
        let decode = PhysicalPlanDecodeContext::new(ctx, self);
        let conf = parse_protobuf_file_scan_config(&proto, &decode, proto_converter, source)?;
        Ok(DataSourceExec::from_data_source(conf))
    }

    fn try_encode(
        &self,
        node: Arc<dyn ExecutionPlan>,
        buf: &mut Vec<u8>,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<()> {
        let scan = node
            .downcast_ref::<DataSourceExec>()
            .and_then(|exec| exec.downcast_to_file_source::<NpySource>());
        let Some((conf, _)) = scan else {
            return self.inner.try_encode(node, buf, proto_converter);
        };
        let proto = serialize_file_scan_config(conf, self, proto_converter)?;
        buf.extend_from_slice(TAG);
        proto
            .encode(buf)
            .map_err(|e| DataFusionError::Internal(format!("encoding a NumPy scan: {e}")))
    }
}
