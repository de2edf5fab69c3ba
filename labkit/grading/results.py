"""Reading a finished grading run back: `DIR/students/*/results.json` + `DIR/overrides.csv` -> `Run`.

Everything after grading (exports, the class report, feedback returned to learners) starts here, so
an override is applied the same way everywhere and nothing is ever graded again. Files are read with
bounded sizes, links are not followed, and a malformed file is a clear `ResultsError`.
"""
from __future__ import annotations

import csv
import io
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..cells import is_exercise_id
from ..fsutil import UnreadableFile, read_bounded

MAX_RESULTS_BYTES = 4 << 20
MAX_OVERRIDES_BYTES = 1 << 20
OVERRIDES_FILE = "overrides.csv"
OVERRIDE_COLUMNS = ["student", "exercise", "points", "reason"]


#: what the grader writes is cut to these sizes (characters), so every results.json, grades.csv
#: cell and cache entry stays far below what the readers accept (MAX_RESULTS_BYTES)
MAX_MESSAGE_CHARS = 2000      # an exercise's message (and hint, title)
MAX_TEST_CHARS = 300          # each text of one test (its name, its message)
MAX_TESTS = 50                # tests kept per exercise
MAX_RECORD_CHARS = 1 << 20    # all exercises of one record together


def cut(text: object, limit: int) -> str:
    """`text` as one string of at most `limit` characters, cut at a word boundary with "…"."""
    s = str(text)
    if len(s) <= limit:
        return s
    head = s[: max(1, limit - 1)]
    space = head.rfind(" ")
    if space > limit // 2:
        head = head[:space]
    return head.rstrip() + "…"


def _bound_value(v: object, limit: int, depth: int = 0) -> object:
    if isinstance(v, str):
        return cut(v, limit)
    if isinstance(v, (int, float, bool)) or v is None:
        return v
    if isinstance(v, dict) and depth < 3:
        return {cut(k, 100): _bound_value(x, limit, depth + 1) for k, x in list(v.items())[:20]}
    if isinstance(v, (list, tuple)) and depth < 3:
        return [_bound_value(x, limit, depth + 1) for x in list(v)[:20]]
    return cut(v, limit)


def bound_results(results: list[dict], message: int = MAX_MESSAGE_CHARS, test: int = MAX_TEST_CHARS,
                  tests: int = MAX_TESTS) -> list[dict]:
    """The exercise results of one record with every text cut (messages, hints, test names and
    messages) and at most `tests` tests each, so the record is one its readers accept; tighter
    limits are applied when all together would still exceed MAX_RECORD_CHARS."""
    out = []
    for r in results:
        r = dict(r)
        if isinstance(r.get("tests"), list):
            kept = [_bound_value(t, test) for t in r["tests"][:tests] if isinstance(t, dict)]
            if len(r["tests"]) > tests:
                note = f" ({len(r['tests']) - tests} more tests not shown)"
                r["message"] = cut(r.get("message", ""), message - len(note)) + note
            r["tests"] = kept
        for k in ("message", "hint", "title"):
            if k in r:
                r[k] = cut(r[k], message)
        if "notes" in r:
            r["notes"] = _bound_value(r["notes"], test)
        out.append(r)
    if len(json.dumps(out)) > MAX_RECORD_CHARS and tests > 1:
        return bound_results(out, max(100, message // 4), max(40, test // 4), max(1, tests // 5))
    return out


class ResultsError(Exception):
    """A results folder or an overrides file that cannot be used: one clear line for the instructor."""


@dataclass
class ExerciseResult:
    """One exercise of one learner, as graded (and possibly overridden)."""

    exercise: str
    title: str
    status: str
    points: float
    max_points: float
    message: str
    hint: str = ""
    tests: list[dict] = field(default_factory=list)
    graded_points: float | None = None   # set when an override changed the points
    override_reason: str = ""

    @property
    def overridden(self) -> bool:
        return self.graded_points is not None


@dataclass
class Learner:
    student: str
    submission: str
    exercises: list[ExerciseResult]
    graded_at: str = ""
    protection: str = ""
    name: str = ""                                  # display name (Unicode); the id is `student`
    identity: dict = field(default_factory=dict)    # source, key, platform_id, email (identity.Identity)
    submission_relative: str = ""                   # the submission's path relative to the run folder
    other_files: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.name = self.name or self.student

    @property
    def points(self) -> float:
        return round(sum(e.points for e in self.exercises), 2)

    @property
    def max_points(self) -> float:
        return round(sum(e.max_points for e in self.exercises), 2)

    def get(self, exercise: str) -> ExerciseResult | None:
        return next((e for e in self.exercises if e.exercise == exercise), None)


@dataclass
class Run:
    """One lesson graded for a class."""

    folder: Path
    lesson: str            # "03"
    lesson_name: str       # "03_export_pytorch"
    exercises: list[tuple[str, str, float]]   # (id, title, max points), in lesson order
    learners: list[Learner]
    stale: list[str] = field(default_factory=list)      # folders of learners not in the latest grading
    manifest: dict = field(default_factory=dict)        # run.json of the latest grading ({} for older runs)

    @property
    def max_points(self) -> float:
        return round(sum(m for _, _, m in self.exercises), 2)

    def learner(self, student: str) -> Learner | None:
        """By learner id (case-insensitive), else by display name when exactly one learner has it."""
        import unicodedata

        hit = next((l for l in self.learners if l.student.lower() == student.lower()), None)
        if hit is not None:
            return hit
        want = unicodedata.normalize("NFC", " ".join(student.split())).casefold()
        named = [l for l in self.learners if unicodedata.normalize("NFC", " ".join(l.name.split())).casefold() == want]
        return named[0] if len(named) == 1 else None


def read_checked(path: Path, limit: int) -> bytes:
    """`fsutil.read_bounded` on the instructor's side: a refused file is a one-line `ResultsError`."""
    try:
        return read_bounded(path, limit)
    except UnreadableFile as e:
        raise ResultsError(f"{path}: {e}") from None


def _num(value: object, what: str) -> float:
    try:
        x = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ResultsError(f"{what}: {value!r} is not a number") from None
    if x != x or x in (float("inf"), float("-inf")):
        raise ResultsError(f"{what}: {value!r} is not a finite number")
    return x


def _learner(path: Path) -> tuple[dict, Learner]:
    try:
        rec = json.loads(read_checked(path, MAX_RESULTS_BYTES))
    except (ValueError, RecursionError) as e:
        raise ResultsError(f"{path} is not valid JSON ({e})") from None
    if not isinstance(rec, dict) or not isinstance(rec.get("exercises"), list) or not rec.get("student"):
        raise ResultsError(f"{path} is not a labkit results.json (no student or exercises)")
    exercises = []
    for r in rec["exercises"]:
        if not isinstance(r, dict) or not is_exercise_id(r.get("exercise")):
            raise ResultsError(f"{path}: an exercise entry without a valid id")
        where = f"{path}: {r['exercise']}"
        exercises.append(ExerciseResult(
            r["exercise"], str(r.get("title", "")), str(r.get("status", "error")), _num(r.get("points"), where),
            _num(r.get("max_points"), where), str(r.get("message", "")), str(r.get("hint", "")),
            [t for t in r.get("tests", []) if isinstance(t, dict)]))
    ident = rec.get("identity") if isinstance(rec.get("identity"), dict) else {}
    others = rec.get("other_files") if isinstance(rec.get("other_files"), list) else []
    return rec, Learner(str(rec["student"]), str(rec.get("submission", "")), exercises, str(rec.get("graded_at", "")),
                        str(rec.get("protection", "")), str(rec.get("name") or rec["student"]), ident,
                        str(rec.get("submission_relative_to_out", "")), [str(o) for o in others])


def load_run(folder: str | os.PathLike, overrides: bool = True) -> Run:
    """The graded run in `folder` (what `labkit grade --out folder` wrote), overrides applied."""
    folder = Path(folder)
    students = folder / "students"
    if not students.is_dir():
        raise ResultsError(f"{folder} holds no graded run (no students/ folder): run `labkit grade ... --out {folder}` first")
    manifest = read_manifest(folder)
    wanted = {m["student"] for m in manifest.get("learners", [])} if manifest else None
    learners, lesson, name, exercises, stale = [], None, None, None, []
    for sub in sorted(students.iterdir(), key=lambda p: p.name.lower()):
        path = sub / "results.json"
        if sub.is_symlink() or not sub.is_dir() or not path.exists():
            continue
        if wanted is not None and sub.name not in wanted:
            stale.append(sub.name)  # an earlier run's learner: flagged, never mixed in
            continue
        rec, learner = _learner(path)
        if learner.student != sub.name:
            raise ResultsError(f"{path} says it is {learner.student!r}, not {sub.name!r}")
        ids = [(e.exercise, e.title, e.max_points) for e in learner.exercises]
        if lesson is None:
            lesson, name, exercises = str(rec.get("lesson", "")), str(rec.get("lesson_name", "")), ids
        elif str(rec.get("lesson", "")) != lesson or [i for i, _, _ in ids] != [i for i, _, _ in exercises]:
            raise ResultsError(f"{path} is from another lesson or lesson version than the rest of {folder}")
        learners.append(learner)
    if lesson is None:
        raise ResultsError(f"{folder} holds no results yet (students/*/results.json)")
    run = Run(folder, lesson, name or lesson, exercises or [], learners, stale, manifest)
    if overrides:
        apply_overrides(run, read_overrides(folder / OVERRIDES_FILE, run))
    return run


def read_manifest(folder: Path) -> dict:
    """`run.json` of the latest grading of `folder` ({} when absent: a run from before manifests)."""
    path = folder / "run.json"
    if not path.exists():
        return {}
    try:
        m = json.loads(read_checked(path, MAX_RESULTS_BYTES))
    except (ValueError, RecursionError) as e:
        raise ResultsError(f"{path} is not valid JSON ({e})") from None
    if not isinstance(m, dict) or not isinstance(m.get("learners"), list) or \
            not all(isinstance(x, dict) and isinstance(x.get("student"), str) for x in m["learners"]):
        raise ResultsError(f"{path} is not a labkit run manifest")
    return m


@dataclass(frozen=True)
class Override:
    student: str
    exercise: str
    points: float
    reason: str


def read_overrides(path: Path, run: Run) -> list[Override]:
    """Validate `overrides.csv` (student, exercise, points, reason) against the run; [] when absent."""
    if not path.exists():
        return []
    try:
        text = read_checked(path, MAX_OVERRIDES_BYTES).decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ResultsError(f"{path} is not UTF-8 text") from None
    rows = list(csv.reader(io.StringIO(text)))
    if not rows or [c.strip().lower() for c in rows[0]] != OVERRIDE_COLUMNS:
        raise ResultsError(f"{path}: the first line must be {','.join(OVERRIDE_COLUMNS)}")
    out, problems, seen = [], [], set()
    max_of = {i: m for i, _, m in run.exercises}
    for n, row in enumerate(rows[1:], start=2):
        if not any(c.strip() for c in row):
            continue
        if len(row) != 4:
            problems.append(f"line {n}: expected 4 columns, got {len(row)}")
            continue
        student, exercise, points, reason = (c.strip() for c in row)
        learner = run.learner(student)
        if learner is None:
            problems.append(f"line {n}: no graded learner {student!r}")
        if exercise not in max_of:
            problems.append(f"line {n}: lesson {run.lesson} has no exercise {exercise!r}")
        try:
            value = _num(points, f"line {n}")
        except ResultsError as e:
            problems.append(str(e))
            continue
        if exercise in max_of and not 0 <= value <= max_of[exercise]:
            problems.append(f"line {n}: {value:g} points is outside 0..{max_of[exercise]:g} for {exercise}")
        if not reason:
            problems.append(f"line {n}: an override needs a reason (the learner sees it)")
        if learner is not None and (learner.student, exercise) in seen:
            problems.append(f"line {n}: a second override of {exercise} for {student}")
        if learner is not None:
            seen.add((learner.student, exercise))
            out.append(Override(learner.student, exercise, value, reason))
    if problems:
        raise ResultsError(f"{path}: " + "; ".join(problems[:10]) + (" …" if len(problems) > 10 else ""))
    return out


def apply_overrides(run: Run, overrides: list[Override]) -> None:
    for o in overrides:
        learner = run.learner(o.student)
        ex = learner.get(o.exercise) if learner else None
        if ex is None:  # graded before the exercise existed: add it
            title, most = next((t, m) for i, t, m in run.exercises if i == o.exercise)
            ex = ExerciseResult(o.exercise, title, "missing", 0.0, most, "no result")
            learner.exercises.append(ex)
        ex.graded_points, ex.points, ex.override_reason = ex.points, o.points, o.reason


def add_override(folder: str | os.PathLike, student: str, exercise: str, points: float, reason: str) -> Override:
    """Append one override to `folder/overrides.csv` after checking it against the run."""
    from ..fsutil import atomic_write

    folder = Path(folder)
    run = load_run(folder, overrides=False)
    path = folder / OVERRIDES_FILE
    text = read_checked(path, MAX_OVERRIDES_BYTES).decode("utf-8-sig") if path.exists() else ""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    if not text.strip():
        w.writerow(OVERRIDE_COLUMNS)
    w.writerow([student, exercise, f"{points:g}", reason])
    candidate = (text if text.endswith("\n") or not text else text + "\n") + buf.getvalue()
    tmp = folder / (OVERRIDES_FILE + ".check")
    atomic_write(tmp, candidate)
    try:
        found = read_overrides(tmp, run)
    finally:
        tmp.unlink()
    atomic_write(path, candidate)
    return found[-1]
