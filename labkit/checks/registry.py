"""Learner side: which exercises exist (id, title, kind, points, hint, quiz questions without keys).

`labkit/exercises/lNN.py` declares a lesson's exercises with `declare()` and `quiz()`. Nothing here
knows an answer: references, judges, test inputs and quiz keys live in `labkit_judges` (see
`labkit.checks.judging`), which a graded kernel cannot import.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Sequence

from ..cells import is_exercise_id

KINDS = ("function", "value", "onnx", "quiz")


class ExerciseModuleError(Exception):
    """A lesson's exercise module exists but cannot be imported (SyntaxError, missing dependency...)."""


@dataclass(frozen=True)
class Question:
    """One multiple-choice question of a quiz (its key lives on the judge side)."""

    key: str
    prompt: str
    options: dict[str, str]


@dataclass
class Exercise:
    """A graded exercise as the learner side knows it."""

    id: str
    title: str
    points: float
    kind: str
    hint: str = ""          # the hint's steps, one per line (see `hints`)
    questions: tuple[Question, ...] = ()

    @property
    def lesson(self) -> str:
        return self.id[:2]

    @property
    def hints(self) -> list[str]:
        """The hint's steps in order: a nudge naming the concept, then the API; never the code."""
        return hint_steps(self.hint)

    # the judge side, for the learner's own notebook and for tests (never in a graded kernel)
    @property
    def cases(self):
        from .judging import judge_spec

        return judge_spec(self.id).cases

    @property
    def judge(self):
        from .judging import judge_spec

        return judge_spec(self.id).judge


REGISTRY: dict[str, Exercise] = {}


def hint_steps(hint: str) -> list[str]:
    """A stored hint (steps one per line) as its list of steps."""
    return [line for line in (hint or "").split("\n") if line.strip()]


def _hint_text(hint: str | Sequence[str], id: str) -> str:
    """`hint=` as stored: a list of steps (or one string, a single step) becomes one line per step."""
    steps = [hint] if isinstance(hint, str) else list(hint)
    if not all(isinstance(h, str) and "\n" not in h for h in steps):
        raise ValueError(f"{id}: hint= is a list of one-line steps")
    return "\n".join(h.strip() for h in steps if h.strip())


def declare(id: str, *, title: str, points: float, kind: str, hint: str | Sequence[str] = "") -> Exercise:
    """Declare exercise `id` (learner side). A function exercise gets its inputs from its judge module.

    `hint`: a list of steps the check panel reveals one click at a time (concept first, then API)."""
    if not is_exercise_id(id):
        raise ValueError(f"exercise id {id!r} must look like '01.name'")
    if kind not in KINDS or kind == "quiz":
        raise ValueError(f"{id}: kind must be one of function, value, onnx (quizzes use quiz())")
    REGISTRY[id] = ex = Exercise(id, title, float(points), kind, _hint_text(hint, id))
    return ex


def quiz(id: str, *, title: str, points: float, questions: list[Question], hint: str | Sequence[str] = "") -> Exercise:
    """Declare a multiple-choice quiz; the answer is a dict {question key: option letter}."""
    if not is_exercise_id(id):
        raise ValueError(f"exercise id {id!r} must look like '01.name'")
    if not questions or len({q.key for q in questions}) != len(questions):
        raise ValueError(f"{id}: a quiz needs questions with distinct keys")
    REGISTRY[id] = ex = Exercise(id, title, float(points), "quiz", _hint_text(hint, id), tuple(questions))
    return ex


def _import_lesson(package: str, lesson: str) -> bool:
    """Import `package.lNN`; False when it does not exist, ExerciseModuleError when it is broken."""
    name = f"{package}.l{lesson}"
    try:
        importlib.import_module(name)
        return True
    except ModuleNotFoundError as e:
        if e.name in (name, package):
            return False
        raise ExerciseModuleError(f"{name} cannot be imported: {type(e).__name__}: {e}") from e
    except Exception as e:  # SyntaxError, a failing import-time computation...
        raise ExerciseModuleError(f"{name} cannot be imported: {type(e).__name__}: {e}") from e


def get(id: Any) -> Exercise:
    """The exercise `id`, importing `labkit.exercises.lNN` on first use.

    KeyError when there is no such exercise; ExerciseModuleError when its module is broken."""
    if id not in REGISTRY and is_exercise_id(id):
        _import_lesson("labkit.exercises", id[:2])
    if id not in REGISTRY:
        raise KeyError(id)
    return REGISTRY[id]


def lesson_exercises(lesson: str) -> list[Exercise]:
    """All exercises of lesson `lesson` ("01"), in declaration order."""
    _import_lesson("labkit.exercises", lesson)
    return [e for e in REGISTRY.values() if e.id.startswith(lesson + ".")]
