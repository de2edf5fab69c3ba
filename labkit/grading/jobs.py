"""One unit of work and one result, wherever a submission is graded.

A `Job` is one learner's submission, rebuilt (`rebuild.Rebuilt`: only what runs) and stamped with
the batch's `Settings`; an `Outcome` is what grading it gave, bounded. Both are frozen plain data:
they pickle unchanged across a thread, a pool process or a Dask worker on another machine, and an
`Outcome` is also the results-cache entry (`to_json` / `from_json`), so a grade keeps one shape
from the worker to the disk. `batch.grade_one` is the one function that turns a job into an
outcome; `writer.Writer` is the one writer that turns outcomes into learners' records on disk.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, replace

from .rebuild import Rebuilt
from .results import (MAX_NOTES, MAX_RECORD_CHARS, MAX_TEST_CHARS, ExerciseResult, ResultsError, bound_results,
                      cut, exercises_json, parse_exercises)

#: at most this many per-cell events and answer problems travel in one outcome
MAX_EVENTS = 2000
MAX_EVENT_CHARS = 300


@dataclass(frozen=True)
class Settings:
    """What every job of one batch shares, and every machine grading it must agree on.

    A node prepares its own sandbox from these (`cluster.node_context`) and refuses to grade when its
    own test-bundle hash differs from `bundle` (another course version, labkit or package set). The
    seed travels here, in the task's arguments, never in a file; it is kept out of `repr`, so no log
    line of a scheduler shows it."""

    lesson: str                     # "03": resolved on each machine in its own course install
    solutions: str | None           # --solutions as given (None: the course's own solutions/)
    seed: int = field(repr=False)
    extra: str = field(repr=False)  # the instructor's private extra tests (Python source)
    cell_timeout: float = 120.0
    notebook_timeout: float = 900.0
    judge_timeout: float = 300.0
    memory_gb: float = 3.0
    protection: str = "sandbox"     # the protection mode the client decided (grading.sandbox: Sandbox.mode)
    bundle: str = ""                # the client's test-bundle hash (lesson.bundle_hash)


@dataclass(frozen=True)
class Job:
    """One submission to grade: who, which file (path and SHA-256, for messages and the cache key),
    the cells to run, and the batch's settings."""

    student: str                    # the learner's folder id (identity.learner_id)
    name: str                       # display name
    path: str                       # the file as the client saw it
    sha256: str
    key: str                        # the results-cache entry this job's outcome goes to
    rebuilt: Rebuilt
    settings: Settings


def _event(e: dict) -> dict:
    """One per-cell event with its texts cut (the runner already shortens error names and values)."""
    return {k: cut(v, MAX_EVENT_CHARS) if isinstance(v, str) else v for k, v in e.items()}


@dataclass(frozen=True)
class Outcome:
    """What grading one job gave, bounded so that every record made of it is one its readers accept.

    `error` set: the grader (not the submission) failed; nothing is cached and a re-run retries.
    Only an outcome graded from a verified-clean start (`verified`) is ever cached."""

    results: tuple[ExerciseResult, ...] = ()
    cells: tuple[dict, ...] = ()        # what happened to each cell that ran (run.Runner events)
    problems: tuple[str, ...] = ()      # recorded answers that were not usable
    seconds: float | None = None
    judge_seconds: float | None = None
    kernel_starts: int | None = None
    verified: bool = False
    protection: str = ""
    error: str = ""

    @classmethod
    def make(cls, results: list[ExerciseResult], cells: list[dict] = (), problems: list[str] = (),
             **rest) -> "Outcome":
        """An outcome with every part bounded (texts cut, lists capped)."""
        o = cls(tuple(bound_results(list(results))), tuple(_event(e) for e in list(cells)[:MAX_EVENTS]),
                tuple(cut(p, MAX_TEST_CHARS) for p in list(problems)[:MAX_NOTES]), **rest)
        while o.cells and o.size() > MAX_RECORD_CHARS:  # the exercises are bounded; the events give way
            o = replace(o, cells=o.cells[: len(o.cells) // 2])
        return o

    @classmethod
    def failed(cls, error: str, seconds: float | None = None) -> "Outcome":
        """The grader could not grade the job (a lost worker, a node that cannot grade): no verdict."""
        return cls(seconds=seconds, error=cut(error, MAX_TEST_CHARS))

    def to_json(self) -> dict:
        """The stored form (a results-cache entry); `from_json` reads it back unchanged."""
        return {"results": exercises_json(list(self.results)), "cells": list(self.cells),
                "problems": list(self.problems), "seconds": self.seconds, "judge_seconds": self.judge_seconds,
                "kernel_starts": self.kernel_starts, "verified": self.verified, "protection": self.protection,
                "error": self.error}

    @classmethod
    def from_json(cls, d: object, where: str = "a cached outcome") -> "Outcome":
        """An outcome from `to_json` output; ResultsError when it is not one (an older cache entry)."""
        if not isinstance(d, dict) or not isinstance(d.get("cells"), list) or not isinstance(d.get("problems"), list):
            raise ResultsError(f"{where}: not a grading outcome")
        num = (int, float, type(None))
        if not (isinstance(d.get("seconds"), num) and isinstance(d.get("judge_seconds"), num)
                and isinstance(d.get("kernel_starts"), (int, type(None))) and isinstance(d.get("verified"), bool)
                and isinstance(d.get("protection"), str) and isinstance(d.get("error"), str)
                and all(isinstance(e, dict) for e in d["cells"]) and all(isinstance(p, str) for p in d["problems"])):
            raise ResultsError(f"{where}: a field of the wrong type")
        return cls(tuple(parse_exercises(d.get("results"), where)), tuple(d["cells"]), tuple(d["problems"]),
                   d["seconds"], d["judge_seconds"], d["kernel_starts"], d["verified"], d["protection"], d["error"])

    def size(self) -> int:
        """Bytes of the stored form (at most about MAX_RECORD_CHARS: see `make`)."""
        return len(json.dumps(self.to_json()).encode())

