"""Regrading one learner (`--only`) or one exercise (`--exercise`) leaves everyone else's results alone,
and `labkit grades` reads the result straight away (lesson 00, under bubblewrap)."""
from __future__ import annotations

import csv
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from labkit import sandbox
from labkit.checks import get, quiz_answers

from conftest import ROOT
from grading_util import unprivileged_python_problem

pytestmark = pytest.mark.grading
SOLUTION = ROOT / "solutions" / "00_setup_check.ipynb"
RELU, QUIZ = get("00.relu"), get("00.quiz")
#: full marks as grades.csv writes them, from the specs (labkit_judges/l00.py)
FULL_RELU, FULL_QUIZ = f"{RELU.points:g}", f"{QUIZ.points:g}"


def grade(subs, out, *extra):
    cmd = [sys.executable, "-m", "labkit.cli", "grade", "00", *map(str, subs), "--out", str(out), "--jobs", "1",
           "--no-progress", *extra]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=600, env=dict(os.environ))


def grades(out: Path) -> dict[tuple[str, str], str]:
    with open(out / "grades.csv", newline="") as f:
        return {(r["student"], r["exercise"]): r["points"] for r in csv.DictReader(f)}


def write(folder: Path, name: str, relu: str, quiz: str) -> Path:
    nb = nbformat.read(SOLUTION, as_version=4)
    for c in nb.cells:
        tags = c.metadata.get("tags", [])
        if f"answer:{RELU.id}" in tags:
            c.source = f"def relu(x):\n    return {relu}"
        if f"answer:{QUIZ.id}" in tags:
            c.source = f"quiz_00 = {quiz}"
    path = folder / f"{name}.ipynb"
    nbformat.write(nb, path)
    return path


RIGHT_QUIZ = json.dumps(quiz_answers(QUIZ.id))
WRONG_QUIZ = json.dumps({k: "a" if v != "a" else "b" for k, v in quiz_answers(QUIZ.id).items()})


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
    assert first[("alice", RELU.id)] == FULL_RELU and first[("bob", RELU.id)] != FULL_RELU
    alice_before = (out / "students" / "alice" / "results.json").read_text()

    # both learners change their files; only bob is regraded: alice keeps her results, byte for byte
    write(subs, "alice", "np.abs(x)", WRONG_QUIZ)
    write(subs, "bob", "np.maximum(x, 0)", WRONG_QUIZ)
    r = grade([alice, bob], out, "--only", "bob")
    assert r.returncode == 0, r.stderr[-2000:]
    after = grades(out)
    assert (out / "students" / "alice" / "results.json").read_text() == alice_before
    assert after[("alice", RELU.id)] == FULL_RELU and after[("bob", RELU.id)] == FULL_RELU
    assert set(after) == set(first), "grades.csv lost a learner"

    # only the quiz is regraded: bob fixed it, and his relu result is the one graded before
    write(subs, "bob", "np.abs(x)", RIGHT_QUIZ)
    r = grade([alice, bob], out, "--exercise", QUIZ.id)
    assert r.returncode == 0, r.stderr[-2000:]
    last = grades(out)
    assert last[("bob", QUIZ.id)] == FULL_QUIZ and last[("bob", RELU.id)] == FULL_RELU
    assert last[("alice", QUIZ.id)] != FULL_QUIZ and last[("alice", RELU.id)] == FULL_RELU  # her new quiz, her old relu
    rec = json.loads((out / "students" / "bob" / "results.json").read_text())
    assert rec["regraded_exercises"] == [QUIZ.id] and rec["points"] == RELU.points + QUIZ.points

    # what they name must exist
    r = grade([alice, bob], out, "--only", "carol")
    assert r.returncode == 2 and "no such learner" in r.stderr
    r = grade([alice, bob], out, "--exercise", "00.nope")
    assert r.returncode == 2 and RELU.id in r.stderr

    # the instructor's tools read the regraded run at once
    r = subprocess.run([sys.executable, "-m", "labkit.cli", "grades", "export", str(out), "--to", "csv"],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0 and (out / "grades-wide.csv").read_text().count("\n") == 4, r.stderr


# ---------------------------------------------------------------- identity, end to end with real kernels


def test_non_latin_names_and_a_late_resubmission_each_get_their_own_grade(tmp_path):
    """Real grading: names in three scripts and a Canvas late resubmission; every output agrees."""
    if not sandbox.bwrap_status()[0]:
        pytest.skip("bubblewrap is not usable here: " + sandbox.bwrap_status()[1])
    subs, out = tmp_path / "class", tmp_path / "out"
    subs.mkdir()
    write(subs, "Zoë Müller", "np.maximum(x, 0)", RIGHT_QUIZ)                          # 4
    write(subs, "王小明", "np.abs(x)", WRONG_QUIZ)                                       # relu 0
    write(subs, "petrovivan_1003_558_00_setup_check", "np.abs(x)", RIGHT_QUIZ)         # the first try: not graded
    write(subs, "petrovivan_late_1003_559_00_setup_check-1", "np.maximum(x, 0)", WRONG_QUIZ)  # relu 2
    r = grade([subs], out)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "petrovivan: 2 files; graded the latest" in r.stderr
    run = json.loads((out / "run.json").read_text())
    by_name = {m["name"]: m["student"] for m in run["learners"]}
    assert set(by_name) == {"Zoë Müller", "王小明", "petrovivan"}
    g = grades(out)
    assert g[(by_name["Zoë Müller"], RELU.id)] == FULL_RELU and g[(by_name["Zoë Müller"], QUIZ.id)] == FULL_QUIZ
    assert g[(by_name["王小明"], RELU.id)] != FULL_RELU and g[(by_name["王小明"], QUIZ.id)] != FULL_QUIZ
    assert g[(by_name["petrovivan"], RELU.id)] == FULL_RELU and g[(by_name["petrovivan"], QUIZ.id)] != FULL_QUIZ
    assert len({k[0] for k in g}) == 3
    zoe = (out / "students" / by_name["Zoë Müller"] / "feedback.html").read_text()
    assert "feedback for Zoë Müller" in zoe
    # feedback from another folder finds every notebook
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    r = subprocess.run([sys.executable, "-m", "labkit.cli", "grades", "feedback", str(out), "--out", "back"],
                       capture_output=True, text=True, cwd=elsewhere)
    assert r.returncode == 0 and "3 with their notebook annotated" in r.stdout, r.stderr
    nb = json.loads((elsewhere / "back" / by_name["王小明"] / "00_setup_check.ipynb").read_text())
    assert "王小明" in nb["cells"][0]["source"]


def _autograder_root(tmp_path: Path, lesson: str) -> Path:
    root = tmp_path / "autograder"
    (root / "submission").mkdir(parents=True)
    zpath = tmp_path / "autograder.zip"
    r = subprocess.run([sys.executable, "-m", "labkit.cli", "grades", "gradescope-autograder", lesson, "--out",
                        str(zpath)], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    import zipfile

    with zipfile.ZipFile(zpath) as zf:
        names = zf.namelist()
        assert {"setup.sh", "run_autograder", "labkit-autograder.json"} <= set(names)
        assert any(n.startswith("course/labkit_judges/") for n in names) and "course/pyproject.toml" in names
        zf.extractall(root / "source")
    for f in ("setup.sh", "run_autograder"):
        os.chmod(root / "source" / f, 0o755)
        assert subprocess.run(["bash", "-n", str(root / "source" / f)]).returncode == 0
    return root


def _run_autograder(root: Path, **env) -> dict:
    r = subprocess.run([str(root / "source" / "run_autograder")], capture_output=True, text=True, timeout=600,
                       env={**os.environ, "LABKIT_AUTOGRADER_ROOT": str(root), "LABKIT_AUTOGRADER_PYTHON": sys.executable,
                            **env})
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads((root / "results" / "results.json").read_text())


def test_gradescope_autograder_grades_a_solution_and_a_blank_lesson(tmp_path):
    """The bundle, unpacked into a simulated /autograder root: Gradescope's results.json for lesson 01."""
    if not sandbox.bwrap_status()[0]:
        pytest.skip("bubblewrap is not usable here: " + sandbox.bwrap_status()[1])
    root = _autograder_root(tmp_path, "01")
    shutil.copy(ROOT / "solutions" / "01_onnx_concepts.ipynb", root / "submission" / "01_onnx_concepts.ipynb")
    res = _run_autograder(root)
    assert res["score"] == sum(t["max_score"] for t in res["tests"]) > 0
    assert all(t["status"] == "passed" for t in res["tests"]) and len(res["tests"]) >= 3
    assert res["extra_data"]["protection"] == "sandbox" and res["extra_data"]["answers_root_only"]["solution"]
    for t in res["tests"]:
        assert set(t) >= {"name", "score", "max_score", "output", "status", "visibility"}
    shutil.rmtree(root / "results")
    (root / "submission" / "01_onnx_concepts.ipynb").unlink()
    shutil.copy(ROOT / "lessons" / "01_onnx_concepts.ipynb", root / "submission" / "my work.ipynb")
    res = _run_autograder(root)
    assert res["score"] == 0 and all(t["score"] == 0 for t in res["tests"])
    assert any("not_attempted" in t["output"] for t in res["tests"])
    assert stat.S_IMODE(os.stat(root / "source").st_mode) == 0o700


def test_gradescope_unprivileged_mode_kernel_cannot_read_answers(tmp_path):
    """Without bubblewrap (as in Gradescope's container) the kernel runs as an unprivileged uid: it reads
    world-readable files, but not the solution, the configuration, the work folder or the results."""
    if os.geteuid() != 0:
        pytest.skip("the unprivileged-user mode is for a root grader (as in Gradescope)")
    if unprivileged_python_problem():
        pytest.skip(unprivileged_python_problem())
    root = _autograder_root(tmp_path, "00")
    secrets = [root / "source" / "course" / "solutions" / "00_setup_check.ipynb", root / "source" / "labkit-autograder.json",
               root / "work", root / "results"]
    nb = nbformat.read(ROOT / "lessons" / "00_setup_check.ipynb", as_version=4)
    for c in nb.cells:
        if f"answer:{RELU.id}" in c.metadata.get("tags", []):
            c.source = (f"import os\nleaks = []\nfor p in {[str(s) for s in secrets]!r}:\n    try:\n"
                        "        os.listdir(p) if os.path.isdir(p) else open(p).read(10)\n        leaks.append(p)\n"
                        "    except OSError:\n        pass\n"
                        "control = open('/etc/hostname').read() is not None  # world-readable: must work\n"
                        "ok = control and os.getuid() != 0 and not leaks\n"
                        "def relu(x):\n    return np.maximum(x, 0) if ok else np.abs(x)\n")
    nbformat.write(nb, root / "submission" / "00_setup_check.ipynb")
    res = _run_autograder(root, LABKIT_AUTOGRADER_PROTECTION="unprivileged-user")
    assert res["extra_data"]["protection"] == "unprivileged-user"
    relu = next(t for t in res["tests"] if t["name"].startswith(RELU.id))
    assert relu["score"] == relu["max_score"], "the kernel read a secret, ran as root, or could not run: " + relu["output"]


def test_grades_csv_after_ctrl_c_comes_from_the_saved_records_with_overrides(tmp_path):
    """Ctrl-C in the middle of a regrade: grades.csv is written once more, by the one writer, from the
    records on disk with the instructor's overrides applied (before issue 31 it was the interrupted
    run's memory: only the learners regraded so far, no override)."""
    import signal
    import time

    if not sandbox.bwrap_status()[0]:
        pytest.skip("bubblewrap is not usable here: " + sandbox.bwrap_status()[1])
    subs, out = tmp_path / "subs", tmp_path / "out"
    subs.mkdir()
    people = [write(subs, n, "np.maximum(x, 0)" if n != "bob" else "np.abs(x)", RIGHT_QUIZ)
              for n in ("alice", "bob", "carol", "dave", "erin", "frank")]
    r = grade(people, out)
    assert r.returncode == 0, r.stderr[-2000:]
    (out / "overrides.csv").write_text(f"student,exercise,points,reason\nbob,{RELU.id},1.5,checked by hand\n")
    t0 = time.time()
    proc = subprocess.Popen([sys.executable, "-m", "labkit.cli", "grade", "00", *map(str, people), "--out", str(out),
                             "--jobs", "1", "--no-progress", "--force"], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            # a terminal's grader: a run started in the background of a script (`cmd &`) inherits
                            # SIGINT ignored, and Python then never turns Ctrl-C into KeyboardInterrupt
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 300
    while proc.poll() is None and time.monotonic() < deadline:  # until one learner is regraded, no longer:
        if any(p.stat().st_mtime > t0 for p in (out / "students").glob("*/results.json")):  # (five to go)
            break
        time.sleep(0.01)
    os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C in a terminal: the whole foreground group
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err[-2000:]
    g = grades(out)
    assert {s for s, _ in g} == {"alice", "bob", "carol", "dave", "erin", "frank"}, "grades.csv lost learners"
    assert g[("bob", RELU.id)] == "1.5"
    with open(out / "grades.csv", newline="") as f:
        bob = next(row for row in csv.DictReader(f) if row["student"] == "bob" and row["exercise"] == RELU.id)
    assert "[override:" in bob["message"] and "checked by hand" in bob["message"]
