"""Stage 8: what the instructor reads — grades.csv, students/<name>/{results.json,feedback.html},
the histogram and the summary table."""
from __future__ import annotations

import csv
import datetime as _dt
import io
import json
import os
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any, Iterable

from ..checks.result import LABELS
from ..fsutil import atomic_write
from ..text import spreadsheet_safe
from .lesson import Lesson
from .results import ExerciseResult, Learner, ResultsError, load_run, read_record, write_record
from .submissions import Submission

#: grades.csv: the learner's stable id, then their display name (Unicode, as the identity gives it)
COLUMNS = ["student", "name", "lesson", "exercise", "points", "max_points", "status", "message"]
MANIFEST = "run.json"


def _where(path: Path | str, out: Path) -> dict:
    """A submission's path, absolute and relative to the output folder (feedback finds it from anywhere)."""
    absolute = os.path.abspath(path)
    try:
        rel = os.path.relpath(absolute, os.path.abspath(out))
    except ValueError:
        rel = absolute
    return {"submission": absolute, "submission_relative_to_out": rel}


def record(lesson: Lesson, s: Submission, results: list[ExerciseResult], protection: str, key: str,
           seconds: float | None = None, out: Path | None = None, **details: Any) -> Learner:
    """One learner's record as the grader writes it (`details`: other `Learner` fields, such as `cells`)."""
    ident = s.identity.to_dict() if getattr(s, "identity", None) is not None else {}
    where = _where(s.path, out) if out is not None else {"submission": os.path.abspath(s.path)}
    return Learner(s.student, lesson.number, lesson.name, results, name=getattr(s, "name", s.student),
                   identity=ident, **where, other_files=list(getattr(s, "other_files", None) or []),
                   lesson_version=getattr(s, "version", ""), submission_sha256=s.sha, cache_key=key,
                   graded_at=_dt.datetime.now().isoformat(timespec="seconds"), protection=protection,
                   seconds=seconds, **details)


def student_dir(out: Path, student: str) -> Path:
    return out / "students" / student


def write_student(out: Path, learner: Learner) -> None:
    folder = student_dir(out, learner.student)
    write_record(folder / "results.json", learner)
    atomic_write(folder / "feedback.html", feedback_html(learner))


def previous_records(out: Path) -> dict[str, Learner]:
    """The records an earlier run left in `out/students/` (links, unreadable files and records of
    another schema version skipped: their learners are graded whole)."""
    found: dict[str, Learner] = {}
    folder = out / "students"
    for sub in sorted(folder.iterdir()) if folder.is_dir() else []:
        path = sub / "results.json"
        if sub.is_symlink() or not path.exists():
            continue
        try:
            learner = read_record(path)
        except (OSError, ResultsError):
            continue
        if learner.student == sub.name:
            found[sub.name] = learner
    return found


def keep_other_exercises(rec: Learner, previous: Learner | None, regraded: tuple[str, ...]) -> Learner:
    """`rec` with only the `regraded` exercises taken from this run; the others as `previous` had them."""
    if not regraded or previous is None:
        return rec
    merged = [r if r.exercise in regraded else previous.get(r.exercise) or r for r in rec.exercises]
    return replace(rec, exercises=merged, regraded_exercises=sorted(regraded))


def write_grades(out: Path):
    """The one writer of grades.csv: from the records on disk (this run's learners, `run.json`), the
    instructor's overrides applied, at the end of a run and after an interrupted one. Returns the
    `Run` it wrote; raises ResultsError when the folder holds no readable run."""
    run = load_run(out)
    write_csv(out / "grades.csv", grade_rows(run.learners))
    return run


def write_csv(path: Path, rows: list[dict]) -> None:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(COLUMNS)
    for r in rows:
        w.writerow([spreadsheet_safe(r["student"]), spreadsheet_safe(r["name"]), r["lesson"], r["exercise"], f"{r['points']:g}", f"{r['max_points']:g}",
                    r["status"], spreadsheet_safe(r["message"])])
    atomic_write(path, buf.getvalue())


def write_manifest(out: Path, lesson: Lesson, subs: list[Submission], older: list[Submission], notes: list[str],
                   stale: list[str], batch: dict | None = None, problems: Iterable[Submission] = ()) -> None:
    """`DIR/run.json`: exactly who this grading of the folder is about. Exports, the report and feedback
    read these learners and no others (folders of earlier runs' learners are `stale`; `problems`, files
    that are not notebooks, are listed apart). `batch`: the test-bundle hash and shard it was graded
    with (what `labkit grades merge` checks)."""
    import datetime as dt

    atomic_write(out / MANIFEST, json.dumps({
        "lesson": lesson.number, "lesson_name": lesson.name,
        "graded_at": dt.datetime.now().isoformat(timespec="seconds"),
        "learners": [{"student": s.student, "name": s.name, "identity": s.identity.to_dict() if s.identity else None,
                      **_where(s.path, out)} for s in subs],
        "set_aside": [{"student": s.student, "name": s.name, **_where(s.path, out),
                       "why": "an older file of a learner whose latest file is graded"} for s in older],
        "problem_files": [{"name": s.name, **_where(s.path, out), "why": s.error or "not a notebook"} for s in problems],
        "notes": notes, "stale": stale, **({"batch": batch} if batch else {})}, indent=1, ensure_ascii=False))


def grade_rows(learners: Iterable[Learner]) -> list[dict]:
    """grades.csv rows of these learners (an override changes the points and is said in the message)."""
    rows = []
    for learner in learners:
        for ex in learner.exercises:
            msg = ex.message + (f" [override: {ex.graded_points:g} -> {ex.points:g} points: {ex.override_reason}]"
                                if ex.overridden else "")
            if ex.bonus:  # outside the lesson's maximum: the column sums to what the core asks
                msg = f"bonus (worth {ex.max_points:g} points on top of the maximum): {msg}"
            rows.append({"student": learner.student, "name": learner.name, "lesson": learner.lesson, "exercise": ex.exercise,
                         "points": ex.points, "max_points": 0.0 if ex.bonus else ex.max_points,
                         "status": ex.status, "message": msg})
    return rows


def finish_run(out: Path, lesson: Lesson, protection: str) -> str:
    """Rewrite grades.csv from the run as it stands (this run's learners, overrides applied) and
    return the summary table of the same data."""
    try:
        run = write_grades(out)
    except ResultsError as e:
        return f"(no summary: {e})"
    text = summary_table(lesson, run.learners, protection)
    n = sum(e.overridden for l in run.learners for e in l.exercises)
    if n:
        text += f"\n({n} override(s) from {out / 'overrides.csv'} applied.)"
    if run.stale:
        text += f"\n({len(run.stale)} stale learner folder(s) ignored: {', '.join(run.stale[:10])})"
    if run.problem_files:
        text += (f"\n{len(run.problem_files)} problem file(s), not notebooks (not graded, not counted as learners): "
                 + "; ".join(f"{Path(p['submission']).name} ({p['why']})" for p in run.problem_files[:10]))
    return text


def feedback_html(learner: Learner) -> str:
    """The learner's feedback page (templates/feedback.html.j2): one panel per exercise, as in the
    notebook, with any override said. Escaped by default; the template gets plain data only."""
    from .templating import render

    return render("feedback.html.j2", **feedback_data(learner))


def feedback_data(learner: Learner) -> dict:
    """What the feedback page shows, as plain data (names, messages, numbers as text)."""
    from ..checks.display import COLORS, once_per_panel

    panels = []
    for r in learner.exercises:
        failed = [t for t in r.tests if not t.passed]   # an error three tests ran into is said once
        said = dict(zip(map(id, failed), once_per_panel(r.message, [t.message for t in failed])))
        passed = r.status == "passed"
        panels.append({
            "status": r.status, "label": LABELS.get(r.status, r.status), "color": COLORS.get(r.status, "#6e7781"),
            "ok_color": COLORS["passed"], "bad_color": COLORS["failed"], "exercise": r.exercise, "title": r.title,
            "points": f"{r.points:g}", "max_points": f"{r.max_points:g}", "bonus": r.bonus,
            "message": "" if (passed and r.tests) else r.message,
            "override": {"graded": f"{r.graded_points:g}", "reason": r.override_reason} if r.overridden else None,
            "tests": [{"name": t.name, "passed": t.passed, "message": said.get(id(t), t.message)} for t in r.tests],
            "hint": "" if passed else r.hint, "notes": r.notes if passed else []})
    return {"who": learner.name or learner.student, "lesson": learner.lesson, "lesson_name": learner.lesson_name,
            "points": f"{learner.points:g}", "max_points": f"{learner.max_points:g}",
            "file": Path(learner.submission).name, "graded_at": learner.graded_at, "panels": panels}


def histogram(path: Path, totals: list[float], most: float, lesson: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.2), dpi=100)
    bins = min(20, max(5, int(most) * 2)) if most else 10
    top = max([most, *totals]) or 1   # bonus points can take a total past the maximum
    ax.hist(totals, bins=bins, range=(0, top), color="#0969da", edgecolor="white")
    ax.set_xlabel(f"points (out of {most:g})")
    ax.set_ylabel("students")
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.set_title(f"Lesson {lesson}: scores of {len(totals)} learners")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    atomic_write(path, buf.getvalue())


def summary_table(lesson: Lesson, records: list[Learner], protection: str) -> str:
    lines = [f"Lesson {lesson.name}: {len(records)} learners graded, one file each ({protection})"]
    if not records:
        return "\n".join(lines)
    head = f"{'exercise':<22} {'max':>5} {'mean':>6} " + " ".join(f"{LABELS[s][:9]:>9}" for s in LABELS)
    lines += ["", head, "-" * len(head)]
    for ex in lesson.exercises:
        rs = [r for rec in records for r in rec.exercises if r.exercise == ex.id]
        mean = sum(r.points for r in rs) / len(rs) if rs else 0.0
        counts = " ".join(f"{sum(r.status == s for r in rs):>9}" for s in LABELS)
        worth = f"+{ex.points:g}" if ex.bonus else f"{ex.points:g}"   # a bonus counts on top of the maximum
        lines.append(f"{ex.id:<22} {worth:>5} {mean:>6.2f} {counts}")
    totals = sorted(rec.points for rec in records)
    most = records[0].max_points
    width = max(7, *(len(r.student) for r in records))  # ids are ASCII: one column a character
    mid = totals[len(totals) // 2] if len(totals) % 2 else (totals[len(totals) // 2 - 1] + totals[len(totals) // 2]) / 2
    lines += ["", f"total out of {most:g}: mean {sum(totals) / len(totals):.2f}, median {mid:g}, "
                  f"min {totals[0]:g}, max {totals[-1]:g}", "",
              f"{'name':<28} {'student':<{width}} {'points':>8}  statuses"]
    for rec in sorted(records, key=lambda r: (r.name.casefold(), r.student)):
        st = ", ".join(f"{k}×{v}" for k, v in sorted(Counter(r.status for r in rec.exercises).items()))
        lines.append(f"{_pad(rec.name, 28)} {rec.student:<{width}} {rec.points:>4g}/{rec.max_points:<3g}  {st}")
    return "\n".join(lines)


def _pad(text: str, width: int) -> str:
    """`text` cut and padded to `width` terminal columns (CJK characters take two)."""
    import unicodedata

    out, used = "", 0
    for ch in text:
        w = 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 0 if unicodedata.combining(ch) else 1
        if used + w > width:
            break
        out, used = out + ch, used + w
    return out + " " * (width - used)
