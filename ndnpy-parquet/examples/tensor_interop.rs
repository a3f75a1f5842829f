//! Helper of `scripts/interop_tensor.py` (fixed-shape tensor columns
//! against pyarrow):
//!
//! - `tensor_interop from-ipc IN.arrow OUT.npz`: an Arrow IPC file (as
//!   pyarrow writes it) as an `.npz`, one member per column
//!   (`batch_to_npz`; tensor columns become `(n, …)` members);
//! - `tensor_interop from-parquet IN.parquet OUT.npz`: the same from Parquet
//!   (`read_parquet`);
//! - `tensor_interop to-ipc IN.npz OUT.arrow` and
//!   `tensor_interop to-parquet IN.npz OUT.parquet`: an `.npz` as a record
//!   batch (`npz_to_batch`; `(n, …)` members become tensor columns) in an
//!   IPC file or a Parquet file.

use arrow_array::RecordBatch;
use ndnpy_parquet::arrow::{batch_to_npz, npz_to_batch, read_parquet, write_parquet};
use std::path::Path;

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn read_ipc(path: &Path) -> Result<RecordBatch> {
    let reader = arrow_ipc::reader::FileReader::try_new(std::fs::File::open(path)?, None)?;
    let schema = reader.schema();
    let batches = reader.collect::<std::result::Result<Vec<_>, _>>()?;
    Ok(arrow_select::concat::concat_batches(&schema, &batches)?)
}

fn write_ipc(batch: &RecordBatch, path: &Path) -> Result<()> {
    let file = std::fs::File::create(path)?;
    let mut w = arrow_ipc::writer::FileWriter::try_new(file, &batch.schema())?;
    w.write(batch)?;
    w.finish()?;
    Ok(())
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [command, input, output] = &args[..] else {
        return Err("usage: tensor_interop from-ipc|from-parquet|to-ipc|to-parquet IN OUT".into());
    };
    let (input, output) = (Path::new(input), Path::new(output));
    match command.as_str() {
        "from-ipc" => batch_to_npz(&read_ipc(input)?, output)?,
        "from-parquet" => batch_to_npz(&read_parquet(input, &Default::default())?, output)?,
        "to-ipc" => write_ipc(&npz_to_batch(input)?, output)?,
        "to-parquet" => write_parquet(&npz_to_batch(input)?, output)?,
        other => return Err(format!("unknown command {other:?}").into()),
    }
    Ok(())
}
