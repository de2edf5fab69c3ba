"""A fresh environment as Binder builds it: a venv, `pip install -r binder/requirements.txt`, then
`binder/postBuild` in a copy of the repository (what repo2docker does on mybinder.org, minus Docker).

tests/test_binder.py builds one itself, or takes the one `make test` built beside the course's own
install (`python tests/binder_env.py DIR`, then LABKIT_BINDER_ENV=DIR): pip installs on one core, so the
two installs together take about as long as one, and the notebooks tier does not spend ~70 s on it.
Standard library only: `make test` runs this with the Python that creates .venv.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BINDER = ROOT / "binder"
#: what a fresh clone does not have (node_modules: postBuild's `npm ci` installs it)
COPY_IGNORE = shutil.ignore_patterns(".git", ".venv", "__pycache__", "*.egg-info", "artifacts", "test-artifacts",
                                     ".pytest_cache", ".ipynb_checkpoints", "grading-out", "build", "dist",
                                     "node_modules", ".ruff_cache")
#: written in DIR when the build finished, and read by the tests
READY = "ready"


class BuildError(RuntimeError):
    """A step of the build failed: its command and the end of its output."""


def fast_tmp() -> str | None:
    """RAM-backed /dev/shm when it has room: writing and deleting ~2 GB of small files there takes
    seconds, on a disk mounted with `discard` it can take minutes. Else the default temp folder."""
    try:
        st = os.statvfs("/dev/shm")
        return "/dev/shm" if st.f_bavail * st.f_frsize > 8 * 2**30 and os.access("/dev/shm", os.W_OK) else None
    except OSError:
        return None


def run(cmd: list[str], *, env: dict, cwd: Path, timeout: int) -> subprocess.CompletedProcess:
    """Run a step of the build; a failure raises BuildError with the end of its output (pip's noise left out)."""
    proc = subprocess.run(cmd, check=False, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        noise = "is ignored: it is neither a file nor a directory"
        err = "\n".join(line for line in proc.stderr.splitlines() if noise not in line)
        raise BuildError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{err[-3000:]}")
    return proc


def paths(tmp: Path) -> dict:
    """Where the environment built in `tmp` lives, and the environment variables to run it with."""
    venv = tmp / "venv"
    env = {k: v for k, v in os.environ.items()
           if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "JUPYTER_PATH", "JUPYTER_CONFIG_DIR")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["MPLBACKEND"] = "agg"
    return {"python": str(venv / "bin" / "python"), "venv": venv, "repo": tmp / "repo", "env": env, "tmp": tmp}


def build(tmp: Path) -> dict:
    """Build the Binder environment in the empty folder `tmp` and return `paths(tmp)`.

    PyTorch's CPU index line is dropped: pip gets the same pinned torch from what this machine can
    reach (a local wheel or the default index), so it runs offline and fast. Everything else is
    installed exactly as listed."""
    where = paths(tmp)
    repo, env = where["repo"], where["env"]
    shutil.copytree(ROOT, repo, ignore=COPY_IGNORE)
    if not (repo / "README.md").exists():  # pyproject.toml names it
        (repo / "README.md").write_text("# ONNX Lab\n")
    reqs = tmp / "requirements-reachable.txt"
    reqs.write_text("\n".join(line for line in (BINDER / "requirements.txt").read_text().splitlines()
                              if not line.startswith("--extra-index-url")) + "\n")
    run([sys.executable, "-m", "venv", str(where["venv"])], env=env, cwd=tmp, timeout=300)
    run([where["python"], "-m", "pip", "install", "--quiet", "--no-compile", "-r", str(reqs)], env=env, cwd=tmp,
         timeout=900)
    run(["bash", "binder/postBuild"], env=env, cwd=repo, timeout=600)
    (tmp / READY).write_text("")
    return where


def prebuilt() -> dict | None:
    """The environment `make test` built (LABKIT_BINDER_ENV), or None when there is none or it failed."""
    folder = os.environ.get("LABKIT_BINDER_ENV")
    if folder and (Path(folder) / READY).is_file():
        return paths(Path(folder))
    return None


def main(argv: list[str]) -> int:
    """`binder_env.py DIR`: build in DIR (created, must be empty), the error in DIR/failed.txt;
    `binder_env.py --mkdtemp`: print a fresh folder for it (in RAM when there is room)."""
    if argv == ["--mkdtemp"]:
        print(tempfile.mkdtemp(prefix="labkit-binder-", dir=fast_tmp()))
        return 0
    if len(argv) != 1:
        print("usage: binder_env.py DIR | --mkdtemp", file=sys.stderr)
        return 2
    tmp = Path(argv[0])
    tmp.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(Path(__file__).parent))
    from net_util import index_unreachable

    why = index_unreachable()
    if why:  # the test skips with this reason: no pip timeouts to wait for here
        (tmp / "failed.txt").write_text(why)
        return 0
    try:
        build(tmp)
    except (BuildError, OSError, subprocess.TimeoutExpired) as e:
        (tmp / "failed.txt").write_text(str(e))
        print(f"The Binder environment was not built in advance ({str(e).splitlines()[0]}); "
              "tests/test_binder.py builds it again.", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
