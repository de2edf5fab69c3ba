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
    ex_order = [e.id for e in lesson.exercises]
    notes: dict[str, list[str]] = {x: [] for x in ex_order}
    missing: dict[str, str] = {}
    sub = index_submission(nb["cells"])
    next_ex = next_exercise(sol_cells, ex_order)
    run, used = cells_to_run(sol_cells, lesson.blank_sources, sub, notes, missing)
    sol_ids = note_changed_cells(sol_cells, lesson.blank_sources, sub, next_ex, notes)
    note_added_cells(sub, used, sol_ids, ex_order[-1], notes)
    return Rebuilt(run, notes, missing)


@dataclass(frozen=True)
class Submitted:
    """A submission's cells with the look-ups every stage needs (built once: linear, not quadratic)."""

    cells: list[dict]
    by_tag: dict[str, list[int]]   # answer tag -> positions of the code cells carrying it
    by_id: dict[str, int]          # cell id -> first position with that id


def index_submission(sub_cells: list[dict]) -> Submitted:
    """Index the submission's cells by answer tag and by cell id, to find each answer cell in O(1)."""
    by_tag: dict[str, list[int]] = {}
    by_id: dict[str, int] = {}
    for n, c in enumerate(sub_cells):
        cid = c.get("id")
        if isinstance(cid, str):
            by_id.setdefault(cid, n)
        a = exercise_tag(c, "answer") if c.get("cell_type") == "code" else None
        if a:
            by_tag.setdefault(a, []).append(n)
    return Submitted(sub_cells, by_tag, by_id)


def next_exercise(sol_cells: list[dict], ex_order: list[str]) -> list[str]:
    """The next exercise at or after each solution cell (to attribute notes), computed backwards."""
    known = set(ex_order)
    next_ex: list[str] = [ex_order[-1]] * (len(sol_cells) + 1)
    for i in range(len(sol_cells) - 1, -1, -1):
        x = exercise_tag(sol_cells[i], "check")
        next_ex[i] = x if x in known else next_ex[i + 1]
    return next_ex


def last_check_cell(sol_cells: list[dict]) -> int:
    """Position of the solution's last check cell: nothing after it runs in grading (no grade depends on it)."""
    return max((i for i, c in enumerate(sol_cells) if exercise_tag(c, "check")), default=len(sol_cells))


def cells_to_run(sol_cells: list[dict], blank_src: dict[str, str], sub: Submitted, notes: dict[str, list[str]],
                 missing: dict[str, str]) -> tuple[list[RunCell], set[int]]:
    """The instructor's code cells in order, each answer cell replaced by the learner's, up to the last
    check cell (what follows it can change no grade: lesson 09's optional measurements were 40% of
    its graded run); also the positions of the submission cells used (so they are not reported as added)."""
    run: list[RunCell] = []
    used: set[int] = set()
    parameters_done = False
    last_check = last_check_cell(sol_cells)
    for i, c in enumerate(sol_cells[:last_check + 1]):
        if c.get("cell_type") != "code":
            continue
        tags = cell_tags(c)
        answer, check = exercise_tag(c, "answer"), exercise_tag(c, "check")
        if answer:
            chosen = answer_cell(c, answer, sub, notes)
            if chosen is None:
                missing[answer] = (f"no answer cell for {answer} in the submission (tag answer:{answer} or cell id "
                                   f"{c.get('id')}); the blank stub ran in its place")
                source = blank_src.get(c.get("id")) or strip_solution(cell_source(c))
            else:
                source = cell_source(sub.cells[chosen])
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
    return run, used


def answer_cell(c: dict, answer: str, sub: Submitted, notes: dict[str, list[str]]) -> int | None:
    """The submission's cell answering solution cell `c` (by tag, else by cell id), or None; notes
    say when the choice was not plain (several tagged cells, or the tag gone)."""
    cid = c.get("id")
    cands = sub.by_tag.get(answer, [])
    if cands:
        chosen = next((n for n in cands if sub.cells[n].get("id") == cid), cands[0])
        if len(cands) > 1:
            which = "one with the original cell id" if sub.cells[chosen].get("id") == cid else "first"
            notes[answer].append(f"{len(cands)} cells are tagged answer:{answer}; the {which} was used")
        return chosen
    if isinstance(cid, str) and cid in sub.by_id and sub.cells[sub.by_id[cid]].get("cell_type") == "code":
        notes[answer].append(f"the answer cell was found by its cell id (its tag answer:{answer} is gone)")
        return sub.by_id[cid]
    return None


def note_changed_cells(sol_cells: list[dict], blank_src: dict[str, str], sub: Submitted, next_ex: list[str],
                       notes: dict[str, list[str]]) -> set[str]:
    """Note the instructor cells the learner deleted or edited (the originals ran); returns the
    solution's cell ids."""
    sol_ids = set()
    last_check = last_check_cell(sol_cells)
    for i, c in enumerate(sol_cells):
        cid = c.get("id")
        if cid:
            sol_ids.add(cid)
        if c.get("cell_type") != "code" or exercise_tag(c, "answer") or "skip-grading" in cell_tags(c) \
                or i > last_check:  # not run (cells_to_run): an edit there changes nothing
            continue
        theirs = sub.cells[sub.by_id[cid]] if isinstance(cid, str) and cid in sub.by_id else None
        role = "check cell" if exercise_tag(c, "check") else "cell"
        if theirs is None:
            notes[next_ex[i]].append(f"a {role} above this exercise was deleted; the original ran")
        elif theirs.get("cell_type") == "code" and cell_source(theirs) != blank_src.get(cid, cell_source(c)):
            notes[next_ex[i]].append(f"a {role} above this exercise was edited; your edit was not run, the original was")
    return sol_ids


def note_added_cells(sub: Submitted, used: set[int], sol_ids: set[str], last: str, notes: dict[str, list[str]]) -> None:
    """Note the code cells the learner added (never run), each counted under the next exercise after
    it in the submission (a backwards scan; `last` for those after every exercise)."""
    added: dict[str, int] = {}
    after = last
    for n in range(len(sub.cells) - 1, -1, -1):
        c = sub.cells[n]
        x = exercise_tag(c, "check") or exercise_tag(c, "answer")
        if x in notes:
            after = x
        cid = c.get("id")
        if c.get("cell_type") != "code" or n in used or (isinstance(cid, str) and cid in sol_ids):
            continue
        if exercise_tag(c, "answer") in sub.by_tag:
            continue  # an extra copy of an answer cell: reported above
        added[after] = added.get(after, 0) + 1
    for x, k in added.items():
        notes[x].append(f"{k} code cell{'s' if k > 1 else ''} you added above this exercise "
                        f"{'were' if k > 1 else 'was'} not run (only answer cells are graded)")
