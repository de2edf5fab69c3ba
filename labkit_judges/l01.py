"""Lesson 01 exercises, judge side (references, test inputs, quiz keys): build Y = Sigmoid(X·W + B),
run it two ways, read versions, quiz."""
from __future__ import annotations

import labkit.exercises.l01  # noqa: F401 (declares the exercises judged here)

import numpy as np

from labkit.checks import TestResult, expect_close, expect_equal, judge, load_onnx, ort_session, quiz_key
from labkit.plain import Raised

#: the weights the lesson gives the learner (the notebook prints the same values)
W = np.array([[0.5, -1.0, 0.25],
              [1.5, 0.0, -0.5],
              [-0.75, 0.5, 1.0],
              [0.2, 0.3, -0.4]], dtype=np.float32)
B = np.array([0.1, -0.2, 0.3], dtype=np.float32)


def sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


def make_model(w: np.ndarray, b: np.ndarray, opset: int = 21, ir_version: int | None = None,
               extra_domains: tuple[tuple[str, int], ...] = ()) -> bytes:
    """The reference model Y = Sigmoid(X·w + b) with a symbolic batch dimension, as bytes."""
    from onnx import TensorProto, helper, numpy_helper

    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, ["batch", w.shape[0]])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["batch", w.shape[1]])
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["X", "W"], ["XW"]),
         helper.make_node("Add", ["XW", "B"], ["Z"]),
         helper.make_node("Sigmoid", ["Z"], ["Y"])],
        "logistic", [x], [y],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "B")])
    imports = [helper.make_opsetid(d, v) for d, v in extra_domains] + [helper.make_opsetid("", opset)]
    # IR 10 is read by every current runtime; onnx itself would write its newest IR version
    return helper.make_model(graph, opset_imports=imports, ir_version=ir_version or 10).SerializeToString()


# ---------------------------------------------------------------- 01.sigmoid_model

BATCHES = (1, 5, 33)


@judge("01.sigmoid_model")
def _sigmoid_model(answer, seed):
    import onnx

    model, why = load_onnx(answer)
    if model is None:
        yield TestResult("loads", False, why)
        return
    try:
        onnx.checker.check_model(model, full_check=True)
        yield TestResult("valid ONNX", True, "onnx.checker accepts it")
    except Exception as e:
        yield TestResult("valid ONNX", False, f"onnx.checker says: {str(e).strip().splitlines()[0][:200]}")
    inits = {i.name for i in model.graph.initializer}
    inputs = [i for i in model.graph.input if i.name not in inits]
    if len(inputs) != 1:
        yield TestResult("one input", False, f"expected exactly one graph input (X), found {[i.name for i in inputs]}")
        return
    dims = inputs[0].type.tensor_type.shape.dim
    batch = dims[0].dim_param if len(dims) == 2 else ""
    ok = len(dims) == 2 and bool(batch) and dims[1].dim_value == 4
    shape = [d.dim_param or d.dim_value or "?" for d in dims]
    yield TestResult("symbolic batch", ok,
                     f"input shape {shape}" if ok else
                     f"expected the input shape ['batch', 4] with a named first dimension, got {shape}")
    outs = [o.name for o in model.graph.output]
    yield TestResult("output Y", outs == ["Y"], "one output named Y" if outs == ["Y"] else f"expected one output 'Y', got {outs}")
    try:
        sess = ort_session(model)
    except Exception as e:
        yield TestResult("runs in ONNX Runtime", False, f"ONNX Runtime cannot load it: {str(e).splitlines()[0][:200]}")
        return
    rng = np.random.default_rng(seed + 101)
    for n in BATCHES:
        x = rng.normal(size=(n, 4)).astype(np.float32)
        try:
            got = sess.run(None, {inputs[0].name: x})[0]
        except Exception as e:
            yield TestResult(f"batch {n}", False, f"ONNX Runtime failed at batch size {n}: {str(e).splitlines()[0][:160]}")
            continue
        yield expect_close(f"batch {n}", got, sigmoid(x @ W + B), rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- 01.run_both

def _run_both_data(seed: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(w, b, x) per test: the lesson's weights at two batch sizes, then unseen weights."""
    rng = np.random.default_rng(seed + 202)
    w2 = rng.normal(size=(4, 2)).astype(np.float32)
    b2 = rng.normal(size=(2,)).astype(np.float32)
    return [(W, B, rng.normal(size=(3, 4)).astype(np.float32)),
            (W, B, rng.normal(size=(1, 4)).astype(np.float32)),
            (w2, b2, rng.normal(size=(6, 4)).astype(np.float32))]


def _run_both_cases(seed: int) -> list[tuple]:
    return [(make_model(w, b), x) for w, b, x in _run_both_data(seed)]


@judge("01.run_both", cases=_run_both_cases)
def _run_both(outputs, seed):
    names = ["model 1, batch 3", "model 1, batch 1", "model 2, batch 6"]
    for name, got, (w, b, x) in zip(names, outputs, _run_both_data(seed)):
        want = sigmoid(x @ w + b)
        if isinstance(got, Raised):
            yield TestResult(name, False, f"your function {got.message}")
            continue
        if not isinstance(got, dict) or set(got) != {"reference", "ort"}:
            keys = sorted(got) if isinstance(got, dict) else None
            yield TestResult(name, False, f"expected a dict with keys 'reference' and 'ort', got "
                                          + (f"keys {keys}" if keys is not None else type(got).__name__))
            continue
        yield expect_close(f"{name} (reference)", got["reference"], want, rtol=1e-5, atol=1e-6)
        yield expect_close(f"{name} (ort)", got["ort"], want, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- 01.versions

_VERSION_CASES = ((10, 21, ()), (8, 13, ()), (9, 17, (("com.microsoft", 1),)), (7, 12, (("ai.onnx.ml", 3),)))


def _versions_cases(seed: int) -> list[tuple]:
    order = np.random.default_rng(seed + 303).permutation(len(_VERSION_CASES))
    return [(make_model(W, B, opset, ir, extra),) for ir, opset, extra in (_VERSION_CASES[i] for i in order)]


@judge("01.versions", cases=_versions_cases)
def _versions(outputs, seed):
    order = np.random.default_rng(seed + 303).permutation(len(_VERSION_CASES))
    for i, got in zip(order, outputs):
        ir, opset, extra = _VERSION_CASES[i]
        name = f"IR {ir}, opset {opset}" + (f" (+{extra[0][0]})" if extra else "")
        if isinstance(got, Raised):
            yield TestResult(name, False, f"your function {got.message}")
        elif not isinstance(got, dict):
            yield TestResult(name, False, f"expected a dict {{'ir_version': ..., 'opset': ...}}, got {type(got).__name__}")
        else:
            want = {"ir_version": ir, "opset": opset}
            t = expect_equal(name, {k: got.get(k) for k in want}, want)
            if not t.passed and extra and got.get("opset") == extra[0][1]:
                t.message += f" — that is the opset of domain '{extra[0][0]}', not of the default domain ''"
            yield t


quiz_key("01.quiz", {
    "q1": ("b", "ONNX describes the computation; runtimes such as ONNX Runtime execute it."),
    "q2": ("b", "The opset pins operator semantics; ir_version is the file format's version."),
    "q3": ("a", "A named (symbolic) dimension is free; a number is fixed forever."),
    "q4": ("b", "The reference evaluator is plain Python following the spec: slow, but a ground truth."),
})
