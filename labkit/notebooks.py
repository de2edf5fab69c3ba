"""Run course notebooks headless and read the verdicts their check cells produced."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from typing import Any

import nbformat

from .checks import RESULT_MIME

KERNEL = "python3"
#: a lesson's budget on a quiet 2-core machine: cell time of its solution, and its kernel's peak memory
BUDGET_SECONDS = 60
BUDGET_MB = 1024


def budget_slack() -> float:
    """How much slower than a quiet machine CI may be (LABKIT_BUDGET_SLACK, default 1.5: nbval runs two
    notebooks at once on 2 cores). Scales the time budget and every notebook timeout tied to it."""
    try:
        return max(1.0, float(os.environ.get("LABKIT_BUDGET_SLACK", "1.5")))
    except ValueError:
        return 1.5


def cell_timeout() -> int:
    """Seconds one cell may run before it is stopped: the whole lesson's budget (with slack). A cell
    that takes longer is over budget anyway; this fails in minutes instead of nbval's 2000 s default."""
    return int(BUDGET_SECONDS * budget_slack())


def execute(path: str | os.PathLike, out: str | os.PathLike | None = None, parameters: dict | None = None,
            cwd: str | os.PathLike | None = None, timeout: int | None = None) -> nbformat.NotebookNode:
    """Execute a notebook with papermill in a fresh kernel (parameters go to its `parameters` cell).
    `timeout` is per cell, by default `cell_timeout()`."""
    import papermill as pm

    with tempfile.TemporaryDirectory() as tmp:
        nb = pm.execute_notebook(
            str(path), str(out) if out else None, parameters=parameters or {}, cwd=str(cwd or tmp),
            kernel_name=KERNEL, progress_bar=False, log_output=False, execution_timeout=timeout or cell_timeout(),
            kernel_manager_class=_encrypted_kernel_manager())
    return nb


def _encrypted_kernel_manager() -> type:
    """A kernel manager that gives the kernel CurveZMQ keys, as JupyterLab's does here
    (binder/jupyter_server_config.json): no "running over TCP without encryption" warning per run."""
    from jupyter_client.manager import AsyncKernelManager
    from traitlets import default

    class EncryptedKernelManager(AsyncKernelManager):
        @default("transport_encryption")
        def _encryption_default(self) -> str:
            return "auto"

    return EncryptedKernelManager


def verdicts(nb: Any) -> dict[str, dict]:
    """Exercise id -> the result dict its check cell displayed (the last one when run twice)."""
    found = {}
    for cell in nb.cells:
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            data = output.get("data", {})
            if RESULT_MIME in data:
                res = data[RESULT_MIME]
                found[res["exercise"]] = dict(res)
    return found


def measure(path: str | os.PathLike, parameters: dict | None = None) -> dict:
    """Execute `path` in a child process; return wall seconds, the kernel's peak memory (MB) and scores."""
    code = ("import json,resource,sys,time; from labkit.notebooks import execute, verdicts;"
            "t=time.perf_counter(); nb=execute(sys.argv[1], parameters=json.loads(sys.argv[2]));"
            "w=time.perf_counter()-t; v=verdicts(nb);"
            "print(json.dumps({'seconds':w,'peak_mb':resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss/1024,"
            "'points':sum(r['points'] for r in v.values()),'max_points':sum(r['max_points'] for r in v.values())}))")
    proc = subprocess.run([sys.executable, "-c", code, str(path), json.dumps(parameters or {})],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["?"])[-1]
        return {"seconds": float("nan"), "peak_mb": float("nan"), "points": 0, "max_points": 0, "error": tail}
    return json.loads(proc.stdout.strip().splitlines()[-1])
