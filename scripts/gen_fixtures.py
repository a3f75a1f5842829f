#!/usr/bin/env python3
"""Generate the NumPy interoperability fixtures under ``fixtures/``.

Usage:  python3 scripts/gen_fixtures.py

The script deletes ``fixtures/`` (keeping nothing) and regenerates it.  Every
fixture file ``<name>.npy`` / ``<name>.npz`` gets a sidecar ``<name>.json``
describing what a reader must produce (or which error it must give).  See
``fixtures/README.md`` for the sidecar formats.

Determinism: all arrays are built from constants or from generators with
fixed seeds.  ``np.savez`` is already deterministic: it opens members with
``ZipFile.open(name, 'w')``, which creates ``ZipInfo(name)`` whose default
``date_time`` is the fixed 1980-01-01 00:00:00 (DOS date 0x0021, time 0).  We
check that (see ``check_savez_timestamps``).  Archives the script assembles
itself use ``ZipInfo`` objects with the same fixed ``date_time`` (never
``ZipFile.writestr(str, ...)``, which would embed the current local time).
Deflate output depends only on the zlib version.  Pickled object arrays use
NumPy's fixed pickle protocol (3).

Requires Python 3.11+ and NumPy 2.x.
"""

from __future__ import annotations

import ast
import io
import json
import math
import os
import re
import shutil
import struct
import sys
import tempfile
import warnings
import zipfile
import zlib
from pathlib import Path

import numpy as np
from numpy.lib import format as npformat
from numpy.lib import _format_impl  # for _filter_header (Python 2 'L' suffixes)

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "fixtures"
MAGIC = b"\x93NUMPY"
FIXED_DATE = (1980, 1, 1, 0, 0, 0)

# Counters filled while generating; printed at the end.
COUNTS: dict[str, int] = {}
FINDINGS: list[str] = []


# ---------------------------------------------------------------------------
# Generic helpers
# ---------------------------------------------------------------------------

def finding(msg: str) -> None:
    FINDINGS.append(msg)


def save_bytes(arr, **kw) -> bytes:
    b = io.BytesIO()
    np.save(b, arr, **kw)
    return b.getvalue()


def write_array_bytes(arr, version=None, **kw) -> bytes:
    b = io.BytesIO()
    npformat.write_array(b, arr, version=version, **kw)
    return b.getvalue()


def np_load_bytes(data: bytes, suffix=".npy", **kw):
    """np.load from a real file (as users do), with warnings silenced.

    Returns ("ok", value) or ("error", "ExcType: message").  Loading from a real
    file matters: np.load uses np.fromfile for real files and chunked reads for
    other streams.
    """
    fd, path = tempfile.mkstemp(suffix=suffix)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                v = np.load(path, **kw)
                if isinstance(v, np.lib.npyio.NpzFile):
                    out = {}
                    try:
                        for k in v.files:
                            out[k] = v[k]
                    finally:
                        v.close()
                    v = out
                return "ok", v
            except Exception as e:  # noqa: BLE001 - we record every refusal
                msg = str(e).splitlines()[0] if str(e) else ""
                msg = re.sub(r" at 0x[0-9a-fA-F]+", "", msg)  # object addresses vary between runs
                return "error", f"{type(e).__name__}: {msg}"[:200]
    finally:
        os.unlink(path)


def write_json(path: Path, obj) -> None:
    """One top-level key per line (npz members one per line), values compact."""
    def dump(v):
        return json.dumps(v, ensure_ascii=False, allow_nan=False)
    lines = []
    for k, v in obj.items():
        if k == "members" and v:
            inner = ",\n".join("  " + dump(m) for m in v)
            lines.append(f" {dump(k)}: [\n{inner}\n ]")
        else:
            lines.append(f" {dump(k)}: {dump(v)}")
    text = "{\n" + ",\n".join(lines) + "\n}\n"
    assert json.loads(text) == obj
    path.write_text(text, encoding="utf-8")


def emit(group: str, name: str, data: bytes, sidecar: dict, ext: str = "npy") -> None:
    d = FIX / group
    d.mkdir(parents=True, exist_ok=True)
    assert not (d / f"{name}.{ext}").exists(), f"duplicate fixture {group}/{name}"
    (d / f"{name}.{ext}").write_bytes(data)
    write_json(d / f"{name}.json", sidecar)
    COUNTS[group] = COUNTS.get(group, 0) + 1


def preamble(version, header: bytes) -> bytes:
    """Magic, version and header-length field for a raw header."""
    fmt = "<H" if version[0] == 1 else "<I"
    return MAGIC + bytes(version) + struct.pack(fmt, len(header)) + header


def padded(text, version=(1, 0), encoding=None, newline=True, pad=True) -> bytes:
    """Header text (str or bytes) padded like NumPy does (to 64 bytes, '\\n' last)."""
    if isinstance(text, str):
        enc = encoding or ("utf8" if version[0] == 3 else "latin1")
        text = text.encode(enc)
    lenfield = 2 if version[0] == 1 else 4
    if pad:
        total = len(MAGIC) + 2 + lenfield + len(text) + (1 if newline else 0)
        text = text + b" " * ((-total) % 64)
    if newline:
        text = text + b"\n"
    return preamble(version, text)


def parse_npy(data: bytes):
    """Return (version, header_text, header_dict) using NumPy's own reader."""
    f = io.BytesIO(data)
    version = npformat.read_magic(f)
    lenfmt = "<H" if version[0] == 1 else "<I"
    (hlen,) = struct.unpack(lenfmt, f.read(struct.calcsize(lenfmt)))
    raw = f.read(hlen)
    text = raw.decode("utf8" if version[0] == 3 else "latin1")
    try:
        d = ast.literal_eval(text)
    except SyntaxError:
        d = ast.literal_eval(_format_impl._filter_header(text))  # Python 2 'L' suffixes
    return version, text, d


def descr_text_in_header(text: str) -> str:
    """The descr value exactly as spelled in an np.save-written header."""
    m = re.match(r"\{'descr': (.*), 'fortran_order': (True|False), 'shape': ", text, re.S)
    assert m, text
    return m.group(1)


ELEMENT = {
    ("b", 1): "bool",
    ("i", 1): "i8", ("i", 2): "i16", ("i", 4): "i32", ("i", 8): "i64",
    ("u", 1): "u8", ("u", 2): "u16", ("u", 4): "u32", ("u", 8): "u64",
    ("f", 2): "f16", ("f", 4): "f32", ("f", 8): "f64",
    ("c", 8): "c64", ("c", 16): "c128",
}


def element_of(dt: np.dtype) -> str:
    return ELEMENT[(dt.kind, dt.itemsize)]


def enc_float(x):
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def dec_float(v):
    return float(v) if isinstance(v, str) else v


def encode_values(arr: np.ndarray) -> list:
    flat = np.asarray(arr).ravel(order="C")  # logical row-major order
    k = arr.dtype.kind
    if k == "b":
        return [bool(x) for x in flat]
    if k in "iu":
        return [int(x) for x in flat]
    if k == "f":
        return [enc_float(x) for x in flat]
    if k == "c":
        return [[enc_float(x.real), enc_float(x.imag)] for x in flat]
    raise TypeError(arr.dtype)


def decode_values(values, dtype, shape, fortran):
    k = dtype.kind
    if k == "f":
        vals = [dec_float(v) for v in values]
    elif k == "c":
        vals = [complex(dec_float(a), dec_float(b)) for a, b in values]
    else:
        vals = values
    native = dtype.newbyteorder("=")
    a = np.array(vals, dtype=native).reshape(shape)
    return np.asfortranarray(a) if fortran else a


def same_array(a: np.ndarray, b: np.ndarray) -> bool:
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind in "fc":
        return np.array_equal(a, b, equal_nan=True) and np.array_equal(
            np.signbit(a.real), np.signbit(b.real))
    return np.array_equal(a, b)


# ---------------------------------------------------------------------------
# Group 1: npy/valid
# ---------------------------------------------------------------------------

def valid(name: str, data: bytes, note: str, expect: np.ndarray | None = None,
          expect_fortran: bool | None = None, extra: dict | None = None) -> None:
    """Emit a readable .npy fixture after checking np.load agrees."""
    status, loaded = np_load_bytes(data)
    assert status == "ok", (name, loaded)
    if expect is not None:
        assert same_array(loaded, np.asarray(expect)), (name, loaded, expect)
    version, text, d = parse_npy(data)
    dt = loaded.dtype
    assert d["shape"] == loaded.shape
    if expect_fortran is not None:
        assert d["fortran_order"] == expect_fortran, name
    values = encode_values(loaded)
    rebuilt = decode_values(values, dt, loaded.shape, d["fortran_order"])
    # np_save_identical: the bytes equal np.save(np.load(file)) AND equal what
    # np.save writes for the recorded values in native order (so a writer that
    # round-trips the values must reproduce the file byte for byte).
    ident = save_bytes(loaded) == data and save_bytes(rebuilt) == data
    side = {
        "descr": repr(d["descr"]),
        "dtype_str": dt.str,
        "shape": list(loaded.shape),
        "fortran_order": d["fortran_order"],
        "version": list(version),
        "element": element_of(dt),
        "values": values,
        "np_save_identical": ident,
        "note": note,
    }
    if extra:
        side.update(extra)
    emit("npy/valid", name, data, side)


def order_name(o):
    return {"<": "le", ">": "be", "|": "na"}[o]


def gen_valid():
    rng = np.random.default_rng(20240601)

    # --- every element type, little- and big-endian, int extremes included --
    int_types = ["i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8"]
    for t in int_types:
        info = np.iinfo(t)
        vals = [info.min, info.max, 0, 1, 2, info.max - 1, info.min + 1 if info.min else 3]
        if info.min < 0:
            vals += [-1, -2]
        vals += list(rng.integers(info.min, info.max, size=5, endpoint=True, dtype=t))
        orders = "|" if t[1] == "1" else "<>"
        for o in orders:
            dt = np.dtype(o + t) if o != "|" else np.dtype(t)
            a = np.array(vals, dtype=dt)
            valid(f"{element_of(dt)}_{order_name(dt.byteorder if dt.byteorder != '=' else '<')}",
                  save_bytes(a),
                  f"{dt.str} 1-D, includes min ({info.min}) and max ({info.max}) of the type",
                  expect=a)

    # bool
    a = np.array([True, False, False, True, True, False, True])
    valid("bool", save_bytes(a), "'|b1' 1-D", expect=a)

    # floats and complex, each order; includes special values
    for t in ["f2", "f4", "f8"]:
        fi = np.finfo(t)
        sub_min = fi.smallest_subnormal
        vals = [0.0, -0.0, 1.0, -1.5, 0.1, 1 / 3, float(fi.max), float(-fi.max),
                float(fi.tiny), float(sub_min), float(fi.tiny - sub_min) if t != "f2" else float(np.float16(6.1e-05)),
                float(fi.eps), np.nan, np.inf, -np.inf]
        vals += [float(x) for x in rng.standard_normal(5).astype(t)]
        for o in "<>":
            dt = np.dtype(o + t)
            arr = np.array(vals, dtype=dt)
            valid(f"{element_of(dt)}_{order_name(o)}", save_bytes(arr),
                  f"{dt.str} 1-D: 0, -0.0, 1, -1.5, 0.1, 1/3, +-max, smallest normal, smallest "
                  f"subnormal, a large subnormal, eps, nan, inf, -inf, then 5 random values",
                  expect=arr)
    for t in ["c8", "c16"]:
        ft = "f4" if t == "c8" else "f8"
        re_ = np.array([0.0, -0.0, 1.0, np.nan, np.inf, -np.inf, float(np.finfo(ft).smallest_subnormal), 2.5], dtype=ft)
        im_ = np.array([1.0, -0.0, np.nan, 0.5, -np.inf, np.inf, -3.25, float(np.finfo(ft).max)], dtype=ft)
        # set parts directly (re + 1j*im would turn nan/inf parts into nan in both)
        cv = np.empty(len(re_), dtype=t)
        cv.real = re_
        cv.imag = im_
        for o in "<>":
            dt = np.dtype(o + t)
            arr = cv.astype(dt)
            valid(f"{element_of(dt)}_{order_name(o)}", save_bytes(arr),
                  f"{dt.str} complex 1-D including nan/inf/-0.0/subnormal parts; values are [re, im]",
                  expect=arr)

    # Special floats on their own (f64, 2-D) for a quick test.
    sp = np.array([[np.nan, np.inf, -np.inf], [-0.0, 5e-324, 2.2250738585072009e-308]], dtype="<f8")
    valid("f64_special_2d", save_bytes(sp), "nan, inf, -inf, -0.0, smallest subnormal, largest subnormal", expect=sp)

    # bool with bytes other than 0/1: write u8 and patch the descr.
    raw = np.array([0, 1, 2, 255, 0, 128, 1], dtype="u1")
    data = save_bytes(raw).replace(b"'descr': '|u1'", b"'descr': '|b1'", 1)
    valid("bool_nonzero_bytes", data,
          "a '|u1' array [0,1,2,255,0,128,1] whose header descr was patched to '|b1': "
          "bytes other than 0/1 must read as true (NumPy treats nonzero as True); "
          "a zero-copy view must refuse them (InvalidBool). np_save_identical is false because "
          "values written back as bools are 0/1 bytes",
          extra={"raw_bytes": [int(x) for x in raw]})

    # --- shapes --------------------------------------------------------------
    valid("shape_0d_f64", save_bytes(np.array(3.5)), "0-d array, shape ()", expect=np.array(3.5))
    valid("shape_0d_i32", save_bytes(np.array(-7, dtype="<i4")), "0-d i32", expect=np.array(-7, dtype="<i4"))
    valid("shape_empty_1d", save_bytes(np.zeros((0,), "<f8")), "shape (0,), no data bytes")
    valid("shape_3_0_5", save_bytes(np.zeros((3, 0, 5), "<i2")), "shape (3, 0, 5), no data bytes")
    valid("shape_1d", save_bytes(np.arange(10, dtype="<i8")), "1-D arange(10)")
    a2 = np.arange(12, dtype="<f4").reshape(3, 4) / 4
    valid("shape_2d", save_bytes(a2), "2-D (3, 4) C order", expect=a2)
    a5 = np.arange(12, dtype="<i4").reshape(2, 1, 3, 1, 2)
    valid("shape_5d", save_bytes(a5), "5-D (2, 1, 3, 1, 2)", expect=a5)
    a1x = np.arange(5, dtype="<u2").reshape(1, 5)
    valid("shape_1x5", save_bytes(a1x), "2-D (1, 5): both C- and F-contiguous, so np.save writes fortran_order False",
          expect_fortran=False)

    # --- Fortran order -----------------------------------------------------
    f2 = np.asfortranarray(np.arange(6, dtype="<f8").reshape(2, 3))
    valid("fortran_2d", save_bytes(f2), "np.asfortranarray of (2, 3): fortran_order True, data in column-major order",
          expect=f2, expect_fortran=True)
    f3 = np.asfortranarray(np.arange(24, dtype="<i4").reshape(2, 3, 4))
    valid("fortran_3d", save_bytes(f3), "np.asfortranarray of (2, 3, 4)", expect=f3, expect_fortran=True)
    fbe = np.asfortranarray(np.arange(6, dtype=">i2").reshape(3, 2))
    valid("fortran_2d_i16_be", save_bytes(fbe), "big-endian Fortran-order (3, 2)", expect=fbe, expect_fortran=True)

    # --- non-contiguous sources saved by NumPy ------------------------------
    base = np.arange(10, dtype="<i4")
    valid("noncontig_step2", save_bytes(base[::2]), "np.save(a[::2]) of arange(10): written C order",
          expect=base[::2], expect_fortran=False)
    b2 = np.arange(12, dtype="<f8").reshape(3, 4)
    valid("noncontig_reversed_cols", save_bytes(b2[:, ::-1]), "np.save(a[:, ::-1]) of a (3, 4) array: written C order",
          expect=b2[:, ::-1], expect_fortran=False)
    b3 = np.arange(24, dtype="<i8").reshape(2, 3, 4)
    valid("transpose_3d", save_bytes(b3.T),
          "np.save(a.T) of a C-order (2, 3, 4) array: a.T is F-contiguous, so NumPy writes shape (4, 3, 2) "
          "with fortran_order True and the original buffer unchanged",
          expect=b3.T, expect_fortran=True)
    assert save_bytes(b3.T)[128:] == b3.tobytes()

    # --- header versions ----------------------------------------------------
    v = np.arange(6, dtype="<f8").reshape(2, 3)
    valid("version_2_0", write_array_bytes(v, version=(2, 0)), "write_array(version=(2,0)): 4-byte header length",
          expect=v)
    valid("version_3_0", write_array_bytes(v, version=(3, 0)),
          "write_array(version=(3,0)): 4-byte header length, UTF-8 header (ASCII here)", expect=v)
    valid("version_2_0_fortran", write_array_bytes(np.asfortranarray(v), version=(2, 0)),
          "v2.0 Fortran-order", expect=np.asfortranarray(v), expect_fortran=True)

    # --- hand-made headers ---------------------------------------------------
    hm = np.arange(12, dtype="<f8").reshape(3, 4) * 0.5
    hdata = hm.tobytes()
    std = "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }"

    def hand(name, header_bytes, note, expect=hm, data=hdata, fortran=False):
        valid(name, header_bytes + data, "hand-made header: " + note, expect=expect, expect_fortran=fortran)

    hand("hdr_std_handmade", padded(std), "the standard text padded only to 64, without NumPy's growth padding; for this shape the "
         "bytes coincide with np.save's (the growth padding fits in the same 64-byte block), so np_save_identical is true")
    hand("hdr_keys_reordered", padded("{'shape': (3, 4), 'fortran_order': False, 'descr': '<f8', }"),
         "keys in order shape, fortran_order, descr")
    hand("hdr_keys_reordered_2", padded("{'fortran_order': False, 'descr': '<f8', 'shape': (3, 4)}"),
         "keys in order fortran_order, descr, shape; no trailing comma")
    hand("hdr_double_quotes", padded('{"descr": "<f8", "fortran_order": False, "shape": (3, 4), }'),
         "keys and descr in double quotes")
    hand("hdr_mixed_quotes", padded('{"descr": \'<f8\', \'fortran_order\': False, "shape": (3, 4)}'),
         "mixed single and double quotes")
    hand("hdr_whitespace", padded("{\n\t'descr' :\t'<f8' ,\n   'fortran_order'  :False,\n\t\t'shape':(\n 3 ,\t4\n)\n,\n}"),
         "spaces, tabs and newlines inside the dict and the tuple")
    hand("hdr_crlf", padded("{'descr': '<f8',\r\n 'fortran_order': False,\r\n 'shape': (3, 4)}\r"),
         "CRLF line breaks inside the dict, CR before the final newline")
    hand("hdr_leading_space", padded("  \t{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4)}"),
         "spaces and a tab before '{' (ast.literal_eval strips leading spaces/tabs)")
    hand("hdr_no_trailing_comma", padded("{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4)}"),
         "no trailing comma after the last item")
    hand("hdr_shape_trailing_comma", padded("{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4,), }"),
         "trailing comma inside a 2-D shape tuple: (3, 4,)")
    a1 = np.arange(3, dtype="<f8")
    hand("hdr_shape_1d_no_space", padded("{'descr':'<f8','fortran_order':False,'shape':(3,)}"),
         "no spaces at all; 1-D shape (3,)", expect=a1, data=a1.tobytes())
    hand("hdr_L_suffix_v1", padded("{'descr': '<f8', 'fortran_order': False, 'shape': (3L, 4L), }"),
         "Python 2 'L' suffixes in shape, version 1.0 (np.load accepts with a UserWarning)")
    hand("hdr_L_suffix_v2", padded("{'descr': '<f8', 'fortran_order': False, 'shape': (3L, 4L), }", version=(2, 0)),
         "Python 2 'L' suffixes in shape, version 2.0 (np.load accepts with a UserWarning)")
    hand("hdr_L_suffix_partial_v1", padded("{'descr': '<f8', 'fortran_order': False, 'shape': (3L, 4), }"),
         "'L' suffix on the first dimension only, version 1.0")
    hand("hdr_comment_trailing", padded("{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), } # a comment"),
         "a '#' comment after the dict, before the padding and newline")
    hand("hdr_comment_inside", padded("{'descr': '<f8', # the type\n 'fortran_order': False, 'shape': (3, 4)}"),
         "a '#' comment inside the dict, ended by a newline")
    a10 = np.arange(10, dtype="<i4")
    hand("hdr_int_underscore", padded("{'descr': '<i4', 'fortran_order': False, 'shape': (1_0,), }"),
         "shape (1_0,) == (10,): int with underscore", expect=a10, data=a10.tobytes())
    hand("hdr_int_hex", padded("{'descr': '<f8', 'fortran_order': False, 'shape': (0x3, 0X4), }"),
         "shape (0x3, 0X4) == (3, 4): hex ints")
    hand("hdr_int_octal_binary", padded("{'descr': '<f8', 'fortran_order': False, 'shape': (0o3, 0b100), }"),
         "shape (0o3, 0b100) == (3, 4): octal and binary ints (valid Python literals)")
    hand("hdr_escaped_descr", padded("{'descr': '\\x3cf8', 'fortran_order': False, 'shape': (3, 4), }"),
         "descr written with an escape: '\\x3cf8' == '<f8'")
    hand("hdr_escaped_descr_unicode", padded("{'descr': '\\u003cf\\U00000038', 'fortran_order': False, 'shape': (3, 4), }"),
         "descr written with \\u and \\U escapes: '\\u003cf\\U00000038' == '<f8'")
    hand("hdr_adjacent_strings", padded("{'descr': '<' 'f8', 'fortran_order': False, 'shape': (3, 4), }"),
         "descr as implicitly concatenated string literals '<' 'f8' (valid Python literal syntax)")
    hand("hdr_no_pad_newline", preamble((1, 0), std.encode() + b"\n"),
         "no padding: header ends with '\\n' right after the dict, data not 64-aligned")
    hand("hdr_no_pad_no_newline", preamble((1, 0), std.encode()),
         "no padding and no final newline: data starts right after '}'")
    hand("hdr_v2_small", preamble((2, 0), std.encode() + b"\n"),
         "version 2.0 with a small unpadded header")
    hand("hdr_v2_padded", padded(std, version=(2, 0)), "version 2.0 padded to 64 by hand (no growth padding)")
    hand("hdr_v3_ascii", padded(std, version=(3, 0)), "version 3.0 with a plain ASCII header")
    hand("hdr_v3_utf8_comment", padded(std + " # données 数", version=(3, 0)),
         "version 3.0 with non-ASCII UTF-8 in a trailing comment")
    hand("hdr_v1_latin1_comment", padded((std + " # caf\xe9").encode("latin1")),
         "version 1.0 with a latin-1 byte (0xE9) in a trailing comment (not valid UTF-8; fine in latin-1)")
    hand("hdr_fortran_true", padded("{'descr': '<f8', 'fortran_order': True, 'shape': (4, 3), }"),
         "fortran_order True, the same 12 bytes read as a (4, 3) F-order array",
         expect=np.frombuffer(hdata, "<f8").reshape((4, 3), order="F"), fortran=True)
    hand("hdr_descr_no_order", padded("{'descr': 'f8', 'fortran_order': False, 'shape': (3, 4), }"),
         "descr 'f8' without a byte-order character (native order, little-endian here)")
    hand("hdr_descr_equals", padded("{'descr': '=f8', 'fortran_order': False, 'shape': (3, 4), }"),
         "descr '=f8' (native order, little-endian here)")
    hand("hdr_descr_d", padded("{'descr': '<d', 'fortran_order': False, 'shape': (3, 4), }"),
         "descr '<d' (NumPy character code for f64)")
    hand("hdr_trailing_bytes", padded(std), "12 extra bytes after the data, which are ignored",
         data=hdata + b"TRAILINGJUNK")
    hand("hdr_be_handmade", padded("{'descr': '>f8', 'fortran_order': False, 'shape': (3, 4), }"),
         "hand-made big-endian header", data=hm.astype(">f8").tobytes(), expect=hm.astype(">f8"))
    hand("hdr_0d", padded("{'descr': '<f8', 'fortran_order': False, 'shape': (), }"),
         "shape () written by hand", expect=np.array(0.0), data=hdata[:8])
    hand("hdr_0d_fortran", padded("{'descr': '<f8', 'fortran_order': True, 'shape': (), }"),
         "shape () with fortran_order True", expect=np.array(0.0), data=hdata[:8], fortran=True)
    hand("hdr_parenthesized_values", padded("{'descr': ('<f8'), 'fortran_order': (False), 'shape': ((3), (4))}"),
         "values wrapped in redundant parentheses: ('<f8'), (False), ((3), (4))")


# ---------------------------------------------------------------------------
# Group 2: npy/unsupported
# ---------------------------------------------------------------------------

def unsupported(name: str, arr: np.ndarray, note: str, allow_pickle=False, data: bytes | None = None,
                max_header_len: int | None = None):
    if data is None:
        data = save_bytes(arr, allow_pickle=allow_pickle)
    kw = {"max_header_size": max_header_len} if max_header_len else {}
    status, loaded = np_load_bytes(data, allow_pickle=allow_pickle, **kw)
    assert status == "ok", (name, loaded)
    version, text, d = parse_npy(data)
    spelled = descr_text_in_header(text)
    assert spelled == repr(d["descr"]), (spelled, d["descr"])
    assert loaded.dtype == arr.dtype and loaded.shape == arr.shape, name
    ident = save_bytes(loaded, allow_pickle=allow_pickle) == data
    emit("npy/unsupported", name, data, {
        "descr": spelled,
        "shape": list(d["shape"]),
        "fortran_order": d["fortran_order"],
        "version": list(version),
        "np_save_identical": ident,
        "note": note,
        **({"max_header_len": max_header_len} if max_header_len else {}),
    })


def gen_unsupported():
    # What still has no Rust element: object arrays (a pickle; another issue
    # covers them) and long double (no Rust type).
    obj = np.empty(3, dtype=object)
    obj[:] = [1, "two", None]
    unsupported("object_O", obj, "'|O' object array: data is a pickle (protocol 3); needs allow_pickle in NumPy",
                allow_pickle=True)
    ld = np.dtype(np.longdouble)
    if ld.itemsize > 8:
        x87 = ld.itemsize in (12, 16) and np.finfo(ld).nmant == 63

        def clean(a):
            # x87 80-bit values padded to 12/16 bytes: the padding bytes are whatever the
            # C compiler left there (not deterministic), so zero them.
            if x87:
                a.view("u1").reshape(-1, ld.itemsize)[:, 10:] = 0
            return a
        kind = "x87 80-bit extended" if x87 else "IEEE binary128 or double-double"
        unsupported(f"longdouble_{ld.str[1:]}", clean(np.array([1.0, -2.5, 1 / 3], dtype=ld)),
                    f"long double '{ld.str}' ({kind} in {ld.itemsize} bytes on the generating machine; "
                    f"padding bytes zeroed)")
        cld = np.dtype(np.clongdouble)
        unsupported(f"clongdouble_{cld.str[1:]}", clean(np.array([1 + 2j, -0.5j], dtype=cld)),
                    f"complex long double '{cld.str}' (two {kind} values; padding bytes zeroed)")
        unsupported("struct_longdouble_field", np.zeros(2, dtype=[("a", "<i4"), ("b", ld)]),
                    "a record with a long double field")
    else:
        finding("np.longdouble is 8 bytes here; no <f16/<c32 fixtures")


# ---------------------------------------------------------------------------
# Group 2b: npy/elements (strings, datetimes, void, records)
# ---------------------------------------------------------------------------

def time_unit(dt: np.dtype):
    unit, count = np.datetime_data(dt)
    if unit == "generic":
        return None
    return unit if count == 1 else f"{count}{unit}"


def describe(a: np.ndarray) -> dict:
    """What a reader must produce for `a`, recursively for record fields.

    Values are listed in logical C order; byte images are native order, C order."""
    a = np.array(a, order="C", copy=True)  # (ascontiguousarray would make 0-d 1-d)
    dt = a.dtype
    out = {"shape": list(a.shape)}
    if dt.names is not None:
        out.update(kind="record", names=list(dt.names),
                   native_hex=a.astype(dt.newbyteorder("=")).tobytes().hex(),
                   # Wide records list a sample of their columns, to keep sidecars small.
                   fields={n: describe(a[n]) for i, n in enumerate(dt.names)
                           if len(dt.names) <= 50 or i < 3 or i >= len(dt.names) - 3})
    elif dt.kind == "U":
        out.update(kind="str", values=[str(x) for x in a.ravel()])
    elif dt.kind == "S":
        out.update(kind="bytes", values=[list(bytes(x)) for x in a.ravel()])
    elif dt.kind in "Mm":
        out.update(kind="datetime" if dt.kind == "M" else "timedelta", unit=time_unit(dt),
                   values=[int(x) for x in a.astype(dt.newbyteorder("=")).view("=i8").ravel()])
    elif dt.kind == "V":
        out.update(kind="void", itemsize=dt.itemsize, hex=a.tobytes().hex())
    else:
        # A bool byte other than 0/1 reads as True: record the normalised value.
        native = (a != 0) if dt.kind == "b" else a.astype(dt.newbyteorder("="))
        out.update(kind="num", dtype=dt.newbyteorder("=").str if dt.itemsize > 1 else dt.str,
                   hex=native.tobytes().hex())
    return out


def element(name: str, arr: np.ndarray | None, note: str, data: bytes | None = None,
            max_header_len: int | None = None, rust: str | None = None):
    if data is None:
        data = save_bytes(arr)
    kw = {"max_header_size": max_header_len} if max_header_len else {}
    status, loaded = np_load_bytes(data, **kw)
    assert status == "ok", (name, loaded)
    if arr is not None:
        assert loaded.dtype == arr.dtype and loaded.shape == arr.shape, name
    version, text, d = parse_npy(data)
    spelled = descr_text_in_header(text)
    ident = save_bytes(loaded) == data
    emit("npy/elements", name, data, {
        "descr": spelled,
        "shape": list(d["shape"]),
        "fortran_order": d["fortran_order"],
        "version": list(version),
        "np_save_identical": ident,
        "note": note,
        "expect": describe(loaded),
        **({"max_header_len": max_header_len} if max_header_len else {}),
        **({"rust": rust} if rust else {}),
    })


def gen_elements():
    rng = np.random.default_rng(9)
    # Strings
    element("unicode_U7", np.array(["abc", "héllo", "数字", ""], dtype="<U7"), "'<U7' UTF-32 strings",
            rust="String")
    element("unicode_U7_be", np.array(["abc", "xyz", "é"], dtype=">U7"), "'>U7' big-endian UTF-32 strings",
            rust="String")
    element("unicode_nonbmp", np.array(["😀x", "𝄞", "a\x00b", ""], dtype="<U3"),
            "non-BMP characters and an interior NUL (kept; trailing NULs are stripped)", rust="String")
    element("unicode_empty_only", np.array(["", ""], dtype="<U1"), "only empty strings: '<U1'",
            rust="String")
    element("unicode_2d", np.array([["a", "bb", "ccc"], ["dddd", "", "f"]]), "2-D '<U4'", rust="String")
    element("unicode_fortran", np.asfortranarray(np.array([["a", "bb", "ccc"], ["dddd", "", "f"]])),
            "2-D Fortran-order '<U4'", rust="String")
    element("unicode_0d", np.array("zero-d"), "0-d '<U6'", rust="String")
    element("bytes_S5", np.array([b"ab", b"hello", b""], dtype="|S5"), "'|S5' byte strings", rust="Vec<u8>")
    element("bytes_S3_2d_fortran", np.asfortranarray(np.array([[b"a", b"b\x00c"], [b"\xff", b""]], dtype="S3")),
            "2-D Fortran-order '|S3' with an interior NUL and a high byte", rust="Vec<u8>")
    element("bytes_S1_empty", np.array([b"", b""]), "empty byte strings: '|S1'", rust="Vec<u8>")
    # Datetimes and timedeltas in every unit, with multipliers and NaT
    for unit in ["Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns", "ps", "fs", "as"]:
        vals = np.array([0, 1, -1, 123456789, np.iinfo(np.int64).min], dtype="<i8")
        element(f"datetime_M8_{unit}", vals.view(f"<M8[{unit}]"), f"'<M8[{unit}]' with NaT",
                rust=f"Datetime64<{unit}>")
        element(f"timedelta_m8_{unit}", vals.view(f"<m8[{unit}]"), f"'<m8[{unit}]' with NaT",
                rust=f"Timedelta64<{unit}>")
    element("datetime_M8ns_be", np.array(["2024-01-02T03:04:05.123456789", "NaT"], dtype=">M8[ns]"),
            "big-endian '>M8[ns]'", rust="Datetime64<ns>")
    element("datetime_M8_10ms", np.array([0, 5, -3], dtype="<i8").view("<M8[10ms]"),
            "'<M8[10ms]': a multiplier (AnyArray only)")
    element("timedelta_m8_25s", np.array([1, 2], dtype="<i8").view("<m8[25s]"), "'<m8[25s]' (AnyArray only)")
    element("datetime_generic", np.array(["NaT", "NaT"], dtype="M8"), "generic '<M8' (all NaT)")
    element("datetime_2d_fortran", np.asfortranarray(np.arange(6, dtype="<i8").reshape(2, 3).view("<M8[s]")),
            "2-D Fortran-order '<M8[s]'", rust="Datetime64<s>")
    # Unstructured void
    element("void_V8", np.frombuffer(bytes(range(24)), dtype="|V8"), "'|V8' opaque 8-byte items")
    element("void_V3_2d", np.frombuffer(bytes(range(18)), dtype="|V3").reshape(2, 3), "2-D '|V3'")
    # Records
    rec_fields = [("x", "<f8"), ("y", "<i4"), ("flag", "|b1")]
    rec = np.dtype(rec_fields)
    vals = [(1.5, 2, True), (-1.0, 7, False), (np.inf, -3, True)]
    element("struct_simple", np.array(vals, dtype=rec), "simple record, packed (NumPy's default)",
            rust="Simple")
    element("struct_simple_aligned", np.array(vals, dtype=np.dtype(rec_fields, align=True)),
            "the same record with align=True: padding entries", rust="Simple")
    element("struct_simple_be", np.array(vals, dtype=rec.newbyteorder(">")), "big-endian fields", rust="Simple")
    element("struct_reordered", np.array([(True, 2, 1.5)], dtype=[("flag", "?"), ("y", "<i4"), ("x", "<f8")]),
            "fields in another order", rust="Simple")
    element("struct_extra_fields", np.array([(9, 1.5, "s", 2, True)],
                                            dtype=[("e", "<u2"), ("x", "<f8"), ("t", "<U2"), ("y", "<i4"), ("flag", "?")]),
            "extra fields the Rust struct ignores", rust="Simple")
    offs = np.dtype({"names": ["x", "y", "flag"], "formats": ["<f8", "<i4", "?"], "offsets": [0, 12, 20],
                     "itemsize": 32})
    element("struct_offsets", np.array(vals, dtype=offs), "explicit offsets with gaps (np.save writes padding entries)",
            rust="Simple")
    bools = np.zeros(2, dtype=rec)
    bools["x"] = [1.0, 2.0]
    raw = bytearray(save_bytes(bools))
    raw[-1] = 7  # flag byte of the second record
    element("struct_bool_byte_7", None, "a bool field holding byte 7 (NumPy reads True)", data=bytes(raw),
            rust="Simple")
    al = np.dtype([("a", "u1"), ("b", "<i4")], align=True)
    element("struct_aligned_padding", np.array([(1, 2), (3, 4)], dtype=al),
            "aligned struct (align=True): descr has a ('', '|V3') padding entry")
    tit = np.dtype([(("Title of a", "a"), "<i4"), (("b title", "b"), "<f4")])
    element("struct_titles", np.array([(1, 2.0)], dtype=tit), "fields with (title, name) pairs")
    nested = np.dtype([("id", "<u2"), ("pos", [("x", "<f4"), ("y", "<f4")]), ("inner", [("deep", [("z", "|i1")])])])
    a = np.zeros(2, dtype=nested)
    a["id"] = [1, 2]
    a["pos"]["x"] = [0.5, -0.5]
    a["inner"]["deep"]["z"] = [-1, 3]
    element("struct_nested", a, "nested records two levels deep", rust="Nested")
    deep = np.dtype("<i2")
    for i in range(12):
        deep = np.dtype([(f"l{i}", deep), ("pad", "u1")])
    element("struct_deeply_nested", np.zeros(2, dtype=deep), "records nested 12 levels")
    sub = np.dtype([("m", "<f8", (2, 3)), ("v", "<i2", (4,)), ("s", "|u1")])
    a = np.zeros(2, dtype=sub)
    a["m"] = rng.standard_normal((2, 2, 3))
    a["v"] = rng.integers(-100, 100, (2, 4))
    a["s"] = [7, 8]
    element("struct_subarray", a, "sub-array fields: (name, descr, shape)", rust="Sub")
    subsub = np.dtype([("mm", ("<i4", (2,)), (3,))])
    element("struct_subarray_of_subarray", np.arange(12, dtype="<i4").view(subsub),
            "a sub-array of sub-arrays: ('<i4', (3, 2))")
    subrec = np.dtype([("pts", [("x", "<f4"), ("y", "<f4")], (2,)), ("n", "<i8")])
    a = np.zeros(3, dtype=subrec)
    a["pts"]["x"] = rng.standard_normal((3, 2))
    a["n"] = [1, 2, 3]
    element("struct_subarray_of_records", a, "a sub-array of records", rust="SubRec")
    element("struct_2d_fortran", np.asfortranarray(np.array([vals, vals], dtype=rec)),
            "structured array saved in Fortran order", rust="Simple")
    element("struct_0d", np.array((2.5, 4, True), dtype=rec), "0-d structured array", rust="Simple")
    pad_only = np.dtype({"names": [], "formats": [], "itemsize": 4})
    element("struct_padding_only", np.zeros(3, dtype=pad_only), "a record with no fields, only padding")
    dt_rec = np.dtype([("t", "<M8[ns]"), ("d", ">m8[s]"), ("name", "<U4"), ("tag", "S2"), ("raw", "V3")])
    element("struct_mixed_kinds", np.array([("2024-01-01", 5, "ab", b"x", b"\x01\x02\x03")], dtype=dt_rec),
            "datetime, timedelta, string, bytes and void fields")
    lat = np.dtype([("café", "<i4"), ("b", "<f8")])
    a = np.array([(1, 2.0)], dtype=lat)
    data = save_bytes(a)
    assert data[6:8] == b"\x01\x00" and "café".encode("latin1") in data
    element("struct_latin1_name", a, "field name 'café' is latin-1: np.save writes version 1.0 with byte 0xE9",
            data=data)
    u = np.dtype([("数", "<i4"), ("b", "<f8")])
    a = np.array([(1, 2.0)], dtype=u)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = save_bytes(a)
    assert data[6:8] == b"\x03\x00", data[:8]
    element("struct_utf8_name_v3", a, "field name '数' is not latin-1: np.save writes version 3.0 (UTF-8 header)",
            data=data)
    wide = np.dtype([(f"field_{i:05d}", "<i4") for i in range(5000)])
    a = np.zeros(1, dtype=wide)  # zeros: tests compare it with a freshly created map
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = save_bytes(a)
    assert data[6:8] == b"\x02\x00", data[:8]
    element("struct_wide_v2", a, "5000 fields: header over 65 535 bytes, so np.save writes version 2.0", data=data,
            max_header_len=1 << 20)
    # Descriptors without byte-order marks (hand-written headers; np.load reads them as native)
    text = "{'descr': [('x', 'f8'), ('y', 'i4'), ('flag', 'b1')], 'fortran_order': False, 'shape': (2,), }"
    body = np.array(vals[:2], dtype=rec).tobytes()
    element("struct_no_order_marks", None, "descr without byte-order marks ('f8', 'i4')",
            data=padded(text) + body, rust="Simple")

    # Invalid element data: the header is fine (NumPy loads these), the values are not.
    def bad_data(name, data, error, note):
        emit("npy/invalid_data", name, data, {"error": error, "note": note})
    text = "{'descr': '<U2', 'fortran_order': False, 'shape': (2,), }"
    bad_data("unicode_surrogate", padded(text) + struct.pack("<4I", 0x61, 0, 0xD800, 0x62), "InvalidUnicode",
             "a lone surrogate (0xD800) in the second '<U2' string")
    bad_data("unicode_above_max", padded(text) + struct.pack("<4I", 0x110000, 0, 0, 0), "InvalidUnicode",
             "a code unit above 0x10FFFF")
    text = "{'descr': '>U1', 'fortran_order': False, 'shape': (1,), }"
    bad_data("unicode_surrogate_be", padded(text) + struct.pack(">I", 0xDFFF), "InvalidUnicode",
             "a big-endian lone surrogate")

# ---------------------------------------------------------------------------
# Group 3: npy/invalid
# ---------------------------------------------------------------------------

def invalid(name: str, data: bytes, error: str, note: str, also: list[str] | None = None,
            extra: dict | None = None, check_numpy=True):
    side = {"error": error, "note": note}
    if also:
        side["also_acceptable"] = also
    if check_numpy:
        status, res = np_load_bytes(data)
        side["numpy_refuses"] = status == "error"
        side["numpy_result"] = res if status == "error" else "loaded " + summarize(res)
        if status == "ok":
            finding(f"np.load accepts npy/invalid/{name} ({error}): {summarize(res)}")
    if extra:
        side.update(extra)
    emit("npy/invalid", name, data, side)


def summarize(v):
    if isinstance(v, np.ndarray):
        return f"array dtype={v.dtype.str} shape={v.shape}"
    return repr(v)[:100]


def gen_invalid():
    good = np.arange(3, dtype="<f8")
    gd = good.tobytes()
    std = "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }"

    def h(text, version=(1, 0), data=gd):
        return padded(text, version=version) + data

    invalid("bad_magic", b"\x93NUMPX\x01\x00" + padded(std)[8:] + gd, "BadMagic", "magic is \\x93NUMPX")
    invalid("bad_magic_text", b"hello world, this is not numpy\n", "BadMagic", "a text file")
    invalid("bad_magic_zip", b"PK\x03\x04" + b"\x00" * 60, "BadMagic", "starts like a zip archive (an .npz given to the .npy reader)")
    invalid("version_4_0", MAGIC + b"\x04\x00" + padded(std)[8:] + gd, "UnsupportedVersion", "version 4.0")
    invalid("version_1_1", MAGIC + b"\x01\x01" + padded(std)[8:] + gd, "UnsupportedVersion", "version 1.1")
    invalid("version_0_0", MAGIC + b"\x00\x00" + padded(std)[8:] + gd, "UnsupportedVersion", "version 0.0")
    invalid("empty_file", b"", "TruncatedHeader", "zero-byte file", also=["BadMagic"])
    invalid("shorter_than_magic", MAGIC[:4], "TruncatedHeader", "only '\\x93NUM', a prefix of the magic",
            also=["BadMagic"])
    invalid("short_not_magic", b"\x93NU", "TruncatedHeader",
            "3 bytes that are a prefix of the magic", also=["BadMagic"])
    invalid("magic_version_only", MAGIC + b"\x01\x00", "TruncatedHeader", "magic and version, no header length field")
    invalid("half_length_field", MAGIC + b"\x02\x00\x76\x00", "TruncatedHeader",
            "v2.0 with only 2 of the 4 header-length bytes")
    full = h(std)
    hl = struct.unpack("<H", full[8:10])[0]
    invalid("header_len_beyond_file", full[:10] + full[10:40], "TruncatedHeader",
            f"header length field says {hl} but the file ends 30 bytes into the header")
    invalid("header_len_field_too_big", MAGIC + b"\x01\x00" + struct.pack("<H", 1000) + padded(std)[10:] + gd,
            "TruncatedHeader", "header length 1000 in a ~90-byte file (the header runs to EOF)")
    invalid("truncated_data", full[:-5], "TruncatedData", "shape (3,) <f8 needs 24 data bytes, 19 present")
    invalid("no_data", full[:-24], "TruncatedData", "header only, shape (3,) <f8 needs 24 data bytes, 0 present")
    invalid("truncated_data_fortran", h("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }",
                                        data=np.arange(5, dtype="<i4").tobytes()),
            "TruncatedData", "Fortran (2, 3) <i4 needs 24 bytes, 20 present")
    invalid("huge_shape_tiny_file", h("{'descr': '<f8', 'fortran_order': False, 'shape': (4000000000,), }",
                                      data=b"\x00" * 72), "TruncatedData",
            "shape (4000000000,) <f8 claims 32 GB of data in a 200-byte file: must not allocate first")
    invalid("huge_shape_2d_tiny_file", h("{'descr': '<u1', 'fortran_order': False, 'shape': (100000, 100000, 100), }",
                                         data=b"\x00" * 64), "TruncatedData",
            "shape (100000, 100000, 100) <u1 (1e12 bytes) in a tiny file")

    for missing in ["descr", "fortran_order", "shape"]:
        items = {"descr": "'<f8'", "fortran_order": "False", "shape": "(3,)"}
        del items[missing]
        text = "{" + ", ".join(f"'{k}': {v}" for k, v in items.items()) + ", }"
        invalid(f"missing_key_{missing}", h(text), "MissingKey", f"header without '{missing}'")
    invalid("missing_all_keys", h("{}"), "MissingKey", "empty dict {}")
    invalid("extra_key", h("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), 'extra': 1, }"),
            "UnexpectedKey", "a fourth key 'extra'")
    invalid("duplicate_key", h("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), 'shape': (3,), }"),
            "UnexpectedKey",
            "'shape' given twice (NumPy accepts: Python's dict literal keeps the last value, so the key set is still right)")
    invalid("duplicate_key_conflicting", h("{'descr': '<i4', 'fortran_order': False, 'shape': (3,), 'descr': '<f8'}"),
            "UnexpectedKey", "'descr' given twice with different values ('<i4' then '<f8'; NumPy uses the last)")
    invalid("key_not_string", h("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), 1: 2}"),
            "UnexpectedKey", "an int key", also=["MalformedHeader"])
    invalid("key_wrong_case", h("{'Descr': '<f8', 'fortran_order': False, 'shape': (3,)}"),
            "UnexpectedKey", "key 'Descr' instead of 'descr'", also=["MissingKey"])

    invalid("shape_negative", h("{'descr': '<f8', 'fortran_order': False, 'shape': (-3,), }"), "BadShape", "shape (-3,)")
    invalid("shape_negative_one", h("{'descr': '<f8', 'fortran_order': False, 'shape': (-1,), }"), "BadShape",
            "shape (-1,): NumPy's reshape would infer the length from the data")
    invalid("shape_negative_2d", h("{'descr': '<f8', 'fortran_order': False, 'shape': (3, -1), }"), "BadShape",
            "shape (3, -1)")
    invalid("shape_list", h("{'descr': '<f8', 'fortran_order': False, 'shape': [3], }"), "BadShape", "shape [3] is a list")
    invalid("shape_int", h("{'descr': '<f8', 'fortran_order': False, 'shape': (3), }"), "BadShape",
            "shape (3) is the int 3, not a tuple")
    invalid("shape_bare_int", h("{'descr': '<f8', 'fortran_order': False, 'shape': 3, }"), "BadShape", "shape 3")
    invalid("shape_float", h("{'descr': '<f8', 'fortran_order': False, 'shape': (3.0,), }"), "MalformedHeader",
            "shape (3.0,): a float literal is a syntax error for our parser, which has no floats")
    invalid("shape_string", h("{'descr': '<f8', 'fortran_order': False, 'shape': ('3',), }"), "BadShape",
            "shape ('3',) holds a string")
    invalid("shape_bool", h("{'descr': '<f8', 'fortran_order': False, 'shape': (True, 3), }"), "BadShape",
            "shape (True, 3): bools in the shape (NumPy's isinstance(x, int) check accepts True as 1)")
    invalid("shape_nested_tuple", h("{'descr': '<f8', 'fortran_order': False, 'shape': ((3,),), }"), "BadShape",
            "shape ((3,),): a tuple inside the tuple")
    invalid("shape_none", h("{'descr': '<f8', 'fortran_order': False, 'shape': None, }"), "BadShape", "shape None")

    invalid("fortran_order_int", h("{'descr': '<f8', 'fortran_order': 1, 'shape': (3,), }"), "BadFortranOrder",
            "fortran_order 1")
    invalid("fortran_order_string", h("{'descr': '<f8', 'fortran_order': 'True', 'shape': (3,), }"), "BadFortranOrder",
            "fortran_order 'True' (a string)")
    invalid("fortran_order_lowercase", h("{'descr': '<f8', 'fortran_order': false, 'shape': (3,), }"),
            "BadFortranOrder", "fortran_order false (lower case: a bare name, not a Python literal)",
            also=["MalformedHeader"])
    invalid("fortran_order_none", h("{'descr': '<f8', 'fortran_order': None, 'shape': (3,), }"), "BadFortranOrder",
            "fortran_order None")

    for bad in ["<f3", "x", "<q9", "", "<f8 ", ">>f8", "<i4[3]"]:
        nm = {"<f3": "f3", "x": "x", "<q9": "q9", "": "empty", "<f8 ": "trailing_space", ">>f8": "double_order",
              "<i4[3]": "i4_brackets"}[bad]
        invalid(f"descr_{nm}", h("{'descr': %r, 'fortran_order': False, 'shape': (3,), }" % bad), "BadDescr",
                f"descr {bad!r}")
    invalid("descr_int", h("{'descr': 8, 'fortran_order': False, 'shape': (3,), }"), "BadDescr", "descr 8 (an int)")
    invalid("descr_bad_field", h("{'descr': [('a', '<f3')], 'fortran_order': False, 'shape': (3,), }"), "BadDescr",
            "structured descr with a bad field type '<f3'")

    invalid("header_list", h("['descr', '<f8', 'fortran_order', False, 'shape', (3,)]"), "MalformedHeader",
            "header is a list, not a dict")
    invalid("header_unterminated", h("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), "), "MalformedHeader",
            "dict never closed")
    invalid("header_unterminated_string", h("{'descr': '<f8, 'fortran_order': False, 'shape': (3,), }"),
            "MalformedHeader", "string never closed properly")
    invalid("header_garbage_after", h("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), } x"),
            "MalformedHeader", "a name after the closing brace")
    invalid("header_two_dicts", h("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), } {}"),
            "MalformedHeader", "two dicts")
    invalid("descr_named_escape", h("{'descr': '<f\\N{DIGIT EIGHT}', 'fortran_order': False, 'shape': (3, 4), }"),
            "MalformedHeader", "deliberate divergence: NumPy accepts \\N{...} named escapes (Python's literal_eval); "
            "ndnpy refuses them rather than carry the Unicode name table, and np.save never writes them")
    invalid("header_set", h("{'descr', 'fortran_order', 'shape'}"), "MalformedHeader", "a set, not a dict")
    invalid("header_empty", h(""), "MalformedHeader", "header of spaces and newline only")
    invalid("header_call", h("dict(descr='<f8', fortran_order=False, shape=(3,))"), "MalformedHeader",
            "a function call, not a literal")
    invalid("header_nul_byte", h("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }\x00"),
            "MalformedHeader", "a NUL byte after the dict")

    invalid("shape_product_overflow",
            h("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296, 2), }", data=b""),
            "LengthOverflow", "element count 2**65 exceeds u64")
    invalid("shape_bytes_overflow",
            h("{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904,), }", data=b""),
            "LengthOverflow", "element count 2**62 fits in u64 but 8 * 2**62 bytes does not")
    invalid("shape_dim_over_u64",
            h("{'descr': '<f8', 'fortran_order': False, 'shape': (36893488147419103232,), }", data=b""),
            "LengthOverflow", "a single dimension 2**65 > u64::MAX", also=["BadShape"])
    invalid("shape_zero_times_huge",
            h("{'descr': '<f8', 'fortran_order': False, 'shape': (0, 36893488147419103232), }", data=b""),
            "LengthOverflow",
            "shape (0, 2**65): the product is 0 but a dimension does not fit in u64", also=["BadShape"])

    # Deep nesting.  1000 levels fits in the default 10 000-byte header limit.
    deep = "(" * 1000 + ")" * 1000
    invalid("nesting_1000", h("{'descr': '<f8', 'fortran_order': False, 'shape': %s, }" % deep, version=(2, 0)),
            "NestingTooDeep", "1000 nested parentheses as the shape value, v2.0, header < 10 000 bytes")
    deep = "(" * 100000 + ")" * 100000
    invalid("nesting_100000", h("{'descr': '<f8', 'fortran_order': False, 'shape': %s, }" % deep, version=(2, 0)),
            "NestingTooDeep",
            "100 000 nested parentheses as the shape value, v2.0 (200 KB header). With the default header "
            "limit (~10 000 bytes) the reader must give HeaderTooLarge first; read with max_header_len "
            ">= the header length to see NestingTooDeep (never a stack overflow)",
            also=["HeaderTooLarge"], extra={"max_header_len": 262144})
    deep = "[" * 1000 + "]" * 1000
    invalid("nesting_descr_lists", h("{'descr': %s, 'fortran_order': False, 'shape': (3,), }" % deep, version=(2, 0)),
            "NestingTooDeep", "1000 nested lists as the descr value")

    invalid("header_len_huge_v2", MAGIC + b"\x02\x00" + struct.pack("<I", 0xFFFFFFF0) + b"{'descr': '<f8'",
            "HeaderTooLarge", "v2.0 header length 0xFFFFFFF0 in a tiny file: must be refused before allocating "
            "(HeaderTooLarge takes priority over TruncatedHeader)")
    big = "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }" + " " * 20000
    invalid("header_len_20000_v2", padded(big, version=(2, 0)) + gd, "HeaderTooLarge",
            "a complete, well-formed v2.0 header of ~20 000 bytes (mostly spaces): over the default "
            "limit; np.load refuses it too (max_header_size=10000)")
    invalid("header_len_65535_v1", padded("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }" + " " * 65400)[:10]
            + b"x" * 100, "HeaderTooLarge", "v1.0 header length ~65 500 in a 110-byte file",
            also=["TruncatedHeader"])

    inv = padded(std + " # \xff\xfe bad", version=(3, 0)).replace("\xff\xfe".encode("utf8"), b"\xff\xfe") + gd
    # fix up the length field after replacing 4 bytes by 2
    hdr_len = struct.unpack("<I", inv[8:12])[0] - 2
    inv = inv[:8] + struct.pack("<I", hdr_len) + inv[12:]
    assert b"\xff\xfe" in inv
    invalid("v3_invalid_utf8", inv, "HeaderEncoding",
            "v3.0 header with the bytes FF FE in a trailing comment: not UTF-8 (fine if read as latin-1)")
    lone = padded(("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), } #").encode() + b"\xed\xa0\x80",
                             version=(3, 0)) + gd
    invalid("v3_surrogate_utf8", lone, "HeaderEncoding", "v3.0 header containing an encoded surrogate (ED A0 80)")
    invalid("struct_duplicate_names", h("{'descr': [('a', '<f8'), ('a', '<i4')], 'fortran_order': False, "
                                        "'shape': (1,), }", data=bytes(12)),
            "BadDescr", "a record with two fields named 'a'")
    invalid("struct_subarray_overflow", h("{'descr': [('a', '<f8', (2147483647, 2147483647, 4))], "
                                          "'fortran_order': False, 'shape': (0,), }", data=b""),
            "BadDescr", "a sub-array field whose byte size overflows 64 bits", also=["LengthOverflow"])
    invalid("v3_L_suffix", h("{'descr': '<f8', 'fortran_order': False, 'shape': (3L,), }", version=(3, 0)),
            "MalformedHeader", "'L' suffix in a v3.0 header: only v1.0/v2.0 allow Python 2 longs")
    invalid("L_suffix_descr_v1", h("{'descr': '<f8'L, 'fortran_order': False, 'shape': (3,), }"),
            "MalformedHeader", "'L' after a string, v1.0 (only allowed after an int)")
    invalid("L_suffix_spaced_v1", h("{'descr': '<f8', 'fortran_order': False, 'shape': (3 L,), }"),
            "MalformedHeader",
            "'L' separated from the int by a space, v1.0 (NumPy's tokenizer-based filter accepts this)")


# ---------------------------------------------------------------------------
# npz helpers
# ---------------------------------------------------------------------------

class NonSeekable(io.RawIOBase):
    """A write-only stream without seek/tell: zipfile then uses data descriptors."""

    def __init__(self):
        self.buf = bytearray()

    def writable(self):
        return True

    def write(self, b):
        self.buf += b
        return len(b)

    def seekable(self):
        return False

    def tell(self):
        raise OSError("not seekable")

    def seek(self, *a):
        raise OSError("not seekable")


def build_zip(members, compression=zipfile.ZIP_STORED, comment=b"", seekable=True) -> bytes:
    """Write an archive like np.savez does, with fixed timestamps.

    members: list of (zip_name, payload) where payload is an ndarray (written
    with format.write_array into zipf.open(..., force_zip64=True), as
    np.savez does) or bytes (written raw).
    """
    out = io.BytesIO() if seekable else NonSeekable()
    with zipfile.ZipFile(out, mode="w", compression=compression) as zf:
        for zname, payload in members:
            zi = zipfile.ZipInfo(zname, date_time=FIXED_DATE)
            zi.compress_type = compression
            if isinstance(payload, np.ndarray):
                with zf.open(zi, "w", force_zip64=True) as fid:
                    npformat.write_array(fid, payload, allow_pickle=False)
            else:
                with zf.open(zi, "w", force_zip64=True) as fid:
                    fid.write(payload)
        zf.comment = comment
    return bytes(out.getvalue() if seekable else out.buf)


def savez_bytes(*args, compressed=False, **kw) -> bytes:
    b = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(b, *args, **kw)
    return b.getvalue()


def local_headers(data: bytes):
    """Yield (offset, flag, method, name, extra) for each local file header, via the central directory."""
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        for zi in zf.infolist():
            off = zi.header_offset
            sig, ver, flag, method = struct.unpack("<IHHH", data[off:off + 10])
            assert sig == 0x04034B50
            nlen, elen = struct.unpack("<HH", data[off + 26:off + 30])
            name = data[off + 30:off + 30 + nlen]
            extra = data[off + 30 + nlen:off + 30 + nlen + elen]
            yield off, flag, method, name.decode(), extra, zi


def extra_ids(extra: bytes):
    ids = []
    i = 0
    while i + 4 <= len(extra):
        hid, sz = struct.unpack("<HH", extra[i:i + 4])
        ids.append(hid)
        i += 4 + sz
    return ids


def check_savez_timestamps():
    d = savez_bytes(a=np.arange(3))
    for _, _, _, _, _, zi in local_headers(d):
        assert zi.date_time == FIXED_DATE, zi.date_time
    return "np.savez writes members with ZipInfo(name), whose date_time defaults to 1980-01-01 00:00:00"


def npz_member_entry(zname: str, payload_value) -> dict:
    name = zname.removesuffix(".npy")
    if isinstance(payload_value, np.ndarray):
        arr = payload_value
        f = arr.flags.f_contiguous and not arr.flags.c_contiguous
        return {"name": name, "zip_name": zname, "kind": "array", "descr": npformat.dtype_to_descr(arr.dtype).__repr__(),
                "element": element_of(arr.dtype), "shape": list(arr.shape), "fortran_order": bool(f),
                "values": encode_values(arr)}
    return {"name": name, "zip_name": zname, "kind": "raw", "bytes_hex": payload_value.hex()}


def npz_valid(name: str, data: bytes, note: str, compressed: bool | None = None):
    status, loaded = np_load_bytes(data, suffix=".npz")
    assert status == "ok", (name, loaded)
    members = []
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        infos = zf.infolist()
        comp = any(zi.compress_type != zipfile.ZIP_STORED for zi in infos)
        for zi in infos:
            raw = zf.read(zi)
            key = zi.filename.removesuffix(".npy")
            value = loaded[key]
            if raw.startswith(b"\x93NUMPY"):
                assert isinstance(value, np.ndarray), (name, key)
                _, _, d = parse_npy(raw)
                assert d["fortran_order"] == (value.flags.f_contiguous and not value.flags.c_contiguous) or value.ndim < 2
                ent = npz_member_entry(zi.filename, value)
                ent["descr"] = repr(d["descr"])
                ent["fortran_order"] = d["fortran_order"]
            else:
                assert isinstance(value, bytes) and value == raw, (name, key)
                ent = npz_member_entry(zi.filename, raw)
            members.append(ent)
        side = {"compressed": comp if compressed is None else compressed, "members": members,
                "comment": zf.comment.decode("latin1") if zf.comment else None, "note": note}
    emit("npz/valid", name, data, side, ext="npz")


def npz_invalid(name: str, data: bytes, error: str, note: str, member: str | None = None):
    status, res = np_load_bytes(data, suffix=".npz")
    side = {"error": error, "note": note}
    if member:
        side["member"] = member
    side["numpy_refuses"] = status == "error"
    if status == "error":
        side["numpy_result"] = res
    else:
        side["numpy_result"] = "loaded " + (", ".join(f"{k}: {summarize(v)}" for k, v in res.items())
                                            if isinstance(res, dict) else summarize(res))
        finding(f"np.load accepts npz/invalid/{name} ({error}): {side['numpy_result']}")
    emit("npz/invalid", name, data, side, ext="npz")


# ---------------------------------------------------------------------------
# Group 4: npz/valid
# ---------------------------------------------------------------------------

def gen_npz_valid():
    FINDINGS.append(check_savez_timestamps())
    a = np.arange(6, dtype="<i8")
    b = np.linspace(0, 1, 5).astype("<f8")
    c = np.array([[True, False], [False, True]])
    d = savez_bytes(a, b, c)
    # zip64 inspection: every member's local header carries a zip64 extra field (0x0001).
    z64 = [0x0001 in extra_ids(extra) for _, _, _, _, extra, _ in local_headers(d)]
    assert all(z64), z64
    npz_valid("savez_positional", d,
              "np.savez(f, a, b, c): members arr_0.npy, arr_1.npy, arr_2.npy, stored. NumPy opens members with "
              "force_zip64=True, so each local header has 0xFFFFFFFF in its size fields and a zip64 extra field "
              "(0x0001) with the real sizes; the central directory entries and the end record are ordinary "
              "(no zip64 extras there, no zip64 end record). Same for every np.savez/np.savez_compressed fixture")
    npz_valid("savez_named", savez_bytes(x=a, y=b.reshape(5, 1), flags=c), "np.savez(f, x=..., y=..., flags=...)")
    d = savez_bytes(x=np.arange(100, dtype="<f4").reshape(10, 10), y=np.zeros(50, "<u2"), compressed=True)
    npz_valid("savez_compressed", d, "np.savez_compressed: deflated members with zip64 local extra fields")
    npz_valid("savez_empty", savez_bytes(), "np.savez(f) with no arrays: an empty archive (only the 22-byte end record); "
              "np.savez_compressed(f) gives the same bytes")
    assert savez_bytes(compressed=True) == savez_bytes()  # identical bytes, so no separate fixture
    npz_valid("members_0d_and_empty",
              savez_bytes(scalar=np.array(2.5), empty=np.zeros((0,), "<i4"), empty3=np.zeros((3, 0, 5), "<f4")),
              "0-d and empty members")
    npz_valid("names_dots_slashes", savez_bytes(**{"a.b": np.arange(3, dtype="<i2"), "dir/x": np.ones(2, "<f8"),
                                                   "a.npy": np.zeros(1, "<u1")}),
              "member names 'a.b.npy', 'dir/x.npy' and 'a.npy.npy' (the name 'a.npy' gets another '.npy'); "
              "NumPy's key strips one '.npy' suffix: 'a.b', 'dir/x', 'a.npy'")
    npz_valid("raw_member", build_zip([("x.npy", np.arange(4, dtype="<i4")),
                                        ("raw.txt", b"hello, not an array\n")]),
              "a .npy member and a plain text member 'raw.txt'; np.load returns the text member as bytes")
    npz_valid("plain_name_npy_member", build_zip([("plain", np.arange(3, dtype="<f8")),
                                                   ("x.npy", np.arange(2, dtype="<u1"))]),
              "a .npy file stored under the name 'plain' (no .npy suffix): NumPy checks the member's first bytes, "
              "not its name, and returns it as an array under key 'plain'")
    npz_valid("raw_member_with_npy_name_no_magic", build_zip([("notarray.npy", b"just text\n")]),
              "a member named 'notarray.npy' that is not a .npy file: np.load returns its bytes under key "
              "'notarray' (NumPy dispatches on the magic, not the name)")
    npz_valid("big_endian_member", savez_bytes(be=np.arange(5, dtype=">i4"), bef=np.array([1.5, -2.0], ">f8")),
              "big-endian members")
    npz_valid("fortran_member", savez_bytes(f=np.asfortranarray(np.arange(6, dtype="<f8").reshape(2, 3)),
                                            c=np.arange(6, dtype="<f8").reshape(2, 3)),
              "a Fortran-order member and the same values in C order")
    npz_valid("archive_comment", build_zip([("x.npy", np.arange(3, dtype="<i8"))], comment=b"an archive comment"),
              "archive with an end-of-central-directory comment")
    d = build_zip([("x.npy", np.arange(5, dtype="<i4")), ("y.npy", np.linspace(0, 1, 3))], seekable=False)
    flags = [f for _, f, _, _, _, _ in local_headers(d)]
    assert all(f & 0x08 for f in flags), flags
    npz_valid("data_descriptor_stored", d,
              "written by zipfile to a non-seekable stream: general-purpose flag bit 3 set, local header sizes "
              "and CRC are zero and the values follow the data in a (zip64, 8-byte sizes) data descriptor; "
              "stored members")
    d = build_zip([("x.npy", np.arange(50, dtype="<i4")), ("y.npy", np.linspace(0, 1, 30))],
                  compression=zipfile.ZIP_DEFLATED, seekable=False)
    assert all(f & 0x08 for _, f, _, _, _, _ in local_headers(d))
    npz_valid("data_descriptor_deflated", d, "as data_descriptor_stored but deflated")

    # A full zip64 archive: zip64 EOCD record + locator, and zip64 extras in the central directory.
    saved = (zipfile.ZIP64_LIMIT, zipfile.ZIP_FILECOUNT_LIMIT)
    try:
        zipfile.ZIP64_LIMIT = 0
        zipfile.ZIP_FILECOUNT_LIMIT = 0
        d = build_zip([("x.npy", np.arange(4, dtype="<i8")), ("y.npy", np.array([0.5, 1.5], "<f4"))])
    finally:
        zipfile.ZIP64_LIMIT, zipfile.ZIP_FILECOUNT_LIMIT = saved
    assert b"PK\x06\x06" in d and b"PK\x06\x07" in d
    npz_valid("zip64_full", d,
              "zip64 throughout (made by lowering zipfile's ZIP64_LIMIT/ZIP_FILECOUNT_LIMIT to 0): zip64 extra "
              "fields in the local and central headers, with 0xFFFFFFFF in the 32-bit size fields (and in the "
              "second member's central-directory offset field, whose real offset is in the zip64 extra; the first "
              "member's offset 0 stays in the 32-bit field), then a zip64 end-of-central-directory record and "
              "locator before the ordinary end record (which here holds the real counts/size/offset, not 0xFFFF.. "
              "placeholders)")
    npz_valid("many_members", savez_bytes(*[np.full(i + 1, i, dtype="<i2") for i in range(20)]),
              "20 positional members arr_0 .. arr_19 (archive order is arr_0, arr_1, ..., not sorted as strings)")


# ---------------------------------------------------------------------------
# Group 5: npz/invalid
# ---------------------------------------------------------------------------

def gen_npz_invalid():
    good = savez_bytes(x=np.arange(8, dtype="<i4"), y=np.arange(4, dtype="<f8"))
    npz_invalid("not_a_zip", b"this is not a zip archive at all\n" * 3, "InvalidArchive", "plain text")
    npz_invalid("npy_not_npz", save_bytes(np.arange(3)), "InvalidArchive", "a .npy file given to the .npz reader "
                "(np.load dispatches on magic and loads it as an array; our npz reader must refuse it)")
    npz_invalid("truncated_half", good[:len(good) // 2], "InvalidArchive", "first half of a valid archive")
    eocd = good.rfind(b"PK\x05\x06")
    cd = struct.unpack("<I", good[eocd + 16:eocd + 20])[0]
    npz_invalid("no_central_directory", good[:cd], "InvalidArchive",
                "local entries only: central directory and end record removed")
    npz_invalid("truncated_eocd", good[:-6], "InvalidArchive", "the last 6 bytes of the end record cut off")
    npz_invalid("truncated_central_directory", good[:cd + 20] + good[eocd:], "InvalidArchive",
                "central directory cut to 20 bytes while the end record still claims its full size and offset")
    bad_off = good[:eocd + 16] + struct.pack("<I", len(good) + 1000) + good[eocd + 20:]
    # NumPy opens it (the directory is found by its size, the offset only
    # shifts the members) and fails when a member is read.
    npz_invalid("central_directory_offset_past_end", bad_off, "InvalidArchive",
                "end record's central directory offset points past the end of the file",
                member="x")

    # BadCrc: flip a data byte of a stored member.
    data = bytearray(good)
    off, flag, method, nm, extra, zi = next(local_headers(good))
    data_start = off + 30 + len(nm) + len(extra)
    data[data_start + 128 + 4] ^= 0xFF  # inside x's array data (after the 128-byte .npy header)
    npz_invalid("bad_crc", bytes(data), "BadCrc", "one data byte of stored member x.npy flipped; CRC-32 mismatch",
                member="x")

    # CorruptMember: corrupt deflate stream.
    gz = savez_bytes(x=np.arange(200, dtype="<i4"), compressed=True)
    data = bytearray(gz)
    off, flag, method, nm, extra, zi = next(local_headers(gz))
    assert method == 8
    data_start = off + 30 + len(nm) + len(extra)
    data[data_start] = 0xFF  # BFINAL=1, BTYPE=11 (reserved): invalid deflate block
    npz_invalid("corrupt_deflate", bytes(data), "CorruptMember",
                "first byte of the deflate stream set to 0xFF (reserved block type 3)", member="x")
    data = bytearray(gz)
    data[data_start + 1:data_start + zi.compress_size - 1] = b"\xff" * (zi.compress_size - 2)
    npz_invalid("corrupt_deflate_body", bytes(data), "CorruptMember",
                "all deflate bytes but the first and last set to 0xFF", member="x")

    bad = padded("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }")
    npz_invalid("member_bad_magic", build_zip([("x.npy", b"\x93NUMPX" + bad[6:] + b"\x00" * 24)]), "BadMagic",
                "member x.npy starts with \\x93NUMPX. NumPy does not refuse: a member without the magic is "
                "returned as raw bytes", member="x")
    npz_invalid("member_malformed_header",
                build_zip([("x.npy", padded("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), ") + b"\x00" * 24)]),
                "MalformedHeader", "member x.npy has an unterminated header dict", member="x")
    npz_invalid("member_truncated_data",
                build_zip([("ok.npy", np.arange(2, dtype="<u1")),
                           ("x.npy", padded("{'descr': '<f8', 'fortran_order': False, 'shape': (10,), }") + b"\x00" * 40)]),
                "TruncatedData", "member x.npy declares (10,) <f8 = 80 bytes but holds 40; the zip itself is "
                "consistent", member="x")
    npz_invalid("member_truncated_data_compressed",
                build_zip([("x.npy", padded("{'descr': '<i4', 'fortran_order': False, 'shape': (100,), }")
                            + b"\x01" * 40)], compression=zipfile.ZIP_DEFLATED),
                "TruncatedData", "deflated member declares 400 bytes, holds 40", member="x")

    # Encrypted: set flag bit 0 in local and central headers of member x.
    data = bytearray(good)
    off, flag, *_ = next(local_headers(good))
    struct.pack_into("<H", data, off + 6, flag | 1)
    cd_pos = data.find(b"PK\x01\x02")
    cflag = struct.unpack_from("<H", data, cd_pos + 8)[0]
    struct.pack_into("<H", data, cd_pos + 8, cflag | 1)
    npz_invalid("encrypted", bytes(data), "Encrypted",
                "flag bit 0 (encrypted) set in the local and central headers of x.npy (data itself is plain)",
                member="x")


# ---------------------------------------------------------------------------

def main():
    # set/dict reprs in recorded NumPy error messages depend on string hashing.
    if os.environ.get("PYTHONHASHSEED") != "0":
        os.environ["PYTHONHASHSEED"] = "0"
        os.execv(sys.executable, [sys.executable, *sys.argv])
    assert sys.version_info >= (3, 11), "Python 3.11+ required"
    assert int(np.__version__.split(".")[0]) >= 2, "NumPy 2.x required"
    assert sys.byteorder == "little", "fixtures assume a little-endian machine"
    warnings.filterwarnings("ignore", message="Stored array in format 3.0")
    if FIX.exists():
        shutil.rmtree(FIX)
    FIX.mkdir()
    gen_valid()
    gen_unsupported()
    gen_elements()
    gen_invalid()
    gen_npz_valid()
    gen_npz_invalid()
    (FIX / "README.md").write_text(README.format(np=np.__version__, py=sys.version.split()[0],
                                                 zlib=zlib.ZLIB_RUNTIME_VERSION), encoding="utf-8")
    total = sum(p.stat().st_size for p in FIX.rglob("*") if p.is_file())
    for g in sorted(COUNTS):
        print(f"{g}: {COUNTS[g]} fixtures")
    print(f"total size: {total} bytes; NumPy {np.__version__}; Python {sys.version.split()[0]}; "
          f"zlib {zlib.ZLIB_RUNTIME_VERSION}")
    print("findings:")
    for f in FINDINGS:
        print("  -", f)


README = """# Test fixtures

Generated by `python3 scripts/gen_fixtures.py`, which deletes this directory
and regenerates it deterministically (fixed seeds, fixed zip timestamps).
Do not edit by hand: change the script and rerun it.

Generated with NumPy {np}, Python {py}, zlib {zlib} (deflate output may
differ with another zlib; everything else is byte-stable).

Every `<group>/<name>.npy` or `.npz` has a sidecar `<name>.json`.

| group | contents | sidecar keys |
|---|---|---|
| `npy/valid/` | files np.load reads and the crate must read into values: every element type in `<` and `>` order, special floats, int extremes, odd shapes, Fortran order, non-contiguous sources, versions 1.0/2.0/3.0, and hand-made headers in unusual but valid syntax (`hdr_*`) | `descr` (Python repr of the parsed descr), `dtype_str`, `shape`, `fortran_order`, `version`, `element` (Rust type: bool, i8..u64, f16, f32, f64, c64, c128), `values` (flat, logical C order; floats repr-exact with "nan"/"inf"/"-inf" strings; complex as [re, im]), `np_save_identical`, `note`; `bool_nonzero_bytes` also has `raw_bytes` |
| `npy/unsupported/` | valid files whose dtype parses but has no Rust element type: object arrays and long double (also as a record field) | `descr` (exactly as spelled in the header), `shape`, `fortran_order`, `version`, `np_save_identical`, `note` |
| `npy/elements/` | strings (`U` both orders, `S`, empty, non-BMP, 2-D, Fortran), datetime64/timedelta64 in every unit, with multipliers and NaT, unstructured void, records (packed, aligned, big-endian, reordered, extra fields, explicit offsets, titles, nested, deeply nested, sub-arrays of sub-arrays and of records, 0-d, Fortran, padding-only, mixed kinds, latin-1/UTF-8 names, 5000 fields in version 2.0, descrs without byte-order marks) | as `npy/unsupported`, plus `expect` (what a reader must produce: `kind` str/bytes/datetime/timedelta/void/num/record with `shape` and `values`, `unit`, `hex` (native order, C order) or `fields` (a sample of the columns for wide records), recursively), optional `rust` (the Rust type the tests read it into) and `max_header_len` |
| `npy/invalid_data/` | valid headers whose data is not (a surrogate or a value above 0x10FFFF in `U` data; NumPy loads them) | `error`, `note` |
| `npy/invalid/` | files the reader must refuse | `error` (crate `Error` variant name), `note`, `numpy_refuses`, `numpy_result`; optional `also_acceptable` (other variants that are a defensible answer) and `max_header_len` (read option needed to reach `error`; with defaults the answer is in `also_acceptable`) |
| `npz/valid/` | archives | `compressed`, `members` (archive order; `kind` "array" with `descr`/`element`/`shape`/`fortran_order`/`values`, or "raw" with `bytes_hex`), `comment`, `note` |
| `npz/invalid/` | archives the reader must refuse | `error` (InvalidArchive, BadCrc, CorruptMember, Encrypted, or a .npy error such as BadMagic/MalformedHeader/TruncatedData), `member`, `note`, `numpy_refuses`, `numpy_result` |

`np_save_identical` is true when the file is byte-for-byte what `np.save`
writes both for `np.load(file)` and for the recorded values rebuilt in native
(little-endian) order; a writer that reproduces NumPy must then write exactly
these bytes. It is false for big-endian files, non-default versions and
most hand-made headers (three hand-made headers, `hdr_std_handmade`,
`hdr_0d`, `hdr_fortran_true`, happen to equal np.save's bytes and are true).

Zip timestamps: `np.savez` already writes the fixed date 1980-01-01 00:00
(it creates members with `ZipInfo(name)`, whose default `date_time` is that);
the archives the script builds itself use `ZipInfo(..., date_time=(1980, 1, 1, 0, 0, 0))`.
"""

if __name__ == "__main__":
    main()
