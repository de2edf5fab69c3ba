"""Blind corpus round 4, lesson 09 (written without seeing the judges)."""
from __future__ import annotations

import importlib
import math
import os
import pickle
import subprocess
import sys

import numpy as np
import scipy.special
import torch
import torch.nn.functional as F

from corpus import Right, Wrong

_VENV_PY = "/work/main/.venv/bin/python"


# ---------------------------------------------------------------- right answers, unlike the textbook one


def ppl_right_take_along(logits, targets):
    z = np.asarray(logits, dtype=np.float64)
    t = np.asarray(targets, dtype=np.int64).reshape(-1, 1)
    top = z.max(axis=1, keepdims=True)
    lse = top[:, 0] + np.log(np.exp(z - top).sum(axis=1))
    picked = np.take_along_axis(z, t, axis=1)[:, 0]
    return float(np.exp(np.mean(lse - picked)))


def ppl_right_row_loop(logits, targets):
    total = 0.0
    n = 0
    for row, t in zip(np.asarray(logits), np.asarray(targets)):
        m = max(float(v) for v in row)
        lse = m + math.log(math.fsum(math.exp(float(v) - m) for v in row))
        total += lse - float(row[int(t)])
        n += 1
    mean = total / n
    return math.exp(mean) if mean < 709.0 else math.inf  # beyond that, no float holds it


def ppl_right_logaddexp_base2(logits, targets):
    # log-sum-exp by np.logaddexp.reduce (stable by construction), in bits: 2 ** (cross-entropy in bits)
    z = np.asarray(logits, np.float64)
    lse = np.logaddexp.reduce(z, axis=-1)
    nll_nats = lse - z[np.arange(z.shape[0]), targets]
    bits = nll_nats.mean() / np.log(2)
    return float(2.0 ** bits)


def ppl_right_float32_shift(logits, targets):
    # stays in float32 for the big array (the shift keeps exp in range), accumulates the mean in float64
    x = logits - logits.max(axis=-1, keepdims=True)
    log_norm = np.log(np.exp(x).sum(axis=-1, dtype=np.float64))
    nll = log_norm - x[np.arange(len(targets)), targets].astype(np.float64)
    mean = nll.sum() / nll.size
    return math.exp(mean) if mean < 709.0 else math.inf


# ---------------------------------------------------------------- wrong answers


def ppl_no_shift(logits, targets):
    p = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    return float(np.exp(-np.mean(np.log(p[np.arange(len(targets)), targets]))))


def ppl_mean_nll_only(logits, targets):
    x = logits.astype(np.float64) - logits.max(1, keepdims=True)
    lsm = x - np.log(np.exp(x).sum(1, keepdims=True))
    return float(-lsm[np.arange(len(targets)), targets].mean())


def ppl_shifted_targets(logits, targets):
    # "the next token": shifts once more, although the targets are already aligned
    x = logits.astype(np.float64) - logits.max(1, keepdims=True)
    lsm = x - np.log(np.exp(x).sum(1, keepdims=True))
    return float(np.exp(-lsm[np.arange(len(targets) - 1), targets[1:]].mean()))


def ppl_sum_not_mean(logits, targets):
    x = logits.astype(np.float64) - logits.max(1, keepdims=True)
    lsm = x - np.log(np.exp(x).sum(1, keepdims=True))
    return float(np.exp(-lsm[np.arange(len(targets)), targets].sum()))


def ppl_softmax_axis0(logits, targets):
    x = logits.astype(np.float64) - logits.max(0, keepdims=True)
    lsm = x - np.log(np.exp(x).sum(0, keepdims=True))
    return float(np.exp(-lsm[np.arange(len(targets)), targets].mean()))


def ppl_all_columns(logits, targets):
    x = logits.astype(np.float64) - logits.max(1, keepdims=True)
    lsm = x - np.log(np.exp(x).sum(1, keepdims=True))
    return float(np.exp(-lsm[:, targets].mean()))  # indexes columns for every row


def ppl_global_max(logits, targets):
    x = logits.astype(np.float64) - logits.max()  # one shift for the whole array
    lsm = x - np.log(np.exp(x).sum(1, keepdims=True))
    return float(np.exp(-lsm[np.arange(len(targets)), targets].mean()))


def ppl_log_of_softmax(logits, targets):
    # shifted softmax first, then the log: a tiny probability underflows to 0 and log(0) = -inf
    x = logits - logits.max(1, keepdims=True)
    p = np.exp(x) / np.exp(x).sum(1, keepdims=True)
    with np.errstate(divide="ignore"):
        return float(np.exp(-np.mean(np.log(p[np.arange(len(targets)), targets]))))


def ppl_zero_d_array(logits, targets):
    x = logits.astype(np.float64) - logits.max(1, keepdims=True)
    lsm = x - np.log(np.exp(x).sum(1, keepdims=True))
    return np.array(np.exp(-lsm[np.arange(len(targets)), targets].mean()))  # a 0-d array, not a float


def ppl_argmax_accuracy(logits, targets):
    # confuses perplexity with 1 / accuracy
    acc = float((logits.argmax(1) == targets).mean())
    return 1.0 / acc if acc else float("inf")


def ppl_scipy_global(logits, targets):
    lsm = scipy.special.log_softmax(logits.astype(np.float64), axis=1)
    return float(np.exp(-lsm[np.arange(len(targets)), targets].mean()))


def ppl_torch_cross_entropy(logits, targets, _ce=F.cross_entropy):
    loss = _ce(torch.from_numpy(np.asarray(logits, np.float32)), torch.from_numpy(np.asarray(targets, np.int64)))
    return float(torch.exp(loss.double()))


_CHILD = """
import sys, pickle
import numpy as np
from scipy.special import logsumexp
logits, targets = pickle.loads(sys.stdin.buffer.read())
z = logits.astype(np.float64)
nll = logsumexp(z, axis=1) - z[np.arange(len(targets)), targets]
sys.stdout.buffer.write(pickle.dumps(float(np.exp(nll.mean()))))
"""


def ppl_subprocess_scipy(logits, targets):
    for py in (sys.executable, _VENV_PY):
        try:
            r = subprocess.run([py, "-I", "-c", _CHILD], input=pickle.dumps((np.asarray(logits), np.asarray(targets))),
                               capture_output=True, timeout=60)
        except OSError:
            continue
        if r.returncode == 0:
            return pickle.loads(r.stdout)
    raise RuntimeError("no python with scipy")


def _force_import(name):
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


def ppl_meta_path_scipy(logits, targets):
    special = _force_import("scipy.special")
    z = np.asarray(logits, np.float64)
    nll = special.logsumexp(z, axis=1) - z[np.arange(len(targets)), targets]
    return float(np.exp(nll.mean()))


CORPUS = {
    "09.perplexity": [
        Right("blind4-ppl-take-along-axis", answer=ppl_right_take_along),
        Right("blind4-ppl-python-row-loop", answer=ppl_right_row_loop),
        Right("blind4-ppl-logaddexp-base2", answer=ppl_right_logaddexp_base2),
        Right("blind4-ppl-float32-shift", answer=ppl_right_float32_shift),
        Wrong("blind4-ppl-no-shift-overflow", answer=ppl_no_shift),
        Wrong("blind4-ppl-mean-nll-no-exp", answer=ppl_mean_nll_only),
        Wrong("blind4-ppl-shifts-targets-again", answer=ppl_shifted_targets),
        Wrong("blind4-ppl-sum-not-mean", answer=ppl_sum_not_mean),
        Wrong("blind4-ppl-softmax-axis0", answer=ppl_softmax_axis0),
        Wrong("blind4-ppl-all-columns", answer=ppl_all_columns),
        Wrong("blind4-ppl-global-max-shift", answer=ppl_global_max),
        Wrong("blind4-ppl-log-of-softmax-underflow", answer=ppl_log_of_softmax),
        Wrong("blind4-ppl-zero-d-array", answer=ppl_zero_d_array, outputs_wrong=False),
        Wrong("blind4-ppl-inverse-accuracy", answer=ppl_argmax_accuracy),
        Wrong("blind4-ppl-scipy-log-softmax", answer=ppl_scipy_global, outputs_wrong=False, skipped_skill=True),
        Wrong("blind4-ppl-torch-cross-entropy", answer=ppl_torch_cross_entropy, outputs_wrong=False,
              skipped_skill=True),
        Wrong("blind4-ppl-subprocess-scipy", answer=ppl_subprocess_scipy, outputs_wrong=False, skipped_skill=True),
        Wrong("blind4-ppl-meta-path-scipy", answer=ppl_meta_path_scipy, outputs_wrong=False, skipped_skill=True),
    ],
}
