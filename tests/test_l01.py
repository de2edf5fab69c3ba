"""Lesson 01: the hand-built sigmoid model, running two engines, reading versions."""
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from labkit import plain
from labkit.checks import collect_answer, evaluate, get, judge_saved
from labkit_judges.l01 import B, W, make_model


def build(x_shape=("batch", 4), act="Sigmoid", w=W, b=B, out="Y", ir=10):
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, list(x_shape))
    y = helper.make_tensor_value_info(out, TensorProto.FLOAT, [x_shape[0], 3])
    nodes = [helper.make_node("MatMul", ["X", "W"], ["XW"]), helper.make_node("Add", ["XW", "B"], ["Z"])]
    nodes.append(helper.make_node(act, ["Z"], [out]))
    g = helper.make_graph(nodes, "g", [x], [y], [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "B")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)], ir_version=ir)


def test_sigmoid_model_reference_passes_as_proto_path_and_bytes(tmp_path):
    ex = get("01.sigmoid_model")
    m = build()
    path = tmp_path / "m.onnx"
    onnx.save(m, path)
    for answer in (m, str(path), path, m.SerializeToString()):
        r = evaluate(ex, answer)
        assert r.status == "passed", r
    other_name = build(x_shape=("N", 4))
    assert evaluate(ex, other_name).status == "passed"  # any name for the batch dimension


@pytest.mark.parametrize("model, message", [
    (build(x_shape=(2, 4)), "expected the input shape ['batch', 4]"),
    (build(act="Relu"), "at index"),
    (build(w=W * 2), "at index"),
    (build(out="out"), "expected one output 'Y'"),
    (build(ir=onnx.IR_VERSION + 1), "ir_version"),  # a file newer than the checker: it says which field
])
def test_sigmoid_model_wrong_models_fail(model, message):
    r = evaluate(get("01.sigmoid_model"), model)
    assert r.status in ("failed", "error") and r.points < r.max_points
    assert message in " ".join(t.message for t in r.tests)


def test_fixed_batch_fails_at_unseen_batch_sizes():
    r = evaluate(get("01.sigmoid_model"), build(x_shape=(1, 4)))
    failing = {t.name for t in r.tests if not t.passed}
    assert {"batch 5", "batch 33"} <= failing


@pytest.mark.parametrize("hostile, status", [
    (None, "not_attempted"), ("missing.onnx", "error"), (b"not a model", "failed"), (42, "error"),
    (onnx.ModelProto(), "failed"),
])
def test_sigmoid_model_hostile(hostile, status):
    r = evaluate(get("01.sigmoid_model"), hostile)
    assert r.status == status and r.points == 0


def run_both(model_bytes, x):
    return {"reference": ReferenceEvaluator(model_bytes).run(None, {"X": x})[0],
            "ort": ort.InferenceSession(model_bytes, providers=["CPUExecutionProvider"]).run(None, {"X": x})[0]}


def _engine_outputs(model_bytes, x):
    from onnx.reference import ReferenceEvaluator

    return {"reference": ReferenceEvaluator(model_bytes).run(None, {"X": x}),
            "ort": ort.InferenceSession(model_bytes, providers=["CPUExecutionProvider"]).run(None, {"X": x})}


def test_run_both():
    ex = get("01.run_both")
    assert evaluate(ex, run_both).status == "passed"
    wrong_keys = evaluate(ex, lambda m, x: {"ref": 1})
    assert wrong_keys.points == 0 and "keys 'reference' and 'ort'" in wrong_keys.message
    hardcoded = evaluate(ex, lambda m, x: {"reference": 1 / (1 + np.exp(-(x @ W + B))), "ort": 1 / (1 + np.exp(-(x @ W + B)))})
    assert hardcoded.status == "failed" and "float64 model" in " ".join(t.name for t in hardcoded.tests if not t.passed)
    # blind round 12: the last output, and the input cast to float32 "to be safe", were never seen
    last = evaluate(ex, lambda m, x: {k: v[-1] for k, v in _engine_outputs(m, x).items()})
    assert last.points <= last.max_points / 2 and "the model's second output" in last.message
    cast = evaluate(ex, lambda m, x: {k: v[0] for k, v in _engine_outputs(m, x.astype(np.float32)).items()})
    assert cast.points <= cast.max_points / 2 and "float64" in cast.message
    assert hardcoded.points <= hardcoded.max_points / 2
    twice = evaluate(ex, lambda m, x: {"reference": run_both(m, x)["ort"], "ort": run_both(m, x)["ort"]})
    assert twice.status == "failed" and twice.points <= twice.max_points / 2
    assert "holds onnxruntime.InferenceSession's numbers" in " ".join(t.message for t in twice.tests)
    only_ref = evaluate(ex, lambda m, x: {"reference": run_both(m, x)["reference"], "ort": np.zeros(1)})
    assert only_ref.status == "failed" and 0 < only_ref.points < only_ref.max_points
    assert evaluate(ex, lambda m, x: (_ for _ in ()).throw(KeyError("X"))).status == "failed"


def model_versions(b):
    m = onnx.load_from_string(b)
    return {"ir_version": m.ir_version, "opset": next(o.version for o in m.opset_import if o.domain in ("", "ai.onnx"))}


def test_versions():
    ex = get("01.versions")
    assert evaluate(ex, model_versions).status == "passed"
    first = evaluate(ex, lambda b: {"ir_version": onnx.load_from_string(b).ir_version,
                                    "opset": onnx.load_from_string(b).opset_import[0].version})
    assert first.status == "failed" and "not of the default domain" in first.message
    fixed = evaluate(ex, lambda b: {"ir_version": 10, "opset": 21})
    assert fixed.status == "failed" and "opset_import of this model" in " ".join(t.message for t in fixed.tests)
    last = evaluate(ex, lambda b: {"ir_version": onnx.load_from_string(b).ir_version,
                                   "opset": onnx.load_from_string(b).opset_import[-1].version})
    assert last.status == "failed" and last.points <= last.max_points / 2
    assert evaluate(ex, lambda b: [10, 21]).points == 0
    assert evaluate(ex, lambda b: None).points == 0


def test_answers_survive_the_grader_round_trip(tmp_path):
    for id, answer in (("01.sigmoid_model", build()), ("01.run_both", run_both), ("01.versions", model_versions),
                       ("01.quiz", {"q1": "b", "q2": "c", "q3": "a", "q4": "b", "q5": "c", "q6": "a"})):
        ex = get(id)
        plain.save(collect_answer(ex, answer, 5), tmp_path / id)
        assert judge_saved(ex, tmp_path / id, 5).status == "passed", id


def test_make_model_matches_numpy():
    x = np.random.default_rng(0).normal(size=(4, 4)).astype(np.float32)
    y = ReferenceEvaluator(make_model(W, B)).run(None, {"X": x})[0]
    np.testing.assert_allclose(y, 1 / (1 + np.exp(-(x @ W + B))), rtol=1e-6)
