"""Exercises and immediate feedback: `labkit.check("LL.name", answer)`.

Five jobs, one module each:

* `registry` (learner side): which exercises exist — id, title, kind, points, hint, quiz
  questions without keys (`labkit/exercises/lNN.py` declares them).
* `collect` (learner side): the answer reduced to plain data; a function answer is called on the
  test inputs and only its outputs are kept.
* `judging` (judge side machinery): runs the judges of `labkit_judges/lNN.py` — references, test
  inputs, expected values, quiz keys — on plain data only, and scores the tests.
* `display`: the HTML panel, the display bundle, the quiz widget.
* `check()` (here): the facade a notebook calls.

In the learner's notebook, `check()` collects and judges at once (the learner's own machine may
import the judges). In a graded kernel (`LABKIT_COLLECT_DIR` set) it only records plain data: the
kernel cannot import `labkit_judges`, and the verdict is decided later in a separate process.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .collect import COLLECT_ENV, NotAttempted, Recorded, collect, record_for_grader
from .display import panel_html, quiz_widget, remember_quiz
from .judging import (INTERACTIVE_SEED, JUDGES, DidNotDo, JudgeSpec, error_line, evaluate, expect_close, expect_equal, judge,
                      judge_saved, judge_spec, load_onnx, evaluate_unseen, fresh_seed, not_attempted, ort_session, quiz_answers, quiz_key, run_judge,
                      score)
from .registry import (KINDS, REGISTRY, Exercise, ExerciseModuleError, Question, declare, get, lesson_exercises,
                       quiz)
from .result import LABELS, RESULT_MIME, STATUSES, Result, Status, TestResult

__all__ = ["check", "Result", "TestResult", "Status", "STATUSES", "LABELS", "RESULT_MIME", "Exercise", "Question",
           "REGISTRY", "KINDS", "declare", "quiz", "get", "lesson_exercises", "ExerciseModuleError", "collect",
           "NotAttempted", "Recorded", "record_for_grader", "JUDGES", "JudgeSpec", "DidNotDo", "judge", "quiz_key", "judge_spec",
           "quiz_answers", "error_line", "run_judge", "score", "evaluate", "evaluate_unseen", "fresh_seed", "judge_saved", "not_attempted",
           "expect_close", "expect_equal", "load_onnx", "ort_session", "panel_html", "quiz_widget", "INTERACTIVE_SEED", "COLLECT_ENV"]


def check(id: str, answer: Any = None) -> Result | Recorded:
    """Check `answer` for exercise `id` and show a pass/fail panel. Never raises."""
    try:
        ex = get(id)
    except ExerciseModuleError as e:
        return Result(str(id), "exercise module broken", "error", 0.0, 0.0, f"The checks of {id!r} cannot load: {e}")
    except Exception:
        known = ", ".join(sorted(REGISTRY)) or "none loaded"
        return Result(str(id), "unknown exercise", "error", 0.0, 0.0,
                      f"There is no exercise {id!r}. Known exercises: {known}.")
    collect_dir = os.environ.get(COLLECT_ENV)
    if collect_dir:  # a graded kernel: record plain data, the verdict is decided elsewhere
        record_for_grader(ex, answer, Path(collect_dir) / ex.id)
        return Recorded(ex.id)
    try:
        remember_quiz(ex, answer)
        return evaluate_unseen(ex, answer)
    except BaseException as e:  # KeyboardInterrupt included: the panel says what happened
        from .collect import exc_message

        return Result(ex.id, ex.title, "error", 0.0, ex.points, f"The check was interrupted: {exc_message(e)}", [],
                      ex.hint)
