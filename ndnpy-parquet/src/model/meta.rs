//! The `pandas` key: parsing what a file says and writing what pandas
//! expects, as JSON. What a [`Column`](crate::Column) says of itself (its
//! entry, its default types) is the column's (`column.rs`): this file knows
//! no column, so columns can hold a [`ColumnMeta`].
//!
//! Parsing is strict about shape (a wrong JSON type is an error naming the
//! key) and never allocates from a number in the JSON: counts such as
//! `num_categories` are redundant with the data and ignored.

use crate::error::{Error, Result};
use ndnpy::AnyArray;
use serde_json::{json, Map, Value};

/// The parsed `pandas` key.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PandasMeta {
    pub index_columns: Vec<IndexSpec>,
    pub column_indexes: Option<Value>,
    pub columns: Vec<ColumnMeta>,
    pub attributes: Option<Value>,
}

/// One entry of `index_columns`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum IndexSpec {
    Field(String),
    Range {
        name: Option<String>,
        start: i64,
        stop: i64,
        step: i64,
    },
}

/// One entry of `columns`, kept with the column it describes so that a
/// frame read and written again gives pandas the same dtypes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ColumnMeta {
    pub name: Option<String>,
    pub field_name: String,
    pub pandas_type: String,
    pub numpy_type: String,
    pub metadata: Value,
}

impl ColumnMeta {
    /// A `datetimetz` column's time zone, as the `pandas` key records it
    /// (files without `ARROW:schema` have it only there).
    pub(crate) fn timezone(&self) -> Option<String> {
        (self.pandas_type == "datetimetz")
            .then(|| self.metadata.get("timezone")?.as_str().map(str::to_owned))
            .flatten()
    }
}

/// A timestamp column's time zone: Arrow's own (`arrow`, from ARROW:schema),
/// else the one the `pandas` key records for the column.
pub(crate) fn time_zone(arrow: Option<&str>, meta: Option<&ColumnMeta>) -> Option<String> {
    arrow
        .map(str::to_owned)
        .or_else(|| meta.and_then(ColumnMeta::timezone))
}

/// `pandas_type` values pandas and pyarrow write; anything else is refused.
const KNOWN_TYPES: &[&str] = &[
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
    "datetime",
    "datetimetz",
    "timedelta",
    "unicode",
    "string",
    "bytes",
    "categorical",
    "decimal",
    "object",
    "mixed",
    "mixed-integer",
    "mixed-integer-float",
    "empty",
    "date",
    "time",
    "period",
    "interval",
    "complex64",
    "complex128",
    "list[unicode]",
];

fn err(msg: impl Into<String>) -> Error {
    Error::Metadata(msg.into())
}

/// A label as pandas stores it: a string, `null`, or (older writers) a number.
fn label(v: Option<&Value>, what: &str) -> Result<Option<String>> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(Value::Number(n)) => Ok(Some(n.to_string())),
        Some(Value::Bool(b)) => Ok(Some(if *b { "True" } else { "False" }.into())),
        Some(other) => Err(err(format!("{what}: expected a name, found {other}"))),
    }
}

fn string(o: &Map<String, Value>, key: &str, what: &str) -> Result<String> {
    match o.get(key) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(err(format!(
            "{what}: `{key}` must be a string, not {other}"
        ))),
        None => Err(err(format!("{what}: missing `{key}`"))),
    }
}

fn int(o: &Map<String, Value>, key: &str, what: &str) -> Result<i64> {
    o.get(key)
        .and_then(Value::as_i64)
        .ok_or_else(|| err(format!("{what}: `{key}` must be a 64-bit integer")))
}

/// Parses the `pandas` key's JSON text.
pub(crate) fn parse(text: &str) -> Result<PandasMeta> {
    let v: Value = serde_json::from_str(text).map_err(|e| err(format!("not JSON: {e}")))?;
    let Value::Object(top) = v else {
        return Err(err("the `pandas` key is not a JSON object"));
    };
    let index_columns = match top.get("index_columns") {
        None => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, item)| parse_index(i, item))
            .collect::<Result<_>>()?,
        Some(other) => return Err(err(format!("`index_columns` must be a list, not {other}"))),
    };
    let columns = match top.get("columns") {
        None => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, item)| parse_column(i, item))
            .collect::<Result<_>>()?,
        Some(other) => return Err(err(format!("`columns` must be a list, not {other}"))),
    };
    let column_indexes = match top.get("column_indexes") {
        None | Some(Value::Null) => None,
        Some(v @ Value::Array(_)) => Some(v.clone()),
        Some(other) => return Err(err(format!("`column_indexes` must be a list, not {other}"))),
    };
    Ok(PandasMeta {
        index_columns,
        column_indexes,
        columns,
        attributes: top.get("attributes").cloned(),
    })
}

fn parse_index(i: usize, item: &Value) -> Result<IndexSpec> {
    let what = format!("index_columns[{i}]");
    match item {
        Value::String(s) => Ok(IndexSpec::Field(s.clone())),
        Value::Object(o) => {
            let kind = string(o, "kind", &what)?;
            if kind != "range" {
                return Err(err(format!("{what}: unknown index kind {kind:?}")));
            }
            let step = int(o, "step", &what)?;
            if step == 0 {
                return Err(err(format!("{what}: a RangeIndex step cannot be 0")));
            }
            Ok(IndexSpec::Range {
                name: label(o.get("name"), &what)?,
                start: int(o, "start", &what)?,
                stop: int(o, "stop", &what)?,
                step,
            })
        }
        other => Err(err(format!(
            "{what}: expected a column name or a range, found {other}"
        ))),
    }
}

fn parse_column(i: usize, item: &Value) -> Result<ColumnMeta> {
    let what = format!("columns[{i}]");
    let Value::Object(o) = item else {
        return Err(err(format!("{what}: expected an object")));
    };
    let pandas_type = string(o, "pandas_type", &what)?;
    if !KNOWN_TYPES.contains(&pandas_type.as_str()) {
        return Err(err(format!("{what}: unknown pandas_type {pandas_type:?}")));
    }
    let metadata = o.get("metadata").cloned().unwrap_or(Value::Null);
    if !matches!(metadata, Value::Null | Value::Object(_)) {
        return Err(err(format!("{what}: `metadata` must be an object or null")));
    }
    let name = label(o.get("name"), &what)?;
    let field_name = match o.get("field_name") {
        Some(Value::String(s)) => s.clone(),
        // Files from pandas < 0.23 have no field_name: the name is the field.
        None => name
            .clone()
            .ok_or_else(|| err(format!("{what}: no field_name")))?,
        Some(other) => {
            return Err(err(format!(
                "{what}: `field_name` must be a string, not {other}"
            )))
        }
    };
    Ok(ColumnMeta {
        name,
        field_name,
        pandas_type,
        numpy_type: match o.get("numpy_type") {
            Some(Value::String(s)) => s.clone(),
            _ => String::new(),
        },
        metadata,
    })
}

/// The pandas type name of an array's values (`object` for any not numeric).
pub(crate) fn array_type_name(a: &AnyArray) -> &'static str {
    match a {
        AnyArray::Bool(_) => "bool",
        AnyArray::I8(_) => "int8",
        AnyArray::I16(_) => "int16",
        AnyArray::I32(_) => "int32",
        AnyArray::I64(_) => "int64",
        AnyArray::U8(_) => "uint8",
        AnyArray::U16(_) => "uint16",
        AnyArray::U32(_) => "uint32",
        AnyArray::U64(_) => "uint64",
        AnyArray::F16(_) => "float16",
        AnyArray::F32(_) => "float32",
        AnyArray::F64(_) => "float64",
        _ => "object",
    }
}

/// The `column_indexes` entry pandas writes for string column labels.
pub(crate) fn default_column_indexes() -> Value {
    json!([{
        "name": null,
        "field_name": null,
        "pandas_type": "unicode",
        "numpy_type": "object",
        "metadata": {"encoding": "UTF-8"},
    }])
}

/// The whole `pandas` value.
pub(crate) fn document(
    index_columns: Vec<Value>,
    column_indexes: Value,
    columns: Vec<Value>,
    attributes: Option<Value>,
) -> String {
    let mut top = Map::new();
    top.insert("index_columns".into(), Value::Array(index_columns));
    top.insert("column_indexes".into(), column_indexes);
    top.insert("columns".into(), Value::Array(columns));
    if let Some(a) = attributes {
        top.insert("attributes".into(), a);
    }
    top.insert(
        "creator".into(),
        json!({"library": "ndnpy-parquet", "version": env!("CARGO_PKG_VERSION")}),
    );
    top.insert("pandas_version".into(), json!("3.1.1"));
    Value::Object(top).to_string()
}
