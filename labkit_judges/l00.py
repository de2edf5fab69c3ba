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


@judge("00.relu", cases=_relu_cases)
def _relu(outputs, seed):
    names = ["1-D example", "random 3x4 matrix", "empty array", "3-D array"]
    for name, (x,), got in zip(names, _relu_cases(seed), outputs):
        yield expect_close(name, got, np.maximum(x, 0))


quiz_key("00.quiz", {
    "q1": ("b", "The stub raises NotImplementedError or is None until you write your answer."),
    "q2": ("b", "Check cells are read-only; the grader rebuilds them from the instructor's copy anyway."),
})
