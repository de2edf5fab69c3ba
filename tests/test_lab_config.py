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


def test_lab_config_installs_the_layout_for_1024px(tmp_path):
    """binder/lab_config.py (`make lab`'s install, binder/postBuild) puts custom.css where the server
    serves it, turns custom CSS on, keeps what the environment's config already held, and installs the
    12 px code font (no smaller: 12 px is the floor for readable code). tests/test_browser.py measures
    the result at 1024x768."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("lab_config", ROOT / "binder" / "lab_config.py")
    lab_config = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(lab_config)
    etc = tmp_path / "etc" / "jupyter"
    etc.mkdir(parents=True)
    (etc / "jupyter_server_config.json").write_text(json.dumps({"ServerApp": {"ip": "0.0.0.0"}}))
    lab_config.install(tmp_path)

    config = json.loads((etc / "jupyter_server_config.json").read_text())
    assert config["ServerApp"]["ip"] == "0.0.0.0", "the environment's own config was dropped"
    assert config["LabApp"]["custom_css"] is True
    assert config["ServerApp"]["tornado_settings"]["static_custom_path"] == [str(etc / "custom")]
    assert (etc / "custom" / "custom.css").read_text() == (ROOT / "binder" / "custom.css").read_text()
    assert "--jp-sidebar-min-width" in (etc / "custom" / "custom.css").read_text()
    overrides = json.loads((tmp_path / "share" / "jupyter" / "lab" / "settings" / "overrides.json").read_text())
    cell = overrides["@jupyterlab/notebook-extension:tracker"]["codeCellConfig"]
    assert cell["customStyles"]["fontSize"] >= 12
    assert cell["lineWrap"] is False, "a wrapped line would hide a line that does not fit instead of showing it"
