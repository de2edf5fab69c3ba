"""Lesson 02 exercise specs (what the learner sees, references, test inputs, quiz answers): count parameters, expose an intermediate tensor, add metadata, convert opsets."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from labkit.checks import (Question, TestResult, error_line, exercise, expect_close, expect_equal, load_onnx,
                          ort_session, quiz)
from labkit.checks.differential import promised_form
from labkit.material.l02 import model_to_repair, small_cnn
from labkit.plain import Raised

#: the ResNet-50 input and output names in the onnx package's light model
RESNET_INPUT = "gpu_0/data_0"
RESNET_OUTPUT = "gpu_0/softmax_1"
#: the opset the lesson's small CNN is written in, and the one 02.convert_opset asks for
TARGET_OPSET = 21
#: metadata 02.add_metadata asks for
METADATA = {"labels": "0,1,2,3,4,5,6,7,8,9", "pixel_scale": "0.0625"}
MODEL_VERSION = 2

_FLOAT_TYPES = None


def light_model_path(name: str = "resnet50") -> Path:
    """Path of one of the onnx package's "light" architecture graphs (weights replaced by ConstantOfShape)."""
    import onnx

    return Path(onnx.__file__).parent / "backend" / "test" / "data" / "light" / f"light_{name}.onnx"


def _float_types() -> set[int]:
    global _FLOAT_TYPES
    if _FLOAT_TYPES is None:
        from onnx import TensorProto

        _FLOAT_TYPES = {TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE, TensorProto.BFLOAT16}
    return _FLOAT_TYPES


def count_parameters_reference(model) -> int:
    """Elements of floating-point initializers, plus tensors that ConstantOfShape makes from a stored shape."""
    from onnx import TensorProto, numpy_helper

    graph = model.graph
    inits = {t.name: t for t in graph.initializer}
    total = sum(int(np.prod(t.dims, dtype=np.int64)) for t in graph.initializer if t.data_type in _float_types())
    for node in graph.node:
        if node.op_type != "ConstantOfShape" or not node.input or node.input[0] not in inits:
            continue
        value = next((a.t for a in node.attribute if a.name == "value"), None)
        dtype = value.data_type if value is not None else TensorProto.FLOAT
        if dtype in _float_types():
            total += int(np.prod(numpy_helper.to_array(inits[node.input[0]]), dtype=np.int64))
    return total


# ---------------------------------------------------------------- the lesson's small CNN

def _small_cnn_reference(x: np.ndarray) -> np.ndarray:
    """What small_cnn() computes, by ONNX Runtime on the judge's own copy."""
    return ort_session(small_cnn()).run(None, {"pixels": x})[0]


def _default_opset(model) -> int | None:
    return next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None)


# ---------------------------------------------------------------- 02.count_params

def _mlp(rng):
    """Two Gemm layers, plus an int64 shape initializer for a Reshape (not a parameter)."""
    from onnx import TensorProto, helper, numpy_helper

    n_in, hidden, n_out = (int(v) for v in rng.integers(3, 12, size=3))
    inits = [numpy_helper.from_array(rng.normal(size=(hidden, n_in)).astype(np.float32), "fc1.weight"),
             numpy_helper.from_array(np.zeros(hidden, np.float32), "fc1.bias"),
             numpy_helper.from_array(rng.normal(size=(n_out, hidden)).astype(np.float32), "fc2.weight"),
             numpy_helper.from_array(np.zeros(n_out, np.float32), "fc2.bias"),
             numpy_helper.from_array(np.array([-1, n_in], np.int64), "flat_shape")]
    nodes = [helper.make_node("Reshape", ["X", "flat_shape"], ["flat"]),
             helper.make_node("Gemm", ["flat", "fc1.weight", "fc1.bias"], ["h"], transB=1),
             helper.make_node("Relu", ["h"], ["r"]),
             helper.make_node("Gemm", ["r", "fc2.weight", "fc2.bias"], ["Y"], transB=1)]
    graph = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", n_in])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["N", n_out])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def _light_style(rng):
    """Weights made by ConstantOfShape from stored shapes and listed as graph inputs too (like the light
    models), one real float initializer, and one ConstantOfShape whose shape is computed at run time."""
    from onnx import TensorProto, helper, numpy_helper

    c_in, c_out = int(rng.integers(2, 6)), int(rng.integers(4, 12))
    k = int(rng.choice([1, 3]))
    fill = numpy_helper.from_array(np.array([0.02], np.float32), "")
    shapes = {"conv.weight": [c_out, c_in, k, k], "fc.weight": [3, c_out]}
    inits = [numpy_helper.from_array(np.array(s, np.int64), f"{n}__SHAPE") for n, s in shapes.items()]
    inits.append(numpy_helper.from_array(rng.normal(size=c_out).astype(np.float32), "conv.bias"))
    nodes = [helper.make_node("ConstantOfShape", [f"{n}__SHAPE"], [n], value=fill) for n in shapes]
    nodes += [helper.make_node("Conv", ["X", "conv.weight", "conv.bias"], ["c"], kernel_shape=[k, k],
                               pads=[k // 2] * 4),
              helper.make_node("GlobalAveragePool", ["c"], ["g"]),
              helper.make_node("Flatten", ["g"], ["f"]),
              helper.make_node("Gemm", ["f", "fc.weight"], ["logits"], transB=1),
              # run-time zeros shaped like the logits: computed, not stored, so not a parameter
              helper.make_node("Shape", ["logits"], ["logits_shape"]),
              helper.make_node("ConstantOfShape", ["logits_shape"], ["zeros"],
                               value=numpy_helper.from_array(np.array([0.0], np.float32), "")),
              helper.make_node("Add", ["logits", "zeros"], ["Y"])]
    # the prompt's other rules, each once: a bfloat16 weight counts; a stored shape used twice makes two weights;
    # no `value` means float zeros (counts); an int64 `value` makes no weight
    inits += [helper.make_tensor("emb.bf16", TensorProto.BFLOAT16, [2, c_in], [0.5] * (2 * c_in)),
              numpy_helper.from_array(np.array([c_out, 2], np.int64), "mask__SHAPE")]
    nodes += [helper.make_node("ConstantOfShape", ["fc.weight__SHAPE"], ["fc.zeros"]),
              helper.make_node("ConstantOfShape", ["mask__SHAPE"], ["mask"],
                               value=numpy_helper.from_array(np.array([1], np.int64), ""))]
    inputs = [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, c_in, 6, 6])]
    inputs += [helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)) for t in inits]
    graph = helper.make_graph(nodes, "light_style", inputs,
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, 3])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)], ir_version=6)


def _half(rng):
    """float16 weights and an int64 index table (a Gather's indices are not parameters)."""
    from onnx import TensorProto, helper, numpy_helper

    vocab, dim = int(rng.integers(5, 20)), int(rng.integers(2, 9))
    inits = [numpy_helper.from_array(rng.normal(size=(vocab, dim)).astype(np.float16), "embedding"),
             numpy_helper.from_array(rng.normal(size=(dim,)).astype(np.float16), "scale"),
             numpy_helper.from_array(np.arange(4, dtype=np.int64), "ids")]
    nodes = [helper.make_node("Gather", ["embedding", "ids"], ["rows"]),
             helper.make_node("Mul", ["rows", "scale"], ["Y"])]
    graph = helper.make_graph(nodes, "half", [], [helper.make_tensor_value_info("Y", TensorProto.FLOAT16, [4, dim])],
                              inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


_COUNT_NAMES = ["a small MLP with a Reshape shape", "weights made by ConstantOfShape",
                "float16 weights and int64 indices", "the light ResNet-50", "the lesson's small CNN"]
#: the prompt's form: a Python int (plain data turns a NumPy integer into one, so the learner side records it)
COUNT_FORM = "returns a Python int"


def _count_cases(seed: int) -> list[tuple]:
    import onnx

    rng = np.random.default_rng(seed + 202)
    return [(_mlp(rng),), (_light_style(rng),), (_half(rng),),
            (onnx.load(light_model_path("resnet50")),), (small_cnn(),)]


@exercise('02.count_params', title='Count the parameters in a graph', points=3, kind='function',
          hint=[
              'Count the stored float weights; old exporters also list them as graph inputs (do not count twice), and some weights are made at load time from a stored shape.',
              'model.graph.initializer (dims, data_type), ConstantOfShape nodes and onnx.numpy_helper.to_array.',
          ],
          cases=_count_cases, tests=(*_COUNT_NAMES, COUNT_FORM), skill=_COUNT_NAMES)
def _count_params(outputs, seed):
    for name, (model,), got in zip(_COUNT_NAMES, _count_cases(seed), outputs):
        want = count_parameters_reference(model)
        if isinstance(got, Raised):
            yield TestResult(name, False, f"your function {got.message}")
            continue
        if isinstance(got, float) and got.is_integer():
            got = int(got)
        if isinstance(got, bool) or not isinstance(got, int):
            yield TestResult(name, False, f"expected an integer, got {type(got).__name__}")
            continue
        t = expect_equal(name, got, want)
        if not t.passed:
            inits = {i.name for i in model.graph.initializer}
            floats = sum(int(np.prod(i.dims)) for i in model.graph.initializer if i.data_type in _float_types())
            everything = sum(int(np.prod(i.dims)) for i in model.graph.initializer)
            if got == floats and got != want:
                t.message += " — the tensors made by ConstantOfShape from a stored shape are missing"
            elif got == everything and got != want:
                t.message += " — integer initializers (shapes, indices) are not parameters"
            elif got > want and any(i.name in inits for i in model.graph.input):
                t.message += " — graph inputs that repeat an initializer must not be counted twice"
        yield t
    yield promised_form(COUNT_FORM, outputs, ("int",), "a Python int",
                        "int(...) turns the NumPy number that np.prod or np.sum gives into one")


# ---------------------------------------------------------------- 02.bad_initializer

def _mlp_chain(rng, bad: str | None, bias_first: bool = False):
    """A random chain of MatMul/Add layers with random names; `bad` is the kind of corruption applied to one
    initializer ('weight', 'bias') or None. Every node has exactly one initializer input; an Add reads its bias
    first or second (both are the same sum, and exporters write both), and the corrupted one reads it first when
    `bias_first`. Returns (model, name of the corrupted initializer or None)."""
    from onnx import TensorProto, helper, numpy_helper

    prefix = str(rng.choice(["enc", "block", "layer", "stage", "head", "mlp"]))
    n_layers = int(rng.integers(3, 6))
    widths = [int(v) for v in rng.integers(3, 17, size=n_layers + 1)]
    nodes, inits, names = [], [], []
    x = "X"
    k = int(rng.integers(0, n_layers)) if bad else -1
    for i in range(n_layers):
        w_name, b_name = f"{prefix}{i}.w{int(rng.integers(10, 99))}", f"{prefix}{i}.b{int(rng.integers(10, 99))}"
        w = rng.normal(size=(widths[i], widths[i + 1])).astype(np.float32)
        b = rng.normal(size=(widths[i + 1],)).astype(np.float32)
        inits += [numpy_helper.from_array(w, w_name), numpy_helper.from_array(b, b_name)]
        names += [w_name, b_name]
        first = bias_first if i == k and bad == "bias" else bool(rng.integers(0, 2))
        add_in = [b_name, f"{prefix}{i}_mm"] if first else [f"{prefix}{i}_mm", b_name]
        nodes += [helper.make_node("MatMul", [x, w_name], [f"{prefix}{i}_mm"], name=f"{prefix}{i}/matmul"),
                  helper.make_node("Add", add_in, [f"{prefix}{i}_add"], name=f"{prefix}{i}/add")]
        x = f"{prefix}{i}_add"
        if i < n_layers - 1:
            nodes.append(helper.make_node("Relu", [x], [f"{prefix}{i}_relu"], name=f"{prefix}{i}/relu"))
            x = f"{prefix}{i}_relu"
    culprit = None
    if bad:
        idx = 2 * k + (0 if bad == "weight" else 1)
        t = numpy_helper.to_array(inits[idx])
        culprit = names[idx]
        if bad == "weight":   # transposed, or one row too many: both are mistakes of hand-written converters
            t = t.T.copy() if t.shape[0] != t.shape[1] and rng.random() < 0.5 else np.vstack([t, t[:1]])
        else:
            t = np.concatenate([t, t[:1]])
        inits[idx] = numpy_helper.from_array(t, culprit)
    graph = helper.make_graph(nodes, f"{prefix}_net",
                              [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", widths[0]])],
                              [helper.make_tensor_value_info(x, TensorProto.FLOAT, ["N", widths[-1]])],
                              [inits[i] for i in rng.permutation(len(inits))])   # file order says nothing
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), culprit


BAD_TESTS = ("a weight of the wrong shape", "a bias of the wrong length", "another wrong weight",
             "another wrong bias", "a model with nothing wrong")
_BAD_KIND = ("weight", "bias", "weight", "bias", None)
#: whether the wrong bias is its Add's first input: one of each, so neither position can be assumed
_BIAS_FIRST = (False, False, False, True, False)


def _bad_data(seed: int):
    rng = np.random.default_rng(seed + 505)
    return [_mlp_chain(rng, kind, first) for kind, first in zip(_BAD_KIND, _BIAS_FIRST)]


def _bad_cases(seed: int) -> list[tuple]:
    return [(model,) for model, _ in _bad_data(seed)]


@exercise('02.bad_initializer', title='Find the initializer that breaks shape inference', points=3, kind='function',
          hint=[
              "Strict shape inference stops at the first node whose inputs do not fit, and its message names that node; one of the node's inputs is a stored weight with the wrong shape.",
              "onnx.shape_inference.infer_shapes(model, strict_mode=True) in a try block; model.graph.node and model.graph.initializer to go from the node's name to its initializer.",
          ],
          cases=_bad_cases, tests=BAD_TESTS, skill=BAD_TESTS)
def _bad_initializer(outputs, seed):
    for name, (model, culprit), got in zip(BAD_TESTS, _bad_data(seed), outputs):
        if isinstance(got, Raised):
            yield TestResult(name, False, f"your function {got.message}")
            continue
        t = expect_equal(name, got, culprit)
        if not t.passed:
            nodes = {n.name for n in model.graph.node}
            inits = {i.name for i in model.graph.initializer}
            if culprit is None:
                t.message = f"this model passes strict shape inference: expected None, got {got!r}"
            elif isinstance(got, str) and got in nodes:
                t.message += " — that is the failing node's name; return the initializer it reads"
            elif isinstance(got, str) and got in inits:
                t.message += " — that initializer is fine: which node does shape inference name?"
        yield t


# ---------------------------------------------------------------- 02.repair_conversion

#: the opset model_to_repair() was really written in (any opset from 11 to 12 gives the same nodes)
REPAIR_ORIGINAL_OPSET = 11
REPAIR_TARGET = 21
REPAIR_TESTS = ("opset 21", "valid ONNX at opset 21", "same outputs, batch 1", "same outputs, batch 6")
#: what the outputs are checked on; every test is the skill (a model at opset 21 whose nodes have the form of 21)
REPAIR_BEHAVIOUR = REPAIR_TESTS[2:]


def repair_reference():
    """The honest model: model_to_repair() with the opset it was written in."""
    m = model_to_repair()
    m.opset_import[0].version = REPAIR_ORIGINAL_OPSET
    return m


@exercise('02.repair_conversion', title='Repair a broken opset conversion', points=3, kind='onnx',
          hint=[
              'Writing a new opset number converts nothing: the nodes still have the form of the old opset (attributes that later opsets moved to inputs). Go back to an opset where they are valid, then convert for real.',
              'onnx.checker.check_model(model, full_check=True) names the node it rejects; onnx.version_converter.convert_version does the conversion.',
          ],
          tests=REPAIR_TESTS, skill=REPAIR_TESTS, bonus=True)
def _repair_conversion(answer, seed):
    import onnx

    from labkit.checks import DidNotDo

    model, why = load_onnx(answer)
    if model is None:
        yield TestResult("opset 21", False, why)
        return
    given = model_to_repair()
    if [n.SerializeToString(deterministic=True) for n in model.graph.node] == \
            [n.SerializeToString(deterministic=True) for n in given.graph.node]:
        yield DidNotDo("its nodes are exactly the ones you were given, so nothing was converted (only the opset "
                       "number changes, if anything); expected the nodes rewritten in the form of the new opset")
    got_opset = _default_opset(model)
    yield TestResult("opset 21", got_opset == REPAIR_TARGET,
                     f"default domain at opset {REPAIR_TARGET}" if got_opset == REPAIR_TARGET else
                     f"expected the default domain at opset {REPAIR_TARGET}, got {got_opset}")
    try:
        onnx.checker.check_model(model, full_check=True)
        yield TestResult("valid ONNX at opset 21", True, "onnx.checker accepts it")
    except Exception as e:
        yield TestResult("valid ONNX at opset 21", False,
                         f"onnx.checker says: {error_line(e)} — a node still has the form of an older opset")
    try:
        sess = ort_session(model)
    except Exception as e:
        for n in REPAIR_BEHAVIOUR:
            yield TestResult(n, False, f"ONNX Runtime cannot load it: {error_line(e)}")
        return
    ref = ort_session(repair_reference())
    rng = np.random.default_rng(seed + 606)
    probe = [rng.normal(size=(2, 3, 4, 4)).astype(np.float32) for _ in range(2)]
    try:
        outs = [sess.run(None, {sess.get_inputs()[0].name: x})[0] for x in probe]
        if np.array_equal(outs[0], outs[1]):
            yield DidNotDo("its output is the same whatever the input: the computation was dropped, not converted")
    except Exception:
        pass  # the runs below say what fails
    for n, batch in zip(REPAIR_BEHAVIOUR, (1, 6)):
        x = rng.normal(size=(batch, 3, 4, 4)).astype(np.float32)
        try:
            out = sess.run(None, {sess.get_inputs()[0].name: x})[0]
        except Exception as e:
            yield TestResult(n, False, f"ONNX Runtime failed at batch size {batch}: {error_line(e)}")
            continue
        yield expect_close(n, out, ref.run(None, {"X": x})[0], rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- quiz

quiz('02.quiz', title="Reading a model's structure", points=4, questions=[
    Question('q1', 'The light ResNet-50 file is 78 KiB, yet the model has 25 million parameters. Why?', {
        'a': 'ONNX compresses the weights when it saves a model',
        'b': 'The weights are downloaded the first time it loads',
        'c': 'Each weight is a ConstantOfShape node filling one value',
    }, answer='c', why=(
        'Only the shapes are stored; every weight becomes 0.02 at load time, so the predictions mean '
        'nothing. ONNX compresses nothing (a) (weights are raw numbers), and nothing is downloaded '
        '(b): the runtime reads one file.')),
    Question('q2', 'After onnx.shape_inference.infer_shapes, where are the shapes of intermediate tensors?', {
        'a': 'In graph.value_info',
        'b': 'In graph.initializer',
        'c': 'In graph.output',
    }, answer='a', why=(
        'value_info holds the type and shape of tensors that are neither inputs nor outputs. '
        'Initializers (b) are stored weights, and inference never adds outputs (c): you add one '
        'yourself to expose a tensor.')),
    Question('q3', 'When must a model keep its weights in external data?', {
        'a': 'Always: ONNX Runtime loads external weights faster',
        'b': "When one file would pass protobuf's 2 GB limit",
        'c': "Whenever the model's weights have been quantized",
    }, answer='b', why=(
        'A protobuf message cannot exceed 2 GB; the weights then go to a side file the model points '
        'to. External data is not faster to load (a), and quantization (c) makes files smaller, not '
        'larger.')),
    Question('q4', 'You wrote opset_import[0].version = 21 on an opset-11 model and saved it. What did you get?', {
        'a': 'A converted model: the runtime adapts old nodes to opset 21',
        'b': 'An invalid file: old-style nodes under a newer opset number',
        'c': 'The same model, faster: newer opsets have faster kernels',
    }, answer='b', why=(
        'The number pins which definition each node follows; changing it converts nothing. Old-style '
        "nodes (ReduceMean's axes attribute...) under a new number are invalid and the checker rejects "
        'them, which is why version_converter rewrites them. No runtime adapts them (a), and an opset '
        'number has nothing to do with kernel speed (c).')),
    Question('q5', 'This IR 3 ResNet-50 lists its initializers in graph.input too. Can you feed new values for them at run time?', {
        'a': 'Yes: an initializer listed as an input is a default to override',
        'b': 'Only with a SessionOptions flag that unlocks IR 3 inputs',
        'c': 'No: before IR version 4 they are constants, not inputs',
    }, answer='c', why=(
        'From IR 4 on, an initializer that is also listed as an input is an overridable default. This '
        'file is IR 3, where listing was compulsory and means nothing (a): ONNX Runtime treats them as '
        "constants, get_overridable_initializers() is empty and feeding one is an 'Invalid input "
        "name', as the lesson shows. No session option changes that (b).")),
    Question('q6', "Strict shape inference fails with '(op_type:MatMul, node name: fc2): Incompatible dimensions'. Where is the bad tensor?", {
        'a': "In node fc2's inputs: a stored weight that does not fit",
        'b': "In the graph's declared output shape, at the very end",
        'c': 'In the opset: MatMul needs a newer opset than this one',
    }, answer='a', why=(
        "Inference stops at the first node whose input shapes do not fit. The graph's outputs (b) are "
        "declared after it, and MatMul exists in every opset (c); the stored shape of that node's "
        'initializer is the suspect.')),
])
