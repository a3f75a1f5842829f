#!/usr/bin/env python3
"""Writes .npz files as scipy.sparse.save_npz makes them, and broken ones.

A sparse matrix saved by SciPy is an ordinary .npz of a few plain arrays
(no pickles), so the crate can read it; these fixtures pin down the layout
SciPy uses and what it does with archives that break the format's rules.

    /tmp/mlvenv/bin/python scripts/gen_sparse_fixtures.py [--out fixtures/sparse]

Needs numpy and scipy.

What save_npz writes (SciPy 1.17.1, NumPy 2.4.6), members in archive order:

  csr, csc  indices <i4 (nnz,)  indptr <i4 (M+1,) / (N+1,)   format |S3 ()
            shape <i8 (2,)  data (nnz,)
  bsr       indices <i4 (nblocks,)  indptr <i4 (M/R+1,)  format |S3 ()
            shape <i8 (2,)  data (nblocks, R, C)   (blocksize only via data)
  coo (2-D) row <i4 (nnz,)  col <i4 (nnz,)  format |S3 ()  shape <i8 (2,)
            data (nnz,)
  coo (n-D, coo_array only) coords <i8 (ndim, nnz)  format  shape <i8 (ndim,)
            data  _is_array
  dia       offsets <i4 (ndiag,)  format |S3 ()  shape <i8 (2,)
            data (ndiag, N): data[k, j] is element (j - offsets[k], j)
  *_array   (sparray classes, not *_matrix) add  _is_array |b1 () True,
            which load_npz uses to choose csr_array over csr_matrix

``format`` is a 0-d bytes array (b'csr'); load_npz also takes a str one
(SciPy < 1.0 wrote those). Index arrays are int32 unless the matrix holds
int64 ones; csr_matrix((data, indices, indptr)) downcasts int64 arrays to
int32 when they fit, csr_array keeps them. data has the matrix's dtype.
save_npz(compressed=True), the default, deflates every member; lil/dok
cannot be saved. Nothing is sorted or deduplicated on the way out.

Contents of the output folder (matrices are *_matrix unless said):

  csr, csc, coo, bsr (blocksize (2, 3)), dia .npz   one 4x6 float64 matrix
                      with 7 nonzeros, negatives, an empty row (row 2); bsr
                      leaves out its one all-zero 2x3 block (rows 2-3, cols 0-2)
  csr_stored.npz      the csr one with compressed=False (zip "stored")
  csr_f32_i64.npz     csr_array, float32 data, int64 indices/indptr
                      (so it has _is_array)
  csr_bool.npz, csr_c128.npz   bool and complex128 data
  csr_empty.npz       3x0, nnz 0 (indptr [0, 0, 0, 0])
  coo_dup.npz         duplicate (row, col) entries, kept as saved; the dense
                      form sums them
  csr_unsorted.npz    column indices not sorted within a row
                      (has_sorted_indices False), saved as-is
  csr_array.npz       the csr one as csr_array (_is_array member)
  coo_3d.npz          a 2x3x4 coo_array (coords member)
  NAME.dense.npy      for each NAME.npz: m.toarray(), dtype as saved
  bad/*.npz           hand-made archives (np.savez of the member arrays)
                      breaking one rule each; bad/README.md (written by this
                      script) says what is wrong and what
                      scipy.sparse.load_npz, then toarray(), does with each.

Deterministic: fixed values; np.savez writes the fixed zip date 1980-01-01;
deflated members depend on the zlib version. bad/README.md records SciPy's
messages, run in a child process each (a broken matrix can crash toarray()).
"""

import argparse
import json
import os
import subprocess
import sys
import zipfile

import numpy as np
import scipy
import scipy.sparse as sp

# Row 2 is empty; with blocksize (2, 3) the lower-left block is all zero.
DENSE = np.array([
    [1.5, 0.0, 3.0, -2.0, 0.0, 0.0],
    [0.0, 9.0, 0.0, 0.0, 0.0, 0.0],
    [0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
    [0.0, 0.0, 0.0, 0.5, -7.0, 4.25],
])


def good_matrices():
    m = {}
    m["csr"] = sp.csr_matrix(DENSE)
    m["csc"] = sp.csc_matrix(DENSE)
    m["coo"] = sp.coo_matrix(DENSE)
    m["bsr"] = sp.bsr_matrix(DENSE, blocksize=(2, 3))
    m["dia"] = sp.dia_matrix(DENSE)
    csr = m["csr"]
    m["csr_f32_i64"] = sp.csr_array((csr.data.astype(np.float32),
                                     csr.indices.astype(np.int64),
                                     csr.indptr.astype(np.int64)), shape=csr.shape)
    m["csr_bool"] = sp.csr_matrix(DENSE != 0)
    m["csr_c128"] = sp.csr_matrix(DENSE * (1 - 2j) + np.where(DENSE != 0, 0.25j, 0))
    m["csr_empty"] = sp.csr_matrix((3, 0))
    # (0, 3) twice and (3, 4) three times; scipy keeps them until sum_duplicates.
    m["coo_dup"] = sp.coo_matrix((np.array([1.0, -2.0, 0.5, 4.0, 1.0, -1.5]),
                                  (np.array([0, 0, 3, 3, 3, 0]),
                                   np.array([3, 0, 4, 4, 4, 3]))), shape=(4, 6))
    # DENSE again, row 0 listing columns 3, 0, 2 and row 3 listing 5, 3, 4.
    m["csr_unsorted"] = sp.csr_matrix((np.array([-2.0, 1.5, 3.0, 9.0, 4.25, 0.5, -7.0]),
                                       np.array([3, 0, 2, 1, 5, 3, 4], dtype=np.int32),
                                       np.array([0, 3, 4, 4, 7], dtype=np.int32)),
                                      shape=(4, 6))
    m["csr_array"] = sp.csr_array(DENSE)
    m["coo_3d"] = sp.coo_array((np.array([1.0, -2.0, 3.5, 0.25]),
                                (np.array([0, 1, 1, 0]), np.array([2, 0, 2, 1]),
                                 np.array([3, 0, 1, 0]))), shape=(2, 3, 4))
    return m


def write_good(out):
    mats = good_matrices()
    assert not mats["coo_dup"].has_canonical_format
    assert not mats["csr_unsorted"].has_sorted_indices
    names = []
    for name, m in mats.items():
        sp.save_npz(os.path.join(out, name + ".npz"), m)
        names.append(name + ".npz")
        if name == "csr":
            sp.save_npz(os.path.join(out, "csr_stored.npz"), m, compressed=False)
            names.append("csr_stored.npz")
    for name in names:
        path = os.path.join(out, name)
        dense = sp.load_npz(path).toarray()
        np.save(path[:-4] + ".dense.npy", dense)
    return mats, names


def verify_good(out, mats, names):
    for name in names:
        path = os.path.join(out, name)
        m = mats["csr" if name == "csr_stored.npz" else name[:-4]]
        back = sp.load_npz(path)
        assert type(back) is type(m), (name, type(back))
        assert back.dtype == m.dtype and back.shape == m.shape, name
        assert np.array_equal(np.load(path[:-4] + ".dense.npy"), m.toarray()), name
        with zipfile.ZipFile(path) as zf:
            kinds = {i.compress_type for i in zf.infolist()}
        assert kinds == {zipfile.ZIP_STORED if name == "csr_stored.npz" else zipfile.ZIP_DEFLATED}, name
    with np.load(os.path.join(out, "csr_f32_i64.npz")) as z:
        assert z["indices"].dtype == np.int64 and z["indptr"].dtype == np.int64
        assert z["data"].dtype == np.float32 and bool(z["_is_array"])
    with np.load(os.path.join(out, "csr_unsorted.npz")) as z:
        assert z["indices"].tolist() == [3, 0, 2, 1, 5, 3, 4]
    with np.load(os.path.join(out, "coo_dup.npz")) as z:
        assert len(z["data"]) == 6
    dup = np.load(os.path.join(out, "coo_dup.dense.npy"))
    assert dup[0, 3] == -0.5 and dup[3, 4] == 5.5
    with np.load(os.path.join(out, "csr.npz")) as z:
        assert "_is_array" not in z.files


def layout(out, names):
    """name -> [(member, dtype, shape)], as np.load sees the archive."""
    rows = {}
    for name in names:
        with np.load(os.path.join(out, name)) as z:
            rows[name] = [(k, z[k].dtype.str, z[k].shape) for k in z.files]
    return rows


# The 4x6 csr matrix's members, as save_npz writes them; the bad files
# change one thing each.
def csr_members(**change):
    csr = sp.csr_matrix(DENSE)
    d = {"indices": csr.indices, "indptr": csr.indptr, "format": np.bytes_(b"csr"),
         "shape": np.array(csr.shape), "data": csr.data}
    d.update(change)
    return {k: v for k, v in d.items() if v is not None}


def bad_archives():
    csr = sp.csr_matrix(DENSE)
    ind, ptr, data = csr.indices, csr.indptr, csr.data
    coo = sp.coo_matrix(DENSE)
    dia = sp.dia_matrix(DENSE)
    bad_ind = ind.copy()
    bad_ind[-1] = 6
    neg_ind = ind.copy()
    neg_ind[1] = -1
    non_mono = ptr.copy()
    non_mono[1] = ptr[2] + 1           # rises above the next entry, then drops
    over = ptr.copy()
    over[-1] = len(data) + 1
    under = ptr.copy()
    under[-1] = len(data) - 1
    row_oob = coo.row.copy()
    row_oob[-1] = 4
    return [
        ("index_out_of_range.npz", csr_members(indices=bad_ind),
         f"CSR 4x6 whose last column index is 6 (columns are 0..5); indices {bad_ind.tolist()}"),
        ("negative_index.npz", csr_members(indices=neg_ind),
         f"CSR column index -1; indices {neg_ind.tolist()}"),
        ("indptr_not_monotone.npz", csr_members(indptr=non_mono),
         f"indptr {non_mono.tolist()} decreases (starts at 0, ends at nnz)"),
        ("indptr_wrong_length.npz", csr_members(indptr=ptr[:-1]),
         f"indptr {ptr[:-1].tolist()} has 4 entries for 4 rows (needs 5)"),
        ("indptr_last_not_nnz.npz", csr_members(indptr=over),
         f"indptr {over.tolist()} ends at nnz+1 = {len(data) + 1} (data/indices have {len(data)})"),
        ("indptr_last_lt_nnz.npz", csr_members(indptr=under),
         f"indptr {under.tolist()} ends at nnz-1 = {len(data) - 1}; the last stored entry is unreachable"),
        ("data_indices_len_mismatch.npz", csr_members(data=data[:-1]),
         f"data has {len(data) - 1} values, indices {len(ind)} (indptr ends at {len(ind)})"),
        ("coo_row_out_of_range.npz",
         {"row": row_oob, "col": coo.col, "format": np.bytes_(b"coo"),
          "shape": np.array(coo.shape), "data": coo.data},
         f"COO 4x6 with row index 4; row {row_oob.tolist()}"),
        ("bad_format.npz", csr_members(format=np.bytes_(b"xyz")),
         "CSR members with format b'xyz'"),
        ("missing_indptr.npz", csr_members(indptr=None),
         "CSR members without indptr"),
        ("shape_negative.npz", csr_members(shape=np.array([-4, 6])),
         "CSR members with shape [-4, 6]"),
        ("bsr_bad_blocks.npz",
         {"indices": np.array([0, 1], dtype=np.int32), "indptr": np.array([0, 2], dtype=np.int32),
          "format": np.bytes_(b"bsr"), "shape": np.array([4, 6]),
          "data": np.arange(24, dtype=np.float64).reshape(2, 3, 4)},
         "BSR 4x6 with data blocks of 3x4 (4 % 3 and 6 % 4 are not 0); indices [0, 1], indptr [0, 2]"),
        ("dia_offsets_len_mismatch.npz",
         {"offsets": dia.offsets[:-1], "format": np.bytes_(b"dia"),
          "shape": np.array(dia.shape), "data": dia.data},
         f"DIA with {dia.data.shape[0]} data rows but offsets {dia.offsets[:-1].tolist()}"),
    ]


# Run in a child so that a crash in toarray() is reported, not suffered.
PROBE = r"""
import json, sys, warnings
import scipy.sparse as sp
res = {}
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    try:
        m = sp.load_npz(sys.argv[1])
    except Exception as e:
        res["load"] = f"raises {type(e).__name__}: {e}"
    else:
        res["load"] = f"loads: {type(m).__name__} shape {m.shape} nnz {m.nnz}"
        if hasattr(m, "check_format"):
            try:
                m.copy().check_format(full_check=True)
                res["check"] = "passes"
            except Exception as e:
                res["check"] = f"raises {type(e).__name__}: {e}"
        if sys.argv[2] == "run":
            try:
                a = m.toarray()
                res["toarray"] = "returns " + repr(a.tolist()).replace("\n", " ")
            except Exception as e:
                res["toarray"] = f"raises {type(e).__name__}: {e}"
    res["warnings"] = [f"{x.category.__name__}: {x.message}" for x in w]
print(json.dumps(res))
"""


def probe(bad_dir, name):
    toarray = "skip" if name in UNSAFE_WRITE else "run"
    p = subprocess.run([sys.executable, "-c", PROBE, name, toarray], cwd=bad_dir,
                       capture_output=True, text=True)
    if p.returncode != 0:
        return {"load": f"child exited {p.returncode}", "stderr": p.stderr.strip()[-300:]}
    return json.loads(p.stdout)


# csr_todense (scipy/sparse/sparsetools/csr.h) does Bx_row[Aj[jj]] += Ax[jj]
# with no bounds check, so toarray() of these writes outside its result
# buffer. Not run here: what happens depends on the heap (seen: a result
# silently missing the value, and an abort "corrupted size vs. prev_size").
UNSAFE_WRITE = {"index_out_of_range.npz", "negative_index.npz"}
UNSAFE = {
    "index_out_of_range.npz": "toarray() (not run) adds 4.25 at flat index "
        "24 of the 24-element result, one past the end: an out-of-bounds "
        "heap write in csr_todense, no error; seen to return the matrix "
        "without 4.25",
    "negative_index.npz": "toarray() (not run) adds 3.0 at flat index -1, "
        "just before the result: an out-of-bounds heap write in "
        "csr_todense; seen to return the matrix without 3.0, and seen to "
        "abort the process (glibc \"corrupted size vs. prev_size\")",
    "indptr_not_monotone.npz": "row 0 takes entries 0..5 (so it gets 9.0 "
        "and 0.5, summing -2.0 + 0.5 at column 3), row 1 the empty range 5..4",
    "indptr_last_lt_nnz.npz": "load_npz prunes data/indices to indptr[-1] "
        "without a word; 4.25 is gone",
}


def write_bad(out):
    bad_dir = os.path.join(out, "bad")
    os.makedirs(bad_dir, exist_ok=True)
    bad = bad_archives()
    lines = [
        "# Broken sparse archives",
        "",
        "Written by `scripts/gen_sparse_fixtures.py` with np.savez of the member",
        "arrays (not save_npz), each breaking one rule of the format. The base",
        "matrix is the 4x6 float64 `../csr.npz` (`../coo.npz`, `../bsr.npz`,",
        "`../dia.npz` for the others). \"load_npz\" and \"toarray()\" are what",
        f"`scipy.sparse.load_npz(f)` and then `.toarray()` do, SciPy {scipy.__version__},",
        f"NumPy {np.__version__}. load_npz runs only O(1) checks (lengths, ranks), not",
        "a scan of the indices (the constructor's check_format(full_check=False)),",
        "so a file that loads is not a valid matrix; the",
        "\"check_format(full_check=True)\" line is the scan SciPy has but does not run.",
        "toarray() does not check either, see the notes.",
        "",
    ]
    results = {}
    for name, members, what in bad:
        np.savez(os.path.join(bad_dir, name), **members)
        r = probe(bad_dir, name)
        results[name] = r
        lines.append(f"## `{name}`")
        lines.append("")
        lines.append(f"- wrong: {what}")
        lines.append(f"- load_npz: {r['load']}")
        if "check" in r:
            lines.append(f"- check_format(full_check=True): {r['check']}")
        if "toarray" in r:
            lines.append(f"- toarray(): {r['toarray']}")
        if name in UNSAFE:
            lines.append(f"- note: {UNSAFE[name]}")
        if r.get("warnings"):
            lines.append(f"- warnings: {'; '.join(r['warnings'])}")
        if "stderr" in r:
            lines.append(f"- stderr: {r['stderr']}")
        lines.append("")
    with open(os.path.join(bad_dir, "README.md"), "w") as f:
        f.write("\n".join(lines))
    return [n for n, _, _ in bad], results


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(here, "..", "fixtures", "sparse"),
                    help="output folder (its .npy/.npz files and bad/ are replaced)")
    out = ap.parse_args().out
    for d in (out, os.path.join(out, "bad")):
        if os.path.isdir(d):
            for n in os.listdir(d):
                if n.endswith((".npy", ".npz")) or (d != out and n == "README.md"):
                    os.remove(os.path.join(d, n))
    os.makedirs(out, exist_ok=True)
    mats, names = write_good(out)
    verify_good(out, mats, names)
    for name, members in layout(out, names).items():
        size = os.path.getsize(os.path.join(out, name))
        print(f"{name:22} {size:5} B  " + ", ".join(f"{k} {t} {s}" for k, t, s in members))
    bad_names, results = write_bad(out)
    for name in bad_names:
        print(f"bad/{name:30} {results[name]['load']}")
    print(f"numpy {np.__version__}, scipy {scipy.__version__}, python {sys.version.split()[0]}")


if __name__ == "__main__":
    main()
