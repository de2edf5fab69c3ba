"""Lesson 00 exercises, learner side: what each exercise is (no answers, no test inputs).

The judges, references, test inputs and quiz keys are in `labkit_judges/l00.py`, which a graded
kernel cannot import (docs/authoring.md)."""
from __future__ import annotations

from ..checks.registry import Question, declare, quiz

declare("00.relu", title="ReLU in numpy", points=2, kind="function",
        hint=[
            'ReLU keeps positive values and turns every negative value into 0, element by element.',
            'numpy has an element-wise maximum of an array and a number (np.maximum).',
        ])

quiz("00.quiz", title="How checks work", points=2, questions=[
    Question('q1', 'A check cell shows *Not attempted*. What does that mean?',
             {"a": 'My answer is wrong', "b": 'The answer cell still holds the stub', "c": 'The course is broken'}),
    Question('q2', 'Where do you write your answer?',
             {"a": 'In the answer cell above the check cell', "b": 'In the check cell', "c": 'In a new cell below the check cell'}),
    Question('q3', "A panel says: 'expected shape (3, 4), got shape (12,)'. What do you do next?",
             {"a": 'Run the check cell again: checks are random', "b": 'Change the check cell so it flattens the expected array', "c": "Fix the function so it keeps the input's shape, run the answer cell, then the check cell"}),
    Question('q4', 'You clicked the quiz buttons and wrote a dict in the answer cell, with different letters. Which answers are graded?',
             {"a": 'The dict in the answer cell', "b": 'The buttons you clicked', "c": 'Whichever you changed last'}),
    Question('q5', "What does the 'CPU features' line of labkit.doctor() tell you?",
             {"a": 'How much memory the course may use', "b": 'Whether a GPU is available', "c": "Which vector instructions (AVX2/AVX-512, NEON/SVE/SME) ONNX Runtime's CPU kernels can use"}),
])
