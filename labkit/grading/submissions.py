"""Stage 2: submission files -> `Submission`s, with bounded work per file in the parent process.

Every file costs at most MAX_SUBMISSION_BYTES of reading, one JSON parse (deep nesting is a
row, not a crash), and a few dictionary look-ups per cell. Symbolic links are never followed.
Whatever is wrong with a file becomes that file's own row (status `error` or `missing`).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..cells import exercise_tag, is_exercise_id
from ..fsutil import read_bounded
from .identity import Identity, Resolution, identify, pick_latest
from .lesson import Lesson
from .options import GradeError
from ..text import shorten

MAX_SUBMISSION_BYTES = 25 << 20
MAX_CELLS = 2000
MAX_NAME = 80


@dataclass
class Submission:
    path: Path
    student: str = ""               # the learner's folder id (identity.learner_id): stable, unique, safe
    sha: str = ""
    identity: Identity | None = None
    nb: dict | None = None
    error: str | None = None        # the file cannot be graded at all: every row gets `status`
    status: str = "error"
    other_files: list[str] | None = None   # the same learner's older files, not graded
    version: str = ""               # the lesson version stamped in the file ('' when none)
    notebook: bool = False          # the file parsed as a notebook (JSON with a list of cells)
    _meta: dict | None = None       # the notebook's metadata (the identity's last resort)

    @property
    def name(self) -> str:
        return self.identity.name if self.identity else self.student

    @property
    def problem_file(self) -> bool:
        """Not a notebook at all (a `.txt`, a `.pdf`, Moodle's online text): reported as a problem file,
        never counted as a learner. A broken `.ipynb` is a learner's notebook and gets their error rows."""
        return not self.notebook and self.path.suffix.lower() != ".ipynb"


def roots_of(paths: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """The folders among the submission arguments (absolute)."""
    return tuple(os.path.abspath(p) for p in paths if os.path.isdir(p) and not os.path.islink(p))


def expand(paths: list[str] | tuple[str, ...]) -> list[Path]:
    """Submission arguments -> files (folders walked without following links; links kept, to be reported)."""
    out: list[Path] = []
    for arg in paths:
        p = Path(arg)
        if p.is_dir() and not p.is_symlink():
            for root, dirs, files in os.walk(p, followlinks=False):
                dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
                out += [Path(root) / f for f in sorted(files) if not f.startswith(".") and f not in PLATFORM_FILES]
        elif p.is_symlink() or p.exists():
            out.append(p)
        else:
            raise GradeError(f"no such submission file or folder: {arg}")
    seen, unique = set(), []
    for f in out:
        key = os.path.abspath(f)
        if key not in seen:
            seen.add(key)
            unique.append(f)
    return unique


PLATFORM_FILES = {"submission_metadata.yml"}   # Gradescope's export: read for identities, not graded
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def clean_name(name: str) -> str:
    """A folder-safe student name, never empty, never hidden."""
    name = _SAFE.sub("_", name.strip()).strip("._-")[:MAX_NAME]
    return name or "student"


def lesson_names(lesson: Lesson) -> tuple[str, ...]:
    """Names a file may carry for the lesson itself (not for a learner)."""
    return tuple(dict.fromkeys((lesson.name, lesson.solution_path.stem, f"lesson{lesson.number}",
                                f"lesson_{lesson.number}", f"lesson {lesson.number}")))


def read_submission(path: Path, lesson: Lesson, roots: tuple[str, ...] = ()) -> Submission:
    """Read and check one file, and say whose it is (`roots`: the folders named on the command line,
    never taken for a learner's folder). Never raises: problems go in `error`."""
    sub = _read(path, lesson)
    sub.identity = identify(path, sub._meta, lesson_names(lesson), roots)
    sub._meta = None
    sub.student = sub.identity.id
    return sub


def _read(path: Path, lesson: Lesson) -> Submission:
    sub = Submission(path)
    try:
        data = read_bounded(path, MAX_SUBMISSION_BYTES, "notebook")
    except ValueError as e:
        sub.error = str(e)
        return sub
    except OSError as e:
        sub.error = f"the file cannot be read ({e.strerror or e})"
        return sub
    sub.sha = hashlib.sha256(data).hexdigest()
    if not data.strip():
        sub.error = "the file is empty"
        return sub
    try:
        nb = json.loads(data)
    except UnicodeDecodeError:
        sub.error = "not a Jupyter notebook (binary data, not JSON)"
        return sub
    except RecursionError:
        sub.error = "not a Jupyter notebook (JSON nested too deeply)"
        return sub
    except ValueError as e:
        what = "corrupt notebook (invalid JSON" if path.suffix == ".ipynb" else "not a Jupyter notebook (not JSON"
        sub.error = f"{what}: {shorten(e, 120)})"
        return sub
    del data
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        sub.error = "not a Jupyter notebook (no list of cells)"
        return sub
    sub.notebook = True
    if len(nb["cells"]) > MAX_CELLS:
        sub.error = f"notebook too large: {len(nb['cells'])} cells (the limit is {MAX_CELLS})"
        return sub
    cells = [c for c in nb["cells"] if isinstance(c, dict)]
    nb["cells"] = cells
    sub._meta = {"metadata": nb.get("metadata")}
    from ..assign import stamped_version

    sub.version = stamped_version(nb)
    ours = {e.id for e in lesson.exercises}
    theirs = {x for c in cells for x in (exercise_tag(c, "answer"), exercise_tag(c, "check")) if x}
    sol_ids = {c.get("id") for c in lesson.solution.get("cells", []) if c.get("id")}
    sub_ids = {c.get("id") for c in cells if isinstance(c.get("id"), str)}
    if not (theirs & ours) and not (sol_ids & sub_ids):
        other = sorted({x[:2] for x in theirs if is_exercise_id(x)})
        sub.status = "missing"
        if other == [lesson.number[:2]]:   # the other notebook of a split lesson (09 and 09b)
            sub.error = (f"this is another notebook of lesson {other[0]} (its answer cells are "
                         f"{', '.join(sorted(theirs))}), not {lesson.name}: hand in {lesson.name}.ipynb")
        elif other:
            sub.error = (f"this is a notebook for lesson {', '.join(other)}, not lesson {lesson.number} "
                         f"({lesson.name}): hand in {lesson.name}.ipynb")
        else:
            sub.error = f"this notebook has none of the answer cells of lesson {lesson.number} ({lesson.name})"
        return sub
    sub.nb = nb
    return sub


def problem_files(subs: list[Submission]) -> tuple[list[Submission], list[Submission]]:
    """(the files that are notebooks or meant to be, the problem files: not notebooks at all)."""
    return [s for s in subs if not s.problem_file], [s for s in subs if s.problem_file]


def resolve(subs: list[Submission]) -> tuple[list[Submission], list[Submission], Resolution]:
    """One graded file per learner: (graded, set aside as older files of a graded learner, resolution).

    Ids come from each file's identity, never from the order of files; a learner's latest file is graded."""
    res = pick_latest([s.identity for s in subs], [s.path for s in subs])
    graded, older = [], []
    for lid, i in sorted(res.graded.items()):
        s = subs[i]
        s.other_files = [str(subs[j].path) for j in res.superseded.get(lid, [])]
        graded.append(s)
        older += [subs[j] for j in res.superseded.get(lid, [])]
    return graded, older, res


def assign_students(subs: list[Submission]) -> None:
    """Legacy (ids before learner identities; `resolve` is what grading uses): make student names unique across the whole batch (case-insensitively, whatever the files claim).

    A name claimed by one file only keeps it; a name claimed by several files gets each file's name
    added (`bob__bob2`); whatever still collides (`bob__bob` also claimed outright) gets a counter."""
    claims: dict[str, int] = {}
    for s in subs:
        claims[s.student.lower()] = claims.get(s.student.lower(), 0) + 1
    wanted = [s.student if claims[s.student.lower()] == 1 else clean_name(f"{s.student}__{s.path.stem}")
              for s in subs]
    taken: set[str] = set()
    for i in sorted(range(len(subs)), key=lambda i: claims[subs[i].student.lower()] > 1):  # single claims first
        candidate, n = wanted[i], 1
        while candidate.lower() in taken:
            n += 1
            candidate = f"{wanted[i][:MAX_NAME - 5]}-{n}"
        taken.add(candidate.lower())
        subs[i].student = candidate
