"""Lesson 08: each exercise's mutation corpus (plausible wrong answers, correct answers unlike the reference),
hostile answers, the quiz's balance, and the grader's round trip."""
from __future__ import annotations

import math
from collections import Counter

import numpy as np
import onnx
import pytest

from labkit import android, plain
from labkit.checks import collect, evaluate, get, judge_saved
from labkit.exercises import l08


def messages(r):
    return " ".join(t.message for t in r.tests) + " " + r.message


def assert_full(r):
    assert r.status == "passed" and r.points == r.max_points, r


def assert_wrong(r, outputs_wrong=True):
    """Below full; at most half the points when the outputs are wrong (the course's scoring rule)."""
    assert r.points < r.max_points, r
    if outputs_wrong:
        assert r.points <= r.max_points / 2, r


# ================================================================ 08.rgba_alpha


def alpha_ref(rgba, w, h):
    return np.asarray(rgba, dtype=np.uint8).reshape(h, w, 4)[:, :, 3]


ALPHA_RIGHT = {
    "every 4th byte from index 3": lambda rgba, w, h: np.asarray(rgba)[3::4].reshape(h, w),
    "loops": lambda rgba, w, h: np.array([[rgba[4 * (y * w + x) + 3] for x in range(w)] for y in range(h)]),
    "list of lists": lambda rgba, w, h: [[int(rgba[(y * w + x) * 4 + 3]) for x in range(w)] for y in range(h)],
}
ALPHA_WRONG = {
    "red channel": (lambda rgba, w, h: np.asarray(rgba).reshape(h, w, 4)[:, :, 0], "red channel"),
    "every 4th byte from 0": (lambda rgba, w, h: np.asarray(rgba)[::4].reshape(h, w), "red channel"),
    "width and height swapped": (lambda rgba, w, h: np.asarray(rgba).reshape(w, h, 4)[:, :, 3], "expected"),
    "transposed": (lambda rgba, w, h: alpha_ref(rgba, w, h).T, "rows and columns swapped"),
    "planar layout assumed": (lambda rgba, w, h: np.asarray(rgba).reshape(4, h, w)[3], "expected"),
    "inverted": (lambda rgba, w, h: 255 - alpha_ref(rgba, w, h), "inverted"),
    "scaled to 0..1": (lambda rgba, w, h: alpha_ref(rgba, w, h) / 255, "not a fraction"),
    "ink mask": (lambda rgba, w, h: (alpha_ref(rgba, w, h) >= 128).astype(int), "not a fraction"),
    "mean of RGBA": (lambda rgba, w, h: np.asarray(rgba).reshape(h, w, 4).mean(axis=2), "expected"),
}


def test_rgba_alpha_reference_passes():
    assert_full(evaluate(get("08.rgba_alpha"), alpha_ref))


@pytest.mark.parametrize("name", sorted(ALPHA_RIGHT))
def test_rgba_alpha_correct_variants_pass(name):
    assert_full(evaluate(get("08.rgba_alpha"), ALPHA_RIGHT[name]))


@pytest.mark.parametrize("name", sorted(ALPHA_WRONG))
def test_rgba_alpha_wrong_answers(name):
    fn, text = ALPHA_WRONG[name]
    r = evaluate(get("08.rgba_alpha"), fn)
    assert_wrong(r)
    assert text in messages(r), messages(r)


def test_rgba_alpha_cases_catch_what_they_should():
    cases = l08._alpha_cases(0)
    assert any(w != h for _, w, h in cases) and any(w == h for _, w, h in cases)
    for rgba, w, h in cases:
        assert rgba.dtype == np.uint8 and rgba.shape == (4 * w * h,)
        px = rgba.reshape(h, w, 4)
        assert all(not np.array_equal(px[..., c], px[..., 3]) for c in range(3))  # channels differ
    assert not np.array_equal(l08._alpha_cases(0)[0][0], l08._alpha_cases(1)[0][0])  # the grader's seed differs


# ================================================================ 08.threads


def threads_ref(requested, isolated, cores):
    if not (isinstance(requested, int) and requested > 0):
        return min(4, math.ceil(cores / 2)) if isolated else 1
    return requested if isolated else 1


def _threads_match(requested, isolated, cores):
    valid = type(requested) is int and requested >= 1
    if isolated and valid:
        return requested
    if isolated:
        return max(1, min(4, -(-cores // 2)))
    return 1


THREADS_RIGHT = {
    "match on isolation first": _threads_match,
    "one expression": lambda r, iso, c: (r if isinstance(r, int) and r > 0 else min(4, (c + 1) // 2)) if iso else 1,
}
THREADS_WRONG = {
    "ignores isolation": lambda r, iso, c: r if isinstance(r, int) and r > 0 else min(4, math.ceil(c / 2)),
    "default = all cores": lambda r, iso, c: (r if isinstance(r, int) and r > 0 else c) if iso else 1,
    "default rounds down": lambda r, iso, c: (r if isinstance(r, int) and r > 0 else min(4, max(1, c // 2))) if iso else 1,
    "default not capped at 4": lambda r, iso, c: (r if isinstance(r, int) and r > 0 else math.ceil(c / 2)) if iso else 1,
    "caps the request at the cores": lambda r, iso, c: (min(r, c) if isinstance(r, int) and r > 0
                                                        else min(4, math.ceil(c / 2))) if iso else 1,
    "default is 1 even when isolated": lambda r, iso, c: (r if isinstance(r, int) and r > 0 else 1) if iso else 1,
    "non-integer request rounded": lambda r, iso, c: (int(r) if r else min(4, math.ceil(c / 2))) if iso and (r or 0) > 0
                                   else (min(4, math.ceil(c / 2)) if iso else 1),
    "always 1": lambda r, iso, c: 1,
}


def test_threads_reference_matches_labkit_reference():
    for args in l08._thread_cases(5):
        assert threads_ref(*args) == l08.reference_threads(*args)
    assert_full(evaluate(get("08.threads"), threads_ref))


@pytest.mark.parametrize("name", sorted(THREADS_RIGHT))
def test_threads_correct_variants_pass(name):
    for seed in (0, 11):
        assert_full(evaluate(get("08.threads"), THREADS_RIGHT[name], seed))


@pytest.mark.parametrize("name", sorted(THREADS_WRONG))
def test_threads_wrong_answers(name):
    for seed in (0, 11):
        r = evaluate(get("08.threads"), THREADS_WRONG[name], seed)
        assert_wrong(r)
        assert "expected" in messages(r)


def test_threads_reference_follows_the_installed_source():
    """The judge's rule is what ort.wasm.mjs of the pinned onnxruntime-web does (skipped when it is not installed)."""
    from labkit import web

    try:
        default = web.ort_web_source('typeof env2.wasm.numThreads !== "number"', 8)
        fallback = web.ort_web_source("if (numThreads > 1 && !multiThreadSupported)", 11)
    except web.WebSetupError as e:
        pytest.skip(str(e))
    assert "Math.min(4, Math.ceil((numCpuLogicalCores || 1) / 2))" in default
    assert "!self.crossOriginIsolated" in default and "env2.wasm.numThreads = 1;" in default
    assert "flags.numThreads = numThreads = 1;" in fallback


# ================================================================ 08.web_model


@pytest.fixture(scope="module")
def fast_reference():
    """An untrained, seeded CNN stands in for trained_cnn() so the tests take seconds."""
    import torch

    from labkit.models import DigitsCNN

    torch.manual_seed(8)
    cnn = DigitsCNN().eval()
    mp = pytest.MonkeyPatch()
    mp.setattr(l08, "reference_cnn", lambda: cnn)
    yield cnn
    mp.undo()


def strip(model: onnx.ModelProto) -> onnx.ModelProto:
    model.doc_string = ""
    del model.metadata_props[:]
    for part in [model.graph, *model.graph.node]:
        part.doc_string = ""
        del part.metadata_props[:]
    return model


@pytest.fixture(scope="module")
def web_models(fast_reference, tmp_path_factory):
    import torch

    from labkit.models import DigitsCNN

    d = tmp_path_factory.mktemp("l08")
    fp32 = android.export_baked(fast_reference, d / "fp32.onnx")
    ext = d / "ext.onnx"
    onnx.save(onnx.load(fp32), ext, save_as_external_data=True, all_tensors_to_one_file=True,
              location="ext.onnx.data", size_threshold=0)
    ref = d / "web.onnx"
    onnx.save(strip(onnx.load(ext)), ref)
    out = {"fp32": fp32, "ext": ext, "ref": ref, "dir": d}
    # correct, written differently: strip with a generic walk; fix the batch to 1 then strip
    m = onnx.load(ext)
    for proto in [m, m.graph, *m.graph.node, *m.graph.value_info, *m.graph.input, *m.graph.output]:
        proto.ClearField("doc_string")
        proto.ClearField("metadata_props")
    out["right_walk"] = d / "right_walk.onnx"
    onnx.save(m, out["right_walk"])
    b1 = android.fix_batch_python(fp32, d / "b1.onnx")
    out["right_b1"] = d / "right_b1.onnx"
    onnx.save(strip(onnx.load(b1)), out["right_b1"])
    # wrong answers learners hand in
    out["int8"] = android.quantize_int8(ref, d / "int8.onnx", np.random.default_rng(0).integers(0, 17, (32, 1, 8, 8),
                                                                                                dtype=np.uint8))
    torch.manual_seed(99)
    other = android.export_baked(DigitsCNN().eval(), d / "other.onnx")
    out["other_weights"] = d / "other_stripped.onnx"
    onnx.save(strip(onnx.load(other)), out["other_weights"])
    from labkit import quiet

    with quiet():
        torch.onnx.export(fast_reference, (torch.zeros(1, 1, 8, 8),), dynamo=True).save(str(d / "float_in.onnx"))
    out["float_in"] = d / "float_in_stripped.onnx"
    onnx.save(strip(onnx.load(d / "float_in.onnx")), out["float_in"])
    nodes_only = onnx.load(ext)
    for n in nodes_only.graph.node:
        n.doc_string = ""
        del n.metadata_props[:]
    out["nodes_only"] = d / "nodes_only.onnx"  # graph-level notes left
    onnx.save(nodes_only, out["nodes_only"])
    ext_stripped = strip(onnx.load(ext, load_external_data=False))
    out["ext_stripped"] = d / "ext_stripped.onnx"  # stripped, but the weights stay in ext.onnx.data
    onnx.save(ext_stripped, out["ext_stripped"])
    return out


def test_web_model_reference_passes(web_models):
    ex = get("08.web_model")
    for answer in (web_models["ref"], str(web_models["ref"]), web_models["ref"].read_bytes(),
                   onnx.load(web_models["ref"])):
        assert_full(evaluate(ex, answer))


@pytest.mark.parametrize("name", ["right_walk", "right_b1"])
def test_web_model_correct_variants_pass(web_models, name):
    assert_full(evaluate(get("08.web_model"), web_models[name]))


@pytest.mark.parametrize("name, outputs_wrong, text", [
    ("fp32", False, "pkg.torch.onnx"),                       # the export as is: notes with source paths
    ("nodes_only", False, "the graph's doc_string/metadata_props"),
    ("ext", True, "live in another file"),                   # the external-data file handed in
    ("ext_stripped", True, "live in another file"),
    ("int8", True, "an int8 model?"),
    ("other_weights", True, "largest difference"),
    ("float_in", True, "the page feeds one uint8 input"),
])
def test_web_model_wrong_answers(web_models, name, outputs_wrong, text):
    r = evaluate(get("08.web_model"), web_models[name])
    assert_wrong(r, outputs_wrong)
    assert text in messages(r), messages(r)


@pytest.mark.parametrize("hostile, status", [
    (None, "not_attempted"), ("artifacts/web/nothing.onnx", "error"), (b"not onnx", "failed"), (42, "error"),
    (b"", "failed"),
])
def test_web_model_hostile(hostile, status):
    r = evaluate(get("08.web_model"), hostile)
    assert r.status == status and r.points == 0, r


# ================================================================ hostile function answers


def stub(*args):
    raise NotImplementedError


@pytest.mark.parametrize("id", ["08.rgba_alpha", "08.threads"])
@pytest.mark.parametrize("hostile, status", [
    (None, "not_attempted"), (stub, "not_attempted"), ("f", "error"),
    (lambda *a: 1 / 0, "failed"), (lambda *a: float("nan"), "failed"), (lambda *a: object(), "failed"),
    (lambda *a: "4", "failed"), (lambda *a: True, "failed"),
])
def test_function_exercises_hostile(id, hostile, status):
    r = evaluate(get(id), hostile)
    assert r.status == status and r.points == 0, r


# ================================================================ quiz

QUIZ = {"q1": "b", "q2": "a", "q3": "c", "q4": "a", "q5": "b", "q6": "c"}


def test_quiz_key_and_balance():
    ex = get("08.quiz")
    assert len(ex.questions) >= 5
    assert {q.key: q.answer for q in ex.questions} == QUIZ
    worst = max(Counter(QUIZ.values()).values())
    assert worst / len(QUIZ) <= 0.4
    for q in ex.questions:  # every explanation speaks to the distractors, by letter
        others = [k for k in q.options if k != q.answer]
        assert all(f"({k})" in q.explain for k in others), (q.key, q.explain)
    assert_full(evaluate(ex, QUIZ))


@pytest.mark.parametrize("letter", ["a", "b", "c"])
def test_quiz_one_letter_everywhere_fails(letter):
    r = evaluate(get("08.quiz"), {k: letter for k in QUIZ})
    assert r.points <= r.max_points * 0.4


def test_quiz_hostile():
    ex = get("08.quiz")
    assert evaluate(ex, {k: None for k in QUIZ}).status == "not_attempted"
    assert evaluate(ex, {"q1": 3}).points == 0
    assert evaluate(ex, ["b"]).points == 0


# ================================================================ corpus minimums and the grader round trip


def test_corpus_minimums():
    assert len(ALPHA_WRONG) >= 6 and len(ALPHA_RIGHT) >= 2
    assert len(THREADS_WRONG) >= 6 and len(THREADS_RIGHT) >= 2
    wrong_models = test_web_model_wrong_answers.pytestmark[0].args[1]
    assert len(wrong_models) >= 6
    assert len(test_web_model_correct_variants_pass.pytestmark[0].args[1]) >= 2


def test_answers_survive_the_grader_round_trip(web_models, tmp_path):
    for id, answer in (("08.rgba_alpha", alpha_ref), ("08.threads", threads_ref), ("08.web_model", web_models["ref"]),
                       ("08.quiz", QUIZ)):
        ex = get(id)
        plain.save(collect(ex, answer, 7), tmp_path / id)
        assert judge_saved(ex, tmp_path / id, 7).status == "passed", id
    ex = get("08.web_model")
    plain.save(collect(ex, web_models["int8"], 7), tmp_path / "int8")
    assert judge_saved(ex, tmp_path / "int8", 7).points <= ex.points / 2
