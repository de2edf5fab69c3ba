"""The warm kernel server (labkit/grading/forkserver.py): nothing of one submission reaches the next.

Unit tests need no kernel: emptying a sandbox's /tmp spares the mounted folders, a slot is wiped.
The grading test runs four submissions one after the other in one worker (--jobs 1): a lurker
leaves files in /tmp, /dev/shm and its home, and a daemon; the spy after it must find none of it
and get a random seed of its own (as a fresh process does); a stopper stops the kernel server, and
the submission after it is graded as usual.
"""
from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from labkit import sandbox
from labkit.grading import forkserver
from labkit.grading.sandbox import NoSandbox

from grading_util import sleepers, with_answers

ROOT = Path(__file__).resolve().parents[1]
SOLUTION = ROOT / "solutions" / "01_onnx_concepts.ipynb"
MARK = str(800000 + os.getpid() % 99999)  # `sleep <mark>`: the lurker's daemon


def test_empty_spares_mounted_folders_and_the_way_to_them(tmp_path):
    mounted = tmp_path / "labkit-grade-x" / "slot1"
    mounted.mkdir(parents=True)
    (mounted / "answer.json").write_text("kept: it is the mounted slot, emptied by the worker")
    (tmp_path / "labkit-grade-x" / "planted").write_text("x")
    (tmp_path / "left.txt").write_text("x")
    locked = tmp_path / "locked" / "deeper"
    locked.mkdir(parents=True)
    (locked / "f").write_text("x")
    os.chmod(locked, 0)
    os.chmod(locked.parent, 0o500)
    os.symlink("/etc/passwd", tmp_path / "link")
    left = forkserver._empty(str(tmp_path), frozenset([str(mounted)]))
    assert left == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["labkit-grade-x"]
    assert sorted(p.name for p in (tmp_path / "labkit-grade-x").iterdir()) == ["slot1"]
    assert (mounted / "answer.json").is_file()
    assert Path("/etc/passwd").is_file()


def test_each_submission_gets_a_fresh_folder_and_nothing_is_left(tmp_path):
    spec = type("Spec", (), {"uid": None, "sandbox": NoSandbox("test")})()
    server = forkserver.KernelServer(spec, tmp_path / "slot7")
    first = server.begin()
    (first / "answers" / "01.quiz").mkdir()
    (first / ".hidden").write_text("x")
    assert server.end()
    second = server.begin()
    assert second != first and not first.exists()
    assert sorted(p.name for p in second.iterdir()) == ["answers", "tmp"]
    assert not any((second / "answers").iterdir())
    server.close()
    assert not any((tmp_path / "slot7").iterdir())


def test_remove_tree_any_depth_no_link_followed(tmp_path):
    """1 500 nested folders (the RecursionError of issue 20), links, a fifo, an unreadable folder:
    removed, and the link's target outside is untouched (mode and content)."""
    outside = tmp_path / "outside"
    outside.mkdir(mode=0o755)
    (outside / "keep.txt").write_text("keep")
    top = tmp_path / "slot"
    top.mkdir()
    here = os.getcwd()
    try:
        os.chdir(top)
        for i in range(1500):
            os.mkdir("a")
            os.chdir("a")
        os.symlink(outside / "keep.txt", "filelink")
    finally:
        os.chdir(here)
    os.symlink(outside, top / "link")
    os.mkfifo(top / "fifo")
    (top / "locked").mkdir()
    (top / "locked" / "f").write_text("x")
    os.chmod(top / "locked", 0)
    assert sandbox.remove_tree(top)
    assert not top.exists()
    assert (outside / "keep.txt").read_text() == "keep" and (outside.stat().st_mode & 0o777) == 0o755


def test_remove_tree_is_bounded(tmp_path):
    top = tmp_path / "many"
    top.mkdir()
    for i in range(300):
        (top / str(i)).write_text("")
    assert not sandbox.remove_tree(top, max_entries=100)  # stopped, reported, no exception
    assert sandbox.remove_tree(top)


def test_copy_answers_follows_no_link(tmp_path):
    from labkit.grading.judge import copy_answers

    secret = tmp_path / "secret.txt"
    secret.write_text("the seed")
    work = tmp_path / "w1"
    (work / "answers" / "01.quiz").mkdir(parents=True)
    (work / "answers" / "01.quiz" / "answer.json").write_text("{}")
    os.symlink(secret, work / "answers" / "01.quiz" / "stolen.json")
    os.symlink(tmp_path, work / "answers" / "01.versions")
    problems = copy_answers(work / "answers", tmp_path / "copy")
    assert sorted(p.name for p in (tmp_path / "copy").iterdir()) == ["01.quiz"]
    assert sorted(p.name for p in (tmp_path / "copy" / "01.quiz").iterdir()) == ["answer.json"]
    assert any("stolen.json" in p for p in problems)
    os.rename(work / "answers", work / "real")
    os.symlink(tmp_path, work / "answers")  # the answers folder itself a link
    assert copy_answers(work / "answers", tmp_path / "copy2") == [] and not any((tmp_path / "copy2").iterdir())


def test_log_tail_follows_no_link(tmp_path):
    secret = tmp_path / "seed"
    secret.write_text("123456")
    os.symlink(secret, tmp_path / "kernel.log")
    assert forkserver.log_tail(tmp_path / "kernel.log") == "no output"


def test_records_are_bounded_when_written():
    from labkit.checks.result import TestResult
    from labkit.grading.results import MAX_MESSAGE_CHARS, MAX_TESTS, ExerciseResult, bound_results, exercises_json

    huge = [ExerciseResult("01.x", "X", "failed", 0.0, 1.0, "input " * 1_000_000,
                           [TestResult("t" * 10_000, False, "")] * 40_000)]
    out = bound_results(huge)
    assert len(json.dumps(exercises_json(out))) < 200_000
    assert len(out[0].message) <= MAX_MESSAGE_CHARS and out[0].message.endswith("not shown)")
    assert len(out[0].tests) == MAX_TESTS and out[0].tests[0].name.endswith("…")


def test_kernel_states_that_cannot_answer_count_as_gone():
    assert forkserver._state_ppid(os.getpid())[0] not in forkserver._GONE
    assert forkserver._state_ppid(2 ** 22 + 12345)[0] in forkserver._GONE  # no such process


# ---------------------------------------------------------------- one worker, submissions in a row

LURKER = (
    "import os, signal\n"
    "home = os.path.expanduser('~')\n"
    "for d in ('/tmp', '/dev/shm', home):\n"
    "    open(os.path.join(d, 'left_by_lurker'), 'w').write('x')\n"
    "os.makedirs('/tmp/lurker_dir/deep', exist_ok=True)\n"
    "os.chmod('/tmp/lurker_dir', 0)\n"
    "if os.fork() == 0:\n"
    "    os.setsid()\n"
    "    if os.fork() == 0:\n"
    f"        os.execv('/bin/sleep', ['sleep', '{MARK}'])\n"
    "    os._exit(0)\n"
    "sigmoid_model = None\n")
STOPPER = (  # stops its kernel server (kernels are forked from it: the same command line)
    "import os, signal\n"
    "for p in [p for p in os.listdir('/proc') if p.isdigit() and int(p) != os.getpid()]:\n"
    "    try:\n"
    "        if b'labkit.grading.forkserver' in open(f'/proc/{p}/cmdline', 'rb').read():\n"
    "            os.kill(int(p), signal.SIGSTOP)\n"
    "    except Exception:\n"
    "        pass\n"
    "sigmoid_model = None\n")
SPY = (
    "import json, os\n"
    "import torch\n"
    "def _others():\n"
    "    out = []\n"
    "    for p in [p for p in os.listdir('/proc') if p.isdigit()]:\n"
    "        if int(p) not in (1, os.getpid(), os.getppid()):\n"
    "            try:\n"
    "                out.append(open(f'/proc/{p}/cmdline', 'rb').read().replace(b'\\0', b' ').decode()[:80])\n"
    "            except Exception:\n"
    "                pass\n"
    "    return out\n"
    "def _planted(top):\n"
    "    return sorted(os.path.join(d, n) for d, ds, fs in os.walk(top) for n in ds + fs if 'lurker' in n)\n"
    "SEEN = {'planted': _planted('/tmp') + _planted('/dev/shm') + _planted(os.path.expanduser('~')),\n"
    "        'others': _others(), 'torch_first': torch.rand(1).item(), 'torch_seed': torch.initial_seed()}\n"
    "def model_versions(model_bytes):  # hex: the judge's message quotes it unchanged\n"
    "    return {'ir_version': json.dumps(SEEN).encode().hex(), 'opset': 0}\n")


def _with_answers(answers: dict[str, str]) -> dict:
    return with_answers(SOLUTION, answers)


def _daemons() -> list[int]:
    return sleepers(MARK)


def _seen(g: dict, student: str) -> dict:
    """What SPY found in that student's kernel (smuggled out in a failing answer's message)."""
    msg = g[(student, "01.versions")]["message"]
    return json.loads(bytes.fromhex(re.search(r"'ir_version': '([0-9a-f]+)'", msg).group(1)))


@pytest.mark.grading
def test_nothing_of_a_submission_reaches_the_next(tmp_path):
    if not sandbox.bwrap_status()[0]:
        pytest.skip("bubblewrap is not usable here: " + sandbox.bwrap_status()[1])
    subs = tmp_path / "class"
    subs.mkdir()
    (subs / "a_lurker.ipynb").write_text(json.dumps(_with_answers({"01.sigmoid_model": LURKER, "01.versions": SPY})))
    (subs / "b_spy.ipynb").write_text(json.dumps(_with_answers({"01.versions": SPY})))
    (subs / "c_stopper.ipynb").write_text(json.dumps(_with_answers({"01.sigmoid_model": STOPPER})))
    (subs / "d_after.ipynb").write_text(SOLUTION.read_text())
    out = tmp_path / "out"
    try:
        proc = subprocess.run([sys.executable, "-m", "labkit.cli", "grade", "01", str(subs), "--out", str(out),
                               "--jobs", "1", "--timeout", "60", "--no-progress"],
                              capture_output=True, text=True, cwd=ROOT, timeout=900)
        assert proc.returncode == 0, proc.stderr[-3000:]
        with open(out / "grades.csv", newline="") as f:
            g = {(r["student"], r["exercise"]): r for r in csv.DictReader(f)}
        seen, lurker = _seen(g, "b_spy"), _seen(g, "a_lurker")
        assert seen["planted"] == [], seen["planted"]
        assert seen["others"] == [], seen["others"]  # no daemon of the lurker, nothing but its server
        assert len(lurker["planted"]) >= 4, lurker  # it did plant: /tmp, /dev/shm, home, a locked folder
        assert seen["torch_seed"] != lurker["torch_seed"] and seen["torch_first"] != lurker["torch_first"]
        for ex in ("01.sigmoid_model", "01.run_both", "01.quiz"):
            assert g[("b_spy", ex)]["status"] == "passed", g[("b_spy", ex)]
        for ex in ("01.sigmoid_model", "01.run_both", "01.versions", "01.quiz"):  # a stopped server costs nothing
            assert g[("d_after", ex)]["status"] == "passed", g[("d_after", ex)]
        assert not _daemons(), "the lurker's daemon outlived grading"
    finally:
        for pid in _daemons():
            os.kill(pid, 9)


@pytest.mark.grading
def test_server_without_bubblewrap_forks_kernels_and_resets(tmp_path):
    """The --no-sandbox path (no bwrap: the launcher execs the server directly), driven without the CLI."""
    import asyncio

    import labkit
    import labkit_judges
    from labkit.grading.rebuild import RunCell
    from labkit.grading.forkserver import SandboxSpec
    from labkit.grading.run import Runner

    spec = SandboxSpec(dict(sandbox.DEFAULT_LIMITS), NoSandbox("test"),
                       tuple(map(str, [*sandbox.python_paths(), Path(labkit.__file__).parent])),
                       (str(Path(labkit_judges.__file__).parent),), str(tmp_path), str(tmp_path), None)
    plan = forkserver.warm_plan(["import torch, onnxscript", "report = labkit.doctor()"])
    server = forkserver.KernelServer(spec, tmp_path / "slot1", plan)
    try:
        pids = []
        for n in range(2):
            if n:
                assert server.end()
            server.begin()
            cells = [RunCell("import os\nassert 'mine.txt' not in os.listdir('.')\n"
                             "open('mine.txt', 'w').write(str(os.getpid()))", "code", None, 0),
                     RunCell("import sys\nassert 'onnxscript' in sys.modules", "code", None, 1),  # warm
                     RunCell("from labkit import gpu\nassert 'adapter' in gpu._STATE", "code", None, 2)]  # probed
            runner = Runner(cells, server, 60, 120)
            events = asyncio.run(runner.run())
            assert [e["what"] for e in events] == ["ok", "ok", "ok"], events
            pids.append(int((server.work / "mine.txt").read_text()))
            assert server.starts == 1  # one warm server for both submissions
        assert pids[0] != pids[1] and server.pid not in pids
        assert server.end()
        assert list(server.mount.iterdir()) == []
    finally:
        server.close()
    assert not server.alive()


def test_reused_torchlib_list_changes_no_export(monkeypatch):
    """The server's one shortcut (the exporter's torchlib list, built once) gives the same ONNX bytes."""
    import contextlib
    import io
    import sys

    import torch
    import torch.onnx

    from labkit.models import trained_cnn

    model = trained_cnn()

    def export() -> bytes:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            return torch.onnx.export(model, (torch.zeros(3, 1, 8, 8),), dynamo=True,
                                     dynamic_shapes={"input": {0: "batch"}}).model_proto.SerializeToString()

    before = export()
    apis = {n: m for n, m in sys.modules.items() if n.startswith("onnxscript._framework_apis.torch_")}
    for m in apis.values():
        if hasattr(m, "get_torchlib_ops"):
            monkeypatch.setattr(m, "get_torchlib_ops", m.get_torchlib_ops)  # restored after the test
    forkserver._reuse_torchlib_list()
    assert all("labkit kernel server" in (m.get_torchlib_ops.__doc__ or "")
               for m in apis.values() if hasattr(m, "get_torchlib_ops")), "the list was not reused"
    assert export() == before


def test_warm_plan_follows_what_the_lesson_imports():
    plan = forkserver.warm_plan(["import numpy as np\nfrom labkit import check", "print('import torch')"])
    assert plan == {"modules": ["numpy", *forkserver.BASE_MODULES], "export": False, "gpu": False}
    plan = forkserver.warm_plan(["import torch\nimport matplotlib.pyplot as plt",
                                 "p = torch.onnx.export(m, (x,), dynamo=True)"])
    assert plan["export"] and plan["modules"][:3] == ["matplotlib.pyplot", "torch", "torch.onnx"]
    assert forkserver.warm_plan(["import os, torch.nn as nn  # a comment"])["modules"][0] == "torch"
    assert "onnxruntime" not in str(forkserver.warm_plan(["import onnxruntime as ort"]))  # starts a thread
    assert forkserver.warm_plan(["report = labkit.doctor()"])["gpu"]  # lesson 00 and 04
    assert forkserver.warm_plan(["adapter = labkit.gpu.setup()"])["gpu"]  # lesson 11
    assert not forkserver.warm_plan(["print(labkit.gpu.EP_NAME)"])["gpu"]


def test_the_clients_sockets_are_bounded(tmp_path):
    """The bound is on the sockets the worker's kernel clients really use (issue 20: it was set on a
    context they never used)."""
    import zmq
    from jupyter_client.asynchronous import AsyncKernelClient

    from labkit.grading.run import MAX_MESSAGE_BYTES, MAX_QUEUED, bounded_context

    kc = AsyncKernelClient(context=bounded_context())
    kc.load_connection_info({"transport": "ipc", "ip": str(tmp_path / "k"), "shell_port": 1, "iopub_port": 2,
                             "stdin_port": 3, "control_port": 4, "hb_port": 5, "key": "x",
                             "signature_scheme": "hmac-sha256"})
    for sock in (kc.connect_iopub(), kc.connect_shell(), kc.connect_control()):
        try:
            assert sock.getsockopt(zmq.MAXMSGSIZE) == MAX_MESSAGE_BYTES
            assert sock.getsockopt(zmq.RCVHWM) == MAX_QUEUED
        finally:
            sock.close(linger=0)
