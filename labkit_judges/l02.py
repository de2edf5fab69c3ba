"""Lesson 02 exercises, judge side (references, test inputs, quiz keys): count parameters, expose an
intermediate tensor, add metadata, convert opsets."""
from __future__ import annotations

from labkit.exercises.l02 import small_cnn  # declares the exercises judged here

from pathlib import Path

import numpy as np

from labkit.checks import TestResult, expect_close, expect_equal, judge, load_onnx, ort_session, quiz_key
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


def _first_line(e: Exception, n: int = 200) -> str:
    text = str(e).strip()
    return (text.splitlines()[0] if text else type(e).__name__)[:n]


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


def _count_cases(seed: int) -> list[tuple]:
    import onnx

    rng = np.random.default_rng(seed + 202)
    return [(_mlp(rng),), (_light_style(rng),), (_half(rng),),
            (onnx.load(light_model_path("resnet50")),), (small_cnn(),)]


@judge("02.count_params", cases=_count_cases)
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


# ---------------------------------------------------------------- 02.expose_output

def first_relu_output(model) -> str:
    return next(n.output[0] for n in model.graph.node if n.op_type == "Relu")


def _resnet_input(seed: int) -> np.ndarray:
    return np.random.default_rng(seed + 303).normal(size=(1, 3, 224, 224)).astype(np.float32)


@judge("02.expose_output")
def _expose_output(answer, seed):
    import onnx

    model, why = load_onnx(answer)
    if model is None:
        yield TestResult("loads", False, why)
        return
    original = onnx.load(light_model_path("resnet50"))
    target = first_relu_output(original)
    outs = [o.name for o in model.graph.output]
    yield TestResult("new output", target in outs,
                     f"'{target}' is a graph output" if target in outs else
                     f"expected a graph output named '{target}' (the first Relu's output), got outputs {outs}")
    yield TestResult("original output kept", RESNET_OUTPUT in outs,
                     f"'{RESNET_OUTPUT}' is still an output" if RESNET_OUTPUT in outs else
                     f"the original output '{RESNET_OUTPUT}' is gone: add an output, do not replace it")
    same = [n.op_type for n in model.graph.node] == [n.op_type for n in original.graph.node]
    yield TestResult("nodes unchanged", same,
                     f"the same {len(original.graph.node)} nodes" if same else
                     f"expected the original {len(original.graph.node)} nodes, found {len(model.graph.node)}: "
                     "exposing a tensor only adds an output, it changes no node")
    if target not in outs:
        return
    x = _resnet_input(seed)
    try:
        got = ort_session(model).run([target], {RESNET_INPUT: x})[0]
    except Exception as e:
        yield TestResult("values", False, f"ONNX Runtime cannot run your model: {_first_line(e)}")
        return
    inferred = onnx.shape_inference.infer_shapes(original)
    sub = onnx.utils.Extractor(inferred).extract_model([RESNET_INPUT], [target])
    want = ort_session(sub).run(None, {RESNET_INPUT: x})[0]
    yield expect_close("values", got, want, rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------- 02.add_metadata

def _parity(model, seed: int, name: str, batches=(1, 7)):
    """Compare a learner's version of small_cnn with the judge's own copy on random digits."""
    try:
        sess = ort_session(model)
    except Exception as e:
        yield TestResult("runs in ONNX Runtime", False, f"ONNX Runtime cannot load it: {_first_line(e)}")
        return
    inputs = [i.name for i in sess.get_inputs()]
    if inputs != ["pixels"]:
        yield TestResult("runs in ONNX Runtime", False, f"expected one input 'pixels', got {inputs}")
        return
    rng = np.random.default_rng(seed + 404)
    for n in batches:
        x = rng.random((n, 1, 8, 8)).astype(np.float32)
        try:
            got = sess.run(None, {"pixels": x})[0]
        except Exception as e:
            yield TestResult(f"{name}, batch {n}", False, f"ONNX Runtime failed: {_first_line(e)}")
            continue
        yield expect_close(f"{name}, batch {n}", got, _small_cnn_reference(x), rtol=1e-4, atol=1e-6)


@judge("02.add_metadata")
def _add_metadata(answer, seed):
    model, why = load_onnx(answer)
    if model is None:
        yield TestResult("loads", False, why)
        return
    props = {p.key: p.value for p in model.metadata_props}
    for key, value in METADATA.items():
        got = props.get(key)
        yield TestResult(f"metadata '{key}'", got == value,
                         f"{key} = {value!r}" if got == value else
                         f"expected metadata_props to hold {key} = {value!r}, got "
                         + (repr(got) if got is not None else f"no such key (keys: {sorted(props)})"))
    yield expect_equal("model_version", int(model.model_version), MODEL_VERSION)
    try:
        seen = ort_session(model).get_modelmeta().custom_metadata_map
        ok = all(seen.get(k) == v for k, v in METADATA.items())
        yield TestResult("ONNX Runtime sees it", ok, "custom_metadata_map has both keys" if ok else
                         f"ONNX Runtime's custom_metadata_map is {dict(seen)}")
    except Exception as e:
        yield TestResult("ONNX Runtime sees it", False, f"ONNX Runtime cannot load the model: {_first_line(e)}")
    yield from _parity(model, seed, "predictions unchanged", batches=(3,))


# ---------------------------------------------------------------- 02.convert_opset

@judge("02.convert_opset")
def _convert_opset(answer, seed):
    import onnx

    model, why = load_onnx(answer)
    if model is None:
        yield TestResult("loads", False, why)
        return
    opset = _default_opset(model)
    yield TestResult("opset", opset == TARGET_OPSET,
                     f"default-domain opset {opset}" if opset == TARGET_OPSET else
                     f"expected the default domain ('') at opset {TARGET_OPSET}, got {opset}")
    try:
        onnx.checker.check_model(model, full_check=True)
        yield TestResult("valid ONNX", True, "onnx.checker accepts it")
    except Exception as e:
        yield TestResult("valid ONNX", False, f"onnx.checker says: {_first_line(e)} — were the nodes converted, "
                                              "or only the opset number changed?")
    yield from _parity(model, seed, "same predictions", batches=(1, 7))


# ---------------------------------------------------------------- quiz

quiz_key("02.quiz", {
    "q1": ("b", "Only the shapes are stored; every weight becomes 0.02 at load time, so the predictions mean nothing."),
    "q2": ("a", "value_info holds the type and shape of tensors that are neither inputs nor outputs."),
    "q3": ("b", "A protobuf message cannot exceed 2 GB; the weights then go to a side file the model points to."),
    "q4": ("b", "Conversion rewrites nodes; only a comparison of outputs proves it still computes the same thing."),
    "q5": ("b", "Before IR 4 initializers had to be listed as inputs; they act as defaults you need not feed."),
})
