"""Lesson 06 exercises, judge side (references, test inputs, quiz keys): the affine quantization
mapping, a calibration reader, choosing a method.

Conventions (the notebook's prompts state the same, the judges below enforce them):

* ``quantize(x, scale, zero_point, qmin, qmax)`` returns ``clip(round(x / scale) + zero_point, qmin, qmax)``
  as an ``np.int32`` array, where ``round`` rounds half to even (``np.round``, like ONNX QuantizeLinear).
  ``x / scale`` may be computed in float32 (like ONNX) or float64: either result is accepted.
* ``dequantize(q, scale, zero_point)`` returns ``(q - zero_point) * scale`` as an ``np.float32`` array,
  with the subtraction done in a wide type (int8/uint8 arithmetic would wrap around).
* ``choose_qparams(x, qmin, qmax, symmetric)`` returns ``(scale, zero_point)``: a float and an int,
  following onnxruntime's ``compute_scale_zp``: the range [min(x), max(x)] is widened to include 0;
  symmetric makes it [-m, m] with m = max(|rmin|, |rmax|); scale = (rmax - rmin) / (qmax - qmin);
  zero_point = round((qmin + qmax) / 2) when symmetric, else round(qmin - rmin / scale) (half to even);
  an empty range (all zeros) gives (1.0, 0).
"""
from __future__ import annotations

import labkit.exercises.l06  # noqa: F401 (declares the exercises judged here)

import numpy as np

from labkit.checks import TestResult, expect_close, judge, load_onnx, ort_session, quiz_key
from labkit.plain import OnnxBlob, Raised

# ---------------------------------------------------------------- reference implementations


def quantize_ref(x, scale, zero_point, qmin, qmax, wide: bool = False) -> np.ndarray:
    """The ONNX QuantizeLinear mapping; `wide` divides in float64 instead of float32."""
    dt = np.float64 if wide else np.float32
    q = np.round(np.asarray(x, dt) / np.asarray(scale, dt)) + np.asarray(zero_point, np.float64)
    return np.clip(q, qmin, qmax).astype(np.int32)


def dequantize_ref(q, scale, zero_point) -> np.ndarray:
    return (np.asarray(q, np.float64) - np.asarray(zero_point, np.float64)) * np.asarray(scale, np.float64)


def choose_qparams_ref(x, qmin: int, qmax: int, symmetric: bool, dtype=np.float64) -> tuple[float, int]:
    x = np.asarray(x, dtype)
    rmin = min(float(x.min()), 0.0) if x.size else 0.0
    rmax = max(float(x.max()), 0.0) if x.size else 0.0
    rmin, rmax = dtype(rmin), dtype(rmax)
    if symmetric:
        m = max(abs(rmin), abs(rmax))
        rmin, rmax = -m, m
    scale = dtype((rmax - rmin) / dtype(qmax - qmin))
    if scale == 0:
        return 1.0, 0
    zp = np.round((qmin + qmax) / 2.0) if symmetric else np.round(dtype(qmin) - rmin / scale)
    return float(scale), int(np.clip(zp, qmin, qmax))


def wrong_quantize(x, scale, zero_point, qmin, qmax) -> np.ndarray:
    """The formula some articles print, round((x - z) / s): mixes real units and integer units."""
    return np.clip(np.round((np.asarray(x, np.float64) - np.asarray(zero_point, np.float64))
                            / np.asarray(scale, np.float64)), qmin, qmax).astype(np.int32)


def _describe(got) -> str:
    if isinstance(got, np.ndarray):
        return f"an array of shape {got.shape} and dtype {got.dtype}"
    return "None" if got is None else f"a {type(got).__name__}"


def _int_array_test(name: str, got, wants: list[np.ndarray], diagnose) -> TestResult:
    """Exact integer comparison; each element may match any of the accepted references."""
    want = wants[0]
    if isinstance(got, Raised):
        return TestResult(name, False, f"your function {got.message}")
    if not isinstance(got, np.ndarray) or got.dtype.kind not in "iuf":
        return TestResult(name, False, f"expected an integer array of shape {want.shape}, got {_describe(got)}")
    if got.shape != want.shape:
        return TestResult(name, False, f"expected shape {want.shape}, got shape {got.shape}")
    g = got.astype(np.float64)
    ok = np.zeros(want.shape, dtype=bool)
    for w in wants:
        ok |= g == w
    if ok.all():
        return TestResult(name, True, f"all {want.size} values exact")
    idx = tuple(int(i) for i in np.argwhere(~ok)[0])
    got_v = g[idx]
    got_s = f"{got_v:g}" if np.isfinite(got_v) else str(got_v)
    msg = f"at index {idx} expected {int(want[idx])}, got {got_s} ({int((~ok).sum())} of {want.size} values off)"
    extra = diagnose(got)
    return TestResult(name, False, msg + (f" — {extra}" if extra else ""))


def _dtype_test(name: str, outputs, want: str) -> TestResult:
    bad = [(i, o.dtype) for i, o in enumerate(outputs) if isinstance(o, np.ndarray) and str(o.dtype) != want]
    others = [i for i, o in enumerate(outputs) if not isinstance(o, np.ndarray)]
    if others:
        return TestResult(name, False, f"case {others[0]} did not return a numpy array")
    if bad:
        i, dt = bad[0]
        return TestResult(name, False, f"expected dtype {want}, got {dt} in case {i} (end with .astype(np.{want}))")
    return TestResult(name, True, f"every result is {want}")


# ---------------------------------------------------------------- 06.quantize


def _quantize_cases(seed: int) -> list[tuple]:
    rng = np.random.default_rng(seed + 601)
    halves = np.array([0.25, 0.75, 1.25, -0.25, -0.75, -1.25, 0.0, 2.25], dtype=np.float32)
    s_u8 = np.float32(4 / 255)
    outside = np.concatenate([rng.uniform(-1, 3, 20), [-5.0, -1.2, 3.3, 10.0]]).astype(np.float32)
    s_i8 = np.float32(rng.uniform(0.01, 0.03))
    normal = rng.normal(0, 1.2, size=(5, 7)).astype(np.float32)
    w = rng.normal(0, 1, size=(4, 9)).astype(np.float32) * np.array([[0.1], [1.0], [3.0], [0.02]], np.float32)
    s_ch = (np.abs(w).max(axis=1, keepdims=True) / 127).astype(np.float32)
    z_ch = rng.integers(-3, 4, size=(4, 1)).astype(np.int32)
    return [
        (halves, np.float32(0.5), 0, -128, 127),
        (outside, s_u8, 64, 0, 255),
        (normal, s_i8, int(rng.integers(-30, -10)), -128, 127),
        (w, s_ch, z_ch, -128, 127),
        (np.full((3, 3), 0.7, np.float32), np.float32(0.7 / 255), -128, -128, 127),
        (rng.normal(0, 1, size=(12,)).astype(np.float32), np.float32(0.25), 1, -8, 7),
    ]


_QUANTIZE_NAMES = ["halves round to even (int8)", "uint8, zero point 64, values outside the range",
                   "int8, nonzero zero point", "per-channel scales and zero points (broadcasting)",
                   "constant tensor", "4-bit range [-8, 7]"]


def _quantize_diagnose(args):
    x, s, z, qmin, qmax = args

    def diagnose(got):
        g = got.astype(np.float64)
        if np.array_equal(g, wrong_quantize(x, s, z, qmin, qmax)):
            return ("that is round((x - z) / s), the formula some articles print: the zero point is an integer on "
                    "the q axis, add it after rounding: round(x / s) + z")
        raw = np.round(np.asarray(x, np.float64) / np.float64(s)) + np.asarray(z, np.float64)
        if np.array_equal(g, raw):
            return f"the values are not clamped to [{qmin}, {qmax}]"
        away = np.clip(np.sign(x) * np.floor(np.abs(np.asarray(x, np.float64) / np.float64(s)) + 0.5) + z, qmin, qmax)
        if np.array_equal(g, away):
            return "ties (x/s exactly halfway) must round to even like np.round, not away from zero"
        return ""
    return diagnose


@judge("06.quantize", cases=_quantize_cases)
def _quantize(outputs, seed):
    cases = _quantize_cases(seed)
    for name, args, got in zip(_QUANTIZE_NAMES, cases, outputs):
        yield _int_array_test(name, got, [quantize_ref(*args), quantize_ref(*args, wide=True)],
                              _quantize_diagnose(args))
    yield _dtype_test("returns int32", outputs, "int32")


# ---------------------------------------------------------------- 06.dequantize


def _dequantize_cases(seed: int) -> list[tuple]:
    rng = np.random.default_rng(seed + 602)
    q_i8 = np.concatenate([[-128, 127, 0], rng.integers(-128, 128, 13)]).astype(np.int8)
    q_u8 = np.concatenate([[0, 255, 128], rng.integers(0, 256, 13)]).astype(np.uint8).reshape(4, 4)
    q_ch = rng.integers(-128, 128, size=(3, 5)).astype(np.int8)
    s_ch = rng.uniform(0.001, 0.1, size=(3, 1)).astype(np.float32)
    z_ch = np.array([[0], [5], [-7]], dtype=np.int8)
    return [
        (q_i8, np.float32(0.05), 10),
        (q_u8, np.float32(rng.uniform(0.01, 0.05)), 128),
        (q_ch, s_ch, z_ch),
        (np.array([[3, 3], [3, 3]], dtype=np.int32), np.float32(0.125), 3),
    ]


_DEQUANTIZE_NAMES = ["int8 with zero point 10 (includes -128)", "uint8 with zero point 128",
                     "per-channel (broadcasting)", "int32 input, all equal to the zero point"]


@judge("06.dequantize", cases=_dequantize_cases)
def _dequantize(outputs, seed):
    for name, args, got in zip(_DEQUANTIZE_NAMES, _dequantize_cases(seed), outputs):
        t = expect_close(name, got, dequantize_ref(*args), rtol=1e-6, atol=1e-7)
        if not t.passed and isinstance(got, np.ndarray) and got.shape == np.shape(args[0]):
            q, s, z = args
            wrapped = ((q - np.asarray(z).astype(q.dtype)).astype(np.float64)) * np.asarray(s, np.float64)
            if np.allclose(got, wrapped, rtol=1e-6, atol=1e-7):
                t.message += (f" — q - zero_point was computed in {q.dtype}, where it wraps around; "
                              "convert q to int32 or float32 first")
        yield t
    yield _dtype_test("returns float32", outputs, "float32")


# ---------------------------------------------------------------- 06.choose_qparams


def _qparams_cases(seed: int) -> list[tuple]:
    rng = np.random.default_rng(seed + 603)
    return [
        (rng.uniform(-1.0, 3.0, 200).astype(np.float32), 0, 255, False),
        (rng.normal(0, 0.5, (8, 8)).astype(np.float32), -128, 127, True),
        (rng.uniform(0.5, 6.0, 50).astype(np.float32), 0, 255, False),
        (rng.uniform(-4.0, -0.5, 50).astype(np.float32), -128, 127, False),
        (np.full((4, 4), 2.5, np.float32), -128, 127, False),
        (np.zeros((3, 3), np.float32), 0, 255, False),
        (rng.normal(0.3, 1.0, 64).astype(np.float32), 0, 255, True),
        (rng.normal(0, 1.0, 64).astype(np.float32), -8, 7, True),
    ]


_QPARAMS_NAMES = ["uint8 asymmetric", "int8 symmetric", "all positive (range must include 0)",
                  "all negative (range must include 0)", "constant tensor 2.5", "all zeros (no division by zero)",
                  "uint8 symmetric", "4-bit symmetric [-8, 7]"]


def _as_number(v, kind: str):
    """A float or int from a Python number or a 0-d/size-1 numpy array of the right kind; else None."""
    if isinstance(v, np.ndarray):
        if v.size != 1 or v.dtype.kind not in ("iu" if kind == "int" else "iuf"):
            return None
        v = v.reshape(()).item()
    if isinstance(v, bool):
        return None
    if kind == "int":
        return v if isinstance(v, int) else None
    return float(v) if isinstance(v, (int, float)) else None


@judge("06.choose_qparams", cases=_qparams_cases)
def _choose_qparams(outputs, seed):
    for name, args, got in zip(_QPARAMS_NAMES, _qparams_cases(seed), outputs):
        refs = {choose_qparams_ref(*args), choose_qparams_ref(*args, dtype=np.float32)}
        scale_want, zp_want = choose_qparams_ref(*args)
        if isinstance(got, Raised):
            yield TestResult(name, False, f"your function {got.message}")
            continue
        if not isinstance(got, list) or len(got) != 2:
            yield TestResult(name, False, f"expected a tuple (scale, zero_point), got {_describe(got)}"
                             + (f" of length {len(got)}" if isinstance(got, list) else ""))
            continue
        scale, zp = _as_number(got[0], "float"), _as_number(got[1], "int")
        problems = []
        if scale is None:
            problems.append(f"scale must be a number, got {_describe(got[0])}")
        elif not np.isfinite(scale) or scale <= 0:
            problems.append(f"scale must be a positive finite number, got {scale!r}"
                            + (" (an all-zero tensor needs scale 1.0)" if not np.any(args[0]) else ""))
        elif not any(np.isclose(scale, s, rtol=1e-5, atol=0) for s, _ in refs):
            problems.append(f"expected scale {scale_want:.6g}, got {scale:.6g}")
        if zp is None:
            problems.append(f"zero_point must be an int (use int(...)), got {got[1]!r}")
        elif zp not in {z for _, z in refs}:
            problems.append(f"expected zero_point {zp_want}, got {zp}")
        yield TestResult(name, not problems, "; ".join(problems) if problems else
                         f"scale {scale:.6g}, zero_point {zp}")


# ---------------------------------------------------------------- 06.calibration

#: the quantized CNN must keep at least this accuracy: fp32 accuracy minus two points. One point is
#: 4.5 of the 450 test digits: correct readers measured 0.9-1.1 points below fp32 depending on the
#: trained weights, while a useless reader (all-zero images) loses about 14 points.
MAX_ACCURACY_DROP = 0.02
#: and be at most this share of the fp32 weights' bytes (int8 weights alone are 25%; the rest is
#: scales, zero points, int32 biases and the graph)
MAX_SIZE_SHARE = 0.35
_DYNAMIC_OPS = {"DynamicQuantizeLinear", "ConvInteger", "MatMulInteger", "DynamicQuantizeMatMul"}
_STATIC_OPS = {"QuantizeLinear", "QLinearConv", "QLinearMatMul", "QGemm"}
_cache: dict = {}


def fp32_reference() -> dict:
    """Accuracy on the test digits and fp32 weight bytes of the course CNN, rebuilt by the judge."""
    if "ref" not in _cache:
        import torch

        from labkit.data import digits
        from labkit.models import accuracy, trained_cnn

        model = trained_cnn(progress=False)
        d = digits()
        # BatchNorm folds into the preceding Conv at export, so only Conv and Linear parameters remain
        params = sum(p.numel() for m in model.modules() if isinstance(m, (torch.nn.Conv2d, torch.nn.Linear))
                     for p in m.parameters())
        _cache["ref"] = {"accuracy": accuracy(model, d.x_test, d.y_test), "weight_bytes": 4 * int(params)}
    return _cache["ref"]


@judge("06.calibration")
def _calibration(answer, seed):
    model, why = load_onnx(answer)
    if model is None:
        yield TestResult("loads", False, why)
        return
    ref = fp32_reference()
    ops = {n.op_type for n in model.graph.node}
    if ops & _DYNAMIC_OPS:
        yield TestResult("static quantization", False,
                         f"the model holds {sorted(ops & _DYNAMIC_OPS)}: that is dynamic quantization "
                         "(quantize_dynamic); use quantize_static with your calibration reader")
    elif not ops & _STATIC_OPS:
        yield TestResult("static quantization", False,
                         f"no QuantizeLinear or QLinear* node: this model is not quantized (ops: {sorted(ops)[:8]})")
    else:
        yield TestResult("static quantization", True, "activations are quantized with calibrated scales")
    size = len(answer.data) if isinstance(answer, OnnxBlob) else len(model.SerializeToString())
    limit = MAX_SIZE_SHARE * ref["weight_bytes"]
    share = size / ref["weight_bytes"]
    yield TestResult("size", size <= limit,
                     f"{size:,} bytes = {share:.0%} of the fp32 weights ({ref['weight_bytes']:,} bytes); "
                     + ("within" if size <= limit else "above") + f" the limit of {MAX_SIZE_SHARE:.0%}"
                     + ("" if size <= limit else ": are the weights stored as 8-bit integers?"))
    if size > 50_000_000:
        yield TestResult("accuracy", False, "the file is too large to evaluate")
        return
    from labkit.data import digits

    d = digits()
    try:
        sess = ort_session(model)
        name = sess.get_inputs()[0].name
        logits = sess.run(None, {name: d.x_test})[0]
        acc = float((np.asarray(logits).reshape(len(d.y_test), -1).argmax(axis=1) == d.y_test).mean())
    except Exception as e:
        msg = " ".join(str(e).split())[:200]
        yield TestResult("accuracy", False, f"ONNX Runtime could not run it on the {len(d.x_test)} test digits "
                                            f"as one batch (a dynamic batch dimension is needed): {msg}")
        return
    floor = ref["accuracy"] - MAX_ACCURACY_DROP
    yield TestResult("accuracy", acc >= floor - 1e-12,
                     f"test accuracy {acc:.2%} vs fp32 {ref['accuracy']:.2%} (at least {floor:.2%} needed)"
                     + ("" if acc >= floor - 1e-12 else
                        ": did the reader feed the same [0, 1] images the model sees at inference, and enough of them?"))


# ---------------------------------------------------------------- 06.quiz

quiz_key("06.quiz", {
    "q1": ("a", "Weight-heavy MatMul models gain most from 4x smaller weights, and dynamic needs no calibration data."),
    "q2": ("b", "Static quantization fixes every scale ahead of time, so the runtime fuses QLinearConv kernels with no per-inference range computation."),
    "q3": ("b", "z lives on the integer axis: divide by s, round, then shift by z and clamp to the type's range."),
    "q4": ("b", "DynamicQuantizeLinear runs before each quantized layer: extra passes over the data that a small CNN cannot amortize."),
})
