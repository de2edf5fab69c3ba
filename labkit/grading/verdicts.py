"""Stage 6: merge the judge's verdicts with what happened to the cells into one result per exercise."""
from __future__ import annotations

from ..checks.result import STATUSES
from .lesson import ExerciseInfo
from .rebuild import Rebuilt, RunCell
from ..text import shorten


def row(ex: ExerciseInfo, status: str, message: str) -> dict:
    """A result with no verdict (a file that could not be graded, a grader problem)."""
    return {"exercise": ex.id, "title": ex.title, "status": status, "points": 0.0, "max_points": float(ex.points),
            "message": message, "tests": [], "hint": ex.hint, "notes": []}


def _cell_label(cell: RunCell) -> str:
    if cell.role == "answer":
        return f"your answer cell for {cell.exercise}"
    if cell.role == "check":
        return f"the check cell of {cell.exercise}"
    return "an instructor cell"


def compose(exercises: list[ExerciseInfo], rebuilt: Rebuilt, events: list[dict], verdicts: dict[str, dict],
            cell_timeout: float, notebook_timeout: float) -> list[dict]:
    """Final per-exercise results (Result dicts): verdicts, refined by what happened to the cells."""
    cells = rebuilt.cells
    results = []
    for ex in exercises:
        x = ex.id
        v = {"exercise": x, "title": ex.title, "status": "missing", "points": 0.0, "max_points": ex.points,
             "message": "no verdict", "tests": [], "hint": ex.hint}
        v.update(verdicts.get(x) or {})
        if v["status"] == "timeout" or v.get("status") not in STATUSES:
            v.update(points=0.0, tests=[], status=v["status"] if v["status"] in STATUSES else "error")
        check_pos = next((p for p, c in enumerate(cells) if c.role == "check" and c.exercise == x), None)
        if x in rebuilt.missing:
            v.update(status="missing", points=0.0, message=rebuilt.missing[x], tests=[])
        elif v["status"] == "missing":
            mine = [e for e in events if cells[e["cell"]].exercise == x and e["what"] != "ok"]
            before = [e for e in events if check_pos is not None and e["cell"] < check_pos
                      and e["what"] in ("died", "timeout")]
            ev = mine[0] if mine else (before[-1] if before else None)
            ran = any(e["cell"] == check_pos and e["what"] == "ok" for e in events)
            if ev is None and ran:
                v.update(message="the check cell ran but recorded no answer (was check() redefined or replaced "
                                 "in an answer cell?)")
            elif ev is None:
                pass
            elif ev["what"] == "skipped":
                v.update(status="timeout" if "time" in ev.get("why", "") else "missing",
                         message=f"not run: {ev.get('why', '')} ({notebook_timeout:g} s)"
                         if "time" in ev.get("why", "") else f"not run: {ev.get('why', '')}")
            elif ev["what"] == "timeout":
                where = _cell_label(cells[ev["cell"]])
                limit = "the whole-notebook limit" if ev.get("why") else f"the {cell_timeout:g} s limit per cell"
                if ev in mine:
                    v.update(status="timeout", message=f"{where} ran past {limit} and was stopped (an endless loop?)")
                else:
                    v.update(message=f"the check cell did not record an answer: {where} ran past {limit} earlier")
            elif ev["what"] == "died":
                where = _cell_label(cells[ev["cell"]])
                msg = (f"the kernel died while running {where} (os._exit, a crash, or a memory/process limit); "
                       "the rest of the notebook was still graded")
                v.update(status="error" if ev in mine else "missing", message=msg)
            elif ev["what"] == "error":
                where = _cell_label(cells[ev["cell"]])
                v.update(message=f"the check cell did not record an answer: {where} raised "
                                 f"{shorten(ev.get('ename', ''), 60)}: {shorten(ev.get('evalue', ''), 200)}")
        notes = rebuilt.notes.get(x, [])
        v["notes"] = notes
        if notes:
            v["message"] = v["message"].rstrip(". ") + ". Note: " + "; ".join(notes) + "."
        v["points"] = float(v.get("points") or 0.0)
        v["max_points"] = float(ex.points)
        results.append(v)
    return results
