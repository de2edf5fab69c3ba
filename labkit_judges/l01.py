"""Lesson 01 exercise specs (what the learner sees, references, test inputs, quiz answers): build Y = Sigmoid(X·W + B),
run it two ways, read versions, quiz."""
from __future__ import annotations

import numpy as np

from labkit.checks import (DidNotDo, Question, TestResult, exercise, expect_close, expect_equal, load_onnx,
                           ort_session, quiz)
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
SIGMOID_BEHAVIOUR = tuple(f"batch {n}" for n in BATCHES)
SIGMOID_TESTS = ("valid ONNX", "one input X", "dynamic batch", "output Y", *SIGMOID_BEHAVIOUR)
#: the producer_name the usual exporters write (torch.onnx both ways, tf2onnx, skl2onnx, onnxmltools)
EXPORTERS = frozenset({"pytorch", "tf2onnx", "skl2onnx", "onnxmltools", "keras2onnx"})


def _first(e: BaseException, n: int = 200) -> str:
    text = str(e).strip()
    return (text.splitlines()[0] if text else type(e).__name__)[:n]


@exercise('01.sigmoid_model', title='Build Y = Sigmoid(X·W + B)', points=4, kind='onnx',
          hint=[
              'Three nodes in a row: a matrix product, the bias added, the sigmoid; W and B are stored weights, not inputs; declare X and Y with a symbolic (string) batch dimension.',
              'onnx.helper: make_node, make_tensor_value_info, make_graph, make_model (opset_imports, ir_version); onnx.numpy_helper.from_array turns W and B into initializers.',
          ],
          tests=SIGMOID_TESTS, skill=SIGMOID_BEHAVIOUR)
def _sigmoid_model(answer, seed):
    import onnx

    model, why = load_onnx(answer)
    if model is None:
        yield TestResult("valid ONNX", False, why)
        return
    try:
        onnx.checker.check_model(model, full_check=True)
        yield TestResult("valid ONNX", True, "onnx.checker accepts it")
    except Exception as e:
        yield TestResult("valid ONNX", False, f"onnx.checker says: {_first(e)}")
    if model.graph.node and {n.op_type for n in model.graph.node} <= {"MatMul", "Add", "Gemm"}:
        # only linear operators: nothing in it can compute a sigmoid (the lesson's linear model handed in)
        yield DidNotDo("its nodes are only " + ", ".join(sorted({n.op_type for n in model.graph.node}))
                       + ": a linear model, with no sigmoid")
    if model.producer_name in EXPORTERS:
        # what an exporter writes as the producer: the graph was traced from a framework, not built
        yield DidNotDo(f"the file says it was made by {model.producer_name}'s exporter: the exercise is building "
                       "the graph yourself, node by node, with onnx.helper")
    inits = {i.name for i in model.graph.initializer}
    inputs = [i for i in model.graph.input if i.name not in inits]
    if len(inputs) != 1:
        yield TestResult("one input X", False,
                         f"expected exactly one graph input (X; W and B are initializers), found {[i.name for i in inputs]}")
        return
    yield TestResult("one input X", inputs[0].name == "X",
                     "one input, X" if inputs[0].name == "X" else f"the one input is named {inputs[0].name!r}, expected 'X'")
    dims = inputs[0].type.tensor_type.shape.dim
    shape = [d.dim_param or (d.dim_value if d.HasField("dim_value") else None) for d in dims]
    # a named dimension ('batch') or an unnamed one (None) are both dynamic; only a number fixes it
    ok = len(dims) == 2 and not dims[0].HasField("dim_value") and dims[1].HasField("dim_value") and dims[1].dim_value == 4
    yield TestResult("dynamic batch", ok,
                     f"input shape {shape}" if ok else
                     f"expected the input shape ['batch', 4] with a symbolic first dimension, got {shape}")
    outs = [o.name for o in model.graph.output]
    if outs != ["Y"]:
        yield TestResult("output Y", False, f"expected one output 'Y', got {outs}")
    else:
        t = model.graph.output[0].type.tensor_type
        odims = t.shape.dim
        oshape = [d.dim_param or (d.dim_value if d.HasField("dim_value") else None) for d in odims]
        # the prompt fixes X's shape, not Y's declaration: a dimension left unknown is no mistake, a wrong number is
        ok_out = (t.elem_type == onnx.TensorProto.FLOAT and t.HasField("shape") and len(odims) == 2
                  and not odims[0].HasField("dim_value")
                  and (not odims[1].HasField("dim_value") or odims[1].dim_value == 3))
        yield TestResult("output Y", ok_out, "one output Y, float32 of shape ['batch', 3]" if ok_out else
                         f"the output Y is declared as {onnx.helper.tensor_dtype_to_np_dtype(t.elem_type).name if t.elem_type else 'no type'} "
                         f"of shape {oshape if t.HasField('shape') else 'unknown'}; expected float32 ['batch', 3] "
                         "(the same symbolic batch as X, and one column per output of W)")
    try:
        sess = ort_session(model)
    except Exception as e:
        for n in BATCHES:
            yield TestResult(f"batch {n}", False, f"ONNX Runtime cannot load it: {_first(e)}")
        return
    feed = sess.get_inputs()[0].name
    rng = np.random.default_rng(seed + 101)
    ignored = False
    for n in BATCHES:
        x = rng.normal(size=(n, 4)).astype(np.float32) * 2
        try:
            got = sess.run(None, {feed: x})[0]
        except Exception as e:
            yield TestResult(f"batch {n}", False, f"ONNX Runtime failed at batch size {n}: {_first(e, 160)}")
            continue
        t = expect_close(f"batch {n}", got, sigmoid(x @ W + B), rtol=1e-5, atol=1e-6)
        yield t
        if not t.passed and n > 1 and _ignores_x(sess, feed, x, got):
            ignored = True
    if ignored:
        yield DidNotDo("its output does not change when X does: Y must be computed from X")


def _ignores_x(sess, feed: str, x: np.ndarray, got) -> bool:
    """Whether the model gives the same output for other values of X of the same shape (a constant)."""
    try:
        other = sess.run(None, {feed: -3 * x + 1})[0]
        return np.array_equal(np.asarray(other), np.asarray(got))
    except Exception:  # noqa: BLE001 - a model that fails here fails its tests already
        return False


# ---------------------------------------------------------------- 01.run_both

def noisy_model(w: np.ndarray, b: np.ndarray, noise_seed: float) -> bytes:
    """Y = Sigmoid(X·w + b + U) where U = RandomUniformLike(·, seed): the specification fixes U's distribution,
    not its generator, so each engine draws its own numbers (deterministic per engine for a fixed seed)."""
    from onnx import TensorProto, helper, numpy_helper

    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, ["batch", w.shape[0]])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["batch", w.shape[1]])
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["X", "W"], ["XW"]),
         helper.make_node("Add", ["XW", "B"], ["Z"]),
         helper.make_node("RandomUniformLike", ["Z"], ["U"], low=-2.0, high=2.0, seed=float(noise_seed)),
         helper.make_node("Add", ["Z", "U"], ["ZU"]),
         helper.make_node("Sigmoid", ["ZU"], ["Y"])],
        "noisy_logistic", [x], [y],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "B")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10).SerializeToString()


def two_output_model(w: np.ndarray, b: np.ndarray) -> bytes:
    """Y = Sigmoid(X·w + b) first and the logits Z second, all in float64: the first output is Y, and an input
    cast to float32 is refused."""
    from onnx import TensorProto, helper, numpy_helper

    x = helper.make_tensor_value_info("X", TensorProto.DOUBLE, ["batch", w.shape[0]])
    ys = [helper.make_tensor_value_info(n, TensorProto.DOUBLE, ["batch", w.shape[1]]) for n in ("Y", "Z")]
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["X", "W"], ["XW"]), helper.make_node("Add", ["XW", "B"], ["Z"]),
         helper.make_node("Sigmoid", ["Z"], ["Y"])],
        "logistic_two_outputs", [x], ys,
        [numpy_helper.from_array(w.astype(np.float64), "W"), numpy_helper.from_array(b.astype(np.float64), "B")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10).SerializeToString()


def _run_both_data(seed: int) -> list[tuple]:
    """(w, b, noise seed or None, x) per case: the lesson's weights, unseen weights (float64, two outputs), then
    a model the engines disagree on (a seeded random operator)."""
    rng = np.random.default_rng(seed + 202)
    w2 = rng.normal(size=(4, 2)).astype(np.float32)
    b2 = rng.normal(size=(2,)).astype(np.float32)
    noise_seed = float(rng.integers(1, 10_000))
    return [(W, B, None, rng.normal(size=(int(rng.integers(2, 6)), 4)).astype(np.float32)),
            (w2, b2, "float64", rng.normal(size=(int(rng.integers(6, 10)), 4))),
            (W, B, noise_seed, rng.normal(size=(int(rng.integers(3, 8)), 4)).astype(np.float32))]


def _run_both_model(w, b, noise_seed) -> bytes:
    if noise_seed == "float64":
        return two_output_model(w, b)
    return make_model(w, b) if noise_seed is None else noisy_model(w, b, noise_seed)


def _run_both_cases(seed: int) -> list[tuple]:
    return [(_run_both_model(w, b, s), x) for w, b, s, x in _run_both_data(seed)]


def _engines(model_bytes: bytes, x: np.ndarray) -> dict[str, np.ndarray]:
    """What each engine itself returns (a fresh session each, like a learner's function)."""
    from onnx.reference import ReferenceEvaluator

    return {"reference": ReferenceEvaluator(model_bytes).run(None, {"X": x})[0],
            "ort": ort_session(model_bytes).run(None, {"X": x})[0]}


RUN_BOTH_TESTS = ("reference, lesson weights", "ort, lesson weights", "reference, a float64 model with two outputs",
                  "ort, a float64 model with two outputs",
                  "reference's own numbers (seeded random op)", "ONNX Runtime's own numbers (seeded random op)")
ENGINE = {"reference": "onnx.reference.ReferenceEvaluator", "ort": "onnxruntime.InferenceSession"}


@exercise('01.run_both', title='Run a model with onnx.reference and ONNX Runtime', points=3, kind='function',
          hint=[
              "Two engines run the same bytes: the specification's own Python interpreter and ONNX Runtime; each returns a list of outputs and you want the first.",
              "onnx.reference.ReferenceEvaluator and onnxruntime.InferenceSession (providers=['CPUExecutionProvider']); both have run(output_names, feed_dict).",
          ],
          cases=_run_both_cases, tests=RUN_BOTH_TESTS, skill=RUN_BOTH_TESTS)
def _run_both(outputs, seed):
    names = iter(RUN_BOTH_TESTS)
    for got, (w, b, noise_seed, x) in zip(outputs, _run_both_data(seed)):
        pair = (next(names), next(names))
        if isinstance(got, Raised):
            for name in pair:
                yield TestResult(name, False, f"your function {got.message}")
            continue
        if not isinstance(got, dict) or set(got) != {"reference", "ort"}:
            keys = sorted(got) if isinstance(got, dict) else None
            for name in pair:
                yield TestResult(name, False, "expected a dict with keys 'reference' and 'ort', got "
                                 + (f"keys {keys}" if keys is not None else type(got).__name__))
            continue
        if noise_seed is None:
            for name, key in zip(pair, ("reference", "ort")):
                yield expect_close(name, got[key], sigmoid(x @ w + b), rtol=1e-5, atol=1e-6)
            continue
        if noise_seed == "float64":  # the first output is Y, in float64 (the input fed as it is)
            logits = x @ w.astype(np.float64) + b
            for name, key in zip(pair, ("reference", "ort")):
                t = expect_close(name, got[key], 1 / (1 + np.exp(-logits)), rtol=1e-12, atol=1e-12)
                if not t.passed and np.shape(got[key]) == logits.shape and np.allclose(got[key], logits):
                    t.message += " — these are the logits Z, the model's second output: expected the first, Y"
                elif not t.passed and getattr(got[key], "dtype", None) != np.float64:
                    t.message += f" — this model's input and output are float64 (got {getattr(got[key], 'dtype', '?')})"
                yield t
            continue
        own = _engines(_run_both_model(w, b, noise_seed), x)
        formula = sigmoid(x @ w + b)  # the model without its random operator: no engine gives it
        if not any(expect_close("", got[k], own[e], rtol=1e-5, atol=1e-6).passed for k in own for e in own) and (
                expect_close("", got["reference"], got["ort"], rtol=0, atol=0).passed
                or expect_close("", got["reference"], formula, rtol=1e-5, atol=1e-6).passed):
            yield DidNotDo("on the model with a random operator neither key holds an engine's numbers: "
                           "the exercise is running the model with both engines")
        for name, key in zip(pair, ("reference", "ort")):
            other = "ort" if key == "reference" else "reference"
            t = expect_close(name, got[key], own[key], rtol=1e-5, atol=1e-6)
            if t.passed:
                t.message = f"these are {ENGINE[key]}'s numbers"
            elif expect_close(name, got[key], own[other], rtol=1e-5, atol=1e-6).passed:
                t.message = (f"got['{key}'] holds {ENGINE[other]}'s numbers: on this model (a seeded random "
                             f"operator) each engine draws its own, so '{key}' must come from {ENGINE[key]}")
                yield DidNotDo(f"one engine ran for both keys ({ENGINE[other]}'s numbers under '{key}'): "
                               "the exercise is running the model with both")
            yield t


# ---------------------------------------------------------------- 01.versions

VERSION_TESTS = ("default domain first", "default domain last", "default domain between others",
                 "default domain written 'ai.onnx'", "only the default domain")
_OTHER_DOMAINS = ("ai.onnx.ml", "com.microsoft", "ai.onnx.preview.training", "com.example.custom")


def _versions_data(seed: int) -> list[tuple[int, int, list[tuple[str, int]]]]:
    """(ir_version, default opset, opset_import as (domain, version) in file order), one per test; the other
    domains' versions are drawn above and below the default one, so neither max() nor a position works."""
    rng = np.random.default_rng(seed + 303)
    out = []
    for name in VERSION_TESTS:
        ir = int(rng.integers(3, 11))
        opset = int(rng.integers(7, 22))
        others = [(str(d), int(v)) for d, v in zip(rng.permutation(_OTHER_DOMAINS)[:2],
                                                  (opset + int(rng.integers(1, 9)), int(rng.integers(1, 6))))]
        rng.shuffle(others)
        default = ("ai.onnx" if "ai.onnx" in name else "", opset)
        if name == "default domain first":
            imports = [default, *others]
        elif name == "default domain last":
            imports = [*others, default]
        elif name == "only the default domain":
            imports = [default]
        else:
            imports = [others[0], default, others[1]]
        out.append((ir, opset, imports))
    return out


def _versions_model(ir: int, imports: list[tuple[str, int]]) -> bytes:
    import onnx

    m = onnx.ModelProto()
    m.ParseFromString(make_model(W, B))
    del m.opset_import[:]
    for domain, version in imports:
        m.opset_import.add(domain=domain, version=version)
    m.ir_version = ir
    return m.SerializeToString()


def _versions_cases(seed: int) -> list[tuple]:
    return [(_versions_model(ir, imports),) for ir, _, imports in _versions_data(seed)]


@exercise('01.versions', title='Read the IR version and the opset', points=2, kind='function',
          hint=[
              'The IR version belongs to the file format; the opset belongs to a domain, and the default domain is the empty string.',
              "onnx.load_from_string, then the model's ir_version field and its opset_import entries (domain, version).",
          ],
          cases=_versions_cases, tests=VERSION_TESTS, skill=VERSION_TESTS)
def _versions(outputs, seed):
    for name, (ir, opset, imports), got in zip(VERSION_TESTS, _versions_data(seed), outputs):
        if isinstance(got, Raised):
            yield TestResult(name, False, f"your function {got.message}")
            continue
        if not isinstance(got, dict):
            yield TestResult(name, False, f"expected a dict {{'ir_version': ..., 'opset': ...}}, got {type(got).__name__}")
            continue
        want = {"ir_version": ir, "opset": opset}
        t = expect_equal(name, {k: got.get(k) for k in want}, want)
        if not t.passed:
            t.message += f" (opset_import of this model: {[(d or '', v) for d, v in imports]})"
            other = next((d for d, v in imports if v == got.get("opset") and d not in ("", "ai.onnx")), None)
            if other:
                t.message += f" — {got.get('opset')} is the opset of domain '{other}', not of the default domain ('' or 'ai.onnx')"
        yield t


quiz('01.quiz', title='What ONNX is', points=4, questions=[
    Question('q1', 'What is ONNX?', {
        'a': 'A runtime that executes models fast, like ONNX Runtime',
        'b': 'A file format: a graph of standard operators and weights',
        'c': 'A compression format that makes trained models smaller',
    }, answer='b', why=(
        'ONNX describes the computation; runtimes such as ONNX Runtime or onnx.reference execute it. '
        'ONNX Runtime is one of those runtimes, not ONNX itself (a), and ONNX compresses nothing (c): '
        'the weights are stored as raw numbers, so the file is a little larger than the weights.')),
    Question('q2', 'A model imports opset 21 of the default domain. What does 21 fix?', {
        'a': 'The version of the file format: which protobuf fields exist',
        'b': 'The oldest ONNX Runtime release that can load the model',
        'c': "Which version of each operator's definition the graph uses",
    }, answer='c', why=(
        'The opset pins operator semantics (Sigmoid as defined in opset 13, ReduceMean as in 18...). '
        "The file format's version is ir_version, a separate number (a), and no field names a runtime "
        'release (b).')),
    Question('q3', "Why give the input the shape ['batch', 4] instead of [2, 4]?", {
        'a': 'So that the same model accepts any number of rows',
        'b': 'So that ONNX Runtime splits any big input into small batches',
        'c': 'Because onnx.checker rejects shapes made only of numbers',
    }, answer='a', why=(
        'A named (symbolic) dimension is free at run time; a number is fixed forever. The runtime '
        'never splits inputs for you (b), and the checker accepts fixed shapes (c): the first model of '
        'this lesson had [2, 4].')),
    Question('q4', "An older ONNX Runtime refuses your file: 'Unsupported model IR version: 14, max supported IR version: 10'. What do you change?", {
        'a': 'The opset: import an older opset of the default domain',
        'b': 'The IR version: write an older one the runtime can read',
        'c': 'The weights: save them as external data beside the file',
    }, answer='b', why=(
        'The message is about the IR version (the file format). Opsets (a) are a different number, and '
        'external weights (c) do not change the IR version. '
        'onnx.helper.find_min_ir_version_for(opset_import) gives the lowest IR version that can hold '
        'the opsets you import.')),
    Question('q5', "PyTorch's nn.Linear(4, 3) becomes which ONNX operators?", {
        'a': 'Linear, the ONNX operator that has the very same name',
        'b': "Dense, ONNX's own fully connected operator",
        'c': 'Gemm, or a MatMul followed by an Add',
    }, answer='c', why=(
        "ONNX's operator list has no Linear (a) and no Dense (b): a fully connected layer is Gemm "
        '(what the exporters write for 2-D inputs) or MatMul + Add, exactly as this lesson builds it.')),
    Question('q6', "You compare two engines' outputs whose values are around 1000. Which test is right?", {
        'a': 'assert_allclose with rtol=1e-5: it grows with the values',
        'b': 'A fixed absolute bound: np.abs(a - b).max() < 1e-5',
        'c': 'np.array_equal(a, b): correct models are bit-identical',
    }, answer='a', why=(
        'float32 keeps about 7 significant digits, so values near 1000 legitimately differ by about '
        '1e-4: a fixed absolute 1e-5 (b) fails a correct model, and bit-identical outputs (c) are not '
        'promised when kernels sum in another order. A relative tolerance (plus a small atol near '
        'zero) scales with the values.')),
])
