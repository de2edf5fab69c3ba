"""The grader's rebuild of every lesson runs clean: the instructor's notebook with the answer cells of the
solution, skip-grading cells dropped (labkit.grading.rebuild.build_run), executes with zero errors outside
the answer cells. A normal cell that needs a name only a skip-grading cell defines fails here, named.

Executes whole notebooks (one kernel per lesson): notebook tier (`-m notebooks`).
"""
from __future__ import annotations

import nbformat
import pytest

from labkit.grading.lesson import load_lesson
from labkit.grading.rebuild import build_run
from labkit.notebooks import KERNEL

from conftest import SOLUTIONS

#: seconds one rebuilt cell may run (the slowest solution cells take tens of seconds on 2 cores)
CELL_TIMEOUT = 600


def _errors(executed: nbformat.NotebookNode) -> list[tuple[dict, str]]:
    """(cell metadata, 'Ename: evalue') of every cell that raised."""
    found = []
    for cell in executed.cells:
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                found.append((cell.metadata.get("labkit", {}), f"{out.get('ename')}: {out.get('evalue', '')[:200]}"))
    return found


@pytest.mark.notebooks
@pytest.mark.parametrize("path", SOLUTIONS, ids=[p.stem for p in SOLUTIONS])
def test_rebuilt_solution_runs_without_errors_outside_answer_cells(path, tmp_path):
    from nbclient import NotebookClient

    lesson = load_lesson(path)
    solution = nbformat.read(path, as_version=4)
    rebuilt = build_run(lesson, solution)      # the solution handed in as a submission
    assert not rebuilt.missing, rebuilt.missing
    nb = nbformat.v4.new_notebook()
    for cell in rebuilt.cells:
        code = nbformat.v4.new_code_cell(cell.source)
        code.metadata["labkit"] = {"role": cell.role, "exercise": cell.exercise, "index": cell.index,
                                   "first_line": (cell.source.strip().splitlines() or [""])[0][:80]}
        nb.cells.append(code)
    client = NotebookClient(nb, kernel_name=KERNEL, timeout=CELL_TIMEOUT, allow_errors=True,
                            resources={"metadata": {"path": str(tmp_path)}})
    executed = client.execute()
    bad = [(meta, err) for meta, err in _errors(executed) if meta.get("role") != "answer"]
    assert not bad, f"{path.name}: the grader's rebuild raises outside the answer cells:\n" + "\n".join(
        f"  solution cell {m.get('index')} ({m.get('role')}, starts {m.get('first_line')!r}): {e}" for m, e in bad)
