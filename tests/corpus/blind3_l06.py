"""Blind corpus round 3, lesson 06 (written without seeing the judges).

Classes changed by the lead after reading the prompt: blind3-cal-uint8 (values right, form wrong: the scales
are calibrated right; uint8 is a type the prompt excludes).
"""
import atexit as _atexit, shutil as _shutil, tempfile as _tempfile  # noqa: E401
_BLIND3_CACHE = __import__("pathlib").Path(_tempfile.mkdtemp(prefix="blind3-cache-"))  # per process: no race
_atexit.register(_shutil.rmtree, _BLIND3_CACHE, True)
from corpus import Right, Wrong

import numpy as np


# ------------------------------------------------------------------ 06.dequantize

def deq_right_int32(q, scale, zero_point):
    return (np.asarray(scale) * (np.asarray(q).astype(np.int32) - np.asarray(zero_point).astype(np.int32))).astype(np.float32)


def deq_right_float_sub(q, scale, zero_point):
    """Everything in float64 (exact for these integers), cast at the end."""
    diff = np.asarray(q, dtype=np.float64) - np.asarray(zero_point, dtype=np.float64)
    return np.multiply(diff, np.asarray(scale, dtype=np.float64)).astype(np.float32)


def deq_right_subtract_dtype(q, scale, zero_point):
    """np.subtract with an explicit wide dtype; out into a fresh float32 array."""
    d = np.subtract(q, zero_point, dtype=np.int64)
    out = np.empty(np.broadcast_shapes(d.shape, np.shape(scale)), dtype=np.float32)
    np.multiply(d, scale, out=out, casting="unsafe")
    return out


def deq_wrong_wraps(q, scale, zero_point):
    """Subtracts in q's own dtype: int8/uint8 wrap around."""
    q = np.asarray(q)
    return (scale * (q - np.asarray(zero_point).astype(q.dtype))).astype(np.float32)


def deq_wrong_float64(q, scale, zero_point):
    return np.asarray(scale, np.float64) * (np.asarray(q).astype(np.int32) - zero_point)


def deq_wrong_order(q, scale, zero_point):
    """scale * q - zero_point."""
    return (np.asarray(scale) * np.asarray(q).astype(np.float32) - zero_point).astype(np.float32)


def deq_wrong_plus(q, scale, zero_point):
    return (np.asarray(scale) * (np.asarray(q).astype(np.int32) + zero_point)).astype(np.float32)


def deq_wrong_divide(q, scale, zero_point):
    return ((np.asarray(q).astype(np.int32) - zero_point) / np.asarray(scale)).astype(np.float32)


def deq_wrong_int8_cast(q, scale, zero_point):
    """Casts to int8 'to be signed' first: uint8 codes above 127 wrap."""
    return (np.asarray(scale) * (np.asarray(q).astype(np.int8).astype(np.int32) - zero_point)).astype(np.float32)


def deq_wrong_no_zero_point(q, scale, zero_point):
    return (np.asarray(scale) * np.asarray(q).astype(np.float32)).astype(np.float32)


def deq_wrong_inplace(q, scale, zero_point):
    """Right values; an int32 q is shifted in place (the caller's array changes)."""
    q = np.asarray(q)
    q = q.astype(np.int32, copy=False)
    q -= np.asarray(zero_point, dtype=np.int32)
    return (q * np.asarray(scale, np.float32)).astype(np.float32)


def deq_wrong_row_broadcast(q, scale, zero_point):
    """Per-channel parameters laid along the last axis."""
    s = np.asarray(scale).reshape(-1) if np.ndim(scale) else scale
    z = np.asarray(zero_point).reshape(-1) if np.ndim(zero_point) else zero_point
    return (s * (np.asarray(q).astype(np.int32) - z)).astype(np.float32)


def deq_wrong_float16(q, scale, zero_point):
    return (np.float16(1) * np.asarray(scale, np.float16) * (np.asarray(q).astype(np.int32) - zero_point)).astype(np.float16)


# ------------------------------------------------------------------ 06.quantize

def q_right_plain(x, scale, zero_point, qmin, qmax):
    y = np.round(np.asarray(x, np.float32) / np.asarray(scale, np.float32)) + np.asarray(zero_point)
    return np.clip(y, qmin, qmax).astype(np.int32)


def q_right_rint_f64(x, scale, zero_point, qmin, qmax):
    """float64 division, np.rint, minimum/maximum."""
    r = np.rint(np.asarray(x, np.float64) / np.asarray(scale, np.float64))
    r = r.astype(np.int64) + np.asarray(zero_point, np.int64)
    return np.minimum(np.maximum(r, qmin), qmax).astype(np.int32)


def q_right_python_round(x, scale, zero_point, qmin, qmax):
    """Python's round (also halves to even) on each float32 quotient."""
    quot = np.asarray(x, np.float32) / np.asarray(scale, np.float32)
    zp = np.broadcast_to(np.asarray(zero_point), quot.shape)
    out = np.empty(quot.shape, np.int32)
    for idx in np.ndindex(quot.shape):
        v = int(round(float(quot[idx]))) + int(zp[idx])
        out[idx] = min(max(v, qmin), qmax)
    return out


def q_right_divmod(x, scale, zero_point, qmin, qmax):
    """Rounds half to even by hand: floor, then looks at the remainder."""
    v = np.asarray(x, np.float32) / np.asarray(scale, np.float32)
    f = np.floor(v)
    frac = v - f
    up = (frac > 0.5) | ((frac == 0.5) & (np.mod(f, 2) == 1))
    r = f + up
    return np.clip(r + zero_point, qmin, qmax).astype(np.int32)


def q_wrong_half_up(x, scale, zero_point, qmin, qmax):
    return np.clip(np.floor(np.asarray(x, np.float32) / scale + 0.5) + zero_point, qmin, qmax).astype(np.int32)


def q_wrong_trunc(x, scale, zero_point, qmin, qmax):
    return np.clip((np.asarray(x, np.float32) / scale).astype(np.int32) + zero_point, qmin, qmax).astype(np.int32)


def q_wrong_no_clip(x, scale, zero_point, qmin, qmax):
    return (np.round(np.asarray(x, np.float32) / scale) + zero_point).astype(np.int32)


def q_wrong_clip_before_zp(x, scale, zero_point, qmin, qmax):
    return (np.clip(np.round(np.asarray(x, np.float32) / scale), qmin, qmax) + zero_point).astype(np.int32)


def q_wrong_small_dtype(x, scale, zero_point, qmin, qmax):
    """Right codes, stored in the 'natural' type of the range (uint8 or int8), not int32."""
    q = np.clip(np.round(np.asarray(x, np.float32) / scale) + zero_point, qmin, qmax)
    return q.astype(np.uint8 if qmin >= 0 else np.int8)


def q_wrong_multiply(x, scale, zero_point, qmin, qmax):
    return np.clip(np.round(np.asarray(x, np.float32) * scale) + zero_point, qmin, qmax).astype(np.int32)


def q_wrong_scalar_params(x, scale, zero_point, qmin, qmax):
    """Takes the first scale and zero point: per-channel parameters ignored."""
    s = float(np.asarray(scale).flat[0])
    z = int(np.asarray(zero_point).flat[0])
    return np.clip(np.round(np.asarray(x, np.float32) / s) + z, qmin, qmax).astype(np.int32)


def q_wrong_int8_range(x, scale, zero_point, qmin, qmax):
    return np.clip(np.round(np.asarray(x, np.float32) / scale) + zero_point, -128, 127).astype(np.int32)


def q_wrong_inplace(x, scale, zero_point, qmin, qmax):
    """Right codes; divides the caller's x in place."""
    x /= np.asarray(scale, np.float32)
    np.round(x, out=x)
    return np.clip(x + zero_point, qmin, qmax).astype(np.int32)


def q_wrong_onnx_quantizelinear(x, scale, zero_point, qmin, qmax):
    """onnx's own QuantizeLinear does the rounding (reference evaluator), clipped to the range afterwards."""
    from onnx import TensorProto, helper, numpy_helper
    from onnx.reference import ReferenceEvaluator
    x = np.asarray(x, np.float32)
    s = np.broadcast_to(np.asarray(scale, np.float32), x.shape[:1] + (1,) * (x.ndim - 1)) if np.ndim(scale) else None
    zdt = np.uint8 if qmin >= 0 else np.int8
    if s is not None and np.size(scale) > 1:
        sc = np.asarray(scale, np.float32).reshape(-1)
        zp = np.broadcast_to(np.asarray(zero_point), np.shape(scale)).reshape(-1).astype(zdt)
        attrs = {"axis": 0}
    else:
        sc = np.array(np.asarray(scale, np.float32).reshape(-1)[0])
        zp = np.array(np.asarray(zero_point).reshape(-1)[0]).astype(zdt)
        attrs = {}
    node = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], **attrs)
    g = helper.make_graph([node], "q", [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)],
                          [helper.make_tensor_value_info("q", helper.np_dtype_to_tensor_dtype(np.dtype(zdt)), None)],
                          [numpy_helper.from_array(sc, "s"), numpy_helper.from_array(zp, "z")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    q = ReferenceEvaluator(m).run(None, {"x": x})[0]
    return np.clip(q.astype(np.int32), qmin, qmax)


# ------------------------------------------------------------------ 06.choose_qparams

def cq_right_plain(x, qmin, qmax, symmetric):
    x = np.asarray(x, np.float32)
    rmin = min(float(x.min()), 0.0) if x.size else 0.0
    rmax = max(float(x.max()), 0.0) if x.size else 0.0
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


def cq_right_numpy_scalars(x, qmin, qmax, symmetric):
    """float32 numpy scalars throughout, as compute_scale_zp computes."""
    x = np.asarray(x, dtype=np.float32)
    lo = np.minimum(x.min(), np.float32(0))
    hi = np.maximum(x.max(), np.float32(0))
    lo_q, hi_q = np.float32(qmin), np.float32(qmax)
    if symmetric:
        hi = np.maximum(np.abs(lo), np.abs(hi))
        lo = -hi
        if qmin < 0:
            lo_q = -hi_q
    scale = (hi - lo) / (hi_q - lo_q)
    if scale == 0:
        return np.float32(1.0), np.int32(0)
    if symmetric:
        zp = np.round((lo_q + hi_q) / np.float32(2.0))
    else:
        zp = np.round(lo_q - lo / scale)
    return scale.astype(np.float32), zp.astype(np.int32)


def cq_right_branchy(x, qmin, qmax, symmetric):
    """Written out case by case, Python floats."""
    flat = [float(v) for v in np.ravel(x)]
    lo, hi = min(flat + [0.0]), max(flat + [0.0])
    if lo == hi == 0.0:
        return 1.0, 0
    if not symmetric:
        s = (hi - lo) / (qmax - qmin)
        return s, int(np.round(qmin - lo / s))
    m = max(-lo, hi)
    if qmin < 0:
        return (2 * m) / (2 * qmax), int(np.round((qmax - qmax) / 2))
    return (2 * m) / (qmax - qmin), int(np.round((qmin + qmax) / 2))


def cq_wrong_no_zero(x, qmin, qmax, symmetric):
    """Range not widened to include 0."""
    x = np.asarray(x, np.float32)
    rmin, rmax = float(x.min()), float(x.max())
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


def cq_wrong_int_truncates(x, qmin, qmax, symmetric):
    x = np.asarray(x, np.float32)
    rmin, rmax = min(float(x.min()), 0.0), max(float(x.max()), 0.0)
    if symmetric:
        m = max(-rmin, rmax)
        rmin, rmax = -m, m
        if qmin < 0:
            qmin = -qmax
    s = (rmax - rmin) / (qmax - qmin)
    if s == 0:
        return 1.0, 0
    return float(s), int((qmin + qmax) / 2) if symmetric else int(qmin - rmin / s)


def cq_wrong_keeps_minus128(x, qmin, qmax, symmetric):
    """Symmetric int8 over all 255 steps (qmin not raised to -127)."""
    x = np.asarray(x, np.float32)
    rmin, rmax = min(float(x.min()), 0.0), max(float(x.max()), 0.0)
    if symmetric:
        m = max(-rmin, rmax)
        rmin, rmax = -m, m
    s = (rmax - rmin) / (qmax - qmin)
    if s == 0:
        return 1.0, 0
    return float(s), int(np.round((qmin + qmax) / 2) if symmetric else np.round(qmin - rmin / s))


def cq_wrong_floor_div(x, qmin, qmax, symmetric):
    """(qmin + qmax) // 2: 127 for symmetric uint8, not round(127.5) = 128."""
    s, z = cq_right_plain(x, qmin, qmax, symmetric)
    if symmetric and np.any(np.asarray(x) != 0):
        z = (qmin + qmax) // 2 if qmin >= 0 else 0
    return s, int(z)


def cq_wrong_zero_scale(x, qmin, qmax, symmetric):
    """No guard: an all-zero tensor gives scale 0 (and a nan zero point, returned as 0)."""
    x = np.asarray(x, np.float32)
    rmin, rmax = min(float(x.min()), 0.0), max(float(x.max()), 0.0)
    if symmetric:
        m = max(-rmin, rmax)
        rmin, rmax = -m, m
        if qmin < 0:
            qmin = -qmax
    s = (rmax - rmin) / (qmax - qmin)
    with np.errstate(all="ignore"):
        z = np.round((qmin + qmax) / 2) if symmetric else np.round(qmin - rmin / s) if s else 0
    return float(s), int(z)


def cq_wrong_max_only(x, qmin, qmax, symmetric):
    """Symmetric m from the maximum only (negative extremes ignored)."""
    x = np.asarray(x, np.float32)
    rmin, rmax = min(float(x.min()), 0.0), max(float(x.max()), 0.0)
    if symmetric:
        m = rmax
        rmin, rmax = -m, m
        if qmin < 0:
            qmin = -qmax
    s = (rmax - rmin) / (qmax - qmin)
    if s == 0:
        return 1.0, 0
    return float(s), int(np.round((qmin + qmax) / 2) if symmetric else np.round(qmin - rmin / s))


def cq_wrong_no_qmin(x, qmin, qmax, symmetric):
    """Asymmetric zero point round(-rmin / s), qmin forgotten (right only for uint8)."""
    x = np.asarray(x, np.float32)
    rmin, rmax = min(float(x.min()), 0.0), max(float(x.max()), 0.0)
    if symmetric:
        m = max(-rmin, rmax)
        rmin, rmax = -m, m
        if qmin < 0:
            qmin = -qmax
    s = (rmax - rmin) / (qmax - qmin)
    if s == 0:
        return 1.0, 0
    return float(s), int(np.round((qmin + qmax) / 2) if symmetric else np.round(-rmin / s))


def cq_wrong_swapped(x, qmin, qmax, symmetric):
    s, z = cq_right_plain(x, qmin, qmax, symmetric)
    return z, s


def cq_wrong_float_zp(x, qmin, qmax, symmetric):
    """Right values, the zero point left as np.round's float."""
    s, z = cq_right_plain(x, qmin, qmax, symmetric)
    return s, float(z)


def cq_wrong_ort(x, qmin, qmax, symmetric):
    """ONNX Runtime's own compute_scale_zp does the whole job."""
    from onnxruntime.quantization.quant_utils import compute_scale_zp
    x = np.asarray(x, np.float32)
    rmin = np.array(x.min(), np.float32)
    rmax = np.array(x.max(), np.float32)
    if symmetric and qmin < 0:
        qmin = -qmax
    z, s = compute_scale_zp(rmin, rmax, np.array(qmin, np.int32), np.array(qmax, np.int32), symmetric=symmetric)
    return float(s), int(z)


# ------------------------------------------------------------------ 06.calibration

def _make_reader_class():
    from onnxruntime.quantization import CalibrationDataReader

    class DigitsReader(CalibrationDataReader):
        def __init__(self, images, input_name="image", batch_size=64):
            self.images = np.asarray(images, np.float32)
            self.input_name = input_name
            self.batch_size = int(batch_size)
            self.pos = 0

        def get_next(self):
            if self.pos >= len(self.images):
                return None
            batch = self.images[self.pos:self.pos + self.batch_size]
            self.pos += self.batch_size
            return {self.input_name: np.ascontiguousarray(batch, dtype=np.float32)}

        def rewind(self):
            self.pos = 0

    return DigitsReader


def _static(model_path, reader, tmpdir, **kw):
    import onnx
    from onnxruntime.quantization import QuantFormat, quantize_static
    from pathlib import Path
    out = Path(tmpdir) / "static_int8.onnx"
    args = dict(quant_format=QuantFormat.QDQ, per_channel=True)
    args.update(kw)
    quantize_static(str(model_path), str(out), reader, **args)
    return onnx.load(str(out))


def _input_name(model_path):
    import onnx
    m = onnx.load(str(model_path), load_external_data=False)
    init = {i.name for i in m.graph.initializer}
    return [i.name for i in m.graph.input if i.name not in init][0]


def cal_right_plain(model_path, images):
    import tempfile
    Reader = _make_reader_class()
    with tempfile.TemporaryDirectory() as d:
        return _static(model_path, Reader(images, _input_name(model_path)), d)


def cal_right_generator(model_path, images):
    """A reader built on an iterator; every option spelled out; the input name from an ORT session."""
    import tempfile
    import onnxruntime as ort
    from onnxruntime.quantization import CalibrationDataReader, CalibrationMethod, QuantType

    class IterReader(CalibrationDataReader):
        def __init__(self, images, input_name="image", batch_size=64):
            self._x, self._name, self._bs = images, input_name, batch_size
            self.rewind()

        def rewind(self):
            self._it = iter(range(0, len(self._x), self._bs))

        def get_next(self):
            start = next(self._it, None)
            if start is None:
                return None
            return {self._name: np.asarray(self._x[start:start + self._bs], dtype=np.float32)}

    name = ort.InferenceSession(str(model_path), providers=["CPUExecutionProvider"]).get_inputs()[0].name
    with tempfile.TemporaryDirectory() as d:
        return _static(model_path, IterReader(images, name, 17), d, activation_type=QuantType.QInt8,
                       weight_type=QuantType.QInt8, calibrate_method=CalibrationMethod.MinMax)


def cal_right_one_by_one(model_path, images):
    """One image per batch (n <= batch_size), a temporary folder from mkdtemp."""
    import tempfile
    Reader = _make_reader_class()
    return _static(model_path, Reader(images, _input_name(model_path), batch_size=1), tempfile.mkdtemp())


def cal_wrong_dynamic(model_path, images):
    import tempfile
    import onnx
    from pathlib import Path
    from onnxruntime.quantization import QuantType, quantize_dynamic
    out = Path(tempfile.mkdtemp()) / "dyn.onnx"
    quantize_dynamic(str(model_path), str(out), weight_type=QuantType.QInt8)
    return onnx.load(str(out))


def cal_wrong_per_tensor(model_path, images):
    import tempfile
    Reader = _make_reader_class()
    return _static(model_path, Reader(images, _input_name(model_path)), tempfile.mkdtemp(), per_channel=False)


def cal_wrong_qoperator(model_path, images):
    import tempfile
    from onnxruntime.quantization import QuantFormat
    Reader = _make_reader_class()
    return _static(model_path, Reader(images, _input_name(model_path)), tempfile.mkdtemp(),
                   quant_format=QuantFormat.QOperator)


def cal_wrong_uint8(model_path, images):
    import tempfile
    from onnxruntime.quantization import QuantType
    Reader = _make_reader_class()
    return _static(model_path, Reader(images, _input_name(model_path)), tempfile.mkdtemp(),
                   activation_type=QuantType.QUInt8)


def cal_wrong_first_batch_only(model_path, images):
    """get_next hands out the first batch, then None: most images never seen."""
    import tempfile
    from onnxruntime.quantization import CalibrationDataReader
    name = _input_name(model_path)

    class Once(CalibrationDataReader):
        def __init__(self):
            self.done = False

        def get_next(self):
            if self.done:
                return None
            self.done = True
            return {name: np.asarray(images[:8], np.float32)}

        def rewind(self):
            self.done = False

    return _static(model_path, Once(), tempfile.mkdtemp())


def cal_wrong_drops_last(model_path, images):
    """Only full batches: the last partial batch is dropped."""
    import tempfile
    from onnxruntime.quantization import CalibrationDataReader
    name = _input_name(model_path)

    class Full(CalibrationDataReader):
        def __init__(self, bs=16):
            self.bs, self.i = bs, 0

        def get_next(self):
            if self.i + self.bs > len(images):
                return None
            b = images[self.i:self.i + self.bs]
            self.i += self.bs
            return {name: np.asarray(b, np.float32)}

        def rewind(self):
            self.i = 0

    return _static(model_path, Full(), tempfile.mkdtemp())


def cal_wrong_course_digits(model_path, images):
    """Calibrates on the course's training digits instead of the images given."""
    import tempfile
    import labkit
    Reader = _make_reader_class()
    d = labkit.digits()
    return _static(model_path, Reader(d.x_train[:300], _input_name(model_path)), tempfile.mkdtemp())


def cal_wrong_hardcoded_name(model_path, images):
    import tempfile
    Reader = _make_reader_class()
    return _static(model_path, Reader(images), tempfile.mkdtemp())


def cal_wrong_rescaled(model_path, images):
    """Divides the already-scaled images by 16 again."""
    import tempfile
    Reader = _make_reader_class()
    return _static(model_path, Reader(np.asarray(images) / 16.0, _input_name(model_path)), tempfile.mkdtemp())


def cal_wrong_entropy(model_path, images):
    import tempfile
    from onnxruntime.quantization import CalibrationMethod
    Reader = _make_reader_class()
    return _static(model_path, Reader(images, _input_name(model_path)), tempfile.mkdtemp(),
                   calibrate_method=CalibrationMethod.Entropy)


def cal_wrong_path(model_path, images):
    """Returns the written file's path, not the loaded model."""
    import tempfile
    from pathlib import Path
    from onnxruntime.quantization import QuantFormat, quantize_static
    Reader = _make_reader_class()
    out = Path(tempfile.mkdtemp()) / "q.onnx"
    quantize_static(str(model_path), str(out), Reader(images, _input_name(model_path)),
                    quant_format=QuantFormat.QDQ, per_channel=True)
    return str(out)


def cal_wrong_random_data(model_path, images):
    """Calibrates on random uniform noise of the images' shape (the data given never used)."""
    import tempfile
    Reader = _make_reader_class()
    noise = np.random.default_rng(0).random(np.shape(images)).astype(np.float32) * 2 - 0.5
    return _static(model_path, Reader(noise, _input_name(model_path)), tempfile.mkdtemp())


CORPUS = {
    "06.dequantize": [
        Right("blind3-deq-int32", answer=deq_right_int32),
        Right("blind3-deq-float64-exact", answer=deq_right_float_sub),
        Right("blind3-deq-subtract-dtype", answer=deq_right_subtract_dtype),
        Wrong("blind3-deq-wraps", answer=deq_wrong_wraps),
        Wrong("blind3-deq-float64-result", answer=deq_wrong_float64, outputs_wrong=False),
        Wrong("blind3-deq-order", answer=deq_wrong_order),
        Wrong("blind3-deq-plus-zp", answer=deq_wrong_plus),
        Wrong("blind3-deq-divide", answer=deq_wrong_divide),
        Wrong("blind3-deq-int8-cast", answer=deq_wrong_int8_cast),
        Wrong("blind3-deq-no-zero-point", answer=deq_wrong_no_zero_point),
        Wrong("blind3-deq-inplace", answer=deq_wrong_inplace, outputs_wrong=False),
        Wrong("blind3-deq-row-broadcast", answer=deq_wrong_row_broadcast),
        Wrong("blind3-deq-float16", answer=deq_wrong_float16),
    ],
    "06.quantize": [
        Right("blind3-q-plain", answer=q_right_plain),
        Right("blind3-q-rint-f64", answer=q_right_rint_f64),
        Right("blind3-q-python-round", answer=q_right_python_round),
        Right("blind3-q-hand-even", answer=q_right_divmod),
        Wrong("blind3-q-half-up", answer=q_wrong_half_up),
        Wrong("blind3-q-trunc", answer=q_wrong_trunc),
        Wrong("blind3-q-no-clip", answer=q_wrong_no_clip),
        Wrong("blind3-q-clip-before-zp", answer=q_wrong_clip_before_zp),
        Wrong("blind3-q-small-dtype", answer=q_wrong_small_dtype, outputs_wrong=False),
        Wrong("blind3-q-multiply", answer=q_wrong_multiply),
        Wrong("blind3-q-scalar-params", answer=q_wrong_scalar_params),
        Wrong("blind3-q-int8-range", answer=q_wrong_int8_range),
        Wrong("blind3-q-inplace", answer=q_wrong_inplace, outputs_wrong=False),
        Wrong("blind3-q-onnx-quantizelinear", answer=q_wrong_onnx_quantizelinear, outputs_wrong=False,
              skipped_skill=True),
    ],
    "06.choose_qparams": [
        Right("blind3-cq-plain", answer=cq_right_plain),
        Right("blind3-cq-numpy-f32", answer=cq_right_numpy_scalars),
        Right("blind3-cq-branchy", answer=cq_right_branchy),
        Wrong("blind3-cq-no-zero", answer=cq_wrong_no_zero),
        Wrong("blind3-cq-int-truncates", answer=cq_wrong_int_truncates),
        Wrong("blind3-cq-keeps-minus128", answer=cq_wrong_keeps_minus128),
        Wrong("blind3-cq-floor-div", answer=cq_wrong_floor_div),
        Wrong("blind3-cq-zero-scale", answer=cq_wrong_zero_scale),
        Wrong("blind3-cq-max-only", answer=cq_wrong_max_only),
        Wrong("blind3-cq-no-qmin", answer=cq_wrong_no_qmin),
        Wrong("blind3-cq-swapped", answer=cq_wrong_swapped),
        Wrong("blind3-cq-float-zp", answer=cq_wrong_float_zp, outputs_wrong=False),
        Wrong("blind3-cq-ort-compute-scale-zp", answer=cq_wrong_ort, outputs_wrong=False, skipped_skill=True),
    ],
    "06.calibration": [
        Right("blind3-cal-plain", answer=cal_right_plain),
        Right("blind3-cal-iterator-reader", answer=cal_right_generator),
        Right("blind3-cal-one-by-one", answer=cal_right_one_by_one),
        Wrong("blind3-cal-dynamic", answer=cal_wrong_dynamic, skipped_skill=True),
        Wrong("blind3-cal-per-tensor", answer=cal_wrong_per_tensor),
        Wrong("blind3-cal-qoperator", answer=cal_wrong_qoperator),
        Wrong("blind3-cal-uint8", answer=cal_wrong_uint8, outputs_wrong=False),
        Wrong("blind3-cal-first-batch-only", answer=cal_wrong_first_batch_only),
        Wrong("blind3-cal-drops-last", answer=cal_wrong_drops_last),
        Wrong("blind3-cal-course-digits", answer=cal_wrong_course_digits),
        Wrong("blind3-cal-hardcoded-name", answer=cal_wrong_hardcoded_name),
        Wrong("blind3-cal-rescaled", answer=cal_wrong_rescaled),
        Wrong("blind3-cal-entropy", answer=cal_wrong_entropy),
        Wrong("blind3-cal-path", answer=cal_wrong_path, outputs_wrong=False),
        Wrong("blind3-cal-random-data", answer=cal_wrong_random_data),
    ],
}
