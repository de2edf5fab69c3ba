"""A lesson's maximum is what its core asks: an exercise in an optional part is a bonus (issue 33).

Fast: reads the solution notebooks and the exercise registry; builds records by hand (no kernel)."""
from __future__ import annotations

import csv
import json

import pytest

from labkit.checks import lesson_exercises
from labkit.checks.display import panel_html
from labkit.checks.registry import core_points
from labkit.checks.result import Result
from labkit.grading import exports
from labkit.grading.lesson import load_lesson
from labkit.grading.reports import grade_rows, write_csv
from labkit.grading.results import ExerciseResult, Learner, Run

from conftest import LESSON_NOTEBOOKS, SOLUTIONS


def optional_answers(nb: dict) -> dict[str, bool]:
    """Exercise id -> whether its answer cell sits in an optional part (docs/authoring.md: a run of cells
    tagged `optional` that starts with a `## Optional:` heading)."""
    out, part = {}, False
    for cell in nb["cells"]:
        tags = cell.get("metadata", {}).get("tags", [])
        src = "".join(cell["source"])
        if "optional" not in tags:
            part = False
        elif cell["cell_type"] == "markdown" and src.startswith("## Optional:"):
            part = True
        for t in tags:
            if t.startswith("answer:"):
                assert ("optional" in tags) == part, f"{t}: tagged optional outside a part, or untagged inside one"
                out[t.removeprefix("answer:")] = part
    return out


@pytest.mark.parametrize("path", SOLUTIONS, ids=[p.stem for p in SOLUTIONS])
def test_bonus_is_exactly_the_optional_part(path):
    optional = optional_answers(json.loads(path.read_text()))
    exercises = {e.id: e for e in lesson_exercises(path.name[:2]) if e.id in optional}
    assert set(optional) == set(exercises), "an answer cell of an exercise its lesson does not declare"
    assert {i for i, o in optional.items() if o} == {i for i, e in exercises.items() if e.bonus}
    core = round(sum(e.points for i, e in exercises.items() if not optional[i]), 2)
    assert load_lesson(path).max_points == core > 0


@pytest.mark.parametrize("number", sorted(LESSON_NOTEBOOKS))
def test_a_lessons_notebooks_hold_its_exercises_once_and_its_maximum(number):
    """A split lesson's notebooks (09, 09b) share its exercises out: each once, their maxima summing to its."""
    held = [x for p in LESSON_NOTEBOOKS[number] for x in optional_answers(json.loads(p.read_text()))]
    assert sorted(held) == sorted(e.id for e in lesson_exercises(number))
    maxima = sum(load_lesson(p).max_points for p in LESSON_NOTEBOOKS[number])
    assert round(maxima, 2) == core_points(number) > 0


def test_issue_examples():
    """The caps the issue measured are gone: the core alone is the maximum."""
    assert (core_points("10"), core_points("02"), core_points("03")) == (13, 10, 12)


def _record(lesson: str, bonus_points: float) -> Learner:
    """A learner with every core exercise at full points and each bonus at `bonus_points`."""
    exs = []
    for e in lesson_exercises(lesson):
        got = min(bonus_points, e.points) if e.bonus else e.points
        exs.append(ExerciseResult(e.id, e.title, "passed" if got == e.points else "failed", got, e.points, "m"))
    return Learner("ana", lesson, f"{lesson}_x", exs)


def test_core_alone_is_full_marks_everywhere(tmp_path):
    """Results, grades.csv, wide CSV, Gradescope and the panel all count a bonus outside the maximum."""
    learner = _record("03", 0)
    assert learner.points == learner.max_points == 12
    rows = grade_rows([learner])
    write_csv(tmp_path / "grades.csv", rows)
    table = list(csv.DictReader((tmp_path / "grades.csv").open()))
    assert sum(float(r["max_points"]) for r in table) == 12
    bonus_rows = [r for r in table if r["exercise"] in ("03.raw_input", "03.custom_op")]
    assert [r["max_points"] for r in bonus_rows] == ["0", "0"]
    assert all(r["message"].startswith("bonus (worth 4 points") for r in bonus_rows)

    full = _record("03", 4)
    assert (full.points, full.max_points) == (20, 12)
    run = Run(tmp_path, "03", "03_x", [(e.exercise, e.title, e.max_points) for e in full.exercises], [full])
    assert run.max_points == 12
    wide = list(csv.reader(exports.wide_csv([run]).splitlines()))
    assert wide[1][-1] == "12" and wide[2][-1] == "20"
    gs = exports.gradescope_learner(run, full)
    assert gs["score"] == 20 and sum(t["max_score"] for t in gs["tests"]) == 12
    assert any(t["name"].endswith("(bonus)") for t in gs["tests"])

    html = panel_html(Result("03.custom_op", "t", "passed", 4, 4, "ok"))
    assert "bonus points" in html and "bonus" not in panel_html(Result("03.faithful", "t", "passed", 4, 4, "ok"))
