"""Regrading one learner (`--only`) or one exercise (`--exercise`) leaves everyone else's results alone,
and `labkit grades` reads the result straight away (lesson 00, under bubblewrap)."""
from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from labkit import sandbox

from conftest import ROOT

pytestmark = pytest.mark.grading
SOLUTION = ROOT / "solutions" / "00_setup_check.ipynb"


def grade(subs, out, *extra):
    cmd = [sys.executable, "-m", "labkit.cli", "grade", "00", *map(str, subs), "--out", str(out), "--jobs", "2",
           "--no-progress", *extra]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=600, env=dict(os.environ))


def grades(out: Path) -> dict[tuple[str, str], str]:
    with open(out / "grades.csv", newline="") as f:
        return {(r["student"], r["exercise"]): r["points"] for r in csv.DictReader(f)}


def write(folder: Path, name: str, relu: str, quiz: str) -> Path:
    nb = nbformat.read(SOLUTION, as_version=4)
    for c in nb.cells:
        tags = c.metadata.get("tags", [])
        if "answer:00.relu" in tags:
            c.source = f"def relu(x):\n    return {relu}"
        if "answer:00.quiz" in tags:
            c.source = f"quiz_00 = {quiz}"
    path = folder / f"{name}.ipynb"
    nbformat.write(nb, path)
    return path


RIGHT_QUIZ = '{"q1": "b", "q2": "a", "q3": "c", "q4": "a", "q5": "c"}'
WRONG_QUIZ = '{"q1": "a", "q2": "a", "q3": "a", "q4": "a", "q5": "a"}'


def test_regrade_one_learner_and_one_exercise(tmp_path):
    if not sandbox.bwrap_status()[0]:
        pytest.skip("bubblewrap is not usable here: " + sandbox.bwrap_status()[1])
    subs, out = tmp_path / "subs", tmp_path / "out"
    subs.mkdir()
    alice = write(subs, "alice", "np.maximum(x, 0)", RIGHT_QUIZ)
    bob = write(subs, "bob", "np.abs(x)", WRONG_QUIZ)
    r = grade([alice, bob], out)
    assert r.returncode == 0, r.stderr[-2000:]
    first = grades(out)
    assert first[("alice", "00.relu")] == "2" and first[("bob", "00.relu")] != "2"
    alice_before = (out / "students" / "alice" / "results.json").read_text()

    # both learners change their files; only bob is regraded: alice keeps her results, byte for byte
    write(subs, "alice", "np.abs(x)", WRONG_QUIZ)
    write(subs, "bob", "np.maximum(x, 0)", WRONG_QUIZ)
    r = grade([alice, bob], out, "--only", "bob")
    assert r.returncode == 0, r.stderr[-2000:]
    after = grades(out)
    assert (out / "students" / "alice" / "results.json").read_text() == alice_before
    assert after[("alice", "00.relu")] == "2" and after[("bob", "00.relu")] == "2"
    assert set(after) == set(first), "grades.csv lost a learner"

    # only the quiz is regraded: bob fixed it, and his relu result is the one graded before
    write(subs, "bob", "np.abs(x)", RIGHT_QUIZ)
    r = grade([alice, bob], out, "--exercise", "00.quiz")
    assert r.returncode == 0, r.stderr[-2000:]
    last = grades(out)
    assert last[("bob", "00.quiz")] == "2" and last[("bob", "00.relu")] == "2"
    assert last[("alice", "00.quiz")] != "2" and last[("alice", "00.relu")] == "2"  # her new quiz, her old relu
    rec = json.loads((out / "students" / "bob" / "results.json").read_text())
    assert rec["regraded_exercises"] == ["00.quiz"] and rec["points"] == 4

    # what they name must exist
    r = grade([alice, bob], out, "--only", "carol")
    assert r.returncode == 2 and "no such learner" in r.stderr
    r = grade([alice, bob], out, "--exercise", "00.nope")
    assert r.returncode == 2 and "00.relu" in r.stderr

    # the instructor's tools read the regraded run at once
    r = subprocess.run([sys.executable, "-m", "labkit.cli", "grades", "export", str(out), "--to", "csv"],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0 and (out / "grades-wide.csv").read_text().count("\n") == 4, r.stderr
