"""`labkit grade LESSON SUBMISSION... --out DIR`: grade a class's notebooks, and trust the result.

One module per stage, dataclasses between them:

* `options`     — the command line (`Options`) and the protection mode (`Protection`).
* `lesson`      — the solution notebook, its exercises, the test-bundle hash (cache key).
* `submissions` — files -> `Submission`s, bounded work per file, unique student names.
* `rebuild`     — the instructor's notebook with only the learner's answer cells (`Rebuilt`).
* `run`         — confined kernels execute the rebuilt cells (`SandboxSpec`, `Runner`).
* `judge`       — the verdict process judges the recorded plain data (confined, with a timeout).
* `verdicts`    — verdicts + what happened to the cells -> one result per exercise.
* `cache`       — HMAC-authenticated results cache, secret seed.
* `batch`       — prepares a batch and grades it in a worker pool; temporary folders always removed.
* `reports`     — grades.csv, per-student results.json and feedback.html, histogram, summary.
"""
from .batch import grade_one, main
from .judge import copy_answers
from .lesson import Lesson, load_lesson, resolve_lesson
from .options import GradeError
from .rebuild import Rebuilt, RunCell, build_run
from .reports import COLUMNS, feedback_html, write_csv
from .submissions import Submission, assign_students, expand, read_submission

__all__ = ["main", "grade_one", "copy_answers", "Lesson", "load_lesson", "resolve_lesson", "GradeError", "Rebuilt",
           "RunCell", "build_run", "COLUMNS", "feedback_html", "write_csv", "Submission", "assign_students", "expand",
           "read_submission"]
