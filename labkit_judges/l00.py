"""Lesson 00 exercises, judge side (references, test inputs, quiz keys): a first function and a quiz,
to learn how checks answer."""
from __future__ import annotations

import labkit.exercises.l00  # noqa: F401 (declares the exercises judged here)

import numpy as np

from labkit.checks import expect_close, judge, quiz_key


def _relu_cases(seed: int) -> list[tuple]:
    rng = np.random.default_rng(seed)
    return [
        (np.array([-2.0, -0.5, 0.0, 0.5, 2.0], dtype=np.float32),),
        (rng.normal(size=(3, 4)).astype(np.float32),),
        (np.zeros((2, 0), dtype=np.float32),),
        (rng.normal(size=(2, 3, 5)).astype(np.float32) * 10,),
    ]


RELU_TESTS = ("1-D example", "random 3x4 matrix", "empty array", "3-D array")


@judge("00.relu", cases=_relu_cases, tests=RELU_TESTS, skill=RELU_TESTS)
def _relu(outputs, seed):
    for name, (x,), got in zip(RELU_TESTS, _relu_cases(seed), outputs):
        yield expect_close(name, got, np.maximum(x, 0))


quiz_key("00.quiz", {
    'q1': ('b', "The stub (None, or a function raising NotImplementedError) reads as not attempted. A wrong answer shows 'Not yet' with the failing tests, and a broken course would show 'Error'."),
    'q2': ('a', "The grader takes only the answer cells (found by their tags). Check cells are read-only and rebuilt from the instructor's copy, and a new cell is never graded."),
    'q3': ('c', 'The message says what came back and what was expected; fix the answer and re-run both cells. Checks use the same inputs every time in your notebook, and editing the check cell changes nothing in grading.'),
    'q4': ('a', 'The grader runs your answer cells only; the buttons give instant feedback and show which dict to write.'),
    'q5': ('c', 'ONNX Runtime picks a CPU code path for the vector instructions your processor has. Memory and GPUs are not CPU features; GPUs show up as execution providers.'),
})
