"""Lesson 05: fold_bn, folding a graph, the optimization-level quiz, a portable optimized model."""
from collections import Counter

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx.reference import ReferenceEvaluator

from labkit import plain
from labkit.checks import collect_answer, evaluate, get, judge_saved
from labkit.material.l05 import practice_model
from labkit_judges.l05 import NCHWC_DOMAIN


def fold_bn(W, b, gamma, beta, mean, var, eps):
    s = gamma / np.sqrt(var + eps)
    b0 = np.zeros_like(mean) if b is None else b
    return W * s.reshape((-1,) + (1,) * (W.ndim - 1)), (b0 - mean) * s + beta


def _stub(*args):
    raise NotImplementedError("write your solution here")


# ---------------------------------------------------------------- 05.fold_bn

def test_fold_bn_reference_and_variants_pass():
    ex = get("05.fold_bn")
    for answer in (fold_bn,
                   lambda *a: list(fold_bn(*a)),
                   lambda *a: tuple(x.astype(a[0].dtype) for x in fold_bn(
                       *(None if v is None else np.asarray(v, np.float64) for v in a[:6]), a[6]))):
        r = evaluate(ex, answer)
        assert r.status == "passed" and r.points == r.max_points > 0, r
    # the prompt asks for W's dtype kept: float64 weights in a float32 model are a different model
    widened = evaluate(ex, lambda W, b, g, be, m, v, e: tuple(x.astype(np.float64) for x in fold_bn(W, b, g, be, m, v, e)))
    assert widened.points < widened.max_points and "expected dtype float32, got float64" in widened.message, widened


def no_reshape(W, b, gamma, beta, mean, var, eps):
    s = gamma / np.sqrt(var + eps)
    return W * s, ((0 if b is None else b) - mean) * s + beta


@pytest.mark.parametrize("wrong, message", [
    (no_reshape, "raised ValueError"),                       # broadcasting against the last axis
    (no_reshape, "at index"),                                # ... or silently wrong when C_out == kW
    (lambda W, b, g, be, m, v, e: fold_bn(W, b, g, be, m, v, 0.0), "at index"),   # epsilon ignored
    (lambda W, b, g, be, m, v, e: fold_bn(W, b, g, be, m, v, e)[0], "expected a pair"),  # only W
    (lambda *a: [*fold_bn(*a), 0], "a sequence of length 3"),
    (lambda W, b, g, be, m, v, e: (fold_bn(W, b, g, be, m, v, e)[0], (b - m) * g / np.sqrt(v + e) + be),
     "raised TypeError"),                                    # b=None not handled
    (lambda W, b, g, be, m, v, e: (fold_bn(W, b, g, be, m, v, e)[0], fold_bn(W, b, g, be, m, v, e)[1] - be),
     "b'"),                                                  # beta forgotten
])
def test_fold_bn_wrong_answers_fail_precisely(wrong, message):
    r = evaluate(get("05.fold_bn"), wrong)
    assert r.status == "failed" and r.points < r.max_points
    assert any(message in f"{t.name}: {t.message}" for t in r.tests if not t.passed), [t.message for t in r.tests]


def test_fold_bn_partial_credit_without_none_handling():
    r = evaluate(get("05.fold_bn"), lambda W, b, *rest: fold_bn(W, b if b is not None else "oops", *rest))
    assert r.status == "failed" and 0 < r.points < r.max_points
    assert [t.name for t in r.tests if not t.passed] == ["b=None, eps=0.1"]


@pytest.mark.parametrize("hostile, status", [
    (None, "not_attempted"), (_stub, "not_attempted"), ("fold", "error"), (3, "error"),
    (lambda *a: 1 / 0, "failed"), (lambda *a: (a[0] * np.nan, a[1]), "failed"), (lambda: 0, "failed"),
    (lambda *a: None, "failed"), (lambda *a: {"W": 1}, "failed"), (lambda *a: object(), "failed"),
])
def test_fold_bn_hostile_answers_give_a_panel(hostile, status):
    r = evaluate(get("05.fold_bn"), hostile)
    assert r.status == status and r.points == 0


# ---------------------------------------------------------------- 05.fold_graph

import corpus.l05  # noqa: E402
from corpus.l05 import _fold_model, _ort_shortcut  # noqa: E402 (the corpus's folding pass, with its knobs)
from labkit_judges.l05 import FOLD_GRAPH_TESTS, foldable, unseen_graph  # noqa: E402


@pytest.fixture(autouse=True)
def _corpus_code_travels():
    """05.fold_graph runs the answer where only NumPy and onnx import: the corpus's pass goes with its code."""
    import cloudpickle

    import contextlib

    cloudpickle.register_pickle_by_value(corpus.l05)
    yield
    with contextlib.suppress(ValueError):  # an answer of corpus.l05 itself: the check registered it and let go
        cloudpickle.unregister_pickle_by_value(corpus.l05)


def fold_graph(model):
    return _fold_model(model)


def practice():
    return onnx.load_from_string(practice_model())


def failed_messages(r):
    return " | ".join(f"{t.name}: {t.message}" for t in r.tests if not t.passed)


def test_practice_model_is_deterministic_valid_and_agrees_with_the_reference_evaluator():
    assert practice_model() == practice_model()
    assert practice_model(6) != practice_model()
    m = practice()
    onnx.checker.check_model(m, full_check=True)
    assert Counter(n.op_type for n in m.graph.node) == {"Conv": 3, "BatchNormalization": 3, "Relu": 2}
    x = np.random.default_rng(1).normal(size=(2, 8, 10, 10)).astype(np.float32)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    y_ort = ort.InferenceSession(practice_model(), so, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.testing.assert_allclose(y_ort, ReferenceEvaluator(m).run(None, {"x": x})[0], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_unseen_graphs_are_valid_and_hold_the_traps(seed):
    for k in (1, 2):
        m = unseen_graph(seed, k)
        onnx.checker.check_model(m, full_check=True)
        ops = Counter(n.op_type for n in m.graph.node)
        twin = k == 1  # graph A: a second Conv of conv_a's weight, with its own (foldable) BatchNormalization
        exposed = k == 2  # graph B: its last Conv is also a graph output, so its BatchNormalization stays
        assert ops["BatchNormalization"] == 4 + twin and ops["Identity"] == 1
        assert len(foldable(m)) == 2 + twin - exposed and len(m.graph.output) == 1 + exposed
        bn_a = next(n for n in m.graph.node if n.name.endswith(".bn_a"))
        assert [a.name for a in bn_a.attribute] == ([] if k == 1 else ["momentum", "epsilon"])
        if twin:
            weights = [n.input[1] for n in m.graph.node if n.op_type == "Conv"]
            assert len(weights) - len(set(weights)) == 1, weights


def test_fold_graph_reference_passes_on_many_seeds():
    for seed in (0, 3, 11):
        r = evaluate(get("05.fold_graph"), fold_graph, seed=seed)
        assert r.status == "passed" and r.points == 4, (seed, r)


def test_fold_graph_ort_shortcut_cannot_run():
    """ONNX Runtime's optimizer (and onnxscript's BN rule) cannot be imported where the answer runs."""
    r = evaluate(get("05.fold_graph"), _ort_shortcut)
    assert r.status == "failed" and r.points == 0
    assert "No module named 'onnxruntime'" in failed_messages(r) and "only NumPy, onnx" in failed_messages(r)


def test_fold_graph_optimizer_output_is_named():
    """What an optimizer writes (the Identity gone, constants folded) is named, wherever it was made."""
    from labkit_judges.l05 import _fold_graph, _fold_graph_inputs

    results = list(_fold_graph([plain.OnnxBlob(_ort_shortcut(m).SerializeToString())
                                for m in _fold_graph_inputs(0)], 0))
    assert any(type(t).__name__ == "DidNotDo" for t in results)
    assert "fold the pairs yourself" in " ".join(t.message for t in results if not getattr(t, "passed", False))


def test_fold_graph_bn_rewritten_as_mul_add_did_not_fold():
    """A BatchNormalization replaced by a Mul and an Add keeps every Conv's weights: not a fold."""
    from onnx import helper, numpy_helper

    from labkit_judges.l05 import _fold_graph, _fold_graph_inputs

    def mul_add(model):
        m = onnx.ModelProto()
        m.CopyFrom(model)
        w = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
        nodes = []
        for n in m.graph.node:
            if n.op_type != "BatchNormalization":
                nodes.append(n)
                continue
            eps = next((a.f for a in n.attribute if a.name == "epsilon"), 1e-5)
            g, b, mu, var = (w[i] for i in n.input[1:5])
            s = g / np.sqrt(var + eps)
            shape = (-1,) + (1,) * (len(m.graph.input[0].type.tensor_type.shape.dim) - 2)
            m.graph.initializer.extend([numpy_helper.from_array((s.reshape(shape)).astype(np.float32), n.name + ".s"),
                                        numpy_helper.from_array((b - mu * s).reshape(shape).astype(np.float32),
                                                                n.name + ".t")])
            nodes += [helper.make_node("Mul", [n.input[0], n.name + ".s"], [n.name + ".m"], name=n.name + ".mul"),
                      helper.make_node("Add", [n.name + ".m", n.name + ".t"], [n.output[0]], name=n.name + ".add")]
        del m.graph.node[:]
        m.graph.node.extend(nodes)
        return m

    results = list(_fold_graph([plain.OnnxBlob(mul_add(m).SerializeToString()) for m in _fold_graph_inputs(0)], 0))
    assert any(type(t).__name__ == "DidNotDo" and "kept its weights" in t.message for t in results)


@pytest.mark.parametrize("knobs, message", [
    (dict(check_uses=False), "is not a graph input, initializer, or output"),
    (dict(rename=False), "Graph output (y) does not exist"),
    (dict(rewire_only=True), "at index"),
])
def test_fold_graph_wrong_functions_fail_precisely(knobs, message):
    r = evaluate(get("05.fold_graph"), lambda m: _fold_model(m, **knobs))
    assert r.status == "failed" and r.points <= r.max_points / 2
    assert message in failed_messages(r), failed_messages(r)


def test_fold_graph_unchanged_model_earns_at_most_half():
    r = evaluate(get("05.fold_graph"), lambda m: m)
    assert r.points <= 2 and "BatchNormalization left" in failed_messages(r)


@pytest.mark.parametrize("hostile, status", [
    (None, "not_attempted"), (_stub, "not_attempted"), ("missing.onnx", "error"), (42, "error"),
    (lambda m: b"not a model", "failed"), (lambda m: onnx.ModelProto(), "failed"), (lambda m: 1 / 0, "failed"),
    (lambda m: None, "failed"), (lambda: 0, "failed"),
])
def test_fold_graph_hostile(hostile, status):
    r = evaluate(get("05.fold_graph"), hostile)
    assert r.status == status and r.points == 0, r
    assert len(r.tests) in (0, len(FOLD_GRAPH_TESTS))


def test_fold_graph_model_that_ort_cannot_load():
    def broken(m):
        m = fold_graph(m)
        m.graph.node[0].op_type = "NoSuchOp"
        return m
    r = evaluate(get("05.fold_graph"), broken)
    assert r.status == "failed" and "cannot run the result" in failed_messages(r)
    assert "[ONNXRuntimeError]" not in failed_messages(r)


# ---------------------------------------------------------------- 05.portable

def saved_at(level, tmp_path, model=None):
    so = ort.SessionOptions()
    so.graph_optimization_level = level
    so.log_severity_level = 3
    path = tmp_path / f"{int(level)}.onnx"
    so.optimized_model_filepath = str(path)
    ort.InferenceSession(model or practice_model(), so, providers=["CPUExecutionProvider"])
    return path


def test_portable_extended_passes(tmp_path):
    r = evaluate(get("05.portable"), saved_at(ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED, tmp_path))
    assert r.status == "passed" and r.points == 3, r


def test_portable_all_level_fails_where_it_adds_nchwc(tmp_path):
    path = saved_at(ort.GraphOptimizationLevel.ORT_ENABLE_ALL, tmp_path)
    if not any(n.domain == NCHWC_DOMAIN for n in onnx.load(path).graph.node):
        pytest.skip("ONNX Runtime adds no NCHWc operators on this CPU")
    r = evaluate(get("05.portable"), path)
    assert r.status == "failed" and "com.microsoft.nchwc operators" in failed_messages(r)


@pytest.mark.parametrize("level, message", [
    (ort.GraphOptimizationLevel.ORT_DISABLE_ALL, "3 BatchNormalization and 0 FusedConv"),
    (ort.GraphOptimizationLevel.ORT_ENABLE_BASIC, "0 BatchNormalization and 0 FusedConv"),
])
def test_portable_unoptimized_or_basic_fails(tmp_path, level, message):
    r = evaluate(get("05.portable"), saved_at(level, tmp_path))
    assert r.status == "failed" and message in failed_messages(r), failed_messages(r)


def test_portable_original_model_earns_little():
    r = evaluate(get("05.portable"), practice_model())
    assert r.points <= 0.5 and "the graph is not optimized" in failed_messages(r)


def test_portable_other_model_fails(tmp_path):
    other = saved_at(ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED, tmp_path, practice_model(seed=9))
    r = evaluate(get("05.portable"), other)
    assert r.status == "failed" and "at index" in failed_messages(r)


@pytest.mark.parametrize("hostile, status", [
    (None, "not_attempted"), ("artifacts/nothing.onnx", "error"), (b"\x00\x01", "failed"), (3.5, "error"),
])
def test_portable_hostile(hostile, status):
    r = evaluate(get("05.portable"), hostile)
    assert r.status == status and r.points == 0, r


# ---------------------------------------------------------------- 05.quiz and the grader round trip

QUIZ = {"q1": "a", "q2": "c", "q3": "b", "q4": "a", "q5": "b"}


def test_quiz():
    ex = get("05.quiz")
    assert evaluate(ex, QUIZ).status == "passed"
    r = evaluate(ex, {**QUIZ, "q2": "b"})
    assert r.status == "failed" and r.points < r.max_points and "q2" in r.message
    assert evaluate(ex, {k: None for k in QUIZ}).status == "not_attempted"
    for hostile in ("a", ["a"], 1):
        assert evaluate(ex, hostile).points == 0


def test_answers_survive_the_grader_round_trip(tmp_path):
    portable = saved_at(ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED, tmp_path)
    for id, answer in (("05.fold_bn", fold_bn), ("05.fold_graph", fold_graph),
                       ("05.portable", portable), ("05.quiz", QUIZ)):
        ex = get(id)
        for seed in (0, 11):
            folder = tmp_path / f"{id}-{seed}"
            plain.save(collect_answer(ex, answer, seed), folder)
            assert judge_saved(ex, folder, seed).status == "passed", (id, seed)
    wrong = tmp_path / "wrong"
    plain.save(collect_answer(get("05.fold_bn"), no_reshape, 11), wrong)
    assert judge_saved(get("05.fold_bn"), wrong, 11).status == "failed"


# ---------------------------------------------------------------- 05.rewrite_rule

from corpus.l05 import _rule_rewriter  # noqa: E402


def test_rewrite_rule_reference_passes_on_many_seeds():
    for seed in (0, 2, 9):
        r = evaluate(get("05.rewrite_rule"), _rule_rewriter(), seed=seed)
        assert r.status == "passed" and r.points == 3, (seed, r)


def test_rewrite_rule_mistakes_are_named():
    no_condition = evaluate(get("05.rewrite_rule"), _rule_rewriter(condition=False))
    assert no_condition.points <= 1.5 and "Gemm takes 2-D inputs only" in failed_messages(no_condition)
    no_commute = evaluate(get("05.rewrite_rule"), _rule_rewriter(commute=False))
    assert no_commute.points <= 1.5 and "the same pattern with the inputs swapped" in failed_messages(no_commute)


@pytest.mark.parametrize("hostile, status", [
    (None, "not_attempted"), (_stub, "not_attempted"), ("rule", "error"), (lambda: None, "failed"),
    (lambda: 1 / 0, "failed"), (lambda: b"junk", "failed"), (lambda m: m, "failed"),
])
def test_rewrite_rule_hostile(hostile, status):
    r = evaluate(get("05.rewrite_rule"), hostile)
    assert r.status == status and r.points == 0, r
