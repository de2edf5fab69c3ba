"""Lesson 00 exercise specs (what the learner sees, references, test inputs, quiz answers): a first function and a quiz,
to learn how checks answer."""
from __future__ import annotations

import numpy as np

from labkit.checks import Question, exercise, expect_close, quiz
from labkit.checks.differential import same, strided
from labkit.plain import Raised


def _relu_data(seed: int) -> tuple[list[tuple], list[np.ndarray]]:
    """(the test inputs, the arrays they reach the learner as): the notebook's arrays, then what "any shape,
    the same dtype" also allows: integers, float64 with infinities and values near float's limits, a
    non-contiguous view (made learner side: a saved array is contiguous)."""
    rng = np.random.default_rng(seed)
    seen = [
        np.array([-2.0, -0.5, 0.0, 0.5, 2.0], dtype=np.float32),
        rng.normal(size=(3, 4)).astype(np.float32),
        np.zeros((2, 0), dtype=np.float32),
        rng.normal(size=(2, 3, 5)).astype(np.float32) * 10,
        rng.integers(-50, 50, size=(2, 4)).astype(np.int64),
    ]
    extremes = np.array([-np.inf, np.inf, -3e38, 3e38, -1e-300, 1e-300, -0.0, *rng.normal(size=3)], dtype=np.float64)
    recipe, view = strided(rng.normal(size=(6, 3)).astype(np.float32), axis=0, step=2)
    seen += [extremes[rng.permutation(len(extremes))], view]
    return [(x,) for x in seen[:-1]] + [(recipe,)], seen


def _relu_cases(seed: int) -> list[tuple]:
    return _relu_data(seed)[0]


RELU_TESTS = ("1-D example", "random 3x4 matrix", "empty array", "3-D array", "integers (int64)",
              "float64 with infinities and huge values", "a non-contiguous view")


@exercise('00.relu', title='ReLU in numpy', points=2, kind='function',
          hint=[
              'ReLU keeps positive values and turns every negative value into 0, element by element.',
              'numpy has an element-wise maximum of an array and a number (np.maximum).',
          ],
          cases=_relu_cases, tests=RELU_TESTS, skill=RELU_TESTS)
def _relu(outputs, seed):
    for name, x, got in zip(RELU_TESTS, _relu_data(seed)[1], outputs):
        # an array (not a list) of x's dtype, as the prompt says; then the values (in the notebook's wording)
        form_ok = isinstance(got, Raised) or (isinstance(got, np.ndarray) and got.dtype == x.dtype)
        yield expect_close(name, got, np.maximum(x, 0)) if form_ok else same(name, got, np.maximum(x, 0), dtype=x.dtype)


quiz('00.quiz', title='How checks work', points=2, questions=[
    Question('q1', 'A check cell shows *Not attempted*. What does that mean?', {
        'a': 'Your answer ran, but at least one of its tests failed',
        'b': 'The answer cell still holds the stub it started with',
        'c': 'The check could not load its tests, so nothing ran',
    }, answer='b', why=(
        'The stub (None, or a function raising NotImplementedError) reads as not attempted. A wrong '
        "answer (a) shows 'Not yet' with the failing tests, and a check that cannot run (c) shows "
        "'Error'.")),
    Question('q2', 'Where do you write your answer?', {
        'a': 'In the answer cell above the check cell',
        'b': 'In the check cell, replacing its argument',
        'c': 'In a new cell that you add below the check',
    }, answer='a', why=(
        'The grader takes only the answer cells (found by their tags). Check cells (b) are read-only '
        "and rebuilt from the instructor's copy, and a cell you add (c) is never graded.")),
    Question('q3', "A panel says: 'expected shape (3, 4), got shape (12,)'. What do you do next?", {
        'a': 'Nothing: the check flattens arrays before it compares',
        'b': 'Edit the check cell so that it flattens the expected array',
        'c': 'Fix the function, run the answer cell, then the check',
    }, answer='c', why=(
        'The message says what came back and what was expected: fix the answer and re-run both cells. '
        'The check compares shapes as they are (a), and an edited check cell (b) changes nothing in '
        "grading (the instructor's copy runs).")),
    Question('q4', 'You clicked your quiz answers, then saved and closed the notebook. What is graded?', {
        'a': 'Nothing, until you copy the choices into the code yourself',
        'b': 'The quiz_00 line that your clicks wrote into the answer cell',
        'c': 'The last verdict the check cell showed before you saved',
    }, answer='b', why=(
        "Each click rewrites the answer cell's `quiz_00 = {...}` line, and the grader runs your answer "
        'cells only: no copying is needed (a), and the outputs a check cell showed are never read: the '
        'grader runs the checks again (c).')),
    Question('q5', "What does the 'CPU features' line of labkit.doctor() tell you?", {
        'a': 'How much memory ONNX Runtime may use on this machine',
        'b': 'Whether there is a GPU for ONNX Runtime to run on',
        'c': "Which vector instructions ONNX Runtime's kernels can use",
    }, answer='c', why=(
        'ONNX Runtime picks a CPU code path for the vector instructions your processor has '
        '(AVX2/AVX-512 on x86, NEON/SVE/SME on Arm). Memory (a) and GPUs (b) are not CPU features; '
        'GPUs show up as execution providers.')),
])
