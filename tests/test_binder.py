"""Binder files: same pins as pyproject.toml, and a fresh environment built from them runs a lesson.

The fast tests read the files. The slow one (marked `notebooks`) does what repo2docker does on
mybinder.org, minus Docker: a fresh virtual environment, `pip install -r binder/requirements.txt`,
then `binder/postBuild` from the repository root, then a lesson executed with papermill inside it.
"""
from __future__ import annotations

import re
import stat
import subprocess
import tempfile
import tomllib
from pathlib import Path

import binder_env as binder_env_build
import nbformat
import pytest
from net_util import index_unreachable

ROOT = Path(__file__).resolve().parents[1]
BINDER = ROOT / "binder"
CPU_INDEX = "--extra-index-url https://download.pytorch.org/whl/cpu"
NAME_RE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)\s*(.*)$")


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _pins(lines: list[str]) -> dict[str, str]:
    """{canonical name: version specifier} of requirement lines."""
    pins = {}
    for line in lines:
        m = NAME_RE.match(line.strip())
        assert m, f"cannot read requirement {line!r}"
        name, spec = m.groups()
        assert _canonical(name) not in pins, f"{name} is listed twice"
        pins[_canonical(name)] = spec.replace(" ", "")
    return pins


def _requirement_lines() -> list[str]:
    """Non-empty, non-comment lines of binder/requirements.txt (options included)."""
    lines = []
    for raw in (BINDER / "requirements.txt").read_text().splitlines():
        line = raw.split(" #")[0].strip()
        if line and not line.startswith("#"):
            lines.append(line)
    return lines


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_runtime_pins_python_311():
    assert (BINDER / "runtime.txt").read_text().strip() == "python-3.11"
    requires = _pyproject()["project"]["requires-python"]
    assert ">=3.11" in requires.replace(" ", ""), f"runtime.txt's Python 3.11 is outside requires-python {requires!r}"


def test_requirements_take_cpu_torch_first():
    lines = _requirement_lines()
    assert lines[0] == CPU_INDEX, f"the first line should be {CPU_INDEX!r}, got {lines[0]!r}"
    options = [line for line in lines if line.startswith("-")]
    assert options == [CPU_INDEX], f"unexpected pip options {options} (only the CPU torch index belongs here)"


def test_requirements_match_pyproject_pins():
    """binder/requirements.txt must install exactly what pyproject.toml pins: no more, no less, same versions."""
    binder = _pins([line for line in _requirement_lines() if not line.startswith("-")])
    project = _pins(_pyproject()["project"]["dependencies"])
    missing = {n: s for n, s in project.items() if n not in binder}
    extra = {n: s for n, s in binder.items() if n not in project}
    drift = {n: (project[n], binder[n]) for n in project.keys() & binder.keys() if project[n] != binder[n]}
    assert not missing, f"pinned in pyproject.toml but not in binder/requirements.txt: {missing}"
    assert not extra, f"in binder/requirements.txt but not pinned in pyproject.toml: {extra}"
    assert not drift, f"versions drifted (pyproject.toml, binder/requirements.txt): {drift}"
    assert all(s.startswith("==") for s in binder.values()), "every Binder requirement is an exact pin"
    assert "jupyter-server-proxy" in binder, "Netron is only reachable on Binder through jupyter-server-proxy"


def test_post_build_is_executable_and_strict():
    path = BINDER / "postBuild"
    text = path.read_text()
    assert path.stat().st_mode & stat.S_IXUSR, "postBuild must be executable (chmod +x binder/postBuild)"
    assert text.startswith("#!/bin/bash\n")
    assert re.search(r"^set -[a-z]*e", text, re.M), "postBuild must stop at the first failing command (set -e)"
    assert re.search(r"pip install .*--no-deps.* (-e )?\.$", text, re.M), "postBuild installs labkit from the repository"
    subprocess.run(["bash", "-n", str(path)], check=True)



def test_readme_links_every_lesson_on_binder():
    """The README's Binder badge, and one link per lesson that opens JupyterLab on that lesson."""
    from urllib.parse import unquote

    readme = ROOT / "README.md"
    assert readme.is_file(), "README.md is missing"
    text = unquote(readme.read_text())
    assert "mybinder.org/badge" in text, "README.md has no Binder badge"
    linked = set(re.findall(r"mybinder\.org/v2/gh/[^\s)\]\"'>]*?[?&]urlpath=/?lab/tree/lessons/([\w.-]+\.ipynb)", text))
    lessons = {p.name for p in (ROOT / "lessons").glob("*.ipynb")}
    assert linked - lessons == set(), f"README links lessons that do not exist: {sorted(linked - lessons)}"
    assert lessons - linked == set(), f"lessons without a Binder link in README.md: {sorted(lessons - linked)}"


# ------------------------------------------------------------------ a fresh environment, as on Binder

def _lesson_for_binder() -> Path:
    """Lesson 01 (the first real lesson) once it exists, else the setup check."""
    for stem in ("01_onnx_concepts", "00_setup_check"):
        if (ROOT / "solutions" / f"{stem}.ipynb").exists():
            return ROOT / "solutions" / f"{stem}.ipynb"
    pytest.skip("no solution notebook 00 or 01 yet")


def _run(cmd: list[str], *, env: dict, cwd: Path, timeout: int) -> subprocess.CompletedProcess:
    try:
        return binder_env_build.run(cmd, env=env, cwd=cwd, timeout=timeout)
    except binder_env_build.BuildError as e:
        pytest.fail(str(e))


def test_a_prebuilt_environment_is_taken_only_once_ready(tmp_path, monkeypatch):
    """`make test` hands over the environment it built (LABKIT_BINDER_ENV) only with its `ready` mark."""
    monkeypatch.delenv("LABKIT_BINDER_ENV", raising=False)
    assert binder_env_build.prebuilt() is None
    monkeypatch.setenv("LABKIT_BINDER_ENV", str(tmp_path))
    assert binder_env_build.prebuilt() is None, "a build still running (or one that failed) is not taken"
    (tmp_path / "failed.txt").write_text("pip install failed")
    assert binder_env_build.prebuilt() is None
    (tmp_path / binder_env_build.READY).write_text("")
    got = binder_env_build.prebuilt()
    assert got and got["python"] == str(tmp_path / "venv" / "bin" / "python") and got["repo"] == tmp_path / "repo"


@pytest.fixture(scope="module")
def binder_env():
    """The Binder environment (tests/binder_env.py): the one `make test` built beside the course's own
    install, else a fresh one, deleted afterwards (~2 GB). Skipped, with the reason, when pip's package
    index cannot be reached (an offline machine)."""
    why = index_unreachable()
    if why:
        pytest.skip(f"{why}; the Binder environment is installed from it")
    ready = binder_env_build.prebuilt()
    if ready:
        yield ready
        return
    with tempfile.TemporaryDirectory(prefix="labkit-binder-", dir=binder_env_build.fast_tmp()) as tmp:
        try:
            built = binder_env_build.build(Path(tmp))
        except binder_env_build.BuildError as e:
            pytest.fail(str(e))
        yield built


@pytest.mark.notebooks
def test_binder_env_is_consistent(binder_env):
    py, env = binder_env["python"], binder_env["env"]
    _run([py, "-m", "pip", "check"], env=env, cwd=binder_env["tmp"], timeout=120)
    code = ("import importlib.metadata as md, labkit, torch, onnx, onnxruntime, onnxscript, sklearn, matplotlib, "
            "ipywidgets, jupyterlab_widgets, netron, jupyter_server_proxy, papermill, tqdm; "
            "print(labkit.__file__); print(md.version('torch'))")
    out = _run([py, "-c", code], env=env, cwd=binder_env["tmp"], timeout=300).stdout.split()
    assert Path(out[0]).is_relative_to(binder_env["repo"]), f"labkit comes from {out[0]}, not the repository postBuild installed"
    assert out[1].split("+")[0] == _pins(_pyproject()["project"]["dependencies"])["torch"].lstrip("=")
    # postBuild's JupyterLab defaults (no news or update pop-ups) landed in the environment's app settings
    installed = binder_env["venv"] / "share/jupyter/lab/settings/overrides.json"
    assert installed.is_file() and installed.read_text() == (BINDER / "overrides.json").read_text()
    # ...and its server config: one kernel in the Launcher, CurveZMQ for kernels (as `make lab`)
    import json

    server = json.loads((binder_env["venv"] / "etc/jupyter/jupyter_server_config.json").read_text())
    for section, values in json.loads((BINDER / "jupyter_server_config.json").read_text()).items():
        assert server.get(section, {}).items() >= values.items(), f"postBuild did not install {section}"
    # ...and custom.css (a narrower left panel: 88-column code at 1024 px), where the server serves it from
    css = binder_env["venv"] / "etc/jupyter/custom/custom.css"
    assert css.is_file() and css.read_text() == (BINDER / "custom.css").read_text()
    assert [Path(p).resolve() for p in server["ServerApp"]["tornado_settings"]["static_custom_path"]] == [css.parent.resolve()]


@pytest.mark.notebooks
def test_binder_env_runs_a_lesson(binder_env, tmp_path):
    """The lesson runs in the Binder environment's own kernel and reaches full points."""
    nb = nbformat.read(_lesson_for_binder(), as_version=4)
    probe = nbformat.v4.new_code_cell("import sys; print('KERNEL-PREFIX', sys.prefix)")
    nb.cells.append(probe)
    src = tmp_path / "lesson.ipynb"
    nbformat.write(nb, src)
    out = tmp_path / "lesson.out.ipynb"
    code = ("import sys, json; from labkit.notebooks import execute, verdicts;"
            "nb = execute(sys.argv[1], out=sys.argv[2], parameters={'QUICK': True}, cwd=sys.argv[3]);"
            "print(json.dumps(verdicts(nb)))")
    proc = _run([binder_env["python"], "-c", code, str(src), str(out), str(tmp_path)],
                env=binder_env["env"], cwd=tmp_path, timeout=600)
    assert "without encryption" not in proc.stderr, "the kernel should get CurveZMQ keys (labkit.notebooks)"
    done = nbformat.read(out, as_version=4)
    printed = "".join(o.get("text", "") for o in done.cells[-1].outputs)
    assert f"KERNEL-PREFIX {binder_env['venv']}" in printed, f"the kernel did not run in the Binder venv: {printed!r}"
    from labkit.notebooks import verdicts

    found = verdicts(done)
    assert found, "the lesson showed no check panel"
    short = {k: (v["status"], v["points"], v["max_points"]) for k, v in found.items()}
    assert all(v["status"] == "passed" and v["points"] == v["max_points"] for v in found.values()), short
