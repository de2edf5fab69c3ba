"""Lesson 00: precise messages and hostile answers (right/wrong variants: tests/corpus/l00.py)."""
import numpy as np
import pytest

from labkit.checks import evaluate, get


@pytest.mark.parametrize("wrong, message", [
    (lambda x: np.abs(x), "at index (0,) expected 0, got 2"),
    (lambda x: np.maximum(x, 0).ravel(), "expected shape (3, 4), got shape (12,)"),
    (lambda x: np.minimum(x, 0), "expected"),
])
def test_relu_wrong_answers_fail_precisely(wrong, message):
    r = evaluate(get("00.relu"), wrong)
    assert r.status == "failed" and r.points < 2
    assert any(message in t.message for t in r.tests), [t.message for t in r.tests]


def _stub(x):
    raise NotImplementedError("write your solution here")


@pytest.mark.parametrize("hostile, status", [
    (None, "not_attempted"), (_stub, "not_attempted"), ("relu", "error"), (3, "error"),
    (lambda x: 1 / 0, "failed"), (lambda x: x * np.nan, "failed"), (lambda: 0, "failed"),
])
def test_relu_hostile_answers_give_a_panel(hostile, status):
    r = evaluate(get("00.relu"), hostile)
    assert r.status == status and r.points < r.max_points
    if status != "failed":
        assert r.points == 0


RIGHT = {"q1": "b", "q2": "a", "q3": "c", "q4": "b", "q5": "c"}


def test_quiz():
    ex = get("00.quiz")
    assert evaluate(ex, RIGHT).status == "passed"
    assert evaluate(ex, {**RIGHT, "q1": " B "}).status == "passed"  # case and spaces do not matter
    r = evaluate(ex, {**RIGHT, "q1": "a"})
    assert r.status == "failed" and r.points == 1.6 and "q1" in r.message
    r = evaluate(ex, {**RIGHT, "q1": "z", "q2": None})
    assert "'z' is not one of a, b, c" in r.tests[0].message and "not answered" in r.tests[1].message
    for hostile in (None, "b", ["b", "b"], 7):
        assert evaluate(ex, hostile).points == 0
