"""Lesson 06 material, learner side: what the notebook hands out and the factories a graded kernel
builds test inputs with (`plain.Make("labkit.material.l06:name", ...)`). No answers, no test inputs.

Written by hand (the notebooks import it); the generated `labkit/exercises/lNN.py`
holds only declarations."""
from __future__ import annotations

import numpy as np

__all__ = ["matmul_nbits_model"]


# ---------------------------------------------------------------- lesson material (handed to the learner)


def matmul_nbits_model(q, scales, zero_points, k: int):
    """A model `y = x @ W` made of one com.microsoft MatMulNBits node, its weight given as 4-bit blocks.

    `q` (N, n_blocks, block_size) holds the codes 0..15 of each block of W's column n along K, `scales` and
    `zero_points` (N, n_blocks) one value per block; `k` is K, the rows of W (the codes of the padding past
    row K are never read). The node stores them as ONNX Runtime's MatMulNBitsQuantizer does: two codes per
    byte (the first in the low 4 bits), B of shape (N, n_blocks, block_size / 2), scales as float32, zero
    points packed two per byte too. Input `x` [batch, k], output `y` [batch, N]. Raises ValueError, saying
    why, for arrays that do not fit."""
    from onnx import TensorProto, helper, numpy_helper

    q, scales, zero_points = (np.asarray(a) for a in (q, scales, zero_points))
    if q.ndim != 3:
        raise ValueError(f"q must have 3 dimensions (N, n_blocks, block_size), got shape {q.shape}")
    n, n_blocks, block_size = q.shape
    if block_size < 16 or block_size & (block_size - 1):
        raise ValueError(f"MatMulNBits needs a block size that is a power of 2, at least 16, got {block_size}")
    if not (n_blocks - 1) * block_size < int(k) <= n_blocks * block_size:
        raise ValueError(f"{n_blocks} blocks of {block_size} rows do not hold K = {k} rows: "
                         f"n_blocks must be ceil(K / block_size) = {-(-int(k) // block_size)}")
    for name, a in (("scales", scales), ("zero_points", zero_points)):
        if a.shape != (n, n_blocks):
            raise ValueError(f"{name} must have shape (N, n_blocks) = {(n, n_blocks)}, got {a.shape}")
    used = np.arange(n_blocks * block_size).reshape(n_blocks, block_size) < int(k)
    for name, a in (("q", q[:, used]), ("zero_points", zero_points)):
        if a.dtype.kind not in "iuf":
            raise ValueError(f"{name} must hold 4-bit codes, integers 0..15 (got dtype {a.dtype})")
        if not np.all(np.isfinite(a)):
            raise ValueError(f"{name} must hold 4-bit codes, integers 0..15 (found nan or inf)")
        if np.any((a < 0) | (a > 15) | (a != np.round(a))):
            raise ValueError(f"{name} must hold 4-bit codes, integers 0..15 (found values from "
                             f"{a.min():g} to {a.max():g})")
    if not np.all(np.isfinite(scales)):
        raise ValueError("scales must be finite numbers (a block of zeros has scale 0, not nan)")
    codes = np.where(used, q, 0).astype(np.uint8)
    packed = codes[..., 0::2] | (codes[..., 1::2] << 4)
    zp = zero_points.astype(np.uint8)
    if n_blocks % 2:
        zp = np.concatenate([zp, np.zeros((n, 1), np.uint8)], axis=1)
    zp_packed = zp[:, 0::2] | (zp[:, 1::2] << 4)
    node = helper.make_node("MatMulNBits", ["x", "B", "scales", "zero_points"], ["y"], domain="com.microsoft",
                            K=int(k), N=n, bits=4, block_size=block_size)
    graph = helper.make_graph(
        [node], "int4_matmul", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", int(k)])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", n])],
        [numpy_helper.from_array(packed.astype(np.uint8), "B"),
         numpy_helper.from_array(scales.astype(np.float32), "scales"),
         numpy_helper.from_array(zp_packed.astype(np.uint8), "zero_points")])
    return helper.make_model(graph, ir_version=10, opset_imports=[helper.make_opsetid("", 21),
                                                                  helper.make_opsetid("com.microsoft", 1)])
