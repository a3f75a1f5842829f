#!/usr/bin/env python3
"""Writes the small JAX/Flax-style checkpoint that ndnpy-candle's test
loads (ndnpy-candle/tests/data/), made the way such checkpoints are made:
np.savez of a flattened parameter tree, with ml_dtypes' bfloat16.

  flax_checkpoint.npz             np.savez (stored members)
  flax_checkpoint_compressed.npz  np.savez_compressed, same members
  flax_checkpoint.expected.npz    every member as float64 in C order
                                  (bool as 0/1), the values a tensor of it
                                  must hold

The members are what candle's own .npz reader refuses: bfloat16 as raw
'<V2' items, a Fortran-order kernel, big-endian arrays; beside them the
ordinary kinds (float16, C-order float32, 0-d integers, bool, uint16).

    target/venv-ml/bin/python scripts/gen_flax_checkpoint.py

Needs numpy and ml_dtypes. Deterministic (fixed seed; np.savez writes the
fixed zip date 1980-01-01).
"""

import os

import ml_dtypes
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "ndnpy-candle", "tests", "data")


def checkpoint():
    rng = np.random.default_rng(2024)
    normal = lambda *shape: rng.standard_normal(shape)
    return {
        # JAX keeps bfloat16 weights; np.savez writes them as '<V2'.
        "params/Embed_0/embedding": normal(16, 8).astype(ml_dtypes.bfloat16),
        # A kernel transposed in memory, as jax.device_get can hand back.
        "params/Dense_0/kernel": np.asfortranarray(normal(8, 4).astype(np.float32)),
        # Big-endian, as a checkpoint converted on another machine.
        "params/Dense_0/bias": normal(4).astype(">f4"),
        "params/LayerNorm_0/scale": (1 + normal(8) / 10).astype(np.float16),
        "params/Conv_0/kernel": normal(3, 3, 2, 4).astype(np.float32),
        "batch_stats/BatchNorm_0/mean": normal(4).astype(">f8"),
        "params/Attention_0/mask": rng.integers(0, 2, (4, 4)).astype(np.bool_),
        "params/Embed_0/ids": rng.integers(0, 65536, 5).astype(np.uint16),
        "opt_state/count": np.int32(1234),
        "step": np.int64(-5),
    }


def main():
    os.makedirs(OUT, exist_ok=True)
    tree = checkpoint()
    np.savez(os.path.join(OUT, "flax_checkpoint.npz"), **tree)
    np.savez_compressed(os.path.join(OUT, "flax_checkpoint_compressed.npz"), **tree)
    expected = {name: np.ascontiguousarray(a.astype(np.float64)).reshape(a.shape)
                for name, a in tree.items()}
    np.savez(os.path.join(OUT, "flax_checkpoint.expected.npz"), **expected)
    for name in sorted(os.listdir(OUT)):
        print(name, os.path.getsize(os.path.join(OUT, name)), "bytes")


if __name__ == "__main__":
    main()
