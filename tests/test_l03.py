"""Lesson 03: judges of the exported digits classifiers and the quiz.

The models here are built by hand with onnx.helper (a 1x1 Conv, then a linear classifier fitted by
scikit-learn in a fraction of a second), so the tests need neither training nor torch.onnx.
"""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from labkit import plain
from labkit.checks import collect, evaluate, get, judge_saved
from labkit.data import digits
from labkit_judges import l03


@pytest.fixture(scope="module")
def linear():
    """Weights (64, 10) and bias (10,) of a linear digits classifier on [0, 1] pixels (about 96% right)."""
    from sklearn.linear_model import LogisticRegression

    d = digits()
    clf = LogisticRegression(max_iter=2000).fit(d.x_train.reshape(len(d.x_train), -1), d.y_train)
    return clf.coef_.T.astype(np.float32), clf.intercept_.astype(np.float32)


def classifier(w, b, *, raw=False, batch="batch", scale=16.0, dropout_training=False, batch_dependent=False,
               conv_gain=1.0):
    """images -> [Cast, Div(scale)] -> Conv 1x1 -> Flatten -> [Dropout] -> Gemm -> logits."""
    x = helper.make_tensor_value_info("images", TensorProto.UINT8 if raw else TensorProto.FLOAT, [batch, 1, 8, 8])
    y = helper.make_tensor_value_info("logits", TensorProto.FLOAT, [batch, 10])
    inits = [numpy_helper.from_array(np.full((1, 1, 1, 1), conv_gain, np.float32), "cw"),
             numpy_helper.from_array(np.zeros(1, np.float32), "cb"),
             numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "B"),
             numpy_helper.from_array(np.array(scale, np.float32), "scale")]
    nodes, cur = [], "images"
    if raw:
        nodes += [helper.make_node("Cast", [cur], ["f"], to=TensorProto.FLOAT),
                  helper.make_node("Div", ["f", "scale"], ["scaled"])]
        cur = "scaled"
    nodes += [helper.make_node("Conv", [cur, "cw", "cb"], ["c"]), helper.make_node("Flatten", ["c"], ["flat"])]
    cur = "flat"
    if batch_dependent:  # like BatchNorm in train mode: every row is shifted by the batch mean
        nodes += [helper.make_node("ReduceMean", [cur], ["mu"], axes=[0], keepdims=1),
                  helper.make_node("Sub", [cur, "mu"], ["centred"])]
        cur = "centred"
    if dropout_training:
        nodes += [helper.make_node("Constant", [], ["ratio"], value=numpy_helper.from_array(np.array(0.5, np.float32))),
                  helper.make_node("Constant", [], ["train"], value=numpy_helper.from_array(np.array(True))),
                  helper.make_node("Dropout", [cur, "ratio", "train"], ["dropped"])]
        cur = "dropped"
    nodes.append(helper.make_node("Gemm", [cur, "W", "B"], ["logits"]))
    graph = helper.make_graph(nodes, "digits", [x], [y], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)


def failing(r):
    return {t.name: t.message for t in r.tests if not t.passed}


# ---------------------------------------------------------------- 03.dynamic_batch

def test_dynamic_batch_reference_passes_as_path_bytes_and_proto(linear, tmp_path):
    ex = get("03.dynamic_batch")
    m = classifier(*linear)
    onnx.save(m, tmp_path / "m.onnx")
    for answer in (m, m.SerializeToString(), str(tmp_path / "m.onnx"), tmp_path / "m.onnx"):
        r = evaluate(ex, answer)
        assert r.status == "passed" and r.points == r.max_points, r


def test_dynamic_batch_any_batch_name(linear):
    assert evaluate(get("03.dynamic_batch"), classifier(*linear, batch="N")).status == "passed"


def test_fixed_batch_fails_at_7_and_64(linear):
    r = evaluate(get("03.dynamic_batch"), classifier(*linear, batch=1))
    bad = failing(r)
    assert r.status == "failed" and 0 < r.points < r.max_points
    assert "named (symbolic) first dimension, got [1, 1, 8, 8]" in bad["symbolic batch"]
    assert "failed at batch size 7" in bad["batch 7"] and "batch 64" in bad
    assert "classifies the test digits" not in bad  # run one image at a time, it still classifies


@pytest.mark.parametrize("change, name, message", [
    (dict(w_scale=0.0), "classifies the test digits", "only"),
    (dict(raw=True), "input dtype float32", "is uint8, expected float32"),
    (dict(batch_dependent=True), "same logits at any batch size", "depend on the other images"),
])
def test_dynamic_batch_wrong_models_fail(linear, change, name, message):
    w, b = linear
    if "w_scale" in change:
        w, b = w * change.pop("w_scale"), np.arange(10, dtype=np.float32)
    r = evaluate(get("03.dynamic_batch"), classifier(w, b, **change))
    assert r.status == "failed" and r.points < r.max_points
    assert message in failing(r)[name]


def test_external_data_is_reported(linear, tmp_path):
    path = tmp_path / "ext.onnx"
    onnx.save(classifier(*linear), path, save_as_external_data=True, all_tensors_to_one_file=True,
              location="ext.onnx.data", size_threshold=0)
    r = evaluate(get("03.dynamic_batch"), path)
    assert r.status == "failed" and "separate .data file" in failing(r)["weights inside the file"]
    assert len(r.tests) == 8  # every answer gets the same tests, so partial points stay comparable


def test_nan_model_fails(linear):
    w, b = linear
    r = evaluate(get("03.dynamic_batch"), classifier(w, np.full_like(b, np.nan)))
    assert r.status == "failed" and "NaN" in failing(r)["batch 1"]


@pytest.mark.parametrize("exercise", ["03.dynamic_batch", "03.eval_fix", "03.raw_input"])
@pytest.mark.parametrize("hostile, status", [
    (None, "not_attempted"), (..., "not_attempted"), ("missing.onnx", "error"), (42, "error"),
    (b"not a model", "failed"), (onnx.ModelProto(), "failed"), ({"path": "x"}, "error"),
])
def test_hostile_answers_give_a_result(exercise, hostile, status):
    r = evaluate(get(exercise), hostile)
    assert r.status == status and r.points == 0, r


# ---------------------------------------------------------------- 03.eval_fix

def test_eval_fix_reference_passes(linear):
    r = evaluate(get("03.eval_fix"), classifier(*linear))
    assert r.status == "passed" and r.points == r.max_points, r


def test_training_mode_dropout_fails(linear):
    r = evaluate(get("03.eval_fix"), classifier(*linear, dropout_training=True))
    bad = failing(r)
    assert r.status == "failed" and r.points <= r.max_points / 2
    assert "Dropout" in bad["no training-mode nodes"] and "training_mode=True" in bad["no training-mode nodes"]
    assert "dropout is still active" in bad["same answer twice"]


def test_training_mode_batchnorm_is_detected(linear):
    m = classifier(*linear)
    m.graph.node.append(helper.make_node("BatchNormalization", ["a", "s", "b", "m", "v"], ["o"], training_mode=1))
    assert l03._training_mode_nodes(m) == ["BatchNormalization 'o' with training_mode=1"]


def test_eval_fix_other_wrong_models(linear):
    w, b = linear
    untrained = evaluate(get("03.eval_fix"), classifier(w * 0, np.arange(10, dtype=np.float32)))
    assert "only" in failing(untrained)["classifies the test digits"]
    shifting = evaluate(get("03.eval_fix"), classifier(w, b, batch_dependent=True))
    assert "depend on the other images" in failing(shifting)["same logits at any batch size"]
    fixed = evaluate(get("03.eval_fix"), classifier(w, b, batch=1))
    assert "same answer twice" in failing(fixed) and fixed.points < fixed.max_points


# ---------------------------------------------------------------- 03.raw_input

def test_raw_input_reference_passes(linear):
    r = evaluate(get("03.raw_input"), classifier(*linear, raw=True))
    assert r.status == "passed" and r.points == r.max_points, r


@pytest.mark.parametrize("change, name, message", [
    (dict(raw=False), "input dtype uint8", "is float32, expected uint8"),
    (dict(raw=True, scale=255.0), "first Conv sees pixels / 16", "not the raw pixels divided by 16"),
    (dict(raw=True, scale=255.0), "classifies the test digits", "divide by 16"),
    (dict(raw=True, scale=15.0), "first Conv sees pixels / 16", "not the raw pixels divided by 16"),
    (dict(raw=True, batch=1), "symbolic batch", "got [1, 1, 8, 8]"),
])
def test_raw_input_wrong_models_fail(linear, change, name, message):
    r = evaluate(get("03.raw_input"), classifier(*linear, **change))
    assert r.status == "failed" and r.points < r.max_points
    assert message in failing(r)[name]


def test_raw_input_scale_folded_elsewhere_still_needs_exact_conv_input(linear):
    # correct logits but the division moved into the Conv weights: the probe says where it expected it
    w, b = linear
    r = evaluate(get("03.raw_input"), classifier(w, b, raw=True, scale=1.0, conv_gain=1 / 16))
    bad = failing(r)
    assert list(bad) == ["first Conv sees pixels / 16"]


# ---------------------------------------------------------------- 03.quiz

def test_quiz():
    ex = get("03.quiz")
    good = {"q1": "b", "q2": "b", "q3": "b", "q4": "a"}
    assert evaluate(ex, good).status == "passed"
    wrong = evaluate(ex, {**good, "q1": "a", "q4": "b"})
    assert wrong.status == "failed" and wrong.points == 2 and "think again" in failing(wrong)["q1"]
    assert evaluate(ex, {"q1": None, "q2": None, "q3": None, "q4": None}).status == "not_attempted"
    assert evaluate(ex, ["b", "b", "b", "a"]).points == 0
    assert "not one of" in failing(evaluate(ex, {**good, "q2": "z"}))["q2"]


# ---------------------------------------------------------------- the grader's path

def test_answers_survive_the_grader_round_trip(linear, tmp_path):
    answers = {"03.dynamic_batch": classifier(*linear), "03.eval_fix": classifier(*linear),
               "03.raw_input": classifier(*linear, raw=True),
               "03.quiz": {"q1": "b", "q2": "b", "q3": "b", "q4": "a"}}
    for id, answer in answers.items():
        ex = get(id)
        plain.save(collect(ex, answer, 5), tmp_path / id)
        assert judge_saved(ex, tmp_path / id, 5).status == "passed", id
    ex = get("03.eval_fix")
    plain.save(collect(ex, classifier(*linear, dropout_training=True), 5), tmp_path / "bad")
    assert judge_saved(ex, tmp_path / "bad", 5).status == "failed"


def test_seed_changes_the_images_not_the_verdict(linear):
    ex = get("03.dynamic_batch")
    for seed in (0, 1, 12345):
        assert evaluate(ex, classifier(*linear), seed).status == "passed"
