"""`labkit grades export`: graded runs -> the files learning platforms import.

* `canvas`: a Gradebook import CSV — columns Student, ID, SIS User ID, SIS Login ID, Section, then one
  column per lesson; the second row is "Points Possible". Canvas matches learners by ID, so it needs a
  roster. Learners without a result are left blank (Canvas ignores blank cells on import).
* `moodle`: a grade import CSV keyed by email address (or ID number), one column per lesson.
* `gradescope`: a folder with one Gradescope autograder `results.json` per learner
  (score, one test per exercise with name, score, max_score, status, output).
* `csv`: one row per learner, one column per exercise, the total: for spreadsheets.

Texts that a spreadsheet would run as a formula (=, +, -, @ first) are quoted with a leading '.
"""
from __future__ import annotations

import csv
import io
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..fsutil import atomic_write
from .results import Run, ResultsError, _read_bounded

FORMATS = ("canvas", "moodle", "gradescope", "csv")
MAX_ROSTER_BYTES = 4 << 20
ROSTER_ALIASES = {"student": "student", "learner": "student", "id": "id", "platform_id": "id", "canvas_id": "id",
                  "name": "name", "login": "login", "email": "login", "email address": "login",
                  "sis_login_id": "login", "section": "section", "id_number": "id_number", "sis_user_id": "id_number"}


def safe_cell(value: object) -> str:
    """A text cell no spreadsheet runs as a formula (numbers are left alone)."""
    s = " ".join(str(value).split())
    if s[:1] in ("=", "+", "-", "@", "\t", "\r") and not re.fullmatch(r"-?\d+(\.\d+)?", s):
        return "'" + s
    return s


@dataclass(frozen=True)
class RosterEntry:
    student: str        # the learner id as graded (the student folder name)
    id: str             # the platform's id (Canvas user id)
    name: str
    login: str          # email or login
    section: str = ""
    id_number: str = ""


def read_roster(path: str | os.PathLike) -> list[RosterEntry]:
    """A roster CSV with a header: student (as graded), id, name, login/email [, section, id_number]."""
    path = Path(path)
    try:
        text = _read_bounded(path, MAX_ROSTER_BYTES).decode("utf-8-sig")
    except FileNotFoundError:
        raise ResultsError(f"no roster file {path}") from None
    except UnicodeDecodeError:
        raise ResultsError(f"{path} is not UTF-8 text") from None
    rows = list(csv.reader(io.StringIO(text)))
    if not rows:
        raise ResultsError(f"{path} is empty")
    cols = [ROSTER_ALIASES.get(c.strip().lower()) for c in rows[0]]
    if "student" not in cols:
        raise ResultsError(f"{path}: the header needs a 'student' column (the learner id as graded), "
                           f"and id, name, login/email as the platform needs; got {rows[0]}")
    out, seen = [], set()
    for n, row in enumerate(rows[1:], start=2):
        if not any(c.strip() for c in row):
            continue
        d = {k: v.strip() for k, v in zip(cols, row) if k}
        if not d.get("student"):
            raise ResultsError(f"{path}: line {n} has no student")
        if d["student"].lower() in seen:
            raise ResultsError(f"{path}: line {n} lists {d['student']!r} a second time")
        seen.add(d["student"].lower())
        out.append(RosterEntry(d["student"], d.get("id", ""), d.get("name", ""), d.get("login", ""),
                               d.get("section", ""), d.get("id_number", "")))
    return out


@dataclass
class Matching:
    """Roster against graded learners, both ways."""

    matched: list[tuple[RosterEntry, dict[str, Run]]]   # roster entry -> {lesson: run} where graded
    no_submission: list[str]                            # on the roster, graded in no run
    not_on_roster: list[str]                            # graded, not on the roster

    def report(self) -> str:
        lines = []
        if self.no_submission:
            lines.append(f"{len(self.no_submission)} on the roster without a graded submission (left blank): "
                         + ", ".join(self.no_submission[:20]) + (" …" if len(self.no_submission) > 20 else ""))
        if self.not_on_roster:
            lines.append(f"{len(self.not_on_roster)} graded but not on the roster (not exported): "
                         + ", ".join(self.not_on_roster[:20]) + (" …" if len(self.not_on_roster) > 20 else ""))
        return "\n".join(lines)


def match(runs: list[Run], roster: list[RosterEntry]) -> Matching:
    by_name = {e.student.lower(): e for e in roster}
    graded = {l.student.lower(): l.student for r in runs for l in r.learners}
    matched = [(e, {r.lesson: r for r in runs if r.learner(e.student)}) for e in roster]
    return Matching([m for m in matched if m[1]], [e.student for e, found in matched if not found],
                    sorted(s for k, s in graded.items() if k not in by_name))


def _points(run: Run, student: str) -> str:
    learner = run.learner(student)
    return f"{learner.points:g}" if learner else ""


def _csv(rows: list[list[str]]) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\r\n").writerows(rows)
    return buf.getvalue()


def _column(run: Run) -> str:
    return f"ONNX Lab {run.lesson_name}"


def canvas_csv(runs: list[Run], roster: list[RosterEntry]) -> tuple[str, Matching]:
    missing = [e.student for e in roster if not e.id]
    if missing:
        raise ResultsError(f"Canvas matches learners by their Canvas ID: the roster has no id for {', '.join(missing[:10])}")
    m = match(runs, roster)
    rows = [["Student", "ID", "SIS User ID", "SIS Login ID", "Section"] + [_column(r) for r in runs],
            ["Points Possible", "", "", "", ""] + [f"{r.max_points:g}" for r in runs]]
    for entry in roster:
        rows.append([safe_cell(entry.name or entry.student), safe_cell(entry.id), safe_cell(entry.id_number),
                     safe_cell(entry.login), safe_cell(entry.section)] + [_points(r, entry.student) for r in runs])
    return _csv(rows), m


def moodle_csv(runs: list[Run], roster: list[RosterEntry], key: str = "email") -> tuple[str, Matching]:
    field = {"email": "login", "idnumber": "id_number"}[key]
    missing = [e.student for e in roster if not getattr(e, field)]
    if missing:
        raise ResultsError(f"Moodle matches learners by {'email address' if key == 'email' else 'ID number'}: "
                           f"the roster has none for {', '.join(missing[:10])}")
    m = match(runs, roster)
    head = ["Email address" if key == "email" else "ID number"] + [_column(r) for r in runs]
    rows = [head] + [[safe_cell(getattr(e, field))] + [_points(r, e.student) for r in runs] for e in roster
                     if any(r.learner(e.student) for r in runs)]
    return _csv(rows), m


def wide_csv(runs: list[Run]) -> str:
    """One row per learner, one column per exercise (lesson-prefixed ids), each lesson's total, the total."""
    students = sorted({l.student for r in runs for l in r.learners}, key=str.lower)
    head = ["student"]
    for r in runs:
        head += [i for i, _, _ in r.exercises] + [f"{r.lesson} total"]
    head.append("total")
    rows = [head, ["max points"] + [f"{m:g}" for r in runs for m in [*(m for _, _, m in r.exercises), r.max_points]]
            + [f"{sum(r.max_points for r in runs):g}"]]
    for s in students:
        row, total = [safe_cell(s)], 0.0
        for r in runs:
            learner = r.learner(s)
            for i, _, _ in r.exercises:
                ex = learner.get(i) if learner else None
                row.append(f"{ex.points:g}" if ex else "")
            row.append(f"{learner.points:g}" if learner else "")
            total += learner.points if learner else 0.0
        rows.append(row + [f"{round(total, 2):g}"])
    return _csv(rows)


def gradescope_results(run: Run) -> dict[str, dict]:
    """{student: Gradescope results.json} for one lesson."""
    out = {}
    for learner in run.learners:
        tests = []
        for ex in learner.exercises:
            output = f"{ex.status}: {ex.message}"
            if ex.overridden:
                output += f"\nOverride by the instructor ({ex.graded_points:g} -> {ex.points:g} points): {ex.override_reason}"
            tests.append({"name": f"{ex.exercise} · {ex.title}", "score": ex.points, "max_score": ex.max_points,
                          "status": "passed" if ex.points >= ex.max_points else "failed", "output": output,
                          "visibility": "visible"})
        out[learner.student] = {"score": learner.points, "output": f"{run.lesson_name}: {learner.points:g} / "
                                f"{learner.max_points:g} points", "visibility": "visible", "tests": tests}
    return out


def export(runs: list[Run], to: str, out: Path, roster: list[RosterEntry] | None = None,
           moodle_key: str = "email") -> str:
    """Write the export; returns a one-paragraph summary (with the roster report, if any)."""
    if to not in FORMATS:
        raise ResultsError(f"unknown format {to!r}: choose one of {', '.join(FORMATS)}")
    if to in ("canvas", "moodle") and roster is None:
        raise ResultsError(f"--to {to} needs --roster FILE (CSV: student as graded, id, name, login/email)")
    note = ""
    if to == "canvas":
        text, m = canvas_csv(runs, roster)
        atomic_write(out, text.encode("utf-8"))
        note = m.report()
        what = f"{len(m.matched)} learners, {len(runs)} lesson column(s)"
    elif to == "moodle":
        text, m = moodle_csv(runs, roster, moodle_key)
        atomic_write(out, text.encode("utf-8"))
        note = m.report()
        what = f"{len(m.matched)} learners, {len(runs)} lesson column(s)"
    elif to == "csv":
        atomic_write(out, wide_csv(runs).encode("utf-8"))
        what = f"{len({l.student for r in runs for l in r.learners})} learners"
    else:
        if len(runs) != 1:
            raise ResultsError("Gradescope results are per assignment: export one lesson's folder at a time")
        results = gradescope_results(runs[0])
        for student, res in results.items():
            atomic_write(out / student / "results.json", json.dumps(res, indent=1))
        what = f"{len(results)} results.json files"
    return f"Wrote {out} ({what})." + (f"\n{note}" if note else "")
