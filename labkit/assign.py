"""`labkit assign`: write the learner notebooks in lessons/ from the solutions in solutions/.

In a solution's answer cell, the code between `### BEGIN SOLUTION` and `### END SOLUTION` is
replaced by a stub that keeps the notebook running: lines written as `# STUB: code` inside the
block become `code`; without them an indented block becomes `raise NotImplementedError` (so the
check reports "not attempted") and a top-level block becomes a `# YOUR CODE HERE` comment.
Outputs are cleared, cell ids and tags kept, check cells made read-only, and the notebook's metadata
is stamped with the lesson's version (`metadata.labkit.lesson_version`, a hash of its exercise layout).
"""
from __future__ import annotations

import difflib
import hashlib
import json
import re
from pathlib import Path

import nbformat

from .cells import exercise_tag

BEGIN = re.compile(r"^(\s*)### BEGIN SOLUTION\s*$")
END = re.compile(r"^\s*### END SOLUTION\s*$")
STUB = re.compile(r"^(\s*)# STUB: ?(.*)$")
DROP_CELL_META = ("execution", "papermill", "collapsed", "scrolled", "jupyter")
DROP_NB_META = ("papermill", "widgets")


class AssignError(ValueError):
    """A solution notebook is malformed (unclosed block, unknown exercise, missing check cell)."""


def strip_solution(source: str, where: str = "") -> str:
    """Replace every solution block in `source` with its stub."""
    out: list[str] = []
    lines = source.split("\n")
    i = 0
    while i < len(lines):
        m = BEGIN.match(lines[i])
        if not m:
            if END.match(lines[i]):
                raise AssignError(f"{where}: '### END SOLUTION' without BEGIN")
            out.append(lines[i])
            i += 1
            continue
        indent = m.group(1)
        j = i + 1
        stubs = []
        while j < len(lines) and not END.match(lines[j]):
            if BEGIN.match(lines[j]):
                raise AssignError(f"{where}: nested '### BEGIN SOLUTION'")
            s = STUB.match(lines[j])
            if s:
                stubs.append(s.group(1) + s.group(2))
            j += 1
        if j == len(lines):
            raise AssignError(f"{where}: '### BEGIN SOLUTION' is never closed")
        if stubs:
            out += stubs
        elif indent:
            out += [f"{indent}# YOUR CODE HERE", f'{indent}raise NotImplementedError("write your solution here")']
        else:
            out.append("# YOUR CODE HERE")
        i = j + 1
    return "\n".join(out)


def lesson_version(lesson_nb: dict) -> str:
    """A short hash of a lesson notebook's exercise layout: the order, ids, kinds and tags of its cells and
    the source of every cell the grader runs from the instructor's copy (not answers, outputs or metadata).
    It changes exactly when a learner's older copy would be rebuilt differently."""
    layout = []
    for c in lesson_nb.get("cells", []):
        if not isinstance(c, dict):
            continue
        src = c.get("source", "")
        src = "".join(src) if isinstance(src, list) else str(src)
        tags = sorted(t for t in (c.get("metadata", {}).get("tags") or []) if isinstance(t, str))
        answer = any(t.startswith("answer:") for t in tags)
        body = hashlib.sha256(src.encode()).hexdigest()[:16] if c.get("cell_type") == "code" and not answer else ""
        layout.append([c.get("id", ""), c.get("cell_type", ""), tags, body])
    return hashlib.sha256(json.dumps(layout, sort_keys=True).encode()).hexdigest()[:12]


def stamped_version(nb: dict) -> str:
    """The version `labkit assign` stamped in a notebook's metadata ('' when it has none)."""
    meta = nb.get("metadata") if isinstance(nb.get("metadata"), dict) else {}
    lab = meta.get("labkit") if isinstance(meta.get("labkit"), dict) else {}
    v = lab.get("lesson_version")
    return v if isinstance(v, str) else ""


def make_lesson(solution: nbformat.NotebookNode, where: str = "") -> nbformat.NotebookNode:
    """The learner version of a solution notebook (a new object; the input is not changed)."""
    nb = nbformat.from_dict(solution)
    answers, checks = set(), set()
    for n, cell in enumerate(nb.cells):
        meta = cell.setdefault("metadata", {})
        for key in DROP_CELL_META:
            meta.pop(key, None)
        if cell.cell_type != "code":
            continue
        cell.outputs = []
        cell.execution_count = None
        cell.source = strip_solution(cell.source, f"{where} cell {n}")
        if (a := exercise_tag(cell, "answer")):
            answers.add(a)
        if (c := exercise_tag(cell, "check")):
            checks.add(c)
            meta["editable"] = False
            meta["deletable"] = False
    if answers != checks:
        raise AssignError(f"{where}: answer cells {sorted(answers - checks)} have no check cell, "
                          f"check cells {sorted(checks - answers)} no answer cell")
    for key in DROP_NB_META:
        nb.metadata.pop(key, None)
    lab = dict(nb.metadata.get("labkit") or {})
    lab.pop("student", None)
    lab["lesson_version"] = lesson_version(nb)  # an outdated submission is reported as outdated
    nb.metadata["labkit"] = lab
    return nb


def course_root() -> Path:
    """The folder holding solutions/ and lessons/: the working directory or the package's checkout."""
    for cand in (Path.cwd(), Path(__file__).resolve().parents[1]):
        if (cand / "solutions").is_dir():
            return cand
    raise FileNotFoundError("no solutions/ folder here: run labkit from the course's root folder")


def render(path: Path) -> str:
    nb = nbformat.read(path, as_version=4)
    return nbformat.writes(make_lesson(nb, path.name)) + "\n"


def assign(root: Path | None = None, check_only: bool = False) -> list[str]:
    """Write (or with check_only, compare) lessons/ from solutions/. Returns the problems found."""
    root = root or course_root()
    src, dest = root / "solutions", root / "lessons"
    dest.mkdir(exist_ok=True)
    problems = []
    expected = {p.name: render(p) for p in sorted(src.glob("*.ipynb"))}
    for name, text in expected.items():
        target = dest / name
        current = target.read_text() if target.exists() else None
        if current == text:
            continue
        if check_only:
            if current is None:
                problems.append(f"lessons/{name} is missing")
            else:
                diff = list(difflib.unified_diff(current.splitlines(), text.splitlines(), lineterm="", n=0))
                changed = [d for d in diff if d[:1] in "+-" and d[:3] not in ("+++", "---")]
                sample = "; ".join(d.strip()[:80] for d in changed[:3])
                problems.append(f"lessons/{name} differs from what assign makes ({len(changed)} lines: {sample})")
        else:
            target.write_text(text)
    for extra in sorted(set(p.name for p in dest.glob("*.ipynb")) - set(expected)):
        if check_only:
            problems.append(f"lessons/{extra} has no solution in solutions/")
        else:
            (dest / extra).unlink()
    return problems
