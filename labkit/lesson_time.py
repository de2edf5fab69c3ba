"""Learner time of a lesson, by one documented rule, and the time line stamped at its top.

The rule is calibrated to a newcomer to ONNX who reads carefully, runs every cell and writes every
exercise (the same rule for every lesson, so lessons compare and the README table stays true):

- **Reading**: every word of every markdown cell at ``WORDS_PER_MINUTE`` (120) words a minute, the
  pace of dense technical prose. A word is a run of non-space characters, so code spans and formulas
  count like words.
- **Code**: ``MINUTES_PER_CODE_CELL`` (1.5) minutes for each code cell that is not part of an
  exercise (read it, run it, look at what it printed or plotted). The ``parameters`` cell (CI's
  ``QUICK`` switch, which the learner only runs) is not counted.
- **Graded exercises** (counted at the answer cell; the check cell is free, the prompt is reading):
  ``EXERCISE_BASE_MINUTES[kind]`` for reading the prompt, running the check and one fix, plus
  ``MINUTES_PER_SOLUTION_LINE`` (1) per line of the reference solution (the non-blank, non-comment
  lines between ``### BEGIN SOLUTION`` and ``### END SOLUTION`` in solutions/), at most
  ``EXERCISE_MAX_MINUTES`` (25). A quiz is ``MINUTES_PER_QUIZ_QUESTION`` (1.5) per question.

Cells tagged ``optional`` (the marked optional part of a lesson, see docs/authoring.md) are summed
separately. Each sum is rounded to the nearest 5 minutes (at least 5), and the first markdown cell
of the notebook carries the line::

    *Time: about N min (core)*                      (no optional part)
    *Time: about N min (core) + M min optional*
    *Time: about N min (core, in 2 sittings: A + B) + M min optional*

A sitting is ``CORE_LIMIT`` (60) minutes at most by this rule. A core longer than that is split: the
markdown cell where a sitting starts is tagged ``sitting`` and carries its own line
(``*Sitting 2 of 2 · about B min. A good place for a break: ...*``), and N is the sum of the
sittings' rounded minutes. The rule reads the reference solutions, so it is computed on solutions/
(lessons/ inherit the lines from them).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

import nbformat

WORDS_PER_MINUTE = 120
MINUTES_PER_CODE_CELL = 1.5
EXERCISE_BASE_MINUTES = {"value": 3.0, "function": 4.0, "onnx": 6.0}
MINUTES_PER_SOLUTION_LINE = 1.0
EXERCISE_MAX_MINUTES = 25.0
MINUTES_PER_QUIZ_QUESTION = 1.5
CORE_LIMIT = 60
OPTIONAL_TAG = "optional"
SITTING_TAG = "sitting"

TIME_LINE = re.compile(r"^\*Time: about \d+ min \(core(, in \d+ sittings: \d+( \+ \d+)+)?\)"
                       r"( \+ \d+ min optional)?\*[ \t]*$", re.M)
SITTING_LINE = re.compile(r"^\*Sitting \d+ of \d+ · about \d+ min\. A good place for a break: back from one, "
                          r"choose Run ▸ Run All Above Selected Cell first\.\*[ \t]*\n*", re.M)
SOLUTION = re.compile(r"^\s*### BEGIN SOLUTION\s*$(.*?)^\s*### END SOLUTION\s*$", re.M | re.S)

#: an exercise id -> (its kind, its number of quiz questions); by default the course's registry
Lookup = Callable[[str], "tuple[str, int]"]


@dataclass(frozen=True)
class LessonTime:
    """Minutes by the rule: unrounded core and optional sums, and the rounded figures shown."""

    core_exact: float
    optional_exact: float
    #: the core's minutes per sitting (one entry when the core is not split)
    sittings: tuple[float, ...] = ()

    @property
    def parts(self) -> tuple[int, ...]:
        """Each sitting's rounded minutes."""
        return tuple(round_minutes(s) for s in self.sittings) or (round_minutes(self.core_exact),)

    @property
    def core(self) -> int:
        return sum(self.parts)

    @property
    def optional(self) -> int:
        return round_minutes(self.optional_exact) if self.optional_exact > 0 else 0

    @property
    def line(self) -> str:
        """The time line for the top of the notebook."""
        split = (f", in {len(self.parts)} sittings: " + " + ".join(map(str, self.parts))) if len(self.parts) > 1 else ""
        extra = f" + {self.optional} min optional" if self.optional else ""
        return f"*Time: about {self.core} min (core{split}){extra}*"

    def sitting_line(self, k: int) -> str:
        """The line at the top of sitting `k` (from 1; the first has none)."""
        return (f"*Sitting {k} of {len(self.parts)} · about {self.parts[k - 1]} min. A good place for a break: "
                "back from one, choose Run ▸ Run All Above Selected Cell first.*")


def round_minutes(minutes: float) -> int:
    """Round to the nearest 5 minutes, at least 5 (a half rounds up)."""
    return max(5, int(math.floor(minutes / 5 + 0.5)) * 5)


def _tags(cell: Any) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []) or [])


def _answer_of(tags: Iterable[str]) -> str | None:
    """The exercise id of an answer cell, else None."""
    return next((t.split(":", 1)[1] for t in tags if t.startswith("answer:")), None)


def _is_exercise_cell(tags: Iterable[str]) -> bool:
    return any(t.startswith(("answer:", "check:")) for t in tags)


def solution_lines(source: str) -> int:
    """Lines a learner writes: non-blank, non-comment lines inside the solution markers."""
    body = "\n".join(m.group(1) for m in SOLUTION.finditer(source))
    return sum(1 for line in body.splitlines() if line.strip() and not line.strip().startswith("#"))


def exercise_minutes(kind: str, lines: int, questions: int = 0) -> float:
    """Minutes of one graded exercise by its kind and the size of its reference solution."""
    if kind == "quiz":
        return MINUTES_PER_QUIZ_QUESTION * questions
    if kind not in EXERCISE_BASE_MINUTES:
        raise ValueError(f"no time rule for exercises of kind {kind!r}")
    return min(EXERCISE_MAX_MINUTES, EXERCISE_BASE_MINUTES[kind] + MINUTES_PER_SOLUTION_LINE * lines)


def registry_lookup(ex_id: str) -> tuple[str, int]:
    """(kind, number of quiz questions) of a course exercise, from labkit/exercises/."""
    from .checks.registry import get

    ex = get(ex_id)
    return ex.kind, len(ex.questions)


def cell_minutes(cell: Any, lookup: Lookup = registry_lookup) -> float:
    """Minutes one cell adds by the rule."""
    if cell.get("cell_type") == "markdown":
        source = SITTING_LINE.sub("", TIME_LINE.sub("", cell.get("source", "")))  # the lines do not time themselves
        return len(re.findall(r"\S+", source)) / WORDS_PER_MINUTE
    if cell.get("cell_type") != "code":
        return 0.0
    tags = _tags(cell)
    if "parameters" in tags:
        return 0.0
    ex = _answer_of(tags)
    if ex is not None:
        kind, questions = lookup(ex)
        return exercise_minutes(kind, solution_lines(cell.get("source", "")), questions)
    return 0.0 if _is_exercise_cell(tags) else MINUTES_PER_CODE_CELL


def lesson_time(nb: Any, lookup: Lookup = registry_lookup) -> LessonTime:
    """Core and optional minutes of a solution notebook (a path or a loaded notebook)."""
    if isinstance(nb, (str, Path)):
        nb = nbformat.read(str(nb), as_version=4)
    sittings, optional = [0.0], 0.0
    for cell in nb.cells:
        m = cell_minutes(cell, lookup)
        if OPTIONAL_TAG in _tags(cell):
            optional += m
            continue
        if SITTING_TAG in _tags(cell):
            sittings.append(0.0)
        sittings[-1] += m
    return LessonTime(sum(sittings), optional, tuple(sittings) if len(sittings) > 1 else ())


def _first_markdown(nb: Any) -> Any | None:
    return next((c for c in nb.cells if c.cell_type == "markdown"), None)


def stamped_line(nb: Any) -> str | None:
    """The time line the notebook carries in its first markdown cell, or None."""
    cell = _first_markdown(nb)
    m = TIME_LINE.search(cell.source) if cell is not None else None
    return m.group(0).rstrip() if m else None


def stamp(nb: Any, line: str) -> bool:
    """Put `line` in the first markdown cell (replacing an old one, else after the title). True if changed."""
    cell = _first_markdown(nb)
    if cell is None:
        raise ValueError("the notebook has no markdown cell to carry the time line")
    if TIME_LINE.search(cell.source):
        new = TIME_LINE.sub(line, cell.source, count=1)
    else:
        lines = cell.source.split("\n")
        at = 1 if lines and lines[0].startswith("#") else 0
        new = "\n".join(lines[:at] + ["", line] + lines[at:]) if at else "\n".join([line, ""] + lines)
        new = re.sub(r"\n{3,}", "\n\n", new)
    if new == cell.source:
        return False
    cell.source = new
    return True


def _sitting_starts(nb: Any) -> list[Any]:
    """The core's cells tagged `sitting`, in order: sitting 2, 3, ... start there."""
    return [c for c in nb.cells if SITTING_TAG in _tags(c) and OPTIONAL_TAG not in _tags(c)]


def problems(path: str | Path) -> list[str]:
    """What is wrong with a notebook's time line or length (empty when all is well)."""
    nb = nbformat.read(str(path), as_version=4)
    t = lesson_time(nb)
    name = Path(path).name
    found = []
    have = stamped_line(nb)
    if have is None:
        found.append(f"{name}: no time line in the first markdown cell (expected {t.line})")
    elif have != t.line:
        found.append(f"{name}: time line says {have!r}, the rule gives {t.line!r}")
    starts = _sitting_starts(nb)
    for k, cell in enumerate(starts, start=2):
        if SITTING_LINE.search(cell.source) is None or t.sitting_line(k) not in cell.source:
            found.append(f"{name}: sitting {k} does not start with {t.sitting_line(k)!r}")
    for k, minutes in enumerate(t.parts, start=1):
        if minutes > CORE_LIMIT:
            what = f"sitting {k} of the core" if len(t.parts) > 1 else "core"
            found.append(f"{name}: {what} is {minutes} min by the rule, over the {CORE_LIMIT}-minute sitting; "
                         "move material into an `## Optional:` part or split it (tag a heading cell `sitting`)")
    return found


def write(path: str | Path) -> bool:
    """Stamp the rule's time line into a notebook file; True if the file changed."""
    nb = nbformat.read(str(path), as_version=4)
    t = lesson_time(nb)
    changed = stamp(nb, t.line)
    starts = _sitting_starts(nb)
    for k, cell in enumerate(starts, start=2):
        new = t.sitting_line(k) + "\n\n" + SITTING_LINE.sub("", cell.source)
        changed = changed or new != cell.source
        cell.source = new
    if changed:
        nbformat.write(nb, str(path))
    return changed
