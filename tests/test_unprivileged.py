"""Nothing secret where a learner can name it (issue 31), graded as root with `--unprivileged-user` (no
bubblewrap, as in Gradescope's container: the weakest mode, where a kernel sees the whole file system):

* a learner's model with external data, in an initializer, a `Constant` node's value or an
  initializer inside an `If` branch (each named `judge-server.json`, where the verdict process kept
  its seed and the extra tests), is refused with one line and reads nothing;
* a kernel that searches for the verdict process's spec (derived from its own HOME, the folders
  around it, the command lines, working folders and environments of every process) finds neither
  the secret seed nor the instructor's extra tests, also while the verdict process runs;
* a course checkout under a private (0700) folder still grades: the kernels import a readable copy.

Grading tier: lesson 01 with 5 submissions (~30 s) and lesson 00 with 1 (~15 s), as root only.
"""
from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import pytest


from conftest import ROOT
from grading_util import unprivileged_python_problem, with_answers

pytestmark = pytest.mark.grading

SEED = "1618033988"
MARKER = "PRIVATE-EXTRA-TESTS-31"
SOLUTION01, LESSON01 = ROOT / "solutions" / "01_onnx_concepts.ipynb", ROOT / "lessons" / "01_onnx_concepts.ipynb"


def _answer(nb: Path, id: str) -> str:
    cell = next(c for c in json.loads(nb.read_text())["cells"] if f"answer:{id}" in c["metadata"].get("tags", []))
    return "".join(cell["source"])


EXT = '''
def _ext(name, n):
    t = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=[n], data_location=TensorProto.EXTERNAL)
    for k, v in (("location", "judge-server.json"), ("offset", "0"), ("length", str(4 * n))):
        t.external_data.add(key=k, value=v)
    return t
_g = sigmoid_model.graph
_b = next(i for i in _g.initializer if i.name == "B")
'''
PLACEMENTS = {
    "ext_initializer": "_b.CopyFrom(_ext('B', 3))\n",
    "ext_constant": ("_g.initializer.remove(_b)\n"
                     "_g.node.insert(0, helper.make_node('Constant', [], ['B'], value=_ext('Bc', 3)))\n"),
    "ext_if_branch": (
        "_g.initializer.remove(_b)\n"
        "def _branch(t):\n"
        "    return helper.make_graph([helper.make_node('Identity', [t.name], [t.name + '_o'])], 'b' + t.name, [],\n"
        "        [helper.make_tensor_value_info(t.name + '_o', TensorProto.FLOAT, [3])], [t])\n"
        "_g.initializer.append(numpy_helper.from_array(np.array(True), 'C'))\n"
        "_g.node.insert(0, helper.make_node('If', ['C'], ['B'], then_branch=_branch(_ext('Bt', 3)),\n"
        "    else_branch=_branch(numpy_helper.from_array(np.zeros(3, np.float32), 'Be'))))\n"),
}
SEARCH = r'''
import glob, os, re, stat
SECRETS = [b"%s", b"%s"]
def _search():
    found, cands = [], set()
    home = os.environ.get("HOME", "")
    root = home.split("/slot")[0] if "/slot" in home else ""
    m = re.search(r"/slot(\d+)", home)
    if m:
        cands.add(f"{root}/judge-{m.group(1)}/judge-server.json")
    for pattern in ("/*", "/*/*", "/*/*/*") if root else ():
        cands.update(glob.glob(root + pattern))
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            args = open(f"/proc/{pid}/cmdline", "rb").read()
        except OSError:
            continue
        if any(s in args for s in SECRETS):
            found.append(f"/proc/{pid}/cmdline")
        cands.update(a for a in args.decode(errors="replace").split("\0") if a.startswith("/"))
        for link in ("cwd", "root"):
            try:
                d = os.readlink(f"/proc/{pid}/{link}")
                cands.update(glob.glob(d + "/*") + glob.glob(d + "/*/*"))
            except OSError:
                pass
        try:
            if any(s in open(f"/proc/{pid}/environ", "rb").read() for s in SECRETS):
                found.append(f"/proc/{pid}/environ")
        except OSError:
            pass
    for c in sorted(cands):
        if c.startswith(("/proc/", "/sys/", "/dev/")):
            continue
        try:
            fd = os.open(c, os.O_RDONLY | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            if stat.S_ISREG(os.fstat(fd).st_mode) and any(s in os.read(fd, 1 << 20) for s in SECRETS):
                found.append(c)
        except OSError:
            pass
        finally:
            os.close(fd)
    return found
FOUND = _search()
def model_versions(model_bytes):
    model = onnx.load_from_string(model_bytes)
    opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    return {"ir_version": model.ir_version, "opset": opset} if not FOUND else {"ir_version": str(FOUND)[:300], "opset": 0}
''' % (SEED.encode().decode(), MARKER)


@pytest.fixture(scope="module", autouse=True)
def _root_only():
    if os.geteuid() != 0:
        pytest.skip("the unprivileged-user mode is for a root grader (as in Gradescope)")
    why = unprivileged_python_problem()
    if why:
        pytest.skip(why)


def grade(python: str, lesson: str, subs: Path, out: Path, cwd: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([python, "-m", "labkit.cli", "grade", lesson, str(subs), "--out", str(out), "--jobs", "1",
                           "--no-progress", "--unprivileged-user", *extra],
                          capture_output=True, text=True, cwd=cwd, timeout=900)


def rows(out: Path) -> dict[tuple[str, str], dict]:
    with open(out / "grades.csv", newline="") as f:
        return {(r["student"], r["exercise"]): r for r in csv.DictReader(f)}


def test_no_model_or_kernel_reaches_the_verdict_process_secrets(tmp_path):
    subs, out = tmp_path / "class", tmp_path / "out"
    subs.mkdir()
    base = _answer(SOLUTION01, "01.sigmoid_model")
    for name, code in PLACEMENTS.items():
        nb = with_answers(SOLUTION01, {"01.sigmoid_model": base + EXT + code})
        (subs / f"{name}.ipynb").write_text(json.dumps(nb))
    for k in (1, 2):  # the second runs while the worker's verdict process is up (the first starts it)
        (subs / f"zz_search{k}.ipynb").write_text(json.dumps(with_answers(SOLUTION01, {"01.versions": SEARCH})))
    (out / ".grader").mkdir(parents=True, mode=0o700)  # the output folder's secret seed, known to the test only
    (out / ".grader" / "seed").write_text(SEED)
    os.chmod(out / ".grader" / "seed", 0o600)
    extra = tmp_path / "extra_tests.py"
    extra.write_text(f"# {MARKER}: the instructor's private extra tests\n")
    r = grade(sys.executable, "01", subs, out, ROOT, "--extra-tests", str(extra))
    assert r.returncode == 0, r.stderr[-3000:]
    g = rows(out)
    for name in PLACEMENTS:
        row = g[(name, "01.sigmoid_model")]
        assert float(row["points"]) == 0 and "keeps its data in another file ('judge-server.json')" in row["message"], \
            (name, row["message"])
        assert float(g[(name, "01.run_both")]["points"]) == float(g[(name, "01.run_both")]["max_points"])  # the rest graded
    for k in (1, 2):
        row = g[(f"zz_search{k}", "01.versions")]
        assert row["status"] == "passed", f"search {k} found the verdict process's secrets: {row['message']}"
    for path in (out / "students").rglob("*"):
        if path.is_file():
            text = path.read_bytes()
            assert SEED.encode() not in text and MARKER.encode() not in text, path


def test_a_checkout_under_a_private_folder_grades_unprivileged(tmp_path):
    """The course lies in a 0700 folder (a home folder, /root, `mktemp -d`) and is imported from there, by
    a Python environment every user can read: the kernels, another uid, import a readable copy."""
    private = Path(tempfile.mkdtemp(prefix="lk31-"))  # 0700, as mktemp -d makes it
    public = Path(tempfile.mkdtemp(prefix="lk31-venv-"))
    try:
        os.chmod(public, 0o755)
        course = private / "course"
        for d in ("labkit", "labkit_judges"):
            shutil.copytree(ROOT / d, course / d, ignore=shutil.ignore_patterns("__pycache__"))
        for d in ("solutions", "lessons"):
            (course / d).mkdir(parents=True)
            shutil.copy(ROOT / d / "00_setup_check.ipynb", course / d)
        shutil.copy(ROOT / "pyproject.toml", course)
        venv = public / "venv"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
        py = venv / "bin" / "python"
        purelib = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                 capture_output=True, text=True, check=True).stdout.strip()
        # the course from the private checkout, the packages from this environment (no editable labkit)
        Path(purelib, "course.pth").write_text(f"{course}\n{sysconfig.get_paths()['purelib']}\n")
        subs = private / "class"
        subs.mkdir()
        shutil.copy(ROOT / "solutions" / "00_setup_check.ipynb", subs / "alice.ipynb")
        out = private / "out"
        r = grade(str(py), "00", subs, out, course)
        assert r.returncode == 0, r.stderr[-3000:]
        g = rows(out)
        assert all(row["status"] == "passed" for row in g.values()), [row["message"] for row in g.values()]
        assert len(g) == 2
    finally:
        shutil.rmtree(private, ignore_errors=True)
        shutil.rmtree(public, ignore_errors=True)


def test_a_python_environment_the_kernels_cannot_read_is_refused_in_one_line(tmp_path):
    """A virtualenv inside a private folder cannot run as another uid: the grader says so at once, naming
    the folder and the fix, instead of "could not be graded" for every learner."""
    private = Path(tempfile.mkdtemp(prefix="lk31-"))  # 0700
    try:
        venv = private / "venv"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
        py = venv / "bin" / "python"
        purelib = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                 capture_output=True, text=True, check=True).stdout.strip()
        Path(purelib, "course.pth").write_text(f"{ROOT}\n{sysconfig.get_paths()['purelib']}\n")
        shutil.copy(ROOT / "solutions" / "00_setup_check.ipynb", tmp_path / "alice.ipynb")
        r = grade(str(py), "00", tmp_path / "alice.ipynb", tmp_path / "out", ROOT)
        assert r.returncode == 2, r.stderr[-2000:]
        last = r.stderr.strip().splitlines()[-1]
        assert last.startswith("labkit grade: --unprivileged-user: the kernels' uid") and f"{private} is private" in last
        assert "chmod o+x" in last and "/opt/labkit" in last
    finally:
        shutil.rmtree(private, ignore_errors=True)
