"""Stage 6: merge the judge's verdicts with what happened to the cells into one result per exercise."""
from __future__ import annotations

from dataclasses import replace

from ..checks.result import Result
from .lesson import ExerciseInfo
from .rebuild import Rebuilt, RunCell
from .results import ExerciseResult
from ..text import shorten


def unjudged(ex: ExerciseInfo, status: str, message: str) -> ExerciseResult:
    """A result with no verdict (a file that could not be graded, a grader problem, no answer)."""
    return ExerciseResult(ex.id, ex.title, status, 0.0, float(ex.points), message, [], ex.hint)


def judged(ex: ExerciseInfo, verdict: Result | None) -> ExerciseResult:
    """The one place a judge's `Result` becomes the grader's record; the lesson decides the maximum,
    and a timeout scores nothing."""
    if verdict is None:
        return unjudged(ex, "missing", "no verdict")
    timeout = verdict.status == "timeout"
    return ExerciseResult(ex.id, verdict.title or ex.title, verdict.status, 0.0 if timeout else float(verdict.points),
                          float(ex.points), verdict.message, [] if timeout else list(verdict.tests),
                          verdict.hint or ex.hint)


def _cell_label(cell: RunCell) -> str:
    if cell.role == "answer":
        return f"your answer cell for {cell.exercise}"
    if cell.role == "check":
        return f"the check cell of {cell.exercise}"
    return "an instructor cell"


def compose(exercises: list[ExerciseInfo], rebuilt: Rebuilt, events: list[dict], verdicts: dict[str, Result],
            cell_timeout: float, notebook_timeout: float) -> list[ExerciseResult]:
    """Final per-exercise results: the judge's verdicts, refined by what happened to the cells."""
    cells = rebuilt.cells
    results = []
    for ex in exercises:
        x = ex.id
        v = judged(ex, verdicts.get(x))
        check_pos = next((p for p, c in enumerate(cells) if c.role == "check" and c.exercise == x), None)
        if x in rebuilt.missing:
            v = replace(v, status="missing", points=0.0, message=rebuilt.missing[x], tests=[])
        elif v.status == "missing":
            mine = [e for e in events if cells[e["cell"]].exercise == x and e["what"] != "ok"]
            before = [e for e in events if check_pos is not None and e["cell"] < check_pos
                      and e["what"] in ("died", "timeout")]
            ev = mine[0] if mine else (before[-1] if before else None)
            ran = any(e["cell"] == check_pos and e["what"] == "ok" for e in events)
            if ev is None and ran:
                v = replace(v, message="the check cell ran but recorded no answer (was check() redefined or "
                                       "replaced in an answer cell?)")
            elif ev is None:
                pass
            elif ev["what"] == "skipped":
                v = replace(v, status="timeout" if "time" in ev.get("why", "") else "missing",
                            message=f"not run: {ev.get('why', '')} ({notebook_timeout:g} s)"
                            if "time" in ev.get("why", "") else f"not run: {ev.get('why', '')}")
            elif ev["what"] == "timeout":
                where = _cell_label(cells[ev["cell"]])
                limit = "the whole-notebook limit" if ev.get("why") else f"the {cell_timeout:g} s limit per cell"
                if ev in mine:
                    v = replace(v, status="timeout",
                                message=f"{where} ran past {limit} and was stopped (an endless loop?)")
                else:
                    v = replace(v, message=f"the check cell did not record an answer: {where} ran past {limit} earlier")
            elif ev["what"] == "died":
                where = _cell_label(cells[ev["cell"]])
                msg = (f"the kernel died while running {where} (os._exit, a crash, or a memory/process limit); "
                       "the rest of the notebook was still graded")
                v = replace(v, status="error" if ev in mine else "missing", message=msg)
            elif ev["what"] == "error":
                where = _cell_label(cells[ev["cell"]])
                v = replace(v, message=f"the check cell did not record an answer: {where} raised "
                                       f"{shorten(ev.get('ename', ''), 60)}: {shorten(ev.get('evalue', ''), 200)}")
        notes = list(rebuilt.notes.get(x, []))
        if notes:
            v = replace(v, notes=notes, message=v.message.rstrip(". ") + ". Note: " + "; ".join(notes) + ".")
        results.append(v)
    return results
