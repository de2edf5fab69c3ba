"""`labkit release OUT`: the graded edition an instructor hands to learners (docs/instructors.md).

The self-study course (this repository, Binder) ships solutions and the full checks. A graded release
holds what a learner needs and nothing a grade depends on:

* `OUT/lessons/`: the lesson notebooks as `labkit assign` wrote them (so the grader rebuilds them);
* `OUT/labkit-learner/`: an installable `labkit` (own pyproject, same pins) without `labkit_judges`,
  `labkit.grading`, `labkit.assign` or this module, plus `labkit/public/`: the public checks that
  `labkit.checks.public` answers from.

Public checks per kind: a function exercise keeps its public test inputs (seed `PUBLIC_SEED`, the
notebook's own) and the outputs the *solution notebook* returned on them, recorded the way the grader
records a submission (the solution runs in a kernel with `LABKIT_COLLECT_DIR`); the full judge must
pass those outputs, or the release is refused. ONNX models among them are not shipped (only "is a
valid model" is checked). An ONNX-file exercise gets a structural check; a quiz says which questions
are answered. Hidden inputs, the judges and the keys stay with the grader.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

from . import plain
from .checks.collect import COLLECT_ENV, INPUTS_ENV
from .checks.judging import INTERACTIVE_SEED, judge_spec, run_judge
from .checks.registry import Exercise, lesson_exercises
from .fsutil import course_root

#: the public inputs are the notebook's own (the self-study check shows the same ones)
PUBLIC_SEED = INTERACTIVE_SEED
LEARNER_DIR = "labkit-learner"
#: what a learner's install leaves out of the `labkit` package: the grader, the authoring tools, this module
LEFT_OUT = ("grading", "sandbox.py", "assign.py", "edition.py", "lesson_time.py", "__pycache__")
NOTES = {
    "outputs": "Your function ran on the public inputs and its outputs were compared with the reference's.",
    "process": "Your function ran on the public inputs and its outputs were compared with the reference's; "
               "how it uses the objects it is given is checked when graded.",
    "structure": "What the model computes is checked when graded.",
    "shapes": "Your function ran on the public inputs; its outputs have the reference's shapes. Their values "
              "are checked when graded.",
    "answered": "Which answers are right is checked when graded.",
}


#: function exercises whose public check compares shapes only, and why a value comparison would mislead
SHAPES_ONLY = {
    "06.int4_blocks": "the codes of a block's padding rows are free (the judge ignores them), so a correct "
                      "answer may differ from the reference there",
    "09.generate": "the check's decoder clips its cache, so prefilling the prompt at once and token by token "
                   "(both correct) give different tokens; the judge knows both, one expected list cannot",
}


class ReleaseError(Exception):
    """The release cannot be built (one line for the instructor)."""


def build(out: Path, lessons: list[str] | None = None, *, log=print) -> Path:
    """Write the graded release of `lessons` (default: all) to `out` (must not exist or be empty)."""
    root = course_root()
    if out.exists() and any(out.iterdir()):
        raise ReleaseError(f"{out} exists and is not empty: give a new folder")
    solutions = sorted((root / "solutions").glob("*.ipynb"))
    if lessons:
        solutions = selected(solutions, lessons)
    if not solutions:
        raise ReleaseError(f"no solution notebook for lessons {lessons}")
    (out / "lessons").mkdir(parents=True, exist_ok=True)
    package = _learner_package(root, out / LEARNER_DIR)
    for sol in solutions:
        number = sol.stem.split("_", 1)[0]   # 09b: the second notebook of lesson 09
        shutil.copy2(root / "lessons" / sol.name, out / "lessons" / sol.name)
        log(f"lesson {number}: running its solution on the public inputs ...")
        public_checks(sol, number, package / "public")
    (out / "README.md").write_text(LEARNER_README)
    log(f"Wrote the graded release to {out}: lessons/ and {LEARNER_DIR}/ (pip install ./{LEARNER_DIR}).")
    return out


def selected(solutions: list[Path], lessons: list[str]) -> list[Path]:
    """The solution notebooks of `lessons`: `09` is both of a split lesson's notebooks, `09b` only that one."""
    from .grading.lesson import LESSON_KEY

    keys = [LESSON_KEY.fullmatch(str(x)) for x in lessons]
    if not all(keys):
        raise ReleaseError(f"lessons are given by number (00 03 09b ...), not {' '.join(map(str, lessons))}")
    wanted = {f"{int(m[1]):02d}{m[2]}" for m in keys}
    return [p for p in solutions if {p.name[:2], p.stem.split("_", 1)[0]} & wanted]


def _learner_package(root: Path, dest: Path) -> Path:
    """The learner's installable `labkit`: the package without what only instructors and authors use."""
    ignore = shutil.ignore_patterns(*LEFT_OUT)
    shutil.copytree(root / "labkit", dest / "labkit", ignore=lambda d, names: [
        n for n in ignore(d, names) if Path(d) == root / "labkit" or n == "__pycache__"])
    text = (root / "pyproject.toml").read_text()
    text = re.sub(r'include = \["labkit", "labkit\.\*", "labkit_judges"\]', 'include = ["labkit", "labkit.*"]', text)
    text = re.sub(r'^labkit = \[(.*)\]$', _learner_package_data, text, count=1, flags=re.M)
    text = re.sub(r'readme = "README.md"\n', "", text)
    text = text.split("\n[tool.pytest")[0]
    if "labkit_judges" in text or "public/**/*" not in text:
        raise ReleaseError("pyproject.toml changed shape: update labkit/edition.py's rewriting of it")
    (dest / "pyproject.toml").write_text(text)
    return dest / "labkit"


def _learner_package_data(m: re.Match) -> str:
    """The package-data line of the learner's labkit: without what LEFT_OUT leaves out, with the public checks."""
    kept = [p for p in re.findall(r'"([^"]+)"', m.group(1)) if p.split("/")[0] not in LEFT_OUT]
    return "labkit = [" + ", ".join(f'"{p}"' for p in [*kept, "public/**/*"]) + "]"


def public_checks(solution: Path, number: str, dest: Path) -> dict[str, str]:
    """Write `dest/<id>/` for every exercise answered in `solution` (a notebook of lesson `number`);
    returns {id: mode}."""
    from .cells import exercise_tag

    answered = {exercise_tag(c, "answer") for c in json.loads(solution.read_text())["cells"]}
    exercises = [ex for ex in lesson_exercises(number[:2]) if ex.id in answered]
    modes: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="labkit-release-") as tmp:
        inputs, collected = Path(tmp) / "inputs", Path(tmp) / "collected"
        for ex in exercises:
            if ex.kind == "function":
                plain.save_inputs(judge_spec(ex.id).cases(PUBLIC_SEED), inputs / ex.id)
        if any(ex.kind == "function" for ex in exercises):
            _run_solution(solution, inputs, collected)
        for ex in exercises:
            modes[ex.id] = _write_check(ex, dest / ex.id, inputs / ex.id, collected / ex.id)
    return modes


def _run_solution(solution: Path, inputs: Path, collected: Path) -> None:
    """Execute the solution notebook as the grader runs a submission (cells tagged `skip-grading` left out,
    `QUICK = True`) with each check recording plain data, as in a graded kernel."""
    from .cells import cell_tags, exercise_tag
    from .notebooks import execute

    nb = json.loads(solution.read_text())
    nb["cells"] = [c for c in nb["cells"] if "skip-grading" not in cell_tags(c) or exercise_tag(c, "check")]
    graded = collected.parent / solution.name
    graded.write_text(json.dumps(nb))
    saved = {k: os.environ.get(k) for k in (COLLECT_ENV, INPUTS_ENV)}
    os.environ[COLLECT_ENV], os.environ[INPUTS_ENV] = str(collected), str(inputs)
    try:
        execute(graded, parameters={"QUICK": True})
    except Exception as e:
        raise ReleaseError(f"{solution.name} did not run: {str(e).strip().splitlines()[-1][:300]}") from None
    finally:
        for k, v in saved.items():
            os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)


def _write_check(ex: Exercise, dest: Path, inputs: Path, recorded: Path) -> str:
    dest.mkdir(parents=True, exist_ok=True)
    if ex.kind == "function":
        try:
            outputs = plain.load(recorded)
        except (FileNotFoundError, ValueError) as e:
            raise ReleaseError(f"{ex.id}: the solution recorded no outputs ({e})") from None
        verdict = run_judge(ex, outputs, PUBLIC_SEED)
        if verdict.status != "passed":
            raise ReleaseError(f"{ex.id}: the solution's outputs fail its own judge: {verdict.message}")
        shutil.copytree(inputs, dest / "inputs")
        plain.save(_without_models(outputs), dest / "expected")
        mode = "shapes" if ex.id in SHAPES_ONLY else "outputs"
        note = NOTES["shapes" if mode == "shapes" else "process" if _has_harness(inputs) else "outputs"]
    elif ex.kind == "onnx":
        mode, note = "structure", NOTES["structure"]
    else:
        mode, note = "answered", NOTES["answered"]
    (dest / "check.json").write_text(json.dumps({"id": ex.id, "mode": mode, "note": note}, indent=1))
    return mode


def _without_models(x: Any) -> Any:
    """The reference's outputs with every ONNX model emptied: a public check only asks for a valid model,
    and a reference graph would show the solution."""
    if isinstance(x, plain.OnnxBlob):
        return plain.OnnxBlob(b"")
    if isinstance(x, list):
        return [_without_models(v) for v in x]
    if isinstance(x, dict):
        return {k: _without_models(v) for k, v in x.items()}
    return x


def _has_harness(inputs: Path) -> bool:
    """Whether the inputs include objects built on the learner side (`plain.Make`): a process is judged."""
    return '"__make__"' in (inputs / "inputs.json").read_text()


LEARNER_README = """# ONNX Lab — graded release

Your instructor grades this course. Install the course library, then open the lessons:

    python -m venv .venv && .venv/bin/pip install ./labkit-learner
    .venv/bin/jupyter lab --notebook-dir=lessons

Each check cell answers at once from **public checks**: your function runs on the public test inputs
and its outputs are compared with the reference's; an ONNX model is checked to be valid; a quiz shows
which questions you answered. Points are given when your instructor grades your notebook: on hidden
inputs too, with every test of the exercise, and the quizzes' keys. Hand in the notebook itself.
"""
