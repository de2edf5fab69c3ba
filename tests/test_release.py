"""The graded release (`labkit release`, labkit/edition.py; issue 33), installed into a fresh venv.

Built for lesson 00 only (its solution runs in seconds; the other lessons take the same code path, their
public checks are tested in tests/test_public_checks.py, each runs in the grader with labkit_judges hidden
in tests/test_grading_lessons.py, and here every module the release ships imports in it and no lesson
imports what it leaves out; `labkit release` over all twelve lessons was run by hand, see docs): the venv gets labkit from the release
(`pip install --no-deps`), the heavy pinned packages through a .pth to the project's site-packages (which
holds no `labkit`: it is an editable install whose hook a plain path entry does not run). Proves: no
quiz key, judge source or solution line is readable from it; the blank lesson runs in it without
crashing and reads "not attempted"; its public checks pass a right answer and fail a wrong one; a notebook
solved in it gets full marks from `labkit grade` in the repository. Cost: three kernels (the solution
while building, the blank lesson, the grader's sandboxed run) and a pip install; measured 190 s wall at
load average 15 on 2 cores, most of it waiting for CPU (the grader alone took 140 s there)."""
from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from labkit import sandbox
from labkit.checks import lesson_exercises
from labkit.checks.judging import judge_spec
from labkit.edition import LEARNER_DIR, build

from grading_util import with_answers

pytestmark = pytest.mark.grading

ROOT = Path(__file__).resolve().parents[1]
LESSON = "00_setup_check"
#: distinctive lines are at least this long: shorter ones (`return x`) occur anywhere
MIN_LINE = 28


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    """(release folder, the venv's python, the venv's site-packages)."""
    tmp = tmp_path_factory.mktemp("release")
    build(tmp / "out", ["00"], log=lambda *_: None)
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / "bin" / "python"
    site = Path(subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    (site / "course-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "--quiet", "--no-deps",
                    "--no-build-isolation", str(tmp / "out" / LEARNER_DIR)], check=True, capture_output=True)
    return tmp / "out", py, site


def run_in(py: Path, code: str, cwd: Path) -> str:
    proc = subprocess.run([str(py), "-c", code], capture_output=True, text=True, cwd=cwd, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_labkit_comes_from_the_release_without_judges(release, tmp_path):
    out, py, site = release
    got = json.loads(run_in(py, "import json, importlib.util as u, labkit; print(json.dumps([labkit.__file__, "
                                "[bool(u.find_spec(m)) for m in ('labkit_judges', 'labkit.grading', 'labkit.assign')]]))",
                            tmp_path))
    assert got[0].startswith(str(site)) and got[1] == [False, False, False]
    proc = subprocess.run([str(py), "-m", "labkit.cli", "grade", "00", "x.ipynb"], capture_output=True, text=True,
                          cwd=tmp_path)
    assert proc.returncode == 2 and "for instructors" in proc.stderr and "Traceback" not in proc.stderr


def _source_lines(paths) -> set[str]:
    """The stripped lines of these .py files and notebooks' cells."""
    out = set()
    for p in paths:
        text = p.read_text(errors="replace")
        if p.suffix == ".ipynb":
            text = "\n".join("".join(c["source"]) for c in json.loads(text)["cells"])
        out.update(line.strip() for line in text.splitlines())
    return out


def _learner_visible() -> tuple[set[str], str]:
    """What the learner side of the course shows by design in both editions (the lessons, the generated
    exercise modules with titles, hints and questions, the learner-side library): its lines, and the text
    of the exercise modules."""
    skip = {"grading", "edition.py", "assign.py", "lesson_time.py", "sandbox.py"}
    files = [p for p in (ROOT / "labkit").rglob("*.py") if not set(p.relative_to(ROOT / "labkit").parts) & skip]
    exercises = "\n".join(p.read_text() for p in (ROOT / "labkit" / "exercises").glob("l*.py"))
    return _source_lines([*files, *(ROOT / "lessons").glob("*.ipynb")]), exercises


def _secrets() -> dict[str, str]:
    """What must not be readable from a release: each quiz explanation, each line of a solution block and
    each line of a judge module, unless the learner side shows it anyway (a hint naming an API)."""
    visible, exercises = _learner_visible()
    found = {}
    for stem in sorted({p.stem[:2] for p in (ROOT / "solutions").glob("*.ipynb")}):
        for e in lesson_exercises(stem):
            for q, (_, why) in (judge_spec(e.id).key or {}).items():
                if len(why) >= MIN_LINE and why[:60] not in exercises:
                    found[why[:60]] = f"{e.id}.{q} explanation"
    for nb in (ROOT / "solutions").glob("*.ipynb"):
        for cell in json.loads(nb.read_text())["cells"]:
            for block in re.findall(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", "".join(cell["source"]), re.S):
                for line in block.splitlines():
                    s = line.strip()
                    if len(s) >= MIN_LINE and not s.startswith("# STUB") and s not in visible:
                        found[s] = f"{nb.name} solution"
    for judge in (ROOT / "labkit_judges").glob("l*.py"):
        for line in judge.read_text().splitlines():
            s = line.strip()
            if len(s) >= 40 and not s.startswith(("from ", "import ", "#")) and s not in visible:
                found.setdefault(s, f"{judge.name} judge")
    return found


def test_no_key_reference_or_solution_is_readable(release):
    out, py, site = release
    files = [p for p in [*out.rglob("*"), *(site / "labkit").rglob("*")] if p.is_file()]
    assert not any("labkit_judges" in p.parts or "solutions" in p.parts for p in files)
    assert not (site / "labkit_judges").exists() and not (out / "solutions").exists()
    texts = [p for p in files if p.suffix in (".py", ".ipynb", ".json", ".md", ".toml", ".txt")]
    lines, text = _source_lines(texts), "\n".join(p.read_text(errors="replace") for p in texts)
    secrets = _secrets()
    assert len(secrets) > 300, "the grep must look for many distinctive lines"

    def leaks(lines: set[str], text: str) -> list[str]:
        return sorted(f"{what}: {s[:80]}" for s, what in secrets.items()
                      if s in lines or (what.endswith("explanation") and s in text))

    assert not leaks(lines, text)
    judge = ROOT / "labkit_judges" / "l06.py"   # the grep sees a judge that was shipped
    assert len(leaks(lines | _source_lines([judge]), text)) > 30
    assert all(p.stat().st_size == 0 for p in out.rglob("expected/*.onnx")), "a reference model was shipped"


def _execute(py: Path, nb: Path, cwd: Path) -> dict[str, dict]:
    """Run `nb` in the venv's own kernel; exercise id -> the verdict its check cell displayed."""
    code = ("import json, sys, nbformat; from nbclient import NotebookClient; "
            "from labkit.notebooks import verdicts; nb = nbformat.read(sys.argv[1], as_version=4); "
            "NotebookClient(nb, kernel_name='python3', timeout=120, resources={'metadata': {'path': sys.argv[2]}})"
            ".execute(); print(json.dumps(verdicts(nb)))")
    proc = subprocess.run([str(py), "-c", code, str(nb), str(cwd)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


#: right and wrong answers, checked in the venv the way a check cell does
CHECKS = """
import json, numpy as np, labkit
key, wrong = json.loads(KEY), json.loads(WRONG)
out = {
    "relu right": labkit.check("00.relu", lambda x: np.where(x > 0, x, np.zeros_like(x))),
    "relu wrong": labkit.check("00.relu", np.abs),
    "relu raises": labkit.check("00.relu", lambda x: x.no_such_thing),
    "quiz key": labkit.check("00.quiz", key),
    "quiz all wrong": labkit.check("00.quiz", wrong),
    "quiz one answered": labkit.check("00.quiz", {"q1": "a"}),
}
print(json.dumps({k: v.to_dict() for k, v in out.items()}))
"""


def test_blank_lesson_runs_public_checks_answer_and_the_grader_gives_full_marks(release, tmp_path):
    out, py, _ = release
    got = _execute(py, out / "lessons" / f"{LESSON}.ipynb", tmp_path)
    assert sorted(got) == ["00.quiz", "00.relu"] and {v["status"] for v in got.values()} == {"not_attempted"}

    key = {q: v[0] for q, v in judge_spec("00.quiz").key.items()}
    wrong = {q: "b" if a != "b" else "c" for q, a in key.items()}
    code = CHECKS.replace("KEY", repr(json.dumps(key))).replace("WRONG", repr(json.dumps(wrong)))
    r = json.loads(run_in(py, code, tmp_path).strip().splitlines()[-1])
    assert r["relu right"]["status"] == "passed" and "(public check)" in r["relu right"]["title"]
    assert r["relu wrong"]["status"] == "failed" and "expected 0, got 2" in json.dumps(r["relu wrong"])
    assert r["relu raises"]["status"] == "failed" and "AttributeError" in json.dumps(r["relu raises"])
    assert all(v["max_points"] == 0 and v["points"] == 0 for v in r.values()), "points come from the grader"
    # a quiz panel says which questions are answered, never which are right: the key and an all-wrong
    # set read the same, so one check per letter teaches nothing
    strip = lambda v: [(t["name"], t["passed"]) for t in v["tests"]]  # noqa: E731
    assert r["quiz key"]["status"] == r["quiz all wrong"]["status"] == "passed"
    assert strip(r["quiz key"]) == strip(r["quiz all wrong"])
    assert r["quiz one answered"]["status"] == "failed"

    if not sandbox.bwrap_status()[0]:
        pytest.skip("bubblewrap is not usable here: " + sandbox.bwrap_status()[1])
    answers = {"00.relu": "import numpy as np\ndef relu(x):\n    return np.where(x > 0, x, np.zeros_like(x))\n",
               "00.quiz": f"quiz_00 = {key!r}\n"}
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "ana.ipynb").write_text(json.dumps(with_answers(out / "lessons" / f"{LESSON}.ipynb", answers)))
    proc = subprocess.run([sys.executable, "-m", "labkit.cli", "grade", "00", str(subs), "--out", str(tmp_path / "g"),
                           "--jobs", "1", "--no-progress"], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = list(csv.DictReader((tmp_path / "g" / "grades.csv").open()))
    assert len(rows) == 2 and all(r["status"] == "passed" and r["points"] == r["max_points"] for r in rows), rows


#: what the release leaves out, as a lesson would import it
LEFT_OUT_IMPORT = re.compile(r"^\s*(?:from|import)\s+(labkit_judges|labkit\.(?:grading|sandbox|assign|edition|"
                             r"lesson_time))\b", re.M)


def test_every_shipped_module_imports_in_the_release(release, tmp_path):
    """The other lessons run in the grader with labkit_judges hidden (tests/test_grading_lessons.py); what
    the release leaves out beyond that (the grader, the authoring tools) no shipped module needs."""
    _, py, _ = release
    code = ("import importlib, pkgutil, labkit; bad = []\n"
            "for m in pkgutil.walk_packages(labkit.__path__, 'labkit.'):\n"
            "    if m.name.endswith('__main__'): continue\n"
            "    try: importlib.import_module(m.name)\n"
            "    except Exception as e: bad.append(f'{m.name}: {e!r}')\n"
            "print(len(list(pkgutil.walk_packages(labkit.__path__))), bad)")
    count, bad = run_in(py, code, tmp_path).strip().splitlines()[-1].split(" ", 1)
    assert int(count) > 20 and bad == "[]", bad


@pytest.mark.parametrize("path", sorted((ROOT / "lessons").glob("*.ipynb")), ids=lambda p: p.stem)
def test_no_lesson_imports_what_the_release_leaves_out(path):
    cells = json.loads(path.read_text())["cells"]
    found = [m for c in cells if c["cell_type"] == "code" for m in LEFT_OUT_IMPORT.findall("".join(c["source"]))]
    assert not found, f"{path.name} imports {found}, which a graded release does not ship (labkit/edition.py)"
