#!/usr/bin/env python3
"""safetensors interop of ndnpy::safetensors against Hugging Face's own
safetensors package (CI, in target/venv-ml: numpy, ml_dtypes, safetensors).

1. Archives np.savez and np.savez_compressed wrote (every dtype
   safetensors.numpy holds, big-endian and Fortran-order members, 0-d and
   empty arrays, JAX-style names) are converted by ndnpy; Python's
   safetensors.numpy.load_file reads each tensor with the same dtype, shape
   and bytes as np.load gives.
2. Files safetensors.numpy.save_file wrote (with __metadata__) are converted
   by ndnpy to .npz; np.load (allow_pickle=False) reads each member equal,
   and the metadata member back as the same dict. Converted back by ndnpy,
   load_file reads the same tensors and safe_open the same metadata.
3. bfloat16 and float8 arrays of ml_dtypes, saved by np.savez, become BF16,
   F8_E4M3 and F8_E5M2 tensors (with --as) whose bytes are the source's
   bits, as safetensors' own deserializer reads them; converted back, they
   are the bytes np.save writes for ml_dtypes' arrays. Without --as the
   conversion is refused with a message naming --as.

    target/venv-ml/bin/python scripts/interop_safetensors.py

Set NDNPY_CARGO_ARGS (e.g. --release) to pass options to cargo. Exits
non-zero on the first difference.
"""

import os
import subprocess
import sys
import tempfile
import zipfile

import ml_dtypes
import numpy as np
import safetensors
from safetensors import safe_open
from safetensors.numpy import load_file, save_file

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Every NumPy dtype safetensors.numpy reads and writes, by its name there.
DTYPES = {
    "BOOL": np.bool_, "I8": np.int8, "I16": np.int16, "I32": np.int32, "I64": np.int64,
    "U8": np.uint8, "U16": np.uint16, "U32": np.uint32, "U64": np.uint64,
    "F16": np.float16, "F32": np.float32, "F64": np.float64, "C64": np.complex64,
}


def ndnpy(*args, check=True):
    extra = os.environ.get("NDNPY_CARGO_ARGS", "").split()
    cmd = ["cargo", "run", "-q", *extra, "-p", "ndnpy", "--features", "safetensors",
           "--example", "interop_safetensors", "--", *args]
    return subprocess.run(cmd, cwd=ROOT, check=check, capture_output=not check, text=True)


def values(dtype, shape, rng):
    """Values of `dtype` with the type's edges in them."""
    dtype = np.dtype(dtype)
    n = int(np.prod(shape))
    if dtype == np.bool_:
        flat = rng.integers(0, 2, n).astype(np.bool_)
    elif dtype.kind in "iu":
        info = np.iinfo(dtype)
        flat = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
        flat[:2] = [info.min, info.max][:n] if n >= 2 else flat[:2]
    elif dtype.kind == "f":
        flat = rng.standard_normal(n).astype(dtype)
        edges = np.array([np.nan, np.inf, -np.inf, -0.0, np.finfo(dtype).tiny], dtype=dtype)
        flat[:min(n, 5)] = edges[:min(n, 5)]
    else:
        flat = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dtype)
    return flat.reshape(shape)


def same(name, got, want):
    """Same dtype, shape and bytes (NaN payloads and -0.0 included)."""
    # astype, not ascontiguousarray, which makes 0-d arrays 1-d.
    want = want.astype(want.dtype.newbyteorder("<"), order="C")
    assert got.dtype == want.dtype, (name, got.dtype, want.dtype)
    assert got.shape == want.shape, (name, got.shape, want.shape)
    assert got.tobytes(order="C") == want.tobytes(), name


def numpy_archives(tmp):
    rng = np.random.default_rng(20)
    arrays = {}
    for i, (st, dtype) in enumerate(DTYPES.items()):
        shape = [(3, 4), (5,), (2, 3, 2), (), (0, 3)][i % 5]
        arrays[st.lower()] = values(dtype, shape, rng)
    arrays["params/encoder/layer_0/kernel"] = values(np.float32, (4, 8), rng)
    arrays["be_i4"] = values(np.int32, (3, 5), rng).astype(">i4")
    arrays["be_c8"] = values(np.complex64, (4,), rng).astype(">c8")
    arrays["fortran_f8"] = np.asfortranarray(values(np.float64, (4, 6), rng))
    arrays["be_fortran_u2"] = np.asfortranarray(values(np.uint16, (3, 2, 4), rng).astype(">u2"))
    for compress in (False, True):
        src = os.path.join(tmp, f"numpy_{compress}.npz")
        (np.savez_compressed if compress else np.savez)(src, **arrays)
        out = os.path.join(tmp, f"numpy_{compress}.safetensors")
        ndnpy("to-safetensors", src, out)
        loaded = load_file(out)
        assert sorted(loaded) == sorted(arrays), (sorted(loaded), sorted(arrays))
        for name, want in arrays.items():
            same(name, loaded[name], want)
    print(f"ok: {len(arrays)} np.savez members (stored and compressed) read equal by load_file")


def python_files(tmp):
    rng = np.random.default_rng(21)
    tensors = {st.lower(): values(dtype, (2, 3), rng) for st, dtype in DTYPES.items()}
    tensors["params/decoder/embedding"] = values(np.float32, (7, 5), rng)
    tensors["scalar"] = values(np.float64, (), rng)
    metadata = {"format": "np", "ünïcode": 'with "quotes"'}
    src = os.path.join(tmp, "python.safetensors")
    save_file(tensors, src, metadata=metadata)
    for compressed in ([], ["compressed"]):
        npz = os.path.join(tmp, "from_python.npz")
        ndnpy("to-npz", src, npz, *compressed)
        with np.load(npz, allow_pickle=False) as z:
            assert sorted(z.files) == sorted([*tensors, "__metadata__"]), z.files
            for name, want in tensors.items():
                same(name, z[name], want)
            assert dict(z["__metadata__"].tolist()) == metadata, z["__metadata__"]
        back = os.path.join(tmp, "back.safetensors")
        ndnpy("to-safetensors", npz, back)
        loaded = load_file(back)
        for name, want in tensors.items():
            same(name, loaded[name], want)
        with safe_open(back, framework="np") as f:
            assert f.metadata() == metadata, f.metadata()
    print(f"ok: save_file's {len(tensors)} tensors and metadata through .npz (np.load) and back")


def raw_tensors(path):
    """name -> (dtype, shape, bytes), as safetensors' own reader sees them."""
    with open(path, "rb") as f:
        return {name: (t["dtype"], t["shape"], bytes(t["data"]))
                for name, t in safetensors.deserialize(f.read())}


def ml_dtypes_arrays(tmp):
    rng = np.random.default_rng(22)
    cases = [
        ("bfloat16", "BF16", ml_dtypes.bfloat16, np.uint16, "<V2"),
        ("float8_e4m3fn", "F8_E4M3", ml_dtypes.float8_e4m3fn, np.uint8, "<V1"),
        ("float8_e5m2", "F8_E5M2", ml_dtypes.float8_e5m2, np.uint8, "<f1"),
    ]
    for fmt, st_dtype, ml, bits, descr in cases:
        w = np.concatenate([rng.standard_normal(40), [np.nan, np.inf, -0.0, 0.0]]).astype(ml)
        w = w.reshape(4, 11)
        f = np.asfortranarray(rng.standard_normal((3, 5)).astype(ml))
        for compress in (False, True):
            src = os.path.join(tmp, f"{fmt}_{compress}.npz")
            (np.savez_compressed if compress else np.savez)(src, w=w, f=f, b=np.float32([0.5, -1]))
            out = os.path.join(tmp, f"{fmt}.safetensors")
            refused = ndnpy("to-safetensors", src, out, check=False)
            if descr == "<f1":
                # ml_dtypes writes '<f1' for float8_e5m2 alone: no --as needed.
                assert refused.returncode == 0, refused.stderr
            else:
                assert refused.returncode != 0 and "--as" in refused.stderr, refused.stderr
            ndnpy("to-safetensors", src, out, fmt)
            tensors = raw_tensors(out)
            for name, a in (("w", w), ("f", f)):
                dtype, shape, data = tensors[name]
                assert dtype == st_dtype and shape == list(a.shape), (fmt, name, dtype, shape)
                assert data == a.view(bits).tobytes(order="C"), (fmt, name)
            assert tensors["b"][0] == "F32"
            back = os.path.join(tmp, f"{fmt}_back.npz")
            ndnpy("to-npz", out, back)
            with np.load(back, allow_pickle=False) as z:
                if descr != "<f1":  # NumPy cannot load '<f1' (ml_dtypes' float8_e5m2)
                    got = z["w"].view(ml)
                    assert got.view(bits).tobytes() == w.view(bits).tobytes(), fmt
            # The member is byte for byte the one np.savez wrote.
            with zipfile.ZipFile(src) as a, zipfile.ZipFile(back) as b:
                assert a.read("w.npy") == b.read("w.npy"), fmt
                assert f"'descr': '{descr}'".encode() in b.read("w.npy")[:128], fmt
    print("ok: ml_dtypes bfloat16/float8 through np.savez -> BF16/F8 tensors with the same bits, and back")


def main():
    print("numpy", np.__version__, "ml_dtypes", ml_dtypes.__version__,
          "safetensors", safetensors.__version__)
    with tempfile.TemporaryDirectory() as tmp:
        numpy_archives(tmp)
        python_files(tmp)
        ml_dtypes_arrays(tmp)
    print("interop_safetensors: all checks passed")


if __name__ == "__main__":
    sys.exit(main())
