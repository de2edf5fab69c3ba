"""Blind corpus round 13, lesson 00 (written without seeing the judges).

Truths relied on:
- Prompt 00.relu: `relu(x)` for a numpy array of ANY shape; return an array of the same shape AND dtype,
  negatives -> 0, positives kept. Truth used in my proofs: `np.maximum(x, x.dtype.type(0))` per element
  (= ONNX Relu, checked against onnx.reference on float32/float64/int8/int32 inputs).
- numpy 2.4 (NEP 50): a Python scalar is "weak", so np.maximum(int8_x, 0) stays int8 but
  np.maximum(int8_x, 0.0) becomes float64 and np.maximum(int8_x, np.float32(0)) float32.
- A ufunc on a 0-d array returns a numpy SCALAR (np.float64), not an ndarray: the obvious
  np.maximum(x, 0) gives a scalar for shape (); my Rights return real ndarrays for every shape.
Ambiguities found in the prompt:
- NaN: "keeps positive values and replaces negative ones" says nothing about NaN (np.maximum keeps
  NaN, np.fmax / `x * (x > 0)` / `np.where(x > 0, x, 0)` turn it into 0). No answer here depends on NaN.
- -0.0: `x * (x > 0)` gives -0.0 for negative floats (== 0, but a bitwise compare would differ); not used.
- "same dtype" for a 0-d input: is a numpy scalar (what np.maximum returns) an "array"? Not used.
- Whether calling a library ReLU (torch.relu, onnx.reference Relu) is allowed is not stated; not used.
"""
from corpus import Right, Wrong


# ----------------------------------------------------------------------------- Right


def right_masked_copy(x):
    # copy, then overwrite the negatives through a boolean mask (works for 0-d and empty arrays too)
    import numpy as np

    y = np.array(x, copy=True)
    y[y < 0] = 0
    return y


def right_masked_array(x):
    # numpy.ma: mask the negatives, fill the mask with 0
    import numpy as np

    x = np.asarray(x)
    return np.asarray(np.ma.masked_less(x, 0).filled(0)).reshape(x.shape).astype(x.dtype, copy=False)


def right_elementwise_loop(x):
    # plain loop over every element (np.ndindex covers any shape, 0-d and empty included)
    import numpy as np

    out = np.empty_like(np.asarray(x), order="C")
    for idx in np.ndindex(out.shape):
        v = x[idx]
        out[idx] = v if v > 0 else 0
    return out


def right_where_typed_zero(x):
    # np.where with a zero of x's own dtype, result forced back to an ndarray of x's dtype
    import numpy as np

    zero = np.zeros((), dtype=x.dtype)
    return np.asarray(np.where(x < 0, zero, x), dtype=x.dtype)


# ----------------------------------------------------------------------------- Wrong


def wrong_abs(x):
    # confuses ReLU with absolute value (the notebook's own demo mistake)
    import numpy as np

    return np.abs(x)


def wrong_float_zero(x):
    # np.maximum(x, 0.0): values right, but an integer x comes back float64 (dtype not kept)
    import numpy as np

    return np.maximum(x, 0.0)


def wrong_flattened(x):
    # forgets to restore the shape: always returns a 1-D array
    import numpy as np

    return np.maximum(np.ravel(x), 0)


def wrong_relu6(x):
    # clips at 6 (ReLU6, seen in MobileNet code) instead of leaving positives alone
    import numpy as np

    return np.clip(x, 0, 6).astype(x.dtype)


def wrong_clip_to_max(x):
    # clip(x, 0, x.max()): for an all-negative x min > max and clip returns x.max() (negative);
    # for an empty x, x.max() raises
    import numpy as np

    return np.clip(x, 0, x.max())


def wrong_abs_identity_int(x):
    # (x + |x|) // 2: integer overflow (int8 100 + 100 wraps), floats come back with x's dtype but
    # x near the float max overflows to inf
    import numpy as np

    return ((x + np.abs(x)) // 2).astype(x.dtype)


def wrong_list_comprehension(x):
    # loops over the first axis only: right for 1-D float64, float64 for other dtypes,
    # raises for 2-D ("truth value of an array is ambiguous")
    import numpy as np

    return np.array([v if v > 0 else 0 for v in x])


def wrong_subtract_min(x):
    # x - min(x, 0): -inf - (-inf) is nan, so -inf comes back as nan instead of 0
    import numpy as np

    return x - np.minimum(x, 0)


def wrong_float32_cast(x):
    # casts everything to float32 "to be safe"
    import numpy as np

    return np.maximum(np.asarray(x, dtype=np.float32), 0)


def wrong_inplace(x):
    # right values, but zeroes the caller's array in place (mutates its argument)
    import numpy as np

    np.maximum(x, 0, out=x)
    return x


def wrong_returns_list(x):
    # right values, but a (nested) Python list instead of an array
    import numpy as np

    return np.maximum(x, 0).tolist()


# ----------------------------------------------------------------------------- shortcuts


def shortcut_identity(x):
    # returns the input unchanged
    return x


def shortcut_zeros(x):
    # a constant: zeros of the right shape and dtype
    import numpy as np

    return np.zeros_like(x)


def shortcut_lying_eq(x):
    # the input, unchanged, in an ndarray subclass whose comparisons always say "equal"
    import numpy as np

    class Agreeable(np.ndarray):
        def __eq__(self, other):
            return np.ones(np.shape(self), dtype=bool)

        def __ne__(self, other):
            return np.zeros(np.shape(self), dtype=bool)

        def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
            if ufunc in (np.equal, np.isclose):
                return np.ones(np.broadcast(*inputs).shape, dtype=bool)
            if ufunc in (np.not_equal, np.greater, np.less):
                return np.zeros(np.broadcast(*inputs).shape, dtype=bool)
            inputs = tuple(np.asarray(i) if isinstance(i, Agreeable) else i for i in inputs)
            return getattr(ufunc, method)(*inputs, **kwargs)

    return np.asarray(x).view(Agreeable)


def shortcut_patch_numpy(x):
    # monkeypatches numpy's comparison helpers to always pass, then returns the input unchanged
    import numpy as np
    import numpy.testing as npt

    np.array_equal = lambda *a, **k: True
    np.allclose = lambda *a, **k: True
    np.array_equiv = lambda *a, **k: True
    npt.assert_array_equal = lambda *a, **k: None
    npt.assert_allclose = lambda *a, **k: None
    npt.assert_equal = lambda *a, **k: None
    npt.assert_array_almost_equal = lambda *a, **k: None
    return x


def shortcut_caller_frames(x):
    # looks in the callers' frames for an array called like an expected answer; else the input
    import sys

    import numpy as np

    f = sys._getframe(1)
    while f is not None:
        for name in ("expected", "want", "truth", "reference", "ref", "target", "y_true", "expect"):
            v = f.f_locals.get(name)
            if isinstance(v, np.ndarray) and v.shape == np.shape(x):
                return v.copy()
        f = f.f_back
    return x


CORPUS = {"00.relu": [
    Right("blind13-relu-masked-copy", answer=right_masked_copy),
    Right("blind13-relu-numpy-ma", answer=right_masked_array),
    Right("blind13-relu-ndindex-loop", answer=right_elementwise_loop),
    Right("blind13-relu-where-typed-zero", answer=right_where_typed_zero),
    Wrong("blind13-relu-abs", answer=wrong_abs),
    Wrong("blind13-relu-float-zero-dtype", answer=wrong_float_zero),
    Wrong("blind13-relu-flattened", answer=wrong_flattened),
    Wrong("blind13-relu-relu6", answer=wrong_relu6),
    Wrong("blind13-relu-clip-to-max", answer=wrong_clip_to_max),
    Wrong("blind13-relu-abs-identity-overflow", answer=wrong_abs_identity_int),
    Wrong("blind13-relu-list-comprehension", answer=wrong_list_comprehension),
    Wrong("blind13-relu-subtract-min-neginf", answer=wrong_subtract_min),
    Wrong("blind13-relu-float32-cast", answer=wrong_float32_cast),
    Wrong("blind13-relu-inplace", answer=wrong_inplace, outputs_wrong=False),
    Wrong("blind13-relu-returns-list", answer=wrong_returns_list, outputs_wrong=False),
    Wrong("blind13-relu-identity", answer=shortcut_identity, skipped_skill=True),
    Wrong("blind13-relu-zeros", answer=shortcut_zeros, skipped_skill=True),
    Wrong("blind13-relu-lying-eq", answer=shortcut_lying_eq, skipped_skill=True),
    Wrong("blind13-relu-patch-numpy", answer=shortcut_patch_numpy, skipped_skill=True),
    Wrong("blind13-relu-caller-frames", answer=shortcut_caller_frames, skipped_skill=True),
]}
