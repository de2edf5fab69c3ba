"""Lesson 00: the warm-up ReLU and the quiz."""
import numpy as np
import pytest

from labkit.checks import evaluate, get


def test_relu_reference_and_variants_pass():
    ex = get("00.relu")
    for answer in (lambda x: np.maximum(x, 0), lambda x: np.where(x > 0, x, 0.0), lambda x: x.clip(min=0),
                   lambda x: (x > 0) * x):
        r = evaluate(ex, answer)
        assert r.status == "passed" and r.points == r.max_points == 2


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


def test_quiz():
    ex = get("00.quiz")
    assert evaluate(ex, {"q1": "b", "q2": "b"}).status == "passed"
    assert evaluate(ex, {"q1": " B ", "q2": "b"}).status == "passed"  # case and spaces do not matter
    r = evaluate(ex, {"q1": "a", "q2": "b"})
    assert r.status == "failed" and r.points == 1 and "q1" in r.message
    r = evaluate(ex, {"q1": "z", "q2": None})
    assert r.points == 0 and "'z' is not one of a, b, c" in r.tests[0].message and "not answered" in r.tests[1].message
    for hostile in (None, "b", ["b", "b"], 7):
        assert evaluate(ex, hostile).points == 0
