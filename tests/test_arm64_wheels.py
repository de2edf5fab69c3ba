"""Every platform claim of docs/arm64.md, checked against the package index.

For each platform the guide covers and each pinned requirement of pyproject.toml, ask pip for a
binary wheel for that platform and Python 3.11 (`--only-binary=:all: --platform TAG --python-version
3.11 --no-deps`). pip resolves with `install --dry-run --report`, which reads the wheels' metadata
from the index without downloading torch for three platforms; the report names the wheel file it
would install, so the platform of the wheel is checked too. pip runs with this machine's
configuration (index, mirrors, certificates), like a learner's pip would.

Torch for Windows on Arm comes from PyTorch's own index (the guide says so); that case is skipped
with a reason when download.pytorch.org cannot be reached. The whole module is skipped when the
configured package index cannot be reached (probed with a 3 s timeout).
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from net_util import index_unreachable, reachable

pytestmark = pytest.mark.network

ROOT = Path(__file__).resolve().parents[1]
PYTHON = "3.11"
PYTORCH_INDEX = "https://download.pytorch.org/whl/cpu"
#: platform tag -> (what the guide calls it, pattern the wheel file's platform tag must match)
PLATFORMS = {
    "manylinux_2_28_aarch64": ("Raspberry Pi OS 64-bit / Ubuntu on Graviton (Linux arm64)",
                               r"(manylinux\w*_aarch64|any)"),
    "macosx_14_0_arm64": ("macOS 14+ on Apple Silicon", r"(macosx_\d+_\d+_(arm64|universal2)|any)"),
    "win_arm64": ("Windows on Arm", r"(win_arm64|any)"),
}
#: (platform, Python) pairs docs/arm64.md tells learners to use
CASES = [("manylinux_2_28_aarch64", "3.11"),  # Raspberry Pi OS Bookworm's Python
         ("manylinux_2_28_aarch64", "3.13"),  # Raspberry Pi OS Trixie's Python (what a new Pi ships)
         ("manylinux_2_28_aarch64", "3.12"),  # Ubuntu 24.04's Python (Graviton)
         ("macosx_14_0_arm64", "3.11"), ("macosx_14_0_arm64", "3.12"), ("macosx_14_0_arm64", "3.13"),
         ("win_arm64", "3.11"), ("win_arm64", "3.12")]
#: (platform, package) pairs that come from PyTorch's index instead of the configured one
FROM_PYTORCH_INDEX = {("win_arm64", "torch")}


def norm(name: str) -> str:
    """PEP 503 normalized project name (jupyter_server_proxy == jupyter-server-proxy)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def pins() -> dict[str, str]:
    """The exact pins of [project].dependencies (the one place versions are pinned)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    out = {}
    for req in project["dependencies"]:
        m = re.fullmatch(r"\s*([A-Za-z0-9_.\-]+)\s*==\s*([^;\s]+)\s*", req)
        if m:
            out[norm(m.group(1))] = m.group(2)
    return out


@pytest.fixture(scope="module", autouse=True)
def index_reachable():
    why = index_unreachable()
    if why:
        pytest.skip(f"{why}; the arm64 wheel checks need it")


def ask_pip(platform: str, reqs: list[str], tmp: Path, index_url: str | None = None,
            python: str = PYTHON) -> tuple[dict[str, str], str]:
    """Resolve `reqs` as binary wheels for `platform`; return {name: wheel file name} and pip's stderr."""
    report = tmp / "report.json"
    cmd = [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--no-deps",
           "--only-binary=:all:", "--platform", platform, "--python-version", python,
           "--target", str(tmp / "target"), "--report", str(report), "--quiet", "--retries", "1",
           "--timeout", "30"]
    if index_url:
        cmd += ["--index-url", index_url]
    proc = subprocess.run(cmd + reqs, capture_output=True, text=True)
    if proc.returncode != 0 or not report.is_file():
        return {}, proc.stderr
    found = {}
    for item in json.loads(report.read_text())["install"]:
        found[norm(item["metadata"]["name"])] = item["download_info"]["url"].rsplit("/", 1)[-1]
    return found, proc.stderr


def wheel_for(filename: str, tag_re: str) -> bool:
    """Does one of the wheel's platform tags (the last dash-separated field, dot-joined) match?"""
    return any(re.fullmatch(tag_re, t) for t in filename.removesuffix(".whl").split("-")[-1].split("."))


def missing_from(stderr: str) -> str:
    m = re.search(r"(Could not find a version that satisfies the requirement [^\n]+|No matching distribution[^\n]+)", stderr)
    return m.group(1) if m else (stderr.strip().splitlines() or ["no output"])[-1]


@pytest.mark.parametrize("platform, python", CASES)
def test_every_pinned_requirement_has_a_wheel(platform, python, tmp_path):
    label, tag_re = PLATFORMS[platform]
    wanted = {n: v for n, v in pins().items() if (platform, n) not in FROM_PYTORCH_INDEX}
    found, stderr = ask_pip(platform, [f"{n}=={v}" for n, v in sorted(wanted.items())], tmp_path, python=python)
    if not found:  # ask one by one to name every package that has no wheel
        missing = []
        for i, (name, version) in enumerate(sorted(wanted.items())):
            one, err = ask_pip(platform, [f"{name}=={version}"], tmp_path / str(i), python=python)
            if not one:
                missing.append(f"{name}=={version} ({missing_from(err)})")
        assert not missing, (f"{label} ({platform}, Python {python}): no wheel for "
                             + "; ".join(missing))
        pytest.fail(f"pip could not resolve the pins together for {platform}: {missing_from(stderr)}")
    assert set(found) >= set(wanted), f"{label}: pip did not report {sorted(set(wanted) - set(found))}"
    wrong = {n: f for n, f in found.items() if not wheel_for(f, tag_re)}
    assert not wrong, f"{label}: wheels for another platform: {wrong}"


def test_torch_for_windows_on_arm_from_pytorch_index(tmp_path):
    why = reachable(f"{PYTORCH_INDEX}/torch/")
    if why:
        pytest.skip(f"PyTorch's index {PYTORCH_INDEX} cannot be reached from here ({why}); "
                    "the Windows-on-Arm torch wheel is not checked")
    version = pins()["torch"]
    found, stderr = ask_pip("win_arm64", [f"torch=={version}"], tmp_path, index_url=PYTORCH_INDEX)
    assert wheel_for(found.get("torch", "x-none.whl"), PLATFORMS["win_arm64"][1]), \
        f"Windows on Arm: no torch=={version} wheel on {PYTORCH_INDEX} ({missing_from(stderr)})"


def test_no_32_bit_arm_wheels_for_torch_and_onnxruntime(tmp_path):
    """The guide says a 32-bit OS cannot work: check that claim too."""
    p = pins()
    for name in ("torch", "onnxruntime"):
        found, _ = ask_pip("linux_armv7l", [f"{name}=={p[name]}"], tmp_path / name)
        assert not found, f"{name} now has a 32-bit Arm wheel ({found}): update docs/arm64.md"


def test_torch_needs_macos_14(tmp_path):
    """The guide says torch >= 2.12 has no wheels for macOS 13: a Mac must run macOS 14 or newer."""
    version = pins()["torch"]
    found, _ = ask_pip("macosx_13_0_arm64", [f"torch=={version}"], tmp_path)
    assert not found, f"torch=={version} installs on macOS 13 ({found}): update docs/arm64.md"


def test_onnxruntime_on_pypi_for_windows_on_arm_from_1_24_2(tmp_path):
    found, stderr = ask_pip("win_arm64", ["onnxruntime==1.24.2"], tmp_path)
    assert found, f"onnxruntime==1.24.2 has no win_arm64 wheel: {missing_from(stderr)}"
    older, _ = ask_pip("win_arm64", ["onnxruntime==1.24.1"], tmp_path / "older")
    assert not older, "onnxruntime 1.24.1 has a win_arm64 wheel after all: update docs/arm64.md"


def test_onnxruntime_pin_is_new_enough_for_windows_on_arm():
    """The guide says onnxruntime >= 1.24.2 has Windows-on-Arm wheels on PyPI."""
    version = tuple(int(x) for x in re.findall(r"\d+", pins()["onnxruntime"])[:3])
    assert version >= (1, 24, 2)
