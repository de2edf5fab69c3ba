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
from dataclasses import dataclass, field
from pathlib import Path

from ..checks.registry import is_bonus
from ..fsutil import atomic_write
from ..text import spreadsheet_safe
from .results import Learner, ResultsError, Run, read_checked

FORMATS = ("canvas", "moodle", "gradescope", "csv")
MAX_ROSTER_BYTES = 4 << 20
PLAIN_ALIASES = {"student": "student", "learner": "student", "name": "name", "full name": "name",
                 "id": "id", "platform_id": "id", "canvas_id": "id", "canvas id": "id", "user id": "id",
                 "login": "login", "username": "login", "sis_login_id": "login", "sis login id": "login",
                 "email": "email", "email address": "email", "e-mail": "email",
                 "section": "section", "id_number": "id_number", "id number": "id_number", "sis_user_id": "id_number",
                 "sis user id": "id_number", "sid": "id_number", "student id": "id_number",
                 "participant": "participant", "identifier": "participant"}


@dataclass(frozen=True)
class RosterEntry:
    """One learner of the platform's roster (whatever the file calls its columns)."""

    name: str = ""
    id: str = ""            # Canvas user id ("ID")
    id_number: str = ""     # SIS User ID / Moodle ID number / a student number (Gradescope's sid)
    login: str = ""         # SIS Login ID / Moodle username
    email: str = ""
    section: str = ""
    participant: str = ""   # Moodle participant id (grading worksheet "Identifier: Participant 123")
    student: str = ""       # the learner id as graded (a plain roster may give it)
    line: int = 0

    @property
    def label(self) -> str:
        return self.name or self.email or self.login or self.id or self.student or f"line {self.line}"


@dataclass
class Roster:
    kind: str                     # canvas | moodle | plain
    entries: list[RosterEntry]
    assignments: dict[str, str] = field(default_factory=dict)   # Canvas: column title -> assignment id


def _fold(text: str) -> str:
    from .identity import fold

    return fold(text)


def _tokens(name: str) -> frozenset[str]:
    return frozenset(t for t in re.split(r"[\s,]+", _fold(name)) if t)


def _same_name(a: str, b: str) -> bool:
    """`Smith, Anna` = `Anna Smith`; `王小明` = `小明 王` (written without a space, either order)."""
    ta = [t for t in re.split(r"[\s,]+", _fold(a)) if t]
    tb = [t for t in re.split(r"[\s,]+", _fold(b)) if t]
    if not ta or not tb:
        return False
    return set(ta) == set(tb) or bool({"".join(ta), "".join(reversed(ta))} & {"".join(tb), "".join(reversed(tb))})


def read_roster(path: str | os.PathLike) -> Roster:
    """A roster as the platform exports it, or a plain CSV.

    * Canvas gradebook export: `Student, ID, SIS User ID, SIS Login ID, [Integration ID,] Section, <assignment
      (id)>…`, a "Points Possible" row (and perhaps "Student, Test") skipped;
    * Moodle: a participants or grades export (`First name, Last name, ID number, Email address` …) or the
      assignment's grading worksheet (`Identifier` = "Participant 123", `Full name`, `Email address` …);
    * plain: any of student (as graded), name, id, email, login, id_number, section."""
    path = Path(path)
    table = _roster_table(path)
    low = table.low
    if "student" in low and "id" in low and ("sis login id" in low or "sis user id" in low):
        kind, entries, assignments = "canvas", *_canvas_roster(table)
    elif "identifier" in low and "full name" in low:
        kind, entries, assignments = "moodle", _moodle_worksheet_roster(table), {}
    elif "first name" in low and "last name" in low:
        kind, entries, assignments = "moodle", _moodle_participants_roster(table), {}
    elif any(PLAIN_ALIASES.get(h) for h in low):
        kind, entries, assignments = "plain", _plain_roster(table), {}
    else:
        raise ResultsError(f"{path}: not a roster this tool knows: expected a Canvas gradebook export, a Moodle "
                           f"participants/grades export or worksheet, or a CSV with some of the columns student, "
                           f"name, id, email, login, id_number; got {table.head[:8]}")
    _check_unique(path, entries)
    return Roster(kind, entries, assignments)


@dataclass(frozen=True)
class _Table:
    """A roster file's rows: its header as written and lower-cased (to find columns), and the rest."""

    head: list[str]
    low: list[str]
    rows: list[list[str]]

    def col(self, *names: str) -> int | None:
        """The position of the first of `names` among the columns (None when absent)."""
        return next((self.low.index(n) for n in names if n in self.low), None)

    def body(self) -> list[tuple[int, list[str]]]:
        """The rows after the header with their line numbers, blank rows left out."""
        return [(n, row) for n, row in enumerate(self.rows[1:], start=2) if any(x.strip() for x in row)]


def _get(row: list[str], i: int | None) -> str:
    """Cell `i` of `row`, stripped ('' when the column is absent or the row is short)."""
    return row[i].strip() if i is not None and i < len(row) else ""


def _roster_table(path: Path) -> _Table:
    """Read a roster file as CSV (UTF-8, a BOM allowed, bounded size); a clear error when it cannot be."""
    try:
        text = read_checked(path, MAX_ROSTER_BYTES).decode("utf-8-sig")
    except FileNotFoundError:
        raise ResultsError(f"no roster file {path}") from None
    except UnicodeDecodeError:
        raise ResultsError(f"{path} is not UTF-8 text (save the roster as CSV UTF-8)") from None
    rows = [r for r in csv.reader(io.StringIO(text))]
    if not rows or not any(c.strip() for c in rows[0]):
        raise ResultsError(f"{path} is empty")
    head = [c.strip() for c in rows[0]]
    return _Table(head, [c.lower() for c in head], rows)


def _canvas_roster(table: _Table) -> tuple[list[RosterEntry], dict[str, str]]:
    """A Canvas gradebook export: its learners (header rows and the test student skipped) and its
    assignment columns {title: assignment id}."""
    c = {k: table.col(k) for k in ("student", "id", "sis user id", "sis login id", "section")}
    assignments: dict[str, str] = {}
    for title in table.head:
        m = re.fullmatch(r"(.+?) \((\d+)\)", title)
        if m:
            assignments[title] = m.group(2)
    entries: list[RosterEntry] = []
    for n, row in table.body():
        first = _get(row, c["student"])
        joined = " ".join(row).lower()
        if first in ("Points Possible", "Student, Test") or (not first and not _get(row, c["id"])) \
                or "points possible" in joined or "manual posting" in joined:  # Canvas's header rows, its test student
            continue
        entries.append(RosterEntry(first, _get(row, c["id"]), _get(row, c["sis user id"]), _get(row, c["sis login id"]),
                                   "", _get(row, c["section"]), line=n))
    return entries, assignments


def _moodle_worksheet_roster(table: _Table) -> list[RosterEntry]:
    """A Moodle assignment's grading worksheet (`Identifier` = "Participant 123", `Full name` …)."""
    c = {k: table.col(k) for k in ("identifier", "full name", "email address", "id number", "username")}
    return [RosterEntry(_get(row, c["full name"]), id_number=_get(row, c["id number"]), login=_get(row, c["username"]),
                        email=_get(row, c["email address"]), participant=re.sub(r"\D", "", _get(row, c["identifier"])),
                        line=n) for n, row in table.body()]


def _moodle_participants_roster(table: _Table) -> list[RosterEntry]:
    """A Moodle participants or grades export (`First name, Last name, ID number, Email address` …)."""
    c = {k: table.col(k) for k in ("first name", "last name", "email address", "id number", "username")}
    return [RosterEntry(f"{_get(row, c['first name'])} {_get(row, c['last name'])}".strip(),
                        id_number=_get(row, c["id number"]), login=_get(row, c["username"]),
                        email=_get(row, c["email address"]), line=n) for n, row in table.body()]


def _plain_roster(table: _Table) -> list[RosterEntry]:
    """A plain CSV: the columns PLAIN_ALIASES knows (a login holding an address is the email)."""
    cols = [PLAIN_ALIASES.get(h) for h in table.low]
    entries: list[RosterEntry] = []
    for n, row in table.body():
        d = {k: v.strip() for k, v in zip(cols, row) if k}
        if "@" in d.get("login", "") and not d.get("email"):
            d["email"] = d.pop("login")
        d["participant"] = re.sub(r"\D", "", d.get("participant", ""))
        entries.append(RosterEntry(**d, line=n))
    return entries


def _check_unique(path: Path, entries: list[RosterEntry]) -> None:
    """Refuse a roster where two lines share an identifier (matching learners to it would be ambiguous)."""
    seen: dict[tuple[str, str], int] = {}
    for e in entries:
        for what in ("id", "email", "login", "id_number", "participant", "student"):
            v = _fold(getattr(e, what))
            if v:
                if (what, v) in seen:
                    raise ResultsError(f"{path}: lines {seen[(what, v)]} and {e.line} have the same {what} {v!r}")
                seen[(what, v)] = e.line


def _candidates(learner: Learner, roster: Roster) -> list[RosterEntry]:
    """The roster entries one graded learner can be matched to (by platform id, email, login, name)."""
    ident = learner.identity or {}
    src, pid, email = ident.get("source", "file"), str(ident.get("platform_id", "")), _fold(ident.get("email", ""))
    E = roster.entries
    by_student = [e for e in E if e.student and _fold(e.student) in (_fold(learner.student), _fold(learner.name))]
    if by_student:
        return by_student
    if src == "metadata":  # a notebook's claim is never matched to someone: give a `student` column instead
        return []
    if src == "canvas":
        return [e for e in E if e.id == pid]
    if src == "moodle":
        if any(e.participant for e in E):
            return [e for e in E if e.participant == pid]
        return [e for e in E if e.name and _same_name(e.name, learner.name)]
    if src == "gradescope":
        hits = [e for e in E if pid and pid in (e.id_number, e.login, e.id)]
        return hits or [e for e in E if email and email in (_fold(e.email), _fold(e.login))]
    who = _fold(learner.name)
    hits = [e for e in E if who and (who in (_fold(e.login), _fold(e.email), _fold(e.id_number), _fold(e.id))
                                     or (e.email and who == _fold(e.email).split("@")[0]))]
    return hits or [e for e in E if e.name and _same_name(e.name, learner.name)]


@dataclass
class Matching:
    """Roster against graded learners, both ways; ambiguous matches refused."""

    matched: dict[int, dict[str, Learner]]        # roster index -> {lesson: learner}
    no_submission: list[RosterEntry]              # on the roster, matched in no run
    not_on_roster: list[tuple[str, Learner]]      # (lesson, learner) graded, matched to no roster entry
    ambiguous: list[str]                          # refused: one learner -> several entries, or the reverse

    def report(self) -> str:
        lines = []

        def some(xs: list[str]) -> str:
            return ", ".join(xs[:20]) + (" …" if len(xs) > 20 else "")
        if self.no_submission:
            lines.append(f"{len(self.no_submission)} on the roster without a graded submission (no grade written): "
                         + some([e.label for e in self.no_submission]))
        if self.not_on_roster:
            lines.append(f"{len(self.not_on_roster)} graded but matched to nobody on the roster (not exported): "
                         + some([f"{l.name} [{l.student}, lesson {lesson}]" for lesson, l in self.not_on_roster]))
        if self.ambiguous:
            lines.append(f"{len(self.ambiguous)} ambiguous match(es) refused (not exported; add a `student` column "
                         "to a plain roster to decide): " + "; ".join(self.ambiguous[:10]))
        return "\n".join(lines)


def match(runs: list[Run], roster: Roster | list[RosterEntry]) -> Matching:
    if isinstance(roster, list):
        roster = Roster("plain", roster)
    index = {id(e): i for i, e in enumerate(roster.entries)}
    matched: dict[int, dict[str, Learner]] = {}
    claims: dict[tuple[int, str], list[Learner]] = {}
    not_on, ambiguous = [], []
    for run in runs:
        for learner in run.learners:
            hits = _candidates(learner, roster)
            if not hits:
                not_on.append((run.lesson, learner))
            elif len(hits) > 1:
                ambiguous.append(f"{learner.name} [{learner.student}] matches {', '.join(e.label for e in hits[:4])}")
            else:
                claims.setdefault((index[id(hits[0])], run.lesson), []).append(learner)
    for (i, lesson), learners in claims.items():
        if len(learners) > 1:
            ambiguous.append(f"{roster.entries[i].label} is matched by {', '.join(l.name + ' [' + l.student + ']' for l in learners)} "
                             f"in lesson {lesson}")
            continue
        matched.setdefault(i, {})[lesson] = learners[0]
    return Matching(matched, [e for i, e in enumerate(roster.entries) if i not in matched], not_on, ambiguous)


def _csv(rows: list[list[str]]) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\r\n").writerows(rows)
    return buf.getvalue()


def _column(run: Run) -> str:
    return f"ONNX Lab {run.lesson_name}"


CANVAS_COLUMN = re.compile(r".+ \((\d+)\)")


def canvas_columns(runs: list[Run], roster: Roster, given: list[str] | None = None) -> tuple[list[str], list[str]]:
    """Each lesson's Canvas column header, `Title (assignment id)` so that Canvas updates that assignment
    (a header without a known id makes Canvas create a new assignment). Given by the instructor
    (`--canvas-column`, in the order of the runs), else found in a Canvas gradebook roster by the lesson's
    name or number, else the default title (with a warning)."""
    given = list(given or [])
    if given and len(given) != len(runs):
        raise ResultsError(f"--canvas-column given {len(given)} time(s) for {len(runs)} lesson(s): one per lesson, "
                           "in the order of the folders")
    cols, warnings = [], []
    for k, run in enumerate(runs):
        if given:
            title = " ".join(given[k].split())
            if not CANVAS_COLUMN.fullmatch(title):
                raise ResultsError(f"--canvas-column {given[k]!r}: write it as Canvas's gradebook export heads the "
                                   "assignment's column, `Title (assignment id)`, e.g. 'Lab 03 (123456)'")
            cols.append(title)
            continue
        keys = {_fold(run.lesson_name), _fold(_column(run)), _fold(f"lesson {run.lesson}"), _fold(f"lab {run.lesson}")}
        found = [t for t in roster.assignments if any(k in _fold(t) for k in keys)]
        if len(found) == 1:
            cols.append(found[0])
            continue
        cols.append(_column(run))
        warnings.append(f"column {_column(run)!r} has no Canvas assignment id: Canvas will create a new assignment "
                        f"of that name; to grade an existing one pass --canvas-column 'Its title (its id)'"
                        + (f" (candidates in the roster: {', '.join(found)})" if found else ""))
    return cols, warnings


def _groups(runs: list[Run], m: Matching) -> list[list[Run]]:
    """The runs one file holds: all of them when every exported learner has a grade in each, else one
    file per lesson (a blank cell must never reach a platform: it could erase a grade already there)."""
    complete = all(set(by) == {r.lesson for r in runs} for by in m.matched.values())
    return [runs] if complete or len(runs) == 1 else [[r] for r in runs]


def canvas_csv(runs: list[Run], roster: Roster | list[RosterEntry], columns: list[str] | None = None) \
        -> tuple[str, Matching]:
    """A Canvas gradebook import: one row per matched learner with a grade in every column (never blank)."""
    if isinstance(roster, list):
        roster = Roster("plain", roster)
    missing = [e.label for e in roster.entries if not e.id]
    if missing:
        raise ResultsError("Canvas matches learners by their Canvas ID: the roster has no ID for "
                           f"{', '.join(missing[:10])} (use Canvas's own gradebook export as the roster)")
    m = match(runs, roster)
    cols = columns or canvas_columns(runs, roster)[0]
    rows = [["Student", "ID", "SIS User ID", "SIS Login ID", "Section"] + cols,
            ["Points Possible", "", "", "", ""] + [f"{r.max_points:g}" for r in runs]]
    for i, entry in enumerate(roster.entries):
        by = m.matched.get(i, {})
        if not all(r.lesson in by for r in runs):
            continue
        rows.append([spreadsheet_safe(entry.name or entry.student), spreadsheet_safe(entry.id), spreadsheet_safe(entry.id_number),
                     spreadsheet_safe(entry.login), spreadsheet_safe(entry.section)] + [f"{by[r.lesson].points:g}" for r in runs])
    return _csv(rows), m


def moodle_csv(runs: list[Run], roster: Roster | list[RosterEntry], key: str = "email") -> tuple[str, Matching]:
    """A Moodle grade import (Grades > Import > CSV file) keyed by email address or ID number; only
    learners with a grade in every column (a blank cell is never written)."""
    if isinstance(roster, list):
        roster = Roster("plain", roster)
    attr = {"email": "email", "idnumber": "id_number"}[key]
    m = match(runs, roster)
    missing = [roster.entries[i].label for i in m.matched if not getattr(roster.entries[i], attr)]
    if missing:
        raise ResultsError(f"Moodle matches learners by {'email address' if key == 'email' else 'ID number'}: "
                           f"the roster has none for {', '.join(missing[:10])}")
    head = ["Email address" if key == "email" else "ID number"] + [_column(r) for r in runs]
    rows = [head]
    for i, entry in enumerate(roster.entries):
        by = m.matched.get(i, {})
        if all(r.lesson in by for r in runs):
            rows.append([spreadsheet_safe(getattr(entry, attr))] + [f"{by[r.lesson].points:g}" for r in runs])
    return _csv(rows), m


def wide_csv(runs: list[Run]) -> str:
    """One row per learner, one column per exercise (lesson-prefixed ids), each lesson's total, the total."""
    students = sorted({l.student for r in runs for l in r.learners}, key=str.lower)
    names = {l.student: l.name for r in runs for l in r.learners}
    head = ["student", "name"]
    for r in runs:
        head += [i for i, _, _ in r.exercises] + [f"{r.lesson} total"]
    head.append("total")
    # a bonus exercise's column has max 0 (as in grades.csv): its points count on top of the maximum
    rows = [head, ["max points", ""] + [f"{m:g}" for r in runs
                                        for m in [*(0 if is_bonus(i) else m for i, _, m in r.exercises), r.max_points]]
            + [f"{sum(r.max_points for r in runs):g}"]]
    for s in students:
        row, total = [spreadsheet_safe(s), spreadsheet_safe(names.get(s, s))], 0.0
        for r in runs:
            learner = r.learner(s)
            for i, _, _ in r.exercises:
                ex = learner.get(i) if learner else None
                row.append(f"{ex.points:g}" if ex else "")
            row.append(f"{learner.points:g}" if learner else "")
            total += learner.points if learner else 0.0
        rows.append(row + [f"{round(total, 2):g}"])
    return _csv(rows)


def gradescope_learner(run: Run, learner: Learner) -> dict:
    """One learner's Gradescope results.json (the autograder specification's fields): one test per
    exercise, its output the status, the message, any override and, short of full points, the hint."""
    tests = []
    for ex in learner.exercises:
        output = f"{ex.status}: {ex.message}"
        if ex.overridden:
            output += f"\nOverride by the instructor ({ex.graded_points:g} -> {ex.points:g} points): {ex.override_reason}"
        if ex.hint and ex.points < ex.max_points:
            output += f"\nHint: {ex.hint}"
        tests.append({"name": f"{ex.exercise} · {ex.title}" + (" (bonus)" if ex.bonus else ""), "score": ex.points,
                      "max_score": 0.0 if ex.bonus else ex.max_points,   # a bonus is outside the maximum
                      "status": "passed" if ex.points >= ex.max_points else "failed", "output": output,
                      "visibility": "visible"})
    return {"score": learner.points, "output": f"{run.lesson_name}: {learner.points:g} / {learner.max_points:g} points",
            "visibility": "visible", "tests": tests}


def gradescope_results(run: Run) -> dict[str, dict]:
    """{student: Gradescope results.json} for one lesson."""
    return {learner.student: gradescope_learner(run, learner) for learner in run.learners}


def export(runs: list[Run], to: str, out: Path, roster: Roster | None = None,
           moodle_key: str = "email", canvas_columns_given: list[str] | None = None) -> str:
    """Write the export; returns a one-paragraph summary (with the roster report, if any)."""
    if to not in FORMATS:
        raise ResultsError(f"unknown format {to!r}: choose one of {', '.join(FORMATS)}")
    if to in ("canvas", "moodle") and roster is None:
        raise ResultsError(f"--to {to} needs --roster FILE: the platform's own export (Canvas: Grades > Export; "
                           "Moodle: Participants or Grades > Export) or a CSV with name, email, id columns")
    lessons = [r.lesson for r in runs]
    if len(set(lessons)) != len(lessons):
        raise ResultsError(f"two folders of the same lesson ({', '.join(lessons)}): export one grading per lesson")
    stale = [f"{r.folder}: {len(r.stale)} stale learner folder(s) ignored" for r in runs if r.stale]
    notes = list(stale)
    if to in ("canvas", "moodle"):
        m = match(runs, roster)
        groups = _groups(runs, m)
        written = []
        for group in groups:
            path = out if len(groups) == 1 else out.with_name(f"{out.stem}-{group[0].lesson}{out.suffix}")
            if to == "canvas":
                cols, warn = canvas_columns(group, roster, [canvas_columns_given[runs.index(r)] for r in group]
                                            if canvas_columns_given else None)
                text, _ = canvas_csv(group, roster, cols)
                notes += warn
            else:
                text, _ = moodle_csv(group, roster, moodle_key)
            atomic_write(path, text.encode("utf-8"))
            written.append(path)
        if len(groups) > 1:
            notes.append("not every learner has a grade in every lesson, so each lesson has its own file "
                         "(a blank cell could erase a grade already on the platform)")
        notes.append(m.report())
        what = f"{len(m.matched)} learners matched; {len(runs)} lesson(s)"
        where = ", ".join(map(str, written))
    elif to == "csv":
        atomic_write(out, wide_csv(runs).encode("utf-8"))
        what = f"{len({l.student for r in runs for l in r.learners})} learners"
        where = str(out)
    else:
        if len(runs) != 1:
            raise ResultsError("Gradescope results are per assignment: export one lesson's folder at a time")
        results = gradescope_results(runs[0])
        for student, res in results.items():
            atomic_write(out / student / "results.json", json.dumps(res, indent=1))
        what = f"{len(results)} results.json files; to grade inside Gradescope use `labkit grades gradescope-autograder`"
        where = str(out)
    note = "\n".join(n for n in notes if n)
    return f"Wrote {where} ({what})." + (f"\n{note}" if note else "")
