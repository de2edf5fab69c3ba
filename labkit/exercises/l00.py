"""Lesson 00 exercises, learner side: what each exercise is (no answers, no test inputs).

The judges, references, test inputs and quiz keys are in `labkit_judges/l00.py`, which a graded
kernel cannot import (docs/authoring.md)."""
from __future__ import annotations

from ..checks.registry import Question, declare, quiz

declare("00.relu", title="ReLU in numpy", points=2, kind="function",
        hint="ReLU keeps positive values and turns negative ones into 0: look at np.maximum.")

quiz("00.quiz", title="How checks work", points=2, questions=[
    Question("q1", "A check cell shows 'Not attempted'. What does that mean?",
             {"a": "My answer is wrong", "b": "The answer cell still holds the stub", "c": "The course is broken"}),
    Question("q2", "Where do you write your answer?",
             {"a": "In the check cell", "b": "In the answer cell above the check cell", "c": "In a new file"}),
])
