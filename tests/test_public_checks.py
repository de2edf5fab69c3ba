"""The graded release's public checks (labkit/checks/public.py) on every exercise of the course, in process.

For each function exercise the public data is built as `labkit release` builds it (labkit/edition.py:
inputs at `PUBLIC_SEED`, expected outputs the full judge passes, ONNX models emptied), with the
expected outputs taken from the first right answer of the mutation corpus instead of a solution run
(which needs the whole notebook). Then every right answer of the corpus must pass the public check —
the comparison is looser than any judge, never stricter — and, where a wrong answer's outputs are
wrong (`outputs_wrong`), at least one of them must fail it. Where the public check is structural (an
ONNX-file exercise, a function whose outputs are all models) or compares shapes only (`SHAPES_ONLY`):
a right answer passes and a non-model or a wrong shape fails. Quizzes: answered passes, half-answered
fails, whatever the letters. Grading tier: the corpus exports models (about 3 min of CPU)."""
from __future__ import annotations

import json

import pytest

from labkit import plain
from labkit.checks import collect, judge_spec, lesson_exercises, run_judge
from labkit.checks import public
from labkit.edition import NOTES, PUBLIC_SEED, SHAPES_ONLY, _without_models

import corpus
from conftest import SOLUTIONS

pytestmark = pytest.mark.grading   # the graded release's checks; the corpus exports models (minutes)

LESSONS = sorted({p.stem[:2] for p in SOLUTIONS})
EXERCISES = [e for lesson in LESSONS for e in lesson_exercises(lesson)]


def _public(ex, folder, expected=None):
    """Write `folder/<id>/` as a release does and point the public checks at `folder`."""
    d = folder / ex.id
    d.mkdir(parents=True)
    mode = {"function": "outputs", "onnx": "structure", "quiz": "answered"}[ex.kind]
    mode = "shapes" if ex.id in SHAPES_ONLY else mode
    if mode in ("outputs", "shapes"):
        plain.save_inputs(judge_spec(ex.id).cases(PUBLIC_SEED), d / "inputs")
        plain.save(_without_models(expected), d / "expected")
    (d / "check.json").write_text(json.dumps({"id": ex.id, "mode": mode, "note": NOTES[mode]}))


def _leaves(x):
    if isinstance(x, list):
        return [y for v in x for y in _leaves(v)]
    if isinstance(x, dict):
        return [y for v in x.values() for y in _leaves(v)]
    return [x]


@pytest.mark.parametrize("ex", EXERCISES, ids=[e.id for e in EXERCISES])
def test_public_check_passes_right_and_fails_wrong(ex, tmp_path, monkeypatch):
    monkeypatch.setattr(public, "PUBLIC_DIR", tmp_path / "public")
    entries = corpus.load(ex.lesson).get(ex.id, [])

    def build(entry, name):
        (tmp_path / name).mkdir()
        return entry.build(tmp_path / name)

    if ex.kind == "quiz":
        _public(ex, tmp_path / "public")
        keys = [q.key for q in ex.questions]
        assert public.public_verdict(ex, {k: "a" for k in keys}).status == "passed"
        half = public.public_verdict(ex, {k: ("b" if i % 2 else None) for i, k in enumerate(keys)})
        assert half.status == "failed" and half.max_points == 0
        return
    rights = [e for e in entries if isinstance(e, corpus.Right)]
    wrongs = [e for e in entries if isinstance(e, corpus.Wrong) and e.outputs_wrong]
    assert rights, f"{ex.id} has no right answer in its corpus"
    expected = None
    if ex.kind == "function":
        cases = judge_spec(ex.id).cases(PUBLIC_SEED)
        expected = collect(ex, build(rights[0], "ref"), lambda: cases)
        assert run_judge(ex, expected, PUBLIC_SEED).status == "passed", "the expected outputs must pass the judge"
    _public(ex, tmp_path / "public", expected)
    models_only = ex.kind == "onnx" or all(isinstance(v, plain.OnnxBlob) for v in _leaves(expected))
    # every correct form passes (a model-only check is structural: one right answer shows it)
    for i, entry in enumerate(rights[:1] if models_only else rights):
        r = public.public_verdict(ex, build(entry, f"right{i}"))
        assert r.status == "passed", f"{ex.id} / {entry.name}: {r!r}"
    if models_only:  # only "a valid model" is public: what it computes is graded
        not_a_model = b"not a model" if ex.kind == "onnx" else (lambda *args: "not a model")
        assert public.public_verdict(ex, not_a_model).status == "failed"
        return
    if ex.id in SHAPES_ONLY:
        assert public.public_verdict(ex, lambda *args: [[1.0]]).status == "failed"
        return
    assert any(public.public_verdict(ex, build(e, f"wrong{i}")).status == "failed" for i, e in enumerate(wrongs)), \
        f"{ex.id}: no wrong answer fails its public check"
