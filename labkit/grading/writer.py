"""The one writer of a batch: every graded job's `Outcome` becomes the learner's record on disk.

Whatever backend graded it (the local pool, a Dask cluster), the client hands each outcome to
`Writer.put` as it completes: the learner's `results.json` and `feedback.html` and the results-cache
entry (only for a verdict from a verified-clean start) are written at once, so an interrupted run resumes from the cache and nothing finished is graded twice. Records of files
that never ran and cached records go through the same `learner_record`. grades.csv, the summary,
exports and the report are then read back from the files (`reports.write_grades`, its one writer, at
the end of a run or after an interrupted one; `results.load_run`).
"""
from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from .jobs import Job, Outcome
from .lesson import Lesson
from .options import Options
from .sandbox import Sandbox
from .reports import keep_other_exercises, record, write_student
from .results import Learner
from .submissions import Submission
from .verdicts import unjudged

if TYPE_CHECKING:
    from .cache import ResultsCache


def learner_record(lesson: Lesson, s: Submission, key: str, outcome: Outcome, out: Path,
                   cached: bool = False) -> Learner:
    """The learner's record of one outcome (a grader failure: an `error` row per exercise, to retry)."""
    if outcome.error:
        results = [unjudged(ex, "error", f"could not be graded (grader problem: {outcome.error}); "
                                         "re-run labkit grade to retry") for ex in lesson.exercises]
        return record(lesson, s, results, outcome.protection, key, out=out)
    return record(lesson, s, list(outcome.results), outcome.protection, key, outcome.seconds, out=out,
                  kernel_starts=outcome.kernel_starts, judge_seconds=outcome.judge_seconds,
                  answer_problems=list(outcome.problems), cells=list(outcome.cells), cached=cached)


class Writer:
    """Puts each learner's record on disk as it arrives; keeps what the summary needs."""

    def __init__(self, opts: Options, lesson: Lesson, protection: Sandbox, cache: ResultsCache,
                 previous: dict[str, Learner]):
        self.out, self.lesson, self.protection, self.cache = opts.out, lesson, protection, cache
        self.regraded = opts.exercises
        self.previous = previous
        self.records: dict[str, Learner] = {}
        self.failures: list[str] = []     # submissions the grader could not grade (exit status 1)

    def start(self, records: dict[str, Learner]) -> None:
        """Write the records known before any job runs (unreadable files, cached grades)."""
        for rec in records.values():
            self._write(rec)

    def put(self, s: Submission, job: Job, outcome: Outcome) -> None:
        """One graded job: its record and its cache entry."""
        if outcome.error:
            self.failures.append(f"{s.path}: {outcome.error}")
            outcome = Outcome.failed(outcome.error, outcome.seconds)
        if not outcome.protection:
            outcome = replace(outcome, protection=self.protection.mode)
        if outcome.verified and not outcome.error:  # only a verdict from a verified-clean start is reused
            self.cache.put(job.key, outcome.to_json())
        self._write(learner_record(self.lesson, s, job.key, outcome, self.out))

    def _write(self, rec: Learner) -> None:
        rec = keep_other_exercises(rec, self.previous.get(rec.student), self.regraded)
        self.records[rec.student] = rec
        write_student(self.out, rec)

    def all_records(self) -> dict[str, Learner]:
        return {**self.previous, **self.records}


def progress(total: int, opts: Options):
    """The batch's progress bar (done/total, rate and ETA), or None without one."""
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover
        return None
    return tqdm(total=total, desc="grading", unit="nb", disable=not opts.progress, file=sys.stderr)
