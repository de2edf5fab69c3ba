"""Stage 3: what runs for one submission — the instructor's notebook with only the learner's answer cells.

Edited, deleted or added cells are reported (notes per exercise), never run. Linear in the
number of cells: every look-up is a dictionary or a precomputed array.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..assign import strip_solution
from ..cells import cell_source, cell_tags, exercise_tag
from .lesson import Lesson


@dataclass(frozen=True)
class RunCell:
    """One cell to execute: its source, its role (answer, check or instructor code) and exercise."""

    source: str
    role: str              # "answer" | "check" | "code"
    exercise: str | None
    index: int             # position in the solution notebook


@dataclass
class Rebuilt:
    cells: list[RunCell]
    notes: dict[str, list[str]] = field(default_factory=dict)     # exercise -> what was changed and ignored
    missing: dict[str, str] = field(default_factory=dict)         # exercise -> why its answer cell is missing


def build_run(lesson: Lesson, nb: dict) -> Rebuilt:
    """The cells to run for submission `nb`, with notes on what the learner changed outside answers."""
    sol_cells = lesson.solution["cells"]
    blank_src = lesson.blank_sources
    sub_cells = nb["cells"]
    ex_order = [e.id for e in lesson.exercises]
    notes: dict[str, list[str]] = {x: [] for x in ex_order}
    missing: dict[str, str] = {}

    by_tag: dict[str, list[int]] = {}
    by_id: dict[str, int] = {}
    for n, c in enumerate(sub_cells):
        cid = c.get("id")
        if isinstance(cid, str):
            by_id.setdefault(cid, n)
        a = exercise_tag(c, "answer") if c.get("cell_type") == "code" else None
        if a:
            by_tag.setdefault(a, []).append(n)

    # the next exercise at or after each solution cell (for attributing notes), computed backwards
    next_ex: list[str] = [ex_order[-1]] * (len(sol_cells) + 1)
    for i in range(len(sol_cells) - 1, -1, -1):
        x = exercise_tag(sol_cells[i], "check")
        next_ex[i] = x if x in notes else next_ex[i + 1]

    run: list[RunCell] = []
    used: set[int] = set()
    parameters_done = False
    for i, c in enumerate(sol_cells):
        if c.get("cell_type") != "code":
            continue
        cid = c.get("id")
        tags = cell_tags(c)
        answer, check = exercise_tag(c, "answer"), exercise_tag(c, "check")
        if answer:
            cands = by_tag.get(answer, [])
            chosen = None
            if cands:
                chosen = next((n for n in cands if sub_cells[n].get("id") == cid), cands[0])
                if len(cands) > 1:
                    which = "one with the original cell id" if sub_cells[chosen].get("id") == cid else "first"
                    notes[answer].append(f"{len(cands)} cells are tagged answer:{answer}; the {which} was used")
            elif isinstance(cid, str) and cid in by_id and sub_cells[by_id[cid]].get("cell_type") == "code":
                chosen = by_id[cid]
                notes[answer].append(f"the answer cell was found by its cell id (its tag answer:{answer} is gone)")
            if chosen is None:
                missing[answer] = (f"no answer cell for {answer} in the submission (tag answer:{answer} or cell id "
                                   f"{cid}); the blank stub ran in its place")
                source = blank_src.get(cid) or strip_solution(cell_source(c))
            else:
                source = cell_source(sub_cells[chosen])
                used.add(chosen)
            run.append(RunCell(source, "answer", answer, i))
            continue
        if "skip-grading" in tags and not check:
            continue
        source = cell_source(c)
        if "parameters" in tags and not parameters_done:
            source = source + "\nQUICK = True  # set by the grader"
            parameters_done = True
        run.append(RunCell(source, "check" if check else "code", check, i))

    # report what the learner changed outside the answer cells (never run)
    sol_ids = set()
    for i, c in enumerate(sol_cells):
        cid = c.get("id")
        if cid:
            sol_ids.add(cid)
        if c.get("cell_type") != "code" or exercise_tag(c, "answer") or "skip-grading" in cell_tags(c):
            continue
        theirs = sub_cells[by_id[cid]] if isinstance(cid, str) and cid in by_id else None
        role = "check cell" if exercise_tag(c, "check") else "cell"
        if theirs is None:
            notes[next_ex[i]].append(f"a {role} above this exercise was deleted; the original ran")
        elif theirs.get("cell_type") == "code" and cell_source(theirs) != blank_src.get(cid, cell_source(c)):
            notes[next_ex[i]].append(f"a {role} above this exercise was edited; your edit was not run, the original was")
    # added code cells: attribute each to the next exercise after it in the submission (backwards scan)
    added: dict[str, int] = {}
    after = ex_order[-1]
    for n in range(len(sub_cells) - 1, -1, -1):
        c = sub_cells[n]
        x = exercise_tag(c, "check") or exercise_tag(c, "answer")
        if x in notes:
            after = x
        cid = c.get("id")
        if c.get("cell_type") != "code" or n in used or (isinstance(cid, str) and cid in sol_ids):
            continue
        if exercise_tag(c, "answer") in by_tag:
            continue  # an extra copy of an answer cell: reported above
        added[after] = added.get(after, 0) + 1
    for x, k in added.items():
        notes[x].append(f"{k} code cell{'s' if k > 1 else ''} you added above this exercise "
                        f"{'were' if k > 1 else 'was'} not run (only answer cells are graded)")
    return Rebuilt(run, notes, missing)
