"""Lesson 08: precise messages for the corpus's wrong answers (tests/corpus/l08.py), what the test
inputs catch, the judge's rule against the installed ONNX Runtime Web, hostile answers, the grader's
round trip. (Right/wrong scoring and the quiz's balance: tests/test_corpus.py.)"""
from __future__ import annotations

import numpy as np
import pytest

from labkit import plain
from labkit.checks import collect_answer, evaluate, get, judge_saved
import labkit_judges.l08 as l08

from corpus import l08 as corpus


def messages(r):
    return " ".join(t.message for t in r.tests) + " " + r.message


def _entry(id, name):
    return next(e for e in corpus.CORPUS[id] if e.name == name)


@pytest.mark.parametrize("id, name, text", [
    ("08.rgba_alpha", "red channel", "red channel"),
    ("08.rgba_alpha", "every 4th byte from 0", "red channel"),
    ("08.rgba_alpha", "transposed", "rows and columns swapped"),
    ("08.rgba_alpha", "inverted", "inverted"),
    ("08.rgba_alpha", "scaled to 0..1", "not a fraction"),
    ("08.rgba_alpha", "ink mask", "not a fraction"),
    ("08.threads", "ignores isolation", "no SharedArrayBuffer"),
    ("08.threads", "default = all cores", "min(4, ceil(cores / 2))"),
    ("08.web_model", "the export as is (notes with source paths)", "pkg.torch.onnx"),
    ("08.web_model", "node notes stripped, graph notes left", "the graph's doc_string/metadata_props"),
    ("08.web_model", "the external-data file handed in", "keeps its data in another file"),
    ("08.web_model", "stripped, weights still in the .data file", "keeps its data in another file"),
    ("08.web_model", "the int8 model", "an int8 model?"),
    ("08.web_model", "other weights", "largest difference"),
    ("08.web_model", "float input (preprocessing not baked in)", "the page feeds one uint8 input"),
])
def test_wrong_answers_get_precise_messages(id, name, text, tmp_path):
    r = evaluate(get(id), _entry(id, name).build(tmp_path))
    assert text in messages(r), messages(r)


def test_rgba_alpha_cases_catch_what_they_should():
    cases = l08._alpha_cases(0)
    assert any(w != h for _, w, h in cases) and any(w == h for _, w, h in cases)
    for rgba, w, h in cases:
        assert rgba.dtype == np.uint8 and rgba.shape == (4 * w * h,)
        px = rgba.reshape(h, w, 4)
        assert all(not np.array_equal(px[..., c], px[..., 3]) for c in range(3))  # channels differ
    assert not np.array_equal(l08._alpha_cases(0)[0][0], l08._alpha_cases(1)[0][0])  # the grader's seed differs


def test_threads_reference_matches_the_corpus_reference():
    for args in l08._thread_cases(5):
        assert corpus.threads_ref(*args) == l08.reference_threads(*args)


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


def test_quiz_hostile():
    ex = get("08.quiz")
    assert evaluate(ex, {k: None for k in QUIZ}).status == "not_attempted"
    assert evaluate(ex, {"q1": 3}).points == 0
    assert evaluate(ex, ["b"]).points == 0



QUIZ = {"q1": "b", "q2": "a", "q3": "c", "q4": "a", "q5": "b", "q6": "c"}


def test_answers_survive_the_grader_round_trip(tmp_path):
    ref = corpus.web_model("ref")(tmp_path)
    for id, answer in (("08.rgba_alpha", corpus.alpha_ref), ("08.threads", corpus.threads_ref), ("08.web_model", ref),
                       ("08.quiz", QUIZ)):
        ex = get(id)
        plain.save(collect_answer(ex, answer, 7), tmp_path / id)
        assert judge_saved(ex, tmp_path / id, 7).status == "passed", id
    ex = get("08.web_model")
    plain.save(collect_answer(ex, corpus.web_model("int8")(tmp_path), 7), tmp_path / "int8")
    assert judge_saved(ex, tmp_path / "int8", 7).points <= ex.points / 2


def test_quiz_explanations_speak_to_every_distractor():
    from labkit.checks import judge_spec

    key = judge_spec("08.quiz").key
    for q in get("08.quiz").questions:
        right, explain = key[q.key]
        assert all(f"({k})" in explain for k in q.options if k != right), (q.key, explain)


def test_the_learners_check_fails_an_answer_that_replays_the_notebooks_values():
    """The panel runs a function answer on new inputs too (labkit.checks.evaluate_unseen): values learnt by
    heart from the notebook's cases pass there no more than in the grader."""
    from labkit.checks import evaluate, evaluate_unseen, get
    from labkit_judges.l08 import _thread_cases, reference_threads

    seen = {(repr(r), iso, c): reference_threads(r, iso, c) for r, iso, c in _thread_cases(0)}

    def replay(requested, isolated, cores):
        return seen.get((repr(requested), isolated, cores), 1)

    ex = get("08.threads")
    assert evaluate(ex, replay).status == "passed"
    r = evaluate_unseen(ex, replay, seed=12345)
    assert r.status == "failed" and r.message.startswith("On new test inputs (seed 12345)"), r
    assert evaluate_unseen(ex, reference_threads, seed=12345).status == "passed"
