//! The Rust side of `scripts/interop_safetensors.py`: converts between
//! `.npz` and safetensors with `ndnpy::safetensors`, so that Python's own
//! safetensors and NumPy check the results.
//!
//! ```text
//! cargo run --release --features safetensors --example interop_safetensors -- \
//!     to-safetensors IN.npz OUT.safetensors [bfloat16|float8_e4m3fn|float8_e5m2]
//! cargo run --release --features safetensors --example interop_safetensors -- \
//!     to-npz IN.safetensors OUT.npz [compressed]
//! ```

use ndnpy::safetensors::{
    npz_to_safetensors_with, safetensors_to_npz_with, MlDtype, SafetensorsFile, SafetensorsOptions,
};
use ndnpy::NpzMmap;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [command, input, output, rest @ ..] = &args[..] else {
        return Err("usage: interop_safetensors to-safetensors|to-npz IN OUT [OPTION]".into());
    };
    let mut options = SafetensorsOptions::default();
    match (command.as_str(), rest) {
        ("to-safetensors", rest) => {
            if let [format] = rest {
                options = options.raw_as(format.parse::<MlDtype>()?);
            }
            // SAFETY: the script does not touch the archive while it is
            // converted.
            let npz = unsafe { NpzMmap::open(input)? };
            npz_to_safetensors_with(&npz, output, &options)?;
        }
        ("to-npz", rest) => {
            options = options.compressed(rest == ["compressed"]);
            // SAFETY: as above, for the safetensors file.
            let file = unsafe { SafetensorsFile::open(input)? };
            safetensors_to_npz_with(&file, output, &options)?;
        }
        _ => return Err(format!("unknown command {command}").into()),
    }
    Ok(())
}
