"""One kernel message cannot take the grading worker past its bound, however it is split into frames
(issue 31): a kernel sends one IOPub message of 400 frames of just under 8 MB (3.2 GB in all, the
same 8 MB buffer sent 400 times, so the kernel itself stays small). The worker's peak resident
memory (VmHWM) is measured while the batch runs: before the relay it reached 3264 MB.

Grading tier: lesson 00, two submissions under bubblewrap (~20 s)."""
from __future__ import annotations

import csv
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from labkit import sandbox

from conftest import ROOT
from grading_util import with_answers

pytestmark = pytest.mark.grading

SOLUTION = ROOT / "solutions" / "00_setup_check.ipynb"
#: the worker's peak may not pass this (measured with the relay: 87 MB; before it: 1523 MB)
WORKER_PEAK_MB = 400
FLOOD = '''
buf = memoryview(bytes((8 << 20) - 4096))
kernel = get_ipython().kernel
kernel.session.send(kernel.iopub_socket, "display_data", {"data": {}, "metadata": {}}, buffers=[buf] * 400)
def relu(x):
    return np.maximum(x, 0)
'''


def _descendants(pid: int) -> set[int]:
    kids: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
                kids.setdefault(int(stat[stat.rindex(")") + 2:].split()[1]), []).append(int(d.name))
            except (OSError, ValueError):
                pass
    out, todo = set(), [pid]
    while todo:
        for k in kids.get(todo.pop(), []):
            out.add(k)
            todo.append(k)
    return out


def _peak_mb(pid: int) -> int:
    """VmHWM (peak resident set) of `pid` in MB, 0 if it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) >> 10
    except OSError:
        pass
    return 0


def test_a_multipart_flood_costs_the_worker_one_message_at_most(tmp_path):
    if not sandbox.bwrap_status()[0]:
        pytest.skip("bubblewrap is not usable here: " + sandbox.bwrap_status()[1])
    subs, out = tmp_path / "class", tmp_path / "out"
    subs.mkdir()
    (subs / "a_flood.ipynb").write_text(json.dumps(with_answers(SOLUTION, {"00.relu": FLOOD})))
    (subs / "b_solution.ipynb").write_text(SOLUTION.read_text())  # the worker lives on after the flood
    proc = subprocess.Popen([sys.executable, "-m", "labkit.cli", "grade", "00", str(subs), "--out", str(out),
                             "--jobs", "1", "--no-progress"], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    peaks: dict[int, int] = {}
    deadline = time.monotonic() + 600
    while proc.poll() is None and time.monotonic() < deadline:
        for p in _descendants(proc.pid):
            try:
                if b"multiprocessing" in Path(f"/proc/{p}/cmdline").read_bytes():
                    peaks[p] = max(peaks.get(p, 0), _peak_mb(p))
            except OSError:
                pass
        time.sleep(0.05)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err[-3000:]
    assert peaks, "no grading worker was seen"
    print(f"grading workers' peak resident memory (MB): {peaks}")  # shown with -s / in the report
    assert max(peaks.values()) < WORKER_PEAK_MB, f"the worker's peak resident memory: {peaks} MB"
    with open(out / "grades.csv", newline="") as f:
        g = {(r["student"], r["exercise"]): r for r in csv.DictReader(f)}
    assert g[("b_solution", "00.relu")]["status"] == "passed" and ("a_flood", "00.relu") in g
