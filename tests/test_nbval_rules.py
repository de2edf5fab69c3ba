"""How CI compares committed outputs: nbval's skip rules reach solutions/ (they once lived where only
tests/ saw them), the second CPU code path really changes ONNX Runtime's threads, and nbval's run of
a notebook is held to the lesson budget."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

PLUGIN = '''
import json
def pytest_collection_finish(session):
    seen = {str(i.parent.path.relative_to(i.config.rootpath)): list(getattr(i.parent, "skip_compare", ()))
            for i in session.items}
    print("SKIP=" + json.dumps(seen))
'''


def test_skip_rules_apply_to_solution_notebooks(tmp_path):
    (tmp_path / "skip_probe.py").write_text(PLUGIN)
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--nbval", "--collect-only", "-q", "-p", "skip_probe", "-p", "no:cacheprovider",
         "solutions/00_setup_check.ipynb"],
        cwd=ROOT, capture_output=True, text=True, env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"})
    line = next((l for l in out.stdout.splitlines() if l.startswith("SKIP=")), None)
    assert line, out.stdout + out.stderr
    seen = json.loads(line[5:])
    assert list(seen) == ["solutions/00_setup_check.ipynb"]
    skipped = seen["solutions/00_setup_check.ipynb"]
    for mime in ("application/vnd.labkit.result+json", "text/html", "image/png", "stderr"):
        assert mime in skipped, f"nbval would compare {mime} in solutions/"
    assert "text/plain" not in skipped, "verdicts are compared through text/plain"


PROBE = '''
import os, runpy, sys
if len(sys.argv) > 1:
    runpy.run_path(sys.argv[1])
import onnxruntime as ort
from onnx import TensorProto, helper
io = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [None, 4]) for n in "XY"]
m = helper.make_model(helper.make_graph([helper.make_node("Relu", ["X"], ["Y"])], "g", io[:1], io[1:]),
                      opset_imports=[helper.make_opsetid("", 17)], ir_version=9)
before = len(os.listdir("/proc/self/task"))
default = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
after_default = len(os.listdir("/proc/self/task"))
chosen = ort.SessionOptions()
chosen.intra_op_num_threads = 2
explicit = ort.InferenceSession(m.SerializeToString(), chosen, providers=["CPUExecutionProvider"])
print(after_default - before, len(os.listdir("/proc/self/task")) - after_default)
'''


def test_second_cpu_path_gives_ort_one_thread(tmp_path):
    """The IPython startup file of `make test-notebooks` makes ORT's default sessions single-threaded
    (no worker thread), and leaves a thread count a lesson chose alone."""
    if not Path("/proc/self/task").is_dir():
        pytest.skip("counts threads through /proc (Linux)")
    probe = tmp_path / "probe.py"
    probe.write_text(PROBE)
    startup = ROOT / "tests" / "cpu_path" / "one_ort_thread.py"
    plain = subprocess.run([sys.executable, str(probe)], capture_output=True, text=True, check=True).stdout.split()
    patched = subprocess.run([sys.executable, str(probe), str(startup)], capture_output=True, text=True, check=True).stdout.split()
    assert patched == ["0", "1"], f"with the startup file: new threads {patched} (default session, 2-thread session)"
    if os.cpu_count() and os.cpu_count() > 1:
        assert plain[0] != "0", "ORT's default already used one thread here: the notebooks tier's thread path would change nothing"


TINY_BUDGET = '''
import labkit.notebooks
labkit.notebooks.BUDGET_SECONDS = 0.05
'''


@pytest.mark.notebooks  # two nbval runs, each starting a kernel (11 s): the notebooks tier's own rule
def test_nbval_run_fails_a_notebook_over_the_time_budget(tmp_path):
    """The notebooks tier's one run of a solution is held to the lesson budget (here shrunk to 0.05 s
    by a plugin; the cell computes, so wall and CPU time are both over); with LABKIT_BUDGETS=0 it is
    not."""
    import nbformat

    where = ROOT / "test-artifacts" / f"budget-{os.getpid()}"   # under the root conftest.py, git-ignored
    where.mkdir(parents=True, exist_ok=True)
    try:
        nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                                "language": "python"}})
        nb.cells = [nbformat.v4.new_code_cell("import time\nt = time.time()\nwhile time.time() - t < 0.3:\n    pass",
                                              execution_count=1),
                    nbformat.v4.new_code_cell("1 + 1", execution_count=2, outputs=[nbformat.v4.new_output(
                        "execute_result", data={"text/plain": "2"}, execution_count=2)])]
        nbformat.write(nb, where / "slow.ipynb")
        (tmp_path / "tiny_budget.py").write_text(TINY_BUDGET)
        env = {**os.environ, "PYTHONPATH": str(tmp_path)}
        # (the cell timeout, tied to the budget, is set back to a minute: only the budget check is tested)
        cmd = [sys.executable, "-m", "pytest", "--nbval", "--nbval-cell-timeout", "60", "-p", "tiny_budget",
               "-p", "no:cacheprovider", "-p", "no:xdist", "-q", str(where / "slow.ipynb")]
        over = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env, timeout=300)
        assert over.returncode == 1, over.stdout[-2000:]
        assert "over the lesson budget of 0.05 s" in over.stdout, over.stdout[-2000:]
        assert "slow.ipynb" in over.stdout and "lesson budgets" in over.stdout
        assert "1 failed, 1 passed" in over.stdout, "the first cell passes; the last one carries the budget failure"
        off = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env={**env, "LABKIT_BUDGETS": "0"}, timeout=300)
        assert off.returncode == 0, off.stdout[-2000:]
    finally:
        shutil.rmtree(where, ignore_errors=True)
