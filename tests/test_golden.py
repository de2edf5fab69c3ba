"""A golden run of a small class of lesson 00 through the real commands (otter's `assert_dirs_equal`
is the model): `labkit grade` and `labkit grades export --to csv` on five files — the solution, the
blank lesson, wrong quiz answers, a learner with a non-Latin name, a malformed notebook — and a
`.txt` (a problem file, not a learner: no row in grades.csv, listed in run.json) must write
exactly the files in tests/golden/grade_00/ once `normalise` has masked what changes from run to run.

After an intended change of what the grader writes, rewrite the golden files and review their diff:

    LABKIT_UPDATE_GOLDEN=1 .venv/bin/python -m pytest -p no:xdist tests/test_golden.py
    git diff tests/golden
"""
from __future__ import annotations

import difflib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from labkit import sandbox
from labkit.checks import lesson_exercises
from labkit.grading.results import load_run

from conftest import ROOT
from grading_util import with_answers

pytestmark = pytest.mark.grading
GOLDEN = ROOT / "tests" / "golden" / "grade_00"
SOLUTION = ROOT / "solutions" / "00_setup_check.ipynb"
LESSON = ROOT / "lessons" / "00_setup_check.ipynb"
NON_LATIN = "Иван Петров"
#: results.json keys whose values change from run to run: times and durations, absolute paths, hashes, versions
VOLATILE = {"graded_at", "seconds", "judge_seconds", "submission", "submission_sha256", "cache_key", "lesson_version"}


def normalise(text: str, roots: list[Path]) -> str:
    """`text` of an output file with what varies between runs masked: every absolute `roots` path
    becomes <tmp>, and in JSON each VOLATILE key's value (at any depth) becomes "<masked>"."""
    for root in roots:
        text = text.replace(str(root), "<tmp>")
    try:
        data = json.loads(text)
    except ValueError:
        return text

    def mask(v):
        if isinstance(v, dict):
            return {k: "<masked>" if k in VOLATILE and x is not None else mask(x) for k, x in v.items()}
        return [mask(x) for x in v] if isinstance(v, list) else v

    return json.dumps(mask(data), indent=1, ensure_ascii=False) + "\n"


def _wrong_quizzes() -> dict[str, str]:
    """Each quiz answer cell of the solution with every answer changed to a wrong letter."""
    cells = json.loads(SOLUTION.read_text())["cells"]
    out = {}
    for ex in lesson_exercises("00"):
        if ex.kind == "quiz":
            src = next("".join(c["source"]) for c in cells if f"answer:{ex.id}" in c["metadata"].get("tags", []))
            out[ex.id] = re.sub(r'("q\d+": )"(\w)"', lambda m: m[1] + ('"a"' if m[2] != "a" else '"b"'), src)
    return out


def _class(folder: Path) -> None:
    folder.mkdir()
    (folder / "solution.ipynb").write_text(SOLUTION.read_text())
    (folder / "blank.ipynb").write_text(LESSON.read_text())
    (folder / "wrong.ipynb").write_text(json.dumps(with_answers(SOLUTION, _wrong_quizzes())))
    (folder / f"{NON_LATIN}.ipynb").write_text(SOLUTION.read_text())
    (folder / "broken.ipynb").write_text("{not json")
    (folder / "notes.txt").write_text("I handed in my notebook too\n")


def _labkit(*args: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "labkit.cli", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]


def test_golden_class_of_lesson_00(tmp_path):
    if not sandbox.bwrap_status()[0]:
        pytest.skip("bubblewrap is not usable here: " + sandbox.bwrap_status()[1])
    assert _wrong_quizzes(), "lesson 00 has a quiz"
    subs, out = tmp_path / "class", tmp_path / "out"
    _class(subs)
    _labkit("grade", "00", str(subs), "--out", str(out), "--jobs", "2", "--no-progress", "--seed", "1")
    _labkit("grades", "export", str(out), "--to", "csv")
    run = load_run(out)
    other = next(l.student for l in run.learners if l.name == NON_LATIN)
    assert len(run.learners) == 5 and [p["name"] for p in run.problem_files] == ["notes"]
    files = ["grades.csv", "grades-wide.csv", "students/wrong/results.json", f"students/{other}/results.json"]
    got = {f: normalise((out / f).read_text(encoding="utf-8"), [tmp_path]) for f in files}
    if os.environ.get("LABKIT_UPDATE_GOLDEN") == "1":
        for old in GOLDEN.rglob("*") if GOLDEN.exists() else []:
            if old.is_file() and str(old.relative_to(GOLDEN)) not in got:
                old.unlink()
        for f, text in got.items():
            (GOLDEN / f).parent.mkdir(parents=True, exist_ok=True)
            (GOLDEN / f).write_text(text, encoding="utf-8")
    want = {str(p.relative_to(GOLDEN)): p.read_text(encoding="utf-8") for p in GOLDEN.rglob("*") if p.is_file()}
    assert sorted(want) == sorted(got), "the golden files and the outputs compared differ (see the docstring)"
    diffs = ["".join(difflib.unified_diff(want[f].splitlines(True), got[f].splitlines(True), f"golden/{f}", f"out/{f}"))
             for f in sorted(got) if want[f] != got[f]]
    assert not diffs, "outputs differ from tests/golden/grade_00 (LABKIT_UPDATE_GOLDEN=1 rewrites it):\n" + "\n".join(diffs)


def test_normalise_masks_only_what_varies(tmp_path):
    rec = {"student": "x", "graded_at": "2026-01-01T10:00:00", "seconds": None, "kernel_starts": 1,
           "cells": [{"cell": 0, "seconds": 0.5}], "submission": f"{tmp_path}/x.ipynb", "message": f"in {tmp_path}/a"}
    assert json.loads(normalise(json.dumps(rec), [tmp_path])) == {
        "student": "x", "graded_at": "<masked>", "seconds": None, "kernel_starts": 1,
        "cells": [{"cell": 0, "seconds": "<masked>"}], "submission": "<masked>", "message": "in <tmp>/a"}
    assert normalise(f"a,{tmp_path}/b\n", [tmp_path]) == "a,<tmp>/b\n"
