"""Blind corpus round 3, lesson 00 (written without seeing the judges).

Classes changed by the lead after reading the prompt: blind3-relu-where-gt (Right: NaN is not in the prompt
(positive kept, negative to 0): NaN -> 0 is allowed); blind3-relu-fmax (Right: NaN is not in the prompt: NaN
-> 0 is allowed); blind3-relu-torch (Right: the prompt asks relu(x) on numpy arrays, same shape and dtype; a
library's relu is a form it allows).
"""
import atexit as _atexit, shutil as _shutil, tempfile as _tempfile  # noqa: E401
_BLIND3_CACHE = __import__("pathlib").Path(_tempfile.mkdtemp(prefix="blind3-cache-"))  # per process: no race
_atexit.register(_shutil.rmtree, _BLIND3_CACHE, True)
import numpy as np

from corpus import Right, Wrong


def _relu_mask_copy(x):
    out = np.array(x, copy=True)
    out[out < 0] = 0  # NaN < 0 is False: NaN stays NaN
    return out


def _relu_where(x):
    return np.where(x < 0, np.zeros_like(x), x)


def _relu_clip(x):
    return np.asarray(np.clip(x, 0, None)).astype(x.dtype, copy=False)


def _relu_copyto(x):
    y = np.empty_like(x)
    y[...] = x
    np.copyto(y, np.zeros((), x.dtype), where=np.less(x, 0))
    return y


def _relu_abs(x):  # the lesson's own demonstration
    return np.abs(x)


def _relu_in_place(x):
    x[x < 0] = 0
    return x


def _relu_out_x(x):
    return np.maximum(x, 0, out=x)


def _relu_float_zero(x):  # 0.0: int inputs come back as float64
    return np.maximum(x, 0.0)


def _relu_times_mask(x):  # -inf * 0 = nan
    return x * (x > 0)


def _relu_ravel(x):
    return np.maximum(x.ravel(), 0)


def _relu_where_gt(x):  # np.where(x > 0, x, 0): NaN becomes 0
    return np.where(x > 0, x, 0).astype(x.dtype)


def _relu_fmax(x):  # fmax ignores NaN: NaN -> 0
    return np.fmax(x, np.zeros((), x.dtype))


def _relu_leaky(x):
    return np.where(x < 0, (0.01 * x).astype(x.dtype), x)


def _relu6(x):
    return np.clip(x, 0, 6).astype(x.dtype)


def _relu_half_abs(x):  # (x + |x|) / 2: float64 for ints, inf for huge floats
    return (x + np.abs(x)) / 2


def _relu_minus_min(x):  # x - min(x, 0): -inf - -inf = nan
    return x - np.minimum(x, 0)


def _relu_float32(x):  # "ONNX is float32"
    return np.maximum(x, 0).astype(np.float32)


def _relu_python_max(x):  # element by element, Python max: dtype lost
    return np.array([max(v, 0) for v in x.reshape(-1).tolist()]).reshape(x.shape)


def _relu_rows(x):  # written for a 2-D array
    return np.array([[max(v, 0) for v in row] for row in x], dtype=x.dtype)


def _relu_torch(x):  # the library does it
    import torch
    return torch.relu(torch.from_numpy(np.ascontiguousarray(x))).numpy().copy()


CORPUS = {
    "00.relu": [
        Right("blind3-relu-mask-copy", answer=_relu_mask_copy),
        Right("blind3-relu-where", answer=_relu_where),
        Right("blind3-relu-clip", answer=_relu_clip),
        Right("blind3-relu-copyto", answer=_relu_copyto),
        Wrong("blind3-relu-abs", answer=_relu_abs),
        Wrong("blind3-relu-in-place", answer=_relu_in_place, outputs_wrong=False),
        Wrong("blind3-relu-out-x", answer=_relu_out_x, outputs_wrong=False),
        Wrong("blind3-relu-float-zero", answer=_relu_float_zero, outputs_wrong=False),
        Wrong("blind3-relu-times-mask", answer=_relu_times_mask),
        Wrong("blind3-relu-ravel", answer=_relu_ravel, outputs_wrong=False),
        Right("blind3-relu-where-gt", answer=_relu_where_gt),
        Right("blind3-relu-fmax", answer=_relu_fmax),
        Wrong("blind3-relu-leaky", answer=_relu_leaky),
        Wrong("blind3-relu6", answer=_relu6),
        Wrong("blind3-relu-half-abs", answer=_relu_half_abs),
        Wrong("blind3-relu-minus-min", answer=_relu_minus_min),
        Wrong("blind3-relu-float32", answer=_relu_float32),
        Wrong("blind3-relu-python-max", answer=_relu_python_max, outputs_wrong=False),
        Wrong("blind3-relu-rows", answer=_relu_rows),
        Right("blind3-relu-torch", answer=_relu_torch),
    ],
}
