"""Lesson 06 exercises, learner side: what each exercise is (no answers, no test inputs).

The judges, references, test inputs and quiz keys are in `labkit_judges/l06.py`, which a graded
kernel cannot import (docs/authoring.md)."""
from __future__ import annotations

import numpy as np

from ..checks.registry import Question, declare, quiz

declare("06.quantize", title="quantize(x, scale, zero_point, qmin, qmax)", points=3, kind="function",
        hint=[
            'Quantizing maps a real value to the nearest level: divide by the scale, round, shift by the zero point, then clamp to the integer range.',
            'np.round (halves to even, like QuantizeLinear), np.clip, .astype(np.int32); broadcasting handles per-channel scales.',
        ])

declare("06.dequantize", title="dequantize(q, scale, zero_point)", points=2, kind="function",
        hint=[
            'Undo the shift, then the scale; do the subtraction in a type wide enough that it cannot wrap around.',
            'ndarray.astype(np.int32) before subtracting, result as float32.',
        ])

declare("06.choose_qparams", title="choose_qparams(x, qmin, qmax, symmetric)", points=3, kind="function",
        hint=[
            'The range must contain 0 so that 0 is exact; symmetric quantization centres the range and, with a signed type, drops the lowest level; an all-zero tensor still needs a usable scale.',
            'np.min, np.max, np.round for the zero point (not int(), which truncates).',
        ])

declare("06.calibration", title="A calibration reader for static quantization", points=4, kind="function",
        hint=[
            "Static quantization needs a reader that hands out exactly the images you were given, batch by batch, under the model's own input name; then quantize in QDQ format with one scale per output channel of the weights.",
            'onnxruntime.quantization: CalibrationDataReader.get_next (returns None when done), quantize_static with quant_format and per_channel; onnx.load for the result.',
        ])

declare("06.int4_blocks", title="Block-wise int4 weights, as MatMulNBits stores them", points=3, kind="function",
        hint=[
            'Each column of W is cut along K into blocks (the last one padded); each block gets its own scale and zero point from a range that contains 0, and codes 0..15; MatMulNBits stores the columns first.',
            "np.pad, reshape and transpose (not reshape alone) to (N, n_blocks, block_size), min/max along the last axis, np.round and np.clip; q and zero points as uint8, scales as float32. Compute it yourself: ONNX Runtime's quantizer is not the answer.",
        ])

quiz("06.quiz", title="Choosing a quantization method", points=4, questions=[
    Question("q1", "Model A is a text model made mostly of large MatMul layers (tens of MB of weights), run one sentence at a time on a server CPU, and you have no representative input data at hand. Which method do you try first?",
             {"a": "Dynamic quantization (quantize_dynamic): int8 weights, activation scales computed at run time", "b": "Static quantization (quantize_static) with a calibration reader", "c": "No quantization: int8 only helps convolutions"}),
    Question("q2", "Model B is a small CNN classifying camera frames on a phone; you have a few hundred typical images. Which method do you try first?",
             {"a": "Dynamic quantization: it needs no data", "b": "Static QDQ quantization, per-channel weights, calibrated on those images", "c": "Quantize only the input image to uint8"}),
    Question("q3", "Which formula maps a real value x to its quantized value q (scale s, integer zero point z)?",
             {"a": "q = round((x - z) / s)", "b": "q = round(x * s) + z", "c": "q = clamp(round(x / s) + z, qmin, qmax)"}),
    Question("q4", "What does a dynamically quantized model do at every inference that a statically quantized one does not?",
             {"a": "It scans each activation for its min and max to compute a scale and zero point", "b": "It dequantizes all its weights back to float32", "c": "It recalibrates its weights on the input"}),
    Question("q5", "ONNX Runtime's quantizer makes a weight tensor with largest |w| = m symmetric int8. Which integer range and scale does it use?",
             {"a": "[-128, 127], scale 2m/255", "b": "[-127, 127], scale m/127, zero point 0", "c": "[0, 255], zero point 128"}),
    Question("q6", "The static int8 model will run through NNAPI on Android. Which activation type do you pass to quantize_static?",
             {"a": "The default QInt8: NNAPI takes int8 everywhere", "b": "QInt4, the smallest", "c": "QUInt8: ONNX Runtime's NNAPI provider takes uint8 activations only"}),
])


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
