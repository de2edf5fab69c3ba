"""Learner side: which exercises exist (id, title, kind, points, hint, quiz questions without keys).

`labkit/exercises/lNN.py` declares a lesson's exercises with `declare()` and `quiz()`. Nothing here
knows an answer: references, judges, test inputs and quiz keys live in `labkit_judges` (see
`labkit.checks.judging`), which a graded kernel cannot import.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

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
    hint: str = ""
    questions: tuple[Question, ...] = ()

    @property
    def lesson(self) -> str:
        return self.id[:2]

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


def declare(id: str, *, title: str, points: float, kind: str, hint: str = "") -> Exercise:
    """Declare exercise `id` (learner side). A function exercise gets its inputs from its judge module."""
    if not is_exercise_id(id):
        raise ValueError(f"exercise id {id!r} must look like '01.name'")
    if kind not in KINDS or kind == "quiz":
        raise ValueError(f"{id}: kind must be one of function, value, onnx (quizzes use quiz())")
    REGISTRY[id] = ex = Exercise(id, title, float(points), kind, hint)
    return ex


def quiz(id: str, *, title: str, points: float, questions: list[Question], hint: str = "") -> Exercise:
    """Declare a multiple-choice quiz; the answer is a dict {question key: option letter}."""
    if not is_exercise_id(id):
        raise ValueError(f"exercise id {id!r} must look like '01.name'")
    if not questions or len({q.key for q in questions}) != len(questions):
        raise ValueError(f"{id}: a quiz needs questions with distinct keys")
    REGISTRY[id] = ex = Exercise(id, title, float(points), "quiz", hint, tuple(questions))
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
