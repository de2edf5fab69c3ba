"""`--unprivileged-user` (no bubblewrap, as in Gradescope's container): what the kernels' uid can reach.

Without bubblewrap nothing is mounted for the kernel: it runs this Python as another uid and imports
the course from where it lies, with ordinary permissions. A checkout in a private folder (a home
folder of mode 0700, `/root`, a `mktemp -d` folder) is out of its reach. So before grading, the
grader asks that uid (a short probe run as it): a Python environment it cannot read stops the run
with one line naming the folder and the fix; the learner-side `labkit` it cannot read is copied,
readable, into the run's folder, and the kernels import that copy (`SandboxSpec.pythonpath`).
"""
from __future__ import annotations

import json
import shutil
import site
import subprocess
import sys
from pathlib import Path

from .options import GradeError

PROBE = ("import json, os, sys; print(json.dumps([p for p in sys.argv[1:] "
         "if not os.access(p, os.R_OK | (os.X_OK if os.path.isdir(p) else 0))]))")


def private_folder(path: Path) -> Path:
    """The first folder above (or at) `path` that others cannot enter (`path` itself if none is)."""
    for q in [*reversed(path.parents), path]:
        try:
            if not q.stat().st_mode & 0o001:
                return q
        except OSError:
            return q
    return path


def unreachable(uid: int, paths: list[Path]) -> list[Path] | None:
    """Which of `paths` uid `uid` cannot read, asked as that uid with this Python; None when it cannot
    even run this Python."""
    from .. import sandbox

    cmd = sandbox.drop_to(uid) + [sys.executable, "-I", "-S", "-c", PROBE, *map(str, paths)]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=60, cwd="/")
        return [Path(p) for p in json.loads(r.stdout)] if r.returncode == 0 else None
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return None


def _readable_copy(src: Path, dest: Path) -> None:
    """`src` copied to `dest` (no caches, links not followed), folders 0755 and files 0444."""
    shutil.copytree(src, dest, symlinks=True, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for p in [dest, *dest.rglob("*")]:
        if not p.is_symlink():
            p.chmod(0o755 if p.is_dir() else 0o444)


def course_path(uid: int, tmp_root: Path) -> str:
    """What the kernels of uid `uid` add to their import path ('' when they can import the course as
    it is); raises GradeError when they cannot run this Python at all."""
    import labkit

    python = Path(sys.executable)
    fix = ("put the course's Python environment where every user can read it (as the Gradescope bundle "
           "does: /opt/labkit), or let others enter {folder} (chmod o+x)")
    envs = [Path(p) for p in site.getsitepackages() if Path(p).is_dir()]
    missing = unreachable(uid, envs)
    if missing is None:
        folder = private_folder(python)
        raise GradeError(f"--unprivileged-user: the kernels' uid {uid} cannot run {python}: {folder} is private; "
                         + fix.format(folder=folder))
    if missing:
        folder = private_folder(missing[0])
        raise GradeError(f"--unprivileged-user: the kernels' uid {uid} cannot read {missing[0]}: {folder} is "
                         "private; " + fix.format(folder=folder))
    pkg = Path(labkit.__file__).resolve().parent
    if unreachable(uid, [pkg / "__init__.py"]) == []:
        return ""
    dest = tmp_root / "course"
    _readable_copy(pkg, dest / "labkit")
    dest.chmod(0o755)
    return str(dest)
