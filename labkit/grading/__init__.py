"""`labkit grade LESSON SUBMISSION... --out DIR`: grade a class's notebooks, and trust the result.

One module per stage, dataclasses between them:

* `options`     — the command line (`Options`).
* `sandbox`     — the protection modes as backends of one interface (`Sandbox`: bubblewrap,
  unprivileged user, none); the kernel server and the verdict server start through it.
* `lesson`      — the solution notebook, its exercises, the test-bundle hash (cache key).
* `submissions` — files -> `Submission`s, bounded work per file; a file that is not a notebook is a
  problem file, never a learner.
* `rebuild`     — the instructor's notebook with only the learner's answer cells (`Rebuilt`).
* `run`         — confined kernels execute the rebuilt cells (`Runner`; `forkserver.SandboxSpec` says how).
* `judge`       — the verdict process judges the recorded plain data (confined, with a timeout).
* `verdicts`    — verdicts + what happened to the cells -> one result per exercise.
* `cache`       — HMAC-authenticated results cache, secret seed.
* `jobs`        — one `Job` per submission, one bounded `Outcome` back, wherever it is graded.
* `batch`       — prepares a batch and grades its jobs in a worker pool (`grade_one`); temporary folders
  always removed.
* `cluster`     — the same jobs on a Dask cluster (`--cluster`); `shards` — `--shard I/N` and merge.
* `writer`      — the one writer of every outcome: results.json, feedback.html, the cache.
* `command`     — `labkit grade`: the options and the backend.
* `reports`     — grades.csv, per-student results.json and feedback.html, histogram, summary.
* `templating`  — the HTML pages (feedback, class report) from escaping jinja2 templates (`templates/`).

Importing this package loads none of them: the sandboxed kernel server (`python -m
labkit.grading.forkserver`) and the verdict process (`python -m labkit.grading.judge`) import only the
module they run (and run it once, with no RuntimeWarning). The names below load their stage on first use.
"""
from __future__ import annotations

import importlib
from typing import Any

#: public name -> the stage module that defines it
_FROM = {"main": "command", "grade_one": "batch", "copy_answers": "judge", "Lesson": "lesson", "load_lesson": "lesson",
         "resolve_lesson": "lesson", "GradeError": "options", "Rebuilt": "rebuild", "RunCell": "rebuild",
         "build_run": "rebuild", "COLUMNS": "reports", "feedback_html": "reports", "write_csv": "reports",
         "Submission": "submissions", "assign_students": "submissions", "expand": "submissions",
         "read_submission": "submissions"}

__all__ = list(_FROM)


def __getattr__(name: str) -> Any:
    """`labkit.grading.NAME` imports NAME's stage module on first use (PEP 562)."""
    if name not in _FROM:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_FROM[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_FROM))
