"""A hostile class for lesson 01, graded as on a course server (bubblewrap, as root when we are).

Each attack of issue 12 is tried at least once: reading answers from inside the kernel (solutions,
judges, quiz keys, the seed, other submissions, the output folder, /run, /etc/shadow), forging
and poisoning caches, killing neighbours and the worker, daemons, flooding the worker's channel,
a judge that never ends, and files built to knock the parent over. Every attacked exercise must
score no higher than the blank lesson, every student keeps a row, the batch completes, nothing
outlives it, and the next honest batch grades the solution full and the blank zero.
"""
from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from labkit import sandbox
from labkit.checks import lesson_exercises, quiz_answers

from grading_util import sleepers, with_answers

pytestmark = pytest.mark.grading

ROOT = Path(__file__).resolve().parents[1]
SOLUTION = ROOT / "solutions" / "01_onnx_concepts.ipynb"
LESSON = ROOT / "lessons" / "01_onnx_concepts.ipynb"
LABKIT = [sys.executable, "-m", "labkit.cli"]
EXERCISES = [e.id for e in lesson_exercises("01")]  # from the specs (labkit_judges/l01.py)
RIGHT_QUIZ = "quiz_01 = " + json.dumps(quiz_answers("01.quiz"))
WRONG_QUIZ = "quiz_01 = " + json.dumps({k: "a" if v != "a" else "b" for k, v in quiz_answers("01.quiz").items()})
DAEMON_MARK = str(900000 + os.getpid() % 99999)  # `sleep <mark>`: how the test recognises a daemon

# everything a kernel might read to get an answer; each found file is printed into the quiz answer
READ_EVERYTHING = r'''
import glob, importlib.util, json, os
ROOTS = ["/work", "/root", "/home", "/tmp", "/srv", "/opt", "/mnt", "/var", "/run"]  # not /usr, /sys, /proc
def readable(pattern):
    n = 0
    paths = [p for r in ROOTS for p in glob.glob(r + pattern, recursive=True)] if pattern.startswith("/**") else \
        glob.glob(pattern)
    for path in paths[:50]:
        try:
            open(path, "rb").read(10)
            n += 1
        except Exception:
            pass
    return n
FOUND = {"uid": os.getuid(), "solutions": readable("/**/solutions/*.ipynb"), "shadow": readable("/etc/shadow"),
         "run": len(glob.glob("/run/*")), "judges": importlib.util.find_spec("labkit_judges") is not None,
         "grader": readable("/tmp/labkit-grade-*/*") + readable("/**/.grader/*"), "git": readable("/**/.git/HEAD"),
         "others": readable("/tmp/**/class*/*.ipynb"), "env": sorted(k for k in os.environ if "SEED" in k or "KEY" in k)}
'''
ATTACKS = {
    # the solution notebook, the judges and the quiz key, read from inside the kernel
    "reader": {
        "01.sigmoid_model": READ_EVERYTHING + (
            "import glob, json\n"
            "sigmoid_model = None\n"
            "for p in [p for r in ('/work', '/root', '/home', '/tmp') for p in\n"
            "          glob.glob(r + '/**/solutions/01_onnx_concepts.ipynb', recursive=True)]:\n"
            "    nb = json.load(open(p))\n"
            "    for c in nb['cells']:\n"
            "        if 'answer:01.sigmoid_model' in c['metadata'].get('tags', []):\n"
            "            exec(''.join(c['source']))\n"
            "try:\n"
            "    from labkit_judges.l01 import make_model, W, B\n"
            "    sigmoid_model = make_model(W, B)\n"
            "except Exception as e:\n"
            "    print('no judges:', e)\n"),
        "01.run_both": ("def run_both(model_bytes, x):\n"
                        "    from labkit.checks import judge_spec\n"
                        "    return judge_spec('01.run_both')\n"),
        "01.versions": ("def model_versions(model_bytes):\n"
                        "    return {'ir_version': json.dumps(FOUND), 'opset': 0}\n"),
        "01.quiz": ("from labkit.checks import quiz_answers\n"
                    "quiz_01 = quiz_answers('01.quiz')\n"),
    },
    # forge the results cache and poison the course data, wherever they can be found
    "forger": {
        "01.sigmoid_model": (
            "import glob, os, json\n"
            "for d in [d for r in ('/work', '/root', '/home', '/tmp') for n in ('.cache', '.grader')\n"
            "          for d in glob.glob(r + '/**/' + n, recursive=True)]:\n"
            "    try:\n"
            "        for f in os.listdir(d):\n"
            "            open(os.path.join(d, f), 'w').write(json.dumps({'payload': '{}', 'mac': '0'}))\n"
            "    except Exception as e: print(d, e)\n"
            "for d in [os.environ.get('LABKIT_CACHE', ''), os.path.expanduser('~/.cache/onnx-lab')]:\n"
            "    for f in glob.glob(os.path.join(d, '*')):\n"
            "        try: open(f, 'wb').write(b'poison')\n"
            "        except Exception as e: print(f, e)\n"
            "sigmoid_model = None\n"),
        "01.quiz": 'quiz_01 = {"q1": "a", "q2": "a", "q3": "b", "q4": "a"}',
    },
    # kill everything it can see, leave a daemon, then flood the worker with output
    "killer": {
        "01.run_both": (
            "import os, signal, subprocess\n"
            "if os.fork() == 0:\n"
            "    os.setsid()\n"
            "    if os.fork() == 0:\n"
            f"        os.execv('/bin/sleep', ['sleep', '{DAEMON_MARK}'])\n"
            "    os._exit(0)\n"
            "for pid in [int(p) for p in os.listdir('/proc') if p.isdigit()]:\n"
            "    if pid not in (os.getpid(), 1):\n"
            "        try: os.kill(pid, signal.SIGKILL)\n"
            "        except Exception: pass\n"
            "def run_both(model_bytes, x):\n"
            "    return {'reference': x, 'ort': x}\n"),
        "01.versions": ("import sys\n"
                        "for i in range(40):\n"
                        "    sys.stdout.write('x' * (32 << 20)); sys.stdout.flush()\n"
                        "def model_versions(b):\n"
                        "    return {'ir_version': 0, 'opset': 0}\n"),
        "01.quiz": RIGHT_QUIZ,
    },
    # an ONNX model whose Loop would run 10^12 times in the judge
    "endless_judge": {
        "01.sigmoid_model": (
            "import numpy as np\n"
            "from onnx import TensorProto, helper, numpy_helper\n"
            "body = helper.make_graph([helper.make_node('Identity', ['cond_in'], ['cond_out']),\n"
            "                          helper.make_node('Sigmoid', ['v_in'], ['v_out'])], 'body',\n"
            "    [helper.make_tensor_value_info('i', TensorProto.INT64, []),\n"
            "     helper.make_tensor_value_info('cond_in', TensorProto.BOOL, []),\n"
            "     helper.make_tensor_value_info('v_in', TensorProto.FLOAT, None)],\n"
            "    [helper.make_tensor_value_info('cond_out', TensorProto.BOOL, []),\n"
            "     helper.make_tensor_value_info('v_out', TensorProto.FLOAT, None)])\n"
            "graph = helper.make_graph([helper.make_node('Loop', ['N', 'C', 'X'], ['Y'], body=body)], 'loop',\n"
            "    [helper.make_tensor_value_info('X', TensorProto.FLOAT, ['batch', 4])],\n"
            "    [helper.make_tensor_value_info('Y', TensorProto.FLOAT, ['batch', 4])],\n"
            "    [numpy_helper.from_array(np.array(10**12, dtype=np.int64), 'N'),\n"
            "     numpy_helper.from_array(np.array(True), 'C')])\n"
            "sigmoid_model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 21)], ir_version=10)\n"),
        "01.quiz": RIGHT_QUIZ,
    },
}
ATTACKED = {"reader": EXERCISES, "forger": ["01.sigmoid_model", "01.quiz"],
            "killer": ["01.run_both", "01.versions"], "endless_judge": ["01.sigmoid_model"]}

if not (SOLUTION.is_file() and LESSON.is_file()):
    pytest.skip("lesson 01 notebooks are not there", allow_module_level=True)


def _nb(path: Path) -> dict:
    return json.loads(path.read_text())


def attack(answers: dict[str, str]) -> dict:
    return with_answers(LESSON, answers)


def grade(subs: Path | list[Path], out: Path, *extra: str) -> tuple[subprocess.CompletedProcess, float]:
    """`labkit grade 01` on a folder or a list of notebooks."""
    t0 = time.monotonic()
    files = [str(p) for p in subs] if isinstance(subs, list) else [str(subs)]
    proc = _run(LABKIT + ["grade", "01", *files, "--out", str(out), "--jobs", "2", "--timeout", "60",
                          "--judge-timeout", "12", "--no-progress", *extra])
    return proc, time.monotonic() - t0


def _run(args: list[str]) -> subprocess.CompletedProcess:
    """Run a grader to the end; the result also carries its `pid` (the owner of its /tmp folder)."""
    with subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT) as popen:
        stdout, stderr = popen.communicate(timeout=1200)
    proc = subprocess.CompletedProcess(args, popen.returncode, stdout, stderr)
    proc.pid = popen.pid
    return proc


def _own_tmp_left(proc: subprocess.CompletedProcess) -> list[Path]:
    """The grader's own /tmp folders still there after it ended (a Dask worker killed by another test
    may leave its folder behind: that one is swept by the next run, and not this test's business)."""
    return [r for r in Path("/tmp").glob("labkit-grade-*")
            if (r / "owner.pid").is_file() and (r / "owner.pid").read_text().strip() == str(proc.pid)]


def grades(out: Path) -> dict[tuple[str, str], dict]:
    with open(out / "grades.csv", newline="") as f:
        return {(r["student"], r["exercise"]): r for r in csv.DictReader(f)}


def _bad_files(folder: Path) -> dict[str, str]:
    """Files built to knock the parent over -> the student name each must keep and its message."""
    (folder / "deep.ipynb").write_text("[" * 200_000 + "]" * 200_000)
    many = _nb(LESSON)
    many["cells"] += [{"cell_type": "code", "source": "", "metadata": {}, "outputs": [], "execution_count": None}
                      for _ in range(20_000)]
    (folder / "many_cells.ipynb").write_text(json.dumps(many))
    with open(folder / "huge.ipynb", "wb") as f:
        f.write(b'{"cells": [], "pad": "' + b"x" * (30 << 20) + b'"}')
    os.symlink(SOLUTION, folder / "linked.ipynb")
    os.mkfifo(folder / "fifo.ipynb")
    grades_nb = _nb(SOLUTION)
    grades_nb["metadata"]["labkit"] = {"student": "grades.csv"}
    (folder / "sneaky.ipynb").write_text(json.dumps(grades_nb))
    for name, who in (("bob", None), ("bob__bob", None), ("other", "bob")):
        nb = _nb(LESSON)
        if who:
            nb["metadata"]["labkit"] = {"student": who}
        (folder / f"{name}.ipynb").write_text(json.dumps(nb))
    return {"deep": "nested too deeply", "many_cells": "notebook too large", "huge": "notebook too large",
            "linked": "symbolic link", "fifo": "not a regular file"}


def _daemons() -> list[int]:
    return sleepers(DAEMON_MARK)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    if not sandbox.bwrap_status()[0]:
        pytest.skip("bubblewrap is not usable here: " + sandbox.bwrap_status()[1])
    subs = tmp_path_factory.mktemp("class")
    (subs / "solution.ipynb").write_text(json.dumps(_nb(SOLUTION)))
    (subs / "blank.ipynb").write_text(json.dumps(_nb(LESSON)))
    for name, answers in ATTACKS.items():
        (subs / f"{name}.ipynb").write_text(json.dumps(attack(answers)))
    bad = _bad_files(subs)
    out = tmp_path_factory.mktemp("grading") / "out"
    proc, seconds = grade(subs, out)
    yield {"subs": subs, "out": out, "proc": proc, "seconds": seconds, "grades": grades(out), "bad": bad}
    for pid in _daemons():  # never leave one behind, even when the test below fails
        os.kill(pid, 9)


def _pts(g, student, ex) -> float:
    return float(g[(student, ex)]["points"])


def test_batch_completes_and_every_student_keeps_a_row(hostile):
    proc, g = hostile["proc"], hostile["grades"]
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    students = {s for s, _ in g}
    # metadata never names a learner a file name already names (issue 21): sneaky.ipynb claiming
    # "grades.csv" is `sneaky`, other.ipynb claiming "bob" is `other`; the real bob keeps his plain row
    expected = {"solution", "blank", *ATTACKS, *hostile["bad"], "sneaky", "bob", "bob__bob", "other"}
    assert expected <= students, expected - students
    assert len(students) == len(list(hostile["subs"].iterdir())), students  # every file its own learner
    for s in students:
        assert {ex for (t, ex) in g if t == s} == set(EXERCISES), s
    # student folders live under students/, and no claimed name reaches the run's own files
    assert (hostile["out"] / "students" / "sneaky" / "results.json").is_file()
    assert not (hostile["out"] / "students" / "grades.csv").exists() and (hostile["out"] / "grades.csv").is_file()


def test_attacks_score_no_higher_than_blank(hostile):
    g = hostile["grades"]
    assert all(g[("solution", ex)]["status"] == "passed" for ex in EXERCISES), g
    for name, exercises in ATTACKED.items():
        for ex in exercises:
            assert _pts(g, name, ex) <= _pts(g, "blank", ex), (name, ex, g[(name, ex)])


def test_kernel_sees_no_answers_and_is_not_root(hostile):
    """What the reader found inside its kernel (it smuggles it out in a failing answer's message)."""
    msg = hostile["grades"][("reader", "01.versions")]["message"]
    start = msg.index("'ir_version': '") + len("'ir_version': '")
    found = json.loads(msg[start:msg.index("'", start)])
    assert found == {"uid": found["uid"], "solutions": 0, "shadow": 0, "run": 0, "judges": False, "grader": 0,
                     "git": 0, "others": 0, "env": []}, found
    assert found["uid"] != 0


def test_bad_files_cost_only_their_row(hostile):
    g = hostile["grades"]
    for name, words in hostile["bad"].items():
        row = g[(name, "01.sigmoid_model")]
        assert row["status"] == "error" and words in row["message"], (name, row)
    assert g[("sneaky", "01.quiz")]["status"] == "passed"  # graded like any other, under its file's name
    bobs = sorted(s for s, ex in g if ex == "01.quiz" and s.lower().startswith("bob"))
    assert bobs == ["bob", "bob__bob"], bobs  # other.ipynb's claim to be bob takes nothing of bob's
    assert g[("other", "01.quiz")]["status"] != "passed" and g[("bob", "01.quiz")]["status"] != "passed"


def test_channel_flood_and_killer_cost_only_their_own_exercises(hostile):
    g = hostile["grades"]
    assert g[("killer", "01.quiz")]["status"] == "passed", g[("killer", "01.quiz")]
    assert g[("solution", "01.run_both")]["status"] == "passed"  # graded beside the killer (--jobs 2)


def test_endless_judge_is_a_cached_timeout(hostile):
    g = hostile["grades"]
    row = g[("endless_judge", "01.sigmoid_model")]
    assert row["status"] == "timeout" and "checker" in row["message"], row
    assert g[("endless_judge", "01.quiz")]["status"] == "passed"
    # re-running reuses it (a verdict like any other): the whole re-run is quick
    proc, seconds = grade(hostile["subs"], hostile["out"])
    assert proc.returncode == 0 and "reused their grades" in proc.stderr, proc.stderr[-2000:]
    assert seconds < 60, seconds
    assert grades(hostile["out"]) == g


def test_nothing_outlives_grading(hostile):
    time.sleep(0.5)
    assert not _daemons(), "a daemon started by a submission outlived grading"
    assert not _own_tmp_left(hostile["proc"])


def test_next_honest_batch_is_unharmed(hostile, tmp_path):
    """After the attacks, into the same output folder and a new one: solution full, blank zero."""
    honest = tmp_path / "honest"
    honest.mkdir()
    (honest / "solution2.ipynb").write_text(json.dumps(_nb(SOLUTION)))
    (honest / "blank2.ipynb").write_text(json.dumps(_nb(LESSON)))
    for out in (hostile["out"], tmp_path / "fresh"):
        proc, _ = grade(honest, out)
        assert proc.returncode == 0, proc.stderr[-2000:]
        g = grades(out)
        for ex in EXERCISES:
            assert g[("solution2", ex)]["status"] == "passed", g[("solution2", ex)]
            assert _pts(g, "blank2", ex) == 0


def test_forged_cache_entry_is_ignored(hostile):
    """Rewrite a cache entry as a kernel would (no key): the next run grades that submission again."""
    cache = hostile["out"] / ".cache"
    entries = sorted(cache.glob("*.json"))
    forged = 0
    for e in entries:
        data = json.loads(e.read_text())
        payload = json.loads(data["payload"])
        if all(r["status"] == "passed" for r in payload["results"]):
            continue  # the solution's entry: nothing to forge
        for r in payload["results"]:
            r.update(status="passed", points=r["max_points"])
        data["payload"] = json.dumps(payload, sort_keys=True)
        e.write_text(json.dumps(data))
        forged += 1
    assert forged >= 5, forged
    regraded = ("solution", "blank", "forger", "reader", "killer")  # not the slow ones: each costs a timeout
    proc, _ = grade([hostile["subs"] / f"{s}.ipynb" for s in regraded], hostile["out"])
    assert proc.returncode == 0, proc.stderr[-2000:]
    for student in regraded[1:]:  # forged entries: graded again, not reused
        rec = json.loads((hostile["out"] / "students" / student / "results.json").read_text())
        assert not rec.get("cached"), student
    assert json.loads((hostile["out"] / "students" / "solution" / "results.json").read_text()).get("cached")
    g = grades(hostile["out"])
    assert _pts(g, "blank", "01.quiz") == 0 and g[("forger", "01.quiz")]["status"] != "passed"


# ---------------------------------------------------------------- issue 20: one learner, the next one

ISSUE20_MARK = f"lkz{os.getpid() % 100000}"   # the survivor thread's name (comm)
SYS_EXIT = {"x86_64": 60, "aarch64": 93}.get(os.uname().machine, 60)
# a child whose main thread leaves with the raw exit system call (a zombie) while a thread of it lives
# on, killing every process it can see (the next learner's kernels, in the old grader)
ZOMBIE = f'''
import ctypes, os, signal, threading, time
if os.fork() == 0:
    def _lurk():
        ctypes.CDLL(None).prctl(15, b"{ISSUE20_MARK}", 0, 0, 0)
        end = time.time() + 240
        while time.time() < end:
            for p in os.listdir("/proc"):
                if p.isdigit() and int(p) != os.getpid():
                    try:
                        os.kill(int(p), signal.SIGKILL)
                    except Exception:
                        pass
            time.sleep(0.05)
    threading.Thread(target=_lurk).start()
    time.sleep(0.3)
    ctypes.CDLL(None).syscall({SYS_EXIT}, 0)
time.sleep(1)
'''
# every channel the old grader left between submissions: System V shm, xattrs, files, deep trees, links
PLANT = '''
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
_shm = libc.shmget(0x1DEA20, 4096, 0o1000 | 0o666)
ctypes.memmove(libc.shmat(_shm, None, 0), b"SECRET", 6)
for _d in (os.path.expanduser("~"), "/tmp", "/dev/shm", os.path.dirname(os.path.expanduser("~"))):
    try:
        os.setxattr(_d, "user.lk20", b"SECRET")
    except OSError:
        pass
    try:
        open(os.path.join(_d, "lk20_left"), "w").write("SECRET")
    except OSError:
        pass
for _top in (os.path.expanduser("~"), "/tmp", "/dev/shm"):
    os.chdir(_top)
    os.makedirs("deep", exist_ok=True)
    os.chdir("deep")
    for _ in range(1500):
        os.mkdir("a")
        os.chdir("a")
    os.chdir(_top)
    os.chmod("deep", 0)
for _name in ("escape", "tmp/escape"):
    try:
        os.symlink(TARGET, os.path.join(os.path.expanduser("~"), _name))
    except OSError:
        pass
os.chdir(os.path.expanduser("~"))
'''
REPORT = '''
import ctypes, json, os
def _found():
    libc = ctypes.CDLL(None, use_errno=True)
    out = {"shm": libc.shmget(0x1DEA20, 0, 0) != -1, "xattr": [], "files": [], "uid": os.getuid()}
    for d in (os.path.expanduser("~"), "/tmp", "/dev/shm", os.path.dirname(os.path.expanduser("~"))):
        try:
            if "user.lk20" in os.listxattr(d):
                out["xattr"].append(d)
        except OSError:
            pass
        try:
            out["files"] += [os.path.join(d, n) for n in os.listdir(d) if n in ("lk20_left", "deep", "escape")]
        except OSError:
            pass
    return out
FOUND = _found()
def model_versions(model_bytes):
    return {"ir_version": json.dumps(FOUND).encode().hex(), "opset": 0}
'''
# a record far over every reader's limit: the judge quotes the answer (5 MB) in its message
BIG = "def model_versions(model_bytes):\n    return {'ir_version': 'word ' * 1_200_000, 'opset': 0}\n"


def _survivors() -> list[int]:
    out = []
    for d in Path("/proc").glob("[0-9]*/task/*/comm"):
        try:
            if d.read_text().strip() == ISSUE20_MARK:
                out.append(int(d.parts[2]))
        except OSError:
            pass
    return out


def _found(g, student) -> dict:
    msg = g[(student, "01.versions")]["message"]
    start = msg.index("'ir_version': '") + len("'ir_version': '")
    return json.loads(bytes.fromhex(msg[start:msg.index("'", start)]))


@pytest.fixture(scope="module")
def next_learner(tmp_path_factory):
    """One worker (--jobs 1): each attacker is followed by an honest learner or a spy."""
    if not sandbox.bwrap_status()[0]:
        pytest.skip("bubblewrap is not usable here: " + sandbox.bwrap_status()[1])
    target = tmp_path_factory.mktemp("outside")  # root-owned, 0755, outside every sandbox
    os.chmod(target, 0o755)
    (target / "keep.txt").write_text("keep")
    subs = tmp_path_factory.mktemp("class20")
    solution = _nb(SOLUTION)
    plan = {"a_planter": {"01.versions": f"TARGET = {str(target)!r}\n" + PLANT + REPORT},
            "b_spy": {"01.versions": REPORT},
            "c_honest": {},
            "d_zombie": {"01.sigmoid_model": ZOMBIE + "sigmoid_model = None\n"},
            "e_honest": {},
            "f_big": {"01.versions": BIG},
            "g_honest": {}}
    for name, answers in plan.items():
        (subs / f"{name}.ipynb").write_text(json.dumps(with_answers(SOLUTION, answers) if answers else solution))
    out = tmp_path_factory.mktemp("grading20") / "out"
    t0 = time.monotonic()
    proc = _run(LABKIT + ["grade", "01", str(subs), "--out", str(out), "--jobs", "1", "--timeout", "60",
                          "--no-progress"])
    yield {"proc": proc, "out": out, "subs": subs, "target": target, "seconds": time.monotonic() - t0,
           "grades": grades(out) if (out / "grades.csv").is_file() else {}}
    for pid in _survivors():
        os.kill(pid, 9)


def test_next_learner_gets_full_marks_after_each_attack(next_learner):
    proc, g = next_learner["proc"], next_learner["grades"]
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    assert {s for s, _ in g} == {p.stem for p in next_learner["subs"].iterdir()}
    for honest in ("c_honest", "e_honest", "g_honest"):
        for ex in EXERCISES:
            assert g[(honest, ex)]["status"] == "passed", g[(honest, ex)]
    for ex in ("01.sigmoid_model", "01.run_both", "01.quiz"):  # the spy's own answers are the solution's
        assert g[("b_spy", ex)]["status"] == "passed", g[("b_spy", ex)]


def test_no_channel_reaches_the_next_learner(next_learner):
    """Shared memory, xattrs, files, deep folders and links planted by one are not seen by the next."""
    g = next_learner["grades"]
    planted, seen = _found(g, "a_planter"), _found(g, "b_spy")
    assert planted["shm"] and planted["files"], planted  # the planter saw its own plants
    assert seen == {"shm": False, "xattr": [], "files": [], "uid": seen["uid"]}, seen
    assert seen["uid"] != planted["uid"] and 0 not in (seen["uid"], planted["uid"])  # a fresh uid each


def test_root_side_followed_no_link(next_learner):
    target = next_learner["target"]
    st = target.stat()
    assert (st.st_mode & 0o777, st.st_uid) == (0o755, os.getuid())
    assert (target / "keep.txt").read_text() == "keep"


def test_oversized_record_is_cut_and_readable(next_learner):
    from labkit.grading.results import MAX_RESULTS_BYTES, load_run

    out = next_learner["out"]
    path = out / "students" / "f_big" / "results.json"
    assert path.stat().st_size < MAX_RESULTS_BYTES // 4
    assert next_learner["grades"][("f_big", "01.versions")]["status"] != "passed"
    assert len(load_run(out).learners) == len(list(next_learner["subs"].iterdir()))
    assert max(len(r["message"]) for r in next_learner["grades"].values()) <= 2000


def test_nothing_of_the_attackers_survives(next_learner):
    time.sleep(0.5)
    assert not _survivors(), "a thread of a zombie process outlived grading"
    assert not _own_tmp_left(next_learner["proc"])
    assert not _abandoned_uids_with_tasks(), "a uid no grader holds any more still has live processes"


def _abandoned_uids_with_tasks() -> list[int]:
    """Uids whose claim file no grader holds (a grader releases a uid only once it is empty, so a file
    left unlocked is an uid it could not empty) but which still have live processes. Claims held by a
    grader running at the same time (another test worker) are not looked at."""
    import fcntl

    locks, found = Path(sandbox.UID_LOCKS), []
    for p in (locks.iterdir() if locks.is_dir() else []):
        if not p.name.isdigit():
            continue
        try:
            fd = os.open(p, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            continue  # released meanwhile
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            continue  # held by a live grader
        finally:
            os.close(fd)
        if sandbox.uid_tasks(int(p.name), live_only=True):
            found.append(int(p.name))
    return found


def test_zombie_verdicts_are_cached_only_when_right(next_learner, tmp_path):
    """Re-running reuses the honest learners' verdicts (full marks), and the next batch is clean."""
    proc = subprocess.run(LABKIT + ["grade", "01", str(next_learner["subs"]), "--out", str(next_learner["out"]),
                                    "--jobs", "1", "--timeout", "60", "--no-progress"],
                          capture_output=True, text=True, cwd=ROOT, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-2000:]
    g = grades(next_learner["out"])
    for honest in ("c_honest", "e_honest", "g_honest"):
        assert all(g[(honest, ex)]["status"] == "passed" for ex in EXERCISES), honest
