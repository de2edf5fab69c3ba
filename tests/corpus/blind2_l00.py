"""Blind entries, copied from /work/blind2/l00.py (issue 32): written by a helper who never read the judges or this corpus
(their README: /work/blind2/README.md). tests/corpus/l00.py adds them to its CORPUS.

Blind corpus, lesson 00 (written without seeing the judges).
"""
import numpy as np

from corpus import Right, Wrong


# ---------------------------------------------------------------- rights

def _relu_where(x):
    return np.where(x < 0, 0, x)          # NaN stays NaN, dtype kept (0 is a weak scalar)


def _relu_clip(x):
    return np.asarray(np.clip(x, 0, None))     # asarray: a 0-d input stays an ndarray


def _relu_copy_mask(x):
    y = np.array(x, copy=True)
    y[y < 0] = 0
    return y


def _relu_putmask(x):
    y = np.array(x)                        # a copy
    np.putmask(y, y < 0, 0)
    return y


def _relu_maximum_out(x):
    out = np.empty_like(x)
    np.maximum(x, 0, out=out)
    return out


# ---------------------------------------------------------------- wrongs

def _abs(x):
    return np.abs(x)


def _in_place(x):
    x[x < 0] = 0                           # mutates the caller's array
    return x


def _to_list(x):
    return np.maximum(x, 0).tolist()


def _flat(x):
    return np.maximum(x.ravel(), 0)


def _leaky(x):
    return np.where(x > 0, x, 0.01 * x)


def _bool_mask(x):
    return x > 0


def _one_d_only(x):
    return np.array([max(v, 0) for v in x])


def _clip_top(x):
    return np.clip(x, 0, 1)


def _int_cast(x):
    return np.maximum(x, 0).astype(int)


def _python_floats(x):
    return np.array([max(float(v), 0.0) for v in np.asarray(x).flat]).reshape(np.shape(x))   # float64 out


def _identity(x):
    return x


def _zeros(x):
    return np.zeros_like(x)


def _min_instead(x):
    return np.minimum(x, 0)


def _negated(x):
    return np.maximum(-x, 0)


CORPUS = {
    "00.relu": [
        Right("blind2-relu-where-lt0", answer=_relu_where),
        Right("blind2-relu-clip-none", answer=_relu_clip),
        Right("blind2-relu-copy-mask", answer=_relu_copy_mask),
        Right("blind2-relu-putmask-copy", answer=_relu_putmask),
        Right("blind2-relu-maximum-out", answer=_relu_maximum_out),
        Wrong("blind2-relu-abs", answer=_abs),
        Wrong("blind2-relu-in-place", answer=_in_place, outputs_wrong=False),
        Wrong("blind2-relu-list", answer=_to_list, outputs_wrong=False),
        Wrong("blind2-relu-flattened", answer=_flat, outputs_wrong=False),
        Wrong("blind2-relu-leaky", answer=_leaky),
        Wrong("blind2-relu-bool-mask", answer=_bool_mask),
        Wrong("blind2-relu-1d-loop", answer=_one_d_only),
        Wrong("blind2-relu-clip-at-1", answer=_clip_top),
        Wrong("blind2-relu-int-cast", answer=_int_cast),
        Wrong("blind2-relu-float64-out", answer=_python_floats, outputs_wrong=False),
        Wrong("blind2-relu-identity", answer=_identity, skipped_skill=True),
        Wrong("blind2-relu-zeros", answer=_zeros, skipped_skill=True),
        Wrong("blind2-relu-minimum", answer=_min_instead),
        Wrong("blind2-relu-negated", answer=_negated),
    ],
}
