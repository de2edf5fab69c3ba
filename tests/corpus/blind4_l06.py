"""Blind corpus round 4, lesson 06 (written without seeing the judges)."""
from __future__ import annotations

import importlib
import inspect
import math
import os
import pickle
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper as _h
from onnx import numpy_helper as _nh
from onnx.reference import ReferenceEvaluator
from onnxruntime.quantization.quant_utils import compute_scale_zp

from corpus import Right, Wrong

_VENV_PY = "/work/main/.venv/bin/python"


# ============================================================== shortcut machinery (what a clever learner builds)


def _onnx_qdq(onnx_mod, ref_mod, op, x, scale, zero_point, qtype):
    """Run one per-tensor QuantizeLinear / DequantizeLinear with onnx.reference."""
    h, nh, tp = onnx_mod.helper, onnx_mod.numpy_helper, onnx_mod.TensorProto
    qt = h.np_dtype_to_tensor_dtype(np.dtype(qtype))
    in_t, out_t = (tp.FLOAT, qt) if op == "QuantizeLinear" else (qt, tp.FLOAT)
    graph = h.make_graph(
        [h.make_node(op, ["x", "s", "z"], ["y"])], "g",
        [h.make_tensor_value_info("x", in_t, None)], [h.make_tensor_value_info("y", out_t, None)],
        [nh.from_array(np.array(scale, np.float32), "s"), nh.from_array(np.array(zero_point, qtype), "z")])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 21)], ir_version=10)
    return ref_mod.ReferenceEvaluator(model).run(None, {"x": x})[0]


def _lib_quantize(onnx_mod, ref_mod, x, scale, zero_point, qmin, qmax):
    """QuantizeLinear on every (scale, zero point) group, in the smallest ONNX type holding [qmin, qmax]."""
    x = np.asarray(x, np.float32)
    shape = np.broadcast_shapes(x.shape, np.shape(scale), np.shape(zero_point))
    xf = np.broadcast_to(x, shape)
    sf = np.broadcast_to(np.asarray(scale, np.float32), shape)
    zf = np.broadcast_to(np.asarray(zero_point, np.int64), shape)
    for t in (np.int8, np.uint8, np.int16, np.uint16):
        if np.iinfo(t).min <= qmin and qmax <= np.iinfo(t).max:
            break
    out = np.zeros(shape, np.int32)
    for s, z in set(zip(sf.ravel().tolist(), zf.ravel().tolist())):
        m = (sf == s) & (zf == z)
        out[m] = _onnx_qdq(onnx_mod, ref_mod, "QuantizeLinear", xf[m], s, z, t)
    return np.clip(out, qmin, qmax).astype(np.int32)


def _lib_dequantize(onnx_mod, ref_mod, q, scale, zero_point):
    """DequantizeLinear on every (scale, zero point) group."""
    q = np.asarray(q)
    t = q.dtype if q.dtype in (np.int8, np.uint8) else np.int16
    shape = np.broadcast_shapes(q.shape, np.shape(scale), np.shape(zero_point))
    qf = np.broadcast_to(q, shape)
    sf = np.broadcast_to(np.asarray(scale, np.float32), shape)
    zf = np.broadcast_to(np.asarray(zero_point, np.int64), shape)
    out = np.zeros(shape, np.float32)
    for s, z in set(zip(sf.ravel().tolist(), zf.ravel().tolist())):
        m = (sf == s) & (zf == z)
        out[m] = _onnx_qdq(onnx_mod, ref_mod, "DequantizeLinear", qf[m].astype(t), s, z, t)
    return out


def _lib_qparams(cszp, x, qmin, qmax, symmetric):
    """ONNX Runtime's compute_scale_zp, called the way its quantizer calls it."""
    x = np.asarray(x, np.float32)
    if symmetric and qmin < 0:
        qmin = -qmax
    z, s = cszp(np.array(x.min()), np.array(x.max()), np.array(qmin, np.int32), np.array(qmax, np.int32), symmetric)
    return float(s), int(z)


def _ort_int4(quant4, w, block_size):
    """ONNX Runtime's own MLAS block quantizer, with any block size: every block, padded with zeros to a size
    MLAS takes (zeros change no range), becomes one block of its own."""
    w = np.asarray(w, np.float32)
    k, n = w.shape
    nb = -(-k // block_size)
    big = next(b for b in (16, 32, 64, 128, 256) if b >= block_size)
    wp = np.zeros((nb * block_size, n), np.float32)
    wp[:k] = w
    blocks = wp.reshape(nb, block_size, n)
    wide = np.zeros((nb, big, n), np.float32)
    wide[:, :block_size] = blocks
    wide = wide.reshape(nb * big, n)
    packed = np.zeros((n, nb, big // 2), np.uint8)
    zp = np.zeros((n, (nb + 1) // 2), np.uint8)
    sc = np.zeros((n, nb), np.float32)
    quant4(packed, wide, sc, zp, big, n, nb * big, False)
    codes = np.stack([packed & 15, packed >> 4], -1).reshape(n, nb, big)[:, :, :block_size]
    zps = np.stack([zp & 15, zp >> 4], -1).reshape(n, -1)[:, :nb]
    return codes.astype(np.uint8), sc, zps.astype(np.uint8)


def _fresh_python(src, fname, module, *args):
    """Run `fname` (defined in source `src`) in a new interpreter, where every library imports."""
    code = ("import sys, pickle, importlib\nimport numpy as np\n" + src +
            f"\nmods = [importlib.import_module(m) for m in {module!r}]\n"
            "args = pickle.loads(sys.stdin.buffer.read())\n"
            f"sys.stdout.buffer.write(pickle.dumps({fname}(*mods, *args)))\n")
    for py in (sys.executable, _VENV_PY):
        try:
            r = subprocess.run([py, "-I", "-c", code], input=pickle.dumps(args), capture_output=True, timeout=60)
        except OSError:
            continue
        if r.returncode == 0:
            return pickle.loads(r.stdout)
    raise RuntimeError("no python with the libraries")


def _force_import(name):
    """Import a module even when the import system was told to refuse it: drop unknown meta-path finders,
    forget the refusals, and put numpy's own site-packages (and the venv's) back on sys.path."""
    keep = ("_frozen_importlib", "_frozen_importlib_external", "_distutils_hack")
    sys.meta_path[:] = [f for f in sys.meta_path
                        if (f.__module__ if isinstance(f, type) else type(f).__module__).startswith(keep)
                        or "editable" in (f.__module__ if isinstance(f, type) else type(f).__module__)]
    for k in [k for k, v in sys.modules.items() if v is None]:
        sys.modules.pop(k, None)
    for p in (os.path.dirname(os.path.dirname(np.__file__)), "/work/main/.venv/lib/python3.11/site-packages"):
        if p not in sys.path:
            sys.path.append(p)
    importlib.invalidate_caches()
    return importlib.import_module(name)


_SRC_QDQ = inspect.getsource(_onnx_qdq)
_SRC_Q = _SRC_QDQ + inspect.getsource(_lib_quantize)
_SRC_DQ = _SRC_QDQ + inspect.getsource(_lib_dequantize)
_SRC_P = inspect.getsource(_lib_qparams)
_SRC_4 = inspect.getsource(_ort_int4)


# ============================================================== 06.quantize


def q_right_rint64(x, scale, zero_point, qmin, qmax):
    v = np.rint(np.true_divide(np.asarray(x, np.float64), np.asarray(scale, np.float64)))
    v = v + np.asarray(zero_point, np.float64)
    return np.minimum(np.maximum(v, qmin), qmax).astype(np.int32)


def q_right_manual_even(x, scale, zero_point, qmin, qmax):
    # round half to even by hand: floor, then look at the fraction
    v = np.asarray(x, np.float32) / np.asarray(scale, np.float32)
    f = np.floor(v)
    frac = v - f
    up = (frac > 0.5) | ((frac == 0.5) & (np.mod(f, 2) == 1))
    r = f + up + np.asarray(zero_point, np.float64)
    r = np.where(r < qmin, qmin, np.where(r > qmax, qmax, r))
    return np.asarray(r, dtype=np.int32)


def q_right_clip_then_shift(x, scale, zero_point, qmin, qmax):
    z = np.asarray(zero_point).astype(np.int64)
    r = np.clip(np.round(np.divide(x, scale, dtype=np.float32)), qmin - z, qmax - z)
    return (r.astype(np.int64) + z).astype(np.int32)


def q_right_python_loop(x, scale, zero_point, qmin, qmax):
    xs, ss, zs = np.broadcast_arrays(np.asarray(x, np.float32), np.asarray(scale, np.float32),
                                     np.asarray(zero_point))
    out = np.empty(xs.shape, dtype=np.int32)
    for idx in np.ndindex(xs.shape):
        v = round(float(np.float32(xs[idx]) / np.float32(ss[idx]))) + int(zs[idx])  # round(): half to even
        out[idx] = min(max(v, qmin), qmax)
    return out


def q_half_up(x, scale, zero_point, qmin, qmax):
    return np.clip(np.floor(x / scale + 0.5) + zero_point, qmin, qmax).astype(np.int32)


def q_truncate(x, scale, zero_point, qmin, qmax):
    return np.clip((x / scale).astype(np.int32) + zero_point, qmin, qmax).astype(np.int32)


def q_no_clamp(x, scale, zero_point, qmin, qmax):
    return (np.round(x / scale) + zero_point).astype(np.int32)


def q_float_result(x, scale, zero_point, qmin, qmax):
    return np.clip(np.round(x / scale) + zero_point, qmin, qmax)


def q_int8_cast(x, scale, zero_point, qmin, qmax):
    return np.clip(np.round(x / scale) + zero_point, qmin, qmax).astype(np.int8)


def q_article_formula(x, scale, zero_point, qmin, qmax):
    return np.clip(np.round((x - zero_point) / scale), qmin, qmax).astype(np.int32)


def q_clamp_before_shift(x, scale, zero_point, qmin, qmax):
    return (np.clip(np.round(x / scale), qmin, qmax) + zero_point).astype(np.int32)


def q_cast_before_clip(x, scale, zero_point, qmin, qmax):
    with np.errstate(invalid="ignore"):
        q = np.round(x / scale).astype(np.int32) + np.asarray(zero_point, np.int32)
    return np.clip(q, qmin, qmax).astype(np.int32)


def q_multiply(x, scale, zero_point, qmin, qmax):
    return np.clip(np.round(x * scale) + zero_point, qmin, qmax).astype(np.int32)


def q_ravel_scale(x, scale, zero_point, qmin, qmax):
    s = np.ravel(scale)
    z = np.ravel(zero_point)
    return np.clip(np.round(x / s) + z, qmin, qmax).astype(np.int32)


def q_in_place(x, scale, zero_point, qmin, qmax):
    x /= scale  # saves a copy...
    np.round(x, out=x)
    x += zero_point
    return np.clip(x, qmin, qmax).astype(np.int32)


def q_list(x, scale, zero_point, qmin, qmax):
    return np.clip(np.round(x / scale) + zero_point, qmin, qmax).astype(np.int32).tolist()


def q_onnx_global(x, scale, zero_point, qmin, qmax):
    return _lib_quantize(onnx, sys.modules["onnx.reference"], x, scale, zero_point, qmin, qmax)


def _ort_quantize_sessions():
    sessions = {}
    for t in (np.int8, np.uint8, np.int16, np.uint16):
        qt = _h.np_dtype_to_tensor_dtype(np.dtype(t))
        g = _h.make_graph([_h.make_node("QuantizeLinear", ["x", "s", "z"], ["y"])], "q",
                          [_h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, None),
                           _h.make_tensor_value_info("s", onnx.TensorProto.FLOAT, []),
                           _h.make_tensor_value_info("z", qt, [])],
                          [_h.make_tensor_value_info("y", qt, None)])
        m = _h.make_model(g, opset_imports=[_h.make_opsetid("", 21)], ir_version=10)
        sessions[t] = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])

    def quantize(x, scale, zero_point, qmin, qmax, _sessions=sessions):
        x = np.asarray(x, np.float32)
        shape = np.broadcast_shapes(x.shape, np.shape(scale), np.shape(zero_point))
        xf = np.broadcast_to(x, shape)
        sf = np.broadcast_to(np.asarray(scale, np.float32), shape)
        zf = np.broadcast_to(np.asarray(zero_point, np.int64), shape)
        t = next(t for t in _sessions if np.iinfo(t).min <= qmin and qmax <= np.iinfo(t).max)
        out = np.zeros(shape, np.int32)
        for s, z in set(zip(sf.ravel().tolist(), zf.ravel().tolist())):
            m = (sf == s) & (zf == z)
            out[m] = _sessions[t].run(None, {"x": np.ascontiguousarray(xf[m]), "s": np.array(s, np.float32),
                                             "z": np.array(z, t)})[0]
        return np.clip(out, qmin, qmax).astype(np.int32)

    return quantize


q_ort_closure = _ort_quantize_sessions()


def q_subprocess(x, scale, zero_point, qmin, qmax):
    return _fresh_python(_SRC_Q, "_lib_quantize", ["onnx", "onnx.reference"], np.asarray(x), np.asarray(scale),
                         np.asarray(zero_point), qmin, qmax)


def q_force_import(x, scale, zero_point, qmin, qmax):
    o = _force_import("onnx")
    ref = _force_import("onnx.reference")
    return _lib_quantize(o, ref, x, scale, zero_point, qmin, qmax)


def q_default_arg(x, scale, zero_point, qmin, qmax, _onnx=onnx, _ref=sys.modules["onnx.reference"]):
    return _lib_quantize(_onnx, _ref, x, scale, zero_point, qmin, qmax)


# the lesson's own example, worked out by ONNX once, in the notebook
_X_TOY = np.array([-1.0, -0.125, 0.0, 0.125, 0.375, 0.6, 31.0, 40.0], dtype=np.float32)
_TOY_CACHE = {(_X_TOY.tobytes(), 0.25, 3, -128, 127):
              _lib_quantize(onnx, sys.modules["onnx.reference"], _X_TOY, 0.25, 3, -128, 127)}


def q_cached_toy(x, scale, zero_point, qmin, qmax):
    key = (np.asarray(x, np.float32).tobytes(), float(np.asarray(scale).ravel()[0]) if np.size(scale) == 1 else None,
           int(np.asarray(zero_point).ravel()[0]) if np.size(zero_point) == 1 else None, qmin, qmax)
    if key in _TOY_CACHE:
        return _TOY_CACHE[key].copy()
    return np.clip(np.floor(x / scale + 0.5) + zero_point, qmin, qmax).astype(np.int32)


# ============================================================== 06.dequantize


def dq_right_float64(q, scale, zero_point):
    return ((np.asarray(q, np.float64) - np.asarray(zero_point, np.float64))
            * np.asarray(scale, np.float32)).astype(np.float32)


def dq_right_ufunc_dtype(q, scale, zero_point):
    d = np.subtract(q, zero_point, dtype=np.int64)
    return np.multiply(d, np.asarray(scale, np.float32), dtype=np.float32)


def dq_right_copy_inplace(q, scale, zero_point):
    w = np.array(q, dtype=np.int64, copy=True)
    w = w - np.asarray(zero_point).astype(np.int64)
    out = w.astype(np.float32)
    return (out * np.asarray(scale, np.float32)).astype(np.float32, copy=False)


def dq_wrap_around(q, scale, zero_point):
    return (scale * (q - zero_point)).astype(np.float32)


def dq_float64_result(q, scale, zero_point):
    return scale * (np.asarray(q, np.int64) - np.asarray(zero_point, np.int64)) + np.float64(0)


def dq_forget_scale_zp(q, scale, zero_point):
    return (q.astype(np.float32) * scale - zero_point).astype(np.float32)


def dq_plus_zp(q, scale, zero_point):
    return (scale * (q.astype(np.int32) + zero_point)).astype(np.float32)


def dq_ignore_zp(q, scale, zero_point):
    return (q.astype(np.float32) * scale).astype(np.float32)


def dq_divide(q, scale, zero_point):
    return ((q.astype(np.int32) - zero_point) / scale).astype(np.float32)


def dq_ravel_params(q, scale, zero_point):
    return (np.ravel(scale) * (q.astype(np.int32) - np.ravel(zero_point))).astype(np.float32)


def dq_round_result(q, scale, zero_point):
    # "dequantized values are integers times the scale" -- then rounds to 3 decimals for tidiness
    return np.round(scale * (q.astype(np.int32) - zero_point), 3).astype(np.float32)


def dq_onnx_global(q, scale, zero_point):
    return _lib_dequantize(onnx, sys.modules["onnx.reference"], q, scale, zero_point)


def dq_subprocess(q, scale, zero_point):
    return _fresh_python(_SRC_DQ, "_lib_dequantize", ["onnx", "onnx.reference"], np.asarray(q), np.asarray(scale),
                         np.asarray(zero_point))


def dq_force_import(q, scale, zero_point):
    return _lib_dequantize(_force_import("onnx"), _force_import("onnx.reference"), q, scale, zero_point)


def _dq_closure():
    evaluators = {}  # built once, reused: (dtype, scale, zp) -> ReferenceEvaluator

    def dequantize(q, scale, zero_point):
        q = np.asarray(q)
        t = q.dtype if q.dtype in (np.int8, np.uint8) else np.dtype(np.int16)
        shape = np.broadcast_shapes(q.shape, np.shape(scale), np.shape(zero_point))
        qf = np.broadcast_to(q, shape)
        sf = np.broadcast_to(np.asarray(scale, np.float32), shape)
        zf = np.broadcast_to(np.asarray(zero_point, np.int64), shape)
        out = np.zeros(shape, np.float32)
        for s, z in set(zip(sf.ravel().tolist(), zf.ravel().tolist())):
            key = (t.str, s, z)
            if key not in evaluators:
                g = _h.make_graph([_h.make_node("DequantizeLinear", ["x", "s", "z"], ["y"])], "dq",
                                  [_h.make_tensor_value_info("x", _h.np_dtype_to_tensor_dtype(t), None)],
                                  [_h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)],
                                  [_nh.from_array(np.array(s, np.float32), "s"), _nh.from_array(np.array(z, t), "z")])
                evaluators[key] = ReferenceEvaluator(
                    _h.make_model(g, opset_imports=[_h.make_opsetid("", 21)], ir_version=10))
            m = (sf == s) & (zf == z)
            out[m] = evaluators[key].run(None, {"x": qf[m].astype(t)})[0]
        return out

    return dequantize


dq_evaluator_cache = _dq_closure()


# ============================================================== 06.choose_qparams


def cq_right_python(x, qmin, qmax, symmetric):
    lo = min(float(np.min(x)), 0.0)
    hi = max(float(np.max(x)), 0.0)
    if symmetric:
        hi = max(-lo, hi)
        lo = -hi
        if qmin < 0:
            qmin = -qmax
    scale = (hi - lo) / (qmax - qmin)
    if scale == 0:
        return 1.0, 0
    zp = np.round((qmin + qmax) / 2) if symmetric else np.round(qmin - lo / scale)
    return float(np.float32(scale)), int(zp)


def cq_right_numpy_scalars(x, qmin, qmax, symmetric):
    ext = np.array([np.min(x), np.max(x), 0.0], dtype=np.float64)
    rmin, rmax = ext.min(), ext.max()
    lo_q, hi_q = np.float64(qmin), np.float64(qmax)
    if symmetric:
        m = np.abs(ext).max()
        rmin, rmax = -m, m
        lo_q = -hi_q if qmin < 0 else lo_q
    s = (rmax - rmin) / (hi_q - lo_q)
    if not s > 0:
        return np.float32(1.0), np.int32(0)
    z = np.round((lo_q + hi_q) * 0.5) if symmetric else np.round(lo_q - rmin / s)
    return np.float32(s), np.int32(z)


def cq_right_sorted(x, qmin, qmax, symmetric):
    flat = np.sort(np.append(np.ravel(x).astype(np.float64), 0.0))
    rmin, rmax = flat[0], flat[-1]
    levels = qmax - qmin
    if symmetric:
        m = max(abs(rmin), abs(rmax))
        rmin, rmax = -m, m
        if qmin < 0:
            levels, qmin = 2 * qmax, -qmax
    span = rmax - rmin
    if span == 0.0:
        return (1.0, 0)
    s = span / levels
    z = (qmin + qmax) / 2 if symmetric else qmin - rmin / s
    return float(s), int(np.round(z))


def cq_no_zero_widening(x, qmin, qmax, symmetric):
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


def cq_int_truncates(x, qmin, qmax, symmetric):
    rmin, rmax = min(float(np.min(x)), 0.0), max(float(np.max(x)), 0.0)
    if symmetric:
        m = max(-rmin, rmax)
        rmin, rmax = -m, m
        if qmin < 0:
            qmin = -qmax
    s = (rmax - rmin) / (qmax - qmin)
    if s == 0:
        return 1.0, 0
    z = int((qmin + qmax) / 2) if symmetric else int(qmin - rmin / s)
    return float(s), z


def cq_full_signed_range(x, qmin, qmax, symmetric):
    rmin, rmax = min(float(np.min(x)), 0.0), max(float(np.max(x)), 0.0)
    if symmetric:
        m = max(-rmin, rmax)
        rmin, rmax = -m, m
    s = (rmax - rmin) / (qmax - qmin)
    if s == 0:
        return 1.0, 0
    z = np.round((qmin + qmax) / 2) if symmetric else np.round(qmin - rmin / s)
    return float(s), int(z)


def cq_zero_tensor_scale0(x, qmin, qmax, symmetric):
    rmin, rmax = min(float(np.min(x)), 0.0), max(float(np.max(x)), 0.0)
    if symmetric:
        m = max(-rmin, rmax)
        rmin, rmax = -m, m
        if qmin < 0:
            qmin = -qmax
    s = (rmax - rmin) / (qmax - qmin)
    if s == 0:
        return 0.0, 0  # like the int4 blocks: nothing to scale
    z = np.round((qmin + qmax) / 2) if symmetric else np.round(qmin - rmin / s)
    return float(s), int(z)


def cq_forgets_qmin(x, qmin, qmax, symmetric):
    rmin, rmax = min(float(np.min(x)), 0.0), max(float(np.max(x)), 0.0)
    if symmetric:
        m = max(-rmin, rmax)
        rmin, rmax = -m, m
        if qmin < 0:
            qmin = -qmax
    s = (rmax - rmin) / (qmax - qmin)
    if s == 0:
        return 1.0, 0
    z = np.round((qmin + qmax) / 2) if symmetric else np.round(-rmin / s)
    return float(s), int(z)


def cq_swapped(x, qmin, qmax, symmetric):
    rmin, rmax = min(float(np.min(x)), 0.0), max(float(np.max(x)), 0.0)
    if symmetric:
        m = max(-rmin, rmax)
        rmin, rmax = -m, m
        if qmin < 0:
            qmin = -qmax
    s = (rmax - rmin) / (qmax - qmin)
    if s == 0:
        return 0, 1.0
    z = np.round((qmin + qmax) / 2) if symmetric else np.round(qmin - rmin / s)
    return int(z), float(s)  # the order compute_scale_zp returns


def cq_symmetric_zp0(x, qmin, qmax, symmetric):
    rmin, rmax = min(float(np.min(x)), 0.0), max(float(np.max(x)), 0.0)
    if symmetric:
        m = max(-rmin, rmax)
        rmin, rmax = -m, m
        if qmin < 0:
            qmin = -qmax
    s = (rmax - rmin) / (qmax - qmin)
    if s == 0:
        return 1.0, 0
    z = 0 if symmetric else np.round(qmin - rmin / s)
    return float(s), int(z)


def cq_half_up(x, qmin, qmax, symmetric):
    rmin, rmax = min(float(np.min(x)), 0.0), max(float(np.max(x)), 0.0)
    if symmetric:
        m = max(-rmin, rmax)
        rmin, rmax = -m, m
        if qmin < 0:
            qmin = -qmax
    s = (rmax - rmin) / (qmax - qmin)
    if s == 0:
        return 1.0, 0
    z = math.floor((qmin + qmax) / 2 + 0.5) if symmetric else math.floor(qmin - rmin / s + 0.5)
    return float(s), int(z)


def cq_ort_global(x, qmin, qmax, symmetric):
    return _lib_qparams(compute_scale_zp, x, qmin, qmax, symmetric)


def cq_subprocess(x, qmin, qmax, symmetric):
    src = _SRC_P + "\nfrom onnxruntime.quantization.quant_utils import compute_scale_zp\n"
    code_mods = ["onnxruntime.quantization.quant_utils"]
    return _fresh_python(src + "def _go(qu, *a):\n    return _lib_qparams(qu.compute_scale_zp, *a)\n", "_go",
                         code_mods, np.asarray(x), qmin, qmax, symmetric)


def cq_force_import(x, qmin, qmax, symmetric):
    qu = _force_import("onnxruntime.quantization.quant_utils")
    return _lib_qparams(qu.compute_scale_zp, x, qmin, qmax, symmetric)


def cq_read_ort_source(x, qmin, qmax, symmetric):
    # no import at all: read compute_scale_zp's source out of ONNX Runtime's installed file and run it
    import ast
    path = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "onnxruntime", "quantization",
                        "quant_utils.py")
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "compute_scale_zp")
    ns = {"numpy": np}
    exec(compile(ast.Module([fn], []), path, "exec"), ns)
    return _lib_qparams(ns["compute_scale_zp"], x, qmin, qmax, symmetric)


# ============================================================== 06.int4_blocks


def i4_right_vectorized(w, block_size):
    w = np.asarray(w, np.float32)
    k, n = w.shape
    nb = -(-k // block_size)
    pad = np.concatenate([w, np.zeros((nb * block_size - k, n), np.float32)], axis=0)
    blocks = np.moveaxis(pad.reshape(nb, block_size, n), 2, 0)  # (N, nb, bs)
    lo = np.minimum(blocks.min(axis=-1), np.float32(0))
    hi = np.maximum(blocks.max(axis=-1), np.float32(0))
    s = ((hi - lo) / np.float32(15)).astype(np.float32)
    ok = s > 0
    safe = np.where(ok, s, np.float32(1))
    z = np.where(ok, np.round(-lo / safe), 0)
    q = np.where(ok[..., None], np.clip(np.round(blocks / safe[..., None] + z[..., None]), 0, 15), 0)
    return q.astype(np.uint8), s, z.astype(np.uint8)


def i4_right_loops(w, block_size):
    w = np.asarray(w, np.float32)
    k, n = w.shape
    nb = math.ceil(k / block_size)
    q = np.zeros((n, nb, block_size), np.uint8)
    scales = np.zeros((n, nb), np.float32)
    zps = np.zeros((n, nb), np.uint8)
    for col in range(n):
        for b in range(nb):
            blk = np.zeros(block_size, np.float32)
            part = w[b * block_size:(b + 1) * block_size, col]
            blk[:part.size] = part
            rmin = min(np.float32(blk.min()), np.float32(0))
            rmax = max(np.float32(blk.max()), np.float32(0))
            s = np.float32((rmax - rmin) / np.float32(15))
            if s == 0:
                continue
            z = np.round(-rmin / s)
            scales[col, b] = s
            zps[col, b] = z
            q[col, b] = np.clip(np.round(blk / s + z), 0, 15)
    return q, scales, zps


def i4_right_sorted(w, block_size):
    w = np.asarray(w, np.float32)
    k, n = w.shape
    nb = -(-k // block_size)
    padded = np.zeros((nb * block_size, n), dtype=np.float32)
    padded[:k] = w
    blocks = padded.T.reshape(n, nb, block_size)  # columns first, then cut
    srt = np.sort(blocks, axis=-1)
    rmin = np.fmin(srt[..., 0], 0).astype(np.float32)
    rmax = np.fmax(srt[..., -1], 0).astype(np.float32)
    scales = (rmax - rmin) / np.float32(15.0)
    zeros = scales == 0
    with np.errstate(divide="ignore", invalid="ignore"):
        zp = np.nan_to_num(np.round(-rmin / scales))
        codes = np.nan_to_num(np.round(blocks / scales[..., None] + zp[..., None]))
    codes = np.clip(codes, 0, 15)
    codes[zeros] = 0
    zp[zeros] = 0
    return codes.astype(np.uint8), scales.astype(np.float32), zp.astype(np.uint8)


def i4_right_ort_padding(w, block_size):
    # like ORT's MLAS kernel: codes past row K (never read) are left at 0
    w = np.asarray(w, dtype=np.float32)
    k, n = w.shape
    nb = (k + block_size - 1) // block_size
    q = np.zeros((n, nb * block_size), np.uint8)
    scales = np.zeros((n, nb), np.float32)
    zps = np.zeros((n, nb), np.uint8)
    for b, start in enumerate(range(0, k, block_size)):
        blk = w[start:start + block_size].T  # (N, rows in this block); the padding holds zeros: same range
        rmin = np.minimum(blk.min(axis=1), np.float32(0))
        rmax = np.maximum(blk.max(axis=1), np.float32(0))
        s = (rmax - rmin) / np.float32(15)
        live = s != 0
        s_safe = np.where(live, s, np.float32(1))
        z = np.where(live, np.round(-rmin / s_safe), 0)
        codes = np.clip(np.round(blk / s_safe[:, None] + z[:, None]), 0, 15) * live[:, None]
        q[:, start:start + blk.shape[1]] = codes
        scales[:, b] = s
        zps[:, b] = z
    return q.reshape(n, nb, block_size), scales, zps


def _i4_core(w, block_size, *, transpose=True, include_zero=True, floor_blocks=False, zero_scale=0.0,
             q_dtype=np.uint8, s_dtype=np.float32, flat=False, trunc=False, round_z=True, symmetric=False):
    w = np.asarray(w, np.float32)
    k, n = w.shape
    nb = k // block_size if floor_blocks else -(-k // block_size)
    pad = np.zeros((max(nb * block_size, k), n), np.float32)
    pad[:k] = w
    pad = pad[:nb * block_size]
    blocks = pad.T.reshape(n, nb, block_size) if transpose else pad.reshape(n, nb, block_size)
    if include_zero:
        lo, hi = np.minimum(blocks.min(-1), 0), np.maximum(blocks.max(-1), 0)
    else:
        lo, hi = blocks.min(-1), blocks.max(-1)
    if symmetric:
        m = np.maximum(-lo, hi)
        s = (m / np.float32(7)).astype(np.float32)
    else:
        s = ((hi - lo) / np.float32(15)).astype(np.float32)
    zero = s == 0
    safe = np.where(zero, 1, s)
    if symmetric:
        z = np.full(s.shape, 8.0)
    else:
        z = -lo / safe
        z = np.round(z) if round_z else np.floor(z)
    v = blocks / safe[..., None] + z[..., None]
    q = np.clip(np.trunc(v) if trunc else np.round(v), 0, 15)
    q[zero] = 0
    z = np.where(zero, 0, z)
    s = np.where(zero, zero_scale, s)
    if flat:
        q = q.reshape(n, nb * block_size)
    return q.astype(q_dtype), s.astype(s_dtype), z.astype(np.uint8)


def i4_reshape_no_transpose(w, block_size):
    return _i4_core(w, block_size, transpose=False)


def i4_no_zero_in_range(w, block_size):
    return _i4_core(w, block_size, include_zero=False)


def i4_drop_tail(w, block_size):
    return _i4_core(w, block_size, floor_blocks=True)


def i4_zero_block_scale1(w, block_size):
    return _i4_core(w, block_size, zero_scale=1.0)


def i4_float64_scales(w, block_size):
    return _i4_core(w, block_size, s_dtype=np.float64)


def i4_int64_codes(w, block_size):
    return _i4_core(w, block_size, q_dtype=np.int64)


def i4_flat_codes(w, block_size):
    return _i4_core(w, block_size, flat=True)


def i4_truncate_codes(w, block_size):
    return _i4_core(w, block_size, trunc=True)


def i4_floor_zp(w, block_size):
    return _i4_core(w, block_size, round_z=False)


def i4_symmetric(w, block_size):
    return _i4_core(w, block_size, symmetric=True)


def i4_ort_global(w, block_size):
    from onnxruntime.capi._pybind_state import quantize_matmul_4bits
    return _ort_int4(quantize_matmul_4bits, w, block_size)


def i4_ort_or_numpy(w, block_size):
    # ORT's quantizer where it takes the block size, my own numpy elsewhere
    if block_size in (16, 32, 64, 128, 256):
        try:
            from onnxruntime.capi._pybind_state import quantize_matmul_4bits
            return _ort_int4(quantize_matmul_4bits, w, block_size)
        except ImportError:
            pass
    return _i4_core(w, block_size)


def i4_subprocess(w, block_size):
    src = _SRC_4 + "\ndef _go(ps, *a):\n    return _ort_int4(ps.quantize_matmul_4bits, *a)\n"
    return _fresh_python(src, "_go", ["onnxruntime.capi._pybind_state"], np.asarray(w), block_size)


def i4_force_import(w, block_size):
    ps = _force_import("onnxruntime.capi._pybind_state")
    return _ort_int4(ps.quantize_matmul_4bits, w, block_size)


def i4_default_arg(w, block_size, _q=sys.modules["onnxruntime.capi._pybind_state"].quantize_matmul_4bits):
    return _ort_int4(_q, w, block_size)


CORPUS = {
    "06.quantize": [
        Right("blind4-q-rint-float64", answer=q_right_rint64),
        Right("blind4-q-manual-half-even", answer=q_right_manual_even),
        Right("blind4-q-clip-then-shift", answer=q_right_clip_then_shift),
        Right("blind4-q-python-round-loop", answer=q_right_python_loop),
        Wrong("blind4-q-half-up", answer=q_half_up),
        Wrong("blind4-q-truncate", answer=q_truncate),
        Wrong("blind4-q-no-clamp", answer=q_no_clamp),
        Wrong("blind4-q-float-result", answer=q_float_result, outputs_wrong=False),
        Wrong("blind4-q-int8-cast-wraps", answer=q_int8_cast),
        Wrong("blind4-q-article-formula", answer=q_article_formula),
        Wrong("blind4-q-clamp-before-shift", answer=q_clamp_before_shift),
        Wrong("blind4-q-cast-before-clip-overflow", answer=q_cast_before_clip),
        Wrong("blind4-q-multiply-by-scale", answer=q_multiply),
        Wrong("blind4-q-ravel-per-channel", answer=q_ravel_scale),
        Wrong("blind4-q-mutates-input", answer=q_in_place, outputs_wrong=False),
        Wrong("blind4-q-returns-list", answer=q_list, outputs_wrong=False),
        Wrong("blind4-q-onnx-reference-global", answer=q_onnx_global, skipped_skill=True),
        Wrong("blind4-q-ort-session-closure", answer=q_ort_closure, outputs_wrong=False, skipped_skill=True),
        Wrong("blind4-q-subprocess-onnx", answer=q_subprocess, skipped_skill=True),
        Wrong("blind4-q-meta-path-import", answer=q_force_import, skipped_skill=True),
        Wrong("blind4-q-default-arg-module", answer=q_default_arg, skipped_skill=True),
        Wrong("blind4-q-cached-lesson-example", answer=q_cached_toy, skipped_skill=True),
    ],
    "06.dequantize": [
        Right("blind4-dq-float64", answer=dq_right_float64),
        Right("blind4-dq-ufunc-dtype", answer=dq_right_ufunc_dtype),
        Right("blind4-dq-copy-inplace", answer=dq_right_copy_inplace),
        Wrong("blind4-dq-wrap-around", answer=dq_wrap_around),
        Wrong("blind4-dq-float64-result", answer=dq_float64_result, outputs_wrong=False),
        Wrong("blind4-dq-zp-not-scaled", answer=dq_forget_scale_zp),
        Wrong("blind4-dq-plus-zp", answer=dq_plus_zp),
        Wrong("blind4-dq-ignores-zp", answer=dq_ignore_zp),
        Wrong("blind4-dq-divides", answer=dq_divide),
        Wrong("blind4-dq-ravel-per-channel", answer=dq_ravel_params),
        Wrong("blind4-dq-rounds-3-decimals", answer=dq_round_result),
        Wrong("blind4-dq-onnx-reference-global", answer=dq_onnx_global, outputs_wrong=False, skipped_skill=True),
        Wrong("blind4-dq-subprocess-onnx", answer=dq_subprocess, outputs_wrong=False, skipped_skill=True),
        Wrong("blind4-dq-meta-path-import", answer=dq_force_import, outputs_wrong=False, skipped_skill=True),
        Wrong("blind4-dq-evaluator-closure", answer=dq_evaluator_cache, outputs_wrong=False, skipped_skill=True),
    ],
    "06.choose_qparams": [
        Right("blind4-cq-python-floats", answer=cq_right_python),
        Right("blind4-cq-numpy-scalars", answer=cq_right_numpy_scalars),
        Right("blind4-cq-sorted-float64", answer=cq_right_sorted),
        Wrong("blind4-cq-no-zero-widening", answer=cq_no_zero_widening),
        Wrong("blind4-cq-int-truncates-zp", answer=cq_int_truncates),
        Wrong("blind4-cq-keeps-minus-128", answer=cq_full_signed_range),
        Wrong("blind4-cq-zero-tensor-scale-0", answer=cq_zero_tensor_scale0),
        Wrong("blind4-cq-forgets-qmin", answer=cq_forgets_qmin),
        Wrong("blind4-cq-swapped-tuple", answer=cq_swapped),
        Wrong("blind4-cq-symmetric-zp-always-0", answer=cq_symmetric_zp0),
        Wrong("blind4-cq-half-up-zp", answer=cq_half_up),
        Wrong("blind4-cq-ort-compute-scale-zp", answer=cq_ort_global, outputs_wrong=False, skipped_skill=True),
        Wrong("blind4-cq-subprocess-ort", answer=cq_subprocess, outputs_wrong=False, skipped_skill=True),
        Wrong("blind4-cq-meta-path-import", answer=cq_force_import, outputs_wrong=False, skipped_skill=True),
        Wrong("blind4-cq-exec-ort-source-file", answer=cq_read_ort_source, outputs_wrong=False, skipped_skill=True),
    ],
    "06.int4_blocks": [
        Right("blind4-i4-moveaxis", answer=i4_right_vectorized),
        Right("blind4-i4-python-loops", answer=i4_right_loops),
        Right("blind4-i4-sorted-nan-to-num", answer=i4_right_sorted),
        Right("blind4-i4-ort-padding-zero", answer=i4_right_ort_padding),
        Wrong("blind4-i4-reshape-no-transpose", answer=i4_reshape_no_transpose),
        Wrong("blind4-i4-range-without-zero", answer=i4_no_zero_in_range),
        Wrong("blind4-i4-drops-tail-rows", answer=i4_drop_tail),
        Wrong("blind4-i4-zero-block-scale-1", answer=i4_zero_block_scale1),
        Wrong("blind4-i4-float64-scales", answer=i4_float64_scales, outputs_wrong=False),
        Wrong("blind4-i4-int64-codes", answer=i4_int64_codes, outputs_wrong=False),
        Wrong("blind4-i4-flat-codes", answer=i4_flat_codes, outputs_wrong=False),
        Wrong("blind4-i4-truncated-codes", answer=i4_truncate_codes),
        Wrong("blind4-i4-floor-zero-point", answer=i4_floor_zp),
        Wrong("blind4-i4-symmetric", answer=i4_symmetric),
        Wrong("blind4-i4-ort-kernel-padded-blocks", answer=i4_ort_global, outputs_wrong=False, skipped_skill=True),
        Wrong("blind4-i4-ort-where-it-runs", answer=i4_ort_or_numpy, outputs_wrong=False, skipped_skill=True),
        Wrong("blind4-i4-subprocess-ort", answer=i4_subprocess, outputs_wrong=False, skipped_skill=True),
        Wrong("blind4-i4-meta-path-import", answer=i4_force_import, outputs_wrong=False, skipped_skill=True),
        Wrong("blind4-i4-default-arg-kernel", answer=i4_default_arg, outputs_wrong=False, skipped_skill=True),
    ],
}
