"""The unprivileged-user backend (`--unprivileged-user`, no bubblewrap, as in Gradescope's container):
a root grader runs the kernel server and every kernel as one unprivileged uid with no capabilities;
the answers are safe because they are readable by root only. Below: what the kernels' uid can reach.

Without bubblewrap nothing is mounted for the kernel: it runs this Python as another uid and imports
the course from where it lies, with ordinary permissions. A checkout in a private folder (a home
folder of mode 0700, `/root`, a `mktemp -d` folder) is out of its reach. So before grading, the
grader asks that uid (a short probe run as it): a Python environment it cannot read stops the run
with one line naming the folder and the fix; the learner-side `labkit` it cannot read is copied,
readable, into the run's folder, and the kernels import that copy (`SandboxSpec.pythonpath`).
"""
from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from ..options import GradeError
from .base import Sandbox

#: what the unprivileged-user mode (Gradescope's container, no bubblewrap) does not give
NOT_GUARANTEED_UNPRIVILEGED = (
    "the kernel sees the whole file system with ordinary permissions: whatever is world-readable (the Python "
    "environment, the course package) it can read; the answers are safe only because they are readable by root only",
    "the kernel has the network and sees the other processes (not their memory or files)",
    "one uid runs every kernel: while another submission's confined answers (06, 09, 10, 11) are being called, a kernel "
    "could read their hidden inputs",
)


@dataclass(frozen=True)
class UnprivilegedUser(Sandbox):
    mode = "unprivileged-user"
    not_guaranteed = NOT_GUARANTEED_UNPRIVILEGED
    tmp_root_mode = 0o711   # no bind mounts: the kernels' uid must walk to its slot and the data

    def kernel_uid(self) -> int | None:
        from labkit import sandbox as primitives

        return primitives.KERNEL_UID_BASE if os.geteuid() == 0 else None

    def prepare(self, uid: int | None, tmp_root: Path, confined: tuple[str, ...] = ()) -> str:
        return course_path(uid, tmp_root, confined) if uid is not None else ""

    def runs_as(self, uid: int | None) -> int | None:
        return uid if os.geteuid() == 0 else None

    def server_prefix(self, mount: Path, visible: list[Path], hidden: list[Path], uid: int | None) -> list[str]:
        from labkit import sandbox as primitives

        run_as = self.runs_as(uid)
        return primitives.drop_to(run_as) if run_as is not None else []

    def process_prefix(self, work: Path, visible: list[Path], hidden: list[Path], uid: int | None) -> list[str]:
        return self.server_prefix(work, visible, hidden, uid)

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
    from labkit import sandbox as primitives

    cmd = primitives.drop_to(uid) + [sys.executable, "-I", "-S", "-c", PROBE, *map(str, paths)]
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


def can_start_python(uid: int) -> bool:
    """Whether a process of uid `uid` with no capability, as a kernel is, can start this Python (a kernel
    starts one for the exercises of `checks.confine`). Asked as a kernel is made, not through setpriv."""
    def become() -> None:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)

    try:
        return subprocess.run([sys.executable, "-I", "-S", "-c", "pass"], preexec_fn=become, cwd="/",
                              capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def course_path(uid: int, tmp_root: Path, confined: tuple[str, ...] = ()) -> str:
    """What the kernels of uid `uid` add to their import path ('' when they can import the course as
    it is); raises GradeError when they cannot run this Python at all, or cannot start it afresh for the
    `confined` exercises."""
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
    if confined and not can_start_python(uid):
        folder = private_folder(Path(os.path.realpath(python)))
        raise GradeError(f"--unprivileged-user: the kernels' uid {uid} cannot start {python} ({folder} is private), "
                         f"and {', '.join(confined)} {'runs its' if len(confined) == 1 else 'run their'} answers in a "
                         "confined Python of its own; "
                         + fix.format(folder=folder))
    pkg = Path(labkit.__file__).resolve().parent
    if unreachable(uid, [pkg / "__init__.py"]) == []:
        return ""
    dest = tmp_root / "course"
    _readable_copy(pkg, dest / "labkit")
    dest.chmod(0o755)
    return str(dest)
