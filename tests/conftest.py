"""Shared pytest setup: course paths. (nbval's comparison rules are in the root conftest.py.)"""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = sorted((ROOT / "solutions").glob("*.ipynb"))
LESSONS = sorted((ROOT / "lessons").glob("*.ipynb"))


def _one_ort_thread_per_worker() -> None:
    """`-n 2` runs a worker per core: ONNX Runtime sessions left at ORT's default (a thread per core, which
    spin while they wait) would put two pools on each core. In a worker, a session that chooses no count
    gets one thread, as in nbval's kernels (tests/cpu_path/one_ort_thread.py). Measured on the corpora of
    03.raw_input, 06.calibration, 10.io_binding and 11.device_decode: 123 s, then 104 s."""
    import os
    import runpy

    if os.environ.get("PYTEST_XDIST_WORKER"):
        runpy.run_path(str(ROOT / "tests" / "cpu_path" / "one_ort_thread.py"))


_one_ort_thread_per_worker()
