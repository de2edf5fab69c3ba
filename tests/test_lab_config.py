"""The course's JupyterLab server config (binder/jupyter_server_config.json, installed by `make` and
binder/postBuild): it allows exactly the kernel every notebook names. The running lab is tested in
tests/test_netron_proxy.py (one kernel listed, no plain-TCP warning)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CONFIG = json.loads((ROOT / "binder" / "jupyter_server_config.json").read_text())
NOTEBOOKS = sorted((ROOT / "solutions").glob("*.ipynb")) + sorted((ROOT / "lessons").glob("*.ipynb"))


def test_one_kernel_and_encrypted_transport():
    assert CONFIG["KernelSpecManager"]["allowed_kernelspecs"] == ["python3"]
    assert CONFIG["KernelManager"]["transport_encryption"] == "auto"  # only where the spec supports Curve


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_notebook_names_the_allowed_kernel(path):
    spec = json.loads(path.read_text())["metadata"].get("kernelspec", {})
    assert spec.get("name") in CONFIG["KernelSpecManager"]["allowed_kernelspecs"], spec
