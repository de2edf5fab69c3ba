"""Stage 1: the lesson being graded — its solution notebook, its exercises, and the test bundle hash."""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..cells import exercise_tag
from .options import GRADER_VERSION, GradeError

#: a solution notebook's number: two digits, and a letter for a split lesson's later notebook (09b
#: holds more of lesson 09's exercises; their ids stay 09.name)
LESSON_NUMBER = re.compile(r"\d\d[a-z]?")
#: what `labkit grade` takes for a number: 5, 05, 9b, 09b
LESSON_KEY = re.compile(r"(\d{1,2})([a-z]?)")


@dataclass(frozen=True)
class ExerciseInfo:
    """What the grader needs of an exercise (learner-side facts only)."""

    id: str
    title: str
    points: float
    hint: str
    kind: str
    bonus: bool = False     # outside the lesson's maximum
    tools: tuple[str, ...] = ()  # the answer runs where only these import (`checks.confine`, `grading.confined`)


@dataclass
class Lesson:
    number: str
    name: str
    solution_path: Path
    solution: dict
    exercises: list[ExerciseInfo]
    extra_tests: str = ""
    blank_sources: dict[str, str] = field(default_factory=dict)   # cell id -> the lesson's stub source

    @property
    def max_points(self) -> float:
        return round(sum(e.points for e in self.exercises if not e.bonus), 2)


def course_solutions() -> Path:
    from ..fsutil import course_root

    return course_root() / "solutions"


def resolve_lesson(lesson: str, solutions: Path | None = None) -> Path:
    """`05`, `5`, `05_fusion`, `fusion`, `09b` (a split lesson's second notebook) or a path to a solution
    notebook -> the solution's path."""
    p = Path(lesson)
    if p.suffix == ".ipynb" and p.is_file():
        return p.resolve()
    try:
        folder = solutions or course_solutions()
    except FileNotFoundError as e:
        raise GradeError(str(e)) from None
    if not folder.is_dir():
        raise GradeError(f"no solutions folder at {folder}")
    found = sorted(folder.glob("*.ipynb"))
    key = lesson.strip().removesuffix(".ipynb")
    if m := LESSON_KEY.fullmatch(key):
        key = f"{int(m[1]):02d}{m[2]}"
    for nb in found:
        if nb.stem == key or nb.stem.split("_", 1)[0] == key or nb.stem.split("_", 1)[-1] == key:
            return nb.resolve()
    names = ", ".join(nb.stem for nb in found) or "none"
    raise GradeError(f"unknown lesson {lesson!r}: the lessons in {folder} are {names}")


def load_lesson(path: Path, extra_tests: Path | None = None) -> Lesson:
    """Read the solution notebook and check that every answer cell has a declared exercise and a check."""
    from .. import checks

    try:
        solution = json.loads(path.read_bytes())
    except ValueError as e:
        raise GradeError(f"the solution notebook {path} is not valid JSON: {e}") from None
    number = path.stem.split("_", 1)[0]
    if not LESSON_NUMBER.fullmatch(number):
        raise GradeError(f"{path.name}: a solution notebook's name starts with its two-digit number "
                         "(and a letter for a split lesson's later notebook: 09b)")
    try:
        registered = {e.id: e for e in checks.lesson_exercises(number[:2])}
    except checks.ExerciseModuleError as e:
        raise GradeError(str(e)) from None
    cells = solution.get("cells", [])
    order = [x for x in (exercise_tag(c, "answer") for c in cells if c.get("cell_type") == "code") if x]
    if not order:
        raise GradeError(f"{path.name} has no answer cells (tags answer:{number}.name): nothing to grade")
    unknown = [x for x in order if x not in registered]
    if unknown:
        raise GradeError(f"{path.name}: answer cells {unknown} have no exercise specified in labkit_judges/l{number[:2]}.py")
    missing_checks = set(order) - {exercise_tag(c, "check") for c in cells}
    if missing_checks:
        raise GradeError(f"{path.name}: answer cells {sorted(missing_checks)} have no check cell")
    exercises = [ExerciseInfo(i, registered[i].title, registered[i].points, registered[i].hint, registered[i].kind,
                              registered[i].bonus, registered[i].tools) for i in order]
    extra = ""
    if extra_tests is not None:
        try:
            extra = extra_tests.read_text()
        except OSError as e:
            raise GradeError(f"cannot read the extra tests {extra_tests}: {e}") from None
    lesson = Lesson(number, path.stem, path, solution, exercises, extra)
    lesson.blank_sources = _blank_sources(lesson)
    return lesson


def _blank_sources(lesson: Lesson) -> dict[str, str]:
    """Cell id -> source in the generated lesson (what a learner who changed nothing has)."""
    import nbformat

    from ..assign import make_lesson

    try:
        blank = make_lesson(nbformat.from_dict(lesson.solution), lesson.name)
    except Exception:
        return {}
    return {c.get("id"): c.source for c in blank.cells if c.get("id")}


def verdict_sources() -> list[Path]:
    """Every source file on the verdict path: the whole labkit package and the judges package."""
    import labkit
    import labkit_judges

    files: list[Path] = []
    for pkg in (labkit, labkit_judges):
        root = Path(pkg.__file__).resolve().parent
        files += sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in (".py", ".pt", ".json", ".npz")
                        and "__pycache__" not in p.parts)
    return files


def package_versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name in ("onnx", "onnxruntime", "torch", "numpy", "scikit-learn", "onnxscript", "cloudpickle"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "missing"
    return out


def bundle_hash(lesson: Lesson, *, seed: int, limits: dict, protection_mode: str, data_hashes: dict[str, str]) -> str:
    """The hash of everything that decides a verdict: a cached grade is reused only when it is unchanged."""
    h = hashlib.sha256()

    def part(label: str, data: bytes) -> None:
        h.update(label.encode() + b"\0" + hashlib.sha256(data).digest())

    part("grader", GRADER_VERSION.encode())
    part("solution", lesson.solution_path.read_bytes())
    part("extra", lesson.extra_tests.encode())
    part("settings", json.dumps({"seed": seed, "limits": limits, "mode": protection_mode,
                                 "versions": package_versions(), "data": data_hashes}, sort_keys=True).encode())
    for f in verdict_sources():
        part(f"file:{f.parent.name}/{f.name}", f.read_bytes())
    return h.hexdigest()
