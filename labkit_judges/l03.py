"""Lesson 03 exercises, judge side (references, test inputs, quiz keys): export the digits CNN with a
dynamic batch, fix a train-mode export,
bake the preprocessing into the model, and a quiz on parity failures.

The judges never train or run torch: a trained CNN cannot be rebuilt bit for bit in another
process (its weights depend on the thread count and the CPU's kernels), so the ONNX answers are
judged by behaviour on the course's fixed test digits: the model runs at batch sizes 1, 7 and 64,
gives each image the same logits whatever batch it is in (rtol 1e-3, atol 1e-5, as the lesson's
`assert_allclose`), and classifies the 450 held-out digits (the trained CNN gets about 99%; an
untrained one about 10%, raw pixels fed to the float CNN clearly less than the threshold).
"""
from __future__ import annotations

import labkit.exercises.l03  # noqa: F401 (declares the exercises judged here)

from functools import lru_cache

import numpy as np

from labkit.checks import TestResult, expect_close, judge, load_onnx, ort_session, quiz_key

#: batch sizes every ONNX answer is run at
BATCHES = (1, 7, 64)
#: share of the 450 test digits a correctly exported trained CNN must classify right
MIN_ACCURACY = 0.95
RTOL, ATOL = 1e-3, 1e-5


@lru_cache(maxsize=1)
def _test_digits() -> tuple[np.ndarray, np.ndarray]:
    """The course's held-out digits as raw uint8 pixels (N, 1, 8, 8) and labels."""
    from labkit.data import digits

    d = digits(raw=True)
    return d.x_test, d.y_test


def _short(e: BaseException, n: int = 200) -> str:
    text = " ".join(str(e).split())
    return f"{type(e).__name__}: {text[:n]}" if text else type(e).__name__


def _dims(value_info) -> list:
    """A graph input's shape as a list: ints for fixed dims, strings for symbolic ones, None if unknown."""
    t = value_info.type.tensor_type
    if not t.HasField("shape"):
        return []
    return [d.dim_param if d.dim_param else (d.dim_value if d.HasField("dim_value") else None) for d in t.shape.dim]


def _real_inputs(model) -> list:
    inits = {i.name for i in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in inits]


def _has_external_data(model) -> bool:
    import onnx

    return any(i.data_location == onnx.TensorProto.EXTERNAL for i in model.graph.initializer)


def _run(sess, name: str, x: np.ndarray):
    """Run the first output; return (array, None) or (None, a short error message)."""
    try:
        return np.asarray(sess.run(None, {name: x})[0]), None
    except Exception as e:
        return None, _short(e, 180)


def _predict_all(sess, name: str, x: np.ndarray, fixed_batch) -> tuple[np.ndarray | None, str | None]:
    """Logits for all of `x`; a model with a fixed batch size b is run b images at a time."""
    out, err = _run(sess, name, x)
    if out is not None or not isinstance(fixed_batch, int) or fixed_batch < 1:
        return out, err
    parts = []
    for i in range(0, len(x), fixed_batch):
        chunk = x[i:i + fixed_batch]
        pad = fixed_batch - len(chunk)
        if pad:
            chunk = np.concatenate([chunk, np.repeat(chunk[-1:], pad, axis=0)])
        got, err = _run(sess, name, chunk)
        if got is None:
            return None, err
        parts.append(got[:fixed_batch - pad])
    return np.concatenate(parts), None


def _digits_input(raw: bool) -> tuple[np.ndarray, np.ndarray]:
    x_raw, y = _test_digits()
    return (x_raw if raw else (x_raw.astype(np.float32) / np.float32(16.0)).astype(np.float32)), y


def _complete(tests: list[TestResult], names: list[str], reason: str) -> list[TestResult]:
    """Every answer gets the same list of tests (so points stay comparable); skipped ones fail."""
    done = {t.name for t in tests}
    return tests + [TestResult(n, False, reason) for n in names if n not in done]


def _batch_tests(sess, name: str, xs: np.ndarray) -> tuple[list[TestResult], dict]:
    tests, outs = [], {}
    for n in BATCHES:
        got, err = _run(sess, name, xs[:n])
        if got is None:
            tests.append(TestResult(f"batch {n}", False, f"ONNX Runtime failed at batch size {n}: {err}"))
        elif got.shape != (n, 10):
            tests.append(TestResult(f"batch {n}", False, f"expected logits of shape ({n}, 10), got {got.shape}"))
        elif not np.all(np.isfinite(got)):
            tests.append(TestResult(f"batch {n}", False, f"the logits at batch size {n} contain NaN or infinity"))
        else:
            outs[n] = got
            tests.append(TestResult(f"batch {n}", True, f"logits of shape ({n}, 10)"))
    return tests, outs


CONSISTENT = "same logits at any batch size"
ACCURATE = "classifies the test digits"


def _consistency(outs: dict) -> TestResult:
    if len(outs) != len(BATCHES):
        failed = [n for n in BATCHES if n not in outs]
        return TestResult(CONSISTENT, False, f"the model did not run at batch size {failed[0]}")
    for n in BATCHES[:-1]:
        t = expect_close(CONSISTENT, outs[n], outs[BATCHES[-1]][:n], rtol=RTOL, atol=ATOL)
        if not t.passed:
            return TestResult(CONSISTENT, False,
                              f"an image's logits depend on the other images in its batch (batch {n} vs "
                              f"{BATCHES[-1]}: {t.message}): is BatchNorm or Dropout in training mode?")
    return TestResult(CONSISTENT, True, "each image gets the same logits at batch sizes 1, 7 and 64")


def _accuracy(sess, name: str, raw: bool, fixed_batch) -> TestResult:
    x_all, y = _digits_input(raw)
    logits, err = _predict_all(sess, name, x_all, fixed_batch)
    if logits is None or logits.shape != (len(x_all), 10):
        why = err or f"logits of shape {None if logits is None else logits.shape}"
        return TestResult(ACCURATE, False, f"could not run the {len(x_all)} test digits: {why}")
    acc = float((logits.argmax(axis=1) == y).mean())
    if acc >= MIN_ACCURACY:
        return TestResult(ACCURATE, True, f"{acc:.1%} of the {len(y)} held-out digits right")
    return TestResult(ACCURATE, False,
                      f"only {acc:.1%} of the {len(y)} held-out digits right (at least {MIN_ACCURACY:.0%} expected): "
                      + ("is the pixel scaling inside the model right (divide by 16)?" if raw else
                         "is this the trained model, in eval mode?"))


def _judge_classifier(answer, seed: int, *, raw: bool, extra: tuple[str, ...] = ()):
    """Structure, batch sizes 1/7/64, consistency and accuracy of a digits classifier in ONNX.

    Returns (tests, model, session); `extra` names tests the caller adds (failed here if the
    model cannot get that far).
    """
    import onnx

    want_name = "uint8" if raw else "float32"
    names = [f"input dtype {want_name}", "symbolic batch", "weights inside the file",
             *(f"batch {n}" for n in BATCHES), CONSISTENT, ACCURATE, *extra]
    model, why = load_onnx(answer)
    if model is None:
        return _complete([TestResult(names[0], False, why)], names, "needs a model that loads"), None, None
    tests: list[TestResult] = []
    inputs = _real_inputs(model)
    if len(inputs) != 1:
        tests.append(TestResult(names[0], False,
                                f"expected exactly one graph input (the images), found {[i.name for i in inputs]}"))
        return _complete(tests, names, "needs a model with one input"), model, None
    inp = inputs[0]
    dims = _dims(inp)
    elem = inp.type.tensor_type.elem_type
    want_type = onnx.TensorProto.UINT8 if raw else onnx.TensorProto.FLOAT
    try:
        got_type = onnx.helper.tensor_dtype_to_np_dtype(elem).name
    except Exception:
        got_type = "an unknown type"
    ok_type = elem == want_type
    tests.append(TestResult(names[0], ok_type,
                            f"input '{inp.name}' is {want_name}" if ok_type else
                            f"input '{inp.name}' is {got_type}, expected {want_name}"
                            + (" (raw pixels arrive as uint8: cast them inside the model)" if raw else "")))
    batch = dims[0] if dims else None
    ok_sym = len(dims) == 4 and isinstance(batch, str) and bool(batch) and dims[1:] == [1, 8, 8]
    tests.append(TestResult("symbolic batch", ok_sym,
                            f"input shape {dims}" if ok_sym else
                            f"expected the input shape [<name>, 1, 8, 8] with a named (symbolic) first dimension, got {dims}"
                            + (" — export with dynamic_shapes (dynamo) or dynamic_axes (legacy)" if isinstance(batch, int) else "")))
    if _has_external_data(model):
        tests.append(TestResult("weights inside the file", False,
                                "the weights live in a separate .data file (external data), so this .onnx file alone "
                                "cannot run: save with program.save(path) or export with external_data=False"))
        return _complete(tests, names, "needs the weights inside the .onnx file"), model, None
    tests.append(TestResult("weights inside the file", True, "one self-contained .onnx file"))
    if not ok_type:
        return _complete(tests, names, f"needs a {want_name} input"), model, None
    try:
        sess = ort_session(model)
    except Exception as e:
        tests.append(TestResult(f"batch {BATCHES[0]}", False, f"ONNX Runtime cannot load the model: {_short(e)}"))
        return _complete(tests, names, "needs a model ONNX Runtime can load"), model, None
    x_all, _ = _digits_input(raw)
    pick = np.random.default_rng(seed + 303).choice(len(x_all), size=max(BATCHES), replace=False)
    batch_tests, outs = _batch_tests(sess, inp.name, x_all[pick])
    tests += batch_tests
    tests.append(_consistency(outs))
    tests.append(_accuracy(sess, inp.name, raw, batch))
    return tests, model, sess


# ---------------------------------------------------------------- 03.dynamic_batch

@judge("03.dynamic_batch")
def _dynamic_batch(answer, seed):
    tests, _, _ = _judge_classifier(answer, seed, raw=False)
    return tests


# ---------------------------------------------------------------- 03.eval_fix

def _training_mode_nodes(model) -> list[str]:
    """Nodes that behave differently in training mode: Dropout(training_mode=True), BatchNorm(training_mode=1)."""
    from onnx import helper, numpy_helper

    consts = {}
    for n in model.graph.node:
        if n.op_type == "Constant" and n.attribute:
            a = n.attribute[0]
            try:
                if a.name == "value":
                    consts[n.output[0]] = numpy_helper.to_array(a.t)
                elif a.name in ("value_int", "value_ints"):
                    consts[n.output[0]] = np.asarray(helper.get_attribute_value(a))
            except Exception:
                pass
    for init in model.graph.initializer:
        if init.name not in consts and init.data_location == 0:
            try:
                consts[init.name] = numpy_helper.to_array(init)
            except Exception:
                pass
    found = []
    for n in model.graph.node:
        if n.op_type == "Dropout" and len(n.input) >= 3 and n.input[2]:
            flag = consts.get(n.input[2])
            if flag is not None and np.asarray(flag).size == 1 and bool(np.asarray(flag).reshape(-1)[0]):
                found.append(f"Dropout '{n.name or n.output[0]}' with training_mode=True")
        if n.op_type == "BatchNormalization":
            mode = next((helper.get_attribute_value(a) for a in n.attribute if a.name == "training_mode"), 0)
            if mode:
                found.append(f"BatchNormalization '{n.name or n.output[0]}' with training_mode=1")
    return found


EVAL_TESTS = ("no training-mode nodes", "same answer twice", CONSISTENT, ACCURATE)


@judge("03.eval_fix")
def _eval_fix(answer, seed):
    """Judged with ONNX Runtime's graph optimizations OFF: then a training-mode Dropout really drops."""
    import onnxruntime as ort

    names = list(EVAL_TESTS)
    model, why = load_onnx(answer)
    if model is None:
        return _complete([TestResult(names[0], False, why)], names, "needs a model that loads")
    bad = _training_mode_nodes(model)
    tests = [TestResult(names[0], not bad,
                        "no Dropout or BatchNormalization in training mode" if not bad else
                        f"the graph still has {bad[0]}: it was exported from a model in train mode")]
    inputs = _real_inputs(model)
    if len(inputs) != 1 or inputs[0].type.tensor_type.elem_type != 1:
        return _complete(tests, names, "needs a model with one float32 input (the images)")
    if _has_external_data(model):
        return _complete(tests, names, "the weights live in a separate .data file: save with program.save(path)")
    try:
        sess = ort_session(model, optimize=False)
    except Exception as e:
        return _complete(tests, names, f"ONNX Runtime cannot load it: {_short(e)}")
    name = inputs[0].name
    x_all, _ = _digits_input(False)
    pick = np.random.default_rng(seed + 404).choice(len(x_all), size=max(BATCHES), replace=False)
    xs = x_all[pick]
    a, err = _run(sess, name, xs)
    b, err2 = _run(sess, name, xs)
    if a is None or b is None:
        tests.append(TestResult(names[1], False, f"could not run it at batch size {len(xs)}: {err or err2}"
                                " (export with a dynamic batch)"))
    else:
        same = a.shape == b.shape and np.array_equal(a, b)
        tests.append(TestResult(names[1], same,
                                "identical logits on two identical runs (graph optimizations off)" if same else
                                "two runs on the same images gave different logits (graph optimizations off): "
                                "dropout is still active"))
    _, outs = _batch_tests(sess, name, xs)
    tests.append(_consistency(outs))
    dims = _dims(inputs[0])
    tests.append(_accuracy(sess, name, False, dims[0] if dims else None))
    return tests


# ---------------------------------------------------------------- 03.raw_input

NORMALIZED = "first Conv sees pixels / 16"


def _first_conv_input(model) -> str | None:
    return next((n.input[0] for n in model.graph.node if n.op_type == "Conv" and n.input), None)


@judge("03.raw_input")
def _raw_input(answer, seed):
    import onnx

    tests, model, sess = _judge_classifier(answer, seed, raw=True, extra=(NORMALIZED,))
    if model is None or sess is None:
        return tests
    conv_in = _first_conv_input(model)
    if conv_in is None:
        return tests + [TestResult(NORMALIZED, False, "the model has no Conv node: is the CNN inside?")]
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    if conv_in not in {o.name for o in probe.graph.output}:
        probe.graph.output.append(onnx.helper.make_tensor_value_info(conv_in, onnx.TensorProto.FLOAT, None))
    x = _test_digits()[0][:16]
    try:
        got = ort_session(probe).run([conv_in], {_real_inputs(model)[0].name: x})[0]
    except Exception as e:
        return tests + [TestResult(NORMALIZED, False, f"could not read the input of the first Conv: {_short(e)}")]
    t = expect_close(NORMALIZED, got, (x.astype(np.float32) / np.float32(16.0)).astype(np.float32), rtol=1e-6, atol=1e-7)
    t.message = ("the model normalizes the raw pixels exactly like labkit.data.normalize" if t.passed else
                 f"the tensor entering the first Conv is not the raw pixels divided by 16 ({t.message}); "
                 "normalize inside forward with pixels.to(torch.float32) / 16")
    return tests + [t]


# ---------------------------------------------------------------- 03.quiz

quiz_key("03.quiz", {
    "q1": ("b", "Call model.eval() before exporting and before computing the reference."),
    "q2": ("b", "The example batch size was baked into the graph; a named dimension accepts any size."),
    "q3": ("b", "Tracing records what ran; use torch.where or torch.cond to keep the decision in the graph."),
    "q4": ("a", "Different kernels sum in different orders; tiny differences are expected, large ones are bugs."),
})
