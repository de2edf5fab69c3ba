"""Lesson 00 exercises: a first function and a quiz, to learn how checks answer."""
from __future__ import annotations

import numpy as np

from ..checks import Question, exercise, expect_close, quiz


def _relu_cases(seed: int) -> list[tuple]:
    rng = np.random.default_rng(seed)
    return [
        (np.array([-2.0, -0.5, 0.0, 0.5, 2.0], dtype=np.float32),),
        (rng.normal(size=(3, 4)).astype(np.float32),),
        (np.zeros((2, 0), dtype=np.float32),),
        (rng.normal(size=(2, 3, 5)).astype(np.float32) * 10,),
    ]


@exercise("00.relu", title="ReLU in numpy", points=2, kind="function", cases=_relu_cases,
          hint="ReLU keeps positive values and turns negative ones into 0: look at np.maximum.")
def _relu(outputs, seed):
    names = ["1-D example", "random 3x4 matrix", "empty array", "3-D array"]
    for name, (x,), got in zip(names, _relu_cases(seed), outputs):
        yield expect_close(name, got, np.maximum(x, 0))


quiz("00.quiz", title="How checks work", points=2, questions=[
    Question("q1", "A check cell shows 'Not attempted'. What does that mean?",
             {"a": "My answer is wrong", "b": "The answer cell still holds the stub", "c": "The course is broken"},
             "b", "The stub raises NotImplementedError or is None until you write your answer."),
    Question("q2", "Where do you write your answer?",
             {"a": "In the check cell", "b": "In the answer cell above the check cell", "c": "In a new file"},
             "b", "Check cells are read-only; the grader rebuilds them from the instructor's copy anyway."),
])
