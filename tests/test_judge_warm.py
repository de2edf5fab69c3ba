"""The judges' `warm(seed)` hooks (run once by the verdict process before it forks a child per answer,
`labkit.grading.judge.serve`) compute exactly what the judges then ask for: judging a right answer after
warm() computes no reference again (the verdict time budget of issue 32 rests on it)."""
from __future__ import annotations

import importlib

import pytest

import corpus
from labkit import checks
from labkit.checks.judging import run_judge

SEED = 424242


def _right_outputs(ex_id: str, tmp_path):
    from labkit.checks.judging import collect_answer

    if ex_id == "09.generate":  # the reference's own tokens, computed without its cache (a learner's loop is slow)
        from labkit_judges.l09 import _generate_specs, greedy_reference

        return [greedy_reference(prompt, n)[0] for prompt, n in _generate_specs(SEED)]
    right = next(e for e in corpus.load(ex_id[:2])[ex_id] if isinstance(e, corpus.Right))
    return collect_answer(checks.get(ex_id), right.build(tmp_path), SEED)


def _cached_calls(lesson: str) -> int:
    """How many references the lesson's judges have computed so far (their caches' misses)."""
    judges = importlib.import_module(f"labkit_judges.l{lesson}")
    if lesson == "06":
        return len(judges._cache)
    if lesson == "09":
        return judges._greedy_cached.cache_info().misses
    if lesson == "05":
        return judges._rewrite_reference.cache_info().misses
    return len(judges._EXPECTED)


@pytest.mark.parametrize("lesson, ids", [("05", ["05.rewrite_rule"]), ("06", ["06.calibration"]), ("09", ["09.generate"]),
                                         ("10", ["10.to_onnx", "10.custom_converter"])])
def test_a_right_answer_judged_after_warm_computes_no_reference_again(lesson, ids, tmp_path):
    judges = importlib.import_module(f"labkit_judges.l{lesson}")
    outputs = {i: _right_outputs(i, tmp_path) for i in ids}
    judges.warm(SEED)
    before = _cached_calls(lesson)
    for i in ids:
        r = run_judge(checks.get(i), outputs[i], SEED)
        assert r.status == "passed", r
    assert _cached_calls(lesson) == before, f"{lesson}: a judge computed a reference warm() did not"
