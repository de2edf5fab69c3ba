"""Whole notebooks: solutions reach full points, the structure is sound.

Solutions execute once per test session, in nbval (see the Makefile): it compares every output,
check verdicts included ("[passed] 03.dynamic_batch 4/4 points"), with the committed ones, and
`test_committed_solution_outputs_show_full_points_and_no_errors` proves those show full points.
So a solution that stops reaching full points fails nbval; it is not executed a second time here.
The same nbval run is held to the lesson budgets (root conftest.py). Blank lessons execute once too,
in the grader (tests/test_grading_lessons.py): every check cell reads "not attempted" and no cell
outside the answer cells raises, which is what a learner's Run All of the fresh lesson needs.
"""
from __future__ import annotations

import re

import nbformat
import pytest

from labkit.assign import exercise_tag
from labkit.checks import lesson_exercises
from labkit.notebooks import verdicts

from conftest import LESSON_NOTEBOOKS, SOLUTIONS

ids = [p.stem for p in SOLUTIONS]
#: a check cell: check("LL.name", answer_variable), nothing else
CHECK_CALL = re.compile(r'check\("(\d\d\.[a-z][a-z0-9_]*)", [A-Za-z_][A-Za-z0-9_]*\)')


def _exercise_ids(nb) -> list[str]:
    return [exercise_tag(c, "check") for c in nb.cells if exercise_tag(c, "check")]


@pytest.mark.parametrize("path", SOLUTIONS, ids=ids)
def test_solution_structure(path):
    nb = nbformat.read(path, as_version=4)
    in_notebook = _exercise_ids(nb)
    assert set(in_notebook) <= {e.id for e in lesson_exercises(path.stem[:2])}, "a check of another lesson"
    assert len(in_notebook) == len(set(in_notebook))
    assert len(in_notebook) >= 2
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert "parameters" in code[0].metadata.get("tags", []) and "QUICK" in code[0].source
    for c in nb.cells:
        if exercise_tag(c, "check"):
            m = CHECK_CALL.fullmatch(c.source.strip())
            assert m, f"a check cell is one call, check(\"LL.name\", answer): {c.source!r}"
            assert m.group(1) == exercise_tag(c, "check"), f"{c.source!r} checks another exercise than its tag says"
    assert any("What you learned" in c.source for c in nb.cells if c.cell_type == "markdown")


@pytest.mark.parametrize("number", sorted(LESSON_NOTEBOOKS))
def test_every_registered_exercise_has_one_check_cell_in_its_lessons_notebooks(number):
    """Once in the lesson: in its notebook, or in one of a split lesson's two (09.generate is in 09b)."""
    found = [x for p in LESSON_NOTEBOOKS[number] for x in _exercise_ids(nbformat.read(p, as_version=4))]
    assert sorted(found) == sorted(e.id for e in lesson_exercises(number))


@pytest.mark.parametrize("path", SOLUTIONS, ids=ids)
def test_committed_solution_outputs_show_full_points_and_no_errors(path):
    nb = nbformat.read(path, as_version=4)
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors, f"committed outputs contain errors: {[e.ename for e in errors]}"
    found = verdicts(nb)
    for ex in _exercise_ids(nb):
        assert found.get(ex, {}).get("status") == "passed", f"{ex}: {found.get(ex)}"
