"""The graded release's public checks (labkit/checks/public.py) on every exercise of the course, in process.

For each function exercise the public data is built as `labkit release` builds it (labkit/edition.py:
inputs at `PUBLIC_SEED`, expected outputs the full judge passes, ONNX models emptied), with the
expected outputs taken from the first right answer of the mutation corpus instead of a solution run
(which needs the whole notebook). Then every right answer of the corpus must pass the public check —
the comparison is looser than any judge, never stricter — and, where a wrong answer's outputs are
wrong (`outputs_wrong`), at least one of them must fail it. ONNX-file exercises and quizzes: the right
answers pass, and a non-model or a half-answered quiz fails."""
from __future__ import annotations

import json

import pytest

from labkit import plain
from labkit.checks import collect, judge_spec, lesson_exercises, run_judge
from labkit.checks import public
from labkit.edition import NOTES, PUBLIC_SEED, _without_models

import corpus
from conftest import SOLUTIONS

LESSONS = sorted({p.stem[:2] for p in SOLUTIONS})
EXERCISES = [e for lesson in LESSONS for e in lesson_exercises(lesson)]


def _public(ex, folder, expected=None):
    """Write `folder/<id>/` as a release does and point the public checks at `folder`."""
    d = folder / ex.id
    d.mkdir(parents=True)
    mode = {"function": "outputs", "onnx": "structure", "quiz": "answered"}[ex.kind]
    if mode == "outputs":
        plain.save_inputs(judge_spec(ex.id).cases(PUBLIC_SEED), d / "inputs")
        plain.save(_without_models(expected), d / "expected")
    (d / "check.json").write_text(json.dumps({"id": ex.id, "mode": mode, "note": NOTES[mode]}))


@pytest.mark.parametrize("ex", EXERCISES, ids=[e.id for e in EXERCISES])
def test_public_check_passes_right_and_fails_wrong(ex, tmp_path, monkeypatch):
    monkeypatch.setattr(public, "PUBLIC_DIR", tmp_path / "public")
    entries = corpus.load(ex.lesson).get(ex.id, [])
    if ex.kind == "quiz":
        _public(ex, tmp_path / "public")
        keys = [q.key for q in ex.questions]
        assert public.public_verdict(ex, {k: "a" for k in keys}).status == "passed"
        half = public.public_verdict(ex, {k: ("b" if i % 2 else None) for i, k in enumerate(keys)})
        assert half.status == "failed" and half.max_points == 0
        return
    rights = [e for e in entries if isinstance(e, corpus.Right)]
    wrongs = [e for e in entries if isinstance(e, corpus.Wrong)]
    assert rights, f"{ex.id} has no right answer in its corpus"
    expected = None
    if ex.kind == "function":
        cases = judge_spec(ex.id).cases(PUBLIC_SEED)
        expected = collect(ex, rights[0].build(tmp_path / "ref"), lambda: cases)
        assert run_judge(ex, expected, PUBLIC_SEED).status == "passed", "the expected outputs must pass the judge"
    _public(ex, tmp_path / "public", expected)
    for i, entry in enumerate(rights):
        r = public.public_verdict(ex, entry.build(tmp_path / f"right{i}"))
        assert r.status == "passed", f"{ex.id} / {entry.name}: {r!r}"
    if ex.kind == "onnx":
        assert public.public_verdict(ex, b"not a model").status != "passed"
        return
    failing = [e.name for i, e in enumerate(wrongs)
               if public.public_verdict(ex, e.build(tmp_path / f"wrong{i}")).status != "passed"]
    if any(e.outputs_wrong for e in wrongs):
        assert failing, f"{ex.id}: no wrong answer fails its public check"
