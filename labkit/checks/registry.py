"""Learner side: which exercises exist (id, title, kind, points, hint, quiz questions without keys).

An exercise's one spec is in `labkit_judges/lNN.py` (`@exercise(...)`, `quiz(...)`, see
`labkit.checks.judging`); `labkit assign` writes the learner-visible part of it to
`labkit/exercises/lNN.py` as `declare(...)` calls, so that a graded kernel, which cannot import
`labkit_judges`, knows the exercises too. Nothing here knows an answer or imports the judges.
"""
from __future__ import annotations

import importlib
import re
from dataclasses import dataclass, field, replace
from typing import Any, Sequence

from ..cells import is_exercise_id

KINDS = ("function", "value", "onnx", "quiz")


class ExerciseModuleError(Exception):
    """A lesson's exercise module exists but cannot be imported (SyntaxError, missing dependency...)."""


@dataclass(frozen=True)
class Question:
    """One multiple-choice question of a quiz. `answer` (the right letter) and `why` (shown once it is
    right) are given in the judge-side spec only; the learner side holds them empty."""

    key: str
    prompt: str
    options: dict[str, str]
    answer: str = field(default="", repr=False)
    why: str = field(default="", repr=False)

    def public(self) -> "Question":
        """The question without its answer: what the learner side may know."""
        return replace(self, answer="", why="")


@dataclass
class Exercise:
    """A graded exercise as the learner side knows it."""

    id: str
    title: str
    points: float
    kind: str
    hint: str = ""          # the hint's steps, one per line (see `hints`)
    questions: tuple[Question, ...] = ()
    bonus: bool = False     # in a part the lesson calls optional: scored outside the lesson's maximum
    tools: tuple[str, ...] = ()  # a function answer runs where only these import (`confine`); () anywhere
    #: how the check calls a function answer on one case: "" calls answer(*case); "module:name" calls that
    #: labkit function as name(answer, *case) (e.g. one that applies the rewrite rules the answer returns)
    call: str = ""

    @property
    def lesson(self) -> str:
        return self.id[:2]

    @property
    def hints(self) -> list[str]:
        """The hint's steps in order: a nudge naming the concept, then the API; never the code."""
        return hint_steps(self.hint)


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


def make_exercise(id: str, *, title: str, points: float, kind: str, hint: str | Sequence[str] = "",
                  questions: Sequence[Question] = (), bonus: bool = False,
                  tools: Sequence[str] = (), call: str = "") -> Exercise:
    """A validated Exercise (learner-visible fields only: quiz questions lose their answers)."""
    if not is_exercise_id(id):
        raise ValueError(f"exercise id {id!r} must look like '01.name'")
    if kind not in KINDS:
        raise ValueError(f"{id}: kind must be one of {', '.join(KINDS)}")
    if (kind == "quiz") != bool(questions):
        raise ValueError(f"{id}: questions= is needed exactly when the exercise is a quiz")
    if questions and len({q.key for q in questions}) != len(questions):
        raise ValueError(f"{id}: a quiz needs questions with distinct keys")
    if not isinstance(bonus, bool):
        raise ValueError(f"{id}: bonus= is True or False")
    tools = tuple(tools)
    if tools and (kind != "function" or not all(isinstance(t, str) and t.isidentifier() for t in tools)):
        raise ValueError(f"{id}: tools= names the modules a function answer may import")
    if call and (kind != "function" or tools or not re.fullmatch(r"labkit(\.\w+)+:\w+", call)):
        raise ValueError(f"{id}: call= is 'labkit.module:function', for a function answer that is not confined")
    return Exercise(id, title, float(points), kind, _hint_text(hint, id), tuple(q.public() for q in questions),
                    bonus, tools, call)


def register(ex: Exercise, source: str) -> Exercise:
    """Put `ex` in REGISTRY. The generated module and the spec both register an exercise: if one came
    first, the other must agree with it, else the generated module is stale (`source` says which)."""
    old = REGISTRY.get(ex.id)
    if old is not None and old != ex:
        diff = [f for f in ("title", "points", "kind", "hint", "questions", "bonus", "tools", "call") if getattr(old, f) != getattr(ex, f)]
        raise ValueError(f"{ex.id}: {source} disagrees with what was loaded before ({', '.join(diff)}): "
                         f"labkit/exercises/l{ex.lesson}.py is stale, run `labkit assign`")
    REGISTRY[ex.id] = ex
    return ex


def declare(id: str, *, title: str, points: float, kind: str, hint: Sequence[str] = (),
            questions: Sequence[Question] = (), bonus: bool = False, tools: Sequence[str] = (),
            call: str = "") -> Exercise:
    """Register an exercise on the learner side: what `labkit assign` writes in labkit/exercises/lNN.py
    from the spec (never written by hand). Refuses a quiz question that carries its answer."""
    if any(q.answer or q.why for q in questions):
        raise ValueError(f"{id}: the learner side never holds a quiz's answers")
    return register(make_exercise(id, title=title, points=points, kind=kind, hint=hint, questions=questions,
                                  bonus=bonus, tools=tools, call=call), f"labkit/exercises/l{id[:2]}.py")


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


def is_bonus(id: str) -> bool:
    """Whether exercise `id` is a bonus (False for an id no lesson declares)."""
    try:
        return get(id).bonus
    except Exception:
        return False


def core_points(lesson: str) -> float:
    """A lesson's maximum: the points of its core exercises (bonus exercises count on top)."""
    return round(sum(e.points for e in lesson_exercises(lesson) if not e.bonus), 2)


def lesson_exercises(lesson: str) -> list[Exercise]:
    """All exercises of lesson `lesson` ("01"), in declaration order."""
    _import_lesson("labkit.exercises", lesson)
    return [e for e in REGISTRY.values() if e.id.startswith(lesson + ".")]
