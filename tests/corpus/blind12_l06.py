"""Blind corpus round 12, lesson 06 (written without seeing the judges).
Truths relied on: ONNX QuantizeLinear = clamp(round_half_even(x / s) + z) (checked against onnx.reference);
np.round / np.rint / Python round() all round halves to even; ORT's compute_scale_zp (quant_utils.py) widens the
range to include 0, computes scale in float64 then casts it to rmax's dtype, returns (1.0, 0) when
scale < finfo(float32).tiny, symmetric zero point round((qmin+qmax)/2) (0 int8 with qmin=-127, 128 uint8);
round(qmin - rmin/s) == qmin - round(rmin/s) for even qmin; int32 array * python float gives float64 in numpy 2.
Ambiguities: 06.choose_qparams -- the prompt says "if s = 0 return (1.0, 0)" while ORT tests s < tiny: a range of
a few denormals (x = [1e-45]) gives s > 0 in float64 but 0 once cast to float32 (prompt-literal answers then return
scale 0.0 or a denormal); also whether z is computed from the float64 or the float32 scale (ties can differ).
06.quantize -- "float64 is accepted too": x/s in float64 vs float32 can land on different sides of a .5 tie, so
the check must accept both results on such inputs. 06.dequantize -- computing s*q - s*z (distributed) differs
from s*(q-z) by float rounding (classified Right: 1-ulp level, prompt gives no tolerance).
"""
from corpus import Right, Wrong


# ============================================================================ 06.quantize
def right_quantize_rint_minmax(x, scale, zero_point, qmin, qmax):
    import numpy as np
    x = np.asarray(x, dtype=np.float32)
    v = np.rint(np.divide(x, np.asarray(scale, dtype=np.float32), dtype=np.float32))
    v = v + np.asarray(zero_point, dtype=np.int64)
    return np.minimum(np.maximum(v, qmin), qmax).astype(np.int32).reshape(x.shape)


def right_quantize_python_loop(x, scale, zero_point, qmin, qmax):
    # element by element with Python's round() (also half to even), in float64
    import numpy as np
    x = np.asarray(x)
    s = np.broadcast_to(np.asarray(scale, dtype=np.float64), x.shape)
    z = np.broadcast_to(np.asarray(zero_point, dtype=np.int64), x.shape)
    out = np.empty(x.shape, dtype=np.int32)
    for idx in np.ndindex(x.shape):
        q = round(float(x[idx]) / float(s[idx])) + int(z[idx])
        out[idx] = min(max(q, qmin), qmax)
    return out


def right_quantize_floor_parity(x, scale, zero_point, qmin, qmax):
    # round half to even by hand: floor, then look at the remainder and the parity
    import numpy as np
    r = np.asarray(x, np.float32) / np.asarray(scale, np.float32)
    f = np.floor(r)
    d = r - f
    up = (d > 0.5) | ((d == 0.5) & (np.mod(f, 2) == 1))
    q = (f + up).astype(np.int64) + np.asarray(zero_point).astype(np.int64)
    return np.clip(q, qmin, qmax).astype(np.int32)


def wrong_quantize_half_up(x, scale, zero_point, qmin, qmax):
    import numpy as np
    q = np.floor(np.asarray(x, np.float32) / scale + 0.5) + zero_point
    return np.clip(q, qmin, qmax).astype(np.int32)


def wrong_quantize_half_away(x, scale, zero_point, qmin, qmax):
    import numpy as np
    r = np.asarray(x, np.float32) / scale
    q = np.sign(r) * np.floor(np.abs(r) + 0.5) + zero_point
    return np.clip(q, qmin, qmax).astype(np.int32)


def wrong_quantize_truncate(x, scale, zero_point, qmin, qmax):
    import numpy as np
    q = (np.asarray(x, np.float32) / scale).astype(np.int32) + zero_point
    return np.clip(q, qmin, qmax).astype(np.int32)


def wrong_quantize_no_clamp(x, scale, zero_point, qmin, qmax):
    import numpy as np
    return (np.round(np.asarray(x, np.float32) / scale) + zero_point).astype(np.int32)


def wrong_quantize_clamp_before_zp(x, scale, zero_point, qmin, qmax):
    import numpy as np
    q = np.clip(np.round(np.asarray(x, np.float32) / scale), qmin, qmax) + zero_point
    return q.astype(np.int32)


def wrong_quantize_int8_dtype(x, scale, zero_point, qmin, qmax):
    # returns the storage type the range suggests: uint8 when qmin >= 0 else int8 (4-bit fits too)
    import numpy as np
    q = np.clip(np.round(np.asarray(x, np.float32) / scale) + zero_point, qmin, qmax)
    return q.astype(np.uint8 if qmin >= 0 else np.int8)


def wrong_quantize_int64(x, scale, zero_point, qmin, qmax):
    import numpy as np
    return np.clip(np.round(np.asarray(x, np.float32) / scale) + zero_point, qmin, qmax).astype(np.int64)


def wrong_quantize_flat_params(x, scale, zero_point, qmin, qmax):
    # ravels per-channel parameters: (C, 1) becomes (C,) and broadcasts along the LAST axis
    import numpy as np
    s = np.ravel(scale)
    z = np.ravel(zero_point)
    x = np.asarray(x, np.float32)
    if s.size > 1 and x.ndim == 2 and x.shape[1] != s.size:
        s = np.resize(s, x.shape[1])
        z = np.resize(z, x.shape[1])
    q = np.clip(np.round(x / s) + z, qmin, qmax)
    return q.astype(np.int32)


def wrong_quantize_uint8_wrap(x, scale, zero_point, qmin, qmax):
    # adds the zero point in the stored type: round(x/s) as int8, then + z wraps before the clamp
    import numpy as np
    r = np.clip(np.round(np.asarray(x, np.float32) / scale), -128, 127).astype(np.int8)
    q = (r + np.asarray(zero_point).astype(np.int8)).astype(np.int32)
    return np.clip(q, qmin, qmax).astype(np.int32)


def shortcut_quantize_cast(x, scale, zero_point, qmin, qmax):
    # no arithmetic at all: the values cast to int
    import numpy as np
    return np.clip(np.asarray(x), qmin, qmax).astype(np.int32)


def shortcut_quantize_onnx(x, scale, zero_point, qmin, qmax):
    # lets ONNX's reference QuantizeLinear do it (not importable where the check runs)
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper
    from onnx.reference import ReferenceEvaluator
    dt = np.uint8 if qmin >= 0 else np.int8
    x = np.asarray(x, np.float32)
    g = helper.make_graph([helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"])], "q",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)],
                          [helper.make_tensor_value_info("q", helper.np_dtype_to_tensor_dtype(np.dtype(dt)), None)],
                          [numpy_helper.from_array(np.asarray(scale, np.float32), "s"),
                           numpy_helper.from_array(np.asarray(zero_point).astype(dt), "z")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    q = ReferenceEvaluator(m).run(None, {"x": x})[0].astype(np.int32)
    return np.clip(q, qmin, qmax).astype(np.int32)


def shortcut_quantize_hostile(x, scale, zero_point, qmin, qmax):
    import numpy as np

    class Eq(np.ndarray):
        def __eq__(self, other):
            return np.ones(np.shape(other), bool)

        def __ne__(self, other):
            return np.zeros(np.shape(other), bool)

    return np.zeros(np.shape(x), np.int32).view(Eq)


def shortcut_quantize_inplace(x, scale, zero_point, qmin, qmax):
    # right numbers, but divides the caller's x in place first (x is float32, so /= works)
    import numpy as np
    x /= np.asarray(scale, dtype=x.dtype)
    np.round(x, out=x)
    return np.clip(x + zero_point, qmin, qmax).astype(np.int32)


# ============================================================================ 06.dequantize
def right_dequantize_float64(q, scale, zero_point):
    import numpy as np
    d = np.asarray(q).astype(np.float64) - np.asarray(zero_point, dtype=np.float64)
    return (d * np.asarray(scale, dtype=np.float64)).astype(np.float32)


def right_dequantize_subtract_dtype(q, scale, zero_point):
    import numpy as np
    diff = np.subtract(q, zero_point, dtype=np.int32)
    return np.multiply(diff, scale, dtype=np.float32)


def right_dequantize_loop(q, scale, zero_point):
    import numpy as np
    q = np.asarray(q)
    s = np.broadcast_to(np.asarray(scale, np.float32), q.shape)
    z = np.broadcast_to(np.asarray(zero_point), q.shape)
    out = np.zeros(q.shape, np.float32)
    for i in np.ndindex(q.shape):
        out[i] = np.float32(s[i]) * np.float32(int(q[i]) - int(z[i]))
    return out


def wrong_dequantize_wraps(q, scale, zero_point):
    # subtracts in the stored type: int8 - 10 wraps around
    import numpy as np
    q = np.asarray(q)
    return (scale * (q - np.asarray(zero_point).astype(q.dtype))).astype(np.float32)


def wrong_dequantize_float64(q, scale, zero_point):
    # right numbers, float64 array (int32 * python float promotes to float64)
    import numpy as np
    return (np.asarray(q).astype(np.int32) - zero_point) * scale


def wrong_dequantize_no_zp(q, scale, zero_point):
    import numpy as np
    return (np.asarray(q).astype(np.float32) * np.asarray(scale, np.float32)).astype(np.float32)


def wrong_dequantize_divide(q, scale, zero_point):
    import numpy as np
    return ((np.asarray(q).astype(np.int32) - zero_point) / np.asarray(scale, np.float32)).astype(np.float32)


def wrong_dequantize_plus_zp(q, scale, zero_point):
    import numpy as np
    return (np.asarray(scale, np.float32) * (np.asarray(q).astype(np.int32) + zero_point)).astype(np.float32)


def wrong_dequantize_flat_params(q, scale, zero_point):
    import numpy as np
    return (np.ravel(scale) * (np.asarray(q).astype(np.int32) - np.ravel(zero_point))).astype(np.float32)


def wrong_dequantize_float16(q, scale, zero_point):
    # "halves the memory": float16 result
    import numpy as np
    return (np.asarray(scale, np.float32) * (np.asarray(q).astype(np.int32) - zero_point)).astype(np.float16)


def wrong_dequantize_uint8_view(q, scale, zero_point):
    # converts with .view instead of .astype: int8 bytes read as uint8
    import numpy as np
    q = np.asarray(q)
    if q.dtype == np.int8:
        q = q.view(np.uint8)
    return (np.asarray(scale, np.float32) * (q.astype(np.int32) - zero_point)).astype(np.float32)


def shortcut_dequantize_cast(q, scale, zero_point):
    import numpy as np
    return np.asarray(q).astype(np.float32)


def shortcut_dequantize_onnx(q, scale, zero_point):
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper
    from onnx.reference import ReferenceEvaluator
    q = np.asarray(q)
    g = helper.make_graph([helper.make_node("DequantizeLinear", ["q", "s", "z"], ["x"])], "dq",
                          [helper.make_tensor_value_info("q", helper.np_dtype_to_tensor_dtype(q.dtype), None)],
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)],
                          [numpy_helper.from_array(np.asarray(scale, np.float32), "s"),
                           numpy_helper.from_array(np.asarray(zero_point).astype(q.dtype), "z")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    return ReferenceEvaluator(m).run(None, {"q": q})[0]


def shortcut_dequantize_hostile(q, scale, zero_point):
    import numpy as np

    class Eq(np.ndarray):
        def __eq__(self, other):
            return np.ones(np.shape(other), bool)

        def __ne__(self, other):
            return np.zeros(np.shape(other), bool)

    return np.zeros(np.shape(q), np.float32).view(Eq)


def shortcut_dequantize_torch(q, scale, zero_point):
    # torch's own quantized tensors do the mapping (per-tensor only)
    import numpy as np
    import torch
    q = np.asarray(q)
    t = torch._make_per_tensor_quantized_tensor(torch.from_numpy(q.astype(np.int32)),
                                                float(np.ravel(scale)[0]), int(np.ravel(zero_point)[0]))
    return t.dequantize().numpy().astype(np.float32)


# ============================================================================ 06.choose_qparams
def right_qparams_ort_like(x, qmin, qmax, symmetric):
    # follows compute_scale_zp: float32 range, float64 scale, cast back to float32, numpy scalars out
    import numpy as np
    x = np.asarray(x, np.float32)
    rmin = np.minimum(x.min(), np.float32(0))
    rmax = np.maximum(x.max(), np.float32(0))
    if symmetric:
        m = np.maximum(np.abs(rmin), np.abs(rmax))
        rmin, rmax = -m, m
        if qmin < 0:
            qmin = -qmax
    s = (np.float64(rmax) - np.float64(rmin)) / (np.float64(qmax) - np.float64(qmin))
    if s < np.finfo(np.float32).tiny:
        return np.float32(1.0), np.int32(0)
    if symmetric:
        z = np.round((qmin + qmax) / np.float64(2.0))
    else:
        z = np.round(qmin - np.float64(rmin) / s)
    return np.float32(s), np.int32(z)


def right_qparams_python(x, qmin, qmax, symmetric):
    # Python floats and round() (half to even), one pass over the values for min and max
    lo = hi = 0.0
    for v in __import__("numpy").asarray(x, dtype=float).ravel().tolist():
        lo = v if v < lo else lo
        hi = v if v > hi else hi
    if symmetric:
        m = max(-lo, hi)
        lo, hi = -m, m
        if qmin < 0:
            qmin = -qmax
    s = (hi - lo) / (qmax - qmin)
    if s == 0.0:
        return 1.0, 0
    z = round((qmin + qmax) / 2) if symmetric else round(qmin - lo / s)
    return float(s), int(z)


def right_qparams_distributed_round(x, qmin, qmax, symmetric):
    # z = qmin - round(rmin / s) (same as round(qmin - rmin/s) for the even qmins used), numpy float64
    import numpy as np
    a = np.asarray(x, dtype=np.float64)
    lo, hi = min(float(a.min()), 0.0), max(float(a.max()), 0.0)
    if symmetric:
        hi = max(abs(lo), abs(hi))
        lo = -hi
        qmin = -qmax if qmin < 0 else qmin
        if hi == 0:
            return 1.0, 0
        return hi * 2 / (qmax - qmin), int(np.round((qmin + qmax) / 2))
    if hi == lo:
        return 1.0, 0
    s = (hi - lo) / (qmax - qmin)
    return s, int(qmin - np.round(lo / s))


def wrong_qparams_no_zero(x, qmin, qmax, symmetric):
    # forgets to widen the range to include 0
    import numpy as np
    x = np.asarray(x, np.float64)
    rmin, rmax = float(x.min()), float(x.max())
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


def wrong_qparams_keep_minus128(x, qmin, qmax, symmetric):
    # symmetric int8 over 255 levels (never drops -128)
    import numpy as np
    x = np.asarray(x, np.float64)
    rmin, rmax = min(float(x.min()), 0.0), max(float(x.max()), 0.0)
    if symmetric:
        m = max(abs(rmin), abs(rmax))
        rmin, rmax = -m, m
    s = (rmax - rmin) / (qmax - qmin)
    if s == 0:
        return 1.0, 0
    z = np.round((qmin + qmax) / 2) if symmetric else np.round(qmin - rmin / s)
    return float(s), int(z)


def wrong_qparams_sym_zero_always0(x, qmin, qmax, symmetric):
    # symmetric => zero point 0, also for uint8 (should be 128)
    r = right_qparams_python(x, qmin, qmax, symmetric)
    return (r[0], 0) if symmetric else r


def wrong_qparams_truncate_zp(x, qmin, qmax, symmetric):
    s, z = right_qparams_python(x, qmin, qmax, symmetric)
    if symmetric or s == 1.0 and z == 0:
        return s, z
    import numpy as np
    a = np.asarray(x, np.float64)
    lo = min(float(a.min()), 0.0)
    return s, int(qmin - lo / s)


def wrong_qparams_zero_case(x, qmin, qmax, symmetric):
    # all-zero tensor: returns (0.0, qmin) instead of (1.0, 0)
    import numpy as np
    a = np.asarray(x, np.float64)
    if not np.any(a):
        return 0.0, qmin
    return right_qparams_python(x, qmin, qmax, symmetric)


def wrong_qparams_half_up(x, qmin, qmax, symmetric):
    import math
    import numpy as np
    a = np.asarray(x, np.float64)
    lo, hi = min(float(a.min()), 0.0), max(float(a.max()), 0.0)
    if symmetric:
        hi = max(-lo, hi)
        lo = -hi
        if qmin < 0:
            qmin = -qmax
    s = (hi - lo) / (qmax - qmin)
    if s == 0:
        return 1.0, 0
    z = math.floor((qmin + qmax) / 2 + 0.5) if symmetric else math.floor(qmin - lo / s + 0.5)
    return s, int(z)


def wrong_qparams_swapped(x, qmin, qmax, symmetric):
    # returns (zero_point, scale), the order compute_scale_zp itself uses
    s, z = right_qparams_python(x, qmin, qmax, symmetric)
    return z, s


def wrong_qparams_std_range(x, qmin, qmax, symmetric):
    # uses mean +- 3 std as the range ("robust")
    import numpy as np
    a = np.asarray(x, np.float64)
    c, d = a.mean(), a.std()
    return right_qparams_python(np.array([c - 3 * d, c + 3 * d]), qmin, qmax, symmetric)


def shortcut_qparams_ort(x, qmin, qmax, symmetric):
    # ONNX Runtime's own function (not importable where the check runs)
    import numpy as np
    from onnxruntime.quantization.quant_utils import compute_scale_zp
    x = np.asarray(x, np.float32)
    qmin_, qmax_ = np.array(qmin, np.int32), np.array(qmax, np.int32)
    if symmetric and qmin < 0:
        qmin_ = -qmax_
    z, s = compute_scale_zp(x.min(), x.max(), qmin_, qmax_, symmetric=symmetric)
    return float(s), int(z)


def shortcut_qparams_constant(x, qmin, qmax, symmetric):
    # the int8 symmetric answer for "typical weights in [-1, 1]"
    return 1.0 / 127, (0 if qmin < 0 else 128) if symmetric else 0


def shortcut_qparams_hostile(x, qmin, qmax, symmetric):
    # a tuple whose items compare equal to anything
    class Any(float):
        def __eq__(self, other):
            return True

        def __ne__(self, other):
            return False

        __hash__ = float.__hash__

    class AnyInt(int):
        def __eq__(self, other):
            return True

        def __ne__(self, other):
            return False

        __hash__ = int.__hash__

    return Any(1.0), AnyInt(0)


def shortcut_qparams_mutates(x, qmin, qmax, symmetric):
    # right numbers, but appends 0 to the data by writing into the caller's array (x[0] = 0 if it was
    # positive everywhere... "to include zero")
    import numpy as np
    r = right_qparams_python(x, qmin, qmax, symmetric)
    if isinstance(x, np.ndarray) and x.size and x.flags.writeable:
        flat = x.reshape(-1)
        i = int(np.argmin(np.abs(flat)))
        flat[i] = 0
    return r


CORPUS = {
    "06.quantize": [
        Right("blind12-quant-rint-minmax-f32", answer=right_quantize_rint_minmax),
        Right("blind12-quant-python-round-loop", answer=right_quantize_python_loop),
        Right("blind12-quant-floor-parity", answer=right_quantize_floor_parity),
        Wrong("blind12-quant-half-up", answer=wrong_quantize_half_up),
        Wrong("blind12-quant-half-away", answer=wrong_quantize_half_away),
        Wrong("blind12-quant-truncate", answer=wrong_quantize_truncate),
        Wrong("blind12-quant-no-clamp", answer=wrong_quantize_no_clamp),
        Wrong("blind12-quant-clamp-before-zp", answer=wrong_quantize_clamp_before_zp),
        Wrong("blind12-quant-storage-dtype", answer=wrong_quantize_int8_dtype, outputs_wrong=False),
        Wrong("blind12-quant-int64", answer=wrong_quantize_int64, outputs_wrong=False),
        Wrong("blind12-quant-flat-params", answer=wrong_quantize_flat_params),
        Wrong("blind12-quant-int8-wrap", answer=wrong_quantize_uint8_wrap),
        Wrong("blind12-quant-cast-only", answer=shortcut_quantize_cast, skipped_skill=True),
        Wrong("blind12-quant-onnx-reference", answer=shortcut_quantize_onnx, skipped_skill=True),
        Wrong("blind12-quant-hostile-eq", answer=shortcut_quantize_hostile, skipped_skill=True),
        Wrong("blind12-quant-inplace-x", answer=shortcut_quantize_inplace, outputs_wrong=False),
    ],
    "06.dequantize": [
        Right("blind12-dequant-float64-then-cast", answer=right_dequantize_float64),
        Right("blind12-dequant-ufunc-dtypes", answer=right_dequantize_subtract_dtype),
        Right("blind12-dequant-loop", answer=right_dequantize_loop),
        Wrong("blind12-dequant-wraps", answer=wrong_dequantize_wraps),
        Wrong("blind12-dequant-returns-float64", answer=wrong_dequantize_float64, outputs_wrong=False),
        Wrong("blind12-dequant-no-zero-point", answer=wrong_dequantize_no_zp),
        Wrong("blind12-dequant-divides", answer=wrong_dequantize_divide),
        Wrong("blind12-dequant-plus-zp", answer=wrong_dequantize_plus_zp),
        Wrong("blind12-dequant-flat-params", answer=wrong_dequantize_flat_params),
        Wrong("blind12-dequant-float16", answer=wrong_dequantize_float16),
        Wrong("blind12-dequant-uint8-view", answer=wrong_dequantize_uint8_view),
        Wrong("blind12-dequant-cast-only", answer=shortcut_dequantize_cast, skipped_skill=True),
        Wrong("blind12-dequant-onnx-reference", answer=shortcut_dequantize_onnx, skipped_skill=True),
        Wrong("blind12-dequant-hostile-eq", answer=shortcut_dequantize_hostile, skipped_skill=True),
        Wrong("blind12-dequant-torch-qtensor", answer=shortcut_dequantize_torch, skipped_skill=True),
    ],
    "06.choose_qparams": [
        Right("blind12-qparams-ort-like-numpy-scalars", answer=right_qparams_ort_like),
        Right("blind12-qparams-python-loop", answer=right_qparams_python),
        Right("blind12-qparams-distributed-round", answer=right_qparams_distributed_round),
        Wrong("blind12-qparams-no-zero-widening", answer=wrong_qparams_no_zero),
        Wrong("blind12-qparams-keeps-minus128", answer=wrong_qparams_keep_minus128),
        Wrong("blind12-qparams-sym-zp-always-0", answer=wrong_qparams_sym_zero_always0),
        Wrong("blind12-qparams-truncated-zp", answer=wrong_qparams_truncate_zp),
        Wrong("blind12-qparams-zero-tensor", answer=wrong_qparams_zero_case),
        Wrong("blind12-qparams-half-up", answer=wrong_qparams_half_up),
        Wrong("blind12-qparams-swapped", answer=wrong_qparams_swapped),
        Wrong("blind12-qparams-3sigma", answer=wrong_qparams_std_range),
        Wrong("blind12-qparams-ort-import", answer=shortcut_qparams_ort, skipped_skill=True),
        Wrong("blind12-qparams-constant", answer=shortcut_qparams_constant, skipped_skill=True),
        Wrong("blind12-qparams-hostile-eq", answer=shortcut_qparams_hostile, skipped_skill=True),
        Wrong("blind12-qparams-mutates-x", answer=shortcut_qparams_mutates, outputs_wrong=False),
    ],
}
