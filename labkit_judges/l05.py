"""Lesson 05 exercises, judge side (references, test inputs, quiz keys): fold BatchNorm into Conv (by
formula, then in a graph), ORT levels, portable files."""
from __future__ import annotations

from labkit.exercises.l05 import _PAIRS, IN_CHANNELS, PRACTICE_SEED, SIZE, practice_model  # noqa: F401

import numpy as np

from labkit.checks import TestResult, expect_close, judge, load_onnx, quiz_key
from labkit.plain import Raised

#: the domain of ONNX Runtime's blocked-layout (NCHWc) operators: tied to the CPU's vector width
NCHWC_DOMAIN = "com.microsoft.nchwc"


def fold_bn_reference(W, b, gamma, beta, mean, var, eps):
    """W' = W·s and b' = (b − mean)·s + beta with s = gamma / sqrt(var + eps), per output channel."""
    W = np.asarray(W, dtype=np.float64)
    s = np.asarray(gamma, np.float64) / np.sqrt(np.asarray(var, np.float64) + float(eps))
    b = np.zeros(W.shape[0]) if b is None else np.asarray(b, np.float64)
    W2 = W * s.reshape((-1,) + (1,) * (W.ndim - 1))
    b2 = (b - np.asarray(mean, np.float64)) * s + np.asarray(beta, np.float64)
    return W2, b2


# ---------------------------------------------------------------- the practice model



def _session(model, disable: bool = True):
    """A CPU session on a model (bytes or ModelProto), optimizations off by default: run what the file says."""
    from labkit.runtime import ort_session

    return ort_session(model, optimize=not disable)


def _first_line(e: Exception, n: int = 200) -> str:
    """The useful part of an exception message (ONNX Runtime prefixes its own with codes and a source line)."""
    import re

    text = (str(e).strip().splitlines() or [type(e).__name__])[0]
    text = re.sub(r"^\[ONNXRuntimeError\] : \d+ : \w+ : ", "", text)
    text = re.sub(r"^\S+\.(cc|h|cpp):\d+ [^(]*\([^)]*\)\s*", "", text)
    return text[:n]


BATCHES = (1, 3)


def _outputs_match(model, seed: int, salt: int, unless: str = ""):
    """One test per batch size: `model` and the practice model agree on the same random inputs.

    Runs with ONNX Runtime's optimizations disabled, so it checks what the file says. When `unless`
    names a reason the answer does not count (e.g. nothing was folded), matching outputs still fail.
    """
    names = [f"same output, batch {n}" for n in BATCHES]
    try:
        sess = _session(model)
    except Exception as e:
        for name in names:
            yield TestResult(name, False, f"ONNX Runtime (optimizations disabled) cannot load the model: {_first_line(e)}")
        return
    inputs = [i.name for i in sess.get_inputs()]
    outputs = [o.name for o in sess.get_outputs()]
    if inputs != ["x"] or outputs != ["y"]:
        for name in names:
            yield TestResult(name, False, f"expected one input 'x' and one output 'y' like the practice model, got "
                                          f"inputs {inputs} and outputs {outputs}")
        return
    ref = _session(practice_model())
    rng = np.random.default_rng(seed + salt)
    for name, n in zip(names, BATCHES):
        x = rng.normal(size=(n, IN_CHANNELS, SIZE, SIZE)).astype(np.float32)
        want = ref.run(None, {"x": x})[0]
        try:
            got = sess.run(None, {"x": x})[0]
        except Exception as e:
            yield TestResult(name, False, f"running it failed: {_first_line(e, 160)}")
            continue
        result = expect_close(name, got, want, rtol=1e-4, atol=1e-4)
        if result.passed and unless:
            result = TestResult(name, False, f"the outputs match, but {unless}")
        yield result


# ---------------------------------------------------------------- 05.fold_bn

def _fold_bn_cases(seed: int) -> list[tuple]:
    """(W, b, gamma, beta, mean, var, eps): 2-D, 1-D and depthwise kernels, no bias, a square trap."""
    rng = np.random.default_rng(seed + 505)

    def case(wshape, bias, eps, small_var=False):
        c = wshape[0]
        f = lambda *s: rng.normal(size=s).astype(np.float32)  # noqa: E731
        var = rng.uniform(0.01, 0.05, c) if small_var else rng.uniform(0.2, 2.0, c)
        return (f(*wshape), f(c) if bias else None, rng.uniform(0.5, 1.5, c).astype(np.float32), f(c), f(c),
                var.astype(np.float32), eps)

    return [case((4, 3, 3, 3), True, 1e-5),
            case((3, 2, 3, 3), True, 1e-3),         # 3 output channels and 3x3 kernels: wrong axes still broadcast
            case((5, 4, 1, 1), False, 0.1, True),   # no Conv bias; large epsilon against small variances
            case((6, 2, 5), True, 1e-5),            # a 1-D convolution (Conv1d)
            case((8, 1, 3, 3), True, 1e-2)]         # depthwise: one input channel per group


_FOLD_NAMES = ("Conv2d 4->3 ch", "3 output channels, 3x3 kernel", "b=None, eps=0.1", "Conv1d kernel",
               "depthwise kernel")


@judge("05.fold_bn", cases=_fold_bn_cases)
def _fold_bn(outputs, seed):
    for name, args, got in zip(_FOLD_NAMES, _fold_bn_cases(seed), outputs):
        W2, b2 = fold_bn_reference(*args)
        if isinstance(got, Raised):
            yield TestResult(name, False, f"your function {got.message}")
            continue
        if not isinstance(got, list) or len(got) != 2:
            yield TestResult(name, False, "expected a pair (W_folded, b_folded), got "
                             + (f"a sequence of length {len(got)}" if isinstance(got, list) else type(got).__name__))
            continue
        w_res = expect_close(f"{name}: W'", got[0], W2)
        b_res = expect_close(f"{name}: b'", got[1], b2)
        if w_res.passed and b_res.passed:
            yield TestResult(name, True, "W' and b' match")
        else:
            yield next(t for t in (w_res, b_res) if not t.passed)


# ---------------------------------------------------------------- 05.fold_graph

def _node_summary(model) -> tuple[int, int, int]:
    ops = [n.op_type for n in model.graph.node]
    return len(ops), ops.count("BatchNormalization"), ops.count("Conv")


@judge("05.fold_graph")
def _fold_graph(answer, seed):
    from onnx import load_from_string

    model, why = load_onnx(answer)
    if model is None:
        yield TestResult("loads", False, why)
        return
    total0, bn0, conv0 = _node_summary(load_from_string(practice_model()))
    total, bn, conv = _node_summary(model)
    yield TestResult("no BatchNormalization left", bn == 0,
                     "every BatchNormalization is gone" if bn == 0 else
                     f"{bn} BatchNormalization node(s) are still in the graph")
    fewer = total <= total0 - bn0 and conv == conv0
    yield TestResult("fewer nodes", fewer,
                     f"{total0} nodes became {total}" if fewer else
                     f"the practice model has {total0} nodes ({conv0} Conv, {bn0} BatchNormalization); folding "
                     f"should leave at most {total0 - bn0} with {conv0} Conv, your graph has {total} nodes and "
                     f"{conv} Conv")
    unless = ("BatchNormalization is still there" if bn else
              "the BatchNormalizations were replaced, not folded into the Convs" if not fewer else "")
    yield from _outputs_match(model, seed, 606, unless)


# ---------------------------------------------------------------- 05.quiz

quiz_key("05.quiz", {
    "q1": ("a", "BASIC does constant folding and hardware-independent fusions such as Conv+BatchNormalization."),
    "q2": ("b", "EXTENDED fuses into com.microsoft operators; layout changes come only at ALL."),
    "q3": ("b", "SessionOptions().graph_optimization_level is ORT_ENABLE_ALL already."),
    "q4": ("b", "ONNX Runtime even warns that an ALL-level file with NCHWc should only be used where it was made."),
})


# ---------------------------------------------------------------- 05.portable

@judge("05.portable")
def _portable(answer, seed):
    model, why = load_onnx(answer)
    if model is None:
        yield TestResult("loads", False, why)
        return
    import onnx

    total0, bn0, _ = _node_summary(onnx.load_from_string(practice_model()))
    total, bn, _ = _node_summary(model)
    optimized = bn == 0 and total < total0
    yield TestResult("optimized", optimized,
                     f"{total0} nodes became {total}, no BatchNormalization left" if optimized else
                     f"the graph is not optimized: {total} nodes (the practice model has {total0}) and {bn} "
                     "BatchNormalization; did ONNX Runtime write it with optimized_model_filepath?")
    fused = sum(n.op_type == "FusedConv" for n in model.graph.node)
    yield TestResult("EXTENDED-level fusions", fused > 0,
                     f"{fused} Conv+Relu pairs fused into FusedConv" if fused else
                     f"expected Conv+Relu fused into com.microsoft FusedConv (the EXTENDED level), found "
                     f"{bn} BatchNormalization and 0 FusedConv")
    nchwc = sorted({n.op_type for n in model.graph.node if n.domain == NCHWC_DOMAIN})
    if not optimized:
        yield TestResult("no machine-specific operators", False, "not judged: the graph is not optimized")
    else:
        yield TestResult("no machine-specific operators", not nchwc,
                         "no NCHWc (blocked layout) operators" if not nchwc else
                         f"the graph holds {NCHWC_DOMAIN} operators {nchwc}: their layout is made for this CPU's "
                         "vector width, so the file is not portable (was it saved at ORT_ENABLE_ALL?)")
    yield from _outputs_match(model, seed, 707, "" if optimized else "the graph is not optimized")
