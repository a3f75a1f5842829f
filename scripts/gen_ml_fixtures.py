#!/usr/bin/env python3
"""Writes .npy/.npz files of ml_dtypes' bfloat16 and float8 arrays.

JAX and other ML code save bfloat16/float8 arrays with plain np.save after
``import ml_dtypes``. NumPy has no such types, so the header only says how
many bytes a value has, and which format it is gets lost:

  ml_dtypes.bfloat16       descr '<V2'  (np.load gives |V2; .view(bfloat16))
  ml_dtypes.float8_e4m3fn  descr '<V1'  (np.load gives |V1)
  ml_dtypes.float8_e5m2    descr '<f1'  (np.load *refuses* it: "descr is not
                                         a valid dtype descriptor: '<f1'",
                                         even with ml_dtypes imported)

These fixtures let the crate check that its typed reads of those descrs give
the values ml_dtypes gives, bit for bit.

    /tmp/mlvenv/bin/python scripts/gen_ml_fixtures.py [--out fixtures/ml_dtypes]

Needs numpy and ml_dtypes. Contents of the output folder:

  bf16.npy            1-D bfloat16: 1.0, -2.5, +-0.0, smallest subnormal,
                      largest finite, +-inf, a quiet NaN (0x7fc0), then 20
                      seeded random values (default_rng(23)), magnitudes
                      1e-3..1e4, both signs
  bf16_2d_f.npy       (3, 5) bfloat16 saved from a Fortran-ordered array
                      (header fortran_order True)
  bf16_named.npy      bf16.npy's data under descr 'bfloat16' (what some
                      writers put instead of '<V2', see ml_dtypes issue 41);
                      header written with numpy.lib.format.write_array_header_1_0,
                      so it is a normal v1.0 header padded to 64 bytes.
                      np.load reads it as bfloat16 when ml_dtypes is imported.
  f8e4m3fn.npy        float8_e4m3fn, all 256 bit patterns in order (value i
                      has bits i)
  f8e5m2.npy          float8_e5m2, all 256 bit patterns in order
  NAME.f32.npy        for each NAME above: a.astype(np.float32), C order, same
                      shape: the values ml_dtypes/JAX see. NaNs are whatever
                      ml_dtypes' cast makes (compare NaN as NaN, not by bits)
  bf16.bits.npy       bf16.npy's raw bits, a.view(np.uint16)
  bf16.npz            np.savez(w=bf16 array, b=float32 [0.5, -1, 3.25])
  bf16_compressed.npz np.savez_compressed, same members

Deterministic: fixed values and seed; np.savez writes the fixed zip date
1980-01-01. The deflated members of bf16_compressed.npz depend on the zlib
version. The script ends by re-reading every file and asserting the header
descr/fortran_order/shape and the data bits.
"""

import argparse
import ast
import os
import sys

import ml_dtypes
import numpy as np

BF16 = ml_dtypes.bfloat16
E4M3 = ml_dtypes.float8_e4m3fn
E5M2 = ml_dtypes.float8_e5m2


def bf16_bits(*bits):
    return np.array(bits, dtype=np.uint16).view(BF16)


def bf16_values():
    # The special values from bit patterns, so they are exact whatever the
    # float64 -> bfloat16 rounding does.
    specials = np.concatenate([
        np.array([1.0, -2.5, 0.0], dtype=BF16),
        bf16_bits(0x8000,   # -0.0
                  0x0001,   # smallest subnormal, 2**-133
                  0x7F7F,   # largest finite, (2 - 2**-7) * 2**127
                  0x7F80,   # +inf
                  0xFF80,   # -inf
                  0x7FC0),  # quiet NaN
    ])
    rng = np.random.default_rng(23)
    mag = 10.0 ** rng.uniform(-3, 4, size=20)
    sign = np.where(rng.random(20) < 0.5, -1.0, 1.0)
    return np.concatenate([specials, (sign * mag).astype(BF16)])


def bf16_2d_fortran():
    c = (np.arange(15, dtype=np.float64).reshape(3, 5) * 0.375 - 2.0).astype(BF16)
    f = np.asfortranarray(c)
    assert f.flags.f_contiguous and not f.flags.c_contiguous
    return f


def save_named(path, a, descr):
    """Like np.save of the C-ordered 1-D/N-D a, but with descr spelled descr."""
    assert a.flags.c_contiguous
    with open(path, "wb") as fp:
        np.lib.format.write_array_header_1_0(
            fp, {"descr": descr, "fortran_order": False, "shape": a.shape})
        fp.write(a.tobytes())


def read_header(raw):
    """(header dict, data offset) of a .npy, without letting NumPy parse the
    descr (it cannot for '<f1')."""
    assert raw[:6] == b"\x93NUMPY", raw[:6]
    assert raw[6:8] == b"\x01\x00", raw[6:8]
    hlen = int.from_bytes(raw[8:10], "little")
    text = raw[10:10 + hlen].decode("latin1")
    assert (10 + hlen) % 64 == 0 and text.endswith("\n"), text
    return ast.literal_eval(text), 10 + hlen


def write_all(out):
    written = []  # (name, array as saved or None, expected descr)

    def path(name):
        return os.path.join(out, name)

    bf16 = bf16_values()
    bf16_2d = bf16_2d_fortran()
    f8a = np.arange(256, dtype=np.uint8).view(E4M3)
    f8b = np.arange(256, dtype=np.uint8).view(E5M2)

    for name, a, descr in [("bf16", bf16, "<V2"),
                           ("bf16_2d_f", bf16_2d, "<V2"),
                           ("f8e4m3fn", f8a, "<V1"),
                           ("f8e5m2", f8b, "<f1")]:
        np.save(path(name + ".npy"), a)
        written.append((name + ".npy", a, descr))
    save_named(path("bf16_named.npy"), bf16, "bfloat16")
    written.append(("bf16_named.npy", bf16, "bfloat16"))

    for name, a, _ in list(written):
        f32 = np.ascontiguousarray(a.astype(np.float32))
        f32_name = name[:-4] + ".f32.npy"
        np.save(path(f32_name), f32)
        written.append((f32_name, f32, "<f4"))
    np.save(path("bf16.bits.npy"), bf16.view(np.uint16))
    written.append(("bf16.bits.npy", bf16.view(np.uint16), "<u2"))

    b = np.array([0.5, -1.0, 3.25], dtype=np.float32)
    np.savez(path("bf16.npz"), w=bf16, b=b)
    np.savez_compressed(path("bf16_compressed.npz"), w=bf16, b=b)
    return written, {"bf16.npz": {"w": bf16, "b": b},
                     "bf16_compressed.npz": {"w": bf16, "b": b}}


def same_bits(x, y):
    return (x.shape == y.shape and x.dtype.itemsize == y.dtype.itemsize
            and np.ascontiguousarray(x).tobytes() == np.ascontiguousarray(y).tobytes())


def verify(out, written, archives):
    for name, a, descr in written:
        with open(os.path.join(out, name), "rb") as f:
            raw = f.read()
        hdr, offset = read_header(raw)
        assert hdr["descr"] == descr, (name, hdr)
        assert hdr["shape"] == a.shape, (name, hdr)
        assert hdr["fortran_order"] == (a.ndim > 1 and not a.flags.c_contiguous), (name, hdr)
        order = "F" if hdr["fortran_order"] else "C"
        assert raw[offset:] == a.tobytes(order=order), name
        if descr == "<f1":
            # NumPy cannot load what it wrote here; check that stays so
            # (the crate must do better than np.load).
            try:
                np.load(os.path.join(out, name))
            except ValueError as e:
                assert "'<f1'" in str(e), e
            else:
                raise AssertionError(f"np.load now reads {name}: update the docstring")
            got = np.frombuffer(raw, dtype=np.uint8, offset=offset).view(a.dtype).reshape(a.shape)
        else:
            got = np.load(os.path.join(out, name))
            if descr == "bfloat16":
                assert got.dtype == BF16, got.dtype
            got = got.view(a.dtype)
        assert same_bits(got, a), name
        assert got.flags.f_contiguous == a.flags.f_contiguous, name
    for name, members in archives.items():
        with np.load(os.path.join(out, name)) as z:
            assert z.files == list(members), (name, z.files)
            for k, a in members.items():
                got = z[k]
                assert got.dtype.str == ("|V2" if a.dtype == BF16 else a.dtype.str), (name, k, got.dtype)
                assert same_bits(got.view(a.dtype), a), (name, k)
    # The f32 files hold ml_dtypes' own conversions; spot-check a few known values.
    f32 = np.load(os.path.join(out, "bf16.f32.npy"))
    assert list(f32[:8]) == [1.0, -2.5, 0.0, -0.0, 2.0 ** -133, (2 - 2 ** -7) * 2.0 ** 127,
                             np.inf, -np.inf]
    assert np.signbit(f32[3]) and np.isnan(f32[8])
    e4 = np.load(os.path.join(out, "f8e4m3fn.f32.npy"))
    assert e4[0x7E] == 448 and np.isnan(e4[0x7F]) and np.isnan(e4[0xFF]) and not np.isinf(e4).any()
    e5 = np.load(os.path.join(out, "f8e5m2.f32.npy"))
    assert e5[0x7B] == 57344 and e5[0x7C] == np.inf and e5[0xFC] == -np.inf and np.isnan(e5[0x7D])


def describe(out, name):
    p = os.path.join(out, name)
    size = os.path.getsize(p)
    if name.endswith(".npz"):
        with np.load(p) as z:
            parts = [f"{k}: {z[k].dtype.str} {z[k].shape}" for k in z.files]
        return f"{name:22} {size:6} B  " + ", ".join(parts)
    with open(p, "rb") as f:
        hdr, _ = read_header(f.read())
    return (f"{name:22} {size:6} B  descr {hdr['descr']!r} shape {hdr['shape']} "
            f"fortran_order {hdr['fortran_order']}")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(here, "..", "fixtures", "ml_dtypes"),
                    help="output folder (its .npy/.npz files are deleted first)")
    out = ap.parse_args().out
    if os.path.isdir(out):
        for n in os.listdir(out):
            if n.endswith((".npy", ".npz")):
                os.remove(os.path.join(out, n))
    os.makedirs(out, exist_ok=True)
    written, archives = write_all(out)
    verify(out, written, archives)
    for name in [w[0] for w in written] + list(archives):
        print(describe(out, name))
    print(f"verified; numpy {np.__version__}, ml_dtypes {ml_dtypes.__version__}, "
          f"python {sys.version.split()[0]}")


if __name__ == "__main__":
    main()
