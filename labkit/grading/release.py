"""`labkit grades feedback DIR --out FOLDER`: each learner gets back their own notebook, with a
feedback cell under each exercise (points, message, hint, any override), and their feedback page.

Only that learner's own results and notebook go into their folder: never another learner's data,
the reference answers or the hidden test inputs (judges' messages show what one check expected).
"""
from __future__ import annotations

import html
import json
import uuid
from pathlib import Path

from ..cells import exercise_tag
from ..checks.result import LABELS
from ..fsutil import atomic_write, read_bounded
from .results import ExerciseResult, Learner, Run
from .submissions import MAX_CELLS, MAX_SUBMISSION_BYTES

FEEDBACK_TAG = "labkit-feedback"


def _md(text: str) -> str:
    """Learner- or judge-written text made safe for a markdown cell (no HTML, no markdown tricks)."""
    from ..text import strip_ansi

    s = html.escape(" ".join(strip_ansi(str(text)).split()), quote=False)
    for ch in "\\`*_[]#|<>":
        s = s.replace(ch, "\\" + ch)
    return s


def feedback_markdown(ex: ExerciseResult) -> str:
    label = LABELS.get(ex.status, ex.status)
    lines = [f"> **Feedback · `{ex.exercise}` — {label}, {ex.points:g} / {ex.max_points:g} "
             f"{'bonus points' if ex.bonus else 'points'}**", ">",
             f"> {_md(ex.message)}"]
    failing = [t for t in ex.tests if not t.passed]
    for t in failing[:6]:
        lines.append(f"> - ✘ **{_md(t.name)}**: {_md(t.message)}")
    if ex.hint and ex.points < ex.max_points:
        lines += [">", f"> Hint: {_md(ex.hint)}"]
    if ex.overridden:
        lines += [">", f"> Changed by your instructor from {ex.graded_points:g} to {ex.points:g} points: "
                       f"{_md(ex.override_reason)}"]
    return "\n".join(lines)


def _cell(source: str) -> dict:
    return {"cell_type": "markdown", "id": "fb-" + uuid.uuid4().hex[:8], "metadata": {"tags": [FEEDBACK_TAG],
            "editable": False, "deletable": True}, "source": source}


def annotate(nb: dict, run: Run, learner: Learner) -> dict:
    """The learner's notebook with a summary at the top and a feedback cell under each exercise."""
    cells = [c for c in nb.get("cells", []) if isinstance(c, dict)][:MAX_CELLS]
    by_id = {e.exercise: e for e in learner.exercises}
    out, placed = [], set()
    for c in cells:
        if FEEDBACK_TAG in (c.get("metadata", {}).get("tags") or []):
            continue  # feedback of an earlier release
        out.append(c)
        ex_id = exercise_tag(c, "check")
        if ex_id in by_id and ex_id not in placed:
            out.append(_cell(feedback_markdown(by_id[ex_id])))
            placed.add(ex_id)
    for ex in learner.exercises:  # a check cell the learner deleted: under the answer cell, else at the end
        if ex.exercise in placed:
            continue
        at = next((k for k, c in enumerate(out) if exercise_tag(c, "answer") == ex.exercise), None)
        cell = _cell(feedback_markdown(ex))
        out.insert(at + 1, cell) if at is not None else out.append(cell)
        placed.add(ex.exercise)
    summary = (f"## Feedback · {_md(run.lesson_name)}\n\n**{learner.points:g} / {learner.max_points:g} points** "
               f"for {_md(learner.name)}. Under each exercise a feedback cell says what was checked and what "
               f"came back. Only your answer cells were run, inside the instructor's copy of the lesson.")
    nb = dict(nb)
    nb["cells"] = [_cell(summary)] + out
    return nb


def submission_path(run: Run, learner: Learner) -> Path:
    """Where the learner's graded file is now: its recorded absolute path, else the same path relative to
    the run folder (the class folder moved along with it), else relative to the working directory."""
    recorded = Path(learner.submission)
    candidates = [recorded] if recorded.is_absolute() else []
    if learner.submission_relative_to_out:
        candidates.append(run.folder / learner.submission_relative_to_out)
    if not recorded.is_absolute():
        candidates += [run.folder / recorded, recorded]
    return next((c for c in candidates if c.is_file() and not c.is_symlink()), candidates[0] if candidates else recorded)


def release(run: Run, dest: Path) -> tuple[int, list[str]]:
    """Write `dest/<student>/` for every learner: the annotated notebook and feedback.html.

    Returns (folders written, notes about learners whose notebook could not be read back)."""
    from .reports import feedback_html

    notes, written = [], 0
    for stale in run.stale:
        notes.append(f"{stale}: not in the latest grading of {run.folder} (stale folder): no feedback written")
    for learner in run.learners:
        folder = dest / learner.student
        atomic_write(folder / "feedback.html", feedback_html(learner))
        written += 1
        src = submission_path(run, learner)
        try:
            nb = json.loads(read_bounded(src, MAX_SUBMISSION_BYTES, "notebook"))
            if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
                raise ValueError("not a notebook")
        except (OSError, ValueError, RecursionError) as e:
            notes.append(f"{learner.student}: notebook not returned ({src.name}: {e}); feedback.html only")
            continue
        atomic_write(folder / f"{run.lesson_name}.ipynb", json.dumps(annotate(nb, run, learner), indent=1))
    return written, notes
