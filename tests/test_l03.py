"""Lesson 03: the judges' messages for typical mistakes, hostile answers, the grader's path, the quiz.

The exports are the mutation corpus's (tests/corpus/l03.py), made once per session; the corpus itself
(right answers full, wrong ones below full or at most half) runs in tests/test_corpus.py.
"""
import numpy as np
import onnx
import pytest
from onnx import helper

from corpus import l03 as corpus03
from labkit import plain
from labkit.checks import collect_answer, evaluate, get, judge_saved, judge_spec
from labkit_judges import l03


def failing(r):
    return {t.name: t.message for t in r.tests if not t.passed}


# ---------------------------------------------------------------- the judge's reference

def test_reference_is_the_course_model():
    """The judge's hand-written ONNX graph of the shipped weights computes what trained_cnn() computes."""
    import torch

    from labkit.models import trained_cnn

    x = l03._normalized(l03._test_digits()[0])
    with torch.no_grad():
        want = trained_cnn()(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(l03.course_logits(), want, rtol=1e-4, atol=1e-4)
    assert (l03.course_logits().argmax(1) == l03._test_digits()[1]).mean() > 0.95


# ---------------------------------------------------------------- 03.dynamic_batch

def test_dynamic_batch_passes_as_path_bytes_and_proto(tmp_path):
    ex = get("03.dynamic_batch")
    blob = corpus03.legacy()
    (tmp_path / "m.onnx").write_bytes(blob)
    for answer in (blob, onnx.load_from_string(blob), str(tmp_path / "m.onnx"), tmp_path / "m.onnx"):
        r = evaluate(ex, answer)
        assert r.status == "passed" and r.points == r.max_points, r
    for seed in (1, 12345):  # other digits, same verdict
        assert evaluate(ex, blob, seed).status == "passed"


@pytest.mark.parametrize("make, test, message", [
    (lambda: corpus03.legacy(dynamic=False), "symbolic batch", "got [4, 1, 8, 8] — the batch is fixed at 4"),
    (lambda: corpus03.legacy(dynamic=False), "batch 7", "failed at batch size 7"),
    (lambda: corpus03.dynamo_train_mode(), "same logits at any batch size", "training mode"),
    (lambda: corpus03.dynamo_train_mode(), "same logits as the course model", "exported in training mode, expected an inference graph"),
    (lambda: corpus03.legacy("untrained"), "same logits as the course model", "not an untrained DigitsCNN"),
    (lambda: corpus03.legacy("retrained"), "same logits as the course model", "a CNN you trained yourself"),
    (lambda: corpus03.legacy("softmax"), "same logits as the course model", "ends in a Softmax"),
    (lambda: corpus03.legacy("double"), "input dtype float32", "is float64, expected float32"),
])
def test_dynamic_batch_says_what_is_wrong(make, test, message):
    r = evaluate(get("03.dynamic_batch"), make())
    assert r.status == "failed" and r.points < r.max_points
    assert message in failing(r)[test], failing(r)


def test_wrong_logits_earn_at_most_half():
    """The seed's bug: an untrained CNN scored 3.5/4."""
    r = evaluate(get("03.dynamic_batch"), corpus03.legacy("untrained"))
    assert r.points <= r.max_points / 2 and list(failing(r)) == ["same logits as the course model"]


def test_external_data_is_reported(tmp_path):
    r = evaluate(get("03.dynamic_batch"), corpus03._external(tmp_path, corpus03.legacy()))
    assert r.status == "failed" and "keeps its data in another file" in failing(r)["weights inside the file"]
    assert len(r.tests) == 8  # every answer gets the same tests, so partial points stay comparable


def test_nan_model_fails():
    m = onnx.load_from_string(corpus03.legacy())
    bias = next(t for t in m.graph.initializer if len(t.dims) == 1 and t.dims[0] == 10)
    bias.CopyFrom(onnx.numpy_helper.from_array(np.full(10, np.nan, np.float32), bias.name))
    r = evaluate(get("03.dynamic_batch"), m)
    assert r.status == "failed" and "NaN" in failing(r)["batch 1"]


@pytest.mark.parametrize("exercise", ["03.dynamic_batch", "03.raw_input"])
@pytest.mark.parametrize("hostile, status", [
    (None, "not_attempted"), (..., "not_attempted"), ("missing.onnx", "error"), (42, "error"),
    (b"not a model", "failed"), (onnx.ModelProto(), "failed"), ({"path": "x"}, "error"),
])
def test_hostile_answers_give_a_result(exercise, hostile, status):
    r = evaluate(get(exercise), hostile)
    assert r.status == status and r.points == 0, r


def test_training_mode_nodes_are_found():
    m = onnx.load_from_string(corpus03.dynamo_train_mode())
    assert any("Dropout" in f for f in l03._training_mode_nodes(m))
    assert l03._training_mode_nodes(onnx.load_from_string(corpus03.legacy())) == []
    m.graph.node.append(helper.make_node("BatchNormalization", ["a", "s", "b", "m", "v"], ["o"], training_mode=1))
    assert "BatchNormalization 'o' with training_mode=1" in l03._training_mode_nodes(m)


# ---------------------------------------------------------------- 03.raw_input

def test_raw_input_reference_passes():
    r = evaluate(get("03.raw_input"), corpus03.legacy_raw("/16"))
    assert r.status == "passed" and r.points == r.max_points, r


@pytest.mark.parametrize("kind, test, message", [
    ("/255", "same logits as the course model", "exactly pixels / 16"),
    ("cast only", "same logits as the course model", "exactly pixels / 16"),
])
def test_raw_input_says_what_is_wrong(kind, test, message):
    """The seed's bug: dividing by 255 (18% right) scored 3.11/4."""
    r = evaluate(get("03.raw_input"), corpus03.legacy_raw(kind))
    assert r.status == "failed" and r.points <= r.max_points / 2
    assert message in failing(r)[test], failing(r)


def test_raw_input_float_model_is_told_to_cast():
    r = evaluate(get("03.raw_input"), corpus03.legacy())
    assert "is float32, expected uint8 (raw pixels arrive as uint8" in failing(r)["input dtype uint8"]


# ---------------------------------------------------------------- 03.faithful

def test_faithful_cases_are_balanced_and_shuffled():
    _, order0, expected0 = l03._faithful_cases(0)
    _, order1, _ = l03._faithful_cases(1)
    assert sorted(order0) == list(range(len(l03.FAITHFUL_CASES))) and order0 != order1
    assert 0 < sum(expected0) < len(expected0)


def test_faithful_cases_mean_what_they_say():
    """Each case's ONNX file agrees with its network at every batch size exactly when it is declared faithful."""
    reference = corpus03.CORPUS_FAITHFUL[0].answer
    cases, order, expected = l03._faithful_cases(7)
    for args, index, want in zip(cases, order, expected):
        model, net, example = plain.materialize(args)
        assert reference(model, net, example) is want, l03.FAITHFUL_CASES[index]


def test_faithful_messages():
    ex = get("03.faithful")
    r = evaluate(ex, lambda m, net, e: True)
    bad = failing(r)
    assert r.points <= r.max_points / 2
    assert "fixed number in the graph" in bad["fixed batch size"]
    assert "at small batch sizes the outputs" in bad["branch baked in at a large batch"]
    r = evaluate(ex, corpus03._sizes_checker(lambda e: (1, 2, 3, 5, 8, 17), rtol=0.0, atol=1e-5))
    assert list(failing(r)) == ["faithful export, large logits"]
    assert "tight absolute tolerance" in failing(r)["faithful export, large logits"]
    # a tolerance of a few percent (blind round 12) misses a checkpoint whose logits are 3 % off
    r = evaluate(ex, corpus03._sizes_checker(lambda e: (1, 2, 3, 5, 8, 17), rtol=0.05, atol=0.05))
    assert list(failing(r)) == ["weights of an earlier checkpoint"], failing(r)
    assert "3 % smaller" in failing(r)["weights of an earlier checkpoint"]


def _raises(m, net, e):
    raise ValueError("boom")


def _stub(m, net, e):
    raise NotImplementedError


@pytest.mark.parametrize("hostile, status", [
    (None, "not_attempted"), (_stub, "not_attempted"), (42, "error"), (_raises, "failed"),
    (lambda m, net, e: float("nan"), "failed"), (lambda m, net, e: "yes", "failed"),
    (lambda m, net, e: object(), "failed"), (lambda m, net, e: [True], "failed"),
])
def test_faithful_hostile_answers_give_a_result(hostile, status):
    r = evaluate(get("03.faithful"), hostile)
    assert r.status == status and r.points == 0, r


def test_faithful_accepts_numpy_bools_and_0_1():
    reference = corpus03.CORPUS_FAITHFUL[0].answer
    assert evaluate(get("03.faithful"), lambda *a: np.bool_(reference(*a))).status == "passed"
    assert evaluate(get("03.faithful"), lambda *a: int(reference(*a))).status == "passed"


# ---------------------------------------------------------------- 03.custom_op

def test_custom_op_thresholds_are_unseen_and_exact():
    """The check never asks for the notebook's threshold, and ±threshold is exact in float32 (an edge input)."""
    seen = {l03.custom_op_cases(seed)[0][0] for seed in range(200)}
    assert l03.NOTEBOOK_THRESHOLD not in seen and len(seen) > 5
    assert all(float(np.float32(t)) == t and t > 0 for t in seen)


def test_custom_op_definition_is_the_notebooks():
    """The judge's numpy soft_threshold computes what the check's copy of the notebook's operator computes
    (labkit.material.l03_translate), edges included."""
    import torch

    from labkit.material.l03_translate import _check_op

    op = _check_op()
    for t in (0.25, 1.125):
        x, edge = l03._custom_inputs(3, t, (16, 7))
        for v in (x, edge):
            np.testing.assert_array_equal(l03.soft_threshold(v, t), op(torch.from_numpy(v), t).numpy())
    _, edge = l03._custom_inputs(3, 1.125, (16, 7))
    assert {0.0, 1.125, -1.125} <= set(edge.ravel().tolist())


@pytest.mark.parametrize("answer, test, message", [
    (corpus03._st_custom_node, "only standard ONNX operators",
     "No schema registered for 'SoftThreshold' version '1' and domain 'com.example.lab'"),
    (corpus03._st_relu_shift, "random inputs", "every negative input gives 0"),
    (corpus03._st_no_sign, "random inputs", "wrong sign for negative ones"),
    (corpus03._st_divide_for_sign, "zeros and inputs at ±threshold", "x / |x| is 0/0 there"),
    (corpus03._st_half, "random inputs", "the notebook's threshold 0.5"),
    (corpus03._st_cast_out, "float32 in and out", "input float32, output float64; expected float32 both"),
    (corpus03._old_form, "only standard ONNX operators",
     "the function takes (threshold): a translation takes the operator's arguments (x, threshold)"),
    (lambda x, threshold: None, "only standard ONNX operators",
     "exporting with soft_threshold_onnx as the translation failed"),
])
def test_custom_op_says_what_is_wrong(answer, test, message):
    r = evaluate(get("03.custom_op"), answer)
    assert r.status == "failed" and r.points < r.max_points
    assert message in failing(r)[test], failing(r)


# Models the check's own export never makes (it exports float32 with a symbolic batch), built by hand to judge
# them directly: the verdict still names what is wrong with any model it is given.

def _soft_threshold_model(body, threshold, *, batch="batch", width=7, elem=onnx.TensorProto.FLOAT, out_elem=None,
                          opset=20) -> onnx.ModelProto:
    """x -> body -> y: `body` is a list of nodes reading "x" and "t" and writing "out"; the initializer "t"
    holds the threshold in x's type."""
    dtype = helper.tensor_dtype_to_np_dtype(elem)
    nodes = body + [helper.make_node("Cast", ["out"], ["y_cast"], to=out_elem)] if out_elem else body
    nodes = nodes + [helper.make_node("Identity", ["y_cast" if out_elem else "out"], ["y"])]
    graph = helper.make_graph(nodes, "shrinker", [helper.make_tensor_value_info("x", elem, [batch, width])],
                              [helper.make_tensor_value_info("y", out_elem or elem, [batch, width])],
                              [onnx.numpy_helper.from_array(np.array(threshold, dtype), "t")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=9)


#: the notebook's formula: sign(x) * relu(|x| - t)
SIGN_RELU = [helper.make_node("Sign", ["x"], ["s"]), helper.make_node("Abs", ["x"], ["a"]),
             helper.make_node("Sub", ["a", "t"], ["d"]), helper.make_node("Relu", ["d"], ["r"]),
             helper.make_node("Mul", ["s", "r"], ["out"])]


def _judge_model(model, seed=7):
    """The verdict on a model, as the grader gives it one (bytes), at the threshold of `seed`."""
    from labkit.checks import run_judge
    from labkit.plain import OnnxBlob

    return run_judge(get("03.custom_op"), [OnnxBlob(model.SerializeToString())], seed)


def _at_seed(seed=7, **kw):
    (t,), = l03.custom_op_cases(seed)
    return _soft_threshold_model(SIGN_RELU, t, **kw)


def test_custom_op_hand_built_model_passes():
    assert _judge_model(_at_seed()).status == "passed"


@pytest.mark.parametrize("kw, test, message", [
    (dict(batch=2), "symbolic batch", "the batch is fixed at 2"),
    (dict(batch=2), "any batch size", "the graph fixes the batch at 2"),
    (dict(elem=onnx.TensorProto.DOUBLE), "float32 in and out", "input float64, output float64"),
    (dict(width=100_000), "random inputs", "100000 values per row"),
])
def test_custom_op_judge_names_what_is_wrong_with_any_model(kw, test, message):
    r = _judge_model(_at_seed(**kw))
    assert r.status == "failed" and r.points < r.max_points
    assert message in failing(r)[test], failing(r)


def test_custom_op_custom_node_in_a_subgraph_is_found():
    """An If whose branch holds a custom-domain node: not standard, even though the top graph looks standard."""
    from onnx import TensorProto

    def branch(name, node):
        out = helper.make_tensor_value_info(node.output[0], TensorProto.FLOAT, None)
        return helper.make_graph([node], name, [], [out])

    m = _at_seed()
    inside = branch("then", helper.make_node("SoftThreshold", ["x"], ["a"], domain="com.example.lab"))
    plain_ = branch("else", helper.make_node("Identity", ["x"], ["b"]))
    m.graph.initializer.append(onnx.numpy_helper.from_array(np.array(True), "yes"))
    m.graph.node.insert(0, helper.make_node("If", ["yes"], ["unused"], then_branch=inside, else_branch=plain_))
    m.opset_import.append(helper.make_opsetid("com.example.lab", 1))
    r = _judge_model(m)
    assert "SoftThreshold (com.example.lab)" in failing(r)["only standard ONNX operators"]


def _stub_translation(x, threshold: float):
    raise NotImplementedError


def _raises_translation(x, threshold: float):
    raise RuntimeError("ConversionError: Error when translating node %soft_threshold")


@pytest.mark.parametrize("hostile, status", [
    (None, "not_attempted"), (42, "error"), (_raises_translation, "failed"),
    (_stub_translation, "not_attempted"),  # NotImplementedError under the exporter's ConversionError
    (lambda x, t: float("nan"), "failed"), (lambda x, t: np.full((2, 7), np.nan, np.float32), "failed"),
    (lambda x, t: onnx.ModelProto(), "failed"), (lambda x, t: b"not a model", "failed"),
    (lambda x, t: [None], "failed"), (lambda x, t: {"model": "x"}, "failed"),
])
def test_custom_op_hostile_answers_give_a_result(hostile, status):
    r = evaluate(get("03.custom_op"), hostile)
    assert r.status == status and r.points == 0, r


def test_custom_op_nan_translation_fails():
    def nan(x, threshold: float):
        from onnxscript import opset18 as op
        return op.Mul(x, float("nan"))

    r = evaluate(get("03.custom_op"), nan)
    assert r.points <= r.max_points / 2 and "NaN in the output" in failing(r)["random inputs"]


def test_custom_op_judge_needs_no_torch(tmp_path):
    """The verdict process loads the ONNX bytes and runs them in ONNX Runtime: torch is never imported."""
    import subprocess
    import sys

    onnx.save(_at_seed(7), tmp_path / "m.onnx")
    code = ("import sys; from labkit.checks import get, run_judge; from labkit.plain import OnnxBlob; "
            f"r = run_judge(get('03.custom_op'), [OnnxBlob(open({str(tmp_path / 'm.onnx')!r}, 'rb').read())], 7); "
            "print(r.status, 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["passed", "False"], out.stderr[-2000:]


# ---------------------------------------------------------------- 03.quiz

GOOD = {"q1": "a", "q2": "c", "q3": "b", "q4": "a", "q5": "c", "q6": "b"}


def test_quiz():
    ex = get("03.quiz")
    assert evaluate(ex, GOOD).status == "passed"
    wrong = evaluate(ex, {**GOOD, "q1": "b", "q4": "c"})
    assert wrong.status == "failed" and "think again" in failing(wrong)["q1"]
    assert evaluate(ex, {k: None for k in GOOD}).status == "not_attempted"
    assert evaluate(ex, list(GOOD.values())).points == 0
    assert "not one of" in failing(evaluate(ex, {**GOOD, "q2": "z"}))["q2"]


def test_quiz_explanations_say_why_the_distractors_are_wrong():
    from labkit.checks import judge_spec

    for key, (letter, explanation) in judge_spec("03.quiz").key.items():
        others = [o for o in "abc" if o != letter]
        assert all(f"Not {o}:" in explanation for o in others), (key, explanation)


# ---------------------------------------------------------------- the grader's path

def test_answers_survive_the_grader_round_trip(tmp_path):
    reference = corpus03.CORPUS_FAITHFUL[0].answer
    shrink = corpus03.CORPUS_CUSTOM[0].answer
    answers = {"03.dynamic_batch": corpus03.legacy(), "03.raw_input": corpus03.legacy_raw("/16"),
               "03.faithful": reference, "03.custom_op": shrink, "03.quiz": GOOD}
    for id, answer in answers.items():
        ex = get(id)
        cases = None
        if ex.kind == "function":  # what a graded kernel gets: the inputs as files the grader wrote
            plain.save_inputs(judge_spec(ex.id).cases(5), tmp_path / f"{id}-inputs")
            cases = plain.load_inputs(tmp_path / f"{id}-inputs")
        plain.save(collect_answer(ex, answer, 5, cases=cases), tmp_path / id)
        assert judge_saved(ex, tmp_path / id, 5).status == "passed", id
    ex = get("03.dynamic_batch")
    plain.save(collect_answer(ex, corpus03.legacy("untrained"), 5), tmp_path / "bad")
    assert judge_saved(ex, tmp_path / "bad", 5).status == "failed"
