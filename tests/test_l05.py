"""Lesson 05: fold_bn, folding a graph, the optimization-level quiz, a portable optimized model."""
import copy
from collections import Counter

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from labkit import plain
from labkit.checks import collect, evaluate, get, judge_saved
from labkit_judges.l05 import NCHWC_DOMAIN, fold_bn_reference, practice_model


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
                   lambda W, b, g, be, m, v, e: tuple(x.astype(np.float64) for x in fold_bn(W, b, g, be, m, v, e)),
                   lambda *a: fold_bn_reference(*a)):
        r = evaluate(ex, answer)
        assert r.status == "passed" and r.points == r.max_points == 3, r


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

def fold_graph(model, eps_override=None, rename_output=True):
    """The lesson's reference solution (with knobs to make it wrong)."""
    model = copy.deepcopy(model)
    g = model.graph
    weights = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    producer = {o: n for n in g.node for o in n.output}
    done = []
    for bn in g.node:
        if bn.op_type != "BatchNormalization":
            continue
        conv = producer[bn.input[0]]
        eps = next((a.f for a in bn.attribute if a.name == "epsilon"), 1e-5)
        eps = eps if eps_override is None else eps_override
        b = weights[conv.input[2]] if len(conv.input) > 2 else None
        W2, b2 = fold_bn(weights[conv.input[1]], b, *(weights[n] for n in bn.input[1:5]), eps)
        g.initializer.extend([numpy_helper.from_array(W2.astype(np.float32), bn.output[0] + ".W"),
                              numpy_helper.from_array(b2.astype(np.float32), bn.output[0] + ".b")])
        conv.input[1] = bn.output[0] + ".W"
        if len(conv.input) > 2:
            conv.input[2] = bn.output[0] + ".b"
        else:
            conv.input.append(bn.output[0] + ".b")
        if rename_output:
            conv.output[0] = bn.output[0]
        else:  # the consumers still read the BN output name: rewire them instead, but forget the graph output
            for n in g.node:
                for i, name in enumerate(n.input):
                    if name == bn.output[0]:
                        n.input[i] = conv.output[0]
        done.append(bn)
    for bn in done:
        g.node.remove(bn)
    return model


def practice():
    return onnx.load_from_string(practice_model())


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


def test_fold_graph_reference_passes_as_proto_path_and_bytes(tmp_path):
    ex = get("05.fold_graph")
    folded = fold_graph(practice())
    path = tmp_path / "folded.onnx"
    onnx.save(folded, path)
    for answer in (folded, path, str(path), folded.SerializeToString()):
        r = evaluate(ex, answer)
        assert r.status == "passed" and r.points == 4, r


def test_fold_graph_accepts_what_ort_basic_writes(tmp_path):
    # ONNX Runtime's BASIC level folds Conv+BN too; the result is a correct answer
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    so.optimized_model_filepath = str(tmp_path / "basic.onnx")
    ort.InferenceSession(practice_model(), so, providers=["CPUExecutionProvider"])
    assert evaluate(get("05.fold_graph"), tmp_path / "basic.onnx").status == "passed"


def bn_as_mul_add(model):
    """BatchNormalization rewritten as Mul + Add: correct outputs, but more nodes, not folded."""
    model = copy.deepcopy(model)
    g = model.graph
    weights = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    nodes = []
    for n in g.node:
        if n.op_type != "BatchNormalization":
            nodes.append(n)
            continue
        eps = next(a.f for a in n.attribute if a.name == "epsilon")
        gamma, beta, mean, var = (weights[i] for i in n.input[1:5])
        s = gamma / np.sqrt(var + eps)
        g.initializer.extend([numpy_helper.from_array(s.reshape(-1, 1, 1).astype(np.float32), n.name + ".s"),
                              numpy_helper.from_array((beta - mean * s).reshape(-1, 1, 1).astype(np.float32),
                                                      n.name + ".t")])
        nodes += [helper.make_node("Mul", [n.input[0], n.name + ".s"], [n.name + "_mul"]),
                  helper.make_node("Add", [n.name + "_mul", n.name + ".t"], [n.output[0]])]
    del g.node[:]
    g.node.extend(nodes)
    return model


def failed_messages(r):
    return " | ".join(f"{t.name}: {t.message}" for t in r.tests if not t.passed)


@pytest.mark.parametrize("make, message", [
    (lambda: practice(), "3 BatchNormalization node(s) are still in the graph"),
    (lambda: bn_as_mul_add(practice()), "folding should leave at most 5"),
    (lambda: fold_graph(practice(), eps_override=0.0), "at index"),
    (lambda: fold_graph(practice(), rename_output=False), "Graph output (y) does not exist"),
])
def test_fold_graph_wrong_models_fail(make, message):
    r = evaluate(get("05.fold_graph"), make())
    assert r.status == "failed" and r.points < r.max_points
    assert message in failed_messages(r), failed_messages(r)


def test_fold_graph_unfolded_answers_earn_nothing_for_matching_outputs():
    r = evaluate(get("05.fold_graph"), practice())
    assert r.points == 0 and "the outputs match, but BatchNormalization is still there" in failed_messages(r)
    r = evaluate(get("05.fold_graph"), bn_as_mul_add(practice()))
    assert r.points == 1 and "replaced, not folded" in failed_messages(r)


def test_fold_graph_renamed_input_fails():
    m = fold_graph(practice())
    m.graph.input[0].name = "input"
    m.graph.node[0].input[0] = "input"
    r = evaluate(get("05.fold_graph"), m)
    assert r.status == "failed" and "expected one input 'x' and one output 'y'" in failed_messages(r)


@pytest.mark.parametrize("hostile, status", [
    (None, "not_attempted"), ("missing.onnx", "error"), (b"not a model", "failed"), (42, "error"),
    (onnx.ModelProto(), "failed"), ([1, 2], "error"),
])
def test_fold_graph_hostile(hostile, status):
    r = evaluate(get("05.fold_graph"), hostile)
    assert r.status == status and r.points == 0


def test_fold_graph_model_that_ort_cannot_load():
    m = fold_graph(practice())
    m.graph.node[0].op_type = "NoSuchOp"
    r = evaluate(get("05.fold_graph"), m)
    assert r.status == "failed" and "cannot load the model" in failed_messages(r)
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


def test_portable_original_model_earns_nothing():
    r = evaluate(get("05.portable"), practice_model())
    assert r.points == 0 and "the graph is not optimized" in failed_messages(r)


def test_portable_other_model_fails(tmp_path):
    other = saved_at(ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED, tmp_path, practice_model(seed=9))
    r = evaluate(get("05.portable"), other)
    assert r.status == "failed" and "at index" in failed_messages(r)


@pytest.mark.parametrize("hostile, status", [
    (None, "not_attempted"), ("artifacts/nothing.onnx", "error"), (b"\x00\x01", "failed"), (3.5, "error"),
])
def test_portable_hostile(hostile, status):
    r = evaluate(get("05.portable"), hostile)
    assert r.status == status and r.points == 0


# ---------------------------------------------------------------- 05.quiz and the grader round trip

def test_quiz():
    ex = get("05.quiz")
    assert evaluate(ex, {"q1": "a", "q2": "b", "q3": "b", "q4": "b"}).status == "passed"
    r = evaluate(ex, {"q1": "a", "q2": "a", "q3": "b", "q4": "a"})
    assert r.status == "failed" and r.points == 2 and "q2" in r.message
    assert evaluate(ex, {"q1": None, "q2": None, "q3": None, "q4": None}).status == "not_attempted"
    for hostile in ("a", ["a"], 1):
        assert evaluate(ex, hostile).points == 0


def test_answers_survive_the_grader_round_trip(tmp_path):
    portable = saved_at(ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED, tmp_path)
    for id, answer in (("05.fold_bn", fold_bn), ("05.fold_graph", fold_graph(practice())),
                       ("05.portable", portable), ("05.quiz", {"q1": "a", "q2": "b", "q3": "b", "q4": "b"})):
        ex = get(id)
        for seed in (0, 11):
            folder = tmp_path / f"{id}-{seed}"
            plain.save(collect(ex, answer, seed), folder)
            assert judge_saved(ex, folder, seed).status == "passed", (id, seed)
    wrong = tmp_path / "wrong"
    plain.save(collect(get("05.fold_bn"), no_reshape, 11), wrong)
    assert judge_saved(get("05.fold_bn"), wrong, 11).status == "failed"
