"""The instructor grader: honest and hostile submissions of lesson 00, malformed files, resume.

Every hostile submission is a real notebook built from lessons/00_setup_check.ipynb with an
attack in an answer cell (or an edited check cell). Each must score no higher than the honest
blank lesson on the exercises it attacks. The batches run once per module (bubblewrap, then the
fallback without it) and the tests read their outputs.
"""
from __future__ import annotations

import copy
import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from labkit import grading, sandbox
from labkit.checks import get, lesson_exercises, quiz_answers
from labkit_judges.l00 import RELU_TESTS

pytestmark = pytest.mark.grading

ROOT = Path(__file__).resolve().parents[1]
SOLUTION = ROOT / "solutions" / "00_setup_check.ipynb"
LESSON = ROOT / "lessons" / "00_setup_check.ipynb"
LABKIT = [sys.executable, "-m", "labkit.cli"]
TIMEOUT = 6           # per cell: lesson 00's graded cells take hundredths of a second (doctor is skip-grading)
NOTEBOOK_TIMEOUT = 150  # per notebook: far more than an honest lesson 00 needs, far less than the test's patience
#: lesson 00's exercises as its specs give them (labkit_judges/l00.py): the attacks replace its ReLU and its quiz
EXERCISES = [e.id for e in lesson_exercises("00")]
RELU = next(e.id for e in lesson_exercises("00") if e.kind == "function")
QUIZ = next(e.id for e in lesson_exercises("00") if e.kind == "quiz")
RIGHT_QUIZ = json.dumps(quiz_answers(QUIZ))
WRONG_QUIZ = json.dumps({k: "a" if v != "a" else "b" for k, v in quiz_answers(QUIZ).items()})
BAD_RELU = "def relu(x):\n    return np.zeros(3)  # wrong on every test\n"

if not (SOLUTION.is_file() and LESSON.is_file()):
    pytest.skip("lesson 00 notebooks are not there yet", allow_module_level=True)


def _nb(path: Path) -> dict:
    return json.loads(path.read_text())


def _cell(nb: dict, tag: str) -> dict:
    return next(c for c in nb["cells"] if tag in c.get("metadata", {}).get("tags", []))


def submission(relu: str | None = None, quiz: str | None = None, edit_checks: str | None = None) -> dict:
    """The blank lesson with the relu/quiz answer cells (and optionally the check cells) replaced."""
    nb = copy.deepcopy(_nb(LESSON))
    if relu is not None:
        _cell(nb, f"answer:{RELU}")["source"] = relu
    if quiz is not None:
        _cell(nb, f"answer:{QUIZ}")["source"] = quiz
    if edit_checks is not None:
        for id in EXERCISES:
            _cell(nb, f"check:{id}")["source"] = edit_checks
    return nb


HOSTILE = {
    # a check cell edited to print success (and the answer left blank)
    "edited_check": submission(edit_checks='print("Passed · 2/2 points")\nlabkit.checks.Result'),
    # labkit.check redefined, plus a forged record in the collect folder
    "redefine_check": submission(relu=(
        "import json, os, labkit, labkit.checks\n"
        "def fake(id, answer=None):\n"
        "    print('Passed', id, 'full points')\n"
        "    return labkit.checks.Result(id, 'x', 'passed', 2.0, 2.0, 'all tests passed')\n"
        "labkit.check = labkit.checks.check = check = fake\n"
        "d = os.path.join(os.environ.get('LABKIT_COLLECT_DIR', '.'), '00.relu')\n"
        "os.makedirs(d, exist_ok=True)\n"
        "open(os.path.join(d, 'status.json'), 'w').write(json.dumps({'status': 'passed', 'message': 'ok', 'points': 2}))\n"
        + BAD_RELU), quiz="quiz_00 = " + WRONG_QUIZ),
    # numpy's comparisons monkeypatched to always agree
    "monkeypatch_numpy": submission(relu=(
        "import numpy, numpy.testing\n"
        "numpy.allclose = lambda *a, **k: True\n"
        "numpy.array_equal = lambda *a, **k: True\n"
        "numpy.testing.assert_allclose = lambda *a, **k: None\n"
        "numpy.testing.assert_array_equal = lambda *a, **k: None\n"
        + BAD_RELU), quiz="quiz_00 = " + WRONG_QUIZ),
    # objects equal to everything
    "always_equal": submission(relu=(
        "class Eq:\n"
        "    def __eq__(self, other): return True\n"
        "    def __ne__(self, other): return False\n"
        "    __hash__ = object.__hash__\n"
        "class S(str):\n"
        "    def __eq__(self, other): return True\n"
        "    __hash__ = str.__hash__\n"
        "def relu(x):\n"
        "    return Eq()\n"), quiz='quiz_00 = {"q1": S("zzz"), "q2": Eq()}'),
    # fake grades written into the working folder, its parents, HOME, /tmp and the grader's --out
    "fake_results": submission(relu=(
        "import os, json\n"
        "fake_csv = 'student,lesson,exercise,points,max_points,status,message\\nfake_results,00,00.relu,2,2,passed,ok\\n'\n"
        "fake_json = json.dumps({'student': 'fake_results', 'points': 4, 'max_points': 4})\n"
        "targets = {os.getcwd(), os.path.expanduser('~'), '/tmp'}\n"
        "d = os.getcwd()\n"
        "while d != os.path.dirname(d):\n"
        "    d = os.path.dirname(d); targets.add(d)\n"
        "for pid in os.listdir('/proc'):\n"
        "    try:\n"
        "        args = open(f'/proc/{pid}/cmdline', 'rb').read().split(b'\\0')\n"
        "        if b'--out' in args: targets.add(args[args.index(b'--out') + 1].decode())\n"
        "    except Exception: pass\n"
        "for t in targets:\n"
        "    for name, text in (('grades.csv', fake_csv), ('results.json', fake_json)):\n"
        "        for where in (t, os.path.join(t, 'fake_results')):\n"
        "            try:\n"
        "                os.makedirs(where, exist_ok=True)\n"
        "                open(os.path.join(where, name), 'w').write(text)\n"
        "            except Exception: pass\n"
        + BAD_RELU), quiz="quiz_00 = " + WRONG_QUIZ),
    # the kernel exits; the next exercise is still graded
    "os_exit": submission(relu="import os\nos._exit(0)\n", quiz="quiz_00 = " + RIGHT_QUIZ),
    # an endless loop: the cell is interrupted, the next exercise is still graded
    "infinite_loop": submission(relu="while True:\n    pass\n", quiz="quiz_00 = " + RIGHT_QUIZ),
    # a loop that swallows the interrupt: the kernel is replaced and the cells before replayed
    "stubborn_loop": submission(relu=("while True:\n    try:\n        while True:\n            pass\n"
                                      "    except BaseException:\n        pass\n"), quiz="quiz_00 = " + RIGHT_QUIZ),
    # 30 GB
    "huge_allocation": submission(relu=("import numpy as np\nhog = np.ones(30 * 10**9 // 8)\n" + BAD_RELU),
                                  quiz="quiz_00 = " + RIGHT_QUIZ),
    # the classic fork bomb: every process forks until the process limit makes fork() fail
    "fork_bomb": submission(relu="import os\nwhile True:\n    os.fork()\n", quiz="quiz_00 = " + RIGHT_QUIZ),
}
ATTACKED = {  # which exercises each attack targets (the others may be answered honestly)
    "edited_check": EXERCISES, "redefine_check": EXERCISES, "monkeypatch_numpy": EXERCISES,
    "always_equal": EXERCISES, "fake_results": EXERCISES, "os_exit": [RELU], "infinite_loop": [RELU],
    "stubborn_loop": [RELU], "huge_allocation": [RELU], "fork_bomb": [RELU],
}
PRIVATE_TESTS = '''
import numpy as np
from labkit.checks import expect_close, judge_spec

spec = judge_spec("00.relu")
base_cases, base_judge = spec.cases, spec.judge

def cases(seed):
    return base_cases(seed) + [(np.array([-1e-30, 0.0, 3e38], dtype=np.float32),)]

def judge(outputs, seed):
    n = len(base_cases(seed))
    yield from base_judge(outputs[:n], seed)
    for (x,), got in zip(cases(seed)[n:], outputs[n:]):
        yield expect_close("private: extreme values", got, np.maximum(x, 0))

spec.cases, spec.judge = cases, judge
spec.tests += ("private: extreme values",)      # every test an exercise can run is declared
spec.skill += ("private: extreme values",)  # a skill test: failing it caps the points at half
'''
FALLBACK_SET = ["os_exit", "huge_allocation", "fork_bomb"]


def _write(folder: Path, name: str, nb: dict) -> Path:
    p = folder / f"{name}.ipynb"
    p.write_text(json.dumps(nb, indent=1))
    return p


def _honest(folder: Path) -> None:
    _write(folder, "solution", _nb(SOLUTION))
    _write(folder, "blank", _nb(LESSON))


def _malformed(folder: Path) -> None:
    (folder / "empty.ipynb").write_text("")
    (folder / "corrupt.ipynb").write_text('{"cells": [ {"cell_type": "code", "source": "x')
    (folder / "notes.txt").write_text("I did the lesson, honest.\n")
    other = ROOT / "lessons" / "01_onnx_concepts.ipynb"
    other_nb = _nb(other) if other.is_file() else {
        "cells": [{"cell_type": "code", "id": "zz1", "metadata": {"tags": ["answer:01.sigmoid_model"]},
                   "source": "x = 1", "outputs": [], "execution_count": None}],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    _write(folder, "other_lesson", other_nb)
    nb = submission(quiz="quiz_00 = " + RIGHT_QUIZ)
    nb["cells"] = [c for c in nb["cells"] if f"answer:{RELU}" not in c.get("metadata", {}).get("tags", [])]
    _write(folder, "no_relu_cell", nb)
    # the solution's answers, plus an added cell and an edited instructor cell (reported, not run)
    nb = _nb(SOLUTION)
    nb["cells"].insert(3, {"cell_type": "code", "id": "added01", "metadata": {}, "outputs": [],
                           "execution_count": None, "source": "raise SystemExit('an added cell must not run')"})
    nb["cells"][2]["source"] = "raise SystemExit('an edited cell must not run')"
    nb["metadata"]["labkit"] = {"student": "Edith Editor"}
    _write(folder, "edited_cells", nb)


def run_grade(lesson: str, subs: list[Path], out: Path, *extra: str, env: dict | None = None,
              timeout: float = 900) -> subprocess.CompletedProcess:
    cmd = LABKIT + ["grade", lesson, *map(str, subs), "--out", str(out), "--jobs", "2",
                    "--timeout", str(TIMEOUT), "--notebook-timeout", str(NOTEBOOK_TIMEOUT), "--no-progress", *extra]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=timeout,
                          env={**os.environ, **(env or {})})


def read_grades(out: Path) -> dict[tuple[str, str], dict]:
    with open(out / "grades.csv", newline="") as f:
        return {(r["student"], r["exercise"]): r for r in csv.DictReader(f)}


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    """One bubblewrap batch: honest, hostile and malformed submissions together."""
    if not sandbox.bwrap_status()[0]:
        pytest.skip("bubblewrap is not usable here: " + sandbox.bwrap_status()[1])
    subs = tmp_path_factory.mktemp("class")
    _honest(subs)
    for name, nb in HOSTILE.items():
        if name == "fork_bomb" and not sandbox.process_limit()[0]:
            continue  # never start a fork bomb that nothing would bound
        _write(subs, name, nb)
    _malformed(subs)
    out = tmp_path_factory.mktemp("grading") / "out"
    t0 = time.monotonic()
    proc = run_grade("00", [subs], out)
    seconds = time.monotonic() - t0
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {"subs": subs, "out": out, "proc": proc, "grades": read_grades(out), "seconds": seconds}


def _points(grades, student, exercise) -> float:
    return float(grades[(student, exercise)]["points"])


def test_outputs_and_columns(batch):
    out = batch["out"]
    with open(out / "grades.csv", newline="") as f:
        header = next(csv.reader(f))
    assert header == ["student", "name", "lesson", "exercise", "points", "max_points", "status", "message"]
    assert (out / "histogram.png").stat().st_size > 1000
    for student in ["solution", "blank", *(h for h in HOSTILE if (h, RELU) in batch["grades"])]:
        rec = json.loads((out / "students" / student / "results.json").read_text())
        assert rec["student"] == student and rec["lesson"] == "00"
        assert rec["protection"] == "sandbox"
        html = (out / "students" / student / "feedback.html").read_text()
        assert all(id in html for id in EXERCISES)
    # each worker keeps one warm verdict process: only its first submission pays the imports
    graded = [json.loads(p.read_text()) for p in (out / "students").glob("*/results.json")]
    slow = [r["student"] for r in graded if (r.get("judge_seconds") or 0) >= 1.0]
    assert len(slow) <= 4, slow
    statuses = {r["status"] for r in batch["grades"].values()}
    assert statuses <= {"passed", "failed", "not_attempted", "error", "timeout", "missing"}
    assert RELU in batch["proc"].stdout and "bubblewrap" in batch["proc"].stdout  # the summary table


def test_solution_full_marks_blank_zero(batch):
    g = batch["grades"]
    for ex in EXERCISES:
        assert g[("solution", ex)]["status"] == "passed"
        assert _points(g, "solution", ex) == float(g[("solution", ex)]["max_points"]) == get(ex).points > 0
        assert g[("blank", ex)]["status"] == "not_attempted" and _points(g, "blank", ex) == 0


@pytest.mark.parametrize("attack", list(HOSTILE))
def test_hostile_no_higher_than_blank(batch, attack):
    g = batch["grades"]
    if (attack, RELU) not in g:
        pytest.skip(f"{attack} was not run here")
    for ex in ATTACKED[attack]:
        assert _points(g, attack, ex) <= _points(g, "blank", ex), (attack, ex, g[(attack, ex)])
        assert g[(attack, ex)]["status"] != "passed", (attack, ex, g[(attack, ex)])


@pytest.mark.parametrize("attack", ["os_exit", "infinite_loop", "stubborn_loop", "huge_allocation", "fork_bomb"])
def test_rest_still_graded(batch, attack):
    """A crash, hang, memory blow-up or fork bomb in one answer costs only that exercise."""
    if (attack, QUIZ) not in batch["grades"]:
        pytest.skip(f"{attack} was not run here")
    assert batch["grades"][(attack, QUIZ)]["status"] == "passed", batch["grades"][(attack, QUIZ)]


def test_statuses_and_messages(batch):
    g = batch["grades"]
    assert g[("infinite_loop", RELU)]["status"] == "timeout"
    assert "limit" in g[("infinite_loop", RELU)]["message"]
    assert g[("stubborn_loop", RELU)]["status"] == "timeout"
    assert g[("os_exit", RELU)]["status"] == "error" and "kernel died" in g[("os_exit", RELU)]["message"]
    assert g[("edited_check", RELU)]["status"] == "not_attempted"
    assert "check cell above this exercise was edited" in g[("edited_check", RELU)]["message"]
    assert g[("always_equal", RELU)]["status"] == "failed"
    assert "not a number" in g[("always_equal", RELU)]["message"]
    assert g[("monkeypatch_numpy", RELU)]["status"] == "failed"
    # (the judge compares form first: the shape, or since relu keeps the input's dtype, the dtype)
    assert any(s in g[("monkeypatch_numpy", RELU)]["message"] for s in ("expected shape", "expected dtype"))


def test_fake_result_files_change_nothing(batch):
    out, subs = batch["out"], batch["subs"]
    assert not (out / "students" / "fake_results" / "grades.csv").exists()
    rec = json.loads((out / "students" / "fake_results" / "results.json").read_text())
    assert rec["points"] == 0 and rec["student"] == "fake_results"
    students = {k[0] for k in batch["grades"]}
    assert "fake_results" in students and len([k for k in batch["grades"] if k[0] == "fake_results"]) == 2
    for folder in (subs, subs.parent, out.parent, ROOT):
        assert not (folder / "grades.csv").exists(), folder
        assert not (folder / "results.json").exists(), folder
    assert "fake_results,00,00.relu,2" not in (out / "grades.csv").read_text()


def test_bounded_time(batch):
    """Hangs cost a cell limit (plus a kernel restart for a loop that swallows the interrupt), not more."""
    out = batch["out"]
    for name, bound in (("infinite_loop", TIMEOUT + 45), ("stubborn_loop", 2 * TIMEOUT + 75)):
        rec = json.loads((out / "students" / name / "results.json").read_text())
        assert rec["seconds"] is not None and rec["seconds"] < bound, (name, rec["seconds"], bound)
    # the whole batch: ~25 files on 2 jobs, each well under a minute; the subprocess would give up at 900 s
    assert batch["seconds"] < 480, batch["seconds"]


def test_malformed_submissions(batch):
    g = batch["grades"]
    assert g[("empty", RELU)]["status"] == "error" and "empty" in g[("empty", RELU)]["message"]
    assert g[("corrupt", RELU)]["status"] == "error" and "corrupt" in g[("corrupt", RELU)]["message"]
    # a .txt is a problem file, listed in run.json, never a learner with rows of its own
    assert not any(student == "notes" for student, _ in g)
    problems = json.loads((batch["out"] / "run.json").read_text())["problem_files"]
    assert [Path(p["submission"]).name for p in problems] == ["notes.txt"] and "not a Jupyter notebook" in problems[0]["why"]
    other = g[("other_lesson", RELU)]
    assert other["status"] == "missing" and "lesson" in other["message"]
    assert g[("no_relu_cell", RELU)]["status"] == "missing"
    assert "no answer cell" in g[("no_relu_cell", RELU)]["message"]
    assert g[("no_relu_cell", QUIZ)]["status"] == "passed"  # the rest of that notebook is graded
    for (student, _), row in g.items():
        assert float(row["points"]) <= float(row["max_points"])


def test_edited_and_added_cells_reported_not_run(batch):
    g = batch["grades"]
    # the learner is named by the file; the metadata's other name ("Edith Editor") never overrides it
    assert ("edited_cells", RELU) in g and not any(k[0].startswith("edith") for k in g)
    assert g[("edited_cells", RELU)]["status"] == "passed"
    assert g[("edited_cells", QUIZ)]["status"] == "passed"
    msg = g[("edited_cells", RELU)]["message"]
    assert "edited" in msg and "added" in msg


def test_resume_skips_graded(batch):
    t0 = time.monotonic()
    proc = run_grade("00", [batch["subs"]], batch["out"])
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "reused their grades" in proc.stderr
    assert time.monotonic() - t0 < 60
    assert read_grades(batch["out"]) == batch["grades"]


def test_no_sandbox_is_refused_unless_asked(tmp_path):
    """Without bubblewrap: no silent fallback; as root, not even with --no-sandbox."""
    subs = tmp_path / "class"
    subs.mkdir()
    _write(subs, "solution", _nb(SOLUTION))
    proc = run_grade("00", [subs], tmp_path / "out", env={"LABKIT_NO_BWRAP": "1"})
    assert proc.returncode == 2 and "no usable sandbox" in proc.stderr and "--no-sandbox" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "out" / "grades.csv").exists()
    if os.geteuid() == 0:
        proc = run_grade("00", [subs], tmp_path / "out", "--no-sandbox", env={"LABKIT_NO_BWRAP": "1"})
        assert proc.returncode == 2 and "never runs submissions as root" in proc.stderr, proc.stderr
        assert not (tmp_path / "out" / "grades.csv").exists()


def test_no_sandbox_as_ordinary_user(tmp_path):
    """--no-sandbox (not root): resource limits and process-tree killing hold, the mode is recorded,
    what is not guaranteed is printed, and nothing this grading started outlives it."""
    if sys.platform != "linux" or os.geteuid() == 0:
        pytest.skip("the no-sandbox mode runs only for an ordinary user on Linux (this is root)")
    subs = tmp_path / "class"
    subs.mkdir()
    for name in FALLBACK_SET:
        _write(subs, name, HOSTILE[name])
    _write(subs, "solution", _nb(SOLUTION))
    token = f"{os.getpid()}-{time.time_ns()}"
    proc = run_grade("00", [subs], tmp_path / "out", "--no-sandbox",
                     env={"LABKIT_NO_BWRAP": "1", "LABKIT_TEST_MARK": token})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "NOT GUARANTEED" in proc.stderr
    g = read_grades(tmp_path / "out")
    assert g[("solution", RELU)]["status"] == "passed"
    for name in FALLBACK_SET:
        assert _points(g, name, RELU) == 0, g[(name, RELU)]
        assert g[(name, QUIZ)]["status"] == "passed", g[(name, QUIZ)]
        rec = json.loads((tmp_path / "out" / "students" / name / "results.json").read_text())
        assert rec["protection"] == "no-sandbox"
    time.sleep(0.5)
    assert not _processes("\0", token), "a process of this grading outlived it"


def test_private_extra_tests(tmp_path):
    """--extra-tests (docs/instructors.md): the private cases run, in the verdict process only."""
    if not sandbox.bwrap_status()[0]:
        pytest.skip("bubblewrap is not usable here")
    subs = tmp_path / "class"
    subs.mkdir()
    _write(subs, "solution", _nb(SOLUTION))
    extra = tmp_path / "private_00.py"
    extra.write_text(PRIVATE_TESTS)
    proc = run_grade("00", [subs], tmp_path / "out", "--extra-tests", str(extra))
    assert proc.returncode == 0, proc.stderr[-3000:]
    g = read_grades(tmp_path / "out")
    assert g[("solution", RELU)]["message"].startswith(f"all {len(RELU_TESTS) + 1} tests passed")  # + 1 private
    rec = json.loads((tmp_path / "out" / "students" / "solution" / "results.json").read_text())
    assert "private: extreme values" in [t["name"] for t in rec["exercises"][0]["tests"]]


def test_grader_errors_exit_nonzero(tmp_path):
    nb = tmp_path / "a.ipynb"
    nb.write_text(json.dumps(_nb(LESSON)))
    proc = run_grade("99", [nb], tmp_path / "out")
    assert proc.returncode == 2 and "unknown lesson" in proc.stderr
    proc = run_grade("00", [tmp_path / "nope.ipynb"], tmp_path / "out")
    assert proc.returncode == 2 and "no such submission" in proc.stderr


def test_rebuild_uses_only_answer_cells():
    lesson = grading.load_lesson(grading.resolve_lesson("00"))
    nb = submission(relu="def relu(x):\n    return x\n", edit_checks="print('hacked')")
    nb["cells"].append({"cell_type": "code", "id": "extra1", "metadata": {}, "source": "print('extra')",
                        "outputs": [], "execution_count": None})
    rebuilt = grading.build_run(lesson, nb)
    cells, notes, missing = rebuilt.cells, rebuilt.notes, rebuilt.missing
    sources = "\n".join(c.source for c in cells)
    assert "def relu(x):\n    return x" in sources
    assert "hacked" not in sources and "extra" not in sources
    assert 'check("00.relu", relu)' in sources
    assert "QUICK = True" in sources
    assert "wrong_relu" not in sources  # skip-grading cells are left out
    assert not missing
    assert any("edited" in n for n in notes[RELU]) and any("added" in n for n in notes[QUIZ])
    # found by cell id when the tag is gone
    nb2 = submission(relu="def relu(x):\n    return np.maximum(x, 0)\n")
    _cell(nb2, f"answer:{RELU}")["metadata"]["tags"] = []
    rebuilt = grading.build_run(lesson, nb2)
    assert "np.maximum(x, 0)" in "\n".join(c.source for c in rebuilt.cells)
    notes = rebuilt.notes
    assert any("cell id" in n for n in notes[RELU])


def test_student_ids_unique_and_safe(tmp_path):
    lesson = grading.load_lesson(grading.resolve_lesson("00"))
    a = tmp_path / "alice.ipynb"
    b = tmp_path / "bob.ipynb"
    nb = _nb(LESSON)
    nb["metadata"]["labkit"] = {"student": "../alice"}
    a.write_text(json.dumps(_nb(LESSON)))
    b.write_text(json.dumps(nb))
    subs = [grading.read_submission(p, lesson) for p in (a, b)]
    grading.assign_students(subs)
    names = [s.student for s in subs]
    assert len(set(names)) == 2 and all("/" not in n and not n.startswith(".") for n in names)


def test_csv_injection_is_neutralised(tmp_path):
    grading.write_csv(tmp_path / "g.csv", [{"student": "=cmd()", "name": "+HYPERLINK(x)", "lesson": "00",
                                            "exercise": "00.relu", "points": 0.0, "max_points": 2.0,
                                            "status": "failed", "message": "@SUM(A1)"}])
    text = (tmp_path / "g.csv").read_text()
    assert "'=cmd()" in text and "'+HYPERLINK(x)" in text and "'@SUM(A1)" in text


def test_recorded_answers_copied_without_links(tmp_path):
    """A submission may plant links in its answer folder; the verdict never follows them."""
    src = tmp_path / "answers"
    (src / RELU).mkdir(parents=True)
    (src / "00.relu" / "answer.json").write_text('{"__onnx__": "m1.onnx"}')
    os.symlink("/etc/hostname", src / "00.relu" / "m1.onnx")
    os.symlink(tmp_path, src / QUIZ)
    problems = grading.copy_answers(src, tmp_path / "copy")
    assert (tmp_path / "copy" / "00.relu" / "answer.json").is_file()
    assert not (tmp_path / "copy" / "00.relu" / "m1.onnx").exists()
    assert not (tmp_path / "copy" / QUIZ).exists()
    assert any("not a regular file" in p for p in problems)


def test_killed_grader_leaves_nothing_running(tmp_path):
    """`kill` on the grader stops its workers and their kernels at once, and removes its temporary folder."""
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "loop.ipynb").write_text(json.dumps(HOSTILE["infinite_loop"]))
    out = tmp_path / "out"
    token = f"{os.getpid()}-{time.time_ns()}"  # inherited by the grader's workers (not by kernels: scrubbed env)
    env = dict(os.environ, LABKIT_TEST_MARK=token)
    proc = subprocess.Popen(LABKIT + ["grade", "00", str(subs), "--out", str(out), "--jobs", "1", "--timeout", "300",
                                      "--no-progress"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=env, start_new_session=True)

    def ours() -> tuple[dict[int, str], dict[int, str], list[Path]]:
        """(workers, kernels, temporary roots) of this grader: workers carry the token; kernels (and
        the kernel server they are forked from) run `labkit.grading.forkserver` with a slot in a
        temporary root this grader owns."""
        roots = [r for r in Path(tempfile.gettempdir()).glob("labkit-grade-*")
                 if (r / "owner.pid").is_file() and (r / "owner.pid").read_text().strip() == str(proc.pid)]
        workers, kernels = {}, {}
        for line in _processes("\0", token):
            pid, cmd = line.split(": ", 1)
            workers[int(pid)] = cmd
        for line in _processes("labkit.grading.forkserver", "\0", cmdline_only=True):
            pid, cmd = line.split(": ", 1)
            full = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace") if Path(f"/proc/{pid}").exists() else ""
            if any(str(r) in full for r in roots):
                kernels[int(pid)] = cmd
        return workers, kernels, roots

    deadline = time.monotonic() + 120
    workers, kernels, roots = {}, {}, []
    while time.monotonic() < deadline and not kernels:
        time.sleep(0.5)
        workers, kernels, roots = ours()
    time.sleep(3)  # let the kernel reach the loop
    workers, kernels, roots = ours()
    proc.terminate()
    proc.wait(timeout=30)
    deadline = time.monotonic() + 10
    alive = lambda: [p for p in [*workers, *kernels] if _alive(p)]  # noqa: E731
    while time.monotonic() < deadline and alive():
        time.sleep(0.5)
    assert kernels, "the grader never started a kernel (nothing to check)"
    assert [p for p in workers if p != proc.pid], "no grading worker was found (nothing to check)"
    assert not alive(), f"processes of the killed grader are still running: {alive()}"
    assert roots and not any(r.exists() for r in roots), f"temporary folders left behind: {roots}"


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _processes(cmd_text: str, env_text: str, cmdline_only: bool = False) -> list[str]:
    """Command lines of processes whose command line holds `cmd_text` or whose environment holds
    `LABKIT_TEST_MARK=env_text` (pass "\\0" to match on one of the two only)."""
    found = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit() or int(d.name) == os.getpid():
            continue
        try:
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            environ = b"" if cmdline_only else (d / "environ").read_bytes()
        except OSError:
            continue
        if cmd_text in cmd or f"LABKIT_TEST_MARK={env_text}".encode() in environ.split(b"\0"):
            found.append(f"{d.name}: {cmd[:80]}")
    return found
