"""Blind entries, copied from /work/blind/l06.py (issue 32): written by a helper who never read the judges or this corpus
(their README: /work/blind/README.md). tests/corpus/l06.py adds them to its CORPUS.
Classes changed after reading the prompt: blind-numpy-types (Right: the prompt now allows NumPy scalars, as compute_scale_zp gives them).

Blind corpus for lesson 06: quantize, dequantize, choose_qparams, calibration, int4_blocks.
"""
import math
import tempfile
from pathlib import Path

import numpy as np
import onnx

from corpus import Right, Wrong


# ---------------------------------------------------------------- 06.quantize

# Right: np.rint (halves to even) in float64, np.minimum/np.maximum instead of clip.
def quantize_rint(x, scale, zero_point, qmin, qmax):
    q = np.rint(np.asarray(x, np.float64) / np.asarray(scale, np.float64)) + np.asarray(zero_point, np.int64)
    return np.minimum(np.maximum(q, qmin), qmax).astype(np.int32)


# Right: np.divide with an explicit float32 out, np.round, np.clip with out=.
def quantize_out(x, scale, zero_point, qmin, qmax):
    xs = np.divide(np.asarray(x, np.float32), np.asarray(scale, np.float32), dtype=np.float32)
    q = np.round(xs).astype(np.int64) + np.asarray(zero_point).astype(np.int64)
    return np.clip(q, qmin, qmax).astype(np.int32)


# Right: element-wise Python loop with round() (banker's rounding) over a broadcast pair.
def quantize_loop(x, scale, zero_point, qmin, qmax):
    x = np.asarray(x, np.float32)
    s = np.broadcast_to(np.asarray(scale, np.float32), x.shape)
    z = np.broadcast_to(np.asarray(zero_point), x.shape)
    out = np.empty(x.shape, np.int32)
    for idx in np.ndindex(x.shape):
        v = round(float(np.float32(x[idx] / s[idx]))) + int(z[idx])
        out[idx] = min(max(v, qmin), qmax)
    return out


# Wrong: astype(int) truncates toward zero instead of rounding.
def quantize_truncate(x, scale, zero_point, qmin, qmax):
    return np.clip((x / scale).astype(np.int32) + zero_point, qmin, qmax).astype(np.int32)


# Wrong: np.floor(v + 0.5): halves rounded up, not to even.
def quantize_half_up(x, scale, zero_point, qmin, qmax):
    return np.clip(np.floor(x / scale + 0.5) + zero_point, qmin, qmax).astype(np.int32)


# Wrong: zero point added before rounding and subtracted formula order: round((x - z) / s).
def quantize_wrong_formula(x, scale, zero_point, qmin, qmax):
    return np.clip(np.round((x - zero_point) / scale), qmin, qmax).astype(np.int32)


# Wrong: no clamp.
def quantize_no_clip(x, scale, zero_point, qmin, qmax):
    return (np.round(x / scale) + zero_point).astype(np.int32)


# Wrong: multiplies by the scale instead of dividing.
def quantize_mul(x, scale, zero_point, qmin, qmax):
    return np.clip(np.round(x * scale) + zero_point, qmin, qmax).astype(np.int32)


# Wrong: returns the dtype of the range (int8/uint8 guessed from qmin) instead of int32.
def quantize_small_dtype(x, scale, zero_point, qmin, qmax):
    dt = np.int8 if qmin < 0 else np.uint8
    return np.clip(np.round(x / scale) + zero_point, qmin, qmax).astype(dt)


# Wrong: casts to int8 before clipping (wraps around for out-of-range values).
def quantize_wrap(x, scale, zero_point, qmin, qmax):
    q = (np.round(x / scale) + zero_point).astype(np.int8).astype(np.int32)
    return np.clip(q, qmin, qmax)


# Wrong: per-tensor only: uses scale.ravel()[0] / zero_point.ravel()[0] for every channel.
def quantize_first_scale(x, scale, zero_point, qmin, qmax):
    s = float(np.ravel(scale)[0])
    z = int(np.ravel(zero_point)[0])
    return np.clip(np.round(x / s) + z, qmin, qmax).astype(np.int32)


# Wrong: clamps x to the real range first, then forgets the clamp of the integers (off for zero_point != 0).
def quantize_clip_before(x, scale, zero_point, qmin, qmax):
    xr = np.clip(x, qmin * scale, qmax * scale)
    return (np.round(xr / scale) + zero_point).astype(np.int32)


# ---------------------------------------------------------------- 06.dequantize

# Right: float64 arithmetic, cast at the end.
def dequantize_f64(q, scale, zero_point):
    return (np.asarray(scale, np.float64) * (np.asarray(q, np.float64) - np.asarray(zero_point, np.float64))
            ).astype(np.float32)


# Right: np.subtract with dtype=int64, then np.multiply with dtype=float32.
def dequantize_ufunc(q, scale, zero_point):
    d = np.subtract(np.asarray(q), np.asarray(zero_point), dtype=np.int64)
    return np.multiply(d, np.asarray(scale, np.float32), dtype=np.float32)


# Right: float32 first, q*s - z*s (exact enough) via broadcasting.
def dequantize_float32_first(q, scale, zero_point):
    qf = np.asarray(q).astype(np.float32)
    zf = np.asarray(zero_point).astype(np.float32)
    return ((qf - zf) * np.float32(1) * np.asarray(scale, np.float32)).astype(np.float32)


# Wrong: subtracts in the input's integer type (wraps around for int8/uint8).
def dequantize_wrap(q, scale, zero_point):
    return (scale * (q - np.asarray(zero_point).astype(q.dtype))).astype(np.float32)


# Wrong: divides by the scale.
def dequantize_div(q, scale, zero_point):
    return ((q.astype(np.int32) - zero_point) / scale).astype(np.float32)


# Wrong: adds the zero point.
def dequantize_add(q, scale, zero_point):
    return (scale * (q.astype(np.int32) + zero_point)).astype(np.float32)


# Wrong: returns float64.
def dequantize_float64(q, scale, zero_point):
    return np.asarray(scale, np.float64) * (q.astype(np.int32) - zero_point)


# Wrong: forgets the zero point.
def dequantize_no_zp(q, scale, zero_point):
    return (scale * q.astype(np.float32)).astype(np.float32)


# Wrong: scale * q - zero_point (zero point not scaled).
def dequantize_unscaled_zp(q, scale, zero_point):
    return (scale * q.astype(np.float32) - zero_point).astype(np.float32)


# Wrong: rounds the result to integers.
def dequantize_rounded(q, scale, zero_point):
    return np.round(scale * (q.astype(np.int32) - zero_point)).astype(np.float32)


# Wrong: first channel's parameters for everything.
def dequantize_first(q, scale, zero_point):
    return (float(np.ravel(scale)[0]) * (q.astype(np.int32) - int(np.ravel(zero_point)[0]))).astype(np.float32)


# ---------------------------------------------------------------- 06.choose_qparams

# Right: plain Python floats with min()/max() built-ins over x.flat, round() (halves to even).
def qparams_python(x, qmin, qmax, symmetric):
    vals = [float(v) for v in np.asarray(x).ravel()]
    rmin = min(min(vals, default=0.0), 0.0)
    rmax = max(max(vals, default=0.0), 0.0)
    if symmetric:
        m = max(abs(rmin), abs(rmax))
        rmin, rmax = -m, m
        if qmin < 0:
            qmin = -qmax
    s = (rmax - rmin) / (qmax - qmin)
    if s == 0:
        return 1.0, 0
    z = round((qmin + qmax) / 2) if symmetric else round(qmin - rmin / s)
    return float(s), int(z)


# Right: numpy float32 arithmetic like ORT (np.float32 scalars), np.round.
def qparams_float32(x, qmin, qmax, symmetric):
    x = np.asarray(x, np.float32)
    rmin = np.minimum(x.min(), np.float32(0))
    rmax = np.maximum(x.max(), np.float32(0))
    if symmetric:
        m = np.maximum(np.abs(rmin), np.abs(rmax))
        rmin, rmax = -m, m
        qmin = -qmax if qmin < 0 else qmin
    s = np.float32(rmax - rmin) / np.float32(qmax - qmin)
    if s == 0:
        return 1.0, 0
    z = np.round((qmin + qmax) / 2) if symmetric else np.round(qmin - rmin / s)
    return float(s), int(z)


# Right: early return for all zeros, then a dict of the two branches.
def qparams_branches(x, qmin, qmax, symmetric):
    lo, hi = min(float(np.min(x)), 0.0), max(float(np.max(x)), 0.0)
    if lo == hi == 0.0:
        return 1.0, 0
    if not symmetric:
        s = (hi - lo) / (qmax - qmin)
        return float(s), int(np.round(qmin - lo / s))
    m = max(-lo, hi)
    q0 = -qmax if qmin < 0 else qmin
    s = 2 * m / (qmax - q0)
    return float(s), int(np.round((q0 + qmax) / 2))


# Wrong: the range does not include 0 (all-positive tensors get a shifted range).
def qparams_no_zero(x, qmin, qmax, symmetric):
    rmin, rmax = float(np.min(x)), float(np.max(x))
    if symmetric:
        m = max(abs(rmin), abs(rmax))
        rmin, rmax = -m, m
        if qmin < 0:
            qmin = -qmax
    s = (rmax - rmin) / (qmax - qmin)
    if s == 0:
        return 1.0, 0
    z = np.round((qmin + qmax) / 2) if symmetric else np.round(qmin - rmin / s)
    return float(s), int(z)


# Wrong: int() truncates the zero point instead of rounding.
def qparams_int_trunc(x, qmin, qmax, symmetric):
    s, z = qparams_python(x, qmin, qmax, symmetric)
    if s == 1.0 and z == 0:
        return s, z
    rmin = min(float(np.min(x)), 0.0)
    if symmetric:
        return s, z
    return s, int(qmin - rmin / s)


# Wrong: symmetric keeps qmin = -128 for int8 (does not drop the lowest level).
def qparams_keep_qmin(x, qmin, qmax, symmetric):
    rmin, rmax = min(float(np.min(x)), 0.0), max(float(np.max(x)), 0.0)
    if symmetric:
        m = max(abs(rmin), abs(rmax))
        rmin, rmax = -m, m
    s = (rmax - rmin) / (qmax - qmin)
    if s == 0:
        return 1.0, 0
    z = np.round((qmin + qmax) / 2) if symmetric else np.round(qmin - rmin / s)
    return float(s), int(z)


# Wrong: all-zero tensor returns scale 0 (a divide by zero later).
def qparams_zero_scale(x, qmin, qmax, symmetric):
    rmin, rmax = min(float(np.min(x)), 0.0), max(float(np.max(x)), 0.0)
    if symmetric:
        m = max(abs(rmin), abs(rmax))
        rmin, rmax = -m, m
        if qmin < 0:
            qmin = -qmax
    s = (rmax - rmin) / (qmax - qmin)
    if s == 0:
        return 0.0, 0
    z = np.round((qmin + qmax) / 2) if symmetric else np.round(qmin - rmin / s)
    return float(s), int(z)


# Wrong: returns numpy scalars (np.float64 / np.int64) rather than Python float and int.
def qparams_numpy_types(x, qmin, qmax, symmetric):
    s, z = qparams_python(x, qmin, qmax, symmetric)
    return np.float32(s), np.int64(z)


# Wrong: symmetric zero point always 0 (right for int8, wrong for uint8: should be 128).
def qparams_sym_zero(x, qmin, qmax, symmetric):
    s, z = qparams_python(x, qmin, qmax, symmetric)
    return (s, 0) if symmetric else (s, z)


# Wrong: symmetric ignored (always asymmetric).
def qparams_ignore_sym(x, qmin, qmax, symmetric):
    return qparams_python(x, qmin, qmax, False)


# Wrong: zero point with the wrong sign: round(qmin + rmin / s).
def qparams_zp_sign(x, qmin, qmax, symmetric):
    s, z = qparams_python(x, qmin, qmax, symmetric)
    if symmetric or (s == 1.0 and z == 0):
        return s, z
    rmin = min(float(np.min(x)), 0.0)
    return s, int(np.round(qmin + rmin / s))


# Wrong: divides by (qmax - qmin + 1) levels (off by one).
def qparams_off_by_one(x, qmin, qmax, symmetric):
    rmin, rmax = min(float(np.min(x)), 0.0), max(float(np.max(x)), 0.0)
    if symmetric:
        m = max(abs(rmin), abs(rmax))
        rmin, rmax = -m, m
        if qmin < 0:
            qmin = -qmax
    s = (rmax - rmin) / (qmax - qmin + 1)
    if s == 0:
        return 1.0, 0
    z = np.round((qmin + qmax) / 2) if symmetric else np.round(qmin - rmin / s)
    return float(s), int(z)


# ---------------------------------------------------------------- 06.calibration

from onnxruntime.quantization import CalibrationDataReader  # noqa: E402


class _Reader(CalibrationDataReader):
    """A generator-based reader."""

    def __init__(self, images, input_name="image", batch_size=64):
        self.images = np.asarray(images, np.float32)
        self.input_name, self.batch_size = input_name, batch_size
        self.rewind()

    def _gen(self):
        for i in range(0, len(self.images), self.batch_size):
            yield {self.input_name: self.images[i:i + self.batch_size]}

    def get_next(self):
        return next(self._it, None)

    def rewind(self):
        self._it = self._gen()


def _static(model_path, reader, **kw):
    from onnxruntime.quantization import QuantFormat, quantize_static
    import labkit
    out = Path(tempfile.mkdtemp()) / "q.onnx"
    args = dict(quant_format=QuantFormat.QDQ, per_channel=True)
    args.update(kw)
    with labkit.quiet():
        quantize_static(str(model_path), str(out), reader, **args)
    return onnx.load(str(out))


def _input_name(model_path):
    return onnx.load(str(model_path)).graph.input[0].name


# Right: generator reader, input name from onnx.load, explicit QuantType defaults spelled out.
def calib_generator(model_path, images):
    from onnxruntime.quantization import CalibrationMethod, QuantType
    reader = _Reader(images, _input_name(model_path), batch_size=32)
    return _static(model_path, reader, activation_type=QuantType.QInt8, weight_type=QuantType.QInt8,
                   calibrate_method=CalibrationMethod.MinMax)


# Right: a precomputed list of feeds with an iterator; input name from an InferenceSession.
class _ListReader(CalibrationDataReader):
    def __init__(self, feeds):
        self.feeds = feeds
        self.pos = 0

    def get_next(self):
        if self.pos >= len(self.feeds):
            return None
        self.pos += 1
        return self.feeds[self.pos - 1]

    def rewind(self):
        self.pos = 0


def calib_list(model_path, images):
    import onnxruntime as ort
    name = ort.InferenceSession(str(model_path), providers=["CPUExecutionProvider"]).get_inputs()[0].name
    x = np.asarray(images, np.float32)
    feeds = [{name: x[i:i + 50]} for i in range(0, len(x), 50)]
    return _static(model_path, _ListReader(feeds))


# Right: one image per batch (batch_size=1).
def calib_batch1(model_path, images):
    return _static(model_path, _Reader(images, _input_name(model_path), batch_size=1))


# Wrong: QOperator format instead of QDQ.
def calib_qoperator(model_path, images):
    from onnxruntime.quantization import QuantFormat
    return _static(model_path, _Reader(images, _input_name(model_path)), quant_format=QuantFormat.QOperator)


# Wrong: per-tensor weights (per_channel left at False).
def calib_per_tensor(model_path, images):
    return _static(model_path, _Reader(images, _input_name(model_path)), per_channel=False)


# Wrong: the reader's default input name "image" kept, not the model's.
def calib_default_name(model_path, images):
    return _static(model_path, _Reader(images))


# Wrong: calibrates on raw 0..16 pixels (multiplies the images by 16 "to undo the scaling").
def calib_raw_pixels(model_path, images):
    return _static(model_path, _Reader(np.asarray(images) * 16, _input_name(model_path)))


# Wrong: calibrates on the first batch only (reader returns one batch then None).
class _OneBatch(_Reader):
    def get_next(self):
        if getattr(self, "_done", False):
            return None
        self._done = True
        return {self.input_name: self.images[:self.batch_size]}

    def rewind(self):
        self._done = False
        self._it = None


def calib_first_batch(model_path, images):
    return _static(model_path, _OneBatch(images, _input_name(model_path), batch_size=16))


# Wrong: random calibration data instead of the images given.
def calib_random(model_path, images):
    x = np.random.default_rng(0).random(np.asarray(images).shape).astype(np.float32)
    return _static(model_path, _Reader(x, _input_name(model_path)))


# Wrong: dynamic quantization (no calibration at all).
def calib_dynamic(model_path, images):
    from onnxruntime.quantization import quantize_dynamic
    import labkit
    out = Path(tempfile.mkdtemp()) / "d.onnx"
    with labkit.quiet():
        quantize_dynamic(str(model_path), str(out))
    return onnx.load(str(out))


# Wrong: uint8 activations (QUInt8) instead of the default int8.
def calib_uint8(model_path, images):
    from onnxruntime.quantization import QuantType
    return _static(model_path, _Reader(images, _input_name(model_path)), activation_type=QuantType.QUInt8)


# Wrong: Entropy calibration instead of the default MinMax.
def calib_entropy(model_path, images):
    from onnxruntime.quantization import CalibrationMethod
    return _static(model_path, _Reader(images, _input_name(model_path)),
                   calibrate_method=CalibrationMethod.Percentile)


# Wrong: returns the path of the quantized file instead of the loaded model.
def calib_path(model_path, images):
    from onnxruntime.quantization import QuantFormat, quantize_static
    import labkit
    out = Path(tempfile.mkdtemp()) / "q.onnx"
    with labkit.quiet():
        quantize_static(str(model_path), str(out), _Reader(images, _input_name(model_path)),
                        quant_format=QuantFormat.QDQ, per_channel=True)
    return str(out)


# ---------------------------------------------------------------- 06.int4_blocks

# Right: explicit loops over columns and blocks.
def int4_loops(w, block_size):
    K, N = w.shape
    nb = -(-K // block_size)
    q = np.zeros((N, nb, block_size), np.uint8)
    sc = np.zeros((N, nb), np.float32)
    zp = np.zeros((N, nb), np.uint8)
    for n in range(N):
        for b in range(nb):
            blk = np.zeros(block_size, np.float32)
            part = w[b * block_size:(b + 1) * block_size, n]
            blk[:len(part)] = part
            rmin = min(float(blk.min()), 0.0)
            rmax = max(float(blk.max()), 0.0)
            s = np.float32((rmax - rmin) / 15)
            if s == 0:
                continue
            z = np.round(-rmin / s)
            sc[n, b] = s
            zp[n, b] = z
            q[n, b] = np.clip(np.round(blk / s + z), 0, 15)
    return q, sc, zp


# Right: vectorised with w.T padded on the last axis and np.divide(where=...).
def int4_vector_where(w, block_size):
    K, N = w.shape
    nb = math.ceil(K / block_size)
    wt = np.pad(np.asarray(w, np.float32).T, ((0, 0), (0, nb * block_size - K)))
    blocks = wt.reshape(N, nb, block_size)
    rmin = np.minimum(blocks.min(-1), 0).astype(np.float32)
    rmax = np.maximum(blocks.max(-1), 0).astype(np.float32)
    s = ((rmax - rmin) / np.float32(15)).astype(np.float32)
    safe = np.where(s == 0, 1, s)
    z = np.where(s == 0, 0, np.round(-rmin / safe))
    q = np.where(s[..., None] == 0, 0, np.clip(np.round(blocks / safe[..., None] + z[..., None]), 0, 15))
    return q.astype(np.uint8), s, z.astype(np.uint8)


# Right: moveaxis after a reshape of the padded (nb, bs, N) array.
def int4_moveaxis(w, block_size):
    K, N = w.shape
    nb = (K + block_size - 1) // block_size
    padded = np.zeros((nb * block_size, N), np.float32)
    padded[:K] = w
    blocks = np.moveaxis(padded.reshape(nb, block_size, N), 2, 0)  # (N, nb, bs)
    lo = np.minimum(blocks.min(axis=2), 0)
    hi = np.maximum(blocks.max(axis=2), 0)
    scales = ((hi - lo) / 15).astype(np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.nan_to_num(np.round(-lo / scales))
        q = np.nan_to_num(np.round(blocks / scales[..., None] + z[..., None]))
    q = np.clip(q, 0, 15)
    q[scales == 0] = 0
    return q.astype(np.uint8), scales, z.astype(np.uint8)


def _blocks_ref(w, block_size, *, transpose=True):
    K, N = w.shape
    nb = -(-K // block_size)
    p = np.pad(w, ((0, nb * block_size - K), (0, 0)))
    if transpose:
        return p.T.reshape(N, nb, block_size)
    return p.reshape(N, nb, block_size)


def _finish(blocks, include_zero=True, levels=15, zp_round=np.round, q_round=np.round):
    if include_zero:
        lo, hi = np.minimum(blocks.min(-1), 0), np.maximum(blocks.max(-1), 0)
    else:
        lo, hi = blocks.min(-1), blocks.max(-1)
    s = ((hi - lo) / levels).astype(np.float32)
    safe = np.where(s == 0, 1, s)
    z = np.where(s == 0, 0, zp_round(-lo / safe))
    q = np.where(s[..., None] == 0, 0, np.clip(q_round(blocks / safe[..., None] + z[..., None]), 0, 15))
    return q.astype(np.uint8), s, np.clip(z, 0, 255).astype(np.uint8)


# Wrong: reshape without transposing (blocks run along rows of the flat array, mixing columns).
def int4_no_transpose(w, block_size):
    return _finish(_blocks_ref(np.asarray(w, np.float32), block_size, transpose=False))


# Wrong: range without 0 (min and max of the block only).
def int4_no_zero(w, block_size):
    return _finish(_blocks_ref(np.asarray(w, np.float32), block_size), include_zero=False)


# Wrong: 16 levels (divides by 16).
def int4_16_levels(w, block_size):
    return _finish(_blocks_ref(np.asarray(w, np.float32), block_size), levels=16)


# Wrong: drops the incomplete last block instead of padding.
def int4_no_pad(w, block_size):
    K, N = w.shape
    nb = K // block_size
    blocks = np.asarray(w, np.float32)[:nb * block_size].T.reshape(N, nb, block_size)
    return _finish(blocks)


# Wrong: zero point truncated (astype) instead of rounded.
def int4_trunc_zp(w, block_size):
    return _finish(_blocks_ref(np.asarray(w, np.float32), block_size), zp_round=np.trunc)


# Wrong: codes truncated instead of rounded.
def int4_trunc_q(w, block_size):
    return _finish(_blocks_ref(np.asarray(w, np.float32), block_size), q_round=np.floor)


# Wrong: zero blocks divided by zero (NaN codes cast to uint8).
def int4_div_zero(w, block_size):
    blocks = _blocks_ref(np.asarray(w, np.float32), block_size)
    lo, hi = np.minimum(blocks.min(-1), 0), np.maximum(blocks.max(-1), 0)
    s = ((hi - lo) / 15).astype(np.float32)
    with np.errstate(all="ignore"):
        z = np.round(-lo / s)
        q = np.clip(np.round(blocks / s[..., None] + z[..., None]), 0, 15)
        return q.astype(np.uint8), s, z.astype(np.uint8)


# Wrong: returns scales as float64 and codes as int64.
def int4_dtypes(w, block_size):
    q, s, z = int4_loops(w, block_size)
    return q.astype(np.int64), s.astype(np.float64), z.astype(np.int64)


# Wrong: calls ONNX Runtime's MatMulNBitsQuantizer and unpacks its output (fails for other block sizes).
def int4_ort(w, block_size):
    from onnx import TensorProto, helper, numpy_helper
    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer
    K, N = w.shape
    g = helper.make_graph([helper.make_node("MatMul", ["a", "W"], ["y"])], "g",
                          [helper.make_tensor_value_info("a", TensorProto.FLOAT, [1, K])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, N])],
                          [numpy_helper.from_array(np.asarray(w, np.float32), "W")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    m.ir_version = 9
    qz = MatMulNBitsQuantizer(m, bits=4, block_size=block_size, is_symmetric=False)
    qz.process()
    inits = {t.name: numpy_helper.to_array(t) for t in qz.model.model.graph.initializer}
    packed = next(v for k, v in inits.items() if k.endswith("_Q4"))
    scales = next(v for k, v in inits.items() if k.endswith("_scales"))
    zps = next(v for k, v in inits.items() if k.endswith("_zero_points"))
    nb = packed.shape[1]
    q = np.stack([packed & 0x0F, packed >> 4], axis=-1).reshape(N, nb, block_size).astype(np.uint8)
    zflat = np.stack([zps & 0x0F, zps >> 4], axis=-1).reshape(N, -1)[:, :nb].astype(np.uint8)
    return q, scales.reshape(N, nb).astype(np.float32), zflat


# Wrong: symmetric quantization (zero point fixed at 8, scale from max |w|).
def int4_symmetric(w, block_size):
    blocks = _blocks_ref(np.asarray(w, np.float32), block_size)
    m = np.abs(blocks).max(-1)
    s = (2 * m / 15).astype(np.float32)
    safe = np.where(s == 0, 1, s)
    z = np.where(s == 0, 0, 8)
    q = np.where(s[..., None] == 0, 0, np.clip(np.round(blocks / safe[..., None] + 8), 0, 15))
    return q.astype(np.uint8), s, z.astype(np.uint8)


CORPUS = {
    "06.quantize": [
        Right("blind-rint-float64", answer=quantize_rint),
        Right("blind-divide-out", answer=quantize_out),
        Right("blind-python-loop", answer=quantize_loop),
        Wrong("blind-truncate", answer=quantize_truncate, outputs_wrong=True),
        Wrong("blind-half-up", answer=quantize_half_up, outputs_wrong=True),
        Wrong("blind-zp-before-divide", answer=quantize_wrong_formula, outputs_wrong=True),
        Wrong("blind-no-clip", answer=quantize_no_clip, outputs_wrong=True),
        Wrong("blind-multiply-scale", answer=quantize_mul, outputs_wrong=True),
        Wrong("blind-int8-uint8-dtype", answer=quantize_small_dtype, outputs_wrong=False),
        Wrong("blind-int8-wrap", answer=quantize_wrap, outputs_wrong=True),
        Wrong("blind-first-channel-only", answer=quantize_first_scale, outputs_wrong=True),
        Wrong("blind-clip-reals-only", answer=quantize_clip_before, outputs_wrong=True),
    ],
    "06.dequantize": [
        Right("blind-float64", answer=dequantize_f64),
        Right("blind-ufunc-dtypes", answer=dequantize_ufunc),
        Right("blind-float32-first", answer=dequantize_float32_first),
        Wrong("blind-int-wrap", answer=dequantize_wrap, outputs_wrong=True),
        Wrong("blind-divide", answer=dequantize_div, outputs_wrong=True),
        Wrong("blind-add-zp", answer=dequantize_add, outputs_wrong=True),
        Wrong("blind-float64-out", answer=dequantize_float64, outputs_wrong=False),
        Wrong("blind-no-zp", answer=dequantize_no_zp, outputs_wrong=True),
        Wrong("blind-unscaled-zp", answer=dequantize_unscaled_zp, outputs_wrong=True),
        Wrong("blind-rounded", answer=dequantize_rounded, outputs_wrong=True),
        Wrong("blind-first-channel", answer=dequantize_first, outputs_wrong=True),
    ],
    "06.choose_qparams": [
        Right("blind-python-builtins", answer=qparams_python),
        Right("blind-float32-numpy", answer=qparams_float32),
        Right("blind-branches", answer=qparams_branches),
        Wrong("blind-range-without-zero", answer=qparams_no_zero, outputs_wrong=True),
        Wrong("blind-int-truncates", answer=qparams_int_trunc, outputs_wrong=True),
        Wrong("blind-keep-qmin-128", answer=qparams_keep_qmin, outputs_wrong=True),
        Wrong("blind-zero-scale", answer=qparams_zero_scale, outputs_wrong=True),
        Right("blind-numpy-types", answer=qparams_numpy_types),  # reclassified: the prompt now allows NumPy scalars, as compute_scale_zp gives them
        Wrong("blind-sym-zp-zero", answer=qparams_sym_zero, outputs_wrong=True),
        Wrong("blind-ignore-symmetric", answer=qparams_ignore_sym, outputs_wrong=True),
        Wrong("blind-zp-sign", answer=qparams_zp_sign, outputs_wrong=True),
        Wrong("blind-levels-off-by-one", answer=qparams_off_by_one, outputs_wrong=True),
    ],
    "06.calibration": [
        Right("blind-generator-reader", answer=calib_generator),
        Right("blind-list-of-feeds", answer=calib_list),
        Right("blind-batch-size-1", answer=calib_batch1),
        Wrong("blind-qoperator", answer=calib_qoperator, outputs_wrong=True),
        Wrong("blind-per-tensor", answer=calib_per_tensor, outputs_wrong=True),
        Wrong("blind-default-input-name", answer=calib_default_name, outputs_wrong=True),
        Wrong("blind-raw-pixels", answer=calib_raw_pixels, outputs_wrong=True),
        Wrong("blind-first-batch-only", answer=calib_first_batch, outputs_wrong=True),
        Wrong("blind-random-data", answer=calib_random, outputs_wrong=True),
        Wrong("blind-dynamic", answer=calib_dynamic, outputs_wrong=True, skipped_skill=True),
        Wrong("blind-uint8-activations", answer=calib_uint8, outputs_wrong=False),
        Wrong("blind-percentile", answer=calib_entropy, outputs_wrong=True),
        Wrong("blind-path-not-model", answer=calib_path, outputs_wrong=False),
    ],
    "06.int4_blocks": [
        Right("blind-loops", answer=int4_loops),
        Right("blind-vector-where", answer=int4_vector_where),
        Right("blind-moveaxis", answer=int4_moveaxis),
        Wrong("blind-no-transpose", answer=int4_no_transpose, outputs_wrong=True),
        Wrong("blind-range-without-zero", answer=int4_no_zero, outputs_wrong=True),
        Wrong("blind-16-levels", answer=int4_16_levels, outputs_wrong=True),
        Wrong("blind-no-pad", answer=int4_no_pad, outputs_wrong=True),
        Wrong("blind-trunc-zp", answer=int4_trunc_zp, outputs_wrong=True),
        Wrong("blind-trunc-codes", answer=int4_trunc_q, outputs_wrong=True),
        Wrong("blind-wrong-dtypes", answer=int4_dtypes, outputs_wrong=False),
        Wrong("blind-ort-quantizer", answer=int4_ort, outputs_wrong=True, skipped_skill=True),
        Wrong("blind-symmetric", answer=int4_symmetric, outputs_wrong=True),
    ],
}
