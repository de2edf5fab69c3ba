"""Lesson 02 checks: references pass, typical mistakes fail with a useful message, hostile answers never raise."""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper, shape_inference, version_converter

from labkit import plain
from labkit.checks import collect, evaluate, get, judge_saved
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
    assert r.status == "passed" and r.points == r.max_points == 3


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


# ---------------------------------------------------------------- 02.expose_output

def test_expose_reference_passes(exposed_model):
    r = ev("02.expose_output", exposed_model)
    assert r.status == "passed" and r.points == 3, r


def test_expose_wrong_tensor(exposed_model):
    r = ev("02.expose_output", exposed("r1"))  # the BatchNorm before the Relu
    assert r.status == "failed" and "expected a graph output named 'r2'" in r.message


def test_expose_replaced_output():
    model = exposed()
    del model.graph.output[0]
    r = ev("02.expose_output", model)
    assert r.status == "failed"
    assert any("original output" in t.message for t in failed_tests(r))


def test_expose_mislabelled_tensor():
    """An output called r2 that carries another tensor's values (a renamed BatchNorm output)."""
    model = exposed()
    bn = next(n for n in model.graph.node if n.op_type == "BatchNormalization")
    relu = next(n for n in model.graph.node if n.op_type == "Relu")
    bn.output[0], relu.input[0], relu.output[0] = "r2", "r2", "r2_relu"
    for n in model.graph.node:
        n.input[:] = ["r2_relu" if (i == "r2" and n is not relu) else i for i in n.input]
    del model.graph.value_info[:]
    r = ev("02.expose_output", model)
    assert r.status == "failed"
    assert any(t.name == "values" for t in failed_tests(r)), r


def test_expose_saved_and_loaded(tmp_path, exposed_model):
    ex = get("02.expose_output")
    plain.save(collect(ex, exposed_model, 3), tmp_path / "a")
    assert judge_saved(ex, tmp_path / "a", 3).status == "passed"


# ---------------------------------------------------------------- 02.add_metadata

def test_metadata_reference_passes():
    r = ev("02.add_metadata", with_metadata())
    assert r.status == "passed" and r.points == 2, r


def test_metadata_missing_key():
    r = ev("02.add_metadata", with_metadata({"labels": l02.METADATA["labels"]}))
    assert r.status == "failed" and "pixel_scale" in r.message and "no such key" in r.message


def test_metadata_wrong_value_and_version():
    r = ev("02.add_metadata", with_metadata({"labels": "0-9", "pixel_scale": "0.0625"}, version=1))
    assert r.status == "failed"
    msgs = " ".join(t.message for t in failed_tests(r))
    assert "'0-9'" in msgs and "expected 2, got 1" in msgs


def test_metadata_on_another_model_fails():
    model = with_metadata()
    for t in model.graph.initializer:
        if t.name == "fc.weight":  # (a shift of the bias would not change a softmax)
            t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t) * 2, "fc.weight"))
    r = ev("02.add_metadata", model)
    assert r.status == "failed" and any("predictions unchanged" in t.name for t in failed_tests(r))


def test_metadata_saved_and_loaded(tmp_path):
    ex = get("02.add_metadata")
    path = tmp_path / "meta.onnx"
    onnx.save(with_metadata(), path)
    plain.save(collect(ex, str(path), 5), tmp_path / "a")
    assert judge_saved(ex, tmp_path / "a", 5).status == "passed"


# ---------------------------------------------------------------- 02.convert_opset

def test_convert_reference_passes():
    r = ev("02.convert_opset", version_converter.convert_version(l02.small_cnn(), l02.TARGET_OPSET))
    assert r.status == "passed" and r.points == 3, r


def test_convert_number_only():
    model = l02.small_cnn()
    model.opset_import[0].version = l02.TARGET_OPSET
    r = ev("02.convert_opset", model)
    assert r.status == "failed" and "only the opset number changed" in r.message


def test_convert_wrong_target():
    r = ev("02.convert_opset", version_converter.convert_version(l02.small_cnn(), 13))
    assert r.status == "failed" and f"at opset {l02.TARGET_OPSET}, got 13" in r.message


def test_convert_unconverted():
    r = ev("02.convert_opset", l02.small_cnn())
    assert r.status == "failed" and "got 11" in r.message


def test_convert_saved_and_loaded(tmp_path):
    ex = get("02.convert_opset")
    data = collect(ex, version_converter.convert_version(l02.small_cnn(), l02.TARGET_OPSET), 9)
    plain.save(data, tmp_path / "a")
    assert judge_saved(ex, tmp_path / "a", 9).status == "passed"


# ---------------------------------------------------------------- quiz

def test_quiz():
    assert ev("02.quiz", {"q1": "b", "q2": "a", "q3": "b", "q4": "b", "q5": "b"}).status == "passed"
    r = ev("02.quiz", {"q1": "a", "q2": "a", "q3": "b", "q4": "b", "q5": None})
    assert r.status == "failed" and r.points == pytest.approx(4 * 3 / 5)


# ---------------------------------------------------------------- hostile answers

def _raises(*args):
    raise RuntimeError("boom")


def _stub(*args):
    raise NotImplementedError


HOSTILE = [None, 42, "not a model", b"\x00garbage", [1, 2], _raises, _stub, float("nan"),
           lambda *a: float("nan"), lambda *a: np.array([np.nan]), onnx.ModelProto(), "/no/such/file.onnx"]


@pytest.mark.parametrize("id", ["02.count_params", "02.expose_output", "02.add_metadata", "02.convert_opset", "02.quiz"])
@pytest.mark.parametrize("answer", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_answers_never_raise(id, answer):
    r = ev(id, answer)
    assert r.status in {"not_attempted", "error", "failed"}, r
    assert r.points == 0


def test_stub_is_not_attempted():
    assert ev("02.count_params", _stub).status == "not_attempted"
    assert ev("02.expose_output", None).status == "not_attempted"


def test_function_raising_reports_message():
    r = ev("02.count_params", _raises)
    assert r.status == "failed" and "raised RuntimeError: boom" in r.message
