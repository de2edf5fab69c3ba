"""`labkit assign`: write what the learner gets from what the instructor writes.

* `labkit/exercises/lNN.py` from the exercise specs in `labkit_judges/lNN.py`: the learner-visible
  fields only (id, title, points, kind, hint steps, quiz questions without answers), so that a graded
  kernel, which cannot import the judges, knows the exercises. Generated, never edited by hand.
* `lessons/` from the solutions in `solutions/`; each exercise's heading in a solution
  (`### Exercise `NN.name` (3 points)`, `### Quiz ...`) must state its spec's points.

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
import sys
from pathlib import Path

import nbformat

from .cells import EXERCISE_ID, cell_source, exercise_tag
from .checks.judging import JUDGE_PACKAGE, lesson_specs
from .checks.registry import Exercise
from .fsutil import course_root

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


def render(path: Path) -> str:
    nb = nbformat.read(path, as_version=4)
    return nbformat.writes(make_lesson(nb, path.name)) + "\n"


#: an exercise's heading in a solution's Markdown: `### Exercise `05.fold_bn` (3 points)` or `### Quiz ...`
HEADING = re.compile(rf"^#+ (?:Exercise|Quiz) `?({EXERCISE_ID.pattern})`? \(((?:bonus, )?\d+(?:\.\d+)?) points?\)", re.M)
GENERATED = ("# AUTOGENERATED by `labkit assign` from labkit_judges/l{0}.py: do not edit. "
             "File to edit: labkit_judges/l{0}.py")


def _points(p: float) -> str:
    return repr(int(p)) if p == int(p) else repr(p)


def learner_module(lesson: str, exercises: list[Exercise]) -> str:
    """The text of `labkit/exercises/lNN.py` for these exercises (deterministic: spec order, repr strings)."""
    out = [GENERATED.format(lesson),
           f'"""Lesson {lesson} exercises, learner side: what each exercise is (no answers, no test inputs)."""',
           f"from ..checks.registry import {'Question, declare' if any(e.questions for e in exercises) else 'declare'}"]
    for ex in exercises:
        out += ["", f"declare({ex.id!r}, title={ex.title!r}, points={_points(ex.points)}, kind={ex.kind!r}"]
        if ex.bonus:
            out[-1] += ", bonus=True"
        if ex.tools:
            out[-1] += f", tools={ex.tools!r}"
        if ex.call:
            out[-1] += f", call={ex.call!r}"
        if ex.hints:
            out[-1] += ", hint=["
            out += [f"    {h!r}," for h in ex.hints] + ["]"]
        if ex.questions:
            out[-1] += ", questions=["
            for q in ex.questions:
                out.append(f"    Question({q.key!r}, {q.prompt!r}, {{")
                out += [f"        {k!r}: {v!r}," for k, v in q.options.items()] + ["    }),"]
            out.append("]")
        out[-1] += ")"
    return "\n".join(out) + "\n"


def _spec_exercises(lesson: str, path: Path | None = None) -> list[Exercise]:
    """The exercises `labkit_judges/lNN.py` specifies, in its order (imports it). With `path`, the module
    Python imports must be that file (a course checkout other than the installed one is refused)."""
    specs = lesson_specs(lesson)
    if path is not None:
        loaded = Path(sys.modules[f"{JUDGE_PACKAGE}.l{lesson}"].__file__ or "").resolve()
        if loaded != path.resolve():
            raise AssignError(f"labkit_judges/l{lesson}.py: Python imports {loaded} instead: "
                              "run labkit from the course it is installed from")
    return [s.exercise for s in specs]


def heading_problems(solution: dict, name: str, exercises: list[Exercise]) -> list[str]:
    """Each exercise answered in the solution needs one heading in its Markdown stating its spec's points
    (`exercises`: its lesson's; a split lesson's notebook, 09b, answers some of them)."""
    answered = {exercise_tag(c, "answer") for c in solution.get("cells", []) if isinstance(c, dict)}
    specified = {ex.id for ex in exercises}
    exercises = [ex for ex in exercises if ex.id in answered]
    found: dict[str, list[str]] = {}
    for cell in solution.get("cells", []):
        if isinstance(cell, dict) and cell.get("cell_type") == "markdown":
            for id, pts in HEADING.findall(cell_source(cell)):
                found.setdefault(id, []).append(pts)
    problems = []
    for ex in exercises:
        says = f"{'bonus, ' if ex.bonus else ''}{_points(ex.points)}"
        want = f"### {'Quiz' if ex.kind == 'quiz' else 'Exercise'} `{ex.id}` ({says} points)"
        got = found.pop(ex.id, [])
        if not got:
            problems.append(f"solutions/{name}: no heading for {ex.id} (write `{want}` in the Markdown cell "
                            "above its answer cell)")
        elif len(got) > 1 or got[0] != says and not (got[0][:1].isdigit() and says[:1].isdigit()
                                                      and float(got[0]) == ex.points):
            problems.append(f"solutions/{name}: the heading of {ex.id} says ({' and '.join(got)} points), "
                            f"its spec in labkit_judges/l{ex.lesson}.py says ({says} points): write `{want}`")
    problems += [f"solutions/{name}: a heading names {id}, which labkit_judges/l{id[:2]}.py does not specify"
                 if id not in specified else f"solutions/{name}: a heading names {id}, which has no answer cell here"
                 for id in found]
    return problems


def _sync(target: Path, text: str, label: str, check_only: bool) -> list[str]:
    """Write `text` to `target`, or with check_only report (one line) how it differs."""
    current = target.read_text() if target.exists() else None
    if current == text:
        return []
    if not check_only:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        return []
    if current is None:
        return [f"{label} is missing"]
    diff = list(difflib.unified_diff(current.splitlines(), text.splitlines(), lineterm="", n=0))
    changed = [d for d in diff if d[:1] in "+-" and d[:3] not in ("+++", "---")]
    sample = "; ".join(d.strip()[:80] for d in changed[:3])
    return [f"{label} differs from what assign makes ({len(changed)} lines: {sample})"]


def assign(root: Path | None = None, check_only: bool = False) -> list[str]:
    """Write (or with check_only, compare) labkit/exercises/ from labkit_judges/ and lessons/ from
    solutions/. Returns the problems found, one line each (headings are checked in both modes)."""
    root = root or course_root()
    problems = []
    judges, generated = root / "labkit_judges", root / "labkit" / "exercises"
    made = set()
    for path in sorted(judges.glob("l[0-9][0-9].py")):
        lesson = path.stem[1:]
        text = learner_module(lesson, _spec_exercises(lesson, path))
        problems += _sync(generated / path.name, text, f"labkit/exercises/{path.name}", check_only)
        made.add(path.name)
    for extra in sorted({p.name for p in generated.glob("l[0-9][0-9].py")} - made):
        if check_only:
            problems.append(f"labkit/exercises/{extra} has no spec module labkit_judges/{extra}")
        else:
            (generated / extra).unlink()
    src, dest = root / "solutions", root / "lessons"
    dest.mkdir(exist_ok=True)
    expected = {}
    answered: dict[str, list[str]] = {}   # lesson number -> the exercises its notebooks answer (09 and 09b)
    for p in sorted(src.glob("*.ipynb")):
        expected[p.name] = render(p)
        try:
            exercises = _spec_exercises(p.name[:2])
        except KeyError:
            problems.append(f"solutions/{p.name}: no labkit_judges/l{p.name[:2]}.py specifies its exercises")
            continue
        solution = json.loads(p.read_text())
        problems += heading_problems(solution, p.name, exercises)
        answered.setdefault(p.name[:2], []).extend(
            x for c in solution.get("cells", []) if isinstance(c, dict) and (x := exercise_tag(c, "answer")))
    for number, ids in answered.items():
        for ex in _spec_exercises(number):
            if ids.count(ex.id) != 1:
                problems.append(f"labkit_judges/l{number}.py specifies {ex.id}: {ids.count(ex.id)} answer cells "
                                f"for it in lesson {number}'s solution notebooks, not one")
    for name, text in expected.items():
        problems += _sync(dest / name, text, f"lessons/{name}", check_only)
    for extra in sorted(set(p.name for p in dest.glob("*.ipynb")) - set(expected)):
        if check_only:
            problems.append(f"lessons/{extra} has no solution in solutions/")
        else:
            (dest / extra).unlink()
    return problems
