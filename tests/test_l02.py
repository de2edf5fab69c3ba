"""Lesson 02 checks: references pass, typical mistakes fail with a useful message, hostile answers never raise."""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper, shape_inference, version_converter

from labkit.checks import evaluate, get
from labkit_judges import l02

FLOAT_TYPES = {TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE, TensorProto.BFLOAT16}


def ev(id, answer, seed=0):
    return evaluate(get(id), answer, seed)


def failed_tests(result):
    return [t for t in result.tests if not t.passed]


# ---------------------------------------------------------------- reference answers

def count_parameters(model):
    inits = {t.name: t for t in model.graph.initializer}
    total = sum(int(np.prod(t.dims)) for t in inits.values() if t.data_type in FLOAT_TYPES)
    for node in model.graph.node:
        if node.op_type == "ConstantOfShape" and node.input and node.input[0] in inits:
            value = next((a.t for a in node.attribute if a.name == "value"), None)
            if value is None or value.data_type in FLOAT_TYPES:
                total += int(np.prod(numpy_helper.to_array(inits[node.input[0]])))
    return total


def exposed(name=None):
    resnet = onnx.load(l02.light_model_path("resnet50"))
    name = name or l02.first_relu_output(resnet)
    model = shape_inference.infer_shapes(resnet)
    model.graph.output.extend([next(v for v in model.graph.value_info if v.name == name)])
    return model


def with_metadata(props=None, version=2):
    model = l02.small_cnn()
    helper.set_model_props(model, props if props is not None else dict(l02.METADATA))
    model.model_version = version
    return model


@pytest.fixture(scope="module")
def exposed_model():
    return exposed()


# ---------------------------------------------------------------- 02.count_params

def test_count_reference_passes():
    r = ev("02.count_params", count_parameters)
    assert r.status == "passed" and r.points == r.max_points > 0


def test_count_resnet_value():
    n = l02.count_parameters_reference(onnx.load(l02.light_model_path("resnet50")))
    assert 25_000_000 < n < 26_000_000  # ResNet-50's well-known size, BatchNorm statistics included


def test_count_other_seed_passes():
    assert ev("02.count_params", count_parameters, seed=7).status == "passed"


def test_count_initializers_only_misses_constantofshape():
    def floats_only(model):
        return sum(int(np.prod(t.dims)) for t in model.graph.initializer if t.data_type in FLOAT_TYPES)

    r = ev("02.count_params", floats_only)
    assert r.status == "failed"
    assert any("ConstantOfShape" in t.message for t in failed_tests(r))


def test_count_every_initializer_counts_integers():
    def everything(model):
        return sum(int(np.prod(t.dims)) for t in model.graph.initializer)

    r = ev("02.count_params", everything)
    assert r.status == "failed"
    assert any("integer initializers" in t.message for t in failed_tests(r))


def test_count_double_counts_inputs():
    def with_inputs(model):
        extra = 0
        for v in model.graph.input:
            dims = [d.dim_value for d in v.type.tensor_type.shape.dim]
            if v.type.tensor_type.elem_type in FLOAT_TYPES and all(dims):
                extra += int(np.prod(dims))
        return count_parameters(model) + extra

    r = ev("02.count_params", with_inputs)
    assert r.status == "failed"
    assert "expected" in r.message


def test_count_dynamic_constantofshape_is_not_a_weight():
    def all_cos(model):
        inits = {t.name: t for t in model.graph.initializer}
        total = count_parameters(model)
        for node in model.graph.node:  # wrongly adds a run-time ConstantOfShape (guesses 3 numbers)
            if node.op_type == "ConstantOfShape" and node.input[0] not in inits:
                total += 3
        return total

    r = ev("02.count_params", all_cos)
    assert r.status == "failed" and any(t.name == "weights made by ConstantOfShape" for t in failed_tests(r))


def test_count_wrong_type():
    r = ev("02.count_params", lambda m: "many")
    assert r.status == "failed" and "expected an integer" in r.message


# ---------------------------------------------------------------- 02.bad_initializer

def bad_initializer(model):
    import re

    try:
        shape_inference.infer_shapes(model, strict_mode=True)
        return None
    except Exception as e:
        failing = re.search(r"node name: ([^)]*)\)", str(e)).group(1)
    stored = {t.name for t in model.graph.initializer}
    node = next(n for n in model.graph.node if n.name == failing)
    return next(name for name in node.input if name in stored)


def test_bad_initializer_reference_passes_on_two_seeds():
    assert ev("02.bad_initializer", bad_initializer).status == "passed"
    assert ev("02.bad_initializer", bad_initializer, seed=11).status == "passed"


def test_bad_initializer_node_name_says_so():
    def node_name(model):
        try:
            shape_inference.infer_shapes(model, strict_mode=True)
        except Exception as e:
            import re
            return re.search(r"node name: ([^)]*)\)", str(e)).group(1)
    r = ev("02.bad_initializer", node_name)
    assert r.status == "failed" and r.points <= r.max_points / 2
    assert "that is the failing node's name" in " ".join(t.message for t in r.tests)


# ---------------------------------------------------------------- 02.repair_conversion

def test_repair_conversion():
    from labkit.material.l02 import model_to_repair

    fixed = model_to_repair()
    fixed.opset_import[0].version = 11
    assert ev("02.repair_conversion", version_converter.convert_version(fixed, 21)).status == "passed"
    r = ev("02.repair_conversion", model_to_repair())
    assert r.status == "failed" and r.points <= r.max_points / 2
    assert "a node still has the form of an older opset" in " ".join(t.message for t in r.tests)


# ---------------------------------------------------------------- quiz

def test_quiz():
    assert ev("02.quiz", {"q1": "c", "q2": "a", "q3": "b", "q4": "b", "q5": "c", "q6": "a"}).status == "passed"
    r = ev("02.quiz", {"q1": "a", "q2": "a", "q3": "b", "q4": "b", "q5": None, "q6": "a"})
    assert r.status == "failed" and r.points == pytest.approx(4 * 4 / 6, abs=0.01)


# ---------------------------------------------------------------- hostile answers

def _raises(*args):
    raise RuntimeError("boom")


def _stub(*args):
    raise NotImplementedError


HOSTILE = [None, 42, "not a model", b"\x00garbage", [1, 2], _raises, _stub, float("nan"),
           lambda *a: float("nan"), lambda *a: np.array([np.nan]), onnx.ModelProto(), "/no/such/file.onnx"]


@pytest.mark.parametrize("id", ["02.count_params", "02.bad_initializer", "02.repair_conversion", "02.quiz"])
@pytest.mark.parametrize("answer", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_answers_never_raise(id, answer):
    r = ev(id, answer)
    assert r.status in {"not_attempted", "error", "failed"}, r
    assert r.points == 0


def test_stub_is_not_attempted():
    assert ev("02.count_params", _stub).status == "not_attempted"
    assert ev("02.repair_conversion", None).status == "not_attempted"


def test_function_raising_reports_message():
    r = ev("02.count_params", _raises)
    assert r.status == "failed" and "raised RuntimeError: boom" in r.message
