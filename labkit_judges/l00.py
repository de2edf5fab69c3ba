"""Lesson 00 exercise specs (what the learner sees, references, test inputs, quiz answers): a first function and a quiz,
to learn how checks answer."""
from __future__ import annotations

import numpy as np

from labkit.checks import Question, exercise, expect_close, quiz


def _relu_cases(seed: int) -> list[tuple]:
    rng = np.random.default_rng(seed)
    return [
        (np.array([-2.0, -0.5, 0.0, 0.5, 2.0], dtype=np.float32),),
        (rng.normal(size=(3, 4)).astype(np.float32),),
        (np.zeros((2, 0), dtype=np.float32),),
        (rng.normal(size=(2, 3, 5)).astype(np.float32) * 10,),
    ]


RELU_TESTS = ("1-D example", "random 3x4 matrix", "empty array", "3-D array")


@exercise('00.relu', title='ReLU in numpy', points=2, kind='function',
          hint=[
              'ReLU keeps positive values and turns every negative value into 0, element by element.',
              'numpy has an element-wise maximum of an array and a number (np.maximum).',
          ],
          cases=_relu_cases, tests=RELU_TESTS, skill=RELU_TESTS)
def _relu(outputs, seed):
    for name, (x,), got in zip(RELU_TESTS, _relu_cases(seed), outputs):
        yield expect_close(name, got, np.maximum(x, 0))


quiz('00.quiz', title='How checks work', points=2, questions=[
    Question('q1', 'A check cell shows *Not attempted*. What does that mean?', {
        'a': 'My answer is wrong',
        'b': 'The answer cell still holds the stub',
        'c': 'The course is broken',
    }, answer='b', why=(
        'The stub (None, or a function raising NotImplementedError) reads as not attempted. A wrong answer '
        "shows 'Not yet' with the failing tests, and a broken course would show 'Error'.")),
    Question('q2', 'Where do you write your answer?', {
        'a': 'In the answer cell above the check cell',
        'b': 'In the check cell',
        'c': 'In a new cell below the check cell',
    }, answer='a', why=(
        'The grader takes only the answer cells (found by their tags). Check cells are read-only and rebuilt '
        "from the instructor's copy, and a new cell is never graded.")),
    Question('q3', "A panel says: 'expected shape (3, 4), got shape (12,)'. What do you do next?", {
        'a': 'Run the check cell again: checks are random',
        'b': 'Change the check cell so it flattens the expected array',
        'c': "Fix the function so it keeps the input's shape, run the answer cell, then the check cell",
    }, answer='c', why=(
        'The message says what came back and what was expected; fix the answer and re-run both cells. Checks '
        'use the same inputs every time in your notebook, and editing the check cell changes nothing in '
        'grading.')),
    Question('q4', 'You clicked the quiz buttons and wrote a dict in the answer cell, with different letters. Which answers are graded?', {
        'a': 'The dict in the answer cell',
        'b': 'The buttons you clicked',
        'c': 'Whichever you changed last',
    }, answer='a', why=(
        'The grader runs your answer cells only; the buttons give instant feedback and show which dict to '
        'write.')),
    Question('q5', "What does the 'CPU features' line of labkit.doctor() tell you?", {
        'a': 'How much memory the course may use',
        'b': 'Whether a GPU is available',
        'c': "Which vector instructions (AVX2/AVX-512, NEON/SVE/SME) ONNX Runtime's CPU kernels can use",
    }, answer='c', why=(
        'ONNX Runtime picks a CPU code path for the vector instructions your processor has. Memory and GPUs '
        'are not CPU features; GPUs show up as execution providers.')),
])
