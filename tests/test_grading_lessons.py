"""Every lesson through the real grader (sandbox, warm kernel server, verdict process): its solution
gets full marks, its blank lesson zero, and the grader's rebuild of the solution (the instructor's
notebook with the learner's answer cells, skip-grading cells and those after the last check cell
dropped) raises nowhere outside the
answer cells — a normal cell that needs a name only a skip-grading cell defines fails here, named.
The in-kernel tests cannot see what only the sandbox changes (read-only inputs, no network, another
uid, an emptied /tmp). The blank lesson's run stands in for a learner's Run All of the fresh lesson:
every check cell reads "not attempted" and no cell outside the answer cells raises (QUICK = True, as
the grader sets it). Hostile classes are graded by test_grading.py and test_grading_attacks.py."""
from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from labkit import sandbox
from labkit.assign import exercise_tag
from labkit.notebooks import BUDGET_SECONDS, budget_slack

pytestmark = pytest.mark.grading

ROOT = Path(__file__).resolve().parents[1]
#: every lesson in solutions/ (a new lesson is picked up by its file)
LESSONS = sorted(p.stem for p in (ROOT / "solutions").glob("[0-9][0-9]*.ipynb"))
#: the solution then the blank in one warm kernel server (--jobs 1: one server start per lesson instead
#: of two; the other test worker keeps the second core busy), each within the lesson budget, plus the
#: server's start and the verdicts
TIMEOUT_S = int(2 * BUDGET_SECONDS * budget_slack()) + 180


@pytest.mark.parametrize("stem", LESSONS)
def test_solution_full_marks_blank_zero_in_the_grader(stem, tmp_path):
    if not sandbox.bwrap_status()[0]:
        pytest.skip("bubblewrap is not usable here: " + sandbox.bwrap_status()[1])
    subs = tmp_path / "subs"
    subs.mkdir()
    shutil.copy(ROOT / "solutions" / f"{stem}.ipynb", subs / "solution.ipynb")
    shutil.copy(ROOT / "lessons" / f"{stem}.ipynb", subs / "blank.ipynb")
    proc = subprocess.run([sys.executable, "-m", "labkit.cli", "grade", stem, str(subs), "--out",
                           str(tmp_path / "out"), "--jobs", "1", "--no-progress"],
                          capture_output=True, text=True, cwd=ROOT, timeout=TIMEOUT_S)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with open(tmp_path / "out" / "grades.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    solution = [r for r in rows if r["student"] == "solution"]
    blank = [r for r in rows if r["student"] == "blank"]
    assert solution and all(r["status"] == "passed" for r in solution), \
        [(r["exercise"], r["status"], r["message"][:300]) for r in solution if r["status"] != "passed"]
    assert len(blank) == len(solution) and all(float(r["points"]) == 0 for r in blank), blank
    assert all(r["status"] == "not_attempted" for r in blank), \
        [(r["exercise"], r["status"], r["message"][:300]) for r in blank if r["status"] != "not_attempted"]
    expected = sorted(exercise_tag(c, "check") for c in nbformat.read(ROOT / "solutions" / f"{stem}.ipynb", as_version=4).cells
                      if exercise_tag(c, "check"))
    assert sorted(r["exercise"] for r in solution) == expected, "every exercise of the lesson has a row"
    for who in ("solution", "blank"):
        events = json.loads((tmp_path / "out" / "students" / who / "results.json").read_text())["cells"]
        bad = [e for e in events if e.get("role") != "answer" and e.get("what") != "ok"]
        assert not bad, f"{stem} ({who}): the grader's rebuild fails outside the answer cells: " + "; ".join(
            f"cell {e.get('cell')} ({e.get('role')}): {e.get('what')} {e.get('ename', '')}: {str(e.get('evalue', ''))[:200]}"
            for e in bad)
