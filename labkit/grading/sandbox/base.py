"""The one interface every protection mode gives the grader (`Sandbox`), and what they share.

A backend says how kernels are confined: the uid they run as, the command that starts the kernel
server, where a kernel's temporary files go, whether cached grades can be trusted. The grader asks
it and never checks a mode's name itself; the low-level system calls stay in `labkit.sandbox`.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar


@dataclass(frozen=True)
class Sandbox:
    """How kernels are confined (picklable: it travels to the workers in `SandboxSpec`).

    `mode` goes into every results file and into the cache key; `description` is printed when
    grading starts, with `not_guaranteed`, what this mode does not give."""

    description: str
    mode: ClassVar[str] = ""
    not_guaranteed: ClassVar[tuple[str, ...]] = ()
    trusted_cache: ClassVar[bool] = False   # cached grades are reused (the kernel cannot reach the cache)
    private_tmp: ClassVar[bool] = False     # kernels get their own /tmp and /dev/shm (cleaned by the server)
    tmp_root_mode: ClassVar[int | None] = None   # the batch folder's mode when kernels must walk it

    def kernel_uid(self) -> int | None:
        """The unprivileged uid kernels run as (a root grader), None for the grader's own uid."""
        return None

    def prepare(self, uid: int | None, tmp_root: Path, confined: tuple[str, ...] = ()) -> str:
        """Ready the machine for kernels of `uid`; returns what they add to their import path (''). `confined`:
        the lesson's exercises whose answers a kernel runs in a Python of its own (`checks.confine`)."""
        return ""

    def kernel_tmp(self, work: Path) -> str:
        """A kernel's TMPDIR: its private /tmp, or a folder in its own work folder."""
        return "/tmp" if self.private_tmp else str(work / "tmp")

    def isolates(self, uid: int | None) -> bool:
        """Each submission gets a fresh uid and its own namespaces (forked by a root server)."""
        return False

    def runs_as(self, uid: int | None) -> int | None:
        """The one uid the server and every kernel run as, when not a fresh uid per submission."""
        return None

    def caps_user_tasks(self) -> bool:
        """RLIMIT_NPROC must count this user's tasks (no fresh uid per submission to count on)."""
        return True

    def own_pid_namespace(self) -> bool:
        """The kernel server runs in its own PID namespace (its pid must be looked up)."""
        return False

    def server_prefix(self, mount: Path, visible: list[Path], hidden: list[Path], uid: int | None) -> list[str]:
        """What goes between the resource-limit launcher and the kernel server's Python."""
        return []

    def process_prefix(self, work: Path, visible: list[Path], hidden: list[Path], uid: int | None) -> list[str]:
        """What runs one process as a kernel runs (`uid` with no capability, the kernels' view of the
        files, `work` writable): the grader's calls of confined answers (`grading.confined`)."""
        return []


def verdict_server_command(argv: list[str]) -> list[str]:
    """The verdict server's command: the same in every mode, since it never runs learner code (the
    grader's uid, no core files, so a crash leaves no memory image with the references)."""
    from labkit import sandbox as primitives

    return primitives.launcher_args({"core": 0}) + argv

